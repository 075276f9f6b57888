"""Does where the arrays lie in GPU memory move a softmax launch's speed against the lesson's? On one GPU, for
each width and direction, several trials. Each trial allocates fresh inputs behind a pad of another size (so
other physical pages and DRAM channels) and times, with `parity.paired_timing`:
- the lesson's kernel and our wrapper;
- a few of our launches;
- one-row (1-D) kernels with 4 or 8 warps, plain or with cache hints (evict-first or evict-last loads,
  streaming stores);
- a torch elementwise op that moves the same bytes (`x.clone()` forward, `y + dy` backward): the ceiling.
It prints each trial's ratios to the lesson, with [min-max] over the trial's slices, then each variant's
mean and range over the trials.

A ratio that is steady within a trial but moves between trials is a placement effect: a benchmark row, which
sees one placement, then reads a tie as a win or a loss of that size.

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/placement_probe.py [--trials 4]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def softmax_fwd_hinted_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK_N: tl.constexpr,
                              EVICT: tl.constexpr, STORE: tl.constexpr):
    # One row per program, with a cache eviction policy on the load and a cache modifier on the store.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"), eviction_policy=EVICT)
    x = x.to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num * (1.0 / tl.sum(num, axis=0))
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=STORE)


@triton.jit
def softmax_bwd_hinted_kernel(y_ptr, dy_ptr, dx_ptr, n_cols, y_row_stride, dy_row_stride, dx_row_stride,
                              BLOCK_N: tl.constexpr, EVICT: tl.constexpr, STORE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    y = tl.load(y_ptr + row * y_row_stride + cols, mask=mask, other=0.0, eviction_policy=EVICT).to(tl.float32)
    dy = tl.load(dy_ptr + row * dy_row_stride + cols, mask=mask, other=0.0, eviction_policy=EVICT).to(tl.float32)
    dot = tl.sum(y * dy, axis=0)
    tl.store(dx_ptr + row * dx_row_stride + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask,
             cache_modifier=STORE)


HINTS = {"none": ("", ""), "first": ("evict_first", ""), "cs": ("", ".cs"), "first+cs": ("evict_first", ".cs"),
         "last": ("evict_last", "")}


def main():
    import torch

    from kernels import softmax
    from parity.gpubench import lesson_module
    from parity.paired_timing import paired_times, ratio_with_spread
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--cases", default="bwd:1024,bwd:4096,fwd:4096,fwd:1024")
    ap.add_argument("--paired-ms", type=float, default=1500.0)
    ap.add_argument("--one-row-warps", default="4,8", help="warps of the one-row kernels")
    a = ap.parse_args()
    one_row_warps = [int(w) for w in a.one_row_warps.split(",")]
    lesson = lesson_module("softmax_triton")
    rows = 4096
    for case in a.cases.split(","):
        direction, cols = case.split(":")
        cols = int(cols)
        bn = triton.next_power_of_2(cols)
        pooled = {}
        for trial in range(a.trials):
            pad = torch.empty((trial * 37 + 5) * 2**20 + trial * 4096, dtype=torch.uint8, device="cuda")
            x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
            y = torch.softmax(x.float(), -1).to(torch.bfloat16)
            dy = torch.randn_like(y)
            if direction == "bwd":
                runs = {"lesson": lambda: lesson._launch(lesson.softmax_bwd_kernel, y, dy),
                        "wrapper": lambda: softmax.softmax_backward(y, dy)}
                for bm, w in ((1, 4), (2, 4), (1, 8)):
                    def run(bm=bm, w=w):
                        dx = torch.empty_like(y)
                        softmax.softmax_bwd_kernel[(triton.cdiv(rows, bm),)](y, dy, dx, rows, cols, cols, cols,
                                                                             cols, BLOCK_M=bm, BLOCK_N=bn,
                                                                             num_warps=w)
                        return dx
                    runs[f"bm{bm} w{w}"] = run
                for w in one_row_warps:
                    for hint, (evict, store) in HINTS.items():
                        def run(evict=evict, store=store, w=w):
                            dx = torch.empty_like(y)
                            softmax_bwd_hinted_kernel[(rows,)](y, dy, dx, cols, cols, cols, cols, BLOCK_N=bn,
                                                               EVICT=evict, STORE=store, num_warps=w)
                            return dx
                        runs[f"w{w} {hint}"] = run
                runs["y + dy"] = lambda: y + dy
            else:
                runs = {"lesson": lambda: lesson._launch(lesson.softmax_fwd_kernel, x),
                        "wrapper": lambda: softmax.softmax(x)}
                for bm, w in ((1, 4), (1, 8), (2, 4), (2, 8)):
                    def run(bm=bm, w=w):
                        out = torch.empty_like(x)
                        softmax.softmax_fwd_kernel[(triton.cdiv(rows, bm),)](x, out, rows, cols, cols, cols,
                                                                             BLOCK_M=bm, BLOCK_N=bn, num_warps=w)
                        return out
                    runs[f"bm{bm} w{w}"] = run
                for w in one_row_warps:
                    for hint, (evict, store) in HINTS.items():
                        def run(evict=evict, store=store, w=w):
                            out = torch.empty_like(x)
                            softmax_fwd_hinted_kernel[(rows,)](x, out, cols, cols, cols, BLOCK_N=bn, EVICT=evict,
                                                               STORE=store, num_warps=w)
                            return out
                        runs[f"w{w} {hint}"] = run
                runs["x.clone()"] = lambda: x.clone()
            for name, run in list(runs.items()):
                if name in ("x.clone()", "y + dy"):
                    continue
                ref = (softmax.softmax_backward(y, dy) if direction == "bwd" else softmax.softmax(x)).float()
                if ((run().float() - ref).abs() > 2e-2 * ref.abs() + 1e-2).any().item():
                    print(f"{direction} {cols} {name}: WRONG", flush=True)
                    del runs[name]
            times = paired_times(runs, budget_ms=a.paired_ms, seed=trial)
            line = []
            for name, ts in times.items():
                if name == "lesson":
                    continue
                ratio, (lo, hi) = ratio_with_spread(times["lesson"], ts)
                pooled.setdefault(name, []).append(ratio)
                line.append(f"{name} {ratio:.3f} [{lo:.3f}-{hi:.3f}]")
            print(f"softmax {direction} {rows}x{cols} trial {trial} (x at {x.data_ptr() % 2**30:#x}): "
                  + ", ".join(line), flush=True)
            del pad, x, y, dy
        ranked = sorted(pooled.items(), key=lambda kv: -sum(kv[1]) / len(kv[1]))
        print(f"softmax {direction} {rows}x{cols} over {a.trials} trials, vs lesson: "
              + ", ".join(f"{n} {sum(r) / len(r):.4f} [{min(r):.3f}-{max(r):.3f}]" for n, r in ranked), flush=True)


if __name__ == "__main__":
    main()
