"""Triton 3.6's flip, interleave, sort, topk, bitonic_merge, reduce_or, histogram, gather and item.

flip, interleave, sort, topk and bitonic_merge are `@jit` functions of 3.6's standard.py built from other
tl ops; they are ported here line by line onto minitriton's ops (a bitonic network of compare-and-swaps on
the block reshaped to a hypercube of 2s), so NaN, -0.0/+0.0, ties, narrow and bool inputs come out exactly as
the network orders them on the GPU (`x > y` is false with a NaN: NaNs are not moved to one end as NumPy's sort
does), and the program axis and grouping come for free.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.diagnostics import Suggestion
from minitriton.semantics import dtypes as T
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.debug import static_assert
from minitriton.semantics.elementwise import where
from minitriton.semantics.reduce import _reduce_data, xor_sum
from minitriton.semantics.reduce import max as _max
from minitriton.semantics.reduce import min as _min
from minitriton.semantics.shape import arange, broadcast_to, broadcast_to_shape, join, reshape, validate_block_shape
from minitriton.values import programs
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor

WARP_LANES = 32   # threads per warp on NVIDIA GPUs; tl.histogram pads its bins to one per lane


def _log2(i):
    """standard.py `_log2`: floor(log2(i)) for i >= 1 (0 for i <= 1)."""
    log2, n = 0, i
    while n > 1:
        n >>= 1
        log2 += 1
    return log2


def _is_power_of_two(i):
    return (i & (i - 1)) == 0 and i != 0


def _int_dtype(bitwidth):
    """core.get_int_dtype(bitwidth, signed=True)."""
    return {1: T.int1, 8: T.int8, 16: T.int16, 32: T.int32, 64: T.int64}[bitwidth]


# ---------------------------------------------------------------------------------------------- sort (standard.py)

def _indicator(n_dims, j):
    ar = arange(0, 2)
    return reshape(ar, [1] * (n_dims - j - 1) + [2] + [1] * j)


def _compare_and_swap(x, flip, i):
    n_dims = _log2(x.numel)
    idtype = _int_dtype(x.dtype.primitive_bitwidth)
    ix = cast(x, idtype, bitcast=True)
    iy = ix ^ xor_sum(ix, n_dims - 1 - i, True)
    y = cast(iy, x.dtype, bitcast=True)
    is_right = _indicator(n_dims, i)
    return where((x > y) != (flip ^ is_right), y, x)


def _bitonic_merge_hypercube(x, stage, order):
    if order == 2:
        flip = _indicator(_log2(x.numel), stage)
    else:
        flip = order
    for i in range(stage):
        x = _compare_and_swap(x, flip, stage - 1 - i)
    return x


def _bitonic_merge(x, stage, order, n_dims):
    h = reshape(x, [2] * _log2(x.numel))
    h = _bitonic_merge_hypercube(h, stage, order)
    return reshape(h, list(x.shape))


def _minor_dim(x, dim):
    dim = unwrap(dim)
    _dim = len(x.shape) - 1 if dim is None else dim
    static_assert(_dim == len(x.shape) - 1, "only minor dimension is currently supported")
    return _dim


def _sort_impl(x, k=None, dim=None, descending=0):
    x = to_tensor(x)
    k, descending = unwrap(k), unwrap(descending)
    _dim = _minor_dim(x, dim)
    log_n = _log2(x.shape[_dim])
    log_k = log_n if k is None else _log2(k)
    n_dims = _log2(x.numel)
    h = reshape(x, [2] * n_dims if n_dims else [1])
    for i in range(1, log_k + 1):
        h = _bitonic_merge_hypercube(h, i, 2 if i < log_n else descending)
    for i in range(log_k + 1, log_n + 1):
        axis = _log2(h.numel) - 1 - log_k
        h = _max(h, axis=axis) if descending else _min(h, axis=axis)
        h = _bitonic_merge_hypercube(h, log_k, 2 if i < log_n else descending)
    return reshape(h, list(x.shape[:-1]) + [2**log_k])


@builtin
def sort(x, dim=None, descending=0):
    """`tl.sort(x, dim=None, descending=0)`: 3.6's bitonic sort along the last dim (the only one supported)."""
    return _sort_impl(x, dim=dim, descending=descending)


