"""`tl.dot_scaled`: the product of two microscaled blocks, as Triton decomposes it on Hopper (sm90; S15.36).

Both operands are upcast to the compute type, fp16 when either format is "fp16" (a "bf16" side then fails to
compile), else bf16: fp8 ("e4m3", "e5m2") as `x.to(...)` converts it, "e2m1" (two per uint8, the first in the
low bits, packed along K or, with k_pack=False, along M/N) exactly. A scale (one per 32 or 16 K-elements) is an
e8m0 byte 2**(s-127) read as bits in the compute type (bf16: `s << 7`, so byte 0 is 0.0; fp16: the fp32 value
rounded, so 2**16 and up are inf) or a float type converted; it multiplies the operand in the compute type
(rounded once). Unless fast_math, a group whose scale byte is 0xFF (or whose float scale is NaN) is NaN. Then
the operands multiply as `tl.dot`'s fp16/bf16 do (exact products, fp32 accumulation), plus `acc`.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import numerics
from minitriton.semantics.casts import cast, convert
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.values import programs
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor

FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
_NAMED = FORMATS + ("e2m3", "e3m2")  # the names Triton's enum knows (the last two are refused as NYI)
_TYPES = {"e4m3": (T.float8e4nv, T.uint8), "e5m2": (T.float8e5, T.uint8), "bf16": (T.bfloat16, T.uint16),
          "fp16": (T.float16, T.uint16)}
E2M1_VALUES = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False, lhs_k_pack=True,
               rhs_k_pack=True, out_dtype=T.float32):
    """`tl.dot_scaled(lhs, lhs_scale, fmt, rhs, rhs_scale, fmt, acc)`: (M, K) @ (K, N) of scaled operands."""
    group = programs.current("dot_scaled")
    fmt_a, fmt_b, acc, fast_math, pack_a, pack_b, out_dtype = map(unwrap, (
        lhs_format, rhs_format, acc, fast_math, lhs_k_pack, rhs_k_pack, out_dtype))
    errors.require(out_dtype == T.float32, "dot_scaled_out_dtype")
    a, b = to_tensor(lhs), to_tensor(rhs)
    sa, sb = (None if unwrap(s) is None else to_tensor(unwrap(s)) for s in (lhs_scale, rhs_scale))
    _require(a.shape and b.shape, "dot_scaled operands must be block tensors (not scalars)")
    errors.require(len(a.shape) == len(b.shape) in (2, 3), "dot_scaled_rank", left=list(a.shape),
                   right=list(b.shape))
    for fmt in (fmt_a, fmt_b):
        if str(fmt).lower() not in _NAMED:
            raise errors.python_error(ValueError, errors.diagnostic("dot_scaled_format", format=fmt))
    _require(fmt_a in FORMATS, f"NYI: lhs_format {fmt_a}")
    _require(fmt_b in FORMATS, f"NYI: rhs_format {fmt_b}")
    a, b = _typed(a, fmt_a), _typed(b, fmt_b)
    for pack, fmt in ((pack_a, fmt_a), (pack_b, fmt_b)):
        _require(pack or fmt == "e2m1", "only mxfp4 inputs can be packed along a dimension different than K")
    (M, k_a), (k_b, N) = a.shape[-2:], b.shape[-2:]
    k_a, k_b = k_a * (1 + (fmt_a == "e2m1" and pack_a)), k_b * (1 + (fmt_b == "e2m1" and pack_b))
    errors.require(k_a == k_b, "dot_scaled_reduction", left=list(a.shape), right=list(b.shape))
    M, N = M * (1 + (not pack_a)), N * (1 + (not pack_b))
    shape = a.shape[:-2] + (M, N)
    if acc is not None:
        acc = to_tensor(acc)
        _require(acc.shape == shape, f"expected accumulator shape {list(shape)}, got {list(acc.shape)}")
        _require(acc.dtype == out_dtype, f"expected accumulator dtype {out_dtype}, got {acc.dtype}; pass "
                                         f"out_dtype={acc.dtype} to use this accumulator dtype")
    factor = _scale_factor([k_a // s.shape[-1] if s is not None and s.numel != 1 else 0 for s in (sa, sb)])
    for side, scale, rows in (("lhs", sa, M), ("rhs", sb, N)):
        errors.require(scale is None or scale.shape[-2:] == (rows, k_a // factor), "dot_scaled_scale_shape",
                       side=side, rows=rows, cols=k_a // factor, shape=list(scale.shape) if scale is not None else [])
    compute = T.float16 if "fp16" in (fmt_a, fmt_b) else T.bfloat16
    if compute.is_fp16() and "bf16" in (fmt_a, fmt_b):
        raise errors.backend_error("PassManager::run failed", "the NVIDIA backend has no conversion from bf16 to "
                                   "fp16, the type both operands are upcast to when one is fp16")
    va = _upcast(a, sa, fmt_a == "e2m1", -1 if pack_a else -2, -1, compute, factor, fast_math)
    vb = _upcast(b, sb, fmt_b == "e2m1", -2 if pack_b else -1, -2, compute, factor, fast_math)
    group.count_flops(2 * M * N * k_a * (a.shape[0] if len(shape) == 3 else 1))
    out = np.matmul(va.astype(np.float32), vb.astype(np.float32))
    return tensor(out if acc is None else out + acc.data, T.float32, shape)


def _typed(x: tensor, fmt: str) -> tensor:
    """The operand as its format's type: e2m1 stays uint8, the others accept their type or its bits."""
    if fmt == "e2m1":
        _require(x.dtype == T.uint8, f"e2m1 format must be packed as uint8. Got {x.dtype}")
        return x
    ty, bits = _TYPES[fmt]
    errors.require(x.dtype in (ty, bits), "dot_scaled_dtype", format=fmt, dtype=x.dtype)
    return cast(x, ty, bitcast=True)


