"""The sanitizer's state of an allocation as runs of consecutive elements, while its accesses come in that form.

Tiles and lane accesses whose rows are consecutive elements (observers/unique.py) touch a few runs per
program: checking them against the runs earlier programs touched costs a sort of runs, not a pass over every
element. A `Footprint` keeps, for one allocation in one launch, the elements written and the elements touched
(written or read) as sorted disjoint segments, each owned by one program or by several, and the accesses in
order. It decides only that an access can raise no finding; when it cannot tell (an overlap with another
program's segment, a scatter of no run shape), the sanitizer replays the accesses into its per-element
arrays (`replay`) and checks that access element by element, so findings have one definition.
"""
from __future__ import annotations

import math

import numpy as np

from minitriton.memory.events import lanes
from minitriton.memory.initialization import NO_PROGRAM
from minitriton.observers.unique import lane_form, tile_runs

SEVERAL = -2       # a segment several programs touched
_SCATTER_RUNS = 4096  # largest lane access of no run shape taken as one run per lane
_HELD_LANES = 2**20   # lane accesses logged as events (not yet runs) may hold this many lanes, or the array's size
_LOGGED = 2**14       # accesses a footprint logs; past them the allocation is checked element by element
_EMPTY = np.zeros(0, np.int64)


class Segments:
    """Sorted disjoint half-open segments [starts, ends) and the program owning each (SEVERAL: several)."""

    __slots__ = ("starts", "ends", "owners")

    def __init__(self, starts=_EMPTY, ends=_EMPTY, owners=_EMPTY):
        self.starts, self.ends, self.owners = starts, ends, owners

    def foreign(self, prog, starts, ends) -> bool:
        """Whether a run [starts, ends) of program `prog` overlaps a segment another program (or several) owns."""
        if self.starts.size == 0 or starts.size == 0:
            return False
        first = np.searchsorted(self.ends, starts, "right")   # the first segment ending after the run starts
        stop = np.searchsorted(self.starts, ends, "left")     # past the last one starting before it ends
        hit = stop > first
        if not hit.any():
            return False
        first, stop, prog = first[hit], stop[hit], prog[hit]
        owners = self.owners
        if (owners[first] != prog).any():
            return True
        changes = np.zeros(owners.size, np.int64)
        np.cumsum(owners[1:] != owners[:-1], out=changes[1:])
        return bool((changes[stop - 1] != changes[first]).any())

    def merged(self, prog, starts, ends) -> Segments:
        """These segments and the runs, overlapping ones joined into one segment (owned by SEVERAL when
        programs differ)."""
        if starts.size == 0:
            return self
        if self.starts.size == 0 or starts[0] >= self.ends[-1]:
            if starts.size < 2 or (starts[1:] >= ends[:-1]).all():  # after these, in order: appended
                return Segments(np.concatenate((self.starts, starts)), np.concatenate((self.ends, ends)),
                                np.concatenate((self.owners, prog)))
        s = np.concatenate((self.starts, starts))
        e = np.concatenate((self.ends, ends))
        p = np.concatenate((self.owners, prog))
        if not (s[1:] >= s[:-1]).all():
            order = np.argsort(s, kind="stable")
            s, e, p = s[order], e[order], p[order]
        reach = np.maximum.accumulate(e)
        new = np.ones(s.size, bool)
        np.greater_equal(s[1:], reach[:-1], out=new[1:])
        first = np.flatnonzero(new)
        if first.size == s.size:
            return Segments(s, e, p)
        low, high = np.minimum.reduceat(p, first), np.maximum.reduceat(p, first)
        last = np.append(first[1:] - 1, s.size - 1)
        return Segments(s[first], reach[last], np.where(low == high, low, SEVERAL))


