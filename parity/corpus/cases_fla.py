"""flash-linear-attention (fla-core): norms, activations, chunked scans and a linear-attention layer against
torch formulas in float64 (the references its tests use: `*_ref`, naive recurrences)."""
from __future__ import annotations

from parity.corpus.case import TF32, case, with_grads

P = "fla"


@case(P, "fla layer_norm residual fwd+bwd", "fla.modules.norm.layernorm", "layer_norm_fwd_kernel, layer_norm_bwd_kernel")
def layer_norm(m, ctx):
    x, r = ctx.randn(2, 8, 64, grad=True), ctx.randn(2, 8, 64, grad=True)
    w, b = ctx.randn(64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, r, w, b: m.layer_norm(x, w, b, residual=r, eps=1e-6),
                      lambda x, r, w, b: m.layer_norm_ref(x, w, b, residual=r, eps=1e-6), [x, r, w, b])


@case(P, "fla rms_norm fwd+bwd", "fla.modules.norm.layernorm", "layer_norm_fwd_kernel, layer_norm_bwd_kernel")
def rms_norm(m, ctx):
    x, w = ctx.randn(2, 8, 96, grad=True), ctx.randn(96, grad=True)
    return with_grads(ctx, lambda x, w: m.rms_norm(x, w, None, eps=1e-6),
                      lambda x, w: m.rms_norm_ref(x, w, None, eps=1e-6), [x, w])


@case(P, "fla group_norm fwd+bwd", "fla.modules.norm.layernorm", "layer_norm_fwd_kernel, layer_norm_bwd_kernel")
def group_norm(m, ctx):
    x, w, b = ctx.randn(2, 8, 64, grad=True), ctx.randn(64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, w, b: m.group_norm(x, w, b, eps=1e-6, num_groups=4),
                      lambda x, w, b: m.group_norm_ref(x, w, b, eps=1e-6, num_groups=4), [x, w, b])


@case(P, "fla l2norm fwd+bwd", "fla.modules.norm.l2norm", "l2norm_fwd_kernel, l2norm_bwd_kernel")
def l2norm(m, ctx):
    torch = ctx.torch
    x = ctx.randn(2, 16, 64, grad=True)
    return with_grads(ctx, lambda x: m.l2norm(x), lambda x: x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-6), [x])


@case(P, "fla rms_norm_gated fwd+bwd", "fla.modules.norm.fused_norm_gate", "layer_norm_gated_fwd_kernel, layer_norm_gated_bwd_kernel")
def rms_norm_gated(m, ctx):
    torch = ctx.torch
    x, g, w = ctx.randn(2, 8, 64, grad=True), ctx.randn(2, 8, 64, grad=True), ctx.randn(64, grad=True)
    return with_grads(ctx, lambda x, g, w: m.rms_norm_gated(x, g, w, None, eps=1e-6),
                      lambda x, g, w: x * (x.pow(2).mean(-1, keepdim=True) + 1e-6).rsqrt() * w
                      * torch.nn.functional.silu(g), [x, g, w])


@case(P, "fla swiglu fwd+bwd", "fla.modules.activations", "swiglu_fwd_kernel, swiglu_fwdbwd_kernel")
def swiglu(m, ctx):
    torch = ctx.torch
    x, y = ctx.randn(4, 8, 64, grad=True), ctx.randn(4, 8, 64, grad=True)
    return with_grads(ctx, lambda x, y: m.swiglu(x, y), lambda x, y: torch.nn.functional.silu(x) * y, [x, y])


@case(P, "fla logsigmoid fwd+bwd", "fla.modules.activations", "logsigmoid_fwd_kernel, logsigmoid_bwd_kernel")
def logsigmoid(m, ctx):
    torch = ctx.torch
    x = ctx.randn(4, 8, 64, scale=3.0, grad=True)
    return with_grads(ctx, lambda x: m.logsigmoid(x, 2.0),
                      lambda x: torch.nn.functional.logsigmoid(x) / 2.0, [x])


