"""The state of the group of programs that is running now: its program ids, memory journal and counters.

There is at most one launch running at a time (kernels do not launch kernels, and Pyodide has no threads),
so the current group is a module-level variable rather than thread-local state.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors


class Diverged(BaseException):
    """Python control flow met a value that differs between the programs of the group.

    A BaseException so that a kernel's own `except Exception` cannot swallow it.
    """

    def __init__(self, values: np.ndarray):
        super().__init__("diverged")
        self.values = values


class OverBudget(BaseException):
    """A value of the group grew past the memory budget: the engine retries with a smaller group."""


class Group:
    """One pass over the kernel body for `pids` (linear program indices, ascending)."""

    def __init__(self, launch, pids: np.ndarray, limit: int):
        self.launch = launch
        self.pids = pids
        self.size = len(pids)
        coords = launch.coords(pids)
        self.program_ids = coords            # three int32 arrays of shape (size,)
        self.limit = limit                   # bytes one value may take before OverBudget
        self.peak = 0                        # largest value seen (bytes), for sizing groups
        self.live = 0                        # bytes held by the pass's values now (tensor.__init__/__del__)
        self.live_peak = 0                   # ... at most, for sizing groups by memory
        self.journal = [] if self.size > 1 else None
        self.prints = []
        self.quiet = False                   # a replay: its prints were shown already
        self.events = []                     # counter events, committed when the group succeeds

    def see(self, nbytes: int):
        """A value larger than any before: remember it, and ask for a smaller group past the limit."""
        self.peak = nbytes
        if nbytes > self.limit and self.size > 1:
            raise OverBudget()

    def hold(self, nbytes: int, transient: int = 0):
        """Arrays other than tensors' that this pass keeps (`nbytes`, e.g. the store journal) or holds for a
        moment (`transient`), for sizing groups by memory."""
        self.live += nbytes
        if self.live + transient > self.live_peak:
            self.live_peak = self.live + transient

    def count_flops(self, per_program: int, rows: int):
        """Record `tl.dot` FLOPs done by every program of the group."""
        if self.launch.recorder is not None:
            self.events.append(("flops", per_program))

    def before_store(self, alloc):
        """Called before every write to `alloc`."""
        self.launch.before_write(alloc)

    def note_store(self, alloc, indices):
        """Hook for the sanitizers: which elements this group wrote."""

    def commit(self):
        """The pass finished: publish its counters and prints."""
        if self.launch.recorder is not None and self.events:
            self.launch.recorder.commit(self.pids, self.events)
        if not self.quiet:
            for line in self.prints:
                print(line)
        self.events = []
        self.prints = []

    def rollback(self):
        """Undo every store of this pass (newest first)."""
        if self.journal:
            for flat, idx, old in reversed(self.journal):
                flat[idx] = old
        self.journal = [] if self.journal is not None else None
        self.events = []
        self.prints = []


_current: Group | None = None


def current(name: str = "op") -> Group:
    """The running group, or Triton's 'forgot @triton.jit' error when no launch is running."""
    if _current is None:
        raise errors.outside_kernel(name)
    return _current


def active() -> Group | None:
    """The running group or None."""
    return _current


def set_current(group: Group | None):
    global _current
    _current = group
