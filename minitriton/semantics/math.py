"""Math functions of `tl` (exp, log, sqrt, ...) with Triton's dtype checks.

Triton accepts only fp32/fp64 for most of them (libdevice's convention): an fp16 or bf16 argument is a
ValueError, as on the GPU, so kernels cast explicitly. Each function checks first (Triton's rules and
wording), then computes with NumPy: results are NumPy's correctly rounded (or nearly) values; the GPU's
approximate `exp`/`/` differ by a few ulp, which the parity suite allows for.
"""
from __future__ import annotations

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics import integers, numerics
from minitriton.semantics import reduce
from minitriton.semantics.casts import cast
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.elementwise import add, finish, floordiv, neg, operands, sub, truediv
from minitriton.semantics.shape import broadcast_shapes, broadcast_to_shape, expand
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor

_FP = ("fp32", "fp64")


# ---------------------------------------------------------------- Triton's rules

def _check(x, allowed):
    """Triton's `_check_dtype`: a tensor argument's dtype must be one of `allowed` (literals pass)."""
    if isinstance(x, tensor) and x.dtype.name not in allowed:
        raise errors.python_error(ValueError, errors.diagnostic(
            "dtype_expected", allowed=str(list(allowed)), dtype=x.dtype.name))


def _ir_type(x: tensor) -> str:
    """`x`'s MLIR type as Triton's compiler spells it in diagnostics: `i32`, `tensor<128xi32>`, `!tt.ptr<f32>`."""
    ty = x.dtype
    floats = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64"}
    if ty.is_ptr():
        elem = ty.element_ty
        name = f"!tt.ptr<{f'i{elem.primitive_bitwidth}' if elem.is_int() else floats.get(elem.name, elem.name)}>"
    else:
        name = floats.get(ty.name, f"i{ty.primitive_bitwidth}")
    return f"tensor<{'x'.join(map(str, x.shape))}x{name}>" if x.shape else name


def _check_fdiv(x: tensor, y: tensor) -> tuple:
    """Triton 3.6's fdiv: both operands floats of one type (`arith.divf`), at least 32 bits (LLVM lowering).
    Returns the block shape."""
    if not x.dtype.is_floating() or not y.dtype.is_floating():
        raise errors.python_error(TypeError, errors.diagnostic("fdiv_type", left=x.dtype, right=y.dtype))
    shape = broadcast_shapes(x.shape, y.shape)
    if x.dtype != y.dtype:
        raise errors.backend_error("error encountered during parsing",
                                   "'arith.divf' op requires the same type for all operands and results")
    if x.dtype.primitive_bitwidth < 32:
        raise errors.backend_error("PassManager::run failed", "LLVM ERROR: Unsupported bitwidth")
    return shape


def _check_fma(x: tensor) -> None:
    """`math.fma` takes floats only (MLIR verification, after the operands are legalised)."""
    if not x.dtype.is_floating():
        raise errors.backend_error("error encountered during parsing",
                                   f"'math.fma' op operand #0 must be floating-point-like, but got '{_ir_type(x)}'")


def _legalized(a: tensor, b: tensor):
    """Two tensors cast to their computation type and broadcast to one shape (`binary_op_type_legalization`)."""
    ty = a.dtype if a.dtype is b.dtype else T.computation_type(a.dtype, False, b.dtype, False)
    shape = broadcast_shapes(a.shape, b.shape)
    return broadcast_to_shape(cast(a, ty), shape), broadcast_to_shape(cast(b, ty), shape)


def _typed_operands(x, y):
    """Triton 3.6's `to_tensor` on both, then `binary_op_type_legalization`: literals take part in the promotion
    with their literal type (int32, uint32, fp32, ...) instead of the tensor's."""
    return operands(to_tensor(x), to_tensor(y))


# ---------------------------------------------------------------- functions

def _unary(np_fn, name, allowed=_FP):
    def fn(x):
        x = unwrap(x)
        _check(x, allowed)
        x = to_tensor(x)
        return finish(np_fn(x.data), x.dtype, x.shape)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`tl.{name}(x)` and `x.{name}()` on {' or '.join(allowed)} values."
    return builtin(name, method=True)(fn)


exp = _unary(np.exp, "exp")
exp2 = _unary(np.exp2, "exp2")
log = _unary(np.log, "log")
log2 = _unary(np.log2, "log2")
cos = _unary(np.cos, "cos")
sin = _unary(np.sin, "sin")
sqrt = _unary(np.sqrt, "sqrt")
sqrt_rn = _unary(np.sqrt, "sqrt_rn", ("fp32",))
floor = _unary(np.floor, "floor")
ceil = _unary(np.ceil, "ceil")
erf = _unary(numerics.erf, "erf")


