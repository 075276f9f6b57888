"""Row kernels masked by `cols < n_cols`: the mask is on for a prefix of lanes in every program, and the
masked-off tail of the last rows runs past the array. Loads and stores copy the prefix as whole tiles
(ops_memory._lane_prefix); results, `other`, untouched memory and out-of-bounds errors are as for any
masked access."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton.language as tl


@minitriton.jit
def _scale_rows(x_ptr, y_ptr, n_cols, row_stride, fill, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=valid, other=fill)
    total = tl.sum(x, axis=0)  # the tail adds `fill` BLOCK - n_cols times
    tl.store(y_ptr + row * row_stride + cols, x * 2 + total, mask=valid)


@pytest.mark.parametrize("rows, cols, block", [(7, 5, 8), (33, 100, 128), (3, 1, 4), (5, 8, 8)])
@pytest.mark.parametrize("group_size", [None, 1])
def test_prefix_masked_rows_match_numpy(rows, cols, block, group_size):
    x = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(np.float32)
    y = np.full((rows + 1, cols), 7.0, np.float32)  # one spare row: a stray store would show there
    fill = np.float32(0.25)
    with minitriton.set_options(group_size=group_size):
        _scale_rows[(rows,)](x, y, cols, cols, fill, BLOCK=block)
    total = x.astype(np.float64).sum(axis=1, keepdims=True) + (block - cols) * 0.25
    np.testing.assert_allclose(y[:rows], x * 2 + total, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y[rows:], 7.0)


def test_a_prefix_past_the_end_is_still_out_of_bounds():
    x = np.zeros((4, 6), np.float32)
    y = np.zeros((4, 6), np.float32)
    with pytest.raises(minitriton.OutOfBoundsError, match="past the end of `x_ptr`"):
        _scale_rows[(5,)](x, y, 6, 6, np.float32(0), BLOCK=8)   # program 4 reads a fifth row


@pytest.mark.parametrize("rows", [1, 2])
def test_wide_rows_of_one_program_match_numpy(rows):
    """A row wider than `factored.WIDE_BLOCK` in one program: its pointer is kept as origin and offsets, so the
    prefix is copied as a tile there too."""
    cols, block = 70_000, 2**17
    x = np.random.default_rng(cols).standard_normal((rows, cols)).astype(np.float32)
    y = np.full((rows + 1, cols), 7.0, np.float32)
    _scale_rows[(rows,)](x, y, cols, cols, np.float32(0.25), BLOCK=block)
    total = x.astype(np.float64).sum(axis=1, keepdims=True) + (block - cols) * 0.25
    np.testing.assert_allclose(y[:rows], x * 2 + total, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(y[rows:], 7.0)


@minitriton.jit
def _reverse_spread(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    valid = cols < n
    x = tl.load(x_ptr + (n - 1 - cols), mask=valid, other=0.0)   # stride -1: no tile, the lanes are gathered
    tl.store(y_ptr + cols * 2, x, mask=valid)                     # stride 2: a tile


def test_wide_blocks_that_are_no_tile_or_a_strided_one():
    n, block = 70_000, 2**17
    x = np.arange(n, dtype=np.float32)
    y = np.full(2 * n, -1.0, np.float32)
    _reverse_spread[(1,)](x, y, n, BLOCK=block)
    np.testing.assert_array_equal(y[0::2], x[::-1])
    np.testing.assert_array_equal(y[1::2], -1.0)
    with pytest.raises(minitriton.OutOfBoundsError, match="past the end of `y_ptr`"):
        _reverse_spread[(1,)](x, y[:2 * n - 3], n, BLOCK=block)
