"""Block pointers, as in Triton 3.6: `tl.make_block_ptr`, `tl.advance`, and `tl.load`/`tl.store` on them.

A block pointer is a base pointer, a shape and strides (int64 scalars), offsets (int32 scalars), a block shape
and an order. A load reads the `block_shape` block whose first element is at `offsets`; for the dims named in
`boundary_check` the lanes outside [0, shape) are masked off (reading 0, or NaN with `padding_option="nan"`;
3.6's RewriteTensorPointer builds exactly that mask: `offset >= 0 && offset < shape` per checked dim), and a
store writes only the lanes inside. Dims not checked are not masked: their lanes must lie inside the tensor
argument, or minitriton raises OutOfBoundsError where the GPU would read or write out of bounds. As with tensor
descriptors, each access is a tile of pointers plus a mask through `tl.load`/`tl.store`, so bounds checks,
counters, the sanitizer and grouping apply. Checks and wording: 3.6's `semantic.make_block_ptr`, `advance`,
`_load_block_pointer`, `_store_block_pointer`, `_canonicalize_boundary_check`, `_convert_elem_to_ir_value`.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.values import programs
from minitriton.semantics import dtypes as T
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.shape import broadcast_to_shape, validate_block_shape
from minitriton.values.registry import builtin
from minitriton.values.tensor import block_type, tensor


class block_pointer_type:
    """`pointer<<[64, 32], fp16>>`: a pointer to a block."""

    def __init__(self, block: block_type):
        self.element_ty = block

    def is_ptr(self):
        return True

    def is_block(self):
        return False

    def __str__(self):
        return f"pointer<{self.element_ty}>"

    __repr__ = __str__

    def __eq__(self, other):
        return (isinstance(other, block_pointer_type) and self.element_ty.shape == other.element_ty.shape
                and self.element_ty.element_ty == other.element_ty.element_ty)

    def __hash__(self):
        return hash((self.element_ty.shape, str(self.element_ty.element_ty)))


class block_pointer:
    """The value `tl.make_block_ptr` returns (and `tl.advance` moves)."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base = base
        self._shape = shape
        self._strides = strides
        self.offsets = offsets
        self.block_shape = block_shape
        self.order = order
        self.type = block_pointer_type(block_type(base.dtype.element_ty, block_shape))

    @property
    def dtype(self):
        return self.type

    @property
    def shape(self):
        return ()

    def __str__(self):
        return str(self.type)

    __repr__ = __str__

    def advance(self, offsets):
        return advance(self, offsets)


def _ir_value(elem, require_i64):
    """3.6's `_convert_elem_to_ir_value`: a scalar (program axis kept) of int64 or int32."""
    elem = unwrap(elem)
    if isinstance(elem, (bool, np.bool_)):
        return tensor(np.array([bool(elem)]), T.int1, ())
    if isinstance(elem, (int, np.integer)):
        elem = int(elem)
        if require_i64:
            errors.require(-2**63 <= elem < 2**63, "block_pointer_range64", value=elem)
            return tensor(np.array([elem], np.int64), T.int64, ())
        errors.require(-2**31 <= elem < 2**31, "block_pointer_range32", value=elem)
        return tensor(np.array([elem], np.int32), T.int32, ())
    if isinstance(elem, tensor):
        errors.require(elem.numel == 1, "block_pointer_scalar", numel=elem.numel)
        errors.require(elem.dtype.is_int(), "block_pointer_integer", dtype=elem.dtype)
        if elem.shape:
            elem = tensor(elem.data.reshape(elem.data.shape[0]), elem.dtype, ())
        if elem.dtype != T.int64 and require_i64:
            return cast(elem, T.int64)
        if elem.dtype == T.int64 and not require_i64:
            raise errors.python_error(AssertionError, errors.diagnostic("block_pointer_int64_offsets"))
        return elem
    raise errors.python_error(AssertionError, errors.diagnostic("block_pointer_element", type=type(elem)))


def _ir_values(list_like, require_i64=True):
    list_like = unwrap(list_like)
    if hasattr(list_like, "__iter__"):
        return [_ir_value(e, require_i64) for e in list_like]
    return [_ir_value(list_like, require_i64)]


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """`tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)`."""
    programs.current("make_block_ptr")
    shape = _ir_values(shape)
    strides = _ir_values(strides)
    offsets = _ir_values(offsets, require_i64=False)
    base = unwrap(base)
    if not isinstance(base, tensor) or not base.dtype.is_ptr() or base.shape:
        raise errors.python_error(ValueError, errors.diagnostic("block_pointer_base"))
    if base.dtype.element_ty == T.int1:  # 3.6 treats `pointer<int1>` as `pointer<int8>`
        base = cast(base, T.pointer_type(T.int8))
    block_shape = unwrap(block_shape)
    if not hasattr(block_shape, "__iter__"):
        block_shape = [block_shape]
    block_shape = [unwrap(e) for e in block_shape]
    errors.require(all(isinstance(e, int) and not isinstance(e, bool) and -2**31 <= e < 2**31 for e in block_shape),
                   "block_shape_constants", block_shape=str(block_shape))
    order = unwrap(order)
    if not hasattr(order, "__iter__"):
        order = [order]
    order = [unwrap(e) for e in order]
    errors.require(sorted(order) == list(range(len(order))), "block_pointer_order", order=str(order))
    errors.require(all(len(block_shape) == len(x) for x in [shape, strides, offsets, order]), "block_pointer_lengths")
    validate_block_shape(block_shape)
    return block_pointer(base, tuple(shape), tuple(strides), tuple(offsets), tuple(block_shape), tuple(order))


