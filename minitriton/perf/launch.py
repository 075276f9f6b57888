"""A recorded launch's features for the cost model, read from the traffic counters and what they kept.

The DRAM bytes come from the programs' own accesses: the counters keep each program's runs of elements
(observers/unique.py, `program_runs`), and a wave's distinct bytes are the union of its programs' runs. The
shared memory a program needs is that of the 2-D tiles it loads in a kernel that calls `tl.dot` (the operands
staged through shared memory), those loaded again in a loop times `num_stages` (Triton's pipelining buffers).
"""
from __future__ import annotations

import numpy as np

from minitriton.observers.unique import union_length
from minitriton.perf.model import estimate

# tl.dot's input type -> the peak it runs at (fp8 and tf32x3 counted as fp16 and tf32: not measured)
_PEAK = {"ieee": "fp32", "tf32": "tf32", "tf32x3": "tf32", "bf16": "bf16", "fp64": "fp32"}


def shared_memory(tiles: list, num_stages: int) -> int:
    """Bytes of shared memory for the tile loads [(tensor, shape, bytes)] of one pass over a program."""
    seen: dict = {}
    for tensor, shape, size in tiles:
        count, _ = seen.get((tensor, shape), (0, size))
        seen[(tensor, shape)] = (count + 1, size)
    return sum(size * (num_stages if count > 1 else 1) for count, size in seen.values())


def wave_bytes(program_runs: dict, wave: int) -> int:
    """The sum over waves of `wave` consecutive programs of the distinct bytes each wave touches."""
    total = 0
    for runs in program_runs.values():
        waves = np.concatenate([np.asarray(pids)[pos] // wave for pids, pos, _, _, _ in runs]).astype(np.int64)
        starts = np.concatenate([s * unit for _, _, s, _, unit in runs]).astype(np.int64)
        ends = np.concatenate([e * unit for _, _, _, e, unit in runs]).astype(np.int64)
        span = int(ends.max()) + 1
        total += union_length(starts + waves * span, ends + waves * span)
    return total


def features(record: dict, counters) -> dict:
    """The model's features of a launch record (`counters`: the observers.counters.LaunchCounters behind it)."""
    totals = [t["totals"] for t in record["tensors"].values()]
    moved = sum(t["loaded_bytes"] + t["stored_bytes"] + t["atomic_bytes"] for t in totals)
    elements = sum(t["loaded_elements"] + t["stored_elements"] + t["atomic_elements"] for t in totals)
    programs = max(1, record["num_programs"])
    tiles = counters.pass_tiles or []
    flops = record["dot_flops"]["total"]
    tile = counters.dot_tile or (1, 1, "fp16")
    return {"programs": programs, "num_warps": record["num_warps"], "num_stages": record["num_stages"],
            "smem": shared_memory(tiles, record["num_stages"]) if flops and tiles else None,
            "moved_bytes": moved, "elements": elements / programs, "dot_flops": flops, "precision": _PEAK.get(tile[2], "fp16"),
            "dot_tile": tile[0] * tile[1],
            "unique_bytes": sum(t["unique_loaded_bytes"] + t["unique_stored_bytes"] for t in totals)}


def modelled(record: dict, counters, device) -> dict:
    """`record`'s modelled GPU time on `device`: perf.model.estimate of its features, the waves' DRAM bytes
    from the programs' accesses (the launch's distinct bytes when there were too many runs to keep)."""
    f = features(record, counters)
    runs = counters.unique.program_runs
    per_wave = (lambda wave: f["unique_bytes"]) if runs is None else (lambda wave: wave_bytes(runs, wave))
    return estimate(f, device, per_wave)
