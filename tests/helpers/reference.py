"""Where Triton differs from NumPy (the one table `OVERRIDES`, each entry with its reason and source), the
reference arithmetic in exact Python (ints) or float64 (floats, rounded once), and the test values."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from helpers.dtypes import ALL_TYPES, BITS, FORMATS, PromotionError, int_range, is_float, is_signed, promote, round_fraction, round_to, short, tl_type, wrap


# ----------------------------------------------------------------------------- the override table

@dataclass(frozen=True)
class Override:
    """One place where Triton on the GPU differs from what NumPy would do, with its reason and source.
    `fn`, where present, is the rule the references below apply."""

    reason: str
    source: str
    fn: Callable | None = None


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


def _float_to_int(v: float, t: str) -> int:
    lo, hi = int_range(t)
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return hi if v > 0 else lo
    return min(max(math.trunc(v), lo), hi)


def _gpu_frem(x: float, y: float, t: str) -> float:
    """NVPTX's lowering of `frem`: |y| == inf -> x, else fma(-trunc(x / y), y, x) in the operand type."""
    if math.isinf(y):
        return x
    with np.errstate(all="ignore"):
        q = float(round_to([np.float64(x) / np.float64(y)], t)[0])  # the quotient, rounded to t once
        q = float(np.trunc(q))
        if not all(map(math.isfinite, (x, y, q))):  # inf/NaN operands or quotient: plain IEEE arithmetic
            return float(np.float64(-q) * np.float64(y) + np.float64(x))
    exact = Fraction(x) - Fraction(q) * Fraction(y)
    if exact == 0:
        return 0.0  # an exact zero sum is +0 (so -0.0 % 1.0 == +0.0)
    return round_fraction(exact, t)


def _maxnum(a: float, b: float, pick_max: bool, propagate_nan: bool) -> float:
    if math.isnan(a) or math.isnan(b):
        if propagate_nan or (math.isnan(a) and math.isnan(b)):
            return math.nan
        return b if math.isnan(a) else a
    if a == b == 0:  # -0.0 < +0.0 (GPU probe: max(0.0, -0.0) == 0.0, min(-0.0, 0.0) == -0.0)
        neg_a, neg_b = math.copysign(1, a) < 0, math.copysign(1, b) < 0
        return (0.0 if not (neg_a and neg_b) else -0.0) if pick_max else (-0.0 if (neg_a or neg_b) else 0.0)
    return max(a, b) if pick_max else min(a, b)


