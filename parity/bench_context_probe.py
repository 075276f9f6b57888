"""Softmax and RMSNorm launch variants timed the way `parity.gpubench` times its rows (same `Bench.times`:
interleaved do_bench rounds, every callable warmed first, the same baselines around them), on one GPU.

A config probe that times variants on their own can rank them differently from the benchmark table: at
4096x1024 (a ~8 us kernel after an L2 flush) the ranking moved with what ran before. This probe puts the
variants inside the benchmark's own rows instead. Variants: `bmXwY` (BLOCK_M rows per program, Y warps) and,
for the softmax forward, `stream` (our kernel with evict-first loads and streaming stores).

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/bench_context_probe.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def softmax_stream_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    rows = rows.to(tl.int64)[:, None]
    x = tl.load(x_ptr + rows * x_row_stride + cols[None, :], mask=mask, other=float("-inf"),
                eviction_policy="evict_first").to(tl.float32)
    z = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(z)
    y = num * (1.0 / tl.sum(num, axis=1))[:, None]
    tl.store(y_ptr + rows * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask,
             cache_modifier=".cs")


def main():
    import torch
    import torch.nn.functional as F

    from kernels import rmsnorm, softmax
    from parity import gpubench
    from parity.softmax_config_probe import rmsnorm_launch
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=gpubench.ROUNDS)
    a = ap.parse_args()
    gpubench.ROUNDS = a.rounds
    b = gpubench.Bench(600, True)
    lesson_sm = gpubench.lesson_module("softmax_triton")
    lesson_rms = gpubench.lesson_module("rmsnorm_triton")
    rows = 4096

    def report(label, nbytes, fns):
        med, per_round = b.times(fns)
        les = per_round["lesson"]
        for name in sorted(med, key=lambda n: med[n] or 1e9):
            if med[name] is None:
                print(f"{label} {name:14} failed", flush=True)
                continue
            each = [lt / t for lt, t in zip(les, per_round[name])]
            print(f"{label} {name:14} {nbytes / med[name] / 1e6:7.1f} GB/s  vs lesson "
                  f"{statistics.median(les) / med[name]:.3f} [{min(each):.3f}-{max(each):.3f}]", flush=True)
        for e in b.errors:
            print("error:", e, flush=True)
        b.errors.clear()

    # softmax forward and backward at 4096 columns
    for cols in (4096,):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        fns = {"wrapper": ("softmax", lambda: softmax.softmax(x)),
               "torch": ("torch.softmax", lambda: torch.softmax(x, dim=1)),
               "lesson": ("lesson", lambda: lesson_sm._launch(lesson_sm.softmax_fwd_kernel, x))}
        for kern, name, bm, w in ((softmax.softmax_fwd_kernel, "bm1 w4", 1, 4),
                                  (softmax.softmax_fwd_kernel, "bm1 w8", 1, 8),
                                  (softmax.softmax_fwd_kernel, "bm2 w8", 2, 8),
                                  (softmax_stream_kernel, "stream bm1 w8", 1, 8),
                                  (softmax_stream_kernel, "stream bm1 w4", 1, 4)):
            def run(kern=kern, bm=bm, w=w):
                y = torch.empty_like(x)
                kern[(triton.cdiv(rows, bm),)](x, y, rows, cols, cols, cols, BLOCK_M=bm, BLOCK_N=cols, num_warps=w)
                return y
            assert (run().float() - torch.softmax(x.float(), 1)).abs().max().item() < 1e-2
            fns[name] = (name, run)
        report(f"softmax fwd {rows}x{cols}", softmax.traffic(rows, cols, "bfloat16")["bytes"], fns)
        yv = torch.softmax(x.float(), dim=1).to(torch.bfloat16)
        dy = torch.randn_like(x)
        fns = {"wrapper": ("softmax bwd", lambda: softmax.softmax_backward(yv, dy)),
               "lesson": ("lesson bwd", lambda: lesson_sm._launch(lesson_sm.softmax_bwd_kernel, yv, dy))}
        for bm, w in ((1, 4), (1, 8), (2, 8), (2, 4)):
            def run(bm=bm, w=w):
                dx = torch.empty_like(yv)
                softmax.softmax_bwd_kernel[(triton.cdiv(rows, bm),)](yv, dy, dx, rows, cols, cols, cols, cols,
                                                                      BLOCK_M=bm, BLOCK_N=cols, num_warps=w)
                return dx
            fns[f"bm{bm} w{w}"] = (f"bwd bm{bm} w{w}", run)
        report(f"softmax bwd {rows}x{cols}", softmax.traffic(rows, cols, "bfloat16", backward=True)["bytes"], fns)

    # RMSNorm forward at 1024 columns, among the benchmark row's baselines
    for cols in (1024, 4096):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
        fns = {"wrapper": ("rmsnorm", lambda: rmsnorm.rmsnorm(x, w)),
               "lesson": ("lesson rmsnorm", lambda: lesson_rms.rmsnorm(x, w)),
               "F.rms_norm": ("F.rms_norm", lambda: F.rms_norm(x, (cols,), w, 1e-6))}
        variants = ((1, 4), (1, 2), (2, 2), (2, 4), (4, 2), (4, 4), (4, 8)) if cols == 1024 else ((1, 2), (1, 4),
                                                                                                 (1, 8), (2, 4))
        for bm, nw in variants:
            fns[f"bm{bm} w{nw}"] = (f"rms bm{bm} w{nw}", rmsnorm_launch(x, w, bm, nw))
        report(f"rmsnorm fwd {rows}x{cols}", rmsnorm.traffic(rows, cols, "bfloat16")["bytes"], fns)


if __name__ == "__main__":
    main()
