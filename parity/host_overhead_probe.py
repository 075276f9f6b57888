"""Host time per call and kernel-only time (CUDA graph replay) of the small bandwidth kernels, ours next to the
lesson's: tells whether a `do_bench` ratio at a small size measures the kernel or the Python launch path.

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/host_overhead_probe.py
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _lesson(name):
    folder = os.environ.get("PARITY_LESSON_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                               "seed", "lesson"))
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("lesson_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    from kernels import flash_attention, rmsnorm, softmax, vector_add
    les_rms, les_fl = _lesson("rmsnorm_triton"), _lesson("flash_triton")
    for rows, cols in ((4096, 1024), (4096, 4096)):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
        fns = {"ours rmsnorm": lambda: rmsnorm.rmsnorm(x, w), "ours softmax": lambda: softmax.softmax(x)}
        if les_rms:
            fns["lesson rmsnorm"] = lambda: les_rms.rmsnorm(x, w)
        if cols == 1024:
            q, k, v = (torch.randn(4, 16, 1024, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            fns["ours flash T1024"] = lambda: flash_attention.flash_attention(q, k, v, causal=False)
            if les_fl:
                fns["lesson flash T1024"] = lambda: les_fl.flash_attention(q, k, v, causal=False)
        if cols == 1024:
            xa, xb = torch.randn(rows * cols, device="cuda"), torch.randn(rows * cols, device="cuda")
            out = torch.empty_like(xa)
            fns["ours vector_add"] = lambda: vector_add.add(xa, xb, out)
            yv, dy = torch.softmax(x.float(), -1).to(x.dtype), torch.randn_like(x)
            fns["ours softmax bwd"] = lambda: softmax.softmax_backward(yv, dy)
            _unaligned(x, w, xa, xb)
        for name, fn in fns.items():
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            host = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(200):
                    fn()
                host.append((time.perf_counter() - t0) / 200 * 1e6)
                torch.cuda.synchronize()
            bench = do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
            graph = do_bench_cudagraph(fn, rep=100, return_mode="median") * 1e3
            print(f"{rows}x{cols} {name:16} host {statistics.median(host):6.1f} us/call  do_bench {bench:6.1f} us"
                  f"  graph replay {graph:6.1f} us", flush=True)


def _unaligned(x, w, xa, xb):
    """The wrappers on inputs 2 or 4 bytes past a 16-byte boundary (views at an odd offset), after their plans
    have run aligned ones: each result against torch's, as max |difference|."""
    import torch

    from kernels import rmsnorm, softmax, vector_add

    def odd(t):
        flat = torch.empty(t.numel() + 1, device=t.device, dtype=t.dtype)
        view = flat[1:].view(t.shape)
        view.copy_(t)
        assert view.data_ptr() % 16
        return view
    checks = {}
    for _ in range(2):                    # aligned first (the plan keeps its kernel), then the odd views
        vector_add.add(xa, xb), softmax.softmax(x), rmsnorm.rmsnorm(x, w)
    xo, wo, ao = odd(x), odd(w), odd(xa)
    checks["vector_add"] = (vector_add.add(ao, xb) - (xa + xb)).abs().max().item()
    checks["softmax"] = (softmax.softmax(xo).float() - torch.softmax(x.float(), -1)).abs().max().item()
    y = softmax.softmax(x)
    checks["softmax bwd"] = (softmax.softmax_backward(odd(y), odd(x)).float()
                             - softmax.softmax_backward(y, x).float()).abs().max().item()
    ref = rmsnorm.rmsnorm(x, w).float()
    checks["rmsnorm"] = (rmsnorm.rmsnorm(xo, wo).float() - ref).abs().max().item()
    torch.cuda.synchronize()
    print("unaligned inputs, max |ours - reference|: " + ", ".join(f"{k} {v:.3g}" for k, v in checks.items()),
          flush=True)


if __name__ == "__main__":
    main()
