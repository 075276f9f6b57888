"""What memory ops tell observers: one `Access` per load, store or atomic, one `Flops` per `tl.dot`.

An op emits its event to the running group (`group.emit`) only when an observer is attached (the traffic
counters of `minitriton.record()`, the sanitizer); observers receive every access of every path, the
tile shortcuts included, so counting or sanitizing never changes how memory is read or written.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Access:
    """One memory op of every program of a group.

    `index`: element offsets into `alloc` in units of `elem`, program axis first, shaped or broadcastable to
    (programs,) + shape; lanes where `mask` is off hold any in-range value (0 after bounds checks).
    `raw`: the offsets as the kernel computed them, masked-off lanes included (they may lie outside).
    `mask`: the lanes that touch memory, or None when all do.
    """

    kind: str                  # "load", "store" or "atomic"
    alloc: object              # memory.allocation.Allocation
    elem: object               # the pointer's element type (semantics.dtypes.dtype)
    index: np.ndarray
    raw: np.ndarray
    mask: np.ndarray | None
    shape: tuple


@dataclass(frozen=True, slots=True)
class Flops:
    """`tl.dot` floating-point operations done by each program of a group."""

    per_program: int


def lanes(pids: np.ndarray, index: np.ndarray, mask):
    """(offsets, linear program ids) of the active lanes of an access, and of the masked-off ones."""
    g = pids.shape[0]
    full = (g,) + index.shape[1:]
    index = np.broadcast_to(index, full)
    prog = np.broadcast_to(pids.reshape((g,) + (1,) * (index.ndim - 1)), full)
    if mask is None:
        return index.reshape(-1), prog.reshape(-1), None, None
    mask = np.broadcast_to(mask, full)
    return index[mask], prog[mask], index[~mask], prog[~mask]
