"""A script that is not an exercise, for the memory picture's tests: a 2-D tiled kernel with a mask on both
axes and an atomic_add per row, launched on two shapes (its tiles overhang both). With `fail` as its
argument a third launch reads past the end of its input without a mask."""
import sys

import numpy as np
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, out_ptr, sums_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * 2.0, mask=mask)
    tl.atomic_add(sums_ptr + rows, tl.sum(x, axis=1), mask=rows < M)


@triton.jit
def copy_unmasked(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


SHAPES = ((5, 7), (6, 3))
BM = BN = 4

if __name__ == "__main__":
    for M, N in SHAPES:
        x = (np.arange(M * N, dtype=np.float32) / 4).reshape(M, N)
        out = np.zeros_like(x)
        sums = np.zeros(M, np.float32)
        scale_rows[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, out, sums, M, N, N, BM=BM, BN=BN)
        assert np.array_equal(out, 2 * x) and np.allclose(sums, x.sum(axis=1))
    if sys.argv[1:] == ["fail"]:
        x = np.ones(10, np.float32)
        copy_unmasked[(2,)](x, np.zeros(16, np.float32), BLOCK=8)
    print("done")
