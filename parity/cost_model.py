"""A first GPU cost model, fitted on half the measured points of a `cuda-costs-<card>-<date>.json` and judged on the rest.

    .venv/bin/python -m parity.cost_model parity/results/cuda-costs-<card>-<date>.json

Modelled time of one launch (milliseconds), from what minitriton can know without a GPU (the point's
`features`: programs, num_warps, num_stages, shared memory, bytes and `tl.dot` flops) and the card's measured
constants (SMs, L2 size, copy bandwidth, torch's dot throughput per dtype):

* occupancy: programs resident per SM = min(64 // num_warps, shared memory per SM // the tiles' shared memory,
  32); a wave is that many programs per SM.
* DRAM bytes after the L2: programs run in launch order, a wave at a time; bytes shared by the programs of one
  wave come from DRAM once (the L2 keeps them while the wave streams through them), bytes re-read by a later
  wave come again, unless the launch's unique bytes fit in the L2 (`dram_bytes`). For matmul this counts the
  distinct tile rows of A and tile columns of B a wave touches, so GROUP_M changes it.
* memory time: DRAM bytes at the copy bandwidth, or at `bw_sm` per busy SM when fewer programs than SMs run.
* dot time: each SM runs its ceil(programs / SMs) programs one after another at peak / SMs times an efficiency
  that grows with the tile (`eff`), so wave quantisation and idle SMs show.
* issue time: per program, its elements over its threads at `issue` ms each (few warps over many elements).
* L2 time: every byte loaded or stored passes the L2, at `l2_gbs` (small tiles re-read much through it).
* time = launch + (mem^k_mem + core^k_mem)^(1/k_mem), core = (dot^k + issue^k + L2^k)^(1/k): smooth maxima,
  the SM's own work nearly a hard one, DRAM overlapping it less (so DRAM bytes, and GROUP_M, show in a
  compute-bound matmul). The bandwidth is held within 5% of the measured copy's.

The free parameters are fitted by minimising the squared log ratio modelled / measured over the fitting half
(every other point of each kernel family, in the file's order); the other half is judged. This module is the
calibration's prototype: the same arithmetic belongs in minitriton once `record()` reports the launch options
and each wave's unique bytes from the programs' accesses.
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np

PARAMS = ("launch_us", "bw_frac", "bw_sm_gbs", "eff_dot", "eff_tile_exp", "issue_ns", "k", "l2_gbs", "k_mem")
START = (5.0, 0.9, 40.0, 0.7, 0.5, 1.0, 8.0, 8000.0, 2.0)
SMEM_PER_SM = 233472


def residency(f) -> int:
    """Programs one SM holds at once."""
    by_warps = max(1, 64 // f["num_warps"])
    by_smem = SMEM_PER_SM // f["smem_estimate"] if f.get("smem_estimate") else 32
    return max(1, min(32, by_warps, by_smem))


def dram_bytes(row, device) -> float:
    """Bytes from DRAM after the L2, by waves of resident programs in launch order (module docstring)."""
    f, s, c = row["features"], row["shape"], row["config"]
    unique = f["unique_loaded_bytes"] + f["unique_stored_bytes"]
    if unique <= device["l2_bytes"] or row["kernel"] not in ("matmul", "flash_fwd"):
        return unique
    wave = device["sms"] * residency(f)
    e = f["itemsize"]
    if row["kernel"] == "matmul":
        M, N, K = s["M"], s["N"], s["K"]
        bm, bn, g = c["BLOCK_M"], c["BLOCK_N"], c["GROUP_M"]
        tiles_m, tiles_n = -(-M // bm), -(-N // bn)
        pid = np.arange(tiles_m * tiles_n)
        band = pid // (g * tiles_n)
        rows = np.minimum(tiles_m - band * g, g)
        inside = pid - band * g * tiles_n
        tm, tn = band * g + inside % rows, inside // rows
        total = 0
        for w in range(0, len(pid), wave):
            total += len(np.unique(tm[w:w + wave])) * bm * K * e + len(np.unique(tn[w:w + wave])) * bn * K * e
        return total + M * N * e
    # flash: programs (query blocks) of one batch-head share its K and V; a wave holds consecutive ones
    T, D, bh = s["T"], s["D"], s["B"] * s["H"]
    per_bh = -(-T // c["BLOCK_M"])
    heads = np.arange(per_bh * bh) // per_bh
    kv = sum(len(np.unique(heads[w:w + wave])) for w in range(0, len(heads), wave)) * 2 * T * D * e
    return kv + 2 * bh * T * D * e


def modelled_ms(row, device, theta) -> float:
    launch_us, bw_frac, bw_sm, eff_dot, eff_exp, issue_ns, k, l2_gbs, k_mem = theta
    f = row["features"]
    P, sms = f["programs"], device["sms"]
    bw = device["bw_gbs"] * bw_frac * 1e9
    busy = min(P, sms)
    mem = dram_bytes(row, device) / min(bw, busy * bw_sm * 1e9) * 1e3
    dot = 0.0
    if f["dot_flops"]:
        peak = device["peak_tflops"]["tf32" if row["dtype"] == "float32" else "fp16"] * 1e12
        tile = f["blocks"]["BLOCK_M"] * f["blocks"]["BLOCK_N"] / (128 * 256)
        eff = eff_dot * min(1.0, tile ** eff_exp)
        dot = math.ceil(P / sms) * (f["dot_flops"] / P) / (peak / sms * eff) * 1e3
    elements = (f["loaded_bytes"] + f["stored_bytes"]) / f["itemsize"] / P
    waves = math.ceil(P / (sms * residency(f)))
    issue = waves * elements / (f["num_warps"] * 32) * issue_ns * 1e-6
    l2 = (f["loaded_bytes"] + f["stored_bytes"]) / (l2_gbs * 1e9) * 1e3     # every access passes the L2
    core = (dot ** k + issue ** k + l2 ** k) ** (1 / k)
    return launch_us * 1e-3 + (mem ** k_mem + core ** k_mem) ** (1 / k_mem)


def device_of(run) -> dict:
    d, c = run["device"], run["constants"]
    return {"sms": d["sms"], "l2_bytes": d["l2_bytes"], "bw_gbs": c["copy"]["1024"]["gbs"],
            "peak_tflops": {k: v["tflops"] for k, v in c["torch_matmul"].items()}}


def _loss(theta, rows, device):
    if min(theta) <= 0 or theta[1] > 1.05 or theta[3] > 1.2:
        return 1e9
    r = np.array([math.log(modelled_ms(row, device, theta) / row["ms"]) for row in rows])
    return float(np.mean(r * r))


def fit(rows, device, start=START, rounds=6):
    """Parameters minimising the mean squared log ratio (a coordinate search in log space: numpy only)."""
    theta = list(start)
    best = _loss(theta, rows, device)
    step = 0.5
    for _ in range(rounds):
        for _sweep in range(6):
            improved = False
            for i in range(len(theta)):
                for factor in (math.exp(step), math.exp(-step)):
                    trial = list(theta)
                    trial[i] *= factor
                    loss = _loss(trial, rows, device)
                    if loss < best:
                        theta, best, improved = trial, loss, True
            if not improved:
                break
        step /= 2
    return theta, best


def split(run):
    """(fitting half, judged half): every other measured point of each kernel family, in the file's order."""
    seen, fit_rows, judge_rows = {}, [], []
    for pid, row in run["points"].items():
        if "ms" not in row:
            continue
        n = seen.get(row["kernel"], 0)
        seen[row["kernel"]] = n + 1
        (fit_rows if n % 2 == 0 else judge_rows).append(row)
    return fit_rows, judge_rows


