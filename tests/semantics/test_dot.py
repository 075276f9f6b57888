"""`tl.dot` against float64 / exact integer references: TF32 truncation by default for fp32 (measured on an
H200), ieee and tf32x3, fp16/bf16 products accumulated in fp32, out_dtype=float16 rounding once, int8 -> int32,
`acc=`, 3-D batched dots, and Triton 3.6's shape and dtype errors (OVERRIDES['dot_*'] in test_ops_elementwise).
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from helpers.kernels import make_kernel
from helpers.dtypes import BF16, bf16_bits, round_to

DOT_SRC = """
@triton.jit
def dot_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, CTY: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = {expr}
    tl.static_assert(c.dtype == CTY, "dot result dtype")
    tl.store(C + rm[:, None] * N + rn[None, :], c)
"""


def run_dot(a, b, expr="tl.dot(a, b)", cty=tl.float32, out=None):
    m, k = np.shape(a.array if isinstance(a, BF16) else a)
    n = np.shape(b.array if isinstance(b, BF16) else b)[1]
    c = out if out is not None else np.zeros((m, n), {tl.float32: np.float32, tl.float16: np.float16,
                                                       tl.int32: np.int32, tl.float64: np.float64}[cty])
    make_kernel(DOT_SRC.format(expr=expr))[(1,)](a, b, c, M=m, N=n, K=k, CTY=cty)
    return c


def tf32(x):
    """OVERRIDES['dot_tf32_truncates']: clear the low 13 mantissa bits (round toward zero)."""
    x = np.asarray(x, np.float32)
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def fp32_bound(a, b):
    """|error| bound for an fp32-accumulated product of exactly-multiplied inputs: K ulps of sum |a||b|."""
    k = a.shape[1]
    return k * 2.0**-24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))) + 1e-30


@pytest.fixture(autouse=True)
def _no_precision_override(monkeypatch):
    monkeypatch.delenv("TRITON_F32_DEFAULT", raising=False)


def test_row43_tf32_truncates_both_operands():
    """S1.43: A = I·x or B = I·x; the GPU returns the truncated x."""
    xs = [1 + 2**-11, 1 + 2**-10 + 2**-11, 1 + 2**-11 + 2**-12, -(1 + 2**-11), 1 + 2**-13]
    want = [1.0, 1.0009765625, 1.0, -1.0, 1.0]
    eye = np.eye(16, dtype=np.float32)
    for x, w in zip(xs, want):
        on_a = run_dot((eye * np.float32(x)).astype(np.float32), eye)
        on_b = run_dot(eye, (eye * np.float32(x)).astype(np.float32))
        assert on_a[0, 0] == w and on_b[0, 0] == w, f"tf32 dot of {x!r}: A side {on_a[0, 0]!r}, B side {on_b[0, 0]!r}"
        assert tf32([x])[0] == w, "reference truncation disagrees with the measurement"
    ieee = run_dot((eye * np.float32(1 + 2**-11)).astype(np.float32), eye, 'tl.dot(a, b, input_precision="ieee")')
    assert ieee[0, 0] == np.float32(1 + 2**-11), f"ieee keeps every bit: {ieee[0, 0]!r}"


@pytest.mark.parametrize("m, n, k", [(16, 16, 16), (32, 16, 64), (8, 8, 16), (64, 32, 32)])
def test_fp32_tf32_default_against_truncated_reference(m, n, k):
    rng = np.random.default_rng(m * 1000 + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = run_dot(a, b)
    ref = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    bound = fp32_bound(tf32(a), tf32(b))
    assert np.all(np.abs(c - ref) <= bound), f"tf32 dot {m}x{n}x{k}: max error {np.abs(c - ref).max()} vs truncated ref"
    untruncated = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - untruncated).max() > 1e-4, "the default fp32 dot did not lose the low mantissa bits (TF32)"


@pytest.mark.parametrize("expr", ['tl.dot(a, b, input_precision="ieee")', "tl.dot(a, b, allow_tf32=False)",
                                  'tl.dot(a, b, input_precision="tf32x3")'])
def test_fp32_ieee_and_tf32x3(expr):
    """ieee is plain fp32; tf32x3 is within the measured 8e-6 of it (S1.25)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    c = run_dot(a, b, expr)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.all(np.abs(c - ref) <= fp32_bound(a, b)), f"`{expr}`: max error {np.abs(c - ref).max()}"
    assert np.abs(c - ref).max() < 2e-5, f"`{expr}` is not fp32-accurate: {np.abs(c - ref).max()}"


