"""Tiled matrix multiplication C = act(A @ B): the kernel every GPU course builds up to.

What it teaches:
* **Tiling.** Each program computes one BLOCK_M x BLOCK_N tile of C. It walks the K dimension in steps of
  BLOCK_K, loading a BLOCK_M x BLOCK_K tile of A and a BLOCK_K x BLOCK_N tile of B and adding their product
  (`tl.dot`, the tensor cores) to an fp32 accumulator that lives in registers. A is re-read once per column
  of tiles and B once per row of tiles: the kernel loads exactly
  M*K*cdiv(N, BLOCK_N) + K*N*cdiv(M, BLOCK_M) elements (`traffic()` gives this number; the tests check it
  against minitriton's counters). Bigger tiles mean fewer re-reads, but more registers and shared memory.
* **GROUP_M ordering.** Program ids are mapped to tiles in bands of GROUP_M tile rows, column by column
  inside a band, so programs that run at the same time share strips of A and B and find them in the L2
  cache instead of re-reading them from HBM.
* **Masks for any shape.** Rows past M, columns past N and the K tail are masked; masked lanes load 0,
  which adds nothing to the dot product. When the sizes are multiples of the blocks (EVEN_K, EVEN_MN) the
  masks are compiled out.
* **Precision.** fp16/bf16 inputs multiply exactly and accumulate in fp32; fp32 inputs use the GPU's default
  TF32 dot (each input keeps 10 mantissa bits). The optional activation is applied to the fp32 accumulator,
  fused into the epilogue, and the result is cast to the input dtype once, at the store.
* **Autotuning.** `@triton.autotune` times every config on a GPU (and keeps the best per (M, N, K, dtypes));
  minitriton takes the first config, which is the one that wins for large square bf16 products on an H200.

Run on a CUDA GPU with real Triton, `python -m kernels.matmul` checks the kernel against torch and prints
TFLOP/s next to cuBLAS.

Speed on a GPU: the matmul rows of the benchmark of record, `parity/results/cuda-bench-2026-11-30-rmsnorm-bwd.md`,
next to cuBLAS and the lesson's kernel, with the config the autotuner chose (`docs/findings.md` §5).
"""
import numpy as np
import triton
import triton.language as tl

from . import _host

ACTIVATIONS = ("", "relu", "leaky_relu", "gelu")
LEAKY_SLOPE = 0.01

# Smem bytes one program may use: an H200/H100 allows 227 KiB per block, an Ada card (sm_89) 99 KiB.
_SMEM_HOPPER = 232448


def _config(bm, bn, bk, warps, stages, group_m=8):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group_m},
                         num_warps=warps, num_stages=stages)


CONFIGS = [
    # Hopper (H100/H200): large tiles for wgmma, 8 warps (two warpgroups), 3-4 stage pipelines.
    _config(128, 256, 64, 8, 4),  # first: the best for large square bf16 products on an H200 (measured)
    _config(128, 256, 64, 8, 3),
    _config(256, 128, 64, 8, 3),
    _config(256, 128, 64, 8, 4),
    _config(128, 128, 64, 8, 4),
    _config(128, 128, 64, 4, 4),
    # Ada (the lesson's card, sm_89, 99 KiB of shared memory): BLOCK_K = 32, 4 warps.
    _config(128, 128, 32, 4, 4),
    _config(128, 64, 32, 4, 4),
    _config(64, 128, 32, 4, 4),
    _config(64, 64, 32, 4, 3),
    # small problems (and fp32 inputs on either card)
    _config(64, 64, 64, 4, 3),
    _config(32, 32, 32, 4, 3),
]

_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def _smem_limit(a):
    if _host.is_torch(a) and a.device.type == "cuda":
        import torch
        props = torch.cuda.get_device_properties(a.device)
        return int(getattr(props, "shared_memory_per_block_optin", _SMEM_HOPPER))
    return _SMEM_HOPPER


def _prune_configs(configs, named_args, **kwargs):
    """Drop configs whose pipelined A/B tiles would not fit in shared memory for these inputs."""
    a = named_args["a_ptr"]
    size = _ITEMSIZE.get(_host.dtype_name(a), 4)
    limit = _smem_limit(a)
    kept = [c for c in configs
            if c.num_stages * (c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * c.kwargs["BLOCK_K"] * size <= limit]
    return kept or configs[-1:]


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  ACTIVATION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, EVEN_MN: tl.constexpr):
    # Which tile of C: programs walk bands of GROUP_M tile rows, down each column of the band, then right.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_band = GROUP_M * tiles_n
    band = pid // per_band
    first_m = band * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)  # the last band may be shorter
    inside = pid - band * per_band
    tile_m = first_m + inside % rows
    tile_n = inside // rows

    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    row_ok = rm < M
    col_ok = rn < N
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K and EVEN_MN:  # no partial tiles at all: plain loads
            a = tl.load(a_tile)
            b = tl.load(b_tile)
        elif EVEN_K:
            a = tl.load(a_tile, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_tile, mask=col_ok[None, :], other=0.0)
        else:
            k_left = K - kb * BLOCK_K
            a = tl.load(a_tile, mask=row_ok[:, None] & (rk[None, :] < k_left), other=0.0)
            b = tl.load(b_tile, mask=(rk[:, None] < k_left) & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    # Epilogue: the activation runs on the fp32 accumulator, in registers, before the one cast.
    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    elif ACTIVATION == "leaky_relu":
        acc = tl.where(acc >= 0.0, acc, acc * 0.01)
    elif ACTIVATION == "gelu":
        # tanh approximation: 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
        u = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = acc * tl.sigmoid(2.0 * u)
    c_tile = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


# EVEN_K / EVEN_MN: the sizes are multiples of the blocks, so the K tail / the M and N edges need no masks
matmul_kernel_even = triton.heuristics({
    "EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0,
    "EVEN_MN": lambda args: args["M"] % args["BLOCK_M"] == 0 and args["N"] % args["BLOCK_N"] == 0,
})(matmul_kernel)
matmul_kernel_tuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K"],
                                      prune_configs_by={"early_config_prune": _prune_configs})(matmul_kernel_even)


