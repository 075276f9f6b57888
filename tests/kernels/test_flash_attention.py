"""kernels.flash_attention under minitriton: forward and backward against float64 NumPy, traffic, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitriton

minitriton.install()  # before the kernels import `triton` (idempotent; conftest does it too)

import minitriton.language as tl  # noqa: E402
from kernels import _host  # noqa: E402
from kernels import flash_attention as fa  # noqa: E402
from kernels.tolerances import assert_close  # noqa: E402

# fp32 inputs go through the GPU's default TF32 dot; bf16 attention rounds P and dS to bf16 for its dots
OUT_TOL = {"float32": "tf32", "bfloat16": "bfloat16_dot"}
LSE_TOL = {"float32": "tf32", "bfloat16": "float32"}
FWD_BLOCKS = (32, 16)                     # (BLOCK_M, BLOCK_N): several blocks even at T = 64
BWD_BLOCKS = {"blocks_dkdv": (16, 32), "blocks_dq": (32, 16)}
BWD_BLOCKS_LONG = {"blocks_dkdv": (32, 64), "blocks_dq": (64, 32)}  # fewer loop steps for T = 257


def _inputs(B, H, T, D, dtype, seed, n=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = rng.standard_normal((B, H, T, D)).astype(np.float32)
        out.append(minitriton.Buffer.from_float(x, tl.bfloat16) if dtype == "bfloat16" else x)
    return out


def _naive_attention(q, k, v, causal, scale):
    """Independent float64 attention (loops over heads, scipy-free softmax) for checking the reference."""
    B, H, T, D = q.shape
    o = np.empty_like(q)
    lse = np.empty((B, H, T))
    for b in range(B):
        for h in range(H):
            s = q[b, h] @ k[b, h].T * scale
            if causal:
                s[np.triu_indices(T, 1)] = -np.inf
            top = s.max(axis=1, keepdims=True)
            w = np.exp(s - top)
            lse[b, h] = np.log(w.sum(axis=1)) + top[:, 0]
            o[b, h] = (w / w.sum(axis=1, keepdims=True)) @ v[b, h]
    return o, lse


def test_reference_matches_a_naive_attention():
    q, k, v = (_host.to_float64(x) for x in _inputs(2, 2, 37, 16, "float32", 0))
    for causal in (False, True):
        o, lse = fa.reference_attention(q, k, v, causal, scale=0.3)
        o2, lse2 = _naive_attention(q, k, v, causal, 0.3)
        np.testing.assert_allclose(o, o2, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(lse, lse2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("D", [16, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [64, 100, 257])
def test_forward(T, causal, D, dtype):
    q, k, v = _inputs(2, 3, T, D, dtype, seed=T + D)
    o, lse = fa.flash_attention(q, k, v, causal=causal, block_m=FWD_BLOCKS[0], block_n=FWD_BLOCKS[1])
    assert _host.dtype_name(o) == dtype and tuple(o.shape) == (2, 3, T, D)
    assert _host.dtype_name(lse) == "float32" and tuple(lse.shape) == (2, 3, T)
    ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
    assert_close(_host.to_float64(o), ref_o, OUT_TOL[dtype], "O")
    assert_close(lse, ref_lse, LSE_TOL[dtype], "logsumexp")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("D", [16, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [64, 100, 257])
def test_backward(T, causal, D, dtype):
    q, k, v, do = _inputs(2, 3, T, D, dtype, seed=1000 + T + D, n=4)
    o, lse = fa.flash_attention(q, k, v, causal=causal, block_m=FWD_BLOCKS[0], block_n=FWD_BLOCKS[1])
    blocks = BWD_BLOCKS if T <= 128 else BWD_BLOCKS_LONG
    grads = fa.flash_attention_backward(q, k, v, o, lse, do, causal=causal, **blocks)
    expected = fa.reference_attention_backward(q, k, v, do, causal)
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        assert _host.dtype_name(got) == dtype
        assert_close(_host.to_float64(got), want, OUT_TOL[dtype], name)


@pytest.mark.parametrize("causal", [False, True])
def test_default_blocks_and_f32_ieee(causal, monkeypatch):
    """The autotuned path (minitriton: the first config); with exact fp32 dots the float32 tolerance holds."""
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    q, k, v, do = _inputs(1, 2, 200, 64, "float32", seed=5, n=4)
    o, lse = fa.flash_attention(q, k, v, causal=causal)
    ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
    assert_close(o, ref_o, "float32", "O")
    assert_close(lse, ref_lse, "float32", "L")
    grads = fa.flash_attention_backward(q, k, v, o, lse, do, causal=causal)
    for name, got, want in zip(("dq", "dk", "dv"), grads, fa.reference_attention_backward(q, k, v, do, causal)):
        assert_close(got, want, "float32", name)


@pytest.mark.parametrize("T", [1, 17])
def test_tiny_sequences(T, monkeypatch):
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    q, k, v, do = _inputs(1, 1, T, 32, "float32", seed=T, n=4)
    for causal in (False, True):
        o, lse = fa.flash_attention(q, k, v, causal=causal, block_m=16, block_n=16)
        ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
        assert_close(o, ref_o, "float32", f"O, T={T}")
        assert_close(lse, ref_lse, "float32", f"L, T={T}")
        grads = fa.flash_attention_backward(q, k, v, o, lse, do, causal, blocks_dkdv=(16, 16), blocks_dq=(16, 16))
        for got, want in zip(grads, fa.reference_attention_backward(q, k, v, do, causal)):
            assert_close(got, want, "float32", f"grad, T={T}")


def test_custom_scale(monkeypatch):
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    q, k, v, do = _inputs(1, 2, 50, 16, "float32", seed=9, n=4)
    o, lse = fa.flash_attention(q, k, v, causal=True, scale=0.7, block_m=32, block_n=16)
    ref_o, ref_lse = _naive_attention(*(_host.to_float64(x) for x in (q, k, v)), True, 0.7)
    assert_close(o, ref_o, "float32", "O")
    assert_close(lse, ref_lse, "float32", "L")
    grads = fa.flash_attention_backward(q, k, v, o, lse, do, True, scale=0.7, **BWD_BLOCKS)
    for got, want in zip(grads, fa.reference_attention_backward(q, k, v, do, True, scale=0.7)):
        assert_close(got, want, "float32")


def test_padding_an_unsupported_head_dim(monkeypatch):
    """D = 48 is not a power of two: zero-padding to 64 (with the scale of D = 48) gives the same attention."""
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    q, k, v = _inputs(1, 2, 40, 48, "float32", seed=11)
    with pytest.raises(ValueError, match=r"head dim D = 48 is not supported: D must be one of \(16, 32, 64, 128\)"):
        fa.flash_attention(q, k, v)
    pad = [np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 16))) for x in (q, k, v)]
    o, lse = fa.flash_attention(*pad, causal=True, scale=1 / math.sqrt(48), block_m=32, block_n=16)
    ref_o, ref_lse = fa.reference_attention(q, k, v, True)
    assert_close(o[..., :48], ref_o, "float32", "O")
    assert np.all(o[..., 48:] == 0)
    assert_close(lse, ref_lse, "float32", "L")


def test_results_do_not_depend_on_grouping(group_size_one):
    q, k, v, do = _inputs(1, 2, 70, 16, "bfloat16", seed=12, n=4)
    o1, l1 = fa.flash_attention(q, k, v, causal=True, block_m=32, block_n=16)
    g1 = fa.flash_attention_backward(q, k, v, o1, l1, do, True, **BWD_BLOCKS)
    minitriton.set_options(group_size=None)
    o2, l2 = fa.flash_attention(q, k, v, causal=True, block_m=32, block_n=16)
    g2 = fa.flash_attention_backward(q, k, v, o2, l2, do, True, **BWD_BLOCKS)
    assert np.array_equal(o1.array, o2.array) and np.array_equal(l1, l2)
    for a, b in zip(g1, g2):
        assert np.array_equal(a.array, b.array)


def _kv_rows_loaded(T, BM, causal):
    """Key rows one (batch, head) loads in the forward: every query block reads keys [0, its end)."""
    return sum(min(m0 + BM, T) if causal else T for m0 in range(0, T, BM))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T,BM,BN", [(100, 32, 16), (257, 64, 32), (64, 64, 64)])
def test_forward_traffic(T, BM, BN, causal):
    B, H, D = 2, 3, 16
    q, k, v = _inputs(B, H, T, D, "bfloat16", seed=13)
    with minitriton.record() as rec:
        fa.flash_attention(q, k, v, causal=causal, block_m=BM, block_n=BN)
    t = rec.last["tensors"]
    rows = B * H * T
    # Q is read once and O and L written once, as in the ideal kernel
    assert t["q_ptr"]["totals"]["loaded_elements"] == rows * D
    assert t["o_ptr"]["totals"]["stored_elements"] == rows * D
    assert t["l_ptr"]["totals"]["stored_elements"] == rows
    # K and V are re-read by every query block, up to the diagonal when causal (block skipping)
    kv = B * H * _kv_rows_loaded(T, BM, causal) * D
    assert t["k_ptr"]["totals"]["loaded_elements"] == kv
    assert t["v_ptr"]["totals"]["loaded_elements"] == kv
    if causal and T > BM:
        assert kv < B * H * _kv_rows_loaded(T, BM, False) * D
    # distinct bytes touched = the ideal traffic
    touched = sum(t[n]["totals"]["unique_loaded_bytes"] for n in ("q_ptr", "k_ptr", "v_ptr")) + \
        t["o_ptr"]["totals"]["unique_stored_bytes"] + t["l_ptr"]["totals"]["unique_stored_bytes"]
    assert touched == fa.traffic(B, H, T, D, causal, "bfloat16")["bytes"] == 4 * rows * D * 2 + 4 * rows


def test_backward_traffic():
    B, H, T, D, causal = 1, 2, 100, 16, True
    q, k, v, do = _inputs(B, H, T, D, "bfloat16", seed=14, n=4)
    o, lse = fa.flash_attention(q, k, v, causal=causal, block_m=32, block_n=16)
    with minitriton.record() as rec:
        fa.flash_attention_backward(q, k, v, o, lse, do, causal, **BWD_BLOCKS)
    pre, dkdv, dq = rec.launches
    assert [r["kernel"] for r in rec.launches] == ["flash_bwd_preprocess_kernel", "flash_bwd_dkdv_kernel",
                                                   "flash_bwd_dq_kernel"]
    rows = B * H * T
    loads = lambda r, n: r["tensors"][n]["totals"]["loaded_elements"]  # noqa: E731
    stores = lambda r, n: r["tensors"][n]["totals"]["stored_elements"]  # noqa: E731
    assert loads(pre, "o_ptr") == loads(pre, "do_ptr") == rows * D and stores(pre, "delta_ptr") == rows
    # each key block is loaded once by its dK/dV program and each query block once by its dQ program
    assert loads(dkdv, "k_ptr") == loads(dkdv, "v_ptr") == rows * D
    assert stores(dkdv, "dk_ptr") == stores(dkdv, "dv_ptr") == rows * D
    assert loads(dq, "q_ptr") == loads(dq, "do_ptr") == rows * D and stores(dq, "dq_ptr") == rows * D
    # causal skipping: query block m only reads keys [0, min(m0 + BM, T))
    assert loads(dq, "k_ptr") == B * H * _kv_rows_loaded(T, 32, True) * D
    # the dK/dV program of key block n reads the queries [n0, T)
    assert loads(dkdv, "q_ptr") == B * H * sum(T - n0 for n0 in range(0, T, 32)) * D
    ideal = fa.traffic(B, H, T, D, causal, "bfloat16", backward=True)
    assert ideal["bytes"] == 8 * rows * D * 2 + 4 * rows


def test_traffic_model_numbers():
    # T = 3 causal: pairs (0,0) (1,0) (1,1) (2,0) (2,1) (2,2) = 6 of 9
    assert fa.traffic(1, 1, 3, 16, causal=True)["flops"] == 4 * 16 * 6
    assert fa.traffic(1, 1, 3, 16, causal=False)["flops"] == 4 * 16 * 9
    assert fa.traffic(2, 4, 3, 16, causal=True, backward=True)["flops"] == 10 * 16 * 6 * 8
    assert fa.traffic(1, 1, 3, 16, False, "float32")["bytes"] == 4 * 3 * 16 * 4 + 3 * 4


def test_autotune_configs_agree(monkeypatch):
    """MINITRITON_AUTOTUNE=all runs every config (block shapes) and fails if any result differs."""
    monkeypatch.setenv("MINITRITON_AUTOTUNE", "all")
    q, k, v, do = _inputs(1, 2, 90, 16, "bfloat16", seed=15, n=4)
    o, lse = fa.flash_attention(q, k, v, causal=True)
    dq, dk, dv = fa.flash_attention_backward(q, k, v, o, lse, do, causal=True)
    assert_close(_host.to_float64(o), fa.reference_attention(q, k, v, True)[0], "bfloat16_dot", "O")
    for got, want in zip((dq, dk, dv), fa.reference_attention_backward(q, k, v, do, True)):
        assert_close(_host.to_float64(got), want, "bfloat16_dot")


def test_errors():
    q = np.zeros((1, 1, 8, 16), np.float32)
    with pytest.raises(ValueError, match=r"q must be \(B, H, T, D\), got shape \(8, 16\)"):
        fa.flash_attention(q[0, 0], q[0, 0], q[0, 0])
    with pytest.raises(ValueError, match=r"k has shape \(1, 1, 9, 16\), but q has \(1, 1, 8, 16\)"):
        fa.flash_attention(q, np.zeros((1, 1, 9, 16), np.float32), q)
    with pytest.raises(TypeError, match="v is float16, but q is float32"):
        fa.flash_attention(q, q, q.astype(np.float16))
    with pytest.raises(TypeError, match="supports float32, float16 and bfloat16, got float64"):
        fa.flash_attention(*(q.astype(np.float64),) * 3)
    with pytest.raises(ValueError, match=r"block_m \(16\) must be a multiple of block_n \(32\)"):
        fa.flash_attention(q, q, q, block_m=16, block_n=32)
    with pytest.raises(ValueError, match="give both block_m and block_n, or neither"):
        fa.flash_attention(q, q, q, block_m=16)
    lse = np.zeros((1, 1, 8), np.float32)
    with pytest.raises(ValueError, match=r"lse must have shape \(1, 1, 8\), got \(1, 8\)"):
        fa.flash_attention_backward(q, q, q, q, lse[0], q)
    with pytest.raises(ValueError, match="BLOCK_N must be a multiple of BLOCK_M"):
        fa.flash_attention_backward(q, q, q, q, lse, q, blocks_dkdv=(32, 16))


# ------------------------------------------------------------------------------------- torch (CPU)

def _plain_attention(torch, q, k, v, causal):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        T = q.shape[-2]
        s = s.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("causal", [False, True])
def test_autograd_matches_torch(causal, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    g = torch.Generator().manual_seed(0)
    q, k, v, do = (torch.randn(2, 2, 77, 32, generator=g) for _ in range(4))
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    out = fa.attention(*leaves, causal=causal)
    out.backward(do)
    ref_leaves = [x.double().requires_grad_() for x in (q, k, v)]
    ref = _plain_attention(torch, *ref_leaves, causal)
    ref.backward(do.double())
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert_close(out.detach().numpy(), ref.detach().numpy(), "float32", "O")
    for name, a, b in zip(("dq", "dk", "dv"), leaves, ref_leaves):
        assert_close(a.grad.numpy(), b.grad.numpy(), "float32", name)


def test_autograd_bf16_torch_tensors():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(1)
    q, k, v, do = (torch.randn(1, 2, 50, 64, generator=g).to(torch.bfloat16) for _ in range(4))
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    out = fa.autograd_function().apply(*leaves, True, None)
    out.backward(do)
    assert out.dtype == torch.bfloat16 and all(x.grad.dtype == torch.bfloat16 for x in leaves)
    assert_close(_host.to_float64(out), fa.reference_attention(q, k, v, True)[0], "bfloat16_dot", "O")
    for name, a, want in zip(("dq", "dk", "dv"), leaves, fa.reference_attention_backward(q, k, v, do, True)):
        assert_close(_host.to_float64(a.grad), want, "bfloat16_dot", name)


def test_forward_configs_for_the_h200():
    """D = 128 on Hopper keeps the 8-warp configs that fit in 227 KiB and the small (64, 64, 4 warps) one for
    short sequences; every config has BLOCK_M a multiple of BLOCK_N (the causal diagonal starts on a
    key-block boundary)."""
    q = np.zeros((1, 1, 1, 1), np.float32)
    first = fa.FWD_CONFIGS[0]
    assert (first.kwargs["BLOCK_M"], first.kwargs["BLOCK_N"], first.num_warps) == (128, 64, 8)
    for D in (16, 32, 64):
        assert fa._prune_fwd(fa.FWD_CONFIGS, {"D": D, "q_ptr": q}) == fa.FWD_CONFIGS
    kept = fa._prune_fwd(fa.FWD_CONFIGS, {"q_ptr": q}, D=128)
    assert kept[0] is first
    assert {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages) for c in kept} == {
        (128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 8, 4), (64, 64, 4, 3)}
    for configs in (fa.FWD_CONFIGS, fa.DQ_CONFIGS):
        assert all(c.kwargs["BLOCK_M"] % c.kwargs["BLOCK_N"] == 0 for c in configs)
    assert all(c.kwargs["BLOCK_N"] % c.kwargs["BLOCK_M"] == 0 for c in fa.DKDV_CONFIGS)


def test_second_call_launches_the_chosen_config_directly():
    q, k, v = _inputs(1, 1, 48, 16, "bfloat16", seed=16)
    with minitriton.record() as rec:
        o1, l1 = fa.flash_attention(q, k, v)
        o2, l2 = fa.flash_attention(q, k, v)
    assert np.array_equal(o1.array, o2.array) and np.array_equal(l1, l2)
    first, second = rec.launches
    assert first["constexprs"] == second["constexprs"]
    assert second["constexprs"]["BLOCK_M"] == fa.FWD_CONFIGS[0].kwargs["BLOCK_M"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [64, 100, 257])
def test_tma_forward(T, causal, dtype, monkeypatch):
    """The tensor-descriptor forward (what Hopper GPUs run at D = 128) through the same host plan, with small
    blocks so several of them and the zero-filled tail past T are exercised."""
    monkeypatch.setattr(fa, "tma_config", lambda T_, causal_: {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4,
                                                                "num_stages": 2})
    monkeypatch.setattr(fa, "_tma_suits", lambda q_, D_: True)   # as on a Hopper GPU
    launched = []
    real = fa._forward_tma_plan
    monkeypatch.setattr(fa, "_forward_tma_plan", lambda *a: launched.append(1) or real(*a))
    B, H, D = 2, 3, 32
    q, k, v = _inputs(B, H, T, D, dtype, seed=77 + T)
    o, lse = fa.flash_attention(q, k, v, causal=causal)
    assert launched
    ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
    assert_close(_host.to_float64(o), ref_o, OUT_TOL[dtype], "O")
    assert_close(lse, ref_lse, LSE_TOL[dtype], "logsumexp")


def test_tma_plan_sends_unaligned_inputs_to_the_pointer_kernel(monkeypatch):
    """A q 4 bytes past a 16-byte boundary (a view at an odd offset) cannot be a tensor descriptor's base (the
    TMA unit faults; minitriton raises): the TMA plan launches the pointer kernel for it, with the same result."""
    monkeypatch.setattr(fa, "_tma_suits", lambda q_, D_: True)
    monkeypatch.setattr(fa, "tma_config", lambda T_, causal_: {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4,
                                                                "num_stages": 2})
    q, k, v = _inputs(1, 2, 100, 32, "float32", seed=5)
    flat = np.empty(q.size + 1, np.float32)
    q_odd = flat[1:].reshape(q.shape)
    q_odd[...] = q
    assert _host.address(q_odd) % 16 and not _host.address(q) % 16
    for causal in (False, True):
        o, lse = fa.flash_attention(q_odd, k, v, causal=causal)
        ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
        assert_close(o, ref_o, OUT_TOL["float32"], "O")
        assert_close(lse, ref_lse, LSE_TOL["float32"], "logsumexp")


def test_compiled_launcher_binds_constexprs_in_signature_order():
    """A kept `CompiledKernel` takes every argument positionally: the constexprs bound by name come after the
    call's own arguments in the kernel's signature order; options such as num_warps are not arguments."""
    tail = _host._bound_tail(fa.flash_fwd_tma_kernel, 7, {"CAUSAL": True, "BLOCK_N": 32, "D": 128, "BLOCK_M": 64,
                                                          "num_warps": 4, "num_stages": 2})
    assert tail == (128, 64, 32, True)
    with pytest.raises(TypeError, match="missing argument: 'CAUSAL'"):
        _host._bound_tail(fa.flash_fwd_tma_kernel, 7, {"D": 128, "BLOCK_M": 64, "BLOCK_N": 32})


def test_tma_path_only_for_hopper_cuda_at_d128():
    q = np.zeros((1, 1, 16, 128), np.float32)
    assert not fa._tma_suits(q, 128)           # NumPy arrays keep the pointer kernel
    assert fa.tma_config(1024, True)["BLOCK_M"] == 64 and fa.tma_config(4096, True)["BLOCK_M"] == 128
    assert fa.tma_config(1024, False) == {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}


def _rising_scores(T, D, rise_log2, causal):
    """q, k, v (1, 2, T, D bfloat16) whose scores climb along the keys: the last key's score is `rise_log2` (in
    log2 units) above key 0's in every row, so the first key block's maximum is far below later scores."""
    rng = np.random.default_rng(int(rise_log2) + T)
    scale = 1.0 / math.sqrt(D)
    e = np.zeros(D, np.float32)
    e[0] = 1.0
    t = np.linspace(0.0, rise_log2 / (scale * fa.LOG2E), T).astype(np.float32)
    q = np.broadcast_to(e, (1, 2, T, D)).copy() + 0.01 * rng.standard_normal((1, 2, T, D)).astype(np.float32)
    q[..., 0] = 1.0
    k = t[None, None, :, None] * e + 0.01 * rng.standard_normal((1, 2, T, D)).astype(np.float32)
    v = rng.standard_normal((1, 2, T, D)).astype(np.float32)
    return tuple(minitriton.Buffer.from_float(x, tl.bfloat16) for x in (q, k, v))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("rise,fallback", [(0.0, False), (40.0, False), (200.0, True)])
def test_fixed_reference_and_its_online_fallback(rise, fallback, causal, monkeypatch):
    """For bf16 inputs the forward fixes each row's softmax reference at its maximum over key block 0 and never
    rescales. Scores rising 40 (log2 units) past that reference make P up to 2**40 and stay exact; 200 would
    overflow, so the program redoes its rows with the online softmax, which the traffic shows as K and V read
    twice."""
    T, D, BM, BN = 100, 16, 32, 16
    q, k, v = _rising_scores(T, D, rise, causal)
    with minitriton.record() as rec:
        o, lse = fa.flash_attention(q, k, v, causal=causal, block_m=BM, block_n=BN)
    ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
    assert np.isfinite(_host.to_float64(o)).all() and np.isfinite(lse).all()
    assert_close(_host.to_float64(o), ref_o, "bfloat16_dot", "O")
    assert_close(lse, ref_lse, "float32", "L")
    kv = 2 * _kv_rows_loaded(T, BM, causal) * D
    loaded = rec.last["tensors"]["k_ptr"]["totals"]["loaded_elements"]
    if not fallback:
        assert loaded == kv
    elif causal:   # the first query block's rows never see the steep part: only later blocks redo
        assert kv < loaded < 2 * kv
    else:
        assert loaded == 2 * kv


@pytest.mark.parametrize("rise", [40.0, 200.0])
def test_tma_forward_fixed_reference_and_fallback(rise, monkeypatch):
    monkeypatch.setattr(fa, "tma_config", lambda T_, causal_: {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4,
                                                                "num_stages": 2})
    monkeypatch.setattr(fa, "_tma_suits", lambda q_, D_: True)
    for causal in (False, True):
        q, k, v = _rising_scores(100, 16, rise, causal)
        o, lse = fa.flash_attention(q, k, v, causal=causal)
        ref_o, ref_lse = fa.reference_attention(q, k, v, causal)
        assert_close(_host.to_float64(o), ref_o, "bfloat16_dot", f"O causal={causal}")
        assert_close(lse, ref_lse, "float32", f"L causal={causal}")


@pytest.mark.parametrize("dtype,tol", [("float32", "tf32"), ("float16", "float16_dot")])
def test_other_dtypes_keep_the_online_softmax(dtype, tol):
    """fp16 and fp32 attention keep the running maximum: fp16 P cannot pass 65504, and fp32 would lose precision
    once P > 1. Scores rising by 30 (log2 units) would give P up to 2**30 under a fixed reference; here K is
    read once, with no second pass, and the result is right."""
    q, k, v = (_host.to_float64(x).astype(dtype) for x in _rising_scores(100, 16, 30.0, False))
    with minitriton.record() as rec:
        o, lse = fa.flash_attention(q, k, v, causal=False, block_m=32, block_n=16)
    assert rec.last["tensors"]["k_ptr"]["totals"]["loaded_elements"] == 2 * _kv_rows_loaded(100, 32, False) * 16
    ref_o, ref_lse = fa.reference_attention(q, k, v, False)
    assert_close(o.astype(np.float64), ref_o, tol, "O")
    assert_close(lse, ref_lse, "tf32" if dtype == "float32" else "float32", "L")


def test_fixed_reference_reruns_rows_whose_output_overflows():
    """P may reach 2**64 under the fixed reference, so a huge V (here ~1e33, finite in bf16) can overflow acc
    where the online softmax (P <= 1) stays finite: such rows are redone online too."""
    q, k, v = _rising_scores(100, 16, 40.0, False)
    v = minitriton.Buffer.from_float((_host.to_float64(v) * 1e33).astype(np.float32), tl.bfloat16)
    with minitriton.record() as rec:
        o, lse = fa.flash_attention(q, k, v, causal=False, block_m=32, block_n=16)
    assert rec.last["tensors"]["k_ptr"]["totals"]["loaded_elements"] > 2 * _kv_rows_loaded(100, 32, False) * 16
    ref_o, ref_lse = fa.reference_attention(q, k, v, False)
    got = _host.to_float64(o)
    assert np.isfinite(got).all()
    assert_close(got, ref_o, "bfloat16_dot", "O")


def test_launch_configs_name_the_autotuners_choice(monkeypatch):
    q, k, v, do = _inputs(1, 1, 48, 16, "float32", seed=21, n=4)
    monkeypatch.setattr(fa, "_CHOSEN", {})
    assert fa.launch_configs(q, True) == {"fwd": None, "dkdv": None, "dq": None}
    o, lse = fa.flash_attention(q, k, v, causal=True)
    fa.flash_attention_backward(q, k, v, o, lse, do, causal=True)
    chosen = fa.launch_configs(q, True)
    first = {name: f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']} w{c.num_warps} s{c.num_stages}"
             for name, c in (("fwd", fa.FWD_CONFIGS[0]), ("dkdv", fa.DKDV_CONFIGS[0]), ("dq", fa.DQ_CONFIGS[0]))}
    assert chosen == first   # minitriton's autotuner takes the first config that survives pruning
    assert fa.launch_configs(q, False)["fwd"] is None   # a choice is per (T, D, causal, dtype)
    monkeypatch.setattr(fa, "_tma_suits", lambda q_, D_: True)
    assert fa.launch_configs(q, False)["fwd"] == "TMA 128x64 w4 s2"
