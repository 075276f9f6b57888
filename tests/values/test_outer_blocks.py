"""2-D pointer blocks and masks built as outer combinations (`rows[:, None] * s + cols[None, :]`).

The engine keeps them in parts (minitriton/outer.py) and loads and stores whole tiles through strided
views when it can. These tests compare every such access with a NumPy reference computed from the lane
indices, with one program per pass (group_size=1), and with traffic recording on (which takes the
index-array path), so the tile path, the parts and the general path must all agree to the bit.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl


@pytest.fixture(autouse=True)
def _clean_options(monkeypatch):
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    yield  # tests/conftest.py restores the options


@triton.jit
def tile_copy(src, dst, origin_step, M, N, s_r, s_c, d_r, d_c, steps, step,
              R: tl.constexpr, C: tl.constexpr, START: tl.constexpr = 0):
    # each program copies `steps` tiles of R x C lanes (masked to rows < M, cols < N) from src to dst
    pid = tl.program_id(0)
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    src_tile = src + START + pid * origin_step + rows[:, None] * s_r + cols[None, :] * s_c
    dst_tile = dst + pid * R * C * steps + rows[:, None] * d_r + cols[None, :] * d_c
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    for _ in range(steps):
        x = tl.load(src_tile, mask=mask, other=-1.0)
        tl.store(dst_tile, x, mask=mask)
        src_tile += step
        dst_tile += R * C


def _reference(src, n_prog, origin_step, M, N, s_r, s_c, steps, step, R, C, start=0):
    dst = np.full(n_prog * R * C * steps, np.nan, np.float32)
    rows, cols = np.arange(R)[:, None], np.arange(C)[None, :]
    keep = (rows < M) & (cols < N)
    for pid in range(n_prog):
        for k in range(steps):
            offs = start + pid * origin_step + rows * s_r + cols * s_c + k * step
            x = np.where(keep, src[np.where(keep, offs, 0)], np.float32(-1.0))
            block = dst[pid * R * C * steps + k * R * C:][: R * C].reshape(R, C)
            block[keep] = x[keep]
    return dst


def _run(src, n_prog, args, R, C, group_size=None, record=False, start=0):
    minitriton.set_options(group_size=group_size)
    dst = np.full(n_prog * R * C * args[-2], np.nan, np.float32)
    origin_step, M, N, s_r, s_c, steps, step = args
    launch = lambda: tile_copy[(n_prog,)](src, dst, origin_step, M, N, s_r, s_c, C, 1, steps, step, R=R, C=C,
                                          START=start)
    if record:
        with minitriton.record():
            launch()
    else:
        launch()
    return dst


@settings(max_examples=60, deadline=None)
@given(R=st.sampled_from([1, 2, 4, 8]), C=st.sampled_from([1, 2, 4, 16]),
       s_r=st.integers(-3, 40), s_c=st.integers(-2, 3), n_prog=st.integers(1, 9),
       origin_step=st.integers(0, 50), steps=st.integers(1, 3), step=st.integers(-5, 30),
       M=st.integers(0, 9), N=st.integers(0, 17))
def test_tile_loads_and_stores_match_numpy(R, C, s_r, s_c, n_prog, origin_step, steps, step, M, N):
    src = np.arange(4096, dtype=np.float32) * 0.5
    base = 600  # leaves room for negative strides and steps: every lane stays inside src
    args = (origin_step, M, N, s_r, s_c, steps, step)
    expected = _reference(src, n_prog, origin_step, M, N, s_r, s_c, steps, step, R, C, start=base)
    for kw in ({}, {"group_size": 1}, {"record": True}):
        got = _run(src, n_prog, args, R, C, start=base, **kw)
        np.testing.assert_array_equal(got, expected, err_msg=str(kw))


def test_tile_path_is_taken_for_a_plain_2d_tile(monkeypatch):
    """The matmul-style tile goes through the strided view (no index array), not through `take`."""
    from minitriton.values import factored as outer
    calls = []
    real = outer.tile_view
    monkeypatch.setattr(outer, "tile_view", lambda *a, **k: calls.append(1) or real(*a, **k))
    import minitriton.memory.access as om
    monkeypatch.setattr(om, "tile_view", outer.tile_view)
    src = np.arange(64 * 64, dtype=np.float32)
    out = _run(src, 4, (64, 8, 8, 64, 1, 2, 8), 8, 8)
    assert calls, "the tile path was not used"
    np.testing.assert_array_equal(out, _reference(src, 4, 64, 8, 8, 64, 1, 2, 8, 8, 8))


def test_out_of_bounds_through_a_tile_names_the_offsets():
    src = np.zeros(100, np.float32)
    dst = np.zeros(64, np.float32)
    with pytest.raises(minitriton.OutOfBoundsError) as e:
        tile_copy[(1,)](src, dst, 0, 8, 8, 16, 1, 8, 1, 1, 0, R=8, C=8)
    text = str(e.value)
    assert "tl.load reads past the end of `src`" in text
    assert "valid offsets 0…99" in text
    assert "12 of 64 lanes are out of range" in text  # row 6 is 96..103 (4 lanes >= 100), row 7 112..119


def test_stride_zero_store_keeps_the_last_program_and_lane():
    """Lanes that share an element (stride 0) are written in program, then lane order, like the GPU's
    last writer in our model; the tile path must not take such a store."""
    @triton.jit
    def broadcast_store(dst, R: tl.constexpr, C: tl.constexpr):
        pid = tl.program_id(0)
        rows = tl.arange(0, R)
        cols = tl.arange(0, C)
        vals = (pid * 100 + rows[:, None] * C + cols[None, :]).to(tl.float32)
        tl.store(dst + rows[:, None] * 0 + cols[None, :], vals)

    for group_size in (None, 1):
        minitriton.set_options(group_size=group_size)
        dst = np.zeros(4, np.float32)
        broadcast_store[(3,)](dst, R=4, C=4)
        np.testing.assert_array_equal(dst, 200 + 12 + np.arange(4))


def test_three_part_masks_and_partial_masks():
    @triton.jit
    def masked(src, dst, M, N, K, R: tl.constexpr, C: tl.constexpr):
        pid = tl.program_id(0)
        rows = tl.arange(0, R)
        cols = tl.arange(0, C)
        offs = rows[:, None] * C + cols[None, :]
        m = (rows[:, None] < M) & (cols[None, :] < N)
        m = m & (pid < K)
        x = tl.load(src + offs, mask=m, other=7.0)
        tl.store(dst + pid * R * C + offs, x)

    src = np.arange(32, dtype=np.float32)
    rows, cols = np.arange(4)[:, None], np.arange(8)[None, :]
    for group_size in (None, 1):
        minitriton.set_options(group_size=group_size)
        dst = np.zeros(3 * 32, np.float32)
        masked[(3,)](src, dst, 3, 5, 2, R=4, C=8)
        for pid in range(3):
            keep = (rows < 3) & (cols < 5) & (pid < 2)
            np.testing.assert_array_equal(dst[pid * 32:(pid + 1) * 32].reshape(4, 8),
                                          np.where(keep, src.reshape(4, 8), 7.0))


def test_tile_stores_are_rolled_back_when_the_group_splits():
    """A store through a tile, then Python control flow that differs by program: the group is rolled back
    and re-run in parts, so each element is written exactly once, as with one program per pass."""
    @triton.jit
    def store_then_branch(dst, counter, R: tl.constexpr, C: tl.constexpr):
        pid = tl.program_id(0)
        rows = tl.arange(0, R)
        cols = tl.arange(0, C)
        tile = dst + pid * R * C + rows[:, None] * C + cols[None, :]
        old = tl.load(tile)
        tl.store(tile, old + 1.0)
        if pid % 2 == 0:
            tl.atomic_add(counter, 1)

    for group_size in (None, 1):
        minitriton.set_options(group_size=group_size)
        dst = np.zeros(6 * 8, np.float32)
        counter = np.zeros(1, np.int32)
        store_then_branch[(6,)](dst, counter, R=2, C=4)
        np.testing.assert_array_equal(dst, np.ones(48, np.float32))
        assert counter[0] == 3


def test_outer_pointer_ops_that_need_the_whole_block():
    """Ops other than load/store/step see the full block: where, reshape, comparisons of offsets."""
    @triton.jit
    def other_ops(src, dst, R: tl.constexpr, C: tl.constexpr):
        rows = tl.arange(0, R)
        cols = tl.arange(0, C)
        p = src + rows[:, None] * C + cols[None, :]
        q = tl.where(rows[:, None] < 1, p + 1, p)
        flat = tl.reshape(q, (R * C,))
        tl.store(dst + tl.arange(0, R * C), tl.load(flat))
        tl.store(dst + R * C + tl.arange(0, R * C), tl.load(tl.trans(p)).reshape(R * C))

    src = np.arange(16, dtype=np.float32)
    dst = np.zeros(32, np.float32)
    other_ops[(1,)](src, dst, R=2, C=8)
    first = src[:16].reshape(2, 8).copy()
    first[0] = src[1:9]
    np.testing.assert_array_equal(dst[:16], first.reshape(-1))
    np.testing.assert_array_equal(dst[16:], src.reshape(2, 8).T.reshape(-1))


def test_int64_offsets_past_int32_stay_exact():
    """Parts are int64: a block whose offsets pass 2**31 through a large stride still points exactly
    (and is reported as out of bounds with the exact offsets)."""
    src = np.zeros(16, np.float32)
    dst = np.zeros(4, np.float32)
    with pytest.raises(minitriton.OutOfBoundsError) as e:
        tile_copy[(1,)](src, dst, 0, 2, 2, 2**31, 1, 2, 1, 1, 0, R=2, C=2)
    assert "2147483648" in str(e.value)
