"""Sanitizers: races between programs, order-dependent reads, reads of never-written memory.

Switched on by `minitriton.set_options(sanitize=True)` (or MINITRITON_SANITIZE=1); the test kit and the sandbox
turn it on. Per launch and per written or read allocation they keep shadow arrays indexed by element:
* `writer`: the program that last stored the element in this launch (-1: none);
* `reader`: the program that first loaded it (-1: none), or -2 once several programs have;
and, for arrays made by `minitriton.testing.empty` (registered here), which elements hold a value and which
program's store mask last left an element out. Shadow updates are journaled with the group's stores, so a
group that is split or replayed leaves no trace, and the findings do not depend on the grouping.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.memory.events import Access, lanes
from minitriton.memory.initialization import NO_PROGRAM, registry

_NONE, _SEVERAL = NO_PROGRAM, -2


class LaunchSanitizer:
    """Shadow state of one launch."""

    def __init__(self, launch):
        self.launch = launch
        self.writer = {}
        self.reader = {}
        self.saved = {}      # allocation index -> copies of its shadow at the start of the launch

    def _save(self, alloc):
        if alloc.shadow is not None and alloc.index not in self.saved:
            self.saved[alloc.index] = (alloc.shadow.written.copy(), alloc.shadow.masked_by.copy())

    def _arrays(self, alloc, numel):
        w = self.writer.get(alloc.index)
        if w is None:  # int32: program ids fit (grids have fewer than 2**31 programs)
            w = self.writer[alloc.index] = np.full(numel, _NONE, np.int32)
            self.reader[alloc.index] = np.full(numel, _NONE, np.int32)
        return w, self.reader[alloc.index]

    def reset(self):
        """Forget everything (the launch is being replayed from its start)."""
        self.writer.clear()
        self.reader.clear()
        for index, (written, masked_by) in self.saved.items():
            shadow = self.launch.allocations[index - 1].shadow
            shadow.written[...] = written
            shadow.masked_by[...] = masked_by

    def commit(self, group):
        """Nothing to publish: the shadow arrays are updated as accesses happen (journaled with the stores)."""

    def discard(self, group):
        """Nothing to drop: the group's journal restores the shadow arrays with its stores."""

    def on_event(self, group, event):
        """Check and record one memory op of the group (`memory.events.Access`); other events are ignored."""
        if not isinstance(event, Access):
            return
        alloc, elem = event.alloc, event.elem
        idx, prog, _, _ = lanes(group.pids, event.index, event.mask)
        if event.kind == "load":
            self.on_load(group, alloc, _units(idx, elem, alloc), prog, None)
        elif event.kind == "store":
            masked_idx = masked_prog = None
            if event.mask is not None:
                _, _, masked_idx, masked_prog = lanes(group.pids, event.raw, event.mask)
                masked_idx = _units(masked_idx, elem, alloc)
            self.on_store(group, alloc, _units(idx, elem, alloc), prog, masked_idx, masked_prog)
        else:
            self.on_atomic(group, alloc, _units(idx, elem, alloc))

    def on_load(self, group, alloc, idx, prog, shape):
        """Check and record loads of elements `idx` (alloc element units) by linear programs `prog`."""
        if idx.size == 0:
            return
        w, r = self._arrays(alloc, alloc.numel(alloc.dtype))
        writers = w[idx]
        clash = (writers != _NONE) & (writers != prog)
        if clash.any():
            k = int(np.argmax(clash))
            self._raise(group, prog[clash], "order", alloc, idx[clash], other=int(writers[k]), first=int(prog[k]),
                        reader_first=False)
        shadow = alloc.shadow
        if shadow is not None:
            self._save(alloc)
            unset = ~shadow.written[idx]
            if unset.any():
                self._raise(group, prog[unset], "uninit", alloc, idx[unset], first=int(prog[np.argmax(unset)]))
        old = r[idx]
        # One reader is remembered per element (several readers within one op: the last one in program order;
        # enough to catch a later write by any other program).
        new = np.where((old == _NONE) | (old == prog), prog, _SEVERAL).astype(np.int32, copy=False)
        self._journal(group, r, idx, old)
        r[idx] = new

    def on_store(self, group, alloc, idx, prog, masked_idx=None, masked_prog=None):
        """Check and record stores (no atomics) of elements `idx` by programs `prog`."""
        w, r = self._arrays(alloc, alloc.numel(alloc.dtype))
        if idx.size:
            writers = w[idx]
            clash = (writers != _NONE) & (writers != prog)
            if clash.any():
                k = int(np.argmax(clash))
                self._raise(group, prog[clash], "race", alloc, idx[clash], other=int(writers[k]), first=int(prog[k]))
            readers = r[idx]
            clash = (readers != _NONE) & (readers != prog)
            if clash.any():
                k = int(np.argmax(clash))
                self._raise(group, prog[clash], "order", alloc, idx[clash], other=int(readers[k]), first=int(prog[k]),
                            reader_first=True)
            self._journal(group, w, idx, writers)
            w[idx] = prog
            # Two programs writing one element in this very op: the scatter kept only one of them.
            lost = w[idx] != prog
            if lost.any():
                k = int(np.argmax(lost))
                self._raise(group, np.array([int(w[idx[k]])]), "race", alloc, idx[lost], other=int(prog[k]),
                            first=int(w[idx[k]]))
        shadow = alloc.shadow
        if shadow is not None:
            self._save(alloc)
            if idx.size:
                self._journal(group, shadow.written, idx, shadow.written[idx])
                shadow.written[idx] = True
            if masked_idx is not None and masked_idx.size:
                inside = (masked_idx >= 0) & (masked_idx < shadow.masked_by.size)
                mi, mp = masked_idx[inside], masked_prog[inside]
                self._journal(group, shadow.masked_by, mi, shadow.masked_by[mi])
                shadow.masked_by[mi] = mp

    def on_atomic(self, group, alloc, idx):
        """Atomics may hit one element from many programs; they only count as writes for initialisation."""
        shadow = alloc.shadow
        if shadow is not None and idx.size:
            self._save(alloc)
            self._journal(group, shadow.written, idx, shadow.written[idx])
            shadow.written[idx] = True

    @staticmethod
    def _journal(group, array, idx, old):
        if group.journal is not None:
            group.journal.append((array, idx, np.array(old, copy=True)))

    def _raise(self, group, progs, kind, alloc, idx, other=None, first=None, reader_first=False):
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
            record = errors.diagnostic("uninitialized", made=made, **fields)
        raise errors.KernelRuntimeError(errors.SanitizerError, record, pos)


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
    text = f"elements {errors.format_ranges(missing)} of {name} were never written"
    masked = shadow.masked_by[missing]
    progs = sorted(set(int(p) for p in masked if p >= 0))
    if progs:
        names = ", ".join(_program_text(p, launch_grid) for p in progs[:3])
        if len(progs) == 1:
            text += f": program {names}'s store mask excluded them"
        else:
            more = "" if len(progs) <= 3 else f" and {len(progs) - 3} more"
            text += f": the store masks of programs {names}{more} excluded them"
    else:
        text += ": no program stored there (check the grid size and the offsets)"
    return text


def _program_text(linear: int, grid) -> str:
    """`96` on a 1-D grid (or none known), `(x, y)` / `(x, y, z)` otherwise."""
    pid = errors.program_id(linear, grid or (1,))
    return str(pid[0]) if len(pid) == 1 else str(pid)


def _units(idx, elem, alloc):
    """Indices in the pointer's element type as indices in the allocation's own element type."""
    if elem.itemsize == alloc.dtype.itemsize:
        return idx
    return idx.astype(np.int64) * elem.itemsize // alloc.dtype.itemsize
