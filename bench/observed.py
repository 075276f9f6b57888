"""What observing costs: the seven workloads on minitriton plain, under `minitriton.record()` (traffic
counters), with the sanitizer on and with both at once, interleaved in one process, with the ratios to the
plain run.

    .venv/bin/python -m bench.observed [--only NAME[,NAME]] [--rounds N]

Goal: counters and the sanitizer each within 1.5x of the plain run on every workload, both at once within 2x
(the tile shortcuts stay on while observed).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import minitriton

minitriton.install()

from bench import workloads as W  # noqa: E402  (after install: the kernels are built on minitriton)

GOALS = {"record": 1.5, "sanitize": 1.5, "both": 2.0}
MODES = ("plain", "record", "sanitize", "both")


def _timed(launch, mode: str) -> float:
    start = time.perf_counter()
    if mode == "record":
        with minitriton.record():
            launch()
    elif mode == "sanitize":
        with minitriton.set_options(sanitize=True):
            launch()
    elif mode == "both":
        with minitriton.record(), minitriton.set_options(sanitize=True):
            launch()
    else:
        launch()
    return time.perf_counter() - start


def measure(names, rounds: int) -> list[dict]:
    data = W.make_data()
    arrays = W.NumpyArrays()
    rows = []
    for name in names:
        prepared = W.BY_NAME[name].setup(data, arrays)
        for mode in MODES:  # warm-up: kernels compiled, group sizes learned
            _timed(prepared.launch, mode)
        times = {mode: [] for mode in MODES}
        for _ in range(rounds):
            for mode in MODES:
                times[mode].append(_timed(prepared.launch, mode))
        row = {"workload": name, **{mode: statistics.median(t) for mode, t in times.items()}}
        rows.append(row)
        print(f"  {name}: done", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| workload | plain ms | record() ms | ratio | sanitize ms | ratio | both ms | ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['plain'] * 1e3:.1f} | " + " | ".join(
            f"{r[mode] * 1e3:.1f} | {r[mode] / r['plain']:.2f}" for mode in GOALS) + " |")
    lines.append("")
    for mode, goal in GOALS.items():
        worst = max(r[mode] / r["plain"] for r in rows)
        verdict = "meets" if worst <= goal else "misses"
        lines.append(f"worst {mode} ratio {worst:.2f} ({verdict} the goal of {goal}x)")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.observed", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated workload names (default: all seven)")
    p.add_argument("--rounds", type=int, default=5, help="timed launches per mode (median kept)")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else [w.name for w in W.WORKLOADS]
    unknown = [n for n in names if n not in W.BY_NAME]
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(W.BY_NAME)}")
    print(table(measure(names, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
