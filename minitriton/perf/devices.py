"""The GPUs the cost model knows: each one's constants and the model's fitted parameters, with their sources.

The H100's constants are what the lab's H100 80GB HBM3 measured (parity/results/cuda-costs-h100-2026-12-08:
its SMs and L2 from the driver, `dram_gbs` a 1 GiB device copy, `peak_tflops` torch's 8192^3 matmul per input
type); its parameters are the fit of `python -m parity.cost_model` on half of that run's 273 points. The H200
is the same chip with HBM3e: the H100's numbers, the bandwidth scaled by the spec sheets' 4.8 / 3.35 TB/s,
uncalibrated until it is measured.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuCosts:
    """A device profile of the cost model (minitriton/perf/model.py says how each number is used)."""

    name: str
    sms: int
    l2_bytes: int
    smem_per_sm: int              # bytes of shared memory one SM holds
    dram_gbs: float               # DRAM bandwidth, GB/s (a large device copy)
    peak_tflops: dict             # tl.dot's input precision -> dense TFLOP/s ("fp32": CUDA cores)
    launch_us: float              # fitted from here on
    bw_frac: float                # share of dram_gbs a kernel reaches
    bw_sm_gbs: float              # GB/s one SM draws alone (launches of fewer programs than SMs)
    eff_dot: float                # share of the tensor-core peak a 128 x 256 tile reaches
    eff_tile_exp: float           # that share falls as (tile / (128 x 256)) ** eff_tile_exp
    issue_ns: float               # per element a thread loads or stores
    k: float                      # smooth maximum of the SM's own times (dot, issue, L2)
    l2_gbs: float                 # L2 bandwidth every access passes through
    k_mem: float                  # smooth maximum of DRAM time and the SM's time
    calibrated: str | None        # the measured run it was fitted on; None: from spec sheets
    error: str                    # the validation error shown beside modelled figures

    PARAMETERS = ("launch_us", "bw_frac", "bw_sm_gbs", "eff_dot", "eff_tile_exp", "issue_ns", "k", "l2_gbs", "k_mem")

    def with_parameters(self, values) -> GpuCosts:
        """The same device with the fitted parameters `values` (in PARAMETERS' order)."""
        return dataclasses.replace(self, **dict(zip(self.PARAMETERS, values)))

    def parameters(self) -> tuple:
        return tuple(getattr(self, p) for p in self.PARAMETERS)


H100 = GpuCosts(
    name="H100", sms=132, l2_bytes=52428800, smem_per_sm=233472, dram_gbs=3024.1,
    peak_tflops={"fp16": 744.6, "bf16": 700.9, "tf32": 359.9, "fp32": 51.3},
    launch_us=5.079, bw_frac=1.036, bw_sm_gbs=131.2, eff_dot=0.8444, eff_tile_exp=0.2939, issue_ns=4.017,
    k=28.81, l2_gbs=8925.0, k_mem=1.765,
    calibrated="cuda-costs-h100-2026-12-08 (H100 80GB HBM3, Triton 3.6.0)",
    error="judged on 136 measured launches: median |model/measured - 1| 8.6 %, 90th percentile 24.9 %")

H200 = dataclasses.replace(
    H100, name="H200", dram_gbs=round(H100.dram_gbs * 4.8 / 3.35, 1), calibrated=None,
    error="uncalibrated: the H100's fit with the H200's bandwidth from spec sheets")

PROFILES = {p.name: p for p in (H100, H200)}


def profile(name: str) -> GpuCosts:
    """The device profile called `name`, one of options.MODEL_DEVICES (case-insensitive)."""
    return PROFILES[name.upper()]
