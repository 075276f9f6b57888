"""The launches a GPU cost model is calibrated and judged on: kernels/ at the lesson's sizes and configs.

A point is a plain dict: "id", "kernel" (family), "fn" (the `@triton.jit` function of kernels/ it launches),
"dtype", "shape" (the problem's sizes), "config" (the constexprs and `num_warps`/`num_stages` it passes) and
"grid". `points()` lists them; `launcher(point, backend)` makes the arrays and returns a function that
launches the kernel once, the same call on real Triton (backend "torch": CUDA tensors) and on minitriton
("numpy"). The configs are the ones the host wrappers choose (softmax.config, rmsnorm.config) or, for matmul
and flash attention, every autotune config the wrapper may choose, launched directly: no autotuner, no
heuristics, no host-side caching between the timer and the kernel.
"""
from __future__ import annotations

import math

VECTOR_SIZES = [2 ** k for k in range(12, 28)]
NORM_ROWS = 4096
NORM_COLS = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
SOFTMAX_ONLINE_COLS = [65536, 131072]          # wider than softmax.MAX_FUSED_COLS: the online kernel
MATMUL_SIZES = [256, 512, 1024, 2048, 4096, 8192]
FLASH_BH = (4, 16)                             # batch, heads
FLASH_T = [512, 1024, 2048, 4096, 8192]
FLASH_CONFIG_T = 4096                          # every forward config is timed at this length
SMEM_LIMIT = 232448                            # bytes of shared memory a Hopper program may use

_ITEMSIZE = {"float32": 4, "float16": 2}


