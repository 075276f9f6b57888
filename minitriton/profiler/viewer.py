"""`triton.profiler.viewer` (proton-viewer) for the files minitriton's profiler writes.

    tree, metrics = viewer.parse(["time/ms", "tflop16/s"], "matmul.hatchet")
    viewer.print_tree(tree, metrics)
    python -m minitriton.profiler.viewer -m time/ms,count matmul.hatchet

Every metric is inclusive (a node's own plus its children's). A metric stored in the file (`count`,
`loaded_bytes`, `dot_flops`, a scope's `flops16`, ...) is shown as summed. Times and rates come from the
emulator's wall time: `time/ms` is shown as `emulation_time/ms`, `tflop16/s` (and `gbyte/s`, ...) as
`emulation tflop16/s`, the declared flops (bytes) over that time; none of them is GPU time. `util` (the
fraction of the GPU's peak) needs GPU time and is refused. A metric that no node holds is a RuntimeError, as
in Proton.
"""
from __future__ import annotations

import argparse
import json
import re

_SCALE = {"": 1, "k": 1e3, "g": 1e9, "t": 1e12}
_TIME = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}   # nanoseconds per unit
NOTE = ("(minitriton: times and rates use the emulator's wall time on the CPU, not GPU time; "
        "flops and bytes are the counts the emulator measured or the script declared)")


def _inclusive(node: dict) -> dict:
    """Sum each node's metrics with its children's, into node["inclusive"]."""
    total = {k: v for k, v in node["metrics"].items() if isinstance(v, (int, float))}
    for child in node.get("children", []):
        for k, v in _inclusive(child).items():
            total[k] = total.get(k, 0) + v
    node["inclusive"] = total
    return total


def _column(metric: str, tree: dict):
    """(column name, function of a node's inclusive metrics) for one requested metric."""
    available = tree["inclusive"]

    def stored(name):
        for key in available:
            if name.lower() in (key.lower(), key.split("(")[0].strip().lower()):
                return key
        raise RuntimeError(f"Metric {name} is not found. Use the --list flag to list available metrics")

    per_time = re.fullmatch(r"([kgt]?)(flop|byte)(\d*)/s", metric.lower())
    if metric.lower() == "util":
        raise ValueError("util is the fraction of the GPU's peak in GPU time: minitriton measures no GPU time")
    if metric.lower().split("/")[0] in ("time", "avg_time") and metric.split("/")[-1] in _TIME:
        unit, average = metric.split("/")[-1], metric.startswith("avg")
        clock = stored("emulation_time")
        return (f"{'avg_' if average else ''}emulation_time/{unit}",
                lambda m: m.get(clock, 0) / _TIME[unit] / (m.get("count", 1) or 1 if average else 1))
    if per_time:
        scale, kind, width = per_time.groups()
        amount, clock = stored(("flops" if kind == "flop" else "bytes") + width), stored("emulation_time")
        return (f"emulation {metric}", lambda m: m.get(amount, 0) / (m.get(clock, 0) * 1e-9 or float("nan"))
                / _SCALE[scale])
    if metric.endswith("/%"):
        key = stored(metric[:-2])
        return metric, lambda m: 100.0 * m.get(key, 0) / (available.get(key) or float("nan"))
    key = stored(metric)
    return key, lambda m: m.get(key, 0)


def parse(metrics, filename, include=None, exclude=None, threshold=None):
    """Read a hatchet file; returns (tree, columns): the root with inclusive sums, and one (name, function)
    per metric asked for (names as Proton's viewer spells them)."""
    with open(filename) as f:
        root = json.load(f)[0]
    _inclusive(root)
    return root, [_column(m, root) for m in ([metrics] if isinstance(metrics, str) else metrics)]


def print_tree(tree, metrics, depth=100, format=None, print_sorted=False):  # noqa: A002 - Proton's name
    """Print the tree, one line per frame: each metric's value, then the frame's name."""
    print(" | ".join(name for name, _ in metrics) + "  " + NOTE)

    def show(node, prefix, last, level):
        values = " ".join(f"{fn(node['inclusive']):.4g}" for _, fn in metrics)
        branch = "" if level == 0 else prefix + ("└─ " if last else "├─ ")
        print(f"{branch}{values} {node['frame']['name']}")
        children = node.get("children", [])
        if print_sorted:
            children = sorted(children, key=lambda c: metrics[0][1](c["inclusive"]), reverse=True)
        if level < depth:
            inner = "" if level == 0 else prefix + ("   " if last else "│  ")
            for i, child in enumerate(children):
                show(child, inner, i == len(children) - 1, level + 1)
    show(tree, "", True, 0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m minitriton.profiler.viewer", description=__doc__.splitlines()[0])
    p.add_argument("-m", "--metrics", default="emulation_time", help="comma-separated metrics (default time)")
    p.add_argument("-d", "--depth", type=int, default=100)
    p.add_argument("-l", "--list", action="store_true", help="list the metrics the file holds")
    p.add_argument("file")
    a = p.parse_args(argv)
    if a.list:
        tree, _ = parse([], a.file)
        print("\n".join(sorted(tree["inclusive"])))
        return 0
    tree, columns = parse(a.metrics.split(","), a.file)
    print_tree(tree, columns, depth=a.depth)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
