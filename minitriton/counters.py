"""Traffic counters: `with minitriton.record() as rec:` gives one JSON-serialisable record per launch.

Per tensor argument and per program: elements and bytes loaded and stored, masked-off lanes, unique bytes
touched (so re-reads show), atomics; per program: `tl.dot` FLOPs. The numbers come from the index arrays
that `tl.load`/`tl.store` used for the access itself, committed only when a group of programs finishes.
"""
from __future__ import annotations

import json

import numpy as np

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


class LaunchCounters:
    """Counter arrays for one launch, indexed by linear program id."""

    def __init__(self, n_programs: int, traced=()):
        self.n = n_programs
        self.traced = {int(p): {} for p in traced}   # linear program id -> {(alloc index, kind): [offsets]}
        self.tensors: dict = {}
        self.keys: dict = {}
        self.flops = np.zeros(n_programs, np.int64)

    def _arrays(self, alloc):
        arrays = self.tensors.get(alloc.index)
        if arrays is None:
            arrays = {f: np.zeros(self.n, np.int64) for f in _FIELDS}
            self.tensors[alloc.index] = arrays
            self.keys[alloc.index] = {"load": [], "store": []}
        return arrays

    def commit(self, pids: np.ndarray, events: list):
        """Add a finished group's events (`pids` maps group positions to program ids)."""
        for event in events:
            if event[0] == "flops":
                self.flops[pids] += event[1]
                continue
            kind, alloc, itemsize, active, masked, prog, idx = event
            a = self._arrays(alloc)
            prefix = {"load": "loaded", "store": "stored", "atomic": "atomic"}[kind]
            a[f"{prefix}_elements"][pids] += active
            a[f"{prefix}_bytes"][pids] += active * itemsize
            mask_key = {"load": "masked_load_lanes", "store": "masked_store_lanes", "atomic": "masked_atomic_lanes"}
            a[mask_key[kind]][pids] += masked
            byte_start = idx.astype(np.int64) * itemsize
            keys = self.keys[alloc.index]["store" if kind != "load" else "load"]
            keys.append((pids[prog], byte_start, itemsize))
            for pid, seen in self.traced.items():
                hit = pids[prog] == pid
                if hit.any():
                    offsets = byte_start[hit] // alloc.dtype.itemsize - alloc.base_offset
                    seen.setdefault((alloc.index, kind), []).append(offsets)

    def report(self, launch) -> dict:
        """The JSON-serialisable launch record."""
        tensors = {}
        for alloc in launch.allocations:
            arrays = self._arrays(alloc)
            entry = {"dtype": str(alloc.dtype), "shape": list(alloc.array.shape), "per_program": {}}
            for f in _FIELDS:
                entry["per_program"][f] = arrays[f].tolist()
            entry["totals"] = {f: int(arrays[f].sum()) for f in _FIELDS}
            for kind, name in (("load", "unique_loaded_bytes"), ("store", "unique_stored_bytes")):
                per_prog, total = _unique_bytes(self.keys[alloc.index][kind], self.n)
                entry["per_program"][name] = per_prog.tolist()
                entry["totals"][name] = total
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


def _unique_bytes(chunks, n_programs):
    """Per-program and launch-wide counts of distinct bytes touched, from (program, byte, size) chunks."""
    if not chunks:
        return np.zeros(n_programs, np.int64), 0
    per_prog = np.zeros(n_programs, np.int64)
    progs, starts, sizes = [], [], []
    for prog, start, size in chunks:
        progs.append(prog)
        starts.append(start)
        sizes.append(np.full(start.shape, size, np.int64))
    prog = np.concatenate(progs).astype(np.int64)
    start = np.concatenate(starts)
    size = np.concatenate(sizes)
    if size.size == 0:  # every access was masked off
        return per_prog, 0
    if size.min() == size.max():  # one element size: count distinct elements
        s = int(size[0])
        span = int(start.max()) // s + 1 if start.size else 1
        keys = prog * span + start // s
        uniq = distinct(keys)
        per_prog += np.bincount(uniq // span, minlength=n_programs) * s
        total = int(distinct(start).size) * s
    else:  # mixed element sizes through casts: expand to bytes
        size = size.astype(np.intp)  # np.repeat takes np.intp counts only (int32 on wasm32)
        byte = np.repeat(start, size) + _ranges(size)
        prog_b = np.repeat(prog, size)
        span = int(byte.max()) + 1
        uniq = distinct(prog_b * span + byte)
        per_prog += np.bincount(uniq // span, minlength=n_programs)
        total = int(distinct(byte).size)
    return per_prog, total


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort, much faster than np.unique's hashing on millions of int64)."""
    s = np.sort(values, kind="stable" if values.size < 64 else "quicksort")
    if s.size == 0:
        return s
    keep = np.empty(s.shape, bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _ranges(sizes):
    offsets = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.arange(int(sizes.sum()), dtype=np.int64) - offsets


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)