def test_fp32_small_integers_exact_in_every_precision():
    rng = np.random.default_rng(2)
    a = rng.integers(-8, 8, (16, 32)).astype(np.float32)
    b = rng.integers(-8, 8, (32, 16)).astype(np.float32)
    want = a.astype(np.int64) @ b.astype(np.int64)
    for expr in ("tl.dot(a, b)", 'tl.dot(a, b, input_precision="ieee")', 'tl.dot(a, b, input_precision="tf32x3")'):
        assert np.array_equal(run_dot(a, b, expr), want), f"`{expr}` on small integers"


@pytest.mark.parametrize("t", ["float16", "bfloat16"])
def test_fp16_bf16_exact_products_fp32_accumulation(t):
    """S1.27, S1.28: exact products of fp16/bf16 values, fp32 accumulation, fp32 result."""
    rng = np.random.default_rng(3)
    a = round_to(rng.standard_normal((16, 32)), t).reshape(16, 32)
    b = round_to(rng.standard_normal((32, 16)), t).reshape(32, 16)
    wrap = (lambda v: BF16.of(v)) if t == "bfloat16" else (lambda v: v.astype(np.float16))
    c = run_dot(wrap(a), wrap(b))
    ref = a @ b  # float64: every product is exact
    bound = fp32_bound(a, b)
    assert np.all(np.abs(c - ref) <= bound), f"{t} dot: max error {np.abs(c - ref).max()} (fp32 accumulation)"
    ints = rng.integers(-16, 16, (16, 16)).astype(np.float64)
    c2 = run_dot(wrap(ints), wrap(ints.T.copy()))
    assert np.array_equal(c2, ints @ ints.T), f"{t} dot of exactly representable values is not exact"


def test_fp16_accumulates_in_fp32_not_fp16():
    """2048 + fifteen 1s = 2063: fp32 accumulation keeps it (fp16 accumulation would stall at 2048)."""
    a = np.ones((16, 16), np.float16)
    b = np.zeros((16, 16), np.float16)
    b[0, :] = 2048
    b[1:, :] = 1
    c = run_dot(a, b)
    assert (c == 2063).all(), f"fp16 dot accumulation: {c[0, 0]}"


def test_row55_out_dtype_float16_rounds_once():
    """S1.55: exact sum 2063, out_dtype=tl.float16 -> 2064.0 (accumulate wide, round once)."""
    a = np.ones((16, 16), np.float16)
    b = np.zeros((16, 16), np.float16)
    b[0, :] = 2048
    b[1:, :] = 1
    c = run_dot(a, b, "tl.dot(a, b, out_dtype=tl.float16)", cty=tl.float16)
    assert (c == 2064).all(), f"S1.55: {c[0, 0]}"


def test_bf16_out_dtype_rejected():
    a = np.ones((16, 16), np.float16)
    with pytest.raises(minitriton.CompilationError,
                       match="out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16"):
        run_dot(a, a, "tl.dot(a, b, out_dtype=tl.bfloat16)", cty=tl.bfloat16, out=BF16.zeros((16, 16)))


def test_int8_accumulates_in_int32():
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    a[0, :] = 127
    b[:, 0] = 127
    c = run_dot(a, b, cty=tl.int32)
    assert np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64)), "int8 dot"
    assert c[0, 0] == 32 * 127 * 127, f"int8 dot overflowed below int32: {c[0, 0]}"


def test_fp64_dot():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((16, 16)), rng.standard_normal((16, 16))
    c = run_dot(a, b, cty=tl.float64)
    assert np.allclose(c, a @ b, rtol=1e-13, atol=1e-13), "fp64 dot"


