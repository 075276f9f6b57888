"""Softmax backward launches at a few widths on one GPU, next to the lesson's kernel (bf16, 4096 rows): our
kernel with rows per program x warps, a one-row kernel with 32-bit offsets ("lean"), the two-pass loop kernel
(second pass from L2), each launch allocating dx as a wrapper does, in interleaved do_bench rounds; prints GB/s
and the ratio to the lesson (median, [min-max] over rounds), fastest first.

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/softmax_bwd_probe.py [--rounds 9] [--cols 1024,2048,4096]
    [--spins 200000,200000]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def softmax_bwd_lean_kernel(y_ptr, dy_ptr, dx_ptr, n_cols, y_row_stride, dy_row_stride, dx_row_stride,
                            BLOCK_N: tl.constexpr):
    # One row per program, 32-bit offsets (the caller checks that they fit), no row mask.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    y = tl.load(y_ptr + row * y_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=0)
    tl.store(dx_ptr + row * dx_row_stride + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)


def main():
    import torch
    from triton.testing import do_bench

    from kernels import softmax
    from parity.softmax_config_probe import _lesson, _report
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--cols", default="1024,2048,4096")
    ap.add_argument("--spins", default="200000,200000",
                    help="one paired run (call-by-call interleaving) per entry: GPU spin cycles between calls")
    ap.add_argument("--paired-ms", type=float, default=3000.0)
    a = ap.parse_args()
    lesson = _lesson("softmax_triton")
    rows = 4096
    for cols in (int(c) for c in a.cols.split(",") if c):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        y = torch.softmax(x.float(), -1).to(torch.bfloat16)
        dy = torch.randn_like(y)
        ref = softmax.reference_softmax_backward(y.float().cpu().numpy(), dy.float().cpu().numpy())
        ref = torch.from_numpy(ref).float().cuda()
        runs = {"lesson": lambda: lesson._launch(lesson.softmax_bwd_kernel, y, dy),
                "wrapper": lambda: softmax.softmax_backward(y, dy)}
        bn = triton.next_power_of_2(cols)
        candidates = {}
        for bm in (1, 2, 4):
            for w in (2, 4, 8, 16):
                if not 4 <= bm * bn // (32 * w) <= 128:
                    continue

                def run(bm=bm, w=w):
                    dx = torch.empty_like(y)
                    softmax.softmax_bwd_kernel[(triton.cdiv(rows, bm),)](y, dy, dx, rows, cols, cols, cols, cols,
                                                                         BLOCK_M=bm, BLOCK_N=bn, num_warps=w)
                    return dx
                candidates[f"bm{bm} w{w}"] = run
        for w in (2, 4, 8):
            if not 4 <= bn // (32 * w) <= 128:
                continue

            def run(w=w):
                dx = torch.empty_like(y)
                softmax_bwd_lean_kernel[(rows,)](y, dy, dx, cols, cols, cols, cols, BLOCK_N=bn, num_warps=w)
                return dx
            candidates[f"lean w{w}"] = run
        for block in (512, 1024, 2048):
            if block >= bn:
                continue
            for w in (4, 8):
                def run(block=block, w=w):
                    dx = torch.empty_like(y)
                    softmax.softmax_bwd_loop_kernel[(rows,)](y, dy, dx, cols, cols, cols, cols, BLOCK_N=block,
                                                             num_warps=w)
                    return dx
                candidates[f"loop{block} w{w}"] = run
        for name, run in candidates.items():
            out = run()
            torch.cuda.synchronize()
            if ((out.float() - ref).abs() > 2e-2 * ref.abs() + 1e-2).any().item():
                print(f"softmax bwd {cols} {name}: WRONG", flush=True)
                continue
            runs[name] = run
        if a.rounds:
            _report(f"softmax bwd {rows}x{cols}", runs, 3 * rows * cols * 2, a.rounds, do_bench)
        for rep, spin in enumerate(int(c) for c in a.spins.split(",") if c):
            _report_paired(f"softmax bwd {rows}x{cols} paired#{rep + 1} spin {spin}", runs, 3 * rows * cols * 2,
                           a.paired_ms, spin)


def _report_paired(label, runs, nbytes, budget_ms, spin):
    """Times runs (name -> fn, "lesson" among them) call by call interleaved; prints one line each, fastest
    first, with the ratio to the lesson and its [min-max] over five slices of the run."""
    import statistics

    from parity.paired_timing import paired_times, ratio_with_spread
    times = paired_times(runs, budget_ms=budget_ms, spin_cycles=spin)
    les = times["lesson"]
    print(f"{label}: {len(les)} calls each", flush=True)
    for n, ts in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
        ratio, (lo, hi) = ratio_with_spread(les, ts)
        print(f"{label} {n:12} {nbytes / statistics.median(ts) / 1e6:7.1f} GB/s  vs lesson {ratio:.3f}"
              f"  [{lo:.3f}-{hi:.3f}]", flush=True)


if __name__ == "__main__":
    main()
