"""Element-wise ops in every dtype against NumPy / exact Python references (the style of Triton's test_core.py).

A tiny kernel is generated for each expression (`z = x OP y`, x and y loaded from arrays, z stored), run in
minitriton, and compared with a reference computed here, independently of minitriton: values are converted
to the computation type given by this file's own promotion table (`promote`, written from the Triton
docs/semantics.md S3), then combined in exact Python arithmetic (ints) or float64 (floats, rounded once to the
result format). Where Triton differs from NumPy, the rule comes from the ONE table `OVERRIDES` below, each
entry with its reason and source. The other test files (casts, reductions, shapes, dot) import the dtype
lists, the value helpers and `OVERRIDES` from here.

Sources cited: "S1.5" etc. = the rows of docs/semantics.md ([GPU]: measured on an H200 with Triton 3.6.0);
"GPU probe" = the single-op H200 + Triton 3.6.0 measurements made for this test file (kernel per expression,
inputs from memory, results widened to 64 bits before the store), docs/semantics.md S16; "semantic.py" etc. =
Triton's frontend source.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton.language as tl
from helpers.kernels import make_kernel, run_kernel
from helpers.binary import TS_SRC, TT_SRC, assert_same, check_binary, kernel_for
from helpers.dtypes import ALL_TYPES, BF16, BITS, FLOAT_TYPES, INTEGRAL_TYPES, INT_TYPES, NP_STORAGE, NUM_TYPES, PromotionError, empty_buffer, from_buffer, int_range, is_float, literal_type, promote, round_fraction, round_to, short, tl_type, to_buffer, wrap
from helpers.reference import N, OVERRIDES, _c_div, convert, expected_binary, literal_constant, operand_values, result_type, type_seed


# ----------------------------------------------------------------------------- the promotion table itself

def _scalar_example(t):
    return {"int1": True, "int32": 5, "uint32": 2**31 + 5, "int64": 2**40, "uint64": 2**63 + 5,
            "float32": 2.5, "float64": 1e300}.get(t)


@pytest.mark.parametrize("b", ALL_TYPES)
@pytest.mark.parametrize("a", ALL_TYPES)
def test_promotion_table_matches_minitriton(a, b):
    """Cross-check: this file's promotion table against `minitriton.dtypes.computation_type`."""
    from minitriton.semantics import dtypes as T
    for div in (False, True):
        for a_scalar, b_scalar in ((False, False), (True, False), (False, True)):
            if (a_scalar and _scalar_example(a) is None) or (b_scalar and _scalar_example(b) is None):
                continue
            try:
                want = promote(a, b, a_scalar=a_scalar, b_scalar=b_scalar, div=div)
            except PromotionError:
                want = "error"
            try:
                got = str(T.computation_type(tl_type(a), a_scalar, tl_type(b), b_scalar, div))
            except TypeError:
                got = "error"
            assert got == short(want) or got == want, \
                f"promote({a}{' scalar' if a_scalar else ''}, {b}{' scalar' if b_scalar else ''}, div={div}): " \
                f"table says {want}, minitriton {got}"


@pytest.mark.parametrize("value, t", [(True, "int1"), (0, "int32"), (-2**31, "int32"), (2**31 - 1, "int32"),
                                      (2**31, "uint32"), (2**32 - 1, "uint32"), (2**32, "int64"),
                                      (-2**31 - 1, "int64"), (2**63, "uint64"), (1.5, "float32"),
                                      (1e300, "float64"), (1e-300, "float64"), (float("inf"), "float32")])
def test_literal_types(value, t):
    """Python literals get int32/uint32/int64/uint64 by range, fp32 unless outside fp32's range (S3.10)."""
    k = make_kernel("""
    @triton.jit
    def literal_type(Z, V: tl.constexpr, ZTY: tl.constexpr):
        z = V + tl.zeros([1], tl.int1)  # a bool tensor never outranks a literal: z has the literal's type
        tl.static_assert(z.dtype == ZTY, "literal type")
        tl.store(Z + tl.arange(0, 1), z)
    """)
    z = empty_buffer(1, t)
    k[(1,)](z, V=value, ZTY=tl_type(t))
    assert literal_type(value) == t
    got = from_buffer(z, t)[0]
    want = value if not isinstance(value, float) else value
    assert (bool(got) == want) if t == "int1" else (got == want), f"literal {value!r}: stored {got!r}"


# ----------------------------------------------------------------------------- the generic matrix

ARITH_TYPES = NUM_TYPES


@pytest.mark.parametrize("yt", ARITH_TYPES)
@pytest.mark.parametrize("xt", ARITH_TYPES)
@pytest.mark.parametrize("op", ["+", "-", "*"])
def test_add_sub_mul(op, xt, yt):
    check_binary(op, xt, yt)


@pytest.mark.parametrize("yt", ARITH_TYPES)
@pytest.mark.parametrize("xt", ARITH_TYPES)
@pytest.mark.parametrize("op", ["/", "//", "%"])
def test_div_floordiv_mod(op, xt, yt):
    # Division by zero is checked only where measured (test_int_div_by_zero_row5); MIN // -1 is kept.
    xv = operand_values(xt, type_seed(xt))
    yv = [v if not (not is_float(yt) and v == 0) else 3 for v in operand_values(yt, type_seed(yt) + 1)]
    check_binary(op, xt, yt, x_values=xv, y_values=yv)


@pytest.mark.parametrize("yt", ALL_TYPES)
@pytest.mark.parametrize("xt", ALL_TYPES)
@pytest.mark.parametrize("op", ["&", "|", "^"])
def test_bitwise(op, xt, yt):
    check_binary(op, xt, yt)


@pytest.mark.parametrize("yt", INTEGRAL_TYPES + ["float32"])
@pytest.mark.parametrize("xt", INTEGRAL_TYPES + ["float32"])
@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shifts(op, xt, yt):
    check_binary(op, xt, yt)


@pytest.mark.parametrize("yt", ALL_TYPES)
@pytest.mark.parametrize("xt", ALL_TYPES)
@pytest.mark.parametrize("op", ["<", "=="])
def test_comparisons(op, xt, yt):
    check_binary(op, xt, yt)


# the other comparisons: every type with itself and with the types that share its width
_SAME_WIDTH = [(a, b) for a in ALL_TYPES for b in ALL_TYPES if BITS[a] == BITS[b]]


@pytest.mark.parametrize("xt, yt", _SAME_WIDTH)
@pytest.mark.parametrize("op", ["<=", ">", ">=", "!="])
def test_other_comparisons(op, xt, yt):
    check_binary(op, xt, yt, modes=("tensor-tensor", "broadcast"))


@pytest.mark.parametrize("op", ["+", "-", "*"])
def test_bool_arithmetic_is_mod_2(op):
    """int1 + int1 computes in int1 (OVERRIDES['int1_arith_mod2']); a Python int scalar makes it int32."""
    x, y = [False, False, True, True], [False, True, False, True]
    check_binary(op, "int1", "int1", modes=("tensor-tensor", "broadcast"), x_values=x * 8, y_values=y * 8)
    want = {"+": [0, 1, 1, 0], "-": [0, 1, 1, 0], "*": [0, 0, 0, 1]}[op]
    k = kernel_for(TT_SRC, f"x {op} y")
    z = np.zeros(4, bool)
    k[(1,)](np.array(x), np.array(y), z, ZTY=tl.int1, N=4)
    assert z.astype(int).tolist() == want, f"bool {op} (GPU probe): {z.astype(int).tolist()} != {want}"
    check_binary(op, "int1", "int32", modes=("tensor-scalar",), x_values=x * 8, scalar=3)


@pytest.mark.parametrize("op", ["+", "*", "<"])
@pytest.mark.parametrize("t", ["int8", "uint8", "int16", "float16", "bfloat16"])
def test_scalar_of_lower_kind_keeps_tensor_type(op, t):
    """uint8 tensor + 5 stays uint8, fp16 tensor * 2 stays fp16 (OVERRIDES['scalar_does_not_promote'])."""
    check_binary(op, t, "int32", modes=("tensor-scalar", "scalar-tensor"), scalar=5)


@pytest.mark.parametrize("t", INTEGRAL_TYPES)
def test_float_scalar_with_int_tensor_is_fp32(t):
    """int64 tensor * 2.5 computes in fp32, not fp64 (the literal's type wins: S3.8)."""
    check_binary("*", t, "float32", modes=("tensor-scalar", "scalar-tensor"), scalar=2.5)
    check_binary("+", t, "float32", modes=("tensor-scalar",), scalar=0.1)


@pytest.mark.parametrize("t, value, pattern", [
    ("uint8", -1, "Cannot perform a binary operation between an unsigned tensor and a negative scalar"),
    ("uint32", -5, "Cannot perform a binary operation between an unsigned tensor and a negative scalar"),
    ("int8", 1000, "Scalar 1000 is out of range for type int8"),
    ("uint16", 70000, "Scalar 70000 is out of range for type uint16"),
])
def test_scalar_range_errors(t, value, pattern):
    k = kernel_for(TS_SRC, "x + y")
    with pytest.raises(minitriton.CompilationError, match=pattern):
        k[(1,)](to_buffer([1, 2], t), np.zeros(2, NP_STORAGE[t]), S=value, ZTY=tl_type(t), N=2)


