"""Compile-time values and literals: `tl.constexpr`, and Python numbers as Triton types them.

A Python number in a kernel becomes a tensor of Triton's literal type (`of_python_scalar`: int32, uint32,
int64, fp32, ...) holding the constant Triton's `scalar_constant` makes (bf16 literals through
`std::to_string`). Kernels use a handful of literals over and over, so their arrays are cached.
"""
from __future__ import annotations

import math
import operator
from fractions import Fraction

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import fp8, numerics
from minitriton.values.tensor import tensor


class constexpr:
    """`tl.constexpr`: a compile-time value. Kernel parameters annotated with it receive plain Python values."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value.__index__()

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == unwrap(other)

    def __hash__(self):
        return hash(self.value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value, name)


def _constexpr_op(op, reflected=False):
    """A constexpr operator as Triton's: on the values, the result a constexpr (a tensor when the other side is
    one, as `BLOCK * pid` is)."""
    def method(self, other):
        a, b = (unwrap(other), self.value) if reflected else (self.value, unwrap(other))
        out = op(a, b)
        return out if type(out) is tensor or out is NotImplemented else constexpr(out)
    return method


def _constexpr_unary(op):
    def method(self):
        out = op(self.value)
        return out if type(out) is tensor else constexpr(out)
    return method


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
                   ("pow", operator.pow), ("lshift", operator.lshift), ("rshift", operator.rshift),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)):
    setattr(constexpr, f"__{_name}__", _constexpr_op(_op))
    setattr(constexpr, f"__r{_name}__", _constexpr_op(_op, reflected=True))
for _name, _op in (("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("ne", operator.ne)):
    setattr(constexpr, f"__{_name}__", _constexpr_op(_op))
for _name, _op in (("neg", operator.neg), ("pos", operator.pos), ("invert", operator.invert), ("abs", abs)):
    setattr(constexpr, f"__{_name}__", _constexpr_unary(_op))
del _name, _op


def unwrap(x):
    """The Python value of a constexpr or NumPy scalar; tensors and other objects unchanged."""
    if type(x) is tensor:
        return x
    if isinstance(x, constexpr):
        return x.value
    if isinstance(x, np.generic):
        return x.item()
    return x


# Kernels use a handful of literals (0, 1, -inf, block sizes) over and over: their arrays are made once and
# shared, read-only (no op writes into its operands; a read-only array makes any that did fail loudly).
_SCALAR_ARRAYS: dict = {}    # (scalar key, dtype name) -> 0-d array, see scalar_array
_LITERALS: dict = {}         # scalar key -> (dtype, (1,)-array), see to_tensor


def scalar_key(value):
    """An exact, hashable key for a Python bool, int or float; None for anything else (and NaN, whose
    payloads differ). The type is part of the key (1, 1.0 and True are equal dict keys), and so is the
    sign (0.0 == -0.0)."""
    t = type(value)
    if t is int or t is bool:
        return (t, value)
    if t is float and value == value:
        return (t, value, math.copysign(1.0, value))
    return None


def remember(cache: dict, key, value):
    """`cache[key] = value`, emptying the cache first when it has grown past 4096 entries; returns value."""
    if len(cache) > 4096:  # bounded: a kernel looping over Python floats must not grow it forever
        cache.clear()
    cache[key] = value
    return value


def scalar_array(value, ty: T.dtype) -> np.ndarray:
    """A Python number as a 0-d array of `ty`'s compute dtype: the constant Triton's `scalar_constant` makes.

    A value equal to 0 is the type's null value, so a float literal -0.0 becomes +0.0 (Triton 3.6
    semantic.py scalar_constant: `if value == 0: get_null_value`). fp16 and bf16 constants are built from a
    C++ float, so the literal is rounded to fp32 first; bf16 also goes through `std::to_string` (see
    `_bf16_literal`)."""
    key = scalar_key(value)
    if key is not None:
        key = (key, ty.name)
        found = _SCALAR_ARRAYS.get(key)
        if found is not None:
            return found
    if value == 0:
        value = 0
    elif ty.is_fp8():
        raise fp8.constant_error(ty)
    if ty.is_bf16():
        out = np.asarray(_bf16_literal(value), np.float32).reshape(())
    elif ty.is_fp16():
        with np.errstate(over="ignore"):
            out = np.asarray(value, np.float64).astype(np.float32).astype(np.float16)
    elif ty.is_floating():
        with np.errstate(over="ignore"):
            out = np.asarray(value, np.float64).astype(ty.np_compute)
    else:
        out = np.asarray(value, ty.np_compute)
    if key is None:
        return out
    out.flags.writeable = False
    return remember(_SCALAR_ARRAYS, key, out)


def _bf16_literal(value) -> float:
    """The bf16 constant Triton makes for a Python number: `get_bf16(float v)` parses `std::to_string(v)`, i.e.
    the fp32 value printed with six decimals, so literals below 5e-7 become 0 and small ones are quantised
    (3.3e-6 -> bf16(3e-6)). Same in Triton 3.6 and 3.9 (TTIR constants, offline compile for sm_90)."""
    with np.errstate(over="ignore"):
        f = float(np.float32(value))
    if not math.isfinite(f):
        return f
    exact = Fraction("%f" % f)  # printf's %f, correctly rounded like glibc's
    if exact == 0:
        return math.copysign(0.0, f)  # "-0.000000" parses as -0.0
    return float(numerics.round_to_bf16(np.float64(_round_to_odd(exact))))


def _round_to_odd(x: Fraction) -> float:
    """`x` as a float64 rounded to odd (truncate, then set the last bit if inexact): rounding that once more to
    a format at least two bits narrower gives the correctly rounded value of `x` itself."""
    d = float(x)
    if Fraction(d) == x:
        return d
    toward_zero = d if abs(Fraction(d)) < abs(x) else float(np.nextafter(d, 0.0))
    bits = np.array(toward_zero, np.float64).view(np.int64)
    return float((bits | np.int64(1)).view(np.float64))


def to_tensor(x) -> tensor:
    """A tensor for `x`: tensors pass through, Python numbers become uniform scalars of Triton's literal type."""
    if type(x) is tensor:
        return x
    x = unwrap(x)
    if isinstance(x, tensor):
        return x
    key = scalar_key(x)
    found = _LITERALS.get(key) if key is not None else None
    if found is not None:
        return tensor(found[1], found[0], ())
    if isinstance(x, (bool, int, float)):
        ty = T.of_python_scalar(x)
        data = scalar_array(x, ty).reshape(1)  # read-only when shared
        if key is not None:
            remember(_LITERALS, key, (ty, data))
        return tensor(data, ty, ())
    raise errors.python_error(TypeError, errors.diagnostic("to_tensor", value=str(x), type=str(type(x))))
