"""Distinct bytes counted from runs (tiles, consecutive lanes) against a brute-force set of bytes.

The counters count an affine tile from its rows (memory.events.Tile) and a lane access whose rows hold
consecutive elements from runs; everything else lane by lane. The reference here is independent of both: a
Python set of every byte each active lane touches, built from the kernel's own index arithmetic.
"""
import numpy as np
from hypothesis import example, given, settings, strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.memory.events import Tile, prefix_counts
from minitriton.observers import counters, unique
from minitriton.observers.unique import Lanes, TileChain, lane_runs, tile_runs


def covered(runs, g):
    """Per program position: the set of elements its runs cover, and the sum of their lengths."""
    sets, lengths = [set() for _ in range(g)], [0] * g
    for p, s, e in zip(runs.pos.tolist(), runs.starts.tolist(), runs.ends.tolist()):
        assert e > s
        sets[p].update(range(s, e))
        lengths[p] += e - s
    return sets, lengths


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 30)), min_size=1, max_size=40))
def test_union_of_runs_matches_a_set(runs):
    starts = np.array([s for s, _ in runs], np.int64)
    ends = starts + np.array([n for _, n in runs], np.int64)
    elements = set().union(*(range(s, e) for s, e in zip(starts.tolist(), ends.tolist())))
    assert unique.union_length(starts, ends) == len(elements)
    s, e = unique.union(starts, ends)
    assert (s[1:] >= e[:-1]).all() and (e > s).all()  # sorted and disjoint
    assert set().union(*(range(a, b) for a, b in zip(s.tolist(), e.tolist()))) == elements


