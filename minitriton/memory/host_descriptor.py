"""`triton.tools.tensor_descriptor.TensorDescriptor`: a host-side TMA descriptor, passed to a kernel as an argument.

The checks and their wording follow Triton 3.6's `TensorDescriptor.__post_init__` (AssertionError, with the
block shape validated by `triton._utils.validate_block_shape`). `base` is a NumPy array, a torch CPU tensor or a
`minitriton.Buffer`; its first element's address must be 16-byte aligned (a fresh array is; a view starting at
an odd element is not, as on a GPU).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from minitriton import errors
from minitriton.memory.allocation import alignment_offset, as_array

TRITON_MAX_TENSOR_NUMEL = 1048576


def validate_block_shape(shape) -> int:
    """Triton 3.6's `_utils.validate_block_shape`: every dim an int and a power of 2, numel <= 2**20."""
    numel = 1
    for i, d in enumerate(shape):
        if not isinstance(d, int):
            raise errors.python_error(TypeError, errors.diagnostic("shape_element_type", index=i, type=type(d)))
        if d <= 0 or d & (d - 1):
            raise errors.python_error(ValueError, errors.diagnostic("shape_power_of_two", index=i, size=d))
        numel *= d
    if numel > TRITON_MAX_TENSOR_NUMEL:
        raise errors.python_error(ValueError, errors.diagnostic(
            "numel_too_large", numel=numel, limit=TRITON_MAX_TENSOR_NUMEL))
    return numel


def base_address(base) -> int:
    """The address of `base`'s first element for the alignment rule: a torch tensor's `data_ptr()`; for
    NumPy memory, its offset past a 256-byte boundary as a GPU would place it (memory.alignment_offset)."""
    if hasattr(base, "data_ptr") and not hasattr(base, "triton_dtype"):
        return int(base.data_ptr())
    found = as_array(base)
    if found is None:
        raise errors.python_error(TypeError, errors.diagnostic("host_descriptor_base", type=type(base).__name__))
    return alignment_offset(found[0])


def element_type(base):
    """The Triton element type of `base` (a minitriton dtype)."""
    found = as_array(base)
    if found is None:
        raise errors.python_error(TypeError, errors.diagnostic("host_descriptor_base", type=type(base).__name__))
    return found[1]


@dataclass
class TensorDescriptor:
    """A descriptor of a tensor in memory: base, shape and strides (in elements), and the block shape each
    `desc.load(offsets)` / `desc.store(offsets, value)` in the kernel moves. `padding`: "zero" or "nan", what
    loads read outside the shape."""
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        errors.require(len(self.strides) == rank, "host_descriptor_rank", descriptor=repr(self))
        errors.require(len(self.block_shape) == rank, "host_descriptor_rank", descriptor=repr(self))
        errors.require(rank > 0, "host_descriptor_rank_zero")
        errors.require(rank <= 5, "host_descriptor_rank_max", rank=rank)
        address = base_address(self.base)
        errors.require(address % 16 == 0, "host_descriptor_base_alignment", past=address % 16)
        validate_block_shape(self.block_shape)
        elem = element_type(self.base)
        elem_bytes = elem.itemsize
        for dim, stride in enumerate(self.strides[:-1]):
            errors.require((stride * elem_bytes) % 16 == 0, "host_descriptor_stride_alignment", dim=dim,
                           stride=stride, bytes=stride * elem_bytes)
        for shape_dim in self.shape:
            errors.require(shape_dim > 0, "host_descriptor_shape", shape=list(self.shape))
        errors.require(self.strides[-1] == 1, "host_descriptor_contiguous", stride=self.strides[-1])
        errors.require(self.padding in ("zero", "nan"), "host_descriptor_padding", padding=self.padding)
        if self.padding == "nan":
            errors.require(elem.is_floating(), "host_descriptor_nan", dtype=elem)

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding="zero"):
        """A descriptor of the whole of `tensor` (its shape and strides, in elements)."""
        return TensorDescriptor(tensor, list(tensor.shape), list(_strides(tensor)), block_shape, padding)


def _strides(tensor):
    if hasattr(tensor, "stride") and callable(tensor.stride):
        return tensor.stride()
    found = as_array(tensor)
    if found is None:
        raise errors.python_error(TypeError, errors.diagnostic("host_descriptor_array", type=type(tensor).__name__))
    array = found[0]
    return tuple(s // array.itemsize for s in array.strides)
