"""The dtypes the tests cover, an independent promotion table and exact rounding (Triton's rules, written
from docs/semantics.md, not from minitriton)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import minitriton.language as tl


# ----------------------------------------------------------------------------- dtype lists

INT_TYPES = ["int8", "int16", "int32", "int64"]
UINT_TYPES = ["uint8", "uint16", "uint32", "uint64"]
FLOAT_TYPES = ["float16", "bfloat16", "float32", "float64"]
INTEGRAL_TYPES = INT_TYPES + UINT_TYPES
NUM_TYPES = INTEGRAL_TYPES + FLOAT_TYPES
ALL_TYPES = ["int1"] + NUM_TYPES

BITS = {"int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
        "uint64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
SHORT = {"int1": "int1", "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
# (precision incl. the implicit bit, smallest normal exponent, largest exponent)
FORMATS = {"float16": (11, -14, 15), "bfloat16": (8, -126, 127), "float32": (24, -126, 127)}
NP_STORAGE = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
              "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
              "float16": np.float16, "bfloat16": np.uint16, "float32": np.float32, "float64": np.float64}


def is_float(t):
    return t in FLOAT_TYPES


def is_signed(t):
    return t in INT_TYPES


def is_unsigned(t):
    return t in UINT_TYPES or t == "int1"


def kind(t):
    """bool < integral < floating (Triton's dtype.KIND)."""
    return 0 if t == "int1" else 2 if is_float(t) else 1


def tl_type(t):
    return getattr(tl, t)


def short(t):
    """Triton's short dtype name (`str(tl.float32)` == 'fp32')."""
    return SHORT.get(t, t)


def int_range(t):
    b = BITS[t]
    if t == "int1":
        return 0, 1
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if is_signed(t) else (0, (1 << b) - 1)


# ----------------------------------------------------------------------------- promotion (independent)

def literal_type(value) -> str:
    """The type Triton gives a Python literal ([SRC] semantic.py to_tensor_type; S3.10)."""
    if isinstance(value, bool):
        return "int1"
    if isinstance(value, int):
        for t, (lo, hi) in (("int32", (-2**31, 2**31 - 1)), ("uint32", (2**31, 2**32 - 1)),
                            ("int64", (-2**63, 2**63 - 1)), ("uint64", (2**63, 2**64 - 1))):
            if lo <= value <= hi:
                return t
        raise ValueError(value)
    a = abs(value)
    return "float32" if (a == 0 or math.isinf(a) or math.isnan(a) or 2.0**-126 <= a <= 3.4028234663852886e38) \
        else "float64"


class PromotionError(Exception):
    """What the promotion table says Triton raises (with the message to match)."""


def promote(a: str, b: str, *, a_scalar=False, b_scalar=False, div=False) -> str:
    """The computation type of a binary op, from docs/semantics.md S3 (rule N there is S3.N).

    `div` marks /, // and %. A scalar operand is a Python literal whose literal type is `a`/`b`.
    """
    if a_scalar != b_scalar:  # rule 7: a scalar of a lower or equal kind does not take part
        s, t = (a, b) if a_scalar else (b, a)
        if kind(s) <= kind(t):
            a = b = t
    floats = [t for t in (a, b) if is_float(t)]
    if floats:
        if "float64" in (a, b):
            return "float64"
        if div:  # rule 5: / and % with any float operand compute in fp32
            return "float32"
        if len(floats) == 1:  # rule 1: kind; a float with an integer keeps the float, bf16 excepted
            return "float32" if floats[0] == "bfloat16" else floats[0]
        wa, wb = BITS[a], BITS[b]
        if wa != wb:  # rule 2: width
            return a if wa > wb else b
        return "float16" if a != b else a  # rule 3: fp16 over bf16
    if div and is_signed(a) != is_signed(b):  # rule 6
        raise PromotionError("Cannot use /, #, or % with .* because they have different signedness")
    if is_signed(a) == is_signed(b):  # rule 2: width
        return a if BITS[a] >= BITS[b] else b
    u, s = (a, b) if is_unsigned(a) else (b, a)
    return u if BITS[u] >= BITS[s] else s  # rule 4: prefer unsigned at equal (or greater) width


# ----------------------------------------------------------------------------- exact rounding helpers

def round_fraction(v: Fraction, t: str) -> float:
    """Round an exact rational to format `t` (RTNE, gradual underflow, overflow to inf)."""
    if t == "float64":
        return float(v)  # CPython's Fraction -> float is correctly rounded
    p, emin, emax = FORMATS[t]
    if v == 0:
        return 0.0
    sign = -1.0 if v < 0 else 1.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if a < Fraction(2) ** e:
        e -= 1
    q = Fraction(2) ** (max(e, emin) - p + 1)
    n, rem = divmod(a, q)
    if 2 * rem > q or (2 * rem == q and n % 2 == 1):
        n += 1
    r = n * q
    if r > (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax:
        return sign * math.inf
    return sign * float(r)


def round_to(values, t: str) -> np.ndarray:
    """float64 values rounded (RTNE) to format `t`, returned as float64. NaN/inf/zeros keep themselves.

    Only the value is rounded once, so a float64 result of one +, -, *, / on `t` values is rounded
    correctly (float64 has more than 2p+2 bits for every p here)."""
    v = np.array(values, dtype=np.float64, copy=True).reshape(-1)
    if t == "float64":
        return v
    for i, x in enumerate(v.tolist()):
        if math.isfinite(x) and x != 0:
            v[i] = round_fraction(Fraction(x), t)
    return v


def wrap(value: int, t: str) -> int:
    """Two's-complement wrap of an exact integer to `t` (int1 keeps the low bit)."""
    b = BITS[t]
    value &= (1 << b) - 1
    if is_signed(t) and value >= 1 << (b - 1):
        value -= 1 << b
    return value


def bf16_bits(values) -> np.ndarray:
    """bfloat16 bit patterns of float64 values that are exact bfloat16 numbers (or rounded RTNE first)."""
    v = round_to(values, "bfloat16").astype(np.float32)
    bits = (v.view(np.uint32) >> 16).astype(np.uint16)
    bits[np.isnan(v)] = 0x7FC0
    return bits


def bf16_values(bits) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class BF16:
    """A bfloat16 buffer for a kernel: NumPy has no bf16 dtype, so pass the uint16 bit patterns with
    `.triton_dtype` (the form `minitriton.memory.as_array` accepts, like `minitriton.Buffer`)."""

    triton_dtype = tl.bfloat16

    def __init__(self, bits: np.ndarray):
        self.array = np.ascontiguousarray(bits, dtype=np.uint16)

    @classmethod
    def of(cls, values):
        return cls(bf16_bits(np.asarray(values, np.float64)).reshape(np.shape(values)))

    @classmethod
    def zeros(cls, shape):
        return cls(np.zeros(shape, np.uint16))

    def values(self):
        return bf16_values(self.array).reshape(self.array.shape)


def to_buffer(values, t: str):
    """Exact values (Python ints, bools or float64 holding `t` numbers) as a kernel argument of type `t`."""
    if t == "bfloat16":
        return BF16.of(values)
    if t == "int1":
        return np.asarray(values, dtype=bool)
    if is_float(t):
        return np.asarray(values, dtype=np.float64).astype(NP_STORAGE[t])
    return np.array([int(v) for v in np.asarray(values, dtype=object).reshape(-1)],
                    dtype=NP_STORAGE[t]).reshape(np.shape(values))


def empty_buffer(shape, t: str):
    return BF16.zeros(shape) if t == "bfloat16" else np.zeros(shape, dtype=NP_STORAGE[t])


def from_buffer(buf, t: str) -> np.ndarray:
    """A result buffer as exact values: float64 for floats, object arrays of Python ints for integers."""
    if t == "bfloat16":
        return buf.values()
    if is_float(t):
        return np.asarray(buf, np.float64)
    if t == "int1":
        return np.asarray(buf, dtype=bool)
    return np.asarray(buf).astype(object)
