"""Atomics return the old values of one serial order of programs and lanes, grouped or not (S11.3, S11.5,
S11.6, S11.7).

The reference is independent of minitriton: each update is written here from Triton's lowering on bit
patterns (Python ints; fp32/fp64 additions through NumPy scalars), and a search checks that *some* order of
the active lanes on each address, applied one by one from the initial memory, gives every returned old value
and the final memory. Any order is a legal GPU result (S1.37); no particular one is asserted.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl

DTYPES = {"int32": (np.int32, 32), "uint32": (np.uint32, 32), "int64": (np.int64, 64),
          "float32": (np.float32, 32), "float64": (np.float64, 64)}
OPS = ["add", "max", "min", "and", "or", "xor", "xchg", "cas"]

INT_POOL = [0, 1, -1, 2, 3, 7, -8, 100, -100]
FLOAT_POOL = [0.0, -0.0, 1.0, -1.0, 2.5, -7.0, 0.1, float("inf"), float("-inf"), float("nan"), 1e-45, -1e-45, 3e38]
NEG_NAN = {32: 0xFFC00000, 64: 0xFFF8000000000000}  # a NaN with its sign bit set


@triton.jit
def rmw_kernel(mem, offs, vals, cmps, on, old, L: tl.constexpr, OP: tl.constexpr):
    r = tl.program_id(0) * L + tl.arange(0, L)
    p = mem + tl.load(offs + r)
    v = tl.load(vals + r)
    m = tl.load(on + r) != 0
    if OP == "add":
        o = tl.atomic_add(p, v, mask=m)
    elif OP == "max":
        o = tl.atomic_max(p, v, mask=m)
    elif OP == "min":
        o = tl.atomic_min(p, v, mask=m)
    elif OP == "and":
        o = tl.atomic_and(p, v, mask=m)
    elif OP == "or":
        o = tl.atomic_or(p, v, mask=m)
    elif OP == "xor":
        o = tl.atomic_xor(p, v, mask=m)
    elif OP == "xchg":
        o = tl.atomic_xchg(p, v, mask=m)
    else:
        o = tl.atomic_cas(p, tl.load(cmps + r), v)
    tl.store(old + r, o, mask=m)


# ------------------------------------------------------------------ the reference, on bit patterns

def _bits(x, dt) -> int:
    np_t, width = DTYPES[dt]
    return int(np.array([x], np_t).view(np.dtype(f"u{width // 8}"))[0])


def _value(bits: int, dt):
    np_t, width = DTYPES[dt]
    return np.array([bits], np.dtype(f"u{width // 8}")).view(np_t)[0]


def _signed(bits: int, width: int) -> int:
    return bits - (1 << width) if bits >> (width - 1) else bits


def reference_update(op, dt, old: int, v: int, cmp: int) -> int:
    """The new bit pattern after one lane's update, as the GPU computes it."""
    width = DTYPES[dt][1]
    mask = (1 << width) - 1
    is_float = dt.startswith("float")
    if op == "xchg":
        return v
    if op == "cas":
        return v if old == cmp else old  # atom.cas compares bit patterns
    if op in ("and", "or", "xor"):
        return {"and": old & v, "or": old | v, "xor": old ^ v}[op]
    if op == "add":
        if is_float:
            return _bits(_value(old, dt) + _value(v, dt), dt)
        return (old + v) & mask
    if is_float:
        # Triton's semantic.atomic_max/min on fp32/fp64: a value with the sign bit clear does a signed integer
        # max (min) of the bit patterns, one with the sign bit set an unsigned min (max)
        negative = v >> (width - 1)
        if op == "max":
            return min(old, v) if negative else (v if _signed(v, width) > _signed(old, width) else old)
        return max(old, v) if negative else (v if _signed(v, width) < _signed(old, width) else old)
    signed = dt.startswith("int")
    key = (lambda b: _signed(b, width)) if signed else (lambda b: b)
    pick = max if op == "max" else min
    return pick(old, v, key=key)


def _same(a: int, b: int, op, dt) -> bool:
    if op == "add" and dt.startswith("float"):  # NaN payloads of an addition are not compared
        va, vb = _value(a, dt), _value(b, dt)
        if np.isnan(va) and np.isnan(vb):
            return True
    return a == b


