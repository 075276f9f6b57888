"""Poisoned outputs: arrays whose every element holds a value no kernel should leave behind.

    out = minitriton.testing.empty(n, np.float32)     # every element is a NaN with the payload 0x6DBEEF
    kernel[grid](x, out, n, BLOCK=128)
    minitriton.testing.assert_written(out, "out")     # AssertionError naming the elements never written

Floats are filled with a quiet NaN carrying a recognisable payload, integers with a 0xDEADBEEF-style
sentinel: on a GPU an unwritten element of `torch.empty` holds whatever was there before, so a wrong mask
gives plausible numbers; here it stays poison, and `unwritten(x)` finds it by its bit pattern.
`Layout` places an array inside a larger poisoned buffer (at an offset, strided, transposed, reversed):
the kernel sees a view, and writes into the padding around it can be detected too.
NumPy only: no hypothesis needed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minitriton.errors import format_ranges
from minitriton.memory.initialization import UNSIGNED as _UINT, registry
from minitriton.observers.sanitizer import unwritten_report
from minitriton.options import options
from minitriton.semantics.numerics import bf16_bits_to_f32
from minitriton.semantics import dtypes as T
from minitriton.memory.buffers import Buffer
from minitriton.memory.allocation import as_array

# Quiet NaNs (quiet bit set, so arithmetic leaves them alone) with a payload that no ordinary computation
# produces, and integer sentinels spelled from 0xDEADBEEF.
_POISON = {
    "fp16": 0x7EAD, "bf16": 0x7FED, "fp32": 0x7FEDBEEF, "fp64": 0x7FFDBEEFDEADBEEF,
    "int8": 0xAD, "uint8": 0xAD, "int16": 0xBEEF, "uint16": 0xBEEF,
    "int32": 0xDEADBEEF, "uint32": 0xDEADBEEF, "int64": 0xDEADBEEFDEADBEEF, "uint64": 0xDEADBEEFDEADBEEF,
}
# A second pattern per dtype: a different NaN payload, the integer sentinels' complement. An element equal to
# the first pattern after one run and to the second after a re-run was certainly never written.
_POISON_ALT = {
    "fp16": 0x7F5A, "bf16": 0x7FDA, "fp32": 0x7FCAFE5A, "fp64": 0x7FFCAFE5A5A5A5A5,
    "int8": 0x52, "uint8": 0x52, "int16": 0x4110, "uint16": 0x4110,
    "int32": 0x21524110, "uint32": 0x21524110, "int64": 0x2152411021524110, "uint64": 0x2152411021524110,
}


def triton_dtype(dtype) -> T.dtype:
    """A NumPy dtype, a `tl` dtype, an ml_dtypes bfloat16 or a name ('float32', 'bf16', 'bfloat16') as a tl dtype."""
    if isinstance(dtype, T.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in T.BY_NAME:
        return T.BY_NAME[dtype]
    if isinstance(dtype, str) and dtype == "bfloat16":
        return T.bfloat16
    return T.from_numpy(np.dtype(dtype))


def poison_bits(dtype, alternate: bool = False) -> int:
    """The bit pattern `empty` fills elements of `dtype` with (`alternate`: the second pattern; bool has none).

    8-bit integers have few values to spare: a kernel may legitimately store 0xAD (-83 as int8), so for them
    an "unwritten" element is only certain when a re-run with the alternate pattern leaves it unchanged too
    (what `check_kernel` does).
    """
    ty = triton_dtype(dtype)
    if ty.is_bool():
        raise TypeError("a bool array has no spare bit pattern to poison; allocate int8 (or uint8) outputs, "
                        "or check bool outputs by value only")
    return (_POISON_ALT if alternate else _POISON)[ty.name]


@dataclass(frozen=True)
class Layout:
    """Where an array lives inside a larger buffer: the view a kernel receives, and the padding around it.

    `offset`/`tail`: elements of the buffer before/after the array's span; `steps`: the view takes every
    steps[i]-th element along physical axis i; `pad`: extra elements along each physical axis (a row
    stride larger than the row); `order`: the physical axes, outermost first, as axes of the view
    (`(1, 0)` = a transposed, column-major view); `flip`: view axes with negative strides (NumPy only:
    torch has none). The default is a plain contiguous array.
    """

    offset: int = 0
    tail: int = 0
    steps: tuple | None = None
    pad: tuple | None = None
    order: tuple | None = None
    flip: tuple | None = None

    def is_plain(self) -> bool:
        return self == Layout() or (self.offset == self.tail == 0 and not any(self.pad or ())
                                    and all(s == 1 for s in self.steps or ()) and not any(self.flip or ())
                                    and tuple(self.order or ()) == tuple(sorted(self.order or ())))

    def allocate(self, shape, storage: np.dtype, fill_bits: int | None):
        """(view, base): a view of `shape` inside a new base buffer of `storage`, all filled with `fill_bits`."""
        shape = _shape(shape)
        nd = len(shape)
        order = tuple(self.order) if self.order is not None else tuple(range(nd))
        steps = _per_axis(self.steps, nd, 1)
        pad = _per_axis(self.pad, nd, 0)
        flip = _per_axis(self.flip, nd, False)
        if sorted(order) != list(range(nd)):
            raise ValueError(f"Layout.order {order} is not a permutation of the {nd} axes")
        phys = [shape[a] for a in order]
        extent = [(q - 1) * s + 1 if q else 0 for q, s in zip(phys, steps)]
        big_shape = tuple(e + p for e, p in zip(extent, pad))
        inner = int(np.prod(big_shape, dtype=np.int64)) if nd else 1
        base = np.empty(self.offset + inner + self.tail, storage)
        if fill_bits is not None:
            base.view(_UINT[storage.itemsize])[...] = fill_bits
        else:
            base[...] = 0
        big = base[self.offset:self.offset + inner].reshape(big_shape)
        if nd == 0:
            return big, base  # a 0-d view (indexing with () would give a scalar copy)
        view = big[tuple(slice(0, e, s) for e, s in zip(extent, steps))]
        view = view.transpose(np.argsort(order))
        view = view[tuple(slice(None, None, -1) if f else slice(None) for f in flip)]
        return view, base


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _per_axis(values, nd, default):
    if values is None:
        return (default,) * nd
    values = tuple(values)
    if len(values) != nd:
        raise ValueError(f"expected {nd} per-axis values, got {values}")
    return values


def _storage(ty: T.dtype) -> np.dtype:
    return np.dtype(ty.np_storage)


def _wrap(view: np.ndarray, ty: T.dtype):
    return Buffer(view, ty) if ty.is_bf16() else view


def empty(shape, dtype=np.float32, *, layout: Layout | None = None, alternate: bool = False):
    """A poisoned output of `shape`: every element holds `poison_bits(dtype)` (bf16 gives a `Buffer`).

    With `layout`, the array is a view inside a larger buffer that is poisoned too (`array.base`), so
    writes outside the view can be found by `written_outside`. The sanitizer (minitriton.options().sanitize)
    tracks the buffer from here: loading an element that neither a kernel nor the host wrote is reported.
    """
    ty = triton_dtype(dtype)
    bits = poison_bits(ty, alternate)
    view, base = (layout or Layout()).allocate(shape, _storage(ty), bits)
    # with minitriton.options().sanitize on, loads of unwritten elements are reported
    registry.register(base, made="minitriton.testing.empty", fill=bits)
    return _wrap(view, ty)


def mark_written(x) -> None:
    """Tell the sanitizer that host code filled an `empty` array with values that may equal the poison (host
    writes of other values it sees by itself): otherwise loads of them count as reads of never-written memory."""
    shadow = registry.lookup(_storage_of(x)[0])
    if shadow is not None:
        shadow.written[...] = True


def unwritten_attribution(x, bad: np.ndarray) -> str | None:
    """Which programs' store masks excluded the unwritten elements `bad` of an `empty` array ("program 96's
    store mask excluded them"), from the sanitizer's records; None when it has none that agree (the array
    is a view at an offset, or the launch ran without minitriton.options().sanitize)."""
    array = _storage_of(x)[0]
    shadow = registry.lookup(array)
    if shadow is None or not np.array_equal(~shadow.written, np.asarray(bad).reshape(-1)):
        return None
    text = unwritten_report(array, "x")
    return text.split(": ", 1)[1] if text and ": " in text else None


def empty_like(x, *, layout: Layout | None = None, alternate: bool = False):
    """`empty` with the shape and dtype of `x` (a NumPy array, a `Buffer` or a torch CPU tensor)."""
    array, ty = _storage_of(x)
    return empty(array.shape, ty, layout=layout, alternate=alternate)


def _storage_of(x):
    found = as_array(x)
    if found is None:
        raise TypeError(f"expected an array (NumPy, minitriton.Buffer or torch CPU tensor), got {type(x).__name__}")
    return found


def unwritten(x, alternate: bool = False) -> np.ndarray:
    """Boolean array (x's shape): which elements still hold the poison value (`alternate`: the second one)."""
    array, ty = _storage_of(x)
    bits = poison_bits(ty, alternate)
    return array.view(_UINT[array.itemsize]) == bits


def describe_array(x, limit: int = 16) -> str:
    """'float32[3] = [1.0, nan, -0.0]' (values when at most `limit`), with its layout when it is a view."""
    array, ty = _storage_of(x)
    values = as_numpy(x)
    dt = "bfloat16" if ty.is_bf16() else array.dtype.name
    text = f"{dt}[{', '.join(str(s) for s in array.shape)}]"
    base = array.base
    if base is not None and array.size and not (base.size == array.size and array.flags.c_contiguous):
        itemsize = array.itemsize
        first = (array.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // itemsize
        strides = tuple(s // itemsize for s in array.strides)
        where = f"first element at offset {first} of a {base.size}-element buffer"
        text += f" (strides {strides}, {where})" if not array.flags.c_contiguous else f" ({where})"
    if array.size <= limit:
        text += " = " + repr(values.tolist())
    else:
        text += " = " + np.array2string(values.reshape(-1), threshold=limit, edgeitems=3, separator=", ")
    return text


def assert_written(x, name: str = "out") -> None:
    """Raise AssertionError naming the elements of `x` a kernel never wrote (they still hold the poison);
    with minitriton.options().sanitize on, it also names the programs whose store masks excluded them."""
    bad = unwritten(x)
    if bad.any():
        why = unwritten_attribution(x, bad) if options().sanitize else None
        raise AssertionError(unwritten_message(bad, name, why))


def unwritten_message(bad: np.ndarray, name: str, why: str | None = None) -> str:
    """'elements 128…129 of `out` were never written (2 of 130; ...)' for a mask of unwritten elements;
    `why` (the sanitizer's attribution to store masks) replaces the note about the poison value."""
    flat = np.flatnonzero(bad.reshape(-1))
    where = ""
    if bad.ndim > 1:
        first = tuple(int(i) for i in np.unravel_index(int(flat[0]), bad.shape))
        where = f", first at index {first}"
    what = f"element {flat[0]} of `{name}` was" if len(flat) == 1 else f"elements {format_ranges(flat, noun='')} of `{name}` were"
    why = why or "still the poison value minitriton.testing.empty filled the output with"
    return f"{what} never written ({len(flat)} of {bad.size}{where}; flat indices in C order): {why}"


def written_outside(view, base, alternate: bool = False) -> np.ndarray:
    """Flat indices of `base` outside `view` whose bits changed from the poison (writes into the padding)."""
    array, ty = _storage_of(view)
    u = _UINT[array.itemsize]
    inside = np.zeros(base.size, bool)
    if array.size:
        start = base.__array_interface__["data"][0]
        addresses = _element_addresses(array)
        inside[(addresses - start) // array.itemsize] = True
    changed = base.view(u) != poison_bits(ty, alternate)
    return np.flatnonzero(changed & ~inside)


def _element_addresses(array: np.ndarray) -> np.ndarray:
    start = array.__array_interface__["data"][0]
    offsets = np.zeros(array.shape, np.int64)
    for axis, stride in enumerate(array.strides):
        shape = [1] * array.ndim
        shape[axis] = array.shape[axis]
        offsets = offsets + np.arange(array.shape[axis], dtype=np.int64).reshape(shape) * stride
    return start + offsets.reshape(-1)


def as_numpy(x) -> np.ndarray:
    """The values of an array argument as a NumPy array (bf16 widened to float32; torch without copying)."""
    found = as_array(x)
    if found is None:
        return np.asarray(x)
    array, ty = found
    if ty.is_bf16():
        return bf16_bits_to_f32(array)
    return array


def storage_base(x):
    """The buffer an array argument is a view of (itself when it owns its memory)."""
    array, _ = _storage_of(x)
    return array if array.base is None else array.base


__all__ = ["Layout", "empty", "empty_like", "unwritten", "assert_written", "poison_bits", "as_numpy", "mark_written",
           "written_outside", "triton_dtype", "describe_array", "storage_base"]
