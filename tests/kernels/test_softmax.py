"""kernels.softmax under minitriton: forward and backward against float64 NumPy, the online path for long
rows, -inf handling, ideal traffic, torch.autograd against torch.softmax."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import minitriton
from kernels import _host
from kernels import softmax as sm
from kernels.tolerances import assert_close

AWKWARD = [(1823, 781), (512, 896), (3, 5, 33), (1, 1)]


def _randn(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _check_forward(kind, values, **kwargs):
    x = kind.make(values)
    y = sm.softmax(x, **kwargs)
    assert kind.is_kind(y) and _host.shape(y) == _host.shape(x)
    assert_close(_host.to_float64(y), sm.reference_softmax(x), kind.dtype, f"softmax {values.shape}")
    return x, y


def _check_backward(kind, y, dy_values, **kwargs):
    dy = kind.make(dy_values)
    dx = sm.softmax_backward(y, dy, **kwargs)
    assert kind.is_kind(dx)
    assert_close(_host.to_float64(dx), sm.reference_softmax_backward(y, dy), kind.dtype, "softmax backward")


@pytest.mark.parametrize("shape", AWKWARD, ids=str)
def test_forward_and_backward_match_reference(array_kind, shape):
    _, y = _check_forward(array_kind, _randn(shape, 0))
    _check_backward(array_kind, y, _randn(shape, 1))


@pytest.mark.parametrize("shape,max_block", [((37, 5000), 1024), ((9, 781), 64), ((4, 16384), None),
                                             ((3, 40_000), None)], ids=str)
def test_rows_wider_than_one_block(storage_kind, shape, max_block):
    """5000 = 4 blocks of 1024 + 904; 40 000 columns exceed MAX_FUSED_COLS, so the default takes the loop."""
    cfg = sm.config(shape[0], shape[1], max_block)
    assert cfg["online"] == (minitriton.next_power_of_2(shape[1]) > (max_block or sm.MAX_FUSED_COLS))
    _, y = _check_forward(storage_kind, _randn(shape, 2, scale=4.0), max_block=max_block)
    _check_backward(storage_kind, y, _randn(shape, 3), max_block=max_block)


@pytest.mark.parametrize("cols,block_m,warps,bwd_warps", [(256, 4, 2, 2), (1024, 2, 4, 4), (2048, 1, 4, 4),
                                                           (4096, 1, 8, 4), (8192, 1, 16, 4), (16384, 1, 32, 4)])
def test_launch_config_is_the_measured_one(cols, block_m, warps, bwd_warps):
    """The rows per program and warps measured fastest on an H200 (bf16, 4096 rows; see `config`)."""
    cfg = sm.config(4096, cols)
    assert not cfg["online"] and cfg["BLOCK_N"] == cols
    assert (cfg["BLOCK_M"], cfg["num_warps"], cfg["bwd_num_warps"]) == (block_m, warps, bwd_warps)
    assert cfg["grid"] == (4096 // block_m,)


def test_online_path_rescales_when_the_maximum_arrives_late():
    # increasing rows: every block raises the running maximum; a huge spread checks the rescaling
    x = np.tile(np.linspace(-80.0, 80.0, 3000), (5, 1)).astype(np.float32)
    x[1] = x[1, ::-1]                                 # maximum first
    x[2, 1234] = 200.0                                # one outlier in the middle of a block
    y = sm.softmax(x, max_block=256)
    assert_close(y, sm.reference_softmax(x), "float32", "online softmax")
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("max_block", [None, 128], ids=["fused", "online"])
def test_minus_infinity_entries_are_zero_probability(max_block):
    x = _randn((6, 1000), 4).astype(np.float32)
    x[0, :500] = -np.inf                              # a causal-style mask: the first blocks all -inf
    x[1, ::2] = -np.inf
    x[2, :] = -np.inf
    x[2, 999] = 3.0                                   # only the last column of the last (partial) block
    y = sm.softmax(x, max_block=max_block)
    assert not np.isnan(y).any()
    assert (y[0, :500] == 0).all() and (y[1, ::2] == 0).all()
    assert y[2, 999] == 1.0 and (y[2, :999] == 0).all()
    assert_close(y, sm.reference_softmax(x), "float32", "softmax with -inf")


def test_strided_rows_are_read_in_place():
    wide = _randn((300, 1000), 5).astype(np.float32)
    x = wide[:, :781]                                 # row stride 1000, columns contiguous: no copy
    with minitriton.record() as rec:
        y = sm.softmax(x)
    assert rec.last["tensors"]["x_ptr"]["shape"] == [300, 781]
    assert y.flags.c_contiguous
    assert_close(y, sm.reference_softmax(x), "float32")


def _totals(launch, name):
    return launch["tensors"][name]["totals"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(1823, 781), (512, 896)], ids=str)
def test_fused_traffic_is_ideal(dtype, shape):
    """Forward: each element read once and written once; backward: y and dy read once, dx written once."""
    n_rows, n_cols = shape
    n, size = n_rows * n_cols, {"float32": 4, "bfloat16": 2}[dtype]
    x = _host.from_float(_randn(shape, 6), np.zeros(1, np.float32), dtype)
    with minitriton.record() as rec:
        y = sm.softmax(x)
        sm.softmax_backward(y, x)
    fwd, bwd = rec.launches
    assert fwd["kernel"] == "softmax_fwd_kernel" and bwd["kernel"] == "softmax_bwd_kernel"
    for launch, inputs, output, model in ((fwd, ["x_ptr"], "y_ptr", sm.traffic(n_rows, n_cols, dtype)),
                                          (bwd, ["y_ptr", "dy_ptr"], "dx_ptr",
                                           sm.traffic(n_rows, n_cols, dtype, backward=True))):
        for name in inputs:
            t = _totals(launch, name)
            assert t["loaded_bytes"] == t["unique_loaded_bytes"] == n * size
            assert t["stored_bytes"] == 0
        t = _totals(launch, output)
        assert t["stored_bytes"] == t["unique_stored_bytes"] == n * size
        assert t["loaded_bytes"] == 0
        moved = sum(v["totals"]["loaded_bytes"] + v["totals"]["stored_bytes"] for v in launch["tensors"].values())
        assert moved == model["bytes"] == (len(inputs) + 1) * n * size


def test_online_traffic_reads_twice_but_touches_each_byte_once():
    n_rows, n_cols = 7, 5000
    x = _randn((n_rows, n_cols), 7).astype(np.float32)
    with minitriton.record() as rec:
        y = sm.softmax(x, max_block=1024)
        sm.softmax_backward(y, x, max_block=1024)
    fwd, bwd = rec.launches
    assert fwd["kernel"] == "softmax_fwd_online_kernel" and bwd["kernel"] == "softmax_bwd_loop_kernel"
    ideal = n_rows * n_cols * 4
    assert sum(_totals(fwd, k)["unique_loaded_bytes"] + _totals(fwd, k)["unique_stored_bytes"]
               for k in ("x_ptr", "y_ptr")) == sm.traffic(n_rows, n_cols)["bytes"]
    assert _totals(fwd, "x_ptr")["loaded_bytes"] == 2 * ideal
    assert _totals(fwd, "y_ptr")["stored_bytes"] == ideal
    for name in ("y_ptr", "dy_ptr"):
        assert _totals(bwd, name)["loaded_bytes"] == 2 * ideal
        assert _totals(bwd, name)["unique_loaded_bytes"] == ideal
    assert _totals(bwd, "dx_ptr")["stored_bytes"] == _totals(bwd, "dx_ptr")["unique_stored_bytes"] == ideal


def test_float16_storage():
    x = _randn((100, 300), 8).astype(np.float16)
    y = sm.softmax(x)
    assert y.dtype == np.float16
    assert_close(y, sm.reference_softmax(x), "float16")
    dy = _randn((100, 300), 9).astype(np.float16)
    assert_close(sm.softmax_backward(y, dy), sm.reference_softmax_backward(y, dy), "float16")


@pytest.mark.parametrize("max_block", [None, 256], ids=["fused", "online"])
def test_results_do_not_depend_on_grouping(max_block):
    x = _randn((5, 700), 10).astype(np.float32)
    grouped = sm.softmax(x, max_block=max_block)
    old = minitriton.options().group_size
    minitriton.set_options(group_size=1)
    try:
        one_by_one = sm.softmax(x, max_block=max_block)
    finally:
        minitriton.set_options(group_size=old)
    np.testing.assert_array_equal(grouped, one_by_one)


def test_bad_arguments_are_rejected():
    with pytest.raises(TypeError, match="softmax: x must be float32, float16 or bfloat16, got int32"):
        sm.softmax(np.zeros((2, 3), np.int32))
    with pytest.raises(ValueError, match="softmax: max_block must be a power of two, got 100"):
        sm.softmax(np.zeros((2, 300), np.float32), max_block=100)
    with pytest.raises(ValueError, match=r"softmax_backward: y is \(2, 3\) but dy is \(3, 2\)"):
        sm.softmax_backward(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))


def test_traffic_model():
    assert sm.traffic(4096, 1024, "bfloat16") == {"bytes": 2 * 4096 * 1024 * 2, "flops": 5 * 4096 * 1024}
    assert sm.traffic(10, 10, "float32", backward=True) == {"bytes": 1200, "flops": 400}


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(1, 300), max_block=st.sampled_from([None, 16, 64]),
       seed=st.integers(0, 2**16))
@example(rows=1, cols=2, max_block=None, seed=112)
def test_random_small_shapes(rows, cols, max_block, seed):
    x = (_randn((rows, cols), seed) * 3).astype(np.float32)
    y = sm.softmax(x, max_block=max_block)
    assert_close(y, sm.reference_softmax(x), "float32", f"{rows}x{cols}")
    dy = _randn((rows, cols), seed + 1).astype(np.float32)
    dx = sm.softmax_backward(y, dy, max_block=max_block)
    # dx = y * (dy - <dy, y>) in fp32: when dy - <dy, y> cancels (a row with one y near 1), dx is small next
    # to the terms it comes from, and its rounding error is relative to those terms, not to dx (e.g. 1x2,
    # seed 112: |dx| 1.2e-3 off by 2.4e-8, as in the float64 reference rounded the kernel's way)
    terms = np.abs(y.astype(np.float64)) * (np.abs(dy) + np.abs((dy * y).sum(axis=-1, keepdims=True)))
    np.testing.assert_allclose(dx, sm.reference_softmax_backward(y, dy), rtol=1e-5,
                               atol=4 * np.finfo(np.float32).eps * float(terms.max()))


# ----------------------------------------------------------------------------- torch.autograd

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_autograd_matches_torch_softmax(dtype):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1823, 781, generator=gen).to(getattr(torch, dtype)).requires_grad_()
    y = sm.triton_softmax(x)
    assert y.dtype == x.dtype and y.grad_fn is not None
    # reference: torch in fp32 on the same (possibly bf16) values, so only our rounding differs
    x32 = x.detach().float().requires_grad_()
    y_ref = torch.softmax(x32, dim=1)
    assert_close(_host.to_float64(y), _host.to_float64(y_ref), dtype, "forward vs torch.softmax")
    dy = torch.randn(1823, 781, generator=gen).to(x.dtype)
    (gx,) = torch.autograd.grad(y, x, dy)
    assert gx.dtype == x.dtype
    # The backward sees the stored y. torch's softmax backward kernel in fp32 on those same values is the
    # torch reference for every dtype; for fp32 this is also what autograd through torch.softmax gives.
    y_saved = y.detach().float()
    gx_ref = torch._softmax_backward_data(dy.float(), y_saved, 1, torch.float32)
    assert_close(_host.to_float64(gx), _host.to_float64(gx_ref), dtype, "grad vs torch's softmax backward")
    assert_close(_host.to_float64(gx), sm.reference_softmax_backward(y_saved, dy), dtype, "grad vs float64")
    if dtype == "float32":
        (gx_auto,) = torch.autograd.grad(y_ref, x32, dy)
        assert_close(gx.numpy(), gx_auto.numpy(), dtype, "grad vs autograd through torch.softmax")


def test_autograd_class_is_created_lazily_and_handles_3d():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    assert issubclass(sm.TritonSoftmax, torch.autograd.Function)
    assert sm.autograd_function() is sm.TritonSoftmax
    x = torch.randn(2, 3, 50, dtype=torch.float64).float().requires_grad_()
    y = sm.TritonSoftmax.apply(x)
    y.pow(2).sum().backward()                         # dy = 2y, a non-trivial upstream gradient
    x_ref = x.detach().clone().requires_grad_()
    torch.softmax(x_ref, dim=-1).pow(2).sum().backward()
    assert_close(x.grad.numpy(), x_ref.grad.numpy(), "float32", "3-D grad")


def test_module_does_not_import_torch_at_import_time():
    import subprocess
    import sys
    code = ("import minitriton; minitriton.install(); import sys; import kernels.softmax, kernels.rmsnorm, "
            "kernels.vector_add, kernels.tolerances; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.stdout.strip() == "False"