def serial_order_exists(op, dt, start: int, lanes: list, final: int) -> bool:
    """Whether the lanes [(v, cmp, returned old)] of one address, applied in some order from `start`, each
    see their returned old value and leave `final`. Depth-first; lane order is tried first."""
    full = (1 << len(lanes)) - 1
    failed = set()

    def search(done: int, state: int) -> bool:
        if done == full:
            return _same(state, final, op, dt)
        if (done, state) in failed:
            return False
        for i, (v, cmp, seen) in enumerate(lanes):
            if not done >> i & 1 and _same(seen, state, op, dt):
                if search(done | 1 << i, reference_update(op, dt, state, v, cmp)):
                    return True
        failed.add((done, state))
        return False

    return search(0, start)


# ------------------------------------------------------------------ inputs

def _pool(dt):
    if dt.startswith("float"):
        width = DTYPES[dt][1]
        return st.one_of(st.sampled_from(FLOAT_POOL).map(lambda x: _bits(x, dt)), st.just(NEG_NAN[width]))
    np_t, width = DTYPES[dt]
    info = np.iinfo(np_t)
    extremes = [int(info.max), int(info.min), int(info.max) // 2 + 1]
    return st.sampled_from(INT_POOL + extremes).map(lambda x: x % (1 << width))  # two's complement bits


@st.composite
def atomic_cases(draw):
    dt = draw(st.sampled_from(list(DTYPES)))
    op = draw(st.sampled_from(OPS))
    programs = draw(st.integers(1, 4))
    lanes = draw(st.sampled_from([1, 2, 4]))
    n = programs * lanes
    addresses = draw(st.integers(1, 3))
    pool = _pool(dt)
    return dict(dt=dt, op=op, programs=programs, lanes=lanes,
                memory=draw(st.lists(pool, min_size=addresses, max_size=addresses)),
                offsets=draw(st.lists(st.integers(0, addresses - 1), min_size=n, max_size=n)),
                values=draw(st.lists(pool, min_size=n, max_size=n)),
                cmps=draw(st.lists(pool, min_size=n, max_size=n)),
                on=[True] * n if op == "cas" else draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                group_size=draw(st.sampled_from([None, 1, 2, 3])))


def _array(bits: list, dt):
    width = DTYPES[dt][1]
    return np.array(bits, np.dtype(f"u{width // 8}")).view(DTYPES[dt][0])


def _as_bits(a: np.ndarray) -> list:
    return [int(b) for b in a.view(np.dtype(f"u{a.itemsize}"))]


@settings(max_examples=200)
@given(atomic_cases())
def test_old_values_come_from_one_serial_order(case):
    dt, op = case["dt"], case["op"]
    mem = _array(case["memory"], dt)
    start = list(case["memory"])
    vals, cmps = _array(case["values"], dt), _array(case["cmps"], dt)
    offs = np.array(case["offsets"], np.int32)
    on = np.array(case["on"], np.int8)
    old = np.zeros_like(vals)
    with minitriton.set_options(group_size=case["group_size"]):
        rmw_kernel[(case["programs"],)](mem, offs, vals, cmps, on, old, L=case["lanes"], OP=op)
    returned, final = _as_bits(old), _as_bits(mem)
    for address in range(len(start)):
        lanes = [(case["values"][k], case["cmps"][k], returned[k]) for k in range(len(offs))
                 if offs[k] == address and on[k]]
        assert serial_order_exists(op, dt, start[address], lanes, final[address]), (
            f"atomic_{op} {dt} address {address}: start {start[address]:#x}, lanes (v, cmp, old) "
            f"{[tuple(hex(x) for x in lane) for lane in lanes]}, final {final[address]:#x}: "
            f"no serial order gives these")


# ------------------------------------------------------------------ the cases of the report, by hand

@triton.jit
def count_kernel(p, out):
    tl.store(out + tl.program_id(0), tl.atomic_add(p, 1))


@triton.jit
def lanes_kernel(p, out, L: tl.constexpr):
    r = tl.arange(0, L)
    tl.store(out + tl.program_id(0) * L + r, tl.atomic_add(p + r * 0, 1))


@pytest.mark.parametrize("group_size", [None, 1, 2])
def test_programs_on_one_address_get_a_permutation_of_the_counts(group_size):
    """Three programs doing `atomic_add(p, 1)` see 0, 1 and 2 in some order (S11.7), not the new values."""
    p, out = np.zeros(1, np.int32), np.full(3, -5, np.int32)
    with minitriton.set_options(group_size=group_size):
        count_kernel[(3,)](p, out)
    assert sorted(out.tolist()) == [0, 1, 2] and p[0] == 3


@pytest.mark.parametrize("group_size", [None, 1, 3])
def test_lanes_on_one_address_get_a_permutation_of_the_counts(group_size):
    """Many lanes of many programs on one address (the run-length path): every count is seen exactly once."""
    p, out = np.zeros(1, np.int32), np.full(5 * 64, -5, np.int32)
    with minitriton.set_options(group_size=group_size):
        lanes_kernel[(5,)](p, out, L=64)
    assert sorted(out.tolist()) == list(range(5 * 64)) and p[0] == 5 * 64


@triton.jit
def histogram_kernel(x, hist, sums, old, BINS: tl.constexpr, L: tl.constexpr):
    r = tl.program_id(0) * L + tl.arange(0, L)
    v = tl.load(x + r)
    b = (v * 1000).to(tl.int32) % BINS
    tl.store(old + r, tl.atomic_add(hist + b, 1))
    tl.atomic_add(sums + b, v)


@pytest.mark.parametrize("bins", [2, 16])
def test_histogram_counts_and_sums(bins):
    """Few addresses, many lanes: counts exact, each lane's ticket unique per bin, fp32 sums within the
    reordering error of a float64 reference."""
    rng = np.random.default_rng(bins)
    x = rng.random(8 * 128).astype(np.float32)
    hist, sums = np.zeros(bins, np.int32), np.zeros(bins, np.float32)
    old = np.zeros(x.size, np.int32)
    histogram_kernel[(8,)](x, hist, sums, old, BINS=bins, L=128)
    b = (x * 1000).astype(np.int32) % bins
    np.testing.assert_array_equal(hist, np.bincount(b, minlength=bins))
    for k in range(bins):
        assert sorted(old[b == k].tolist()) == list(range(int(hist[k])))
    np.testing.assert_allclose(sums, np.bincount(b, weights=x.astype(np.float64), minlength=bins), rtol=1e-5)


@triton.jit
def extreme_kernel(m_max, m_min, v, o_max, o_min, L: tl.constexpr):
    r = tl.arange(0, L)
    x = tl.load(v + r)
    tl.store(o_max + r, tl.atomic_max(m_max + r, x))
    tl.store(o_min + r, tl.atomic_min(m_min + r, x))


def _f32(*bits):
    return np.array(bits, np.uint32).view(np.float32)


def test_float_max_min_follow_the_integer_lowering():
    """S11.5: memory [nan, -inf, 0] with values [-7, nan, -0.0]: max gives [nan, nan, 0] (a NaN in memory
    stays, +0 beats -0), min gives [-7, -inf, -0.0]; the old values come back bit for bit."""
    memory = np.array([np.nan, -np.inf, 0.0, -np.nan, 1.0, -0.0, 5.0, -3.0], np.float32)
    memory[3] = _f32(0xFFC00000)[0]
    values = np.array([-7.0, np.nan, -0.0, 2.0, -np.inf, 0.0, -np.nan, np.nan], np.float32)
    values[6] = _f32(0xFFC00000)[0]
    m_max, m_min = memory.copy(), memory.copy()
    o_max, o_min = np.zeros(8, np.float32), np.zeros(8, np.float32)
    extreme_kernel[(1,)](m_max, m_min, values, o_max, o_min, L=8)
    bits = lambda a: a.view(np.uint32).tolist()  # noqa: E731
    nan, neg_nan = 0x7FC00000, 0xFFC00000
    assert bits(m_max[:3]) == [nan, nan, 0]
    assert bits(m_min[:3]) == bits(np.array([-7.0, -np.inf, -0.0], np.float32))
    # -NaN is below -inf: max with anything replaces it, min keeps it; +0 and -0 are ordered
    assert bits(m_max[3:6]) == bits(np.array([2.0, 1.0, 0.0], np.float32))
    assert bits(m_min[3:6]) == [neg_nan] + bits(np.array([-np.inf, -0.0], np.float32))
    assert bits(m_max[6:]) == bits(np.array([5.0], np.float32)) + [nan]
    assert bits(m_min[6:]) == [neg_nan] + bits(np.array([-3.0], np.float32))
    assert bits(o_max) == bits(memory) and bits(o_min) == bits(memory)


@triton.jit
def cas_kernel(m, c, v, o, L: tl.constexpr):
    r = tl.arange(0, L)
    tl.store(o + r, tl.atomic_cas(m + r, tl.load(c + r), tl.load(v + r)))


def test_cas_compares_bit_patterns():
    """S11.6: -0.0 does not match +0.0, a NaN matches the same NaN bits (atom.cas.b32)."""
    memory = np.array([-0.0, np.nan, 0.0, 1.0], np.float32)
    cmp = np.array([0.0, np.nan, 0.0, 1.0], np.float32)
    new = np.array([5.0, 6.0, 7.0, 8.0], np.float32)
    out = np.zeros(4, np.float32)
    before = memory.copy()
    cas_kernel[(1,)](memory, cmp, new, out, L=4)
    assert memory.view(np.uint32).tolist() == [0x80000000] + new[1:].view(np.uint32).tolist()
    assert out.view(np.uint32).tolist() == before.view(np.uint32).tolist()


def test_reference_model_examples():
    """The reference's float max on bit patterns, checked on the row's example by hand."""
    f = lambda x: struct.unpack("<I", struct.pack("<f", x))[0]  # noqa: E731
    assert reference_update("max", "float32", 0x7FC00000, f(-7.0), 0) == 0x7FC00000
    assert reference_update("max", "float32", f(float("-inf")), 0x7FC00000, 0) == 0x7FC00000
    assert reference_update("max", "float32", 0, 0x80000000, 0) == 0
    assert reference_update("min", "float32", 0, 0x80000000, 0) == 0x80000000


INTERPRETER_SRC = '''
import triton
import triton.language as tl


@triton.jit
def extremes(m_max, m_min, v, o_max, o_min, L: tl.constexpr):
    r = tl.arange(0, L)
    x = tl.load(v + r)
    tl.store(o_max + r, tl.atomic_max(m_max + r, x))
    tl.store(o_min + r, tl.atomic_min(m_min + r, x))


@triton.jit
def swaps(m, c, v, o, L: tl.constexpr):
    r = tl.arange(0, L)
    tl.store(o + r, tl.atomic_cas(m + r, tl.load(c + r), tl.load(v + r)))
'''


@pytest.mark.parametrize("np_t", [np.float32, np.float64])
def test_float_max_min_and_cas_match_tritons_interpreter(np_t):
    """Every pair of special values (±NaN, ±inf, ±0, ±1, a denormal) through Triton's interpreter, which
    runs the same integer lowering (S11.5) and compares bit patterns in `atomic_cas` (S11.6): memory and
    old values equal bit for bit."""
    from helpers.oracle import assert_same_as_interpreter
    bits = np.dtype(f"u{np.dtype(np_t).itemsize}")
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324 if np_t is np.float64 else 1e-45],
                       np_t)
    neg_nan = np.array([np.nan], np_t).view(bits) | (bits.type(1) << bits.type(8 * bits.itemsize - 1))
    special = np.concatenate([special, neg_nan.view(np_t)])
    memory, values = (a.ravel() for a in np.meshgrid(special, special))
    n = 128
    memory, values = np.resize(memory, n), np.resize(values, n)
    outs = [np.zeros(n, np_t) for _ in range(2)]
    new = np.full(n, 42.0, np_t)
    assert_same_as_interpreter(INTERPRETER_SRC, [
        ("extremes", (1,), (memory.copy(), memory.copy(), values, *outs), dict(L=n)),
        ("swaps", (1,), (memory.copy(), values, new, np.zeros(n, np_t)), dict(L=n)),  # cas compares bits too
    ], bitwise_floats=True)