@pytest.mark.parametrize("xt, xv, expr, want", [
    ("float16", 0.1, "x == 0.1", 0),      # fp16(0.1) widened to fp32, against 0.1f (weak: fp16(0.1) == fp16(0.1))
    ("float16", 0.1, "x != 0.1", 1),
    ("float16", 0.1, "0.1 == x", 0),      # the reflected form too
    ("float64", 0.1, "x == 0.1", 0),      # against (double)0.1f
    ("bfloat16", 1.0, "x < 1.001", 1),    # in fp32 (weak: bf16(1.001) == 1.0)
    ("bfloat16", 1.0, "x >= 1.001", 0),
    ("int8", 3, "x < 300", 1),            # int32 compare (weak: "Scalar 300 is out of range for type int8")
    ("int8", 3, "300 > x", 1),
    ("uint32", 3, "x < -1", 1),           # uint32 compare against 0xFFFFFFFF (weak: ValueError)
    ("int32", -1, "x > 2**31", 1),        # the uint32 literal makes it a uint32 compare: 0xFFFFFFFF > 2**31
    ("float32", 0.0, "x == 1e-50", 0),    # the fp64 literal makes it an fp64 compare (weak: 1e-50 -> 0.0f)
])
def test_comparison_literals_are_typed_tensors(xt, xv, expr, want):
    """OVERRIDES['compare_literal_typed']: Triton 3.6 tensor.__eq__/__lt__/... call to_tensor on the literal.
    Every row run with the Triton 3.6 interpreter (same results; write-up A1 for the first rows)."""
    k = make_kernel(f"""
    @triton.jit
    def cmp_literal(X, Z):
        x = tl.load(X + tl.arange(0, 4))
        tl.store(Z + tl.arange(0, 4), ({expr}).to(tl.int32))
    """)
    z = np.zeros(4, np.int32)
    k[(1,)](to_buffer([xv] * 4, xt), z)
    assert z.tolist() == [want] * 4, f"`{expr}` with x = {xt} {xv!r}: {z.tolist()}"


NEG_ZERO_SRC = """
@triton.jit
def neg_zero(X, Z, P, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(X + r)
    {body}
"""


@pytest.mark.parametrize("body", [
    "tl.store(Z + r, x * -0.0)",                                   # a binary-op scalar
    "tl.store(Z + r, tl.full((N,), -0.0, tl.float32))",
    "tl.store(Z + r, tl.where(r < 0, x, -0.0))",
    "tl.store(Z + r, -0.0)",                                       # the store value
    "tl.store(Z + r, tl.load(X + r, mask=r < 0, other=-0.0))",     # load's `other`
    "tl.store(Z + r, tl.minimum(x * 0, -0.0))",                    # min(+0, "-0") is +0: the literal is +0
    "tl.store(Z + r, x.to(tl.float16) * -0.0)",                    # an fp16 constant
    "tl.store(Z + r, tl.full((N,), -0.0, tl.bfloat16).to(tl.float32))",
])
def test_negative_zero_literal_is_positive_zero(body):
    """OVERRIDES['literal_constant']: Triton 3.6 scalar_constant turns any literal equal to 0 into the type's
    null value, so -0.0 is +0.0 wherever a literal becomes a constant (3.9 keeps -0.0). The Triton 3.6
    interpreter gives +0 for the first five forms (it shares scalar_constant); TTIR shows `constant 0.0`."""
    z = np.ones(4, np.float32)
    make_kernel(NEG_ZERO_SRC.format(body=body))[(1,)](np.ones(4, np.float32), z, np.zeros(4, np.float32), N=4)
    assert z.tolist() == [0.0] * 4 and not np.signbit(z).any(), f"{body}: {z.tolist()}"


def test_negative_zero_literal_in_atomics_and_loops():
    """atomic_add(p, -0.0) onto -0.0 leaves +0.0 (-0 + +0), and a loop-carried `acc = -0.0` starts at +0.0; a
    runtime float argument is no constant and keeps its sign (Triton 3.6 interpreter for the first two)."""
    k = make_kernel("""
    @triton.jit
    def zeros_kernel(P, Z, W, arg, n):
        r = tl.arange(0, 4)
        tl.atomic_add(P + r, -0.0)
        acc = -0.0
        for i in range(n):
            acc = acc * 1.0
        tl.store(Z + r, acc + tl.zeros((4,), tl.float32) * 0)
        tl.store(W + r, tl.full((4,), arg, tl.float32))
    """)
    p, z, w = np.full(4, -0.0, np.float32), np.ones(4, np.float32), np.ones(4, np.float32)
    k[(1,)](p, z, w, -0.0, 1)
    assert not np.signbit(p).any() and not np.signbit(z).any(), (p, z)
    assert np.signbit(w).all(), w


@pytest.mark.parametrize("xt, literal, want", [
    ("float16", 1.0004882812500009, 1.0),   # double -> fp32 1.00048828125 (a tie) -> fp16 1.0 (directly: 1.0009765625)
    ("bfloat16", 1.0039062500000009, 1.0),  # double -> fp32 1.00390625 (a tie) -> bf16 1.0 (directly: 1.0078125)
    ("bfloat16", 1e-07, 0.0),               # std::to_string(1e-7f) == "0.000000"
    ("bfloat16", 3.3e-06, 2.9951334e-06),   # "0.000003": bf16(3e-6), not bf16(3.3e-6) == 3.2931e-6
    ("bfloat16", -1e-30, -0.0),             # "-0.000000" parses as -0.0 (the literal itself is not 0)
    ("bfloat16", 1234.5678, 1232.0),
    ("float16", 1e-07, 1.1920928955078125e-07),  # no to_string for fp16: bf16 only
])
def test_narrow_float_literals_round_like_triton(xt, literal, want):
    """OVERRIDES['literal_constant']: `x * literal` with x = 1 gives the constant Triton builds. Offline compile
    for sm_90 with Triton 3.6 (and 3.9): the TTIR folds the first two to `x` and shows the bf16 constants
    0.000000e+00, 2.995130e-06, -0.000000e+00, 1.232000e+03 and the fp16 constant 1.192090e-07."""
    z = empty_buffer(4, xt)
    make_kernel(UNARY_SRC.format(expr=f"x * {literal!r}"))[(1,)](to_buffer([1.0] * 4, xt), z, N=4)
    got = from_buffer(z, xt)
    assert got.tolist() == [float(np.float32(want))] * 4 and np.signbit(got[0]) == np.signbit(want), got
    assert literal_constant(literal, xt) == float(np.float32(want))


# ----------------------------------------------------------------------------- unary

UNARY_SRC = """
@triton.jit
def unary(X, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    tl.store(Z + o, {expr})
"""


@pytest.mark.parametrize("t", ALL_TYPES)
def test_neg(t):
    xv = operand_values(t, 5)
    z = empty_buffer(len(xv), t)
    make_kernel(UNARY_SRC.format(expr="-x"))[(1,)](to_buffer(xv, t), z, N=len(xv))
    if is_float(t):
        want = [-v for v in xv]  # fneg, as Triton 3.9+ lowers it: -(+0.0) is -0.0 (S15.4; 3.6 computed 0 - x)
    else:
        want = [wrap(-int(v), t) for v in xv]  # 0 - x, wrapping (int1: -x == x, GPU probe)
    assert_same(from_buffer(z, t), want, t, f"`-x` with x: {t}", [("x", xv)])


@pytest.mark.parametrize("t", ALL_TYPES)
def test_invert(t):
    xv = operand_values(t, 6)
    k = make_kernel(UNARY_SRC.format(expr="~x"))
    z = empty_buffer(len(xv), t)
    if is_float(t):
        with pytest.raises(minitriton.CompilationError,
                           match=rf"wrong type argument to unary invert \({tl_type(t)!r}\)".replace(".", r"\.")):
            k[(1,)](to_buffer(xv, t), z, N=len(xv))
        return
    k[(1,)](to_buffer(xv, t), z, N=len(xv))
    want = [wrap(~int(v), t) for v in xv]  # x ^ all-ones
    assert_same(from_buffer(z, t), want, t, f"`~x` with x: {t}", [("x", xv)])


# ----------------------------------------------------------------------------- where / maximum / minimum / clamp

WHERE_SRC = """
@triton.jit
def where_kernel(C, X, Y, Z, ZTY: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    c = tl.load(C + o)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    tl.store(Z + o, z)
"""


