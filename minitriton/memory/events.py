"""What memory ops tell observers: one `Access` per load, store or atomic, one `Flops` per `tl.dot`.

An op emits its event to the running group (`group.emit`) only when an observer is attached (the traffic
counters of `minitriton.record()`, the sanitizer); observers receive every access of every path, the
tile shortcuts included, so counting or sanitizing never changes how memory is read or written.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from minitriton.values.factored import outer
from minitriton.values.running import RunningGroup


@dataclass(frozen=True, slots=True)
class Tile:
    """The lanes of an access as an affine tile: lane (i, j, ...) of program g is element
    `origins[g] + i * strides[0] + j * strides[1] + ...`, and it is active when i < counts[0], j < counts[1],
    ... (its mask on exactly for a prefix rectangle; full counts when nothing is masked). `origins`: int64
    over the program axis (length 1 when uniform); each count an int, or an int64 array over the program
    axis where programs differ."""

    origins: np.ndarray
    strides: tuple
    counts: tuple


class Access:
    """One memory op of every program of a group.

    `index`: element offsets into `alloc` in units of `elem`, program axis first, shaped or broadcastable to
    (programs,) + shape; lanes where `mask` is off hold any in-range value (0 after bounds checks).
    `raw`: the offsets as the kernel computed them, masked-off lanes included (they may lie outside).
    `mask`: the lanes that touch memory, or None when all do.
    `tile`: the same lanes as a `Tile` when the op knows them in that form (a pointer block's), else None.
    `op`: an atomic's operation ("add", "cas", "xchg", ...); None for loads and stores.
    Either form may be given as a function that builds it, called when an observer first reads it.
    `shared`: what one observer derived from the lanes, kept for the next (observers/unique.py, lane_form).
    """

    __slots__ = ("kind", "alloc", "elem", "shape", "_tile", "_lanes", "op", "shared")

    def __init__(self, kind: str, alloc, elem, shape: tuple, lanes, tile=None, op=None):
        self.kind = kind      # "load", "store" or "atomic"
        self.op = op
        self.alloc = alloc    # memory.allocation.Allocation
        self.elem = elem      # the pointer's element type (semantics.dtypes.dtype)
        self.shape = shape
        self._tile = tile     # a Tile, None, or a function returning one of them
        self._lanes = lanes   # (index, raw, mask), or a function that builds them
        self.shared = None

    def _built(self) -> tuple:
        if callable(self._lanes):
            self._lanes = self._lanes()
        return self._lanes

    @property
    def tile(self) -> Tile | None:
        if callable(self._tile):
            self._tile = self._tile()
        return self._tile

    @property
    def lanes_only(self) -> bool:
        """Whether the access has no tile form (its lanes, built already, are as large as the access)."""
        return self._tile is None

    @property
    def index(self) -> np.ndarray:
        return self._built()[0]

    @property
    def raw(self) -> np.ndarray:
        return self._built()[1]

    @property
    def mask(self) -> np.ndarray | None:
        return self._built()[2]


@dataclass(frozen=True, slots=True)
class Flops:
    """`tl.dot` floating-point operations done by each program of a group."""

    per_program: int
    tile: tuple | None = None   # (M, N, input type: "fp16", "bf16", ... or fp32's precision "tf32", "ieee")


def prefix_counts(parts, shape: tuple):
    """The `counts` of a `Tile` whose mask is the logical and of `parts` (bool arrays, program axis first, each
    with at most len(shape) dims after it, broadcastable to the block), or None when that mask is not on
    exactly for a prefix rectangle in every program."""
    nd = len(shape)
    if not nd:
        return None
    counts = list(shape)
    for part in parts:
        part = part.reshape(part.shape[:1] + (1,) * (nd + 1 - part.ndim) + part.shape[1:])
        dims = [d for d in range(nd) if part.shape[d + 1] != 1]
        if len(dims) > 1:
            return None
        if not dims:  # on or off for a whole program
            d, on = 0, part.reshape(-1).astype(bool, copy=False)
            count = np.where(on, shape[0], 0).astype(np.int64)
        else:
            d = dims[0]
            line = part.reshape(part.shape[0], shape[d]).astype(bool, copy=False)
            count = line.argmin(axis=1).astype(np.int64)  # the first lane off: the prefix, if a prefix
            count[(count == 0) & line[:, 0]] = shape[d]
            if np.count_nonzero(line) != int(count.sum()):  # a lane on past the prefix
                return None
        first = int(count[0])
        if (count == first).all():  # the same in every program: an int
            count = first
        if isinstance(count, int) and isinstance(counts[d], int):
            counts[d] = min(counts[d], count)
        else:
            counts[d] = np.minimum(counts[d], count)
    return tuple(counts)


def tile_of(ptr, mask, shape: tuple):
    """A function building the `Tile` of an access through a pointer block (values.factored.pointer_block) of
    `shape` under `mask`: None when the block is not a tile or the mask is not on for a prefix rectangle."""
    def tile():
        form = ptr.tile()
        if form is None:
            return None
        if mask is None or (mask.all_true() if isinstance(mask, outer) else mask.data.all()):
            counts = prefix_counts((), shape)
        else:
            counts = prefix_counts(mask.parts if isinstance(mask, outer) else (mask.data,), shape)
        return None if counts is None else Tile(form[0].astype(np.int64, copy=False), form[1], counts)
    return tile


def lanes(pids: np.ndarray, index: np.ndarray, mask, running=None):
    """(offsets, linear program ids) of the active lanes of an access, and of the masked-off ones (of the
    `running` programs only, when given: those that left a lockstep loop ran no access)."""
    g = pids.shape[0]
    full = (g,) + index.shape[1:]
    index = np.broadcast_to(index, full)
    prog = np.broadcast_to(pids.reshape((g,) + (1,) * (index.ndim - 1)), full)
    if mask is None:
        return index.reshape(-1), prog.reshape(-1), None, None
    mask = np.broadcast_to(mask, full)
    off = ~mask if running is None else ~mask & running.reshape(prog.shape[:1] + (1,) * (prog.ndim - 1))
    return index[mask], prog[mask], index[off], prog[off]


@runtime_checkable
class Observer(Protocol):
    """What watches a launch (the sanitizer, the counters of `record()`; attached in runtime.launch.Launch).

    Events in: every `Access` and `Flops` of every pass, the tile shortcuts' included, then the pass's fate.
    Findings out: an error found at an event is raised there (a KernelRuntimeError carrying its record), a
    warning when the launch's last pass commits, a report the runtime asks for when the launch ends."""

    def on_event(self, group: RunningGroup, event: Access | Flops) -> None:
        """One event of the running pass."""

    def commit(self, group: RunningGroup) -> None:
        """The pass finished: its events stand."""

    def discard(self, group: RunningGroup) -> None:
        """The pass was rolled back (it runs again, split or later): its events never happened."""

    def reset(self) -> None:
        """The launch runs again from its first program: forget everything."""
