"""`tl.dot_scaled` (S15.36) against a float64 reference of its documented semantics (docs/semantics.md S15.x): operands
decoded from their bits, upcast to bf16 (fp16 when a side is "fp16"), times the e8m0 scale of their group of 32
(or 16) K-elements, each product rounded to the compute type, 0xFF scales giving NaN unless fast_math; then the
product of the two in float64. Also Triton 3.9's interpreter (where it computes the same thing), Triton's error
texts, and the GPU's outputs recorded by parity.scaled_dot.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from helpers.dtypes import round_to
from helpers.kernels import make_kernel
from helpers.oracle import Case, OracleUnavailable, assert_same_as_interpreter, run_batch
from parity import scaled_dot

KERNEL = """
@triton.jit
def kernel(A, SA, B, SB, ACC, C, RA: tl.constexpr, CA: tl.constexpr, RB: tl.constexpr, CB: tl.constexpr,
           M: tl.constexpr, N: tl.constexpr, KS: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr,
           FAST: tl.constexpr, PACK_A: tl.constexpr, PACK_B: tl.constexpr, F8_SCALES: tl.constexpr):
    a = tl.load(A + tl.arange(0, RA)[:, None] * CA + tl.arange(0, CA)[None, :])
    b = tl.load(B + tl.arange(0, RB)[:, None] * CB + tl.arange(0, CB)[None, :])
    if FA == "bf16" or FA == "fp16":
        a = a.to(tl.uint16, bitcast=True)
    if FB == "bf16" or FB == "fp16":
        b = b.to(tl.uint16, bitcast=True)
    sa = None
    sb = None
    if SA is not None:
        sa = tl.load(SA + tl.arange(0, M)[:, None] * KS + tl.arange(0, KS)[None, :])
        if F8_SCALES:
            sa = sa.to(tl.float8e4nv, bitcast=True)
    if SB is not None:
        sb = tl.load(SB + tl.arange(0, N)[:, None] * KS + tl.arange(0, KS)[None, :])
    acc = None
    if ACC is not None:
        acc = tl.load(ACC + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, acc, fast_math=FAST, lhs_k_pack=PACK_A, rhs_k_pack=PACK_B)
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)
"""
FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
PER_BYTE = {"e2m1": 2, "e4m3": 1, "e5m2": 1, "bf16": 1, "fp16": 1}


def decode(codes, fmt) -> np.ndarray:
    """The float64 values of codes (e2m1: one per element) read as the OCP/IEEE formats define them."""
    c = np.asarray(codes).astype(np.int64)
    if fmt == "bf16":
        return (c.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if fmt == "fp16":
        return c.astype(np.uint16).view(np.float16).astype(np.float64)
    ebits, mbits = {"e2m1": (2, 1), "e4m3": (4, 3), "e5m2": (5, 2)}[fmt]
    bias = (1 << (ebits - 1)) - 1
    sign = np.where(c >> (ebits + mbits) & 1, -1.0, 1.0)
    e, m = c >> mbits & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
    value = np.where(e == 0, m * 2.0 ** (1 - bias - mbits), (1 + m / 2 ** mbits) * 2.0 ** (e - bias))
    if fmt == "e4m3":
        value = np.where((e == 15) & (m == 7), np.nan, value)
    if fmt == "e5m2":
        value = np.where(e == 31, np.where(m == 0, np.inf, np.nan), value)
    return sign * value


def e8m0(s, compute) -> np.ndarray:
    """The scale byte in the compute type: bf16 reads `s << 7` as bits (0 is 0.0); fp16 rounds 2**(s-127)."""
    s = np.asarray(s).astype(np.int64)
    with np.errstate(over="ignore"):
        value = np.where(s == 0, 0.0, 2.0 ** (s - 127))
    value = np.where(s == 255, np.inf, value)
    return value if compute == "bfloat16" else round_to(value, "float16").reshape(value.shape)


def unpack(packed, axis) -> np.ndarray:
    """e2m1 codes, two per byte along `axis`, the first in the low bits."""
    p = np.moveaxis(np.asarray(packed, np.uint8), axis, -1)
    out = np.stack((p & 15, p >> 4), axis=-1).reshape(p.shape[:-1] + (2 * p.shape[-1],))
    return np.moveaxis(out, -1, axis)


def operand(x, scale, fmt, compute, side, fast_math=False, pack=True, group=32) -> np.ndarray:
    """One operand as the reference sees it: (M, K) for lhs, (K, N) for rhs, float64."""
    k_axis = -1 if side == "lhs" else -2
    codes = unpack(x, k_axis if pack else -1 - k_axis % 2) if fmt == "e2m1" else x.view(
        np.uint16 if fmt in ("bf16", "fp16") else np.uint8)
    v = round_to(decode(codes, fmt), compute).reshape(codes.shape)
    if scale is None:
        return v
    s = np.repeat(scale, group, axis=-1)
    s = s if side == "lhs" else s.T
    with np.errstate(invalid="ignore"):
        out = round_to(v * e8m0(s, compute), compute).reshape(v.shape)
    return out if fast_math else np.where(s == 255, np.nan, out)


def random_operand(rng, fmt, rows, cols):
    if fmt in ("bf16", "fp16"):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        return x.astype(np.float16).view(np.int16) if fmt == "fp16" else (x.view(np.uint32) >> 16).astype(
            np.uint16).view(np.int16)
    x = rng.integers(0, 256, (rows, cols), dtype=np.uint8)
    if fmt == "e5m2":   # exponent 31 (inf/NaN) has the GPU's own reading: test_special_fp8_codes
        x = np.where((x & 0x7C) == 0x7C, x & 0xB3, x).astype(np.uint8)
    if fmt == "e4m3":
        x = np.where((x & 0x7F) == 0x7F, x & 0xF7, x).astype(np.uint8)
    return x


def run(a, sa, fa, b, sb, fb, m, n, acc=None, fast=False, pack_a=True, pack_b=True, f8_scales=False):
    c = np.zeros((m, n), np.float32)
    ks = (sa if sa is not None else sb if sb is not None else np.zeros((1, 1))).shape[-1]
    make_kernel(KERNEL)[(1,)](a, sa, b, sb, acc, c, *a.shape, *b.shape, m, n, ks, fa, fb, fast, pack_a, pack_b,
                              f8_scales)
    return c


def assert_close_to(c, ref, a_abs, b_abs):
    """Within fp32 accumulation of exact products: K ulps of sum |a||b| (NaN where the reference is NaN)."""
    bound = a_abs.shape[-1] * 2.0 ** -24 * (a_abs @ b_abs) + 1e-30
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(c), nan)
    with np.errstate(invalid="ignore"):
        err = np.abs(c - ref)
    assert np.all((err <= bound) | nan | (c == ref)), f"max error {np.nanmax(np.where(nan, 0, err))}"


@pytest.mark.parametrize("fa", FORMATS)
@pytest.mark.parametrize("fb", FORMATS)
def test_every_format_pair_against_reference(fa, fb):
    rng = np.random.default_rng(FORMATS.index(fa) * 5 + FORMATS.index(fb))
    m, n, k = 16, 32, 64
    compute = "float16" if "fp16" in (fa, fb) else "bfloat16"
    lo, hi = (124, 132) if compute == "float16" else (100, 150)
    a = random_operand(rng, fa, m, k // PER_BYTE[fa])
    b = random_operand(rng, fb, k // PER_BYTE[fb], n)
    sa = rng.integers(lo, hi, (m, k // 32), dtype=np.uint8) if fa not in ("bf16", "fp16") else None
    sb = rng.integers(lo, hi, (n, k // 32), dtype=np.uint8) if fb not in ("bf16", "fp16") else None
    if {fa, fb} == {"bf16", "fp16"}:   # S15.36: no bf16 -> fp16 conversion on the GPU
        import minitriton
        with pytest.raises(minitriton.CompilationError, match="PassManager::run failed"):
            run(a, sa, fa, b, sb, fb, m, n)
        return
    c = run(a, sa, fa, b, sb, fb, m, n)
    ra, rb = operand(a, sa, fa, compute, "lhs"), operand(b, sb, fb, compute, "rhs")
    with np.errstate(invalid="ignore"):
        assert_close_to(c, ra @ rb, np.abs(ra), np.abs(rb))


@pytest.mark.parametrize("partner", ["bf16", "fp16"])
@pytest.mark.parametrize("fast_math", [False, True])
@pytest.mark.parametrize("fmt", ["e2m1", "e4m3"])
def test_every_code_under_extreme_scales(fmt, partner, fast_math):
    """One code per row times an identity shows each scaled value: scale bytes 0 (0.0 in bf16), 1, 102/103
    (fp16's underflow), 143/144 (fp16's overflow), 254 and 255 (NaN unless fast_math, inf times the code then)."""
    codes = np.arange(16 if fmt == "e2m1" else 256, dtype=np.uint8)
    compute = "float16" if partner == "fp16" else "bfloat16"
    for s in (0, 1, 102, 103, 127, 143, 144, 254, 255):
        rows = -(-len(codes) // 32) * 32
        logical = np.zeros((rows, 32), np.uint8)
        logical[np.arange(len(codes)), np.arange(len(codes)) % 32] = codes
        x = (logical[:, 0::2] | logical[:, 1::2] << 4).astype(np.uint8) if fmt == "e2m1" else logical
        scale = np.full((rows, 1), s, np.uint8)
        eye = (np.eye(32, dtype=np.int32) * scaled_dot.ONE[partner]).astype(np.int16)
        c = run(x, scale, fmt, eye, None, partner, rows, 32, fast=fast_math)
        want = operand(x, scale, fmt, compute, "lhs", fast_math)
        with np.errstate(invalid="ignore"):
            want = want @ np.eye(32)
        np.testing.assert_array_equal(c, want.astype(np.float32), err_msg=f"{fmt} x {partner}, scale byte {s}")


def test_e2m1_packed_along_m_and_n():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, (16, 32), dtype=np.uint8)   # 32 x 32 values packed along M
    b = rng.integers(0, 256, (32, 8), dtype=np.uint8)    # 32 x 16 values packed along N
    sa, sb = rng.integers(110, 140, (32, 1), dtype=np.uint8), rng.integers(110, 140, (16, 1), dtype=np.uint8)
    c = run(a, sa, "e2m1", b, sb, "e2m1", 32, 16, pack_a=False, pack_b=False)
    ra = operand(a, sa, "e2m1", "bfloat16", "lhs", pack=False)
    rb = operand(b, sb, "e2m1", "bfloat16", "rhs", pack=False)
    assert ra.shape == (32, 32) and rb.shape == (32, 16)
    assert_close_to(c, ra @ rb, np.abs(ra), np.abs(rb))


def test_nvfp4_e4m3_scales_in_groups_of_16_and_acc():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 256, (16, 16), dtype=np.uint8)
    b = rng.integers(0, 256, (16, 16), dtype=np.uint8)
    sa = random_operand(rng, "e4m3", 16, 2)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    c = run(a, sa, "e2m1", b, None, "e2m1", 16, 16, acc=acc, f8_scales=True)
    sv = np.repeat(round_to(decode(sa, "e4m3"), "bfloat16").reshape(sa.shape), 16, axis=-1)
    ra = round_to(decode(unpack(a, -1), "e2m1") * sv, "bfloat16").reshape(16, 32)
    rb = decode(unpack(b, -2), "e2m1")
    assert_close_to(c, ra @ rb + acc, np.abs(ra), np.abs(rb))


def _error_kernel(call: str) -> str:
    return ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef kernel(A, B, S, C):\n"
            "    a = tl.load(A + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])\n"
            "    b = tl.load(B + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])\n"
            "    s = tl.load(S + tl.arange(0, 32)[:, None] + tl.arange(0, 1)[None, :])\n"
            f"    c = {call}\n"
            "    tl.store(C + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)\n")


ERRORS = {
    'tl.dot_scaled(a, s, "e4m3", b, None, "e4m3", out_dtype=tl.float16)':
        ("AssertionError", "Only float32 is supported for out_dtype at the moment"),
    'tl.dot_scaled(a, s, "fp32", b, None, "e4m3")': ("ValueError", "Invalid float format: fp32."),
    'tl.dot_scaled(a, s, "e4m3", b, None, "e2m3")': ("AssertionError", "NYI: rhs_format e2m3"),
    'tl.dot_scaled(a.to(tl.float8e5, bitcast=True), s, "e2m1", b, None, "e4m3")':
        ("AssertionError", "e2m1 format must be packed as uint8. Got fp8e5"),
    'tl.dot_scaled(a, s, "e4m3", b.to(tl.int8, bitcast=True), None, "e4m3")':
        ("AssertionError", "Unexpected dtype for e4m3. Got int8"),
    'tl.dot_scaled(a, s, "e4m3", b, None, "e4m3", lhs_k_pack=False)':
        ("AssertionError", "only mxfp4 inputs can be packed along a dimension different than K"),
    'tl.dot_scaled(a, s, "e2m1", b, None, "e4m3")':
        ("AssertionError", "Reduction dimension should pack the same number of elements; (lhs: "),
    'tl.dot_scaled(a, s, "e4m3", b, None, "e4m3", tl.zeros((32, 16), tl.float32))':
        ("AssertionError", "expected accumulator shape "),
    'tl.dot_scaled(a, s, "e4m3", b, None, "e4m3")':
        ("AssertionError", "lhs_scale must be a tensor of shape [..., 32, 1]. Got "),
    'tl.dot_scaled(a, s, "e4m3", b, s, "e4m3")': ("RuntimeError", "scale factor must be 16 or 32. Got 64"),
}


def _error_source(call: str) -> str:
    src, message = _error_kernel(call), ERRORS[call][1]
    if "lhs_scale must" in message:   # 16 rows of scales for 32 rows of lhs
        src = src.replace("S + tl.arange(0, 32)", "S + tl.arange(0, 16)")
    if "Got 64" in message:   # K = 64 with one scale a row
        src = src.replace("tl.arange(0, 32)[None, :])\n    b", "tl.arange(0, 64)[None, :])\n    b").replace(
            "B + tl.arange(0, 32)[:, None]", "B + tl.arange(0, 64)[:, None]")
    return src


def _error_arrays():
    return [np.zeros(64 * 64, np.uint8), np.zeros(64 * 64, np.uint8), np.zeros(32, np.uint8),
            np.zeros((32, 32), np.float32)]


@pytest.fixture(scope="module")
def interpreter_errors():
    """Triton 3.9's interpreter on every ERRORS call (one child process)."""
    try:
        results = run_batch([Case(_error_source(call), "kernel", (1,), _error_arrays()) for call in ERRORS])
    except OracleUnavailable as e:
        pytest.skip(f"Triton's interpreter is not available: {e}")
    return dict(zip(ERRORS, results))


