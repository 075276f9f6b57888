"""Casts: `tl.cast`/`x.to(dtype)` (value conversion as the GPU rounds and saturates, bitcasts, pointer casts)
and the conversion between the dtype values are computed in and the bit patterns memory holds.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import fp8, numerics
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.values.registry import builtin, operator
from minitriton.values.tensor import tensor, to_address


def convert(data: np.ndarray, src: T.dtype, dst: T.dtype, rounding: str | None = None) -> np.ndarray:
    """Convert compute-dtype values of `src` to `dst` as the GPU does (saturating float->int, RTNE)."""
    if src is dst or src == dst:
        return data
    if src.is_fp8() or dst.is_fp8():
        return fp8.cast(data, src, dst, rounding)[0]
    if dst.is_bool():
        return data != 0
    if src.is_floating() and dst.is_floating():
        narrower = dst.primitive_bitwidth < src.primitive_bitwidth
        if narrower or (dst.primitive_bitwidth == 16 and dst.is_bf16() != src.is_bf16()):  # fp16 <-> bf16 rounds
            mode = rounding or "rtne"
            if dst.is_bf16():
                return numerics.round_to_bf16(data, mode)
            if dst.is_fp16():
                return numerics.round_to_fp16(data, mode)
            return numerics.round_to_fp32(data, mode)
        if dst.is_fp32() and data.dtype == np.float16:
            return numerics.f16_to_f32(data)
        return data.astype(dst.np_compute)
    if src.is_floating():  # float -> int: cvt.rzi.sat
        return numerics.float_to_int(data, dst.np_compute)
    if dst.is_bf16():  # int -> bf16 rounds once, from the exact value
        if data.dtype.itemsize == 8:  # 64-bit: float64 would round first (GPU probe: 2**62+2**54+1 -> 2**62+2**55)
            lo = data & data.dtype.type(0xFFFFFFFF)
            with np.errstate(all="ignore"):
                wide = numerics.add_round_odd((data - lo).astype(np.float64), lo.astype(np.float64))
            return numerics.round_to_bf16(wide)
        return numerics.round_to_bf16(data.astype(np.float64))
    return data.astype(dst.np_compute)


@builtin(method=("to", "cast"))
def cast(x, dst, fp_downcast_rounding=None, bitcast=False) -> tensor:
    """`tl.cast(x, dst)`, `x.to(dst)`: Triton's cast rules (see `triton.language.semantic.cast`), on every lane."""
    if type(x) is tensor and x.dtype is dst:  # already that type (whatever the other arguments say)
        return x
    x = to_tensor(x)
    dst = unwrap(dst)
    rounding = unwrap(fp_downcast_rounding)
    src = x.dtype
    if unwrap(bitcast):
        return _bitcast(x, dst)
    if src == dst:
        return x
    _check_cast(src, dst, rounding)
    if src.is_fp8() or dst.is_fp8():
        data, ty = fp8.cast(x.data, src, dst, rounding)
        return tensor(data, ty, x.shape)
    if src.is_ptr() or dst.is_ptr():
        return _pointer_cast(x, dst)
    return tensor(convert(x.data, src, dst, rounding), dst, x.shape)


@operator("__call__", owner=T.dtype)
def _dtype_call(ty: T.dtype, value) -> tensor:
    """`tl.float32(x)` inside a kernel: a cast, as in Triton."""
    return cast(value, ty)


def _check_cast(src: T.dtype, dst: T.dtype, rounding) -> None:
    """Triton's checks of a value cast's rounding mode (semantic.cast), with its wording."""
    if rounding not in (None, "rtne", "rtz"):
        raise errors.python_error(ValueError, errors.diagnostic("rounding_mode", rounding=rounding))
    truncating = src.is_floating() and dst.is_floating() and dst.primitive_bitwidth < src.primitive_bitwidth
    if rounding is not None and not truncating:
        raise errors.python_error(ValueError, errors.diagnostic("rounding_not_truncating", src=src, dst=dst))
    if rounding == "rtz" and src.is_fp64():
        raise _fp64_rtz_unsupported(dst)


def _fp64_rtz_unsupported(dst: T.dtype) -> RuntimeError:
    """Triton 3.6 on NVIDIA cannot lower an fp64 -> fp32/fp16/bf16 conversion with rounding mode rtz (offline
    compile for sm_90 and H200). Its diagnostic names f16 for an fp32 destination too."""
    target = "bf16" if dst.is_bf16() else "f16"
    return errors.backend_error(
        "PassManager::run failed",
        f"Unsupported conversion from f64 to {target} with rounding mode rtz\n"
        "LLVM ERROR: Unsupported rounding mode for conversion.")


def _bitcast(x: tensor, dst: T.dtype) -> tensor:
    src = x.dtype
    if src == dst:
        return x
    if src.is_ptr() or dst.is_ptr():
        return _pointer_cast(x, dst)
    if src.primitive_bitwidth != dst.primitive_bitwidth:
        raise errors.python_error(ValueError, errors.diagnostic(
            "bitcast_size", src=src.primitive_bitwidth, dst=dst.primitive_bitwidth))
    return tensor(from_storage(to_storage(x.data, src).view(dst.np_storage), dst), dst, x.shape)


def to_storage(data: np.ndarray, ty: T.dtype) -> np.ndarray:
    """Compute-dtype values as the bit patterns memory holds (bf16: uint16)."""
    if ty.primitive_bitwidth == 8 and ty.is_fp8():   # (the width first: an attribute, every load/store)
        return fp8.encode(data, ty)
    if ty.is_bf16():
        # bf16 values are exact bf16 numbers held in float32: move their bits as they are (a load/store or
        # bitcast keeps signalling-NaN payloads on the GPU); only other values are rounded.
        data = np.asarray(data)
        if data.dtype != np.float32:
            return numerics.f32_to_bf16_bits(data)
        bits = data.view(np.uint32)
        exact = (bits & np.uint32(0xFFFF)) == 0
        if np.count_nonzero(exact) == exact.size:  # all exact (faster than .all() on small arrays)
            return (bits >> np.uint32(16)).astype(np.uint16)
        return np.where(exact, (bits >> np.uint32(16)).astype(np.uint16), numerics.f32_to_bf16_bits(data))
    return data


def from_storage(data: np.ndarray, ty: T.dtype) -> np.ndarray:
    """Memory bit patterns as compute-dtype values."""
    if ty.primitive_bitwidth == 8 and ty.is_fp8():
        return fp8.decode(data, ty)
    if ty.is_bf16():
        return numerics.bf16_bits_to_f32(data)
    return data


def _pointer_cast(x: tensor, dst: T.dtype) -> tensor:
    src = x.dtype
    if src.is_ptr() and dst.is_ptr():
        if x.alloc is not None:
            old, new = src.element_ty.itemsize, dst.element_ty.itemsize
            if old == new:
                return tensor(x.data, dst, x.shape, x.alloc)
            byte = x.data.astype(np.int64) * old
            if not (byte % new).any():
                return tensor(byte // new, dst, x.shape, x.alloc)
        return tensor(to_address(x), dst, x.shape)
    if src.is_ptr():
        if dst.is_bool():
            return tensor(to_address(x) != 0, dst, x.shape)
        if dst.primitive_bitwidth != 64:
            raise errors.python_error(TypeError, errors.diagnostic("pointer_cast", dst=dst))
        return tensor(to_address(x).astype(dst.np_compute), dst, x.shape)
    if not src.is_int():
        raise errors.python_error(TypeError, errors.diagnostic("cast_to_pointer", src=src))
    return tensor(x.data.astype(np.int64), dst, x.shape)
