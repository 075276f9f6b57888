"""Tensor descriptors (TMA) in the kernel: `tl.make_tensor_descriptor`, `desc.load`, `desc.store`, the atomics.

A descriptor is a base pointer, a shape and strides (in elements) and a block shape. `desc.load(offsets)` reads
the block of `block_shape` whose first element is at `offsets` (element coordinates, one per dim); elements
outside [0, shape) read as 0 (or NaN with padding "nan"), as the TMA unit pads them. `desc.store(offsets, v)`
writes only the elements inside the shape. Each access is a tile-shaped pointer block plus an in-bounds mask
through `tl.load`/`tl.store`, so bounds checks against the allocation, traffic counters, the sanitizer and
grouping apply unchanged.

Compile-time checks and their wording follow Triton 3.6's `semantic.make_tensor_descriptor`,
`descriptor_load`/`descriptor_store`/`descriptor_atomic_*` and `core.block_type`; the run-time alignment checks
(base and strides 16-byte aligned) follow its interpreter's `TensorDescHandle.validate`. The innermost offset
of a load, store or atomic must be a multiple of 16 bytes too: on the H200 (Triton 3.6) an unaligned one stops
the kernel with "CUDA error: an illegal instruction was encountered" (probe `descriptor_unaligned_offset`),
so it is a DescriptorError here. Outer offsets may be anything, negative too; rows outside read as padding.
"""
from __future__ import annotations

import contextlib

import numpy as np

from minitriton.values import programs
from minitriton.values.running import LaunchMemory
from minitriton import errors
from minitriton.diagnostics import Suggestion
from minitriton.semantics import dtypes as T
from minitriton.memory import access as ops_memory
from minitriton.memory.allocation import alignment_offset, as_array
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.shape import arange, expand_dims
from minitriton.values.registry import builtin
from minitriton.values.tensor import block_type, tensor
from minitriton.memory.host_descriptor import validate_block_shape


class tensor_descriptor_type:
    """The type of a descriptor value: `tensor_descriptor<fp16[64, 64]>`."""

    def __init__(self, block: block_type):
        self.block_type = block

    def __str__(self):
        shape = ", ".join(str(s) for s in self.block_type.shape)
        return f"tensor_descriptor<{self.block_type.element_ty}[{shape}]>"

    __repr__ = __str__

    def __eq__(self, other):
        return (isinstance(other, tensor_descriptor_type) and self.block_type.shape == other.block_type.shape
                and self.block_type.element_ty == other.block_type.element_ty)

    def __hash__(self):
        return hash((self.block_type.shape, str(self.block_type.element_ty)))


class tensor_descriptor_base:
    """A descriptor value in the kernel (Triton's `tl.tensor_descriptor_base`): block type, loads and stores."""

    def __init__(self, base: tensor, shape: tuple, strides: tuple, block_shape: tuple, padding: str = "zero"):
        self.base = base
        self._shape = shape
        self._strides = strides
        self.padding = padding
        self.type = tensor_descriptor_type(block_type(base.dtype.element_ty, block_shape))

    @property
    def block_type(self):
        return self.type.block_type

    @property
    def block_shape(self):
        return self.type.block_type.shape

    @property
    def dtype(self):
        return self.type.block_type.element_ty

    def __str__(self):
        return str(self.type)

    __repr__ = __str__

    def load(self, offsets):
        """The block at `offsets` (elements outside the shape read as 0, or NaN with padding "nan")."""
        programs.current("load")
        ptr, mask = _block(self, offsets, "load")
        other = float("nan") if self.padding == "nan" else None
        with _described(self, "load"):
            return ops_memory.load(ptr, mask=mask, other=other)

    def store(self, offsets, value):
        """Write `value` (cast to the descriptor's dtype) at `offsets`; elements outside the shape are dropped."""
        programs.current("store")
        value = _validate_store_like(self, value, offsets)
        value = cast(value, self.dtype)
        ptr, mask = _block(self, offsets, "store")
        with _described(self, "store"):
            ops_memory.store(ptr, value, mask=mask)

    def _reduce(self, op, offsets, value, allowed):
        programs.current(f"atomic_{op}")
        value = _validate_store_like(self, value, offsets)
        errors.require(self.dtype in allowed, "descriptor_atomic_dtype", op=op, dtype=self.dtype)
        ptr, mask = _block(self, offsets, f"atomic_{op}")
        with _described(self, f"atomic_{op}"):
            ops_memory.atomic_rmw(op, ptr, value, mask)

    def atomic_add(self, offsets, value):
        """An atomic add of `value` into the block's in-bounds elements (returns nothing, as in Triton)."""
        self._reduce("add", offsets, value, (T.uint32, T.int32, T.uint64, T.float32, T.float16, T.bfloat16))

    def atomic_min(self, offsets, value):
        self._reduce("min", offsets, value, _MIN_MAX)

    def atomic_max(self, offsets, value):
        self._reduce("max", offsets, value, _MIN_MAX)

    def atomic_and(self, offsets, value):
        self._reduce("and", offsets, value, _BITWISE)

    def atomic_or(self, offsets, value):
        self._reduce("or", offsets, value, _BITWISE)

    def atomic_xor(self, offsets, value):
        self._reduce("xor", offsets, value, _BITWISE)

    def gather(self, *args):
        """`desc.gather(x_offsets, y_offset)`: rows x_offsets[i] (a 1-D int block), columns y_offset + j, of a
        descriptor with one-row blocks; elements outside the shape read as 0."""
        errors.require(len(args) == 2, "descriptor_indexing", op="gather", count=len(args))
        programs.current("load")
        ptr, mask = _rows(self, "gather", *args)
        other = float("nan") if self.padding == "nan" else None
        with _described(self, "gather"):
            return ops_memory.load(ptr, mask=mask, other=other)

    def scatter(self, value, *args):
        """`desc.scatter(value, x_offsets, y_offset)`: the rows of `value` into rows x_offsets[i], columns
        y_offset + j, where inside the shape."""
        errors.require(len(args) == 2, "descriptor_indexing", op="scatter", count=len(args))
        programs.current("store")
        ptr, mask = _rows(self, "scatter", *args)
        with _described(self, "scatter"):
            ops_memory.store(ptr, cast(to_tensor(value), self.dtype), mask=mask)