@pytest.mark.parametrize("call", list(ERRORS))
def test_errors_in_triton_words(call, interpreter_errors):
    """The refusals minitriton raises (as CompilationError) carry the message Triton 3.9 raises."""
    import minitriton
    kind, message = ERRORS[call]
    with pytest.raises(minitriton.CompilationError) as info:
        make_kernel(_error_source(call).split("\n\n\n", 1)[1])[(1,)](*_error_arrays())
    assert message in str(info.value)
    it = interpreter_errors[call]
    assert it.error and message in it.error and kind in it.error, it.error


def test_gpu_record_reproduced():
    """parity.scaled_dot's run of record (S15.36): every case the GPU and minitriton computed bit-exact (NaN as
    one pattern) still is, and every case the GPU refused as a compile error minitriton refuses too."""
    record = json.loads(next((pathlib.Path(scaled_dot.__file__).parent / "results").glob(
        "cuda-scaled-dot-*.json")).read_text())
    ours = scaled_dot.run("minitriton")
    checked = 0
    for name, verdict in record["cases"].items():
        if verdict.startswith("bit-exact"):
            assert scaled_dot.digest(ours[name]) == record["gpu"][name], name
            checked += 1
        elif verdict.startswith("GPU:") and "**DIFFERS**" not in verdict:
            assert isinstance(ours[name], str) and "CompilationError" in ours[name], name
    assert checked >= 25


