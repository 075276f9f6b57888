"""Generated one-expression kernels and the checker that runs `x op y` four ways against the reference."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitriton
from helpers.dtypes import FORMATS, empty_buffer, from_buffer, is_float, literal_type, promote, tl_type, to_buffer
from helpers.kernels import make_kernel
from helpers.reference import BITWISE, CMP, OVERRIDES, convert, expected_binary, expected_error, literal_constant, operand_values, result_type, shift_amounts, type_seed


# ----------------------------------------------------------------------------- kernels

TT_SRC = """
@triton.jit
def binary_tt(X, Y, Z, ZTY: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    tl.store(Z + o, z)
"""
TS_SRC = """
@triton.jit
def binary_ts(X, Z, S: tl.constexpr, ZTY: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y: tl.constexpr = S
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    tl.store(Z + o, z)
"""
ST_SRC = """
@triton.jit
def binary_st(Y, Z, S: tl.constexpr, ZTY: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x: tl.constexpr = S
    y = tl.load(Y + o)
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    tl.store(Z + o, z)
"""
BC_SRC = """
@triton.jit
def binary_bc(X, Y, Z2, Z1, ZTY: tl.constexpr, N: tl.constexpr, M: tl.constexpr):
    x1 = tl.load(X + tl.arange(0, N))
    y1 = tl.load(Y + tl.arange(0, M))
    x = x1[:, None]
    y = y1[None, :]
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    tl.store(Z2 + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], z)
    x = x1
    y = tl.load(Y + tl.arange(0, 1))
    z = {expr}
    tl.store(Z1 + tl.arange(0, N), z)
"""


def kernel_for(template: str, expr: str):
    return make_kernel(template.format(expr=expr))


def describe(expr, xt, yt, mode):
    return f"`{expr}` with x: {xt}, y: {yt} ({mode})"


def assert_same(got, want, t: str, ctx: str, inputs=(), ulps: float = 0.0, zero_sign=True):
    """Exact comparison (NaN == NaN, signed zeros) or within `ulps` of format `t`; names the failing lanes."""
    dt = np.float64 if is_float(t) else object  # Python ints past 2**63 must not become floats
    got = np.asarray(got, dtype=dt).reshape(-1)
    want = np.asarray(want, dtype=dt).reshape(-1)
    assert got.shape == want.shape, f"{ctx}: shape {got.shape} != {want.shape}"
    bad = []
    for i, (g, w) in enumerate(zip(got.tolist(), want.tolist())):
        if is_float(t):
            g, w = float(g), float(w)
            if math.isnan(w) or math.isnan(g):
                ok = math.isnan(w) and math.isnan(g)
            elif ulps and math.isfinite(w) and w != 0:
                p, emin, _ = FORMATS.get(t, (53, -1022, 1023))
                e = max(math.frexp(abs(w))[1] - 1, emin)
                ok = abs(g - w) <= ulps * 2.0 ** (e - p + 1)
            else:
                ok = g == w and (not zero_sign or math.copysign(1, g) == math.copysign(1, w))
        else:
            ok = (bool(g) == bool(w)) if t == "int1" else int(g) == int(w)
        if not ok:
            bad.append((i, g, w))
    if bad:
        lines = []
        for i, g, w in bad[:6]:
            args = ", ".join(f"{name}={np.asarray(v, dtype=object).reshape(-1)[i]!r}" for name, v in inputs)
            lines.append(f"  lane {i}: {args} -> got {g!r}, want {w!r}")
        raise AssertionError(f"{ctx}: {len(bad)} of {len(want)} lanes differ\n" + "\n".join(lines))


def expected_values(op, xv, xt, yv, yt, ct):
    """Elementwise reference over aligned (broadcast) operand arrays (both operands tensors)."""
    shift = OVERRIDES["arith_shift_signed"].fn(xt, yt, False)
    xs = np.asarray(xv, dtype=object)
    ys = np.asarray(yv, dtype=object)
    xs, ys = np.broadcast_arrays(xs, ys)
    xc = convert(xs.reshape(-1), xt, ct)
    yc = convert(ys.reshape(-1), yt, ct)
    return [expected_binary(op, ct, a, b, shift) for a, b in zip(xc.tolist(), yc.tolist())], xs.shape


def check_binary(op: str, xt: str, yt: str, modes=("tensor-tensor", "tensor-scalar", "scalar-tensor", "broadcast"),
                 seed: int = 0, x_values=None, y_values=None, scalar=None):
    """Run `x op y` four ways and compare with the reference (the generic checker)."""
    expr = f"x {op} y"
    xv = x_values if x_values is not None else operand_values(xt, seed * 7919 + type_seed(xt))
    if y_values is not None:
        yv = y_values
    elif op in ("<<", ">>"):
        yv = shift_amounts(yt, promote(xt, yt), seed + 11)
    else:
        yv = operand_values(yt, seed * 104729 + type_seed(yt) + 1)
    ulps = 2.0 if op == "/" else 0.0  # OVERRIDES["fp32_div_approx"]
    for mode in modes:
        if mode == "tensor-tensor":
            _check_tt(op, expr, xt, xv, yt, yv, ulps)
        elif mode == "broadcast":
            _check_bc(op, expr, xt, xv, yt, yv, ulps)
        else:
            s_val = scalar if scalar is not None else scalar_for(op, xt if mode == "tensor-scalar" else yt)
            _check_scalar(op, expr, mode, xt, xv, yt, yv, s_val, ulps)


def raises_expected(err, ctx, launch) -> bool:
    """If `err` is an expected (type, regex), check that `launch()` raises it (as Triton's CompilationError,
    caused by that type) and return True; else return False without launching."""
    if err is None:
        return False
    exc_type, pattern = err
    with pytest.raises(minitriton.CompilationError, match=pattern) as info:
        launch()
    cause = getattr(info.value, "error", None) or info.value.__cause__
    assert cause is None or isinstance(cause, exc_type), f"{ctx}: expected {exc_type.__name__}, got {cause!r}"
    return True


def _check_tt(op, expr, xt, xv, yt, yv, ulps):
    ctx = describe(expr, xt, yt, "tensor-tensor")
    err = expected_error(op, xt, yt)
    zt = None if err else result_type(op, xt, yt)
    k = kernel_for(TT_SRC, expr)
    z = empty_buffer(len(xv), zt or "int32")
    def launch():
        k[(1,)](to_buffer(xv, xt), to_buffer(yv, yt), z, ZTY=tl_type(zt or "int32"), N=len(xv))
    if raises_expected(err, ctx, launch):
        return
    launch()
    ct = promote(xt, yt, div=op in ("/", "//", "%"))
    if op == "/" and not is_float(ct):
        ct = "float32"
    want, _ = expected_values(op, xv, xt, yv, yt, ct)
    assert_same(from_buffer(z, zt), want, zt, ctx, [("x", xv), ("y", yv)], ulps)


def _check_bc(op, expr, xt, xv, yt, yv, ulps):
    ctx = describe(expr, xt, yt, "broadcast (8,1)x(1,4) and (8,)x(1,)")
    err = expected_error(op, xt, yt)
    zt = None if err else result_type(op, xt, yt)
    xs, ys = xv[:8], yv[:4]
    k = kernel_for(BC_SRC, expr)
    z2, z1 = empty_buffer((8, 4), zt or "int32"), empty_buffer(8, zt or "int32")
    def launch():
        k[(1,)](to_buffer(xs, xt), to_buffer(ys, yt), z2, z1, ZTY=tl_type(zt or "int32"), N=8, M=4)
    if raises_expected(err, ctx, launch):
        return
    launch()
    ct = promote(xt, yt, div=op in ("/", "//", "%"))
    if op == "/" and not is_float(ct):
        ct = "float32"
    want2, _ = expected_values(op, np.array(xs, dtype=object)[:, None], xt, np.array(ys, dtype=object)[None, :], yt, ct)
    grid_x = np.broadcast_to(np.array(xs, dtype=object)[:, None], (8, 4))
    grid_y = np.broadcast_to(np.array(ys, dtype=object)[None, :], (8, 4))
    assert_same(from_buffer(z2, zt), want2, zt, ctx, [("x", grid_x), ("y", grid_y)], ulps)
    want1, _ = expected_values(op, xs, xt, [ys[0]] * 8, yt, ct)
    assert_same(from_buffer(z1, zt), want1, zt, ctx + " [(8,) with (1,)]", [("x", xs), ("y", [ys[0]] * 8)], ulps)


def scalar_for(op: str, tensor_t: str):
    """A Python literal that is a valid operand next to a `tensor_t` tensor for `op`."""
    if op in ("<<", ">>"):
        return 3
    if op in BITWISE or not is_float(tensor_t):
        return 5 if tensor_t != "int1" else True
    return 2.5


def _check_scalar(op, expr, mode, xt, xv, yt, yv, s_val, ulps):
    s_type = literal_type(s_val)
    left = mode == "scalar-tensor"
    tensor_t, tensor_v = (yt, yv) if left else (xt, xv)
    a_t, b_t = (s_type, tensor_t) if left else (tensor_t, s_type)
    ctx = describe(expr, a_t + (" literal " + repr(s_val) if left else ""),
                   b_t + ("" if left else " literal " + repr(s_val)), mode)
    typed = op in CMP  # OVERRIDES["compare_literal_typed"]: the literal is a tensor, not a weak scalar
    a_scalar, b_scalar = left and not typed, not left and not typed
    err = expected_error(op, a_t, b_t, x_scalar=a_scalar, y_scalar=b_scalar)
    zt = None if err else result_type(op, a_t, b_t, x_scalar=a_scalar, y_scalar=b_scalar)
    k = kernel_for(ST_SRC if left else TS_SRC, expr)
    z = empty_buffer(len(tensor_v), zt or "int32")
    def launch():
        k[(1,)](to_buffer(tensor_v, tensor_t), z, S=s_val, ZTY=tl_type(zt or "int32"), N=len(tensor_v))
    if raises_expected(err, ctx, launch):
        return
    launch()
    ct = promote(a_t, b_t, a_scalar=a_scalar, b_scalar=b_scalar, div=op in ("/", "//", "%"))
    if op == "/" and not is_float(ct):
        ct = "float32"
    # The literal becomes a constant of the computation type (OVERRIDES["literal_constant"]); a comparison makes it
    # a constant of its literal type, then converts that.
    if typed:
        s_conv = convert([literal_constant(s_val, s_type)], s_type, ct).tolist()[0]
    else:
        s_conv = literal_constant(s_val, ct)
    t_conv = convert(tensor_v, tensor_t, ct).tolist()
    pairs = [(s_conv, v) if left else (v, s_conv) for v in t_conv]
    shift = OVERRIDES["arith_shift_signed"].fn(a_t, b_t, left)
    want = [expected_binary(op, ct, a, b, shift) for a, b in pairs]
    names = [("tensor", tensor_v)]
    assert_same(from_buffer(z, zt), want, zt, ctx, names, ulps)
