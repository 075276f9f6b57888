"""`x.to(dtype)` between every pair of dtypes, rounding modes, bitcasts, and the measured GPU conversion rows.

References are computed here from exact values (see test_ops_elementwise: `convert`, `round_fraction`) and
the rules in its `OVERRIDES` table; NumPy's own casts are not trusted where they differ from the GPU
(float -> int of NaN/out-of-range values, 64-bit int -> narrow float, bf16).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton.language as tl
from helpers.kernels import make_kernel
from helpers.binary import assert_same
from helpers.dtypes import ALL_TYPES, BF16, BITS, FORMATS, INTEGRAL_TYPES, NP_STORAGE, bf16_bits, empty_buffer, from_buffer, int_range, is_float, round_fraction, round_to, short, tl_type, to_buffer
from helpers.reference import OVERRIDES, convert, operand_values

CAST_SRC = """
@triton.jit
def cast_kernel(X, Z, DST: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    z = {expr}
    tl.static_assert(z.dtype == DST, "cast result dtype")
    tl.store(Z + o, z)
"""


def run_cast(values, src, dst, expr="x.to(DST)"):
    z = empty_buffer(len(values), dst)
    make_kernel(CAST_SRC.format(expr=expr))[(1,)](to_buffer(values, src), z, DST=tl_type(dst), N=len(values))
    return from_buffer(z, dst)


def cast_inputs(src, dst, seed=0):
    """Values of `src` for a cast to `dst`: float -> int keeps to the integer range (the GPU leaves NaN and
    out-of-range values undefined there, see OVERRIDES['float_to_int_saturates']); 32 values, a power of 2."""
    vals = operand_values(src, seed + BITS[src], 64)
    if is_float(src) and not is_float(dst) and dst != "int1":
        lo, hi = int_range(dst)
        vals = [v for v in vals if math.isfinite(v) and lo - 1 < v < hi + 1]
        vals += [float(v) for v in round_to([lo, hi, 0.5, -0.5, 1.5, 2.75, -2.75, lo + 0.75], src)
                 if lo - 1 < float(v) < hi + 1]
        vals = (vals * 32)[:32] if vals else [0.0] * 32
    return vals[:32]


@pytest.mark.parametrize("dst", ALL_TYPES)
@pytest.mark.parametrize("src", ALL_TYPES)
def test_cast_every_pair(src, dst):
    """Every src -> dst: ints wrap, floats round to nearest even (once, 64-bit ints included), float -> int
    truncates toward zero, anything -> int1 is `!= 0` (NaN -> True)."""
    xv = cast_inputs(src, dst)
    got = run_cast(xv, src, dst)
    want = convert(xv, src, dst)
    assert_same(got, want, dst, f"`x.to({short(dst)})` with x: {src}", [("x", xv)])


def test_row17_fp32_to_bf16_bit_table():
    """S2: fp32 bits -> bf16 bits, RTNE (default), RTZ, and fp16 (RTNE)."""
    table = [  # fp32 bits, rtne, rtz, fp16 bits
        (0x3FFFFFFF, 0x4000, 0x3FFF, 0x4000), (0x3F808000, 0x3F80, 0x3F80, 0x3C04),
        (0x3F818000, 0x3F82, 0x3F81, 0x3C0C), (0x3F80C000, 0x3F81, 0x3F80, 0x3C06),
        (0x3F807FFF, 0x3F80, 0x3F80, 0x3C04), (0xF8080001, 0xF808, 0xF808, 0xFC00),
        (0x7F7FFFFF, 0x7F80, 0x7F7F, 0x7C00), (0x00000001, 0x0000, 0x0000, 0x0000),
    ]
    x = np.array([r[0] for r in table], np.uint32).view(np.float32)
    for expr, col in (("x.to(DST)", 1), ("x.to(DST, fp_downcast_rounding='rtz')", 2)):
        z = BF16.zeros(8)
        make_kernel(CAST_SRC.format(expr=expr))[(1,)](x, z, DST=tl.bfloat16, N=8)
        want = [r[col] for r in table]
        assert z.array.tolist() == want, f"`{expr}` fp32 -> bf16: {[hex(v) for v in z.array]} != {[hex(v) for v in want]}"
    h = np.zeros(8, np.float16)
    make_kernel(CAST_SRC.format(expr="x.to(DST)"))[(1,)](x, h, DST=tl.float16, N=8)
    assert h.view(np.uint16).tolist() == [r[3] for r in table], f"fp32 -> fp16 bits: {[hex(v) for v in h.view(np.uint16)]}"


def test_row18_store_to_bf16_pointer_rounds_like_to():
    """An fp32 value stored through a bf16 pointer is converted as `.to(tl.bfloat16)` does (RTNE)."""
    k = make_kernel("""
    @triton.jit
    def store_cast(X, Z1, Z2, N: tl.constexpr):
        o = tl.arange(0, N)
        x = tl.load(X + o)
        tl.store(Z1 + o, x)
        tl.store(Z2 + o, x.to(tl.bfloat16))
    """)
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32) * 100
    z1, z2 = BF16.zeros(64), BF16.zeros(64)
    k[(1,)](x, z1, z2, N=64)
    assert np.array_equal(z1.array, z2.array), "implicit store cast differs from .to(tl.bfloat16)"
    assert np.array_equal(z1.array, bf16_bits(x.astype(np.float64))), "fp32 -> bf16 store is not RTNE"


def test_row51_fp32_to_int32_saturates():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -2.7, 2.7, -0.5], np.float32)
    z = run_cast(x.tolist(), "float32", "int32")
    want = [0, 2147483647, -2147483648, 2147483647, -2147483648, -2, 2, 0]
    assert z.tolist() == want, f"S1.51 fp32 -> int32: {z.tolist()}"
    assert [OVERRIDES["float_to_int_saturates"].fn(float(v), "int32") for v in x] == want


def test_row52_int32_to_uint8_wraps():
    z = run_cast([300, -1, 255, 256, -129, 128, 0, 7], "int32", "uint8")
    assert z.tolist() == [44, 255, 255, 0, 127, 128, 0, 7], f"S1.52 int32 -> uint8: {z.tolist()}"


def test_gpu_probe_int_to_bf16_rounds_once():
    """OVERRIDES['int_to_float_single_rounding'], GPU probe values (H200, Triton 3.6.0)."""
    cases = [
        ("int32", [16842753, -16842753, 16842752, 33685505, 33685503, 257, 65793, 2147483647],
         [16908288.0, -16908288.0, 16777216.0, 33816576.0, 33554432.0, 256.0, 66048.0, 2147483648.0]),
        ("int64", [2**62 + 2**54 + 1, 2**62 + 2**54, 16842753, 2**40 + 2**32 + 1, -(2**62 + 2**54 + 1),
                   2**62 + 2**38 + 1, -(2**63), 2**63 - 1],
         [4.647714815446352e+18, 4.611686018427388e+18, 16908288.0, 1108101562368.0, -4.647714815446352e+18,
          4.611686018427388e+18, -9.223372036854776e+18, 9.223372036854776e+18]),
        ("uint64", [2**63 + 2**55 + 1, 2**64 - 1, 2**63 + 2**39 + 1, 16842753],
         [9.295429630892704e+18, 1.8446744073709552e+19, 9.223372036854776e+18, 16908288.0]),
        ("int16", [257, 259, 32767, -32768], [256.0, 260.0, 32768.0, -32768.0]),
    ]
    for src, xs, want in cases:
        n = 8 if len(xs) > 4 else 4
        got = run_cast((xs + xs)[:n], src, "bfloat16")[:len(xs)]
        assert got.tolist() == want, f"{src} -> bf16 (GPU probe): {got.tolist()} != {want}"


def test_gpu_probe_int64_to_fp32_fp16():
    xs = [2**62 + 2**54 + 1, 16842753, 2**40 + 2**32 + 1, 2**62 + 2**38 + 1, 65519, 65520, 2049, 2051]
    assert run_cast(xs, "int64", "float32").tolist() == [4.62970041693687e+18, 16842752.0, 1103806595072.0,
                                                           4.611686568183202e+18, 65519.0, 65520.0, 2049.0, 2051.0]
    assert run_cast(xs, "int64", "float16").tolist() == [math.inf, math.inf, math.inf, math.inf, 65504.0,
                                                           math.inf, 2048.0, 2052.0]


def test_gpu_probe_float_downcasts():
    """fp64 -> bf16/fp16/fp32 round once from the fp64 value (no double rounding through fp32); GPU probe."""
    d = [1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-8, 1 + 2**-7 + 2**-8, 1e39, -1e39, math.inf, math.nan,
         1e-39, 1 + 2**-11 + 2**-40, 1 + 2**-11, 65519.99, 65520.0, 1e-8, 2**-25 + 2**-60, 3.4e38]
    gpu = {
        "bfloat16": [1.0078125, -1.0078125, 1.0, 1.015625, math.inf, -math.inf, math.inf, math.nan,
                     1.0101904577379033e-39, 1.0, 1.0, 65536.0, 65536.0, 1.0011717677116394e-08,
                     2.9802322387695312e-08, math.inf],
        "float16": [1.00390625, -1.00390625, 1.00390625, 1.01171875, math.inf, -math.inf, math.inf, math.nan, 0.0,
                    1.0009765625, 1.0, 65504.0, math.inf, 0.0, 5.960464477539063e-08, math.inf],
        "float32": [1.00390625, -1.00390625, 1.00390625, 1.01171875, math.inf, -math.inf, math.inf, math.nan,
                    1.0000002153053333e-39, 1.00048828125, 1.00048828125, 65519.98828125, 65520.0,
                    9.99999993922529e-09, 2.9802322387695312e-08, 3.3999999521443642e+38],
    }
    for dst, want in gpu.items():
        got = run_cast(d, "float64", dst)
        assert_same(got, want, dst, f"fp64 -> {short(dst)} (GPU probe)", [("x", d)])
        assert_same(convert(d, "float64", dst), want, dst, f"reference fp64 -> {short(dst)}", [("x", d)])


def test_gpu_probe_rtz_downcasts():
    """fp_downcast_rounding='rtz' from fp32: toward zero, overflow to the largest finite value (GPU probe)."""
    f = [1e6, -1e6, math.inf, -math.inf, math.nan, 65519.0, 65520.0, 1 + 2**-11 + 2**-20, 1e-8, 3.4e38, -3.4e38,
         1.99999988, 1e-39, 1.00390625, 1.01171875, 0.0]
    f = [float(v) for v in round_to(f, "float32")]
    gpu = {
        "bfloat16": [999424.0, -999424.0, math.inf, -math.inf, math.nan, 65280.0, 65280.0, 1.0,
                     9.953510016202927e-09, 3.3895313892515355e+38, -3.3895313892515355e+38, 1.9921875,
                     9.183549615799121e-40, 1.0, 1.0078125, 0.0],
        "float16": [65504.0, -65504.0, math.inf, -math.inf, math.nan, 65504.0, 65504.0, 1.0, 0.0, 65504.0, -65504.0,
                    1.9990234375, 0.0, 1.00390625, 1.01171875, 0.0],
    }
    for dst, want in gpu.items():
        got = run_cast(f, "float32", dst, "x.to(DST, fp_downcast_rounding='rtz')")
        assert_same(got, want, dst, f"fp32 -> {short(dst)} rtz (GPU probe)", [("x", f)])


@pytest.mark.parametrize("src, dst", [("float32", "float16"), ("float32", "bfloat16")])
def test_rtz_matches_exact_truncation(src, dst):
    # fp64 sources with 'rtz' fail to compile on the GPU (Triton 3.6.0: "PassManager::run failed", GPU probe)
    xv = operand_values(src, 3, 32)
    got = run_cast(xv, src, dst, "x.to(DST, fp_downcast_rounding='rtz')")
    p, emin, emax = FORMATS[dst]
    biggest = float((2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax)
    want = []
    for v in xv:
        if not math.isfinite(v) or v == 0:
            want.append(v)
            continue
        q = Fraction(2) ** (max(math.frexp(abs(v))[1] - 1, emin) - p + 1)
        r = float(int(abs(Fraction(v)) / q) * q)
        want.append(math.copysign(min(r, biggest), v))
    assert_same(got, want, dst, f"`x.to({short(dst)}, fp_downcast_rounding='rtz')` with x: {src}", [("x", xv)])


@pytest.mark.parametrize("dst, ir_name", [("float16", "f16"), ("bfloat16", "bf16"), ("float32", "f16")])
def test_rtz_from_fp64_fails_to_compile(dst, ir_name):
    """Triton 3.6 cannot lower fp64 -> fp16/bf16/fp32 with rounding mode rtz: "Unsupported conversion from f64 to
    f16 with rounding mode rtz" then "LLVM ERROR: Unsupported rounding mode for conversion." (H200, and offline
    compile for sm_90; the diagnostic names f16 for an fp32 destination too), RuntimeError "PassManager::run
    failed"."""
    k = make_kernel(CAST_SRC.format(expr="x.to(DST, fp_downcast_rounding='rtz')"))
    with pytest.raises(minitriton.CompilationError,
                       match=f"Unsupported conversion from f64 to {ir_name} with rounding mode rtz\n"
                             "LLVM ERROR: Unsupported rounding mode for conversion.") as info:
        k[(1,)](np.ones(2), empty_buffer(2, dst), DST=tl_type(dst), N=2)
    assert isinstance(info.value.error, RuntimeError) and "PassManager::run failed" in str(info.value)
    run_cast([1.0, 2.0], "float64", dst, "x.to(DST, fp_downcast_rounding='rtne')")  # rtne is fine


