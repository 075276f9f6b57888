"""Triton's scalar types (`tl.float32`, `tl.pointer_type(...)`, ...) and the promotion rules between them.

Every dtype knows two NumPy types: the one its values are *computed* in (bfloat16 values live in float32
arrays, rounded after every operation) and the one it is *stored* as in memory (bfloat16 as its uint16
bit pattern). `computation_type` is the one place where Triton's implicit promotion rules live.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors


class dtype:
    """A Triton scalar type. `str()` gives Triton's short name (`fp32`), `repr()` the Python spelling.
    Calling one (`tl.float32(x)`) casts: `__call__` is registered by `minitriton.semantics.casts`.

    `tl.dtype("fp16")` (the name alone, as in Triton) is the type of that name: `tl.float16` itself."""

    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]
    _CODEGEN = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "fp8e4b15": "float8e4b15",
                "fp8e4nv": "float8e4nv", "fp8e4b8": "float8e4b8", "fp8e5": "float8e5", "fp8e5b16": "float8e5b16"}

    def __new__(cls, name, *args, **kwargs):
        if cls is dtype and not args and not kwargs:
            name = getattr(name, "value", name)   # a constexpr name, as Triton accepts
            if name not in BY_NAME:
                raise AssertionError(name)
            return BY_NAME[name]
        return super().__new__(cls)

    def __init__(self, name: str, bits: int | None = None, compute: str = "", storage: str = "", mantissa: int = 0,
                 bias: int | None = None):
        if bits is None:   # dtype(name): __new__ returned the existing type
            return
        self.name = name
        self.primitive_bitwidth = bits
        self.np_compute = np.dtype(compute)
        self.np_storage = np.dtype(storage)
        self.fp_mantissa_width = mantissa
        if bias is not None:
            self.exponent_bias = bias

    # --- predicates, spelled as in triton.language.core.dtype ---
    def is_floating(self):
        return self.name in self.FP_TYPES

    def is_standard_floating(self):
        return self.name in self.STANDARD_FP_TYPES

    def is_fp16(self):
        return self.name == "fp16"

    def is_bf16(self):
        return self.name == "bf16"

    def is_fp32(self):
        return self.name == "fp32"

    def is_fp64(self):
        return self.name == "fp64"

    def is_fp8(self):
        return "fp8" in self.name

    def is_fp8e4nv(self):
        return self.name == "fp8e4nv"

    def is_fp8e4b8(self):
        return self.name == "fp8e4b8"

    def is_fp8e4b15(self):
        return self.name == "fp8e4b15"

    def is_fp8e5(self):
        return self.name == "fp8e5"

    def is_fp8e5b16(self):
        return self.name == "fp8e5b16"

    def is_int(self):
        return self.name in self.SINT_TYPES or self.name in self.UINT_TYPES

    def is_int_signed(self):
        return self.name in self.SINT_TYPES

    def is_int_unsigned(self):
        return self.name in self.UINT_TYPES

    def is_bool(self):
        return self.name == "int1"

    @staticmethod
    def is_dtype(type_str):
        return type_str in dtype.SINT_TYPES + dtype.UINT_TYPES + dtype.FP_TYPES + dtype.OTHER_TYPES

    @staticmethod
    def is_void():
        raise errors.python_error(RuntimeError, errors.diagnostic("dtype_is_void"))   # as Triton 3.9, for every dtype

    def is_ptr(self):
        return False

    def is_block(self):
        return False

    def is_const(self):
        return False

    @property
    def value(self):
        """The dtype itself: compiled Triton hands a dtype to a `@jit` function as a constexpr (`dtype.value`)."""
        return self

    @property
    def int_bitwidth(self):
        return self.primitive_bitwidth

    @property
    def itemsize(self):
        return max(1, self.primitive_bitwidth // 8)

    @property
    def scalar(self):
        return self

    def kind(self) -> int:
        """0 for bool, 1 for integers, 2 for floats (Triton's dtype.KIND order)."""
        if self.is_bool():
            return 0
        return 1 if self.is_int() else 2

    def get_int_min_value(self):
        if self.is_int_signed():
            return -(2 ** (self.int_bitwidth - 1))
        return 0

    def get_int_max_value(self):
        if self.is_int_signed():
            return 2 ** (self.int_bitwidth - 1) - 1
        return 2 ** self.int_bitwidth - 1

    def to_ir(self, builder=None):  # pragma: no cover - exists so duck-typed user code does not crash
        return self

    def __eq__(self, other):
        if self is other:
            return True
        other = getattr(other, "value", other)   # tl.int32 == tl.constexpr(tl.int32)
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.name,)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"triton.language.{self._CODEGEN.get(self.name, self.name)}"


