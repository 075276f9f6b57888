"""`tl.atomic_add` & co.: Triton's read-modify-write atomics, each one operation of `access.atomic_rmw`.

Each returns the values memory held before each lane's update. (`tl.atomic_cas` is `access.atomic_cas`.)
`tl.atomic_poll` waits for a value that other programs write.
"""
from __future__ import annotations

import ast
import sys

import numpy as np

from minitriton import errors
from minitriton.diagnostics import loops
from minitriton.diagnostics.loops import LoopSite
from minitriton.memory.access import _emit, _lanes, _resolve, _running, atomic_rmw
from minitriton.semantics import dtypes as T
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.values import programs
from minitriton.values.programs import Blocked, Diverged
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor


@builtin(method=True)
def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_add`: returns the values memory held before each lane's update."""
    return atomic_rmw("add", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_max` (fp32/fp64: Triton's integer atomics on the bit patterns, docs/semantics.md S11.5)."""
    return atomic_rmw("max", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_min` (fp32/fp64: Triton's integer atomics on the bit patterns, docs/semantics.md S11.5)."""
    return atomic_rmw("min", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_and`."""
    return atomic_rmw("and", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_or`."""
    return atomic_rmw("or", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_xor`."""
    return atomic_rmw("xor", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """`tl.atomic_xchg`: write `val`, return the old value."""
    return atomic_rmw("xchg", pointer, val, mask, sem, scope)


@builtin(method=True)
def atomic_poll(pointer, expected_value, sem=None, scope=None, timeout_ns=None):
    """`tl.atomic_poll`: wait until the scalar integer at `pointer` equals `expected_value`; True once it does,
    False if `timeout_ns` ran out first (`timeout_ns=0`: one load).

    A program whose value has not come yet waits for the other programs (its pass raises `Diverged` or
    `Blocked`, and the scheduler runs others first, as for a spinning `while` loop); its timeout runs out only
    when no program left could write the value (the scheduler then lists it in `launch.timed_out`). Without a
    timeout that wait is a deadlock, as on a GPU."""
    group = programs.current("atomic_poll")
    expected, sem, scope, timeout = to_tensor(expected_value), unwrap(sem), unwrap(scope), unwrap(timeout_ns)
    if isinstance(timeout, int) and timeout < 0:
        raise errors.python_error(ValueError, errors.diagnostic("atomic_poll_timeout_negative"))
    timeout = None if timeout is None else to_tensor(timeout)
    ptr = unwrap(pointer)
    if isinstance(ptr, tensor) and ptr.shape:
        raise errors.python_error(ValueError, errors.diagnostic("atomic_poll_scalar"))
    if not isinstance(ptr, tensor) or not ptr.dtype.is_ptr():
        shown = ptr.type if isinstance(ptr, tensor) else type(ptr).__name__
        raise errors.python_error(ValueError, errors.diagnostic("pointer_type", shown=repr(shown), op="atomic_poll"))
    if expected.shape:
        raise errors.python_error(ValueError, errors.diagnostic("atomic_poll_expected_block"))
    elem = ptr.dtype.element_ty
    if not elem.is_int() or elem.primitive_bitwidth not in (16, 32, 64):
        raise errors.python_error(ValueError, errors.diagnostic("atomic_poll_width"))
    expected = cast(expected, elem)
    if sem not in (None, "", "acquire", "release", "acq_rel", "relaxed"):
        raise errors.python_error(ValueError, errors.diagnostic("memory_semantic", what="semantic", value=sem))
    if sem in ("release", "acq_rel"):
        raise errors.python_error(ValueError, errors.diagnostic("atomic_poll_semantic"))
    if scope not in (None, "", "gpu", "cta", "sys"):
        raise errors.python_error(ValueError, errors.diagnostic("memory_semantic", what="semantic", value=scope))
    if timeout is not None and (timeout.shape or not timeout.dtype.is_int()):
        raise errors.python_error(ValueError, errors.diagnostic("atomic_poll_timeout_type"))
    g = group.size
    idx, m = _lanes(group, ptr, _running(group, None), ())
    alloc, safe = _resolve("atomic_poll", group, ptr, idx, m)
    safe = np.broadcast_to(safe, (g,))
    _emit(group, "atomic", alloc, elem, safe, idx, m, (), "poll")
    value = alloc.flat(elem)[safe]
    matched = value == np.broadcast_to(expected.data, (g,))
    timed = np.zeros(g, bool) if timeout is None else np.broadcast_to(timeout.data != 0, (g,))
    one_load = np.zeros(g, bool) if timeout is None else ~timed          # timeout_ns=0: this load decides
    expired = np.isin(group.pids, list(group.timed_out)) & timed
    waiting = ~(matched | one_load | expired) & (True if m is None else m)   # (not programs that left a loop)
    if waiting.any():
        if not waiting.all():   # the others go on first
            raise Diverged(waiting, loop=True)
        site = LoopSite(*_poll_call(), (), True,
                        {int(p): (alloc.name, int(k), v.item()) for p, k, v in zip(group.pids, safe, value)},
                        expected=expected.data.reshape(-1)[0].item())
        if group.journal is None:   # the pass cannot be undone to let others run first
            raise errors.KernelRuntimeError(errors.InfiniteLoopError, loops.infinite_loop(site, int(group.pids[0])),
                                            [0])
        blocked = Blocked(1, True)
        blocked.site, blocked.timeouts = site, group.pids[timed].tolist()
        raise blocked
    group.timed_out.difference_update(group.pids[expired].tolist())
    return tensor(np.array(matched), T.int1, ())


def _poll_call() -> tuple:
    """(line, source text) of the `atomic_poll` call the innermost kernel frame is running."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code not in programs.KERNEL_CODES:
        frame = frame.f_back
    if frame is None:
        return 0, "tl.atomic_poll(...)"
    func = programs.KERNEL_CODES[frame.f_code].source.func
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and n.lineno == frame.f_lineno
             and getattr(n.func, "attr", getattr(n.func, "id", "")) == "atomic_poll"] if func else []
    return frame.f_lineno, ast.unparse(calls[0]) if calls else "tl.atomic_poll(...)"
