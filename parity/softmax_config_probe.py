"""Softmax forward configs at a few widths on one GPU, next to the lesson's kernel (bf16, 4096 rows): rows per
program x warps, launched bare, interleaved do_bench rounds; prints GB/s and the ratio to the lesson.

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/softmax_config_probe.py [--rounds 5] [--cols 1024,4096]
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
    a = ap.parse_args()
    folder = os.environ.get("PARITY_LESSON_DIR", "")
    spec = importlib.util.spec_from_file_location("lesson_softmax", os.path.join(folder, "softmax_triton.py"))
    lesson = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lesson)
    rows = 4096
    for cols in (int(c) for c in a.cols.split(",")):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        ref = torch.softmax(x.float(), -1)
        runs = {"lesson": lambda: lesson._launch(lesson.softmax_fwd_kernel, x),
                "wrapper": lambda: softmax.softmax(x)}
        bn = triton.next_power_of_2(cols)
        for bm in (1, 2, 4):
            for w in (2, 4, 8, 16):
                if bm * bn // (32 * w) > 256 or bm * bn // (32 * w) < 4:
                    continue
                y = torch.empty_like(x)

                def run(bm=bm, w=w, y=y):
                    softmax.softmax_fwd_kernel[(triton.cdiv(rows, bm),)](x, y, rows, cols, cols, cols, BLOCK_M=bm,
                                                                         BLOCK_N=bn, num_warps=w)
                    return y
                out = run()
                torch.cuda.synchronize()
                if (out.float() - ref).abs().max().item() > 1e-2:
                    print(f"{cols} bm{bm} w{w}: WRONG", flush=True)
                    continue
                runs[f"bm{bm} w{w}"] = run
        times = {n: [] for n in runs}
        for _ in range(a.rounds):
            for n, fn in runs.items():
                times[n].append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
        nbytes = 2 * rows * cols * 2
        les = statistics.median(times["lesson"])
        for n, ts in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
            med = statistics.median(ts)
            print(f"{rows}x{cols} {n:12} {nbytes / med / 1e6:7.1f} GB/s  vs lesson {les / med:.3f}"
                  f"  ({min(les / t for t in ts):.3f}-{max(les / t for t in ts):.3f})", flush=True)


if __name__ == "__main__":
    main()