def _scale_factor(found) -> int:
    """Triton's deduce_scale_factor: K over the scale's last size, 16 or 32 and the same on both sides."""
    for factor in found:
        if factor not in (0, 16, 32):
            raise errors.python_error(RuntimeError, errors.diagnostic("dot_scaled_factor", factor=factor))
    _require(not all(found) or found[0] == found[1],
             f"Operands must have the same scale factor; (lhs: {found[0]} vs rhs: {found[1]})", RuntimeError)
    return max(found) or 32


def _require(ok, message: str, cls: type = AssertionError) -> None:
    """Triton's `assert ok, message` with no record of its own (a compile error in Triton's words)."""
    if not ok:
        raise cls(message)


def _upcast(x: tensor, scale, e2m1: bool, pack_axis: int, k_axis: int, compute, factor: int, fast_math: bool):
    """One operand in the compute type (float32 holding bf16 values, or float16), scaled and NaN-masked."""
    if e2m1:
        codes = x.data.astype(np.uint8)
        codes = np.stack((codes & 15, codes >> 4), axis=pack_axis)
        shape = list(x.data.shape)
        shape[pack_axis] *= 2
        v = E2M1_VALUES[codes.reshape(shape)]
    else:
        v = convert(x.data, x.dtype, compute)
    if compute.is_fp16():
        v = v.astype(np.float16)
    if scale is None:
        return v
    s = scale.data if k_axis == -1 else np.swapaxes(scale.data, -1, -2)  # rhs_scale is (N, K / factor)
    if scale.dtype.is_floating():
        s = convert(s, scale.dtype, compute)
        nan = np.isnan(s)
    else:
        s = s.astype(np.uint8)
        nan = s == 0xFF
        if compute.is_bf16():
            s = numerics.bf16_bits_to_f32(s.astype(np.uint16) << 7)
        else:
            s = numerics.round_to_fp16((s.astype(np.uint32) << 23).view(np.float32))
    s = np.repeat(s, factor, axis=k_axis)
    with np.errstate(all="ignore"):
        v = v * s if compute.is_fp16() else numerics.round_to_bf16(v.astype(np.float64) * s)
    if not fast_math and nan.any():
        v = np.where(np.repeat(nan, factor, axis=k_axis), v.dtype.type(np.nan), v)
    return v
