"""The persistent softmax launch (programs striding over rows, loads of the next rows in flight) against the
per-row launch and the lesson's kernel, timed with `parity.gpubench`'s method, on one GPU; `--apply` writes
the winner into kernels/softmax.py.

For 4096 bf16 rows of 1024, 2048 and 4096 columns, forward and backward: the per-row launch the wrappers use
without a persistent choice ("per-row"), the lesson's kernel, and `softmax_*_rows_kernel` with 2, 4 or 8
programs per multiprocessor and 2 or 3 stages. Every variant is launched bare with a fresh output, like the
per-row reference, and its output is checked against the per-row kernel's. Prints GB/s and ratios to "per-row" and to the lesson ([min-max] over rounds).

`--apply`: for each direction the variant whose worst ratio to "per-row" over the three widths is highest
becomes PERSISTENT_FWD / PERSISTENT_BWD in kernels/softmax.py, if that worst ratio is at least 1.03 (a win at
every width, beyond the few percent that rows of a few microseconds move between runs); else the constant is
set to None. The decision and the file's new line are printed.

Usage (GPU only): PARITY_LESSON_DIR=... python3 parity/softmax_persistent_probe.py [--rounds 5] [--apply]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WIDTHS = (1024, 2048, 4096)
CHOICES = [(per_sm, stages) for per_sm in (2, 4, 8) for stages in (2, 3)]
MIN_GAIN = 1.03


def main():
    import torch
    import triton

    from kernels import _host, softmax
    from parity import gpubench
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=gpubench.ROUNDS)
    ap.add_argument("--apply", action="store_true")
    a = ap.parse_args()
    gpubench.ROUNDS = a.rounds
    b = gpubench.Bench(600, False)
    lesson = gpubench.lesson_module("softmax_triton")
    rows = 4096
    worst = {"fwd": {c: float("inf") for c in CHOICES}, "bwd": {c: float("inf") for c in CHOICES}}
    for cols in WIDTHS:
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        yv = torch.softmax(x.float(), dim=1).to(torch.bfloat16)
        dy = torch.randn_like(x)
        sms = _host.multiprocessors(x)
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
                rc = softmax.persistent_config(rows, cols, direction == "bwd", sms, choice=choice)

                def run(rc=rc, direction=direction):
                    out = torch.empty_like(x)
                    if direction == "fwd":
                        softmax.softmax_fwd_rows_kernel[rc["grid"]](x, out, rows, cols, cols, cols,
                                                                    BLOCK_N=rc["BLOCK_N"], STAGES=rc["STAGES"],
                                                                    num_warps=rc["num_warps"])
                    else:
                        softmax.softmax_bwd_rows_kernel[rc["grid"]](yv, dy, out, rows, cols, cols, cols, cols,
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
            med, per_round = b.times(fns)
            nbytes = softmax.traffic(rows, cols, "bfloat16", backward=direction == "bwd")["bytes"]
            base, les = per_round["per-row"], per_round["lesson"]
            for name in sorted(med, key=lambda n: med[n] or 1e9):
                if med[name] is None:
                    print(f"{direction} {rows}x{cols} {str(name):8} failed", flush=True)
                    continue
                ratio = statistics.median(base) / med[name]
                each = [t0 / t for t0, t in zip(base, per_round[name])]
                each_l = [t0 / t for t0, t in zip(les, per_round[name])]
                print(f"{direction} {rows}x{cols} {str(name):8} {nbytes / med[name] / 1e6:7.1f} GB/s  vs per-row "
                      f"{ratio:.3f} [{min(each):.3f}-{max(each):.3f}]  vs lesson "
                      f"{statistics.median(les) / med[name]:.3f} [{min(each_l):.3f}-{max(each_l):.3f}]", flush=True)
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
              f"{decisions[direction] if decisions[direction] else 'None (per-row stays)'}", flush=True)
    if a.apply:
        path = pathlib.Path(softmax.__file__)
        text = path.read_text()
        for direction, name in (("fwd", "PERSISTENT_FWD"), ("bwd", "PERSISTENT_BWD")):
            text, n = re.subn(rf"^{name} = .*$", f"{name} = {decisions[direction]}", text, count=1, flags=re.M)
            assert n == 1, name
        path.write_text(text)
        print("applied: " + "; ".join(line for line in text.splitlines() if line.startswith("PERSISTENT_")),
              flush=True)


if __name__ == "__main__":
    main()
