"""The simulated global memory of one launch: each array argument becomes an `Allocation`.

Allocation k occupies virtual addresses [k << 40, (k << 40) + nbytes). Its bytes are the argument's own
memory (NumPy arrays and torch CPU tensors are used in place, never copied), seen through a flat view
that spans every byte the array covers, so strided and non-contiguous arrays work with strides in elements.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.memory.initialization import registry
from minitriton.semantics import dtypes as T

SLOT_SHIFT = 40


class Allocation:
    """One array argument: its name, element type and flat views of its memory span."""

    def __init__(self, index: int, name: str, array: np.ndarray, elem: T.dtype, original=None):
        self.index = index
        self.name = name
        self.dtype = elem
        self.array = array
        self.original = original if original is not None else array
        self.raw, self.base_offset = _span(array)
        self.nbytes = self.raw.shape[0]
        self._views = {}
        self.writeable = bool(array.flags.writeable)
        self.shadow = registry.lookup(array)   # initialisation tracking, for arrays made by testing.empty

    @property
    def base_address(self) -> int:
        return self.index << SLOT_SHIFT

    def flat(self, ty: T.dtype) -> np.ndarray:
        """The span as a 1-D array of `ty`'s storage type (bf16 as uint16)."""
        key = ty.np_storage
        view = self._views.get(key)
        if view is None:
            size = ty.itemsize
            view = self.raw[: self.nbytes - self.nbytes % size].view(key)
            self._views[key] = view
        return view

    def numel(self, ty: T.dtype) -> int:
        return self.nbytes // ty.itemsize

    def address_of(self, offsets: np.ndarray, ty: T.dtype) -> np.ndarray:
        """Element offsets into this allocation as absolute virtual addresses."""
        return offsets.astype(np.int64) * ty.itemsize + self.base_address

    def describe(self) -> str:
        shape = "x".join(str(s) for s in self.array.shape) or "scalar"
        return f"`{self.name}` ({shape} {self.dtype})"


def _span(array: np.ndarray):
    """A writeable uint8 view over every byte `array` covers, and the element offset of its first element."""
    itemsize = array.dtype.itemsize
    if array.size == 0:
        return np.zeros(0, np.uint8), 0
    if array.flags.c_contiguous:
        return array.reshape(-1).view(np.uint8), 0
    low = array[tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for n, s in zip(array.shape, array.strides))]
    extent = sum((n - 1) * abs(s) for n, s in zip(array.shape, array.strides)) + itemsize
    for s in array.strides:
        if s % itemsize:
            raise errors.python_error(TypeError, errors.diagnostic("array_strides", strides=str(array.strides),
                                                                   itemsize=itemsize))
    start = low.reshape(-1)[:1].view(np.uint8)
    raw = np.lib.stride_tricks.as_strided(start, shape=(extent,), strides=(1,),
                                          writeable=bool(array.flags.writeable))
    first = sum((n - 1) * -s for n, s in zip(array.shape, array.strides) if s < 0)
    return raw, first // itemsize


def alignment_offset(array: np.ndarray) -> int:
    """How many bytes past a 256-byte boundary `array`'s first element lies, as a GPU would place it.

    Memory NumPy allocated counts from the start of its block, which a GPU allocator aligns (cudaMalloc: 256
    bytes); the host's malloc does not say (16 bytes on 64-bit Linux, 8 on wasm32). Memory owned by
    anything else (a torch tensor's) keeps its host address."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    address = array.__array_interface__["data"][0]
    if root.base is None:
        address -= root.__array_interface__["data"][0]
    return address % 256


def is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "dtype")


def as_array(value):
    """The NumPy array (storage dtype) and Triton element type behind a kernel argument, or None.

    Accepts NumPy arrays (ml_dtypes bfloat16 included), torch CPU tensors (bfloat16 included; shared,
    never copied) and `minitriton.Buffer`-like objects exposing `.array` and `.triton_dtype`.
    """
    triton_dtype = getattr(value, "triton_dtype", None)
    if triton_dtype is not None and hasattr(value, "array"):
        return value.array, triton_dtype
    if isinstance(value, np.ndarray):
        elem = T.from_numpy(value.dtype)
        if elem is T.bfloat16:  # ml_dtypes
            return value.view(np.uint16), elem
        return value, elem
    if is_torch_tensor(value):
        return _torch_array(value)
    return None


_TORCH_FP8 = {"torch.float8_e4m3fn": T.float8e4nv, "torch.float8_e5m2": T.float8e5,
              "torch.float8_e4m3fnuz": T.float8e4b8, "torch.float8_e5m2fnuz": T.float8e5b16}


def _torch_array(t):
    import torch  # only reached when the caller already has torch

    if t.device.type != "cpu":
        raise errors.python_error(TypeError, errors.diagnostic("tensor_device", device=str(t.device)))
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16), T.bfloat16
    fp8 = _TORCH_FP8.get(str(t.dtype))
    if fp8 is not None:
        return t.view(torch.uint8).numpy(), fp8
    if t.dtype == torch.bool:
        return t.numpy(), T.int1
    arr = t.numpy()
    return arr, T.from_numpy(arr.dtype)