@case(P, "fla chunk_local_cumsum", "fla.ops.utils.cumsum", "chunk_local_cumsum_scalar_kernel, chunk_local_cumsum_vector_kernel")
def chunk_local_cumsum(m, ctx):
    g, gv = ctx.randn(2, 40, 3), ctx.randn(2, 40, 3, 16)

    def ref(t):
        t = ctx.f64(t)
        return t.reshape(2, 5, 8, *t.shape[2:]).cumsum(2).reshape(t.shape)

    return [("scalar", m.chunk_local_cumsum(g, 8), ref(g)), ("vector", m.chunk_local_cumsum(gv, 8), ref(gv)),
            ("reverse", m.chunk_local_cumsum(g, 8, reverse=True),
             ref(g.flip(1).reshape(2, 5, 8, 3).flip(1).reshape(2, 40, 3)).reshape(2, 5, 8, 3).flip(1)
             .reshape(2, 40, 3).flip(1))]


@case(P, "fla logsumexp", "fla.ops.utils.logsumexp", "logsumexp_fwd_kernel")
def logsumexp(m, ctx):
    x = ctx.randn(6, 200, scale=4.0)
    return [("lse", m.logsumexp_fwd(x), ctx.f64(x).logsumexp(-1))]


@case(P, "fla solve_tril 64", "fla.ops.utils.solve_tril", "solve_tril_16x16_kernel, merge_16x16_to_64x64_inverse_kernel",
      atol=1e-5, rtol=1e-3)
def solve_tril(m, ctx):
    torch = ctx.torch
    M = (ctx.randn(1, 2, 2, 64, 64) * 0.1).tril(-1)          # [batch, chunk, head, row, column]
    A = M.permute(0, 1, 3, 2, 4).reshape(1, 128, 2, 64)        # fla's layout: [batch, time, head, column]
    inv = torch.linalg.inv(torch.eye(64, dtype=torch.float64) + ctx.f64(M))
    return [("inverse", m.solve_tril(A), inv.permute(0, 1, 3, 2, 4).reshape(1, 128, 2, 64))]


@case(P, "fla mean_pooling fwd+bwd", "fla.ops.utils.pooling", "mean_pooling_fwd_kernel, mean_pooling_bwd_kernel")
def mean_pooling(m, ctx):
    x = ctx.randn(2, 40, 2, 16, grad=True)
    return with_grads(ctx, lambda x: m.mean_pooling(x, 16),
                      lambda x: ctx.torch.stack([x[:, i:i + 16].mean(1) for i in range(0, 40, 16)], 1), [x])


@case(P, "fla chunk_simple_gla fwd+bwd", "fla.ops.simple_gla.chunk",
      "chunk_local_cumsum, chunk_fwd_kernel_h, chunk_fwd_kernel_o and the backward kernels", **TF32)
def chunk_simple_gla(m, ctx):
    torch = ctx.torch
    q, k, v = ctx.randn(1, 40, 2, 16, grad=True), ctx.randn(1, 40, 2, 16, grad=True), ctx.randn(1, 40, 2, 16, grad=True)
    g = torch.nn.functional.logsigmoid(ctx.randn(1, 40, 2)).requires_grad_(True)

    def ref(q, k, v, g):
        S, outs = torch.zeros(2, 16, 16, dtype=torch.float64), []
        for t in range(40):
            S = S * g[0, t].exp()[:, None, None] + k[0, t][:, :, None] * v[0, t][:, None, :]
            outs.append(torch.einsum("hk,hkv->hv", q[0, t] * 16 ** -0.5, S))
        return torch.stack(outs)[None]

    return with_grads(ctx, lambda q, k, v, g: m.chunk_simple_gla(q, k, v, g)[0], ref, [q, k, v, g])


def _naive(name):
    """A reference of fla's own (`fla/ops/<op>/naive.py`; these compute in float32, as fla's tests do)."""
    import importlib
    module, function = name.rsplit(".", 1)
    return getattr(importlib.import_module(module), function)


def _qkv(ctx, T=40, H=2, K=16, V=16):
    return ctx.randn(1, T, H, K, grad=True), ctx.randn(1, T, H, K, grad=True), ctx.randn(1, T, H, V, grad=True)


@case(P, "fla fused_recurrent_simple_gla fwd+bwd", "fla.ops.simple_gla.fused_recurrent",
      "fused_recurrent_fwd_kernel, fused_recurrent_bwd_kernel")
