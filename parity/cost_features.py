"""What minitriton knows of each cost-model point without a GPU, joined with the GPU's times: the run of record.

    .venv/bin/python -m parity.cost_features --gpu DIR/gpu-costs-<date>.json --out parity/results
    .venv/bin/python -m parity.cost_features --check-only          # the formulas against record(), no GPU file

A point's features are the numbers `minitriton.record()` gives its launch (per tensor argument: bytes loaded
and stored, unique bytes; `tl.dot` flops) and its launch options (grid, num_warps, num_stages, blocks, dtype).
At the timed sizes minitriton would take hours on a CPU (a 8192^3 product, attention over 8192 keys), so the
counts come from `traffic(point)`, a formula per kernel in the kernel's own terms, and the formula is checked
here, exactly, against `record()` on a reduced launch of every (kernel, dtype, config) of the points: the same
blocks, warps and stages and the same per-program loop structure (K loop, causal key blocks, row width) on a
smaller grid. The run of record (`cuda-costs-<card>-<date>.json/.md`) holds the device, its constants, and per point
the features, the measured median and the spread between the GPU run's passes; the check's outcome is in it.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

from parity.cost_points import cdiv, points
from parity.report import results_json

ITEMSIZE = {"float32": 4, "float16": 2}
FIELDS = ("loaded_bytes", "stored_bytes", "unique_loaded_bytes", "unique_stored_bytes")


def _t(loaded=0, stored=0, unique_loaded=None, unique_stored=None):
    return {"loaded_bytes": loaded, "stored_bytes": stored,
            "unique_loaded_bytes": loaded if unique_loaded is None else unique_loaded,
            "unique_stored_bytes": stored if unique_stored is None else unique_stored}


def traffic(p) -> dict:
    """{"tensors": {argument: {FIELDS}}, "dot_flops"} of point `p`'s launch, as record() counts them."""
    s, c, e = p["shape"], p["config"], ITEMSIZE[p["dtype"]]
    programs = p["grid"][0] * p["grid"][1] * p["grid"][2]
    if p["kernel"] == "vector_add":
        b = s["n"] * e
        return {"tensors": {"x_ptr": _t(b), "y_ptr": _t(b), "out_ptr": _t(0, b)}, "dot_flops": 0}
    if p["kernel"] in ("softmax", "rmsnorm"):
        b = s["rows"] * s["cols"] * e
        if p["kernel"] == "rmsnorm":
            return {"tensors": {"x_ptr": _t(b), "w_ptr": _t(programs * s["cols"] * e, 0, s["cols"] * e),
                                "y_ptr": _t(0, b), "rstd_ptr": _t(0, s["rows"] * 4)}, "dot_flops": 0}
        reads = 2 if p["fn"] == "softmax_fwd_online_kernel" else 1
        return {"tensors": {"x_ptr": _t(reads * b, 0, b), "y_ptr": _t(0, b)}, "dot_flops": 0}
    if p["kernel"] == "matmul":
        M, N, K = s["M"], s["N"], s["K"]
        a = _t(M * K * cdiv(N, c["BLOCK_N"]) * e, 0, M * K * e)
        b = _t(K * N * cdiv(M, c["BLOCK_M"]) * e, 0, K * N * e)
        return {"tensors": {"a_ptr": a, "b_ptr": b, "c_ptr": _t(0, M * N * e)}, "dot_flops": 2 * M * N * K}
    bh, T, D = s["B"] * s["H"], s["T"], s["D"]
    bm, bn = c["BLOCK_M"], c["BLOCK_N"]
    # keys a query block reads: all T, or (causal) up to the end of its own diagonal block
    keys = sum(min((m + 1) * bm, T) if c["CAUSAL"] else T for m in range(cdiv(T, bm)))
    blocks = sum(cdiv(min((m + 1) * bm, T), bn) if c["CAUSAL"] else cdiv(T, bn) for m in range(cdiv(T, bm)))
    kv = _t(bh * keys * D * e, 0, bh * T * D * e)
    return {"tensors": {"q_ptr": _t(bh * T * D * e), "k_ptr": kv, "v_ptr": dict(kv), "o_ptr": _t(0, bh * T * D * e),
                        "l_ptr": _t(0, bh * T * 4)}, "dot_flops": bh * blocks * 4 * bm * bn * D}