_CHOSEN = {}  # (M, N, K, dtype) -> the launch options the autotuner chose
FAST_LAUNCH = True   # False: no kept plans, every call without a config goes through the autotuner
_PLANS = {}   # (type, shape, dtype, strides of a and b, activation, config) -> launch(a, b), torch tensors only
_TORCH = _host.TORCH_TYPES


def _config_key(config):
    """A config as a key: None, or its contents (a dict's items; a triton.Config's kwargs, warps, stages)."""
    if config is None:
        return None
    if isinstance(config, triton.Config):
        return ("Config", tuple(config.kwargs.items()), config.num_warps, config.num_stages)
    return ("dict", tuple(config.items()))


def matmul(a, b, activation=None, config=None):
    """C = activation(A @ B) for 2-D A (M, K) and B (K, N) of one dtype (float32, float16 or bfloat16).

    NumPy arrays, minitriton.Buffer (bf16) or torch tensors; C has A's kind and dtype. `activation`: None,
    "relu", "leaky_relu" (slope 0.01) or "gelu" (tanh approximation). `config` (a triton.Config or a dict
    with BLOCK_M, BLOCK_N, BLOCK_K and optionally GROUP_M, num_warps, num_stages) skips the autotuner.
    """
    if FAST_LAUNCH and type(a) in _TORCH and type(b) in _TORCH:
        try:
            key = (type(a), a.shape, a.dtype, a.stride(), type(b), b.shape, b.dtype, b.stride(), activation,
                   None if config is None else _config_key(config))
            plan = _PLANS.get(key)
        except Exception:   # a config or an activation that cannot be a key: no plan kept (_plan checks them)
            key = plan = None
        if plan is None:
            plan, keep = _plan(a, b, activation, config)
            if keep and key is not None:
                _host.remember(_PLANS, key, plan)
        return plan(a, b)
    return _plan(a, b, activation, config)[0](a, b)


def _plan(a, b, activation, config):
    """Check the arguments; (launch(a, b) -> C for arrays like these, whether it may be kept). The first call
    for a size without a config gives a launch through the autotuner, not kept: later ones launch its choice
    directly (the autotuner's and the heuristics' per-call bookkeeping costs tens of microseconds of Python,
    more than a 1024^3 product takes on an H200)."""
    act = activation or ""
    if act not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose one of None, 'relu', 'leaky_relu', 'gelu'")
    if len(_host.shape(a)) != 2 or len(_host.shape(b)) != 2:
        raise ValueError(f"matmul takes 2-D arrays, got shapes {_host.shape(a)} and {_host.shape(b)}")
    (M, K), (K2, N) = _host.shape(a), _host.shape(b)
    if K != K2:
        raise ValueError(f"inner dimensions differ: A is {M}x{K}, B is {K2}x{N}")
    dtype = _host.dtype_name(a)
    if dtype != _host.dtype_name(b):
        raise TypeError(f"A and B must have one dtype, got {dtype} and {_host.dtype_name(b)}")
    if dtype not in _ITEMSIZE:
        raise TypeError(f"matmul supports float32, float16 and bfloat16, got {dtype}")
    alloc = _host.allocator((M, N), a)                # C-contiguous: C's strides are (N, 1)
    if M == 0 or N == 0:
        return (lambda a_, b_: alloc(a_)), True
    args = (M, N, K, _host.stride(a, 0), _host.stride(a, 1), _host.stride(b, 0), _host.stride(b, 1), N, 1)
    if config is None:
        key = (M, N, K, dtype)
        meta = _CHOSEN.get(key) if FAST_LAUNCH else None
        if meta is None:
            def grid(meta):
                return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

            def tune(a_, b_):
                c = alloc(a_)
                matmul_kernel_tuned[grid](a_, b_, c, *args, ACTIVATION=act)
                best = matmul_kernel_tuned.best_config
                _CHOSEN[key] = dict(best.kwargs, num_warps=best.num_warps, num_stages=best.num_stages)
                return c
            return tune, False
    elif isinstance(config, triton.Config):
        meta = dict(config.kwargs, num_warps=config.num_warps, num_stages=config.num_stages)
    else:
        meta = dict(config)
    meta = {"GROUP_M": 8, **meta}
    even_k = K % meta["BLOCK_K"] == 0
    even_mn = M % meta["BLOCK_M"] == 0 and N % meta["BLOCK_N"] == 0
    run = _host.launcher(matmul_kernel, (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),),
                         ACTIVATION=act, EVEN_K=even_k, EVEN_MN=even_mn, **meta)

    def launch(a_, b_):
        c = alloc(a_)
        run(a_, b_, c, *args)
        return c
    return launch, True


