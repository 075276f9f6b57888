"""A first GPU cost model, fitted on half the measured points of a `cuda-costs-<card>-<date>.json` and judged on the rest.

    .venv/bin/python -m parity.cost_model parity/results/cuda-costs-<card>-<date>.json

The model is minitriton's (`minitriton.perf.model`: its parts and definitions are there and in
docs/cost-model.md); this module gives it each point's features (`model_features`, from parity.cost_features)
and, because the timed sizes are too large to run under `minitriton.record()`, each wave's distinct bytes by a
formula per kernel (`wave_bytes`; record() counts them from the programs' accesses, and tests/perf checks the
two agree at small sizes). The card's constants (SMs, L2 size, copy bandwidth, torch's dot throughput per
dtype) come from the run; the free parameters (`GpuCosts.PARAMETERS`) are fitted by minimising the squared log
ratio modelled / measured over the fitting half (every other point of each kernel family, in the file's
order); the other half is judged, with the fit and with minitriton's committed profile of that card. The
bandwidth share is held within 5% of the measured copy's.
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np

START = (5.0, 0.9, 40.0, 0.7, 0.5, 1.0, 8.0, 8000.0, 2.0)   # in minitriton.perf.devices.GpuCosts.PARAMETERS' order


FLOAT32_OUTPUTS = ("l_ptr", "rstd_ptr")   # kernels/' statistics outputs: float32 whatever the point's dtype


def _perf():
    """minitriton's cost model (imported when asked for: parity never imports minitriton at module level)."""
    from minitriton.perf import devices, model
    return devices, model


def model_features(row) -> dict:
    """A point's features as minitriton.perf.model.estimate takes them (parity.cost_features gives them)."""
    f = row["features"]
    moved = f["loaded_bytes"] + f["stored_bytes"]
    blocks = f["blocks"]
    elements = sum((t["loaded_bytes"] + t["stored_bytes"]) // (4 if name in FLOAT32_OUTPUTS else f["itemsize"])
                   for name, t in f["tensors"].items())
    return {"programs": f["programs"], "num_warps": f["num_warps"], "num_stages": f["num_stages"],
            "smem": f.get("smem_estimate"), "moved_bytes": moved, "elements": elements / f["programs"],
            "dot_flops": f["dot_flops"], "precision": "tf32" if row["dtype"] == "float32" else "fp16",
            "dot_tile": blocks.get("BLOCK_M", 1) * blocks.get("BLOCK_N", 1),
            "unique_bytes": f["unique_loaded_bytes"] + f["unique_stored_bytes"]}


def wave_bytes(row, wave: int) -> int:
    """The sum over waves of `wave` consecutive programs of each wave's distinct bytes, by formula per kernel
    (the timed sizes are too large to run under minitriton.record(), which counts them from the accesses;
    tests/perf checks the two agree at small sizes)."""
    f, s, c = row["features"], row["shape"], row["config"]
    e = f["itemsize"]
    unique = f["unique_loaded_bytes"] + f["unique_stored_bytes"]
    if row["kernel"] == "rmsnorm":  # every program reads all of w: once per wave
        return unique + (-(-f["programs"] // wave) - 1) * s["cols"] * e
    if row["kernel"] not in ("matmul", "flash_fwd"):
        return unique
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
    # flash: programs (query blocks) of one batch-head share its K and V; a wave holds consecutive ones (every
    # key counted, also where a causal wave reads only up to its last query block: an upper bound there)
    T, D, bh = s["T"], s["D"], s["B"] * s["H"]
    per_bh = -(-T // c["BLOCK_M"])
    heads = np.arange(per_bh * bh) // per_bh
    kv = sum(len(np.unique(heads[w:w + wave])) for w in range(0, len(heads), wave)) * 2 * T * D * e
    return kv + 2 * bh * T * D * e + bh * T * 4


def dram_bytes(row, device) -> float:
    """minitriton's DRAM bytes after the L2 for a point (perf.model.dram_bytes with `wave_bytes`)."""
    _, model = _perf()
    f = model_features(row)
    wave = device.sms * model.residency(f, device)
    return model.dram_bytes(f["unique_bytes"], lambda w: _cached_wave_bytes(row, w), wave, device)


_WAVES: dict = {}


def _cached_wave_bytes(row, wave):
    key = (row["id"], wave)
    if key not in _WAVES:
        _WAVES[key] = wave_bytes(row, wave)
    return _WAVES[key]


def estimate(row, device) -> dict:
    """minitriton's model of a point on `device` (a minitriton.perf.devices.GpuCosts)."""
    _, model = _perf()
    return model.estimate(model_features(row), device, lambda w: _cached_wave_bytes(row, w))


def modelled_ms(row, device, theta=None) -> float:
    """The modelled milliseconds of a point (with the parameters `theta` in place of `device`'s, if given)."""
    return estimate(row, device if theta is None else device.with_parameters(theta))["ms"]


def device_of(run, theta=START):
    """The run's card as a device profile: its measured constants (SMs, L2, copy bandwidth, torch's dot
    throughput), the parameters `theta`."""
    devices, _ = _perf()
    d, c = run["device"], run["constants"]
    return devices.GpuCosts(
        name=d["name"], sms=d["sms"], l2_bytes=d["l2_bytes"], smem_per_sm=d["smem_per_sm"],
        dram_gbs=c["copy"]["1024"]["gbs"], peak_tflops={k: v["tflops"] for k, v in c["torch_matmul"].items()},
        **dict(zip(devices.GpuCosts.PARAMETERS, theta)), calibrated=None, error="")


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
    print("parameters: " + ", ".join(f"{n}={v:.4g}" for n, v in zip(device.PARAMETERS, theta)))
    for name, rows in (("fitting half", fit_rows), ("judged half", judge_rows)):
        e = errors(rows, device, theta)
        print(f"{name}: median |model/measured - 1| = {np.median(e) * 100:.1f}%, "
              f"90th percentile = {np.percentile(e, 90) * 100:.1f}%")
    e = errors(judge_rows, device, theta)
    for kernel in sorted({r["kernel"] for r in judge_rows}):
        k = np.array([x for x, r in zip(e, judge_rows) if r["kernel"] == kernel])
        print(f"  {kernel:11s} judged {len(k):3d}: median {np.median(k) * 100:5.1f}%, "
              f"p90 {np.percentile(k, 90) * 100:5.1f}%")
    devices, _ = _perf()
    for name, profile in devices.PROFILES.items():
        if profile.calibrated and name.lower() in run["device"]["name"].lower():
            e = errors(judge_rows, device, profile.parameters())
            print(f"minitriton's {name} profile ({profile.calibrated}) on the judged half: median "
                  f"{np.median(e) * 100:.1f}%, 90th percentile {np.percentile(e, 90) * 100:.1f}%")
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
