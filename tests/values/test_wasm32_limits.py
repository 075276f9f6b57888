"""What 32-bit NumPy (Pyodide's wasm32, where np.intp is int32) cannot do, checked on any platform.

NumPy refuses an array whose nominal size (elements x itemsize, views included) passes 2**31 - 1 bytes there:
"array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size". Under CPython
these tests put the same limit on `factored.window_view`, which makes minitriton's window views.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitriton

minitriton.install()  # before the kernels import `triton`

from kernels import matmul as mm  # noqa: E402
from kernels.tolerances import assert_close  # noqa: E402
import minitriton.language as tl  # noqa: E402
from minitriton.values import factored as outer  # noqa: E402

LIMIT = 2**31 - 1
LESSON_CONFIG = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}


@pytest.fixture
def views_32bit(monkeypatch):
    """Window views refuse what 32-bit NumPy refuses; yields the largest nominal size asked for (bytes)."""
    real = outer.window_view
    largest = [0]

    def limited(flat, low, shape, strides, writeable):
        nbytes = math.prod(shape) * flat.itemsize
        largest[0] = max(largest[0], nbytes)
        if nbytes > LIMIT:
            raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
                             "possible size.")
        return real(flat, low, shape, strides, writeable)

    monkeypatch.setattr(outer, "window_view", limited)
    return largest


def test_the_lessons_matmul_512_fits_32bit_views(views_32bit):
    # The store of C went through a window view with a tile at every element of C: 262,144 x 64 x 64 fp32,
    # 4 GiB nominal.
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 512), dtype=np.float32)
    b = rng.standard_normal((512, 512), dtype=np.float32)
    c = mm.matmul(a, b, config=LESSON_CONFIG)
    assert_close(c, mm.reference_matmul(a, b, tf32=True), "float32")
    assert 0 < views_32bit[0] <= LIMIT


def test_the_benchmarks_softmax_asks_for_no_view_wasm32_refuses(views_32bit):
    # 1823 rows of 781 columns in blocks of 1024: a tile at every element was 1.4M x 4 KiB nominal. On wasm32
    # the refusal made each group fail in its first program, which the engine then ran alone (one program is
    # no tile): right results, but about one program per group, 34x NumPy's time in Pyodide.
    from bench import workloads as wl

    data, arrays = wl.make_data(), wl.NumpyArrays()
    prepared = wl.BY_NAME["softmax_fwd"].setup(data, arrays)
    prepared.launch()
    err, _ = wl.max_abs_error(prepared, wl.ref_softmax(data), arrays)
    assert err <= wl.BY_NAME["softmax_fwd"].tol
    assert 0 < views_32bit[0] <= LIMIT


def test_window_views_step_by_the_origins_divisor(views_32bit):
    # 64 tiles of 64x64 over a 512x512 array: origins every 64 elements along a row, every 64 rows down
    # -> one view position per 64 elements, not one per element
    flat = np.zeros(512 * 512, np.float32)
    rows = np.arange(64, dtype=np.int64)[:, None] * 512
    cols = np.arange(64, dtype=np.int64)[None, :]
    tm, tn = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    origin = (tm.reshape(-1) * 64 * 512 + tn.reshape(-1) * 64).astype(np.int64)
    block = outer.pointer_block((origin.reshape(-1, 1, 1) + rows[None], np.broadcast_to(cols, (1, 1, 64)).copy()),
                                None, (64, 64), None, (0, 512 * 512 - 1))
    block.bounds_of_parts = ((0, 0), (0, 0))
    view, origins = outer.tile_view(block, flat, (64, 64), for_store=True)
    assert view.shape[0] == (7 * 64 * 512 + 7 * 64) // 64 + 1
    view[origins] = np.arange(64, dtype=np.float32).reshape(64, 1, 1)
    expected = np.zeros((512, 512), np.float32)
    for p in range(64):
        expected[tm.reshape(-1)[p] * 64:][:64, tn.reshape(-1)[p] * 64:][:, :64] = p
    np.testing.assert_array_equal(flat.reshape(512, 512), expected)
    assert views_32bit[0] <= LIMIT


def test_numpy_arrays_are_aligned_as_a_gpu_would_place_them():
    # wasm32's malloc aligns to 8 bytes, not 16: the descriptor rule must not depend on the host's allocator
    from minitriton.memory.allocation import alignment_offset

    for n in (1, 3, 1000, 12345):
        a = np.zeros(n, np.float32)
        assert alignment_offset(a) == 0
        if n > 4:
            assert alignment_offset(a[2:]) == 8
            assert alignment_offset(a[4:]) == 16
            assert alignment_offset(a.reshape(-1)[1:].view(np.uint8)) == 4


@minitriton.jit
def _words_then_bytes(x_ptr, out_ptr):
    words = tl.load(x_ptr + tl.arange(0, 4))                                   # bytes 0..15 as fp32
    raw = tl.load(x_ptr.to(tl.pointer_type(tl.uint8)) + 8 + tl.arange(0, 16))  # bytes 8..23 as uint8
    tl.store(out_ptr + tl.arange(0, 4), words + tl.sum(raw.to(tl.float32), axis=0))


def test_unique_bytes_with_mixed_element_sizes():
    # counting distinct bytes read through two element sizes repeats each access by its size: np.repeat takes
    # only np.intp counts, int32 on wasm32
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(4, np.float32)
    with minitriton.record() as rec:
        _words_then_bytes[(1,)](x, out)
    t = rec.last["tensors"]["x_ptr"]
    assert t["totals"]["loaded_bytes"] == 16 + 16
    assert t["totals"]["unique_loaded_bytes"] == 24
    assert t["per_program"]["unique_loaded_bytes"] == [24]
    np.testing.assert_array_equal(out, x[:4] + x[2:6].view(np.uint8).astype(np.float32).sum())


@minitriton.jit
def _rows_then_gather(x_ptr, out_ptr, perm_ptr, n, BLOCK: tl.constexpr):
    # each program reads only what it wrote itself
    pid = tl.program_id(0)
    cols = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + cols, tl.load(x_ptr + cols, mask=cols < n), mask=cols < n)  # a row's masked tail
    again = tl.load(out_ptr + cols, mask=cols < n)                                   # read back: runs
    mixed = pid * BLOCK + tl.load(perm_ptr + tl.arange(0, BLOCK))                    # the row's own, shuffled
    again += tl.load(out_ptr + mixed, mask=mixed < n, other=0.0)
    low = tl.load(out_ptr.to(tl.pointer_type(tl.uint8)) + cols * 4, mask=cols < n)   # bytes: lane by lane
    tl.store(out_ptr + cols, again + low.to(tl.float32), mask=cols < n)


class _NumpyIntp32(type(np)):
    """numpy as wasm32 has it, for the sanitizer's modules: np.intp is int32 and np.repeat takes only counts
    that cast safely to it."""
    intp = np.int32

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def repeat(a, repeats, axis=None):
        if isinstance(repeats, (np.ndarray, np.generic)) and not np.can_cast(repeats.dtype, np.int32, "safe"):
            raise TypeError(f"Cannot cast array data from {repeats.dtype} to dtype('int32') according to the "
                            "rule 'safe'")
        return np.repeat(a, repeats, axis)


@pytest.mark.parametrize("group_size", [None, 1, 3])
def test_the_sanitizer_counts_repeats_in_intp(monkeypatch, group_size):
    # the sanitizer's runs repeat starts and programs by run lengths: np.repeat refuses int64 lengths on wasm32
    from minitriton.observers import footprints, sanitizer, unique

    for module in (footprints, sanitizer, unique):
        monkeypatch.setattr(module, "np", _NumpyIntp32("numpy"))
    n, block = 50, 16
    x = np.arange(n, dtype=np.float32)
    perm = np.random.default_rng(1).permutation(block).astype(np.int32)
    out = minitriton.testing.empty(n)
    with minitriton.set_options(sanitize=True, group_size=group_size):
        _rows_then_gather[(minitriton.cdiv(n, block),)](x, out, perm, n, BLOCK=block)
    mixed = (np.arange(n) // block * block + perm[np.arange(n) % block])
    twice = x + np.where(mixed < n, x[np.minimum(mixed, n - 1)], 0)
    np.testing.assert_array_equal(out, twice + x.view(np.uint8)[::4])