@pytest.mark.parametrize("yt", ALL_TYPES)
@pytest.mark.parametrize("xt", ALL_TYPES)
def test_where(xt, yt):
    """tl.where promotes x and y like a binary op, broadcasts with the condition, evaluates both sides."""
    xv, yv = operand_values(xt, 21), operand_values(yt, 22)
    cond = np.random.default_rng(3).integers(0, 2, N).astype(bool)
    for expr, x_scalar, y_scalar in (("tl.where(c, x, y)", False, False), ("tl.where(c, x, 1)", False, True),
                                    ("tl.where(c, 0, y)", True, False)):
        a_t = "int32" if x_scalar else xt
        b_t = "int32" if y_scalar else yt
        zt = promote(a_t, b_t, a_scalar=x_scalar, b_scalar=y_scalar)
        z = empty_buffer(N, zt)
        make_kernel(WHERE_SRC.format(expr=expr))[(1,)](cond, to_buffer(xv, xt), to_buffer(yv, yt), z,
                                                       ZTY=tl_type(zt), N=N)
        xs = convert([0] * N if x_scalar else xv, a_t, zt)
        ys = convert([1] * N if y_scalar else yv, b_t, zt)
        want = [a if c else b for c, a, b in zip(cond, xs.tolist(), ys.tolist())]
        assert_same(from_buffer(z, zt), want, zt, f"`{expr}` with x: {xt}, y: {yt}",
                    [("c", cond), ("x", xv), ("y", yv)])


def test_where_broadcasts_condition_and_casts_int_condition():
    k = make_kernel("""
    @triton.jit
    def where_bc(C, X, Z):
        r = tl.arange(0, 4)
        c = tl.load(C + r)                     # int32 condition: nonzero is true
        x = tl.load(X + r)
        z = tl.where(c[:, None] != 0, x[None, :], -1.0)
        tl.store(Z + r[:, None] * 4 + r[None, :], z)
    """)
    c = np.array([0, 3, 0, -1], np.int32)
    x = np.array([1.5, 2.5, 3.5, 4.5], np.float32)
    z = np.zeros((4, 4), np.float32)
    k[(1,)](c, x, z)
    want = np.where(c[:, None] != 0, x[None, :], -1.0)
    assert np.array_equal(z, want), f"tl.where with a (4,1) condition: {z} != {want}"


MINMAX_SRC = """
@triton.jit
def minmax_kernel(X, Y, Z, ZTY: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    z = {expr}
    tl.static_assert(z.dtype == ZTY, "result dtype")
    tl.store(Z + o, z)
"""


@pytest.mark.parametrize("yt", NUM_TYPES)
@pytest.mark.parametrize("xt", NUM_TYPES)
@pytest.mark.parametrize("fn", ["maximum", "minimum"])
def test_maximum_minimum(fn, xt, yt):
    """maxnum by default (NaN loses, -0 < +0), NaN wins with PropagateNan.ALL (OVERRIDES['maxnum'])."""
    xv, yv = operand_values(xt, 31), operand_values(yt, 32)
    # Triton 3.6 widens bf16 operands of maximum/minimum to fp32 and keeps fp32 (no bf16 max on the hardware)
    zt = promote(*("float32" if t == "bfloat16" else t for t in (xt, yt)))
    for nan_mode in ("", ", propagate_nan=tl.PropagateNan.ALL"):
        expr = f"tl.{fn}(x, y{nan_mode})"
        z = empty_buffer(N, zt)
        make_kernel(MINMAX_SRC.format(expr=expr))[(1,)](to_buffer(xv, xt), to_buffer(yv, yt), z, ZTY=tl_type(zt), N=N)
        xs, ys = convert(xv, xt, zt).tolist(), convert(yv, yt, zt).tolist()
        if is_float(zt):
            want = [OVERRIDES["maxnum"].fn(a, b, fn == "maximum", bool(nan_mode)) for a, b in zip(xs, ys)]
        else:
            want = [max(a, b) if fn == "maximum" else min(a, b) for a, b in zip(xs, ys)]
        assert_same(from_buffer(z, zt), want, zt, f"`{expr}` with x: {xt}, y: {yt}", [("x", xv), ("y", yv)])


@pytest.mark.parametrize("expr, xt, want_type", [
    ("tl.maximum(x, 0)", "int8", "int32"),          # the literal is an int32 tensor, not a weak scalar
    ("tl.minimum(x, 3)", "uint8", "int32"),
    ("tl.maximum(x, 0.5)", "float16", "float32"),   # a float literal is an fp32 tensor
    ("tl.maximum(x, x)", "bfloat16", "float32"),    # bf16 widened to fp32, not cast back
    ("tl.clamp(x, 0.0, 1.0)", "float16", "float32"),
    ("tl.maximum(x, 2**40)", "int32", "int64"),
    ("tl.maximum(x, 1.5)", "float64", "float64"),
])
def test_minmax_literals_are_typed_tensors(expr, xt, want_type):
    """Triton 3.6's tl.maximum/minimum/clamp call to_tensor on Python numbers before promoting (3.9 treats them
    as weak scalars): the result type follows both operands."""
    k = make_kernel(f"""
@triton.jit
def k(X, Z, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    z = {expr}
    tl.static_assert(z.dtype == tl.{want_type}, "result dtype")
    tl.store(Z + tl.arange(0, N), z)
""")
    k[(1,)](to_buffer([1, 2, 3, 4], xt), empty_buffer(4, want_type), N=4)


def test_minmax_float_literal_rounded_to_fp32_next_to_fp64():
    """H200 fuzz (Triton 3.6): clamp(inf, -9.223372036854776e18, 9.223372036854775e18).to(int64) & 127 is 127:
    the upper literal becomes fp32 2**63 first, and the saturating cast gives INT64_MAX."""
    k = make_kernel("""
@triton.jit
def k(X, Z):
    x = tl.load(X + tl.arange(0, 4))
    v = tl.minimum(tl.maximum(x, -9.223372036854776e+18), 9.223372036854775e+18)
    tl.store(Z + tl.arange(0, 4), v.to(tl.int64) & 127)
""")
    z = np.zeros(4, np.int64)
    k[(1,)](np.array([np.inf, 1.0, 176.0, -np.inf]), z)
    assert z.tolist() == [127, 1, 176 & 127, 0], z


def test_maximum_measured_rows():
    """S1.14: tl.maximum(x, 1.0) with x=[NaN,0,2,3] gives [1,1,2,3]; GPU probe: signed zeros."""
    k = make_kernel(UNARY_SRC.format(expr="tl.maximum(x, 1.0)"))
    z = np.zeros(4, np.float32)
    k[(1,)](np.array([np.nan, 0, 2, 3], np.float32), z, N=4)
    assert z.tolist() == [1, 1, 2, 3], f"tl.maximum(x, 1.0) (S1.14): {z}"
    x = np.array([np.nan, 0.5, -3.0, 5.0, np.nan, 0.5, -0.0, 0.0], np.float32)
    y = np.array([0.0, 0.0, 0.0, 0.0, np.nan, np.nan, 0.0, -0.0], np.float32)
    gpu = {  # GPU probe, H200 + Triton 3.6.0
        "tl.maximum(x, y)": [0.0, 0.5, 0.0, 5.0, np.nan, 0.5, 0.0, 0.0],
        "tl.minimum(x, y)": [0.0, 0.0, -3.0, 0.0, np.nan, 0.5, -0.0, -0.0],
        "tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)": [np.nan, 0.5, 0.0, 5.0, np.nan, np.nan, 0.0, 0.0],
        "tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)": [np.nan, 0.0, -3.0, 0.0, np.nan, np.nan, -0.0, -0.0],
        "tl.clamp(x, y, y + 1.0)": [0.0, 0.5, 0.0, 1.0, np.nan, 0.5, 0.0, 0.0],
        "tl.clamp(x, y, y + 1.0, propagate_nan=tl.PropagateNan.ALL)": [np.nan, 0.5, 0.0, 1.0, np.nan, np.nan, 0.0, 0.0],
    }
    for expr, want in gpu.items():
        z = np.zeros(8, np.float32)
        make_kernel(MINMAX_SRC.format(expr=expr))[(1,)](x, y, z, ZTY=tl.float32, N=8)
        assert_same(z, want, "float32", f"`{expr}` (GPU probe)", [("x", x), ("y", y)])


@pytest.mark.parametrize("t", ["int8", "uint16", "int32", "uint64", "float16", "bfloat16", "float32", "float64"])
def test_clamp(t):
    """tl.clamp(x, lo, hi): the three operands promoted together; floats keep NaN x out unless ALL."""
    xv = operand_values(t, 41)
    if not is_float(t):  # Triton 3.6: "Only floating point clamp is supported" (3.9 accepts integers)
        promoted = "uint64" if t == "uint64" else "int32"  # x with the int32 literals
        with pytest.raises(minitriton.CompilationError,
                           match=f"Unexpected dtype {promoted}. Only floating point clamp is supported"):
            make_kernel(UNARY_SRC.format(expr="tl.clamp(x, -3, 5)"))[(1,)](to_buffer(xv, t), empty_buffer(N, t), N=N)
        return
    lo_hi = (2.0, 9.0)
    for nan_mode in ("", ", propagate_nan=tl.PropagateNan.ALL"):
        expr = f"tl.clamp(x, {lo_hi[0]!r}, {lo_hi[1]!r}{nan_mode})"
        z = empty_buffer(N, t)
        make_kernel(UNARY_SRC.format(expr=expr))[(1,)](to_buffer(xv, t), z, N=N)
        want = []
        for v in xv:
            if is_float(t) and math.isnan(v):
                want.append(math.nan if nan_mode else lo_hi[0])
            else:
                want.append(min(max(v, lo_hi[0]), lo_hi[1]))
        assert_same(from_buffer(z, t), want, t, f"`{expr}` with x: {t}", [("x", xv)], zero_sign=False)


