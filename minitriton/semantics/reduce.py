"""Reductions and scans: sum/max/min/argmax/argmin, tl.reduce and tl.associative_scan with @jit combiners.

Reductions run as a tree (halve the axis, combine the halves) like the GPU's warp shuffles, so float
results do not depend on how programs are grouped, and bf16 is rounded at every step as the GPU does.
Type rules follow `triton.language.standard`: sums of narrow integers accumulate in (u)int32, max/min of
narrow types compute in fp32/int32, and NaN never wins a max/min/argmax/argmin.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import numerics
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor


def _axis(axis, ndim):
    axis = unwrap(axis)
    if axis is None:
        return None
    if not -ndim <= axis < ndim:
        raise errors.python_error(ValueError, errors.diagnostic("invalid_axis", axis=axis, low=-ndim, ndim=ndim))
    return axis % ndim


def _flatten_if_none(x: tensor, axis):
    if axis is None:
        n = x.numel
        return tensor(x.data.reshape(x.data.shape[0], n), x.dtype, (n,)), 0
    return x, axis


def _tree(arrays, axis: int, combine):
    """Reduce NumPy arrays (program axis first) along data axis `axis` by pairwise halving."""
    n = arrays[0].shape[axis]
    lead = (slice(None),) * axis
    while n > 1:
        h = n // 2
        left = [a[lead + (slice(0, h),)] for a in arrays]
        right = [a[lead + (slice(h, 2 * h),)] for a in arrays]
        rest = [a[lead + (slice(2 * h, n),)] for a in arrays] if n % 2 else None
        arrays = combine(left, right)
        if rest is not None:
            arrays = [np.concatenate([a, r], axis=axis) for a, r in zip(arrays, rest)]
            n = h + 1
        else:
            n = h
    return [a[lead + (0,)] for a in arrays]


def _finish_reduce(datas, dtypes, shape, axis, keep_dims, orig_ndim, original_axis_none):
    out_shape = shape[:axis] + shape[axis + 1:]
    results = []
    for d, ty in zip(datas, dtypes):
        if d.ndim == 0:
            d = d.reshape(1)
        t = tensor(d, ty, out_shape)
        if keep_dims:
            if original_axis_none:
                new_shape = (1,) * orig_ndim
            else:
                new_shape = shape[:axis] + (1,) + shape[axis + 1:]
            t = tensor(d.reshape((d.shape[0],) + new_shape), ty, new_shape)
        results.append(t)
    return results


def _tree1(data: np.ndarray, axis: int, combine) -> np.ndarray:
    """`_tree` for one array (the common case, without its lists)."""
    n = data.shape[axis]
    lead = (slice(None),) * axis
    while n > 1:
        h = n // 2
        out = combine(data[lead + (slice(0, h),)], data[lead + (slice(h, 2 * h),)])
        if n % 2:
            out = np.concatenate([out, data[lead + (slice(2 * h, n),)]], axis=axis)
        data, n = out, n - h
    return data[lead + (0,)]


def _reduce_data(x: tensor, axis, keep_dims, combine_np, out_ty=None, reduce_np=None):
    """Reduce `x` along `axis` by a pairwise tree of `combine_np`; `reduce_np(data, axis)`, when given, computes
    the same result in one NumPy call (or returns None where it cannot: the tree then runs)."""
    x = to_tensor(x)
    orig_ndim = len(x.shape)
    axis = _axis(axis, orig_ndim)
    none = axis is None
    x, axis = _flatten_if_none(x, axis)
    ty = out_ty or x.dtype
    data = reduce_np(x.data, axis + 1) if reduce_np is not None else None
    if data is None:
        data = _tree1(x.data, axis + 1, combine_np)
    if ty.is_bf16():
        data = numerics.round_to_bf16(data)
    return _finish_reduce([data], [ty], x.shape, axis, unwrap(keep_dims), orig_ndim, none)[0]


def _sum_dtype(ty, dtype):
    if dtype is not None:
        return dtype
    if ty.is_int_signed() and ty.int_bitwidth < 32:
        return T.int32
    if ty.is_int_unsigned() and ty.int_bitwidth < 32:
        return T.uint32
    return ty


def _rounded(fn, ty):
    if ty.is_bf16():
        return lambda a, b: numerics.round_to_bf16(fn(a, b))
    return fn


@builtin(method=True)
def sum(input, axis=None, keep_dims=False, dtype=None):
    """`tl.sum`: narrow ints accumulate in (u)int32; floats add pairwise in their own type (NaN propagates)."""
    x = to_tensor(input)
    out = _sum_dtype(x.dtype, unwrap(dtype))
    x = cast(x, out)
    return _reduce_data(x, axis, keep_dims, _rounded(np.add, out), reduce_np=_int_sum if out.is_int() else None)


def _int_sum(data, axis):
    # Wrapping integer addition is associative: any order gives the tree's result.
    return np.add.reduce(data, axis=axis, dtype=data.dtype)


@builtin(method=True)
def xor_sum(input, axis=None, keep_dims=False):
    """`tl.xor_sum`: bitwise xor reduction of an integer block."""
    x = to_tensor(input)
    if not x.dtype.is_int():
        raise errors.python_error(ValueError, errors.diagnostic("xor_sum_type", dtype=x.dtype))
    return _reduce_data(x, axis, keep_dims, np.bitwise_xor, reduce_np=np.bitwise_xor.reduce)


def _widen_for_minmax(x: tensor) -> tensor:
    if x.dtype.is_bf16():
        return cast(x, T.float32)
    if x.dtype.primitive_bitwidth < 32:
        return cast(x, T.float32 if x.dtype.is_floating() else T.int32)
    return x


def _fmax_signed_zero(a, b):
    """maxnum with -0.0 < +0.0, like tl.maximum on the GPU (NumPy's fmax may return either zero)."""
    return np.where((a == 0) & (b == 0), a + b, np.fmax(a, b))


def _fmin_signed_zero(a, b):
    return np.where((a == 0) & (b == 0), -(np.negative(a) + np.negative(b)), np.fmin(a, b))


def _fmax_reduce(data, axis):
    return _signed_zero_reduce(np.fmax, data, axis, keep_negative=False)


def _fmin_reduce(data, axis):
    return _signed_zero_reduce(np.fmin, data, axis, keep_negative=True)


def _signed_zero_reduce(fn, data, axis, keep_negative):
    """The tree of _fmax_signed_zero / _fmin_signed_zero in one NumPy reduction.

    With -0.0 < +0.0 and NaN losing, max/min are associative, so the tree's value is the max/min of the
    numbers; NumPy's reduction finds it up to the sign of a zero result, fixed here (a max of zeros is +0.0
    if the row holds one, a min of zeros -0.0 if the row holds one). Rows of NaN only: None (the tree picks
    which NaN)."""
    r = fn.reduce(data, axis=axis)
    if np.count_nonzero(np.isnan(r)):
        return None
    zero = r == 0
    if np.count_nonzero(zero):
        signed = np.logical_and(data == 0, np.signbit(data) == keep_negative).any(axis=axis)
        wanted = r.dtype.type(-0.0 if keep_negative else 0.0)
        r = np.where(zero, np.where(signed, wanted, -wanted), r)
    return r


@builtin(method=True)
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """`tl.max`: NaN is ignored (maxnum), narrow types compute in fp32/int32; optionally with indices."""
    if unwrap(return_indices):
        return _with_indices(input, axis, keep_dims, "max")
    x = _widen_for_minmax(to_tensor(input))
    if x.dtype.is_floating():
        return _reduce_data(x, axis, keep_dims, _fmax_signed_zero, reduce_np=_fmax_reduce)
    return _reduce_data(x, axis, keep_dims, np.maximum, reduce_np=np.maximum.reduce)


@builtin(method=True)
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """`tl.min`: NaN is ignored (minnum), narrow types compute in fp32/int32; optionally with indices."""
    if unwrap(return_indices):
        return _with_indices(input, axis, keep_dims, "min")
    x = _widen_for_minmax(to_tensor(input))
    if x.dtype.is_floating():
        return _reduce_data(x, axis, keep_dims, _fmin_signed_zero, reduce_np=_fmin_reduce)
    return _reduce_data(x, axis, keep_dims, np.minimum, reduce_np=np.minimum.reduce)


@builtin(method=True)
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """`tl.argmax`: index of the largest value; ties go to the first index, NaN never wins."""
    return _with_indices(input, axis, keep_dims, "max")[1]


@builtin(method=True)
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """`tl.argmin`: index of the smallest value; ties go to the first index, NaN never wins."""
    return _with_indices(input, axis, keep_dims, "min")[1]


def _with_indices(input, axis, keep_dims, which):
    x = _promote_bf16(to_tensor(input))
    orig_ndim = len(x.shape)
    axis = _axis(axis, orig_ndim)
    none = axis is None
    x, axis = _flatten_if_none(x, axis)
    n = x.shape[axis]
    idx_shape = [1] * (len(x.shape) + 1)
    idx_shape[axis + 1] = n
    index = np.broadcast_to(np.arange(n, dtype=np.int32).reshape(idx_shape), x.data.shape)
    better = np.greater if which == "max" else np.less
    floating = x.dtype.is_floating()

    def combine(l, r):
        v1, i1 = l
        v2, i2 = r
        pick_left = better(v1, v2) | ((v1 == v2) & (i1 < i2))
        if floating:  # NaN-aware: a NaN never beats a number
            pick_left = (pick_left & ~np.isnan(v1)) | (np.isnan(v2) & ~np.isnan(v1))
        return [np.where(pick_left, v1, v2), np.where(pick_left, i1, i2)]

    values, indices = _tree([x.data, index], axis + 1, combine)
    return tuple(_finish_reduce([values, indices], [x.dtype, T.int32], x.shape, axis, unwrap(keep_dims),
                                orig_ndim, none))


def _call_combine(combine_fn, left, right, dtypes, shape):
    args = [tensor(d, ty, shape) for d, ty in zip(left, dtypes)] + \
           [tensor(d, ty, shape) for d, ty in zip(right, dtypes)]
    out = combine_fn(*args)
    if isinstance(out, tensor):
        out = (out,)
    return [np.broadcast_to(to_tensor(o).data, np.broadcast_shapes(left[0].shape, to_tensor(o).data.shape))
            for o in out]


@builtin(method=True)
def reduce(input, axis, combine_fn, keep_dims=False):
    """`tl.reduce(x or tuple, axis, combine_fn)`: tree reduction with a @triton.jit combine function."""
    single = isinstance(input, tensor)
    inputs = [to_tensor(input)] if single else [to_tensor(t) for t in input]
    orig_ndim = len(inputs[0].shape)
    axis = _axis(axis, orig_ndim)
    none = axis is None
    flat = [_flatten_if_none(t, axis) for t in inputs]
    inputs = [f[0] for f in flat]
    axis = flat[0][1]
    dtypes = [t.dtype for t in inputs]
    g = np.broadcast_shapes(*[t.data.shape for t in inputs])
    datas = [np.broadcast_to(t.data, g) for t in inputs]
    shape = inputs[0].shape

    def combine(l, r):
        sub = list(l[0].shape[1:])
        return _call_combine(combine_fn, l, r, dtypes, tuple(sub))

    out = _tree(datas, axis + 1, combine)
    results = _finish_reduce(out, dtypes, shape, axis, unwrap(keep_dims), orig_ndim, none)
    return results[0] if single else tuple(results)


@builtin(method=True)
def associative_scan(input, axis, combine_fn, reverse=False):
    """`tl.associative_scan`: inclusive scan with a @triton.jit combine function (log-step, Hillis–Steele)."""
    single = isinstance(input, tensor)
    inputs = [to_tensor(input)] if single else [to_tensor(t) for t in input]
    ndim = len(inputs[0].shape)
    axis = _axis(axis, ndim)
    dtypes = [t.dtype for t in inputs]
    shape = inputs[0].shape
    g = np.broadcast_shapes(*[t.data.shape for t in inputs])
    datas = [np.broadcast_to(t.data, g) for t in inputs]
    outs = _scan(datas, axis + 1, unwrap(reverse),
                 lambda l, r: _call_combine(combine_fn, l, r, dtypes, tuple(l[0].shape[1:])))
    results = tuple(tensor(np.ascontiguousarray(d), ty, shape) for d, ty in zip(outs, dtypes))
    return results[0] if single else results


def _scan(datas, axis, reverse, combine):
    if reverse:
        datas = [np.flip(d, axis) for d in datas]
    n = datas[0].shape[axis]
    lead = (slice(None),) * axis
    step = 1
    while step < n:
        head = [d[lead + (slice(0, step),)] for d in datas]
        prev = [d[lead + (slice(0, n - step),)] for d in datas]
        cur = [d[lead + (slice(step, n),)] for d in datas]
        tail = combine(prev, cur)
        datas = [np.concatenate([h, t], axis=axis) for h, t in zip(head, tail)]
        step *= 2
    if reverse:
        datas = [np.flip(d, axis) for d in datas]
    return datas


def _promote_bf16(x: tensor) -> tensor:
    """Triton 3.6's `_promote_bfloat16_to_float32`, run first by tl.max/tl.min (also with return_indices, so argmax
    and argmin), cumsum and cumprod: no bf16 max, min or compare on the hardware. The result stays fp32."""
    return cast(x, T.float32) if x.dtype.is_bf16() else x


def _np_scan(x: tensor, axis, reverse, out: T.dtype, fn):
    x = cast(x, out)
    ax = _axis(axis, len(x.shape))
    op = _rounded(fn, out)
    (data,) = _scan([x.data], ax + 1, unwrap(reverse), lambda l, r: [op(l[0], r[0])])
    return tensor(np.ascontiguousarray(data), out, x.shape)


@builtin(method=True)
def cumsum(input, axis=0, reverse=False, dtype=None):
    """`tl.cumsum`: inclusive prefix sum; bf16 is summed in fp32 and stays fp32, narrow ints accumulate in
    (u)int32 unless `dtype` says otherwise (Triton 3.6 standard.py)."""
    x = _promote_bf16(to_tensor(input))
    return _np_scan(x, axis, reverse, _sum_dtype(x.dtype, unwrap(dtype)), np.add)


@builtin(method=True)
def cumprod(input, axis=0, reverse=False):
    """`tl.cumprod`: inclusive prefix product in the input's type (Triton 3.6: no `dtype=`, narrow ints are not
    widened and wrap); bf16 is multiplied in fp32 and stays fp32."""
    x = _promote_bf16(to_tensor(input))
    return _np_scan(x, axis, reverse, x.dtype, np.multiply)
