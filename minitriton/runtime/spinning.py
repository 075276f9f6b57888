"""Spin loops: telling a group that waits for other programs from one that computes.

A `while` loop that waits for a lock or a flag (`while tl.atomic_cas(lock, 0, 1) == 1: pass`) makes no
progress of its own: on a GPU the other programs keep running and one of them frees the lock. The emulator
runs one group at a time, so a group that waits for a program outside it would wait forever. Each `while`
iteration is reported here; at iterations 4, 8, 16, ... of one loop the pass's state is fingerprinted: the
loop frame's variables, and every writeable allocation's bytes once the variables repeat. The programs are
deterministic, so the same state twice at one loop means the loop repeats forever unless another program
changes memory: the pass is `Blocked`, and the scheduler runs other programs first. A loop whose variables
keep changing but that leaves memory as it was for `PATIENCE` iterations is taken as waiting too (a spin
with a retry counter).
"""
from __future__ import annotations

import hashlib

import numpy as np

from minitriton import errors
from minitriton.semantics.constexpr import constexpr
from minitriton.values.programs import Blocked
from minitriton.values.tensor import tensor

FIRST_CHECK = 4        # the first fingerprint of a loop, at this iteration; then at every power of two
PATIENCE = 2 ** 20     # iterations without a change of memory after which a loop is taken as waiting


class SpinWatch:
    """The `while` loops of one pass: per loop (frame and call site), its iteration count and last state."""

    def __init__(self, group):
        self.group = group
        self.loops = {}   # (frame, f_lasti) -> [iterations, memory digest, variables fingerprint, objects]

    def iteration(self, frame):
        """One more iteration of the loop whose condition is being tested in `frame` (which stays referenced
        for the pass, so the key cannot be reused by another frame)."""
        key = (frame, frame.f_lasti)
        entry = self.loops.get(key)
        if entry is None:
            entry = self.loops[key] = [0, None, None, None]
        entry[0] += 1
        n = entry[0]
        if n < FIRST_CHECK or n & (n - 1):
            return
        kept = []
        # a dict copy: from Python 3.13 (Pyodide 0.29) f_locals is a new proxy object at every access
        variables = _fingerprint(dict(frame.f_locals), kept)
        same_variables = variables == entry[2]
        # memory is hashed only when it can decide (the variables repeat, or the loop ran long): a loop that
        # computes does not hash the launch's arrays
        memory = self._memory_digest() if same_variables or n >= PATIENCE // 2 else None
        if memory is not None and memory == entry[1] and (same_variables or n >= PATIENCE):
            if self.group.journal is None:  # cannot be rolled back to let others run first
                raise errors.KernelRuntimeError(errors.DeadlockError,
                                                *deadlock_text(n, same_variables, others=False),
                                                np.arange(self.group.size))
            raise Blocked(n, same_variables)
        entry[1:] = memory, variables, kept

    def _memory_digest(self) -> bytes:
        h = hashlib.blake2b(digest_size=16)
        for alloc in self.group.launch.allocations:
            if alloc.writeable and alloc.nbytes:
                h.update(alloc.raw)
        return h.digest()


def _fingerprint(value, kept: list):
    """A comparable summary of a loop's variables: tensors by type and data digest, Python scalars by
    value, containers element-wise, anything else by identity (kept referenced so ids stay unique)."""
    if isinstance(value, dict):
        return tuple((k, _fingerprint(v, kept)) for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_fingerprint(v, kept) for v in value)
    if isinstance(value, tensor):
        kept.append(value.alloc)
        return ("tensor", value.dtype.name, value.shape, id(value.alloc), _digest(value.data))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, _digest(value))
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return (type(value).__name__, repr(value))
    if isinstance(value, constexpr):
        return ("constexpr", _fingerprint(value.value, kept))
    kept.append(value)
    return ("object", id(value))


def _digest(a: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(a).view(np.uint8), digest_size=16).digest()


def deadlock_text(iterations: int, exact: bool, others: bool, apart: bool = False) -> tuple:
    """(headline, details) of the error for programs that wait in a `while` loop forever. `apart`: the
    waiting programs, run together, split on a value (they wait for each other on different paths)."""
    how = ("came back to the same state (its variables and all memory unchanged)" if exact else
           f"ran {iterations:,} iterations without changing memory")
    if apart:
        return ("the programs wait for each other on different paths of the kernel, which minitriton cannot run "
                "side by side", f"  the loop {how}; the programs it waits for took another branch or loop, and "
                f"minitriton runs the programs of a group in lockstep, one path at a time (a GPU runs them side by "
                f"side and may finish)\n"
                f"  fix: let the programs wait at the same place (e.g. every program arrives, then all wait in one "
                f"loop), or test this kernel on a GPU")
    nobody = ("and no other program of the launch is left to change memory" if others else
              "and this pass cannot be set aside for other programs to run first")
    details = (f"  the loop {how} {nobody}: on a GPU the kernel would hang\n"
               f"  causes: a lock taken and never released (tl.atomic_cas without the tl.atomic_xchg(lock, 0) "
               f"that frees it on every path), a flag or counter no program writes, programs that wait for each "
               f"other\n"
               f"  fix: release every lock after its critical section and make sure some program writes the value "
               f"the loop waits for")
    return "the programs wait forever in this `while` loop (a deadlock)", details
