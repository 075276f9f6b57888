"""The observers' fast paths against the per-lane definition, on the shapes where they are taken.

A kernel loops over accesses to one array, a 1-D block per iteration at a random or affine start, masked at a
random tail (`cols < n`) or not at all, a load or a store as a loaded flag says. Either several programs with
differing trip counts (the loop runs in lockstep: programs that left it are masked off), or one program over a
very wide block. The sanitizer's findings, the array, the unwritten-output warnings and the tracked array's
marks, and the counters of `record()`, must be those of the observers seeing every access as lanes only (no
tile form) with the sanitizer checking every lane; the findings and counters also those of one program at a
time.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.errors import SanitizerError
from minitriton.memory import access
from minitriton.memory.initialization import registry
from minitriton.observers import footprints, sanitizer


@triton.jit
def looped(x_ptr, trips_ptr, start_ptr, n_ptr, store_ptr, MAX_TRIPS: tl.constexpr, C: tl.constexpr,
           AFFINE: tl.constexpr, STEP: tl.constexpr, FULL: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, C)
    acc = tl.zeros((C,), tl.float32)
    for i in range(tl.load(trips_ptr + pid)):
        at = pid * MAX_TRIPS + i
        if AFFINE:
            start = pid * STEP + i
        else:
            start = tl.load(start_ptr + at)
        ptrs = x_ptr + start + cols
        store = tl.load(store_ptr + at) != 0
        if FULL:  # every lane, both ops: the loop's own mask only
            acc += tl.load(ptrs)
            tl.store(ptrs, acc + i)
        else:
            inside = cols < tl.load(n_ptr + at)
            acc += tl.load(ptrs, mask=inside & ~store, other=0.0)
            tl.store(ptrs, acc + i, mask=inside & store)


@st.composite
def launches(draw):
    wide = draw(st.booleans())
    if wide:
        programs, c = 1, draw(st.sampled_from([4096, 2**14, 2**16]))
    else:
        programs, c = draw(st.integers(1, 6)), draw(st.sampled_from([1, 2, 8]))
    size = 2 * c if wide else 64
    max_trips = draw(st.integers(1, 4))
    cells = programs * max_trips
    affine = draw(st.booleans())
    step = draw(st.sampled_from([0, 1, c, c // 2 + 1]))
    if (programs - 1) * step + max_trips - 1 + c > size:
        affine = False
    lengths = st.sampled_from([0, c, c // 2, c - 1]) | st.integers(0, c)
    return dict(
        programs=programs, c=c, size=size, max_trips=max_trips, affine=affine, step=step,
        trips=np.array(draw(st.lists(st.integers(0, max_trips), min_size=programs, max_size=programs)), np.int32),
        starts=np.array(draw(st.lists(st.integers(0, size - c), min_size=cells, max_size=cells)), np.int32),
        n=np.array(draw(st.lists(lengths, min_size=cells, max_size=cells)), np.int32),
        stores=np.array(draw(st.lists(st.booleans(), min_size=cells, max_size=cells)), np.int8),
        full=draw(st.booleans()) and draw(st.booleans()), group_size=draw(st.sampled_from([None, 2, 3])),
        held_lanes=draw(st.sampled_from([0, c // 2, 2**20])), tracked=draw(st.sampled_from([False, "empty", "watched"])))


def observe(case, group_size, per_lane=False):
    """(finding: kind, program, fields, or None), the array after the launch, the unwritten-output warnings,
    the tracked array's written flags and the program whose mask last left out each unwritten element, and
    the record's tensors (counters) when the launch completed."""
    x = minitriton.testing.empty(case["size"]) if case["tracked"] else np.zeros(case["size"], np.float32)
    if case["tracked"] == "watched":
        x = np.zeros(case["size"], np.float32)
        registry.register(x, made="np.empty", watched=True)
    found = tensors = None
    with minitriton.set_options(sanitize=True, group_size=group_size), pytest.MonkeyPatch.context() as mp, \
            warnings.catch_warnings(record=True) as caught, minitriton.record() as rec:
        warnings.simplefilter("always")
        mp.setattr(footprints, "_HELD_LANES", case["held_lanes"])
        if per_lane:
            mp.setattr(access, "tile_of", lambda ptr, mask, shape: None)
            mp.setattr(sanitizer.LaunchSanitizer, "_cleared", lambda self, group, event: False)
        try:
            looped[(case["programs"],)](x, case["trips"], case["starts"], case["n"], case["stores"],
                                        MAX_TRIPS=case["max_trips"], C=case["c"], AFFINE=case["affine"],
                                        STEP=case["step"], FULL=case["full"])
            tensors = rec.last["tensors"]
        except SanitizerError as e:
            fields = {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                      for k, v in vars(e.diagnostic).items() if k not in ("traceback", "frames")}
            found = e.diagnostic.kind, e.program, repr(fields)
    shadow = registry.lookup(x)
    state = None
    if shadow is not None:  # a mask's mark counts only where no value was written
        state = shadow.written.tolist(), np.where(shadow.written, -9, shadow.masked_by).tolist()
    unwritten = [str(w.message) for w in caught if w.category is sanitizer.UnwrittenOutputWarning]
    return found, np.array(x), unwritten, state, tensors


@settings(max_examples=120, deadline=None)
@given(launches())
def test_fast_paths_observe_what_every_lane_shows(case):
    fast = observe(case, case["group_size"])
    lanes = observe(case, case["group_size"], per_lane=True)
    alone = observe(case, 1)
    assert fast[0] == lanes[0] == alone[0]
    for a, b in ((fast, lanes), (fast, alone)):
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2:] == b[2:]
