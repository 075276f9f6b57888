"""kernels.vector_add under minitriton: values against float64 NumPy, exact bf16 bits, ideal traffic."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
import minitriton.language as tl
from kernels import _host
from kernels import vector_add as va
from kernels.tolerances import assert_close

N = 98_432  # the lesson's size: 96 full blocks of 1024 and a tail of 128


def _pair(kind, n, seed=0):
    rng = np.random.default_rng(seed)
    return kind.make(rng.random(n)), kind.make(rng.random(n))


@pytest.mark.parametrize("n", [N, 1, 1023, 1025, 3000])
def test_add_matches_reference(array_kind, n):
    x, y = _pair(array_kind, n)
    out = va.add(x, y)
    assert array_kind.is_kind(out)
    assert _host.shape(out) == (n,)
    assert_close(_host.to_float64(out), va.reference_add(x, y), array_kind.dtype, f"add n={n}")


def test_fp32_sum_is_the_correctly_rounded_sum():
    x, y = np.random.default_rng(1).standard_normal((2, N)).astype(np.float32)
    np.testing.assert_array_equal(va.add(x, y), x + y)  # one IEEE rounding, nothing else


def test_bf16_sum_is_rounded_to_nearest_even_once():
    rng = np.random.default_rng(2)
    x = minitriton.Buffer.from_float(rng.random(N), tl.bfloat16)
    y = minitriton.Buffer.from_float(rng.random(N), tl.bfloat16)
    out = va.add(x, y)
    # the float64 sum of two bf16 values is exact; rounding it once to bf16 is what the GPU computes
    expected = minitriton.Buffer.from_float(va.reference_add(x, y), tl.bfloat16)
    np.testing.assert_array_equal(out.array, expected.array)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_traffic_counters_equal_the_ideal_3n_itemsize(dtype):
    x, y = (_host.from_float(np.ones(N), np.zeros(1, np.float32), dtype) for _ in range(2))
    with minitriton.record() as rec:
        va.add(x, y, BLOCK_SIZE=1024)
    launch = rec.last
    size = {"float32": 4, "bfloat16": 2}[dtype]
    t = {name: launch["tensors"][name]["totals"] for name in ("x_ptr", "y_ptr", "out_ptr")}
    assert launch["num_programs"] == 97
    for name in ("x_ptr", "y_ptr"):
        assert t[name]["loaded_bytes"] == t[name]["unique_loaded_bytes"] == N * size
        assert t[name]["stored_bytes"] == 0
        assert t[name]["masked_load_lanes"] == 97 * 1024 - N  # the tail block's 896 idle lanes
    assert t["out_ptr"]["stored_bytes"] == t["out_ptr"]["unique_stored_bytes"] == N * size
    assert t["out_ptr"]["loaded_bytes"] == 0
    moved = sum(v["loaded_bytes"] + v["stored_bytes"] for v in t.values())
    assert moved == va.traffic(N, dtype)["bytes"] == 3 * N * size
    assert va.traffic(N, dtype)["flops"] == N


def test_counters_and_result_do_not_depend_on_grouping(group_size_one):
    x, y = np.random.default_rng(3).random((2, 5000)).astype(np.float32)
    with minitriton.record() as rec:
        out = va.add(x, y, BLOCK_SIZE=256)
    np.testing.assert_array_equal(out, x + y)
    per_program = rec.last["tensors"]["out_ptr"]["per_program"]["stored_elements"]
    assert per_program == [256] * 19 + [5000 - 19 * 256]


def test_out_argument_is_filled_and_returned():
    x, y = np.arange(10, dtype=np.float32), np.full(10, 0.5, np.float32)
    out = np.zeros(10, np.float32)
    assert va.add(x, y, out=out) is out
    np.testing.assert_array_equal(out, x + 0.5)


def test_multidimensional_and_strided_inputs():
    base = np.random.default_rng(4).random((40, 70)).astype(np.float32)
    x = base[:, ::2]                     # not contiguous: the wrapper copies it
    y = np.ones((40, 35), np.float32)
    out = va.add(x, y)
    assert out.shape == (40, 35)
    np.testing.assert_array_equal(out, x + 1)


def test_empty_input_launches_nothing():
    with minitriton.record() as rec:
        out = va.add(np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert out.shape == (0,) and len(rec) == 0


def test_mismatched_arguments_are_rejected():
    with pytest.raises(ValueError, match=r"add: shapes differ: \(3,\) and \(4,\)"):
        va.add(np.zeros(3, np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="add: dtypes differ: float32 and float16"):
        va.add(np.zeros(3, np.float32), np.zeros(3, np.float16))
    with pytest.raises(ValueError, match=r"add: out must be \(3,\) float32"):
        va.add(np.zeros(3, np.float32), np.zeros(3, np.float32), out=np.zeros(4, np.float32))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 3000), block=st.sampled_from([16, 64, 128, 1024]), seed=st.integers(0, 2**16))
def test_any_size_and_block(n, block, seed):
    x, y = np.random.default_rng(seed).standard_normal((2, n)).astype(np.float32)
    with minitriton.record() as rec:
        out = va.add(x, y, BLOCK_SIZE=block)
    np.testing.assert_array_equal(out, x + y)
    assert rec.last["num_programs"] == -(-n // block)
    assert rec.last["tensors"]["out_ptr"]["totals"]["stored_bytes"] == 4 * n
