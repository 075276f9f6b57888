"""A persistent softmax launch (programs striding over rows, loads of the next rows in flight) against the
per-row launch of kernels/softmax.py and the lesson's kernel, timed with `parity.gpubench`'s method, on one GPU.

The persistent kernels live here, not in kernels/: on the H200 they lost to the per-row launch at every width
and direction tried (parity/results/h200-softmax-persistent-2026-11-30.md). With 2 or more stages Triton 3.6
does pipeline their loads (cp.async into shared memory, 8 KB per stage at 4096 bf16 columns).

For 4096 bf16 rows of 1024, 2048 and 4096 columns, forward and backward: the per-row launch the wrappers use
without a persistent choice ("per-row"), the lesson's kernel, and `softmax_*_rows_kernel` with 2, 4 or 8
programs per multiprocessor and 2 or 3 stages. Every variant is launched bare with a fresh output, like the
per-row reference, and its output is checked against the per-row kernel's. Prints GB/s and ratios to "per-row" and to the lesson ([min-max] over slices of the run).

The last lines name, per direction, the variant whose worst ratio to "per-row" over the three widths is
highest, and whether that ratio reaches 1.03 (a win at every width, beyond the few percent that rows of a few
microseconds move between runs).

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/softmax_persistent_probe.py [--slices 5]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

WIDTHS = (1024, 2048, 4096)
CHOICES = [(per_sm, stages) for per_sm in (2, 4, 8) for stages in (2, 3)]
MIN_GAIN = 1.03


@triton.jit
def softmax_fwd_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride,
                            BLOCK_N: tl.constexpr, STAGES: tl.constexpr):
    # Persistent: program p takes rows p, p + P, p + 2P, ... (P programs), a whole row per step. The loop's
    # stages let the compiler issue the next rows' loads while this row is reduced and stored.
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        r = tl.cast(row, tl.int64)
        x = tl.load(x_ptr + r * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        y = num * (1.0 / tl.sum(num, axis=0))
        tl.store(y_ptr + r * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_bwd_rows_kernel(y_ptr, dy_ptr, dx_ptr, n_rows, n_cols, y_row_stride, dy_row_stride, dx_row_stride,
                            BLOCK_N: tl.constexpr, STAGES: tl.constexpr):
    # Persistent, as softmax_fwd_rows_kernel: program p takes rows p, p + P, ..., a whole row per step.
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        r = tl.cast(row, tl.int64)
        y = tl.load(y_ptr + r * y_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + r * dy_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dx = y * (dy - tl.sum(y * dy, axis=0))
        tl.store(dx_ptr + r * dx_row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def persistent_config(n_rows, n_cols, backward, multiprocessors, choice):
    """{"BLOCK_N", "STAGES", "num_warps", "grid"} for (programs per multiprocessor, stages) = choice; a warp
    per 512 (forward) or 1024 (backward) columns."""
    per_sm, stages = choice
    block_n = triton.next_power_of_2(n_cols)
    return {"BLOCK_N": block_n, "STAGES": stages, "num_warps": max(2, block_n // (1024 if backward else 512)),
            "grid": (max(1, min(n_rows, per_sm * multiprocessors)),)}


def main():
    import torch

    from kernels import softmax
    from parity import gpubench
    ap = argparse.ArgumentParser()
    ap.add_argument("--slices", type=int, default=gpubench.SLICES)
    a = ap.parse_args()
    gpubench.SLICES = a.slices
    b = gpubench.Bench(600, False)
    lesson = gpubench.lesson_module("softmax_triton")
    rows = 4096
    worst = {"fwd": {c: float("inf") for c in CHOICES}, "bwd": {c: float("inf") for c in CHOICES}}
    for cols in WIDTHS:
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        yv = torch.softmax(x.float(), dim=1).to(torch.bfloat16)
        dy = torch.randn_like(x)
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        cfg = softmax.config(rows, cols)
        bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]

        def per_row_fwd():
            y = torch.empty_like(x)
            softmax.softmax_fwd_kernel[cfg["grid"]](x, y, rows, cols, cols, cols, BLOCK_M=bm, BLOCK_N=bn,
                                                    num_warps=cfg["num_warps"])
            return y

        def per_row_bwd():
            dx = torch.empty_like(x)
            softmax.softmax_bwd_kernel[cfg["grid"]](yv, dy, dx, rows, cols, cols, cols, cols, BLOCK_M=bm,
                                                    BLOCK_N=bn, num_warps=cfg["bwd_num_warps"])
            return dx
        for direction, reference, fns in (
                ("fwd", per_row_fwd(), {"per-row": ("per-row fwd", per_row_fwd),
                                        "lesson": ("lesson fwd", lambda: lesson._launch(lesson.softmax_fwd_kernel,
                                                                                         x))}),
                ("bwd", per_row_bwd(), {"per-row": ("per-row bwd", per_row_bwd),
                                        "lesson": ("lesson bwd", lambda: lesson._launch(lesson.softmax_bwd_kernel,
                                                                                         yv, dy))})):
            for choice in CHOICES:
                rc = persistent_config(rows, cols, direction == "bwd", sms, choice)

                def run(rc=rc, direction=direction):
                    out = torch.empty_like(x)
                    if direction == "fwd":
                        softmax_fwd_rows_kernel[rc["grid"]](x, out, rows, cols, cols, cols,
                                                                    BLOCK_N=rc["BLOCK_N"], STAGES=rc["STAGES"],
                                                                    num_warps=rc["num_warps"])
                    else:
                        softmax_bwd_rows_kernel[rc["grid"]](yv, dy, out, rows, cols, cols, cols, cols,
                                                                    BLOCK_N=rc["BLOCK_N"], STAGES=rc["STAGES"],
                                                                    num_warps=rc["num_warps"])
                    return out
                # other warps reduce in another order: a bf16 output may round to its neighbour
                err = (run().float() - reference.float()).abs().max().item()
                if not err <= 1e-2 * reference.float().abs().max().item():
                    print(f"{direction} {cols} {choice}: output differs from the per-row kernel's by {err:.3g}",
                          flush=True)
                    continue
                fns[choice] = (f"{direction} {choice}", run)
            med, per_slice, _ = b.times(fns)
            nbytes = softmax.traffic(rows, cols, "bfloat16", backward=direction == "bwd")["bytes"]
            base, les = per_slice["per-row"], per_slice["lesson"]
            for name in sorted(med, key=lambda n: med[n] or 1e9):
                if med[name] is None:
                    print(f"{direction} {rows}x{cols} {str(name):8} failed", flush=True)
                    continue
                ratio = med["per-row"] / med[name]
                each = [t0 / t for t0, t in zip(base, per_slice[name])]
                each_l = [t0 / t for t0, t in zip(les, per_slice[name])]
                print(f"{direction} {rows}x{cols} {str(name):8} {nbytes / med[name] / 1e6:7.1f} GB/s  vs per-row "
                      f"{ratio:.3f} [{min(each):.3f}-{max(each):.3f}]  vs lesson "
                      f"{med['lesson'] / med[name]:.3f} [{min(each_l):.3f}-{max(each_l):.3f}]", flush=True)
                if name in worst[direction]:
                    worst[direction][name] = min(worst[direction][name], ratio)
            for choice in CHOICES:
                if choice not in fns:
                    worst[direction][choice] = 0.0
            for e in b.errors:
                print("error:", e, flush=True)
            b.errors.clear()
    decisions = {}
    for direction in ("fwd", "bwd"):
        best = max(CHOICES, key=lambda c: worst[direction][c])
        gain = worst[direction][best]
        decisions[direction] = best if gain >= MIN_GAIN else None
        print(f"{direction}: best {best}, worst ratio to per-row over {WIDTHS}: {gain:.3f} -> "
              f"{'a win at every width' if decisions[direction] else 'per-row stays'}", flush=True)

if __name__ == "__main__":
    main()