@pytest.mark.parametrize("src, values, want", [
    ("int32", [256, 2, 1, 0], [0, 2, 1, 0]),     # trunci to i8: 256 -> 0, 2 stays byte 2
    ("float32", [0.5, 1.0, 2.75, -0.0], [0, 1, 2, 0]),  # fptosi to i8: 0.5 -> 0
    ("int1", [True, False, True, False], [1, 0, 1, 0]),
])
def test_store_through_bool_pointer_casts_to_int8(src, values, want):
    """Triton 3.6 semantic._store_legacy treats *i1 as *i8 and casts the value straight to int8 (TTIR of an offline
    sm_90 compile: tt.bitcast to !tt.ptr<i8>, arith.trunci / arith.fptosi), not to int1 first as 3.9 does. A
    later load through *i1 reads the byte as `!= 0`."""
    k = make_kernel("""
    @triton.jit
    def bool_store(X, Z, Y):
        r = tl.arange(0, 4)
        tl.store(Z + r, tl.load(X + r))
        tl.store(Y + r, tl.load(Z + r).to(tl.int32))
    """)
    z, y = np.ones(4, np.bool_), np.zeros(4, np.int32)
    k[(1,)](to_buffer(values, src), z, y)
    assert z.view(np.uint8).tolist() == want, z.view(np.uint8)
    assert y.tolist() == [int(v != 0) for v in want], y


