"""GPU benchmarks: each kernel in kernels/ next to torch eager, torch.compile, cuBLAS and SDPA.

    python -m parity.gpubench [--budget-s 330] [--no-compile] [--json FILE]

Runs in its own process (real Triton, torch CUDA). Times with `parity.paired_timing`: the callables of a
row (ours and its baselines) are called in turn, in a new random order every turn, each call after an L2
flush and a short GPU spin, between its own CUDA events, hundreds of times; a row keeps the interquartile
mean per callable (`paired_timing.iq_mean`: the event timer's 32 ns steps make a median snap to them), and
records the medians beside it. Drift slower than one turn (clocks, power, a busy host) then lands on every
callable alike: identical launches read within 0.5% of each other, where rounds of
`triton.testing.do_bench` (one callable for tens of milliseconds, then the next) read them up to 4% apart on
an H200 (docs/findings.md §1). The spread of the ratio over SLICES consecutive slices of the
run is recorded beside each ratio. Reports GB/s for memory-bound kernels
(bytes an ideal kernel moves, from each module's `traffic()`, over the time) and TFLOP/s for matmul and
attention, plus ratios: ours / torch eager, ours / torch.compile, ours / cuBLAS, ours / SDPA (>1 means
faster), and bandwidth as a fraction of a device-to-device copy measured in the same run. Sizes as in the
lesson; whatever the time budget does not reach is recorded as skipped. `PARITY_CUDA_SMOKE=1` (with
TRITON_INTERPRET=1) runs tiny sizes on the CPU to check the code paths only: its times mean nothing.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback

from parity.paired_timing import FLUSH_BYTES, iq_mean, paired_times, ratio_spread, slice_iq_means

SMOKE = os.environ.get("PARITY_CUDA_SMOKE") == "1"
# torch.compile's baselines compile in one process: a pool of compile workers left busy beside the timing loop
# slows the host side of every launch, and small kernels then measure the Python launch path, not the GPU
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")


SLICES = 5              # consecutive slices of a paired run: the [min-max] of their ratios is the spread
PAIRED_MS = 400.0       # measured time per row (all its callables together), between 25 and 1000 turns
MIN_TURNS, MAX_TURNS = 25, 1000
METHOD = (f"parity.paired_timing: callables called in turn, in a random order each turn, each after an L2 "
          f"flush and a GPU spin, {MIN_TURNS}-{MAX_TURNS} turns (~{PAIRED_MS:.0f} ms measured) per row; "
          f"the interquartile mean per callable (its middle half of calls: event times come in 32 ns steps, "
          f"which a median snaps to); [min-max] of the ratios over {SLICES} consecutive slices of the turns")


def _smoke_ms(fn):
    fn()
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


class Bench:
    def __init__(self, budget_s, compile_ok):
        import torch
        self.torch = torch
        self.dev = "cpu" if SMOKE else "cuda"
        self.t0 = time.monotonic()
        self.budget_s = budget_s
        self.compile_ok = compile_ok and not SMOKE
        self.rows, self.skipped, self.errors = [], [], []
        self.copy_gbs = None
        self.flush = None

    def left(self):
        return self.budget_s - (time.monotonic() - self.t0)

    def times(self, fns: dict) -> tuple:
        """fns: name -> (label, fn). Calls each once (compiles, autotuning, lazy torch.compile: before any
        timing), then times those that did not raise with `paired_times` (one call each in a smoke run);
        returns ({name: interquartile mean ms or None}, {name: [its interquartile mean per slice]},
        {name: median ms or None}). A callable that raises is recorded as an error and not timed."""
        ok = {}
        for name, (label, fn) in fns.items():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - one failing baseline is data
                self.errors.append(f"{label}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            else:
                ok[name] = fn
        if SMOKE:
            smoke = {name: (_smoke_ms(ok[name]) if name in ok else None) for name in fns}
            return smoke, {}, dict(smoke)
        self.torch.cuda.synchronize()
        samples = {}
        if ok:
            try:
                samples = paired_times(ok, budget_ms=PAIRED_MS, min_iters=MIN_TURNS, max_iters=MAX_TURNS,
                                       flush=self._flush())
            except Exception as e:  # noqa: BLE001 - a row that cannot be timed is data
                self.errors.append(f"{' / '.join(label for label, _ in fns.values())}: {type(e).__name__}: "
                                   f"{str(e).splitlines()[0][:300]}")
        typical = {name: (iq_mean(samples[name]) if name in samples else None) for name in fns}
        medians = {name: (statistics.median(samples[name]) if name in samples else None) for name in fns}
        return typical, {name: slice_iq_means(ts, SLICES) for name, ts in samples.items()}, medians

    def _flush(self):
        if self.flush is None:
            self.flush = self.torch.empty(FLUSH_BYTES // 4, dtype=self.torch.int32, device="cuda")
        return self.flush

    def row(self, kernel, size, unit, amount, fns: dict, config=None):
        """Times fns (name -> (label, fn); ours is "triton") with `times` and records the row. amount: bytes
        (GB/s) or flops (TFLOP/s). config: what our kernel launched (blocks, warps, stages), when a wrapper
        chose it."""
        times, per_slice, medians = self.times(fns)
        scale = 1e9 if unit == "GB/s" else 1e12
        rates = {k: (amount / (ms * 1e-3) / scale if ms else None) for k, ms in times.items()}
        ours = times.get("triton")
        ratios = {f"vs {k}": (v / ours if (ours and v) else None) for k, v in times.items() if k != "triton"}
        spread = {}
        for k, ms in per_slice.items():
            if k != "triton" and ratio_spread(ms, per_slice.get("triton", [])):
                spread[f"vs {k}"] = ratio_spread(ms, per_slice["triton"])
        if unit == "GB/s" and self.copy_gbs and rates.get("triton"):
            ratios["of d2d copy"] = rates["triton"] / self.copy_gbs
        r = {"kernel": kernel, "size": size, "unit": unit, "ms": times, "ms_slices": per_slice, "rate": rates,
             "ratios": ratios, "ratio_spread": spread, "ms_median": medians,
             "ratios_median": {f"vs {k}": (v / medians["triton"] if (medians.get("triton") and v) else None)
                               for k, v in medians.items() if k != "triton"}}
        if config:
            r["config"] = config
        self.rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)

    def compiled(self, fn):
        if not self.compile_ok:
            return None
        try:
            return self.torch.compile(fn, dynamic=True)
        except Exception as e:  # noqa: BLE001
            self.errors.append(f"torch.compile: {e}")
            return None


LESSON_DIR = os.environ.get("PARITY_LESSON_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "seed", "lesson")


def lesson_module(name: str, lesson_dir: str = None):
    """The lesson's script `name`.py as a module, read from `lesson_dir` (never copied into the project): its
    imports and definitions only, up to the first statement that makes test data (`torch.manual_seed`,
    `torch.randn`, `torch.rand`), so its own checks and benchmarks do not run. None if it is not there."""
    import ast
    import types
    path = os.path.join(lesson_dir or LESSON_DIR, name + ".py")
    if not os.path.exists(path):
        return None
    source = open(path, encoding="utf-8").read()
    tree = ast.parse(source)
    kept = []
    for node in tree.body:
        text = ast.get_source_segment(source, node) or ""
        if any(s in text for s in ("torch.manual_seed", "torch.randn", "torch.rand(")) and \
                not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            break
        kept.append(node)
    tree.body = kept
    module = types.ModuleType("lesson_" + name)
    module.__file__ = path
    sys.modules[module.__name__] = module      # @triton.jit reads the source through the module's file
    exec(compile(tree, path, "exec"), module.__dict__)
    return module


def run(budget_s=330.0, compile_ok=True, lesson_dir=None) -> dict:
    import torch
    import torch.nn.functional as F

    import triton
    from kernels import flash_attention, matmul, rmsnorm, softmax, vector_add
    b = Bench(budget_s, compile_ok)
    lesson = {}
    for name in ("vector_add", "softmax_triton", "rmsnorm_triton", "matmul_triton", "flash_triton"):
        try:
            lesson[name] = lesson_module(name, lesson_dir)
        except Exception as e:  # noqa: BLE001 - a lesson script that does not load is data
            b.errors.append(f"lesson {name}: {type(e).__name__}: {e}")
            lesson[name] = None
        if lesson[name] is None:
            b.skipped.append(f"lesson baseline {name} (no {name}.py in the lesson folder: set PARITY_LESSON_DIR)")
    torch.manual_seed(0)
    dev = b.dev
    small = SMOKE

    # ------------------------------------------------------------ warm-up: clocks up before anything is timed
    if not small:
        w = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
        t_end = time.monotonic() + 1.0
        while time.monotonic() < t_end:
            for _ in range(20):
                w @ w
            torch.cuda.synchronize()
        del w

    # ------------------------------------------------------------ bandwidth reference: device-to-device copy
    n = 2**12 if small else 2**28
    x = torch.empty(n, dtype=torch.float32, device=dev)
    y = torch.empty_like(x)
    ms = b.times({"copy": ("copy", lambda: y.copy_(x))})[0]["copy"]
    if ms:
        b.copy_gbs = 2 * n * 4 / (ms * 1e-3) / 1e9
        b.rows.append({"kernel": "d2d copy (torch)", "size": f"{n} fp32", "unit": "GB/s", "ms": {"copy": ms},
                       "rate": {"copy": b.copy_gbs}, "ratios": {}})
    del x, y

    # ------------------------------------------------------------ vector add
    add_c = b.compiled(lambda x, y: x + y)
    for e in ([10, 12] if small else [20, 24, 27]):
        if b.left() < 0:
            b.skipped.append(f"vector_add 2^{e}")
            continue
        n = 2**e
        x, y = torch.rand(n, device=dev), torch.rand(n, device=dev)
        out = torch.empty_like(x)
        fns = {"triton": ("vector_add", lambda: vector_add.add(x, y, out)),
               "torch": ("x + y", lambda: x + y)}
        if lesson["vector_add"]:
            fns["lesson"] = ("lesson add", lambda: lesson["vector_add"].add(x, y))
        if add_c:
            fns["torch.compile"] = ("compiled add", lambda: add_c(x, y))
        b.row("vector_add", f"2^{e} fp32", "GB/s", vector_add.traffic(n, "float32")["bytes"], fns)

    # ------------------------------------------------------------ softmax (rows of n_cols, bf16), fwd and bwd
    def naive_softmax(x):
        z = x - x.max(dim=1, keepdim=True)[0]
        num = torch.exp(z)
        return num / num.sum(dim=1, keepdim=True)
    sm_c = b.compiled(naive_softmax)
    rows = 64 if small else 4096
    for cols in ([256, 1000] if small else [256, 1024, 4096, 16384]):
        if b.left() < 0:
            b.skipped.append(f"softmax {rows}x{cols}")
            continue
        x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
        fns = {"triton": ("softmax", lambda: softmax.softmax(x)),
               "torch": ("torch.softmax", lambda: torch.softmax(x, dim=1))}
        ls = lesson["softmax_triton"]
        if ls:
            fns["lesson"] = ("lesson softmax", lambda: ls._launch(ls.softmax_fwd_kernel, x))
        if sm_c:
            fns["torch.compile"] = ("compiled softmax", lambda: sm_c(x))
        fns["x.clone()"] = ("x.clone()", lambda: x.clone())       # the same bytes moved: this size's ceiling
        b.row("softmax fwd", f"{rows}x{cols} bf16", "GB/s", softmax.traffic(rows, cols, "bfloat16")["bytes"], fns)
        yv = torch.softmax(x.float(), dim=1).to(torch.bfloat16)
        dy = torch.randn_like(x)
        fns = {"triton": ("softmax_backward", lambda: softmax.softmax_backward(yv, dy)),
               "torch": ("torch softmax bwd",
                                         lambda: torch._softmax_backward_data(dy, yv, 1, torch.bfloat16))}
        if ls:
            fns["lesson"] = ("lesson softmax bwd", lambda: ls._launch(ls.softmax_bwd_kernel, yv, dy))
        fns["y + dy"] = ("y + dy", lambda: yv + dy)
        b.row("softmax bwd", f"{rows}x{cols} bf16", "GB/s",
              softmax.traffic(rows, cols, "bfloat16", backward=True)["bytes"], fns)

    # ------------------------------------------------------------ rmsnorm (bf16)
    def torch_rmsnorm(x, w, eps=1e-6):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)
    rms_c = b.compiled(torch_rmsnorm)
    for cols in ([128, 768] if small else [1024, 4096, 8192]):
        if b.left() < 0:
            b.skipped.append(f"rmsnorm {rows}x{cols}")
            continue
        x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
        w = torch.randn(cols, device=dev, dtype=torch.bfloat16)
        fns = {"triton": ("rmsnorm", lambda: rmsnorm.rmsnorm(x, w)),
               "torch": ("torch rmsnorm", lambda: torch_rmsnorm(x, w))}
        if lesson["rmsnorm_triton"]:
            fns["lesson"] = ("lesson rmsnorm", lambda: lesson["rmsnorm_triton"].rmsnorm(x, w))
        if hasattr(F, "rms_norm"):
            fns["F.rms_norm"] = ("F.rms_norm", lambda: F.rms_norm(x, (cols,), w, 1e-6))
        if rms_c:
            fns["torch.compile"] = ("compiled rmsnorm", lambda: rms_c(x, w))
        fns["x.clone()"] = ("x.clone()", lambda: x.clone())
        b.row("rmsnorm fwd", f"{rows}x{cols} bf16", "GB/s", rmsnorm.traffic(rows, cols, "bfloat16")["bytes"], fns)
        # The backward (the lesson has none): dx and dw against torch autograd's backward of the same graphs,
        # built once and differentiated with retain_graph, so a call times the backward kernels only.
        _, rstd = rmsnorm.rmsnorm_forward(x, w)
        dy = torch.randn_like(x)
        xg, wg = x.detach().requires_grad_(), w.detach().requires_grad_()
        eager_y = torch_rmsnorm(xg, wg)
        fns = {"triton": ("rmsnorm_backward", lambda: rmsnorm.rmsnorm_backward(x, w, rstd, dy)),
               "torch": ("torch rmsnorm bwd",
                         lambda: torch.autograd.grad(eager_y, (xg, wg), dy, retain_graph=True))}
        if hasattr(F, "rms_norm"):
            f_y = F.rms_norm(xg, (cols,), wg, 1e-6)
            fns["F.rms_norm"] = ("F.rms_norm bwd", lambda: torch.autograd.grad(f_y, (xg, wg), dy, retain_graph=True))
        fns["x + dy"] = ("x + dy", lambda: x + dy)       # reads two, writes one: the bytes of dx's pass
        b.row("rmsnorm bwd", f"{rows}x{cols} bf16", "GB/s",
              rmsnorm.traffic(rows, cols, "bfloat16", backward=True)["bytes"], fns)

    # ------------------------------------------------------------ matmul (bf16, square) vs cuBLAS
    for n in ([64, 128] if small else [1024, 2048, 4096, 8192]):
        if b.left() < 0:
            b.skipped.append(f"matmul {n}")
            continue
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        bb = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        cfg = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32} if small else None
        matmul.matmul(a, bb, config=cfg)                    # autotune outside the timing
        fns = {"triton": ("matmul", lambda: matmul.matmul(a, bb, config=cfg)),
               "cuBLAS": ("a @ b", lambda: a @ bb)}
        if lesson["matmul_triton"] and not small:
            lesson["matmul_triton"].matmul(a, bb)       # its autotune outside the timing
            fns["lesson"] = ("lesson matmul", lambda: lesson["matmul_triton"].matmul(a, bb))
        b.row("matmul", f"{n}^3 bf16", "TFLOP/s", 2 * n**3, fns, config=matmul.launch_config(n, n, n, "bfloat16"))

    # ------------------------------------------------------------ flash attention (bf16) vs SDPA, fwd and bwd
    shapes = [(1, 2, 64, 32)] if small else [(4, h, t, d) for d, h in ((64, 32), (128, 16)) for t in (1024, 4096, 8192)]
    for B, H, T, D in shapes:
        for causal in (True, False):
            tag = f"B{B} H{H} T{T} D{D} {'causal' if causal else 'full'} bf16"
            if b.left() < 0:
                b.skipped.append(f"flash {tag}")
                continue
            q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
            blocks = {"block_m": 32, "block_n": 32} if small else {}
            o, lse = flash_attention.flash_attention(q, k, v, causal=causal, **blocks)
            flops = flash_attention.traffic(B, H, T, D, causal, "bfloat16")["flops"]
            fns = {"triton": ("flash fwd", lambda: flash_attention.flash_attention(q, k, v, causal=causal,
                                                                                   **blocks)),
                   "SDPA": ("sdpa fwd", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))}
            if lesson["flash_triton"] and not small:
                fns["lesson"] = ("lesson flash", lambda: lesson["flash_triton"].flash_attention(
                    q, k, v, causal=causal))
            b.row("flash fwd", tag, "TFLOP/s", flops, fns, config=flash_attention.launch_configs(q, causal)["fwd"])
            if b.left() < 0:
                b.skipped.append(f"flash bwd {tag}")
                continue
            do = torch.randn_like(q)
            bw = {"blocks_dkdv": (32, 32), "blocks_dq": (32, 32)} if small else {}
            flash_attention.flash_attention_backward(q, k, v, o, lse, do, causal=causal, **bw)   # autotune first
            fns = {"triton": ("flash bwd", lambda: flash_attention.flash_attention_backward(
                q, k, v, o, lse, do, causal=causal, **bw))}
            qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
            ref = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
            fns["SDPA"] = ("sdpa bwd", lambda: torch.autograd.grad(ref, (qr, kr, vr), do, retain_graph=True))
            chosen = flash_attention.launch_configs(q, causal)
            b.row("flash bwd", tag, "TFLOP/s", flash_attention.traffic(B, H, T, D, causal, "bfloat16",
                                                                      backward=True)["flops"], fns,
                  config=f"dK/dV {chosen['dkdv']}, dQ {chosen['dq']}" if chosen["dkdv"] else None)
            q = k = v = o = lse = do = qr = kr = vr = ref = None  # free the GPU memory before the next shape
    info = {"device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu (smoke)",
            "torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
            "seconds": round(time.monotonic() - b.t0, 1), "budget_s": budget_s, "smoke": SMOKE,
            "method": "one timed call each (smoke)" if SMOKE else METHOD}
    return {"info": info, "rows": b.rows, "skipped": b.skipped, "errors": b.errors}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m parity.gpubench")
    p.add_argument("--budget-s", type=float, default=330.0)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--lesson-dir", help="the lesson's scripts, for its kernels as baselines "
                                        "(default: $PARITY_LESSON_DIR or ../shared/seed/lesson)")
    p.add_argument("--json", help="write the results here (default: stdout)")
    a = p.parse_args(argv)
    try:
        res = run(a.budget_s, not a.no_compile, a.lesson_dir)
    except Exception:  # noqa: BLE001
        res = {"fatal": traceback.format_exc()}
    text = json.dumps(res, default=lambda o: None if isinstance(o, float) and not math.isfinite(o) else str(o))
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0 if "fatal" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
