"""Element-wise semantics: operand preparation (promotion, broadcasting), casts, arithmetic, comparisons.

Each op follows `triton.language.semantic` rule for rule; the arithmetic itself is one NumPy call on
arrays that carry the program axis first. bf16 results are computed in float32 and rounded to bf16
(round to nearest even) after every operation, as the GPU does.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from minitriton.semantics import dtypes as T
from minitriton.semantics import fp8
from minitriton.semantics import numerics
from minitriton import errors
from minitriton.values import factored as outer
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


def _install_constexpr_operators():
    import operator as o
    for name, op in (("add", o.add), ("sub", o.sub), ("mul", o.mul), ("truediv", o.truediv),
                     ("floordiv", o.floordiv), ("mod", o.mod), ("pow", o.pow), ("lshift", o.lshift),
                     ("rshift", o.rshift), ("and", o.and_), ("or", o.or_), ("xor", o.xor)):
        setattr(constexpr, f"__{name}__", _constexpr_op(op))
        setattr(constexpr, f"__r{name}__", _constexpr_op(op, reflected=True))
    for name, op in (("lt", o.lt), ("le", o.le), ("gt", o.gt), ("ge", o.ge), ("ne", o.ne)):
        setattr(constexpr, f"__{name}__", _constexpr_op(op))
    for name, op in (("neg", o.neg), ("pos", o.pos), ("invert", o.invert), ("abs", abs)):
        setattr(constexpr, f"__{name}__", _constexpr_unary(op))


_install_constexpr_operators()


def unwrap(x):
    """The Python value of a constexpr or NumPy scalar; tensors and other objects unchanged."""
    if type(x) is tensor:
        return x
    if isinstance(x, constexpr):
        return x.value
    if isinstance(x, np.generic):
        return x.item()
    return x


def _incompatible(a, b):
    """Triton's error for operand types that do not go together (same class name and wording)."""
    return errors.IncompatibleTypeErrorImpl(f"invalid operands of type {a!r} and {b!r}")


# ---------------------------------------------------------------- shapes

_BROADCAST_CACHE: dict = {}  # (shape, shape) -> broadcast shape, for the few shapes a kernel uses


def broadcast_shapes(a: tuple, b: tuple) -> tuple:
    """NumPy-style broadcasting of block shapes, with Triton's error text."""
    if a == b:
        return a
    found = _BROADCAST_CACHE.get((a, b))
    if found is not None:
        return found
    out = _broadcast_shapes(a, b)
    if len(_BROADCAST_CACHE) > 4096:  # bounded: shapes are compile-time constants, so this rarely fills
        _BROADCAST_CACHE.clear()
    _BROADCAST_CACHE[(a, b)] = out
    return out


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        else:
            raise ValueError(f"Cannot make_shape_compatible: incompatible dimensions at index {i}: {x} and {y}")
    return tuple(out)


def expand(data: np.ndarray, shape: tuple, nd: int) -> np.ndarray:
    """`data` (program axis + `shape`) with size-1 axes inserted so the block part has `nd` dims."""
    missing = nd - len(shape)
    if missing <= 0 or data.ndim == 0:
        return data
    return data.reshape((data.shape[0],) + (1,) * missing + shape)


def broadcast_data(t: tensor, shape: tuple) -> np.ndarray:
    """`t.data` broadcast (as a view) to the block shape `shape`, keeping its program axis."""
    data = expand(t.data, t.shape, len(shape))
    return np.broadcast_to(data, (data.shape[0],) + shape)


def broadcast_to_shape(t: tensor, shape: tuple) -> tensor:
    """Triton's `broadcast_impl_shape`: `t` viewed with block shape `shape`."""
    if t.shape == shape:
        return t
    if broadcast_shapes(t.shape, shape) != shape:
        raise ValueError(f"Cannot broadcast, the expanded size of the tensor ({t.shape}) "
                         f"must match the existing size ({shape})")
    return tensor(broadcast_data(t, shape), t.dtype, shape, t.alloc)


# ---------------------------------------------------------------- values and casts

# Kernels use a handful of literals (0, 1, -inf, block sizes) over and over: their arrays are made once and
# shared, read-only (no op writes into its operands; a read-only array makes any that did fail loudly).
_SCALAR_ARRAYS: dict = {}    # (scalar key, dtype name) -> 0-d array, see scalar_array
_OPERAND_ARRAYS: dict = {}   # (scalar key, dtype name) -> 0-d array that passed _scalar_in's range checks
_LITERALS: dict = {}         # scalar key -> (dtype, (1,)-array), see to_tensor


