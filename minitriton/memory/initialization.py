"""Which elements of tracked arrays hold a value: arrays made by `minitriton.testing.empty` start unwritten.

The sanitizer marks elements written as stores land and reports loads of elements that are not; the test
kit names the programs whose store masks left an element out.
"""
from __future__ import annotations

import weakref

import numpy as np

NO_PROGRAM = -1


class Registry:
    """Arrays whose initialisation minitriton tracks (made by minitriton.testing.empty and friends)."""

    def __init__(self):
        self._by_base = {}   # id of the base array -> (weakref to it, shadow)

    def register(self, array: np.ndarray, written: bool = False):
        """Track `array` (a base array, not a view): every element starts unwritten unless `written`."""
        shadow = Shadow(array.size, written)
        key = id(array)
        self._by_base[key] = (weakref.ref(array, lambda _ref, key=key: self._by_base.pop(key, None)), shadow)
        return shadow

    def lookup(self, array: np.ndarray):
        """The shadow of `array` if it (or the array it views) is tracked and covers the same memory."""
        base = array
        while base is not None:
            entry = self._by_base.get(id(base))
            if entry is not None and entry[0]() is base:
                if base.size == array.size and np.shares_memory(base, array) and array.flags.c_contiguous:
                    return entry[1]
                return None
            base = base.base if isinstance(base.base, np.ndarray) else None
        return None


class Shadow:
    """Initialisation state of a tracked array: written flags and the last program that masked each out."""

    def __init__(self, size: int, written: bool):
        self.written = np.full(size, written, bool)
        self.masked_by = np.full(size, NO_PROGRAM, np.int64)


registry = Registry()
