"""Which elements of tracked arrays hold a value. Arrays made by `minitriton.testing.empty`, and under
`python -m minitriton run` those made by `np.empty`, `torch.empty` & co. (testing/constructors.py), start
unwritten.

The sanitizer marks elements written as stores land and reports loads of elements that are not; the test
kit names the programs whose store masks left an element out. Tracked memory is found by address, so a
view of a tracked array (a slice, a reshape, a torch tensor's NumPy view) shares its shadow. An array
filled with a poison pattern (`fill`) also shows writes made on the host: an element whose bits differ from
the pattern holds a value.
"""
from __future__ import annotations

import weakref

import numpy as np

NO_PROGRAM = -1

UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Registry:
    """Tracked memory regions, by start address; each is forgotten when the object owning it goes."""

    def __init__(self):
        self._regions = {}   # start address -> (weakref to the owner, nbytes, Shadow)
        self._gone = []      # weakrefs whose owner went (pruned outside any iteration over the regions)

    def register(self, array: np.ndarray, written: bool = False, *, made: str | None = None, fill=None,
                 owner=None, watched: bool = False):
        """Track the memory of `array` (one contiguous block, in memory order): every element starts unwritten
        unless `written`. `made`: how the array was made, for reports; `fill`: the bit pattern (an int) its
        elements hold until written; `owner`: what keeps the memory alive (default: `array` itself);
        `watched`: a launch that stores into it and leaves elements unwritten is reported."""
        self._prune()
        shadow = Shadow(np.full(array.size, written, bool), np.full(array.size, NO_PROGRAM, np.int64),
                        made, fill, array.dtype.itemsize, watched)
        ref = weakref.ref(array if owner is None else owner, self._gone.append)
        self._regions[_start(array)] = (ref, array.nbytes, shadow)
        return shadow

    def _prune(self):
        while self._gone:
            ref = self._gone.pop()
            for start in [s for s, e in self._regions.items() if e[0] is ref]:
                del self._regions[start]

    def lookup(self, array: np.ndarray):
        """The shadow of the elements `array` spans (a view of its region's shadow) when they lie in a tracked
        region of the same element size; else None."""
        self._prune()
        if not self._regions or array.size == 0:
            return None
        start, nbytes = _span(array)
        base, entry = start, self._regions.get(start)
        if entry is None:
            base, entry = next(((s, e) for s, e in self._regions.items() if s <= start < s + e[1]), (None, None))
        if entry is None or entry[0]() is None:
            return None
        start -= base
        _, size, shadow = entry
        item = shadow.itemsize
        if item != array.dtype.itemsize or start % item or start + nbytes > size:
            return None
        return shadow.part(start // item, (start + nbytes) // item)


class Shadow:
    """Initialisation state of tracked elements (in memory order): written flags, the last program whose store
    mask left each out, how the array was made, the bits it was filled with, whether unwritten outputs are
    reported after each launch."""

    def __init__(self, written, masked_by, made, fill, itemsize, watched=False):
        self.written, self.masked_by = written, masked_by
        self.made, self.fill, self.itemsize, self.watched = made, fill, itemsize, watched

    def part(self, first: int, stop: int) -> Shadow:
        """The shadow of elements first..stop-1 (shares their state)."""
        if first == 0 and stop == self.written.size:
            return self
        return Shadow(self.written[first:stop], self.masked_by[first:stop], self.made, self.fill, self.itemsize,
                      self.watched)

    def notice_host_writes(self, raw: np.ndarray) -> None:
        """Mark written the elements whose bytes in `raw` (the span, as uint8) no longer hold the fill."""
        if self.fill is not None and not self.written.all():
            bits = raw[: self.written.size * self.itemsize].view(UNSIGNED[self.itemsize])
            self.written |= bits != self.fill


def _start(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]  # not .ctypes, which memory/host.py watches


def _span(array: np.ndarray) -> tuple:
    """(address of the lowest byte, bytes spanned) of a non-empty array, whatever its strides."""
    low = _start(array) + sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s < 0)
    return low, sum((n - 1) * abs(s) for n, s in zip(array.shape, array.strides)) + array.dtype.itemsize


registry = Registry()