def errors(rows, device, theta):
    return np.array([abs(modelled_ms(r, device, theta) / r["ms"] - 1) for r in rows])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    run = json.loads(open(argv[0], encoding="utf-8").read())
    for pid, row in run["points"].items():
        row["id"] = pid
    device = device_of(run)
    fit_rows, judge_rows = split(run)
    theta, loss = fit(fit_rows, device)
    print(f"{run['device']['name']}: fitted on {len(fit_rows)} points, judged on {len(judge_rows)}")
    print("parameters: " + ", ".join(f"{n}={v:.4g}" for n, v in zip(PARAMS, theta)))
    for name, rows in (("fitting half", fit_rows), ("judged half", judge_rows)):
        e = errors(rows, device, theta)
        print(f"{name}: median |model/measured - 1| = {np.median(e) * 100:.1f}%, "
              f"90th percentile = {np.percentile(e, 90) * 100:.1f}%")
    e = errors(judge_rows, device, theta)
    for kernel in sorted({r["kernel"] for r in judge_rows}):
        k = np.array([x for x, r in zip(e, judge_rows) if r["kernel"] == kernel])
        print(f"  {kernel:11s} judged {len(k):3d}: median {np.median(k) * 100:5.1f}%, "
              f"p90 {np.percentile(k, 90) * 100:5.1f}%")
    print(ranking(run, device, theta))
    print(group_m(run, device, theta))
    return 0