# ----------------------------------------------------------------------------- math functions

MATH_REF = {
    "exp": math.exp, "exp2": lambda v: 2.0 ** v, "log": math.log, "log2": math.log2, "sqrt": math.sqrt,
    "rsqrt": lambda v: 1 / math.sqrt(v), "sin": math.sin, "cos": math.cos, "erf": math.erf,
    "floor": math.floor, "ceil": math.ceil, "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
}
EXACT_MATH = {"floor", "ceil"}


def _math_ref(fn: str, v: float, t: str = "float64") -> float:
    """float64 reference with IEEE special values (sigmoid: Triton's 1 / (1 + exp(-x)), rounded per step)."""
    if math.isnan(v):
        return math.nan
    try:
        if fn in ("log", "log2"):
            if v == 0:
                return -math.inf
            if v < 0:
                return math.nan
            if math.isinf(v):
                return math.inf
        if fn in ("sqrt", "rsqrt"):
            if v < 0:
                return math.nan
            if fn == "rsqrt":  # rsqrt(-0.0) == -inf (1 / -0.0)
                return math.copysign(math.inf, v) if v == 0 else (0.0 if math.isinf(v) else 1 / math.sqrt(v))
            return v if math.isinf(v) or v == 0 else math.sqrt(v)
        if fn in ("sin", "cos") and math.isinf(v):
            return math.nan
        if fn in ("floor", "ceil"):
            return v if (math.isinf(v) or v == 0) else float(MATH_REF[fn](v))
        if fn == "exp" and v == -math.inf:
            return 0.0
        if fn == "exp2" and v == -math.inf:
            return 0.0
        if fn == "sigmoid":
            e = float(round_to([_math_ref("exp", -v)], t)[0])
            d = float(round_to([1 + e], t)[0])
            return 1 / d
        return float(MATH_REF[fn](v))
    except OverflowError:
        return math.inf


@pytest.mark.parametrize("t", ["float32", "float64"])
@pytest.mark.parametrize("fn", sorted(MATH_REF))
def test_math_functions(fn, t):
    """fp32/fp64 math against a float64 reference: floor/ceil exact, the rest within 2 ulp of the format
    (the GPU was measured within 6.6 ulp for exp and 1.25 for sin; minitriton uses NumPy, S12)."""
    rng = np.random.default_rng(7)
    xv = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 10.0, -10.0, 100.5, -100.5, math.inf, -math.inf, math.nan, 1e-30, 3.0, 0.25]
    xv += list(rng.uniform(-20, 20, 16))
    xv = [float(v) for v in round_to(xv, t)]
    z = empty_buffer(len(xv), t)
    expr = f"tl.{fn}(x)"
    make_kernel(UNARY_SRC.format(expr=expr))[(1,)](to_buffer(xv, t), z, N=len(xv))
    want = [_math_ref(fn, v, t) for v in xv]
    ulps = 0 if fn in EXACT_MATH else 2.0
    if t == "float32":
        want = list(round_to(want, "float32"))
    assert_same(from_buffer(z, t), want, t, f"`{expr}` with x: {t}", [("x", xv)], ulps=ulps)


@pytest.mark.parametrize("t", ["float16", "bfloat16", "int32", "int8", "uint32"])
@pytest.mark.parametrize("fn", ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf", "floor", "ceil",
                                "sigmoid"])
def test_math_rejects_narrow_types(fn, t):
    """OVERRIDES['math_fp32_fp64_only']: Triton's exact message (math.py _check_dtype)."""
    k = make_kernel(UNARY_SRC.format(expr=f"tl.{fn}(x)"))
    with pytest.raises(minitriton.CompilationError,
                       match=rf"Expected dtype \['fp32', 'fp64'\] but got {short(t)}"):
        k[(1,)](to_buffer([1, 2], t), empty_buffer(2, t), N=2)


def test_math_method_sqrt_rn_fp32():
    """`x.sqrt_rn()` on fp32 is the correctly rounded square root, like `tl.sqrt_rn(x)`."""
    xv = [2.0, 3.0, 0.5, 10.0]
    z = empty_buffer(4, "float32")
    make_kernel(UNARY_SRC.format(expr="x.sqrt_rn()"))[(1,)](to_buffer(xv, "float32"), z, N=4)
    assert_same(from_buffer(z, "float32"), round_to([math.sqrt(v) for v in xv], "float32"), "float32", "sqrt_rn")


HELPER_SRC = """
@triton.jit
def _half():
    return 0.5


@triton.jit
def _two_hundred():
    return 200


@triton.jit
def _pair():
    return 1, 2.0


@triton.jit
def helper_returns(X, B, Z, W):
    x = tl.load(X + tl.arange(0, 4))
    y = x * _half()
    tl.static_assert(y.dtype == tl.float32, "fp16 * helper's 0.5 is not fp32")
    b = tl.load(B + tl.arange(0, 4)) + _two_hundred()
    tl.static_assert(b.dtype == tl.int32, "int8 + helper's 200 is not int32")
    i, f = _pair()
    tl.static_assert(i.dtype == tl.int32 and f.dtype == tl.float32, "tuple elements are not tensors")
    tl.store(Z + tl.arange(0, 4), y + i + f)
    tl.store(W + tl.arange(0, 4), b)
"""


def test_helper_literal_returns_become_tensors():
    """Triton 3.6's code_generator.visit_Return `decay`s a returned constexpr/int/float (tuples element-wise)
    with `to_tensor`: the helper's 0.5 is an fp32 tensor, not a weak literal, so fp16 * it is fp32, and int8 +
    a returned 200 is int32 (300, no wrap). Offline sm_90 compiles with 3.6.0 (static_print of the dtypes);
    3.9 keeps constexpr returns."""
    k = make_kernel(HELPER_SRC, name="helper_returns")
    z, w = np.zeros(4, np.float32), np.zeros(4, np.int32)
    k[(1,)](np.full(4, 3.0, np.float16), np.full(4, 100, np.int8), z, w)
    np.testing.assert_array_equal(z, np.full(4, 4.5, np.float32))
    np.testing.assert_array_equal(w, np.full(4, 300, np.int32))


def test_math_error_message_exact():
    k = make_kernel(UNARY_SRC.format(expr="tl.exp(x)"))
    with pytest.raises(minitriton.CompilationError) as info:
        k[(1,)](np.ones(2, np.float16), np.ones(2, np.float16), N=2)
    assert "Expected dtype ['fp32', 'fp64'] but got fp16" in str(info.value)


@pytest.mark.parametrize("t", ALL_TYPES[1:])
def test_abs(t):
    xv = operand_values(t, 51)
    z = empty_buffer(N, t)
    make_kernel(UNARY_SRC.format(expr="tl.abs(x)"))[(1,)](to_buffer(xv, t), z, N=N)
    if is_float(t):
        want = [abs(v) for v in xv]  # fabs: clears the sign bit (NaN stays NaN)
    else:
        want = [wrap(abs(int(v)), t) for v in xv]  # INT_MIN stays INT_MIN (GPU probe, int32/int64)
    assert_same(from_buffer(z, t), want, t, f"`tl.abs(x)` with x: {t}", [("x", xv)])


@pytest.mark.parametrize("t", ["float32", "float64"])
def test_sqrt_rn_div_rn_fdiv(t):
    xv = [float(v) for v in round_to(list(np.random.default_rng(9).uniform(0.1, 100, 16)), t)]
    yv = [float(v) for v in round_to(list(np.random.default_rng(10).uniform(0.1, 100, 16)), t)]
    cases = {"tl.fdiv(x, y)": [x / y for x, y in zip(xv, yv)],
             "tl.fdiv(x, y, ieee_rounding=True)": [x / y for x, y in zip(xv, yv)]}
    if t == "float32":
        cases["tl.div_rn(x, y)"] = [x / y for x, y in zip(xv, yv)]
        cases["tl.sqrt_rn(x)"] = [math.sqrt(x) for x in xv]
    for expr, want in cases.items():
        z = empty_buffer(16, t)
        make_kernel(MINMAX_SRC.format(expr=expr))[(1,)](to_buffer(xv, t), to_buffer(yv, t), z, ZTY=tl_type(t), N=16)
        # the *_rn / ieee forms are correctly rounded: exact
        assert_same(from_buffer(z, t), round_to(want, t), t, f"`{expr}` with {t}", [("x", xv), ("y", yv)])


