"""An exception raised by a signal handler during a launch (a SIGALRM time-out, as pytest-timeout's signal
method raises one) ends the launch at once: it propagates as it was raised, no program runs after it, and no
finalizer prints "Exception ignored". A kernel's own errors are still reported as before."""
from __future__ import annotations

import signal
import sys

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.runtime import scheduler

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer (POSIX)")


class Alarm(Exception):
    """What the handler raises: an ordinary Exception, which a kernel's own error could also be."""


@triton.jit
def busy(x, out, N: tl.constexpr, ITERS: tl.constexpr):
    acc = tl.zeros((N,), tl.float32)
    for i in range(ITERS):
        acc += tl.load(x + tl.arange(0, N))
    tl.store(out + tl.program_id(0) * N + tl.arange(0, N), acc)


@pytest.fixture
def alarm_handler():
    fired = []

    def handler(signum, frame):
        fired.append(signum)
        raise Alarm("time is up")

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("group_size", [None, 1])
def test_the_handlers_exception_propagates_and_nothing_reruns(alarm_handler, monkeypatch, group_size):
    """The first pass alone would take seconds; the alarm comes after 50 ms. The launch raises the
    handler's exception, and no pass starts after it (before, the launch re-ran and completed)."""
    passes = []
    real = scheduler._run_group

    def counting(group, call):
        passes.append(len(group.pids))
        return real(group, call)

    monkeypatch.setattr(scheduler, "_run_group", counting)
    x, out = np.ones(64, np.float32), np.zeros(8 * 64, np.float32)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    with minitriton.set_options(group_size=group_size), pytest.raises(Alarm, match="time is up"):
        busy[(8,)](x, out, N=64, ITERS=50_000)
    assert alarm_handler == [signal.SIGALRM]
    assert len(passes) == 1
    assert (out == 0).all()


def test_no_finalizer_noise_and_no_swallowed_alarm(alarm_handler, monkeypatch):
    """Alarms at many points of short launches: each either fires during a launch, which then raises it, or
    not at all; nothing is reported as unraisable (an exception raised inside a `__del__`)."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    x, out = np.ones(64, np.float32), np.zeros(4 * 64, np.float32)
    raised = swallowed = 0
    for trial in range(60):
        alarm_handler.clear()
        try:
            # armed inside the `try`: on a loaded machine the alarm may fire before the launch starts
            signal.setitimer(signal.ITIMER_REAL, 0.0005 + 0.00013 * (trial % 23))
            busy[(4,)](x, out, N=64, ITERS=60)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except Alarm:
            raised += 1
            continue
        swallowed += bool(alarm_handler)
    assert not unraisable, [u.exc_value for u in unraisable]
    assert swallowed == 0
    assert raised > 0
    busy[(4,)](x, out, N=64, ITERS=3)  # the next launch runs normally
    np.testing.assert_array_equal(out, 3.0)


def test_a_kernels_own_exception_is_still_a_compile_error():
    """An Exception raised by the kernel's code (not by a handler) keeps its report."""
    @triton.jit
    def bad(x):
        tl.store(x + tl.arange(0, 3), 1.0)

    with pytest.raises(minitriton.CompilationError, match="arange's range must be a power of 2"):
        bad[(2,)](np.zeros(4, np.float32))


def test_handler_code_is_recognised_through_wrappers():
    """A bound method or a functools.partial installed as the handler counts as the handler."""
    import functools

    class Watchdog:
        def on_alarm(self, signum, frame, extra=None):
            raise Alarm("method")

    dog = Watchdog()
    for handler in (dog.on_alarm, functools.partial(dog.on_alarm, extra=1)):
        previous = signal.signal(signal.SIGALRM, handler)
        try:
            try:
                handler(signal.SIGALRM, None)
            except Alarm as e:
                assert scheduler.raised_by_signal_handler(e)
            try:
                raise Alarm("elsewhere")
            except Alarm as e:
                assert not scheduler.raised_by_signal_handler(e)
        finally:
            signal.signal(signal.SIGALRM, previous)
