"""Traffic counters (`with minitriton.record() as rec`) against analytic byte counts.

References: 3·n·itemsize for vector add; for the masked tiled matmul the exact formula
loads = M·K·cdiv(N, BN) + K·N·cdiv(M, BM) (each A tile read once per column of tiles, each B tile once per row)
and a table of exact and padded (masked lanes included) counts from the CPU baseline of the interpreter; dot
FLOPs 2·M·N·K per dot per program; everything else counted by hand from the kernels' index arithmetic.
"""
import json

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl

FIELDS = ("loaded_elements", "loaded_bytes", "masked_load_lanes", "stored_elements", "stored_bytes",
          "masked_store_lanes", "atomic_elements", "atomic_bytes", "masked_atomic_lanes", "unique_loaded_bytes",
          "unique_stored_bytes")


def cdiv(a, b):
    return -(-a // b)


def check_sums(record):
    """Every per-program array sums to its total (unique bytes: each program's distinct bytes bound the launch's)."""
    assert record["num_programs"] == int(np.prod(record["grid"]))
    for name, t in record["tensors"].items():
        for f in FIELDS:
            per = t["per_program"][f]
            assert len(per) == record["num_programs"], (name, f)
            if f.startswith("unique"):
                assert max(per, default=0) <= t["totals"][f] <= sum(per), (name, f)
            else:
                assert sum(per) == t["totals"][f], (name, f)
    assert sum(record["dot_flops"]["per_program"]) == record["dot_flops"]["total"]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int8])
@pytest.mark.parametrize("n, block", [(1000, 128), (98_432, 1024), (64, 64)])
def test_vector_add_moves_3n_itemsize(dtype, n, block):
    x = (np.arange(n) % 7).astype(dtype)
    y = (np.arange(n) % 5).astype(dtype)
    out = np.zeros(n, dtype)
    grid = cdiv(n, block)
    with minitriton.record() as rec:
        add_kernel[(grid,)](x, y, out, n, BLOCK=block)
    r = rec.last
    check_sums(r)
    itemsize = np.dtype(dtype).itemsize
    t = r["tensors"]
    moved = sum(v["totals"]["loaded_bytes"] + v["totals"]["stored_bytes"] for v in t.values())
    assert moved == 3 * n * itemsize
    masked = grid * block - n
    for name in ("x_ptr", "y_ptr"):
        assert t[name]["totals"]["loaded_elements"] == n
        assert t[name]["totals"]["masked_load_lanes"] == masked
        assert t[name]["totals"]["unique_loaded_bytes"] == n * itemsize
        assert t[name]["totals"]["stored_bytes"] == 0
    assert t["out_ptr"]["totals"]["stored_elements"] == n
    assert t["out_ptr"]["totals"]["masked_store_lanes"] == masked
    assert t["out_ptr"]["totals"]["loaded_bytes"] == 0
    last = t["x_ptr"]["per_program"]
    assert last["loaded_elements"][-1] == n - (grid - 1) * block
    assert last["masked_load_lanes"][-1] == masked
    assert set(last["masked_load_lanes"][:-1]) <= {0}


@triton.jit
def masked_only_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    even = offs % 2 == 0
    x = tl.load(x_ptr + offs, mask=even, other=0.0)
    tl.store(out_ptr + offs, x, mask=offs < 3)
    tl.store(out_ptr + offs, x, mask=offs < 0)


def test_masked_lanes_are_never_counted_as_traffic():
    x = np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    with minitriton.record() as rec:
        masked_only_kernel[(2,)](x, out, BLOCK=16)
    t = rec.last["tensors"]
    check_sums(rec.last)
    assert t["x_ptr"]["per_program"]["loaded_elements"] == [8, 8]
    assert t["x_ptr"]["per_program"]["masked_load_lanes"] == [8, 8]
    assert t["out_ptr"]["per_program"]["stored_elements"] == [3, 3]
    assert t["out_ptr"]["per_program"]["masked_store_lanes"] == [13 + 16, 13 + 16]
    assert t["out_ptr"]["totals"]["stored_bytes"] == 6 * 4
    assert t["out_ptr"]["totals"]["unique_stored_bytes"] == 3 * 4


@triton.jit
def load_twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * b, mask=mask)


def test_loading_twice_doubles_loaded_but_not_unique_bytes():
    n = 300
    x = np.arange(n, dtype=np.float64)
    out = np.zeros(n, np.float64)
    with minitriton.record() as rec:
        load_twice_kernel[(cdiv(n, 64),)](x, out, n, BLOCK=64)
    check_sums(rec.last)
    tx = rec.last["tensors"]["x_ptr"]
    assert tx["totals"]["loaded_bytes"] == 2 * n * 8
    assert tx["totals"]["unique_loaded_bytes"] == n * 8
    assert tx["per_program"]["unique_loaded_bytes"] == [64 * 8] * 4 + [(n - 256) * 8]