@pytest.mark.parametrize("src, dst", [("int32", "float32"), ("float16", "bfloat16"), ("float32", "float64"),
                                      ("bfloat16", "float16"), ("int64", "float16")])
def test_rounding_mode_only_for_truncating_float_casts(src, dst):
    k = make_kernel(CAST_SRC.format(expr="x.to(DST, fp_downcast_rounding='rtz')"))
    with pytest.raises(minitriton.CompilationError,
                       match=f"fp_downcast_rounding should be set only for truncating fp conversions. "
                             f"Source scalar type is {short(src)} and destination type is {short(dst)}"):
        k[(1,)](to_buffer([1, 2], src), empty_buffer(2, dst), DST=tl_type(dst), N=2)


def test_invalid_rounding_mode():
    k = make_kernel(CAST_SRC.format(expr="x.to(DST, fp_downcast_rounding='rtp')"))
    with pytest.raises(minitriton.CompilationError,
                       match="Invalid rounding mode: rtp. Supported rounding modes are 'rtne' and 'rtz'."):
        k[(1,)](np.ones(2, np.float32), np.ones(2, np.float16), DST=tl.float16, N=2)


SAME_WIDTH = [(a, b) for a in ALL_TYPES for b in ALL_TYPES if BITS[a] == BITS[b] and a != "int1"]


