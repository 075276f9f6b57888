"""The programs running now: the group whose program axis every value carries.

The runtime sets the current group for each pass over the kernel body; ops read its program ids and hand
it what they do. There is at most one launch running at a time (kernels do not launch kernels, and
Pyodide has no threads), so the current group is a module-level variable rather than thread-local state.
"""
from __future__ import annotations

import sys

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


class Meter:
    """The memory a pass over the kernel body holds: the largest value and the bytes held at once.

    Values report themselves here when made (and owned arrays when freed); the runtime sizes its groups
    by these figures. A value larger than `limit` in a group of several programs raises OverBudget.
    """

    __slots__ = ("limit", "programs", "peak", "live", "live_peak")

    def __init__(self, limit: int, programs: int):
        self.limit = limit          # bytes one value may take before OverBudget
        self.programs = programs    # programs in the pass (a single program may exceed the limit)
        self.peak = 0               # largest value seen (bytes)
        self.live = 0               # bytes held by the pass's owned arrays now
        self.live_peak = 0          # ... at most

    def see(self, nbytes: int):
        """A value larger than any before: remember it, and ask for a smaller group past the limit."""
        self.peak = nbytes
        if nbytes > self.limit and self.programs > 1:
            raise OverBudget()

    def hold(self, nbytes: int, transient: int = 0):
        """Arrays that the pass keeps (`nbytes`, e.g. a store journal; negative when freed) or holds for a
        moment (`transient`)."""
        self.live += nbytes
        if self.live + transient > self.live_peak:
            self.live_peak = self.live + transient


# Code objects of kernel functions (a @jit function and its rewritten copy) -> their JITFunction: kernel
# frames in a traceback, and the kernel line an op was called from.
KERNEL_CODES: dict = {}


def kernel_line(frame=None) -> int | None:
    """The line of the innermost kernel frame above `frame` (default: the caller's), or None."""
    frame = frame or sys._getframe(1)
    while frame is not None:
        if frame.f_code in KERNEL_CODES:
            return frame.f_lineno
        frame = frame.f_back
    return None


_current = None  # the running runtime.group.Group, or None outside a launch
meter: Meter | None = None  # the running pass's meter, or None outside a launch

def current(name: str = "op"):
    """The running group, or Triton's 'forgot @triton.jit' error when no launch is running."""
    if _current is None:
        raise errors.outside_kernel(name)
    return _current


def active():
    """The running group or None."""
    return _current


def set_current(group):
    """Make `group` (a runtime.group.Group with a `meter`, or None) the running pass."""
    global _current, meter
    _current = group
    meter = None if group is None else group.meter