def launch_config(M: int, N: int, K: int, dtype: str = "bfloat16"):
    """What `matmul` launches, without a config, for an (M, K) x (K, N) product of `dtype`: text such as
    "128x256x64 w8 s3" (BLOCK_M x BLOCK_N x BLOCK_K, warps, stages), or None while the autotuner has not
    chosen (it does on the first call for that size)."""
    meta = _CHOSEN.get((int(M), int(N), int(K), dtype))
    if meta is None:
        return None
    return f"{meta['BLOCK_M']}x{meta['BLOCK_N']}x{meta['BLOCK_K']} w{meta['num_warps']} s{meta['num_stages']}"


def _tf32(x):
    """fp32 values with the low 13 mantissa bits cleared: what the tensor cores' TF32 mode multiplies."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


def activate(x, activation=None):
    """The activations in float64 NumPy (the reference for the fused epilogue)."""
    if not activation:
        return x
    if activation == "relu":
        return np.maximum(x, 0.0)
    if activation == "leaky_relu":
        return np.where(x >= 0.0, x, LEAKY_SLOPE * x)
    if activation == "gelu":
        return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    raise ValueError(f"unknown activation {activation!r}")


def reference_matmul(a, b, activation=None, tf32=False):
    """activation(A @ B) in float64 NumPy. `tf32=True` first truncates fp32 inputs as the GPU's default dot does."""
    a64, b64 = _host.to_float64(a), _host.to_float64(b)
    if tf32:
        a64, b64 = _tf32(a64).astype("float64"), _tf32(b64).astype("float64")
    return activate(a64 @ b64, activation)


def traffic(M, N, K, dtype="bfloat16", block_m=None, block_n=None):
    """The analytic cost of C = A @ B: {"bytes": what an ideal kernel moves (A and B read once, C written
    once), "flops": 2*M*N*K}; with block sizes also "tile_loaded_elements", the elements this tiled kernel
    loads: M*K*cdiv(N, block_n) + K*N*cdiv(M, block_m)."""
    size = _ITEMSIZE[dtype]
    out = {"bytes": (M * K + K * N + M * N) * size, "flops": 2 * M * N * K}
    if block_m is not None and block_n is not None:
        out["tile_loaded_elements"] = M * K * triton.cdiv(N, block_n) + K * N * triton.cdiv(M, block_m)
    return out


def _gpu_main():  # pragma: no cover - needs a CUDA GPU and real Triton
    import torch
    torch.manual_seed(0)
    dev = "cuda"
    for dtype, acts in ((torch.bfloat16, (None, "relu", "gelu", "leaky_relu")), (torch.float16, (None,)),
                        (torch.float32, (None,))):
        for act in acts:
            a = torch.randn(1000, 700, device=dev, dtype=dtype)
            b = torch.randn(700, 900, device=dev, dtype=dtype)
            ref = (a.double() @ b.double())
            if act == "relu":
                ref = torch.relu(ref)
            elif act == "gelu":
                ref = torch.nn.functional.gelu(ref, approximate="tanh")
            elif act == "leaky_relu":
                ref = torch.nn.functional.leaky_relu(ref, LEAKY_SLOPE)
            out = matmul(a, b, activation=act).double()
            rel = ((out - ref).norm() / ref.norm()).item()
            print(f"check {str(dtype):15s} act={act!s:6s} rel err {rel:.2e} "
                  f"config {matmul_kernel_tuned.best_config}")
            assert rel < (5e-3 if dtype != torch.float16 else 2e-3), rel
    for n in (1024, 2048, 4096, 8192):
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        matmul(a, b)
        t_ours = triton.testing.do_bench(lambda: matmul(a, b), rep=200, return_mode="median")
        t_cublas = triton.testing.do_bench(lambda: a @ b, rep=200, return_mode="median")
        tf = lambda ms: 2 * n ** 3 / (ms * 1e-3) / 1e12  # noqa: E731
        print(f"bf16 n={n}: triton {tf(t_ours):6.1f} TFLOP/s, cuBLAS {tf(t_cublas):6.1f} TFLOP/s, "
              f"ratio {t_cublas / t_ours:.3f}  [{matmul_kernel_tuned.best_config}]", flush=True)


if __name__ == "__main__":  # pragma: no cover
    from kernels.check import main_for
    raise SystemExit(main_for("matmul", _gpu_main))
