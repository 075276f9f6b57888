"""kernels/ against torch on the same inputs: every kernel's outputs, and the gradients of the three autograd
wrappers (softmax, RMSNorm, attention), next to torch's own ops evaluated in float64.

    python -m parity.torch_agreement [--small] [--out DIR]

On a CUDA machine this is real Triton on the GPU; on a CPU, with TRITON_INTERPRET=1, Triton's interpreter
(`--small` shapes; the tests run it that way). The references are torch's ops in float64 on the stored inputs
(bf16 and fp16 values already rounded): `torch.softmax` and its backward, `F.rms_norm` and autograd through
it, `a @ b` with the activation, and `F.scaled_dot_product_attention` (the math backend) with autograd. A check
passes within `kernels.tolerances` for the output's dtype ("tf32" for fp32 `tl.dot`, "*_dot" for fp16/bf16
attention). Vector add must equal torch's `a + b` in the inputs' own dtype exactly. Prints a table, writes
torch-agreement-<device>-<date>.{md,json} to --out, and exits 1 if any check fails.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DTYPES = ("float32", "float16", "bfloat16")
BF16_INTERP = "Triton's interpreter computes bf16 arithmetic on the raw uint16 bit patterns (GPU only)"


class Checks:
    """Collects (case, output, tolerance key, max |err| / max |ref|, passed, detail) rows."""

    def __init__(self):
        self.rows = []

    def close(self, case, output, key, actual, expected):
        """actual (torch, any dtype) against expected (torch float64) within tolerance `key` ("exact": equal)."""
        import numpy as np

        from kernels import tolerances
        a = actual.detach().double().cpu().numpy()
        e = expected.detach().double().cpu().numpy()
        scale = float(np.abs(e).max()) if e.size else 0.0
        err = float(np.abs(a - e).max() / (scale or 1.0)) if e.size else 0.0
        try:
            if key == "exact":
                if not np.array_equal(a, e):
                    raise AssertionError(f"{int((a != e).sum())} elements differ")
            else:
                tolerances.assert_close(a, e, key, output)
            ok, detail = True, ""
        except AssertionError as exc:
            ok, detail = False, str(exc).splitlines()[0][:200]
        self.rows.append({"case": case, "output": output, "tolerance": key, "max_err": err, "ok": ok,
                          "detail": detail})
        print(f"{case:42} {output:4} {key:13} {err:9.2e}  {'ok' if ok else 'FAIL ' + detail}", flush=True)

    def skip(self, case, why):
        """A check this device cannot make, and why."""
        self.rows.append({"case": case, "output": "-", "tolerance": "-", "max_err": None, "ok": None,
                          "detail": why})
        print(f"{case:42} skipped: {why}", flush=True)


def _randn(torch, shape, dtype, dev, gen, scale=1.0):
    return (torch.randn(shape, generator=gen, device="cpu", dtype=torch.float64) * scale).to(
        getattr(torch, dtype)).to(dev)


def run(small: bool, dev: str) -> Checks:
    """Runs every check; returns them."""
    import torch
    import torch.nn.functional as F

    from kernels import flash_attention, matmul, rmsnorm, softmax, vector_add
    gen = torch.Generator().manual_seed(0)
    c = Checks()

    for dt in DTYPES:                                   # vector add: the lesson's n, a masked tail
        if dt == "bfloat16" and dev != "cuda":          # (it adds in bf16)
            c.skip(f"vector_add {dt} n=98432", BF16_INTERP)
            continue
        x, y = (_randn(torch, 98_432, dt, dev, gen) for _ in range(2))
        c.close(f"vector_add {dt} n=98432", "out", "exact", vector_add.add(x, y), (x + y).double())

    sm_shapes = [(37, 781), (9, 3000), (3, 40000)] if small else [(1823, 781), (4096, 4096), (64, 40000)]
    for rows, cols in sm_shapes:                        # fused 2 rows/program, 1 row/program, online
        for dt in DTYPES:
            case = f"softmax {dt} {rows}x{cols}"
            x = _randn(torch, (rows, cols), dt, dev, gen, 3.0).requires_grad_()
            y = softmax.triton_softmax(x)
            c.close(case, "y", dt, y, torch.softmax(x.detach().double(), -1))
            dy = _randn(torch, (rows, cols), dt, dev, gen)
            (dx,) = torch.autograd.grad(y, x, dy)
            # the backward sees the stored y: torch's softmax backward on that y is the reference
            ref = torch._softmax_backward_data(dy.double(), y.detach().double(), -1, torch.float64)
            c.close(case, "dx", dt, dx, ref)

    rms_shapes = [(37, 781)] if small else [(1823, 781), (512, 896), (4096, 4096)]
    for rows, cols in rms_shapes:
        for dt in DTYPES:
            case = f"rmsnorm {dt} {rows}x{cols}"
            x = _randn(torch, (rows, cols), dt, dev, gen).requires_grad_()
            w = (1 + 0.1 * _randn(torch, cols, "float64", dev, gen)).to(getattr(torch, dt)).requires_grad_()
            y = rmsnorm.triton_rmsnorm(x, w)
            x64, w64 = (t.detach().double().requires_grad_() for t in (x, w))
            y64 = F.rms_norm(x64, (cols,), w64, 1e-6)
            c.close(case, "y", dt, y, y64)
            dy = _randn(torch, (rows, cols), dt, dev, gen)
            dx, dw = torch.autograd.grad(y, (x, w), dy)
            dx64, dw64 = torch.autograd.grad(y64, (x64, w64), dy.double())
            c.close(case, "dx", dt, dx, dx64)
            c.close(case, "dw", dt, dw, dw64)

    # Triton's interpreter cannot autotune (no driver to time with): fixed blocks there
    fixed_mm = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32} if dev != "cuda" else None
    mm_shapes = [(100, 70, 90)] if small else [(1000, 700, 900)]
    for M, K, N in mm_shapes:
        for dt in DTYPES:
            for act in ((None, "gelu") if dt == "bfloat16" else (None,)):
                if dt == "bfloat16" and dev != "cuda":
                    c.skip(f"matmul {dt} {M}x{K}x{N} {act or ''}".rstrip(), BF16_INTERP)
                    continue
                a, b = _randn(torch, (M, K), dt, dev, gen), _randn(torch, (K, N), dt, dev, gen)
                ref = a.double() @ b.double()
                if act == "gelu":
                    ref = F.gelu(ref, approximate="tanh")
                key = "tf32" if dt == "float32" and dev == "cuda" else dt
                c.close(f"matmul {dt} {M}x{K}x{N} {act or ''}".rstrip(), "c", key,
                        matmul.matmul(a, b, activation=act, config=fixed_mm), ref)

    # (T, D, dtypes): the lesson's lengths, head dims 16-128; every dtype at one shape (autotuning each costs)
    if small:
        fl = [(64, 16, ("float16", "float32")), (100, 64, ("float16", "float32")), (257, 64, ("float16", "float32"))]
    else:
        fl = [(64, 64, ("bfloat16",)), (100, 64, ("bfloat16",)), (257, 64, DTYPES), (1000, 64, ("bfloat16",)),
              (257, 16, ("bfloat16",)), (257, 128, ("bfloat16", "float16"))]
    for T, D, fl_dtypes in fl:
        for dt in fl_dtypes:
            for causal in (True, False):
                case = f"attention {dt} B2 H3 T{T} D{D} {'causal' if causal else 'full'}"
                q, k, v = (_randn(torch, (2, 3, T, D), dt, dev, gen).requires_grad_() for _ in range(3))
                do = _randn(torch, (2, 3, T, D), dt, dev, gen)
                if dev == "cuda":                       # the autograd wrapper, autotuned kernels
                    o = flash_attention.attention(q, k, v, causal)
                    grads = torch.autograd.grad(o, (q, k, v), do)
                else:                                   # the interpreter: fixed blocks, no autotuning
                    qd, kd, vd = (t.detach() for t in (q, k, v))
                    o, lse = flash_attention.flash_attention(qd, kd, vd, causal, block_m=32, block_n=32)
                    grads = flash_attention.flash_attention_backward(qd, kd, vd, o, lse, do, causal,
                                                                     blocks_dkdv=(32, 32), blocks_dq=(32, 32))
                q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
                with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
                    o64 = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
                key = {"float32": "tf32", "float16": "float16_dot", "bfloat16": "bfloat16_dot"}[dt]
                if dt == "float32" and dev != "cuda":
                    key = "float32"
                c.close(case, "o", key, o, o64)
                grads64 = torch.autograd.grad(o64, (q64, k64, v64), do.double())
                for name, g, g64 in zip(("dq", "dk", "dv"), grads, grads64):
                    c.close(case, name, key, g, g64)
    return c


def report(c: Checks, info: dict) -> str:
    """The checks as a markdown page."""
    failed = [r for r in c.rows if r["ok"] is False]
    skipped = [r for r in c.rows if r["ok"] is None]
    lines = [f"# kernels/ against torch: outputs and gradients ({info['date']})", "",
             f"- command: `{info['command']}`",
             f"- {info['device']}; triton {info['triton']}, torch {info['torch']}",
             "- reference: torch in float64 on the stored inputs; tolerances: kernels/tolerances.py "
             "(max err is max |ours - torch| / max |torch|)",
             f"- **{len(c.rows) - len(failed) - len(skipped)} of {len(c.rows) - len(skipped)} checks pass**"
             + (f"; {len(skipped)} skipped" if skipped else ""), "",
             "| case | output | tolerance | max err | result |", "|---|---|---|---|---|"]
    for r in c.rows:
        if r["ok"] is None:
            lines.append(f"| {r['case']} | - | - | - | skipped: {r['detail']} |")
            continue
        lines.append(f"| {r['case']} | {r['output']} | {r['tolerance']} | {r['max_err']:.2e} | "
                     f"{'ok' if r['ok'] else 'FAIL: ' + r['detail']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m parity.torch_agreement")
    p.add_argument("--small", action="store_true", help="small shapes (for Triton's CPU interpreter)")
    p.add_argument("--out", help="write torch-agreement-<device>-<date>.md and .json here")
    a = p.parse_args(argv)
    import torch
    import triton
    dev = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"
    if dev == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        p.error("no CUDA device: set TRITON_INTERPRET=1 to run on Triton's CPU interpreter (with --small)")
    if dev == "cpu":  # the interpreter's NumPy warns about masked-off lanes (-inf - -inf) that no output keeps
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="triton.runtime.interpreter")
    c = run(a.small, dev)
    from parity.report import command, results_json
    info = {"date": datetime.date.today().isoformat(), "command": command("python -m parity.torch_agreement", argv or sys.argv[1:]),
            "device": torch.cuda.get_device_name(0) if dev == "cuda" else "CPU, Triton's interpreter",
            "triton": triton.__version__, "torch": torch.__version__}
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        stem = os.path.join(a.out, f"torch-agreement-{'cuda' if dev == 'cuda' else 'interpreter'}-{info['date']}")
        with open(stem + ".md", "w") as f:
            f.write(report(c, info))
        with open(stem + ".json", "w") as f:
            f.write(results_json({"info": info, "checks": c.rows}))
    failed = sum(r["ok"] is False for r in c.rows)
    made = sum(r["ok"] is not None for r in c.rows)
    print(f"{made - failed} of {made} checks pass ({len(c.rows) - made} skipped)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