_MIN_MAX = (T.uint32, T.int32, T.uint64, T.int64, T.float16, T.bfloat16)
_BITWISE = (T.uint32, T.int32, T.uint64, T.int64)


class tensor_descriptor(tensor_descriptor_base):
    """A descriptor with its global shape (int32 scalars) and strides (int64 scalars)."""

    @property
    def shape(self):
        return self._shape

    @property
    def strides(self):
        return self._strides


@contextlib.contextmanager
def _described(desc, op: str):
    """An out-of-bounds access through a descriptor: said as such, with its shape and strides as the fix."""
    try:
        yield
    except errors.KernelRuntimeError as e:
        record = e.diagnostic
        if e.kind is not errors.OutOfBoundsError or record.kind != "out_of_bounds":
            raise
        record.kind = "descriptor_out_of_bounds"
        record.fields["call"] = op
        record.suggestion = Suggestion("descriptor_reach", {"shape": str([_shown(v) for v in desc._shape]),
                                                            "strides": str([_shown(v) for v in desc._strides])})
        raise


def _shown(v):
    if isinstance(v, tensor):
        vals = np.unique(v.data)
        return int(vals[0]) if vals.size == 1 else "varies"
    return v


def _validate_store_like(desc, value, offsets) -> tensor:
    value = to_tensor(value)
    ndim = len(desc.block_shape)
    errors.require(len(offsets) == ndim, "descriptor_offsets_count", ndim=ndim, count=len(offsets))
    assert value.shape == desc.block_shape
    return value


def _offset(elem):
    """One load/store offset as Triton 3.6's `_convert_elem_to_ir_value(require_i64=False)` accepts it."""
    elem = unwrap(elem)
    if isinstance(elem, bool):
        return int(elem)
    if isinstance(elem, int):
        errors.require(-2**31 <= elem < 2**31, "block_pointer_range32", value=elem)
        return elem
    if isinstance(elem, tensor):
        errors.require(elem.numel == 1, "block_pointer_scalar", numel=elem.numel)
        errors.require(elem.dtype.is_int(), "block_pointer_integer", dtype=elem.dtype)
        if elem.dtype == T.int64:
            raise errors.python_error(AssertionError, errors.diagnostic("block_pointer_int64_offsets"))
        return elem if not elem.shape else tensor(elem.data.reshape(elem.data.shape[0]), elem.dtype, ())
    raise errors.python_error(AssertionError, errors.diagnostic("block_pointer_element", type=type(elem)))


