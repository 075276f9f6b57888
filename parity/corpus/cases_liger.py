"""Liger-Kernel (linkedin): its autograd Functions (forward and backward kernels) against torch in float64."""
from __future__ import annotations

import math

from parity.corpus.case import case, with_grads

P = "liger-kernel"


def _rms(x, w, eps, offset=0.0):
    return x * (x.pow(2).mean(-1, keepdim=True) + eps).rsqrt() * (offset + w)


@case(P, "liger rms_norm fwd+bwd", "liger_kernel.ops.rms_norm", "_rms_norm_forward_kernel, _rms_norm_backward_kernel")
def rms_norm(m, ctx):
    x, w = ctx.randn(6, 96, grad=True), ctx.randn(96, grad=True)
    return with_grads(ctx, lambda x, w: m.LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False),
                      lambda x, w: _rms(x, w, 1e-6), [x, w])


@case(P, "liger rms_norm gemma offset", "liger_kernel.ops.rms_norm", "_rms_norm_forward_kernel, _rms_norm_backward_kernel")
def rms_norm_gemma(m, ctx):
    x, w = ctx.randn(5, 64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, w: m.LigerRMSNormFunction.apply(x, w, 1e-6, 1.0, "gemma", False),
                      lambda x, w: _rms(x, w, 1e-6, 1.0), [x, w])


@case(P, "liger layer_norm fwd+bwd", "liger_kernel.ops.layer_norm", "_layer_norm_forward_kernel, _layer_norm_backward_kernel")
def layer_norm(m, ctx):
    torch = ctx.torch
    x, w, b = ctx.randn(6, 80, grad=True), ctx.randn(80, grad=True), ctx.randn(80, grad=True)
    return with_grads(ctx, lambda x, w, b: m.LigerLayerNormFunction.apply(x, w, b, 1e-6),
                      lambda x, w, b: torch.nn.functional.layer_norm(x, (80,), w, b, 1e-6), [x, w, b])


@case(P, "liger fused_add_rms_norm", "liger_kernel.ops.fused_add_rms_norm", "_fused_add_rms_norm_forward_kernel, _fused_add_rms_norm_backward_kernel")
def fused_add_rms_norm(m, ctx):
    x, r, w = ctx.randn(4, 64, grad=True), ctx.randn(4, 64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, r, w: m.LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)[0],
                      lambda x, r, w: _rms(x + r, w, 1e-6), [x, r, w])


@case(P, "liger swiglu fwd+bwd", "liger_kernel.ops.swiglu", "_swiglu_forward_kernel, _swiglu_backward_kernel")
def swiglu(m, ctx):
    torch = ctx.torch
    a, b = ctx.randn(4, 100, grad=True), ctx.randn(4, 100, grad=True)
    return with_grads(ctx, lambda a, b: m.LigerSiLUMulFunction.apply(a, b),
                      lambda a, b: torch.nn.functional.silu(a) * b, [a, b])


@case(P, "liger geglu fwd+bwd", "liger_kernel.ops.geglu", "_geglu_tanh_forward_kernel, _geglu_tanh_backward_kernel")
def geglu(m, ctx):
    torch = ctx.torch
    a, b = ctx.randn(4, 100, grad=True), ctx.randn(4, 100, grad=True)
    return with_grads(ctx, lambda a, b: m.LigerGELUMulFunction.apply(a, b),
                      lambda a, b: torch.nn.functional.gelu(a, approximate="tanh") * b, [a, b])


@case(P, "liger cross_entropy fwd+bwd", "liger_kernel.ops.cross_entropy", "liger_cross_entropy_kernel")
def cross_entropy(m, ctx):
    torch = ctx.torch
    x, t = ctx.randn(8, 200, grad=True), ctx.randint(200, 8)
    t[2] = -100
    return with_grads(ctx, lambda x: m.LigerCrossEntropyFunction.apply(x, t, None, -100, 0.0, 0.1)[0],
                      lambda x: torch.nn.functional.cross_entropy(x, t.cpu(), ignore_index=-100,
                                                                  label_smoothing=0.1), [x],
                      dy=ctx.torch.tensor(1.0))


