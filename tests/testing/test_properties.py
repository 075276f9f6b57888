"""minitriton's own invariants, under the kit's mask-breaking strategies (minitriton.testing.strategies).

1. Masked-off lanes never touch memory and never count in traffic: wild offsets behind a false mask raise
   nothing, read nothing, write nothing, and add nothing to the counters or the per-program trace.
2. Out-of-bounds detection is exact: a launch fails iff some unmasked lane points outside its tensor's
   span, and the error names the first such program in launch order, exactly its bad lanes and offsets.
3. Loads return `other` bit for bit where masked (0 without `other`), memory bit for bit elsewhere:
   NaN payloads, -0.0, subnormals, bf16 included.
4. Results, errors, counters and memory are identical for every program-group size (1, 2, 3, default)
   and for a tiny value budget (groups cut into small chunks).

Every drawn case runs under each grouping configuration and the outcomes are compared bit for bit; each
is also checked against a NumPy model of the launch built here from the drawn lanes.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton import testing as mtt
from minitriton.testing import Layout
from minitriton.testing import strategies as mts

HERE = os.path.basename(__file__)
_SRC = open(__file__).read().splitlines()

# (group_size, value_budget): the default grouping, fixed small groups, and budgets that cut groups down
GROUPINGS = [(None, None), (1, None), (2, None), (3, None), (None, 1), (None, 4096)]


def _line(marker):
    hits = [i + 1 for i, text in enumerate(_SRC) if text.rstrip().endswith("#: " + marker)]
    assert len(hits) == 1, marker
    return hits[0]


@pytest.fixture(autouse=True)
def _restore_options(monkeypatch):
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    # these properties are about bounds and masks; two lanes may hit one address
    with minitriton.set_options(sanitize=False):
        yield


def _storage(a):
    """The storage array of an argument (bf16 Buffers as their uint16 bits)."""
    return a.array if isinstance(a, minitriton.Buffer) else a


def _bits(a):
    s = _storage(a)
    return s.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[s.itemsize]) if s.dtype != bool else s


def _base_bits(a):
    """The bits of the whole buffer an argument is a view of (padding included)."""
    s = _storage(a)
    return _bits(s.base if s.base is not None else s)


def _clone(a):
    """A copy at the same place of a copied buffer (layout kept)."""
    s = _storage(a)
    base = s.base.copy()
    offset = s.__array_interface__["data"][0] - s.base.__array_interface__["data"][0]
    c = np.ndarray(s.shape, s.dtype, buffer=base, offset=offset, strides=s.strides)
    return minitriton.Buffer(c, a.triton_dtype) if isinstance(a, minitriton.Buffer) else c


def under_every_grouping(run):
    """Run `run()` (-> dict of arrays) under each GROUPINGS entry inside record(); assert every outcome is
    identical (arrays bit for bit, the whole counter record, the error text); return the first outcome."""
    outcomes = []
    default_budget = minitriton.options().value_budget
    for group_size, budget in GROUPINGS:
        minitriton.set_options(group_size=group_size)
        minitriton.set_options(value_budget=budget or default_budget)
        error = None
        with minitriton.record(trace_programs=[(0,), (1,)]) as rec:
            try:
                arrays = run()
            except minitriton.MiniTritonError as e:
                arrays, error = getattr(e, "arrays", None), e
        minitriton.set_options(group_size=None, value_budget=default_budget)
        outcomes.append((arrays, list(rec.launches), None if error is None else f"{type(error).__name__}: {error}",
                         error))
    first = outcomes[0]
    for (group_size, budget), (arrays, launches, text, _) in zip(GROUPINGS[1:], outcomes[1:]):
        label = f"group_size={group_size}, value_budget={budget}"
        assert text == first[2], label
        assert launches == first[1], label
        for name, a in (first[0] or {}).items():
            assert np.array_equal(_bits(a), _bits(arrays[name])), f"{name} differs with {label}"
            assert np.array_equal(_base_bits(a), _base_bits(arrays[name])), f"{name}'s buffer differs with {label}"
    return first


# ------------------------------------------------------------------------------------ the drawn cases

@st.composite
def gathers(draw, wild_active=False):
    """Programs x BLOCK lanes over an `x` drawn with any dtype, size and 1-D layout: each lane has an offset
    from `x_ptr`, a mask bit and a distinct destination. Masked-off lanes get wild int32 offsets and
    destinations; active lanes point at elements of x (or, with `wild_active`, anywhere near its span)."""
    block = draw(mts.blocks(1, 64))
    programs = draw(st.integers(1, 4))
    lanes = programs * block
    n = draw(mts.sizes(block, max_size=4 * block + 1))
    dtype = draw(mts.dtypes(bf16=True))
    x = draw(mts.arrays(dtype, n, layout=mts.layouts(1, strided=True, reversed_=True)))
    stride = _storage(x).strides[0] // _storage(x).itemsize if n else 1
    mask = draw(hnp.arrays(bool, lanes))
    wild = draw(hnp.arrays(np.int32, lanes, elements=st.integers(-2**31, 2**31 - 1)))
    if wild_active:
        span = (n - 1) * abs(stride) + 1 if n else 0
        low = -(span - 1) if stride < 0 else 0
        high = low + span - 1
        near = draw(hnp.arrays(np.int64, lanes, elements=st.integers(low - 3, high + 3)))
        offsets = np.where(draw(hnp.arrays(bool, lanes)), wild, near)
    else:
        if n == 0:
            mask[:] = False
        index = draw(hnp.arrays(np.int64, lanes, elements=st.integers(0, max(n - 1, 0))))
        offsets = np.where(mask, index * stride, wild)
    perm = np.array(draw(st.permutations(range(lanes))), np.int32)
    dest = np.where(mask, perm, draw(hnp.arrays(np.int32, lanes, elements=st.integers(-2**31, 2**31 - 1))))
    other = draw(mts.arrays(dtype, 1, layout=Layout()))
    return dict(block=block, programs=programs, x=x, stride=stride, mask=mask.astype(np.int8),
                offsets=offsets.astype(np.int32), dest=dest.astype(np.int32), other=other)


@triton.jit
def k_gather(x_ptr, off_ptr, dest_ptr, m_ptr, other_ptr, res_ptr, out_ptr, cnt_ptr, USE_OTHER: tl.constexpr,
             BLOCK: tl.constexpr):
    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    o = tl.load(off_ptr + lanes)
    d = tl.load(dest_ptr + lanes)
    m = tl.load(m_ptr + lanes) != 0
    if USE_OTHER:
        v = tl.load(x_ptr + o, mask=m, other=tl.load(other_ptr))
    else:
        v = tl.load(x_ptr + o, mask=m)
    tl.store(res_ptr + lanes, v)                   # every lane: what the load returned
    tl.store(out_ptr + d, v, mask=m)               # a scatter through the same mask
    tl.atomic_add(cnt_ptr + d, 1, mask=m)


def _launch_gather(case, use_other):
    x = _clone(case["x"])
    lanes = case["programs"] * case["block"]
    ty = case["other"].triton_dtype if isinstance(case["other"], minitriton.Buffer) else case["x"].dtype
    res, out = mtt.empty(lanes, ty), mtt.empty(lanes, ty)
    cnt = np.zeros(lanes, np.int32)
    k_gather[(case["programs"],)](x, case["offsets"], case["dest"], case["mask"], case["other"], res, out, cnt,
                                  USE_OTHER=use_other, BLOCK=case["block"])
    return {"x": x, "res": res, "out": out, "cnt": cnt}


@settings(max_examples=40, deadline=None)
@given(case=gathers(), use_other=st.booleans())
def test_masked_lanes_never_touch_memory_and_loads_return_other(case, use_other):
    arrays, launches, error, _ = under_every_grouping(lambda: _launch_gather(case, use_other))
    assert error is None
    m = case["mask"] != 0
    x_bits = _bits(case["x"])
    n = x_bits.size
    stride = case["stride"]
    index = np.where(m, case["offsets"], 0) // stride
    loaded = x_bits[index] if n else np.zeros(m.size, x_bits.dtype)
    other = _bits(case["other"])[0] if use_other else x_bits.dtype.type(0)
    # 3: bit for bit, memory where the mask is on, `other` (or +0) where it is off
    np.testing.assert_array_equal(_bits(arrays["res"]), np.where(m, loaded, other))
    # 1: the masked scatter wrote exactly the active destinations; everything else is still poison
    written = np.zeros(m.size, bool)
    written[case["dest"][m]] = True
    # (a written lane may hold the poison bits by chance, x = -83 as int8: its value is checked instead)
    assert mtt.unwritten(arrays["out"])[~written].all()
    np.testing.assert_array_equal(_bits(arrays["out"])[case["dest"][m]], loaded[m])
    np.testing.assert_array_equal(arrays["cnt"], written.astype(np.int32))
    assert np.array_equal(_base_bits(arrays["x"]), _base_bits(case["x"]))  # x and the padding around it
    # 1: traffic counts only active lanes, per program
    rec = launches[0]["tensors"]
    block, programs = case["block"], case["programs"]
    active = m.reshape(programs, block).sum(axis=1)
    itemsize = _storage(case["x"]).itemsize
    px = rec["x_ptr"]["per_program"]
    assert px["loaded_elements"] == active.tolist()
    assert px["loaded_bytes"] == (active * itemsize).tolist()
    assert px["masked_load_lanes"] == (block - active).tolist()
    distinct = [len(set(case["offsets"].reshape(programs, block)[p][m.reshape(programs, block)[p]].tolist()))
                for p in range(programs)]
    assert px["unique_loaded_bytes"] == [d * itemsize for d in distinct]
    assert rec["out_ptr"]["per_program"]["stored_elements"] == active.tolist()
    assert rec["out_ptr"]["per_program"]["masked_store_lanes"] == (block - active).tolist()
    assert rec["res_ptr"]["per_program"]["masked_store_lanes"] == [0] * programs
    assert rec["cnt_ptr"]["per_program"]["atomic_elements"] == active.tolist()
    assert rec["cnt_ptr"]["per_program"]["masked_atomic_lanes"] == (block - active).tolist()
    for entry in launches[0]["trace"]:  # the per-program trace: offsets from x_ptr of active lanes only
        p = entry["program"][0]
        sel = slice(p * block, (p + 1) * block)
        assert entry["tensors"]["x_ptr"]["loaded"] == sorted(set(case["offsets"][sel][m[sel]].tolist()))
        assert entry["tensors"]["out_ptr"]["stored"] == sorted(case["dest"][sel][m[sel]].tolist())


# ------------------------------------------------------------------------------------ exact out of bounds

@triton.jit
def k_oob_load(x_ptr, off_ptr, m_ptr, res_ptr, BLOCK: tl.constexpr):
    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = tl.load(m_ptr + lanes) != 0
    v = tl.load(x_ptr + tl.load(off_ptr + lanes), mask=m)  #: oob-load
    tl.store(res_ptr + lanes, v)


@triton.jit
def k_oob_store(x_ptr, off_ptr, m_ptr, res_ptr, BLOCK: tl.constexpr):
    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = tl.load(m_ptr + lanes) != 0
    tl.store(res_ptr + lanes, tl.load(x_ptr + lanes * 0, mask=lanes < 0))
    tl.store(x_ptr + tl.load(off_ptr + lanes), tl.load(res_ptr + lanes), mask=m)  #: oob-store


@triton.jit
def k_oob_atomic(x_ptr, off_ptr, m_ptr, res_ptr, BLOCK: tl.constexpr):
    lanes = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = tl.load(m_ptr + lanes) != 0
    tl.store(res_ptr + lanes, tl.load(m_ptr + lanes).to(tl.int32))
    tl.atomic_add(x_ptr + tl.load(off_ptr + lanes), 1, mask=m)  #: oob-atomic


OPS = {"load": (k_oob_load, "reads"), "store": (k_oob_store, "writes"), "atomic": (k_oob_atomic, "updates")}
CALLS = {"load": "tl.load(x_ptr + tl.load(off_ptr + lanes), mask=m)",
         "store": "tl.store(x_ptr + tl.load(off_ptr + lanes), tl.load(res_ptr + lanes), mask=m)",
         "atomic": "tl.atomic_add(x_ptr + tl.load(off_ptr + lanes), 1, mask=m)"}


def _caret(line, call):
    """The kernel line as a diagnostic shows it, a caret under the failing call."""
    indent = len(line) - len(line.lstrip())
    return f"    {line.strip()}\n    {' ' * (line.index(call) - indent)}{'^' * len(call)}"


def _runs(values, limit=4):
    """Sorted distinct ints as 'a…b' runs, at most `limit` runs then a count (written from the message spec)."""
    values = sorted(set(int(v) for v in values))
    runs = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    parts = [f"{a}" if a == b else f"{a}…{b}" for a, b in runs[:limit]]
    if len(runs) > limit:
        parts.append(f"… ({len(values)} offsets in all)")
    return ", ".join(parts)


@st.composite
def oob_cases(draw):
    op = draw(st.sampled_from(sorted(OPS)))
    case = draw(gathers(wild_active=True))
    if op == "atomic" and not (isinstance(case["x"], np.ndarray) and case["x"].dtype in (np.int32, np.float32)):
        case["x"] = draw(mts.arrays(st.sampled_from([np.int32, np.float32]), _storage(case["x"]).size,
                                    layout=mts.layouts(1, strided=True, reversed_=True)))
        s = case["x"]
        case["stride"] = s.strides[0] // s.itemsize if s.size else 1
    return op, case


def _launch_oob(op, case):
    x = _clone(case["x"])
    lanes = case["programs"] * case["block"]
    ty = np.int32 if op == "atomic" else (case["other"].triton_dtype if isinstance(x, minitriton.Buffer)
                                         else x.dtype)
    res = mtt.empty(lanes, ty)
    arrays = {"x": x, "res": res}
    try:
        OPS[op][0][(case["programs"],)](x, case["offsets"], case["mask"], res, BLOCK=case["block"])
    except minitriton.MiniTritonError as e:
        e.arrays = arrays
        raise
    return arrays


@settings(max_examples=60, deadline=None)
@given(oob_cases())
def test_out_of_bounds_detection_is_exact(op_case):
    op, case = op_case
    arrays, _, text, error = under_every_grouping(lambda: _launch_oob(op, case))
    block, programs, stride = case["block"], case["programs"], case["stride"]
    n = _storage(case["x"]).size
    span = (n - 1) * abs(stride) + 1 if n else 0          # elements from the view's lowest to highest element
    low = -(span - 1) if stride < 0 and n else 0           # offsets from x_ptr (its first element) in the span
    high = low + span - 1
    off = case["offsets"].astype(np.int64).reshape(programs, block)
    m = (case["mask"] != 0).reshape(programs, block)
    bad = m & ((off < low) | (off > high))
    failing = [p for p in range(programs) if bad[p].any()]
    if not failing:
        assert error is None
        return
    p = failing[0]
    assert isinstance(error, minitriton.OutOfBoundsError) and isinstance(error, IndexError)
    offsets = off[p][bad[p]]
    where = "past the end of" if offsets.max() > high else "before the start of"
    op_name = {"load": "tl.load", "store": "tl.store", "atomic": "tl.atomic_add"}[op]
    assert str(error) == (
        f"{op_name} {OPS[op][1]} {where} `x_ptr` ({HERE}:{_line('oob-' + op)}, program ({p},))\n"
        f"  {int(bad[p].sum())} of {block} lanes {'is' if bad[p].sum() == 1 else 'are'} out of range (first: lane {int(np.argmax(bad[p]))}): "
        f"offsets {_runs(offsets)} from `x_ptr`, but `x_ptr` has {span} elements (valid offsets {low}…{high})\n"
        f"  fix: the mask lets these lanes through: check its bound and the strides used to build the offsets "
        f"(no automatic fix: the pointer is loaded from memory, so the offsets are data, not code)\n"
        f"{_caret(_SRC[_line('oob-' + op) - 1], CALLS[op])}")
    assert (error.kernel, error.lineno, error.program) == (OPS[op][0].__name__, _line("oob-" + op), (p,))
    # programs before p completed; p stopped at the failing op (its earlier stores stand, as on a GPU);
    # the later programs never ran
    done = (p if op == "load" else p + 1) * block
    assert mtt.unwritten(arrays["res"])[done:].all()
    res = _bits(arrays["res"])[:done]
    if op == "load":  # what each lane read: its element of the span (padding included), or 0 where masked
        s = _storage(case["x"])
        base = _base_bits(case["x"])
        first = (s.__array_interface__["data"][0] - s.base.__array_interface__["data"][0]) // s.itemsize
        lanes_m, lanes_off = m.reshape(-1)[:done], off.reshape(-1)[:done]
        read = base[np.where(lanes_m, first + lanes_off, 0)] if base.size else np.zeros(lanes_m.shape, base.dtype)
        expected = np.where(lanes_m, read, 0)   # an empty array: every lane before p was masked off
        np.testing.assert_array_equal(res, expected)
        assert np.array_equal(_base_bits(arrays["x"]), _base_bits(case["x"]))
    else:
        np.testing.assert_array_equal(res, 0 if op == "store" else case["mask"][:done].astype(np.int32))


# ------------------------------------------------------------------------------------ control flow, reductions

@triton.jit
def k_rows(x_ptr, steps_ptr, out_ptr, stats_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    best = tl.full((BLOCK,), float("-inf"), tl.float32)
    for start in range(0, tl.load(steps_ptr + row) * BLOCK, BLOCK):  # a different trip count per row
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        acc += tl.where(v == v, v, 0.0)
        best = tl.maximum(best, tl.where(mask, v, float("-inf")))
    total = tl.sum(acc, axis=0)
    if total > 0:                                     # data-dependent branch: the group splits
        tl.store(out_ptr + row, total)
    else:
        tl.store(out_ptr + row, -total + 1)
    tl.atomic_max(stats_ptr, tl.max(best, axis=0))
    tl.atomic_add(stats_ptr + 1, 1.0)


@settings(max_examples=25, deadline=None)
@given(block=mts.blocks(2, 32), shape=mts.shapes(2, (None, 32), max_side=40), dtype=mts.dtypes(ints=False, bf16=True),
       data=st.data())
def test_control_flow_and_reductions_identical_in_every_grouping(block, shape, dtype, data):
    rows, cols = shape
    # integer values and NaN: every partial sum is exact in fp32, so the branch on its sign is unambiguous
    elements = st.one_of(st.integers(-100, 100).map(float), st.just(float("nan")))
    x = data.draw(mts.arrays(dtype, shape, elements=elements, layout=mts.layouts(2)))
    steps = data.draw(hnp.arrays(np.int32, rows, elements=st.integers(0, triton.cdiv(cols, block) + 1)))
    stride = _storage(x).strides[0] // _storage(x).itemsize if _storage(x).size else cols

    def run():
        out, stats = mtt.empty(rows, np.float32), np.array([-np.inf, 0], np.float32)
        k_rows[(rows,)](x, steps, out, stats, cols, stride, BLOCK=block)
        return {"out": out, "stats": stats}

    arrays, _, error, _ = under_every_grouping(run)
    assert error is None
    values = mtt.as_numpy(x).astype(np.float64)
    expected = []
    for r in range(rows):
        upto = min(cols, int(steps[r]) * block)
        row = values[r, :upto] if rows else values[:0]
        total = float(np.float32(np.nansum(row)))
        expected.append(total if total > 0 else -total + 1)
    np.testing.assert_array_equal(arrays["out"], np.array(expected, np.float32))
    assert arrays["stats"][1] == rows
    maxima = [np.nanmax(values[r, :min(cols, int(steps[r]) * block)], initial=-np.inf) for r in range(rows)]
    assert arrays["stats"][0] == np.float32(max(maxima, default=-np.inf))
