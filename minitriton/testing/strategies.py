"""Hypothesis strategies for what breaks masks: sizes at block boundaries, layouts, dtypes, special values.

    from minitriton.testing import strategies as mts

    mts.sizes(block=128)            # 0, 1, 127, 128, 129, 255, 256, 257, primes, large sizes, anything up to max
    mts.blocks(16, 1024)            # powers of two
    mts.layouts(2, strided=True)    # where an array sits in a larger buffer: offset, row padding, steps, order
    mts.values(np.float32)          # 0.0, -0.0, ±1, ±inf, NaN, subnormals, ±max, then any float32
    mts.arrays(np.float32, mts.sizes(block=128))
    mts.inputs("x", "y", shape=mts.sizes(block=128), dtype=np.float32)   # a dict of same-shape arrays

Every strategy shrinks toward the simplest failing case: small sizes (the boundary values first), plain
contiguous layouts, float32, 0.0. Arrays come in a larger buffer filled with the poison value (see
`minitriton.testing.poison`), so a kernel that reads outside its view reads NaNs (or integer sentinels).
Importing this module imports hypothesis.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minitriton.semantics import dtypes as T
from minitriton.memory.buffers import Buffer
from minitriton.semantics.numerics import f32_to_bf16_bits
from minitriton.testing.poison import Layout, _storage, _UINT, poison_bits, triton_dtype

__all__ = ["sizes", "blocks", "block_and_size", "shapes", "dtypes", "values", "layouts", "arrays", "inputs",
           "Layout"]

_PRIMES = (2, 3, 5, 7, 13, 31, 61, 97, 127, 251, 257, 509, 521, 1021, 1031, 2039, 2053, 4093, 4099, 8191, 8209,
           16381, 16411, 32749, 32771, 65521, 65537)


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % p for p in range(2, math.isqrt(n) + 1))


def boundary_sizes(block: int | None, min_size: int = 0, max_size: int = 4099) -> list:
    """The sizes that break masks for `block` (every power of two up to max_size when None), ascending."""
    found = {0, 1, 2, 3}
    blocks = [block] if block else [1 << k for k in range(1, max(1, max_size).bit_length() + 1)]
    for b in blocks:
        for k in (1, 2, 3):
            found.update((k * b - 1, k * b, k * b + 1))
    if block:
        found.update((7 * block + 3, 16 * block + 1))
    found.update(_PRIMES)
    top = max_size
    while top > 2 and not _is_prime(top):
        top -= 1
    found.add(top)       # the largest prime in range: a large size no block divides
    found.add(max_size)
    return sorted(s for s in found if min_size <= s <= max_size)


def sizes(block: int | None = None, *, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy:
    """Element counts around `block`: 0, 1, block-1, block, block+1, 2*block±1, primes, large; then any size.

    `max_size` defaults to 16 * block + 1 (4099 without a block). Shrinks toward the smallest boundary value.
    """
    if max_size is None:
        max_size = 16 * block + 1 if block else 4099
    if block is not None and (block < 1 or block & (block - 1)):
        raise ValueError(f"block must be a power of two >= 1, got {block}")
    special = boundary_sizes(block, min_size, max_size)
    return st.one_of(st.sampled_from(special), st.integers(min_size, max_size)) if special else \
        st.integers(min_size, max_size)


def blocks(min_block: int = 1, max_block: int = 1024) -> st.SearchStrategy:
    """Powers of two in [min_block, max_block] (what tl.arange accepts), shrinking toward the smallest."""
    lo = max(0, (max(1, min_block) - 1).bit_length())
    hi = max_block.bit_length() - 1
    if lo > hi:
        raise ValueError(f"no power of two between {min_block} and {max_block}")
    return st.integers(lo, hi).map(lambda e: 1 << e)


def block_and_size(min_block: int = 1, max_block: int = 1024, *, max_blocks: int = 16) -> st.SearchStrategy:
    """(block, size): a power-of-two block, then a size around its multiples (at most max_blocks * block + 1)."""
    return blocks(min_block, max_block).flatmap(
        lambda b: st.tuples(st.just(b), sizes(b, max_size=max_blocks * b + 1)))


def shapes(ndim: int = 2, block=None, *, max_side: int | None = None, min_side: int = 0) -> st.SearchStrategy:
    """Shapes whose sides are boundary sizes for `block` (an int, or one block per axis)."""
    per_axis = block if isinstance(block, (tuple, list)) else (block,) * ndim
    if len(per_axis) != ndim:
        raise ValueError(f"expected {ndim} blocks, got {per_axis}")
    return st.tuples(*(sizes(b, min_size=min_side, max_size=max_side if max_side is not None else
                             (4 * b + 1 if b else 67)) for b in per_axis))


_FLOATS = (np.float32, np.float16, np.float64)
_INTS = (np.int32, np.int8, np.int16, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def dtypes(floats: bool = True, ints: bool = True, bf16: bool = False, bool_: bool = False) -> st.SearchStrategy:
    """NumPy dtypes a kernel may see (float32 first); `bf16=True` adds `tl.bfloat16` (arrays become Buffers)."""
    choices = [np.dtype(t) for t in (_FLOATS if floats else ())] + [np.dtype(t) for t in (_INTS if ints else ())]
    if bf16:
        choices.append(T.bfloat16)
    if bool_:
        choices.append(np.dtype(bool))
    if not choices:
        raise ValueError("dtypes(): nothing to choose from")
    return st.sampled_from(choices)


def _float_info(ty: T.dtype):
    if ty.is_bf16():
        return 2.0 ** -133, 2.0 ** -126, float.fromhex("0x1.fep127"), 32
    info = np.finfo(ty.np_storage)
    return float(info.smallest_subnormal), float(info.smallest_normal), float(info.max), ty.primitive_bitwidth


@functools.lru_cache(maxsize=512)  # strategies are immutable: building (and validating) them once is faster
def values(dtype, *, nan: bool = True, inf: bool = True, subnormal: bool = True, min_value=None, max_value=None,
           special: bool = True) -> st.SearchStrategy:
    """Elements of `dtype`: first the special values (0.0, -0.0, ±1, ±inf, NaN, subnormals, ±max; for integers
    0, ±1, min, max), then any value. Bounds exclude NaN and the infinities outside them."""
    ty = triton_dtype(dtype)
    if ty.is_bool():
        return st.booleans()
    if ty.is_int():
        lo = ty.get_int_min_value() if min_value is None else max(int(min_value), ty.get_int_min_value())
        hi = ty.get_int_max_value() if max_value is None else min(int(max_value), ty.get_int_max_value())
        picks = [v for v in (0, 1, -1, lo, hi, lo + 1, hi - 1) if lo <= v <= hi]
        anything = st.integers(lo, hi)
        return st.one_of(st.sampled_from(list(dict.fromkeys(picks))), anything) if special else anything
    tiny_sub, tiny, big, width = _float_info(ty)
    picks = [0.0, -0.0, 1.0, -1.0]
    if inf:
        picks += [math.inf, -math.inf]
    if nan:
        picks.append(math.nan)
    if subnormal:
        picks += [tiny_sub, -tiny_sub, tiny - tiny_sub, tiny]
    picks += [big, -big]
    lo = -math.inf if min_value is None else float(min_value)
    hi = math.inf if max_value is None else float(max_value)
    picks = [v for v in picks if v != v or lo <= v <= hi]
    if min_value is not None or max_value is not None:
        picks = [v for v in picks if v == v]  # NaN lies in no interval
    bounded = min_value is not None or max_value is not None
    anything = st.floats(min_value=min_value, max_value=max_value, allow_nan=nan and not bounded,
                         allow_infinity=inf and (min_value is None or max_value is None),
                         allow_subnormal=subnormal, width=width)
    if ty.is_bf16() or ty.is_fp16():
        anything = anything.filter(lambda v: abs(v) <= big or v != v or abs(v) == math.inf)
    return st.one_of(st.sampled_from(picks), anything) if special and picks else anything


@functools.lru_cache(maxsize=512)
def layouts(ndim: int = 1, *, offset: bool = True, padded: bool = False, strided: bool = False,
            transposed: bool = False, reversed_: bool = False, max_offset: int = 8) -> st.SearchStrategy:
    """Where an array sits in its buffer (`Layout`): by default contiguous, possibly at an offset into a larger
    buffer; `padded` adds row padding (a row stride larger than the row, the last axis still contiguous, as
    for a slice of a wider matrix); `strided` adds steps on every axis too (non-contiguous views),
    `transposed` any axis order, `reversed_` negative strides (NumPy only). Shrinks toward the plain array."""
    zero = st.just(0)
    return st.builds(
        Layout,
        offset=st.integers(0, max_offset) if offset else zero,
        tail=st.integers(0, 3) if offset else zero,
        steps=st.tuples(*[st.integers(1, 3)] * ndim) if strided else st.none(),
        pad=st.tuples(*[st.integers(0, 3)] * ndim) if strided or padded else st.none(),
        order=st.permutations(list(range(ndim))).map(tuple) if transposed and ndim > 1 else st.none(),
        flip=st.tuples(*[st.booleans()] * ndim) if reversed_ else st.none(),
    )


def _as_strategy(value):
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


@st.composite
def arrays(draw, dtype, shape, *, elements=None, layout=None):
    """An array of `dtype` and `shape` (values, strategies, or an int size) inside a poisoned buffer.

    `elements`: a strategy of values (default `values(dtype)`); `layout`: a `Layout` or a strategy of them
    (default `layouts(ndim)`: contiguous, at an offset). bf16 gives a `minitriton.Buffer`.
    """
    dtype = draw(_as_strategy(dtype))
    shape = draw(_as_strategy(shape))
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    ty = triton_dtype(dtype)
    lay = draw(_as_strategy(layout if layout is not None else layouts(len(shape))))
    elements = elements if elements is not None else values(ty)
    drawn_dtype = np.float32 if ty.is_bf16() else ty.np_storage
    data = draw(_np_arrays(np.dtype(drawn_dtype), shape, elements))
    storage = _storage(ty)
    if ty.is_bf16():
        data = f32_to_bf16_bits(data)
    fill = None if ty.is_bool() else poison_bits(ty)
    view, _ = lay.allocate(shape, storage, fill)
    if fill is not None:
        # an input holding the poison pattern would read as "never written" once copied to an output
        bits = data.view(_UINT[storage.itemsize])
        if data.dtype.kind == "f" or ty.is_bf16():
            bits = np.where(bits == fill, np.asarray(fill ^ 1, bits.dtype), bits)
        data = bits.view(storage)
    view[...] = data
    return Buffer(view, ty) if ty.is_bf16() else view


@functools.lru_cache(maxsize=1024)
def _np_arrays(dtype, shape, elements):
    return hnp.arrays(dtype, shape, elements=elements)


def inputs(*names, shape, dtype=np.float32, elements=None, layout=None, **extra) -> st.SearchStrategy:
    """A dict of same-shape arrays named `names` (one shape and dtype drawn for all), plus `extra` entries.

        mts.inputs("x", "y", shape=mts.sizes(block=128))             # {"x": ..., "y": ...}
        mts.inputs("x", shape=mts.shapes(2, 32), eps=st.floats(1e-6, 1e-3))

    `extra` values may be strategies or plain values; a callable of the drawn dict is called with it
    (e.g. `n=lambda d: d["x"].size`).
    """
    @st.composite
    def build(draw):
        s = draw(_as_strategy(shape))
        d = draw(_as_strategy(dtype))
        out = {name: draw(arrays(d, s, elements=elements, layout=layout)) for name in names}
        for key, value in extra.items():
            out[key] = value(out) if callable(value) and not isinstance(value, st.SearchStrategy) \
                else draw(_as_strategy(value))
        return out
    return build()
