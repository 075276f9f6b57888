"""Block shapes: broadcasting (the rules every op uses), creation (arange, full/zeros), indexing with None,
reshape, trans, join/split.

Uniform values (the same in every program) keep a program axis of length 1, and constant blocks are
read-only broadcast views, so `tl.zeros((128, 128))` costs no memory until it is combined with something.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import remember, scalar_array, scalar_key, to_tensor, unwrap
from minitriton.values import factored
from minitriton.values.registry import builtin, operator
from minitriton.values.tensor import interned, tensor

TRITON_MAX_TENSOR_NUMEL = 1048576


def _too_large(numel: int) -> ValueError:
    return errors.python_error(ValueError, errors.diagnostic("numel_too_large", numel=numel,
                                                             limit=TRITON_MAX_TENSOR_NUMEL))


# ---------------------------------------------------------------- broadcasting

_BROADCAST_CACHE: dict = {}  # (shape, shape) -> broadcast shape, for the few shapes a kernel uses


def broadcast_shapes(a: tuple, b: tuple) -> tuple:
    """NumPy-style broadcasting of block shapes, with Triton's error text; the result is interned."""
    if a is b:
        return interned(a)
    found = _BROADCAST_CACHE.get((a, b))
    if found is not None:
        return found
    out = interned(_broadcast_shapes(a, b))
    if len(_BROADCAST_CACHE) > 4096:  # bounded: shapes are compile-time constants, so this rarely fills
        _BROADCAST_CACHE.clear()
    _BROADCAST_CACHE[(a, b)] = out
    return out


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        else:
            raise errors.python_error(ValueError, errors.diagnostic("broadcast", index=i, left=x, right=y))
    return tuple(out)


def expand(data: np.ndarray, shape: tuple, nd: int) -> np.ndarray:
    """`data` (program axis + `shape`) with size-1 axes inserted so the block part has `nd` dims."""
    missing = nd - len(shape)
    if missing <= 0 or data.ndim == 0:
        return data
    return data.reshape((data.shape[0],) + (1,) * missing + shape)


def broadcast_data(t: tensor, shape: tuple) -> np.ndarray:
    """`t.data` broadcast (as a view) to the block shape `shape`, keeping its program axis."""
    data = expand(t.data, t.shape, len(shape))
    return np.broadcast_to(data, (data.shape[0],) + shape)


def broadcast_to_shape(t: tensor, shape: tuple) -> tensor:
    """Triton's `broadcast_impl_shape`: `t` viewed with block shape `shape`."""
    if t.shape == shape:
        return t
    if broadcast_shapes(t.shape, shape) != shape:
        raise errors.python_error(ValueError, errors.diagnostic("broadcast_to_size", shape=t.shape, target=shape))
    return tensor(broadcast_data(t, shape), t.dtype, shape, t.alloc)


# ---------------------------------------------------------------- block shapes

def _is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def validate_block_shape(shape) -> tuple:
    """Triton's block-shape rules: integer, power-of-two dims, at most TRITON_MAX_TENSOR_NUMEL elements."""
    shape = tuple(unwrap(d) for d in shape)
    numel = 1
    for i, d in enumerate(shape):
        if isinstance(d, tensor) or not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise errors.python_error(TypeError, errors.diagnostic("shape_element_type", index=i, type=type(d)))
        if not _is_pow2(int(d)):
            raise errors.python_error(ValueError, errors.diagnostic("shape_power_of_two", index=i, size=int(d)))
        numel *= int(d)
    if numel > TRITON_MAX_TENSOR_NUMEL:
        raise _too_large(numel)
    return tuple(int(d) for d in shape)


def _shape_arg(shape):
    shape = unwrap(shape)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(shape)


_ARANGES: dict = {}  # (start, end) -> read-only data of a valid arange (kernels call it with the same bounds)


