"""`Buffer`: a NumPy array tagged with a Triton dtype, for dtypes NumPy lacks (bfloat16).

    x = minitriton.Buffer.from_float(np.random.randn(1024), tl.bfloat16)   # rounds to nearest even
    kernel[grid](x, ...)            # the kernel sees a pointer to bf16
    x.to_float32()                  # the values as float32
"""
from __future__ import annotations

import numpy as np

from minitriton.semantics import dtypes as T
from minitriton.semantics import numerics


class Buffer:
    """Memory of `shape` holding `triton_dtype` values; `array` is its storage (bf16 as uint16 bits)."""

    def __init__(self, array: np.ndarray, triton_dtype: T.dtype):
        if np.dtype(array.dtype) != triton_dtype.np_storage:
            raise TypeError(f"a {triton_dtype} Buffer stores {triton_dtype.np_storage}, got {array.dtype}")
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
