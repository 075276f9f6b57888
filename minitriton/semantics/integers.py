"""C/PTX integer arithmetic on NumPy arrays: division and remainder truncating toward zero (with the GPU's
values for division by zero and INT_MIN / -1), ``umulhi``, and shifts (with the GPU's values for oversized
shift amounts). int1 (NumPy bool) operands fold as LLVM folds them. Exact for 64-bit integers, explicit
dtypes (NumPy's default integer is 32-bit under Pyodide), no RuntimeWarning escapes.
"""

from __future__ import annotations

import functools

import numpy as np

from minitriton import errors
from minitriton.semantics.numerics import quiet

__all__ = ["c_div", "c_mod", "umulhi", "shift_left", "shift_right"]


def _int_pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype and a.dtype.kind in "iu":
        return a, b   # the engine's case: two arrays in one integer dtype (NumPy's builtin dtypes are singletons)
    a_arr = isinstance(a, np.ndarray) or isinstance(a, np.generic)
    b_arr = isinstance(b, np.ndarray) or isinstance(b, np.generic)
    if a_arr and not b_arr:
        a = np.asarray(a)
        b = np.asarray(b).astype(a.dtype)
    elif b_arr and not a_arr:
        b = np.asarray(b)
        a = np.asarray(a).astype(b.dtype)
    else:
        a = np.asarray(a)
        b = np.asarray(b)
    if a.dtype != b.dtype:
        raise errors.python_error(TypeError, errors.diagnostic("integer_same_dtype", left=a.dtype, right=b.dtype))
    if a.dtype.kind not in "iu":
        raise errors.python_error(TypeError, errors.diagnostic("expected_integer", dtype=a.dtype))
    return a, b