@pytest.mark.parametrize("partner", ["bf16", "fp16"])
def test_fast_math_keeps_x_times_inf_in_a_group_without_zeros(partner):
    """A 0xFF scale over nonzero positive codes: NaN, or with fast_math the products with inf (+inf sums)."""
    rng = np.random.default_rng(9)
    a = (rng.integers(1, 8, (16, 16), dtype=np.uint8) | rng.integers(1, 8, (16, 16), dtype=np.uint8) << 4)
    ones = np.full((32, 16), scaled_dot.ONE[partner], np.int32).astype(np.int16)
    sa = np.full((16, 1), 127, np.uint8)
    sa[3] = 255
    for fast, special in ((False, np.isnan), (True, np.isposinf)):
        c = run(a.astype(np.uint8), sa, "e2m1", ones, None, partner, 16, 16, fast=fast)
        assert special(c[3]).all() and np.isfinite(np.delete(c, 3, axis=0)).all(), (fast, c[3])


def test_same_as_triton_39_interpreter_where_it_agrees():
    """Scales in the normal range and exactly representable scaled values: the interpreter's fp32 upcast equals
    the GPU's bf16 one, so both sum the same products (k_pack=False, acc and an unscaled side included)."""
    rng = np.random.default_rng(10)
    e2m1, e4m3 = rng.integers(0, 256, (32, 32), dtype=np.uint8), random_operand(rng, "e4m3", 64, 32)
    scales = rng.integers(110, 140, (32, 2), dtype=np.uint8)
    acc = rng.standard_normal((32, 32)).astype(np.float32)
    src = "import triton\nimport triton.language as tl\n" + KERNEL
    common = dict(RA=32, CA=32, M=32, N=32, KS=2, FAST=False, F8_SCALES=False)
    cases = [("kernel", (1,), [e2m1, scales, e4m3, scales.copy(), None, np.zeros((32, 32), np.float32)],
              dict(common, RB=64, CB=32, FA="e2m1", FB="e4m3", PACK_A=True, PACK_B=True)),
             ("kernel", (1,), [e2m1, scales, e2m1.T.copy(), None, acc, np.zeros((32, 64), np.float32)],
              dict(common, RB=32, CB=32, N=64, KS=1, FA="e2m1", FB="e2m1", PACK_A=False, PACK_B=False))]
    cases[1][2][1] = rng.integers(110, 140, (64, 1), dtype=np.uint8)
    cases[1][2][4] = rng.standard_normal((64, 64)).astype(np.float32)
    cases[1][2][5] = np.zeros((64, 64), np.float32)
    cases[1][3].update(M=64)
    assert_same_as_interpreter(src, cases, bitwise_floats=True)