@st.composite
def mask_parts(draw):
    """A block shape and the parts of a mask over it: per program, on for a prefix along one dim, or on or
    off for the whole program; sometimes a part that is no prefix."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    g = draw(st.integers(1, 3))
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.integers(-1, len(shape) - 1))  # -1: the whole program
        rows = draw(st.sampled_from([1, g]))
        if d < 0:
            part = np.array(draw(st.lists(st.booleans(), min_size=rows, max_size=rows)))
            parts.append(part.reshape((rows,) + (1,) * len(shape)))
            continue
        counts = np.array(draw(st.lists(st.integers(0, shape[d]), min_size=rows, max_size=rows)))
        line = np.arange(shape[d]) < counts[:, None]
        if draw(st.integers(0, 4)) == 0:
            line[draw(st.integers(0, rows - 1)), draw(st.integers(0, shape[d] - 1))] ^= True
        dims = [1] * len(shape)
        dims[d] = shape[d]
        parts.append(line.reshape([rows] + dims))
    return shape, g, parts


@settings(max_examples=300)
@given(mask_parts())
def test_prefix_counts_describe_the_mask(case):
    shape, g, parts = case
    mask = np.ones((g,) + shape, bool)
    for part in parts:
        mask &= part
    counts = prefix_counts(parts, shape)
    prefixes = all(np.array_equal(p.reshape(p.shape[0], -1), np.arange(p[0].size) < p.reshape(p.shape[0], -1).sum(1)[:, None])
                   for p in parts)
    if counts is None:
        assert not prefixes  # only a part that is no prefix leaves the mask to the lanes
        return
    lanes = np.indices(shape)
    for p in range(g):
        limits = [int(np.broadcast_to(c, (g,))[p]) for c in counts]
        rectangle = np.all([lanes[d] < limits[d] for d in range(len(shape))], axis=0)
        assert np.array_equal(mask[p], rectangle)


@st.composite
def tiles(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    strides = tuple(draw(st.lists(st.sampled_from([0, 1, 1, 2, 3, 7]), min_size=nd, max_size=nd)))
    g = draw(st.integers(1, 4))
    origins = np.array(draw(st.lists(st.integers(0, 40), min_size=1, max_size=1) | st.lists(
        st.integers(0, 40), min_size=g, max_size=g)), np.int64)
    counts = tuple(draw(st.integers(0, n) | st.lists(st.integers(0, n), min_size=g, max_size=g).map(
        lambda c: np.array(c, np.int64))) for n in shape)
    return Tile(origins, strides, counts), shape, g


@settings(max_examples=400)  # no kernel: hundreds of tiles take a second
@given(tiles())
@example((Tile(np.array([0]), (2, 1), (2, 5)), (2, 5), 1))  # rows that overlap
@example((Tile(np.array([3, 9]), (0, 1), (np.array([1, 2]), 3)), (2, 4), 2))  # a repeated row
def test_tile_runs_cover_exactly_the_active_lanes(case):
    tile, shape, g = case
    origins = np.broadcast_to(tile.origins, (g,))
    expected = []
    for p in range(g):
        limits = [int(np.broadcast_to(c, (g,))[p]) for c in tile.counts]
        lanes = np.indices(shape).reshape(len(shape), -1)
        active = np.all(lanes < np.array(limits)[:, None], axis=0)
        offsets = int(origins[p]) + (np.array(tile.strides)[:, None] * lanes).sum(axis=0)
        expected.append(set(offsets[active].tolist()))
    runs = tile_runs(tile, shape, g)
    if runs is None:  # only a tile without a unit-stride dim is left to the lanes
        assert not any(s == 1 and n > 1 for s, n in zip(tile.strides, shape)) and np.prod(shape) > 1
        return
    sets, lengths = covered(runs, g)
    assert sets == expected
    if runs.disjoint:
        assert lengths == [len(s) for s in sets]


@st.composite
def lane_rows(draw):
    """Lane accesses: rows of consecutive elements under prefix masks, sometimes broken on purpose."""
    g = draw(st.integers(1, 4))
    h = draw(st.sampled_from([1, g]))
    per, n = draw(st.integers(1, 3)), draw(st.sampled_from([8, 16]))
    firsts = np.array(draw(st.lists(st.integers(0, 60), min_size=h * per, max_size=h * per)), np.int64)
    if draw(st.booleans()):  # each program's rows end to end
        firsts = (firsts.reshape(h, per)[:, :1] + np.arange(per) * n).reshape(-1)
    rows = (firsts[:, None] + np.arange(n)).reshape(h, per * n)
    mask = None
    if draw(st.booleans()):
        counts = np.array(draw(st.lists(st.integers(0, n), min_size=h * per, max_size=h * per)))
        mask = (np.arange(n) < counts[:, None]).reshape(h, per * n)
        if draw(st.booleans()):
            mask[draw(st.integers(0, h - 1)), draw(st.integers(0, per * n - 1))] ^= True
        rows = np.where(mask, rows, 0)  # masked-off lanes hold offset 0, as after the bounds check
    broken = draw(st.booleans())
    if broken:
        rows[draw(st.integers(0, h - 1)), draw(st.integers(0, per * n - 1))] += draw(st.integers(1, 5))
    return Lanes(rows.astype(draw(st.sampled_from([np.int32, np.int64]))), mask), n, g


@settings(max_examples=400)
@given(lane_rows())
def test_lane_runs_cover_exactly_the_active_lanes(case):
    form, n, g = case
    rows = np.broadcast_to(form.rows, (g, form.rows.shape[1]))
    on = np.ones(rows.shape, bool) if form.mask is None else np.broadcast_to(form.mask, rows.shape)
    found = lane_runs(form, n, g)
    if found is None:  # then some row is not a masked prefix of consecutive elements
        lines, masks = rows.reshape(-1, n), on.reshape(-1, n)
        k = masks.sum(axis=1)
        assert not ((masks == (np.arange(n) < k[:, None])).all()
                    and ((lines == lines[:, :1] + np.arange(n)) | ~masks).all())
        return
    runs, active = found
    sets, _ = covered(runs, g)
    assert sets == [set(rows[p][on[p]].tolist()) for p in range(g)]
    assert np.array_equal(np.broadcast_to(active, (g,)), on.sum(axis=1))


@triton.jit
def tiles_kernel(x_ptr, y_ptr, idx_ptr, step, o0, o1, s_r, s_c, rows_lim, drop, cols_lim, jump,
                 R: tl.constexpr, C: tl.constexpr, TILED: tl.constexpr, PREFIX: tl.constexpr,
                 GATHER: tl.constexpr, BYTES: tl.constexpr, STEPS: tl.constexpr, SKIP: tl.constexpr,
                 VARY: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    if PREFIX:
        mask = (r[:, None] < rows_lim - pid * drop) & (c[None, :] < cols_lim)
    else:
        mask = (r[:, None] % 2 == pid % 2) & (c[None, :] < cols_lim)
    lanes = r[:, None] * s_r + c[None, :] * s_c
    x_bytes = x_ptr.to(tl.pointer_type(tl.uint8))
    if TILED:  # pointer + per-program scalar + (R, C) offsets: a tile
        a_ptrs = x_ptr + pid * step + (o0 + lanes)
        b_ptrs = x_ptr + pid * step + (o1 + lanes)
        byte_ptrs = x_bytes + (pid * step + o1) * 4 + lanes
        y_ptrs = y_ptr + pid * step + (o0 + lanes)
    else:      # pointer + (programs, R, C) offsets: lanes
        a_ptrs = x_ptr + (pid * step + o0 + lanes)
        b_ptrs = x_ptr + (pid * step + o1 + lanes)
        byte_ptrs = x_bytes + ((pid * step + o1) * 4 + lanes)
        y_ptrs = y_ptr + (pid * step + o0 + lanes)
    a = tl.load(a_ptrs, mask=mask, other=0)
    total = tl.sum(tl.sum(a, axis=1), axis=0)
    stepped = a_ptrs
    for k in range(1, STEPS):  # a loop stepping the tile: `ptr += jump`
        if SKIP and k == STEPS - 1:  # the last step goes twice as far
            stepped += jump
        stepped += jump * (1 + pid * VARY)  # VARY: each program steps by its own amount
        total += tl.sum(tl.sum(tl.load(stepped, mask=mask, other=0), axis=1), axis=0)
    b = tl.load(b_ptrs, mask=mask, other=0)
    total += tl.sum(tl.sum(b, axis=1), axis=0)
    if GATHER:
        total += tl.sum(tl.load(x_ptr + tl.load(idx_ptr + (pid * R + r))), axis=0)
    if BYTES:
        total += tl.sum(tl.sum(tl.load(byte_ptrs, mask=mask, other=0).to(tl.int32), axis=1), axis=0)
    tl.store(y_ptrs, a, mask=mask)
    tl.store(y_ptr + pid, total, mask=pid < 0)  # masked off everywhere: counted as masked lanes only


@st.composite
def launches(draw):
    ints = st.integers
    R, C = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 2, 8, 16]))
    return dict(programs=draw(ints(1, 6)), step=draw(ints(0, 40)), o0=draw(ints(0, 20)), o1=draw(ints(0, 20)),
                s_r=draw(st.sampled_from([0, 1, 3, 8, 20])), s_c=draw(st.sampled_from([0, 1, 1, 2])),
                rows_lim=draw(ints(-1, R + 1)), drop=draw(ints(0, 1)), cols_lim=draw(ints(0, C + 1)), R=R, C=C,
                PREFIX=draw(st.booleans()), GATHER=draw(st.booleans()), BYTES=draw(st.booleans()),
                STEPS=draw(st.sampled_from([1, 3, 4])), jump=draw(st.sampled_from(["row", "column", 0, 1, 5])),
                SKIP=draw(st.booleans()), VARY=draw(st.booleans()),
                group_size=draw(st.sampled_from([None, 1, 2])), seed=draw(ints(0, 2**16)))


def reference(p):
    """Per program: lanes and bytes of every access, and the set of bytes each tensor's loads/stores touch."""
    n_prog, R, C = p["programs"], p["R"], p["C"]
    r, c = np.arange(R)[:, None], np.arange(C)[None, :]
    out = {"x": {"elements": [0] * n_prog, "bytes": [0] * n_prog, "masked": [0] * n_prog, "sets": []},
           "y": {"elements": [0] * n_prog, "masked": [0] * n_prog, "sets": []}}
    for pid in range(n_prog):
        if p["PREFIX"]:
            mask = (r < p["rows_lim"] - pid * p["drop"]) & (c < p["cols_lim"])
        else:
            mask = (r % 2 == pid % 2) & (c < p["cols_lim"])
        lanes = r * p["s_r"] + c * p["s_c"]
        loads = [(pid * p["step"] + p["o0"] + lanes, mask, 4), (pid * p["step"] + p["o1"] + lanes, mask, 4)]
        moved = 0
        for k in range(1, p["STEPS"]):
            moved += p["jump"] * ((p["SKIP"] and k == p["STEPS"] - 1) + 1 + pid * p["VARY"])
            loads.append((pid * p["step"] + p["o0"] + moved + lanes, mask, 4))
        if p["GATHER"]:
            loads.append((p["idx"][pid * R: pid * R + R], np.ones(R, bool), 4))
        if p["BYTES"]:
            loads.append(((pid * p["step"] + p["o1"]) * 4 + lanes, mask, 1))
        x = out["x"]
        touched = set()
        for offsets, on, size in loads:
            x["elements"][pid] += int(on.sum())
            x["bytes"][pid] += int(on.sum()) * size
            x["masked"][pid] += int((~np.broadcast_to(on, offsets.shape)).sum())
            touched |= {int(o) * size + k for o in np.broadcast_to(offsets, on.shape)[on] for k in range(size)}
        x["sets"].append(touched)
        stores = pid * p["step"] + p["o0"] + lanes
        out["y"]["elements"][pid] = int(mask.sum())
        out["y"]["masked"][pid] = int((~mask).sum()) + 1
        out["y"]["sets"].append({int(o) * 4 + k for o in stores[mask] for k in range(4)})
    return out


