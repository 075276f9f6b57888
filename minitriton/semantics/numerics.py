"""Bit-exact float numerics for the minitriton engine: narrowing float conversions
(bf16, fp16, fp32, tf32) with round-to-nearest-even or round-toward-zero, the
saturating float-to-int conversion of PTX ``cvt.rzi.sat``, C ``fmod``, a correctly
rounded ``fma`` and ``erf``. (Integer division, shifts and ``umulhi`` are in
``minitriton.semantics.integers``.)
Every function works element-wise on NumPy arrays without Python loops over the
elements (apart from a rare exact fallback in ``fma``), passes explicit dtypes so
that it behaves the same under Pyodide, where NumPy's default integer is 32-bit,
and lets no floating-point or overflow RuntimeWarning escape.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from minitriton import errors

__all__ = [
    "round_to_bf16",
    "bf16_bits_to_f32",
    "f32_to_bf16_bits",
    "round_to_fp16",
    "f16_to_f32",
    "round_to_fp32",
    "tf32_truncate",
    "float_to_int",
    "c_fmod",
    "erf",
    "fma",
    "add_round_odd",
    "quiet",
]

_MODES = ("rtne", "rtz")


already_quiet = False  # set by the engine while a launch runs under np.errstate(all="ignore")


def quiet(fn):
    """Run ``fn`` with all NumPy floating-point warnings off: NaN/inf operands (even
    signalling NaNs in a plain cast) and intended overflows must not warn."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if already_quiet:  # entering np.errstate costs more than most of these functions
            return fn(*args, **kwargs)
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapper


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise errors.python_error(ValueError, errors.diagnostic("rounding_choice", mode=repr(mode)))


def _as_float32(x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == np.float32:
        return x
    if x.dtype.kind != "f":
        raise errors.python_error(TypeError, errors.diagnostic("expected_float", dtype=x.dtype))
    if x.dtype == np.float64:
        return _f64_to_f32(x, "rtne")
    return f16_to_f32(x) if x.dtype == np.float16 else x.astype(np.float32)  # float16 -> float32 is exact


_F16_TO_F32 = None  # the float32 value of every float16 bit pattern (NumPy's own conversion), made on first use


def f16_to_f32(x: np.ndarray) -> np.ndarray:
    """`x.astype(np.float32)` for a float16 array, bit for bit: a table lookup, about 2x NumPy's conversion."""
    global _F16_TO_F32
    if x.ndim == 0:
        return x.astype(np.float32)
    if _F16_TO_F32 is None:
        _F16_TO_F32 = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)
    return _F16_TO_F32.take(x.view(np.uint16))


_U32 = np.uint32


def _f32_to_f16(x: np.ndarray) -> np.ndarray:
    """`x.astype(np.float16)` for a float32 array, bit for bit (NaN payloads included; checked on all 2**32
    inputs), in uint32 passes: about 2x NumPy's conversion."""
    u = x.view(np.uint32)
    a = u & _U32(0x7FFFFFFF)
    h = a + _U32(0xC8000FFF)                  # the exponent rebiased (mod 2**32), plus half an ulp less one
    h += (a & _U32(0x2000)) != 0              # ... plus one where the kept part is odd: ties to even
    h >>= _U32(13)
    big = a >= _U32(0x477FF000)               # rounds past the largest half: inf, or NaN with its payload
    if big.any():
        nan = _U32(0x7C00) + ((a & _U32(0x7FFFFF)) >> _U32(13))
        nan += nan == _U32(0x7C00)
        np.copyto(h, np.where(a > _U32(0x7F800000), nan, _U32(0x7C00)), where=big)
    small = a < _U32(0x38800000)              # half's subnormals and zeros: the FPU rounds them
    if small.any():
        np.copyto(h, (a.view(np.float32) + np.float32(0.5)).view(np.uint32) - _U32(0x3F000000), where=small)
    h |= (u >> _U32(16)) & _U32(0x8000)
    return h.astype(np.uint16).view(np.float16)


def _f64_to_f32(x: np.ndarray, how: str) -> np.ndarray:
    """float64 -> float32 rounded by ``how``: 'rtne', 'rtz' or 'odd' (round to odd)."""
    t = x.astype(np.float32)
    if how == "rtne":
        return t
    back = t.astype(np.float64)
    bits = t.view(np.uint32)
    # NaN compares False everywhere, so NaN (and exact values, and inf) stay as they are.
    # Decrementing the bit pattern steps the magnitude one ulp toward zero; an overflow
    # to inf (0x7f800000) becomes the largest finite float32 (0x7f7fffff).
    bits -= np.abs(back) > np.abs(x)
    if how == "odd":
        # Round to odd: truncate, then set the last bit when inexact. Rounding the
        # result once more to nearest (to <= 22 significant bits) equals rounding x
        # directly, so there is no double-rounding error.
        bits |= (back != x) & (x == x)
    return t