def _scalar_key(value):
    """An exact, hashable key for a Python bool, int or float; None for anything else (and NaN, whose
    payloads differ). The type is part of the key (1, 1.0 and True are equal dict keys), and so is the
    sign (0.0 == -0.0)."""
    t = type(value)
    if t is int or t is bool:
        return (t, value)
    if t is float and value == value:
        return (t, value, math.copysign(1.0, value))
    return None


FULLS: dict = {}  # (shape, scalar key, dtype name) -> the (read-only, broadcast) data of tl.full(shape, value, dtype)


def _remember(cache: dict, key, value):
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
    key = _scalar_key(value)
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
    return _remember(_SCALAR_ARRAYS, key, out)


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
    key = _scalar_key(x)
    found = _LITERALS.get(key) if key is not None else None
    if found is not None:
        return tensor(found[1], found[0], ())
    if isinstance(x, (bool, int, float)):
        ty = T.of_python_scalar(x)
        data = scalar_array(x, ty).reshape(1)  # read-only when shared
        if key is not None:
            _remember(_LITERALS, key, (ty, data))
        return tensor(data, ty, ())
    raise TypeError(f"cannot convert {x} of type {type(x)} to tensor")


def _scalar_in(value, ty: T.dtype) -> np.ndarray:
    """A Python scalar operand converted to the computation type, with Triton's range checks."""
    key = _scalar_key(value)
    if key is not None:
        key = (key, ty.name)
        found = _OPERAND_ARRAYS.get(key)
        if found is not None:
            return found
    if value < 0 and ty.is_int_unsigned():
        raise ValueError("Cannot perform a binary operation between an unsigned tensor and a negative scalar. "
                         "Perform a explicit cast on one of them.")
    if ty.is_int() and not (ty.get_int_min_value() <= value <= ty.get_int_max_value()):
        raise ValueError(f"Scalar {value} is out of range for type {ty}")
    out = scalar_array(value, ty)
    return out if key is None else _remember(_OPERAND_ARRAYS, key, out)


def to_address(t: tensor) -> np.ndarray:
    """Absolute virtual addresses (int64) of a pointer tensor."""
    if t.alloc is None:
        return t.data
    return t.alloc.address_of(t.data, t.dtype.element_ty)


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
        return data.astype(dst.np_compute)
    if src.is_floating():  # float -> int: cvt.rzi.sat
        return numerics.float_to_int(data, dst.np_compute)
    if dst.is_bf16():  # int -> bf16 rounds once, from the exact value
        if data.dtype.itemsize == 8:  # 64-bit: float64 would round first (GPU probe: 2**62+2**54+1 -> 2**62+2**55)
            lo = data & data.dtype.type(0xFFFFFFFF)
            with np.errstate(all="ignore"):
                wide = numerics._add_round_odd((data - lo).astype(np.float64), lo.astype(np.float64))
            return numerics.round_to_bf16(wide)
        return numerics.round_to_bf16(data.astype(np.float64))
    return data.astype(dst.np_compute)


def cast(x, dst, fp_downcast_rounding=None, bitcast=False) -> tensor:
    """`x.to(dst)`: Triton's cast rules (see `triton.language.semantic.cast`), on every lane."""
    if type(x) is tensor and x.dtype is dst:  # already that type (whatever the other arguments say)
        return x
    x = to_tensor(x)
    dst = unwrap(dst)
    fp_downcast_rounding = unwrap(fp_downcast_rounding)
    src = x.dtype
    if unwrap(bitcast):
        return _bitcast(x, dst)
    if src == dst:
        return x
    if fp_downcast_rounding not in (None, "rtne", "rtz"):
        raise ValueError(f"Invalid rounding mode: {fp_downcast_rounding}. "
                         "Supported rounding modes are 'rtne' and 'rtz'.")
    truncating = src.is_floating() and dst.is_floating() and dst.primitive_bitwidth < src.primitive_bitwidth
    if fp_downcast_rounding is not None and not truncating:
        raise ValueError("fp_downcast_rounding should be set only for truncating fp conversions. "
                         f"Source scalar type is {src} and destination type is {dst}")
    if fp_downcast_rounding == "rtz" and src.is_fp64():
        raise _fp64_rtz_unsupported(dst)
    if src.is_fp8() or dst.is_fp8():
        data, ty = fp8.cast(x.data, src, dst, fp_downcast_rounding)
        return tensor(data, ty, x.shape)
    if src.is_ptr() or dst.is_ptr():
        return _pointer_cast(x, dst)
    return tensor(convert(x.data, src, dst, fp_downcast_rounding), dst, x.shape)


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
        raise ValueError(f"Cannot bitcast data-type of size {src.primitive_bitwidth} to "
                         f"data-type of size {dst.primitive_bitwidth}")
    return tensor(from_storage(to_storage(x.data, src).view(dst.np_storage), dst), dst, x.shape)


