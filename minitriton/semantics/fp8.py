"""Triton's five fp8 types: their values, and the conversions an H200 performs with Triton 3.6 (docs/semantics.md S17).

| type | layout | bias | specials |
|---|---|---|---|
| fp8e4nv (e4m3fn) | 1.4.3 | 7 | no inf; S.1111.111 is NaN |
| fp8e5 (e5m2) | 1.5.2 | 15 | IEEE: exponent 31 is inf (mantissa 0) or NaN |
| fp8e4b15 | 1.4.3 | 15 | none: every byte is a number (0x7F is 1.875) |
| fp8e4b8 (e4m3fnuz) | 1.4.3 | 8 | 0x80 is the only NaN; no -0, no inf |
| fp8e5b16 (e5m2fnuz) | 1.5.2 | 16 | 0x80 is the only NaN; no -0, no inf |

A kernel holds fp8 values as float32 (every fp8 value is exact there); a NaN keeps its byte in the low bits of its
float32 payload, so loads, stores and bitcasts move bytes unchanged. Memory holds the byte.

What the H200 computes (S17): conversions to e4nv and e5 round to nearest even and saturate (`cvt.rn.satfinite`:
±inf and overflow give ±max, NaN gives 0x7F); fp32 -> e5 with rtz truncates and keeps inf; conversions from them
are exact, with NaN made the canonical +NaN (and e5 -> bf16 reads exponent 31 as a number). e4b15 goes through
fp16 with Triton's own PTX (`triton.language.extra.cuda.utils`): |x| clamped to 1.75 (NaN too), rounded half
up. Every other pairing fails to compile there, and the fnuz types are AMD-only.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T

# name -> (exponent bits, mantissa bits, bias, specials)
FORMATS = {
    "fp8e4nv": (4, 3, 7, "fn"),
    "fp8e5": (5, 2, 15, "ieee"),
    "fp8e4b15": (4, 3, 15, "none"),
    "fp8e4b8": (4, 3, 8, "fnuz"),
    "fp8e5b16": (5, 2, 16, "fnuz"),
}
NVIDIA_FP8 = ("fp8e4b15", "fp8e4nv", "fp8e5")   # the types Triton 3.6 accepts on an sm_90 GPU
CANONICAL_NAN = 0x7F                               # what cvt.rn.satfinite makes of any NaN (e4m3 and e5m2)
_PAYLOAD = np.uint32(0x7FC00000)                   # float32 quiet NaN whose low byte is the fp8 byte


def _value(code: int, fmt) -> float:
    ebits, mbits, bias, specials = fmt
    sign = -1.0 if code & 0x80 else 1.0
    exponent = (code >> mbits) & ((1 << ebits) - 1)
    mantissa = code & ((1 << mbits) - 1)
    if specials == "fn" and code & 0x7F == 0x7F or specials == "fnuz" and code == 0x80:
        return float("nan")
    if specials == "ieee" and exponent == (1 << ebits) - 1:
        return sign * float("inf") if mantissa == 0 else float("nan")
    if exponent == 0:
        return sign * 2.0 ** (1 - bias) * mantissa / 2 ** mbits
    return sign * 2.0 ** (exponent - bias) * (1 + mantissa / 2 ** mbits)


VALUES = {name: np.array([_value(c, fmt) for c in range(256)]) for name, fmt in FORMATS.items()}


def _decode_table(name: str) -> np.ndarray:
    table = VALUES[name].astype(np.float32)
    nan = np.isnan(table)
    codes = np.arange(256, dtype=np.uint32)
    bits = _PAYLOAD | (codes & 0x7F) | ((codes & 0x80) << 24)
    table[nan] = bits[nan].view(np.float32)
    return table


_DECODE = {name: _decode_table(name) for name in FORMATS}


def decode(bits: np.ndarray, ty: T.dtype) -> np.ndarray:
    """Bytes in memory as the float32 values a kernel holds (NaN bytes kept in the payload)."""
    return _DECODE[ty.name][np.asarray(bits).view(np.uint8)]


def encode(values: np.ndarray, ty: T.dtype) -> np.ndarray:
    """The bytes of float32 values that are values of `ty` (what `decode` made, or results of rounding)."""
    values = np.asarray(values, np.float32)
    out = _nearest(values.astype(np.float64), ty.name, "rtne", saturate=False)
    bits = values.view(np.uint32)
    kept = (bits & np.uint32(0x7FFFFF80)) == _PAYLOAD
    nan = np.isnan(values)
    if nan.any():
        canonical = 0x80 if FORMATS[ty.name][3] == "fnuz" else CANONICAL_NAN
        byte = ((bits & np.uint32(0x7F)) | ((bits >> np.uint32(24)) & np.uint32(0x80))).astype(np.uint8)
        out = np.where(nan, np.where(kept, byte, np.uint8(canonical)), out)
    return out.astype(np.uint8)


def _finite_table(name: str):
    """The positive finite values of the format in increasing order, and their codes."""
    vals = VALUES[name][:128]
    keep = np.isfinite(vals)
    if FORMATS[name][3] == "fnuz":
        keep[0] = True
    order = np.argsort(vals[keep], kind="stable")
    return vals[keep][order], np.arange(128)[keep][order]


_TABLES = {name: _finite_table(name) for name in FORMATS}


def _nearest(a: np.ndarray, name: str, rounding: str, saturate: bool) -> np.ndarray:
    """The code of each (exact, float64) value rounded to the format: RTNE (ties to the even code) or RTZ.

    Finite overflow saturates to ±max; ±inf gives ±max when `saturate`, else ±inf (e5m2). NaN is left to the
    caller (its code here is arbitrary)."""
    table, codes = _TABLES[name]
    mag = np.abs(a)
    with np.errstate(invalid="ignore"):
        hi = np.clip(np.searchsorted(table, mag, side="left"), 0, len(table) - 1)
        lo = np.clip(np.searchsorted(table, mag, side="right") - 1, 0, len(table) - 1)
        if rounding == "rtz":
            code = codes[lo]
        else:
            mid = (table[lo] + table[hi]) / 2    # exact: fp8 values have few bits
            up = (mag > mid) | ((mag == mid) & (codes[hi] % 2 == 0))
            code = np.where(up, codes[hi], codes[lo])
    if not saturate and FORMATS[name][3] == "ieee":
        code = np.where(np.isinf(mag), 0x7C, code)
    sign = np.signbit(a).astype(np.int64) << 7
    if FORMATS[name][3] == "fnuz":
        sign = np.where(code == 0, 0, sign)   # fnuz has no -0
    return (code | sign).astype(np.uint8)


def round_to_fp8(values: np.ndarray, ty: T.dtype, rounding: str = "rtne") -> np.ndarray:
    """Float values (any float dtype, exact) to `ty`'s bytes as the H200's `cvt.rn.satfinite` does (rtne), or its
    fp32 -> e5m2 truncation (rtz, inf kept); NaN to 0x7F (0x80 for the fnuz types)."""
    values = np.asarray(values)
    out = _nearest(values.astype(np.float64), ty.name, rounding, saturate=rounding == "rtne")
    nan = np.isnan(values)
    if nan.any():
        out = np.where(nan, np.uint8(0x80 if FORMATS[ty.name][3] == "fnuz" else CANONICAL_NAN), out)
    return out


def f16_to_e4b15(h: np.ndarray) -> np.ndarray:
    """fp16 bit patterns to fp8e4b15 bytes, as Triton's `convert_float16_to_fp8e4b15` PTX (sm_80+): |x| is
    clamped to 1.75 by `min.f16x2` (a NaN loses the min, so it becomes 1.75 too), then the byte is the top 7 bits of
    |x| * 2 + 0x80 (round half up), and the sign is copied."""
    h = np.asarray(h).view(np.uint16).astype(np.uint32)
    magnitude = h & 0x7FFF
    too_big = (magnitude > 0x3F00)   # above 1.75, inf and NaN
    magnitude = np.where(too_big, 0x3F00, magnitude)
    byte = (((magnitude << 1) + 0x80) >> 8) & 0x7F
    return (((h >> 15) << 7) | byte).astype(np.uint8)


def f32_to_f16_rtz(x: np.ndarray) -> np.ndarray:
    """fp32 values to fp16 bits, rounding toward zero (`cvt.rz.f16.f32`): overflow gives ±65504, ±inf stays, any NaN
    becomes 0x7FFF."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = x.astype(np.float16)
        away = np.abs(nearest.astype(np.float64)) > np.abs(x.astype(np.float64))
    bits = nearest.view(np.uint16)
    bits = np.where(away & np.isfinite(x), bits - np.uint16(1), bits).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), bits)


