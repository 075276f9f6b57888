"""Block values kept as a broadcast combination of smaller arrays, built into a full array only when needed.

Kernels build 2-D pointer blocks and masks as outer combinations of 1-D ones:

    a_tile = a_ptr + rows[:, None] * stride_am + cols[None, :]        # (BM, 1) + (1, BK)
    mask = (rows[:, None] < M) & (cols[None, :] < K)                   # (BM, 1) & (1, BK)

and then step them through a loop (`a_tile += BLOCK_K`). Stored whole, such a block costs BM·BK values
per program and a full pass for every step. `outer` keeps the parts instead — (BM, 1) and (1, BK) arrays —
so a step touches one small part, a mask that is on everywhere is recognised from its parts, and a group of
programs holds less memory (so more programs fit in a group). `data` builds the full array on every use
and does not keep it: loads and stores use it once, transiently.

Two kinds exist:
* pointer offsets into one allocation: the sum of int64 parts (exact; built as int32 when the bounds fit,
  like `minitriton.semantics.pointers.offset`);
* masks (int1): the logical and of bool parts.
Every other op sees an ordinary tensor through `data`.
"""
from __future__ import annotations

import numpy as np

from minitriton.values import programs
from minitriton.values.tensor import interned, shape_tuple, tensor

MAX_PARTS = 3
# The largest array 32-bit NumPy can describe (wasm32: np.intp is int32, and an array's nominal byte size must
# fit in it). tile_view keeps its window views under it on every platform, so 64-bit runs take the browser's path.
MAX_VIEW_BYTES = 2**31 - 1
_DATA = tensor.__dict__["data"]  # the slot the base class stores its array in