def test_acc_argument():
    k = make_kernel("""
    @triton.jit
    def dot_acc(A, B, C, C16):
        r = tl.arange(0, 16)
        a = tl.load(A + r[:, None] * 16 + r[None, :])
        b = tl.load(B + r[:, None] * 16 + r[None, :])
        acc = tl.full((16, 16), 0.5, tl.float32)
        acc = tl.dot(a, b, acc)
        acc = tl.dot(a, b, acc=acc)
        tl.store(C + r[:, None] * 16 + r[None, :], acc)
        acc16 = tl.zeros((16, 16), tl.float16) + 1.0
        acc16 = tl.dot(a.to(tl.float16), b.to(tl.float16), acc16, out_dtype=tl.float16)
        tl.static_assert(acc16.dtype == tl.float16, "fp16 accumulator")
        tl.store(C16 + r[:, None] * 16 + r[None, :], acc16)
    """)
    rng = np.random.default_rng(6)
    a = rng.integers(-4, 4, (16, 16)).astype(np.float32)
    b = rng.integers(-4, 4, (16, 16)).astype(np.float32)
    c, c16 = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float16)
    k[(1,)](a, b, c, c16)
    assert np.array_equal(c, 0.5 + 2 * (a @ b)), "dot with acc= accumulates onto acc"
    assert np.array_equal(c16, (1.0 + a @ b).astype(np.float16)), "fp16 dot with an fp16 accumulator"


def test_acc_errors():
    """Triton 3.6 core.dot: "accumulator shape is incompatible"; semantic.dot's dtype check is a bare assert."""
    for expr, pattern in (
            ("tl.dot(a, b, tl.zeros((16, 8), tl.float32))", "accumulator shape is incompatible"),
            ("tl.dot(a, b, tl.zeros((16, 16), tl.float16), out_dtype=tl.float32)", None),
    ):
        with pytest.raises(minitriton.CompilationError, match=pattern) as info:
            run_dot(np.ones((16, 16), np.float32), np.ones((16, 16), np.float32), expr)
        assert isinstance(info.value.error, AssertionError)


@pytest.mark.parametrize("dtype, acc_type, k", [
    (np.float16, "tl.float16", 16), (np.int8, "tl.int32", 32), (np.float64, "tl.float64", 16)])
def test_acc_dtype_needs_out_dtype(dtype, acc_type, k):
    """Triton 3.6 defaults out_dtype to float32 and asserts `acc.type.element_ty == out_dtype` (semantic.py:1558,
    no message), int8 inputs included: an fp16, int32 or fp64 accumulator is refused unless out_dtype= names its
    type (3.9 takes the accumulator's type). The 3.6 interpreter raises AssertionError() for all three."""
    kernel = make_kernel(f"""
    @triton.jit
    def dot_acc_type(A, C, K: tl.constexpr, OUT: tl.constexpr):
        r = tl.arange(0, 16)
        rk = tl.arange(0, K)
        a = tl.load(A + r[:, None] * K + rk[None, :])
        b = tl.load(A + rk[:, None] * 16 + r[None, :])
        acc = tl.zeros((16, 16), {acc_type})
        if OUT:
            c = tl.dot(a, b, acc, out_dtype={acc_type})
        else:
            c = tl.dot(a, b, acc)
        tl.store(C + r[:, None] * 16 + r[None, :], c)
    """)
    a = np.ones(16 * k, dtype)
    c = np.zeros((16, 16), {"tl.float16": np.float16, "tl.int32": np.int32, "tl.float64": np.float64}[acc_type])
    with pytest.raises(minitriton.CompilationError) as info:
        kernel[(1,)](a, c, K=k, OUT=False)
    assert type(info.value.error) is AssertionError and str(info.value.error) == ""
    assert "c = tl.dot(a, b, acc)" in str(info.value)
    kernel[(1,)](a, c, K=k, OUT=True)
    assert (c == k).all(), c