def _block(desc, offsets, op):
    """(pointer block, in-bounds mask) of the block at `offsets`: lane (i, j, ...) points at element
    (offsets[0] + i, offsets[1] + j, ...) and is on where that element lies inside the descriptor's shape."""
    if not hasattr(offsets, "__len__"):
        offsets = [offsets]
    ndim = len(desc.block_shape)
    errors.require(len(offsets) == ndim, "descriptor_offsets_count", ndim=ndim, count=len(offsets))
    offs = [_offset(o) for o in offsets]
    _check_inner_offset(desc, offs[-1], op)
    ptr, mask = desc.base, None
    for d, (o, n) in enumerate(zip(offs, desc.block_shape)):
        dims = [1] * ndim
        dims[d] = n
        lanes = tensor(np.arange(n, dtype=np.int64).reshape([1] + dims), T.int64, tuple(dims))
        idx = lanes + o  # int64: coordinates far outside the shape cannot wrap
        ptr = ptr + idx * desc._strides[d]
        inside = (idx >= 0) & (idx < desc._shape[d])
        mask = inside if mask is None else mask & inside
    return ptr, mask


def _check_inner_offset(desc, offset, op):
    """The innermost coordinate of a TMA block access must be a multiple of 16 bytes (the GPU faults otherwise)."""
    elem = desc.dtype.primitive_bitwidth // 8
    values = offset.data.astype(np.int64) if isinstance(offset, tensor) else np.array([offset], np.int64)
    bad = np.nonzero((values * elem) % 16)[0]
    if not bad.size:
        return
    v = int(values[bad[0]])
    per = 16 // elem
    record = errors.diagnostic("descriptor_offset_alignment", op=op, dim=len(desc.block_shape) - 1, offset=v,
                               dtype=desc.dtype, bytes=v * elem)
    record.suggestion = Suggestion("descriptor_offset_fix", {"per": per})
    raise errors.KernelRuntimeError(errors.DescriptorError, record,
                                    bad if isinstance(offset, tensor) and offset.data.shape[0] > 1 else np.array([0]))


def _rows(desc, op, x_offsets, y_offset):
    """(pointers, in-bounds mask) for a gather/scatter: Triton 3.6's `descriptor_gather`/`_scatter` checks."""
    x_offsets = to_tensor(x_offsets)
    errors.require(len(desc.block_shape) == 2, "descriptor_2d", block_shape=str(desc.block_shape))
    errors.require(desc.block_shape[0] == 1, "descriptor_one_row", block_shape=str(desc.block_shape))
    errors.require(len(x_offsets.shape) == 1, "descriptor_x_offsets", shape=str(x_offsets.shape))
    errors.require(x_offsets.shape[0] >= 8, "descriptor_rows", op=op, shape=str(x_offsets.shape))
    min_cols = 32 // desc.dtype.primitive_bitwidth * 8
    errors.require(desc.block_shape[1] >= min_cols,
                   "descriptor_columns", op=op, dtype=desc.dtype, min_cols=min_cols, cols=desc.block_shape[1])
    y = _offset(y_offset)
    rows = expand_dims(cast(x_offsets, T.int64), 1)
    cols = expand_dims(cast(arange(0, desc.block_shape[1]), T.int64), 0) + y
    ptr = desc.base + rows * desc._strides[0] + cols
    mask = (rows >= 0) & (rows < desc._shape[0]) & (cols >= 0) & (cols < desc._shape[1])
    return ptr, mask


