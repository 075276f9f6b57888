"""Traffic counters: `with minitriton.record() as rec:` gives one JSON-serialisable record per launch.

Per tensor argument and per program: elements and bytes loaded and stored, masked-off lanes, unique bytes
touched (so re-reads show), atomics; per program: `tl.dot` FLOPs. The numbers come from the index arrays
that `tl.load`/`tl.store` used for the access itself, committed only when a group of programs finishes.
"""
from __future__ import annotations

import json

import numpy as np

from minitriton.memory.access import distinct
from minitriton.memory.events import Flops

_FIELDS = ("loaded_elements", "loaded_bytes", "masked_load_lanes", "stored_elements", "stored_bytes",
           "masked_store_lanes", "atomic_elements", "atomic_bytes", "masked_atomic_lanes")

_recorders: list = []


class Recording:
    """What `minitriton.record()` yields: `launches`, a list of per-launch records (plain dicts)."""

    def __init__(self):
        self.launches: list[dict] = []

    def __iter__(self):
        return iter(self.launches)

    def __len__(self):
        return len(self.launches)

    def __getitem__(self, i):
        return self.launches[i]

    @property
    def last(self) -> dict:
        """The most recent launch record."""
        if not self.launches:
            raise LookupError("no kernel was launched inside this minitriton.record() block")
        return self.launches[-1]

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.launches, **kwargs)


class record:
    """Context manager recording the traffic of every launch inside it.

    `trace_programs`: program ids (tuples like (3,) or (1, 2), or linear indices) whose individual accesses
    are kept too: each launch record then has "trace", a list of {"program": [x, y, z], "tensors": {name:
    {"loaded": [...], "stored": [...], "atomic": [...]}}} with the element offsets (from the argument's
    pointer) that the program touched; what the sandbox's memory picture draws.
    """

    def __init__(self, trace_programs=None):
        self.trace_programs = list(trace_programs or [])

    def __enter__(self) -> Recording:
        self.recording = Recording()
        self.recording.trace_programs = self.trace_programs
        _recorders.append(self.recording)
        return self.recording

    def __exit__(self, *exc):
        _recorders.remove(self.recording)
        return False


def active() -> Recording | None:
    """The innermost active recording, or None."""
    return _recorders[-1] if _recorders else None


_SCRATCH_SLOTS = 2**24  # largest programs x elements index space counted with a scatter instead of a sort
_KIND2 = {"load": "load", "store": "store", "atomic": "store"}  # atomics count as stores for unique bytes