@builtin
def arange(start, end):
    """`tl.arange(start, end)`: int32 [start, end); both constexpr, end - start a power of 2."""
    if type(start) is int and type(end) is int:
        data = _ARANGES.get((start, end))
        if data is not None:
            return tensor(data, T.int32, data.shape[1:])
    start, end = unwrap(start), unwrap(end)
    if isinstance(start, tensor) or isinstance(end, tensor) or not isinstance(start, int) or not isinstance(end, int):
        raise errors.python_error(ValueError, errors.diagnostic("arange_constexpr"))
    if not (0 <= start < 2**31 and 0 <= end <= 2**31):  # Triton: `start >> 32 or end >> 32` (negatives too)
        raise errors.python_error(ValueError, errors.diagnostic("arange_int32", start=start, end=end))
    if end <= start:
        raise errors.python_error(ValueError, errors.diagnostic("arange_empty", start=start, end=end))
    n = end - start
    if not _is_pow2(n):
        raise errors.python_error(ValueError, errors.diagnostic("arange_power_of_two", start=start, end=end, size=n,
                                                                pow2=1 << (n - 1).bit_length()))
    if n > TRITON_MAX_TENSOR_NUMEL:
        raise _too_large(n)
    data = np.arange(start, end, dtype=np.int32).reshape(1, n)
    data.flags.writeable = False  # shared by every arange(start, end) (no op writes into its operands)
    if type(start) is int and type(end) is int and len(_ARANGES) < 1024:
        _ARANGES[(start, end)] = data
        factored.shared_arange(data)
    return tensor(data, T.int32, (n,))


@builtin
def full(shape, value, dtype):
    """`tl.full(shape, value, dtype)`: a block filled with `value` (a constant or a scalar tensor)."""
    shape = validate_block_shape(_shape_arg(shape))
    dtype = unwrap(dtype)
    value = unwrap(value)
    if isinstance(value, tensor):
        if value.shape:
            raise errors.python_error(ValueError, errors.diagnostic("full_scalar"))
        v = cast(value, dtype)
        data = v.data.reshape((v.data.shape[0],) + (1,) * len(shape))
    else:
        key = scalar_key(value)
        if key is not None and isinstance(dtype, T.dtype):
            key = (shape, key, dtype.name)
            found = FULLS.get(key)
            if found is None:
                found = remember(FULLS, key, _full_data(scalar_array(value, dtype), shape))
            return tensor(found, dtype, shape)
        data = scalar_array(value, dtype).reshape((1,) + (1,) * len(shape))
    return tensor(np.broadcast_to(data, (data.shape[0],) + shape), dtype, shape)


FULLS: dict = {}  # (shape, scalar key, dtype name) -> the (read-only, broadcast) data of tl.full(shape, value, dtype)


def _full_data(value: np.ndarray, shape: tuple) -> np.ndarray:
    return np.broadcast_to(value.reshape((1,) + (1,) * len(shape)), (1,) + shape)


@builtin
def zeros(shape, dtype):
    """`tl.zeros(shape, dtype)`."""
    return full(shape, 0, dtype)


@builtin
def zeros_like(input):
    """`tl.zeros_like(x)`: zeros of x's shape and dtype."""
    x = to_tensor(input)
    return full(x.shape, 0, x.dtype)


@operator("__getitem__")
def getitem(x, index):
    """`x[None, :]`-style indexing: `None` inserts a size-1 axis, `:` keeps one (one past the last axis is
    ignored, as in Triton); nothing else is allowed."""
    if type(index) is tuple and len(index) == 2 and len(x.shape) == 1:  # the common `x[:, None]`, `x[None, :]`
        first, second = index
        if second is None and type(first) is slice and first == _ALL:
            out = tensor(x.data[:, :, None], x.dtype, x.shape + (1,), x.alloc)
            out.bounds = x.bounds
            return out
        if first is None and type(second) is slice and second == _ALL:
            out = tensor(x.data[:, None, :], x.dtype, (1,) + x.shape, x.alloc)
            out.bounds = x.bounds
            return out
    if not isinstance(index, tuple):
        index = (index,)
    shape, key, dim = [], [_ALL], 0
    for item in index:
        if item is not None and type(item) is not slice:
            item = unwrap(item)
        if item is None:
            shape.append(1)
            key.append(None)
        elif isinstance(item, slice) and item == _ALL:
            if dim >= len(x.shape):
                continue   # Triton's __getitem__ passes over a `:` past the last axis (`scalar[None, None, :]`)
            shape.append(x.shape[dim])
            key.append(slice(None))
            dim += 1
        else:
            raise errors.python_error(ValueError, errors.diagnostic("tensor_index", item=repr(item)))
    shape.extend(x.shape[dim:])
    out = tensor(x.data[tuple(key)], x.dtype, tuple(shape), x.alloc)
    out.bounds = x.bounds  # the same offsets (pointers)
    return out


