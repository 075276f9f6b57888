"""Unsloth: the `@triton.jit` kernels of unsloth/kernels/ launched the way its host wrappers launch them (their
modules import transformers, bitsandbytes and unsloth_zoo, so only the kernels are loaded:
`harness.jit_functions`), against the formulas their docstrings give, in float64."""
from __future__ import annotations

import math

from parity.corpus.case import case

P = "unsloth"
K = "unsloth/kernels/"


def _with_utils_names(m):
    """The names unsloth/kernels/utils.py gives geglu.py on Triton >= 3.0 (`triton_tanh = libdevice.tanh`)."""
    from triton.language.extra import libdevice
    m.triton_tanh = libdevice.tanh
    return m


def _elementwise(ctx, m, kernel, *tensors, block=128):
    n = tensors[0].numel()
    getattr(m, kernel)[(math.ceil(n / block),)](*tensors, n, BLOCK_SIZE=block, LONG_INDEXING=0)


def _silu_mul(e, g):
    return e * e.sigmoid() * g


def _gelu(e, approx):
    if approx:
        return 0.5 * e * (1 + (math.sqrt(2 / math.pi) * (e + 0.044715 * e ** 3)).tanh())
    return 0.5 * e * (1 + (e / math.sqrt(2)).erf())


@case(P, "unsloth swiglu fwd", K + "swiglu.py", "_fg_kernel", jit_file=True)
def swiglu_fwd(m, ctx):
    e, g = ctx.randn(3, 100), ctx.randn(3, 100)
    h = ctx.torch.empty_like(e)
    _elementwise(ctx, m, "_fg_kernel", e, g, h)
    return [("h", h, _silu_mul(ctx.f64(e), ctx.f64(g)))]


def _glu_backward(ctx, m, kernel, act):
    """The backward kernels overwrite their inputs: DW <- h, e <- DW * f, g <- de (their docstrings)."""
    torch = ctx.torch
    dw, e, g = ctx.randn(3, 100), ctx.randn(3, 100), ctx.randn(3, 100)
    e64, g64 = ctx.f64(e).requires_grad_(True), ctx.f64(g)
    f = act(e64)
    (de,) = torch.autograd.grad((f * g64 * ctx.f64(dw)).sum(), [e64])
    want = [("h", f * g64), ("df", ctx.f64(dw) * f), ("de", de)]
    _elementwise(ctx, m, kernel, dw, e, g)
    return [(label, got, ref.detach()) for (label, ref), got in zip(want, (dw, e, g))]


@case(P, "unsloth swiglu bwd", K + "swiglu.py", "_DWf_DW_dfg_kernel", jit_file=True)
def swiglu_bwd(m, ctx):
    return _glu_backward(ctx, m, "_DWf_DW_dfg_kernel", lambda e: e * e.sigmoid())


@case(P, "unsloth geglu exact fwd", K + "geglu.py", "_exact_forward_kernel", jit_file=True)
def geglu_exact_fwd(m, ctx):
    e, g = ctx.randn(3, 100), ctx.randn(3, 100)
    h = ctx.torch.empty_like(e)
    _elementwise(ctx, m, "_exact_forward_kernel", e, g, h)
    return [("h", h, _gelu(ctx.f64(e), False) * ctx.f64(g))]


@case(P, "unsloth geglu exact bwd", K + "geglu.py", "_exact_backward_kernel", jit_file=True)
def geglu_exact_bwd(m, ctx):
    return _glu_backward(ctx, m, "_exact_backward_kernel", lambda e: _gelu(e, False))


@case(P, "unsloth geglu approx fwd", K + "geglu.py", "_approx_forward_kernel", jit_file=True)
def geglu_approx_fwd(m, ctx):
    e, g = ctx.randn(3, 100), ctx.randn(3, 100)
    h = ctx.torch.empty_like(e)
    _elementwise(ctx, _with_utils_names(m), "_approx_forward_kernel", e, g, h)
    return [("h", h, _gelu(ctx.f64(e), True) * ctx.f64(g))]


@case(P, "unsloth geglu approx bwd", K + "geglu.py", "_approx_backward_kernel", jit_file=True)
def geglu_approx_bwd(m, ctx):
    return _glu_backward(ctx, _with_utils_names(m), "_approx_backward_kernel", lambda e: _gelu(e, True))


def _rms_rows(ctx, m, kernel, gemma):
    torch = ctx.torch
    X, W = ctx.randn(5, 96), ctx.randn(96)
    Y, r = torch.empty_like(X), torch.empty(5, device=ctx.device)
    getattr(m, kernel)[(5,)](Y, X, W, r, Y.stride(0), X.stride(0), W.stride(0), r.stride(0), 96, 1e-6,
                             LONG_INDEXING=0, BLOCK_SIZE=128)
    x = ctx.f64(X)
    inv = (x.pow(2).mean(-1) + 1e-6).rsqrt()
    return [("Y", Y, x * inv[:, None] * ((1 + ctx.f64(W)) if gemma else ctx.f64(W))), ("rstd", r, inv)]


@case(P, "unsloth rms_layernorm fwd", K + "rms_layernorm.py", "_rms_layernorm_forward", jit_file=True)
def rms_layernorm(m, ctx):
    return _rms_rows(ctx, m, "_rms_layernorm_forward", gemma=False)


@case(P, "unsloth gemma rms_layernorm fwd", K + "rms_layernorm.py", "_gemma_rms_layernorm_forward", jit_file=True)
def gemma_rms_layernorm(m, ctx):
    return _rms_rows(ctx, m, "_gemma_rms_layernorm_forward", gemma=True)


@case(P, "unsloth layernorm fwd", K + "layernorm.py", "layernorm_forward", jit_file=True)
def layernorm(m, ctx):
    torch = ctx.torch
    X, W, b = ctx.randn(5, 80), ctx.randn(80), ctx.randn(80)
    Y, r, mu = torch.empty_like(X), torch.empty(5, device=ctx.device), torch.empty(5, device=ctx.device)
    m.layernorm_forward[(5,)](Y, X, W, b, r, mu, Y.stride(0), X.stride(0), 80, 1e-6, LONG_INDEXING=0,
                              BLOCK_SIZE=128)
    x = ctx.f64(X)
    want = torch.nn.functional.layer_norm(x, (80,), ctx.f64(W), ctx.f64(b), 1e-6)
    return [("Y", Y, want), ("mean", mu, x.mean(-1)), ("rstd", r, (x.var(-1, unbiased=False) + 1e-6).rsqrt())]
