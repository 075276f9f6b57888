"""Softmax and RMSNorm launch variants timed the way `parity.gpubench` times its rows (same `Bench.times`:
callables called in turn, every one warmed first, the same baselines around them), on one GPU.

A config probe that times variants on their own can rank them differently from the benchmark table: at
4096x1024 (a ~8 us kernel after an L2 flush) the ranking moved with what ran before. This probe puts the
variants inside the benchmark's own rows instead. Variants: `bmXwY` (BLOCK_M rows per program, Y warps) and,
for the softmax forward, `stream` (our kernel with evict-first loads and streaming stores).

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/bench_context_probe.py [--slices 5]
"""
from __future__ import annotations

import argparse
import os
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
    ap.add_argument("--slices", type=int, default=gpubench.SLICES)
    ap.add_argument("--bwd-trials", type=int, default=0,
                    help="only the softmax backward at 4096 columns, this many times with fresh arrays, among the "
                         "benchmark row's baselines and one-row kernels of other shapes")
    ap.add_argument("--order-trials", type=int, default=0,
                    help="only the benchmark's softmax backward row at 4096 columns (its callables, its order), "
                         "timed with the turns rotated and shuffled, this many times each")
    a = ap.parse_args()
    gpubench.SLICES = a.slices
    b = gpubench.Bench(600, True)
    lesson_sm = gpubench.lesson_module("softmax_triton")
    lesson_rms = gpubench.lesson_module("rmsnorm_triton")
    rows = 4096

    def report(label, nbytes, fns):
        med, per_slice, _ = b.times(fns)
        les = per_slice["lesson"]
        for name in sorted(med, key=lambda n: med[n] or 1e9):
            if med[name] is None:
                print(f"{label} {name:14} failed", flush=True)
                continue
            each = [lt / t for lt, t in zip(les, per_slice[name])]
            print(f"{label} {name:14} {nbytes / med[name] / 1e6:7.1f} GB/s  vs lesson "
                  f"{med['lesson'] / med[name]:.3f} [{min(each):.3f}-{max(each):.3f}]", flush=True)
        for e in b.errors:
            print("error:", e, flush=True)
        b.errors.clear()

    if a.order_trials:
        _order_trials(lesson_sm, rows, 4096, a.order_trials)
        return
    if a.bwd_trials:
        _bwd_trials(b, report, lesson_sm, rows, 4096, a.bwd_trials)
        return

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


def _order_trials(lesson_sm, rows, cols, trials):
    """The benchmark's softmax backward row (ours, torch, the lesson, `y + dy`, in that order), timed with
    `paired_times` rotating the turns (every callable always follows the same one) and shuffling them."""
    import torch

    from kernels import softmax
    from parity.paired_timing import paired_times, ratio_with_spread
    x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    yv = torch.softmax(x.float(), dim=1).to(torch.bfloat16)
    dy = torch.randn_like(x)
    orders = {"ours first": ["triton", "torch", "lesson", "y + dy"],
              "lesson first": ["lesson", "torch", "triton", "y + dy"]}
    calls = {"triton": lambda: softmax.softmax_backward(yv, dy),
             "torch": lambda: torch._softmax_backward_data(dy, yv, 1, torch.bfloat16),
             "lesson": lambda: lesson_sm._launch(lesson_sm.softmax_bwd_kernel, yv, dy),
             "y + dy": lambda: yv + dy}
    for trial in range(trials):
        for label, names in orders.items():
            for order in ("rotate", "shuffle"):
                t = paired_times({n: calls[n] for n in names}, order=order, seed=trial)
                parts = []
                for n in ("lesson", "y + dy"):
                    r, (lo, hi) = ratio_with_spread(t[n], t["triton"])
                    parts.append(f"ours vs {n} {r:.3f} [{lo:.3f}-{hi:.3f}]")
                print(f"softmax bwd {rows}x{cols} trial {trial} {label:12} {order:7}: " + ", ".join(parts),
                      flush=True)


def _bwd_trials(b, report, lesson_sm, rows, cols, trials):
    """The softmax backward row (wrapper, lesson, torch, `y + dy`) with our kernel launched bare (bm1 w4), a
    1-D one-row kernel with 32-bit offsets (`lean`) and one with 64-bit offsets (`1d`), `trials` times with
    fresh arrays."""
    import torch

    from kernels import softmax
    from parity.placement_probe import softmax_bwd_hinted_kernel
    from parity.softmax_bwd_probe import softmax_bwd_lean_kernel
    for trial in range(trials):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        yv = torch.softmax(x.float(), dim=1).to(torch.bfloat16)
        dy = torch.randn_like(x)

        def bare():
            dx = torch.empty_like(yv)
            softmax.softmax_bwd_kernel[(rows,)](yv, dy, dx, rows, cols, cols, cols, cols, BLOCK_M=1, BLOCK_N=cols,
                                                num_warps=4)
            return dx

        def lean():
            dx = torch.empty_like(yv)
            softmax_bwd_lean_kernel[(rows,)](yv, dy, dx, cols, cols, cols, cols, BLOCK_N=cols, num_warps=4)
            return dx

        def one_d():
            dx = torch.empty_like(yv)
            softmax_bwd_hinted_kernel[(rows,)](yv, dy, dx, cols, cols, cols, cols, BLOCK_N=cols, EVICT="",
                                               STORE="", num_warps=4)
            return dx
        fns = {"wrapper": ("softmax bwd", lambda: softmax.softmax_backward(yv, dy)),
               "torch": ("torch softmax bwd", lambda: torch._softmax_backward_data(dy, yv, 1, torch.bfloat16)),
               "lesson": ("lesson bwd", lambda: lesson_sm._launch(lesson_sm.softmax_bwd_kernel, yv, dy)),
               "y + dy": ("y + dy", lambda: yv + dy),
               "bm1 w4": ("bwd bm1 w4", bare), "lean": ("lean", lean), "1d": ("1d", one_d)}
        report(f"softmax bwd {rows}x{cols} trial {trial}",
               softmax.traffic(rows, cols, "bfloat16", backward=True)["bytes"], fns)


if __name__ == "__main__":
    main()
