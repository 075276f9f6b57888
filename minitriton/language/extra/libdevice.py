"""`triton.language.extra.libdevice`: CUDA libdevice math on fp32/fp64 blocks, computed with NumPy.

Like libdevice, each function takes fp32 or fp64 (`isnan`/`isinf`/`signbit` answer int1); an fp16 or bf16
argument is a ValueError, so cast explicitly as on the GPU.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as _T
from minitriton.semantics import numerics as _numerics
from minitriton.semantics.elementwise import finish as _finish
from minitriton.semantics.elementwise import operands as _operands
from minitriton.semantics.constexpr import to_tensor as _to_tensor
from minitriton.semantics.constexpr import unwrap as _unwrap
from minitriton.semantics.math import div_rn, fma, sqrt_rn  # noqa: F401
from minitriton.values.tensor import tensor as _tensor

_FP = ("fp32", "fp64")


def _check(x, allowed=_FP):
    if isinstance(x, _tensor) and x.dtype.name not in allowed:
        raise errors.python_error(ValueError, errors.diagnostic("dtype_expected", allowed=str(list(allowed)),
                                                                dtype=x.dtype.name))


def _unary(fn, name, result=None):
    def op(x):
        x = _unwrap(x)
        _check(x)
        x = _to_tensor(x)
        out = fn(x.data)
        if result is not None:
            return _tensor(out, result, x.shape)
        return _finish(out, x.dtype, x.shape)
    op.__name__ = name
    op.__doc__ = f"libdevice `{name}` (element-wise, fp32/fp64)."
    return op


def _binary(fn, name):
    def op(x, y):
        _check(_unwrap(x))
        _check(_unwrap(y))
        xd, yd, ty, shape, _, _ = _operands(x, y)
        return _finish(fn(xd, yd), ty, shape)
    op.__name__ = name
    op.__doc__ = f"libdevice `{name}` (element-wise, fp32/fp64)."
    return op


exp = _unary(np.exp, "exp")
exp2 = _unary(np.exp2, "exp2")
exp10 = _unary(lambda x: np.power(x.dtype.type(10), x), "exp10")
expm1 = _unary(np.expm1, "expm1")
fast_expf = _unary(np.exp, "fast_expf")
log = _unary(np.log, "log")
log2 = _unary(np.log2, "log2")
log10 = _unary(np.log10, "log10")
log1p = _unary(np.log1p, "log1p")
fast_logf = _unary(np.log, "fast_logf")
sqrt = _unary(np.sqrt, "sqrt")
rsqrt = _unary(lambda x: x.dtype.type(1) / np.sqrt(x), "rsqrt")
cbrt = _unary(np.cbrt, "cbrt")
sin = _unary(np.sin, "sin")
cos = _unary(np.cos, "cos")
tan = _unary(np.tan, "tan")
asin = _unary(np.arcsin, "asin")
acos = _unary(np.arccos, "acos")
atan = _unary(np.arctan, "atan")
sinh = _unary(np.sinh, "sinh")
cosh = _unary(np.cosh, "cosh")
tanh = _unary(np.tanh, "tanh")
asinh = _unary(np.arcsinh, "asinh")
acosh = _unary(np.arccosh, "acosh")
atanh = _unary(np.arctanh, "atanh")
erf = _unary(_numerics.erf, "erf")
erfc = _unary(lambda x: (1 - _numerics.erf(x.astype(np.float64))).astype(x.dtype), "erfc")
floor = _unary(np.floor, "floor")
ceil = _unary(np.ceil, "ceil")
trunc = _unary(np.trunc, "trunc")
rint = _unary(np.rint, "rint")
nearbyint = _unary(np.rint, "nearbyint")
round = _unary(lambda x: np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x), "round")  # noqa: A001
fabs = _unary(np.abs, "fabs")
rcp_rn = _unary(lambda x: x.dtype.type(1) / x, "rcp_rn")
isnan = _unary(np.isnan, "isnan", _T.int1)
isinf = _unary(np.isinf, "isinf", _T.int1)
isfinited = _unary(np.isfinite, "isfinited", _T.int1)
finitef = _unary(np.isfinite, "finitef", _T.int1)
signbit = _unary(np.signbit, "signbit", _T.int1)

pow = _binary(np.power, "pow")  # noqa: A001
fast_powf = _binary(np.power, "fast_powf")
atan2 = _binary(np.arctan2, "atan2")
hypot = _binary(np.hypot, "hypot")
fmod = _binary(_numerics.c_fmod, "fmod")
fmin = _binary(np.fmin, "fmin")
fmax = _binary(np.fmax, "fmax")
copysign = _binary(np.copysign, "copysign")
nextafter = _binary(np.nextafter, "nextafter")
fdim = _binary(lambda x, y: np.where(x > y, x - y, x.dtype.type(0) if hasattr(x, "dtype") else 0), "fdim")
fast_dividef = _binary(np.true_divide, "fast_dividef")
div_rz = _binary(np.true_divide, "div_rz")
