"""Block pointers as in Triton 3.6: tl.make_block_ptr, tl.advance (and `p.advance`), tl.load/tl.store with
boundary_check and padding_option, against NumPy, in both groupings, with 3.6's errors and a differential
test against Triton 3.9's interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from helpers.kernels import make_kernel


@pytest.fixture(params=[None, 1], ids=["grouped", "one-program"])
def grouping(request):
    with minitriton.set_options(group_size=request.param):
        yield request.param


LOAD_SRC = """
@triton.jit
def k(A, Z, M, N, lda, om, on, sm, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr, PAD: tl.constexpr):
    p = tl.program_id(0)
    bp = tl.make_block_ptr(A, shape=(M, N), strides=(lda, 1), offsets=(om + p * sm, on), block_shape=(BM, BN),
                           order=(1, 0))
    if CHECK == 0:
        x = tl.load(bp)
    elif CHECK == 1:
        x = tl.load(bp, boundary_check=(0,), padding_option=PAD)
    elif CHECK == 2:
        x = tl.load(bp, boundary_check=(1,), padding_option=PAD)
    else:
        x = tl.load(bp, boundary_check=(1, 0), padding_option=PAD)
    r = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(Z + p * BM * BN + r, x)
"""


def ref_load(a, M, N, om, on, BM, BN, checked, fill):
    out = np.empty((BM, BN), a.dtype)
    for i in range(BM):
        for j in range(BN):
            r, c = om + i, on + j
            ok = (0 not in checked or 0 <= r < M) and (1 not in checked or 0 <= c < N)
            out[i, j] = a[r, c] if ok else fill
    return out


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int8, np.float64])
@pytest.mark.parametrize("M,N,om,on,sm,BM,BN,check", [
    (10, 12, 0, 0, 4, 4, 8, 3), (10, 12, -2, 6, 5, 4, 8, 3), (16, 16, 2, 0, 4, 4, 16, 1),
    (7, 32, 0, -3, 3, 8, 4, 3), (16, 20, 0, 8, 4, 4, 16, 2), (16, 16, 4, 4, 2, 4, 4, 0)])
@pytest.mark.parametrize("pad", ["", "zero", "nan"])
def test_load_matches_numpy(dt, M, N, om, on, sm, BM, BN, check, pad, grouping):
    if pad == "nan" and np.issubdtype(dt, np.integer):
        pytest.skip("nan padding is an error for integers (test_errors)")
    rng = np.random.default_rng(M * N + om)
    lda = N + 4
    a = (rng.standard_normal((M + 8, lda)) * 10).astype(dt)   # rows/cols past the shape exist (unchecked dims)
    grid = 3
    z = np.zeros((grid, BM, BN), dt)
    make_kernel(LOAD_SRC)[(grid,)](a, z, M, N, lda, om, on, sm, BM=BM, BN=BN, CHECK=check, PAD=pad)
    checked = {0: (), 1: (0,), 2: (1,), 3: (0, 1)}[check]
    fill = np.nan if pad == "nan" else 0
    for p in range(grid):
        np.testing.assert_array_equal(z[p], ref_load(a, M, N, om + p * sm, on, BM, BN, checked, fill))


STORE_SRC = """
@triton.jit
def k(A, V, M, N, lda, om, on, BM: tl.constexpr, BN: tl.constexpr, STEPS: tl.constexpr):
    p = tl.program_id(0)
    bp = tl.make_block_ptr(A, (M, N), (lda, 1), (om, on + p * BN * STEPS), (BM, BN), (1, 0))
    r = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for s in range(STEPS):
        v = tl.load(V + (p * STEPS + s) * BM * BN + r)
        tl.store(bp, v, boundary_check=(0, 1))
        bp = tl.advance(bp, (0, BN))
