"""Tests for minitriton.semantics.numerics and .integers against independent references: measured GPU bit
tables, exact Fraction/Decimal arithmetic, Python integers, struct and math."""

import math
import struct
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minitriton.semantics import integers as ni
from minitriton.semantics import numerics as nm

# Any RuntimeWarning (overflow, invalid, divide) escaping a helper fails the test.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]

# --- exact references -----------------------------------------------------------------

# (precision incl. implicit bit, min normal exponent, max exponent)
BF16 = (8, -126, 127)
FP16 = (11, -14, 15)
FP32 = (24, -126, 127)
FP64 = (53, -1022, 1023)
TF32 = (11, -126, 127)


def ref_round(v: Fraction, fmt, mode: str, negative_zero: bool = False) -> float:
    """Round the exact rational v to a binary format with gradual underflow (IEEE)."""
    p, emin, emax = fmt
    if v == 0:
        return -0.0 if negative_zero else 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if a < Fraction(2) ** e:
        e -= 1  # now 2**e <= a < 2**(e+1)
    e = max(e, emin)
    q = Fraction(2) ** (e - p + 1)
    n, rem = divmod(a, q)
    if mode == "rtne" and (2 * rem > q or (2 * rem == q and n % 2 == 1)):
        n += 1
    r = n * q
    max_finite = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if r > max_finite:
        return sign * (math.inf if mode == "rtne" else float(max_finite))
    if r == 0:
        return math.copysign(0.0, sign)
    return sign * float(r)


def f32_from_bits(bits) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


def same_float(got, want) -> bool:
    """Equal including the sign of zero; NaN matches NaN."""
    got = float(got)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def check_rounding(got: np.ndarray, xs, fmt, mode):
    for g, x in zip(got.ravel().tolist(), xs):
        if math.isnan(x):
            assert math.isnan(g)
        elif math.isinf(x):
            assert g == x
        else:
            want = ref_round(Fraction(x), fmt, mode, negative_zero=math.copysign(1, x) < 0)
            assert same_float(g, want), (x.hex(), mode, g, want)


u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)

# --- bf16 ---------------------------------------------------------------------------------

GPU_BF16 = {  # fp32 bits: (RTNE bf16 bits, RTZ bf16 bits), measured on an H200
    0x3FFFFFFF: (0x4000, 0x3FFF),
    0x3F808000: (0x3F80, 0x3F80),
    0x3F818000: (0x3F82, 0x3F81),
    0x3F80C000: (0x3F81, 0x3F80),
    0x3F807FFF: (0x3F80, 0x3F80),
    0xF8080001: (0xF808, 0xF808),
    0x7F7FFFFF: (0x7F80, 0x7F7F),
    0x00000001: (0x0000, 0x0000),
}


@pytest.mark.parametrize("mode_index,mode", [(0, "rtne"), (1, "rtz")])
def test_bf16_gpu_table(mode_index, mode):
    x = f32_from_bits(list(GPU_BF16))
    want = np.array([v[mode_index] for v in GPU_BF16.values()], dtype=np.uint16)
    got = nm.f32_to_bf16_bits(x, mode)
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, want)
    r = nm.round_to_bf16(x, mode)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r.view(np.uint32), want.astype(np.uint32) << 16)
    for g, w in zip(nm.bf16_bits_to_f32(want).tolist(), want.tolist()):
        assert g == struct.unpack("<f", struct.pack("<I", w << 16))[0]


def test_bf16_subnormal_and_specials():
    r = nm.round_to_bf16(np.array([1e-39, -1e-39], dtype=np.float32))
    assert np.allclose(r, [1.01e-39, -1.01e-39], rtol=1e-3, atol=0)
    assert r[0] == ref_round(Fraction(float(np.float32(1e-39))), BF16, "rtne")
    # NaN with payload only in the low half must not turn into inf
    x = f32_from_bits([0x7F800001, 0xFF800001, 0x7FC00000, 0x7F800000, 0xFF800000])
    for mode in ("rtne", "rtz"):
        r = nm.round_to_bf16(x, mode)
        assert np.isnan(r[:3]).all()
        assert np.signbit(r[1])
        assert r[3] == np.inf and r[4] == -np.inf
        b = nm.f32_to_bf16_bits(x, mode)
        assert ((b[:3] & 0x7FFF) > 0x7F80).all()
    # rtz overflow saturates to the largest finite bf16
    assert nm.round_to_bf16(np.array([3.4e38, -3.4e38], dtype=np.float32), "rtz").tolist() == [
        ref_round(Fraction(3.4e38), BF16, "rtz"), -ref_round(Fraction(3.4e38), BF16, "rtz")]


