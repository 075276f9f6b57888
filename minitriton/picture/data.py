"""The memory picture's data for one launch record of `minitriton.record(trace_programs=..., accesses=True)`:
every traced program with the element offsets it loaded, stored and updated (as runs of consecutive offsets),
its own counters, each access in order with its kernel line (`steps`), the launch's tensors, the values after
the launch (for the tooltip) and the launch's traffic against the ideal (each input read once, each output
written once). The sandbox page and `python -m minitriton run --picture` draw it.

A launch that failed (its record has "error") is drawn up to the failure: its programs up to the failing one,
which is marked `"failed": true` and has, per tensor and in its failing step, `outside`: the offsets of the
lanes that raised, where they point (outside the tensor); `launch.error` says where it failed.
"""
from __future__ import annotations

import math
import re

import numpy as np

MAX_VALUES = 65536           # elements of a tensor whose values travel to the page (for the tooltip)


def runs(offsets) -> list:
    """Sorted distinct offsets as a flat list of runs [start, length, start, length, ...]."""
    a = np.unique(np.asarray(offsets, dtype=np.int64))
    if a.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(a) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [a.size]))
    out = np.empty(2 * starts.size, np.int64)
    out[0::2] = a[starts]
    out[1::2] = ends - starts
    return out.tolist()


def picture(record: dict) -> dict:
    """The page's data for one traced launch record."""
    grid = [int(g) for g in record["grid"]] + [1] * (3 - len(record["grid"]))
    tensors = {}
    for name, info in record["tensors"].items():
        shape = [int(n) for n in info["shape"]]
        tensors[name] = {"shape": shape, "strides": contiguous_strides(shape), "dtype": info["dtype"],
                         "itemsize": itemsize(info)}
    programs = []
    for entry in sorted(record.get("trace", []), key=lambda e: linear(e["program"], grid)):
        pid = linear(entry["program"], grid)
        accesses, counters = {}, {}
        for name, seen in entry["tensors"].items():
            accesses[name] = {kind: runs(seen.get(kind, [])) for kind in ("loaded", "stored", "atomic")}
            if seen.get("outside"):
                accesses[name]["outside"] = runs(seen["outside"])
            pp = record["tensors"][name]["per_program"]
            counters[name] = {k: int(pp[k][pid]) for k in ("loaded_bytes", "stored_bytes", "masked_load_lanes",
                                                           "masked_store_lanes")}
        programs.append({"program": pad(entry["program"]), "linear": pid, "tensors": accesses, "counters": counters})
        if "error" in record and linear(record["error"]["program"], grid) == pid:
            programs[-1]["failed"] = True
    add_steps(programs, record.get("accesses"), grid)
    launch = {k: v for k, v in record.items() if k not in ("trace", "tensors", "accesses", "values")}
    values = {name: list(v) for name, v in (record.get("values") or {}).items()
              if name in tensors and len(v) <= MAX_VALUES}
    return {"launch": launch, "tensors": tensors, "programs": programs, "traffic": traffic(record),
            **({"values": values} if values else {})}


def add_steps(programs: list, accesses, grid) -> None:
    """Each program's accesses in order as its `steps` (offsets and masked lanes as runs), and all its masked
    lanes per tensor as `masked`."""
    if not accesses:
        return
    by_pid = {p["linear"]: p for p in programs}
    masked: dict = {}
    for a in accesses:
        prog = by_pid.get(linear(a["program"], grid))
        if prog is None:
            continue
        prog.setdefault("steps", []).append({"line": a.get("line"), "kind": a["kind"], "tensor": a["tensor"],
                                             "offsets": runs(a.get("offsets", [])),
                                             "masked": runs(a.get("masked", [])),
                                             **({"outside": runs(a["outside"])} if a.get("outside") else {})})
        masked.setdefault((prog["linear"], a["tensor"]), []).extend(a.get("masked", []))
    for (pid, name), offsets in masked.items():
        by_pid[pid]["tensors"].setdefault(name, {})["masked"] = runs(offsets)


def traffic(record: dict) -> dict:
    """Per tensor and in total: bytes moved, the ideal (each element read once if the launch reads it, written
    once if it writes it) and their ratio, with the masked-off lanes."""
    rows = {}
    total = {"loaded_bytes": 0, "stored_bytes": 0, "ideal_bytes": 0}
    for name, info in record["tensors"].items():
        t = info["totals"]
        numel = math.prod(int(n) for n in info["shape"])
        written = t["stored_elements"] + t["atomic_elements"] > 0
        ideal = numel * itemsize(info) * ((t["loaded_elements"] > 0) + written)
        moved = t["loaded_bytes"] + t["stored_bytes"]
        rows[name] = {"loaded_bytes": t["loaded_bytes"], "unique_loaded_bytes": t["unique_loaded_bytes"],
                      "stored_bytes": t["stored_bytes"], "ideal_bytes": ideal,
                      "ratio": round(moved / ideal, 2) if ideal else None,
                      "masked_load_lanes": t["masked_load_lanes"], "masked_store_lanes": t["masked_store_lanes"]}
        total["loaded_bytes"] += t["loaded_bytes"]
        total["stored_bytes"] += t["stored_bytes"]
        total["ideal_bytes"] += ideal
    moved = total["loaded_bytes"] + total["stored_bytes"]
    total["ratio"] = round(moved / total["ideal_bytes"], 2) if total["ideal_bytes"] else None
    rows["total"] = total
    return rows


def linear(program, grid) -> int:
    """minitriton's linear program id: x slowest, z fastest."""
    x, y, z = pad(program)
    return (x * grid[1] + y) * grid[2] + z


def pad(p) -> list:
    return [int(v) for v in p] + [0] * (3 - len(p))


def contiguous_strides(shape) -> list:
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(int(n), 1)
    return strides


def itemsize(info) -> int:
    t = info["totals"]
    for e, b in (("loaded_elements", "loaded_bytes"), ("stored_elements", "stored_bytes")):
        if t[e]:
            return t[b] // t[e]
    bits = re.search(r"\d+", info["dtype"])
    return max(1, int(bits.group()) // 8) if bits else 4