def to_storage(data: np.ndarray, ty: T.dtype) -> np.ndarray:
    """Compute-dtype values as the bit patterns memory holds (bf16: uint16, fp8: its byte)."""
    if ty.is_fp8():
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
    if ty.is_fp8():
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
            raise TypeError(f"cannot cast a pointer to {dst}: only int64 and int1 hold a pointer")
        return tensor(to_address(x).astype(dst.np_compute), dst, x.shape)
    if not src.is_int():
        raise TypeError(f"cannot cast {src} to a pointer")
    return tensor(x.data.astype(np.int64), dst, x.shape)


def finish(raw: np.ndarray, ty: T.dtype, shape: tuple) -> tensor:
    """Wrap a NumPy result as a tensor of `ty`, rounding bf16 and fixing NumPy's dtype choices."""
    want = ty.np_compute
    if ty.is_bf16():
        raw = numerics.round_to_bf16(raw)
    elif raw.dtype is not want and raw.dtype != want:  # builtin NumPy dtypes are singletons: `is` is the fast test
        raw = raw.astype(want)
    return tensor(raw, ty, shape)


# ---------------------------------------------------------------- binary operands

def _dtype_of(x):
    return x.dtype if isinstance(x, tensor) else T.of_python_scalar(x)


def operands(a, b, div_or_mod=False, allow_a_ptr=False, allow_b_ptr=False, arithmetic=True):
    """Triton's `binary_op_type_checking_impl`: both operands promoted and broadcast.

    Returns (a_data, b_data, dtype, shape, a, b); a_data/b_data are aligned NumPy arrays (or 0-d arrays for
    Python scalars) in the computation dtype. With pointers involved the data are not converted.
    """
    a_scalar = type(a) is not tensor
    b_scalar = type(b) is not tensor
    if a_scalar:
        a = unwrap(a)
        a_scalar = not isinstance(a, tensor)
    if b_scalar:
        b = unwrap(b)
        b_scalar = not isinstance(b, tensor)
    if a_scalar and b_scalar:
        a = to_tensor(a)
        a_scalar = False
    if a_scalar:
        ta, tb = _scalar_dtype(a), b.dtype
    elif b_scalar:
        ta, tb = a.dtype, _scalar_dtype(b)
    else:
        ta, tb = a.dtype, b.dtype
    a_ptr, b_ptr = ta.is_ptr(), tb.is_ptr()
    if a_ptr or b_ptr:
        _check_ptr(ta, tb, allow_a_ptr)
        _check_ptr(tb, ta, allow_b_ptr)
    if arithmetic and not a_ptr and not b_ptr:
        if ta is tb and not (div_or_mod or a_scalar or b_scalar):
            ty = ta  # two tensors of one type, no division: Triton's rules keep that type
        else:
            ty = T.computation_type(ta, a_scalar, tb, b_scalar, div_or_mod)
        if ty.is_fp8():
            raise fp8.constant_error(ty) if a_scalar or b_scalar else fp8.arithmetic_error(ty)
        if a_scalar:
            return _scalar_in(a, ty), (b.data if tb is ty else convert(b.data, tb, ty)), ty, b.shape, a, b
        if b_scalar:
            return (a.data if ta is ty else convert(a.data, ta, ty)), _scalar_in(b, ty), ty, a.shape, a, b
        ad = a.data if ta is ty else convert(a.data, ta, ty)
        bd = b.data if tb is ty else convert(b.data, tb, ty)
        if a.shape == b.shape:
            return ad, bd, ty, a.shape, a, b
        shape = broadcast_shapes(a.shape, b.shape)
        nd = len(shape)
        return expand(ad, a.shape, nd), expand(bd, b.shape, nd), ty, shape, a, b
    a, b = to_tensor(a), to_tensor(b)
    shape = broadcast_shapes(a.shape, b.shape)
    return expand(a.data, a.shape, len(shape)), expand(b.data, b.shape, len(shape)), None, shape, a, b