@given(st.lists(u32, min_size=1, max_size=64), st.sampled_from(["rtne", "rtz"]))
def test_bf16_from_f32_matches_exact_reference(bits, mode):
    x = f32_from_bits(bits)
    got = nm.round_to_bf16(x, mode)
    assert got.dtype == np.float32 and got.shape == x.shape
    check_rounding(got, x.tolist(), BF16, mode)
    b = nm.f32_to_bf16_bits(x, mode)
    assert b.dtype == np.uint16
    same = nm.bf16_bits_to_f32(b)
    np.testing.assert_array_equal(same.view(np.uint32), got.view(np.uint32))


@given(st.lists(u64, min_size=1, max_size=64), st.sampled_from(["rtne", "rtz"]))
def test_bf16_from_f64_rounds_once(bits, mode):
    x = np.array(bits, dtype=np.uint64).view(np.float64)
    check_rounding(nm.round_to_bf16(x, mode), x.tolist(), BF16, mode)


@given(st.lists(st.floats(width=64, min_value=-1e39, max_value=1e39), min_size=1, max_size=32))
def test_bf16_from_f64_near_midpoints(vals):
    # Values near bf16 rounding midpoints are where going through float32 would double-round.
    x = np.array(vals, dtype=np.float64)
    mid = nm.round_to_bf16(x).astype(np.float64) * (1 + 2.0**-8)
    for y in (mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)):
        for mode in ("rtne", "rtz"):
            check_rounding(nm.round_to_bf16(y, mode), y.tolist(), BF16, mode)


def test_bf16_from_f64_double_rounding_case():
    x = np.array([1 + 2.0**-8 + 2.0**-40])  # fp32 rounding lands on the bf16 midpoint
    assert float(np.float32(x[0])) == 1 + 2.0**-8
    assert nm.round_to_bf16(x)[0] == 1 + 2.0**-7
    assert nm.round_to_bf16(-x)[0] == -(1 + 2.0**-7)


def test_bf16_bits_roundtrip_exhaustive():
    bits = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    f = nm.bf16_bits_to_f32(bits)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f.view(np.uint32), bits.astype(np.uint32) << 16)
    nan = np.isnan(f)
    for mode in ("rtne", "rtz"):
        back = nm.f32_to_bf16_bits(f, mode)
        np.testing.assert_array_equal(back[~nan], bits[~nan])
        assert np.isnan(nm.bf16_bits_to_f32(back[nan])).all()


# --- fp16 / fp32 ---------------------------------------------------------------------------


@given(st.lists(u32, min_size=1, max_size=64), st.sampled_from(["rtne", "rtz"]))
def test_fp16_from_f32(bits, mode):
    x = f32_from_bits(bits)
    got = nm.round_to_fp16(x, mode)
    assert got.dtype == np.float16
    check_rounding(got, x.tolist(), FP16, mode)


@given(st.lists(u32, min_size=1, max_size=64))
def test_fp16_from_f32_keeps_numpys_bits_nan_payloads_included(bits):
    # round_to_fp16 computes float32 -> float16 in integer passes; NumPy's cast is the reference for every bit
    x = f32_from_bits(bits + [0x7F800001, 0xFF802000, 0x7FC00000, 0x477FEFFF, 0x477FF000, 0x33000000, 0x33000001])
    with np.errstate(all="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(nm.round_to_fp16(x).view(np.uint16), want.view(np.uint16))


def test_fp16_to_f32_every_bit_pattern():
    bits = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    got = nm.f16_to_f32(bits.view(np.float16).reshape(256, 256)).reshape(-1)
    assert got.dtype == np.float32
    ref = np.array([struct.unpack("<e", struct.pack("<H", int(b)))[0] for b in bits])
    nan = np.isnan(ref)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), ref[~nan].astype(np.float32).view(np.uint32))
    # a NaN keeps its sign and its payload, moved to the top of the float's (cvt.f32.f16)
    want = ((bits[nan].astype(np.uint32) & 0x8000) << 16) | 0x7F800000 | ((bits[nan].astype(np.uint32) & 0x3FF) << 13)
    np.testing.assert_array_equal(got[nan].view(np.uint32), want)