class LaunchCounters:
    """Counter arrays for one launch, indexed by linear program id; an observer of memory events."""

    def __init__(self, n_programs: int, traced=()):
        self.n = n_programs
        self.traced = {int(p): {} for p in traced}   # linear program id -> {(alloc index, kind): [offsets]}
        self.tensors: dict = {}
        self.unique: dict = {}   # (alloc index, "load"/"store") -> distinct bytes per program
        self.seen: dict = {}     # (alloc index, "load"/"store", itemsize) -> elements touched by the launch
        self.flops = np.zeros(n_programs, np.int64)
        self.pending: list = []  # the running group's summarised events

    def _arrays(self, alloc):
        arrays = self.tensors.get(alloc.index)
        if arrays is None:
            arrays = {f: np.zeros(self.n, np.int64) for f in _FIELDS}
            self.tensors[alloc.index] = arrays
        return arrays

    def on_event(self, group, event):
        """Summarise one event of a running group; it counts once the group commits.

        Each active lane becomes a key `position in group * span + element`, so that one pass over the keys
        finds the distinct elements of every program at once."""
        if isinstance(event, Flops):
            self.pending.append(("flops", event.per_program))
            return
        g, idx, m, shape = group.size, event.index, event.mask, event.shape
        lanes = int(np.prod(shape, dtype=np.int64)) if shape else 1
        span = event.alloc.numel(event.elem)
        rows = np.broadcast_to(idx, (g,) + idx.shape[1:]).reshape(g, lanes)
        keys = rows + (np.arange(g, dtype=np.int64) * span)[:, None]
        if m is None:
            active = np.full(g, lanes, np.int64)
            keys = keys.reshape(-1)
        else:
            mm = np.broadcast_to(m, (g,) + m.shape[1:]).reshape(g, lanes)
            active = np.count_nonzero(mm, axis=1).astype(np.int64)
            keys = keys[mm]
        self.pending.append((event.kind, event.alloc, event.elem.itemsize, active, lanes - active, keys, span))

    def discard(self, group):
        """The group's pass is undone: forget its events."""
        self.pending = []

    def commit(self, group):
        """The group's pass finished: add its events to the launch's counts."""
        events, self.pending = self.pending, []
        pids = group.pids
        touched: dict = {}
        for event in events:
            if event[0] == "flops":
                self.flops[pids] += event[1]
                continue
            kind, alloc, itemsize, active, masked, keys, span = event
            a = self._arrays(alloc)
            prefix = {"load": "loaded", "store": "stored", "atomic": "atomic"}[kind]
            a[f"{prefix}_elements"][pids] += active
            a[f"{prefix}_bytes"][pids] += active * itemsize
            a[f"masked_{kind}_lanes"][pids] += masked
            touched.setdefault((alloc, _KIND2[kind]), []).append((itemsize, span, keys))
            if self.traced:
                self._trace(pids, alloc, kind, itemsize, span, keys)
        for (alloc, kind2), parts in touched.items():
            self._count_unique(pids, alloc, kind2, parts)

    def _count_unique(self, pids, alloc, kind2, parts):
        """Distinct bytes each program of the group touched in `alloc`, and the elements the launch touched."""
        sizes = {itemsize for itemsize, _, _ in parts}
        if len(sizes) == 1:
            itemsize, span = parts[0][0], parts[0][1]
            keys = parts[0][2] if len(parts) == 1 else np.concatenate([k for _, _, k in parts])
        else:  # one program read the array through pointers of several element sizes: count bytes
            itemsize, span = 1, alloc.nbytes
            keys = np.concatenate([_byte_keys(k, s, sp, span) for s, sp, k in parts])
        first = _distinct(keys, len(pids) * span)
        per_position = np.bincount(first // span, minlength=len(pids))
        unique = self.unique.get((alloc.index, kind2))
        if unique is None:
            unique = self.unique[(alloc.index, kind2)] = np.zeros(self.n, np.int64)
        unique[pids] += per_position * itemsize
        seen = self.seen.get((alloc.index, kind2, itemsize))
        if seen is None:
            seen = self.seen[(alloc.index, kind2, itemsize)] = np.zeros(span, bool)
        seen[first % span] = True

    def _trace(self, pids, alloc, kind, itemsize, span, keys):
        for pid, found in self.traced.items():
            position = int(np.searchsorted(pids, pid))
            if position < len(pids) and pids[position] == pid:
                mine = keys[(keys >= position * span) & (keys < (position + 1) * span)] - position * span
                offsets = mine * itemsize // alloc.dtype.itemsize - alloc.base_offset
                found.setdefault((alloc.index, kind), []).append(offsets)

    def _unique_total(self, alloc, kind2) -> int:
        """Distinct bytes of `alloc` the launch touched (element bitmaps, combined in bytes when sizes mix)."""
        maps = [(size, seen) for (index, k, size), seen in self.seen.items() if index == alloc.index and k == kind2]
        if not maps:
            return 0
        if len(maps) == 1:
            size, seen = maps[0]
            return int(np.count_nonzero(seen)) * size
        covered = np.zeros(alloc.nbytes, bool)
        for size, seen in maps:
            covered[: seen.size * size] |= np.repeat(seen, size)
        return int(np.count_nonzero(covered))

    def report(self, launch) -> dict:
        """The JSON-serialisable launch record."""
        tensors = {}
        for alloc in launch.allocations:
            arrays = self._arrays(alloc)
            entry = {"dtype": str(alloc.dtype), "shape": list(alloc.array.shape), "per_program": {}}
            for f in _FIELDS:
                entry["per_program"][f] = arrays[f].tolist()
            entry["totals"] = {f: int(arrays[f].sum()) for f in _FIELDS}
            for kind2, name in (("load", "unique_loaded_bytes"), ("store", "unique_stored_bytes")):
                per_prog = self.unique.get((alloc.index, kind2))
                entry["per_program"][name] = [0] * self.n if per_prog is None else per_prog.tolist()
                entry["totals"][name] = self._unique_total(alloc, kind2)
            tensors[alloc.name] = entry
        trace = []
        for pid, seen in self.traced.items():
            per_tensor = {}
            for alloc in launch.allocations:
                entry = {}
                for kind, label in (("load", "loaded"), ("store", "stored"), ("atomic", "atomic")):
                    chunks = seen.get((alloc.index, kind))
                    entry[label] = distinct(np.concatenate(chunks)).tolist() if chunks else []
                per_tensor[alloc.name] = entry
            trace.append({"program": list(launch.pid_tuple(pid)), "tensors": per_tensor})
        return {
            "trace": trace,
            "kernel": launch.kernel.__name__,
            "grid": list(launch.grid),
            "num_programs": launch.n,
            "constexprs": {k: _jsonable(v) for k, v in launch.constexprs.items()},
            "tensors": tensors,
            "dot_flops": {"per_program": self.flops.tolist(), "total": int(self.flops.sum())},
        }


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


def _byte_keys(keys, itemsize, span, byte_span):
    """Element keys (position * span + element) as the keys of each of their bytes (position * byte_span + byte)."""
    position, element = np.divmod(keys, span)
    first_byte = position * byte_span + element * itemsize
    return (first_byte[:, None] + np.arange(itemsize, dtype=np.int64)).reshape(-1)


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)