_U32_16 = np.uint32(16)
_U32_1 = np.uint32(1)
_U32_7FFF = np.uint32(0x7FFF)
_U32_HIGH = np.uint32(0xFFFF0000)
_U32_QUIET = np.uint32(0x00400000)


def _bf16_round_bits32(b: np.ndarray, mode: str) -> np.ndarray:
    """float32 bit patterns (uint32) -> bf16-rounded bit patterns with the low 16 bits clear."""
    if mode == "rtne":
        # Adding 0x7FFF plus the kept LSB carries into the upper half exactly when the
        # dropped half is > 0.5 ulp, or == 0.5 ulp with an odd kept part. Works for
        # subnormals and overflows to inf; uint32 wrap-around only hits NaN patterns.
        # (In place on the fresh intermediate: this runs after every bf16 operation.)
        r = np.right_shift(b, _U32_16)
        r &= _U32_1
        r += _U32_7FFF
        r += b
        r &= _U32_HIGH
    else:
        r = b & _U32_HIGH
    # Without this the trick above turns NaN 0x7f800001 into inf (and rtz would too).
    nan = np.isnan(b.view(np.float32))
    if np.count_nonzero(nan):  # any NaN (count_nonzero: much cheaper than .any() on small arrays)
        return np.where(nan, (b | _U32_QUIET) & _U32_HIGH, r)
    return r if b.ndim else np.asarray(r)  # a 0-d input gives a 0-d array, as np.where would


@quiet
def round_to_bf16(x, mode: str = "rtne") -> np.ndarray:
    """Round float32/float64 values to bfloat16 precision, returned as float32.

    ``mode="rtne"`` rounds to nearest even (overflow gives +-inf, subnormals are rounded
    correctly); ``mode="rtz"`` truncates toward zero (overflow gives +-max finite bf16,
    0x7f7f). NaN stays NaN (sign and leading payload kept, quiet bit set). float64 input
    is rounded to float32 first with round-to-odd (or truncation for rtz), which makes
    the final result identical to rounding the float64 value directly.
    """
    _check_mode(mode)
    x = np.asarray(x)
    if x.dtype == np.float64:
        x = _f64_to_f32(x, "odd" if mode == "rtne" else "rtz")
    else:
        x = _as_float32(x)
    return _bf16_round_bits32(x.view(np.uint32), mode).view(np.float32)


@quiet
def bf16_bits_to_f32(bits) -> np.ndarray:
    """Widen bfloat16 bit patterns (uint16 array) to the float32 values they denote (exact)."""
    bits = np.asarray(bits)
    if bits.dtype != np.uint16:
        bits = bits.astype(np.uint16)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


@quiet
def f32_to_bf16_bits(x, mode: str = "rtne") -> np.ndarray:
    """Round float32 values to bfloat16 (``mode`` as in :func:`round_to_bf16`); return uint16 bit patterns."""
    _check_mode(mode)
    x = np.asarray(x)
    if x.dtype == np.float64:
        x = _f64_to_f32(x, "odd" if mode == "rtne" else "rtz")
    else:
        x = _as_float32(x)
    r = _bf16_round_bits32(x.view(np.uint32), mode)
    return (r >> np.uint32(16)).astype(np.uint16)


@quiet
def round_to_fp16(x, mode: str = "rtne") -> np.ndarray:
    """Round float32/float64 values to float16 (returned as a float16 array).

    ``rtne``: round to nearest even (NumPy's cast, which rounds float64 directly, not via
    float32); overflow gives +-inf. ``rtz``: toward zero; overflow gives +-65504.
    NaN and +-inf are preserved in both modes.
    """
    _check_mode(mode)
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise errors.python_error(TypeError, errors.diagnostic("expected_float", dtype=x.dtype))
    t = _f32_to_f16(x) if x.dtype == np.float32 and x.ndim else x.astype(np.float16)
    if mode == "rtz" and x.dtype != np.float16:
        back = t.astype(x.dtype)
        t.view(np.uint16)[...] -= np.abs(back) > np.abs(x)
    return t