def cdiv(a, b):
    return -(-a // b)


def _point(kernel, fn, dtype, shape, config, grid, tag=""):
    name = "-".join([kernel, dtype, "x".join(str(v) for v in shape.values())]
                    + [f"{k}{v}" for k, v in config.items() if not isinstance(v, bool)] + ([tag] if tag else []))
    return {"id": name, "kernel": kernel, "fn": fn, "dtype": dtype, "shape": shape, "config": config,
            "grid": list(grid) + [1] * (3 - len(grid))}


def _vector_points():
    out = []
    for n in VECTOR_SIZES:
        out.append(_point("vector_add", "add_kernel", "float32", {"n": n}, {"BLOCK_SIZE": 1024, "num_warps": 4},
                          (cdiv(n, 1024),)))
    for n in (2 ** 16, 2 ** 20, 2 ** 24):
        for block, warps in ((256, 2), (4096, 8)):
            out.append(_point("vector_add", "add_kernel", "float32", {"n": n},
                              {"BLOCK_SIZE": block, "num_warps": warps}, (cdiv(n, block),)))
    for n in (2 ** 20, 2 ** 24, 2 ** 27):
        out.append(_point("vector_add", "add_kernel", "float16", {"n": n}, {"BLOCK_SIZE": 1024, "num_warps": 4},
                          (cdiv(n, 1024),)))
    return out


def _next_pow2(n):
    return 1 << (n - 1).bit_length()


def _softmax_config(rows, cols, warps=None):
    """softmax.config's choice (kernels/softmax.py), computed here so that listing points imports nothing."""
    block_n = _next_pow2(cols)
    if block_n > 32768:
        return "softmax_fwd_online_kernel", {"BLOCK_N": 2048, "num_warps": warps or 8}, (rows,)
    block_m = max(1, min(4, 2048 // block_n, _next_pow2(rows)))
    default = max(2, min(32, block_m * block_n // 512))
    return ("softmax_fwd_kernel", {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps or default},
            (cdiv(rows, block_m),))


def _rmsnorm_config(rows, cols, warps=None):
    """rmsnorm.config's choice (kernels/rmsnorm.py)."""
    block_n = _next_pow2(cols)
    block_m = max(1, min(4096 // block_n, _next_pow2(rows)))
    default = max(2, min(32, block_m * block_n // (2048 if block_m == 1 else 512)))
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps or default}, (cdiv(rows, block_m),)


def _norm_points():
    out = []
    for dtype in ("float32", "float16"):
        for cols in NORM_COLS + (SOFTMAX_ONLINE_COLS if dtype == "float32" else []):
            fn, cfg, grid = _softmax_config(NORM_ROWS, cols)
            out.append(_point("softmax", fn, dtype, {"rows": NORM_ROWS, "cols": cols}, cfg, grid))
        for cols in NORM_COLS:
            cfg, grid = _rmsnorm_config(NORM_ROWS, cols)
            out.append(_point("rmsnorm", "rmsnorm_fwd_kernel", dtype, {"rows": NORM_ROWS, "cols": cols}, cfg, grid))
    for cols in (1024, 8192):                  # other warp counts than the wrappers' choice
        for warps in (1, 4, 8, 16):
            fn, cfg, grid = _softmax_config(NORM_ROWS, cols, warps)
            out.append(_point("softmax", fn, "float32", {"rows": NORM_ROWS, "cols": cols}, cfg, grid, "warps"))
            cfg, grid = _rmsnorm_config(NORM_ROWS, cols, warps)
            out.append(_point("rmsnorm", "rmsnorm_fwd_kernel", "float32", {"rows": NORM_ROWS, "cols": cols}, cfg,
                              grid, "warps"))
    seen, kept = set(), []
    for p in out:
        if p["id"] not in seen:
            seen.add(p["id"])
            kept.append(p)
    return kept


# kernels/matmul.py CONFIGS: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
MATMUL_CONFIGS = [(128, 256, 64, 8, 4), (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (256, 128, 64, 8, 4),
                  (128, 128, 64, 8, 4), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                  (64, 128, 32, 4, 4), (64, 64, 32, 4, 3), (64, 64, 64, 4, 3), (32, 32, 32, 4, 3)]


def _matmul_point(n, dtype, cfg, group_m, tag=""):
    bm, bn, bk, warps, stages = cfg
    config = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group_m, "num_warps": warps,
              "num_stages": stages}
    return _point("matmul", "matmul_kernel", dtype, {"M": n, "N": n, "K": n}, config,
                  (cdiv(n, bm) * cdiv(n, bn),), tag)


def _matmul_points():
    out = [_matmul_point(n, "float16", cfg, g) for n in MATMUL_SIZES for cfg in MATMUL_CONFIGS for g in (8, 1)]
    for n in (1024, 4096, 8192):               # fp32 inputs (TF32 dots): the configs that fit shared memory
        for cfg in ((128, 128, 32, 4, 4), (64, 64, 32, 4, 3)):
            if cfg[4] * (cfg[0] + cfg[1]) * cfg[2] * 4 <= SMEM_LIMIT:
                out.append(_matmul_point(n, "float32", cfg, 8))
    return out


# kernels/flash_attention.py FWD_CONFIGS: (BLOCK_M, BLOCK_N, num_warps, num_stages)
FLASH_CONFIGS = [(128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 8, 4), (128, 128, 8, 4), (128, 64, 4, 3),
                 (128, 64, 4, 4), (64, 64, 4, 3), (64, 32, 4, 4)]


def _flash_fits(cfg, D):
    """_prune_fwd's rule for D = 128 on Hopper (8 warps with stages * BLOCK_N <= 384, or (64, 64, s3))."""
    bm, bn, warps, stages = cfg
    return D <= 64 or (warps == 8 and stages * bn <= 384) or (bm == 64 and stages == 3)


def _flash_point(T, D, causal, cfg, tag=""):
    bm, bn, warps, stages = cfg
    B, H = FLASH_BH
    config = {"BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal, "num_warps": warps, "num_stages": stages}
    return _point("flash_fwd", "flash_fwd_kernel", "float16", {"B": B, "H": H, "T": T, "D": D}, config,
                  (cdiv(T, bm), B * H), tag + ("causal" if causal else "full"))


def _flash_points():
    out = [_flash_point(T, D, c, FLASH_CONFIGS[0]) for T in FLASH_T for D in (64, 128) for c in (False, True)]
    for D in (64, 128):
        for c in (False, True):
            out += [_flash_point(FLASH_CONFIG_T, D, c, cfg, "cfg-") for cfg in FLASH_CONFIGS[1:] if _flash_fits(cfg, D)]
    return out


def points() -> list:
    """Every point, in a fixed order (ids are unique)."""
    out = _vector_points() + _norm_points() + _matmul_points() + _flash_points()
    assert len({p["id"] for p in out}) == len(out)
    return out


# ------------------------------------------------------------------------------------ launching a point

class _Arrays:
    """Random inputs and empty outputs on one backend: "torch" (CUDA) or "numpy" (minitriton)."""

    def __init__(self, backend, device="cuda", seed=0):
        self.backend, self.device = backend, device
        if backend == "torch":
            import torch
            self.torch = torch
            torch.manual_seed(seed)
        else:
            import numpy as np
            self.np = np
            self.rng = np.random.default_rng(seed)

    def randn(self, shape, dtype):
        if self.backend == "torch":
            return self.torch.randn(shape, device=self.device, dtype=getattr(self.torch, dtype))
        return self.rng.standard_normal(shape, dtype="float32").astype(dtype)

    def empty(self, shape, dtype):
        if self.backend == "torch":
            return self.torch.empty(shape, device=self.device, dtype=getattr(self.torch, dtype))
        return self.np.zeros(shape, dtype=dtype)


def launcher(point, backend="torch", device="cuda"):
    """A function of no arguments that launches `point`'s kernel once on fresh arrays of `backend` (torch
    tensors on `device`, or NumPy arrays)."""
    import kernels.flash_attention
    import kernels.matmul
    import kernels.rmsnorm
    import kernels.softmax
    import kernels.vector_add
    modules = {"vector_add": kernels.vector_add, "softmax": kernels.softmax, "rmsnorm": kernels.rmsnorm,
               "matmul": kernels.matmul, "flash_fwd": kernels.flash_attention}
    fn = getattr(modules[point["kernel"]], point["fn"])
    arr, dtype, s, cfg = _Arrays(backend, device), point["dtype"], point["shape"], dict(point["config"])
    grid = tuple(point["grid"])
    kernel = fn[grid]
    if point["kernel"] == "vector_add":
        x, y, out = arr.randn(s["n"], dtype), arr.randn(s["n"], dtype), arr.empty(s["n"], dtype)
        args = (x, y, out, s["n"])
    elif point["kernel"] in ("softmax", "rmsnorm"):
        rows, cols = s["rows"], s["cols"]
        x, y = arr.randn((rows, cols), dtype), arr.empty((rows, cols), dtype)
        if point["kernel"] == "rmsnorm":
            args = (x, arr.randn(cols, dtype), y, arr.empty(rows, "float32"), rows, cols, cols, cols, 1e-6)
        elif point["fn"] == "softmax_fwd_online_kernel":
            args = (x, y, cols, cols, cols)
        else:
            args = (x, y, rows, cols, cols, cols)
    elif point["kernel"] == "matmul":
        M, N, K = s["M"], s["N"], s["K"]
        a, b, c = arr.randn((M, K), dtype), arr.randn((K, N), dtype), arr.empty((M, N), dtype)
        args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
        cfg.update(ACTIVATION="", EVEN_K=K % cfg["BLOCK_K"] == 0,
                   EVEN_MN=M % cfg["BLOCK_M"] == 0 and N % cfg["BLOCK_N"] == 0)
    else:
        B, H, T, D = s["B"], s["H"], s["T"], s["D"]
        q, k, v = (arr.randn((B, H, T, D), dtype) for _ in range(3))
        o, lse = arr.empty((B, H, T, D), dtype), arr.empty((B, H, T), "float32")
        args = (q, k, v, o, lse, T, 1.0 / math.sqrt(D) * 1.4426950408889634, T * D, D)
        cfg["D"] = D
    return lambda: kernel(*args, **cfg)
