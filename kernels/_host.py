"""Host-side helpers shared by the kernels: arrays of either kind, without importing torch.

Kernels run on NumPy arrays (and `minitriton.Buffer` for bf16) under minitriton, and on torch tensors
(CPU under minitriton, CUDA under real Triton). Host wrappers go through these helpers only, so nothing
here imports torch unless the caller already passed a torch tensor.
"""
from __future__ import annotations

import numpy as np


def is_torch(x) -> bool:
    """True for a torch.Tensor (checked without importing torch)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def is_buffer(x) -> bool:
    """True for a minitriton.Buffer (NumPy storage tagged with a Triton dtype, e.g. bf16)."""
    return hasattr(x, "triton_dtype") and hasattr(x, "array")


def shape(x) -> tuple:
    return tuple(x.shape)


def stride(x, dim: int) -> int:
    """Stride of dimension `dim` in elements, as Triton sees it."""
    if is_torch(x) or is_buffer(x):
        return int(x.stride(dim))
    return int(x.strides[dim] // x.itemsize)


def numel(x) -> int:
    if is_torch(x) or is_buffer(x):
        return int(x.numel())
    return int(x.size)


def dtype_name(x) -> str:
    """'float32', 'float16', 'bfloat16', ... for any array kind."""
    if is_torch(x):
        return str(x.dtype).replace("torch.", "")
    if is_buffer(x):
        return {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64"}.get(
            str(x.triton_dtype), str(x.triton_dtype))
    return x.dtype.name


def empty(shape_, like, dtype: str | None = None):
    """An uninitialised array of `shape_` of the same kind (and device) as `like`; dtype by name or like's."""
    dtype = dtype or dtype_name(like)
    if is_torch(like):
        import torch
        return torch.empty(shape_, dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        from minitriton import Buffer
        from minitriton.language import bfloat16
        return Buffer.empty(shape_, bfloat16)
    return np.empty(shape_, dtype=dtype)


def zeros(shape_, like, dtype: str | None = None):
    """Zeros of `shape_`, same kind as `like`."""
    dtype = dtype or dtype_name(like)
    if is_torch(like):
        import torch
        return torch.zeros(shape_, dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        from minitriton import Buffer
        from minitriton.language import bfloat16
        return Buffer.zeros(shape_, bfloat16)
    return np.zeros(shape_, dtype=dtype)


def empty_like(x, dtype: str | None = None):
    return empty(shape(x), x, dtype)


def contiguous(x):
    """A C-contiguous version of `x` (a copy only when needed)."""
    if is_torch(x):
        return x.contiguous()
    if is_buffer(x):
        if x.array.flags.c_contiguous:
            return x
        return type(x)(np.ascontiguousarray(x.array), x.triton_dtype)
    return np.ascontiguousarray(x)


def reshape(x, shape_):
    if is_buffer(x):
        return type(x)(x.array.reshape(shape_), x.triton_dtype)
    return x.reshape(shape_)


def to_float64(x) -> np.ndarray:
    """The values as a float64 NumPy array (for references and comparisons)."""
    if is_torch(x):
        return x.detach().float().cpu().numpy().astype(np.float64)
    if is_buffer(x):
        return x.to_float32().astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def from_float(values: np.ndarray, like, dtype: str | None = None):
    """NumPy float values as an array of the same kind as `like` (rounded to nearest even for bf16)."""
    dtype = dtype or dtype_name(like)
    if is_torch(like):
        import torch
        return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(
            dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        from minitriton import Buffer
        from minitriton.language import bfloat16
        return Buffer.from_float(values, bfloat16)
    return np.asarray(values, dtype=dtype)


_ITEMSIZES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
              "int8": 1, "uint8": 1, "bool": 1}


def itemsize(dtype: str) -> int:
    """Bytes per element of a dtype name as `dtype_name` spells it ('float32', 'bfloat16', ...)."""
    return _ITEMSIZES[dtype]
