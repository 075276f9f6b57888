"""Distinct bytes an access pattern touches: per program of each group, and over the whole launch.

An access reaches the counters in one of two forms:
* `Runs`: half-open runs [start, end) of consecutive elements, each tagged with its program's position in the
  group. Tiles (memory.events.Tile) give one run per row along their unit-stride dim; lane accesses whose
  rows are consecutive elements under a prefix mask (`x + pid * BLOCK + tl.arange(0, BLOCK)`, masked at the
  tail) give one run per row too. Distinct bytes are then the length of a union of runs (sort, then merge).
* `Lanes`: every active lane's offset, for gathers and scatters of no such shape. Distinct elements come from
  one scatter into a scratch array keyed by program, and the launch's from a bitmap over the array.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from minitriton.memory.access import distinct

_SCRATCH_SLOTS = 2**24  # largest programs x elements index space counted with a scatter instead of a sort
_MIN_RUN = 8            # shortest row of a lane access worth turning into runs
_STORED_RUNS = 64      # arrays of runs a launch keeps per tensor before it merges them
_NO_LOW = np.iinfo(np.int64).max  # the lowest offset of a program with no active lane
_KEY_LIMIT = 2**62      # program position x span keys must stay below this to be packed into one int64
_KEPT_RUNS = 2**20      # runs a launch keeps with their programs for the cost model's waves (perf/)


@dataclass(frozen=True, slots=True)
class Runs:
    """Runs of consecutive elements: program positions in the group, element offsets [starts, ends);
    `disjoint`: no two runs of one program overlap; `per_program`: every program has that many runs, listed
    program after program (0: not so)."""

    pos: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    disjoint: bool
    per_program: int = 0


@dataclass(frozen=True, slots=True)
class Lanes:
    """Element offsets, a row of lanes per program position (one row when every program has the same), and
    which lanes are active (None: all; also one row or one per position)."""

    rows: np.ndarray
    mask: np.ndarray | None


def lane_form(event, g: int):
    """(`Lanes`, `lane_runs` of them or None) of an access's lanes in a group of `g` programs; kept on the event
    for its next observer."""
    if event.shared is None:
        idx, m, shape = event.index, event.mask, event.shape
        n = math.prod(shape)
        rows = idx if idx.shape[1:] == shape else np.broadcast_to(idx, idx.shape[:1] + shape)
        mm = None if m is None else (m if m.shape[1:] == shape else np.broadcast_to(m, m.shape[:1] + shape))
        form = Lanes(rows.reshape(-1, n), None if mm is None else mm.reshape(-1, n))
        event.shared = form, lane_runs(form, shape[-1] if shape else 1, g)
    return event.shared


def has_runs(tile, shape: tuple) -> bool:
    """Whether `tile_runs` gives runs for this tile: it has a unit-stride dim, or a single lane."""
    return any(s == 1 and n > 1 for n, s in zip(shape, tile.strides)) or all(n == 1 for n in shape)


class TileChain:
    """Accesses to one tensor through one tile stepped end to end along one of its dims (a loop's
    `ptr += BLOCK_K`), held as that one longer tile; every program has the same rectangle (int counts)."""

    __slots__ = ("tile", "shape", "dim", "steps")

    def __init__(self, tile, shape: tuple):
        self.tile, self.shape, self.dim, self.steps = tile, shape, None, 1

    def join(self, tile, shape: tuple) -> bool:
        """Take in the next access `tile` when it continues the chain end to end; False when it does not."""
        first = self.tile
        if shape != self.shape or tile.strides != first.strides or tile.counts != first.counts:
            return False
        delta = tile.origins - first.origins
        step = int(delta.reshape(-1)[0])
        if self.dim is None:  # the second access: along which dim the tile moves
            dims = [d for d, (n, s) in enumerate(zip(tile.counts, tile.strides)) if n * s == step and step > 0]
            if not dims:
                return False
            dim = dims[0]
        else:
            dim = self.dim
        if step != self.steps * tile.counts[dim] * tile.strides[dim] or (delta != step).any():
            return False
        self.dim, self.steps = dim, self.steps + 1
        return True

    def runs(self, g: int) -> Runs:
        """The chain's runs, as of one tile `steps` times as long along its dim."""
        tile, shape = self.tile, self.shape
        if self.steps > 1:
            d = self.dim
            counts = tile.counts[:d] + (tile.counts[d] * self.steps,) + tile.counts[d + 1:]
            shape = shape[:d] + (shape[d] * self.steps,) + shape[d + 1:]
            tile = type(tile)(tile.origins, tile.strides, counts)
        return tile_runs(tile, shape, g)


