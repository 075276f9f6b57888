"""`tl.dot`: block matrix products as NVIDIA tensor cores compute them.

* fp32 inputs default to TF32: both operands lose their low 13 mantissa bits (truncation, measured on an
  H200), then the products are exact and accumulate in fp32. "ieee" is plain fp32; "tf32x3" is close to it.
* fp16/bf16 inputs: exact products, fp32 accumulation; `out_dtype=float16` rounds once at the end.
* int8 accumulates in int32; fp64 in fp64.
* fp8 (any two of fp8e4nv, fp8e5): exact products, fp32 accumulation; fp8e4b15 is upcast to fp16 first.
Shape limits are those of Triton 3.9 and newer on NVIDIA: K >= 16 (K >= 32 for 8-bit inputs), except fp32: K >= 8
(one TF32 k8 MMA) and fp64: K >= 4 (one 8x8x4 MMA); Triton 3.6 (the lab GPU) wanted K >= 16 for both
(docs/semantics.md S8.5).
"""
from __future__ import annotations

import math

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import fp8, numerics
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.values import programs
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor

ALLOWED_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
_INPUT_TYPES = (T.int8, T.uint8, T.float16, T.bfloat16, T.float32, T.float64)
_INPUT_NAMES = frozenset(t.name for t in _INPUT_TYPES)  # a name test: dtype.__eq__ is a Python call


def min_dot_size(bits: int):
    """(M, N, K) minimum of Triton 3.9's NVIDIA backend (`min_dot_size`, by the inputs' bit width)."""
    return (1, 1, {8: 32, 32: 8, 64: 4}.get(bits, 16))


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=None):
    """`tl.dot(a, b, acc)`: (M, K) @ (K, N) (or batched: (..., M, K) @ (..., K, N)) with the GPU's precision rules."""
    group = programs.current("dot")
    a, b = to_tensor(input), to_tensor(other)
    acc = None if unwrap(acc) is None else to_tensor(unwrap(acc))
    if a.shape and b.shape and a.dtype.is_fp8() and b.dtype.is_fp8():
        a, b = _fp8_operands(a, b, unwrap(max_num_imprecise_acc))
    precision, ret, shape = _check(a, b, acc, unwrap(input_precision), unwrap(allow_tf32), unwrap(out_dtype),
                                   group.f32_default)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = math.prod(a.shape[:-2])
    group.count_flops(2 * M * N * K * batch, (M, N, precision if a.dtype.is_fp32() else a.dtype.name))
    return tensor(_product(a, b, acc, precision, ret), ret, shape)


def _fp8_operands(a: tensor, b: tensor, max_num_imprecise_acc):
    """Any two fp8 types multiply exactly; fp8e4b15 is upcast to fp16 first (Triton 3.6 on NVIDIA)."""
    fp8.check_supported(a.dtype)
    fp8.check_supported(b.dtype)
    if a.dtype.is_fp8e4b15() or b.dtype.is_fp8e4b15():
        return cast(a, T.float16), cast(b, T.float16)
    if max_num_imprecise_acc is not None and max_num_imprecise_acc > a.shape[-1]:
        raise errors.python_error(ValueError, errors.diagnostic(
            "dot_imprecise", given=max_num_imprecise_acc, k=a.shape[-1]))
    return a, b


