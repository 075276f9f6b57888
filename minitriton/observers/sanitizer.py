"""Sanitizers: races between programs, order-dependent reads, reads of never-written memory, outputs a launch
left unwritten.

Switched on by `minitriton.set_options(sanitize=True)` (or MINITRITON_SANITIZE=1); `python -m minitriton run`,
the test kit and the sandbox turn it on. Per launch and per written or read allocation they keep shadow
arrays indexed by element:
* `writer`: the program that last stored the element in this launch (-1: none);
* `reader`: the program that last loaded it (-1: none), or -2 once several unordered programs have;
and, for tracked arrays (memory/initialization.py: `minitriton.testing.empty`, and `np.empty`, `torch.empty`
& co. under `run`), which elements hold a value and which program's store mask last left an element out.
Two accesses of different programs conflict unless one happens before the other through a lock: each
`tl.atomic_cas` / `tl.atomic_xchg` lane acquires the vector clock of its element and releases its program's
clock into it (Triton's default semantic, acq_rel; a CAS that fails still writes, as CUDA's does), a plain
store to such an element releases too, and every access carries its program's epoch (vector clocks, as in
FastTrack). Shadow updates are journaled with the group's stores, so a group that is split or replayed
leaves no trace, and the findings do not depend on the grouping.

While an allocation's accesses come as runs of consecutive elements and no lock atomic has run, its
`writer`/`reader` arrays are not built: a `Footprint` (observers/footprints.py) clears the accesses that
touch no element of another program's, and the arrays are built from its log when one may.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from minitriton import errors
from minitriton.memory.events import Access, lanes
from minitriton.memory.initialization import NO_PROGRAM, registry
from minitriton.values.running import RunningLaunch
from minitriton.observers.footprints import Footprint
from minitriton.observers.unique import union

_NONE, _SEVERAL = NO_PROGRAM, -2
_LOCK_OPS = ("cas", "xchg")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class UnwrittenOutputWarning(UserWarning):
    """A launch stored into a tracked array (made by `np.empty`, `torch.empty` & co.) and left elements of it
    that nothing ever wrote; `.diagnostic` holds the record."""

    def __init__(self, text: str, diagnostic):
        super().__init__(text)
        self.diagnostic = diagnostic


class LaunchSanitizer:
    """Shadow state of one launch."""

    def __init__(self, launch: RunningLaunch):
        self.launch = launch
        self.writer, self.reader = {}, {}
        self.saved = {}      # allocation index -> its written flags at the start of the launch, masked_by's undo log
        self.stored = set()  # indices of tracked allocations the launch stores into
        self.done = 0        # programs committed
        self.clocks = {}     # program -> its vector clock {program: epoch}, never changed in place
        self.locks = {}      # allocation index -> {element: the clock its lock atomics released}
        self.wepoch, self.repoch = {}, {}   # allocation index -> epoch of each element's writer / reader
        self.synced = False  # a lock atomic ran: clocks and epochs are kept from now on
        self.footprints = {}  # allocation index -> its Footprint, while it has no writer/reader arrays
        self.marked = {}     # allocation index -> the elements whose masked_by this launch set

    def _save(self, alloc):
        if alloc.shadow is not None and alloc.index not in self.saved:
            alloc.shadow.notice_host_writes(alloc.raw)  # what the host wrote before the launch holds a value
            written = alloc.shadow.written
            self.saved[alloc.index] = (True if written.all() else written.copy(), [])

    def _arrays(self, alloc, numel):
        w = self.writer.get(alloc.index)
        if w is None:  # int32: program ids fit (grids have fewer than 2**31 programs)
            w = self.writer[alloc.index] = np.full(numel, _NONE, np.int32)
            self.reader[alloc.index] = np.full(numel, _NONE, np.int32)
        return w, self.reader[alloc.index]

    def reset(self):
        """Forget everything (the launch is being replayed from its start)."""
        for table in (self.writer, self.reader, self.clocks, self.locks, self.wepoch, self.repoch):
            table.clear()
        self.synced, self.done = False, 0
        self.footprints.clear()
        self.marked.clear()
        for index, (written, undo) in self.saved.items():
            shadow = self.launch.allocations[index - 1].shadow
            shadow.written[...] = written
            for where, old in reversed(undo):
                shadow.masked_by[where] = old
            undo.clear()

    def commit(self, group):
        """Shadow arrays were updated as accesses happened; after the launch's last program, report the tracked
        outputs it left partly unwritten."""
        self.done += group.size
        for footprint in self.footprints.values():
            footprint.commit()
        if self.done == self.launch.n:
            self.report_unwritten()

    def discard(self, group):
        """The group's journal restores the shadow arrays with its stores; footprints drop its accesses."""
        for footprint in self.footprints.values():
            footprint.discard()

    def on_event(self, group, event):
        """Check and record one memory op of the group (`memory.events.Access`); other events are ignored."""
        if not isinstance(event, Access):
            return
        alloc, elem = event.alloc, event.elem
        cleared = event.kind != "atomic" and self._cleared(group, event)
        if cleared and (alloc.shadow is None or self._initialised(group, event)):
            return
        idx, prog, _, _ = lanes(group.pids, event.index, event.mask)
        if event.kind == "load":
            self.on_load(group, alloc, _units(idx, elem, alloc), prog, None, cleared)
        elif event.kind == "store":
            masked_idx = masked_prog = None
            if event.mask is not None:
                _, _, masked_idx, masked_prog = lanes(group.pids, event.raw, event.mask, group.active)
                masked_idx = _units(masked_idx, elem, alloc)
            self.on_store(group, alloc, _units(idx, elem, alloc), prog, masked_idx, masked_prog, cleared)
        else:
            self.on_atomic(group, alloc, _units(idx, elem, alloc), prog, event.op)

    def _cleared(self, group, event) -> bool:
        """Whether the allocation's footprint cleared a load or store of conflicts and recorded it; when it
        cannot, its accesses so far are replayed into writer/reader arrays, which check this one."""
        alloc = event.alloc
        footprint = self.footprints.get(alloc.index)
        if not self.synced and alloc.index not in self.writer and event.elem.itemsize == alloc.dtype.itemsize:
            if footprint is None:
                footprint = self.footprints[alloc.index] = Footprint(alloc.numel(alloc.dtype))
            if footprint.access(group, event):
                return True
        if footprint is not None:
            self._replay(group, alloc)
        return False

    def _initialised(self, group, event) -> bool:
        """For a cleared access to a tracked allocation, by the runs it covers: whether a load reads only
        written elements, or the marks of a store (written; the program whose mask left each masked-off lane
        out). False, with nothing changed, when the lanes must tell: a load of an unwritten element (they name
        it), lanes spread thin, a store's masked-off lanes of no simple form."""
        alloc, shadow = event.alloc, event.alloc.shadow
        runs = self.footprints[alloc.index].log[-1].as_runs()
        if runs is None:
            return False
        _, starts, ends = runs
        masked = None
        if event.kind == "store" and not event.lanes_only:
            tile, shape = event.tile, event.shape
            if any(isinstance(c, np.ndarray) for c in tile.counts) or tile.counts != shape:
                if len(shape) != 1 or tile.strides[0] != 1:
                    return False
                first = np.broadcast_to(tile.origins + tile.counts[0], group.pids.shape)  # per program, in order
                count = (shape[0] - np.broadcast_to(tile.counts[0], group.pids.shape)).astype(np.intp, copy=False)
                if group.active is not None:  # programs that left a lockstep loop leave no lane out
                    count = count * group.active
                masked = (np.arange(int(count.sum())) + np.repeat(first - (np.cumsum(count) - count), count),
                          np.repeat(group.pids, count))
        elif event.kind == "store" and event.mask is not None:
            masked = lanes(group.pids, event.raw, event.mask, group.active)[2:]
        self._save(alloc)
        if starts.size:
            starts, ends = union(starts, ends)
            low, high = int(starts[0]), int(ends[-1])
            if high - low > 4 * int((ends - starts).sum()):
                return False
            # the span's elements the runs cover: off for each gap, on for each run
            steps = np.empty(2 * starts.size, np.intp)  # (np.repeat takes only np.intp counts)
            steps[0::2], steps[1::2] = starts - np.append(low, ends[:-1]), ends - starts
            cover = np.repeat(np.resize(np.array([False, True]), steps.size), steps)
            part = shadow.written[low:high]
            if event.kind == "load":
                return not (cover & ~part).any()
            self.stored.add(alloc.index)
            self._journal(group, shadow.written, slice(low, high), part)
            part |= cover
        if masked is not None:
            self._masked_by(group, alloc, *masked)
        return True

    def _replay(self, group, alloc):
        """Build the writer/reader arrays of an allocation from its footprint's log (the running group's
        accesses journaled with it)."""
        footprint = self.footprints.pop(alloc.index)
        w, r = self._arrays(alloc, alloc.numel(alloc.dtype))
        committed = footprint.saved[0]
        for i, entry in enumerate(footprint.log):
            idx, prog = entry.lanes()
            at = group if i >= committed else None
            if entry.kind == "load":
                self._read(at, alloc, r, idx, prog)
            else:
                self._journal(at, w, idx, w[idx])
                w[idx] = prog

    def on_load(self, group, alloc, idx, prog, shape, cleared=False):
        """Check and record loads of elements `idx` (alloc element units) by linear programs `prog`
        (`cleared`: the footprint checked and recorded them, the initialisation is left)."""
        if idx.size == 0:
            return
        if not cleared:
            w, r = self._arrays(alloc, alloc.numel(alloc.dtype))
            self._conflict(group, "order", alloc, idx, prog, w[idx], self.wepoch)
        shadow = alloc.shadow
        if shadow is not None:
            self._save(alloc)
            unset = ~shadow.written[idx]
            if unset.any():
                self._raise(group, prog[unset], "uninit", alloc, idx[unset])
        if not cleared:
            self._read(group, alloc, r, idx, prog)

    def _read(self, group, alloc, r, idx, prog):
        """Record loads of elements `idx` by programs `prog` in the reader array `r`."""
        old = r[idx]
        # One reader is remembered per element, or "several" once two readers are unordered (two programs in
        # one op are, as when they run one after the other): enough to catch a later write by any other program.
        other = (old >= 0) & (old != prog)
        later = other & ~self._unordered(other, alloc, idx, prog, old, self.repoch)  # ordered after that reader
        new = np.where((old == _NONE) | (old == prog) | later, prog, _SEVERAL).astype(np.int32, copy=False)
        self._journal(group, r, idx, old)
        r[idx] = new
        shared = r[idx] != new  # lanes of one element that disagree: several programs read it in this op
        if shared.any():
            r[idx[shared]] = _SEVERAL
        self._stamp(group, self.repoch, alloc, idx, prog)

    def on_store(self, group, alloc, idx, prog, masked_idx=None, masked_prog=None, cleared=False):
        """Check and record stores (no atomics) of elements `idx` by programs `prog` (`cleared`: see on_load)."""
        if idx.size and not cleared:
            w, r = self._arrays(alloc, alloc.numel(alloc.dtype))
            writers = w[idx]
            self._conflict(group, "race", alloc, idx, prog, writers, self.wepoch)
            self._conflict(group, "order", alloc, idx, prog, r[idx], self.repoch, reader_first=True)
            self._journal(group, w, idx, writers)
            w[idx] = prog
            # Two programs writing one element in this very op: the scatter kept only one of them.
            lost = w[idx] != prog
            if lost.any():
                k = int(np.argmax(lost))
                self._raise(group, np.array([int(w[idx[k]])]), "race", alloc, idx[lost], other=int(prog[k]))
            self._stamp(group, self.wepoch, alloc, idx, prog)
            if alloc.index in self.locks:  # a plain store to a lock releases it
                self._release(group, alloc, idx, prog)
        shadow = alloc.shadow
        if shadow is not None:
            self._save(alloc)
            if idx.size:
                self.stored.add(alloc.index)
                self._journal(group, shadow.written, idx, shadow.written[idx])
                shadow.written[idx] = True
            if masked_idx is not None:
                self._masked_by(group, alloc, masked_idx, masked_prog)

    def _masked_by(self, group, alloc, masked_idx, masked_prog):
        """Record the programs whose store masks left out the elements `masked_idx` that hold no value (only
        theirs are ever reported); the launch keeps the old values too (few), for a replay from its start."""
        if masked_idx.size:
            masked_by = alloc.shadow.masked_by
            inside = (masked_idx >= 0) & (masked_idx < masked_by.size)
            inside[inside] = ~alloc.shadow.written[masked_idx[inside]]
            mi, mp = masked_idx[inside], masked_prog[inside]
            # the last program in launch order keeps the mark, however the programs were grouped (a lockstep
            # loop marks for a later program before an earlier one's next iteration)
            marked = self.marked.setdefault(alloc.index, np.zeros(masked_by.size, bool))
            later = ~marked[mi] | (mp > masked_by[mi])
            mi, mp = mi[later], mp[later]
            old = masked_by[mi]
            self._journal(group, masked_by, mi, old)
            self._journal(group, marked, mi, marked[mi])
            self.saved[alloc.index][1].append((mi, old))
            masked_by[mi] = mp
            marked[mi] = True

    def on_atomic(self, group, alloc, idx, prog=None, op=None):
        """Atomics may hit one element from many programs. They read memory (all but `tl.atomic_xchg`) and
        count as writes for initialisation; `tl.atomic_cas` / `tl.atomic_xchg` (and any atomic on an element
        they used: a lock) order their program with the earlier atomics on their element."""
        if idx.size and (op in _LOCK_OPS or alloc.index in self.locks):
            for index in list(self.footprints):  # epochs are kept from now on: every access is checked by element
                self._replay(group, self.launch.allocations[index - 1])
            self._lock(group, alloc, idx, prog, op)
        shadow = alloc.shadow
        if shadow is not None and idx.size:
            self._save(alloc)
            unset = ~shadow.written[idx]
            if op != "xchg" and unset.any():  # the others combine their value with what memory holds
                self._raise(group, prog[unset], "uninit", alloc, idx[unset], call=f"atomic_{op}")
            self._journal(group, shadow.written, idx, shadow.written[idx])
            shadow.written[idx] = True

    # ------------------------------------------------------------ happens-before through lock atomics

    def _clock(self, program: int) -> dict:
        return self.clocks.get(program) or {}

    def _set(self, group, table: dict, key, value):
        if group.journal is not None:
            group.journal.append((table, key, table.get(key)))
        table[key] = value

    def _lock(self, group, alloc, idx, prog, op):
        """Each lane, in the order the atomics apply (lane order): acquire its element's clock, release into it.
        Other atomics (a counter's atomic_add) order nothing: clocks joined at every one would cost O(programs²)."""
        held = self.locks.setdefault(alloc.index, {})
        if op not in _LOCK_OPS:
            keep = np.array([i in held for i in idx.tolist()])
            if not keep.any():
                return
            idx, prog = idx[keep], prog[keep]
        self.synced = True
        for i, p in zip(idx.tolist(), prog.tolist()):
            clock = _join(self._clock(p), held.get(i))
            clock.setdefault(p, 0)  # what it releases covers its own accesses so far (a flag published once)
            self._set(group, self.clocks, p, clock)
            self._set(group, held, i, clock)
        self._tick(group, prog)

    def _release(self, group, alloc, idx, prog):
        held = self.locks[alloc.index]
        hit = [(i, p) for i, p in zip(idx.tolist(), prog.tolist()) if i in held]
        for i, p in hit:
            self._set(group, held, i, _join(held.get(i), self._clock(p)))
        if hit:
            self._tick(group, np.array([p for _, p in hit]))

    def _tick(self, group, prog):
        """A release ends an epoch: the programs' later accesses are not covered by what they released."""
        for p in np.unique(prog).tolist():
            clock = dict(self._clock(p))
            clock[p] = clock.get(p, 0) + 1
            self._set(group, self.clocks, p, clock)

    def _epochs(self, prog):
        """Each lane's program's current epoch."""
        programs, inverse = np.unique(prog, return_inverse=True)
        return np.array([self._clock(p).get(p, 0) for p in programs.tolist()], np.int64)[inverse.reshape(-1)]

    def _stamp(self, group, epochs: dict, alloc, idx, prog):
        """Record the epoch of the programs' accesses (all epochs are 0 until a lock atomic runs)."""
        if self.synced and idx.size:
            table = epochs.get(alloc.index)
            if table is None:
                table = epochs[alloc.index] = np.zeros(alloc.numel(alloc.dtype), np.int64)
            self._journal(group, table, idx, table[idx])
            table[idx] = self._epochs(prog)

    def _unordered(self, clash, alloc, idx, prog, others, epochs: dict):
        """`clash` without the lanes whose earlier access (by program `others`, at the epoch `epochs` holds)
        happens before this program's access; "several" earlier programs stay unordered."""
        if not self.synced or not clash.any():
            return clash
        table = epochs.get(alloc.index)
        lanes_ = np.flatnonzero(clash)
        at = table[idx[lanes_]] if table is not None else np.zeros(lanes_.size, np.int64)
        span = self.launch.n + 2   # (program, earlier program) pairs as one int64 key (earlier >= -2)
        keys, inverse = np.unique(prog[lanes_].astype(np.int64) * span + others[lanes_] + 2, return_inverse=True)
        seen = np.array([self._clock(k // span).get(k % span - 2, -1) for k in keys.tolist()], np.int64)
        out = clash.copy()
        out[lanes_] = at > seen[inverse.reshape(-1)]
        return out

    # ------------------------------------------------------------ reports

    def report_unwritten(self):
        """Warn about each array made by `np.empty`, `torch.empty` & co. that this launch stored into and
        left partly unwritten (by any kernel or the host): its reader would get the fill, not a value."""
        for index in sorted(self.stored):
            alloc = self.launch.allocations[index - 1]
            shadow = alloc.shadow
            if not shadow.watched:
                continue
            missing = _in_view(alloc, np.flatnonzero(~shadow.written))
            if missing.size:
                what, why, record = _unwritten(shadow, missing, f"`{alloc.name}`", self.launch.grid)
                text = f"kernel `{self.launch.kernel.__name__}` left {what} unwritten: {why}"
                warnings.warn(UnwrittenOutputWarning(text, record), stacklevel=_outside_level())

    @staticmethod
    def _journal(group, array, idx, old):
        if group is not None and group.journal is not None:
            group.journal.append((array, idx, np.array(old, copy=True)))

    def _conflict(self, group, kind, alloc, idx, prog, earlier, epochs, reader_first=False):
        """Raise when an earlier access of an element (by program `earlier`, per lane) is another program's and
        not ordered before this one."""
        clash = self._unordered((earlier != _NONE) & (earlier != prog), alloc, idx, prog, earlier, epochs)
        if clash.any():
            k = int(np.argmax(clash))
            self._raise(group, prog[clash], kind, alloc, idx[clash], other=int(earlier[k]), reader_first=reader_first)

    def _raise(self, group, progs, kind, alloc, idx, other=None, reader_first=False, call="load"):
        launch = self.launch
        pos = np.searchsorted(group.pids, np.unique(progs))
        fields = {"tensor": alloc.name, "offsets": idx - alloc.base_offset}
        if kind == "race":
            record = errors.diagnostic("race", other=launch.pid_tuple(other), **fields)
        elif kind == "order":
            several = other < 0
            kind = ("order_write" if reader_first else "order_read") + ("_several" if several else "")
            record = errors.diagnostic(kind, other=None if several else launch.pid_tuple(other), **fields)
        else:
            made = getattr(alloc.shadow, "made", None) or "minitriton.testing.empty"
            record = errors.diagnostic("uninitialized", made=made, call=call, **fields)
        raise errors.KernelRuntimeError(errors.SanitizerError, record, pos)


def _in_view(alloc, offsets):
    """The element offsets (into the allocation's span) that belong to the argument itself: the span of a
    strided view holds other elements too."""
    a = alloc.array
    if a.size == alloc.numel(alloc.dtype):
        return offsets
    mine = np.int64(alloc.base_offset)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides)):
        mine = np.expand_dims(mine, -1) + np.arange(n, dtype=np.int64) * (stride // a.itemsize)
    return np.intersect1d(offsets, mine)


def _outside_level() -> int:
    """The `stacklevel` of the first frame outside minitriton: the launch in the user's code."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _join(a, b) -> dict:
    """The element-wise maximum of two vector clocks (None: empty)."""
    out = dict(a or {})
    for p, e in (b or {}).items():
        if out.get(p, -1) < e:
            out[p] = e
    return out


def unwritten_report(array, name: str = "out", launch_grid=None) -> str | None:
    """None when every element of a tracked array was written, else a message naming the gaps and the
    programs whose store masks excluded them ('elements 98 304–98 431 of out were never written: program
    96's store mask excluded them')."""
    shadow = registry.lookup(array)
    if shadow is None:
        return None
    missing = np.nonzero(~shadow.written)[0]
    if missing.size == 0:
        return None
    what, why, _ = _unwritten(shadow, missing, name, launch_grid)
    return f"{what} were never written: {why}"


def _unwritten(shadow, missing, name: str, grid) -> tuple:
    """(which elements, why, the record) for the elements `missing` of a tracked array that hold no value."""
    what = f"elements {errors.format_ranges(missing)} of {name}" + (f" (made by {shadow.made})" if shadow.made else "")
    masked = shadow.masked_by[missing]
    progs = sorted(set(masked[masked >= 0].tolist()))
    why = "no program stored there (check the grid size and the offsets)"
    if progs:
        names = ", ".join(_program_text(p, grid) for p in progs[:3])
        more = "" if len(progs) <= 3 else f" and {len(progs) - 3} more"
        some = "them" if (masked >= 0).all() else f"{errors.format_ranges(missing[masked >= 0])} of them"
        why = (f"program {names}'s store mask excluded {some}" if len(progs) == 1 else
               f"the store masks of programs {names}{more} excluded {some}") + \
            ("" if some == "them" else "; no program stored at the others (check the grid size and the offsets)")
    record = errors.diagnostic("unwritten", tensor=name.strip("`"), offsets=missing, made=shadow.made,
                               masked_by=[errors.program_id(p, grid or (1,)) for p in progs])
    return what, why, record


def _program_text(linear: int, grid) -> str:
    """`96` on a 1-D grid (or none known), `(x, y)` / `(x, y, z)` otherwise."""
    pid = errors.program_id(linear, grid or (1,))
    return str(pid[0]) if len(pid) == 1 else str(pid)


def _units(idx, elem, alloc):
    """Indices in the pointer's element type as indices in the allocation's own element type."""
    if elem.itemsize == alloc.dtype.itemsize:
        return idx
    return idx.astype(np.int64) * elem.itemsize // alloc.dtype.itemsize
