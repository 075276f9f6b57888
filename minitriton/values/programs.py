"""The programs running now: the group whose program axis every value carries.

The runtime sets the current group for each pass over the kernel body; ops read its program ids and hand
it what they do. There is at most one launch running at a time (kernels do not launch kernels, and
Pyodide has no threads), so the current group is a module-level variable rather than thread-local state.
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


_current = None  # the running runtime.group.Group, or None outside a launch

def current(name: str = "op"):
    """The running group, or Triton's 'forgot @triton.jit' error when no launch is running."""
    if _current is None:
        raise errors.outside_kernel(name)
    return _current


def active():
    """The running group or None."""
    return _current


def set_current(group):
    global _current
    _current = group