@pytest.mark.parametrize("src, dst", SAME_WIDTH)
def test_bitcast_same_width(src, dst):
    """bitcast=True moves the bits unchanged (NaN payloads and bf16 signalling NaNs included)."""
    xv = operand_values(src, 8, 32)
    src_buf = to_buffer(xv, src)
    src_bits = raw_bits(src_buf)
    if src == "bfloat16":  # add bf16 NaN patterns a float32 detour would disturb: signalling, payloads
        src_bits[:4] = [0x7F81, 0xFF81, 0x7FC1, 0x7FBF]
        src_buf = BF16(src_bits.copy())
    elif src in ("int16", "uint16"):
        src_bits[:4] = [0x7F81, 0xFF81, 0x7FC1, 0x7C01]
        src_buf = src_bits.copy().view(NP_STORAGE[src])
    z = empty_buffer(32, dst)
    make_kernel(CAST_SRC.format(expr="x.to(DST, bitcast=True)"))[(1,)](src_buf, z, DST=tl_type(dst), N=32)
    assert raw_bits(z).tolist() == src_bits.tolist(), \
        f"`x.to({short(dst)}, bitcast=True)` with x: {src} changed the bits: " \
        f"{[hex(v) for v in raw_bits(z)[:6]]} != {[hex(v) for v in src_bits[:6]]}"