def _scalar_dtype(x) -> T.dtype:
    """Triton's type for a Python scalar operand; TypeError for what is not a number."""
    t = type(x)
    if not (t is int or t is float or t is bool or isinstance(x, numbers.Number)):
        raise TypeError(f"unsupported operand type {t.__name__} for a tl.tensor operation")
    return T.of_python_scalar(x)


def _check_ptr(ta, tb, allow):
    if ta.is_ptr():
        if not allow:
            raise _incompatible(ta, tb)
        if tb.is_ptr() and ta != tb:
            raise _incompatible(ta, tb)
        if tb.is_floating():
            raise _incompatible(ta, tb)


# ---------------------------------------------------------------- arithmetic

def add(a, b):
    if isinstance(a, outer.pointer_block) or isinstance(b, outer.pointer_block):
        stepped = _outer_step(a, b, 1)
        if stepped is not None:
            return stepped
    ad, bd, ty, shape, a, b = operands(a, b, allow_a_ptr=True, allow_b_ptr=True)
    if ty is None:
        if a.dtype.is_ptr() and b.dtype.is_ptr():
            raise TypeError("cannot add pointers together")
        if b.dtype.is_ptr():
            a, b, ad, bd = b, a, bd, ad
        return _ptr_offset(a, ad, b, bd, shape, 1)
    if ty.is_bool():  # int1 arithmetic is modulo 2 (GPU probe: True + True == False)
        return finish(ad ^ bd, ty, shape)
    return finish(ad + bd, ty, shape)


def _outer_step(a, b, sign: int):
    """`p + n`, `n + p` or `p - n` for an outer pointer block p and integer n, kept in parts; None when the
    operands need the general path (errors, pointer differences) or the result is better stored whole."""
    p, o = (a, b) if isinstance(a, outer.pointer_block) else (b, a)
    o = to_tensor(o)
    if not o.dtype.is_int():
        return None
    if not o.shape and o.data.size == 1:  # one step for the whole group
        step = int(o.data.astype(np.int64, copy=False).reshape(-1)[0])
        return p.shifted(step if sign > 0 else -step)
    shape = broadcast_shapes(p.shape, o.shape)
    return outer.pointer(p, None, expand(o.data, o.shape, len(shape)), shape, sign)


def _ptr_offset(p: tensor, pd, off: tensor, od, shape, sign: int) -> tensor:
    if not off.dtype.is_int():
        raise _incompatible(p.dtype, off.dtype)
    if od.dtype == np.uint64:
        od = od.astype(np.int64)
    if p.alloc is None:
        od = od.astype(np.int64) * p.dtype.element_ty.itemsize
        out = np.add(pd, od, dtype=np.int64) if sign > 0 else np.subtract(pd, od, dtype=np.int64)
        return tensor(out, p.dtype, shape)
    if pd.ndim == od.ndim and outer.is_outer_shape(pd, od):
        block = outer.pointer(p, pd, od, shape, sign)
        if block is not None:
            return block
    # Element offsets into one allocation: their exact range is known (remembered on the block, or scanned
    # once here instead of at the load), and when it fits int32 the block is stored as int32, half the bytes
    # (larger groups for the same memory). The arithmetic is exact either way: 64-bit, as Triton's pointers.
    if p.bounds is not None and not off.shape:  # `ptr += step` in a loop: no scan of the block
        lo, hi = _shifted_bounds(p.bounds, od, sign)
    else:
        (plo, phi), (olo, ohi) = _value_range(pd, p.bounds), _value_range(od)
        lo, hi = (plo + olo, phi + ohi) if sign > 0 else (plo - ohi, phi - olo)
    narrow = -2**31 <= lo and hi < 2**31
    ufunc = np.add if sign > 0 else np.subtract
    out = ufunc(pd, od, dtype=np.int32 if narrow else np.int64, casting="unsafe")
    result = tensor(out, p.dtype, shape, p.alloc)
    result.bounds = (lo, hi)
    return result


def _value_range(a: np.ndarray, known: tuple | None = None) -> tuple:
    """(min, max) of an integer array as Python ints (`known` when given)."""
    if known is not None:
        return known
    if a.size == 1:
        v = int(a.reshape(-1)[0])
        return v, v
    return int(a.min()), int(a.max())