def _spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def ranking(run, device, theta) -> str:
    """Spearman's rho between modelled and measured times within each autotune config list (every point)."""
    groups = {}
    for pid, row in run["points"].items():
        if "ms" not in row:
            continue
        c = row["config"]
        if row["kernel"] == "matmul" and row["dtype"] == "float16":
            key = ("matmul", row["shape"]["M"], "GROUP_M", c["GROUP_M"])
        elif row["kernel"] == "flash_fwd" and row["shape"]["T"] == 4096:
            key = ("flash_fwd", row["shape"]["T"], "D", row["shape"]["D"], "causal", c["CAUSAL"])
        else:
            continue
        groups.setdefault(key, []).append((modelled_ms(row, device, theta), row["ms"]))
    lines = ["Spearman rho within each config list (modelled vs measured ranking):"]
    for key, pairs in sorted(groups.items(), key=str):
        if len(pairs) > 2:
            m, t = zip(*pairs)
            lines.append(f"  {' '.join(map(str, key))}: {_spearman(m, t):.2f} ({len(pairs)} configs)")
    return "\n".join(lines)


def group_m(run, device, theta) -> str:
    """GROUP_M = 1 against 8 per matmul size and config: measured and modelled time ratios, modelled L2 hits."""
    by = {}
    for pid, row in run["points"].items():
        if row["kernel"] == "matmul" and row["dtype"] == "float16" and "ms" in row:
            c = row["config"]
            key = (row["shape"]["M"], c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["num_warps"], c["num_stages"])
            by.setdefault(key, {})[c["GROUP_M"]] = row
    agree = total = 0
    lines = ["GROUP_M 1 / 8 time ratio, measured vs modelled; modelled L2 hit rate of loads (1 - DRAM/loaded):"]
    for key, pair in sorted(by.items()):
        if 1 not in pair or 8 not in pair:
            continue
        meas = pair[1]["ms"] / pair[8]["ms"]
        mod = modelled_ms(pair[1], device, theta) / modelled_ms(pair[8], device, theta)
        hits = [1 - dram_bytes(pair[g], device) / (pair[g]["features"]["loaded_bytes"]
                                                  + pair[g]["features"]["stored_bytes"]) for g in (1, 8)]
        total += 1
        agree += (meas > 1.02) == (mod > 1.02)
        if key[0] >= 4096:
            lines.append(f"  n={key[0]} {key[1]}x{key[2]}x{key[3]} w{key[4]} s{key[5]}: measured {meas:.3f}, "
                         f"modelled {mod:.3f}; L2 hits {hits[0] * 100:.0f}% / {hits[1] * 100:.0f}%")
    lines.append(f"  same side of 2% (GROUP_M = 1 slower or not): {agree} of {total} pairs")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
