"""One pass of a launch over the kernel body for a group of programs: its ids, store journal and counters."""
from __future__ import annotations

import numpy as np

from minitriton.memory.events import Flops
from minitriton.runtime.spinning import SpinWatch
from minitriton.values.programs import Meter


class Group:
    """One pass over the kernel body for `pids` (linear program indices, ascending): a
    values.running.RunningGroup."""

    def __init__(self, launch, pids: np.ndarray, limit: int, journal: bool = False):
        self.launch = launch
        self.pids = pids
        self.size = len(pids)
        coords = launch.coords(pids)
        self.program_ids = coords            # three int32 arrays of shape (size,)
        self.meter = Meter(limit, self.size)  # the pass's memory, for sizing groups
        # stores are journaled when the pass may have to be undone: several programs (a split), or a kernel
        # with `while` loops (a spin loop set aside for other programs)
        self.journal = [] if self.size > 1 or journal else None
        self.prints = []
        self.quiet = False                   # a replay: its prints were shown already
        self.observers = launch.observers    # counters and sanitizer, given every event of the pass
        self.spins = None                    # the pass's `while` loops (SpinWatch), once one runs
        self.active = None                   # the programs still in a lockstep loop (inserted_calls.Lockstep), None: all
        # the launch's facts the ops read (values.running.RunningGroup), shared with the launch
        self.grid, self.debug, self.f32_default = launch.grid, launch.debug, launch.f32_default
        self.constexprs, self.kernel_cache, self.branch_types = launch.constexprs, launch.kernel.cache, launch.branch_types
        self.allocations, self.timed_out = launch.allocations, launch.timed_out
        self.add_allocation, self.pid_tuple = launch.add_allocation, launch.pid_tuple

    def emit(self, event):
        """Hand an event (memory.events) to every observer of the launch."""
        for observer in self.observers:
            observer.on_event(self, event)

    def count_flops(self, per_program: int, tile=None):
        """Record `tl.dot` FLOPs done by every program of the group (`tile`: its result's M, N and input type)."""
        if self.observers:
            self.emit(Flops(per_program if self.active is None else per_program * self.active, tile))

    def loop_iteration(self, frame):
        """A `while` loop in `frame` goes round again (raises Blocked when it waits for other programs)."""
        if self.spins is None:
            self.spins = SpinWatch(self)
        self.spins.iteration(frame)

    def before_store(self, alloc):
        """Called before every write to `alloc`."""
        self.launch.before_write(alloc)

    def commit(self):
        """The pass finished: publish its counters and prints."""
        for observer in self.observers:
            observer.commit(self)
        if not self.quiet:
            for line in self.prints:
                print(line)
        self.prints = []

    def rollback(self):
        """Undo every store of this pass (newest first)."""
        if self.journal:
            for flat, idx, old in reversed(self.journal):
                flat[idx] = old
        self.journal = [] if self.journal is not None else None
        for observer in self.observers:
            observer.discard(self)
        self.prints = []