@builtin
def topk(x, k, dim=None):
    """`tl.topk(x, k, dim=None)`: the 2**floor(log2(k)) largest along the last dim, largest first (3.6: bitonic
    top-k; max-reductions widen narrow types as tl.max does)."""
    return _sort_impl(x, k=k, dim=dim, descending=True)


@builtin
def bitonic_merge(x, dim=None, descending=0):
    """`tl.bitonic_merge(x, dim=None, descending=0)`: the last merge of a bitonic sort (input: bitonic rows)."""
    x = to_tensor(x)
    _minor_dim(x, dim)
    n_dims = _log2(x.shape[-1])
    return _bitonic_merge(x, n_dims, unwrap(descending), n_dims)


@builtin(method=True)
def flip(x, dim=None):
    """`tl.flip(x, dim)`: 3.6 reverses along `dim` by xor swaps on a hypercube of the dim. 3.6 compares `dim`
    with the rank before defaulting it, so `dim=None` fails to compile there (3.9 accepts it)."""
    x = to_tensor(x)
    dim = unwrap(dim)
    rank = len(x.shape)
    if dim is None:  # `-len(x.shape) <= dim` with a None constexpr (3.6 standard.flip)
        raise errors.python_error(TypeError, errors.diagnostic("flip_dim_none"))
    static_assert(-rank <= dim and dim < rank)
    _dim = dim + rank if dim < 0 else dim
    static_assert(_is_power_of_two(x.shape[_dim]))
    steps = _log2(x.shape[_dim])
    idtype = _int_dtype(x.dtype.primitive_bitwidth)
    shape = list(x.shape)
    y = reshape(cast(x, idtype, bitcast=True), shape[:_dim] + [2] * steps + shape[_dim + 1:])
    for i in range(steps):
        y = y ^ xor_sum(y, _dim + i, True)
    return cast(reshape(y, shape), x.dtype, bitcast=True)


@builtin
def interleave(a, b):
    """`tl.interleave(a, b)`: join(a, b) with the last two dims merged (two scalars give a 2-block)."""
    c = join(a, b)
    if len(c.shape) == 1:
        return c
    return reshape(c, list(c.shape[:-2]) + [2 * c.shape[-2]])


# ---------------------------------------------------------------------------------------------- reduce_or

@builtin(method=True)
def reduce_or(input, axis, keep_dims=False):
    """`tl.reduce_or(x, axis, keep_dims=False)`: bitwise-or reduction of an integer block (dtype kept)."""
    x = to_tensor(input)
    static_assert(x.dtype.is_int(), "reduce_or only supported for integers")
    return _reduce_data(x, axis, keep_dims, np.bitwise_or, reduce_np=np.bitwise_or.reduce)


# ---------------------------------------------------------------------------------------------- core builtins

@builtin(method=True)
def item(input):
    """`x.item()`: a single-element block as a scalar (a scalar is returned as it is)."""
    x = to_tensor(input)
    if len(x.shape) == 0:
        return x
    errors.require(x.numel == 1, "unsplat", numel=x.numel)
    return tensor(x.data.reshape(x.data.shape[0]), x.dtype, ())