@builtin(method=True)
def rsqrt(x):
    """`tl.rsqrt`: 1 / sqrt(x)."""
    x = unwrap(x)
    _check(x, _FP)
    x = to_tensor(x)
    one = np.ones((), x.dtype.np_compute)
    return finish(one / np.sqrt(x.data), x.dtype, x.shape)


@builtin(method=True)
def abs(x):
    """`tl.abs`: |x| for floats and signed ints (wrapping for INT_MIN); unsigned unchanged."""
    x = to_tensor(x)
    if x.dtype.is_int_unsigned():
        return x
    if x.dtype.is_floating():
        # the GPU clears the sign bit (NaN payloads included); NumPy's abs keeps a NaN's sign on some builds
        # (wasm32's), so clear it on the bits
        data = np.asarray(x.data)
        bits = np.dtype(f"u{data.itemsize}")
        magnitude = bits.type((1 << (8 * data.itemsize - 1)) - 1)
        return tensor((data.view(bits) & magnitude).view(data.dtype), x.dtype, x.shape)
    return tensor(np.abs(x.data), x.dtype, x.shape)


@builtin(method=True)
def sigmoid(x):
    """`tl.sigmoid`: 1 / (1 + exp(-x))."""
    return truediv(1, add(1, exp(neg(x))))


@builtin
def fdiv(x, y, ieee_rounding=False):
    """`tl.fdiv`, as Triton 3.6 builds it: both operands (literals made tensors first) must already be floats,
    and they are not promoted: `arith.divf` needs one type, and fp16/bf16 fail in the LLVM lowering.
    `ieee_rounding` changes nothing in 3.6 (minitriton rounds every division correctly)."""
    x, y = to_tensor(x), to_tensor(y)
    shape = _check_fdiv(x, y)
    nd = len(shape)
    return finish(np.true_divide(expand(x.data, x.shape, nd), expand(y.data, y.shape, nd)), x.dtype, shape)


@builtin
def div_rn(x, y):
    """`tl.div_rn`: IEEE round-to-nearest division of fp32 tensors (a literal may make it fp64)."""
    _check(unwrap(x), ("fp32",))
    _check(unwrap(y), ("fp32",))
    xd, yd, ty, shape, _, _ = _typed_operands(x, y)
    return finish(np.true_divide(xd, yd), ty, shape)


@builtin
def fma(x, y, z):
    """`tl.fma(x, y, z)`: x * y + z rounded once. Triton 3.6 makes literals tensors of their literal type, then
    legalises the pairs (x, y), (z, x), (z, y): `fma(fp16, fp16, 0.1)` computes in fp32."""
    x, y, z = to_tensor(x), to_tensor(y), to_tensor(z)
    x, y = _legalized(x, y)
    z, x = _legalized(z, x)
    z, y = _legalized(z, y)
    _check_fma(x)
    shape = x.shape
    nd = len(shape)
    return finish(numerics.fma(x.data, expand(y.data, y.shape, nd), expand(z.data, z.shape, nd)), x.dtype, shape)


@builtin(method=True)
def cdiv(x, div):
    """`tl.cdiv(x, div)`: (x + div - 1) // div, literally (so negative x rounds the C way)."""
    x, div = unwrap(x), unwrap(div)
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        return (x + div - 1) // div
    return floordiv(sub(add(x, div), 1), div)


@builtin
def umulhi(x, y):
    """`tl.umulhi`: the high 32 (or 64) bits of the full product."""
    _check(unwrap(x), ("int32", "int64", "uint32", "uint64"))
    _check(unwrap(y), ("int32", "int64", "uint32", "uint64"))
    xd, yd, ty, shape, _, _ = _typed_operands(x, y)
    # MulhiUIOp: the bit patterns multiply as unsigned, also for int32/int64 (GPU probe: umulhi(-1, 2) == 1)
    unsigned = np.dtype(f"u{xd.dtype.itemsize}")
    hi = integers.umulhi(np.asarray(xd).view(unsigned), np.asarray(yd).view(unsigned))
    return finish(hi.view(xd.dtype), ty, shape)


@builtin(method=True)
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """`tl.softmax(x, dim)`, Triton 3.6's standard.py literally: axis 0 when `dim` is None, and the max and sum
    keep `keep_dims` (False by default). So for a 2-D x and dim=1 the (M,) row results broadcast along the last
    axis: square blocks get other rows' values, others fail to broadcast (as they fail to compile in Triton)."""
    x = to_tensor(x)
    axis = 0 if unwrap(dim) is None else unwrap(dim)
    keep_dims = unwrap(keep_dims)
    z = sub(x, reduce.max(x, axis, keep_dims=keep_dims))
    num = exp(z)
    return fdiv(num, reduce.sum(num, axis, keep_dims=keep_dims), ieee_rounding)