def tile_runs(tile, shape: tuple, g: int) -> Runs | None:
    """A `Tile`'s active lanes as runs along its unit-stride dim, for a group of `g` programs; None when it has
    no unit-stride dim (and more than one lane)."""
    if not has_runs(tile, shape):
        return None
    nd, strides = len(shape), tile.strides
    unit = [d for d in range(nd) if strides[d] == 1 and shape[d] > 1]
    c = max(unit, key=lambda d: shape[d]) if unit else None
    # the other dims that move the address; a dim of stride 0 repeats the same runs
    others = [d for d in range(nd) if d != c and shape[d] > 1 and strides[d] != 0]
    counts = tile.counts
    origins = tile.origins if tile.origins.shape[0] == g else np.broadcast_to(tile.origins, (g,))
    run = 1 if c is None else counts[c]
    injective = _injective(shape, strides)
    if not any(isinstance(k, np.ndarray) for k in counts):  # the same rectangle in every program
        if 0 in counts:
            return Runs(*(np.zeros(0, np.int64),) * 3, True)
        rows = list(others)
        for d in sorted(others, key=lambda d: strides[d]):
            if strides[d] == run:  # each row starts where the one before ends: one longer run
                run *= counts[d]
                rows.remove(d)
        if not rows:
            return Runs(_positions(g, 1), origins.astype(np.int64), origins + run, injective, 1)
        offsets = np.zeros(1, np.int64)
        for d in rows:  # the rectangle's rows: row offsets within the tile, first dim slowest
            offsets = (offsets[:, None] + np.arange(counts[d], dtype=np.int64) * strides[d]).reshape(-1)
        starts = (origins[:, None] + offsets).reshape(-1)
        return Runs(_positions(g, offsets.size), starts, starts + run, injective, offsets.size)
    counts = [np.broadcast_to(k, (g,)) for k in counts]
    alive = np.logical_and.reduce([k > 0 for k in counts])
    run = np.broadcast_to(run, (g,))
    offsets = np.zeros((1,) * len(others), np.int64)
    on = alive.reshape((g,) + (1,) * len(others))
    for k, d in enumerate(others):
        lane = np.arange(shape[d], dtype=np.int64).reshape((1,) * k + (shape[d],) + (1,) * (len(others) - k - 1))
        offsets = offsets + lane * strides[d]
        on = on & (lane[None] < counts[d].reshape((g,) + (1,) * len(others)))
    on = np.broadcast_to(on, (g,) + tuple(shape[d] for d in others)).reshape(g, -1)
    pos, row = np.nonzero(on)
    starts = origins[pos] + offsets.reshape(-1)[row]
    return Runs(pos, starts, starts + run[pos], injective)


@functools.lru_cache(maxsize=64)
def _positions(g: int, per_program: int) -> np.ndarray:
    """0, ..., 0, 1, ..., g - 1: each program's position `per_program` times (shared: never written)."""
    positions = np.repeat(np.arange(g, dtype=np.int64), per_program)
    positions.flags.writeable = False
    return positions


@functools.lru_cache(maxsize=256)
def _injective(shape: tuple, strides: tuple) -> bool:
    """Whether no two lanes of a tile share an element."""
    extent = 0
    for n, s in sorted(zip(shape, strides), key=lambda t: t[1]):
        if n > 1 and s <= extent:
            return False
        extent += (n - 1) * s
    return True


