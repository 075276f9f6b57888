"""The sanitizer orders accesses through locks: critical sections entered by `tl.atomic_cas` or `tl.atomic_xchg`
spinning on a lock and left by an atomic or a plain store to it are not races (tutorial 05's layer-norm
backward sums partial rows this way), while the same accesses without the lock, or outside it, still are.

Every kernel runs grouped and one program per pass (and in groups of 2 and 3): the findings must not depend on
how programs are grouped.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.errors import SanitizerError

LOCKED_CAS, LOCKED_XCHG, RELEASED_BY_STORE, NO_LOCK, STORE_AFTER_RELEASE, LOAD_BEFORE_ACQUIRE, RELEASED_BY_ADD, \
    ANOTHER_LOCK = range(8)


@pytest.fixture(params=[None, 1, 2, 3], ids=["grouped", "one", "two", "three"])
def sanitize(request):
    with minitriton.set_options(sanitize=True, group_size=request.param):
        yield


@triton.jit
def partial_row_sums(X, Partial, Locks, Count, N, SLOTS: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    """Row `r` of X is added into partial row `r % SLOTS`; the first program of a slot stores its row."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0)
    slot = row % SLOTS
    lock = Locks + slot
    if MODE == 7:
        lock = Locks + row % 2                                    # not the lock of the slot: racy
    if MODE == 5:
        before = tl.load(Partial + slot * N + cols, mask=mask)   # outside the lock: racy
    if MODE == 1:
        while tl.atomic_xchg(lock, 1) == 1:
            pass
    elif MODE != 3:
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
    if tl.load(Count + slot) == 0:
        tl.atomic_xchg(Count + slot, 1)
    else:
        x += tl.load(Partial + slot * N + cols, mask=mask)
    if MODE != 4:
        tl.store(Partial + slot * N + cols, x, mask=mask)
    if MODE == 2:
        tl.store(lock, 0)
    elif MODE == 6:
        tl.atomic_add(lock, -1)
    elif MODE != 3:
        tl.atomic_xchg(lock, 0)
    if MODE == 4:
        tl.store(Partial + slot * N + cols, x, mask=mask)          # after the release: racy


def _launch(mode, rows=7, slots=3, n=20):
    x = np.random.default_rng(rows).standard_normal((rows, n)).astype(np.float32)
    partial = np.zeros((slots, n), np.float32)
    locks, count = np.zeros(slots, np.int32), np.zeros(slots, np.int32)
    partial_row_sums[(rows,)](x, partial, locks, count, n, SLOTS=slots, MODE=mode, BLOCK=32)
    return x, partial, locks


@pytest.mark.parametrize("mode", [LOCKED_CAS, LOCKED_XCHG, RELEASED_BY_STORE, RELEASED_BY_ADD],
                         ids=["atomic_cas", "atomic_xchg", "released-by-store", "released-by-atomic_add"])
def test_critical_sections_under_a_lock_are_not_races(sanitize, mode):
    x, partial, locks = _launch(mode)
    expected = np.stack([x[s::3].sum(0) for s in range(3)])
    np.testing.assert_allclose(partial, expected, rtol=1e-6)
    assert not locks.any()


@pytest.mark.parametrize("mode", [NO_LOCK, STORE_AFTER_RELEASE, LOAD_BEFORE_ACQUIRE, ANOTHER_LOCK],
                         ids=["no-lock", "store-after-release", "load-before-acquire", "another-lock"])
def test_the_same_accesses_outside_the_lock_are_reported(sanitize, mode):
    with pytest.raises(SanitizerError) as info:
        _launch(mode)
    record = info.value.diagnostic
    assert record.kind in ("race", "order_read", "order_write") and record.fields["tensor"] == "Partial"
    assert info.value.program[0] >= 3          # a program that shares a slot with an earlier one


def test_one_lock_for_every_program():
    with minitriton.set_options(sanitize=True):
        x, partial, _ = _launch(LOCKED_CAS, rows=40, slots=1)
    np.testing.assert_allclose(partial[0], x.sum(0), rtol=1e-5)


@triton.jit
def counted_then_plain(Counter, Out):
    """An atomic_add is no lock: it orders nothing, so the plain stores after it still race."""
    tl.atomic_add(Counter, 1)
    tl.store(Out, tl.program_id(0))


def test_other_atomics_do_not_order_plain_accesses(sanitize):
    with pytest.raises(SanitizerError, match="races with program"):
        counted_then_plain[(4,)](np.zeros(1, np.int32), np.zeros(1, np.int32))


@triton.jit
def readers_then_last_writes(X, N: tl.constexpr):
    """Every program reads X[0]; the last one then writes it: the earlier reads race with that write."""
    v = tl.load(X)
    if tl.program_id(0) == N - 1:
        tl.store(X, v + 1)


@pytest.mark.parametrize("locked", [False, True], ids=["no-lock-used", "a-lock-elsewhere"])
def test_a_write_after_several_unordered_reads_is_reported(sanitize, locked):
    """Several readers stay "several" until a reader is ordered after them: the writer cannot hide behind the
    last reader. (With a lock used elsewhere in the launch, clocks are on: the same holds.)"""
    if locked:
        x = np.zeros(1, np.float32)
        with pytest.raises(SanitizerError, match="read in the same launch"):
            locked_then_readers[(3,)](x, np.zeros(1, np.int32), N=3)
    else:
        with pytest.raises(SanitizerError, match="read in the same launch"):
            readers_then_last_writes[(3,)](np.zeros(1, np.float32), N=3)


@triton.jit
def locked_then_readers(X, Lock, N: tl.constexpr):
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.atomic_xchg(Lock, 0)                  # an empty critical section: X is read and written outside it
    v = tl.load(X)
    if tl.program_id(0) == N - 1:
        tl.store(X, v + 1)
