"""Softmax and RMSNorm forward configs at a few widths on one GPU, next to the lesson's kernels (bf16, 4096
rows): rows per program x warps, each launch allocating its output as a wrapper does, interleaved do_bench
rounds; prints GB/s and the ratio to the lesson (median, [min-max] over rounds).

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/softmax_config_probe.py [--rounds 5] [--cols 1024,4096]
    [--rms-cols 1024,4096]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    import torch
    import triton
    from triton.testing import do_bench

    from kernels import softmax
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cols", default="1024,4096")
    ap.add_argument("--rms-cols", default="")
    a = ap.parse_args()
    lesson = _lesson("softmax_triton")
    rows = 4096
    for cols in (int(c) for c in a.cols.split(",") if c):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        ref = torch.softmax(x.float(), -1)
        runs = {"lesson": lambda: lesson._launch(lesson.softmax_fwd_kernel, x),
                "wrapper": lambda: softmax.softmax(x)}
        bn = triton.next_power_of_2(cols)
        for bm in (1, 2, 4):
            for w in (2, 4, 8, 16, 32):
                if bm * bn // (32 * w) > 256 or bm * bn // (32 * w) < 4:
                    continue

                def run(bm=bm, w=w):
                    y = torch.empty_like(x)
                    softmax.softmax_fwd_kernel[(triton.cdiv(rows, bm),)](x, y, rows, cols, cols, cols, BLOCK_M=bm,
                                                                         BLOCK_N=bn, num_warps=w)
                    return y
                out = run()
                torch.cuda.synchronize()
                if (out.float() - ref).abs().max().item() > 1e-2:
                    print(f"{cols} bm{bm} w{w}: WRONG", flush=True)
                    continue
                runs[f"bm{bm} w{w}"] = run
        _report(f"softmax {rows}x{cols}", runs, 2 * rows * cols * 2, a.rounds, do_bench)
    for cols in (int(c) for c in a.rms_cols.split(",") if c):
        _rmsnorm(rows, cols, a.rounds, do_bench)


def _lesson(name):
    folder = os.environ.get("PARITY_LESSON_DIR", "")
    spec = importlib.util.spec_from_file_location("lesson_" + name, os.path.join(folder, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rmsnorm(rows, cols, rounds, do_bench):
    import torch
    import triton

    from kernels import rmsnorm
    lesson = _lesson("rmsnorm_triton")
    x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
    ref = rmsnorm.rmsnorm(x, w)
    runs = {"lesson": lambda: lesson.rmsnorm(x, w), "wrapper": lambda: rmsnorm.rmsnorm(x, w)}
    bn = triton.next_power_of_2(cols)
    for bm in (1, 2, 4, 8):
        for nw in (1, 2, 4, 8, 16):
            if not 2 <= bm * bn // (32 * nw) <= 256:
                continue

            run = rmsnorm_launch(x, w, bm, nw)
            out = run()
            torch.cuda.synchronize()
            # bf16 outputs: other reduction orders may round to the neighbouring bf16 value (2**-8 relative)
            if ((out.float() - ref.float()).abs() > 1e-2 * ref.float().abs() + 1e-2).any().item():
                print(f"rmsnorm {cols} bm{bm} w{nw}: WRONG", flush=True)
                continue
            runs[f"bm{bm} w{nw}"] = run
    _report(f"rmsnorm {rows}x{cols}", runs, 2 * rows * cols * 2, rounds, do_bench)


def rmsnorm_launch(x, w, block_m, num_warps):
    """f() -> y: our RMSNorm forward kernel on a (rows, cols) x, launched bare with BLOCK_M rows per program and
    num_warps warps, allocating y and rstd as a wrapper does."""
    import torch
    import triton

    from kernels import rmsnorm
    rows, cols = x.shape

    def run():
        y = torch.empty_like(x)
        rstd = torch.empty(rows, device=x.device, dtype=torch.float32)
        rmsnorm.rmsnorm_fwd_kernel[(triton.cdiv(rows, block_m),)](x, w, y, rstd, rows, cols, cols, cols, 1e-6,
                                                                  BLOCK_M=block_m,
                                                                  BLOCK_N=triton.next_power_of_2(cols),
                                                                  num_warps=num_warps)
        return y
    return run


def _report(label, runs, nbytes, rounds, do_bench):
    """Times runs (name -> fn, "lesson" among them) in interleaved rounds; prints one line each, fastest first."""
    times = {n: [] for n in runs}
    for _ in range(rounds):
        for n, fn in runs.items():
            times[n].append(do_bench(fn, warmup=10, rep=40, return_mode="median"))
    les = times["lesson"]
    for n, ts in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
        med = statistics.median(ts)
        each = [lt / t for lt, t in zip(les, ts)]
        print(f"{label} {n:12} {nbytes / med / 1e6:7.1f} GB/s  vs lesson {statistics.median(les) / med:.3f}"
              f"  [{min(each):.3f}-{max(each):.3f}]", flush=True)


if __name__ == "__main__":
    main()
