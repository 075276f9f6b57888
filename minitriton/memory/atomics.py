"""`tl.atomic_add` & co.: Triton's read-modify-write atomics, each one operation of `access.atomic_rmw`.

Each returns the values memory held before each lane's update. (`tl.atomic_cas` is `access.atomic_cas`.)
"""
from __future__ import annotations

from minitriton.memory.access import atomic_rmw
from minitriton.values.registry import builtin


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
