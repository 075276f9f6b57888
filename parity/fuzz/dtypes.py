"""The fuzz's dtypes and Triton 3.6's rules over them: promotion, literals, what the compiler folds, the
float bounds of a float -> int cast."""
from __future__ import annotations

import re

import numpy as np

from parity.fuzz.fragment import P


INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint32": 32}
FLOATS = {"fp16": (11, -24, 15), "bf16": (8, -133, 127), "fp32": (24, -149, 127), "fp64": (53, -1074, 1023)}
TL = {"int1": "tl.int1", "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64",
      "uint8": "tl.uint8", "uint32": "tl.uint32", "fp16": "tl.float16", "bf16": "tl.bfloat16",
      "fp32": "tl.float32", "fp64": "tl.float64"}
NP = {"int1": np.int8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
      "uint32": np.uint32, "fp16": np.float16, "bf16": np.uint16, "fp32": np.float32, "fp64": np.float64}


def is_float(d):
    return d in FLOATS


def is_int(d):
    return d in INTS


def signed(d):
    return d.startswith("int")


def promote(a, b, div=False):
    """Triton's computation type for two tensors (semantic.computation_type_impl), ints and floats."""
    if "fp64" in (a, b):
        return "fp64"
    if div and (is_float(a) or is_float(b)):
        return "fp32"
    if "fp32" in (a, b):
        return "fp32"
    if "fp16" in (a, b):
        return "fp16"
    if a == b == "bf16":
        return "bf16"
    if "bf16" in (a, b):
        return "fp32"
    ra, rb = INTS.get(a, 1), INTS.get(b, 1)
    if signed(a) == signed(b):
        return a if ra > rb else b
    if not signed(a):
        return a if ra >= rb else b
    return b if rb >= ra else a


def widen_bf16(d):
    """Triton 3.6's tl.maximum/minimum compute bf16 in fp32 and keep the fp32 result."""
    return "fp32" if d == "bf16" else d


def literal_type(code: str) -> str:
    """The type Triton 3.6's to_tensor gives a literal written as `code` (int32 ... or fp32/fp64)."""
    code = code.strip("() ")
    value = float(code) if any(c in code for c in ".einf") else int(code)
    if isinstance(value, int):
        return "int32" if -2**31 <= value < 2**31 else ("uint32" if value < 2**32 else "int64")
    mag = abs(value)
    return "fp32" if mag == 0 or mag != mag or mag == float("inf") or 2**-126 <= mag <= 3.4028234663852886e38 \
        else "fp64"


def constant_expression(code: str) -> bool:
    """Whether source `code` reads nothing at run time (no load, argument, program id or loop index)."""
    return P not in code and "pid" not in code


def literal_block(code: str) -> bool:
    return re.fullmatch(r"tl\.full\(\([0-9, ]*\), -?[0-9.e+-]+, tl\.\w+\)", code) is not None


def folded_by_compiler(a: str, b: str) -> bool:
    """`a % b` (floats) that Triton's compiler folds while minitriton computes it at run time: both operands
    constant expressions, not both written as literal blocks (see the module docstring)."""
    return constant_expression(a) and constant_expression(b) and not (literal_block(a) and literal_block(b))



def float_limits(src, lo, hi):
    """Clamping bounds for a float -> int cast: the values nearest to lo and hi (toward zero) that float
    type `src` holds exactly (exact integer arithmetic: float(2**63 - 1) would round up to 2**63), and fp32 too:
    the bounds are written as literals, which Triton 3.6 makes fp32 tensors even next to fp64 (semantics S15.5;
    4294967295.0 would clamp to 2**32, out of uint32's range)."""
    bits = min(FLOATS[src][0], FLOATS["fp32"][0])
    cap = 65504 if src == "fp16" else None

    def fit(v):
        sign, a = (-1 if v < 0 else 1), abs(int(v))
        if cap is not None:
            a = min(a, cap)
        q = 1 << max(0, a.bit_length() - bits)
        return float(sign * (a // q) * q)
    return fit(lo), fit(hi)