def _size(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _bshape(*shapes: tuple) -> tuple:
    """The broadcast of shapes of one ndim that are known to be compatible (np.broadcast_shapes is slow)."""
    out = shapes[0]
    for s in shapes[1:]:
        out = tuple(x if y == 1 else y for x, y in zip(out, s))
    return out


def is_outer_shape(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether x op y (both with the program axis and the same ndim) would be larger than either: an outer
    combination worth keeping in parts."""
    return _size(_bshape(x.shape, y.shape)) > max(x.size, y.size)


WIDE_BLOCK = 2**16  # lanes from which finding a block's tile costs less than gathering its lanes


def is_origin_and_block(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether x is one value and y a wide block shared by the group (one program's `ptr + offsets`): kept in
    parts too, so that its loads and stores find the tile the offsets form."""
    return x.size == 1 and y.shape[0] == 1 and y.size >= WIDE_BLOCK


class outer(tensor):
    """A pointer block (`kind` "add") or mask (`kind` "and") kept as broadcastable parts; see the module."""

    __slots__ = ("parts", "kind")

    def __init__(self, parts: tuple, kind: str, dtype, shape: tuple, alloc=None, bounds=None):
        _DATA.__set__(self, None)
        self.parts = parts
        self.kind = kind
        self.dtype = dtype
        self.shape = shape if type(shape) is shape_tuple else interned(shape)
        self.alloc = alloc
        self.bounds = bounds
        m = programs.meter
        if m is not None:
            nbytes = sum(p.nbytes for p in parts)
            if nbytes > m.peak:
                m.see(nbytes)

    @property
    def data(self) -> np.ndarray:
        """The full array (program axis first), built now; not kept."""
        p = self.parts
        if self.kind == "and":
            out = np.logical_and(p[0], p[1])
            for q in p[2:]:
                out = np.logical_and(out, q)
            return out
        lo, hi = self.bounds
        wide = np.int32 if -2**31 <= lo and hi < 2**31 else np.int64
        out = np.add(p[0], p[1], dtype=wide, casting="unsafe")
        for q in p[2:]:
            out = np.add(out, q, dtype=wide, casting="unsafe")
        return out

    @data.setter
    def data(self, value):
        raise AttributeError("an outer block is immutable")

    def all_true(self) -> bool:
        """For masks: whether every lane is on (then every part is on everywhere)."""
        return all(np.count_nonzero(p) == p.size for p in self.parts)


def _expand(part: np.ndarray, ndim: int, nd: int) -> np.ndarray:
    """A part of a block of `ndim` dims with size-1 axes inserted after the program axis, for `nd` dims."""
    missing = nd - ndim
    return part if missing <= 0 else part.reshape(part.shape[:1] + (1,) * missing + part.shape[1:])


_ARANGES: dict = {}  # id -> a shared `tl.arange` array, (1, n) int32 counting up by 1 (kept alive by its cache)


def shared_arange(data: np.ndarray) -> None:
    """Note that `data`, never written and kept alive by `tl.arange`'s cache, counts up by 1: blocks with it as
    a part know their range and tile without a scan."""
    _ARANGES[id(data)] = data


def _range(a: np.ndarray) -> tuple:
    if _ARANGES.get(id(a)) is a:
        return int(a[0, 0]), int(a[0, -1])
    if a.size == 1:
        v = int(a.reshape(-1)[0])
        return v, v
    return int(a.min()), int(a.max())


def pointer(p: tensor, pd: np.ndarray, od: np.ndarray, shape: tuple, sign: int):
    """`p ± od` as an outer pointer block, or None when it is better stored whole.

    `p` points into an allocation; pd, od: its offsets and the int offsets, expanded to one ndim (not
    broadcast). Only called when the result would be larger than both (is_outer_shape) or p is outer."""
    if sign < 0 or (od.dtype != np.int32 and od.dtype != np.int64):
        od = np.negative(od, dtype=np.int64) if sign < 0 else od.astype(np.int64)
    if isinstance(p, pointer_block):
        nd = od.ndim - 1
        parts = [_expand(q, len(p.shape), nd) for q in p.parts]
        bounds = list(p.bounds_of_parts)
    else:
        parts, bounds = [pd.astype(np.int64)], [p.bounds if p.bounds is not None else _range(pd)]
    olo, ohi = _range(od)
    # add od into the smallest part that already has its shape, else keep it as a new part
    best = None
    for i, q in enumerate(parts):
        if _bshape(q.shape, od.shape) == q.shape and (best is None or q.size < parts[best].size):
            best = i
    if best is not None:
        q = np.add(parts[best], od, dtype=np.int64)
        parts[best] = q
        qlo, qhi = bounds[best]
        bounds[best] = (qlo + olo, qhi + ohi) if od.size == 1 else _range(q)
    elif len(parts) < MAX_PARTS:
        parts.append(od)
        bounds.append((olo, ohi))
    else:
        return None
    full = _bshape(*(q.shape for q in parts))
    outer_shape = _size(full) > max(q.size for q in parts) or (len(parts) == 2 and parts[0].size == 1)
    if len(parts) == 1 or not outer_shape or full[1:] != shape:
        return None  # no longer an outer combination (or one origin and a block)
    lo, hi = sum(b[0] for b in bounds), sum(b[1] for b in bounds)  # loose when parts share the program axis
    result = pointer_block(tuple(parts), p.dtype, shape, p.alloc, (lo, hi))
    result.bounds_of_parts = tuple(bounds)
    if od.size == 1 and isinstance(p, pointer_block) and p._tile is not None and len(p.shape) == len(shape):
        # a step by one value moves the tile and keeps its strides (the common `ptr += BLOCK_K * stride`)
        step = int(od.reshape(-1)[0])
        result._tile = (p._tile[0] + step, p._tile[1]) if p._tile else False
        result._window = _moved(p._window, step)
    return result


def _moved(window, step: int):
    """A tile's `window` after every origin moved by `step` (None stays None: not computed yet)."""
    if window is None:
        return None
    low, high, spacing, index = window
    return low + step, high + step, spacing, index


class pointer_block(outer):
    """An outer pointer block: also remembers each part's exact (min, max) and, once asked, its tile form."""

    __slots__ = ("bounds_of_parts", "_tile", "_window")

    def __init__(self, parts, dtype, shape, alloc, bounds):
        super().__init__(parts, "add", dtype, shape, alloc, bounds)
        self._tile = None
        self._window = None

    def shifted(self, step: int) -> "pointer_block":
        """`self + step` for one int64 step: only the smallest part moves (the loop's `ptr += BLOCK_K`)."""
        parts, bounds = list(self.parts), list(self.bounds_of_parts)
        i = min(range(len(parts)), key=lambda k: parts[k].size)
        parts[i] = parts[i] + np.int64(step)
        lo, hi = bounds[i]
        bounds[i] = (lo + step, hi + step)
        lo, hi = self.bounds
        new = pointer_block(tuple(parts), self.dtype, self.shape, self.alloc, (lo + step, hi + step))
        new.bounds_of_parts = tuple(bounds)
        if self._tile is not None:
            new._tile = (self._tile[0] + np.int64(step), self._tile[1]) if self._tile else False
            new._window = _moved(self._window, step)
        return new

    def tile(self):
        """(origins, strides) when offset[g, i, j, ...] = origins[g] + i*strides[0] + j*strides[1] + ...
        (origins: int64 array over the program axis, strides: ints); None when the block is not such a tile.
        2-D blocks built from `rows[:, None] * stride + cols[None, :]` are."""
        if self._tile is None:
            self._tile = _tile_form(self.parts, self.bounds_of_parts, len(self.shape)) or False
        return self._tile or None

    def window(self):
        """Where the tile's origins lie: (low, high, spacing, index) with low and high the least and greatest
        origin, spacing the greatest common divisor of origins - low (1 when they are all equal), and index the
        int64 array (origins - low) // spacing; None when the block is not a tile. Kept across steps, which
        move low and high only."""
        if self._window is None:
            form = self.tile()
            if form is None:
                return None
            origins = form[0]
            low = int(origins.min())
            rel = origins - low
            spacing = int(np.gcd.reduce(rel)) or 1
            index = rel // spacing if spacing > 1 else rel
            index.flags.writeable = False  # shared by the blocks stepped from this one
            self._window = (low, low + int(rel.max()), spacing, index)
        return self._window


def _tile_form(parts: tuple, bounds: tuple, nd: int):
    strides = [0] * nd
    origin = None
    corner = (slice(None),) + (slice(0, 1),) * nd
    for q, (lo, hi) in zip(parts, bounds):
        if q.dtype != np.int64 and hi - lo >= 2**31:  # its differences would wrap in int32
            q = q.astype(np.int64)
        for k in range(nd):
            n = q.shape[k + 1]
            if n == 1:
                continue
            if _ARANGES.get(id(q)) is q:
                strides[k] += 1
                continue
            line = q[(0,) * (k + 1) + (slice(None),) + (0,) * (nd - k - 1)]
            step = int(line[1]) - int(line[0])
            if int(line[-1]) - int(line[-2]) != step:  # most blocks that are no tile end here, unscanned
                return None
            d = np.diff(q, axis=k + 1)
            if not (d == step).all():
                return None
            strides[k] += int(step)
        o = q[corner].reshape(-1)
        origin = o if origin is None else origin + o
    return origin, tuple(strides)


def tile_view(block: pointer_block, flat: np.ndarray, shape: tuple, for_store: bool = False):
    """(view, origins) with view[origins] the block's lanes in `flat` (every lane must lie inside `flat`):
    a strided view with one tile at every start position from the first origin to the last, stepping by the
    origins' greatest common divisor, so whole tiles are copied without an index array. None when the block
    is not a tile with non-negative strides (for a store: strides whose lanes never share an element, so the
    write order cannot matter), or when the view's nominal size would pass MAX_VIEW_BYTES."""
    form = block.tile()
    if form is None or not shape or 0 in shape:
        return None
    origins, strides = form
    if min(strides) < 0:
        return None
    if for_store:
        extent = 0
        for n, s in sorted(zip(shape, strides), key=lambda t: t[1]):
            if n > 1 and s <= extent:
                return None
            extent += (n - 1) * s
    low, high, step, index = block.window()
    positions = (high - low) // step + 1
    if positions * _size(shape) * flat.itemsize > MAX_VIEW_BYTES:
        return None
    return window_view(flat, low, (positions,) + shape, (step,) + strides, for_store), index


def window_view(flat: np.ndarray, low: int, shape: tuple, strides: tuple, writeable: bool) -> np.ndarray:
    """`flat[low:]` seen with `shape` and `strides` in elements: what np.lib.stride_tricks.as_strided makes, at a
    fifth of its cost (`flat` is contiguous: memory.allocation)."""
    unit = flat.itemsize
    view = np.ndarray(shape, flat.dtype, buffer=flat, offset=low * unit, strides=tuple(s * unit for s in strides))
    if not writeable:
        view.flags.writeable = False
    return view


def mask(ad, bd, a: tensor, b: tensor, shape: tuple, dtype):
    """`a & b` for int1 blocks as an outer mask, or None when it is better stored whole.

    ad, bd: the operands' arrays expanded to the result's ndim (None for an outer operand: its parts)."""
    parts = []
    for x, xd in ((a, ad), (b, bd)):
        if isinstance(x, outer):
            parts.extend(_expand(q, len(x.shape), len(shape)) for q in x.parts)
        else:
            parts.append(xd)
    if len(parts) > MAX_PARTS or _bshape(*(q.shape for q in parts))[1:] != shape:
        return None
    return outer(tuple(parts), "and", dtype, shape)
