"""The runtime's contract with the layers below it: what a running launch and the group of programs running
now show to the ops (semantics/, memory/), the observers and the frontend.

runtime/ implements them (`runtime.launch.Launch`, `runtime.group.Group`); code below runtime/ reads only what
they declare (tests/test_architecture.py). An observer's own interface, events in and findings out, is
`memory.events.Observer`.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from minitriton.values.programs import Meter


@runtime_checkable
class LaunchMemory(Protocol):
    """The launch's simulated address space."""

    allocations: list   # memory.allocation.Allocation; the k-th (from 1) holds the addresses from k << 40

    def add_allocation(self, name: str, array, elem, original):
        """A new allocation of `array`, a host array the launch met (a descriptor's, one whose address the
        script took)."""


@runtime_checkable
class RunningLaunch(LaunchMemory, Protocol):
    """A launch as its observers and the fixes of its errors read it."""

    kernel: Any                       # the launched @jit function (its `__name__`)
    grid: tuple[int, int, int]
    n: int                            # programs in the grid
    constexprs: dict[str, Any]
    arguments: dict[str, Any]         # parameter name -> the value bound to it

    def pid_tuple(self, pid: int) -> tuple:
        """Linear program `pid` as a launch shows it: (x,), (x, y) or (x, y, z) (errors.program_id)."""

    def linear_id(self, program) -> int | None:
        """The linear id of a program given as an int or an (x[, y[, z]]) tuple; None outside the grid."""


@runtime_checkable
class RunningGroup(LaunchMemory, Protocol):
    """One pass over the kernel body for a group of programs: what an op reads of `programs.current()`."""

    pids: np.ndarray                  # linear program ids, ascending (int64)
    size: int                         # len(pids)
    program_ids: tuple                # (x, y, z): three int32 arrays of shape (size,)
    grid: tuple[int, int, int]
    debug: bool                       # `tl.device_assert` checks (TRITON_DEBUG, jit(debug=True), debug=True)
    f32_default: str                  # the precision of an fp32 `tl.dot` ("ieee", "tf32", ...)
    constexprs: dict[str, Any]        # the launch's constexpr arguments
    kernel_cache: dict                # the launched function's, kept across launches (static_print's keys)
    branch_types: dict                # the launch's: the type a variable took in each branch of a runtime `if`
    timed_out: set                    # programs whose waiting `tl.atomic_poll` ran out of time
    meter: Meter                      # the pass's memory
    journal: list | None              # (array, index, old values) per store while the pass may be undone
    prints: list                      # `tl.device_print` lines, shown when the pass commits
    observers: tuple                  # memory.events.Observer: each gets every event `emit` hands on
    active: np.ndarray | None         # (size,) bool: the programs still in a lockstep loop; None: all

    def emit(self, event) -> None:
        """Hand a memory.events event to every observer."""

    def count_flops(self, per_program: int, tile=None) -> None:
        """Record `tl.dot` FLOPs done by every program of the group (`tile`: its result's M, N and input type)."""

    def loop_iteration(self, frame) -> None:
        """A `while` loop in `frame` goes round again (raises programs.Blocked when it waits for others)."""

    def before_store(self, alloc) -> None:
        """Called before every write to `alloc` (the launch keeps what it needs to undo the write)."""

    def pid_tuple(self, pid: int) -> tuple:
        """Linear program `pid` as a launch shows it: (x,), (x, y) or (x, y, z) (errors.program_id)."""