def lane_runs(form: Lanes, row_length: int, g: int):
    """(runs, active lanes per program) of a lane access when, in every row of `row_length` lanes (the block's
    last axis), the active lanes are a prefix of the row and hold consecutive elements; None otherwise (or
    when rows are too short to gain anything)."""
    n = row_length
    if n < _MIN_RUN:
        return None
    index, mask = form.rows, form.mask
    h = index.shape[0] if mask is None else max(index.shape[0], mask.shape[0])
    if index.shape[0] != h:
        index = np.broadcast_to(index, (h, index.shape[1]))
    rows = index.reshape(-1, n)
    first = rows[:, :1]
    equal = rows == first + np.arange(n, dtype=rows.dtype)  # (a wrap past the dtype matches no offset >= 0)
    if mask is None:
        if not equal.all():
            return None
        count = n
    else:
        on = (mask if mask.shape[0] == h else np.broadcast_to(mask, (h, mask.shape[1]))).reshape(-1, n)
        count = on.argmin(axis=1)  # a row's first lane off: its prefix's length, if the mask is a prefix
        count[(count == 0) & on[:, 0]] = n
        # each row has at least `count` lanes on, so as many in all means no lane on past a prefix
        total = int(count.sum())
        if np.count_nonzero(on) != total:
            return None
        equal &= on
        if np.count_nonzero(equal) != total:
            return None
    per_program = rows.shape[0] // h
    if mask is None or total == count.size * n:  # every row wholly on
        lines, run = first.reshape(h, per_program), n
        if per_program > 1 and (lines[:, 1:] - lines[:, :-1] == n).all():  # rows end to end: one run
            lines, run, per_program = lines[:, :1], n * per_program, 1
        starts = lines.reshape(-1).astype(np.int64)
        if h == 1 and g > 1:  # one pattern for every program of the group
            starts = np.tile(starts, g)
        return Runs(_positions(g, per_program), starts, starts + run, per_program == 1, per_program), run * per_program
    starts = first.reshape(-1).astype(np.int64)
    if h == 1 and g > 1:
        starts, count = np.tile(starts, g), np.tile(count, g)
    pos = _positions(g, per_program)
    active = count if per_program == 1 else count.reshape(g, per_program).sum(axis=1)
    keep = count > 0
    if keep.all():
        return Runs(pos, starts, starts + count, per_program == 1, per_program), active
    starts = starts[keep]
    return Runs(pos[keep], starts, starts + count[keep], per_program == 1), active


def _coalesced(parts: list) -> list:
    """[(itemsize, Runs)] with each access whose runs continue the previous one's, program by program and
    run by run (a loop stepping a tile along its rows: `ptr += BLOCK_K`), joined to it."""
    out = parts[:1]
    for size, r in parts[1:]:
        last_size, last = out[-1]
        if (size == last_size and r.per_program and r.per_program == last.per_program
                and np.array_equal(r.starts, last.ends)):
            out[-1] = (size, Runs(last.pos, last.starts, r.ends, False, r.per_program))
        else:
            out.append((size, r))
    return out


def _as_runs(form: Lanes, g: int) -> Runs:
    """Every active lane as a run of one element."""
    rows = np.broadcast_to(form.rows, (g, form.rows.shape[1]))
    pos = np.broadcast_to(np.arange(g)[:, None], rows.shape)
    if form.mask is None:
        starts, pos = rows.reshape(-1), pos.reshape(-1)
    else:
        on = np.broadcast_to(form.mask, rows.shape)
        starts, pos = rows[on], pos[on]
    starts = starts.astype(np.int64)
    return Runs(pos, starts, starts + 1, False)


def _sorted(starts: np.ndarray, ends: np.ndarray):
    """Runs sorted by their starts."""
    lengths = ends - starts
    shift = int(lengths.max()).bit_length()
    if int(starts.max()) < _KEY_LIMIT >> shift:  # sort (start, length) packed in one int64: no argsort
        packed = np.sort((starts << shift) | lengths)
        s = packed >> shift
        return s, s + (packed & ((1 << shift) - 1))
    order = np.argsort(starts)
    return starts[order], ends[order]


def union_length(starts: np.ndarray, ends: np.ndarray) -> int:
    """How many elements the half-open runs [starts, ends) (starts >= 0) cover."""
    if starts.size > 1 and not (starts[1:] >= ends[:-1]).all():
        starts, ends = _sorted(starts, ends)
        reach = np.maximum.accumulate(ends)  # each run adds what it reaches past every run before it
        return int(reach[-1] - starts[0]) - int(np.maximum(starts[1:] - reach[:-1], 0).sum())
    return int((ends - starts).sum())


def union(starts: np.ndarray, ends: np.ndarray):
    """The union of half-open runs [starts, ends) (starts >= 0) as sorted, disjoint runs."""
    if starts.size < 2 or (starts[1:] >= ends[:-1]).all():  # already so (rows in order)
        return starts, ends
    s, e = _sorted(starts, ends)
    reach = np.maximum.accumulate(e)
    new = np.empty(s.shape, bool)
    new[0] = True
    np.greater(s[1:], reach[:-1], out=new[1:])
    first = np.flatnonzero(new)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = s.size - 1
    return s[first], reach[last]