@quiet
def round_to_fp32(x, mode: str = "rtne") -> np.ndarray:
    """Round float64 values to float32 (rtne: nearest even, overflow +-inf; rtz: toward
    zero, overflow +-3.4028235e38). NaN and +-inf are preserved. float32/float16 input
    is returned as float32 unchanged in value."""
    _check_mode(mode)
    x = np.asarray(x)
    if x.dtype == np.float64:
        return _f64_to_f32(x, mode)
    return _as_float32(x)


@quiet
def tf32_truncate(x) -> np.ndarray:
    """Reduce float32 values to TF32 precision by clearing the low 13 mantissa bits.

    This is truncation toward zero (what the H200 tensor cores were measured to do with
    fp32 operands: 1+2**-11 -> 1.0). NaN and +-inf are preserved.
    """
    x = _as_float32(x)
    r = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    # A NaN whose payload sits only in the low 13 bits would otherwise become inf; such NaNs are rare,
    # so check the cheap way first.
    if np.count_nonzero(np.isinf(r)):
        r = np.where(np.isnan(x), x, r)
    return r


@quiet
def float_to_int(x, np_int_dtype) -> np.ndarray:
    """Convert floats to integers like PTX ``cvt.rzi.sat``: truncate toward zero,
    saturate to the integer range (negatives -> 0 for unsigned types), NaN -> 0.

    Supports int8..int64 and uint8..uint64; the range test happens in floating point
    against the exact powers of two 2**(bits-1) / 2**bits, so the int64/uint64 bounds
    (not representable as floats) are handled exactly.
    """
    dt = np.dtype(np_int_dtype)
    if dt.kind not in "iu":
        raise errors.python_error(TypeError, errors.diagnostic("expected_integer_dtype", dtype=dt))
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise errors.python_error(TypeError, errors.diagnostic("expected_float", dtype=x.dtype))
    if x.dtype == np.float16:
        x = x.astype(np.float32)  # 2**31 etc. overflow float16
    info = np.iinfo(dt)
    t = np.trunc(x)
    too_hi = t >= float(info.max + 1)  # exact power of two
    too_lo = t < float(info.min)  # 0 or -2**(bits-1), exact
    bad = too_hi | too_lo | np.isnan(t)
    out = np.where(bad, x.dtype.type(0), t).astype(dt)
    np.putmask(out, too_hi, info.max)
    np.putmask(out, too_lo, info.min)
    return out


@quiet
def c_fmod(a, b) -> np.ndarray:
    """C ``fmod`` for float arrays (result has the sign of ``a``: fmod(-7.5, 2) == -1.5).

    The dtype is kept (float16/32/64; fmod is exact, so no rounding happens).
    fmod(x, 0) and fmod(+-inf, y) are NaN; fmod(x, +-inf) == x.
    """
    # Python float operands stay weakly typed (NEP 50): fmod(float32 array, 2.0) is float32.
    return np.asarray(np.fmod(a, b))


# --- erf ----------------------------------------------------------------------------
# math.erf is the platform libm's erf (fdlibm-derived in glibc and musl/Pyodide:
# < 1 ulp of float64). Applied through np.frompyfunc it measured 110-210 ns/element
# (128 to 1M elements, x86-64), faster at every size than a vectorised port of the
# fdlibm rational approximations (200-2000 ns/element), whose ~60 NumPy calls per
# invocation dominate for the small blocks the engine works on.
_erf_obj = np.frompyfunc(math.erf, 1, 1)


@quiet
def erf(x) -> np.ndarray:
    """Error function, element-wise, for float16/float32/float64 arrays (dtype kept).

    Evaluated in float64 with ``math.erf`` (libm, < 1 ulp of float64) through
    ``np.frompyfunc``, about 0.1-0.2 us per element; narrower inputs are rounded
    once from the float64 result. erf(+-0) = +-0, erf(+-inf) = +-1, erf(NaN) = NaN.
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise errors.python_error(TypeError, errors.diagnostic("expected_float", dtype=x.dtype))
    r = _erf_obj(x.astype(np.float64, copy=False))
    return np.asarray(r, dtype=np.float64).astype(x.dtype, copy=False)


# --- fma ----------------------------------------------------------------------------


def _two_sum(a, b):
    """s + e == a + b exactly (Knuth), barring overflow."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


_SPLITTER = 134217729.0  # 2**27 + 1 (Dekker/Veltkamp split of a 53-bit significand)


