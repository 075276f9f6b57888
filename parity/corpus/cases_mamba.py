"""Mamba (state-spaces): the Triton ops of mamba_ssm against the `*_ref` functions the library's tests use."""
from __future__ import annotations

from parity.corpus.case import TF32, case, with_grads

P = "mamba"
STUB = ("mamba_ssm", "mamba_ssm.ops")     # their __init__ imports the CUDA extension and the models
OPS = "mamba_ssm.ops.triton."


def _ssm_inputs(ctx, L=16, H=2, Pd=8, N=8):
    torch = ctx.torch
    x = ctx.randn(1, L, H, Pd)
    dt = torch.nn.functional.softplus(ctx.randn(1, L, H) - 1)
    A = -torch.exp(ctx.randn(H) * 0.5)
    B, C = ctx.randn(1, L, 1, N), ctx.randn(1, L, 1, N)
    return x, dt, A, B, C


@case(P, "mamba layer_norm residual fwd+bwd", OPS + "layer_norm", "_layer_norm_fwd_1pass_kernel, _layer_norm_bwd_kernel",
      stub=STUB)
def layer_norm(m, ctx):
    x, r = ctx.randn(6, 64, grad=True), ctx.randn(6, 64, grad=True)
    w, b = ctx.randn(64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, r, w, b: m.layer_norm_fn(x, w, b, residual=r, eps=1e-6),
                      lambda x, r, w, b: m.layer_norm_ref(x, w, b, residual=r, eps=1e-6), [x, r, w, b])


@case(P, "mamba rms_norm fwd+bwd", OPS + "layer_norm", "_layer_norm_fwd_1pass_kernel, _layer_norm_bwd_kernel", stub=STUB)
def rms_norm(m, ctx):
    x, w = ctx.randn(5, 96, grad=True), ctx.randn(96, grad=True)
    return with_grads(ctx, lambda x, w: m.rms_norm_fn(x, w, None, eps=1e-6),
                      lambda x, w: m.rms_norm_ref(x, w, None, eps=1e-6), [x, w])


@case(P, "mamba gated rmsnorm fwd+bwd", OPS + "layernorm_gated", "_layer_norm_fwd_1pass_kernel, _layer_norm_bwd_kernel",
      stub=STUB)
def gated_rmsnorm(m, ctx):
    x, z, w = ctx.randn(4, 64, grad=True), ctx.randn(4, 64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, z, w: m.rmsnorm_fn(x, w, None, z=z, eps=1e-6, group_size=32,
                                                         norm_before_gate=False),
                      lambda x, z, w: m.rms_norm_ref(x, w, None, z=z, eps=1e-6, group_size=32,
                                                     norm_before_gate=False), [x, z, w])


@case(P, "mamba swiglu fwd+bwd", OPS + "k_activations", "_swiglu_fwd_kernel, _swiglu_bwd_kernel", stub=STUB)
def swiglu(m, ctx):
    torch = ctx.torch
    xy = ctx.randn(4, 128, grad=True)
    return with_grads(ctx, lambda xy: m.swiglu(xy),
                      lambda xy: torch.nn.functional.silu(xy[:, :64]) * xy[:, 64:], [xy])


@case(P, "mamba selective_state_update", OPS + "selective_state_update", "_selective_scan_update_kernel", stub=STUB)
def selective_state_update(m, ctx):
    torch = ctx.torch
    state = ctx.randn(2, 2, 16, 8)
    x, dt, z = ctx.randn(2, 2, 16), ctx.randn(2, 2, 16), ctx.randn(2, 2, 16)
    A = -torch.exp(ctx.randn(2, 16, 8))
    B, C, D, dt_bias = ctx.randn(2, 1, 8), ctx.randn(2, 1, 8), ctx.randn(2, 16), ctx.randn(2, 16)
    ref_state = state.detach().cpu().double()
    args = [ctx.f64(t) for t in (x, dt, A, B, C)]
    want = m.selective_state_update_ref(ref_state, *args, D=ctx.f64(D), z=ctx.f64(z), dt_bias=ctx.f64(dt_bias),
                                        dt_softplus=True)
    got = m.selective_state_update(state, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias, dt_softplus=True)
    return [("out", got, want), ("state", state, ref_state)]


@case(P, "mamba ssd chunk_state", OPS + "ssd_chunk_state", "_chunk_cumsum_fwd_kernel, _chunk_state_fwd_kernel",
      **TF32, stub=STUB)
def chunk_state(m, ctx):
    x, dt, A, B, _ = _ssm_inputs(ctx)
    dA_cumsum, dt_out = m._chunk_cumsum_fwd(dt, A, 8)
    got = m.chunk_state(B, x, dt_out, dA_cumsum)
    want = m.chunk_state_ref(*[ctx.f64(t) for t in (B, x, dt_out, dA_cumsum)])
    return [("states", got, want)]


@case(P, "mamba ssd state_passing", OPS + "ssd_state_passing", "_state_passing_fwd_kernel", stub=STUB)
def state_passing(m, ctx):
    states, dA = ctx.randn(2, 4, 2, 24), -ctx.rand(2, 2, 4)
    init = ctx.randn(2, 2, 24)
    got = m.state_passing(states, dA, init)
    want = m.state_passing_ref(ctx.f64(states), ctx.f64(dA), ctx.f64(init))
    return [("states", got[0], want[0]), ("final", got[1], want[1])]


@case(P, "mamba ssd chunk_scan_combined fwd+bwd", OPS + "ssd_combined",
      "_chunk_cumsum_fwd_kernel, _bmm_chunk_fwd_kernel, _chunk_state_fwd_kernel, _state_passing_fwd_kernel, "
      "_chunk_scan_fwd_kernel and the 9 backward kernels", **TF32, stub=STUB)
def chunk_scan_combined(m, ctx):
    x, dt, A, B, C = [t.requires_grad_(True) for t in _ssm_inputs(ctx)]
    D = ctx.randn(2, grad=True)
    return with_grads(ctx, lambda x, dt, A, B, C, D: m.mamba_chunk_scan_combined(x, dt, A, B, C, 8, D=D),
                      lambda x, dt, A, B, C, D: m.ssd_chunk_scan_combined_ref(x, dt, A, B, C, 8, D=D),
                      [x, dt, A, B, C, D])