@case(P, "liger rope fwd+bwd", "liger_kernel.ops.rope", "_triton_rope")
def rope(m, ctx):
    torch = ctx.torch
    q, k = ctx.randn(2, 4, 8, 16, grad=True), ctx.randn(2, 2, 8, 16, grad=True)
    inv = 1.0 / (10000 ** (torch.arange(0, 16, 2, dtype=torch.float64) / 16))
    f = torch.outer(torch.arange(8, dtype=torch.float64), inv)
    emb = torch.cat([f, f], -1)[None]
    cos, sin = emb.cos().float().to(ctx.device), emb.sin().float().to(ctx.device)

    def rot(x):
        return torch.cat([-x[..., 8:], x[..., :8]], -1)

    def ref(q, k):
        c, s = cos.cpu().double()[:, None], sin.cpu().double()[:, None]
        return torch.cat([(q * c + rot(q) * s).flatten(), (k * c + rot(k) * s).flatten()])

    return with_grads(ctx, lambda q, k: torch.cat([t.flatten() for t in m.LigerRopeFunction.apply(q, k, cos, sin)]),
                      ref, [q, k])


@case(P, "liger softmax fwd+bwd", "liger_kernel.ops.softmax", "_softmax_single_block_forward_kernel, _softmax_single_block_backward_kernel")
def softmax(m, ctx):
    x = ctx.randn(6, 120, grad=True)
    return with_grads(ctx, lambda x: m.LigerSoftmaxFunction.apply(x), lambda x: x.softmax(-1), [x])


@case(P, "liger kl_div fwd+bwd", "liger_kernel.ops.kl_div", "_kldiv_kernel_forward, _kldiv_kernel_backward")
def kl_div(m, ctx):
    torch = ctx.torch
    p = ctx.randn(4, 50, grad=True)
    q = ctx.randn(4, 50).softmax(-1)
    return with_grads(ctx, lambda p: m.LigerKLDivLossFunction.apply(p.log_softmax(-1), q, "batchmean"),
                      lambda p: torch.nn.functional.kl_div(p.log_softmax(-1), q.cpu().double(), reduction="batchmean"),
                      [p], dy=torch.tensor(1.0))


@case(P, "liger jsd fwd+bwd", "liger_kernel.ops.jsd", "_jsd_kernel")
def jsd(m, ctx):
    torch = ctx.torch
    x = ctx.randn(4, 60, grad=True)
    t = ctx.randn(4, 60).log_softmax(-1)

    def ref(x):
        p, q = x.log_softmax(-1), t.cpu().double()
        mix = torch.logsumexp(torch.stack([p, q]), 0) - math.log(2)
        return 0.5 * ((p.exp() * (p - mix)).sum() + (q.exp() * (q - mix)).sum()) / 4

    return with_grads(ctx, lambda x: m.LigerJSDFunction.apply(x.log_softmax(-1), t), ref, [x], dy=torch.tensor(1.0))


@case(P, "liger dyt fwd+bwd", "liger_kernel.ops.dyt", "_dyt_fwd_kernel, _dyt_bwd_kernel")
def dyt(m, ctx):
    torch = ctx.torch
    x, a = ctx.randn(6, 64, grad=True), torch.tensor([0.7], device=ctx.device, requires_grad=True)
    g, b = ctx.randn(64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, a, g, b: m.LigerDyTFunction.apply(x, a, g, b),
                      lambda x, a, g, b: torch.tanh(a * x) * g + b, [x, a, g, b])