def extent(p) -> int:
    """The largest element offset the launch computes."""
    steps = (p["STEPS"] - 1 + p["SKIP"]) * (1 + (p["programs"] - 1) * p["VARY"])
    return ((p["programs"] - 1) * p["step"] + max(p["o0"], p["o1"]) + steps * p["jump"]
            + (p["R"] - 1) * p["s_r"] + (p["C"] - 1) * p["s_c"])


def counts(p, tiled):
    R, C = p["R"], p["C"]
    size = extent(p) + 1
    x = np.arange(size + 1, dtype=np.int32)
    y = np.zeros(max(size, p["programs"]) + 1, np.int32)
    with minitriton.set_options(group_size=p["group_size"]), minitriton.record() as rec:
        tiles_kernel[(p["programs"],)](x, y, p["idx"], p["step"], p["o0"], p["o1"], p["s_r"], p["s_c"],
                                       p["rows_lim"], p["drop"], p["cols_lim"], p["jump"], R=R, C=C, TILED=tiled,
                                       PREFIX=p["PREFIX"], GATHER=p["GATHER"], BYTES=p["BYTES"], STEPS=p["STEPS"],
                                       SKIP=p["SKIP"], VARY=p["VARY"])
    return rec.last["tensors"]


def check_launch(p) -> tuple:
    """Count `p`'s launch through tiles and through lanes, compare both with the reference; the number of
    accesses the tiled launch gave in tile form, and how many of them continued a chain of tiles."""
    rng = np.random.default_rng(p["seed"])
    if p["jump"] in ("row", "column"):  # the tile's next rows or next columns: end to end
        rows, cols = max(0, min(p["R"], p["rows_lim"])), max(0, min(p["C"], p["cols_lim"]))
        p["jump"] = rows * p["s_r"] if p["jump"] == "row" else cols * p["s_c"]
    p["idx"] = rng.integers(0, extent(p) + 1, p["programs"] * p["R"]).astype(np.int32)
    ref = reference(p)
    tiles, joined = [], []
    on_event, join = counters.LaunchCounters.on_event, TileChain.join

    def spy_event(self, group, event):
        tiles.append(getattr(event, "tile", None) is not None)
        return on_event(self, group, event)

    def spy_join(self, tile, shape):
        joined.append(join(self, tile, shape))
        return joined[-1]

    counters.LaunchCounters.on_event, TileChain.join = spy_event, spy_join
    try:
        for tiled in (True, False):
            tiles.clear()
            joined.clear()
            tensors = counts(p, tiled)
            x, y = tensors["x_ptr"]["per_program"], tensors["y_ptr"]["per_program"]
            assert x["loaded_elements"] == ref["x"]["elements"]
            assert x["loaded_bytes"] == ref["x"]["bytes"]
            assert x["masked_load_lanes"] == ref["x"]["masked"]
            assert x["unique_loaded_bytes"] == [len(s) for s in ref["x"]["sets"]]
            assert tensors["x_ptr"]["totals"]["unique_loaded_bytes"] == len(set().union(*ref["x"]["sets"]))
            assert y["stored_elements"] == ref["y"]["elements"]
            assert y["masked_store_lanes"] == ref["y"]["masked"]
            assert y["unique_stored_bytes"] == [len(s) for s in ref["y"]["sets"]]
            assert tensors["y_ptr"]["totals"]["unique_stored_bytes"] == len(set().union(*ref["y"]["sets"]))
            if tiled:
                found = sum(tiles), sum(joined)
            else:
                assert not any(tiles)  # the lane variant never reaches the tile form
    finally:
        counters.LaunchCounters.on_event, TileChain.join = on_event, join
    return found


@given(launches())
def test_unique_bytes_of_tiles_and_lanes_match_a_set_of_bytes(p):
    check_launch(p)


def test_tiled_accesses_reach_the_counters_in_tile_form():
    p = dict(programs=5, step=24, o0=3, o1=9, s_r=20, s_c=1, rows_lim=3, drop=1, cols_lim=7, R=4, C=8,
             PREFIX=True, GATHER=True, BYTES=True, STEPS=3, jump="column", SKIP=False, VARY=False,
             group_size=None, seed=1)
    # the two loads, the two steps of the loop, the byte load and the masked 2-D store (its general path,
    # through a pointer block); programs with different rows (drop=1) make no chain
    assert check_launch(p) == (6, 0)
    p.update(drop=0, jump="column")
    assert check_launch(p) == (6, 2)  # the loop's two steps continue the tile along its columns
    p.update(jump="row")
    assert check_launch(p) == (6, 2)  # ... along its rows
    p.update(jump="row", STEPS=4, SKIP=True)
    assert check_launch(p) == (7, 2)  # the last step leaves a gap: a new chain
    p.update(jump="row", STEPS=3, SKIP=False, VARY=True)
    assert check_launch(p) == (6, 0)  # programs stepping by different amounts: no chain
