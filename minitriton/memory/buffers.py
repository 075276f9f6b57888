"""`Buffer`: a NumPy array tagged with a Triton dtype, for dtypes NumPy lacks (bfloat16).

    x = minitriton.Buffer.from_float(np.random.randn(1024), tl.bfloat16)   # rounds to nearest even
    kernel[grid](x, ...)            # the kernel sees a pointer to bf16
    x.to_float32()                  # the values as float32
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.memory.allocation import as_array
from minitriton.semantics import dtypes as T
from minitriton.semantics import numerics


class Buffer:
    """Memory of `shape` holding `triton_dtype` values; `array` is its storage (bf16 as uint16 bits)."""

    def __init__(self, array: np.ndarray, triton_dtype: T.dtype):
        if np.dtype(array.dtype) != triton_dtype.np_storage:
            raise errors.python_error(TypeError, errors.diagnostic(
                "buffer_storage", dtype=triton_dtype, storage=triton_dtype.np_storage, given=array.dtype))
        self.array = array
        self.triton_dtype = triton_dtype

    @classmethod
    def empty(cls, shape, triton_dtype: T.dtype) -> "Buffer":
        return cls(np.empty(shape, triton_dtype.np_storage), triton_dtype)

    @classmethod
    def zeros(cls, shape, triton_dtype: T.dtype) -> "Buffer":
        return cls(np.zeros(shape, triton_dtype.np_storage), triton_dtype)

    @classmethod
    def from_float(cls, values, triton_dtype: T.dtype = T.bfloat16, rounding: str = "rtne") -> "Buffer":
        """Round float values to `triton_dtype` (RTNE by default) and store them."""
        values = np.asarray(values)
        if triton_dtype.is_bf16():
            return cls(numerics.f32_to_bf16_bits(numerics.round_to_bf16(values, rounding)), triton_dtype)
        return cls(values.astype(triton_dtype.np_storage), triton_dtype)

    def to_float32(self) -> np.ndarray:
        """The values as a float32 array (exact for bf16 and fp16)."""
        if self.triton_dtype.is_bf16():
            return numerics.bf16_bits_to_f32(self.array)
        return self.array.astype(np.float32)

    @property
    def shape(self):
        return self.array.shape

    @property
    def dtype(self):
        return self.triton_dtype

    def stride(self, dim=None):
        """Strides in elements, like torch's `Tensor.stride()`."""
        strides = tuple(s // self.array.itemsize for s in self.array.strides)
        return strides if dim is None else strides[dim]

    def numel(self) -> int:
        return int(self.array.size)

    def __getitem__(self, index):
        return Buffer(self.array[index], self.triton_dtype)

    def __repr__(self):
        return f"Buffer(shape={self.array.shape}, dtype={self.triton_dtype})"


class TensorWrapper:
    """`triton.reinterpret(tensor, dtype)`: a torch tensor or NumPy array whose memory a kernel reads as `dtype`
    (same element size), as Triton's `triton.runtime.jit.TensorWrapper`: `.base` is the wrapped tensor, `.dtype`
    the Triton type. Kernels receive a pointer to `dtype` over the tensor's own memory."""

    def __init__(self, base, dtype: T.dtype):
        self.dtype = dtype
        self.base = base
        self.shape = base.shape

    @property
    def triton_dtype(self) -> T.dtype:
        return self.dtype

    @property
    def array(self) -> np.ndarray:
        """The base's memory as `dtype`'s storage type (a view: writes reach the base)."""
        found = as_array(self.base)
        if found is None:
            raise errors.python_error(TypeError, errors.diagnostic("reinterpret_base", type=type(self.base).__name__))
        array = found[0]
        if array.dtype.itemsize != self.dtype.np_storage.itemsize:
            raise errors.python_error(TypeError, errors.diagnostic(
                "reinterpret_size", given=array.dtype, given_bytes=array.dtype.itemsize, dtype=self.dtype,
                bytes=self.dtype.np_storage.itemsize))
        return array.view(self.dtype.np_storage)

    @property
    def device(self):
        return getattr(self.base, "device", "cpu")

    def data_ptr(self):
        return self.base.data_ptr() if hasattr(self.base, "data_ptr") else self.base.ctypes.data

    def stride(self, *args):
        if hasattr(self.base, "stride") and callable(self.base.stride):
            return self.base.stride(*args)
        strides = tuple(s // self.base.itemsize for s in self.base.strides)
        return strides[args[0]] if args else strides

    def element_size(self):
        return self.dtype.itemsize

    def numel(self):
        return int(np.prod(self.shape))

    def cpu(self):
        return self

    def to(self, device):
        return self

    def clone(self):
        return TensorWrapper(self.base.clone() if hasattr(self.base, "clone") else self.base.copy(), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base) if hasattr(self.base, "copy_") else np.copyto(self.base, other.base)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes) if hasattr(self.base, "new_empty")
                             else np.empty(sizes, self.base.dtype), self.dtype)

    def __repr__(self):
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor, dtype: T.dtype):
    """`triton.reinterpret`: `tensor`'s memory seen as `dtype` by kernels (see TensorWrapper); reinterpreting a
    wrapper as its base's own dtype gives the base back, as in Triton."""
    if isinstance(tensor, TensorWrapper):
        if dtype == getattr(tensor.base, "dtype", None):
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr") or isinstance(tensor, np.ndarray):
        return TensorWrapper(tensor, dtype)
    raise errors.python_error(TypeError, errors.diagnostic("reinterpret_type", type=type(tensor)))