OVERRIDES: dict[str, Override] = {
    # -- integer arithmetic
    "int_floordiv_truncates": Override(
        "integer // truncates toward zero (sdiv/udiv); NumPy floors: -7 // 2 == -3, not -4",
        "S1.1 [GPU]; semantic.py floordiv; PR triton#11376 closed as intended", _c_div),
    "int_mod_sign_of_dividend": Override(
        "integer % is C's srem/urem: the result has the sign of the dividend; NumPy's has the divisor's",
        "S1.1 [GPU]; semantic.py mod", _c_mod),
    "int_div_by_zero": Override(
        "x // 0 == -1 and x % 0 == x when one kernel computes both (int32); LLVM leaves it undefined, and "
        "the GPU probe measured x % 0 == -1 when % is computed alone, so only the measured case is tested",
        "S1.5 [GPU] (int32, q and r in one kernel); S16.1 for % alone",
        lambda x: (-1, x)),
    "int_min_div_minus_one": Override(
        "MIN // -1 wraps to MIN and MIN % -1 == 0 in every signed width (NumPy warns / traps)",
        "S16.2 [GPU]: int8..int64"),
    "int_wraps": Override(
        "signed integer arithmetic wraps silently (two's complement), no warning",
        "S1.6 [GPU]", wrap),
    "int1_arith_mod2": Override(
        "bool (int1) + - * compute in int1, i.e. modulo 2: True + True == False, x - y == x ^ y; NumPy's "
        "bool + is logical or and bool - raises",
        "S16.3 [GPU]; semantic.py integer_promote_impl(int1, int1) -> int1", lambda v: v & 1),
    "shift_amount_clamped": Override(
        "a shift amount >= the bit width (or negative, i.e. huge unsigned) gives 0 for <<, the sign fill for "
        "signed >>, 0 for unsigned >> (PTX shl/shr clamp); LLVM calls it poison, NumPy is platform-defined",
        "S16.4 [GPU] (int8, uint8, int32, uint32, int64; run-time amounts)"),
    "arith_shift_signed": Override(
        ">> is arithmetic for signed and logical for unsigned types (same as NumPy; C leaves it "
        "implementation-defined), chosen by the tensor on the left (for `literal >> t`, by t) before "
        "promotion: int8 >> uint32 computes in uint32 with an arithmetic shift",
        "S1.53 [GPU]; core.py tensor.__rshift__/__rrshift__",
        lambda xt, yt, x_scalar: is_signed(yt if x_scalar else xt)),
    "umulhi_unsigned": Override(
        "tl.umulhi multiplies the bit patterns as unsigned integers (MulhiUIOp), also for int32/int64",
        "S16.5 [GPU]: umulhi(int32 -1, 2) == 1; Triton 3.9 interpreter create_umulhi",
        lambda a, b, bits: ((a % (1 << bits)) * (b % (1 << bits))) >> bits),
    "cdiv_literal": Override(
        "tl.cdiv(x, d) is literally (x + (d - 1)) // d with C division, so it is wrong for negative x",
        "S4.2, S16.6 [GPU]: cdiv(-7, 2) == -3; standard.py cdiv; triton#954",
        lambda x, d: _c_div(x + (d - 1), d)),
    "constexpr_python_semantics": Override(
        "when every operand is a constexpr or literal, // and % follow Python (floor) semantics",
        "S1.4 [GPU]; Triton semantics page"),
    # -- floating point
    "float_mod_frem": Override(
        "float % is NVPTX's frem lowering, fma(-trunc(x / y), y, x) (|y| == inf gives x): C fmod when the "
        "quotient is exact, but 5.1 % 0.1 == -1.7e-07 and -0.0 % 1.0 == +0.0; NumPy's % is floored",
        "S1.12 [GPU] (-7.5 % 2.0 == -1.5); S15.1 [GPU]: 64 fp32 + 64 fp64 pairs match the formula",
        _gpu_frem),
    "float_floordiv_rejected": Override(
        "// is integer-only: a float operand raises `unexpected type fp32`", "S1.13 [GPU]"),
    "int_truediv_fp32": Override(
        "int / int is a true division in fp32 (NumPy: float64)", "S1.47 [GPU]; semantic.py truediv"),
    "narrow_float_div_mod_fp32": Override(
        "/ and % with an fp16 or bf16 operand compute in and return fp32 (NumPy keeps float16)",
        "semantic.py computation_type_impl rule 2; S3.5"),
    "fp32_div_approx": Override(
        "fp32 / on the GPU is not correctly rounded (max 1.51 ulp measured); minitriton is checked within 2 ulp "
        "of the IEEE quotient", "S1.33, S16.13 [GPU] (bf16 / bf16 -> fp32 off by 1 ulp)"),
    "maxnum": Override(
        "tl.maximum/minimum/clamp ignore a NaN operand by default (maxnum); PropagateNan.ALL propagates it; "
        "-0.0 < +0.0. NumPy's maximum propagates NaN",
        "S1.14, S15.2, S16.12 [GPU] (zeros, ALL, clamp)", _maxnum),
    "bf16_rtne_each_op": Override(
        "NumPy has no bfloat16: bf16 ops compute in fp32 and round the result to bf16 (RTNE) after every op "
        "(a*b+c may contract to one fma on the GPU, so chains tested here avoid mul-add)",
        "S1.22, S16.13 [GPU] (bf16 x*y+x contracts)"),
    "bf16_with_int_fp32": Override(
        "bf16 with an integer promotes to fp32 (NumPy has no bf16)", "S1.44 [GPU]"),
    "fp16_with_int_fp16": Override(
        "fp16 with an integer stays fp16 (NumPy: int32 + float16 -> float64)", "S1.45 [GPU]"),
    "prefer_unsigned": Override(
        "same width, mixed signedness -> the unsigned type (NumPy: int32 + uint32 -> int64)",
        "S1.11 [GPU]; S3.4"),
    "compare_literal_typed": Override(
        "== != < <= > >= make a Python number a tensor of its literal type first (fp32, int32, uint32, int64), so it "
        "takes part in the promotion: fp16 == 0.1 compares in fp32 against 0.1f, int8 < 300 is an int32 compare, "
        "uint32 < -1 compares against 0xFFFFFFFF (Triton 3.9 and the arithmetic operators keep it weak)",
        "S15.7; Triton 3.6 core.py:1007-1078 (tensor.__lt__ etc. call to_tensor); the 3.6 interpreter and "
        "offline compile"),
    "literal_constant": Override(
        "a literal becomes a constant of its type as Triton's scalar_constant builds it: a value equal to 0 is +0 "
        "(a literal -0.0 is +0.0); fp16 and bf16 constants come from a C++ float (rounded to fp32 first), and bf16 "
        "parses std::to_string of it (six decimals: 1e-7 -> 0, 3.3e-6 -> bf16(3e-6))",
        "S15.8, S15.9; Triton 3.6 semantic.py:590 scalar_constant, ir.cc get_fp16/get_bf16; TTIR constants from "
        "offline compile for sm_90 (3.6 and 3.9 agree)", lambda v, t: literal_constant(v, t)),
    "scalar_does_not_promote": Override(
        "a Python scalar of a lower or equal kind takes the tensor's type; of a higher kind, its literal type "
        "(int8 tensor + 2.5 -> fp32; NumPy: float64)", "S3.7, S3.8; semantic.py computation_type_impl"),
    "math_fp32_fp64_only": Override(
        "exp/log/sqrt/sin/... accept only fp32 and fp64 (libdevice's convention) and raise `Expected dtype "
        "['fp32', 'fp64'] but got fp16`; NumPy computes float16 directly", "math.py _check_dtype"),
    # -- conversions and reductions
    "float_to_int_saturates": Override(
        "float -> int truncates toward zero and saturates, NaN -> 0 (cvt.rzi.sat); NumPy gives INT_MIN. "
        "Measured for fp32 -> int32 only: other targets/sources are undefined (LLVM poison) and the GPU probe "
        "saw non-saturated values for int8/int16 and NaN -> INT_MIN for fp64 sources, so they are not tested",
        "S1.51, S16.7 [GPU]", _float_to_int),
    "int_to_float_single_rounding": Override(
        "int -> fp16/bf16/fp32 rounds once (RTNE) from the exact integer, 64-bit integers included",
        "S16.8 [GPU]: int64 2**62 + 2**54 + 1 -> bf16 == 2**62 + 2**55"),
    "int_sum_int32": Override(
        "tl.sum/cumsum/cumprod of narrow integers accumulate and return (u)int32 (NumPy: int64)",
        "S1.46 [GPU]; standard.py _pick_sum_dtype"),
    "narrow_minmax_widen": Override(
        "tl.max/tl.min of types narrower than 32 bits compute in and return fp32 (floats) or int32 (integers, "
        "unsigned included)", "standard.py max/min"),
    "reduce_max_ignores_nan": Override(
        "tl.max/tl.min ignore NaN; tl.argmax/argmin never pick a NaN; ties go to the first index (NumPy "
        "propagates NaN and argmax returns the NaN's index)", "S1.15, S1.54 [GPU]"),
    "sum_propagates_nan": Override("tl.sum of a NaN is NaN (same as NumPy)", "S1.16 [GPU]"),
    "dot_tf32_truncates": Override(
        "fp32 tl.dot defaults to tf32 with both operands truncated to 10 mantissa bits (low 13 bits cleared), "
        "exact products, fp32 accumulation", "S1.43 [GPU]"),
    "dot_narrow_fp32_acc": Override(
        "fp16/bf16 tl.dot multiply exactly and accumulate in fp32; out_dtype=float16 rounds once at the end",
        "S1.27, S1.28, S1.55 [GPU]"),
    "dot_int8_int32": Override("int8 tl.dot accumulates in int32", "semantic.py dot; S8.2"),
}


