"""kernels.rmsnorm under minitriton: forward (y, rstd) and backward (dx, dw reduced across programs) against
float64 NumPy, the reference's own gradient against finite differences, traffic, torch.autograd."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitriton
from kernels import _host
from kernels import rmsnorm as rn
from kernels.tolerances import assert_close

EPS = 1e-6


def _randn(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _inputs(kind, shape, seed=0):
    return kind.make(_randn(shape, seed)), kind.make(_randn(shape[-1], seed + 1)), kind.make(_randn(shape, seed + 2))


@pytest.mark.parametrize("shape", [(512, 896), (1823, 781), (2, 3, 100), (1, 2)], ids=str)
def test_forward_and_backward_match_reference(array_kind, shape):
    x, w, dy = _inputs(array_kind, shape)
    y, rstd = rn.rmsnorm_forward(x, w, EPS)
    assert array_kind.is_kind(y) and _host.shape(y) == shape
    assert _host.dtype_name(rstd) == "float32" and _host.shape(rstd) == (int(np.prod(shape[:-1])),)
    assert_close(_host.to_float64(y), rn.reference_rmsnorm(x, w, EPS), array_kind.dtype, "y")
    assert_close(_host.to_float64(rstd), rn.reference_rstd(x, EPS).ravel(), "float32", "rstd")
    dx, dw = rn.rmsnorm_backward(x, w, rstd, dy)
    assert array_kind.is_kind(dx) and array_kind.is_kind(dw) and _host.shape(dw) == (shape[-1],)
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy, EPS)
    assert_close(_host.to_float64(dx), ref_dx, array_kind.dtype, "dx")
    assert_close(_host.to_float64(dw), ref_dw, array_kind.dtype, "dw")


def test_reference_gradient_matches_finite_differences():
    """The chain-rule reference, checked independently: central differences of sum(dy * rmsnorm(x, w))."""
    x, w, dy = _randn((3, 7), 10), _randn(7, 11), _randn((3, 7), 12)
    loss = lambda x_, w_: float((dy * rn.reference_rmsnorm(x_, w_, EPS)).sum())  # noqa: E731
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy, EPS)
    h = 1e-6
    num_dx = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        num_dx[idx] = (loss(x + e, w) - loss(x - e, w)) / (2 * h)
    num_dw = np.array([(loss(x, w + h * np.eye(7)[j]) - loss(x, w - h * np.eye(7)[j])) / (2 * h) for j in range(7)])
    np.testing.assert_allclose(ref_dx, num_dx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ref_dw, num_dw, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("programs", [1, 7, 37, 528, 2000])
def test_dw_is_reduced_across_any_number_of_programs(programs):
    """1 program: one partial row; 37: a partial count that is not a multiple of the reduce kernel's
    BLOCK_P (32); 2000 > rows: one row per program and idle programs."""
    x, w, dy = (np.asarray(a, np.float32) for a in (_randn((300, 129), 20), _randn(129, 21), _randn((300, 129), 22)))
    _, rstd = rn.rmsnorm_forward(x, w, EPS)
    with minitriton.record() as rec:
        dx, dw = rn.rmsnorm_backward(x, w, rstd, dy, programs=programs)
    bwd, reduce = rec.launches
    cfg = rn.backward_config(300, 129, programs)
    assert bwd["num_programs"] == cfg["grid"][0] == -(-300 // cfg["rows_per_program"])
    assert cfg["rows_per_program"] % cfg["BLOCK_M"] == 0
    assert reduce["tensors"]["partial_ptr"]["shape"] == [cfg["grid"][0], 129]
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy, EPS)
    assert_close(dx, ref_dx, "float32", "dx")
    assert_close(dw, ref_dw, "float32", f"dw, {programs} programs")


def test_single_column_rows():
    """n_cols = 1: y = w * x / sqrt(x² + eps) ~ w * sign(x), so dx ~ 0 by a cancellation of two terms of size
    |dy * w * rstd|; fp32 leaves a residue of an ulp of that size, which is what dx is compared to."""
    x, w, dy = _randn((50, 1), 60).astype(np.float32), np.array([1.5], np.float32), _randn((50, 1), 61).astype(np.float32)
    y, rstd = rn.rmsnorm_forward(x, w, EPS)
    assert_close(y, rn.reference_rmsnorm(x, w, EPS), "float32", "y")
    dx, dw = rn.rmsnorm_backward(x, w, rstd, dy)
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy, EPS)
    terms = np.abs(dy * w * rstd[:, None].astype(np.float64))
    assert (np.abs(dx - ref_dx) <= 4 * 2.0 ** -24 * terms).all()
    assert_close(dw, ref_dw, "float32", "dw")


def test_zero_rows_give_zero_output_and_finite_gradients():
    x = np.zeros((4, 64), np.float32)
    x[1] = _randn(64, 30)
    w, dy = np.ones(64, np.float32), _randn((4, 64), 31).astype(np.float32)
    y, rstd = rn.rmsnorm_forward(x, w, EPS)
    assert (y[[0, 2, 3]] == 0).all()
    np.testing.assert_allclose(rstd[0], 1 / np.sqrt(np.float32(EPS)), rtol=1e-6)
    dx, dw = rn.rmsnorm_backward(x, w, rstd, dy)
    assert np.isfinite(dx).all() and np.isfinite(dw).all()
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy, EPS)
    assert_close(dx, ref_dx, "float32", "dx")
    assert_close(dw, ref_dw, "float32", "dw")


def test_rmsnorm_no_columns():
    """Rows of no columns: y is empty, rstd NaN (the mean of no squares is 0/0), the backward gives empty dx
    and an empty dw."""
    x, w = np.zeros((3, 0), np.float32), np.zeros(0, np.float32)
    y, rstd = rn.rmsnorm_forward(x, w, EPS)
    assert y.shape == (3, 0) and rstd.shape == (3,) and np.isnan(rstd).all()
    dx, dw = rn.rmsnorm_backward(x, w, rstd, np.zeros((3, 0), np.float32))
    assert dx.shape == (3, 0) and dw.shape == (0,)


def test_strided_weight_and_rows():
    """A weight that is a strided view and rows sliced out of a wider matrix give the same results."""
    w_wide, wide = _randn(400, 70).astype(np.float32), _randn((30, 300), 71).astype(np.float32)
    w, x = w_wide[::2], wide[:, :200]                 # w: stride 2 (copied); x: row stride 300 (read in place)
    dy = _randn((30, 200), 72).astype(np.float32)
    y, rstd = rn.rmsnorm_forward(x, w)
    assert_close(y, rn.reference_rmsnorm(x, w), "float32", "y")
    dx, dw = rn.rmsnorm_backward(x, w, rstd, dy)
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy)
    assert_close(dx, ref_dx, "float32", "dx")
    assert_close(dw, ref_dw, "float32", "dw")


def test_mixed_dtypes_bf16_activations_fp32_weight():
    x = minitriton.Buffer.from_float(_randn((64, 200), 40).astype(np.float32))
    w = _randn(200, 41).astype(np.float32)
    dy = minitriton.Buffer.from_float(_randn((64, 200), 42).astype(np.float32))
    y, rstd = rn.rmsnorm_forward(x, w)
    dx, dw = rn.rmsnorm_backward(x, w, rstd, dy)
    assert _host.dtype_name(y) == _host.dtype_name(dx) == "bfloat16" and dw.dtype == np.float32
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy)
    assert_close(_host.to_float64(y), rn.reference_rmsnorm(x, w), "bfloat16", "y")
    assert_close(_host.to_float64(dx), ref_dx, "bfloat16", "dx")
    assert_close(dw, ref_dw, "float32", "dw (fp32 weight)")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_traffic(dtype):
    """Forward: x read once, y and rstd written once, w touched once (its re-reads by other programs are
    L2 hits on a GPU). Backward: x, dy, rstd read once, dx written once, w and dw once; plus the fp32 partials."""
    n_rows, n_cols = 1823, 781
    n, size = n_rows * n_cols, {"float32": 4, "bfloat16": 2}[dtype]
    like = np.zeros(1, np.float32)
    x, w, dy = (_host.from_float(a, like, dtype) for a in (_randn((n_rows, n_cols), 50), _randn(n_cols, 51),
                                                           _randn((n_rows, n_cols), 52)))
    with minitriton.record() as rec:
        y, rstd = rn.rmsnorm_forward(x, w)
        rn.rmsnorm_backward(x, w, rstd, dy)
    fwd, bwd, reduce = rec.launches
    t = {k: v["totals"] for k, v in fwd["tensors"].items()}
    assert t["x_ptr"]["loaded_bytes"] == t["x_ptr"]["unique_loaded_bytes"] == n * size
    assert t["y_ptr"]["stored_bytes"] == t["y_ptr"]["unique_stored_bytes"] == n * size
    assert t["rstd_ptr"]["stored_bytes"] == t["rstd_ptr"]["unique_stored_bytes"] == 4 * n_rows
    assert t["w_ptr"]["unique_loaded_bytes"] == n_cols * size
    assert t["w_ptr"]["loaded_bytes"] == fwd["num_programs"] * n_cols * size   # once per program
    unique = sum(v["unique_loaded_bytes"] + v["unique_stored_bytes"] for v in t.values())
    assert unique == rn.traffic(n_rows, n_cols, dtype)["bytes"]

    b = {k: v["totals"] for k, v in bwd["tensors"].items()}
    r = {k: v["totals"] for k, v in reduce["tensors"].items()}
    for name in ("x_ptr", "dy_ptr"):
        assert b[name]["loaded_bytes"] == b[name]["unique_loaded_bytes"] == n * size
    assert b["rstd_ptr"]["loaded_bytes"] == 4 * n_rows
    assert b["dx_ptr"]["stored_bytes"] == b["dx_ptr"]["unique_stored_bytes"] == n * size
    assert b["w_ptr"]["unique_loaded_bytes"] == n_cols * size
    partial_bytes = bwd["num_programs"] * n_cols * 4
    assert b["dw_partial_ptr"]["stored_bytes"] == partial_bytes
    assert r["partial_ptr"]["loaded_bytes"] == r["partial_ptr"]["unique_loaded_bytes"] == partial_bytes
    assert r["dw_ptr"]["stored_bytes"] == r["dw_ptr"]["unique_stored_bytes"] == n_cols * size
    ideal = sum(b[k]["unique_loaded_bytes"] + b[k]["unique_stored_bytes"]
                for k in ("x_ptr", "dy_ptr", "rstd_ptr", "dx_ptr", "w_ptr")) + r["dw_ptr"]["unique_stored_bytes"]
    assert ideal == rn.traffic(n_rows, n_cols, dtype, backward=True)["bytes"]


def test_bad_arguments_are_rejected():
    x = np.zeros((2, 8), np.float32)
    with pytest.raises(ValueError, match=r"rmsnorm: w must have shape \(x.shape\[-1\],\) = \(8,\), got \(7,\)"):
        rn.rmsnorm(x, np.zeros(7, np.float32))
    with pytest.raises(TypeError, match="rmsnorm: x must be float32, float16 or bfloat16, got int64"):
        rn.rmsnorm(np.zeros((2, 8), np.int64), np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="rmsnorm: rows of 65537 columns do not fit one block"):
        rn.rmsnorm(np.zeros((1, 65537), np.float32), np.zeros(65537, np.float32))
    with pytest.raises(ValueError, match=r"rmsnorm_backward: rstd must hold one value per row \(2\), got 3"):
        rn.rmsnorm_backward(x, np.zeros(8, np.float32), np.ones(3, np.float32), x)
    with pytest.raises(ValueError, match=r"rmsnorm_backward: x is \(2, 8\) but dy is \(8, 2\)"):
        rn.rmsnorm_backward(x, np.zeros(8, np.float32), np.ones(2, np.float32), np.zeros((8, 2), np.float32))


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(2, 300), programs=st.sampled_from([None, 1, 3, 16]),
       seed=st.integers(0, 2**16))
def test_random_small_shapes(rows, cols, programs, seed):
    # 2+ columns: a single column is ill-conditioned by construction (test_single_column_rows)
    x, w, dy = (np.asarray(a, np.float32) for a in (_randn((rows, cols), seed), _randn(cols, seed + 1),
                                                    _randn((rows, cols), seed + 2)))
    y, rstd = rn.rmsnorm_forward(x, w, EPS)
    assert_close(y, rn.reference_rmsnorm(x, w, EPS), "float32", f"y {rows}x{cols}")
    dx, dw = rn.rmsnorm_backward(x, w, rstd, dy, programs=programs)
    ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy, EPS)
    assert_close(dx, ref_dx, "float32", "dx")
    assert_close(dw, ref_dw, "float32", "dw")


# ----------------------------------------------------------------------------- torch.autograd

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_autograd_matches_torch_rmsnorm(dtype):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    gen = torch.Generator().manual_seed(0)
    tdt = getattr(torch, dtype)
    x = torch.randn(512, 896, generator=gen).to(tdt).requires_grad_()
    w = torch.randn(896, generator=gen).to(tdt).requires_grad_()
    dy = torch.randn(512, 896, generator=gen).to(tdt)
    y = rn.triton_rmsnorm(x, w, EPS)
    gx, gw = torch.autograd.grad(y, (x, w), dy)
    assert y.dtype == gx.dtype == gw.dtype == tdt
    # torch's RMSNorm formula in float64 on the same values: autograd gives the reference gradients
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    y64 = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + EPS) * w64
    gx64, gw64 = torch.autograd.grad(y64, (x64, w64), dy.double())
    assert_close(_host.to_float64(y), y64.detach().numpy(), dtype, "y vs torch")
    assert_close(_host.to_float64(gx), gx64.numpy(), dtype, "dx vs torch")
    assert_close(_host.to_float64(gw), gw64.numpy(), dtype, "dw vs torch")
    if hasattr(torch.nn.functional, "rms_norm"):
        y_t = torch.nn.functional.rms_norm(x.detach().float(), (896,), w.detach().float(), EPS)
        assert_close(_host.to_float64(y), y_t.numpy(), dtype, "y vs F.rms_norm")


def test_autograd_class_is_created_lazily_and_handles_3d():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    assert issubclass(rn.TritonRMSNorm, torch.autograd.Function)
    assert rn.autograd_function() is rn.TritonRMSNorm
    x = torch.randn(2, 3, 40).requires_grad_()
    w = torch.randn(40).requires_grad_()
    rn.TritonRMSNorm.apply(x, w, 1e-5).pow(2).sum().backward()
    x_ref, w_ref = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    (x_ref * torch.rsqrt(x_ref.pow(2).mean(-1, keepdim=True) + 1e-5) * w_ref).pow(2).sum().backward()
    assert_close(x.grad.numpy(), x_ref.grad.numpy(), "float32", "3-D dx")
    assert_close(w.grad.numpy(), w_ref.grad.numpy(), "float32", "3-D dw")


@pytest.mark.parametrize("cols,block_m,warps", [(1024, 4, 8), (2048, 2, 8), (4096, 1, 2), (8192, 1, 4)])
def test_forward_launch_config_is_the_measured_one(cols, block_m, warps):
    """Rows per program and warps as measured on an H200 (bf16, 4096 rows; see `config`)."""
    cfg = rn.config(4096, cols)
    assert (cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"]) == (block_m, cols, warps)
    assert cfg["grid"] == (4096 // block_m,)
