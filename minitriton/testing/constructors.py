"""Arrays made by `np.empty`, `np.empty_like`, `torch.empty`, `torch.empty_like` and `Tensor.new_empty` start
unwritten (`python -m minitriton run` with the sanitizer on calls `track()`).

As torch's `torch.utils.deterministic.fill_uninitialized_memory` does, each such array is filled: floats with a
NaN, integers with a sentinel (the poison of testing/poison.py), so a value nobody wrote cannot pass for a result. The
sanitizer then tracks it (memory/initialization.py): a kernel's load of an element nothing wrote is reported
with the constructor's name, and so is a launch that stores into the array and leaves elements unwritten.
Writes made on the host are seen by their bits. Only element types whose fill no ordinary value equals are
tracked: floats, and integers of 32 and 64 bits. torch is patched only once the script imports it.
"""
from __future__ import annotations

import functools
import os
import sys

import numpy as np

from minitriton.memory.host import after_import
from minitriton.memory.initialization import UNSIGNED, registry
from minitriton.testing.poison import poison_bits

_NUMPY = {"f2": "fp16", "f4": "fp32", "f8": "fp64", "i4": "int32", "u4": "uint32", "i8": "int64", "u8": "uint64"}
_TORCH = {"torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32", "torch.float64": "fp64",
          "torch.int32": "int32", "torch.int64": "int64"}
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep   # minitriton/
_tracking = []   # non-empty once track() ran


def track() -> None:
    """Make the constructors' arrays start unwritten (torch's once it is imported). For the process's life."""
    if _tracking:
        return
    _tracking.append(True)
    for name in ("empty", "empty_like"):
        _patch(np, name, f"np.{name}", _numpy_block)
    after_import("torch", _track_torch)


def _track_torch(torch) -> None:
    for name in ("empty", "empty_like"):
        _patch(torch, name, f"torch.{name}", _torch_block)
    _patch(torch.Tensor, "new_empty", "Tensor.new_empty", _torch_block)


def _patch(owner, name: str, made: str, block) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def constructor(*args, **kwargs):
        result = original(*args, **kwargs)
        if sys._getframe(1).f_code.co_filename.startswith(_PACKAGE):   # minitriton's own scratch arrays
            return result
        found = block(result)
        if found is not None:
            bits, kind, keeper = found
            bits[...] = fill = poison_bits(kind)
            registry.register(bits, made=made, fill=fill, owner=keeper, watched=True)
        return result

    setattr(owner, name, constructor)


def _numpy_block(x):
    """(the array's memory as unsigned ints, the poison's kind, its owner), or None when it is not tracked."""
    kind = _NUMPY.get(f"{x.dtype.kind}{x.dtype.itemsize}") if type(x) is np.ndarray else None
    if kind is None or not x.size or not (x.flags.c_contiguous or x.flags.f_contiguous):
        return None
    return x.ravel(order="K").view(UNSIGNED[x.itemsize]), kind, x


def _torch_block(t):
    """`_numpy_block` for a fresh torch tensor: its whole storage, when the tensor covers it."""
    import torch  # only reached once the script imported it

    kind = _TORCH.get(str(getattr(t, "dtype", None)))
    if kind is None or t.device.type != "cpu" or not t.numel() or t.storage_offset() \
            or t.untyped_storage().nbytes() != t.numel() * t.element_size():
        return None
    flat = t.detach().as_strided((t.numel(),), (1,), 0)   # every element, in memory order
    array = (flat.view(torch.int16) if kind == "bf16" else flat).numpy()
    return array.view(UNSIGNED[array.itemsize]), kind, t.untyped_storage()
