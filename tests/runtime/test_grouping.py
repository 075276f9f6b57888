"""Results, errors and traffic counters do not depend on how the engine groups programs.

Every kernel runs with the default grouping and with `minitriton.set_options(group_size=1)` (one program per
pass); outputs must be bit-identical, the counter records equal and error messages the same. The outputs
are also checked against NumPy / exact Python references, and a spy on the engine checks that the default
run really did put several programs in one pass (otherwise the comparison would prove nothing).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.runtime import scheduler as engine


@pytest.fixture(autouse=True)
def _clean_options(monkeypatch):
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    with minitriton.set_options():
        yield


class _Spy:
    """Records the size of every group the engine runs, and of those that completed."""

    def __init__(self):
        self.sizes = []
        self.done = []
        self.real = engine._run_group

    def __call__(self, group, call):
        self.sizes.append(len(group.pids))
        outcome = self.real(group, call)
        if outcome is None:
            self.done.append(len(group.pids))
        return outcome


def _launch(make, group_size, monkeypatch):
    """Run `make()` -> (launch callable, outputs dict); returns (outputs, records, error text, spy)."""
    minitriton.set_options(group_size=group_size)
    spy = _Spy()
    monkeypatch.setattr(engine, "_run_group", spy)
    launch, outputs = make()
    error = None
    with minitriton.record() as rec:
        try:
            launch()
        except minitriton.MiniTritonError as e:
            error = f"{type(e).__name__}: {e}"
    monkeypatch.setattr(engine, "_run_group", spy.real)
    return outputs, list(rec.launches), error, spy


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), np.argwhere(a != b)[:5]


def compare(make, monkeypatch, group_sizes=(1,), expect_grouping=True):
    """Run with the default grouping and each of `group_sizes`; assert identical outputs, records, errors."""
    ref_out, ref_rec, ref_err, spy = _launch(make, None, monkeypatch)
    if expect_grouping:
        assert max(spy.done) > 1, "the default run never grouped programs: the comparison would be vacuous"
    for g in group_sizes:
        out, rec, err, spy_g = _launch(make, g, monkeypatch)
        assert max(spy_g.sizes) <= g
        assert err == ref_err
        assert rec == ref_rec
        for name in ref_out:
            _same(ref_out[name], out[name])
    return ref_out, ref_rec, ref_err


# ------------------------------------------------------------------------------------------------- kernels

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_vector_add(monkeypatch):
    n = 1000
    rng = np.random.default_rng(1)
    x, y = rng.random((2, n), dtype=np.float32)

    def make():
        out = np.zeros(n, np.float32)
        return lambda: add_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64), {"out": out}
    out, rec, err = compare(make, monkeypatch, group_sizes=(1, 3))
    assert err is None
    _same(out["out"], x + y)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


def test_softmax_rows(monkeypatch):
    x = np.random.default_rng(2).standard_normal((37, 50)).astype(np.float32) * 4

    def make():
        out = np.zeros_like(x)
        return lambda: softmax_kernel[(37,)](x, out, 50, 50, BLOCK=64), {"out": out}
    out, _, _ = compare(make, monkeypatch)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out["out"], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c_ptrs = c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def test_matmul_group_m_swizzle(monkeypatch):
    M, N, K = 70, 45, 37
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)

    def make():
        c = np.zeros((M, N), np.float32)
        grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
        return (lambda: matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=16, BN=16, BK=16, GROUP_M=2),
                {"c": c})
    out, rec, _ = compare(make, monkeypatch, group_sizes=(1, 4))
    np.testing.assert_allclose(out["c"], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert rec[0]["dot_flops"]["total"] == 2 * 16 * 16 * 16 * 3 * (5 * 3)  # 15 programs, 3 K steps each


@triton.jit
def divergent_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if pid % 3 == 0:
        y = x * 2
        tl.store(out_ptr + offs, y)
    elif pid % 3 == 1:
        y = x + 100
        tl.store(out_ptr + offs, y + 1)
    else:
        tl.store(out_ptr + offs, -x)


def test_divergent_if(monkeypatch):
    x = np.arange(11 * 8, dtype=np.int32)

    def make():
        out = np.zeros_like(x)
        return lambda: divergent_kernel[(11,)](x, out, BLOCK=8), {"out": out}
    out, _, _ = compare(make, monkeypatch)
    pid = np.arange(x.size) // 8
    np.testing.assert_array_equal(out["out"], np.where(pid % 3 == 0, 2 * x, np.where(pid % 3 == 1, x + 101, -x)))


@triton.jit
def while_kernel(out_ptr, steps_ptr):
    pid = tl.program_id(0)
    n = tl.load(steps_ptr + pid)
    i = 0
    acc = 0
    while i < n:
        acc += i * i + pid
        i += 1
    tl.store(out_ptr + pid, acc)


def test_while_trip_count_per_program(monkeypatch):
    steps = np.array([3, 0, 5, 5, 1, 7, 2, 2, 0, 4, 6, 3, 3], np.int32)

    def make():
        out = np.full(steps.size, -1, np.int32)
        return lambda: while_kernel[(steps.size,)](out, steps), {"out": out}
    out, _, _ = compare(make, monkeypatch)
    expected = [sum(i * i + p for i in range(int(s))) for p, s in enumerate(steps)]
    np.testing.assert_array_equal(out["out"], expected)


@triton.jit
def causal_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    hi = (pid // 3 + 1) * BLOCK  # programs 0-2 share a bound, 3-5 another, ...
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, hi, BLOCK):
        acc += tl.load(x_ptr + start + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


def test_runtime_range_bound_per_program(monkeypatch):
    x = np.arange(64, dtype=np.float32)

    def make():
        out = np.zeros(8, np.float32)
        return lambda: causal_kernel[(8,)](x, out, BLOCK=8), {"out": out}
    out, rec, _ = compare(make, monkeypatch, group_sizes=(1, 2))
    np.testing.assert_array_equal(out["out"], [float(x[:(p // 3 + 1) * 8].sum()) for p in range(8)])
    assert rec[0]["tensors"]["x_ptr"]["per_program"]["loaded_elements"] == [8 * (p // 3 + 1) for p in range(8)]


@triton.jit
def early_return_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    if pid % 2 == 1:
        return
    tl.store(out_ptr + offs, tl.load(out_ptr + offs) * 10)


def test_early_return(monkeypatch):
    x = np.arange(9 * 4, dtype=np.int32)

    def make():
        out = np.zeros_like(x)
        return lambda: early_return_kernel[(9,)](x, out, BLOCK=4), {"out": out}
    out, _, _ = compare(make, monkeypatch)
    pid = np.arange(x.size) // 4
    np.testing.assert_array_equal(out["out"], np.where(pid % 2 == 1, x, 10 * x))


@triton.jit
def atomics_kernel(x_ptr, cnt_ptr, mx_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_add(cnt_ptr, 1)
    tl.atomic_max(mx_ptr, pid)
    tl.atomic_add(hist_ptr + x % 4, 1, mask=mask)


def test_atomics(monkeypatch):
    n = 203
    x = np.random.default_rng(4).integers(0, 1000, n).astype(np.int32)

    def make():
        cnt, mx, hist = np.zeros(1, np.int32), np.full(1, -1, np.int32), np.zeros(4, np.int32)
        return (lambda: atomics_kernel[(triton.cdiv(n, 16),)](x, cnt, mx, hist, n, BLOCK=16),
                {"cnt": cnt, "mx": mx, "hist": hist})
    out, rec, _ = compare(make, monkeypatch)
    assert out["cnt"][0] == 13 and out["mx"][0] == 12
    np.testing.assert_array_equal(out["hist"], np.bincount(x % 4, minlength=4))
    assert rec[0]["tensors"]["hist_ptr"]["totals"]["atomic_elements"] == n


@triton.jit
def before_divergence_kernel(cnt_ptr, seen_ptr, out_ptr):
    pid = tl.program_id(0)
    tl.atomic_add(cnt_ptr, 1)
    tl.store(seen_ptr + pid, tl.load(seen_ptr + pid) + 1)  # applied twice if a re-run is not rolled back
    if pid % 2 == 0:
        tl.store(out_ptr + pid, pid * 10)
    else:
        if pid % 3 == 0:
            tl.store(out_ptr + pid, -1)
        else:
            tl.store(out_ptr + pid, pid)


def test_stores_before_divergence_are_applied_once(monkeypatch):
    def make():
        cnt, seen, out = np.zeros(1, np.int32), np.zeros(17, np.int32), np.zeros(17, np.int32)
        return lambda: before_divergence_kernel[(17,)](cnt, seen, out), {"cnt": cnt, "seen": seen, "out": out}
    out, _, _ = compare(make, monkeypatch, group_sizes=(1, 2, 5))
    assert out["cnt"][0] == 17
    assert (out["seen"] == 1).all()
    p = np.arange(17)
    np.testing.assert_array_equal(out["out"], np.where(p % 2 == 0, 10 * p, np.where(p % 3 == 0, -1, p)))


@triton.jit
def failing_divergent_kernel(x_ptr, out_ptr, steps_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(steps_ptr + pid)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, n):
        acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    tl.atomic_add(out_ptr + tl.arange(0, BLOCK), acc)


def test_errors_identical_across_groupings(monkeypatch):
    # the group splits by trip count; program 7 reads x[40:48] of 40 elements, and no later program shares
    # a trip count with an earlier one, so none of them runs before program 7 in any grouping
    steps = np.array([1, 2, 3, 1, 4, 5, 2, 6, 7, 8], np.int32)
    x = np.ones(5 * 8, np.float32)

    def make():
        out = np.zeros(8, np.float32)
        return lambda: failing_divergent_kernel[(10,)](x, out, steps, BLOCK=8), {"out": out}
    out, rec, err = compare(make, monkeypatch, group_sizes=(1, 2, 4))
    assert err.startswith("OutOfBoundsError: tl.load reads past the end of `x_ptr`")
    assert "program (7,))" in err
    np.testing.assert_array_equal(out["out"], np.full(8, steps[:7].sum(), np.float32))  # programs 0-6 ran
    # the failed launch is recorded up to the failure, the same in every grouping (compare checked it):
    # programs 0-6 whole, program 7 its five loads inside x before the sixth raised
    [record] = rec
    assert record["error"]["program"] == [7]
    assert record["tensors"]["x_ptr"]["per_program"]["loaded_elements"] == [8 * int(s) for s in steps[:7]] + [40, 0, 0]
    assert record["tensors"]["out_ptr"]["per_program"]["atomic_elements"] == [8] * 7 + [0] * 3


def test_memory_after_an_error_identical_when_a_later_program_ran_early(monkeypatch):
    """A split runs [0, 3, 8] before [7] fails: the engine undoes the launch and replays programs 0-6, so
    program 8's atomic_add is not left in memory (as with one program at a time)."""
    steps = np.array([1, 2, 3, 1, 4, 5, 2, 6, 1], np.int32)  # program 8 shares program 0's trip count
    x = np.ones(5 * 8, np.float32)

    def make():
        out = np.zeros(8, np.float32)
        return lambda: failing_divergent_kernel[(9,)](x, out, steps, BLOCK=8), {"out": out}
    out, rec, err = compare(make, monkeypatch)
    assert "program (7,))" in err
    np.testing.assert_array_equal(out["out"], np.full(8, steps[:7].sum(), np.float32))
    # its record too: programs 0-6 counted once, program 8 not at all
    assert rec[0]["tensors"]["x_ptr"]["per_program"]["loaded_elements"] == [8 * int(s) for s in steps[:7]] + [40, 0]
    assert rec[0]["tensors"]["out_ptr"]["per_program"]["atomic_elements"] == [8] * 7 + [0, 0]