class Entry:
    """One access of a group to the allocation: its kind, and its lanes as runs (program, start, end) in
    program order, or the event itself until they are needed."""

    __slots__ = ("kind", "pids", "event", "runs")

    def __init__(self, kind, pids, event):
        self.kind, self.pids, self.event, self.runs = kind, pids, event, None

    def as_runs(self):
        """The runs (None when the access has no run shape); the event is dropped once they are known."""
        if self.runs is None and self.event is not None:
            self.runs = runs_of(self.event, self.pids)
            if self.runs is not None:
                self.event = None
        return self.runs

    def lanes(self):
        """(element offsets, programs) of the active lanes, lane by lane in program order."""
        if self.runs is None:
            event = self.event
            return lanes(self.pids, event.index, event.mask)[:2]
        prog, starts, ends = self.runs
        lengths = (ends - starts).astype(np.intp, copy=False)  # (np.repeat takes only np.intp counts)
        shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        return np.arange(int(lengths.sum()), dtype=np.int64) + shift, np.repeat(prog, lengths)


def runs_of(event, pids):
    """(programs, starts, ends) of an access's active lanes as runs of consecutive elements, empty runs
    left out, in program order; None when its lanes have no such form."""
    g, shape = len(pids), event.shape
    tile = event.tile
    if tile is not None:
        found = tile_runs(tile, shape, g)
    else:
        found = lane_form(event, g)[1]
        found = None if found is None else found[0]
    if found is None:
        if g * math.prod(shape) > _SCATTER_RUNS:
            return None
        idx, prog = lanes(pids, event.index, event.mask)[:2]
        idx = idx.astype(np.int64)
        return prog.astype(np.int64), idx, idx + 1
    prog, starts, ends = pids[found.pos], found.starts, found.ends
    keep = ends > starts
    if not keep.all():
        prog, starts, ends = prog[keep], starts[keep], ends[keep]
    return prog, starts, ends


class Footprint:
    """What the programs of a launch did to one allocation so far (see the module docstring). `log`: every
    access in order; `folded`: how many of them `written` and `touched` hold (the others wait as events while
    nothing needs them: no other program has touched the allocation, or nothing stored into it yet);
    `owner`: the one program that touched it (SEVERAL: more; NO_PROGRAM: none yet)."""

    def __init__(self, numel: int):
        self.written = self.touched = Segments()
        self.log: list = []
        self.folded = 0
        self.owner, self.stored = NO_PROGRAM, False
        self.held = 0   # lanes of logged lane accesses not yet turned into runs (they hold arrays that large)
        self.budget = max(numel, _HELD_LANES)
        self.commit()

    def access(self, group, event) -> bool:
        """Log a load or store; False when it may touch an element another program touched (a store), or wrote
        (a load): the caller checks it element by element."""
        pids, kind = group.pids, event.kind
        if len(self.log) >= _LOGGED:
            return False
        entry = Entry(kind, pids, event)
        alone = len(pids) == 1 and self.owner in (NO_PROGRAM, pids[0])
        if not alone and (kind == "store" or self.stored):
            runs = entry.as_runs()
            if runs is None or not self._fold():
                return False
            if kind == "load" and self.written.foreign(*runs):
                return False
            # a store: two of its programs writing one element (a segment of several) or an element touched before
            if kind == "store" and ((Segments().merged(*runs).owners == SEVERAL).any() or self.touched.foreign(*runs)):
                return False
        elif event.lanes_only:
            self.held += len(pids) * math.prod(event.shape)
        self.log.append(entry)
        if self.held > self.budget and not self._fold():
            self.log.pop()
            return False
        self.owner = pids[0] if alone else SEVERAL
        self.stored = self.stored or kind == "store"
        return True

    def _fold(self) -> bool:
        """Take the waiting accesses into `written` and `touched`; False when one has no run form."""
        runs = [entry.as_runs() for entry in self.log[self.folded:]]
        if any(r is None for r in runs):
            return False
        stores = [r for r, entry in zip(runs, self.log[self.folded:]) if entry.kind == "store"]
        written = self.written.merged(*map(np.concatenate, zip(*stores))) if stores else self.written
        if len(stores) == len(runs) and self.touched is self.written:  # no loads yet: the same segments
            self.touched = written
        elif runs:
            self.touched = self.touched.merged(*map(np.concatenate, zip(*runs)))
        self.written, self.folded, self.held = written, len(self.log), 0
        return True

    def commit(self):
        self.saved = (len(self.log), self.written, self.touched, self.folded, self.owner, self.stored)

    def discard(self):
        n, self.written, self.touched, self.folded, self.owner, self.stored = self.saved
        del self.log[n:]