@pytest.mark.parametrize("expr, t, pattern", [
    ("tl.div_rn(x, y)", "float64", r"Expected dtype \['fp32'\] but got fp64"),
    ("tl.div_rn(x, y)", "float16", r"Expected dtype \['fp32'\] but got fp16"),
    ("tl.sqrt_rn(x)", "float64", r"Expected dtype \['fp32'\] but got fp64"),
    ("tl.fdiv(x, y)", "int32", "both operands of fdiv must have floating scalar type"),  # Triton 3.6 math.py
    ("tl.umulhi(x, y)", "int16", r"Expected dtype \['int32', 'int64', 'uint32', 'uint64'\] but got int16"),
    ("tl.umulhi(x, y)", "float32", r"Expected dtype \['int32', 'int64', 'uint32', 'uint64'\] but got fp32"),
])
def test_math_dtype_errors(expr, t, pattern):
    k = make_kernel(MINMAX_SRC.format(expr=expr))
    with pytest.raises(minitriton.CompilationError, match=pattern):
        k[(1,)](to_buffer([1, 2], t), to_buffer([1, 2], t), empty_buffer(2, t), ZTY=tl_type(t), N=2)


@pytest.mark.parametrize("expr, xt, yt, pattern", [
    # semantic.fdiv checks the operands before any promotion: an integer (or an int literal) is a TypeError
    ("tl.fdiv(x, y)", "float32", "int32", "both operands of fdiv must have floating scalar type"),
    ("tl.fdiv(x, 3)", "float32", "float32", "both operands of fdiv must have floating scalar type"),
    # ... and does not promote: arith.divf needs one type (a float literal is an fp32 tensor)
    ("tl.fdiv(x, y)", "float16", "float32", "'arith.divf' op requires the same type for all operands and results"),
    ("tl.fdiv(x, 2.0)", "float64", "float64", "'arith.divf' op requires the same type for all operands"),
    # fp16/bf16 divf fails in the NVIDIA LLVM lowering
    ("tl.fdiv(x, y)", "float16", "float16", "LLVM ERROR: Unsupported bitwidth"),
    ("tl.fdiv(x, y, ieee_rounding=True)", "bfloat16", "bfloat16", "LLVM ERROR: Unsupported bitwidth"),
])
def test_fdiv_operand_rules(expr, xt, yt, pattern):
    """Triton 3.6's tl.fdiv (math.py:196, semantic.py:325): to_tensor on both, both must be floats, no promotion.
    TypeErrors: the 3.6 interpreter and offline compile; the MLIR/LLVM failures: offline compile for sm_90 with
    the 3.6 wheel ("error encountered during parsing" / "PassManager::run failed")."""
    k = make_kernel(MINMAX_SRC.format(expr=expr))
    with pytest.raises(minitriton.CompilationError, match=re.escape(pattern)):
        k[(1,)](to_buffer([1, 3], xt), to_buffer([3, 7], yt), empty_buffer(2, "float32"), ZTY=tl.float32, N=2)


def test_fdiv_same_float_types():
    """fdiv of two fp32 (or fp64) tensors keeps the type; an fp32 literal next to fp32 is fine."""
    z = np.zeros(2, np.float32)
    make_kernel(MINMAX_SRC.format(expr="tl.fdiv(x, y) + tl.fdiv(x, 2.0)"))[(1,)](
        np.array([1, 3], np.float32), np.array([3, 7], np.float32), z, ZTY=tl.float32, N=2)
    assert z.tolist() == [np.float32(1) / np.float32(3) + np.float32(0.5), np.float32(3) / np.float32(7) + 1.5]


@pytest.mark.parametrize("t", ["float16", "bfloat16", "float32", "float64"])
def test_fma_single_rounding(t):
    """tl.fma rounds x*y+z once (reference: the exact rational, rounded once)."""
    rng = np.random.default_rng(61)
    xv = [float(v) for v in round_to(list(rng.standard_normal(16) * 8) + [1 + 2.0**-7, 3.0, 0.0, -0.0], t)]
    yv = [float(v) for v in round_to(list(rng.standard_normal(16) * 8) + [1 - 2.0**-8, 1 / 3, 5.0, 2.0], t)]
    wv = [float(v) for v in round_to(list(rng.standard_normal(16) * 8) + [-1.0, -1.0, -0.0, -0.0], t)]
    xv, yv, wv = xv[:16], yv[:16], wv[:16]
    k = make_kernel("""
    @triton.jit
    def fma_kernel(X, Y, W, Z, N: tl.constexpr):
        o = tl.arange(0, N)
        tl.store(Z + o, tl.fma(tl.load(X + o), tl.load(Y + o), tl.load(W + o)))
    """)
    z = empty_buffer(16, t)
    k[(1,)](to_buffer(xv, t), to_buffer(yv, t), to_buffer(wv, t), z, N=16)
    want = []
    for a, b, c in zip(xv, yv, wv):
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        want.append(round_fraction(exact, t) if exact != 0 else a * b + c)
    assert_same(from_buffer(z, t), want, t, f"`tl.fma(x, y, w)` with {t}", [("x", xv), ("y", yv), ("w", wv)])


@pytest.mark.parametrize("expr, xt, zt, want", [
    ("tl.fma(x, x, 0.1)", "float16", "float32", 1.100000023841858),  # 0.1 is an fp32 tensor (3.6: 1.1000000238)
    ("tl.fma(x, 2, x)", "float16", "float16", 3.0),                            # int32 with fp16: fp16
    ("tl.fma(0.5, x, x)", "float64", "float64", 1.5),
    ("tl.fma(x, x, 0.1)", "float64", "float64", float(np.float32(0.1)) + 1),  # the literal is fp32 first
    ("tl.umulhi(x, -1)", "uint32", "uint32", 6),            # -1 is int32, cast to uint32 0xFFFFFFFF
    ("tl.umulhi(x, 3000000000)", "int32", "uint32", 4),     # a uint32 literal makes it uint32
    ("tl.div_rn(x, 1e-40)", "float32", "float64", 1e40),    # an fp64 literal makes it fp64
])
def test_math_literals_are_typed_tensors(expr, xt, zt, want):
    """Triton 3.6 fma (math.py:242), umulhi and div_rn call to_tensor on Python numbers, then promote tensor with
    tensor (3.9 treats them as weak scalars); values and dtypes from the 3.6 interpreter, x = 1 (umulhi: 7)."""
    k = make_kernel(f"""
    @triton.jit
    def k(X, Z):
        x = tl.load(X + tl.arange(0, 4))
        z = {expr}
        tl.static_assert(z.dtype == tl.{zt}, "result dtype")
        tl.store(Z + tl.arange(0, 4), z)
    """)
    z = empty_buffer(4, zt)
    k[(1,)](to_buffer([7 if "umulhi" in expr else 1] * 4, xt), z)
    assert from_buffer(z, zt).tolist() == [want] * 4


def test_fma_on_integers_fails_like_mlir():
    """Offline compile with Triton 3.6: `'math.fma' op operand #0 must be floating-point-like`."""
    k = make_kernel(MINMAX_SRC.format(expr="tl.fma(x, 2, y)"))
    with pytest.raises(minitriton.CompilationError,
                       match=re.escape("'math.fma' op operand #0 must be floating-point-like, but got 'tensor<2xi32>'")):
        k[(1,)](np.ones(2, np.int8), np.ones(2, np.int8), np.zeros(2, np.int32), ZTY=tl.int32, N=2)


@pytest.mark.parametrize("t", ["int32", "uint32", "int64", "uint64"])
def test_umulhi(t):
    """OVERRIDES['umulhi_unsigned']: the high half of the unsigned product of the bit patterns."""
    xv, yv = operand_values(t, 71), operand_values(t, 72)
    z = empty_buffer(N, t)
    make_kernel(MINMAX_SRC.format(expr="tl.umulhi(x, y)"))[(1,)](to_buffer(xv, t), to_buffer(yv, t), z,
                                                                   ZTY=tl_type(t), N=N)
    want = [wrap(OVERRIDES["umulhi_unsigned"].fn(int(a), int(b), BITS[t]), t) for a, b in zip(xv, yv)]
    assert_same(from_buffer(z, t), want, t, f"`tl.umulhi(x, y)` with {t}", [("x", xv), ("y", yv)])


def test_umulhi_gpu_probe():
    x = np.array([-1, -3, -2**31, 123456789, 7, 2**31 - 1, -1, 0], np.int32)
    y = np.array([2, 5, -2**31, -987654321, 9, 2**31 - 1, -1, 0], np.int32)
    z = np.zeros(8, np.int32)
    make_kernel(MINMAX_SRC.format(expr="tl.umulhi(x, y)"))[(1,)](x, y, z, ZTY=tl.int32, N=8)
    assert z.tolist() == [1, 4, 1073741824, 95067136, 0, 1073741823, -2, 0], f"umulhi int32 (GPU probe): {z}"