def test_small_value_budget_forces_chunking(monkeypatch):
    minitriton.set_options(value_budget=4096)
    n = 40 * 256 - 7
    rng = np.random.default_rng(5)
    x, y = rng.random((2, n), dtype=np.float32)

    def make():
        out = np.zeros(n, np.float32)
        return lambda: add_kernel[(40,)](x, y, out, n, BLOCK=256), {"out": out}
    _, _, _, spy = _launch(make, None, monkeypatch)
    assert 1 < max(spy.done) <= 4096 // (256 * 4)  # 1 KiB per float32 block per program
    out, rec, _ = compare(make, monkeypatch, group_sizes=(1, 3))
    _same(out["out"], x + y)
    assert rec[0]["tensors"]["out_ptr"]["totals"]["stored_bytes"] == 4 * n


def test_small_value_budget_with_divergence(monkeypatch):
    minitriton.set_options(value_budget=4096)
    steps = (np.arange(30) * 7 % 5).astype(np.int32)

    def make():
        out = np.full(30, -1, np.int32)
        return lambda: while_kernel[(30,)](out, steps), {"out": out}
    out, _, _ = compare(make, monkeypatch, expect_grouping=True)
    np.testing.assert_array_equal(out["out"], [sum(i * i + p for i in range(int(s))) for p, s in enumerate(steps)])


# ------------------------------------------------------------------------------------------------- property

@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3 - 1, mask=mask)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 300), log_block=st.integers(0, 6), extra=st.integers(0, 3))
def test_masked_copy_any_grouping(n, log_block, extra):
    block = 2 ** log_block
    grid = (math.ceil(n / block) + extra,)
    x = np.arange(n, dtype=np.int32) * 7 - 100
    results = []
    saved = minitriton.options().group_size
    try:
        for g in (1, 2, 3, 7, None):
            minitriton.set_options(group_size=g)
            out = np.full(n, 12345, np.int32)
            with minitriton.record() as rec:
                copy_kernel[grid](x, out, n, BLOCK=block)
            results.append((out, rec.last))
    finally:
        minitriton.set_options(group_size=saved)
    for out, record in results:
        np.testing.assert_array_equal(out, x * 3 - 1)
        assert record == results[0][1]
    assert results[0][1]["tensors"]["x_ptr"]["totals"]["masked_load_lanes"] == grid[0] * block - n