@builtin(method=True)
def histogram(input, num_bins, mask=None):
    """`tl.histogram(x, num_bins, mask=None)`: int32 counts per bin of a 1-D integer block; lanes whose mask is
    false are not counted.

    A value's bin is its low bits, as the NVIDIA lowering computes it: the bins are padded to one per lane of a
    warp (max(num_bins, 32)), a value lands in bin `value mod max(num_bins, 32)` (two's complement), and only
    bins below num_bins are kept. So with 8 bins, 100 counts in bin 4 and -1 is dropped (its bin is 31); with
    32 or more bins every value counts (-1 in the last bin). Measured on the H200 (Triton 3.6, probe
    `histogram_out_of_range_and_mask`); Triton's interpreter drops every value outside [0, num_bins).
    Only int32 and uint32 inputs compile in 3.6; other widths fail in the LLVM lowering."""
    x = to_tensor(input)
    num_bins = unwrap(num_bins)
    mask = unwrap(mask)
    if mask is not None:
        mask = to_tensor(mask)
    errors.require(len(x.shape) == 1, "histogram_rank", shape=str(list(x.shape)))
    errors.require(x.dtype.is_int(), "histogram_type", dtype=x.dtype)
    validate_block_shape((num_bins,))
    if mask is not None:
        if mask.shape != x.shape:
            mask = broadcast_to(mask, x.shape) if mask.shape else broadcast_to_shape(mask, x.shape)
        if not mask.dtype.is_bool():
            raise errors.python_error(ValueError, errors.diagnostic("mask_type", dtype=mask.dtype))
    if x.dtype.primitive_bitwidth != 32:
        # the NVIDIA lowering ands the value with an i32 constant (offline sm_90 compiles with 3.6.0)
        raise errors.backend_error("PassManager::run failed",
                                   "'llvm.and' op requires the same type for all operands and results")
    values = x.data.astype(np.int64) & np.int64(max(num_bins, WARP_LANES) - 1)
    valid = values < num_bins
    g = values.shape[0]
    if mask is not None:
        g = max(g, mask.data.shape[0])
        valid = valid & mask.data
    values = np.broadcast_to(values, (g,) + x.shape)
    valid = np.broadcast_to(valid, (g,) + x.shape)
    rows = np.broadcast_to(np.arange(g, dtype=np.int64)[:, None], valid.shape)
    flat = (rows * num_bins + values)[valid]
    counts = np.bincount(flat, minlength=g * num_bins).astype(np.int32).reshape(g, num_bins)
    return tensor(counts, T.int32, (num_bins,))


@builtin(method=True)
def gather(src, index, axis):
    """`tl.gather(src, index, axis)`: out[..., i, ...] = src[..., index[..., i, ...], ...] along `axis`; the
    result has index's shape and src's dtype. An index outside the axis is an OutOfBoundsError (a GPU reads
    whatever the register shuffle finds)."""
    src, index, axis = to_tensor(unwrap(src)), to_tensor(unwrap(index)), unwrap(axis)
    errors.require(index.dtype.is_int(), "gather_index_type", dtype=index.dtype)
    rank = len(src.shape)
    errors.require(len(index.shape) == rank, "gather_rank", rank=rank, index_rank=len(index.shape))
    errors.require(-rank <= axis < rank, "gather_axis", axis=axis, rank=rank)
    if axis < 0:
        axis += rank
    for d in range(rank):
        if d == axis:
            continue
        errors.require(index.shape[d] == src.shape[d], "gather_dims", axis=axis)
    n = src.shape[axis]
    idx = index.data
    if index.dtype.is_int_unsigned():
        idx = np.where(idx > np.uint64(n), np.int64(n), idx.astype(np.int64)) if idx.dtype == np.uint64 \
            else idx.astype(np.int64)
    else:
        idx = idx.astype(np.int64)
    bad = (idx < 0) | (idx >= n)
    if np.count_nonzero(bad):
        _gather_out_of_range(index, bad, n, axis)
    g = max(src.data.shape[0], idx.shape[0])
    data = np.take_along_axis(np.broadcast_to(src.data, (g,) + src.shape),
                              np.broadcast_to(idx, (g,) + index.shape), axis=axis + 1)
    return tensor(data, src.dtype, index.shape)


def _gather_out_of_range(index, bad, n, axis):
    group = programs._current
    per_program = bad.reshape(bad.shape[0], -1).any(axis=1)
    positions = np.nonzero(per_program)[0]
    if bad.shape[0] == 1 and group is not None and group.size > 1:
        positions = np.arange(group.size)
    row = int(np.nonzero(per_program)[0][0])
    lanes = np.argwhere(bad[row])
    first = tuple(int(v) for v in lanes[0])
    lane_text = first[0] if len(first) == 1 else first
    record = errors.diagnostic("gather_out_of_range", axis=axis, bad=int(bad[row].sum()), total=int(bad[row].size),
                               lane=lane_text, value=int(index.data[(row,) + first]), n=n, high=n - 1)
    record.suggestion = Suggestion("clamp_index", {"index": "idx", "high": n - 1})
    raise errors.KernelRuntimeError(errors.OutOfBoundsError, record, positions)