def test_cdiv_literal_formula():
    """OVERRIDES['cdiv_literal'], GPU probe: cdiv([-7, 7, -8, 8, 0], [2, 2, 2, -2, 3]) == [-3, 4, -3, -2, 0]."""
    x = np.array([-7, 7, -8, 8, 0, 9, -1, 100], np.int32)
    d = np.array([2, 2, 2, -2, 3, 4, 5, 7], np.int32)
    z = np.zeros(8, np.int32)
    make_kernel(MINMAX_SRC.format(expr="tl.cdiv(x, y)"))[(1,)](x, d, z, ZTY=tl.int32, N=8)
    want = [OVERRIDES["cdiv_literal"].fn(int(a), int(b)) for a, b in zip(x, d)]
    assert z.tolist() == want and want[:5] == [-3, 4, -3, -2, 0], f"tl.cdiv: {z.tolist()} != {want}"
    assert minitriton.cdiv(-7, 2) == -3 and minitriton.cdiv(7, 2) == 4  # the host helper: Python //


# ----------------------------------------------------------------------------- measured GPU rows (single ops)

TWO_OUT_SRC = """
@triton.jit
def two_out(X, Y, Q, R, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    tl.store(Q + o, x // y)
    tl.store(R + o, x % y)
"""


def test_row1_int_div_mod_truncate():
    a = np.array([-7, 7, -7, 7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    q, r = np.zeros(4, np.int32), np.zeros(4, np.int32)
    make_kernel(TWO_OUT_SRC)[(1,)](a, b, q, r, N=4)
    assert q.tolist() == [-3, 3, 3, -3] and r.tolist() == [-1, 1, -1, 1], f"S1.1: q={q}, r={r}"


def test_row3_runtime_scalar_args_use_c_semantics():
    q, r = np.zeros(1, np.int32), np.zeros(1, np.int32)
    run_kernel("""
    @triton.jit
    def runtime_scalars(Q, R, a, b):
        tl.store(Q, a // b)
        tl.store(R, a % b)
    """, q, r, -7, 2)
    assert (q[0], r[0]) == (-3, -1), f"S1.3: -7 // 2, -7 % 2 with run-time int32 args gave {q[0]}, {r[0]}"


def test_row4_constexpr_only_uses_python_semantics():
    """OVERRIDES['constexpr_python_semantics']: every operand constexpr -> Python floor semantics."""
    k = make_kernel("""
    @triton.jit
    def constexpr_ops(Q, R, A: tl.constexpr, B: tl.constexpr):
        tl.store(Q, A // B)
        tl.store(R, A % B)
    """)
    q, r = np.zeros(1, np.int32), np.zeros(1, np.int32)
    k[(1,)](q, r, A=-7, B=2)
    assert (q[0], r[0]) == (-4, 1), f"S1.4: constexpr -7 // 2, -7 % 2 gave {q[0]}, {r[0]}"


def test_row5_int_div_by_zero(group_size_one):
    """OVERRIDES['int_div_by_zero']: int32 x // 0 == -1 and x % 0 == x, computed in one kernel."""
    x = np.array([7, -7, 0, 1], np.int32)
    q, r = np.zeros(4, np.int32), np.zeros(4, np.int32)
    make_kernel(TWO_OUT_SRC)[(1,)](x, np.zeros(4, np.int32), q, r, N=4)
    want_q, want_r = zip(*[OVERRIDES["int_div_by_zero"].fn(int(v)) for v in x])
    assert q.tolist() == list(want_q) == [-1] * 4, f"S1.5: x // 0 = {q}"
    assert r.tolist() == list(want_r) == [7, -7, 0, 1], f"S1.5: x % 0 = {r}"


@pytest.mark.parametrize("t", INT_TYPES)
def test_int_min_div_minus_one(t):
    """OVERRIDES['int_min_div_minus_one'] (GPU probe): MIN // -1 == MIN, MIN % -1 == 0."""
    lo, hi = int_range(t)
    x = to_buffer([lo, lo + 1, -7, 7], t)
    y = to_buffer([-1, -1, -1, -1], t)
    q, r = empty_buffer(4, t), empty_buffer(4, t)
    make_kernel(TWO_OUT_SRC)[(1,)](x, y, q, r, N=4)
    assert q.tolist() == [lo, hi, 7, -7] and r.tolist() == [0, 0, 0, 0], f"{t}: MIN // -1 -> {q}, % -> {r}"


def test_row6_int32_wraps():
    k = make_kernel("""
    @triton.jit
    def wrap_kernel(X, Z):
        a = tl.load(X)
        tl.store(Z + 0, a + 1)
        tl.store(Z + 1, a * 2)
        tl.store(Z + 2, (a + 1) // 2)
    """)
    z = np.zeros(3, np.int32)
    k[(1,)](np.array([2147483647], np.int32), z)
    assert z.tolist() == [-2147483648, -2, -1073741824], f"S1.6: {z}"


def test_row11_prefer_unsigned():
    z = np.zeros(1, np.int64)
    k = make_kernel("""
    @triton.jit
    def mixed_sign(A, B, Z):
        s = tl.load(A) + tl.load(B)
        tl.static_assert(s.dtype == tl.uint32, "int32 + uint32 must be uint32")
        tl.store(Z, s)
    """)
    k[(1,)](np.array([-1], np.int32), np.array([1], np.uint32), z)
    assert z[0] == 0, f"S1.11: int32(-1) + uint32(1) read as int64 = {z[0]}"


def test_row12_float_mod_measured():
    x = np.array([-7.5, 7.5, -7.5, 7.5], np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    z = np.zeros(4, np.float32)
    make_kernel(MINMAX_SRC.format(expr="x % y"))[(1,)](x, y, z, ZTY=tl.float32, N=4)
    assert z.tolist() == [-1.5, 1.5, -1.5, 1.5], f"S1.12: {z}"


def test_float_mod_is_frem_not_fmod():
    """OVERRIDES['float_mod_frem'], values from the GPU probe (fp32 and fp64)."""
    cases = {
        "float32": [(5.1, 0.1, -1.7136335372924805e-07), (1e10, 0.7, 67.89898681640625), (-0.0, 1.0, 0.0),
                    (1e38, 1e-38, -math.inf), (-1e20, 0.3, 455205715968.0), (7.5, 2.0, 1.5), (3.0, 0.0, math.nan),
                    (5.0, math.inf, 5.0), (math.inf, 2.0, math.nan)],
        "float64": [(1e30, 3.0, 70368744177664.0), (-0.0, 1.0, 0.0), (1e38, 1e-38, -3.1491438001217895e+21),
                    (-1e20, 0.3, 9406.456584582811), (-7.5, 2.0, -1.5)],
    }
    for t, rows in cases.items():
        x, y, want = (np.array(c, dtype=NP_STORAGE[t]) for c in zip(*rows))
        n = 16
        xs, ys = np.resize(x, n), np.resize(y, n)
        z = np.zeros(n, NP_STORAGE[t])
        make_kernel(MINMAX_SRC.format(expr="x % y"))[(1,)](xs, ys, z, ZTY=tl_type(t), N=n)
        assert_same(z[:len(rows)], want, t, f"`x % y` with {t} (GPU probe)", [("x", x), ("y", y)])
        ref = [OVERRIDES["float_mod_frem"].fn(float(a), float(b), t) for a, b in zip(x, y)]
        assert_same(ref, want, t, f"reference frem formula for {t} against the GPU probe", [("x", x), ("y", y)])


def test_float_mod_of_constants_is_folded_as_fmod():
    """`%` of two constants is folded by Triton's compiler with IEEE fmod (Triton 3.6's TTIR for sm_90 stores
    dense<-0.0> and dense<0.0999998301> for the two cases below; the H200 stored -0.0 for the first), while the
    same values loaded from memory go through the run-time lowering: +0.0 and -1.7e-07."""
    k = make_kernel("""
    @triton.jit
    def mods(X, Y, Z):
        o = tl.arange(0, 4)
        tl.store(Z + o, tl.full((4,), -31, tl.int64) % tl.full((4,), 0.25, tl.float16))
        tl.store(Z + 4 + o, tl.full((4,), 5.1, tl.float32) % tl.full((4,), 0.1, tl.float32))
        tl.store(Z + 8 + o, tl.load(X + o) % 0.25)
        tl.store(Z + 12 + o, tl.load(X + o) % tl.load(Y + o))
        tl.store(Z + 16 + o, tl.full((4,), -4.0, tl.float64).to(tl.float32) % 1.0)
    """)
    x = np.array([-31.0, 5.1, -4.0, -0.0], np.float32)
    y = np.array([0.25, 0.1, 1.0, 1.0], np.float32)
    z = np.full(20, 7.0, np.float32)
    k[(1,)](x, y, z)
    bits = lambda v: np.asarray(v, np.float32).view(np.uint32).tolist()  # noqa: E731 - the signs of zeros count
    assert bits(z[:4]) == bits([-0.0] * 4)
    assert bits(z[4:8]) == bits([np.fmod(np.float32(5.1), np.float32(0.1))] * 4) and z[4] > 0.0999
    assert bits(z[12:16]) == bits([0.0, -1.7136335372924805e-07, 0.0, 0.0])      # run time: fma(-trunc(x/y), y, x)
    # a constant 0.25 is a power of two below 1: the run-time lowering, +0.0 (the H200 stored +0.0 for
    # -3.0 % 0.25 and -0.0 % 0.25, 2026-12-01); S15.24 is for 2**k, k >= 0
    assert bits(z[8:12]) == bits([0.0, 0.09999990463256836, 0.0, 0.0])
    # a cast of a constant divided by a power of two: -0.0, as the compiler folds it (TTIR: dense<-0.0>)
    assert bits(z[16:20]) == bits([-0.0] * 4)


def test_float_mod_by_a_constant_power_of_two_keeps_the_sign_of_x():
    """S15.24, the H200 probe of 2026-12-01 (Triton 3.6, 1,024 lanes, x loaded): `x % c` for a constant 2**k,
    k >= 0, is fmod (a zero remainder is -0.0 for negative x); a non-power-of-two constant or a loaded
    divisor goes through the run-time lowering (S15.1, +0.0)."""
    k = make_kernel("""
    @triton.jit
    def mods(X, Y, Z):
        o = tl.arange(0, 16)
        x = tl.load(X + o)
        tl.store(Z + o, x % 1.0)
        tl.store(Z + 16 + o, x % -1.0)
        tl.store(Z + 32 + o, x % 65536.0)
        tl.store(Z + 48 + o, x % tl.full((16,), 2.0, tl.float32))
        tl.store(Z + 64 + o, (x.to(tl.float16) % 1.0).to(tl.float32))
        tl.store(Z + 80 + o, x % 3.0)
        tl.store(Z + 96 + o, x % tl.load(Y + o))
        tl.store(Z + 112 + o, x % 0.5)
        tl.store(Z + 128 + o, (x.to(tl.bfloat16) % tl.full((16,), 0.25, tl.bfloat16)).to(tl.float32))
    """)
    x = np.array([-3., -2.5, -0.0, 0.0, 3.0, 5.1, -7.5, -16256., 1e30, -1e30, np.inf, np.nan, 1e-45, -1e-45,
                  0.75, -0.75], np.float32)
    z = np.zeros(144, np.float32)
    k[(1,)](x, np.ones(16, np.float32), z)
    def bits(v):  # the signs of zeros count; any NaN is a NaN (the probe recorded no NaN payloads)
        v = np.asarray(v, np.float32)
        return np.where(np.isnan(v), np.float32(np.nan), v).view(np.uint32).tolist()
    gpu_mod1 = [-0.0, -0.5, -0.0, 0.0, 0.0, 0.09999990463256836, -0.5, -0.0, 0.0, -0.0, np.nan, np.nan,
                1.401298464324817e-45, -1.401298464324817e-45, 0.75, -0.75]
    assert bits(z[:16]) == bits(gpu_mod1) and bits(z[16:32]) == bits(gpu_mod1)
    assert bits(z[32:48]) == bits([-3.0, -2.5, -0.0, 0.0, 3.0, 5.1, -7.5, -16256.0, 0.0, -0.0, np.nan, np.nan,
                                   1e-45, -1e-45, 0.75, -0.75])
    with np.errstate(invalid="ignore"):                                 # fmod(inf, 2) is NaN, as on the GPU
        assert bits(z[48:64]) == bits(np.fmod(x, np.float32(2.0)))
    assert bits(z[64:80])[:8] == bits([-0.0, -0.5, -0.0, 0.0, 0.0, 0.1015625, -0.5, -0.0])
    assert bits(z[80:96])[:4] == bits([0.0, -2.5, 0.0, 0.0])          # 3.0: not a power of two, run time (+0.0)
    assert bits(z[96:112])[:4] == bits([0.0, -0.5, 0.0, 0.0])         # loaded 1.0: run time (+0.0)
    # 0.5 and 0.25 are powers of two below 1: run time, +0.0 (H200, 2026-12-02: bf16 -0.5 % 0.5 is +0.0)
    assert bits(z[112:128])[:4] == bits([0.0, 0.0, 0.0, 0.0])
    assert bits(z[128:144])[:4] == bits([0.0, 0.0, 0.0, 0.0])


def test_row22_bf16_add_and_compare():
    a, b = BF16.of([2.5, -5, 1, 3]), BF16.of([2, -2, 1, -3])
    z, lt = BF16.zeros(4), np.zeros(4, bool)
    k = make_kernel("""
    @triton.jit
    def bf16_ops(A, B, Z, LT):
        o = tl.arange(0, 4)
        a = tl.load(A + o)
        b = tl.load(B + o)
        tl.store(Z + o, a + b)
        tl.store(LT + o, a < b)
    """)
    k[(1,)](a, b, z, lt)
    assert z.array.tolist() == [0x4090, 0xC0E0, 0x4000, 0x0000], f"S1.22 bits: {[hex(v) for v in z.array]}"
    assert lt.tolist() == [False, True, False, False], f"S1.22 a<b: {lt}"


def test_rows44_45_47_promotions():
    k = make_kernel("""
    @triton.jit
    def promos(BF, H, I, F32, F16, D):
        i = tl.load(I)
        s1 = tl.load(BF) + i          # S1.44: bf16 + int32 -> fp32
        s2 = tl.load(H) + i           # S1.45: fp16 + int32 -> fp16
        d = tl.load(I + 1) / 2        # S1.47: int32 / int -> fp32 true division
        tl.static_assert(s1.dtype == tl.float32, "bf16 + int32")
        tl.static_assert(s2.dtype == tl.float16, "fp16 + int32")
        tl.static_assert(d.dtype == tl.float32, "int32 / int")
        tl.store(F32, s1)
        tl.store(F16, s2)
        tl.store(D, d)
    """)
    f32, f16, d = np.zeros(1, np.float32), np.zeros(1, np.float16), np.zeros(1, np.float32)
    k[(1,)](BF16.of([1.0]), np.array([1.0], np.float16), np.array([2048, 7], np.int32), f32, f16, d)
    assert f32[0] == 2049.0, f"S1.44: bf16 1.0 + 2048 = {f32[0]}"
    assert f16[0] == 2048.0, f"S1.45: fp16 1.0 + 2048 = {f16[0]}"
    assert d[0] == 3.5, f"S1.47: 7 / 2 = {d[0]}"


def test_narrow_float_division_returns_fp32():
    """OVERRIDES['narrow_float_div_mod_fp32']: fp16 / fp16 and bf16 % bf16 are fp32."""
    check_binary("/", "float16", "float16", modes=("tensor-tensor",))
    check_binary("%", "bfloat16", "bfloat16", modes=("tensor-tensor",))
    assert result_type("/", "float16", "float16") == "float32"


# ----------------------------------------------------------------------------- hypothesis: random values

def _float_strategy(t):
    if t == "float64":
        return st.floats(allow_nan=True, allow_infinity=True)
    width = 16 if t == "float16" else 32
    base = st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True)
    if t == "bfloat16":
        return base.map(lambda v: float(round_to([v], "bfloat16")[0]))
    return base


def _int_strategy(t):
    lo, hi = int_range(t)
    return st.integers(lo, hi)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.sampled_from(FLOAT_TYPES), op=st.sampled_from(["+", "-", "*", "/", "%", "<", "!="]))
def test_hypothesis_float_ops(data, t, op):
    """Random floats incl. NaN, inf, -0.0 and subnormals, exact except the measured fp32 `/` envelope."""
    xs = data.draw(st.lists(_float_strategy(t), min_size=16, max_size=16), label="x")
    ys = data.draw(st.lists(_float_strategy(t), min_size=16, max_size=16), label="y")
    check_binary(op, t, t, modes=("tensor-tensor",), x_values=xs, y_values=ys)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.sampled_from(INTEGRAL_TYPES), op=st.sampled_from(["+", "-", "*", "//", "%", "&", "^"]))