@given(st.lists(u64, min_size=1, max_size=64), st.sampled_from(["rtne", "rtz"]))
def test_fp16_from_f64(bits, mode):
    x = np.array(bits, dtype=np.uint64).view(np.float64)
    check_rounding(nm.round_to_fp16(x, mode), x.tolist(), FP16, mode)


@given(st.lists(st.floats(width=64, min_value=-70000, max_value=70000), min_size=1, max_size=64),
       st.sampled_from(["rtne", "rtz"]))
def test_fp16_in_range(vals, mode):
    x = np.array(vals, dtype=np.float64)
    check_rounding(nm.round_to_fp16(x, mode), vals, FP16, mode)
    x32 = x.astype(np.float32)
    check_rounding(nm.round_to_fp16(x32, mode), x32.tolist(), FP16, mode)


def test_fp16_specials():
    x = np.array([65520.0, 1e6, -1e6, np.inf, -np.inf, np.nan, 65519.99, -0.0, 2.0**-25, 2.0**-24 * 1.5])
    assert nm.round_to_fp16(x).tolist()[:5] == [np.inf, np.inf, -np.inf, np.inf, -np.inf]
    r = nm.round_to_fp16(x, "rtz")
    assert r.tolist()[:5] == [65504.0, 65504.0, -65504.0, np.inf, -np.inf]
    assert np.isnan(r[5]) and r[6] == 65504.0 and np.signbit(r[7])
    assert r[8] == 0.0 and r[9] == 2.0**-24
    assert nm.round_to_fp16(x)[9] == 2.0**-23  # tie to even at the subnormal boundary


@given(st.lists(u64, min_size=1, max_size=64), st.sampled_from(["rtne", "rtz"]))
def test_fp32_from_f64(bits, mode):
    x = np.array(bits, dtype=np.uint64).view(np.float64)
    got = nm.round_to_fp32(x, mode)
    assert got.dtype == np.float32
    check_rounding(got, x.tolist(), FP32, mode)


def test_fp32_specials():
    x = np.array([1e39, -1e39, np.inf, np.nan, 3.4028235677973366e38, 1e-46, -1e-46])
    r = nm.round_to_fp32(x, "rtz")
    fmax = float(np.finfo(np.float32).max)
    assert r.tolist()[:3] == [fmax, -fmax, np.inf]
    assert np.isnan(r[3]) and r[4] == fmax and r[5] == 0 and np.signbit(r[6])
    r = nm.round_to_fp32(x)
    assert r.tolist()[:3] == [np.inf, -np.inf, np.inf] and r[4] == np.inf


# --- tf32 ----------------------------------------------------------------------------------


def test_tf32_gpu_values():
    x = np.array([1 + 2.0**-11, 1 + 2.0**-10 + 2.0**-11, -(1 + 2.0**-11), 1 + 2.0**-10], dtype=np.float32)
    assert nm.tf32_truncate(x).tolist() == [1.0, 1.0009765625, -1.0, 1.0009765625]
    sp = f32_from_bits([0x7F800001, 0x7F800000, 0xFF800000, 0x80000000])
    r = nm.tf32_truncate(sp)
    assert np.isnan(r[0]) and r[1] == np.inf and r[2] == -np.inf and np.signbit(r[3])


@given(st.lists(u32, min_size=1, max_size=64))
def test_tf32_is_rtz_to_11_bits(bits):
    x = f32_from_bits(bits)
    got = nm.tf32_truncate(x)
    assert got.dtype == np.float32
    check_rounding(got, x.tolist(), TF32, "rtz")


# --- float -> int -----------------------------------------------------------------------------


def ref_f2i(v: float, dt) -> int:
    info = np.iinfo(dt)
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return int(info.max) if v > 0 else int(info.min)
    return min(max(math.trunc(v), int(info.min)), int(info.max))


def test_float_to_int_gpu_table():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -2.7, 2.7, -0.5], dtype=np.float32)
    got = nm.float_to_int(x, np.int32)
    assert got.dtype == np.int32
    assert got.tolist() == [0, 2147483647, -2147483648, 2147483647, -2147483648, -2, 2, 0]
    assert nm.float_to_int(x, np.uint32).tolist() == [0, 2**32 - 1, 0, 3000000000, 0, 0, 2, 0]