class pointer_type(dtype):
    """A pointer to `element_ty` in global memory; values are 64-bit addresses."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        if not isinstance(element_ty, dtype):
            raise errors.python_error(TypeError, errors.diagnostic("element_type", type=type(element_ty).__name__))
        super().__init__(f"pointer<{element_ty}>", 64, "int64", "int64")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    def _key(self):
        return ("ptr", self.element_ty._key())

    def __repr__(self):
        return f"pointer<{self.element_ty}>"


for _name in dtype.SINT_TYPES + dtype.UINT_TYPES:   # is_int1() ... is_uint64(), as in triton.language.core.dtype
    setattr(dtype, f"is_{_name}", lambda self, _name=_name: self.name == _name)

int1 = dtype("int1", 1, "bool", "bool")
int8 = dtype("int8", 8, "int8", "int8")
int16 = dtype("int16", 16, "int16", "int16")
int32 = dtype("int32", 32, "int32", "int32")
int64 = dtype("int64", 64, "int64", "int64")
uint8 = dtype("uint8", 8, "uint8", "uint8")
uint16 = dtype("uint16", 16, "uint16", "uint16")
uint32 = dtype("uint32", 32, "uint32", "uint32")
uint64 = dtype("uint64", 64, "uint64", "uint64")
float16 = dtype("fp16", 16, "float16", "float16", 10, 15)
bfloat16 = dtype("bf16", 16, "float32", "uint16", 7, 127)
float32 = dtype("fp32", 32, "float32", "float32", 23, 127)
float64 = dtype("fp64", 64, "float64", "float64", 52, 1023)
# fp8 values are exact in float32 (NaN and inf included); memory holds their byte (semantics/fp8.py converts)
float8e4nv = dtype("fp8e4nv", 8, "float32", "uint8", 3, 7)      # e4m3fn: no inf, S.1111.111 is NaN
float8e5 = dtype("fp8e5", 8, "float32", "uint8", 2, 15)         # e5m2: IEEE-like, with inf and NaN
float8e4b15 = dtype("fp8e4b15", 8, "float32", "uint8", 3, 15)   # e4m3, bias 15: no inf, no NaN
float8e4b8 = dtype("fp8e4b8", 8, "float32", "uint8", 3, 8)      # e4m3fnuz: 0x80 is the only NaN
float8e5b16 = dtype("fp8e5b16", 8, "float32", "uint8", 2, 16)   # e5m2fnuz: 0x80 is the only NaN

FP8 = (float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16)
ALL = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64) + FP8
BY_NAME = {t.name: t for t in ALL}

_FROM_NUMPY = {np.dtype(t.np_storage): t for t in ALL if not t.is_bf16() and not t.is_fp8()}


# Triton's `type_canonicalisation_dict`: every spelling of a type (torch's, NumPy's, Triton's) -> its signature name
CANONICAL_NAMES = {
    "bool": "u1", "int1": "u1", "uint1": "u1", "i1": "u1",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15", "float8_e4m3fn": "fp8e4nv",
    "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2": "fp8e5", "float8e5b16": "fp8e5b16",
    "float8_e5m2fnuz": "fp8e5b16", "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32",
    "float32": "fp32", "double": "fp64", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int": "i32", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "void": "void",
}
CANONICAL_NAMES.update({v: v for v in list(CANONICAL_NAMES.values())})


def str_to_ty(name: str, c=None) -> dtype:
    """Triton's `tl.str_to_ty`: a signature string (`fp32`, `i8`, `u16`, `*fp16`, `*k` const) as its dtype."""
    if name.startswith("*"):
        const = name.startswith("*k")
        return pointer_type(str_to_ty(name[2:] if const else name[1:]), const=const)
    short = {"i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u1": "int1",
             "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "B": "int1"}
    name = short.get(name, name)
    if name not in BY_NAME:
        raise errors.python_error(TypeError, errors.diagnostic("unknown_type", name=repr(name)))
    return BY_NAME[name]


def from_numpy(np_dtype) -> dtype:
    """The Triton dtype of a NumPy (or ml_dtypes) array dtype; raises TypeError for unsupported ones."""
    found = _FROM_NUMPY.get(np_dtype) if isinstance(np_dtype, np.dtype) else None
    if found is not None:  # (dtype.name, below, is a slow Python property)
        return found
    np_dtype = np.dtype(np_dtype)
    if np_dtype.name == "bfloat16":  # ml_dtypes
        return bfloat16
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        raise errors.python_error(TypeError, errors.diagnostic("array_dtype", dtype=np_dtype)) from None


def of_python_scalar(value) -> dtype:
    """The type Triton gives a Python literal: int1, int32/uint32/int64/uint64 by range, fp32 or fp64."""
    if type(value) is int:  # the common literal: skips the bool tests (bool subclasses int)
        if -2**31 <= value < 2**31:
            return int32
    elif isinstance(value, (bool, np.bool_)):
        return int1
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if -2**31 <= value < 2**31:
            return int32
        if 2**31 <= value < 2**32:
            return uint32
        if -2**63 <= value < 2**63:
            return int64
        if 2**63 <= value < 2**64:
            return uint64
        raise errors.python_error(ValueError, errors.diagnostic("integer_too_large", value=int(value)))
    if isinstance(value, (float, np.floating)):
        mag = abs(float(value))
        if mag == float("inf") or mag == 0.0 or mag != mag or 2**-126 <= mag <= (2 - 2**-23) * 2**127:
            return float32
        return float64
    raise errors.python_error(TypeError, errors.diagnostic("scalar_type", type=type(value).__name__))


def integer_promote(a: dtype, b: dtype) -> dtype:
    """C's usual arithmetic conversions: the wider wins; at equal width, unsigned wins."""
    a_signed, b_signed = a.is_int_signed(), b.is_int_signed()
    if a_signed == b_signed:
        return a if a.int_bitwidth > b.int_bitwidth else b
    if not a_signed:
        return a if a.int_bitwidth >= b.int_bitwidth else b
    return b if b.int_bitwidth >= a.int_bitwidth else a


_COMPUTATION_CACHE: dict = {}


def computation_type(a: dtype, a_is_scalar: bool, b: dtype, b_is_scalar: bool, div_or_mod: bool = False) -> dtype:
    """The type a binary operator computes in (Triton's `computation_type_impl`, rule for rule)."""
    key = (a.name, a_is_scalar, b.name, b_is_scalar, div_or_mod)
    found = _COMPUTATION_CACHE.get(key)
    if found is None:
        found = _COMPUTATION_CACHE[key] = _computation_type(a, a_is_scalar, b, b_is_scalar, div_or_mod)
    return found


def _computation_type(a: dtype, a_is_scalar: bool, b: dtype, b_is_scalar: bool, div_or_mod: bool) -> dtype:
    # 0) A Python scalar of a lower or equal kind (bool < int < float) does not take part.
    if a_is_scalar != b_is_scalar:
        scalar_ty, tensor_ty = (a, b) if a_is_scalar else (b, a)
        if scalar_ty.kind() <= tensor_ty.kind():
            a = b = tensor_ty
    # 1) fp64 wins.
    if a.is_fp64() or b.is_fp64():
        return float64
    # 2) / and % with any float compute in fp32: PTX has no fp16/bf16 division or remainder.
    if div_or_mod and (a.is_floating() or b.is_floating()):
        return float32
    # 3) then fp32, 4) then fp16 (over bf16 and integers).
    if a.is_fp32() or b.is_fp32():
        return float32
    if a.is_fp16() or b.is_fp16():
        return float16
    # 5) bf16 only when both are bf16; bf16 with an integer is fp32 (measured on the GPU).
    if a.is_bf16() and b.is_bf16():
        return bfloat16
    if a.is_bf16() or b.is_bf16():
        return float32
    # 6) two fp8 types: that type, fp16 for two different ones
    if a.is_fp8() and b.is_fp8():
        return a if a == b else float16
    if not a.is_int() or not b.is_int():
        raise errors.python_error(TypeError, errors.diagnostic("unexpected_types", left=a, right=b))
    # 6) integers: C promotion; mixed signedness is refused for / // %.
    if div_or_mod and a.is_int_signed() != b.is_int_signed():
        raise errors.python_error(TypeError, errors.diagnostic("signedness", left=repr(a), right=repr(b)))
    return integer_promote(a, b)
