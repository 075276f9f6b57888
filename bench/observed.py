"""What observing costs: workloads on minitriton plain, under `minitriton.record()` (traffic counters), with
the sanitizer on, and with both at once, interleaved in one process, with the ratios to the plain run.

    .venv/bin/python -m bench.observed [--suite lesson|shapes|all] [--only NAME[,NAME]] [--rounds N]

Goals (issue 32): record() and the sanitizer each within 1.5x of the plain run on every workload, both at once
within 2x (the tile shortcuts stay on while observed).
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time

import minitriton

minitriton.install()

from bench import shapes  # noqa: E402  (after install: the kernels are built on minitriton)
from bench.settings import SUITES  # noqa: E402
from bench.workloads import NumpyArrays  # noqa: E402

GOALS = {"record": 1.5, "sanitize": 1.5, "both": 2.0}
MODES = ("plain", "record", "sanitize", "both")


def _observing(mode: str):
    stack = contextlib.ExitStack()
    if mode in ("record", "both"):
        stack.enter_context(minitriton.record())
    if mode in ("sanitize", "both"):
        stack.enter_context(minitriton.set_options(sanitize=True))
    return stack


def _timed(launch, mode: str) -> float:
    start = time.perf_counter()
    with _observing(mode):
        launch()
    return time.perf_counter() - start


def measure(names, rounds: int) -> list[dict]:
    data = shapes.make_data()
    arrays = NumpyArrays()
    rows = []
    for name in names:
        prepared = shapes.BY_NAME[name].setup(data, arrays)
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
    observed = MODES[1:]
    lines = ["| workload | plain ms | " + " | ".join(f"{m} ms | ratio" for m in observed) + " |",
             "|---|---:|" + "---:|---:|" * len(observed)]
    for r in rows:
        cells = [f"{r[m] * 1e3:.1f} | {r[m] / r['plain']:.2f}" + ("" if r[m] / r["plain"] <= GOALS[m] else " ✗")
                 for m in observed]
        lines.append(f"| {r['workload']} | {r['plain'] * 1e3:.1f} | " + " | ".join(cells) + " |")
    lines.append("")
    for mode in observed:
        worst = max(rows, key=lambda r: r[mode] / r["plain"])
        ratio = worst[mode] / worst["plain"]
        verdict = "meets" if ratio <= GOALS[mode] else "misses"
        missed = sum(r[mode] / r["plain"] > GOALS[mode] for r in rows)
        lines.append(f"worst {mode} ratio {ratio:.2f} ({worst['workload']}; {verdict} the goal of {GOALS[mode]}x"
                     + (f", {missed} of {len(rows)} workloads miss it)" if missed else ")"))
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.observed", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", choices=list(SUITES), default="lesson", help="which workloads (default: lesson)")
    p.add_argument("--only", help="comma-separated workload names, of any suite (default: the suite's)")
    p.add_argument("--rounds", type=int, default=5, help="timed launches per mode (median kept)")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else SUITES[args.suite]
    unknown = [n for n in names if n not in shapes.BY_NAME]
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(shapes.BY_NAME)}")
    print(table(measure(names, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