# ----------------------------------------------------------------------------- reference arithmetic

def literal_constant(value, t: str):
    """OVERRIDES['literal_constant']: the value of the constant Triton makes for the Python number `value` as
    type `t` (exact Python int, or float64 holding a `t` number)."""
    if value == 0:
        return 0.0 if is_float(t) else 0
    if not is_float(t):
        return wrap(int(value), t)
    if t == "float64" or not math.isfinite(value):
        return float(value)
    f32 = float(round_to([value], "float32")[0])
    if t == "bfloat16" and math.isfinite(f32):
        text = "%f" % f32  # std::to_string(float)
        return round_fraction(Fraction(text), t) if Fraction(text) != 0 else math.copysign(0.0, f32)
    return float(round_to([f32], t)[0])



def convert(values, src: str, dst: str) -> np.ndarray:
    """Exact values of type `src` converted to `dst` the way Triton's `.to(dst)` does on the GPU."""
    vals = np.asarray(values, dtype=object).reshape(-1)
    if src == dst:
        out = vals
    elif dst == "int1":
        out = [bool(v != 0) if not (isinstance(v, float) and math.isnan(v)) else True for v in vals]
    elif not is_float(dst):
        if is_float(src):
            out = [OVERRIDES["float_to_int_saturates"].fn(float(v), dst) for v in vals]
        else:
            out = [wrap(int(v), dst) for v in vals]
    elif is_float(src):
        out = round_to(np.array(vals, dtype=np.float64), dst)
    else:  # OVERRIDES["int_to_float_single_rounding"]
        out = [round_fraction(Fraction(int(v)), dst) for v in vals]
    if is_float(dst):
        return np.array(out, dtype=np.float64).reshape(np.shape(values))
    if dst == "int1":
        return np.array(out, dtype=bool).reshape(np.shape(values))
    return np.array([int(v) for v in out], dtype=object).reshape(np.shape(values))


CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
       "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
ARITH = ["+", "-", "*", "/", "//", "%"]
BITWISE = ["&", "|", "^", "<<", ">>"]
BINARY_OPS = ARITH + BITWISE + list(CMP)


def expected_binary(op: str, ct: str, a, b, signed_shift=None):
    """Reference `a op b` for operands already converted to the computation type `ct` (elementwise).
    `signed_shift`: whether >> is arithmetic (OVERRIDES['arith_shift_signed']); default: ct's signedness."""
    if op in CMP:
        return bool(CMP[op](a, b))
    if not is_float(ct):
        a, b = int(a), int(b)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "//":
            r = OVERRIDES["int_floordiv_truncates"].fn(a, b)
        elif op == "%":
            r = OVERRIDES["int_mod_sign_of_dividend"].fn(a, b)
        elif op == "&":
            r = a & b
        elif op == "|":
            r = a | b
        elif op == "^":
            r = a ^ b
        elif op in ("<<", ">>"):
            bits = BITS[ct]
            if op == ">>":  # reinterpret the bits for the shift kind, then shift
                arith = is_signed(ct) if signed_shift is None else signed_shift
                a = wrap(a, f"int{bits}") if arith else a % (1 << bits)
            b = b % (1 << bits)  # the amount's bits, read as unsigned
            if not 0 <= b < bits:  # OVERRIDES["shift_amount_clamped"]
                return OVERRIDES["int_wraps"].fn(0 if (op == "<<" or a >= 0) else -1, ct)
            r = a << b if op == "<<" else a >> b
        else:
            raise AssertionError(op)
        return OVERRIDES["int_wraps"].fn(r, ct)
    a, b = float(a), float(b)
    if op == "%":
        return OVERRIDES["float_mod_frem"].fn(a, b, ct)
    with np.errstate(all="ignore"):
        r = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}[op](np.float64(a), np.float64(b))
    return float(round_to([r], ct)[0])


