"""A launch's modelled GPU time, its parts and its place on the roofline (docs/cost-model.md).

The features of a launch (`estimate`'s `f`): "programs", "num_warps", "num_stages", "smem" (bytes of shared
memory a program's tiles need, None when it uses none), "moved_bytes" (every byte loaded or stored),
"elements" (elements a program loads or stores), "dot_flops", "precision" (tl.dot's input type: "fp16",
"bf16", "tf32", "fp32") and "dot_tile" (M x N of the kernel's first tl.dot), "unique_bytes" (distinct bytes loaded plus distinct bytes
stored); `per_wave(wave)` gives the bytes the launch draws from DRAM when `wave` programs run at once and its
distinct bytes do not fit in the L2 (`dram_bytes`). The parts, in milliseconds:

* occupancy: programs resident per SM = min(64 // num_warps, shared memory per SM // smem, 32); a wave is
  that many programs on every SM.
* DRAM: `dram_bytes` at the device's bandwidth, or at `bw_sm_gbs` per busy SM when fewer programs than
  SMs run.
* dot: each SM runs its ceil(programs / SMs) programs one after another at its share of the peak for the
  precision, times an efficiency that falls with smaller tiles, so wave quantisation and idle SMs show.
* issue: per wave, a program's elements over its threads at `issue_ns` each.
* L2: every byte loaded or stored passes the L2 at `l2_gbs`.
* time = launch + (dram^k_mem + core^k_mem)^(1/k_mem), core = (dot^k + issue^k + L2^k)^(1/k).
"""
from __future__ import annotations

import math

MAX_PROGRAMS_PER_SM = 32
WARPS_PER_SM = 64


def residency(f: dict, device) -> int:
    """Programs one SM holds at once."""
    by_smem = device.smem_per_sm // f["smem"] if f.get("smem") else MAX_PROGRAMS_PER_SM
    return max(1, min(MAX_PROGRAMS_PER_SM, WARPS_PER_SM // f["num_warps"], by_smem))


def dram_bytes(unique: int, per_wave, wave: int, device) -> float:
    """Bytes from DRAM after the L2: the launch's distinct bytes once when they fit in the L2; else the
    programs run in launch order a wave at a time, bytes the programs of one wave share come once and bytes a
    later wave reads again come again (`per_wave(wave)`: the sum over waves of each wave's distinct bytes)."""
    return unique if unique <= device.l2_bytes else per_wave(wave)


def estimate(f: dict, device, per_wave) -> dict:
    """The modelled time of one launch with features `f` on `device` (a perf.devices.GpuCosts)."""
    P, sms = f["programs"], device.sms
    per_sm = residency(f, device)
    wave = sms * per_sm
    moved = dram_bytes(f["unique_bytes"], per_wave, wave, device)
    bw = device.dram_gbs * device.bw_frac * 1e9
    memory = moved / min(bw, min(P, sms) * device.bw_sm_gbs * 1e9) * 1e3
    dot = 0.0
    peak = device.peak_tflops[f.get("precision") or "fp16"] * 1e12
    if f["dot_flops"]:
        eff = device.eff_dot * min(1.0, (f["dot_tile"] / (128 * 256)) ** device.eff_tile_exp)
        dot = math.ceil(P / sms) * (f["dot_flops"] / P) / (peak / sms * eff) * 1e3
    waves = math.ceil(P / wave)
    issue = waves * f["elements"] / (f["num_warps"] * 32) * device.issue_ns * 1e-6
    l2 = f["moved_bytes"] / (device.l2_gbs * 1e9) * 1e3
    k, k_mem = device.k, device.k_mem
    core = (dot ** k + issue ** k + l2 ** k) ** (1 / k)
    ms = device.launch_us * 1e-3 + (memory ** k_mem + core ** k_mem) ** (1 / k_mem)
    # the roofline: below the ridge (peak flops / bandwidth) a launch is memory-bound
    memory_bound = f["dot_flops"] < moved * peak / (device.dram_gbs * 1e9)
    reached = moved / (ms * 1e-3) / (device.dram_gbs * 1e9) if memory_bound else f["dot_flops"] / (ms * 1e-3) / peak
    return {"device": device.name, "ms": ms, "calibrated": device.calibrated, "error": device.error,
            "parts_ms": {"launch": device.launch_us * 1e-3, "dram": memory, "dot": dot, "issue": issue, "l2": l2},
            "dram_bytes": moved, "programs_per_sm": per_sm, "waves": waves,
            "bound": "memory" if memory_bound else "compute", "percent_of_peak": 100 * reached,
            "gbs": moved / (ms * 1e6), "tflops": f["dot_flops"] / (ms * 1e9)}