def test_float_to_int_64bit_bounds():
    x = np.array([2.0**63, 2.0**63 - 1024, -2.0**63, -2.0**63 - 2048, 2.0**64, 2.0**64 - 2048, 1e30, -1e30])
    assert nm.float_to_int(x, np.int64).tolist() == [
        2**63 - 1, 2**63 - 1024, -2**63, -2**63, 2**63 - 1, 2**63 - 1, 2**63 - 1, -2**63]
    assert nm.float_to_int(x, np.uint64).tolist() == [
        2**63, 2**63 - 1024, 0, 0, 2**64 - 1, 2**64 - 2048, 2**64 - 1, 0]
    x32 = np.array([2.0**31, 2.0**31 - 128, 2.0**32, 2.0**32 - 256, 2.0**63, 2.0**64], dtype=np.float32)
    assert nm.float_to_int(x32, np.int32).tolist() == [2**31 - 1, 2**31 - 128, 2**31 - 1, 2**31 - 1,
                                                       2**31 - 1, 2**31 - 1]
    assert nm.float_to_int(x32, np.uint32).tolist() == [2**31, 2**31 - 128, 2**32 - 1, 2**32 - 256,
                                                        2**32 - 1, 2**32 - 1]
    assert nm.float_to_int(x32, np.int64).tolist()[4:] == [2**63 - 1, 2**63 - 1]
    assert nm.float_to_int(x32, np.uint64).tolist()[4:] == [2**63, 2**64 - 1]
    assert nm.float_to_int(np.array([300.5, -300.5, 127.9, -128.9], np.float16), np.int8).tolist() == [
        127, -128, 127, -128]


@given(st.lists(st.floats(width=64), min_size=1, max_size=32), st.sampled_from(INT_DTYPES))
def test_float_to_int_f64(vals, dt):
    got = nm.float_to_int(np.array(vals, dtype=np.float64), dt)
    assert got.dtype == dt
    assert got.tolist() == [ref_f2i(v, dt) for v in vals]


@given(st.lists(st.floats(width=32), min_size=1, max_size=32), st.sampled_from(INT_DTYPES))
def test_float_to_int_f32(vals, dt):
    x = np.array(vals, dtype=np.float32)
    assert nm.float_to_int(x, dt).tolist() == [ref_f2i(v, dt) for v in x.tolist()]


@given(st.lists(st.integers(-2**65, 2**65), min_size=1, max_size=32), st.sampled_from(INT_DTYPES))
def test_float_to_int_near_integer_bounds(ints, dt):
    vals = [float(i) for i in ints] + [float(np.iinfo(dt).max), float(np.iinfo(dt).min)]
    assert nm.float_to_int(np.array(vals), dt).tolist() == [ref_f2i(v, dt) for v in vals]


# --- integer division ---------------------------------------------------------------------------


def wrap(v: int, dt) -> int:
    info = np.iinfo(dt)
    span = int(info.max) - int(info.min) + 1
    return (v - int(info.min)) % span + int(info.min)


def ref_cdivmod(a: int, b: int, dt):
    signed = np.dtype(dt).kind == "i"
    if b == 0:
        return (-1 if signed else int(np.iinfo(dt).max)), a
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    r = a - b * q
    assert a == b * q + r and abs(r) < abs(b) and (r == 0 or (r < 0) == (a < 0))
    return wrap(q, dt), r