def _shifted_bounds(bounds: tuple, od: np.ndarray, sign: int) -> tuple:
    """Bounds of `p + od` (sign 1) or `p - od` (sign -1) from p's bounds and a scalar's (per-program) offsets.

    Exact Python ints: where the int64 offsets wrapped around, the bounds leave the int64 range, so no
    allocation accepts them and the load checks the offsets themselves."""
    if od.size == 1:
        lo = hi = int(od.item())
    else:
        lo, hi = int(od.min()), int(od.max())
    plo, phi = bounds
    return (plo + lo, phi + hi) if sign > 0 else (plo - hi, phi - lo)


def sub(a, b):
    if isinstance(a, outer.pointer_block):
        stepped = _outer_step(a, b, -1)
        if stepped is not None:
            return stepped
    ad, bd, ty, shape, a, b = operands(a, b, allow_a_ptr=True)
    if ty is None:
        if b.dtype.is_ptr():  # ptr - ptr: distance in elements
            if a.alloc is not None and a.alloc is b.alloc:
                return tensor(np.subtract(ad, bd, dtype=np.int64), T.int64, shape)
            diff = (expand(to_address(a), a.shape, len(shape)) - expand(to_address(b), b.shape, len(shape)))
            return tensor(diff // a.dtype.element_ty.itemsize, T.int64, shape)
        return _ptr_offset(a, ad, b, bd, shape, -1)
    if ty.is_bool():  # int1 arithmetic is modulo 2: x - y == x ^ y (NumPy refuses bool subtraction)
        return finish(ad ^ bd, ty, shape)
    return finish(ad - bd, ty, shape)


def mul(a, b):
    ad, bd, ty, shape, _, _ = operands(a, b)
    if ty.is_bool():
        return finish(ad & bd, ty, shape)
    return finish(ad * bd, ty, shape)


def truediv(a, b):
    ad, bd, ty, shape, _, _ = operands(a, b, div_or_mod=True)
    if ty.is_int():  # int / int is a float32 division
        ad, bd, ty = ad.astype(np.float32), bd.astype(np.float32), T.float32
    return finish(np.true_divide(ad, bd), ty, shape)


def floordiv(a, b):
    ad, bd, ty, shape, _, _ = operands(a, b, div_or_mod=True)
    if not ty.is_int():
        raise TypeError(f"unexpected type {ty}")
    return finish(numerics.c_div(ad, bd), ty, shape)


def mod(a, b):
    ad, bd, ty, shape, _, _ = operands(a, b, div_or_mod=True)
    if ty.is_floating():
        fulls = FULLS.values()

        def written_constant(v):  # a Python number, or a block tl.full / tl.zeros made of one
            v = unwrap(v)
            return not isinstance(v, tensor) or (v.data.shape[0] == 1 and any(v.data is c for c in fulls))
        if written_constant(a) and written_constant(b):
            # Triton's compiler folds `%` of two constants with IEEE fmod (MLIR's arith.remf folder; Triton 3.6
            # TTIR for sm_90 stores the folded value): 5.1 % 0.1 == 0.09999983 and a zero remainder keeps the
            # sign of x (-31 % 0.25 == -0.0 on the H200), where the run-time lowering below gives +0.0.
            with np.errstate(all="ignore"):
                return finish(np.fmod(ad, bd), ty, shape)
        # NVPTX lowers frem to fma(-trunc(x / y), y, x), x where |y| == inf (GPU probe, fp32 and fp64): C fmod
        # when the quotient is exact, but 5.1 % 0.1 == -1.7e-07 and -0.0 % 1.0 == +0.0.
        with np.errstate(all="ignore"):
            q = np.trunc(np.true_divide(ad, bd))
            r = numerics.fma(np.negative(q), bd, ad)
        return finish(np.where(np.isinf(bd), ad, r), ty, shape)
    return finish(numerics.c_mod(ad, bd), ty, shape)


def _bitwise(a, b):
    ad, bd, ty, shape, a, b = operands(a, b)
    if not ty.is_int():  # Triton checks after casting both operands to the computation type
        raise _incompatible(ty, ty)
    return ad, bd, ty, shape


def and_(a, b):
    if isinstance(a, outer.outer) or isinstance(b, outer.outer):
        block = _outer_and(unwrap(a), unwrap(b))
        if block is not None:
            return block
    ad, bd, ty, shape = _bitwise(a, b)
    if ty is T.int1 and ad.ndim == bd.ndim and shape and outer.is_outer_shape(ad, bd):
        block = outer.mask(ad, bd, unwrap(a), unwrap(b), shape, ty)
        if block is not None:
            return block
    return finish(ad & bd, ty, shape)


def _outer_and(a, b):
    """`a & b` where a or b is an outer mask: the parts of both, or None for the general path."""
    if not (isinstance(a, tensor) and isinstance(b, tensor) and a.dtype is T.int1 and b.dtype is T.int1):
        return None
    shape = broadcast_shapes(a.shape, b.shape)
    nd = len(shape)
    ad = None if isinstance(a, outer.outer) else expand(a.data, a.shape, nd)
    bd = None if isinstance(b, outer.outer) else expand(b.data, b.shape, nd)
    return outer.mask(ad, bd, a, b, shape, T.int1)


def or_(a, b):
    ad, bd, ty, shape = _bitwise(a, b)
    return finish(ad | bd, ty, shape)


def xor_(a, b):
    ad, bd, ty, shape = _bitwise(a, b)
    return finish(ad ^ bd, ty, shape)


def shl(a, b):
    ad, bd, ty, shape = _bitwise(a, b)
    return finish(numerics.shift_left(ad, bd), ty, shape)


def shr(a, b):
    ad, bd, ty, shape = _bitwise(a, b)
    # Triton (core.tensor.__rshift__) picks ashr/lshr by the signedness of the tensor operand on the left
    # (of the right-hand tensor for `literal >> tensor`), not of the promoted type: int8 >> uint32 is ashr.
    left = to_tensor(a if isinstance(unwrap(a), tensor) else b)
    if left.dtype.is_int_signed() != ty.is_int_signed():
        view = np.dtype(f"{'i' if left.dtype.is_int_signed() else 'u'}{ad.dtype.itemsize}")
        out = numerics.shift_right(np.asarray(ad).view(view), np.asarray(bd).view(view))
        return finish(out.view(ad.dtype), ty, shape)
    return finish(numerics.shift_right(ad, bd), ty, shape)


def neg(a):
    a = to_tensor(a)
    if a.dtype.is_ptr():
        raise ValueError(f"wrong type argument to unary minus ({a.dtype!r})")
    if a.dtype.is_bool():
        return a
    if a.dtype.is_fp8():
        raise fp8.arithmetic_error(a.dtype)
    if a.dtype.is_floating():
        # Triton lowers unary minus to `0 - x`, so -(+0.0) and -(-0.0) are both +0.0 on the GPU.
        return tensor(np.subtract(a.data.dtype.type(0), a.data), a.dtype, a.shape)
    return tensor(np.negative(a.data), a.dtype, a.shape)


def invert(a):
    a = to_tensor(a)
    if a.dtype.is_ptr() or a.dtype.is_floating():
        raise ValueError(f"wrong type argument to unary invert ({a.dtype!r})")
    return tensor(np.invert(a.data), a.dtype, a.shape)


def _compare(ufunc):
    def compare(a, b):
        # Triton 3.6's tensor.__lt__ & co. call to_tensor on the other operand first: a Python number is a tensor
        # of its literal type (fp32, int32, ...), not a weak scalar (fp16 == 0.1 compares in fp32; int8 < 300 is fine)
        # Pointers are rejected, as 3.6's comparisons call binary_op_type_checking_impl without allow_*_ptr:
        # `p == q` is "invalid operands of type pointer<fp32> and pointer<fp32>" (offline sm_90 compile).
        a, b = to_tensor(a), to_tensor(b)
        ad, bd, ty, shape, a, b = operands(a, b)
        return tensor(ufunc(ad, bd), T.int1, shape)
    compare.__name__ = ufunc.__name__
    return compare


less = _compare(np.less)
less_equal = _compare(np.less_equal)
greater = _compare(np.greater)
greater_equal = _compare(np.greater_equal)
equal = _compare(np.equal)
not_equal = _compare(np.not_equal)


def _as_int1(x):
    """Triton 3.6's logical ops bitcast a non-int1 operand to int1, which only a 1-bit type survives."""
    x = to_tensor(x)
    return x if x.dtype == T.int1 else cast(x, T.int1, bitcast=True)


def logical_and(a, b):
    """`x.logical_and(y)` and the `and` of two tensors: int1 operands and-ed elementwise."""
    return and_(_as_int1(a), _as_int1(b))


def logical_or(a, b):
    """`x.logical_or(y)` and the `or` of two tensors: int1 operands or-ed elementwise."""
    return or_(_as_int1(a), _as_int1(b))


def logical_not(x):
    """`not x` on a tensor (3.6's semantic.not_): the int1 tensor inverted elementwise."""
    return invert(_as_int1(x))


def where(condition, x, y):
    """`tl.where`: both sides are evaluated; x and y are promoted together and broadcast with the condition."""
    c = cast(to_tensor(condition), T.int1)
    xd, yd, ty, shape, x, y = operands(x, y, allow_a_ptr=True, allow_b_ptr=True)
    shape = broadcast_shapes(c.shape, shape)
    nd = len(shape)
    cd = expand(c.data, c.shape, nd)
    xd, yd = expand(xd, x.shape if isinstance(x, tensor) else (), nd), expand(yd, y.shape if isinstance(y, tensor) else (), nd)
    if ty is None:  # pointers
        if x.alloc is not None and x.alloc is y.alloc:
            return tensor(_where(cd, xd, yd), x.dtype, shape, x.alloc)
        xd = expand(to_address(x), x.shape, nd)
        yd = expand(to_address(y), y.shape, nd)
        return tensor(_where(cd, xd, yd), x.dtype, shape)
    return tensor(_where(cd, xd, yd), ty, shape)


def _where(c, x, y):
    out = np.where(c, x, y)
    if out.ndim == 0:
        out = out.reshape(1)
    return out


def _minmax_operand(v):
    """An operand as Triton 3.6's `tl.minimum`/`maximum`/`clamp` take it: a Python number becomes a tensor of
    its literal type first (so it takes part in promotion: `maximum(int8, 0)` is int32, `maximum(fp16, 0.5)`
    fp32, and a float literal is rounded to fp32 even next to fp64), and bf16 is widened to fp32 and stays
    so (no bf16 max/min on the hardware)."""
    t = to_tensor(v)
    return cast(t, T.float32) if t.dtype is T.bfloat16 else t


def _minmax(a, b, propagate_nan, pick):
    ad, bd, ty, shape, _, _ = operands(_minmax_operand(a), _minmax_operand(b))
    if ty.is_floating():
        propagate_nan = unwrap(propagate_nan)
        if propagate_nan in (None, "none", "NONE", 0) or getattr(propagate_nan, "name", "") == "NONE":
            fn = np.fmax if pick == "max" else np.fmin   # maxnum: NaN loses (measured on the GPU)
        else:
            fn = np.maximum if pick == "max" else np.minimum
        # -0.0 < +0.0 on the GPU (probe: max(0.0, -0.0) == +0.0, min(-0.0, 0.0) == -0.0); NumPy returns either.
        # For two zeros, max is their IEEE sum and min the negated sum of the negations.
        zeros = (ad == 0) & (bd == 0)
        if not np.count_nonzero(zeros):  # the common case: no pair of zeros to order
            return finish(fn(ad, bd), ty, shape)
        signed_zero = ad + bd if pick == "max" else -(np.negative(ad) + np.negative(bd))
        return finish(np.where(zeros, signed_zero, fn(ad, bd)), ty, shape)
    else:
        fn = np.maximum if pick == "max" else np.minimum
    return finish(fn(ad, bd), ty, shape)


def maximum(x, y, propagate_nan=None):
    """`tl.maximum`: maxnum by default (a NaN operand loses), NaN-propagating with PropagateNan.ALL."""
    return _minmax(x, y, propagate_nan, "max")


def minimum(x, y, propagate_nan=None):
    """`tl.minimum`: minnum by default (a NaN operand loses), NaN-propagating with PropagateNan.ALL."""
    return _minmax(x, y, propagate_nan, "min")


def clamp(x, min, max, propagate_nan=None):
    """`tl.clamp(x, min, max)`: minimum(maximum(x, min), max), all three promoted together; floats only."""
    x, lo, hi = _minmax_operand(x), _minmax_operand(min), _minmax_operand(max)
    ty = T.computation_type(x.dtype, False, T.computation_type(lo.dtype, False, hi.dtype, False, False), False, False)
    if not ty.is_floating():
        raise TypeError(f"Unexpected dtype {ty}. Only floating point clamp is supported")
    return minimum(maximum(x, lo, propagate_nan), hi, propagate_nan)