class UniqueBytes:
    """Distinct bytes per program and per launch, for each (allocation, "load"/"store") pair."""

    def __init__(self, n_programs: int):
        self.n = n_programs
        self.per_program: dict = {}  # (alloc index, kind2) -> distinct bytes per program
        self.seen: dict = {}         # (alloc index, kind2, itemsize) -> elements lane accesses touched
        self.runs: dict = {}         # (alloc index, kind2) -> [(starts, ends, unit)]: runs accesses touched
        self.program_runs: dict | None = {}  # ... -> [(pids, positions, starts, ends, unit)]; None: too many
        self.kept = 0

    def add(self, pids: np.ndarray, alloc, kind2: str, parts: list):
        """Count the accesses `parts` ([(itemsize, Runs or Lanes)]) of one group to `alloc`."""
        key = (alloc.index, kind2)
        per = self.per_program.get(key)
        if per is None:
            per = self.per_program[key] = np.zeros(self.n, np.int64)
        g = len(pids)
        where = slice(int(pids[0]), int(pids[-1]) + 1) if pids[-1] - pids[0] + 1 == g else pids
        if len(parts) == 1 and isinstance(parts[0][1], Runs) and parts[0][1].disjoint:
            unit, r = parts[0]
            pos, starts, ends = r.pos, r.starts, r.ends
        elif all(isinstance(form, Lanes) for _, form in parts):
            self._add_lanes(pids, alloc, kind2, parts, per)
            return
        else:
            runs = _coalesced([(size, form if isinstance(form, Runs) else _as_runs(form, g)) for size, form in parts])
            sizes = {size for size, _ in runs}
            unit = sizes.pop() if len(sizes) == 1 else 1  # several element sizes: count in bytes
            pos, starts, ends = self._merge(g, alloc.nbytes // unit, unit, runs)
        if pos.size == g and pos is _positions(g, 1):  # one run per program
            per[where] += (ends - starts) * unit
        else:
            per[where] += np.bincount(pos, weights=ends - starts, minlength=g).astype(np.int64) * unit
        self._keep(key, pids, pos, starts, ends, unit)
        stored = self.runs.setdefault(key, [])
        stored.append((starts, ends, unit))
        if len(stored) > _STORED_RUNS:  # keep the launch's runs as their union, not one array per group
            stored[:] = [(*_union_bytes(stored), 1)]

    def _keep(self, key, pids, pos, starts, ends, unit):
        """Keep each program's runs (up to _KEPT_RUNS in a launch): the cost model's waves are unions of them."""
        self.kept += starts.size
        if self.program_runs is not None and self.kept > _KEPT_RUNS:
            self.program_runs = None
        if self.program_runs is not None:
            self.program_runs.setdefault(key, []).append((pids, pos, starts, ends, unit))

    @staticmethod
    def _merge(g: int, span: int, unit: int, runs: list):
        """The union of each program's runs: (positions, starts, ends), in units of `unit` bytes."""
        if all(r.per_program for _, r in runs):  # program after program: rows often come sorted then
            starts = np.concatenate([(r.starts * (size // unit)).reshape(g, -1) for size, r in runs], axis=1)
            ends = np.concatenate([(r.ends * (size // unit)).reshape(g, -1) for size, r in runs], axis=1)
            pos = _positions(g, starts.shape[1])
            starts, ends = starts.reshape(-1), ends.reshape(-1)
        else:
            pos = np.concatenate([r.pos for _, r in runs])
            starts = np.concatenate([r.starts * (size // unit) for size, r in runs])
            ends = np.concatenate([r.ends * (size // unit) for size, r in runs])
        stride = span + 1  # ends reach at most span: one program's keys never touch the next one's
        if g * stride < _KEY_LIMIT:
            base = pos.astype(np.int64) * stride  # (np.intp is 32 bits on wasm32)
            s, e = union(starts + base, ends + base)
            pos = s // stride
            return pos, s - pos * stride, e - pos * stride
        order = np.lexsort((starts, pos))
        pos, starts, ends = pos[order], starts[order], ends[order]
        out = [(np.full(len(s), p), s, e) for p in np.unique(pos)
               for s, e in [union(starts[pos == p], ends[pos == p])]]
        return tuple(np.concatenate(column) for column in zip(*out))

    def _add_lanes(self, pids, alloc, kind2, parts, per):
        """Lane accesses only: each active lane becomes a key `position * width + (offset - the program's lowest
        offset)`, `width` being the widest program's range of offsets, so one pass over the keys finds the
        distinct elements of every program at once."""
        g = len(pids)
        sizes = {itemsize for itemsize, _ in parts}
        if len(sizes) > 1:  # one program read the array through pointers of several element sizes: bytes
            parts = [(1, _as_bytes(form, itemsize)) for itemsize, form in parts]
        itemsize = parts[0][0]
        rows_masks = [(np.broadcast_to(form.rows, (g, form.rows.shape[1])),
                       None if form.mask is None else np.broadcast_to(form.mask, (g, form.mask.shape[1])))
                      for _, form in parts]
        lows, highs = [], []
        for rows, mm in rows_masks:  # offsets are in bounds (>= 0): a row with no active lane has high -1
            on = True if mm is None else mm
            high = rows.max(axis=1, where=on, initial=-1).astype(np.int64)
            low = rows.min(axis=1, where=on, initial=np.iinfo(rows.dtype).max).astype(np.int64)
            lows.append(np.where(high < 0, _NO_LOW, low))
            highs.append(high)
        low, high = np.minimum.reduce(lows), np.maximum.reduce(highs)
        busy = high >= low
        if not busy.any():
            return
        width = int((high - low)[busy].max()) + 1
        base = np.arange(g, dtype=np.int64) * width - np.where(busy, low, 0)
        keys = []
        for rows, mm in rows_masks:
            shifted = rows + base[:, None]
            keys.append(shifted.reshape(-1) if mm is None else shifted[mm])
        keys = keys[0] if len(keys) == 1 else np.concatenate(keys)
        first = _distinct(keys, g * width)
        position = first // width
        per[pids] += np.bincount(position, minlength=g) * itemsize
        seen = self.seen.get((alloc.index, kind2, itemsize))
        if seen is None:
            seen = self.seen[(alloc.index, kind2, itemsize)] = np.zeros(alloc.nbytes // itemsize, bool)
        seen[first - base[position]] = True
        self._keep((alloc.index, kind2), pids, position, first - base[position], first - base[position] + 1, itemsize)

    def total(self, alloc, kind2: str) -> int:
        """Distinct bytes of `alloc` the launch touched."""
        maps = [(size, seen) for (index, k, size), seen in self.seen.items() if index == alloc.index and k == kind2]
        runs = self.runs.get((alloc.index, kind2), [])
        if runs and not maps:
            return union_length(*_concatenated(runs))
        if not maps:
            return 0
        if len(maps) == 1 and not runs:
            size, seen = maps[0]
            return int(np.count_nonzero(seen)) * size
        covered = np.zeros(alloc.nbytes, bool)
        for size, seen in maps:
            covered[: seen.size * size] |= np.repeat(seen, size)
        if runs:
            starts, ends = _union_bytes(runs)
            depth = np.cumsum(np.bincount(starts, minlength=alloc.nbytes + 1)
                              - np.bincount(ends, minlength=alloc.nbytes + 1))
            covered |= depth[:-1] > 0
        return int(np.count_nonzero(covered))


def _concatenated(runs: list):
    """[(starts, ends, unit)] runs in units of `unit` bytes as one (starts, ends) in bytes."""
    return np.concatenate([s * unit for s, _, unit in runs]), np.concatenate([e * unit for _, e, unit in runs])


def _union_bytes(runs: list):
    """The union of [(starts, ends, unit)] runs in units of `unit` bytes, in bytes."""
    return union(*_concatenated(runs))


def offsets_of(form, position: int) -> np.ndarray:
    """The element offsets (int64) the program at `position` touched in an access, in any order."""
    if isinstance(form, Lanes):
        row = form.rows[min(position, form.rows.shape[0] - 1)]
        if form.mask is not None:
            row = row[form.mask[min(position, form.mask.shape[0] - 1)]]
        return row.astype(np.int64)
    mine = form.pos == position
    pieces = [np.arange(s, e, dtype=np.int64) for s, e in zip(form.starts[mine].tolist(), form.ends[mine].tolist())]
    return np.concatenate(pieces) if pieces else np.zeros(0, np.int64)


def _distinct(keys: np.ndarray, slots: int) -> np.ndarray:
    """The distinct values of `keys` (each in [0, slots)), in no particular order.

    Up to _SCRATCH_SLOTS slots: every key writes its lane number into an uninitialised scratch array, and the
    lanes that read their own number back are one per distinct key (whichever duplicate wrote last), with no
    sort. Past that, a sort."""
    if keys.size == 0:
        return keys
    if slots <= _SCRATCH_SLOTS and keys.size < 2**31:
        lane = np.arange(keys.size, dtype=np.int32)
        scratch = np.empty(slots, np.int32)
        scratch[keys] = lane
        return keys[scratch[keys] == lane]
    return distinct(keys)


def _as_bytes(form: Lanes, itemsize: int) -> Lanes:
    """A lane access in bytes: each element offset as the offsets of its `itemsize` bytes."""
    rows = form.rows.astype(np.int64)[:, :, None] * itemsize + np.arange(itemsize, dtype=np.int64)
    mask = None if form.mask is None else np.repeat(form.mask, itemsize, axis=1)
    return Lanes(rows.reshape(rows.shape[0], -1), mask)
