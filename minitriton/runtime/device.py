"""The GPU minitriton emulates, as scripts see it when they ask the driver (or, under `python -m minitriton
run`, torch.cuda) about their device: an NVIDIA H200. docs/device.md lists every value and who reports it.

The numbers are what Triton 3.6's CUDA driver and torch 2.11 report on the lab's H200 (measured 2026-12-01,
docs/device.md). `kernel.warmup(...)` reports resources for a kernel minitriton never compiles: the
`COMPILED_*` values below, what Triton 3.6 compiled tutorial 02's softmax kernel to on that H200 (num_warps=8,
num_stages=4), so occupancy arithmetic like that tutorial's gives the H200's answer for it.
"""
from __future__ import annotations

from dataclasses import dataclass

from minitriton import errors


@dataclass(frozen=True)
class DeviceProfile:
    """One GPU model: identity, limits (per Triton's `get_device_properties`) and what torch.cuda reports."""

    name: str
    backend: str                  # Triton's GPUTarget.backend
    capability: tuple             # (major, minor); GPUTarget.arch is major * 10 + minor
    warp_size: int
    multiprocessor_count: int
    max_shared_mem: int           # bytes a block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin)
    max_num_regs: int             # 32-bit registers per block
    max_threads_per_sm: int
    max_threads_per_block: int
    shared_mem_per_block: int     # bytes without opting in
    shared_mem_per_sm: int        # bytes
    sm_clock_rate: int            # kHz
    mem_clock_rate: int           # kHz
    mem_bus_width: int            # bits
    total_memory: int             # bytes
    l2_cache_size: int            # bytes

    @property
    def arch(self) -> int:
        return self.capability[0] * 10 + self.capability[1]

    def properties(self) -> dict:
        """`triton.runtime.driver.active.utils.get_device_properties(device)`: Triton's keys."""
        return {"max_shared_mem": self.max_shared_mem, "max_num_regs": self.max_num_regs,
                "multiprocessor_count": self.multiprocessor_count, "warpSize": self.warp_size,
                "sm_clock_rate": self.sm_clock_rate, "mem_clock_rate": self.mem_clock_rate,
                "mem_bus_width": self.mem_bus_width}


H200 = DeviceProfile(
    name="NVIDIA H200", backend="cuda", capability=(9, 0), warp_size=32, multiprocessor_count=132,
    max_shared_mem=232448, max_num_regs=65536, max_threads_per_sm=2048, max_threads_per_block=1024,
    shared_mem_per_block=49152, shared_mem_per_sm=233472, sm_clock_rate=1980000, mem_clock_rate=3201000,
    mem_bus_width=6016, total_memory=150_109_880_320, l2_cache_size=62_914_560)

# What `kernel.warmup(...)` reports (nothing is compiled): registers per thread, spilled registers and the
# shared memory of one program, in bytes.
COMPILED_REGS = 32
COMPILED_SPILLS = 0
COMPILED_SHARED = 12320


def current() -> DeviceProfile:
    """The emulated device."""
    return H200


def check_index(device) -> None:
    """Refuse a device other than the one emulated GPU: accepted are None, 0, "cuda", "cuda:0" and torch
    devices of those (and the CPU, where the emulator's tensors live)."""
    if isinstance(device, str):
        ok = device in ("cuda", "cuda:0", "cpu")
    elif device is None or isinstance(device, int):
        ok = device in (None, 0)
    else:  # a torch.device
        ok = getattr(device, "type", None) in ("cuda", "cpu") and getattr(device, "index", None) in (None, 0)
    if not ok:
        raise errors.python_error(ValueError, errors.diagnostic("device_index", device=repr(device)))