def test_hypothesis_int_ops_full_range(data, t, op):
    """Full-range integers: wrap-around, C division (divisor 0 excluded: see row 5)."""
    xs = data.draw(st.lists(_int_strategy(t), min_size=16, max_size=16), label="x")
    ys = data.draw(st.lists(_int_strategy(t).filter(lambda v: v != 0 or op not in ("//", "%")),
                            min_size=16, max_size=16), label="y")
    check_binary(op, t, t, modes=("tensor-tensor",), x_values=xs, y_values=ys)


@settings(max_examples=30, deadline=None)
@given(x=st.integers(-2**31, 2**31 - 1), y=st.integers(-2**31, 2**31 - 1).filter(lambda v: v not in (0,)))
def test_hypothesis_int32_floordiv_truncates(x, y):
    q, r = np.zeros(1, np.int32), np.zeros(1, np.int32)
    make_kernel(TWO_OUT_SRC)[(1,)](np.array([x], np.int32), np.array([y], np.int32), q, r, N=1)
    want_q = wrap(_c_div(x, y), "int32")
    assert (q[0], r[0]) == (want_q, wrap(x - y * want_q, "int32")), f"{x} // {y}, {x} % {y}: got {q[0]}, {r[0]}"


@settings(max_examples=30, deadline=None)
@given(xs=st.lists(_float_strategy("bfloat16"), min_size=8, max_size=8),
       ys=st.lists(_float_strategy("bfloat16"), min_size=8, max_size=8))
