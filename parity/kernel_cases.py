"""Cases for the kernels in kernels/: each calls a host wrapper (kernels.<module>.<function>) on both sides.

The wrappers take NumPy arrays / minitriton.Buffer under minitriton and torch tensors under real Triton, and
return arrays, so a case is a `parity.oracle.Call` plus a comparator per returned value. Comparisons use
the per-dtype tolerances of `kernels.tolerances` (atol as a fraction of the largest |value|, rtol), which
already allow for the GPU's approximate exp and reordered sums; vector add is exact.

On the interpreter target the autotuned wrappers get explicit block sizes (the interpreter cannot autotune
without a GPU driver), and inputs are fp32/fp16: bf16 arithmetic and the fp32 dot's TF32 rounding are known
interpreter divergences (listed as such). A module or wrapper that does not exist yet is skipped with the
reason.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

import numpy as np

from parity.compare import exact, within
from parity.oracle import BF16, REPO_ROOT, Call

_FALLBACK_TOL = {"float32": (1e-6, 1e-5), "bfloat16": (1e-5, 2.0 ** -6), "float16": (1e-5, 2.0 ** -9),
                 "float64": (1e-6, 1e-5), "tf32": (2.0 ** -8, 2.0 ** -8), "bfloat16_dot": (2.0 ** -7, 2.0 ** -6),
                 "float16_dot": (2.0 ** -8, 2.0 ** -8)}
BF16_INTERP = ("S1.22, S1.23: the interpreter computes bf16 arithmetic on the raw uint16 bit patterns")
TF32_INTERP = ("S1.24, S1.43: the kernel's fp32 tl.dot defaults to TF32 (inputs truncated) on the GPU; the "
               "interpreter computes plain fp32")


def _tolerances() -> dict:
    try:
        from kernels.tolerances import TOLERANCES  # NumPy only; no triton import
        return {**_FALLBACK_TOL, **TOLERANCES}
    except ImportError:
        return _FALLBACK_TOL


def ktol(key: str):
    """|mt - ref| <= atol * max|ref| + rtol * |ref| with kernels.tolerances[key]."""
    atol, rtol = _tolerances()[key]

    def check(mt, ref):
        r = ref.to_float() if isinstance(ref, BF16) else np.asarray(ref, np.float64)
        finite = np.isfinite(r)
        scale = float(np.abs(r[finite]).max()) if finite.any() else 1.0
        return within(mt, ref, atol * (scale or 1.0) + rtol * np.abs(np.where(finite, r, 0)))
    check.describe = f"tol[{key}]"
    return check


@dataclass
class KernelCase:
    name: str
    module: str
    function: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    checks: tuple = ()            # one comparator per returned value
    interp: str | None = None     # expected interpreter divergence

    def call(self) -> Call:
        return Call(f"kernels.{self.module}", self.function, self.args, self.kwargs)

    def missing(self) -> str | None:
        """Why this case cannot run yet (module or wrapper absent), or None."""
        path = REPO_ROOT / "kernels" / f"{self.module}.py"
        if not path.exists():
            return f"kernels/{self.module}.py does not exist yet"
        names = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}
        if self.function not in names:
            return f"kernels/{self.module}.py has no function {self.function}()"
        return None


def _arr(rng, shape, dtype, scale=1.0):
    x = rng.standard_normal(shape) * scale
    return BF16.round(x.astype(np.float32)) if dtype == "bf16" else x.astype(dtype)


def _f(x):
    return x.to_float().astype(np.float64) if isinstance(x, BF16) else np.asarray(x, np.float64)


def _like(values, dtype):
    return BF16.round(np.asarray(values, np.float32)) if dtype == "bf16" else np.asarray(values).astype(dtype)


def _tol_key(dtype) -> str:
    return {"bf16": "bfloat16", np.float16: "float16", np.float32: "float32"}[dtype]


def _attention(q, k, v, causal):
    """O and logsumexp L in float64 (the inputs of the backward cases)."""
    q, k, v = _f(q), _f(k), _f(v)
    T, D = q.shape[-2:]
    s = np.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    return np.einsum("bhts,bhsd->bhtd", e / e.sum(-1, keepdims=True), v), (m + np.log(e.sum(-1, keepdims=True)))[..., 0]


def kernel_cases(target: str, seed: int = 0, small: bool = False) -> list:
    """The cases for `target` ("interpreter": small, explicit blocks; "cuda": larger, autotuned too).

    `small`: the cuda cases at the interpreter's sizes (a CPU dry run of the cuda code paths)."""
    rng = np.random.default_rng(seed)
    gpu = target == "cuda"
    big = gpu and not small
    cases = []

    def add(name, module, function, args, kwargs=None, checks=(), interp=None):
        cases.append(KernelCase(name, module, function, tuple(args), dict(kwargs or {}), tuple(checks), interp))

    dtypes = [np.float32, np.float16, "bf16"]
    # ---------------------------------------------------------------- vector_add: exact on every dtype
    n = (1 << 20) + 3 if big else 98_432
    for dt in dtypes:
        dn = n if dt == np.float32 else 5000
        add(f"vector_add_{_tol_key(dt)}_{dn}", "vector_add", "add", (_arr(rng, dn, dt), _arr(rng, dn, dt)),
            checks=(exact,), interp=BF16_INTERP if dt == "bf16" else None)
    # ---------------------------------------------------------------- softmax: fused, online, backward
    rows, cols = (512, 1000) if big else (37, 1000)
    for dt in dtypes:
        interp = None       # fp32 math; bf16 only at the load (exact) and the store (truncated: < 1 ulp, tolerated)
        x = _arr(rng, (rows, cols), dt, 3.0)
        add(f"softmax_{_tol_key(dt)}_{rows}x{cols}", "softmax", "softmax", (x,), checks=(ktol(_tol_key(dt)),),
            interp=interp)
        add(f"softmax_online_{_tol_key(dt)}_{rows // 8}x{cols}", "softmax", "softmax", (_arr(rng, (rows // 8, cols), dt),),
            {"max_block": 256}, checks=(ktol(_tol_key(dt)),), interp=interp)
        xf = _f(x)
        y = np.exp(xf - xf.max(1, keepdims=True))
        y /= y.sum(1, keepdims=True)
        add(f"softmax_backward_{_tol_key(dt)}_{rows}x{cols}", "softmax", "softmax_backward",
            (_like(y, dt), _arr(rng, (rows, cols), dt)), checks=(ktol(_tol_key(dt)),), interp=interp)
        # rows wider than 2048 columns: one row per program, masked by column only (BLOCK_M = 1)
        wide = (rows // 2, 3000) if big else (9, 3000)
        xw = _arr(rng, wide, dt, 3.0)
        add(f"softmax_onerow_{_tol_key(dt)}_{wide[0]}x{wide[1]}", "softmax", "softmax", (xw,),
            checks=(ktol(_tol_key(dt)),), interp=interp)
        yw = np.exp(_f(xw) - _f(xw).max(1, keepdims=True))
        yw /= yw.sum(1, keepdims=True)
        add(f"softmax_backward_onerow_{_tol_key(dt)}_{wide[0]}x{wide[1]}", "softmax", "softmax_backward",
            (_like(yw, dt), _arr(rng, wide, dt)), checks=(ktol(_tol_key(dt)),), interp=interp)
    # ---------------------------------------------------------------- rmsnorm: forward (y, rstd), backward (dx, dw)
    rows, cols = (1024, 768) if big else (64, 768)
    for dt in dtypes:
        interp = None       # as softmax: fp32 math between a bf16 load and store
        x, w = _arr(rng, (rows, cols), dt), _like(1 + 0.1 * rng.standard_normal(cols), dt)
        add(f"rmsnorm_forward_{_tol_key(dt)}_{rows}x{cols}", "rmsnorm", "rmsnorm_forward", (x, w),
            checks=(ktol(_tol_key(dt)), ktol("float32")), interp=interp)
        rstd = (1 / np.sqrt((_f(x) ** 2).mean(1) + 1e-6)).astype(np.float32)
        add(f"rmsnorm_backward_{_tol_key(dt)}_{rows}x{cols}", "rmsnorm", "rmsnorm_backward",
            (x, w, rstd, _arr(rng, (rows, cols), dt)), {"programs": 8},
            checks=(ktol(_tol_key(dt)), ktol(_tol_key(dt))), interp=interp)
    # ---------------------------------------------------------------- matmul
    M, K, N = (1000, 700, 900) if big else (100, 70, 90)
    block = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32} if big else {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}
    for dt in dtypes:
        # fp32: both sides truncate the same loaded inputs to tf32, so only the summation order differs
        key = {"bf16": "bfloat16", np.float16: "float16", np.float32: "float32"}[dt]
        interp = {"bf16": BF16_INTERP, np.float32: TF32_INTERP}.get(dt)
        a, b = _arr(rng, (M, K), dt), _arr(rng, (K, N), dt)
        for act in (None, "gelu"):
            add(f"matmul_{_tol_key(dt)}_{M}x{K}x{N}_{act or 'none'}", "matmul", "matmul", (a, b),
                {"activation": act, "config": block}, checks=(ktol(key),), interp=interp)
        if gpu and dt == "bf16":
            add(f"matmul_{_tol_key(dt)}_{M}x{K}x{N}_autotuned", "matmul", "matmul", (a, b), checks=(ktol(key),))
    # ---------------------------------------------------------------- flash attention forward and backward
    B, H, T, D = (2, 4, 1000, 64) if big else (1, 2, 100, 32)
    for dt in dtypes:
        # fp32 on the GPU: P is computed with exp2.approx, then truncated to tf32, which turns its last-bit
        # differences into 2^-11 steps: the "tf32" tolerance. The interpreter computes plain fp32: "float32".
        key = {"bf16": "bfloat16_dot", np.float16: "float16_dot", np.float32: "tf32" if gpu else "float32"}[dt]
        interp = {"bf16": BF16_INTERP, np.float32: TF32_INTERP}.get(dt)
        q, k, v, do = (_arr(rng, (B, H, T, D), dt) for _ in range(4))
        for causal in (True, False):
            tag = f"{_tol_key(dt)}_B{B}H{H}T{T}D{D}_{'causal' if causal else 'full'}"
            fwd_blocks = {"block_m": 64, "block_n": 32}
            add(f"flash_fwd_{tag}", "flash_attention", "flash_attention", (q, k, v),
                {"causal": causal, **fwd_blocks}, checks=(ktol(key), ktol("tf32" if key == "tf32" else "float32")),
                interp=interp)
            if gpu and dt == "bf16":
                add(f"flash_fwd_{tag}_autotuned", "flash_attention", "flash_attention", (q, k, v), {"causal": causal},
                    checks=(ktol(key), ktol("tf32" if key == "tf32" else "float32")))
            o, lse = _attention(q, k, v, causal)
            add(f"flash_bwd_{tag}", "flash_attention", "flash_attention_backward",
                (q, k, v, _like(o, dt), lse.astype(np.float32), do),
                {"causal": causal, "blocks_dkdv": (32, 64), "blocks_dq": (64, 32)},
                checks=(ktol(key),) * 3, interp=interp)
    # scores that climb along the keys, `rise` log2 units from key 0 to the last: bf16 attention keeps the first
    # key block's maximum as its reference (P up to 2**27 at rise 40); at rise 200 that would overflow and the
    # forward redoes the rows with the online softmax. fp16 keeps the online softmax (its P stops at 65504).
    # With no blocks given, 16-bit D = 128 on Hopper is the TMA path.
    Tr, Dr = (1000, 128) if big else (100, 32)
    for rise in (40.0, 200.0):
        q, k, v = _rising(rng, 2, Tr, Dr, rise)
        for dt in ("bf16", np.float16):
            if dt is np.float16:
                if rise > 40:
                    continue
                q, k, v = (x.to_float().astype(np.float16) for x in (q, k, v))
            key = "bfloat16_dot" if dt == "bf16" else "float16_dot"
            for causal in (True, False):
                tag = f"{_tol_key(dt)}_rising{rise:g}_T{Tr}D{Dr}_{'causal' if causal else 'full'}"
                for blocks in ({"block_m": 64, "block_n": 32},) + (({},) if gpu else ()):
                    add(f"flash_fwd_{tag}{'' if blocks else '_autotuned'}", "flash_attention", "flash_attention",
                        (q, k, v), {"causal": causal, **blocks}, checks=(ktol(key), ktol("float32")),
                        interp=BF16_INTERP if dt == "bf16" else None)
    return cases


def _rising(rng, H, T, D, rise_log2):
    """bf16 q, k, v (1, H, T, D) whose scores grow linearly along the keys by `rise_log2` (log2 units)."""
    t = np.linspace(0.0, rise_log2 * math.log(2.0) * math.sqrt(D), T)
    q = 0.01 * rng.standard_normal((1, H, T, D))
    q[..., 0] = 1.0
    k = 0.01 * rng.standard_normal((1, H, T, D))
    k[..., 0] += t
    v = rng.standard_normal((1, H, T, D))
    return tuple(BF16.round(x.astype(np.float32)) for x in (q, k, v))
