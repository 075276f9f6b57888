"""Pointer arithmetic: `ptr + offsets`, `ptr - offsets`, `ptr - ptr`, and what it tracks for the loads.

Pointers into an allocation are element offsets (see `minitriton.values.tensor`) whose exact range is
remembered for the loads; offsets that are an outer sum (`base + row[:, None] + col[None, :]`) are kept in
parts (`minitriton.values.factored`). Triton's type checks are the caller's (`elementwise.add`/`sub`).
"""
from __future__ import annotations

import numpy as np

from minitriton.semantics import dtypes as T
from minitriton.semantics.constexpr import to_tensor
from minitriton.semantics.shape import broadcast_shapes, expand
from minitriton.values import factored
from minitriton.values.tensor import tensor, to_address


def factored_step(a, b, sign: int):
    """`p + n`, `n + p` or `p - n` for an outer pointer block p and integer n, kept in parts; None when the
    operands need the general path (errors, pointer differences) or the result is better stored whole."""
    p, o = (a, b) if isinstance(a, factored.pointer_block) else (b, a)
    if type(o) is int and -2**31 <= o < 2**31:   # the loop's `ptr += BLOCK_K`: an int32 literal, one step
        return p.shifted(o if sign > 0 else -o)
    o = to_tensor(o)
    if not o.dtype.is_int():
        return None
    if not o.shape and o.data.size == 1:  # one step for the whole group
        step = int(o.data.astype(np.int64, copy=False).reshape(-1)[0])
        return p.shifted(step if sign > 0 else -step)
    shape = broadcast_shapes(p.shape, o.shape)
    return factored.pointer(p, None, expand(o.data, o.shape, len(shape)), shape, sign)


def offset(p: tensor, pd: np.ndarray, off: tensor, od: np.ndarray, shape: tuple, sign: int) -> tensor:
    """`p + off` (sign 1) or `p - off` (sign -1): pointers moved by integer element offsets. `pd` and `od` are
    the data of `p` and `off` aligned to the block shape `shape`."""
    if od.dtype == np.uint64:
        od = od.astype(np.int64)
    if p.alloc is None:
        od = od.astype(np.int64) * p.dtype.element_ty.itemsize
        out = np.add(pd, od, dtype=np.int64) if sign > 0 else np.subtract(pd, od, dtype=np.int64)
        return tensor(out, p.dtype, shape)
    if pd.ndim == od.ndim and (factored.is_outer_shape(pd, od) or factored.is_origin_and_block(pd, od)):
        block = factored.pointer(p, pd, od, shape, sign)
        if block is not None:
            return block
    # Element offsets into one allocation: their exact range is known (remembered on the block, or scanned
    # once here instead of at the load), and when it fits int32 the block is stored as int32, half the bytes
    # (larger groups for the same memory). The arithmetic is exact either way: 64-bit, as Triton's pointers.
    if p.bounds is not None and not off.shape:  # `ptr += step` in a loop: no scan of the block
        lo, hi = _shifted_bounds(p.bounds, od, sign)
    else:
        (plo, phi), (olo, ohi) = _value_range(pd, p.bounds), _value_range(od)
        lo, hi = (plo + olo, phi + ohi) if sign > 0 else (plo - ohi, phi - olo)
    narrow = -2**31 <= lo and hi < 2**31
    ufunc = np.add if sign > 0 else np.subtract
    out = ufunc(pd, od, dtype=np.int32 if narrow else np.int64, casting="unsafe")
    result = tensor(out, p.dtype, shape, p.alloc)
    result.bounds = (lo, hi)
    return result


def _value_range(a: np.ndarray, known: tuple | None = None) -> tuple:
    """(min, max) of an integer array as Python ints (`known` when given)."""
    if known is not None:
        return known
    if a.size == 1:
        v = int(a.reshape(-1)[0])
        return v, v
    return int(a.min()), int(a.max())


def _shifted_bounds(bounds: tuple, od: np.ndarray, sign: int) -> tuple:
    """Bounds of `p + od` (sign 1) or `p - od` (sign -1) from p's bounds and a scalar's (per-program) offsets.

    Exact Python ints: where the int64 offsets wrapped around, the bounds leave the int64 range, so no
    allocation accepts them and the load checks the offsets themselves."""
    if od.size == 1:
        lo = hi = int(od.item())
    else:
        lo, hi = int(od.min()), int(od.max())
    plo, phi = bounds
    return (plo + lo, phi + hi) if sign > 0 else (plo - hi, phi - lo)


def difference(a: tensor, b: tensor, ad: np.ndarray, bd: np.ndarray, shape: tuple) -> tensor:
    """`a - b` for two pointers of one type: the distance in elements (int64)."""
    if a.alloc is not None and a.alloc is b.alloc:
        return tensor(np.subtract(ad, bd, dtype=np.int64), T.int64, shape)
    diff = (expand(to_address(a), a.shape, len(shape)) - expand(to_address(b), b.shape, len(shape)))
    return tensor(diff // a.dtype.element_ty.itemsize, T.int64, shape)
