"""Math functions of `tl` (exp, log, sqrt, ...) with Triton's dtype checks.

Triton accepts only fp32/fp64 for most of them (libdevice's convention): an fp16 or bf16 argument is a
ValueError, as on the GPU, so kernels cast explicitly. Results are NumPy's correctly rounded (or nearly)
values; the GPU's approximate `exp`/`/` differ by a few ulp, which the parity suite allows for.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as T
from . import numerics
from .ops_basic import (add, finish, mul, neg, operands, to_tensor, truediv, unwrap)
from .tensor import tensor


def _check(x, allowed):
    if isinstance(x, tensor) and x.dtype.name not in allowed:
        raise ValueError(f"Expected dtype {list(allowed)} but got {x.dtype.name}")


_FP = ("fp32", "fp64")


def _unary(np_fn, allowed=_FP, name=None):
    def fn(x):
        x = unwrap(x)
        _check(x, allowed)
        x = to_tensor(x)
        return finish(np_fn(x.data), x.dtype, x.shape)
    fn.__name__ = name or np_fn.__name__
    return fn


exp = _unary(np.exp, name="exp")
exp2 = _unary(np.exp2, name="exp2")
log = _unary(np.log, name="log")
log2 = _unary(np.log2, name="log2")
cos = _unary(np.cos, name="cos")
sin = _unary(np.sin, name="sin")
sqrt = _unary(np.sqrt, name="sqrt")
sqrt_rn = _unary(np.sqrt, ("fp32",), name="sqrt_rn")
floor = _unary(np.floor, name="floor")
ceil = _unary(np.ceil, name="ceil")
erf = _unary(numerics.erf, name="erf")


def rsqrt(x):
    """`tl.rsqrt`: 1 / sqrt(x)."""
    x = unwrap(x)
    _check(x, _FP)
    x = to_tensor(x)
    one = np.ones((), x.dtype.np_compute)
    return finish(one / np.sqrt(x.data), x.dtype, x.shape)


def abs(x):
    """`tl.abs`: |x| for floats and signed ints (wrapping for INT_MIN); unsigned unchanged."""
    x = to_tensor(x)
    if x.dtype.is_int_unsigned():
        return x
    return tensor(np.abs(x.data), x.dtype, x.shape)


def sigmoid(x):
    """`tl.sigmoid`: 1 / (1 + exp(-x))."""
    return truediv(1, add(1, exp(neg(x))))


def fdiv(x, y, ieee_rounding=False, approx=False):
    """`tl.fdiv`: float division (minitriton rounds every mode correctly)."""
    if unwrap(ieee_rounding) and unwrap(approx):
        raise ValueError("approx and ieee_rounding cannot both be True")
    xd, yd, ty, shape, _, _ = operands(x, y, div_or_mod=True)
    if not ty.is_floating():
        raise TypeError("fdiv requires floating-point operands after type promotion")
    return finish(np.true_divide(xd, yd), ty, shape)


def div_rn(x, y):
    """`tl.div_rn`: IEEE round-to-nearest division of fp32 values."""
    _check(unwrap(x), ("fp32",))
    _check(unwrap(y), ("fp32",))
    xd, yd, ty, shape, _, _ = operands(x, y)
    return finish(np.true_divide(xd, yd), ty, shape)


def fma(x, y, z):
    """`tl.fma(x, y, z)`: x * y + z rounded once."""
    x, y, z = unwrap(x), unwrap(y), unwrap(z)
    ty = None
    for v in (x, y, z):
        if isinstance(v, tensor):
            ty = v.dtype if ty is None else T.computation_type(ty, False, v.dtype, False)
    if ty is None:
        ty = T.of_python_scalar(x)
    xs, ys, zs = (to_tensor(v) if isinstance(v, tensor) else v for v in (x, y, z))
    from .ops_basic import cast, broadcast_shapes, expand, scalar_array
    shape = ()
    arrays = []
    for v in (xs, ys, zs):
        if isinstance(v, tensor):
            shape = broadcast_shapes(shape, v.shape)
    for v in (xs, ys, zs):
        if isinstance(v, tensor):
            arrays.append(expand(cast(v, ty).data, v.shape, len(shape)))
        else:
            arrays.append(scalar_array(v, ty))
    return finish(numerics.fma(*arrays), ty, shape)


def cdiv(x, div):
    """`tl.cdiv(x, div)`: (x + div - 1) // div, literally (so negative x rounds the C way)."""
    x, div = unwrap(x), unwrap(div)
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        return (x + div - 1) // div
    from .ops_basic import floordiv, sub
    return floordiv(sub(add(x, div), 1), div)


def umulhi(x, y):
    """`tl.umulhi`: the high 32 (or 64) bits of the full product."""
    _check(unwrap(x), ("int32", "int64", "uint32", "uint64"))
    _check(unwrap(y), ("int32", "int64", "uint32", "uint64"))
    xd, yd, ty, shape, _, _ = operands(x, y)
    # MulhiUIOp: the bit patterns multiply as unsigned, also for int32/int64 (GPU probe: umulhi(-1, 2) == 1)
    unsigned = np.dtype(f"u{xd.dtype.itemsize}")
    hi = numerics.umulhi(np.asarray(xd).view(unsigned), np.asarray(yd).view(unsigned))
    return finish(hi.view(xd.dtype), ty, shape)


def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """`tl.softmax(x)`: exp(x - max) / sum along the last axis (or `dim`)."""
    from . import ops_reduce
    x = to_tensor(x)
    axis = len(x.shape) - 1 if unwrap(dim) is None else unwrap(dim)
    z = x - ops_reduce.max(x, axis, keep_dims=True)
    num = exp(z)
    return truediv(num, ops_reduce.sum(num, axis, keep_dims=True))
