"""The sanitizer's footprints (runs of elements) against the per-lane definition of a finding.

A kernel makes random accesses to one array (zeros, or unwritten as `minitriton.testing.empty` or `np.empty` under `run` make it): each program's tile starts at a random offset (affine in the
program id, or loaded), with random row strides and masks (prefix rectangles, or any lanes), loads and stores
in a random order, some unmasked, under random groupings. The findings must be those of the sanitizer checking every lane
(its writer/reader arrays from the first access) and those of a reference written here lane by lane: programs
one at a time, in launch order, a finding at the first lane whose element another program touched first.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.errors import SanitizerError
from minitriton.memory.initialization import registry
from minitriton.observers import footprints, sanitizer

N = 64  # elements of the array every program reads and writes


@triton.jit
def accesses(x_ptr, start_ptr, rows_ptr, cols_ptr, mask_ptr, n_cols, STORES: tl.constexpr, OPS: tl.constexpr,
             AFFINE: tl.constexpr, STEP: tl.constexpr, LANES: tl.constexpr, R: tl.constexpr, C: tl.constexpr,
             STRIDE: tl.constexpr, FULL: tl.constexpr, FLAT: tl.constexpr):
    pid = tl.program_id(0)
    if FLAT:  # one row, as a 1-D block masked by `cols < n_cols` (the row kernels' tail)
        rows = 0
        cols = tl.arange(0, C)
        acc = tl.zeros((C,), tl.float32)
    else:
        rows = tl.arange(0, R)[:, None]
        cols = tl.arange(0, C)[None, :]
        acc = tl.zeros((R, C), tl.float32)
    for i in tl.static_range(OPS):
        if AFFINE:
            start = pid * STEP + i
        else:
            start = tl.load(start_ptr + pid * OPS + i)
        if FLAT and not LANES:
            mask = cols < n_cols
        elif LANES:
            mask = tl.load(mask_ptr + (pid * OPS + i) * R * C + rows * C + cols) != 0
        else:
            mask = (rows < tl.load(rows_ptr + pid * OPS + i)) & (cols < tl.load(cols_ptr + pid * OPS + i))
        ptrs = x_ptr + start + rows * STRIDE + cols  # (in this order, a tile: its tile shortcuts are taken)
        if (STORES >> i) & 1:
            if (FULL >> i) & 1:
                tl.store(ptrs, acc + i)
            else:
                tl.store(ptrs, acc + i, mask=mask)
        elif (FULL >> i) & 1:
            acc += tl.load(ptrs)
        else:
            acc += tl.load(ptrs, mask=mask)


@st.composite
def launches(draw):
    programs = draw(st.integers(1, 6))
    ops = draw(st.integers(1, 3))
    r, c = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 2, 8]))
    stride = draw(st.sampled_from([c, c + 1, 2 * c]))
    span = (r - 1) * stride + c
    affine = draw(st.booleans())
    step = draw(st.sampled_from([0, 1, span // 2 + 1, span]))
    if affine and (programs - 1) * step + ops - 1 + span > N:
        step = 0
    starts = np.array([[p * step + i if affine else draw(st.integers(0, N - span)) for i in range(ops)]
                       for p in range(programs)], np.int32)
    lanes = draw(st.booleans())
    if lanes:
        masks = np.array(draw(st.lists(st.booleans(), min_size=programs * ops * r * c,
                                       max_size=programs * ops * r * c)), np.int8)
    else:
        masks = np.zeros(1, np.int8)
    return dict(programs=programs, ops=ops, r=r, c=c, stride=stride, affine=affine, step=step, starts=starts,
                lanes=lanes, masks=masks, stores=draw(st.integers(0, 2**ops - 1)), full=draw(st.integers(0, 2**ops - 1)),
                rows=np.array(draw(st.lists(st.integers(0, r), min_size=programs * ops, max_size=programs * ops)),
                              np.int32),
                cols=np.array(draw(st.lists(st.integers(0, c), min_size=programs * ops, max_size=programs * ops)),
                              np.int32),
                group_size=draw(st.sampled_from([None, 1, 2, 3])), held_lanes=draw(st.sampled_from([0, 2**20])),
                tracked=draw(st.sampled_from([False, "empty", "watched"])), flat=r == 1 and draw(st.booleans()),
                n_cols=draw(st.integers(0, c)))


def run(case):
    """(kind of the finding, program, its fields) or None; the array after the launch; the unwritten-output
    warnings; and, for a tracked array, its written elements and the programs whose masks left each out."""
    x = minitriton.testing.empty(N) if case["tracked"] else np.zeros(N, np.float32)
    if case["tracked"] == "watched":  # as `python -m minitriton run` tracks `np.empty`: unwritten outputs reported
        x = np.zeros(N, np.float32)
        registry.register(x, made="np.empty", watched=True)
    found = None
    with minitriton.set_options(sanitize=True, group_size=case["group_size"]), pytest.MonkeyPatch.context() as mp, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(footprints, "_HELD_LANES", case["held_lanes"])  # 0: loads become runs as soon as N lanes
        try:
            accesses[(case["programs"],)](
                x, case["starts"], case["rows"], case["cols"], case["masks"], case["n_cols"], STORES=case["stores"],
                OPS=case["ops"], AFFINE=case["affine"], STEP=case["step"], LANES=case["lanes"], R=case["r"],
                C=case["c"], STRIDE=case["stride"], FULL=case["full"], FLAT=case["flat"])
        except SanitizerError as e:
            record = e.diagnostic
            fields = {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                      for k, v in vars(record).items() if k not in ("traceback", "frames")}
            found = record.kind, e.program, repr(fields)
    shadow = registry.lookup(x)
    state = None if shadow is None else (shadow.written.tolist(), shadow.masked_by.tolist())
    return found, np.array(x), [str(w.message) for w in caught if w.category is sanitizer.UnwrittenOutputWarning], state


def lanes_of(case, p, i):
    """Element offsets of the active lanes of program p's access i (unmasked where FULL has bit i)."""
    r, c = case["r"], case["c"]
    start = p * case["step"] + i if case["affine"] else int(case["starts"][p, i])
    out = []
    for row in range(r):
        for col in range(c):
            if (case["full"] >> i) & 1:
                on = True
            elif case["flat"] and not case["lanes"]:
                on = col < case["n_cols"]
            elif case["lanes"]:
                on = case["masks"][((p * case["ops"] + i) * r + row) * c + col] != 0
            else:
                on = row < case["rows"][p * case["ops"] + i] and col < case["cols"][p * case["ops"] + i]
            if on:
                out.append(start + row * case["stride"] + col)
    return out