@triton.jit
def broadcast_read_kernel(w_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    w = tl.load(w_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid, tl.sum(w, axis=0))


def test_every_program_reading_the_same_data():
    w = np.ones(32, np.float32)
    out = np.zeros(10, np.float32)
    with minitriton.record() as rec:
        broadcast_read_kernel[(10,)](w, out, BLOCK=32)
    check_sums(rec.last)
    tw = rec.last["tensors"]["w_ptr"]
    assert tw["per_program"]["loaded_bytes"] == [128] * 10
    assert tw["per_program"]["unique_loaded_bytes"] == [128] * 10
    assert tw["totals"]["loaded_bytes"] == 1280
    assert tw["totals"]["unique_loaded_bytes"] == 128
    assert rec.last["tensors"]["out_ptr"]["per_program"]["stored_bytes"] == [4] * 10


@triton.jit
def matmul_sum_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The lesson's masked tiled matmul, with the product as a broadcast sum so any BK works."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=(offs_m[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=(kk[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("M, N, K, BM, BN, BK, exact, padded", [
    (37, 45, 29, 16, 16, 16, 7134, 9216),
    (64, 64, 64, 16, 16, 16, 32768, 32768),
    (100, 7, 33, 32, 8, 4, 4224, 5760),
    (5, 5, 5, 8, 8, 8, 50, 128),
])
def test_matmul_loads_match_the_baseline_table(M, N, K, BM, BN, BK, exact, padded):
    assert M * K * cdiv(N, BN) + K * N * cdiv(M, BM) == exact  # the table agrees with its formula
    rng = np.random.default_rng(M)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    with minitriton.record() as rec:
        matmul_sum_kernel[(cdiv(M, BM), cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    r = rec.last
    check_sums(r)
    ta, tb, tc = (r["tensors"][k]["totals"] for k in ("a_ptr", "b_ptr", "c_ptr"))
    assert ta["loaded_elements"] == M * K * cdiv(N, BN)
    assert tb["loaded_elements"] == K * N * cdiv(M, BM)
    assert ta["loaded_elements"] + tb["loaded_elements"] == exact
    assert ta["loaded_bytes"] + tb["loaded_bytes"] == 4 * exact
    lanes = ta["loaded_elements"] + ta["masked_load_lanes"] + tb["loaded_elements"] + tb["masked_load_lanes"]
    assert lanes == padded
    assert ta["unique_loaded_bytes"] == 4 * M * K and tb["unique_loaded_bytes"] == 4 * K * N
    assert tc["stored_elements"] == M * N and tc["unique_stored_bytes"] == 4 * M * N


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, TWICE: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=(offs_m[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=(kk[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        if TWICE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("twice", [False, True])
def test_dot_flops(twice):
    M, N, K, BM, BN, BK = 37, 45, 29, 16, 32, 16
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    grid = (cdiv(M, BM), cdiv(N, BN))
    with minitriton.record() as rec:
        dot_kernel[grid](a, b, c, M, N, K, TWICE=twice, BM=BM, BN=BN, BK=BK)
    np.testing.assert_allclose(c, (2 if twice else 1) * (a.astype(np.float64) @ b), rtol=1e-4, atol=1e-4)
    per_program = 2 * BM * BN * BK * cdiv(K, BK) * (2 if twice else 1)
    flops = rec.last["dot_flops"]
    assert flops["per_program"] == [per_program] * (grid[0] * grid[1])
    assert flops["total"] == per_program * grid[0] * grid[1]
    check_sums(rec.last)


def test_no_dot_no_flops():
    x = np.zeros(8, np.float32)
    with minitriton.record() as rec:
        add_kernel[(2,)](x, x, x, 8, BLOCK=4)
    assert rec.last["dot_flops"] == {"per_program": [0, 0], "total": 0}


@triton.jit
def atomic_kernel(hist_ptr, cnt_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + x, 1, mask=mask)
    tl.atomic_add(cnt_ptr, 1)


def test_atomics_counted():
    n = 50
    x = (np.arange(n) % 3).astype(np.int32)
    hist = np.zeros(3, np.int32)
    cnt = np.zeros(1, np.int64)
    with minitriton.record() as rec:
        atomic_kernel[(4,)](hist, cnt, x, n, BLOCK=16)
    np.testing.assert_array_equal(hist, np.bincount(x))
    assert cnt[0] == 4
    t = rec.last["tensors"]
    check_sums(rec.last)
    assert t["hist_ptr"]["per_program"]["atomic_elements"] == [16, 16, 16, 2]
    assert t["hist_ptr"]["per_program"]["masked_atomic_lanes"] == [0, 0, 0, 14]
    assert t["hist_ptr"]["totals"]["atomic_bytes"] == 4 * n
    assert t["hist_ptr"]["totals"]["loaded_bytes"] == t["hist_ptr"]["totals"]["stored_bytes"] == 0
    assert t["cnt_ptr"]["per_program"]["atomic_elements"] == [1, 1, 1, 1]
    assert t["cnt_ptr"]["totals"]["atomic_bytes"] == 4 * 8


def test_record_is_json_and_describes_the_launch():
    x = np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    with minitriton.record() as rec:
        add_kernel[(4,)](x, x, out, 100, BLOCK=32)
        dot_kernel[(1, 1)](np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16),
                           np.zeros((16, 16), np.float32), 16, 16, 16, TWICE=False, BM=16, BN=16, BK=16)
    assert len(rec) == 2
    first = json.loads(json.dumps(rec[0]))
    assert first == rec[0]
    assert first["kernel"] == "add_kernel"
    assert first["grid"] == [4, 1, 1]
    assert first["num_programs"] == 4
    assert first["constexprs"] == {"BLOCK": 32}
    assert set(first["tensors"]) == {"x_ptr", "y_ptr", "out_ptr"}  # arrays passed twice are counted per argument
    assert first["tensors"]["out_ptr"]["dtype"] == "fp32" and first["tensors"]["out_ptr"]["shape"] == [100]
    assert rec.last["kernel"] == "dot_kernel"
    assert rec.last["constexprs"] == {"TWICE": False, "BM": 16, "BN": 16, "BK": 16}
    assert rec.last["tensors"]["a_ptr"]["dtype"] == "fp16"
    assert json.loads(rec.to_json()) == list(rec)


def test_nothing_recorded_outside_or_without_launch():
    x = np.ones(8, np.float32)
    add_kernel[(1,)](x, x, x, 8, BLOCK=8)  # not recorded: no active record()
    with minitriton.record() as rec:
        pass
    assert len(rec) == 0
    with pytest.raises(LookupError, match=r"no kernel was launched inside this minitriton\.record\(\) block"):
        rec.last


def test_counters_identical_for_group_size_one():
    n = 777
    x = np.arange(n, dtype=np.float32)
    records = []
    saved = minitriton.options().group_size
    try:
        for g in (None, 1):
            minitriton.set_options(group_size=g)
            with minitriton.record() as rec:
                load_twice_kernel[(cdiv(n, 32),)](x, np.zeros(n, np.float32), n, BLOCK=32)
            records.append(rec.last)
    finally:
        minitriton.set_options(group_size=saved)
    assert records[0] == records[1]


def test_trace_programs_lists_the_elements_one_program_touched():
    n = 2500
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    out = np.empty_like(x)
    with minitriton.record(trace_programs=[(2,), 0, (7,)]) as rec:
        add_kernel[(3,)](x, y, out, n, BLOCK=1024)
    trace = {tuple(t["program"]): t["tensors"] for t in rec.last["trace"]}
    assert set(trace) == {(2,), (0,)}  # (7,) is outside the grid
    assert trace[(2,)]["x_ptr"]["loaded"] == list(range(2048, n))
    assert trace[(2,)]["out_ptr"]["stored"] == list(range(2048, n))
    assert trace[(2,)]["out_ptr"]["loaded"] == []
    assert trace[(0,)]["y_ptr"]["loaded"] == list(range(1024))
    json.dumps(rec.last)


# ------------------------------------------------------------------------------------ per-access detail


@minitriton.jit
def _rows_twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros((BLOCK,), tl.float32)
    for step in range(2):
        acc += tl.load(x_ptr + offs, mask=mask, other=0.0)   # line A: loaded twice
    tl.store(out_ptr + offs, acc, mask=mask)                  # line B


@pytest.mark.parametrize("group_size", [None, 1])
def test_accesses_in_program_order_with_lines_and_masked_lanes(group_size):
    n, block = 10, 4
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    with minitriton.set_options(group_size=group_size), \
            minitriton.record(trace_programs=[(2,), 0], accesses=True) as rec:
        _rows_twice[(3,)](x, out, n, BLOCK=block)
    record = rec.last
    lines = [a["line"] for a in record["accesses"]]
    source = open(__file__).read().splitlines()
    load_line = next(i for i, text in enumerate(source, 1) if text.rstrip().endswith("# line A: loaded twice"))
    assert [a["program"] for a in record["accesses"]] == [[0]] * 3 + [[2]] * 3   # by program, in order
    assert [a["kind"] for a in record["accesses"]] == ["load", "load", "store"] * 2
    assert lines == [load_line, load_line, load_line + 1] * 2
    last = record["accesses"][3:]
    assert all(a["offsets"] == [8, 9] and a["masked"] == [10, 11] for a in last)   # past the end: ghost lanes
    assert record["accesses"][0]["offsets"] == [0, 1, 2, 3] and record["accesses"][0]["masked"] == []
    assert record["values"]["out_ptr"] == (2 * x).tolist()
    np.testing.assert_array_equal(out, 2 * x)


def test_accesses_need_traced_programs_and_are_off_by_default():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with minitriton.record(trace_programs=[0]) as rec:
        _rows_twice[(2,)](x, out, 8, BLOCK=4)
    assert "accesses" not in rec.last and "values" not in rec.last
    with minitriton.record(accesses=True) as rec:
        _rows_twice[(2,)](x, out, 8, BLOCK=4)
    assert "accesses" not in rec.last     # no program traced: nothing to detail