def test_hypothesis_bf16_rounds_after_each_op(xs, ys):
    """OVERRIDES['bf16_rtne_each_op']: (x + y) - x * 0.5 in bf16 rounds after the +, the * and the -."""
    z = BF16.zeros(8)
    make_kernel(MINMAX_SRC.format(expr="(x + y) - x * 0.5"))[(1,)](BF16.of(xs), BF16.of(ys), z,
                                                                     ZTY=tl.bfloat16, N=8)
    with np.errstate(all="ignore"):
        s = round_to(np.add(xs, ys), "bfloat16")
        h = round_to(np.multiply(xs, 0.5), "bfloat16")
        want = round_to(np.subtract(s, h), "bfloat16")
    assert_same(z.values(), want, "bfloat16", "`(x + y) - x * 0.5` with bf16", [("x", xs), ("y", ys)])


@pytest.mark.parametrize("t", ["int8", "int32", "uint8", "uint32", "int64"])
def test_shift_out_of_range_measured(t):
    """OVERRIDES['shift_amount_clamped'], values from the GPU probe."""
    w = BITS[t]
    if t.startswith("int"):
        xs, ys = [1, -8, 7, -1, 1, -8, 5, -3], [w, w + 1, w + 8, -1, w - 1, 0, 2 * w, 100]
        shl = [0, 0, 0, 0, -(1 << (w - 1)), -8, 0, 0]
        shr = [0, -1, 0, -1, 0, -8, 0, -1]
    else:
        big = 200 if w == 8 else 4000000000
        xs, ys = [1, big, 7, 1, 1, 9, 5, 3], [w, w + 1, w + 8, (1 << w) - 1, w - 1, 0, 2 * w, 100]
        shl = [0, 0, 0, 0, 1 << (w - 1), 9, 0, 0]
        shr = [0, 0, 0, 0, 0, 9, 0, 0]
    for op, want in (("<<", shl), (">>", shr)):
        z = empty_buffer(8, t)
        make_kernel(TT_SRC.format(expr=f"x {op} y"))[(1,)](to_buffer(xs, t), to_buffer(ys, t), z, ZTY=tl_type(t), N=8)
        assert from_buffer(z, t).tolist() == want, f"`x {op} y` with {t} (GPU probe): {z.tolist()} != {want}"
        ref = [wrap(expected_binary(op, t, a, wrap(b, t)), t) for a, b in zip(xs, ys)]
        assert ref == want, f"reference shift rule for {t} {op}: {ref} != {want}"


def test_row53_shifts():
    x = np.array([-8, 7, -1, 3], np.int32)
    z1, z2 = np.zeros(4, np.int32), np.zeros(4, np.int32)
    k = make_kernel("""
    @triton.jit
    def shifts(X, A, B):
        o = tl.arange(0, 4)
        x = tl.load(X + o)
        tl.store(A + o, x >> 1)
        tl.store(B + o, x << 31)
    """)
    k[(1,)](x, z1, z2)
    assert z1.tolist() == [-4, 3, -1, 1] and z2.tolist() == [0, -2**31, -2**31, -2**31], f"S1.53: {z1} {z2}"


def test_int1_division_remainder_and_shifts_fold_as_on_the_gpu():
    """int1 is a 1-bit unsigned integer and LLVM folds its //, %, << and >> (a divisor or shift amount can only
    be 0 or 1, and 0 or a shift by 1 is undefined): x // y is x, x % y is 0, shifts give x. H200, probe
    int1_div_mod_shift."""
    k = make_kernel("""
    @triton.jit
    def k(X, Y, Z):
        o = tl.arange(0, 4)
        x = tl.load(X + o) != 0
        y = tl.load(Y + o) != 0
        tl.store(Z + o, (x // y).to(tl.int32))
        tl.store(Z + 4 + o, (x % y).to(tl.int32))
        tl.store(Z + 8 + o, (x << y).to(tl.int32))
        tl.store(Z + 12 + o, (x >> y).to(tl.int32))
    """)
    z = np.full(16, -1, np.int32)
    k[(1,)](np.array([0, 0, 1, 1], np.int8), np.array([0, 1, 0, 1], np.int8), z)
    np.testing.assert_array_equal(z, [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1])


@pytest.mark.parametrize("dt, bits", [("float32", np.uint32), ("float64", np.uint64)])
def test_bitwise_atomics_on_floats_work_on_the_bits(dt, bits):
    """3.6 compiles tl.atomic_and/or/xor on fp32/fp64 (only fp16/bf16 and narrow ints are refused): the update is
    bitwise on the bit patterns, and the old values come back (H200, probe atomic_bitwise_on_fp32)."""
    k = make_kernel("""
    @triton.jit
    def bits_kernel(A, O, X, Y, Z):
        r = tl.arange(0, 4)
        v = tl.load(A + r)
        tl.store(O + r, tl.atomic_and(X + r, v))
        tl.atomic_or(Y + r, v)
        tl.atomic_xor(Z + r, v)
    """)
    a = np.array([1.5, -2.0, 0.1, 7.25], dt)
    start = np.array([3.0, 6.5, -0.75, 0.5], dt)
    o, x, y, z = np.zeros(4, dt), start.copy(), start.copy(), start.copy()
    k[(1,)](a, o, x, y, z)
    ab, sb = a.view(bits), start.view(bits)
    np.testing.assert_array_equal(o.view(bits), sb)
    np.testing.assert_array_equal(x.view(bits), sb & ab)
    np.testing.assert_array_equal(y.view(bits), sb | ab)
    np.testing.assert_array_equal(z.view(bits), sb ^ ab)


LOGIC_CASES = [   # (body, result for x = [0, 1, 2, 5], n = 5, or the error; 3.6 offline sm_90 compiles agree)
    ("r = (not (x != 0)).to(tl.int32)", [1, 0, 0, 0]),
    ("r = ((x > 1) and (x < 4)).to(tl.int32)", [0, 0, 1, 0]),
    ("r = ((x > 3) or (x < 1)).to(tl.int32)", [1, 0, 0, 1]),
    ("r = ((x > 0) and (x < 4) and (x != 2)).to(tl.int32)", [0, 1, 0, 0]),
    ("r = (C and (x > 1)).to(tl.int32)", [0, 0, 1, 1]),             # a true constexpr drops out
    ("r = (D and (x > 1)) + tl.zeros((4,), tl.int32)", [0, 0, 0, 0]),  # a false one decides: x > 1 never runs
    ("r = ((n > 3) and (x > 1)).to(tl.int32)", [0, 0, 1, 1]),
    ("r = (not (n > 3)).to(tl.int32) + tl.zeros((4,), tl.int32)", [0, 0, 0, 0]),
    ("r = (not x).to(tl.int32)", "Cannot bitcast data-type of size 32 to data-type of size 1"),
    ("r = (x and x).to(tl.int32)", "Cannot bitcast data-type of size 32 to data-type of size 1"),
]


@pytest.mark.parametrize("body, want", LOGIC_CASES, ids=[c[0][4:40] for c in LOGIC_CASES])
def test_not_and_or_on_tensors_are_elementwise(body, want, recwarn):
    """Triton 3.6 compiles `not x` to an int1 invert and `a and b` / `a or b` to logical_and / logical_or of
    every tensor operand (constexpr operands short-circuit or drop out); non-int1 tensors fail to bitcast to
    int1. Python would call bool() on a block instead."""
    k = make_kernel(f"""
    @triton.jit
    def logic_kernel(X, Z, n, C: tl.constexpr, D: tl.constexpr):
        x = tl.load(X + tl.arange(0, 4))
        {body}
        tl.store(Z + tl.arange(0, 4), r)
    """)
    z = np.full(4, -1, np.int32)
    run = lambda: k[(1,)](np.array([0, 1, 2, 5], np.int32), z, 5, C=True, D=False)  # noqa: E731
    if isinstance(want, str):
        with pytest.raises(minitriton.CompilationError, match=want):
            run()
        return
    run()
    np.testing.assert_array_equal(z, want)
    block_operand = (" and (x" in body or " or (x" in body) and "D and" not in body
    deprecated = [w for w in recwarn if "Logical operators 'and' and 'or' are deprecated" in str(w.message)]
    assert bool(deprecated) == block_operand, [str(w.message) for w in recwarn]
