"""Traffic counters: `with minitriton.record() as rec:` gives one JSON-serialisable record per launch.

Per tensor argument and per program: elements and bytes loaded and stored, masked-off lanes, unique bytes
touched (so re-reads show), atomics; per program: `tl.dot` FLOPs. The numbers come from the lanes that
`tl.load`/`tl.store` used for the access itself (their tile form where the op has one), committed only when
a group of programs finishes.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from minitriton.memory.access import distinct
from minitriton.memory.events import Flops
from minitriton.observers.unique import TileChain, UniqueBytes, has_runs, lane_form, offsets_of, tile_runs
from minitriton.semantics.numerics import bf16_bits_to_f32
from minitriton.values.programs import kernel_line
from minitriton.values.running import RunningLaunch

MAX_VALUES = 65536  # elements of a tensor whose values a record with accesses=True keeps

_FIELDS = ("loaded_elements", "loaded_bytes", "masked_load_lanes", "stored_elements", "stored_bytes",
           "masked_store_lanes", "atomic_elements", "atomic_bytes", "masked_atomic_lanes")

_recorders: list = []


class Recording:
    """What `minitriton.record()` yields: `launches`, a list of per-launch records (plain dicts)."""

    def __init__(self):
        self.launches: list[dict] = []

    def add(self, record: dict, launch) -> None:
        """Keep one launch's record (`launch`: the runtime's Launch it describes)."""
        self.launches.append(record)

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
    """Context manager recording the traffic of every launch inside it; each launch record also has its
    "num_warps", "num_stages" and "model", its modelled GPU time (minitriton/perf/, docs/cost-model.md).

    `trace_programs`: program ids (tuples like (3,) or (1, 2), or linear indices) whose individual accesses
    are kept too: each launch record then has "trace", a list of {"program": [x, y, z], "tensors": {name:
    {"loaded": [...], "stored": [...], "atomic": [...]}}} with the element offsets (from the argument's
    pointer) that the program touched; what the sandbox's memory picture draws. It may also be a function
    of each launch's grid (x, y, z) giving that launch's programs to trace.

    `accesses=True` also keeps, for the traced programs, each access in the order the program made it: the
    launch record's "accesses" is a list of {"program": [x, y, z], "kind": "load"|"store"|"atomic", "tensor":
    name, "line": kernel line, "offsets": [element offsets of the active lanes], "masked": [offsets the
    masked-off lanes computed, which may lie outside the tensor]}, "values" holds {name: the elements of
    each tensor argument after the launch, flattened} for tensors of at most MAX_VALUES elements, and "source"
    the kernel's text: {"file": its file's name, "first_line": the line of its `def` (or decorator), "lines"}.

    A launch failing at a kernel error is recorded up to it: the programs before the failing one and that
    one's accesses before its error, with "error": {"type", "kind" (the diagnostic's), "program", "line"}; its
    trace ends at the failing program, whose failing access has "outside": [offsets of the lanes that raised].
    """

    def __init__(self, trace_programs=None, accesses: bool = False):
        self.trace_programs = trace_programs if callable(trace_programs) else list(trace_programs or [])
        self.accesses = bool(accesses)

    kind = Recording   # what `with` yields (a profiler's subclass keeps launches its own way)

    def __enter__(self) -> Recording:
        self.recording = self.kind()
        self.recording.trace_programs = self.trace_programs
        self.recording.accesses = self.accesses
        _recorders.append(self.recording)
        return self.recording

    def __exit__(self, *exc):
        _recorders.remove(self.recording)
        return False


def active() -> Recording | None:
    """The innermost active recording, or None."""
    return _recorders[-1] if _recorders else None


_KIND2 = {"load": "load", "store": "store", "atomic": "store"}  # atomics count as stores for unique bytes
_JOINED = "joined"  # the unique-bytes form of an access that a TileChain holds
# each kind's first row in a tensor's counts: its elements, bytes and masked-off lanes are three rows in a row
_FIRST_ROW = {"load": _FIELDS.index("loaded_elements"), "store": _FIELDS.index("stored_elements"),
              "atomic": _FIELDS.index("atomic_elements")}


class LaunchCounters:
    """Counter arrays for one launch, indexed by linear program id; an observer of memory events."""

    def __init__(self, n_programs: int, traced=(), accesses: bool = False):
        self.n = n_programs
        self.traced = {int(p): {} for p in traced}   # linear program id -> {(alloc index, kind): [offsets]}
        self.accesses = accesses and bool(self.traced)
        self.access_log: list = []       # (program, kind, alloc, line, offsets, masked) of committed groups
        self.pending_accesses: list = []  # ... of the running group
        self.tensors: dict = {}
        self.unique = UniqueBytes(n_programs)
        self.flops = np.zeros(n_programs, np.int64)
        self.pending: list = []  # the running group's summarised events
        self.last_lanes = None   # (index, mask, shape, form, active) of the group's latest lane access
        self.chains: dict = {}   # (alloc, kind2, itemsize) -> the group's latest TileChain there
        self.undone = ([], [])   # the events and accesses of the latest pass undone (a failing program's)
        self.error = None        # where the launch failed ("error" of the record)
        self.dot_tile = None     # (M, N, input type) of the launch's first tl.dot (perf/)
        self.pass_tiles = None   # [(alloc index, shape, bytes)] of the 2-D loads of the first pass (perf/)
        self.pending_tiles: list = []

    def _arrays(self, alloc) -> np.ndarray:
        """The counts of `alloc`: a row per field of _FIELDS, a column per program."""
        arrays = self.tensors.get(alloc.index)
        if arrays is None:
            arrays = self.tensors[alloc.index] = np.zeros((len(_FIELDS), self.n), np.int64)
        return arrays

    def on_event(self, group, event):
        """Summarise one event of a running group; it counts once the group commits: per program the active
        and masked-off lanes, and the elements touched as runs of consecutive elements or as lanes."""
        if isinstance(event, Flops):
            self.pending.append(("flops", event.per_program))
            self.dot_tile = self.dot_tile or event.tile
            return
        if event.kind == "load" and len(event.shape) >= 2 and self.pass_tiles is None:
            self.pending_tiles.append((event.alloc.index, event.shape, math.prod(event.shape) * event.elem.itemsize))
        g, shape, tile = group.size, event.shape, event.tile
        lanes = math.prod(shape)
        form = None
        if tile is not None and not any(isinstance(c, np.ndarray) for c in tile.counts) and has_runs(tile, shape):
            # the same rectangle in every program: joined to the previous access's tile when it continues it
            key = (event.alloc, _KIND2[event.kind], event.elem.itemsize)
            chain = self.chains.get(key)
            if chain is not None and chain.join(tile, shape):
                form = _JOINED
            else:
                form = self.chains[key] = TileChain(tile, shape)
        elif tile is not None:
            form = tile_runs(tile, shape, g)
        if form is not None:
            active = math.prod(tile.counts)  # an int, or a count per program
        else:
            idx, m = event.index, event.mask
            last = self.last_lanes
            # several tensors read or written at the same offsets under the same mask (x, y and out of a
            # vector add): one comparison instead of summarising the lanes again
            if (event.shared is None and last is not None and last[2] == shape and _same(last[0], idx)
                    and (last[1] is m or _same(last[1], m))):
                form, active = last[3], last[4]
            else:
                form, runs = lane_form(event, g)
                if runs is not None:
                    form, active = runs
                else:
                    active = lanes if m is None else np.count_nonzero(form.mask, axis=1)
                self.last_lanes = (idx, m, shape, form, active)
        masked = lanes - active
        if group.active is not None:   # programs that left a lockstep loop ran no access: none of their lanes
            masked = masked * group.active
        self.pending.append((event.kind, event.alloc, event.elem.itemsize, active, masked, form))
        if self.accesses:
            self._keep_accesses(group, event)

    def _keep_accesses(self, group, event):
        """Each traced program's lanes of one access, with the kernel line it came from."""
        line = kernel_line()
        alloc, g = event.alloc, group.size
        size, unit = event.elem.itemsize, alloc.dtype.itemsize
        for pid in self.traced:
            position = int(np.searchsorted(group.pids, pid))
            if position >= g or group.pids[position] != pid or group.active is not None and not group.active[position]:
                continue
            row = min(position, event.index.shape[0] - 1)
            index = np.broadcast_to(event.index[row], event.shape).reshape(-1)
            raw = np.broadcast_to(event.raw[min(position, event.raw.shape[0] - 1)], event.shape).reshape(-1)
            if event.mask is None:
                on = np.ones(index.shape, bool)
            else:
                on = np.broadcast_to(event.mask[min(position, event.mask.shape[0] - 1)], event.shape).reshape(-1)
            offsets = index[on].astype(np.int64) * size // unit - alloc.base_offset
            masked = raw[~on].astype(np.int64) * size // unit - alloc.base_offset
            self.pending_accesses.append((pid, event.kind, alloc, line, offsets, masked))

    def discard(self, group):
        """The group's pass is undone: forget its events (one program's are set aside: if its error ends the
        launch, `fail` counts them)."""
        self.undone = (self.pending, self.pending_accesses) if group.size == 1 else ([], [])
        self.pending = []
        self.last_lanes = None
        self.chains = {}
        self.pending_accesses = []
        self.pending_tiles = []

    def commit(self, group):
        """The group's pass finished: add its events to the launch's counts."""
        events, self.pending = self.pending, []
        if self.pass_tiles is None:
            self.pass_tiles = self.pending_tiles
        self.last_lanes = None
        self.chains = {}
        self.access_log.extend(self.pending_accesses)
        self.pending_accesses = []
        pids = group.pids
        if pids[-1] - pids[0] + 1 == len(pids):  # a run of programs: slices add in place faster
            pids = slice(int(pids[0]), int(pids[-1]) + 1)
        touched: dict = {}
        summed: dict = {}  # (alloc, kind) -> (active, bytes, masked lanes): ints, or counts per program
        for event in events:
            if event[0] == "flops":
                self.flops[pids] += event[1]
                continue
            kind, alloc, itemsize, active, masked, form = event
            values = (active, active * itemsize, masked)
            before = summed.get((alloc, kind))
            summed[(alloc, kind)] = values if before is None else tuple(b + v for b, v in zip(before, values))
            if form is _JOINED:  # counted with the tile chain it continues
                continue
            if isinstance(form, TileChain):
                form = form.runs(len(group.pids))
            touched.setdefault((alloc, _KIND2[kind]), []).append((itemsize, form))
            if self.traced:
                self._trace(group.pids, alloc, kind, itemsize, form)
        for (alloc, kind), values in summed.items():
            first = _FIRST_ROW[kind]
            if any(isinstance(v, np.ndarray) for v in values):
                column = np.array(np.broadcast_arrays(*values))
            else:
                column = np.array(values, np.int64)[:, None]
            self._arrays(alloc)[first:first + 3, pids] += column
        for (alloc, kind2), parts in touched.items():
            self.unique.add(group.pids, alloc, kind2, parts)

    def reset(self):
        """The launch replays from its first program (scheduler): what it counted so far is forgotten."""
        self.__init__(self.n, list(self.traced), self.accesses)

    def fail(self, group, error, lanes=None):
        """The launch stops at `error` in the only program of `group`, whose pass was undone: its events up to
        the error count, and `lanes` (kind, allocation, element type, offsets, mask or None, which lanes
        raised) of the failing access are kept as the access it attempted."""
        pid, record = int(group.pids[0]), error.diagnostic
        self.pending, self.pending_accesses = self.undone
        if lanes is not None and pid in self.traced:
            kind, alloc, elem, index, mask, bad = lanes
            index = index.reshape(-1).astype(np.int64) * elem.itemsize // alloc.dtype.itemsize - alloc.base_offset
            on, bad = (np.ones(index.shape, bool) if mask is None else mask.reshape(-1)), bad.reshape(-1)
            found = self.traced[pid]
            found.setdefault((alloc.index, kind), []).append(index[on & ~bad])
            found.setdefault((alloc.index, "outside"), []).append(index[bad])
            if self.accesses:
                self.pending_accesses.append((pid, kind, alloc, record.line, index[on & ~bad], index[~on],
                                              index[bad]))
        self.commit(group)
        self.error = {"type": type(error).__name__, "kind": record.kind, "line": record.line,
                      "program": list(group.pid_tuple(pid))}

    def _trace(self, pids, alloc, kind, itemsize, form):
        for pid, found in self.traced.items():
            position = int(np.searchsorted(pids, pid))
            if position < len(pids) and pids[position] == pid:
                offsets = offsets_of(form, position) * itemsize // alloc.dtype.itemsize - alloc.base_offset
                found.setdefault((alloc.index, kind), []).append(offsets)

    def report(self, launch: RunningLaunch) -> dict:
        """The JSON-serialisable launch record."""
        tensors = {}
        for alloc in launch.allocations:
            arrays = self._arrays(alloc)
            entry = {"dtype": str(alloc.dtype), "shape": list(alloc.array.shape),
                     "per_program": dict(zip(_FIELDS, arrays.tolist())),
                     "totals": dict(zip(_FIELDS, arrays.sum(axis=1).tolist()))}
            for kind2, name in (("load", "unique_loaded_bytes"), ("store", "unique_stored_bytes")):
                per_prog = self.unique.per_program.get((alloc.index, kind2))
                entry["per_program"][name] = [0] * self.n if per_prog is None else per_prog.tolist()
                entry["totals"][name] = self.unique.total(alloc, kind2)
            tensors[alloc.name] = entry
        trace = []
        last = launch.n if self.error is None else launch.linear_id(self.error["program"])
        for pid, seen in self.traced.items():
            if pid > last:   # after the failing program: it did not run
                continue
            per_tensor = {}
            for alloc in launch.allocations:
                entry = {}
                for kind, label in (("load", "loaded"), ("store", "stored"), ("atomic", "atomic"), ("outside", "outside")):
                    chunks = seen.get((alloc.index, kind))
                    if chunks or kind != "outside":
                        entry[label] = distinct(np.concatenate(chunks)).tolist() if chunks else []
                per_tensor[alloc.name] = entry
            trace.append({"program": list(launch.pid_tuple(pid)), "tensors": per_tensor})
        record = {
            "trace": trace,
            "kernel": launch.kernel.__name__,
            "grid": list(launch.grid),
            "num_programs": launch.n,
            "constexprs": {k: _jsonable(v) for k, v in launch.constexprs.items()},
            "tensors": tensors,
            "dot_flops": {"per_program": self.flops.tolist(), "total": int(self.flops.sum())},
            **({"error": self.error} if self.error else {}),
        }
        if self.accesses:
            order = sorted(range(len(self.access_log)), key=lambda i: self.access_log[i][0])  # stable: per program
            record["accesses"] = [
                {"program": list(launch.pid_tuple(a[0])), "kind": a[1], "tensor": a[2].name, "line": a[3],
                 "offsets": a[4].tolist(), "masked": a[5].tolist(), **({"outside": a[6].tolist()} if a[6:] else {})}
                for a in (self.access_log[i] for i in order)]
            record["values"] = {alloc.name: _values(alloc) for alloc in launch.allocations
                                if alloc.array.size <= MAX_VALUES}
            source = launch.kernel.source
            record["source"] = {"file": os.path.basename(source.file_name or ""), "first_line": source.first_line,
                                "lines": [line.rstrip("\n") for line in source.lines or []]}
        return record


def _same(a, b) -> bool:
    """Whether two arrays (or None) hold the same values in the same shape."""
    return a is not None and b is not None and a.shape == b.shape and bool((a == b).all())


def _values(alloc) -> list:
    """The elements of a tensor argument as Python numbers (bf16 as floats; NaN and inf as strings for JSON)."""
    array = alloc.array.reshape(-1)
    if alloc.dtype.is_bf16():
        array = bf16_bits_to_f32(array)
    values = array.tolist()
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        values = [v if math.isfinite(v) else str(v) for v in values]
    return values


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)