_ALL = slice(None)


@builtin(method=True)
def reshape(input, *shape, can_reorder=False):
    """`tl.reshape(x, shape)`: same elements, new power-of-two shape (row-major order)."""
    x = to_tensor(input)
    if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)):
        shape = tuple(unwrap(shape[0]))
    shape = validate_block_shape(shape) if shape else ()
    if not x.shape:   # 3.6's semantic.reshape reads input.type.numel, which a scalar's dtype lacks
        raise errors.python_error(AttributeError, errors.diagnostic("no_attribute", type="dtype", name="numel"))
    if int(np.prod(shape, dtype=np.int64)) != x.numel:
        raise errors.python_error(ValueError, errors.diagnostic("reshape_numel", shape=shape, numel=x.numel))
    return tensor(x.data.reshape((x.data.shape[0],) + shape), x.dtype, shape, x.alloc)


@builtin(method=True)
def view(input, *shape):
    """`tl.view`: like reshape (Triton allows reordering; minitriton keeps row-major order)."""
    return reshape(input, *shape)


@builtin(method=True)
def ravel(x, can_reorder=False):
    """`tl.ravel(x)`: flatten to 1-D."""
    x = to_tensor(x)
    return reshape(x, (x.numel,))


@builtin(method=True)
def permute(input, *dims):
    """`tl.permute(x, dims)`: reorder the axes."""
    x = to_tensor(input)
    if len(dims) == 1 and isinstance(unwrap(dims[0]), (tuple, list)):
        dims = tuple(unwrap(dims[0]))
    dims = tuple(int(unwrap(d)) for d in dims)
    if len(dims) != len(x.shape):  # Triton's wording (semantic.permute)
        raise errors.python_error(ValueError, errors.diagnostic("permute_length", ndim=len(x.shape), given=len(dims)))
    if sorted(dims) != list(range(len(x.shape))):
        raise errors.python_error(ValueError, errors.diagnostic("permute_order", dims=dims))
    order = (0,) + tuple(d + 1 for d in dims)
    return tensor(np.transpose(x.data, order), x.dtype, tuple(x.shape[d] for d in dims), x.alloc)


@builtin(method=True)
def trans(input, *dims):
    """`tl.trans(x)`: swap the last two axes (a batched transpose for 3-D), or permute with `dims`."""
    x = to_tensor(input)
    if dims and not (len(dims) == 1 and unwrap(dims[0]) is None):
        return permute(x, *dims)
    n = len(x.shape)
    if n < 2:  # Triton 3.6 and 3.9 core.trans
        raise errors.python_error(ValueError, errors.diagnostic("trans_rank", ndim=n))
    return permute(x, *range(n - 2), n - 1, n - 2)


@builtin(method=True)
def expand_dims(input, axis):
    """`tl.expand_dims(x, axis)`: insert size-1 axes at `axis` (an int or a sequence)."""
    x = to_tensor(input)
    axis = unwrap(axis)
    axes = [unwrap(a) for a in axis] if isinstance(axis, (tuple, list)) else [axis]
    ndim = len(x.shape) + len(axes)
    norm = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise errors.python_error(ValueError, errors.diagnostic("invalid_axis", axis=a, low=-ndim, ndim=ndim))
        norm.append(a % ndim)
    if len(set(norm)) != len(norm):
        raise errors.python_error(ValueError, errors.diagnostic("expand_dims_duplicate", axes=norm))
    shape = list(x.shape)
    for a in sorted(norm):
        shape.insert(a, 1)
    shape = tuple(shape)
    return tensor(x.data.reshape((x.data.shape[0],) + shape), x.dtype, shape, x.alloc)


