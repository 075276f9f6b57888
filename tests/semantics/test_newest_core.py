"""Rules of Triton's newest test_core.py (triton-lang/triton history of 2026-08, blob 3060faec44ab) that Triton
3.6 did not have: tl.unsqueeze/tl.squeeze, ordered tl.cat, -x of a zero, a constexpr-wrapped dtype compared with
a dtype, the fp16 member function `x.exp()`, fp64 tl.dot with K = 4 or 8, fp32 tl.dot with K = 8 and `if` on a
one-element block.

Each test mirrors the test_core case of the same name; where Triton 3.9.0's interpreter runs it, minitriton is
compared with the interpreter, else with NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
from helpers.kernels import make_kernel
from helpers.oracle import Case, OracleUnavailable, assert_same_as_interpreter, run_batch

HEADER = "import triton\nimport triton.language as tl\n\n"


def test_squeeze_unsqueeze_negative_dim():
    """Shapes are checked by static_assert in the kernel; out-of-range dims are compile errors."""
    k = make_kernel("""
    @triton.jit
    def kernel(Z, N: tl.constexpr):
        offset1 = tl.arange(0, N)
        t = tl.unsqueeze(offset1, -1)
        tl.static_assert(t.shape == [N, 1])
        t = tl.unsqueeze(offset1, -2)
        tl.static_assert(t.shape == [1, N])
        t = tl.unsqueeze(tl.expand_dims(offset1, 0), -1)
        tl.static_assert(t.shape == [1, N, 1])
        t = tl.squeeze(tl.expand_dims(offset1, 1), -1)
        tl.static_assert(t.shape == [N])
        t = tl.squeeze(tl.expand_dims(offset1, 0), -2)
        tl.static_assert(t.shape == [N])
        tl.store(Z + offset1, tl.squeeze(tl.unsqueeze(offset1, 0) * 3, 0))
    """)
    z = np.zeros(32, np.int32)
    k[(1,)](z, 32)
    np.testing.assert_array_equal(z, np.arange(32) * 3)
    for bad in ("tl.unsqueeze(tl.arange(0, N), -3)", "tl.squeeze(tl.expand_dims(tl.arange(0, N), 1), -3)",
                "tl.squeeze(tl.expand_dims(tl.arange(0, N), 1), 0)"):
        with pytest.raises(minitriton.TritonError):
            make_kernel(f"""
            @triton.jit
            def bad(Z, N: tl.constexpr):
                {bad}
            """)[(1,)](z, 32)


CAT_SRC = HEADER + """@triton.jit
def kernel(X, Y, Z, N: tl.constexpr, CAN_REORDER: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    z = tl.cat(x, y, can_reorder=CAN_REORDER)
    tl.store(Z + tl.arange(0, 2 * N), z)
"""
CAT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64"]


def test_cat():
    """Both can_reorder values concatenate in order, as the interpreter does (num_warps 4 and 8 as test_core), for
    every dtype of test_core's test_cat (one interpreter process for all of them)."""
    cases = [("kernel", (1,), (np.arange(0, 128).astype(d), np.arange(-128, 0).astype(d), np.zeros(256, d)),
              {"N": 128, "num_warps": w, "CAN_REORDER": reorder})
             for d in CAT_DTYPES for w in (4, 8) for reorder in (True, False)]
    assert_same_as_interpreter(CAT_SRC, cases, bitwise_floats=True)
    for _, _, (x, y, z), kwargs in cases:   # the interpreter is the reference above; this is test_core's own check
        z = z.copy()
        make_kernel(CAT_SRC.removeprefix(HEADER))[(1,)](x, y, z, **kwargs)
        np.testing.assert_array_equal(z, np.concatenate([x, y]))


def _offsets(shape):
    """Source text of the row-major offsets of a block of `shape`."""
    terms, stride = [], 1
    for d in reversed(range(len(shape))):
        index = ", ".join(":" if i == d else "None" for i in range(len(shape)))
        terms.append(f"tl.arange(0, {shape[d]})[{index}] * {stride}")
        stride *= shape[d]
    return " + ".join(terms)


@pytest.mark.parametrize("shape, dim", [(s, d) for s in ((128,), (16, 32), (8, 16, 4), (2, 4, 8, 16))
                                        for d in range(len(s))])
def test_cat_nd(shape, dim):
    """test_core loads through descriptors (a GPU-only case); plain pointers here, NumPy as the reference."""
    out = tuple(2 * n if i == dim else n for i, n in enumerate(shape))
    k = make_kernel(f"""
    @triton.jit
    def kernel(X, Y, Z):
        z = tl.cat(tl.load(X + {_offsets(shape)}), tl.load(Y + {_offsets(shape)}), dim={dim})
        tl.static_assert(z.shape == {list(out)})
        tl.store(Z + {_offsets(out)}, z)
    """)
    rng = np.random.default_rng(0)
    x, y = rng.random(shape, np.float32), rng.random(shape, np.float32)
    z = np.zeros(out, np.float32)
    k[(1,)](x, y, z)
    np.testing.assert_array_equal(z, np.concatenate([x, y], axis=dim))


@pytest.mark.parametrize("m1, m2", [(16, 8), (1, 8)])
def test_cat_shape_mismatch(m1, m2):
    k = make_kernel("""
    @triton.jit
    def kernel(X, Y, M1: tl.constexpr, M2: tl.constexpr):
        x = tl.load(X + tl.arange(0, M1))
        y = tl.load(Y + tl.arange(0, M2))
        z = tl.cat(x, y, dim=0)
        tl.store(X + tl.arange(0, 1), tl.sum(z))
    """)
    with pytest.raises(minitriton.CompilationError, match="tl.cat requires tensors of the same shape"):
        k[(1,)](np.zeros(m1, np.float32), np.zeros(m2, np.float32), M1=m1, M2=m2)


def test_neg_preserves_signed_zero():
    """-x flips the sign bit of a float (S15.4: newer Triton's fneg; the 3.6 GPU computed 0 - x)."""
    src = HEADER + """@triton.jit
def kernel(x_ptr, y_ptr):
    offsets = tl.arange(0, 2)
    x = tl.load(x_ptr + offsets)
    tl.store(y_ptr + offsets, -x)
"""
    assert_same_as_interpreter(src, [("kernel", (1,), (np.array([0.0, -0.0], np.float32), np.ones(2, np.float32)),
                                      {})], bitwise_floats=True)
    y = np.ones(2, np.float32)
    make_kernel(src.removeprefix(HEADER))[(1,)](np.array([0.0, -0.0], np.float32), y)
    np.testing.assert_array_equal(np.signbit(y), [True, False])


DOT_SRC = HEADER + """@triton.jit
def kernel(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + rm[:, None] * K + rk[None, :])
    y = tl.load(Y + rk[:, None] * N + rn[None, :])
    tl.store(Z + rm[:, None] * N + rn[None, :], tl.dot(x, y, input_precision="ieee", out_dtype=tl.float64))
"""


def test_dot_small_fp64():
    """test_core's get_test_dot_small_fp64_cases: fp64 needs K >= 4 on NVIDIA (S8.5), not 16."""
    cases = []
    for M, N, K in [(8, 8, 4), (8, 8, 8), (16, 8, 4), (8, 8, 16)]:
        rng = np.random.default_rng(K)
        x, y = rng.standard_normal((M, K)), rng.standard_normal((K, N))
        cases.append(("kernel", (1,), (x, y, np.zeros((M, N))), {"M": M, "N": N, "K": K, "num_warps": 1}))
    assert_same_as_interpreter(DOT_SRC, cases)
    for _, _, (x, y, z), kwargs in cases:
        z = z.copy()
        make_kernel(DOT_SRC.removeprefix(HEADER))[(1,)](x, y, z, **kwargs)
        np.testing.assert_allclose(z, x @ y, rtol=1e-12)


DOT_F32_SRC = HEADER + """@triton.jit
def kernel(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + rm[:, None] * K + rk[None, :])
    y = tl.load(Y + rk[:, None] * N + rn[None, :])
    tl.store(Z + rm[:, None] * N + rn[None, :], tl.dot(x, y))
"""


def test_dot_fp32_k8():
    """test_core's test_dot with fp32 and K = 8: Triton 3.9's NVIDIA minimum for fp32 is K >= 8 (one TF32 k8
    MMA, S8.5). Small integers are exact in TF32, so the interpreter's fp32 products are the reference."""
    cases = []
    for M, N in [(16, 8), (16, 16), (64, 32)]:
        rng = np.random.default_rng(M + N)
        x = rng.integers(-8, 8, (M, 8)).astype(np.float32)
        y = rng.integers(-8, 8, (8, N)).astype(np.float32)
        cases.append(("kernel", (1,), (x, y, np.zeros((M, N), np.float32)), {"M": M, "N": N, "K": 8}))
    assert_same_as_interpreter(DOT_F32_SRC, cases)
    for _, _, (x, y, z), kwargs in cases:
        z = z.copy()
        make_kernel(DOT_F32_SRC.removeprefix(HEADER))[(1,)](x, y, z, **kwargs)
        np.testing.assert_array_equal(z, x @ y)


def test_dot_fp64_k2_and_fp32_k4_refused():
    """Below the minimum stays a compile error: K = 2 in fp64, K = 4 in fp32 (S8.5)."""
    for dtype, k in ((np.float64, 2), (np.float32, 4)):
        x, y = np.ones((16, k), dtype), np.ones((k, 16), dtype)
        with pytest.raises(minitriton.CompilationError, match="K >= "):
            make_kernel(DOT_SRC.removeprefix(HEADER))[(1,)](x, y, np.zeros((16, 16)), M=16, N=16, K=k)


@pytest.mark.parametrize("expr", ["tl.exp(x)", "x.exp()"])
def test_math_member_fn_rejects_fp16(expr):
    """The member function checks dtypes as the function does (S15.35: newer Triton; 3.6 let methods through)."""
    src = HEADER + f"""@triton.jit
def kernel(X):
    x = tl.load(X + tl.arange(0, 4))
    y = {expr}  # noqa: F841
"""
    with pytest.raises(minitriton.TritonError, match="Expected dtype"):
        make_kernel(src.removeprefix(HEADER))[(1,)](np.ones(4, np.float16))
    try:
        [interpreted] = run_batch([Case(src, "kernel", (1,), (np.ones(4, np.float16),))])
    except OracleUnavailable as e:
        pytest.skip(f"real Triton's interpreter is not available in a subprocess: {e}")
    assert not interpreted.ok and "Expected dtype" in str(interpreted.error), interpreted.error


def test_dtype():
    """A dtype wrapped in tl.constexpr compares equal to the dtype (Triton's dtype.__eq__ unwraps it)."""
    src = HEADER + """@triton.jit
def kernel(X):
    dtype_x: tl.constexpr = X.dtype.element_ty
    tl.static_assert(dtype_x == tl.int32)
    tl.static_assert(dtype_x == tl.constexpr(tl.int32))
    tl.static_assert(dtype_x == tl.int8 or (dtype_x == tl.int16 or dtype_x == tl.int32))
    if dtype_x == tl.constexpr(tl.int32):
        tl.store(X, 7)
    if dtype_x != tl.constexpr(tl.int32):
        tl.store(X, 8)
"""
    assert_same_as_interpreter(src, [("kernel", (1,), (np.zeros(1, np.int32),), {})])
    x = np.zeros(1, np.int32)
    make_kernel(src.removeprefix(HEADER))[(1,)](x)
    assert x[0] == 7
    assert minitriton.language.int32 == minitriton.language.constexpr(minitriton.language.int32)
    assert minitriton.language.int32 != minitriton.language.constexpr(minitriton.language.int8)


UNSPLAT_SRC = HEADER + """@triton.jit
def unsplat_kernel(x, explicit: tl.constexpr):
    # this is a single-element tensor:
    condition = tl.load(x + tl.arange(0, 1)) > 42
    if explicit:
        condition = condition.item()
    if condition:
        tl.store(x, 42)
"""


@pytest.mark.filterwarnings("ignore:If conditional called with multidimensional Tensor")
def test_unsplat():
    """`if` on a one-element block takes its value, with a warning (S5.10)."""
    cases = [("unsplat_kernel", (1,), (np.full(1, y, np.int32),), {"explicit": e, "num_warps": 1})
             for y in (41, 43) for e in (False, True)]
    assert_same_as_interpreter(UNSPLAT_SRC, cases)
    k = make_kernel(UNSPLAT_SRC.removeprefix(HEADER))
    for y, e in ((41, False), (43, False), (41, True), (43, True)):
        x = np.full(1, y, np.int32)
        k[(1,)](x, e)
        assert x[0] == min(y, 42)
    with pytest.warns(UserWarning, match="If conditional called with multidimensional Tensor"):
        k[(1,)](np.full(1, 43, np.int32), False)
    with pytest.raises(minitriton.CompilationError, match="Boolean value of Tensor with more than one value"):
        make_kernel("""
        @triton.jit
        def two(x):
            if tl.load(x + tl.arange(0, 2)) > 42:
                tl.store(x, 42)
        """)[(1,)](np.zeros(2, np.int32))


VALUE_SRC = """@triton.jit
def kernel(Z, N: tl.constexpr):
    M: tl.constexpr = 4
    offs = tl.arange(0, N)
    tl.static_assert(M.value == 4)
    tl.store(Z + offs, tl.full((N,), N.value * M.value + offs.shape[0].value, tl.int32))


@triton.jit
def assigned(Z):
    c = tl.constexpr(3)
    tl.store(Z, c.value)
"""


def test_value_of_constexpr():
    """S5.11: `.value` of a constexpr parameter, an annotated constexpr and a shape element is the value (Triton's
    code generator keeps them constexprs; its 3.9 interpreter fails here); `c = tl.constexpr(3)` is a tensor."""
    z = np.zeros(8, np.int32)
    make_kernel(VALUE_SRC, "kernel")[(1,)](z, 8)
    np.testing.assert_array_equal(z, np.full(8, 8 * 4 + 8))
    with pytest.raises(minitriton.CompilationError, match="'tensor' object has no attribute 'value'"):
        make_kernel(VALUE_SRC, "assigned")[(1,)](z)


MULTIDIM_SRC = HEADER + """@triton.jit
def kernel(X, Y, Z, RANK: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr):
    x = tl.load(X + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    y = tl.load(Y + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    if TRANS_A:
        x = tl.trans(x)
    if TRANS_B:
        y = tl.trans(y)
    z = tl.dot(x, y)
    tl.store(Z + tl.arange(0, 256 << RANK), z.reshape([256 << RANK]))
"""


def test_dot_multidim():
    """test_core's test_dot_multidim (bf16 there, fp16 here: the interpreter has no bf16): the axes before the
    last two are a batch, flattened by core.dot (Triton 3.6 and newer); tl.trans swaps the last two axes."""
    cases = []
    for rank in (2, 3, 4, 6):
        for trans_a, trans_b in [(False, False), (True, False), (False, True)]:
            rng = np.random.default_rng(rank)
            shape = (2,) * (rank - 2) + (32, 32)
            a = rng.integers(-4, 5, shape).astype(np.float16)
            b = rng.integers(-4, 5, shape).astype(np.float16)
            cases.append(("kernel", (1,), (a, b, np.zeros(shape, np.float32)),
                          {"RANK": rank, "TRANS_A": trans_a, "TRANS_B": trans_b}))
    assert_same_as_interpreter(MULTIDIM_SRC, cases)
    for _, _, (a, b, c), kw in cases:
        c = c.copy()
        make_kernel(MULTIDIM_SRC.removeprefix(HEADER))[(1,)](a, b, c, kw["RANK"], kw["TRANS_A"], kw["TRANS_B"])
        ta = np.swapaxes(a, -1, -2) if kw["TRANS_A"] else a
        tb = np.swapaxes(b, -1, -2) if kw["TRANS_B"] else b
        np.testing.assert_array_equal(c, np.matmul(ta.astype(np.float32), tb.astype(np.float32)))


def test_dot_rank_and_batch_shapes_checked():
    """core.dot's checks, in its words: equal ranks >= 2, then equal batch shapes."""
    for a, b, message in ((np.ones(16, np.float16), np.ones((16, 16), np.float16), "equal ranks >= 2"),
                          (np.ones((2, 16, 16), np.float16), np.ones((4, 16, 16), np.float16), "equal batch shapes")):
        src = f"""@triton.jit
def kernel(A, B):
    a = tl.load(A + tl.arange(0, {a.size})).reshape({list(a.shape)})
    b = tl.load(B + tl.arange(0, {b.size})).reshape({list(b.shape)})
    tl.dot(a, b)
"""
        with pytest.raises(minitriton.CompilationError, match=f"input and other must have {message}"):
            make_kernel(src)[(1,)](a, b)