def _c_divmod(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = _int_pair(a, b)
    dt = a.dtype
    signed = dt.kind == "i"
    zero = b == 0
    if signed:
        minus1 = b == -1
        # b == -1 is replaced too: INT_MIN // -1 overflows (numpy warns); a % 1 == 0
        # already gives the right remainder and the quotient is set below.
        s = np.where(zero | minus1, dt.type(1), b)
    else:
        s = np.where(zero, dt.type(1), b)
    q, r = np.divmod(a, s)  # floor division
    if signed:
        # C truncation: -7 // 2 == -3, -7 % 2 == -1 (floor gives -4 and 1).
        fix = (r != 0) & ((a < 0) != (s < 0))
        q = q + fix.astype(dt)
        r = r - np.where(fix, s, dt.type(0))
        q = np.where(minus1, np.negative(a), q)  # wraps: INT_MIN // -1 == INT_MIN
    ones = dt.type(-1) if signed else np.iinfo(dt).max
    q = np.where(zero, ones, q)
    r = np.where(zero, a, r)
    return np.asarray(q, dtype=dt), np.asarray(r, dtype=dt)


_BOOL = np.dtype(bool)


def _int1_folded(result_of):
    """Triton's int1 is a 1-bit unsigned integer, and LLVM folds its arithmetic on the only defined operands
    (a divisor or a shift amount can only be 0 or 1, and 0 / a shift by 1 is undefined): `udiv i1 x, y` is x,
    `urem` is 0, `shl`/`lshr` are x. Measured on the H200 (Triton 3.6, probe int1_div_mod_shift): 0 // 0 == 0,
    1 % 0 == 0, 1 << 1 == 1. `result_of(a)` gives the folded result from the broadcast bool `a`."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(a, b):
            if getattr(a, "dtype", None) == _BOOL or getattr(b, "dtype", None) == _BOOL:
                a, b = np.broadcast_arrays(np.asarray(a, bool), np.asarray(b, bool))
                return result_of(a)
            return fn(a, b)
        return wrapper
    return decorate


_int1_keeps_x = _int1_folded(lambda a: a.copy())


@quiet
@_int1_keeps_x
def c_div(a, b) -> np.ndarray:
    """Integer division truncating toward zero (C / PTX ``div``): -7 / 2 == -3.

    Both operands share one integer dtype (8..64 bit, signed or unsigned) and broadcast.
    Division by zero gives all-ones bits (-1 signed, max unsigned) as the GPU does;
    INT_MIN / -1 wraps to INT_MIN. Exact for 64-bit integers; no warnings.
    """
    a, b = _int_pair(a, b)
    if _floor_is_trunc(a, b):
        return np.asarray(np.floor_divide(a, b), dtype=a.dtype)
    return _c_divmod(a, b)[0]


@quiet
@_int1_folded(np.zeros_like)
def c_mod(a, b) -> np.ndarray:
    """Integer remainder with C semantics: the result has the sign of ``a``
    (-7 % 2 == -1, 7 % -2 == 1). Remainder by zero gives ``a``; INT_MIN % -1 == 0."""
    a, b = _int_pair(a, b)
    if _floor_is_trunc(a, b):
        return np.asarray(np.remainder(a, b), dtype=a.dtype)
    return _c_divmod(a, b)[1]


def _floor_is_trunc(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether NumPy's floor division is C's here, with no special divisor: the common case of
    indexing arithmetic (a >= 0, b > 0), checked first because _c_divmod costs a dozen NumPy calls."""
    unsigned = a.dtype.kind == "u"   # one divisor (a constant, a scalar argument): a Python comparison
    positive = b.item() > 0 if b.size == 1 else np.count_nonzero(b if unsigned else b > 0) == b.size
    return positive and (unsigned or np.count_nonzero(a < 0) == 0)


@quiet
def umulhi(a, b) -> np.ndarray:
    """High half of the full 2N-bit product of two N-bit integers (CUDA __mulhi /
    __umulhi / __mul64hi / __umul64hi), with signed semantics for signed dtypes.

    int32/uint32 go through a 64-bit product; int64/uint64 through 32-bit limbs.
    """
    a, b = _int_pair(a, b)
    dt = a.dtype
    if dt.itemsize <= 4:
        wide = np.int64 if dt.kind == "i" else np.uint64
        p = a.astype(wide) * b.astype(wide)  # exact: fits in 64 bits
        return np.asarray(p >> (8 * dt.itemsize), dtype=wide).astype(dt)
    ua = a.astype(np.uint64)  # same bits (two's complement)
    ub = b.astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah = ua & m32, ua >> s32
    bl, bh = ub & m32, ub >> s32
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    mid = (ll >> s32) + (lh & m32) + (hl & m32)  # < 3 * 2**32, no overflow
    hi = ah * bh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    if dt.kind == "i":
        # Two's complement: hi_signed = hi_unsigned - (a<0 ? b : 0) - (b<0 ? a : 0) mod 2**64.
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
    return np.asarray(hi, dtype=np.uint64).astype(dt)


def _shift_amounts(a, s):
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise errors.python_error(TypeError, errors.diagnostic("expected_integer", dtype=a.dtype))
    s = np.asarray(s)
    if s.dtype.kind not in "iu":
        raise errors.python_error(TypeError, errors.diagnostic("shift_type", dtype=s.dtype))
    width = 8 * a.dtype.itemsize
    if s.dtype == np.uint64:
        big = s >= np.uint64(width)
    else:
        s = s.astype(np.int64, copy=False)
        # Negative amounts are huge when read as unsigned: clamped like >= width.
        big = (s < 0) | (s >= width)
    return a, s, big, width


@quiet
@_int1_keeps_x
def shift_left(a, s) -> np.ndarray:
    """``a << s`` as PTX ``shl`` does it: amounts >= the bit width (or negative, i.e.
    huge unsigned) give 0. The result keeps ``a``'s dtype and wraps."""
    a, s, big, _ = _shift_amounts(a, s)
    dt = a.dtype
    sh = np.where(big, 0, s).astype(dt)
    return np.asarray(np.where(big, dt.type(0), np.left_shift(a, sh)), dtype=dt)


@quiet
@_int1_keeps_x
def shift_right(a, s) -> np.ndarray:
    """``a >> s`` as PTX ``shr`` does it: arithmetic for signed dtypes, logical for
    unsigned. Amounts >= the bit width (or negative) give the sign fill (0 or -1) for
    signed and 0 for unsigned."""
    a, s, big, width = _shift_amounts(a, s)
    dt = a.dtype
    if dt.kind == "i":
        # Shifting by width-1 yields the sign fill, so clamp instead of masking.
        sh = np.where(big, width - 1, s).astype(dt)
        return np.asarray(np.right_shift(a, sh), dtype=dt)
    sh = np.where(big, 0, s).astype(dt)
    return np.asarray(np.where(big, dt.type(0), np.right_shift(a, sh)), dtype=dt)
