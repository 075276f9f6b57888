"""Element-wise ops: arithmetic, bitwise and shift operators, comparisons, logical ops, `where`, and
`minimum`/`maximum`/`clamp`.

Each op first applies Triton's rules (`operands`: `triton.language.semantic`'s
`binary_op_type_checking_impl`, rule for rule, then the op's own checks with Triton's wording), which give
the computation type and the block shape; then it computes: one NumPy call on arrays that carry the
program axis first. bf16 results are computed in float32 and rounded to bf16 (round to nearest even)
after every operation, as the GPU does (`finish`).
"""
from __future__ import annotations

import numbers

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import fp8, integers, numerics, pointers
from minitriton.semantics.casts import cast, convert
from minitriton.semantics.constexpr import remember, scalar_array, scalar_key, to_tensor, unwrap
from minitriton.semantics.shape import FULLS, broadcast_shapes, expand
from minitriton.values import factored
from minitriton.values.registry import builtin, operator, tensor_method
from minitriton.values.tensor import tensor, to_address


class PropagateNan:
    """`tl.PropagateNan`: NONE (default, maxnum: NaN loses) or ALL (NaN wins)."""

    class _Mode:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return f"PropagateNan.{self.name}"

    NONE = _Mode("NONE")
    ALL = _Mode("ALL")


# ---------------------------------------------------------------- Triton's rules: operand types

def _incompatible(a, b):
    """Triton's error for operand types that do not go together (same class name and wording)."""
    return errors.python_error(errors.IncompatibleTypeErrorImpl, errors.diagnostic(
        "incompatible_types", left=repr(a), right=repr(b)))


def _scalar_dtype(x) -> T.dtype:
    """Triton's type for a Python scalar operand; TypeError for what is not a number."""
    t = type(x)
    if not (t is int or t is float or t is bool or isinstance(x, numbers.Number)):
        raise errors.python_error(TypeError, errors.diagnostic("operand_type", type=t.__name__))
    return T.of_python_scalar(x)


def _check_ptr(ta, tb, allow):
    if ta.is_ptr():
        if not allow:
            raise _incompatible(ta, tb)
        if tb.is_ptr() and ta != tb:
            raise _incompatible(ta, tb)
        if tb.is_floating():
            raise _incompatible(ta, tb)


_OPERAND_ARRAYS: dict = {}   # (scalar key, dtype name) -> 0-d array that passed _scalar_in's range checks


def _scalar_in(value, ty: T.dtype) -> np.ndarray:
    """A Python scalar operand converted to the computation type, with Triton's range checks."""
    key = scalar_key(value)
    if key is not None:
        key = (key, ty.name)
        found = _OPERAND_ARRAYS.get(key)
        if found is not None:
            return found
    if value < 0 and ty.is_int_unsigned():
        raise errors.python_error(ValueError, errors.diagnostic("unsigned_negative", value=value, dtype=ty))
    if ty.is_int() and not (ty.get_int_min_value() <= value <= ty.get_int_max_value()):
        raise errors.python_error(ValueError, errors.diagnostic("scalar_out_of_range", value=value, dtype=ty))
    out = scalar_array(value, ty)
    return out if key is None else remember(_OPERAND_ARRAYS, key, out)


