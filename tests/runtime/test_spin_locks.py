"""Spin loops make progress under grouped execution, and a real deadlock is an error, not a hang (S11.8).

The GPU runs the programs of a launch independently: while some spin on a lock or a flag, others run and
release it. The emulator runs a group's programs in lockstep, splits a group whose `while` condition differs
(the programs leaving the loop first), and sets aside a group whose loop waits for programs outside it. Every
kernel here runs grouped and one program per pass; grids are small and the emulator's guard ends a loop that
cannot progress, so nothing here can hang.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.runtime import spinning

GROUPINGS = [None, 1, 2, 3]


@pytest.fixture(params=GROUPINGS, ids=["grouped", "one", "two", "three"])
def grouping(request):
    with minitriton.set_options(group_size=request.param):
        yield request.param


# ------------------------------------------------------------------ layer-norm backward, tutorial-05 style

@triton.jit
def norm_backward_partial(DY, X, Mean, Rstd, W, DX, DW, DB, Locks, N, ROWS_PER_LOCK: tl.constexpr,
                          BLOCK_N: tl.constexpr):
    """dx per row; dw and db summed into LOCKS partial rows, each guarded by a spin lock with a counter that
    says whether its partial row was written yet."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row * N + cols, mask=mask, other=0.0)
    w = tl.load(W + cols, mask=mask, other=0.0)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + row * N + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
    lock_id = row % ROWS_PER_LOCK
    lock = Locks + lock_id
    count = Locks + ROWS_PER_LOCK + lock_id
    partial_dw = dy * xhat
    partial_db = dy
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        partial_dw += tl.load(DW + lock_id * N + cols, mask=mask)
        partial_db += tl.load(DB + lock_id * N + cols, mask=mask)
    tl.store(DW + lock_id * N + cols, partial_dw, mask=mask)
    tl.store(DB + lock_id * N + cols, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@pytest.mark.parametrize("rows,locks", [(12, 4), (9, 1), (5, 8)])
def test_layer_norm_backward_with_locks(grouping, rows, locks):
    rng = np.random.default_rng(rows * 10 + locks)
    n = 24
    x = rng.standard_normal((rows, n)).astype(np.float32)
    dy = rng.standard_normal((rows, n)).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    mean = x.astype(np.float64).mean(1)
    rstd = 1 / np.sqrt(x.astype(np.float64).var(1) + 1e-5)
    dx = np.zeros_like(x)
    dw, db = np.zeros((locks, n), np.float32), np.zeros((locks, n), np.float32)
    lock_words = np.zeros(2 * locks, np.int32)
    norm_backward_partial[(rows,)](dy, x, mean.astype(np.float32), rstd.astype(np.float32), w, dx, dw, db,
                                   lock_words, n, ROWS_PER_LOCK=locks, BLOCK_N=32)
    xhat = (x - mean[:, None]) * rstd[:, None]
    assert (lock_words[:locks] == 0).all(), "every lock released"
    assert lock_words[locks:].tolist() == [1 if k < rows else 0 for k in range(locks)]
    np.testing.assert_allclose(dw.sum(0), (dy * xhat).sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(db.sum(0), dy.astype(np.float64).sum(0), rtol=1e-4, atol=1e-4)
    wdy = w * dy
    ref_dx = (wdy - (xhat * (xhat * wdy).mean(1, keepdims=True) + wdy.mean(1, keepdims=True))) * rstd[:, None]
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ a critical section on one lock

@triton.jit
def serialized_add(data, lock, order, BLOCK: tl.constexpr):
    ptrs = data + tl.arange(0, BLOCK)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    n = tl.load(data + BLOCK).to(tl.int32)
    tl.store(order + n, tl.program_id(0))
    tl.store(data + BLOCK, (n + 1).to(tl.float32))
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.atomic_xchg(lock, 0)


def test_one_lock_serializes_every_program(grouping):
    """Each program enters the critical section exactly once (the read-modify-write of `data` is not an
    atomic: with two programs inside at once an update would be lost)."""
    programs = 40
    data = np.zeros(17, np.float32)
    lock, order = np.zeros(1, np.int32), np.full(programs, -1, np.int32)
    serialized_add[(programs,)](data, lock, order, BLOCK=16)
    assert (data[:16] == programs).all() and data[16] == programs and lock[0] == 0
    assert sorted(order.tolist()) == list(range(programs))


# ------------------------------------------------------------------ a ticket counter

@triton.jit
def ticket_counter(next_ticket, now_serving, served_by, total, BLOCK: tl.constexpr):
    ticket = tl.atomic_add(next_ticket, 1)
    while tl.load(now_serving, volatile=True) != ticket:
        pass
    tl.store(served_by + ticket, tl.program_id(0))
    acc = tl.load(total + tl.arange(0, BLOCK))
    tl.store(total + tl.arange(0, BLOCK), acc + ticket)
    tl.atomic_add(now_serving, 1)


def test_ticket_counter_serves_every_ticket_once(grouping):
    programs = 24
    next_ticket, now_serving = np.zeros(1, np.int32), np.zeros(1, np.int32)
    served_by, total = np.full(programs, -1, np.int32), np.zeros(4, np.int32)
    ticket_counter[(programs,)](next_ticket, now_serving, served_by, total, BLOCK=4)
    assert next_ticket[0] == programs and now_serving[0] == programs
    assert sorted(served_by.tolist()) == list(range(programs))
    assert (total == sum(range(programs))).all()


# ------------------------------------------------------------------ waiting for a program that runs later

@triton.jit
def wait_for(flag):
    while tl.load(flag, volatile=True) == 0:
        pass


@triton.jit
def reverse_chain(flags, arrival, N: tl.constexpr):
    """Program i waits until program i + 1 has finished: they must finish from the last to the first."""
    pid = tl.program_id(0)
    if pid < N - 1:
        wait_for(flags + pid + 1)
    tl.store(arrival + pid, tl.atomic_add(arrival + N, 1))
    tl.store(flags + pid, 1)


def test_a_program_waiting_for_a_later_one_lets_it_run(grouping):
    """Programs run in launch order; one that waits for a later program is set aside (on a GPU the later
    program runs beside it). The wait is in a @jit helper, found through the kernel's globals."""
    n = 7
    flags, arrival = np.zeros(n, np.int32), np.zeros(n + 1, np.int32)
    reverse_chain[(n,)](flags, arrival, N=n)
    assert arrival[:n].tolist() == list(range(n - 1, -1, -1)) and (flags == 1).all()


@triton.jit
def grid_barrier(count, seen, N: tl.constexpr):
    """Every program arrives, then waits until all have arrived."""
    tl.atomic_add(count, 1)
    while tl.atomic_add(count, 0) < N:
        pass
    tl.store(seen + tl.program_id(0), tl.atomic_add(count, 0))


def test_programs_waiting_for_each_other_run_together(grouping):
    n = 6
    count, seen = np.zeros(1, np.int32), np.zeros(n, np.int32)
    grid_barrier[(n,)](count, seen, N=n)
    assert count[0] == n and (seen == n).all()


# ------------------------------------------------------------------ loops that compute are left alone

@triton.jit
def collatz_steps(x, steps):
    pid = tl.program_id(0)
    v = tl.load(x + pid)
    k = 0
    while v != 1:
        v = tl.where(v % 2 == 0, v // 2, 3 * v + 1)
        k += 1
    tl.store(steps + pid, k)


def test_a_long_computing_loop_is_not_taken_for_waiting(grouping):
    x = np.array([27, 97, 1, 6, 27], np.int64)
    steps = np.zeros(5, np.int32)
    collatz_steps[(5,)](x, steps)

    def reference(v):
        k = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            k += 1
        return k
    assert steps.tolist() == [reference(int(v)) for v in x]


# ------------------------------------------------------------------ real deadlocks are errors

@triton.jit
def never_released(lock, out):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(out + tl.program_id(0), 1)


def test_a_lock_never_released_is_a_deadlock_error(grouping):
    """The lock starts taken and nobody frees it: the error names the loop's line and the programs."""
    lock, out = np.ones(1, np.int32), np.zeros(3, np.int32)
    with pytest.raises(minitriton.DeadlockError) as info:
        never_released[(3,)](lock, out)
    text = str(info.value)
    line = never_released.fn.__code__.co_firstlineno + 2  # the decorator, the def, the while
    assert f"test_spin_locks.py:{line}" in text and "program (0,)" in text
    assert "programs waiting: (0,), (1,), (2,)" in text and "a deadlock" in text
    assert "tl.atomic_xchg(lock, 0)" in text
    assert (out == 0).all() and lock[0] == 1


@triton.jit
def counted_spin(lock, tries):
    n = 0
    while tl.atomic_cas(lock, 0, 1) == 1:
        n += 1
    tl.store(tries + tl.program_id(0), n)


def test_a_spin_with_a_counter_ends_after_the_patience(grouping, monkeypatch):
    """A retry counter changes the loop's state every time; a loop that leaves memory as it was for
    `PATIENCE` iterations is taken as waiting all the same."""
    monkeypatch.setattr(spinning, "PATIENCE", 64)
    lock, tries = np.ones(1, np.int32), np.zeros(2, np.int32)
    with pytest.raises(minitriton.DeadlockError, match="ran 64 iterations without changing memory"):
        counted_spin[(2,)](lock, tries)


@triton.jit
def wait_then_fail(flags, x, out, N: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        wait_for(flags + N - 1)
        tl.store(out + tl.arange(0, 4), tl.load(x + 6 + tl.arange(0, 4)))  # lanes 2 and 3 past the end
    tl.store(flags + pid, 1)


def test_an_error_after_a_wait_is_reported_not_a_deadlock(grouping):
    """Program 0 waits for the last program, then reads out of bounds: the error is the read's."""
    n = 4
    flags, x, out = np.zeros(n, np.int32), np.zeros(8, np.float32), np.zeros(4, np.float32)
    with pytest.raises(minitriton.OutOfBoundsError, match=r"program \(0,\)"):
        wait_then_fail[(n,)](flags, x, out, N=n)


@triton.jit
def leader_barrier(count, flag, seen, N: tl.constexpr):
    """Every program arrives; the leader waits for all, then raises a flag the others wait for."""
    tl.atomic_add(count, 1)
    if tl.program_id(0) == 0:
        while tl.atomic_add(count, 0) < N:
            pass
        tl.atomic_xchg(flag, 1)
    else:
        while tl.atomic_add(flag, 0) == 0:
            pass
    tl.store(seen + tl.program_id(0), 1)


def test_programs_waiting_for_each_other_on_different_paths_are_reported(grouping):
    """The leader's loop and the others' loop wait for each other; run in lockstep, one path at a time, they
    cannot both progress (a GPU runs them side by side): an error that says so, not a hang."""
    n = 4
    count, flag, seen = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(n, np.int32)
    with pytest.raises(minitriton.DeadlockError, match="cannot run side by side") as info:
        leader_barrier[(n,)](count, flag, seen, N=n)
    assert "test this kernel on a GPU" in str(info.value)


def test_a_wait_is_seen_when_frame_locals_are_a_fresh_proxy_each_time():
    """From Python 3.13 (Pyodide 0.29's), `frame.f_locals` is a new write-through proxy at every access: a
    waiting loop must still be recognised by its variables, not left to run PATIENCE iterations."""
    import types

    class Frame:   # a kernel frame whose locals never change, seen through a fresh mapping each time
        f_lasti = 10
        f_lineno = 3
        f_code = None   # no kernel's code: what the loop reads is unknown, so it may wait for others

        def __init__(self):
            self.values = {"i": 3, "lock": np.zeros(1, np.int32)}

        @property
        def f_locals(self):
            return types.MappingProxyType(self.values)

    class Group:
        journal = []
        size = 1

        class launch:
            allocations = []

    watch, frame = spinning.SpinWatch(Group()), Frame()
    with pytest.raises(spinning.Blocked):
        for _ in range(64):
            watch.iteration(frame)
