"""What crosses between the parent and a child process: the cases (`Case`, `Call`), what a launch left behind
(`Result`), and the arguments (NumPy arrays with their strides, `BF16`, `Descriptor`, scalars) with their encoding
into a job folder and back. `parity.oracle` runs them and re-exports these names."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class BF16:
    """A bfloat16 array given as its uint16 bit patterns (NumPy has no bfloat16)."""

    def __init__(self, bits):
        bits = np.asarray(bits)
        if bits.dtype != np.uint16:
            raise TypeError(f"BF16 takes uint16 bit patterns, got {bits.dtype}")
        self.array = bits

    @property
    def triton_dtype(self):  # minitriton reads `.array` + `.triton_dtype` (minitriton.memory.as_array)
        import minitriton.language as mtl
        return mtl.bfloat16

    @property
    def shape(self):
        return self.array.shape

    @classmethod
    def from_float(cls, values):
        """Exact bf16 values (their fp32 bits must have a zero low half)."""
        f = np.asarray(values, np.float32)
        u = f.view(np.uint32)
        if np.any(u & 0xFFFF):
            raise ValueError("values are not exactly representable in bf16")
        return cls((u >> 16).astype(np.uint16))

    @classmethod
    def round(cls, values):
        """fp32 values rounded to nearest even bf16 (NaN stays a quiet NaN)."""
        u = np.ascontiguousarray(np.asarray(values, np.float32)).view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        nan = np.isnan(np.asarray(values, np.float32))
        return cls(np.where(nan, np.uint16(0x7FC0), r).astype(np.uint16))

    def to_float(self) -> np.ndarray:
        return (self.array.astype(np.uint32) << 16).view(np.float32)

    def __repr__(self):
        return f"BF16({self.array!r})"



@dataclass
class Case:
    source: str
    kernel: str
    grid: tuple
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass
class Call:
    """`module.function(*args, **kwargs)` in the child (e.g. kernels.vector_add.add); returns arrays."""
    module: str
    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass
class Result:
    """What one launch left behind: `args`/`kwargs` mirror the inputs, arrays replaced by their final contents."""
    args: list
    kwargs: dict
    error: str | None = None          # repr of the exception (the interpreter wraps it in InterpreterError)
    error_type: str | None = None
    warnings: list = field(default_factory=list)
    exception: BaseException | None = None   # in-process minitriton only: the exception object itself
    value: list | None = None         # a Call's return value: its arrays (None for launches)

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------- argument transport


class Descriptor:
    """A tensor descriptor argument: the child passes `TensorDescriptor.from_tensor(array, block_shape,
    padding)` (`triton.tools.tensor_descriptor`, minitriton's under minitriton), so the kernel reads and writes
    `array` (a NumPy array or `BF16`) through desc.load / desc.store; the array comes back like any other."""

    def __init__(self, array, block_shape, padding="zero"):
        if not isinstance(array, (np.ndarray, BF16)):
            raise TypeError(f"Descriptor takes a NumPy array or BF16, got {type(array).__name__}")
        self.array, self.block_shape, self.padding = array, list(block_shape), padding

    def __repr__(self):
        return f"Descriptor({self.array!r}, block_shape={self.block_shape}, padding={self.padding!r})"

def _span(a: np.ndarray):
    """(flat copy of every element `a` covers, element offset, shape, strides in elements)."""
    item = a.dtype.itemsize
    if any(s < 0 or s % item for s in a.strides):
        raise ValueError(f"only non-negative strides that are multiples of the item size: {a.strides}")
    if a.size == 0 or a.flags.c_contiguous:
        return a.reshape(-1).copy(), 0, a.shape, tuple(s // item for s in a.strides) if a.size else ()
    extent = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // item + 1
    flat = np.lib.stride_tricks.as_strided(a, shape=(extent,), strides=(item,), writeable=False).copy()
    return flat, 0, a.shape, tuple(s // item for s in a.strides)


def _view(flat: np.ndarray, shape, strides) -> np.ndarray:
    if not shape:
        return flat.reshape(())
    if len(flat) == int(np.prod(shape)) and tuple(strides) == _c_strides(shape):
        return flat.reshape(shape)
    item = flat.dtype.itemsize
    return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=tuple(s * item for s in strides))


def _c_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def clone(value):
    """A deep copy of an argument; array views keep their shape and strides (over a fresh span)."""
    if isinstance(value, BF16):
        return BF16(clone(value.array))
    if isinstance(value, Descriptor):
        return Descriptor(clone(value.array), value.block_shape, value.padding)
    if isinstance(value, np.ndarray):
        flat, _, shape, strides = _span(value)
        return _view(flat, tuple(shape), tuple(strides))
    return value


def _encode(value, key, arrays):
    if isinstance(value, Descriptor):
        spec = _encode(value.array, key, arrays)
        spec["descriptor"] = {"block": list(value.block_shape), "padding": value.padding}
        return spec
    if isinstance(value, (BF16, np.ndarray)):
        bits = value.array if isinstance(value, BF16) else value
        flat, _, shape, strides = _span(bits)
        arrays[key] = flat
        return {"array": key, "bf16": isinstance(value, BF16), "shape": list(shape), "strides": list(strides)}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"scalar": value}
    if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value):
        return {"scalar": list(value), "tuple": isinstance(value, tuple)}
    if isinstance(value, dict) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value.values()):
        return {"scalar": dict(value)}
    raise TypeError(f"unsupported oracle argument {value!r}")


def _decode_result(spec, original, npz):
    if "array" not in spec or spec["array"] not in npz.files:  # a case whose launch failed sends nothing back
        return original
    flat = npz[spec["array"]]
    view = _view(flat, tuple(spec["shape"]), tuple(spec["strides"]))
    view = BF16(view) if spec["bf16"] else view
    if "descriptor" in spec:
        return Descriptor(view, spec["descriptor"]["block"], spec["descriptor"]["padding"])
    return view