def _check(a: tensor, b: tensor, acc, input_precision, allow_tf32, out_dtype, f32_default):
    """Triton 3.6's checks of `tl.dot`, in its order and words: (precision, result dtype, result shape)."""
    if not a.shape or not b.shape:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_scalar"))
    if a.dtype.is_fp8() and b.dtype.is_fp8():
        pass  # any two fp8 types (_fp8_operands)
    elif a.dtype.name not in _INPUT_NAMES:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_operand_dtype", side="lhs", dtype=a.dtype))
    elif b.dtype.name not in _INPUT_NAMES:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_operand_dtype", side="rhs", dtype=b.dtype))
    elif a.dtype != b.dtype:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_same_dtype", left=a.dtype, right=b.dtype))
    if input_precision is None:
        if allow_tf32 is not None:
            input_precision = "tf32" if allow_tf32 else "ieee"
        else:
            input_precision = f32_default
    precision = str(input_precision).lower()
    if precision not in ALLOWED_PRECISIONS:
        raise errors.python_error(AssertionError, errors.diagnostic(
            "dot_precision", allowed=str(ALLOWED_PRECISIONS), given=input_precision))
    if out_dtype is None:  # Triton 3.6's default (3.9 takes the accumulator's type instead)
        out_dtype = T.float32
    # core.dot: any rank >= 2, the leading axes a batch (ranks above 3 flattened to one for semantic.dot)
    if not len(a.shape) == len(b.shape) >= 2:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_rank", left=list(a.shape),
                                                                    right=list(b.shape)))
    if a.shape[:-2] != b.shape[:-2]:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_batch", left=list(a.shape),
                                                                    right=list(b.shape)))
    if a.shape[-1] != b.shape[-2]:
        # core.dot's wording (checked first in Triton), then semantic.dot's details
        raise errors.python_error(AssertionError, errors.diagnostic(
            "dot_reduction", left=list(a.shape), right=list(b.shape), k_left=a.shape[-1], k_right=b.shape[-2]))
    m_min, n_min, k_min = min_dot_size(a.dtype.primitive_bitwidth)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    if M < m_min or K < k_min or N < n_min:
        raise errors.python_error(AssertionError, errors.diagnostic("dot_minimum", m=m_min, n=n_min, k=k_min))
    if a.dtype.is_int():
        if a.dtype != T.int8:
            raise errors.python_error(AssertionError, errors.diagnostic("dot_int8", dtype=a.dtype))
        ret = T.int32
    elif out_dtype.is_bf16():
        raise errors.python_error(ValueError, errors.diagnostic("dot_bf16_out"))
    elif a.dtype.is_fp32() or a.dtype.is_bf16():
        ret = T.float32
    elif a.dtype.is_fp64():
        ret = T.float64
    else:
        ret = out_dtype
    shape = a.shape[:-1] + (N,)
    if acc is not None:
        if acc.shape != shape:
            raise errors.python_error(AssertionError, errors.diagnostic(   # core.dot
                "dot_accumulator_shape", shape=list(acc.shape), expected=list(shape)))
        if acc.dtype != out_dtype:
            # semantic.dot's bare `assert ... acc.type.element_ty == out_dtype`, int8 inputs included: an fp16,
            # int32 or fp64 accumulator needs out_dtype= (Triton 3.6 shows no message)
            raise AssertionError()
    return precision, ret, shape


def _float32(data: np.ndarray) -> np.ndarray:
    return numerics.f16_to_f32(data) if data.dtype == np.float16 else data.astype(np.float32, copy=False)


def _product(a: tensor, b: tensor, acc, precision: str, ret) -> np.ndarray:
    """The product as tensor cores compute it (see the module docstring), plus `acc`, in `ret`'s type."""
    ad, bd = a.data, b.data
    if a.dtype.is_int():
        prod = np.matmul(ad.astype(np.int32), bd.astype(np.int32))
    elif a.dtype.is_fp64():
        prod = np.matmul(ad, bd)
    else:
        ad, bd = _float32(ad), _float32(bd)
        if a.dtype.is_fp32() and precision == "tf32":
            ad, bd = numerics.tf32_truncate(ad), numerics.tf32_truncate(bd)
        prod = np.matmul(ad, bd)
    if acc is not None:
        if prod.shape == acc.data.shape or acc.data.shape[0] == 1:
            prod += acc.data  # in place: prod is a fresh array with the full shape
        else:
            prod = prod + acc.data
    if ret.is_fp16():
        return prod.astype(np.float16)
    return prod if prod.dtype == ret.np_compute else prod.astype(ret.np_compute)