@builtin(method=True)
def broadcast_to(input, *shape):
    """`tl.broadcast_to(x, shape)`."""
    x = to_tensor(input)
    if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)):
        shape = tuple(unwrap(shape[0]))
    shape = tuple(int(unwrap(d)) for d in shape)
    if x.shape:  # Triton's broadcast_impl_shape: same rank, no left padding (a scalar is splatted)
        if len(x.shape) != len(shape):
            raise errors.python_error(ValueError, errors.diagnostic("broadcast_rank", left=list(x.shape),
                                                                    right=list(shape)))
        for i, item in enumerate(x.shape):
            if shape[i] != item and item != 1:
                raise errors.python_error(ValueError, errors.diagnostic(
                    "broadcast_dimension", target=shape[i], size=item, index=i, left=list(x.shape), right=list(shape)))
    return broadcast_to_shape(x, shape)


@builtin
def broadcast(input, other):
    """`tl.broadcast(a, b)`: both broadcast to their common shape."""
    a, b = to_tensor(input), to_tensor(other)
    shape = broadcast_shapes(a.shape, b.shape)
    return broadcast_to_shape(a, shape), broadcast_to_shape(b, shape)


@builtin
def cat(input, other, can_reorder=False, dim=0):
    """`tl.cat(a, b, dim=0)`: concatenate two blocks of one shape along `dim`, keeping order (newest Triton's
    core.cat, which ignores can_reorder). `can_reorder=True` keeps Triton 3.6/3.9's form: two 1-D blocks."""
    a, b = to_tensor(input), to_tensor(other)
    if a.dtype != b.dtype or (unwrap(can_reorder) and (len(a.shape) != 1 or len(b.shape) != 1)):
        raise errors.python_error(ValueError, errors.diagnostic("cat_operands"))
    if len(a.shape) != len(b.shape) or a.shape != b.shape:
        raise errors.python_error(AssertionError, errors.diagnostic("cat_shape", left=list(a.shape),
                                                                    right=list(b.shape)))
    ndim, axis = len(a.shape), unwrap(dim)
    if not -ndim <= axis < ndim:
        raise errors.python_error(ValueError, errors.diagnostic("invalid_axis", axis=axis, low=-ndim, ndim=ndim))
    axis %= ndim
    shape = a.shape[:axis] + (2 * a.shape[axis],) + a.shape[axis + 1:]
    validate_block_shape(shape)
    g = max(a.data.shape[0], b.data.shape[0])
    data = np.concatenate([np.broadcast_to(a.data, (g,) + a.shape), np.broadcast_to(b.data, (g,) + b.shape)],
                          axis=1 + axis)
    return tensor(data, a.dtype, shape)


@builtin
def unsqueeze(x, dim):
    """`tl.unsqueeze(x, dim)`: insert one size-1 axis at `dim` (Triton's standard.unsqueeze; no method)."""
    return expand_dims(x, unwrap(dim))


@builtin
def squeeze(x, dim):
    """`tl.squeeze(x, dim)`: remove the size-1 axis `dim` (Triton's standard.squeeze; no method)."""
    x, axis = to_tensor(x), unwrap(dim)
    if not -len(x.shape) <= axis < len(x.shape) or x.shape[axis] != 1:  # Triton: two bare static_asserts
        raise errors.python_error(errors.StaticAssertionFailed, errors.diagnostic("static_assert", message=""))
    axis %= len(x.shape)
    return reshape(x, x.shape[:axis] + x.shape[axis + 1:])


@builtin
def join(a, b):
    """`tl.join(a, b)`: stack along a new minor axis of size 2."""
    a, b = to_tensor(a), to_tensor(b)
    shape = broadcast_shapes(a.shape, b.shape)
    ad, bd = broadcast_data(a, shape), broadcast_data(b, shape)
    g = max(ad.shape[0], bd.shape[0])
    data = np.stack([np.broadcast_to(ad, (g,) + shape), np.broadcast_to(bd, (g,) + shape)], axis=-1)
    return tensor(data, a.dtype, shape + (2,))


@builtin(method=True)
def split(a):
    """`tl.split(a)`: the inverse of join: split a last axis of size 2."""
    a = to_tensor(a)
    if not a.shape:
        raise errors.python_error(AssertionError, errors.diagnostic("split_scalar"))
    if a.shape[-1] != 2:  # Triton's wording (semantic.split)
        raise errors.python_error(AssertionError, errors.diagnostic("split_last_dim", size=a.shape[-1]))
    shape = a.shape[:-1]
    return tensor(a.data[..., 0], a.dtype, shape), tensor(a.data[..., 1], a.dtype, shape)