def reference(case):
    """The first finding, lane by lane: (kind, program) or None."""
    writer, readers = {}, {}
    for p in range(case["programs"]):
        for i in range(case["ops"]):
            elements = lanes_of(case, p, i)
            if (case["stores"] >> i) & 1:
                if any(writer.get(e, p) != p for e in elements):
                    return "race", p
                for e in elements:
                    if readers.get(e, {p}) - {p}:
                        return ("order_write" if len(readers[e] - {p}) == 1 and len(readers[e]) == 1
                                else "order_write_several"), p
                for e in elements:
                    writer[e] = p
            else:
                if any(writer.get(e, p) != p for e in elements):
                    return "order_read", p
                if case["tracked"] and any(e not in writer for e in elements):
                    return "uninitialized", p
                for e in elements:
                    readers.setdefault(e, set()).add(p)
    return None


@settings(max_examples=150, deadline=None)
@given(launches())
def test_footprints_find_what_the_per_lane_check_finds(case):
    fast, x_fast, *rest_fast = run(case)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sanitizer.LaunchSanitizer, "_cleared", lambda self, group, event: False)
        per_lane, x_lanes, *rest_lanes = run(case)
    assert fast == per_lane
    np.testing.assert_array_equal(x_fast, x_lanes)
    assert rest_fast == rest_lanes
    expected = reference(case)
    assert (None if fast is None else (fast[0], fast[1][0])) == expected