def operands(a, b, div_or_mod=False, allow_a_ptr=False, allow_b_ptr=False, arithmetic=True):
    """Triton's `binary_op_type_checking_impl`: both operands promoted and broadcast.

    Returns (a_data, b_data, dtype, shape, a, b); a_data/b_data are aligned NumPy arrays (or 0-d arrays for
    Python scalars) in the computation dtype. With pointers involved the data are not converted and the
    dtype is None.
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
        if ty.primitive_bitwidth == 8 and ty.is_fp8():   # (the width first: an attribute, not a call)
            raise fp8.constant_error(ty) if a_scalar or b_scalar else fp8.arithmetic_error(ty)
        if a_scalar:
            return _scalar_in(a, ty), (b.data if tb is ty else convert(b.data, tb, ty)), ty, b.shape, a, b
        if b_scalar:
            return (a.data if ta is ty else convert(a.data, ta, ty)), _scalar_in(b, ty), ty, a.shape, a, b
        ad = a.data if ta is ty else convert(a.data, ta, ty)
        bd = b.data if tb is ty else convert(b.data, tb, ty)
        shape = a.shape if a.shape is b.shape else broadcast_shapes(a.shape, b.shape)  # (shapes are interned)
        nd = len(shape)
        ad = ad if len(a.shape) == nd else expand(ad, a.shape, nd)   # (one usually has the full rank already)
        bd = bd if len(b.shape) == nd else expand(bd, b.shape, nd)
        # a group-wide scalar against a block as 0-d: NumPy's scalar loop, 2-4x cheaper than broadcasting it
        if ad.size == 1 < bd.size:
            ad = ad.reshape(())
        elif bd.size == 1 < ad.size:
            bd = bd.reshape(())
        return ad, bd, ty, shape, a, b
    a, b = to_tensor(a), to_tensor(b)
    shape = broadcast_shapes(a.shape, b.shape)
    return expand(a.data, a.shape, len(shape)), expand(b.data, b.shape, len(shape)), None, shape, a, b


def _int_operands(a, b):
    """`operands`, then Triton's check of bitwise and shift operators (after casting both operands to the
    computation type): integers only."""
    ad, bd, ty, shape, a, b = operands(a, b)
    if not ty.is_int():
        raise _incompatible(ty, ty)
    return ad, bd, ty, shape


def _check_pointer_offset(p: tensor, off: tensor) -> None:
    """Triton's check of `pointer + x` and `pointer - x`: x must be an integer."""
    if not off.dtype.is_int():
        raise _incompatible(p.dtype, off.dtype)


def finish(raw: np.ndarray, ty: T.dtype, shape: tuple) -> tensor:
    """Wrap a NumPy result as a tensor of `ty`, rounding bf16 and fixing NumPy's dtype choices."""
    want = ty.np_compute
    if ty.is_bf16():
        raw = numerics.round_to_bf16(raw)
    elif raw.dtype is not want and raw.dtype != want:  # builtin NumPy dtypes are singletons: `is` is the fast test
        raw = raw.astype(want)
    return tensor(raw, ty, shape)


# ---------------------------------------------------------------- NumPy: computations Triton lowers specially

def _shift_right(ad: np.ndarray, bd: np.ndarray, signed: bool) -> np.ndarray:
    """`ad >> bd`, arithmetic when `signed`, logical otherwise, whatever the dtype of the arrays."""
    if (ad.dtype.kind == "i") == signed:
        return integers.shift_right(ad, bd)
    view = np.dtype(f"{'i' if signed else 'u'}{ad.dtype.itemsize}")
    out = integers.shift_right(np.asarray(ad).view(view), np.asarray(bd).view(view))
    return out.view(ad.dtype)


def _float_minmax(ad: np.ndarray, bd: np.ndarray, pick: str, propagate_nan: bool) -> np.ndarray:
    """max/min of floats as the GPU computes them: maxnum/minnum (a NaN operand loses, measured on the GPU)
    unless NaNs propagate, and -0.0 < +0.0 (probe: max(0.0, -0.0) == +0.0, min(-0.0, 0.0) == -0.0), where
    NumPy returns either zero."""
    if propagate_nan:
        fn = np.maximum if pick == "max" else np.minimum
    else:
        fn = np.fmax if pick == "max" else np.fmin
    zeros = (ad == 0) & (bd == 0)
    if not np.count_nonzero(zeros):  # the common case: no pair of zeros to order
        return fn(ad, bd)
    # For two zeros, max is their IEEE sum and min the negated sum of the negations.
    signed_zero = ad + bd if pick == "max" else -(np.negative(ad) + np.negative(bd))
    return np.where(zeros, signed_zero, fn(ad, bd))


