"""The right words for a loop that never ends, a deadlock, a stop and a loop-carried type change: the kind of
record, the line, the program, what the loop waits on, and whole sentences in both languages."""
from __future__ import annotations

import re
import signal

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import render
from minitriton.errors import CompilationError, DeadlockError, InfiniteLoopError, KernelInterrupted


def _line_of(kernel, text: str) -> int:
    lines = open(kernel.file_name).read().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if ln.strip() == text and i > kernel.def_line)


def _no_english(record) -> str:
    """The Russian page text of `record`, checked for English: outside `code` and tl.* names, no two Latin
    words in a row and none of English's small words."""
    page = render(record, "ru", "page")
    prose = re.sub(r"`[^`]*`|tl\.\w+\([^)]*\)", "", page)
    assert not re.search(r"[A-Za-z]{2,}[\s,]+[A-Za-z]{2,}", prose), page
    assert not re.search(r"\b(the|a|is|of|and|in|program|loop|line|while)\b", prose), page
    assert re.search("[а-яё]", page), page
    return page


@pytest.fixture(params=[None, 1], ids=["grouped", "one"])
def grouping(request):
    with minitriton.set_options(group_size=request.param):
        yield


# ------------------------------------------------------------------ one program's loop that never ends

@triton.jit
def spin_true(out):
    tl.store(out + tl.program_id(0), 1)
    while True:
        pass


@triton.jit
def spin_unchanged(x, out, n):
    i = tl.load(x)
    while i < n:
        tl.store(out + 1, i)
    tl.store(out, i)


def test_while_true_alone_is_an_infinite_loop(grouping):
    out = np.zeros(1, np.int32)
    with pytest.raises(InfiniteLoopError) as info:
        spin_true[(1,)](out)
    assert isinstance(info.value, DeadlockError)   # `except DeadlockError` still catches it
    d = info.value.diagnostic
    assert d.kind == "infinite_loop" and d.program == (0,) and d.line == _line_of(spin_true, "while True:")
    assert d.fields["condition"] == "True" and d.fields["names"] == ""
    text = str(info.value)
    assert text.startswith("this `while` loop never ends: its condition `True` never changes")
    assert "deadlock" not in text and "the condition reads no variable and no memory" in text
    assert "fix: give the loop a condition that some iteration makes false" in text
    page = _no_english(d)
    assert "условие `True` не меняется" in page


def test_a_condition_on_values_the_loop_never_changes(grouping):
    """Three programs, none of which can end its loop: no memory is read, so no program is waited for."""
    x, out = np.zeros(1, np.int32), np.zeros(2, np.int32)
    with pytest.raises(InfiniteLoopError) as info:
        spin_unchanged[(3,)](x, out, 5)
    d = info.value.diagnostic
    assert d.program == (0,) and d.line == _line_of(spin_unchanged, "while i < n:")
    assert d.fields["condition"] == "i < n" and d.fields["names"] == "`i`, `n`"
    assert "the condition reads `i`, `n`, which nothing in the loop changes" in str(info.value)
    assert "make the loop change what its condition reads (`i`, `n`)" in str(info.value)
    _no_english(d)


# ------------------------------------------------------------------ a lock never released

@triton.jit
def take_lock(lock, out):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(out + tl.program_id(0), 1)


@triton.jit
def take_and_release_lock(lock, out):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(out + tl.program_id(0), 1)
    tl.atomic_xchg(lock, 0)


def test_two_programs_on_a_lock_never_freed_deadlock(grouping):
    """Program 0 takes the free lock and never frees it; program 1 waits for it: a deadlock that names the
    loop, the lock's tensor and offset and the programs waiting there."""
    lock, out = np.zeros(1, np.int32), np.zeros(2, np.int32)
    with pytest.raises(DeadlockError) as info:
        take_lock[(2,)](lock, out)
    assert not isinstance(info.value, InfiniteLoopError)
    d = info.value.diagnostic
    line = _line_of(take_lock, "while tl.atomic_cas(lock, 0, 1) == 1:")
    assert d.kind == "deadlock" and d.line == line
    assert d.fields["waits"] == [{"line": line, "condition": "tl.atomic_cas(lock, 0, 1) == 1", "tensor": "lock",
                                  "offset": 0, "value": 1, "programs": [(1,)]}]
    text = str(info.value)
    assert "a deadlock" in text and "programs waiting: (1,);" in text   # program 0 finished, never freeing it
    assert f"at line {line} the loop goes on while `tl.atomic_cas(lock, 0, 1) == 1`" in text


def test_programs_waiting_on_a_taken_lock_name_it(grouping):
    lock, out = np.ones(1, np.int32), np.zeros(3, np.int32)
    with pytest.raises(DeadlockError) as info:
        take_lock[(3,)](lock, out)
    d = info.value.diagnostic
    assert d.kind == "deadlock" and [w["programs"] for w in d.fields["waits"]] == [[(0,), (1,), (2,)]]
    assert d.fields["waits"][0]["tensor"] == "lock" and d.fields["waits"][0]["value"] == 1
    assert "programs waiting: (0,), (1,), (2,)" in str(info.value)
    assert "tl.atomic_xchg(lock, 0)" in str(info.value)
    page = _no_english(d)
    assert "взаимная блокировка" in page and "`lock`[0] (сейчас 1)" in page
    # the user's fix: release the lock after the critical section
    lock, out = np.ones(1, np.int32), np.zeros(3, np.int32)
    lock[0] = 0
    take_and_release_lock[(3,)](lock, out)
    assert out.tolist() == [1, 1, 1] and lock[0] == 0