@case(P, "liger group_norm fwd+bwd", "liger_kernel.ops.group_norm", "_group_norm_forward_kernel, _group_norm_backward_kernel")
def group_norm(m, ctx):
    torch = ctx.torch
    x, w, b = ctx.randn(2, 8, 12, grad=True), ctx.randn(8, grad=True), ctx.randn(8, grad=True)
    return with_grads(ctx, lambda x, w, b: m.LigerGroupNormFunction.apply(x, w, b, 8, 4, 1e-6),
                      lambda x, w, b: torch.nn.functional.group_norm(x, 4, w, b, 1e-6), [x, w, b])


@case(P, "liger sparsemax fwd+bwd", "liger_kernel.ops.sparsemax", "_sparsemax_forward_kernel, _sparsemax_backward_kernel")
def sparsemax(m, ctx):
    torch = ctx.torch
    x = ctx.randn(4, 40, grad=True)

    def ref(x):
        z, _ = x.sort(-1, descending=True)
        k = torch.arange(1, 41, dtype=x.dtype)
        cs = z.cumsum(-1)
        support = (1 + k * z) > cs
        kz = support.sum(-1, keepdim=True)
        tau = (cs.gather(-1, kz - 1) - 1) / kz
        return (x - tau).clamp(min=0)

    return with_grads(ctx, lambda x: m.LigerSparsemaxFunction.apply(x, -1), ref, [x])


@case(P, "liger poly_norm fwd+bwd", "liger_kernel.ops.poly_norm", "_poly_norm_forward_kernel, _poly_norm_backward_kernel")
def poly_norm(m, ctx):
    torch = ctx.torch
    x, w = ctx.randn(4, 64, grad=True), ctx.randn(3, grad=True)
    b = torch.tensor(0.3, device=ctx.device, requires_grad=True)

    def norm(v):
        return v * (v.pow(2).mean(-1, keepdim=True) + 1e-6).rsqrt()

    return with_grads(ctx, lambda x, w, b: m.LigerPolyNormFunction.apply(x, w, b, 1e-6, False),
                      lambda x, w, b: w[0] * norm(x ** 3) + w[1] * norm(x ** 2) + w[2] * norm(x) + b, [x, w, b])


@case(P, "liger tvd fwd+bwd", "liger_kernel.ops.tvd", "_tv_distance_kernel")
def tvd(m, ctx):
    torch = ctx.torch
    p = ctx.randn(4, 30, grad=True)
    q = ctx.randn(4, 30).softmax(-1)
    return with_grads(ctx, lambda p: m.LigerTVDLossFunction.apply(p.softmax(-1), q, None, "batchmean"),
                      lambda p: 0.5 * (p.softmax(-1) - q.cpu().double()).abs().sum() / 4, [p], dy=torch.tensor(1.0))


@case(P, "liger fused_linear_cross_entropy fwd+bwd", "liger_kernel.ops.fused_linear_cross_entropy",
      "liger_cross_entropy_kernel, element_mul_kernel (logits by torch's matmul, chunk by chunk)")
def fused_linear_cross_entropy(m, ctx):
    torch = ctx.torch
    x, w, b = ctx.randn(8, 32, grad=True), ctx.randn(100, 32, scale=0.2, grad=True), ctx.randn(100, grad=True)
    t = ctx.randint(100, 8)
    return with_grads(ctx, lambda x, w, b: m.LigerFusedLinearCrossEntropyFunction.apply(x, w, t, b)[0],
                      lambda x, w, b: torch.nn.functional.cross_entropy(x @ w.T + b, t.cpu()), [x, w, b],
                      dy=torch.tensor(1.0))


@case(P, "liger relu_squared fwd+bwd", "liger_kernel.ops.relu_squared", "_relu_squared_forward_kernel, _relu_squared_backward_kernel")
def relu_squared(m, ctx):
    x = ctx.randn(4, 70, grad=True)
    return with_grads(ctx, lambda x: m.LigerReLUSquaredFunction.apply(x), lambda x: x.clamp(min=0) ** 2, [x])
