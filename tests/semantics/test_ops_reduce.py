"""Reductions and scans: tl.sum/max/min/argmax/argmin/xor_sum, tl.reduce and tl.associative_scan with
@triton.jit combine functions, cumsum/cumprod, in every dtype, against exact Python references.

Result dtypes follow triton.language.standard (see OVERRIDES in test_ops_elementwise: narrow integer sums
accumulate in (u)int32, max/min of narrow types compute in fp32/int32, NaN never wins a max/min/argmax).
Float inputs are small integers or dyadic values unless a test says otherwise, so every summation order
gives the same exact result (the GPU's reduction order is unspecified).
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
from helpers.kernels import make_kernel
from helpers.binary import assert_same
from helpers.dtypes import ALL_TYPES, INT_TYPES, INTEGRAL_TYPES, UINT_TYPES, BITS, empty_buffer, from_buffer, int_range, is_float, round_to, short, tl_type, to_buffer, wrap
from helpers.reference import OVERRIDES, convert

M, N = 4, 8

REDUCE_SRC = """
@triton.jit
def reduce_kernel(X, Z, ZTY: tl.constexpr, M: tl.constexpr, N: tl.constexpr, ZM: tl.constexpr, ZN: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    zp = Z + tl.arange(0, ZM)[:, None] * ZN + tl.arange(0, ZN)[None, :]
    if len(z.shape) == 0:
        tl.store(zp, z)   # a scalar cannot be reshaped in 3.6 ('dtype' object has no attribute 'numel')
    else:
        tl.store(zp, tl.reshape(z, (ZM, ZN)))
"""


def sum_type(t):
    """OVERRIDES['int_sum_int32']: standard.py _pick_sum_dtype."""
    if t in INT_TYPES and BITS[t] < 32:
        return "int32"
    if (t in UINT_TYPES or t == "int1") and BITS[t] < 32:
        return "uint32"
    return t


def minmax_type(t):
    """OVERRIDES['narrow_minmax_widen']: standard.py max/min widen types narrower than 32 bits."""
    if BITS[t] < 32:
        return "float32" if is_float(t) else "int32"
    return t


def reduce_values(t, seed, exact=True):
    """M*N values of `t`; floats are small dyadic numbers (exact sums in any order) when `exact`."""
    rng = np.random.default_rng(seed)
    if t == "int1":
        return rng.integers(0, 2, M * N).astype(bool).tolist()
    if is_float(t):
        if exact:
            return (rng.integers(-16, 17, M * N) / 4.0).tolist()
        return round_to(rng.standard_normal(M * N) * 10, t).tolist()
    lo, hi = int_range(t)
    vals = [int(v) for v in rng.integers(lo, hi, M * N, dtype=np.int64 if hi < 2**63 else np.uint64, endpoint=True)]
    vals[:3] = [lo, hi, 0]
    return vals


def run_reduce(expr, xv, t, zt, zshape):
    zm, zn = zshape
    z = empty_buffer((zm, zn), zt)
    make_kernel(REDUCE_SRC.format(expr=expr))[(1,)](to_buffer(np.array(xv, dtype=object).reshape(M, N), t), z,
                                                      ZTY=tl_type(zt), M=M, N=N, ZM=zm, ZN=zn)
    return from_buffer(z, zt).reshape(zm, zn)


AXES = [  # (expression suffix, axis used by the reference, output shape as (ZM, ZN))
    ("", None, (1, 1)), (", axis=0", 0, (1, N)), (", axis=1", 1, (M, 1)), (", axis=-1", 1, (M, 1)),
    (", axis=0, keep_dims=True", 0, (1, N)), (", axis=1, keep_dims=True", 1, (M, 1)),
    (", keep_dims=True", None, (1, 1)),
]


def ref_reduce(xv, t, ct, axis, fn):
    """Apply `fn` (on a list of converted values) along `axis` of the (M, N) grid."""
    x = np.array(convert(xv, t, ct).tolist(), dtype=object).reshape(M, N)
    if axis is None:
        return np.array([[fn(list(x.reshape(-1)))]], dtype=object)
    if axis == 0:
        return np.array([[fn(list(x[:, j])) for j in range(N)]], dtype=object)
    return np.array([[fn(list(x[i, :]))] for i in range(M)], dtype=object)


@pytest.mark.parametrize("suffix, axis, zshape", AXES, ids=[a[0] or "all" for a in AXES])
@pytest.mark.parametrize("t", ALL_TYPES)
def test_sum(t, suffix, axis, zshape):
    xv = reduce_values(t, 1)
    zt = sum_type(t)
    got = run_reduce(f"tl.sum(x{suffix})", xv, t, zt, zshape)
    if is_float(zt):
        want = ref_reduce(xv, t, zt, axis, lambda v: float(sum(v)))  # exact: small dyadic values
    else:
        want = ref_reduce(xv, t, zt, axis, lambda v: wrap(sum(int(a) for a in v), zt))
    assert_same(got, want, zt, f"`tl.sum(x{suffix})` with x: {t} (sum dtype {short(zt)})")


@pytest.mark.parametrize("t", ["float16", "bfloat16", "float32", "float64"])
def test_sum_random_floats_within_tolerance(t):
    """Random values: any summation order; the result is within n rounding errors of the exact sum."""
    xv = reduce_values(t, 2, exact=False)
    got = run_reduce("tl.sum(x, axis=1)", xv, t, t, (M, 1)).reshape(-1)
    exact = np.array(xv, np.float64).reshape(M, N).sum(axis=1)
    eps = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24, "float64": 2.0**-53}[t]
    bound = N * eps * np.abs(np.array(xv, np.float64)).reshape(M, N).sum(axis=1) + 1e-300
    assert np.all(np.abs(got - exact) <= bound), f"tl.sum of {t}: {got} vs exact {exact} (bound {bound})"


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("suffix, axis, zshape", AXES[:3], ids=["all", "axis0", "axis1"])
@pytest.mark.parametrize("t", ALL_TYPES)
def test_max_min(t, fn, suffix, axis, zshape):
    xv = reduce_values(t, 3, exact=False)
    zt = minmax_type(t)
    got = run_reduce(f"tl.{fn}(x{suffix})", xv, t, zt, zshape)
    if is_float(zt):  # maxnum, -0.0 < +0.0 (the combine is tl.maximum/minimum)
        maxnum = OVERRIDES["maxnum"].fn
        pick = lambda v: functools.reduce(lambda a, b: maxnum(a, b, fn == "max", False), v)  # noqa: E731
    else:
        pick = max if fn == "max" else min
    want = ref_reduce(xv, t, zt, axis, pick)
    assert_same(got, want, zt, f"`tl.{fn}(x{suffix})` with x: {t} (computes in {short(zt)})")


def test_max_min_signed_zeros():
    """The combine is tl.maximum/tl.minimum: -0.0 < +0.0 (GPU probe on tl.maximum/minimum)."""
    xv = [-0.0, 0.0, -0.0, -0.0, 0.0, 0.0, -0.0, 0.0] * 4
    assert math.copysign(1, run_reduce("tl.max(x)", xv, "float32", "float32", (1, 1))[0, 0]) == 1
    assert math.copysign(1, run_reduce("tl.min(x)", xv, "float32", "float32", (1, 1))[0, 0]) == -1


def test_row15_16_nan_rules():
    """S1.15, S1.16: tl.max ignores NaN, tl.sum propagates it; an all-NaN max is NaN."""
    k = make_kernel("""
    @triton.jit
    def nan_rules(X, Z):
        x = tl.load(X + tl.arange(0, 4))
        tl.store(Z + 0, tl.max(x))
        tl.store(Z + 1, tl.min(x))
        tl.store(Z + 2, tl.sum(x))
        tl.store(Z + 3, tl.max(x * float("nan")))
    """)
    z = np.zeros(4, np.float32)
    k[(1,)](np.array([np.nan, 0, 2, 3], np.float32), z)
    assert z[0] == 3.0 and z[1] == 0.0, f"S1.15: max/min over [NaN,0,2,3] = {z[:2]}"
    assert math.isnan(z[2]) and math.isnan(z[3]), f"S1.16: sum = {z[2]}, max of all-NaN = {z[3]}"


def test_row46_int8_sum_accumulates_in_int32():
    k = make_kernel("""
    @triton.jit
    def int8_sum(X, Z):
        s = tl.sum(tl.load(X + tl.arange(0, 4)))
        tl.static_assert(s.dtype == tl.int32, "int8 sum accumulates in int32")
        tl.store(Z, s)
    """)
    z = np.zeros(1, np.int32)
    k[(1,)](np.array([100, 100, 100, 100], np.int8), z)
    assert z[0] == 400, f"S1.46: {z[0]}"


@pytest.mark.parametrize("t", ["int8", "uint8", "float16", "int32"])
def test_sum_dtype_argument(t):
    """`tl.sum(x, dtype=...)` casts first, then accumulates in that type."""
    xv = [100, 100, 100, 100, 27, 1, 0, 3] * 4 if not is_float(t) else [0.25] * 32
    zt = "float32" if is_float(t) else "int64"
    got = run_reduce(f"tl.sum(x, dtype=tl.{zt})", xv, t, zt, (1, 1))
    assert float(got[0, 0]) == float(sum(xv)), f"tl.sum(x, dtype={zt}) with x: {t}: {got[0, 0]}"


def test_int8_sum_does_not_wrap_at_8_bits():
    xv = [127] * 32
    got = run_reduce("tl.sum(x)", xv, "int8", "int32", (1, 1))
    assert got[0, 0] == 127 * 32


# ----------------------------------------------------------------------------- argmax / argmin

ARG_SRC = """
@triton.jit
def arg_kernel(X, V, I, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    v, i = {expr}
    tl.store(V, v)
    tl.store(I, i)
"""


@pytest.mark.parametrize("t", ["float32", "float16", "bfloat16", "int32", "int8", "uint8"])
def test_row54_argmax_argmin_ties_and_nan(t):
    """Ties -> first index; NaN is never picked (S1.54, OVERRIDES['reduce_max_ignores_nan'])."""
    x = [1, 5, 5, 2, 5, 0, 0, 3]
    k = make_kernel("""
    @triton.jit
    def args(X, A):
        x = tl.load(X + tl.arange(0, 8))
        tl.store(A + 0, tl.argmax(x, axis=0))
        tl.store(A + 1, tl.argmin(x, axis=0))
    """)
    a = np.zeros(2, np.int32)
    k[(1,)](to_buffer(x, t), a)
    assert a.tolist() == [1, 5], f"argmax/argmin with ties, {t}: {a.tolist()}"
    if is_float(t):
        xn = [1, math.nan, 5, 2, 5, 0, 0, 3]
        k[(1,)](to_buffer(xn, t), a)
        assert a.tolist() == [2, 5], f"argmax/argmin with a NaN at index 1, {t}: {a.tolist()}"


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("t", ["float32", "bfloat16", "int16", "uint32", "int64"])
def test_max_return_indices(t, fn):
    """tl.max(x, 0, return_indices=True): values keep the input dtype (no widening; bf16 excepted, see below),
    int32 indices."""
    rng = np.random.default_rng(5)
    xv = [float(v) if is_float(t) else int(v) for v in rng.integers(10, 50, N)]
    xv[3] = xv[6] = 60 if fn == "max" else 1  # the extreme value, twice: the first one wins
    v = empty_buffer(1, t)
    i = np.zeros(1, np.int32)
    make_kernel(ARG_SRC.format(expr=f"tl.{fn}(x, 0, return_indices=True)"))[(1,)](to_buffer(xv, t), v, i, N=N)
    best = (max if fn == "max" else min)(xv)
    assert from_buffer(v, t)[0] == best and i[0] == xv.index(best) == 3, \
        f"tl.{fn}(x, 0, return_indices=True) with {t}: ({from_buffer(v, t)[0]}, {i[0]}), want ({best}, 3)"


@pytest.mark.parametrize("fn", ["max", "min"])
def test_bf16_max_min_with_indices_give_fp32_values(fn):
    """Triton 3.6 standard.py max/min run `_promote_bfloat16_to_float32` before the return_indices branch, so the
    values come back fp32 (3.9 keeps bf16); source read, and the 3.6 interpreter agrees (write-up A8)."""
    k = make_kernel(f"""
    @triton.jit
    def bf16_arg(X, V, I):
        x = tl.load(X + tl.arange(0, 8))
        v, i = tl.{fn}(x, 0, return_indices=True)
        tl.static_assert(v.dtype == tl.float32, "value dtype")
        tl.store(V, v)
        tl.store(I, i)
    """)
    xv = [3.0, 1.5, 7.0, -2.0, 7.0, 0.25, -2.0, 4.0]
    v, i = np.zeros(1, np.float32), np.zeros(1, np.int32)
    k[(1,)](to_buffer(xv, "bfloat16"), v, i)
    want = (7.0, 2) if fn == "max" else (-2.0, 3)
    assert (v[0], i[0]) == want, (v, i)


def test_argmax_axis_keep_dims_2d():
    k = make_kernel("""
    @triton.jit
    def arg2d(X, A0, A1):
        rm = tl.arange(0, 4)
        rn = tl.arange(0, 8)
        x = tl.load(X + rm[:, None] * 8 + rn[None, :])
        a0 = tl.argmax(x, axis=0, keep_dims=True)
        a1 = tl.argmin(x, axis=1)
        tl.static_assert(a0.shape == [1, 8] or a0.shape == (1, 8), "keep_dims shape")
        tl.store(A0 + rn[None, :], a0)
        tl.store(A1 + rm, a1)
    """)
    x = np.random.default_rng(4).integers(-5, 5, (4, 8)).astype(np.float32)
    a0, a1 = np.zeros(8, np.int32), np.zeros(4, np.int32)
    k[(1,)](x, a0, a1)
    assert a0.tolist() == np.argmax(x, axis=0).tolist(), f"argmax axis 0: {a0} vs {np.argmax(x, axis=0)}"
    assert a1.tolist() == np.argmin(x, axis=1).tolist(), f"argmin axis 1: {a1} vs {np.argmin(x, axis=1)}"


# ----------------------------------------------------------------------------- xor_sum, errors

@pytest.mark.parametrize("t", INTEGRAL_TYPES)
def test_xor_sum(t):
    xv = reduce_values(t, 6)
    got = run_reduce("tl.xor_sum(x, axis=1)", xv, t, t, (M, 1))
    want = ref_reduce(xv, t, t, 1, lambda v: wrap(functools.reduce(operator.xor, [int(a) for a in v]), t))
    assert_same(got, want, t, f"`tl.xor_sum(x, axis=1)` with x: {t}")


def test_xor_sum_rejects_floats():
    with pytest.raises(minitriton.CompilationError, match="xor_sum only supported for integers"):
        run_reduce("tl.xor_sum(x, axis=1)", [1.0] * 32, "float32", "float32", (M, 1))


@pytest.mark.parametrize("expr, pattern", [("tl.sum(x, axis=2)", r"invalid axis 2\. Expected -2 <= axis < 2"),
                                           ("tl.max(x, axis=-3)", r"invalid axis -3\. Expected -2 <= axis < 2")])
def test_reduce_axis_errors(expr, pattern):
    with pytest.raises(minitriton.CompilationError, match=pattern):
        run_reduce(expr, [1.0] * 32, "float32", "float32", (1, 1))


# ----------------------------------------------------------------------------- tl.reduce / associative_scan

COMBINE_SRC = """
@triton.jit
def combine_max_abs(a, b):
    return tl.where(tl.abs(a) >= tl.abs(b), a, b)


@triton.jit
def combine_add_pair(a0, a1, b0, b1):
    return a0 + b0, a1 * b1


@triton.jit
def custom_reduce(X, Z1, Z2, Z3, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Z1, tl.reduce(x, 0, combine_max_abs))
    s, p = tl.reduce((x, x), 0, combine_add_pair)
    tl.store(Z2, s)
    tl.store(Z3, p)
"""


def test_tl_reduce_with_jit_combine():
    k = make_kernel(COMBINE_SRC, name="custom_reduce")
    x = np.array([3, -7, 2, 7, -1, 1, 1, 2], np.int32)
    z1, z2, z3 = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    k[(1,)](x, z1, z2, z3, N=8)
    assert abs(z1[0]) == 7, f"tl.reduce with max-|x| combine: {z1[0]}"
    assert z2[0] == x.sum() and z3[0] == int(np.prod(x.astype(np.int64))), f"tuple reduce: {z2[0]}, {z3[0]}"


SCAN_SRC = """
@triton.jit
def combine_max(a, b):
    return tl.maximum(a, b)


@triton.jit
def combine_first_nonzero(a, b):
    return tl.where(a != 0, a, b)


@triton.jit
def scans(X, Z1, Z2, Z3, Z4, Z5, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    tl.store(Z1 + o, tl.associative_scan(x, 0, combine_max))
    tl.store(Z2 + o, tl.associative_scan(x, 0, combine_max, reverse=True))
    tl.store(Z3 + o, tl.cumsum(x, 0))
    tl.store(Z4 + o, tl.cumsum(x, 0, reverse=True))
    tl.store(Z5 + o, tl.associative_scan(x, 0, combine_first_nonzero))
"""


@pytest.mark.parametrize("t", ["int32", "float32", "int64", "float64"])
def test_associative_scan_and_cumsum(t):
    k = make_kernel(SCAN_SRC, name="scans")
    x = [0, 3, -1, 4, 0, -5, 9, 2, 6, -5, 3, 5, 0, 0, 7, 1]
    outs = [empty_buffer(16, t) for _ in range(5)]
    k[(1,)](to_buffer(x, t), *outs, N=16)
    got = [from_buffer(o, t).tolist() for o in outs]
    run_max = list(np.maximum.accumulate(x))
    rev_max = list(np.maximum.accumulate(x[::-1]))[::-1]
    csum = list(np.cumsum(x))
    rsum = list(np.cumsum(x[::-1]))[::-1]
    first = []
    cur = 0
    for v in x:  # an associative, non-commutative combine: the scan keeps operand order
        cur = cur if cur != 0 else v
        first.append(cur)
    for name, g, w in (("max scan", got[0], run_max), ("reverse max scan", got[1], rev_max), ("cumsum", got[2], csum),
                       ("reverse cumsum", got[3], rsum), ("first-nonzero scan", got[4], first)):
        assert [float(a) for a in g] == [float(b) for b in w], f"{name} with {t}: {g} != {w}"


def scan_type(fn, t):
    """Triton 3.6 standard.py: both scans widen bf16 to fp32 (`_promote_bfloat16_to_float32`); cumsum also
    widens narrow integers (_pick_sum_dtype), cumprod does not."""
    if t == "bfloat16":
        return "float32"
    return sum_type(t) if fn == "cumsum" else t


@pytest.mark.parametrize("t", ["int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_cumsum_cumprod_dtypes(fn, t):
    """Result dtypes of cumsum/cumprod as Triton 3.6 gives them (scan_type)."""
    x = [3, 1, 2, 2, 1, 3, 2, 1] if fn == "cumprod" else [100, 100, 27, 1, 0, 3, 90, 110]
    zt = scan_type(fn, t)
    for rev in (False, True):
        expr = f"tl.{fn}(x, 0, reverse={rev})"
        z = empty_buffer(8, zt)
        make_kernel("""
        @triton.jit
        def scan1(X, Z, ZTY: tl.constexpr):
            o = tl.arange(0, 8)
            x = tl.load(X + o)
            z = EXPR
            tl.static_assert(z.dtype == ZTY, "scan dtype")
            tl.store(Z + o, z)
        """.replace("EXPR", expr))[(1,)](to_buffer(x, t), z, ZTY=tl_type(zt))
        seq = x[::-1] if rev else x
        acc = list(np.cumprod(seq) if fn == "cumprod" else np.cumsum(seq))
        acc = acc[::-1] if rev else acc
        want = [float(v) for v in acc] if is_float(zt) else [wrap(int(v), zt) for v in acc]
        assert_same(from_buffer(z, zt), want, zt, f"`{expr}` with x: {t}")


def test_cumsum_bf16_sums_in_fp32():
    """Triton 3.6 cumsum of bf16 [256, 1, 1, 1] is fp32 [256, 257, 258, 259] (bf16 steps would give 256, 256, 258,
    258); source read (standard.py:337) and the 3.6 interpreter (write-up A7)."""
    z = np.zeros(4, np.float32)
    make_kernel("""
    @triton.jit
    def cumsum_bf16(X, Z):
        tl.store(Z + tl.arange(0, 4), tl.cumsum(tl.load(X + tl.arange(0, 4)), 0))
    """)[(1,)](to_buffer([256.0, 1.0, 1.0, 1.0], "bfloat16"), z)
    assert z.tolist() == [256.0, 257.0, 258.0, 259.0], z


def test_cumprod_int8_wraps_and_has_no_dtype_argument():
    """Triton 3.6 cumprod keeps int8 (16 * 16 wraps to 0) and has no `dtype=` keyword (standard.py:357, the 3.6
    interpreter: TypeError)."""
    k = make_kernel("""
    @triton.jit
    def cumprod_i8(X, Z, WITH_DTYPE: tl.constexpr):
        x = tl.load(X + tl.arange(0, 4))
        if WITH_DTYPE:
            z = tl.cumprod(x, 0, dtype=tl.int32)
        else:
            z = tl.cumprod(x, 0)
        tl.static_assert(z.dtype == tl.int8, "cumprod(int8) dtype")
        tl.store(Z + tl.arange(0, 4), z)
    """)
    x, z = np.array([16, 16, 2, 1], np.int8), np.zeros(4, np.int8)
    k[(1,)](x, z, WITH_DTYPE=False)
    assert z.tolist() == [16, 0, 0, 0], z
    with pytest.raises(minitriton.CompilationError, match="unexpected keyword argument 'dtype'"):
        k[(1,)](x, z, WITH_DTYPE=True)


SOFTMAX_SRC = """
@triton.jit
def softmax_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Z + offs, {expr})
"""


def _softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("expr, m, n, axis", [
    ("tl.softmax(x)", 2, 4, 0),                      # dim=None is axis 0 (Triton 3.6 and 3.9)
    ("tl.softmax(x, 0)", 2, 4, 0),                   # keep_dims=False is harmless along axis 0
    ("tl.softmax(x, 1, keep_dims=True)", 2, 4, 1),
    ("x.softmax(1, keep_dims=True)", 4, 8, 1),
])
def test_softmax_axes(expr, m, n, axis):
    """tl.softmax is Triton 3.6 standard.py:56 literally; 2x4 arange with dim=None gives [.018]*4 + [.982]*4 in the
    3.6 interpreter."""
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    z = np.zeros((m, n), np.float32)
    make_kernel(SOFTMAX_SRC.format(expr=expr))[(1,)](x, z, M=m, N=n)
    np.testing.assert_allclose(z, _softmax_ref(x.astype(np.float64), axis), rtol=1e-6)


def test_softmax_dim1_without_keep_dims_broadcasts_along_the_last_axis():
    """Triton 3.6 softmax passes keep_dims=False to max and sum: along dim=1 the (M,) results broadcast as a row,
    so a 4x4 block gets x[i, j] - max(row j), and a 2x4 block does not compile. The 3.6 interpreter: row 0 of
    softmax(arange(16).reshape(4, 4), 1) is [0.9502, 0.0009, 0.0, 0.0], and the 2x4 case raises this ValueError."""
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    z = np.zeros((4, 4), np.float32)
    make_kernel(SOFTMAX_SRC.format(expr="tl.softmax(x, 1)"))[(1,)](x, z, M=4, N=4)
    e = np.exp(x.astype(np.float64) - x.max(axis=1)[None, :])
    np.testing.assert_allclose(z, e / e.sum(axis=1)[None, :], rtol=1e-6)
    assert [round(float(v), 4) for v in z[0]] == [0.9502, 0.0009, 0.0, 0.0]
    with pytest.raises(minitriton.CompilationError,
                       match="Cannot make_shape_compatible: incompatible dimensions at index 1: 4 and 2"):
        make_kernel(SOFTMAX_SRC.format(expr="tl.softmax(x, 1)"))[(1,)](
            np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32), M=2, N=4)


def test_scan_2d_axis1():
    k = make_kernel("""
    @triton.jit
    def scan2d(X, Z):
        rm = tl.arange(0, 4)
        rn = tl.arange(0, 8)
        x = tl.load(X + rm[:, None] * 8 + rn[None, :])
        tl.store(Z + rm[:, None] * 8 + rn[None, :], tl.cumsum(x, axis=1))
    """)
    x = np.arange(32, dtype=np.int32).reshape(4, 8) % 5
    z = np.zeros((4, 8), np.int32)
    k[(1,)](x, z)
    assert np.array_equal(z, np.cumsum(x, axis=1)), f"cumsum axis=1: {z}"


# ----------------------------------------------------------------------------- grouping independence

def test_reductions_do_not_depend_on_grouping(group_size_one):
    """Per-program float sums/argmax are bit-identical with one program per pass and with full groups."""
    k = make_kernel("""
    @triton.jit
    def row_reduce(X, S, A, N: tl.constexpr):
        pid = tl.program_id(0)
        x = tl.load(X + pid * N + tl.arange(0, N))
        tl.store(S + pid, tl.sum(x))
        tl.store(A + pid, tl.argmax(x, axis=0))
    """)
    x = (np.random.default_rng(8).standard_normal((16, 64)) * 1e3).astype(np.float32)
    s1, a1 = np.zeros(16, np.float32), np.zeros(16, np.int32)
    k[(16,)](x, s1, a1, N=64)  # group_size = 1
    minitriton.set_options(group_size=None)
    s2, a2 = np.zeros(16, np.float32), np.zeros(16, np.int32)
    k[(16,)](x, s2, a2, N=64)
    assert s1.tobytes() == s2.tobytes() and a1.tolist() == a2.tolist(), "results depend on grouping"
    assert np.allclose(s1, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-2)
    assert a1.tolist() == np.argmax(x, axis=1).tolist()


@settings(max_examples=30, deadline=None)
@given(xs=st.lists(st.floats(width=32, allow_nan=True, allow_infinity=False), min_size=8, max_size=8))
def test_hypothesis_max_argmax_ignore_nan(xs):
    k = make_kernel("""
    @triton.jit
    def mx(X, Z, A):
        x = tl.load(X + tl.arange(0, 8))
        tl.store(Z, tl.max(x))
        tl.store(A, tl.argmax(x, axis=0))
    """)
    z, a = np.zeros(1, np.float32), np.zeros(1, np.int32)
    x = np.array(xs, np.float32)
    k[(1,)](x, z, a)
    finite = [v for v in x.tolist() if not math.isnan(v)]
    if not finite:
        assert math.isnan(z[0])
        return
    best = max(finite)
    assert z[0] == best, f"tl.max({xs}) = {z[0]}, want {best} (NaN ignored)"
    assert a[0] == next(i for i, v in enumerate(x.tolist()) if v == best), f"tl.argmax({xs}) = {a[0]}"