def test_a_lock_taken_before_a_lone_program_is_its_infinite_loop(grouping):
    lock, out = np.ones(1, np.int32), np.zeros(1, np.int32)
    with pytest.raises(InfiniteLoopError) as info:
        take_lock[(1,)](lock, out)
    d = info.value.diagnostic
    assert (d.fields["tensor"], d.fields["offset"], d.fields["value"]) == ("lock", 0, 1)
    assert "it reads `lock`[0], which is 1, and no other program is left to write it" in str(info.value)
    _no_english(d)


# ------------------------------------------------------------------ a stop

@triton.jit
def busy(x, out, N: tl.constexpr, ITERS: tl.constexpr):
    acc = tl.zeros((N,), tl.float32)
    for i in range(ITERS):
        acc += tl.load(x + tl.arange(0, N))
    tl.store(out + tl.program_id(0) * N + tl.arange(0, N), acc)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer (POSIX)")
def test_a_stop_says_where_the_kernel_was(grouping):
    """A KeyboardInterrupt raised by a signal handler (as Ctrl-C or the page's Stop raise it) while programs
    run: still caught by `except KeyboardInterrupt`, and its record names the kernel line and the programs."""
    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        with pytest.raises(KeyboardInterrupt) as info:
            busy[(4,)](np.ones(64, np.float32), np.zeros(4 * 64, np.float32), N=64, ITERS=200_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert isinstance(info.value, KernelInterrupted) and not isinstance(info.value, Exception)
    d = info.value.diagnostic
    assert d.kind == "stopped" and d.kernel == "busy" and d.program == (0,)
    assert d.line in (_line_of(busy, "for i in range(ITERS):"), _line_of(busy, "acc += tl.load(x + tl.arange(0, N))"))
    assert d.fields["programs"][0] == (0,)
    assert str(info.value).startswith(f"stopped while running `busy` (test_loop_words.py:{d.line}, program (0,))")
    page = _no_english(d)
    assert page.startswith(f"остановлено во время работы `busy` (строка {d.line}, программа 0)")


# ------------------------------------------------------------------ a loop-carried type change

@triton.jit
def total(x, out, n):
    s = 0
    for i in range(n):
        s += tl.load(x + i)
    tl.store(out, s)


def test_a_loop_carried_type_change_points_at_both_assignments():
    x, out = np.ones(4, np.float32), np.zeros(1, np.float32)
    with pytest.raises(CompilationError, match="Loop-carried variable s has initial type int32") as info:
        total[(1,)](x, out, 4)
    d = info.value.diagnostic
    first, again = _line_of(total, "s = 0"), _line_of(total, "s += tl.load(x + i)")
    assert d.kind == "loop_carried_type" and d.line == again and d.fields["first_line"] == first
    assert (d.fields["before"], d.fields["after"]) == ("int32", "fp32")
    assert f"`s` gets its value before the loop at line {first}: `s = 0`" in str(info.value)
    # Triton's text stays word for word; the fix is a note under it, printed with the traceback
    assert info.value.__notes__ == ["  fix: give s its loop type before the loop: s = 0.0"]
    page = _no_english(d)
    assert f"(строка {first})" in page and f"(строка {again})" in page
    # the suggested edit, applied to the source, makes a kernel that runs
    source = open(total.file_name).read()
    fixed = d.suggestion.edit.apply(source).splitlines()
    assert fixed[first - 1].strip() == "s = 0.0"


@pytest.mark.parametrize("apart", [False, True])
@pytest.mark.parametrize("exact", [False, True])
def test_every_deadlock_record_reads_as_russian(apart, exact):
    """The records the scheduler makes for programs waiting on different paths, or seen to wait by the
    patience rule (memory unchanged for many iterations), in Russian too."""
    from minitriton.diagnostics.loops import LoopSite, deadlock, infinite_loop

    site = LoopSite(12, "tl.atomic_add(flag, 0) == 0", ("flag",), True, {1: ("flag", 0, 0), 2: ("flag", 0, 0)},
                    iterations=2 ** 20, exact=exact)
    other = LoopSite(9, "tl.atomic_add(count, 0) < N", ("count", "N"), True, {0: ("count", 0, 3)}, 16, exact)
    record = deadlock([(site, [1, 2]), (other, [0])], lambda p: (p,), apart)
    assert [w["line"] for w in record.fields["waits"]] == [9, 12]
    page = _no_english(record)
    assert ("бок о бок" in page) == apart
    assert "`count`[0] (сейчас 3)" in page and "`flag`[0] (сейчас 0)" in page
    _no_english(infinite_loop(site, 1))