def test_c_div_mod_examples():
    a = np.array([-7, 7, -7, 7, 5, -5, -2**31, -2**31, 0], dtype=np.int32)
    b = np.array([2, -2, -2, 2, 0, 0, -1, 0, 0], dtype=np.int32)
    assert ni.c_div(a, b).tolist() == [-3, -3, 3, 3, -1, -1, -2**31, -1, -1]
    assert ni.c_mod(a, b).tolist() == [-1, 1, -1, 1, 5, -5, 0, -2**31, 0]
    u = np.array([7, 0, 2**32 - 1], dtype=np.uint32)
    assert ni.c_div(u, np.uint32(0)).tolist() == [2**32 - 1] * 3
    assert ni.c_mod(u, np.uint32(0)).tolist() == [7, 0, 2**32 - 1]
    assert ni.c_div(u, np.array([2], np.uint32)).tolist() == [3, 0, 2**31 - 1]
    i64 = np.array([-2**63, 2**63 - 1, -2**63 + 1], dtype=np.int64)
    assert ni.c_div(i64, np.array([-1, 3, 2**62], np.int64)).tolist() == [-2**63, (2**63 - 1) // 3, -1]
    assert ni.c_mod(i64, np.array([-1, 3, 2**62], np.int64)).tolist() == [0, (2**63 - 1) % 3, -2**62 + 1]
    # broadcasting, dtype kept
    q = ni.c_div(np.array([[-9], [9]], np.int8), np.array([2, -4, 0], np.int8))
    assert q.dtype == np.int8 and q.tolist() == [[-4, 2, -1], [4, -2, -1]]


@given(st.sampled_from(INT_DTYPES), st.data())
def test_c_div_mod_match_exact_reference(dt, data):
    info = np.iinfo(dt)
    ints = st.integers(int(info.min), int(info.max))
    special = st.sampled_from([0, 1, -1, int(info.min), int(info.max), int(info.min) + 1]).filter(
        lambda v: info.min <= v <= info.max)
    vals = st.one_of(ints, special)
    pairs = data.draw(st.lists(st.tuples(vals, vals), min_size=1, max_size=40))
    a = np.array([p[0] for p in pairs], dtype=dt)
    b = np.array([p[1] for p in pairs], dtype=dt)
    q, r = ni.c_div(a, b), ni.c_mod(a, b)
    assert q.dtype == dt and r.dtype == dt
    want = [ref_cdivmod(x, y, dt) for x, y in pairs]
    assert q.tolist() == [w[0] for w in want]
    assert r.tolist() == [w[1] for w in want]


@given(st.lists(st.tuples(st.floats(width=64), st.floats(width=64)), min_size=1, max_size=32))
def test_c_fmod_f64(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    got = nm.c_fmod(a, b)
    assert got.dtype == np.float64
    for g, (x, y) in zip(got.tolist(), pairs):
        try:
            want = math.fmod(x, y)
        except ValueError:
            want = math.nan
        assert same_float(g, want), (x, y, g, want)


@pytest.mark.parametrize("dt", [np.float16, np.float32])
def test_c_fmod_narrow(dt):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(2000) * 100).astype(dt)
    b = (rng.standard_normal(2000) * 3).astype(dt)
    got = nm.c_fmod(a, b)
    assert got.dtype == dt
    want = [math.fmod(x, y) for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(got.astype(np.float64), want)  # fmod is exact
    assert nm.c_fmod(np.array([-7.5], dt), np.array([2.0], dt)).tolist() == [-1.5]
    assert np.isnan(nm.c_fmod(np.array([1.0, np.inf], dt), np.array([0.0, 1.0], dt))).all()


# --- erf ---------------------------------------------------------------------------------------

PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899"
             "862803482534211706798214808651328230664709384460955058223172535940812848111745")


def ref_erf(x: float) -> Fraction:
    """erf by its Taylor series in 120-digit decimal arithmetic (fine for |x| <= 6)."""
    with localcontext() as ctx:
        ctx.prec = 120
        X = Decimal(x)
        X2 = X * X
        term = X
        total = X
        n = 1
        while True:
            term = -term * X2 / n
            t = term / (2 * n + 1)
            total += t
            if t == 0 or abs(t) < abs(total) * Decimal(10) ** -110:
                break
            n += 1
        return Fraction(total * 2 / PI.sqrt())


@settings(max_examples=100)
@given(st.lists(st.floats(min_value=-6, max_value=6), min_size=1, max_size=8))
def test_erf_f64_within_one_ulp(vals):
    got = nm.erf(np.array(vals))
    assert got.dtype == np.float64
    for g, x in zip(got.tolist(), vals):
        exact = ref_erf(x)
        assert abs(Fraction(g) - exact) <= Fraction(math.ulp(float(exact))), (x, g, float(exact))


def test_erf_specials_and_dtypes():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 30.0, -30.0, 1e-310, -5e-324])
    r = nm.erf(x)
    assert r[0] == 0 and not np.signbit(r[0]) and np.signbit(r[1])
    assert r[2:4].tolist() == [1.0, -1.0] and np.isnan(r[4]) and r[5:7].tolist() == [1.0, -1.0]
    assert r[7] == ref_round(ref_erf(1e-310), FP64, "rtne") and r[8] < 0
    for dt in (np.float32, np.float16):
        xs = np.linspace(-4, 4, 1001).astype(dt)
        got = nm.erf(xs)
        assert got.dtype == dt
        want = np.array([math.erf(v) for v in xs.tolist()]).astype(dt)
        np.testing.assert_array_equal(got, want)
    assert nm.erf(np.float32(0.5)).dtype == np.float32
    assert nm.erf(np.zeros((2, 3))).shape == (2, 3)