def raw_bits(buf):
    arr = buf.array if isinstance(buf, BF16) else np.asarray(buf)
    return arr.view(f"u{arr.dtype.itemsize}").copy()


def test_bf16_load_store_keeps_bits():
    """A bf16 value loaded and stored (no arithmetic) keeps its exact bit pattern."""
    k = make_kernel("""
    @triton.jit
    def copy(X, Z, N: tl.constexpr):
        o = tl.arange(0, N)
        tl.store(Z + o, tl.load(X + o))
    """)
    bits = np.array([0x7F81, 0xFF81, 0x7FC1, 0x7FBF, 0x0001, 0x8000, 0x7F80, 0x3F80], np.uint16)
    z = BF16.zeros(8)
    k[(1,)](BF16(bits), z, N=8)
    assert z.array.tolist() == bits.tolist(), f"bf16 copy: {[hex(v) for v in z.array]}"


@pytest.mark.parametrize("src, dst", [("float32", "float16"), ("int32", "int16"), ("int1", "uint8"),
                                      ("float64", "int32"), ("bfloat16", "int32")])
def test_bitcast_size_error(src, dst):
    k = make_kernel(CAST_SRC.format(expr="x.to(DST, bitcast=True)"))
    with pytest.raises(minitriton.CompilationError,
                       match=f"Cannot bitcast data-type of size {BITS[src]} ?to data-type of size {BITS[dst]}"):
        k[(1,)](to_buffer([1, 0], src), empty_buffer(2, dst), DST=tl_type(dst), N=2)