"""


@pytest.mark.parametrize("M,N,om,on", [(9, 30, -3, 0), (8, 16, 0, 0), (5, 13, 2, -4)])
def test_store_writes_only_inside_and_advance_moves(M, N, om, on, grouping):
    BM, BN, steps, grid = 4, 4, 2, 2
    lda = N + 3
    a = np.full((M, lda), -1.0, np.float32)
    v = np.arange(grid * steps * BM * BN, dtype=np.float32).reshape(grid, steps, BM, BN)
    make_kernel(STORE_SRC)[(grid,)](a, v, M, N, lda, om, on, BM=BM, BN=BN, STEPS=steps)
    ref = np.full((M, lda), -1.0, np.float32)
    for p in range(grid):
        for s in range(steps):
            c0 = on + p * BN * steps + s * BN
            for i in range(BM):
                for j in range(BN):
                    r, c = om + i, c0 + j
                    if 0 <= r < M and 0 <= c < N:
                        ref[r, c] = v[p, s, i, j]
    np.testing.assert_array_equal(a, ref)


def test_matmul_with_block_pointers_and_member_advance(grouping):
    src = """
    @triton.jit
    def mm(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        a = tl.make_block_ptr(A, (M, K), (K, 1), (pm * BM, 0), (BM, BK), (1, 0))
        b = tl.make_block_ptr(B, (K, N), (N, 1), (0, pn * BN), (BK, BN), (1, 0))
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            acc += tl.dot(tl.load(a, boundary_check=(0, 1)), tl.load(b, boundary_check=(0, 1)),
                          input_precision="ieee")
            a = a.advance((0, BK))
            b = tl.advance(b, [BK, 0])
        c = tl.make_block_ptr(C, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
        tl.store(c, acc, boundary_check=(0, 1))
    """
    rng = np.random.default_rng(0)
    M, N, K = 37, 29, 45
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    make_kernel(src)[(3, 2)](a, b, c, M, N, K, BM=16, BN=16, BK=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_unchecked_dim_out_of_the_array_is_out_of_bounds():
    src = """
    @triton.jit
    def k(A, Z):
        bp = tl.make_block_ptr(A, (4, 8), (8, 1), (2, 0), (4, 8), (1, 0))
        tl.store(Z + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], tl.load(bp, boundary_check=(1,)))
    """
    with pytest.raises(minitriton.errors.OutOfBoundsError, match="tl.load reads past the end of `A`"):
        make_kernel(src)[(1,)](np.zeros(32, np.float32), np.zeros(32, np.float32))


def test_bool_base_is_int8_and_scalar_store_broadcasts():
    src = """
    @triton.jit
    def k(A, Z):
        bp = tl.make_block_ptr(A, (8,), (1,), (0,), (8,), (0,))
        x = tl.load(bp)
        tl.static_assert(x.dtype == tl.int8)
        tl.store(Z + tl.arange(0, 8), x + 1)
        zp = tl.make_block_ptr(Z, (6,), (1,), (4,), (8,), (0,))
        tl.store(zp, 7, boundary_check=(0,))
    """
    z = np.zeros(8, np.int32)
    make_kernel(src)[(1,)](np.array([1, 0, 1, 1, 0, 0, 1, 0], bool), z)
    np.testing.assert_array_equal(z, [2, 1, 2, 2, 7, 7, 2, 1])


ERR_SRC = """
@triton.jit
def bad(A, CASE: tl.constexpr):
    bp = tl.make_block_ptr(A, (4, 8), (8, 1), (0, 0), (4, 8), (1, 0))
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    if CASE == 0:
        tl.load(bp, mask=offs < 3)
    elif CASE == 1:
        tl.store(bp, tl.zeros((4, 8), tl.float32), mask=offs < 3)
    elif CASE == 2:
        tl.load(bp, boundary_check=(2,))
    elif CASE == 3:
        tl.load(bp, boundary_check=(0, 0))
    elif CASE == 4:
        tl.load(bp, padding_option="inf")
    elif CASE == 5:
        tl.store(bp, tl.zeros((4, 4), tl.float32))
    elif CASE == 6:
        tl.store(bp, tl.zeros((4, 8), tl.float16))
    elif CASE == 7:
        tl.make_block_ptr(A, (4, 8), (8, 1), (0, 0), (4, 8), (0, 0))
    elif CASE == 8:
        tl.make_block_ptr(A, (4, 8), (8, 1), (0,), (4, 8), (1, 0))
    elif CASE == 9:
        tl.make_block_ptr(offs, (4, 8), (8, 1), (0, 0), (4, 8), (1, 0))
    elif CASE == 10:
        tl.make_block_ptr(A, (4, 8), (8, 1), (0, tl.program_id(0).to(tl.int64)), (4, 8), (1, 0))
    elif CASE == 11:
        tl.make_block_ptr(A, (4, 8), (8, 1), (0, 2**31), (4, 8), (1, 0))
    elif CASE == 12:
        tl.make_block_ptr(A, (4, 8), (8, 1), (0, 0), (4, 2.0), (1, 0))
    elif CASE == 13:
        tl.load(A + offs, boundary_check=(0,))
    elif CASE == 14:
        tl.store(A + offs, 0.0, boundary_check=(0,))
    elif CASE == 15:
        tl.make_block_ptr(A, (4, 8), (8, 1), (0, offs), (4, 8), (1, 0))
    else:
        tl.load(tl.make_block_ptr(A.to(tl.pointer_type(tl.int32), bitcast=True), (4, 8), (8, 1), (0, 0), (4, 8),
                                  (1, 0)), padding_option="nan")
"""

ERRORS = [
    (0, "`mask` and `other` arguments cannot be specified for loading block pointers"),
    (1, "`mask` and `other` arguments cannot be specified for loading block pointers"),
    (2, None),                     # a bare `assert` in 3.6's _canonicalize_boundary_check
    (3, "Duplicate dimension in `boundary_check`"),
    (4, "Padding option inf not supported"),
    (5, r"Block shape\(\[4, 8\]\) and value shape\(\[4, 4\]\) mismatch"),
    (6, r"Block element type\(fp32\) and value element type\(fp16\) mismatch"),
    (7, r"Expected a permutation of \(0, 1, ..., len\(order\)-1\) in order"),
    (8, "Expected shape/strides/offsets/block_shape to have the same length"),
    (9, r"Expected `base` to be a pointer type \(but not a block pointer type or others\)"),
    (10, "Block pointers only support 32 bit `offsets/block_shape`, add a `.to\\(tl.int32\\)`"),
    (11, "Block pointers only support 32 bit `offsets/block_shape`, got a value 2147483648 which is out of the "
         "range"),
    (12, r"Expected a list of constant integers \(`int32_t` range\) in `block_shape`"),
    (13, "`padding_option` or `boundary_check` argument is not supported for loading a tensor of"),
    (14, "`boundary_check` argument is not supported for storing a tensor of pointers or storing a scalar"),
    (15, "Expected a scalar in shape/strides/offsets"),
    (16, "Padding option `nan` is not supported for integer block pointers"),
]


@pytest.mark.parametrize("case,message", ERRORS)
def test_errors_use_36_wording(case, message):
    kernel = make_kernel(ERR_SRC, name="bad")
    with pytest.raises(minitriton.CompilationError, match=message) as info:
        kernel[(1,)](np.zeros(32, np.float32), CASE=case)
    if message is None:
        assert type(info.value.__cause__) is AssertionError


def test_make_block_ptr_refuses_to_run_outside_a_kernel():
    with pytest.raises(Exception, match="Did you forget to add @triton.jit"):
        tl.make_block_ptr(None, (1,), (1,), (0,), (1,), (0,))
    with pytest.raises(Exception, match="Did you forget to add @triton.jit"):
        tl.advance(None, (0,))


ORACLE_SRC = '''
import triton
import triton.language as tl


@triton.jit
def load_block(A, Z, M, N):
    bp = tl.make_block_ptr(A, (M, N), (N, 1), (0, 0), (4, 8), (1, 0))
    tl.store(Z + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], tl.load(bp, boundary_check=(0, 1)))
'''


def test_tritons_39_interpreter_has_no_block_pointers():
    """Known 3.9-vs-3.6 difference: Triton 3.9 removed block pointers (tl.make_block_ptr raises
    NotImplementedError), so there is no interpreter differential here; the NumPy references above stand in
    for it. minitriton follows 3.6, where they work."""
    from helpers.oracle import Case, OracleUnavailable, run_batch, run_in_minitriton
    args = (np.arange(20, dtype=np.float32).reshape(4, 5), np.zeros((4, 8), np.float32), 4, 5)
    try:
        (it,) = run_batch([Case(ORACLE_SRC, "load_block", (1,), args, {})])
    except OracleUnavailable as e:
        pytest.skip(f"real Triton's interpreter is not available in a subprocess: {e}")
    assert not it.ok and "Block pointers have been removed in favor of the tensor descriptor API" in it.error
    mt = run_in_minitriton(ORACLE_SRC, "load_block", (1,), args, {})
    want = np.zeros((4, 8), np.float32)
    want[:, :5] = args[0]
    np.testing.assert_array_equal(mt.args[1], want)