def test_batched_3d_dot():
    k = make_kernel("""
    @triton.jit
    def bdot(A, B, C):
        rb = tl.arange(0, 2)
        r = tl.arange(0, 16)
        off = rb[:, None, None] * 256 + r[None, :, None] * 16 + r[None, None, :]
        c = tl.dot(tl.load(A + off), tl.load(B + off))
        tl.static_assert(c.shape == (2, 16, 16), "batched shape")
        tl.store(C + off, c)
    """)
    rng = np.random.default_rng(7)
    a = rng.integers(-8, 8, (2, 16, 16)).astype(np.float16)
    b = rng.integers(-8, 8, (2, 16, 16)).astype(np.float16)
    c = np.zeros((2, 16, 16), np.float32)
    k[(1,)](a, b, c)
    assert np.array_equal(c, np.matmul(a.astype(np.float64), b.astype(np.float64))), "3-D batched dot"


@pytest.mark.parametrize("a_shape, b_shape, dtype, pattern", [
    ((16, 8), (8, 16), np.float16, "Input shapes should have M >= 1, N >= 1 and K >= 16"),
    ((16, 4), (4, 16), np.float32, "Input shapes should have M >= 1, N >= 1 and K >= 8"),
    ((16, 16), (16, 16), np.int8, "Input shapes should have M >= 1, N >= 1 and K >= 32"),
    ((16, 16), (32, 16), np.float16, "are not compatible for matmul"),
])
def test_dot_shape_errors(a_shape, b_shape, dtype, pattern):
    """Triton's NVIDIA minimum (S1.29, S8.5: fp32 K >= 8 from Triton 3.9) and the inner-dimension check."""
    a = np.ones(a_shape, dtype)
    b = np.ones(b_shape, dtype)
    k = make_kernel("""
    @triton.jit
    def dot_shapes(A, B, C, M: tl.constexpr, K1: tl.constexpr, K2: tl.constexpr, N: tl.constexpr):
        a = tl.load(A + tl.arange(0, M)[:, None] * K1 + tl.arange(0, K1)[None, :])
        b = tl.load(B + tl.arange(0, K2)[:, None] * N + tl.arange(0, N)[None, :])
        tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b))
    """)
    with pytest.raises(minitriton.CompilationError, match=pattern):
        k[(1,)](a, b, np.zeros((a_shape[0], b_shape[1]), np.float32), M=a_shape[0], K1=a_shape[1], K2=b_shape[0],
                N=b_shape[1])


def test_row30_small_m_n_accepted():
    """S1.30: fp16 8x8x16 is fine (NVIDIA pads small M/N)."""
    a = np.ones((8, 16), np.float16)
    b = np.ones((16, 8), np.float16)
    assert (run_dot(a, b) == 16).all()


@pytest.mark.parametrize("expr, a_dt, b_dt, pattern", [
    ("tl.dot(a, b)", np.float16, np.float32, "Both operands must be same dtype. Got fp16 and fp32"),
    ("tl.dot(a, b)", np.int16, np.int16, "Unsupported lhs dtype int16"),
    ("tl.dot(a, b)", np.uint8, np.uint8, "only int8 supported!"),
    ('tl.dot(a, b, input_precision="fast")', np.float32, np.float32, "input_precision must be one of"),
])
def test_dot_dtype_errors(expr, a_dt, b_dt, pattern):
    a = np.ones((32, 32), a_dt)
    b = np.ones((32, 32), b_dt)
    with pytest.raises(minitriton.CompilationError, match=pattern):
        run_dot(a, b, expr)


def test_bf16_dot_inputs_are_rounded_bf16_values():
    """bf16 inputs are the bf16 numbers themselves (S1.27: the interpreter multiplied raw bits)."""
    vals = np.array([1.5, -2.25, 3.0, 0.0078125] * 64).reshape(16, 16)
    a = BF16(bf16_bits(vals).reshape(16, 16))
    c = run_dot(a, BF16(bf16_bits(np.eye(16)).reshape(16, 16)))
    assert np.array_equal(c, vals), "bf16 dot with the identity"
