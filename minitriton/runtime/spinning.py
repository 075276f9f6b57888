"""Spin loops: telling a group that waits for other programs from one that computes.

A `while` loop that waits for a lock or a flag (`while tl.atomic_cas(lock, 0, 1) == 1: pass`) makes no
progress of its own: on a GPU the other programs keep running and one of them frees the lock. The emulator
runs one group at a time, so a group that waits for a program outside it would wait forever. Each `while`
iteration is reported here; at iterations 4, 8, 16, ... of one loop the pass's state is fingerprinted: the
loop frame's variables, and every writeable allocation's bytes once the variables repeat. The programs are
deterministic, so the same state twice at one loop means the loop repeats forever unless another program
changes memory: the pass is `Blocked`, and the scheduler runs other programs first. A loop whose variables
keep changing but that leaves memory as it was for `PATIENCE` iterations is taken as waiting too (a spin
with a retry counter). A loop that reads no memory (`while True:`, a condition on values it never changes)
cannot be ended by another program: it is an `InfiniteLoopError` at once.

What a waiting loop waits on (`LoopSite`: its line, its condition's text and names, the element of memory its
condition reads per program) is found from the kernel's source and the loop's frame; the records of an
infinite loop and of a deadlock are made here.
"""
from __future__ import annotations

import ast
import hashlib

import numpy as np

from minitriton import errors
from minitriton.diagnostics import loops
from minitriton.diagnostics.loops import LoopSite
from minitriton.semantics.constexpr import constexpr
from minitriton.values.programs import KERNEL_CODES, Blocked
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
            site = loop_site(frame, self.group, n, same_variables)
            # a loop that reads no memory cannot be ended by another program; nor can one whose pass cannot be
            # rolled back to let others run first
            if not site.reads_memory or self.group.journal is None:
                raise errors.KernelRuntimeError(errors.InfiniteLoopError,
                                                loops.infinite_loop(site, int(self.group.pids[0])), [0])
            blocked = Blocked(n, same_variables)
            blocked.site = site
            raise blocked
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


# ---------------------------------------------------------------- what a waiting loop waits on

PURE_CALLS = frozenset({"range", "static_range", "min", "max", "len", "abs", "int", "float", "bool", "print"})
_SIMPLE = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Load, ast.operator, ast.unaryop)


def loop_site(frame, group, iterations: int, exact: bool) -> LoopSite:
    """What the `while` loop being tested in `frame` (a kernel's or a @jit helper's) reads; its state repeated
    after `iterations` (`exact`: variables and memory both)."""
    jit_fn, line = KERNEL_CODES.get(frame.f_code), frame.f_lineno
    func = jit_fn.source.func if jit_fn is not None else None
    node = next((n for n in ast.walk(func) if isinstance(n, ast.While) and n.lineno == line), None) if func else None
    if node is None:
        return LoopSite(line, "?", (), True, {}, iterations, exact)
    test = list(ast.walk(node.test))
    skipped = {id(n.func) for n in test if isinstance(n, ast.Call)} | \
        {id(n.value) for n in test if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
         and n.value.id not in frame.f_locals}
    names = tuple(dict.fromkeys(n.id for n in test if isinstance(n, ast.Name) and id(n) not in skipped))
    reads = [n for n in test if _call_name(n) in ("load", "atomic") and n.args] or \
        [n for n in ast.walk(node) if _call_name(n) in ("load", "atomic") and n.args]
    # a @jit helper or a descriptor's load may read memory too; `tl.` arithmetic does not
    may_read = bool(reads) or any(_call_name(n) not in (None, "tl") for n in ast.walk(node))
    return LoopSite(line, ast.unparse(node.test), names, may_read,
                    _waits(reads[0], frame, group) if reads else {}, iterations, exact)


def _call_name(node):
    """For a call: "load" or "atomic" (it reads memory), "tl" (a `tl.` function or pure builtin), else its name."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "?"
    if name.startswith("atomic_"):
        return "atomic"
    return "tl" if name in PURE_CALLS or isinstance(f, ast.Attribute) and "load" not in name else name


def _waits(call, frame, group) -> dict:
    """Per program of `group` (linear id): (tensor, element offset, value now) that the pointer of `call`
    addresses (its first element), evaluated in the loop's frame when the pointer is arithmetic on names."""
    if not all(isinstance(n, _SIMPLE) for n in ast.walk(call.args[0])):
        return {}
    try:
        ptr = eval(compile(ast.Expression(call.args[0]), "<pointer>", "eval"), frame.f_globals, dict(frame.f_locals))
        offsets = np.broadcast_to(ptr.data.reshape(ptr.data.shape[0], -1)[:, 0], (group.size,)).tolist()
        flat = ptr.alloc.flat(ptr.dtype.element_ty)
    except (AttributeError, TypeError, ValueError, NameError, IndexError, ArithmeticError):
        return {}
    return {pid: (ptr.alloc.name, int(k), flat[k].item() if 0 <= k < flat.shape[0] else None)
            for pid, k in zip(group.pids.tolist(), offsets)}
