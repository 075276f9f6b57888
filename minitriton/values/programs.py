"""The programs running now: the group whose program axis every value carries.

The runtime sets the current group for each pass over the kernel body; ops read its program ids and hand
it what they do. There is at most one launch running at a time (kernels do not launch kernels, and
Pyodide has no threads), so the current group is a module-level variable rather than thread-local state.
"""
from __future__ import annotations

import sys
import weakref

import numpy as np

from minitriton import errors


class Diverged(BaseException):
    """Python control flow met a value that differs between the programs of the group.

    A BaseException so that a kernel's own `except Exception` cannot swallow it. `loop`: the value is a
    `while` condition (the programs leaving the loop run first: a lock holder goes on to its release).
    """

    def __init__(self, values: np.ndarray, loop: bool = False):
        super().__init__("diverged")
        self.values = values
        self.loop = loop


class OverBudget(BaseException):
    """A value of the group grew past the memory budget: the engine retries with a smaller group."""


class Blocked(BaseException):
    """Every program of the group waits in a `while` loop for memory that only other programs can change:
    two iterations left the loop's variables and all memory as they were (`exact`), or it ran `iterations`
    times without changing memory. The engine rolls the pass back and runs other programs first, as a GPU
    keeps running the other programs while these spin.
    """

    def __init__(self, iterations: int, exact: bool):
        super().__init__("blocked")
        self.iterations = iterations
        self.exact = exact


class Meter:
    """The memory a pass over the kernel body holds: the largest value and the bytes held at once.

    Values report themselves here when made (and owned arrays when freed); the runtime sizes its groups
    by these figures. A value larger than `limit` in a group of several programs raises OverBudget.
    """

    __slots__ = ("limit", "programs", "peak", "live", "live_peak", "_owned", "_freed", "_on_free")

    def __init__(self, limit: int, programs: int):
        self.limit = limit          # bytes one value may take before OverBudget
        self.programs = programs    # programs in the pass (a single program may exceed the limit)
        self.peak = 0               # largest value seen (bytes)
        self.live = 0               # bytes held by the pass's owned arrays now
        self.live_peak = 0          # ... at most
        self._owned = {}            # weak reference to a value -> the bytes its array owns
        self._freed = []            # the references of the values freed since (appended by the weakref)
        self._on_free = self._freed.append

    def see(self, nbytes: int):
        """A value larger than any before: remember it, and ask for a smaller group past the limit."""
        self.peak = nbytes
        if nbytes > self.limit and self.programs > 1:
            raise OverBudget()

    def own(self, value, nbytes: int):
        """`value` owns an array of `nbytes`: held until the value is freed.

        The release is a weak reference whose callback is `list.append`, C code: no Python code runs when a
        value is freed, so a signal handler cannot raise inside a finalizer (where Python would print and
        drop its exception)."""
        owned = self._owned
        owned[weakref.ref(value, self._on_free)] = nbytes
        freed = self._freed   # inlined `hold`: this runs for every new array of the pass
        live = self.live + nbytes
        while freed:
            live -= owned.pop(freed.pop())
        self.live = live
        if live > self.live_peak:
            self.live_peak = live

    def hold(self, nbytes: int, transient: int = 0):
        """Arrays that the pass keeps (`nbytes`, e.g. a store journal; negative when freed) or holds for a
        moment (`transient`)."""
        freed = self._freed
        while freed:
            self.live -= self._owned.pop(freed.pop())
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