# --- fma -----------------------------------------------------------------------------------------


def ref_fma(a: float, b: float, c: float, fmt) -> float:
    if any(math.isinf(v) or math.isnan(v) for v in (a, b, c)):
        return a * b + c if not (math.isinf(c) and math.isfinite(a) and math.isfinite(b)) else c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    negzero = False
    if exact == 0 and (a == 0 or b == 0):
        negzero = (math.copysign(1, a) * math.copysign(1, b) < 0) and math.copysign(1, c) < 0
    return ref_round(exact, fmt, "rtne", negative_zero=negzero)


def check_fma(a, b, c, fmt):
    got = nm.fma(a, b, c)
    assert got.dtype == a.dtype
    for g, x, y, z in zip(got.tolist(), *(v.tolist() for v in (a, b, c))):
        want = ref_fma(x, y, z, fmt)
        assert same_float(g, want), (x.hex(), y.hex(), z.hex(), g, want)


def test_fma_f64_examples():
    a = np.array([1 + 2.0**-27, 0.1, -0.0, 1.0, 1e300, np.inf, np.inf, 2.0, -1e-300, 1e-200])
    b = np.array([1 + 2.0**-27, 10.0, 1.0, 1.0, 1e300, 0.0, 1.0, 3.0, 1e-300, 1e-200])
    c = np.array([-(1 + 2.0**-26), -1.0, -0.0, -1.0, -np.inf, 1.0, -np.inf, np.inf, 0.0, 5e-324])
    r = nm.fma(a, b, c)
    assert r[0] == 2.0**-54  # a*b + c in plain float64 gives 0
    assert r[1] == float(Fraction(0.1) * 10 - 1)
    assert r[2] == 0 and np.signbit(r[2])
    assert r[3] == 0 and not np.signbit(r[3])
    assert r[4] == -np.inf and np.isnan(r[5]) and np.isnan(r[6]) and r[7] == np.inf
    assert r[8] == 0 and np.signbit(r[8])
    assert r[9] == 5e-324
    check_fma(a, b, c, FP64)


def test_fma_f64_needs_round_to_odd():
    # a*b = 2**-53 + 2**-106: adding the low parts with round-to-nearest ties twice
    # (1 + 2**-53 -> 1.0); the exact sum lies above the midpoint.
    b = float(np.nextafter(1 / 3, 1)) * 2.0**-53
    r = nm.fma(np.array([3.0, -3.0]), np.array([b, b]), np.array([1.0, -1.0]))
    assert r.tolist() == [1 + 2.0**-52, -(1 + 2.0**-52)]
    assert float(Fraction(3) * Fraction(b) + 1) == 1 + 2.0**-52


@given(st.lists(st.tuples(st.floats(width=64, allow_nan=False), st.floats(width=64, allow_nan=False),
                          st.floats(width=64, allow_nan=False)), min_size=1, max_size=16))
def test_fma_f64_random(triples):
    a, b, c = (np.array(v) for v in zip(*triples))
    check_fma(a, b, c, FP64)


@given(st.lists(st.tuples(st.floats(width=64, allow_nan=False, allow_infinity=False),
                          st.floats(width=64, allow_nan=False, allow_infinity=False),
                          st.integers(-3, 3)), min_size=1, max_size=16))
def test_fma_f64_cancellation(triples):
    # c close to -a*b exposes the low part of the product
    a = np.array([t[0] for t in triples])
    b = np.array([t[1] for t in triples])
    with np.errstate(all="ignore"):
        p = a * b
    assume(np.isfinite(p).all())
    steps = np.array([t[2] for t in triples])
    c = -p
    with np.errstate(all="ignore"):
        for _ in range(3):
            c = np.where(steps > 0, np.nextafter(c, np.inf), np.where(steps < 0, np.nextafter(c, -np.inf), c))
            steps = steps - np.sign(steps)
    check_fma(a, b, c, FP64)