def features(p) -> dict:
    """The model's inputs for one point: launch options, sizes, and `traffic`'s totals."""
    t = traffic(p)
    c = p["config"]
    totals = {f: sum(v[f] for v in t["tensors"].values()) for f in FIELDS}
    blocks = {k: v for k, v in c.items() if k.startswith("BLOCK")}
    smem = None
    if p["kernel"] == "matmul":
        smem = c["num_stages"] * (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * ITEMSIZE[p["dtype"]]
    elif p["kernel"] == "flash_fwd":
        smem = (c["BLOCK_M"] + 2 * c["num_stages"] * c["BLOCK_N"]) * p["shape"]["D"] * ITEMSIZE[p["dtype"]]
    return {"programs": p["grid"][0] * p["grid"][1] * p["grid"][2], "grid": p["grid"],
            "num_warps": c["num_warps"], "num_stages": c.get("num_stages", 3), "blocks": blocks,
            "itemsize": ITEMSIZE[p["dtype"]], "dot_flops": t["dot_flops"], "smem_estimate": smem, **totals,
            "tensors": t["tensors"]}


def reduced(p) -> dict:
    """The point on a smaller grid with the same per-program work structure (for checking `traffic`)."""
    s, c = dict(p["shape"]), p["config"]
    if p["kernel"] == "vector_add":
        s["n"] = min(s["n"], 16 * c["BLOCK_SIZE"])
        grid = [cdiv(s["n"], c["BLOCK_SIZE"]), 1, 1]
    elif p["kernel"] in ("softmax", "rmsnorm"):
        s["rows"] = 3 * c.get("BLOCK_M", 1)
        grid = [3, 1, 1]
    elif p["kernel"] == "matmul":
        s.update(M=256, N=512, K=384)
        grid = [cdiv(256, c["BLOCK_M"]) * cdiv(512, c["BLOCK_N"]), 1, 1]
    else:
        s.update(B=1, H=2, T=384)
        grid = [cdiv(384, c["BLOCK_M"]), 2, 1]
    q = dict(p, shape=s, grid=grid)
    q["id"] = p["id"].split("-")[0] + "-" + json.dumps([p["fn"], p["dtype"], s, c], sort_keys=True)
    return q


def check(selected, log) -> dict:
    """Every distinct reduced launch of `selected` run under `minitriton.record()`: its counts against
    `traffic`. {"launches": n, "mismatches": [...]}."""
    import minitriton
    minitriton.install()
    from parity.cost_points import launcher
    todo = {}
    for p in selected:
        q = reduced(p)
        todo.setdefault(q["id"], q)
    mismatches = []
    for q in todo.values():
        t0 = time.perf_counter()
        with minitriton.record() as rec:
            launcher(q, "numpy")()
        r = rec.last
        got = {"tensors": {k: {f: v["totals"][f] for f in FIELDS} for k, v in r["tensors"].items()},
               "dot_flops": r["dot_flops"]["total"]}
        want = traffic(q)
        ok = got == want and list(r["grid"]) == q["grid"]
        if not ok:
            mismatches.append({"launch": q["id"], "record": got, "formula": want})
        log(f"{'ok' if ok else 'MISMATCH'} {time.perf_counter() - t0:5.1f}s {q['id']}")
    return {"launches": len(todo), "mismatches": mismatches}


def _median_ms(entry):
    return statistics.median(m[1] for m in entry["ms"])


def join(gpu: dict, checked: dict) -> dict:
    """The run of record: the GPU file's device and constants, per point its features and times."""
    rows = {}
    for pid, p in gpu["points"].items():
        t = gpu["times"].get(pid)
        row = {"kernel": p["kernel"], "fn": p["fn"], "dtype": p["dtype"], "shape": p["shape"],
               "config": p["config"], "features": features(p)}
        if t:
            medians = [m[1] for m in t["ms"]]
            row.update(ms=_median_ms(t), passes=t["ms"], pass_spread=max(medians) / min(medians) - 1)
        rows[pid] = row
    return {"kind": "cuda-costs", "device": gpu["device"], "constants": gpu["constants"], "method": gpu["method"],
            "gpu_command": gpu["command"], "gpu_seconds": gpu["seconds"], "errors": gpu["errors"],
            "not_reached": gpu["not_reached"], "traffic_check": checked, "points": rows}


def markdown(run: dict) -> str:
    d, k = run["device"], run["constants"]
    smi = d.get("smi", {})
    lines = [f"# GPU costs of kernels/ ({run['date']})", "",
             f"Card: {d.get('name')} ({d.get('sms')} SMs, L2 {d.get('l2_bytes')} B), clocks SM "
             f"{smi.get('clocks.sm')} (max {smi.get('clocks.max.sm')}), memory {smi.get('clocks.mem')}, power limit "
             f"{smi.get('power.limit')}; driver {smi.get('driver_version')}; Triton {d.get('triton')}, torch "
             f"{d.get('torch')}, CUDA {d.get('cuda')}. Measured {d.get('date')}.", "",
             f"Method: {run['method']}. GPU command: `{run['gpu_command']}` ({run['gpu_seconds']} s).", "",
             "## Device constants", ""]
    if k:
        lines.append("| constant | value |\n|---|---|")
        lines.append(f"| empty kernel, GPU time (do_bench median) | {k['empty_kernel_gpu_ms'][1] * 1e3:.2f} us |")
        lines.append(f"| empty kernel, back-to-back from Python (the host's launch path) | {k['empty_kernel_hot_ms'] * 1e3:.2f} us |")
        lines.append(f"| empty kernel, host time per launch | {k['empty_kernel_host_us']:.2f} us |")
        for mb, v in k["copy"].items():
            lines.append(f"| device copy of {mb} MiB | {v['gbs']:.0f} GB/s |")
        for name, v in k["torch_matmul"].items():
            lines.append(f"| torch matmul {v['n']}^3 {name} | {v['tflops']:.1f} TFLOP/s |")
        lines.append("")
        lines.append("Hot re-read of a working set (GB/s; L2 while it fits): " + ", ".join(
            f"{mb} MiB {v['gbs']:.0f}" for mb, v in k["reread"]["by_mb"].items()))
        lines.append("")
    c = run["traffic_check"]
    lines += [f"Traffic formulas against `minitriton.record()`: {c.get('launches', 0)} reduced launches, "
              f"{len(c.get('mismatches', []))} mismatches.", "", "## Points", "",
              "| point | programs | warps | stages | MB moved | GFLOP | ms (median) | pass spread |",
              "|---|---|---|---|---|---|---|---|"]
    for pid, r in run["points"].items():
        f = r["features"]
        ms = f"{r['ms']:.4f}" if "ms" in r else "—"
        spread = f"{r['pass_spread'] * 100:.1f}% ({len(r['passes'])})" if "ms" in r else "—"
        lines.append(f"| {pid} | {f['programs']} | {f['num_warps']} | {f['num_stages']} | "
                     f"{(f['loaded_bytes'] + f['stored_bytes']) / 1e6:.2f} | {f['dot_flops'] / 1e9:.2f} | {ms} | {spread} |")
    if run["errors"] or run["not_reached"]:
        lines += ["", f"Errors: {run['errors']}", f"Not reached: {run['not_reached']}"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m parity.cost_features", description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", help="the gpu-costs-<date>.json parity.gpu_costs wrote")
    ap.add_argument("--out", default="parity/results")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--only", default="", help="kernel families to check, comma-separated")
    a = ap.parse_args(argv)

    def log(msg):
        print(msg, flush=True)

    selected = [p for p in points() if not a.only or p["kernel"] in a.only.split(",")]
    checked = check(selected, log)
    log(f"{checked['launches']} reduced launches, {len(checked['mismatches'])} mismatches")
    if a.check_only or not a.gpu:
        return 1 if checked["mismatches"] else 0
    gpu = json.loads(pathlib.Path(a.gpu).read_text())
    run = join(gpu, checked)
    date = gpu["device"]["date"][:10]
    run["date"] = date
    card = "".join(w for w in gpu["device"].get("name", "gpu").lower().split() if w.startswith(("h1", "h2", "a1", "b2")))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"cuda-costs-{card or 'gpu'}-{date}"
    (out / f"{stem}.json").write_text(results_json(run))
    (out / f"{stem}.md").write_text(markdown(run))
    log(f"wrote {out}/{stem}.json and .md")
    return 1 if checked["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