def _to_wider(data: np.ndarray, src: T.dtype, dst: T.dtype) -> np.ndarray:
    """e4nv / e5 values to fp16, bf16 or fp32 (exact): NaN becomes the canonical +NaN, and e5m2 -> bf16 (Triton's
    Fp8E5M2_to_Bf16) reads exponent 31 as an ordinary exponent: 0x7C is 65536, 0xFF is -114688."""
    data = np.asarray(data, np.float32)
    if src.is_fp8e5() and dst.is_bf16():
        bits = encode(data, src)
        special = (bits & 0x7C) == 0x7C
        if special.any():
            value = np.where(bits & 0x80, -1.0, 1.0) * 2.0 ** 16 * (1 + (bits & 3) / 4)
            data = np.where(special, value.astype(np.float32), data)
    nan = np.isnan(data)
    if dst.is_fp16():
        out = data.astype(np.float16)
        return np.where(nan, np.uint16(0x7FFF).view(np.float16), out) if nan.any() else out
    canonical = np.uint32(0x7FFF0000 if dst.is_bf16() else 0x7FFFFFFF).view(np.float32)
    return np.where(nan, canonical, data) if nan.any() else data


def unsupported_type(ty: T.dtype) -> ValueError:
    """Triton 3.6's refusal of an fp8 type the NVIDIA backend lacks (the fnuz types are AMD's)."""
    return errors.python_error(ValueError, errors.diagnostic(
        "fp8_unsupported", dtype=ty.name, supported=str(NVIDIA_FP8)))