def test_tl_cast_and_same_type_cast():
    k = make_kernel("""
    @triton.jit
    def casts(X, Z1, Z2, Z3):
        o = tl.arange(0, 4)
        x = tl.load(X + o)
        tl.store(Z1 + o, tl.cast(x, tl.int8))
        tl.store(Z2 + o, x.to(tl.float32))
        tl.store(Z3 + o, tl.cast(x, tl.float16, fp_downcast_rounding="rtz"))
    """)
    x = np.array([1.9, -2.9, 300.5, 1 + 2**-11 + 2**-20], np.float32)
    z1, z2, z3 = np.zeros(4, np.int8), np.zeros(4, np.float32), np.zeros(4, np.float16)
    k[(1,)](x, z1, z2, z3)
    assert z1.tolist()[:2] == [1, -2], f"tl.cast to int8: {z1}"
    assert np.array_equal(z2, x), "x.to(its own type) changed the values"
    assert z3.tolist()[3] == 1.0, f"tl.cast(..., fp_downcast_rounding='rtz'): {z3}"


# ----------------------------------------------------------------------------- hypothesis

@settings(max_examples=40, deadline=None)
@given(bits=st.lists(st.integers(0, 2**32 - 1), min_size=16, max_size=16))
def test_hypothesis_fp32_to_bf16_fp16_bits(bits):
    """Every fp32 bit pattern (NaN, inf, subnormals) -> bf16 and fp16, RTNE, against exact rounding."""
    x = np.array(bits, np.uint32).view(np.float32)
    xv = x.astype(np.float64).tolist()
    for dst in ("bfloat16", "float16"):
        got = run_cast(xv, "float32", dst)
        assert_same(got, round_to(xv, dst), dst, f"fp32 -> {short(dst)}", [("x", xv)])


@settings(max_examples=40, deadline=None)
@given(t=st.sampled_from(["int64", "uint64", "int32", "uint32"]), data=st.data())
def test_hypothesis_int_to_narrow_float(t, data):
    lo, hi = int_range(t)
    xs = data.draw(st.lists(st.integers(lo, hi), min_size=8, max_size=8))
    for dst in ("bfloat16", "float16", "float32", "float64"):
        got = run_cast(xs, t, dst)
        want = [round_fraction(Fraction(v), dst) for v in xs]
        assert_same(got, want, dst, f"{t} -> {short(dst)}", [("x", xs)])


@settings(max_examples=40, deadline=None)
@given(t=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
       dst=st.sampled_from(INTEGRAL_TYPES), data=st.data())
def test_hypothesis_float_to_int_in_range(t, dst, data):
    lo, hi = int_range(dst)
    fmt_max = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
    top = min(float(hi), fmt_max.get(t, float(hi)))
    vals = data.draw(st.lists(st.floats(max(float(lo), -top), top, allow_nan=False), min_size=8, max_size=8))
    vals = [v for v in round_to(vals, t).tolist() if lo <= math.trunc(v) <= hi]
    vals = (vals * 8)[:8] or [0.0] * 8
    got = run_cast(vals, t, dst)
    assert_same(got, [math.trunc(v) for v in vals], dst, f"{short(t)} -> {dst} (truncation)", [("x", vals)])


@pytest.mark.parametrize("src", ["bfloat16", "float16", "float32"])
def test_widened_floats_compute_in_the_wider_type(src):
    """H200 fuzz (2026-11-29): `tl.full(.., 3.0, tl.bfloat16).to(tl.float64)` then tl.sqrt is the fp64 sqrt(3);
    the widened values must not stay in a narrower compute type (bf16 -> fp64 kept fp32 data)."""
    k = make_kernel(f"""
@triton.jit
def widen(Z):
    v = tl.full((4,), 3.0, tl.{src}).to(tl.float64)
    tl.store(Z + tl.arange(0, 4), tl.sqrt(v) + v / 7)
""")
    z = np.zeros(4, np.float64)
    k[(1,)](z)
    assert z.tolist() == [math.sqrt(3.0) + 3.0 / 7] * 4, z
