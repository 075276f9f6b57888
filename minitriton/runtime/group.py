"""One pass of a launch over the kernel body for a group of programs: its ids, store journal and counters."""
from __future__ import annotations

import numpy as np

from minitriton.values.programs import OverBudget


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

