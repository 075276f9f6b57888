"""`tl.atomic_poll` (Triton's newest language, triton-lang/triton history of 2026-08; test_core's test_atomic_poll,
test_atomic_poll_timeout, test_atomic_poll_waits_for_remote_cta): wait until a scalar integer equals a value.

Triton's definition (language/core.py, semantic.py): the pointer is a scalar pointer to a 16-, 32- or 64-bit
integer; sem is "acquire" (default) or "relaxed"; `timeout_ns` bounds the wait (0: one load) and the result is
True if the value was seen, False if the time ran out first. The poll's single-program cases are compared with
Triton 3.9.0's interpreter; a poll that waits for another program (which the interpreter, running programs one
after another, cannot do) with what a GPU guarantees. Every kernel runs grouped and one program per pass.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton
from helpers.kernels import make_kernel
from helpers.oracle import assert_same_as_interpreter

HEADER = "import triton\nimport triton.language as tl\n\n"

POLL_SRC = """@triton.jit
def poll(flag, out, expected_value, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_poll(flag, expected_value, sem=SEM, scope=SCOPE)
    tl.store(out, 1)


@triton.jit
def poll_timeout(flag, out, timeout_ns):
    matched = tl.atomic_poll(flag, 1, timeout_ns=timeout_ns)
    tl.store(out, matched)
"""


@pytest.fixture(params=[None, 1, 2], ids=["grouped", "one", "two"])
def grouping(request):
    with minitriton.set_options(group_size=request.param):
        yield request.param


def test_atomic_poll_same_as_interpreter():
    """test_atomic_poll (S11.9): every width, sem and scope; the value is there, so the poll returns at once."""
    cases = [("poll", (1,), [np.ones(1, dtype), np.zeros(1, dtype), 1], {"SEM": sem, "SCOPE": scope})
             for dtype in (np.int16, np.int32, np.int64) for sem in ("relaxed", "acquire")
             for scope in ("cta", "gpu", "sys")]
    assert_same_as_interpreter(HEADER + POLL_SRC, cases)


def test_atomic_poll_timeout_same_as_interpreter():
    """test_atomic_poll_timeout: a timeout of 0 performs one load: True if the value is there, else False."""
    cases = [("poll_timeout", (1,), [np.full(1, initial, np.int32), np.full(1, 7, np.bool_), 0], {})
             for initial in (1, 0)]
    assert_same_as_interpreter(HEADER + POLL_SRC, cases)
    out = np.full(1, True)
    make_kernel(POLL_SRC, "poll_timeout")[(1,)](np.zeros(1, np.int32), out, 0)
    assert not out[0]


WAITS_SRC = """@triton.jit
def remote(flag, payload, out):
    if tl.program_id(0) == 0:
        tl.atomic_poll(flag, 1, sem="acquire", scope="gpu")
        tl.store(out, tl.load(payload))
    else:
        tl.store(payload, 42)
        tl.atomic_xchg(flag, 1, sem="release", scope="gpu")


@triton.jit
def chain(flags, order, counter):
    # program i waits for program i + 1, so the programs finish from the last one back to the first
    pid = tl.program_id(0)
    last = pid == tl.num_programs(0) - 1
    if not last:
        tl.atomic_poll(flags + pid + 1, 1)
    tl.store(order + pid, tl.atomic_add(counter, 1))
    tl.atomic_xchg(flags + pid, 1)


@triton.jit
def bounded(flag, out, timeout_ns):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(out, tl.atomic_poll(flag, 1, timeout_ns=timeout_ns).to(tl.int32))
    elif pid == 1:
        tl.atomic_xchg(flag, 1)
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_atomic_poll_waits_for_remote_cta(grouping, sanitize):
    """test_atomic_poll_waits_for_remote_cta: program 0 waits until program 1 has published its payload; the
    acquire poll orders program 0's load after program 1's store (the sanitizer sees no race)."""
    flag, payload, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    with minitriton.set_options(sanitize=sanitize):
        make_kernel(WAITS_SRC, "remote")[(2,)](flag, payload, out, num_warps=4)
    assert flag[0] == 1 and out[0] == 42


@pytest.mark.parametrize("n", [2, 5, 9])
def test_programs_wait_for_later_programs(grouping, n):
    """Each program polls a flag the next one sets: a GPU runs them to completion from the last one back."""
    flags, order, counter = np.zeros(n, np.int32), np.full(n, -1, np.int32), np.zeros(1, np.int32)
    make_kernel(WAITS_SRC, "chain")[(n,)](flags, order, counter)
    np.testing.assert_array_equal(order, np.arange(n)[::-1])
    assert flags.all() and counter[0] == n


@pytest.mark.parametrize("grid", [1, 2, 3])
def test_timeout_runs_out_only_when_nothing_can_write(grouping, grid):
    """With a timeout the poll waits while another program could still write the value (grid >= 2: program 1
    does, so it returns True); when none can (grid 1), the time runs out and it returns False."""
    flag, out = np.zeros(1, np.int32), np.full(1, 7, np.int32)
    make_kernel(WAITS_SRC, "bounded")[(grid,)](flag, out, 10**9)
    assert out[0] == (1 if grid >= 2 else 0)


NEVER_SRC = """@triton.jit
def never(flag, out):
    tl.atomic_poll(flag + tl.program_id(0), 1)
    tl.store(out + tl.program_id(0), 1)
"""


def test_poll_that_nothing_satisfies_is_an_error_not_a_hang(grouping):
    """Without a timeout a poll whose value no program writes hangs a GPU: one program is an infinite loop,
    several a deadlock; the record names the poll, the element and the value it waits for (both languages)."""
    kernel = make_kernel(NEVER_SRC)
    flag, out = np.zeros(3, np.int32), np.zeros(3, np.int32)
    with pytest.raises(minitriton.InfiniteLoopError) as info:
        kernel[(1,)](flag, out)
    record = info.value.diagnostic
    assert record.kind == "poll_forever"
    assert "`tl.atomic_poll(flag + tl.program_id(0), 1)` never returns" in str(info.value)
    assert "holds 0, not 1" in str(info.value) and not out.any()
    with pytest.raises(minitriton.DeadlockError) as info:
        kernel[(3,)](flag, out)
    record = info.value.diagnostic
    assert record.kind == "deadlock_poll"
    assert [w["offset"] for w in record.fields["waits"]] == [0, 1, 2]
    text = minitriton.diagnostics.render(record, "ru")
    assert "tl.atomic_poll" in text and "взаимная блокировка" in text


ERRORS_SRC = """@triton.jit
def block(flag):
    tl.atomic_poll(flag + tl.arange(0, 2), 1)


@triton.jit
def floats(flag):
    tl.atomic_poll(flag, 1)


@triton.jit
def release(flag):
    tl.atomic_poll(flag, 1, sem="release")


@triton.jit
def negative(flag):
    tl.atomic_poll(flag, 1, timeout_ns=-1)


@triton.jit
def float_timeout(flag):
    tl.atomic_poll(flag, 1, timeout_ns=1.5)


@triton.jit
def block_expected(flag):
    tl.atomic_poll(flag, tl.arange(0, 2))
"""


@pytest.mark.parametrize("name,dtype,message", [
    ("block", np.int32, "atomic_poll only supports a pointer to a scalar"),
    ("floats", np.float32, "atomic_poll only supports integer elements with width {16, 32, 64}"),
    ("floats", np.int8, "atomic_poll only supports integer elements with width {16, 32, 64}"),
    ("release", np.int32, "atomic_poll only supports acquire and relaxed semantics"),
    ("negative", np.int32, "atomic_poll timeout_ns must be non-negative"),
    ("float_timeout", np.int32, "atomic_poll timeout_ns must be a scalar integer"),
    ("block_expected", np.int32, "Expected value argument cannot be block type"),
])
def test_refused_as_triton_refuses(name, dtype, message):
    """Triton's semantic.atomic_poll checks, with its words."""
    with pytest.raises(minitriton.CompilationError) as info:
        make_kernel(ERRORS_SRC, name)[(1,)](np.ones(2, dtype))
    assert message in str(info.value)