def _select(c: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.where(c, x, y)
    if out.ndim == 0:
        out = out.reshape(1)
    return out


# ---------------------------------------------------------------- arithmetic

@operator("__add__", reflected="__radd__")
def add(a, b):
    """`a + b`: numbers, or a pointer moved by integer element offsets."""
    if isinstance(a, factored.pointer_block) or isinstance(b, factored.pointer_block):
        stepped = pointers.factored_step(a, b, 1)
        if stepped is not None:
            return stepped
    ad, bd, ty, shape, a, b = operands(a, b, allow_a_ptr=True, allow_b_ptr=True)
    if ty is None:
        if a.dtype.is_ptr() and b.dtype.is_ptr():
            raise errors.python_error(TypeError, errors.diagnostic("add_pointers"))
        if b.dtype.is_ptr():
            a, b, ad, bd = b, a, bd, ad
        _check_pointer_offset(a, b)
        return pointers.offset(a, ad, b, bd, shape, 1)
    if ty.is_bool():  # int1 arithmetic is modulo 2 (GPU probe: True + True == False)
        return finish(ad ^ bd, ty, shape)
    return finish(ad + bd, ty, shape)


@operator("__sub__", reflected="__rsub__")
def sub(a, b):
    """`a - b`: numbers, a pointer moved back by integer offsets, or the distance between two pointers."""
    if isinstance(a, factored.pointer_block):
        stepped = pointers.factored_step(a, b, -1)
        if stepped is not None:
            return stepped
    ad, bd, ty, shape, a, b = operands(a, b, allow_a_ptr=True)
    if ty is None:
        if b.dtype.is_ptr():  # ptr - ptr: distance in elements
            return pointers.difference(a, b, ad, bd, shape)
        _check_pointer_offset(a, b)
        return pointers.offset(a, ad, b, bd, shape, -1)
    if ty.is_bool():  # int1 arithmetic is modulo 2: x - y == x ^ y (NumPy refuses bool subtraction)
        return finish(ad ^ bd, ty, shape)
    return finish(ad - bd, ty, shape)


@operator("__mul__", reflected="__rmul__")
def mul(a, b):
    """`a * b`."""
    ad, bd, ty, shape, _, _ = operands(a, b)
    if ty.is_bool():
        return finish(ad & bd, ty, shape)
    return finish(ad * bd, ty, shape)


@operator("__truediv__", reflected="__rtruediv__")
def truediv(a, b):
    """`a / b`: a float division (int / int is an fp32 division)."""
    ad, bd, ty, shape, _, _ = operands(a, b, div_or_mod=True)
    if ty.is_int():
        ad, bd, ty = ad.astype(np.float32), bd.astype(np.float32), T.float32
    return finish(np.true_divide(ad, bd), ty, shape)


@operator("__floordiv__", reflected="__rfloordiv__")
def floordiv(a, b):
    """`a // b`: integers only, truncating toward zero as C does."""
    ad, bd, ty, shape, _, _ = operands(a, b, div_or_mod=True)
    if not ty.is_int():
        raise errors.python_error(TypeError, errors.diagnostic("unexpected_type", dtype=ty))
    return finish(integers.c_div(ad, bd), ty, shape)


@operator("__mod__", reflected="__rmod__")
def mod(a, b):
    """`a % b`: the sign of `a`, as C's remainder (and NVPTX's frem for floats)."""
    ad, bd, ty, shape, _, _ = operands(a, b, div_or_mod=True)
    if ty.is_floating():
        if _written_constant(b) and (_written_constant(a) or numerics.is_integer_power_of_two(bd)):
            # Two constants: Triton's compiler folds `%` with IEEE fmod (MLIR's arith.remf folder): 5.1 % 0.1
            # == 0.09999983. A constant divisor 2**k, k >= 0: LLVM rewrites frem as copysign(x - trunc(x / y)
            # * y, x), exact for such y, so a zero remainder keeps the sign of x (S15.24). Both are fmod.
            with np.errstate(all="ignore"):
                return finish(np.fmod(ad, bd), ty, shape)
        return finish(numerics.float_mod(ad, bd), ty, shape)
    return finish(integers.c_mod(ad, bd), ty, shape)


def _written_constant(v) -> bool:
    """A Python number, or a block `tl.full` / `tl.zeros` made of one (the compiler sees a constant)."""
    v = unwrap(v)
    return not isinstance(v, tensor) or (v.data.shape[0] == 1 and any(v.data is c for c in FULLS.values()))


@operator("__neg__")
def neg(a):
    """`-a`; floats flip the sign bit, so -(+0.0) is -0.0 (Triton 3.9+ `fneg`; 3.6 computed 0 - x: S15.4)."""
    a = to_tensor(a)
    if a.dtype.is_ptr():
        raise errors.python_error(ValueError, errors.diagnostic("unary_type", op="minus", dtype=repr(a.dtype)))
    if a.dtype.is_bool():
        return a
    if a.dtype.is_fp8():
        raise fp8.arithmetic_error(a.dtype)
    return tensor(np.negative(a.data), a.dtype, a.shape)


@operator("__pos__")
def pos(a):
    """`+a`: `a` itself."""
    return a


@operator("__pow__")
def power(a, b):
    """`a ** b`: not an operator of Triton's tensors."""
    raise errors.python_error(TypeError, errors.diagnostic("power_operator"))


# ---------------------------------------------------------------- bitwise operators and shifts

@operator("__and__", reflected="__rand__")
def and_(a, b):
    """`a & b` (integers)."""
    if isinstance(a, factored.outer) or isinstance(b, factored.outer):
        block = _factored_and(unwrap(a), unwrap(b))
        if block is not None:
            return block
    ad, bd, ty, shape = _int_operands(a, b)
    if ty is T.int1 and ad.ndim == bd.ndim and shape and factored.is_outer_shape(ad, bd):
        block = factored.mask(ad, bd, unwrap(a), unwrap(b), shape, ty)
        if block is not None:
            return block
    return finish(ad & bd, ty, shape)


def _factored_and(a, b):
    """`a & b` where a or b is an outer mask: the parts of both, or None for the general path."""
    if not (isinstance(a, tensor) and isinstance(b, tensor) and a.dtype is T.int1 and b.dtype is T.int1):
        return None
    shape = broadcast_shapes(a.shape, b.shape)
    nd = len(shape)
    ad = None if isinstance(a, factored.outer) else expand(a.data, a.shape, nd)
    bd = None if isinstance(b, factored.outer) else expand(b.data, b.shape, nd)
    return factored.mask(ad, bd, a, b, shape, T.int1)


@operator("__or__", reflected="__ror__")
def or_(a, b):
    """`a | b` (integers)."""
    ad, bd, ty, shape = _int_operands(a, b)
    return finish(ad | bd, ty, shape)


@operator("__xor__", reflected="__rxor__")
def xor_(a, b):
    """`a ^ b` (integers)."""
    ad, bd, ty, shape = _int_operands(a, b)
    return finish(ad ^ bd, ty, shape)


@operator("__lshift__", reflected="__rlshift__")
def shl(a, b):
    """`a << b`: 0 for shift amounts past the bit width, as PTX's shl."""
    ad, bd, ty, shape = _int_operands(a, b)
    return finish(integers.shift_left(ad, bd), ty, shape)


@operator("__rshift__", reflected="__rrshift__")
def shr(a, b):
    """`a >> b`: arithmetic or logical by the signedness of the tensor on the left (see below)."""
    ad, bd, ty, shape = _int_operands(a, b)
    # Triton (core.tensor.__rshift__) picks ashr/lshr by the signedness of the tensor operand on the left
    # (of the right-hand tensor for `literal >> tensor`), not of the promoted type: int8 >> uint32 is ashr.
    left = to_tensor(a if isinstance(unwrap(a), tensor) else b)
    return finish(_shift_right(ad, bd, left.dtype.is_int_signed()), ty, shape)


@operator("__invert__")
def invert(a):
    """`~a` (integers)."""
    a = to_tensor(a)
    if a.dtype.is_ptr() or a.dtype.is_floating():
        raise errors.python_error(ValueError, errors.diagnostic("unary_type", op="invert", dtype=repr(a.dtype)))
    return tensor(np.invert(a.data), a.dtype, a.shape)


# ---------------------------------------------------------------- comparisons and logical ops

def _compare(ufunc, name):
    def compare(a, b):
        # Triton 3.6's tensor.__lt__ & co. call to_tensor on the other operand first: a Python number is a tensor
        # of its literal type (fp32, int32, ...), not a weak scalar (fp16 == 0.1 compares in fp32; int8 < 300 is fine)
        # Pointers are rejected, as 3.6's comparisons call binary_op_type_checking_impl without allow_*_ptr:
        # `p == q` is "invalid operands of type pointer<fp32> and pointer<fp32>" (offline sm_90 compile).
        ad, bd, ty, shape, _, _ = operands(to_tensor(a), to_tensor(b))
        return tensor(ufunc(ad, bd), T.int1, shape)
    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"`a {ufunc.__name__} b` elementwise, an int1 block."
    return compare


less = operator("__lt__")(_compare(np.less, "less"))
less_equal = operator("__le__")(_compare(np.less_equal, "less_equal"))
greater = operator("__gt__")(_compare(np.greater, "greater"))
greater_equal = operator("__ge__")(_compare(np.greater_equal, "greater_equal"))
equal = operator("__eq__")(_compare(np.equal, "equal"))
not_equal = operator("__ne__")(_compare(np.not_equal, "not_equal"))


def _as_int1(x):
    """Triton 3.6's logical ops bitcast a non-int1 operand to int1, which only a 1-bit type survives."""
    x = to_tensor(x)
    return x if x.dtype == T.int1 else cast(x, T.int1, bitcast=True)


@tensor_method("logical_and")
def logical_and(a, b):
    """`x.logical_and(y)` and the `and` of two tensors: int1 operands and-ed elementwise."""
    return and_(_as_int1(a), _as_int1(b))


@tensor_method("logical_or")
def logical_or(a, b):
    """`x.logical_or(y)` and the `or` of two tensors: int1 operands or-ed elementwise."""
    return or_(_as_int1(a), _as_int1(b))


def logical_not(x):
    """`not x` on a tensor (3.6's semantic.not_): the int1 tensor inverted elementwise."""
    return invert(_as_int1(x))


# ---------------------------------------------------------------- where, minimum, maximum, clamp

@builtin
def where(condition, x, y):
    """`tl.where`: both sides are evaluated; x and y are promoted together and broadcast with the condition."""
    c = cast(to_tensor(condition), T.int1)
    xd, yd, ty, shape, x, y = operands(x, y, allow_a_ptr=True, allow_b_ptr=True)
    shape = broadcast_shapes(c.shape, shape)
    nd = len(shape)
    cd = expand(c.data, c.shape, nd)
    xd = expand(xd, x.shape if isinstance(x, tensor) else (), nd)
    yd = expand(yd, y.shape if isinstance(y, tensor) else (), nd)
    if ty is None:  # pointers
        if x.alloc is not None and x.alloc is y.alloc:
            return tensor(_select(cd, xd, yd), x.dtype, shape, x.alloc)
        xd = expand(to_address(x), x.shape, nd)
        yd = expand(to_address(y), y.shape, nd)
        return tensor(_select(cd, xd, yd), x.dtype, shape)
    return tensor(_select(cd, xd, yd), ty, shape)


def _minmax_operand(v):
    """An operand as Triton 3.6's `tl.minimum`/`maximum`/`clamp` take it: a Python number becomes a tensor of
    its literal type first (so it takes part in promotion: `maximum(int8, 0)` is int32, `maximum(fp16, 0.5)`
    fp32, and a float literal is rounded to fp32 even next to fp64), and bf16 is widened to fp32 and stays
    so (no bf16 max/min on the hardware)."""
    t = to_tensor(v)
    return cast(t, T.float32) if t.dtype is T.bfloat16 else t


def _propagates_nan(propagate_nan) -> bool:
    """Whether `propagate_nan` asks NaNs to win (PropagateNan.ALL); None, 0 and NONE keep maxnum."""
    propagate_nan = unwrap(propagate_nan)
    return not (propagate_nan in (None, "none", "NONE", 0) or getattr(propagate_nan, "name", "") == "NONE")


def _minmax(a, b, propagate_nan, pick):
    ad, bd, ty, shape, _, _ = operands(_minmax_operand(a), _minmax_operand(b))
    if ty.is_floating():
        return finish(_float_minmax(ad, bd, pick, _propagates_nan(propagate_nan)), ty, shape)
    return finish(np.maximum(ad, bd) if pick == "max" else np.minimum(ad, bd), ty, shape)


@builtin
def maximum(x, y, propagate_nan=None):
    """`tl.maximum`: maxnum by default (a NaN operand loses), NaN-propagating with PropagateNan.ALL."""
    return _minmax(x, y, propagate_nan, "max")


@builtin
def minimum(x, y, propagate_nan=None):
    """`tl.minimum`: minnum by default (a NaN operand loses), NaN-propagating with PropagateNan.ALL."""
    return _minmax(x, y, propagate_nan, "min")


@builtin
def clamp(x, min, max, propagate_nan=None):
    """`tl.clamp(x, min, max)`: minimum(maximum(x, min), max), all three promoted together; floats only."""
    x, lo, hi = _minmax_operand(x), _minmax_operand(min), _minmax_operand(max)
    ty = T.computation_type(x.dtype, False, T.computation_type(lo.dtype, False, hi.dtype, False, False), False, False)
    if not ty.is_floating():
        raise errors.python_error(TypeError, errors.diagnostic("clamp_type", dtype=ty))
    return minimum(maximum(x, lo, propagate_nan), hi, propagate_nan)