def fused_recurrent_simple_gla(m, ctx):
    torch = ctx.torch
    q, k, v = _qkv(ctx)
    g = torch.nn.functional.logsigmoid(ctx.randn(1, 40, 2)).requires_grad_(True)
    naive = _naive("fla.ops.gla.naive.naive_recurrent_gla")
    return with_grads(ctx, lambda q, k, v, g: m.fused_recurrent_simple_gla(q, k, v, g)[0],
                      lambda q, k, v, g: naive(q, k, v, g[..., None].expand(q.shape))[0].double(), [q, k, v, g])


@case(P, "fla chunk_gla fwd+bwd", "fla.ops.gla.chunk", "chunk_gla_fwd_A_kernel_intra_sub_*, chunk_gla_fwd_kernel_o, "
      "chunk_fwd_kernel_h and the backward kernels", **TF32)
def chunk_gla(m, ctx):
    torch = ctx.torch
    q, k, v = _qkv(ctx)
    gk = torch.nn.functional.logsigmoid(ctx.randn(1, 40, 2, 16)).requires_grad_(True)
    naive = _naive("fla.ops.gla.naive.naive_recurrent_gla")
    return with_grads(ctx, lambda q, k, v, g: m.chunk_gla(q, k, v, g)[0],
                      lambda q, k, v, g: naive(q, k, v, g)[0].double(), [q, k, v, gk])


@case(P, "fla chunk_delta_rule bf16 fwd+bwd", "fla.ops.delta_rule.chunk", "solve_tril, recompute_w_u_fwd_kernel, "
      "chunk_gated_delta_rule_fwd_kernel_h, chunk_fwd_kernel_o and the backward kernels", atol=2e-2, rtol=2e-2)
def chunk_delta_rule(m, ctx):
    """fla refuses float32 here; bf16 inputs, outputs and gradients (8 mantissa bits, states rounded too)."""
    torch = ctx.torch
    bf16 = torch.bfloat16
    q, k, v = (t.detach().to(bf16).requires_grad_(True) for t in _qkv(ctx))
    k = torch.nn.functional.normalize(k.detach().float(), dim=-1).to(bf16).requires_grad_(True)
    beta = ctx.rand(1, 40, 2).sigmoid().to(bf16).requires_grad_(True)
    naive = _naive("fla.ops.delta_rule.naive.delta_rule_recurrence")

    def ref(q, k, v, beta):
        o, _ = naive(*(t.transpose(1, 2) for t in (q, k, v, beta)))
        return o.transpose(1, 2).double()

    return with_grads(ctx, lambda q, k, v, beta: m.chunk_delta_rule(q, k, v, beta)[0], ref, [q, k, v, beta])


@case(P, "fla chunk_hgrn fwd+bwd", "fla.ops.hgrn.chunk", "chunk_hgrn_fwd_kernel_h, chunk_hgrn_fwd_kernel_o, "
      "chunk_hgrn_bwd_kernel_h, chunk_hgrn_bwd_kernel_o")
def chunk_hgrn(m, ctx):
    torch = ctx.torch
    x = ctx.randn(2, 80, 32, grad=True)
    g = torch.nn.functional.logsigmoid(ctx.randn(2, 80, 32)).requires_grad_(True)
    naive = _naive("fla.ops.hgrn.naive.naive_recurrent_hgrn")
    return with_grads(ctx, lambda x, g: m.chunk_hgrn(x, g)[0], lambda x, g: naive(x, g)[0].double(), [x, g])


@case(P, "fla fused_recurrent_hgrn fwd+bwd", "fla.ops.hgrn.fused_recurrent", "fused_recurrent_hgrn_fwd_kernel, "
      "fused_recurrent_hgrn_bwd_kernel")
def fused_recurrent_hgrn(m, ctx):
    torch = ctx.torch
    x = ctx.randn(2, 40, 32, grad=True)
    g = torch.nn.functional.logsigmoid(ctx.randn(2, 40, 32)).requires_grad_(True)
    naive = _naive("fla.ops.hgrn.naive.naive_recurrent_hgrn")
    return with_grads(ctx, lambda x, g: m.fused_recurrent_hgrn(x, g)[0], lambda x, g: naive(x, g)[0].double(), [x, g])