def _scalar(value, ty: T.dtype, what: str):
    value = unwrap(value)
    if isinstance(value, tensor):
        errors.require(value.numel == 1, "size_one_tensor", numel=value.numel)
        value = value if not value.shape else tensor(value.data.reshape(value.data.shape[0]), value.dtype, ())
        return cast(value, ty)
    if not isinstance(value, int):
        raise errors.python_error(TypeError, errors.diagnostic(
            "descriptor_integers", what=what, type=type(value).__name__))
    return tensor(np.array([value], ty.np_compute), ty, ())


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """`tl.make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero")`."""
    group = programs.current("make_tensor_descriptor")
    base = unwrap(base)
    shape, strides = list(unwrap(shape)), list(unwrap(strides))
    block_shape = unwrap(block_shape)
    block_shape = [unwrap(b) for b in (block_shape if hasattr(block_shape, "__iter__") else [block_shape])]
    ndim = len(shape)
    if not (1 <= ndim <= 5):
        raise errors.python_error(ValueError, errors.diagnostic("descriptor_ndim", ndim=ndim))
    if len(strides) != ndim:
        raise errors.python_error(ValueError, errors.diagnostic(
            "descriptor_strides_count", ndim=ndim, count=len(strides)))
    if len(block_shape) != ndim:   # Triton 3.6 names the count of strides here
        raise errors.python_error(ValueError, errors.diagnostic("descriptor_block_rank", ndim=ndim, count=len(strides)))
    assert isinstance(base, tensor) and base.dtype.is_ptr()
    elem = base.dtype.element_ty
    elem_size = elem.primitive_bitwidth // 8
    contig_dim_size = block_shape[-1]
    if contig_dim_size * elem_size < 16:
        raise errors.python_error(ValueError, errors.diagnostic(
            "descriptor_block_bytes", size=contig_dim_size, itemsize=elem_size, bytes=contig_dim_size * elem_size))
    last_stride = unwrap(strides[-1])
    if isinstance(last_stride, tensor):
        # Triton 3.6 compares it with `!=` at compile time: only a literal (or an int argument equal to 1,
        # which Triton specializes) passes
        raise errors.python_error(ValueError, errors.diagnostic(
            "descriptor_last_stride_runtime", type=last_stride.type))
    if last_stride != 1:
        raise errors.python_error(ValueError, errors.diagnostic("descriptor_last_stride", stride=last_stride))
    shape_t = tuple(_scalar(s, T.int32, "shapes") for s in shape)
    stride_t = tuple(_scalar(s, T.int64, "strides") for s in strides[:-1]) + (1,)
    block_shape = tuple(block_shape)
    if base.shape:
        raise errors.python_error(ValueError, errors.diagnostic("descriptor_base"))
    validate_block_shape(block_shape)
    padding = padding_option or "zero"
    if padding not in ("zero", "nan"):
        raise errors.python_error(ValueError, errors.diagnostic("padding_option", option=padding_option))
    if elem.is_int() and padding == "nan":
        raise errors.python_error(ValueError, errors.diagnostic("padding_nan_block"))
    _check_alignment(group, base, stride_t, elem_size)
    return tensor_descriptor(base, shape_t, stride_t, block_shape, padding)


def _check_alignment(group, base: tensor, strides: tuple, elem_size: int):
    """The TMA unit's run-time rules: a 16-byte aligned base address and leading strides that are multiples
    of 16 bytes (a GPU faults or reads garbage otherwise; Triton's interpreter asserts the same)."""
    alloc = base.alloc
    if alloc is not None:
        start = alignment_offset(alloc.array) if alloc.array.size else 0
        addr = start + (base.data.astype(np.int64) - alloc.base_offset) * elem_size
    else:
        addr = base.data.astype(np.int64)
    bad = np.nonzero(addr % 16)[0]
    if bad.size:
        past = int(addr[bad[0]]) % 16
        record = (errors.diagnostic("descriptor_base_alignment", past=past, tensor=alloc.name,
                                    elements=int(base.data[bad[0]]) - alloc.base_offset) if alloc else
                  errors.diagnostic("descriptor_address_alignment", past=past))
        record.suggestion = Suggestion("descriptor_base_fix")
        raise errors.KernelRuntimeError(errors.DescriptorError, record, bad)
    for d, s in enumerate(strides[:-1]):
        data = s.data.astype(np.int64) * elem_size
        bad = np.nonzero(data % 16)[0]
        if bad.size:
            record = errors.diagnostic("descriptor_stride_alignment", dim=d, stride=int(s.data[bad[0]]),
                                       bytes=int(data[bad[0]]))
            record.suggestion = Suggestion("descriptor_stride_fix")
            raise errors.KernelRuntimeError(errors.DescriptorError, record, bad)


def from_host(name: str, desc, launch: LaunchMemory):
    """A host `TensorDescriptor` argument as the kernel's descriptor value (its base becomes an allocation)."""
    array, elem = as_array(desc.base)
    alloc = launch.add_allocation(name, array, elem, desc.base)
    base = tensor(np.array([alloc.base_offset], np.int64), T.pointer_type(elem), (), alloc)
    shape = tuple(_host_int(v, T.int32) for v in desc.shape)
    strides = tuple(_host_int(v, T.int64) for v in desc.strides[:-1]) + (1,)
    return tensor_descriptor(base, shape, strides, tuple(int(b) for b in desc.block_shape), desc.padding)


def _host_int(value, ty):
    return tensor(np.array([int(value)], ty.np_compute), ty, ())


@builtin
def load_tensor_descriptor(desc, offsets):
    """`tl.load_tensor_descriptor(desc, offsets)`: `desc.load(offsets)`."""
    return desc.load(offsets)


@builtin
def store_tensor_descriptor(desc, offsets, value):
    """`tl.store_tensor_descriptor(desc, offsets, value)`: `desc.store(offsets, value)`."""
    return desc.store(offsets, value)