def _split(a):
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a, b):
    """p + e == a * b exactly (Dekker), barring overflow and underflow."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def add_round_odd(a, b) -> np.ndarray:
    """float64 a + b rounded to odd: truncate toward zero, set the last bit if inexact."""
    s, e = _two_sum(a, b)
    s = np.asarray(s, dtype=np.float64)
    # The exact sum lies between s = RN(a+b) and s's neighbour toward e; adjacent
    # floats alternate in parity, so the odd one of the two is the round-to-odd value.
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    fix = even & (e != 0) & np.isfinite(e)
    return np.where(fix, np.nextafter(s, e * np.inf), s)


def _fma_exact_scalar(a: float, b: float, c: float) -> float:
    v = Fraction(a) * Fraction(b) + Fraction(c)
    if v == 0:
        # Exact zero: IEEE sign rules; a nonzero product cancelled by c gives +0.
        return a * b + c if (a == 0 or b == 0) else 0.0
    try:
        return v.numerator / v.denominator  # correctly rounded (CPython int true division)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


_fma_exact_vec = np.frompyfunc(_fma_exact_scalar, 3, 1)


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    # Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
    # using rounding to odd" (IEEE TC 2008): fma = RN(th + RO(tl + ul)) where
    # uh + ul = a*b and th + tl = c + uh exactly. Valid without overflow/underflow;
    # elements outside that range take an exact Fraction fallback.
    a, b, c = np.broadcast_arrays(a, b, c)
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    r = np.asarray(th + add_round_odd(tl, ul), dtype=np.float64)
    au = np.abs(uh)
    # NaN/inf fail these comparisons too. The bounds keep the Dekker split and the
    # sums from overflowing and the product's low part and the result normal.
    ok = ((np.maximum(np.abs(a), np.abs(b)) < 2.0**995) & (np.maximum(np.abs(c), au) < 2.0**1000)
          & (au >= 2.0**-960) & ((np.abs(r) >= 2.0**-1000) | (r == 0)))
    if ok.all():
        return r
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    # Zero product: exact, so the plain sum has the right value and sign of zero.
    # Non-finite operands: the plain formula is right except a finite a*b overflowing
    # against an infinite c (fma gives c, a*b + c might give inf - inf = NaN).
    simple = (a == 0) | (b == 0) | ~finite
    plain = np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, a * b + c)
    r = np.where(simple, plain, r)
    slow = ~(ok | simple)
    if slow.any():
        r[slow] = _fma_exact_vec(a[slow], b[slow], c[slow]).astype(np.float64)
    return r


@quiet
def fma(a, b, c) -> np.ndarray:
    """Fused multiply-add ``a*b + c`` rounded once (to nearest even), element-wise.

    float32 and float16: the product is exact in float64; the sum is rounded to float64
    with round-to-odd and then to the target format, which equals a single rounding of
    the exact result (plain float64 evaluation would double-round whenever the float64
    sum is inexact and lands on a float32/float16 rounding midpoint). float64: an
    error-free transformation (Dekker TwoProduct + TwoSum + round-to-odd addition,
    Boldo-Melquiond) that is correctly rounded; operands near overflow or results near
    the subnormal range use an exact ``fractions.Fraction`` evaluation instead.
    """
    dt = np.result_type(a, b, c)  # Python floats are weak: fma(f32 array, 2.0, 1.0) is f32
    if dt.kind != "f":
        raise errors.python_error(TypeError, errors.diagnostic("expected_float", dtype=dt))
    if dt == np.float64:
        return _fma64(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt), np.asarray(c, dtype=dt))
    a64, b64, c64 = (np.asarray(v, dtype=dt).astype(np.float64) for v in (a, b, c))
    v = add_round_odd(a64 * b64, c64)  # the product is exact (<= 48 bits)
    return v.astype(dt)


def float_mod(ad: np.ndarray, bd: np.ndarray) -> np.ndarray:
    """`x % y` for floats as NVPTX lowers frem: fma(-trunc(x / y), y, x), x where |y| == inf (GPU probe, fp32
    and fp64). C fmod when the quotient is exact, but 5.1 % 0.1 == -1.7e-07 and -0.0 % 1.0 == +0.0."""
    with np.errstate(all="ignore"):
        q = np.trunc(np.true_divide(ad, bd))
        r = fma(np.negative(q), bd, ad)
    return np.where(np.isinf(bd), ad, r)


def is_integer_power_of_two(bd: np.ndarray) -> bool:
    """Every element of `bd` is ±2**k with k >= 0 (1.0, 2.0, 65536.0; not 0.5)."""
    with np.errstate(all="ignore"):
        m, e = np.frexp(bd)
    return bool(np.all(np.abs(m) == 0.5) and np.all(e >= 1) and np.all(np.isfinite(bd)))