@builtin(method=True)
def advance(base, offsets):
    """`tl.advance(ptr, offsets)`: the same block pointer moved by `offsets` (int32 arithmetic)."""
    programs.current("advance")
    if not isinstance(base, block_pointer):
        raise errors.python_error(TypeError, errors.diagnostic("advance_base", base=repr(base)))
    offsets = _ir_values(offsets, require_i64=False)
    errors.require(len(offsets) == len(base.offsets), "advance_count", expected=len(base.offsets), count=len(offsets))
    new = tuple(cast(o, T.int32) + d if d.dtype != T.int1 else o + cast(d, T.int32)
                for o, d in zip(base.offsets, offsets))
    new = tuple(cast(v, T.int32) for v in new)
    return block_pointer(base.base, base._shape, base._strides, new, base.block_shape, base.order)


def _canonicalize_boundary_check(boundary_check, block_shape):
    boundary_check = unwrap(boundary_check)
    if boundary_check:
        if not hasattr(boundary_check, "__iter__"):
            boundary_check = [boundary_check]
        boundary_check = [unwrap(e) for e in boundary_check]
        for dim in boundary_check:
            assert isinstance(dim, int) and 0 <= dim < len(block_shape)
        assert len(boundary_check) > 0
        errors.require(len(boundary_check) == len(set(boundary_check)),
                       "boundary_check_duplicate", dims=str(boundary_check))
        return sorted(boundary_check)
    return ()


def _tile(bp, checked):
    """(pointer block, mask or None): lane (i, j, ...) points at element offsets + (i, j, ...); the mask is on
    where that element lies inside the shape along every checked dim."""
    ndim = len(bp.block_shape)
    ptr, mask = bp.base, None
    for d, n in enumerate(bp.block_shape):
        dims = [1] * ndim
        dims[d] = n
        lanes = tensor(np.arange(n, dtype=np.int64).reshape([1] + dims), T.int64, tuple(dims))
        idx = lanes + cast(bp.offsets[d], T.int64)
        ptr = ptr + idx * bp._strides[d]
        if d in checked:
            inside = (idx >= 0) & (idx < bp._shape[d])
            mask = inside if mask is None else mask & inside
    if ptr.shape != bp.block_shape:
        ptr = broadcast_to_shape(ptr, bp.block_shape)
    return ptr, mask


def lower_load(bp, mask, other, boundary_check, padding_option):
    """`tl.load(block_ptr, boundary_check=..., padding_option=...)` (3.6 `_load_block_pointer`) as a load of
    pointers: (pointer tile, mask or None, other or None)."""
    if unwrap(mask) is not None or unwrap(other) is not None:
        raise errors.python_error(ValueError, errors.diagnostic("block_pointer_mask"))
    elem = bp.type.element_ty.element_ty
    padding = unwrap(padding_option)
    if elem.is_int() and padding == "nan":
        raise errors.python_error(ValueError, errors.diagnostic("padding_nan_block_pointer"))
    checked = _canonicalize_boundary_check(boundary_check, bp.block_shape)
    ptr, m = _tile(bp, checked)
    fill = float("nan") if padding == "nan" and m is not None else None
    return ptr, m, fill


def lower_store(bp, value, mask, boundary_check):
    """`tl.store(block_ptr, value, boundary_check=...)` (3.6 `_store_block_pointer`: no implicit cast) as a
    store through pointers: (pointer tile, value, mask or None)."""
    if unwrap(mask) is not None:
        raise errors.python_error(ValueError, errors.diagnostic("block_pointer_mask"))
    block_shape = list(bp.block_shape)
    val = to_tensor(value)
    if not val.shape:
        val = broadcast_to_shape(val, bp.block_shape)
    errors.require(block_shape == list(val.shape),
                   "block_value_shape", block=str(block_shape), value=str(list(val.shape)))
    elt = bp.type.element_ty.element_ty
    errors.require(elt == val.dtype, "block_value_type", block=elt, value=val.dtype)
    checked = _canonicalize_boundary_check(boundary_check, block_shape)
    ptr, m = _tile(bp, checked)
    return ptr, val, m