moderate64 = st.floats(min_value=-1e10, max_value=1e10)


@given(st.lists(st.tuples(moderate64, moderate64, moderate64), min_size=1, max_size=16))
def test_fma_f64_moderate_range(triples):
    a, b, c = (np.array(v) for v in zip(*triples))
    check_fma(a, b, c, FP64)


def test_fma_f32_double_rounding_case():
    a = np.array([1 + 2.0**-12], dtype=np.float32)
    c = np.array([2.0**-80], dtype=np.float32)
    naive = np.float32(np.float64(a[0]) * np.float64(a[0]) + np.float64(c[0]))
    assert naive == np.float32(1 + 2.0**-11)  # double rounding
    assert nm.fma(a, a, c)[0] == np.float32(1 + 2.0**-11 + 2.0**-23)
    assert nm.fma(-a, a, -c)[0] == -np.float32(1 + 2.0**-11 + 2.0**-23)


@given(st.lists(st.tuples(u32, u32, u32), min_size=1, max_size=32))
def test_fma_f32_random_bits(triples):
    a, b, c = (f32_from_bits(list(v)) for v in zip(*triples))
    check_fma(a, b, c, FP32)


small32 = st.floats(width=32, min_value=-4, max_value=4)


@given(st.lists(st.tuples(small32, small32, st.floats(width=32, min_value=-16, max_value=16)),
                min_size=1, max_size=32))
def test_fma_f32_moderate(triples):
    a, b, c = (np.array(v, dtype=np.float32) for v in zip(*triples))
    check_fma(a, b, c, FP32)
    # and with c chosen to cancel most of the product
    c2 = (-(a.astype(np.float64) * b.astype(np.float64))).astype(np.float32)
    check_fma(a, b, c2, FP32)


@given(st.lists(st.tuples(st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1)),
                min_size=1, max_size=32))
def test_fma_f16_random_bits(triples):
    a, b, c = (np.array(v, dtype=np.uint16).view(np.float16) for v in zip(*triples))
    check_fma(a, b, c, FP16)


def test_fma_broadcast_scalars():
    r = nm.fma(np.float32(1.5), np.array([2.0, 4.0], np.float32), np.float32(1.0))
    assert r.dtype == np.float32 and r.tolist() == [4.0, 7.0]
    assert nm.fma(np.array(2.0), np.array(3.0), np.array(1.0)) == 7.0
    r = nm.fma(np.array([1.0, 3.0], np.float16), 0.1, 2.0)  # Python floats take the array's type
    assert r.dtype == np.float16
    np.testing.assert_array_equal(r, [ref_fma(x, float(np.float16(0.1)), 2.0, FP16) for x in (1.0, 3.0)])
    r = nm.c_fmod(np.array([-7.5, 7.25], np.float32), 2.0)
    assert r.dtype == np.float32 and r.tolist() == [-1.5, 1.25]


# --- umulhi ----------------------------------------------------------------------------------------


def test_umulhi_examples():
    def hi(vals_a, vals_b, dt):
        return ni.umulhi(np.array(vals_a, dt), np.array(vals_b, dt)).tolist()

    assert hi([-1, 2**31 - 1, -2**31], [-1, 2**31 - 1, -2**31], np.int32) == [0, 2**30 - 1, 2**30]
    assert hi([2**32 - 1], [2**32 - 1], np.uint32) == [2**32 - 2]
    assert hi([2**64 - 1], [2**64 - 1], np.uint64) == [2**64 - 2]
    assert hi([-1, -2**63], [5, -2**63], np.int64) == [-1, 2**62]
    assert hi([-7], [3], np.int8) == [-1] and hi([200], [200], np.uint8) == [156]


@given(st.sampled_from(INT_DTYPES), st.data())
def test_umulhi_matches_python(dt, data):
    info = np.iinfo(dt)
    bits = 8 * np.dtype(dt).itemsize
    ints = st.integers(int(info.min), int(info.max))
    pairs = data.draw(st.lists(st.tuples(ints, ints), min_size=1, max_size=40))
    a = np.array([p[0] for p in pairs], dtype=dt)
    b = np.array([p[1] for p in pairs], dtype=dt)
    got = ni.umulhi(a, b)
    assert got.dtype == dt
    # Python's >> floors, which is the two's-complement high word for signed products.
    assert got.tolist() == [wrap((x * y) >> bits, dt) for x, y in pairs]