def result_type(op: str, xt: str, yt: str, x_scalar=False, y_scalar=False) -> str:
    """The dtype of `x op y` (raises PromotionError/ TypeError-like expectations via `expected_error`)."""
    div = op in ("/", "//", "%")
    ct = promote(xt, yt, a_scalar=x_scalar, b_scalar=y_scalar, div=div)
    if op in CMP:
        return "int1"
    if op == "/" and not is_float(ct):
        return "float32"  # OVERRIDES["int_truediv_fp32"]
    return ct


def expected_error(op: str, xt: str, yt: str, x_scalar=False, y_scalar=False):
    """(exception type, regex) Triton raises for `x op y`, or None."""
    div = op in ("/", "//", "%")
    try:
        ct = promote(xt, yt, a_scalar=x_scalar, b_scalar=y_scalar, div=div)
    except PromotionError as e:
        return TypeError, str(e)
    if op == "//" and is_float(ct):  # OVERRIDES["float_floordiv_rejected"]
        return TypeError, f"unexpected type {short(ct)}"
    if op in BITWISE and is_float(ct):  # semantic.py bitwise_op_type_checking_impl, after the casts
        return TypeError, rf"invalid operands of type {tl_type(ct)!r} and {tl_type(ct)!r}".replace(".", r"\.")
    return None


# ----------------------------------------------------------------------------- test values

N = 32


def special_values(t: str, rng: np.random.Generator, n: int = N) -> list:
    """`n` values of type `t`: edge cases first, then random ones over the whole range."""
    if t == "int1":
        return [bool(v) for v in rng.integers(0, 2, n)]
    if not is_float(t):
        lo, hi = int_range(t)
        edge = [0, 1, 2, 3, 7, hi, hi - 1, lo, lo + 1] + ([-1, -2, -7, -3] if lo < 0 else [hi // 2, hi // 2 + 1])
        rand = [int(v) for v in rng.integers(lo, hi, n, dtype=np.int64 if hi < 2**63 else np.uint64, endpoint=True)]
        vals = edge + rand
        return vals[:n]
    if t == "float64":
        tiny, big, sub = 2.0**-1022, 1.7976931348623157e308, 5e-324
    else:
        p, emin, emax = FORMATS[t]
        tiny, big, sub = 2.0**emin, float((2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax), 2.0 ** (emin - p + 1)
    edge = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.5, -7.5, 2.0, math.nan, math.inf, -math.inf, big, -big, tiny,
            sub, -sub, 1 / 3, 0.1, 100.25]
    rand = list(rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n))
    return [float(v) for v in round_to(edge + rand, t)[:n]]


def type_seed(t: str) -> int:
    """A per-dtype seed that is the same in every process (str hashes are randomized)."""
    return 101 * ALL_TYPES.index(t)


def operand_values(t: str, seed: int, n: int = N) -> list:
    rng = np.random.default_rng(seed)
    vals = special_values(t, rng, n)
    order = rng.permutation(len(vals))
    return [vals[i] for i in order]


def shift_amounts(yt: str, ct: str, seed: int, n: int = N) -> list:
    """Shift amounts of type `yt`, mostly inside [0, bits(ct)), a few at or past the width."""
    rng = np.random.default_rng(seed)
    lo, hi = int_range(yt)
    top = min(BITS[ct] - 1, hi)
    vals = [int(v) for v in rng.integers(0, top, n, endpoint=True)]
    vals[:3] = [0, top, min(hi, BITS[ct] + 1)]
    return vals
