"""Loops whose trip count differs between the programs of a group run in lockstep with per-program masks.

Each kernel runs grouped (the group iterates while any program's loop goes on, the programs that left sit out)
and with other group sizes down to one program per pass; outputs must be bit-identical, the counter records
equal, and an error's diagnostic record (an out-of-bounds access, an uninitialised read, a race, a failing
`tl.device_assert` in the k-th iteration of program p) the same. Outputs are also checked against a NumPy reference, and a spy on the
engine checks that the grouped run kept its groups whole (no pass was rolled back and split).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.observers import sanitizer
from minitriton.runtime import scheduler as engine

BLOCK = 8
MAX_TRIPS = 5


@pytest.fixture(autouse=True)
def _clean_options(monkeypatch):
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    with minitriton.set_options():
        yield


@triton.jit
def ragged(start_ptr, end_ptr, step_ptr, x_ptr, u_ptr, out_ptr, acc_ptr, count_ptr, total_ptr,
           bad_pid, bad_k, bad_kind, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    total = 0
    k = 0
    for i in tl.range(tl.load(start_ptr + pid), tl.load(end_ptr + pid), tl.load(step_ptr + pid)):
        hit = (pid == bad_pid) & (k == bad_k)
        far = tl.where(hit & (bad_kind == 1), 1 << 20, 0)            # 1: an out-of-bounds load
        v = tl.load(x_ptr + i * BLOCK + offs + far)
        v += tl.load(u_ptr + offs, mask=offs < tl.where(hit & (bad_kind == 2), BLOCK, 0), other=0.0)  # 2: unwritten
        j = 0
        while j < (i + pid) % 3:                                     # a nested loop, its own trip counts
            acc += 1.0
            j += 1
        acc += v
        total += i
        for _ in range(0, (i + pid) % 2):                            # a nested range, its own bounds
            total += 100
        row = tl.where(hit & (bad_kind == 3), 0, i)                  # 3: a store into another program's row
        tl.store(out_ptr + row * BLOCK + offs, v * 2 + pid)
        tl.atomic_add(count_ptr + pid, 1)
        tl.device_assert(~(hit & (bad_kind == 4)), "iteration k of program p")   # 4: a failing assert
        k += 1
    tl.store(acc_ptr + pid * BLOCK + offs, acc)
    tl.store(total_ptr + pid, total)


class _Spy:
    """The size of every group the engine ran, and whether any pass was rolled back."""

    def __init__(self):
        self.sizes, self.undone, self.real = [], 0, engine._run_group

    def __call__(self, group, call):
        self.sizes.append(group.size)
        outcome = self.real(group, call)
        self.undone += outcome is not None
        return outcome


def _problem(trips, steps):
    """Per program: start, end and step of its range (disjoint rows per program), and the rows it visits."""
    n = len(trips)
    span = MAX_TRIPS * 3
    start = np.array([p * span + (0 if s > 0 else span - 1) for p, s in enumerate(steps)], np.int32)
    step = np.array(steps, np.int32)
    end = start + step * np.array(trips, np.int32)
    return start, end, step, n * span


def _run(trips, steps, group_size, bad=(0, 0, 0), sanitize=False):
    start, end, step, rows = _problem(trips, steps)
    n = len(trips)
    rng = np.random.default_rng(len(trips))
    x = rng.standard_normal((rows, BLOCK)).astype(np.float32)
    u = np.zeros(BLOCK, np.float32)
    out = np.zeros((rows, BLOCK), np.float32)
    acc, count, total = np.zeros((n, BLOCK), np.float32), np.zeros(n, np.int32), np.zeros(n, np.int32)
    spy = engine._run_group = _Spy()
    error = None
    try:
        with minitriton.set_options(group_size=group_size, sanitize=sanitize, debug=True):
            if sanitize:
                sanitizer.registry.register(u)
            with minitriton.record() as rec:
                ragged[(n,)](start, end, step, x, u, out, acc, count, total, *bad, BLOCK=BLOCK)
    except minitriton.MiniTritonError as e:
        error = (type(e).__name__, e.diagnostic.to_json())
    finally:
        engine._run_group = spy.real
    return dict(out=out, acc=acc, count=count, total=total), list(rec.launches), error, spy, (start, step, x)


def _reference(trips, start, step, x):
    n = len(trips)
    out = np.zeros_like(x)
    acc, count, total = np.zeros((n, BLOCK), np.float32), np.zeros(n, np.int32), np.zeros(n, np.int32)
    for p in range(n):
        for k in range(trips[p]):
            i = int(start[p] + k * step[p])
            for _ in range((i + p) % 3):
                acc[p] += np.float32(1)
            acc[p] += x[i]
            total[p] += i + 100 * ((i + p) % 2)
            out[i] = x[i] * 2 + p
        count[p] = trips[p]
    return dict(out=out, acc=acc, count=count, total=total)


programs = st.integers(2, 9)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_ragged_loops_match_one_program_at_a_time(data):
    n = data.draw(programs)
    trips = data.draw(st.lists(st.integers(0, MAX_TRIPS), min_size=n, max_size=n))
    steps = data.draw(st.lists(st.sampled_from([1, 2, 3, -1, -3]), min_size=n, max_size=n))
    sizes = [1, data.draw(st.integers(2, n))]
    ref_out, ref_rec, ref_err, spy, (start, step, x) = _run(trips, steps, None)
    assert ref_err is None
    assert spy.undone == 0 and spy.sizes == [n], "the grouped run split its group instead of masking"
    expected = _reference(trips, start, step, x)
    for name, value in expected.items():
        np.testing.assert_allclose(ref_out[name], value, rtol=1e-6, err_msg=name)
    for g in sizes:
        out, rec, err, _, _ = _run(trips, steps, g)
        assert err is None and rec == ref_rec
        for name in ref_out:
            assert out[name].tobytes() == ref_out[name].tobytes(), name


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_an_error_in_iteration_k_of_program_p_is_reported_as_alone(data):
    n = data.draw(programs)
    trips = data.draw(st.lists(st.integers(0, MAX_TRIPS), min_size=n, max_size=n))
    steps = data.draw(st.lists(st.sampled_from([1, 2, -1]), min_size=n, max_size=n))
    bad = (data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, MAX_TRIPS - 1)),
           data.draw(st.sampled_from([1, 2, 3, 4])))
    sanitize = bad[2] in (2, 3) or data.draw(st.booleans())
    found = [_run(trips, steps, g, bad, sanitize)[:3] for g in (None, 1, data.draw(st.integers(2, n)))]
    (ref_out, ref_rec, ref_err), others = found[0], found[1:]
    if bad[2] != 3 and trips[bad[0]] > bad[1]:   # an out-of-bounds load, an unwritten read, an assert: p's
        assert ref_err is not None and ref_err[1]["program"] == [bad[0]]
    elif bad[2] != 3:
        assert ref_err is None
    for out, rec, err in others:
        assert err == ref_err
        assert rec == ref_rec
        for name in ref_out:
            assert out[name].tobytes() == ref_out[name].tobytes(), name


@triton.jit
def persistent_softmax(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    for row in tl.range(pid, n_rows, nprog):
        x = tl.load(x_ptr + row * n_cols + cols, mask=valid, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=valid)


@pytest.mark.parametrize("group_size", [None, 1, 5])
def test_persistent_softmax_through_the_sanitizer(group_size, monkeypatch):
    rows, cols = 50, 37
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    y = np.empty_like(x)
    sanitizer.registry.register(y)
    spy = _Spy()
    monkeypatch.setattr(engine, "_run_group", spy)
    with minitriton.set_options(sanitize=True, group_size=group_size), minitriton.record() as rec:
        persistent_softmax[(16,)](x, y, rows, cols, BLOCK=64)
    monkeypatch.setattr(engine, "_run_group", spy.real)
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, ref / ref.sum(1, keepdims=True), rtol=1e-6)
    assert sanitizer.unwritten_report(y, "y", (16,)) is None
    assert spy.undone == 0
    counts = rec.launches[-1]["tensors"]
    visits = [len(range(p, rows, 16)) for p in range(16)]   # the rows each program visits
    assert counts["x_ptr"]["per_program"]["loaded_bytes"] == [v * cols * 4 for v in visits]
    assert counts["x_ptr"]["per_program"]["masked_load_lanes"] == [v * (64 - cols) for v in visits]
    assert counts["y_ptr"]["per_program"]["stored_elements"] == [v * cols for v in visits]
    assert counts["y_ptr"]["per_program"]["unique_stored_bytes"] == [v * cols * 4 for v in visits]


@triton.jit
def lock_per_trip(lock_ptr, total_ptr, trips_ptr):
    pid = tl.program_id(0)
    for _ in tl.range(0, tl.load(trips_ptr + pid)):
        while tl.atomic_cas(lock_ptr, 0, 1) == 1:
            pass
        tl.store(total_ptr, tl.load(total_ptr) + 1)
        tl.atomic_xchg(lock_ptr, 0)


@pytest.mark.parametrize("group_size", [None, 1, 3])
def test_a_spin_lock_inside_a_lockstep_loop_still_lets_the_holder_run(group_size):
    trips = np.array([3, 0, 2, 5, 1, 4], np.int32)
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.int32)
    with minitriton.set_options(group_size=group_size):
        lock_per_trip[(len(trips),)](lock, total, trips)
    assert total[0] == trips.sum() and lock[0] == 0


@triton.jit
def relay(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    v = tl.load(flag_ptr + pid)
    while v == 0:   # a lockstep loop (no atomic, no volatile) that waits for the previous program's flag
        v = tl.load(flag_ptr + pid)
    tl.store(out_ptr + pid, pid + 1)
    tl.store(flag_ptr + pid + 1, 1)


@pytest.mark.parametrize("group_size", [None, 1, 4])
def test_a_lockstep_while_that_waits_for_another_program_is_split(group_size):
    n = 7
    flags, out = np.zeros(n + 1, np.int32), np.zeros(n, np.int32)
    flags[0] = 1
    with minitriton.set_options(group_size=group_size):
        relay[(n,)](flags, out)
    assert out.tolist() == list(range(1, n + 1)) and flags.all()


@triton.jit
def stepper(lim_ptr, step_ptr, out_ptr):
    pid = tl.program_id(0)
    i = 0
    lim = tl.load(lim_ptr + pid)
    step = tl.load(step_ptr + pid)
    while i < lim:
        i += step
    tl.store(out_ptr + pid, i)


@pytest.mark.parametrize("stuck", [None, 0, 3])
def test_a_lockstep_while_that_never_ends_is_an_error_of_the_first_such_program(stuck):
    lim = np.array([4, 0, 9, 2, 7], np.int32)
    step = np.array([1, 2, 2, 1, 3], np.int32)
    if stuck is not None:
        step[stuck:] = np.where(lim[stuck:] > 0, 0, 1)   # programs from `stuck` on never reach their limit
    found = []
    for g in (None, 1, 2):
        out = np.zeros(5, np.int32)
        with minitriton.set_options(group_size=g):
            try:
                stepper[(5,)](lim, step, out)
                found.append((out.tolist(), None))
            except minitriton.MiniTritonError as e:
                found.append((out.tolist(), (type(e).__name__, e.diagnostic.to_json())))
    assert found[1] == found[0] == found[2]
    if stuck is None:
        assert found[0][0] == [4, 0, 10, 2, 9]
    else:
        assert found[0][1][0] == "InfiniteLoopError" and found[0][1][1]["program"] == [stuck if lim[stuck] else 4]