def check_supported(ty: T.dtype) -> None:
    """Raise what an H200 raises when a kernel uses an fp8 type it lacks."""
    if ty.is_fp8() and ty.name not in NVIDIA_FP8:
        raise unsupported_type(ty)


def constant_error(ty: T.dtype) -> AttributeError:
    """Triton 3.6 builds a non-zero fp8 constant with `builder.get_fp8...`, which its IR builder lacks (H200:
    `tl.full` of an fp8 type, `x + 1.5` on an fp8 `x`; zero works, as `get_null_value`)."""
    return errors.python_error(AttributeError, errors.diagnostic("fp8_constant", dtype=ty.name))


def arithmetic_error(ty: T.dtype) -> RuntimeError:
    """Arithmetic computed in an fp8 type fails to compile on an H200 (Triton 3.6): `+ - * /`, unary minus,
    comparisons, `maximum`, `where`, `tl.sum`; convert to fp16 or fp32 first (`tl.abs` and conversions work)."""
    if ty.is_fp8e4b15():
        return errors.backend_error("error encountered during parsing",
                                    "fp8e4b15 is not an MLIR type: arithmetic on it does not lower")
    return errors.backend_error("PassManager::run failed",
                                f"the NVIDIA backend has no {ty} arithmetic; convert to fp16 or fp32 first")


def _no_conversion(src: T.dtype, dst: T.dtype, rounding) -> RuntimeError:
    how = f" with rounding mode {rounding}" if rounding else ""
    return errors.backend_error("PassManager::run failed",
                                f"the NVIDIA backend has no conversion from {src} to {dst}{how}")


def cast(data: np.ndarray, src: T.dtype, dst: T.dtype, rounding):
    """A conversion with an fp8 side, as `x.to(dst)` compiles on an H200: (values, result dtype).

    `rounding` is None, "rtne" or "rtz" (already checked by the caller). The result dtype is `dst`, except from
    fp8e4b15, which Triton converts to fp16 whatever `dst` is (fp32 excepted)."""
    check_supported(src)
    check_supported(dst)
    if src.is_fp8e4b15():
        half = data.astype(np.float16)   # exact: e4b15 values are fp16 values
        return (half.astype(np.float32), dst) if dst.is_fp32() else (half, T.float16)
    if dst.is_fp8e4b15():
        if src.is_fp16():
            return decode(f16_to_e4b15(data), dst), dst
        if src.is_fp32():
            return decode(f16_to_e4b15(f32_to_f16_rtz(data)), dst), dst
        raise AssertionError()   # convert_custom_float8: `assert arg.type.scalar.is_fp16() or ...is_fp32()`
    if src.is_int() or dst.is_int() or src.is_ptr() or dst.is_ptr():
        raise errors.python_error(AssertionError, errors.diagnostic("cast", src=src, dst=dst))
    if src.is_fp8() and dst.is_fp8() or src.is_fp64() or dst.is_fp64():
        raise _no_conversion(src, dst, rounding)
    if src.is_fp8():
        return _to_wider(data, src, dst), dst
    if (rounding or "rtne") == "rtz" and not (src.is_fp32() and dst.is_fp8e5()):
        raise _no_conversion(src, dst, "rtz")
    return decode(round_to_fp8(data, dst, rounding or "rtne"), dst), dst