# --- shifts ---------------------------------------------------------------------------------------


def test_shift_gpu_values():
    x = np.array([-8, 7, -1, 3], dtype=np.int32)
    assert ni.shift_right(x, np.array(1, np.int32)).tolist() == [-4, 3, -1, 1]
    assert ni.shift_left(x, np.array(31, np.int32)).tolist() == [0, -2**31, -2**31, -2**31]
    assert ni.shift_left(x, np.array(32, np.int32)).tolist() == [0, 0, 0, 0]
    assert ni.shift_right(x, np.array([32, 100, -1, 31], np.int32)).tolist() == [-1, 0, -1, 0]
    u = x.view(np.uint32)
    assert ni.shift_right(u, np.array([1, 32, -1, 31], np.int32)).tolist() == [2**31 - 4, 0, 0, 0]
    assert ni.shift_left(u, np.array([4, 40], np.uint32)[:, None]).tolist() == [
        [(2**32 - 8) * 16 % 2**32, 112, 2**32 - 16, 48], [0, 0, 0, 0]]


def ref_shl(a, s, dt):
    width = 8 * np.dtype(dt).itemsize
    return 0 if not 0 <= s < width else wrap(a << s, dt)


def ref_shr(a, s, dt):
    width = 8 * np.dtype(dt).itemsize
    if np.dtype(dt).kind == "i":
        return a >> (s if 0 <= s < width else width - 1)  # arithmetic (Python floors)
    return a >> s if 0 <= s < width else 0


@given(st.sampled_from(INT_DTYPES), st.data())
def test_shifts_match_python(dt, data):
    info = np.iinfo(dt)
    width = 8 * np.dtype(dt).itemsize
    a_vals = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1, max_size=40))
    s_lo = max(int(info.min), -width - 2)
    s_vals = data.draw(st.lists(st.integers(s_lo, min(int(info.max), 2 * width + 2)),
                                min_size=len(a_vals), max_size=len(a_vals)))
    a = np.array(a_vals, dtype=dt)
    s = np.array(s_vals, dtype=dt)
    left, right = ni.shift_left(a, s), ni.shift_right(a, s)
    assert left.dtype == dt and right.dtype == dt
    assert left.tolist() == [ref_shl(x, y, dt) for x, y in zip(a_vals, s_vals)]
    assert right.tolist() == [ref_shr(x, y, dt) for x, y in zip(a_vals, s_vals)]
    # shift amounts of another integer type (huge unsigned values clamp as well)
    s64 = np.array(s_vals, dtype=np.int64).view(np.uint64)
    assert ni.shift_left(a, s64).tolist() == left.tolist()
    assert ni.shift_right(a, s64).tolist() == right.tolist()


def test_bad_arguments():
    with pytest.raises(ValueError):
        nm.round_to_bf16(np.ones(2, np.float32), mode="rn")
    with pytest.raises(TypeError):
        nm.float_to_int(np.ones(2), np.float32)
    with pytest.raises(TypeError):
        ni.c_div(np.ones(2, np.int32), np.ones(2, np.int64))


def test_signalling_nans_do_not_warn():
    # A plain NumPy cast of a signalling NaN raises "invalid value" (made an error here).
    s16 = np.array([0x7C01, 0x3C00], dtype=np.uint16).view(np.float16)
    s32 = np.array([0x7F800001, 0x3F800000], dtype=np.uint32).view(np.float32)
    s64 = np.array([0x7FF0000000000001, 0x3FF0000000000000], dtype=np.uint64).view(np.float64)
    for x in (s16, s32, s64):
        for mode in ("rtne", "rtz"):
            assert np.isnan(nm.round_to_bf16(x, mode)[0]) and nm.round_to_bf16(x, mode)[1] == 1
            assert np.isnan(nm.round_to_fp16(x, mode)[0])
            assert np.isnan(nm.round_to_fp32(x, mode)[0])
            assert nm.f32_to_bf16_bits(x, mode)[1] == 0x3F80
        assert np.isnan(nm.tf32_truncate(x)[0])
        assert np.isnan(nm.erf(x)[0]) and np.isnan(nm.fma(x, x, x)[0]) and np.isnan(nm.c_fmod(x, x)[0])
        for dt in INT_DTYPES:
            assert nm.float_to_int(x, dt).tolist() == [0, 1]
