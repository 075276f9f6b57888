"""`python -m bench --runtime pyodide`: minitriton in the browser's Python against that Python's own NumPy.

Two worker processes run the workloads (``--suite``, ``--only``) on minitriton and, for each, the same work done directly with
vectorised NumPy (bench/floors.py, "the floor"), both timed by the benchmark's method and checked against
the float64 references:
  - Pyodide: `node web/pyodide-node.mjs -m bench --worker minitriton --floors ...`, i.e. the Pyodide the site
    ships, under Node, with NumPy's official Pyodide wheel (wasm32, one thread, no tuned BLAS);
  - CPython: `python -m bench --worker minitriton --floors ...` on this machine (OpenBLAS held to one thread,
    as in the browser).
The table gives, per runtime, minitriton's median time, the floor's and their ratio. Goal: in Pyodide, every
workload within 5x of its floor, except vector_add (a floor of ~0.03 ms), which must take <= 10 ms.
With --save: writes results/<date>-<cpu>-pyodide[-<suite>].json (all launch times) and results/pyodide[-<suite>].md
(the table); the lesson's suite has no suffix.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import time

from bench.__main__ import _busy_cpu_s, _children_cpu_s, machine_info, machine_tag
from bench.settings import PROGRAMS, REPO_ROOT, RESULT_MARK, RESULTS_DIR
from bench.worker import _jsonable, _log

RUNTIMES = ["pyodide", "cpython"]
GOAL_RATIO = 5.0
GOAL_VECTOR_ADD_S = 0.010
NODE_RUNNER = REPO_ROOT / "web" / "pyodide-node.mjs"


def _command(runtime, names, args):
    worker = ["-m", "bench", "--worker", "minitriton", "--floors", "--only", ",".join(names),
              "--max-seconds", str(args.max_seconds), "--timeout", str(args.timeout)]
    if args.quick:
        worker.append("--quick")
    if runtime == "cpython":
        return [sys.executable, *worker]
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH (Pyodide runs under Node: see web/README.md)")
    return [node, str(NODE_RUNNER), *worker]


def run_runtime(runtime, names, args):
    """One worker's report (the bench worker's JSON), with wall time and other processes' load."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("TRITON_INTERPRET", None)
    if args.f32_default != "env":
        env["TRITON_F32_DEFAULT"] = args.f32_default
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    timeout = args.timeout * len(names) * 2 + 300 if args.timeout else None
    t0, busy0, own0 = time.perf_counter(), _busy_cpu_s(), _children_cpu_s()
    try:
        proc = subprocess.run(_command(runtime, names, args), cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                              text=True, timeout=timeout)
        report = next((json.loads(line[len(RESULT_MARK):]) for line in reversed(proc.stdout.splitlines())
                       if line.startswith(RESULT_MARK)), None)
        if report is None:
            report = {"results": {}, "fatal": f"worker exited with code {proc.returncode} without a result"}
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        report = {"results": {}, "fatal": f"{type(exc).__name__}: {exc}"}
    report["wall_s"] = time.perf_counter() - t0
    if busy0 is not None:
        other = (_busy_cpu_s() - busy0) - (_children_cpu_s() - own0)
        report["other_load_cores"] = max(0.0, other / report["wall_s"])
    return report


def _ms(x):
    return "—" if x is None else f"{x * 1e3:.3g}"


def _figures(report, name):
    """(minitriton s, floor s, ratio, problem text or None) of one workload in one runtime's report."""
    r = report.get("results", {}).get(name)
    if r is None:
        return None, None, None, report.get("fatal") or "not run"
    if "error" in r:
        return None, None, None, r["error"]
    floor = r.get("floor") or {}
    mt, fl = r.get("median_s"), floor.get("median_s")
    problem = None
    if not r.get("passed"):
        problem = f"minitriton's max abs error {r.get('max_abs_error')} > {r.get('tol')}"
    elif floor and not floor.get("passed"):
        problem = f"the floor's max abs error {floor.get('max_abs_error')} > {r.get('tol')}"
    return mt, fl, (mt / fl if mt and fl else None), problem


def summarize(reports, names):
    """Table rows, goal lines and problems."""
    rows, goals, problems = [], [], []
    for name in names:
        row = {"workload": name, "programs": PROGRAMS[name]}
        for runtime in RUNTIMES:
            mt, fl, ratio, problem = _figures(reports.get(runtime, {}), name)
            label = "Pyodide" if runtime == "pyodide" else "CPython"
            row[f"{label} mt ms"] = _ms(mt)
            row[f"{label} NumPy ms"] = _ms(fl)
            row[f"{label} ratio"] = "—" if ratio is None else f"{ratio:.1f}x"
            if problem:
                problems.append(f"{label} {name}: {problem}")
            if runtime == "pyodide":
                if mt is None or problem:
                    goals.append(f"{name}: not met (did not run right in Pyodide)")
                elif name == "vector_add":
                    ok = mt <= GOAL_VECTOR_ADD_S
                    goals.append(f"{name}: {mt * 1e3:.3g} ms in Pyodide (goal <= {GOAL_VECTOR_ADD_S * 1e3:.0f} ms: "
                                 f"{'MET' if ok else 'not met'})")
                elif ratio is not None:
                    ok = ratio <= GOAL_RATIO
                    goals.append(f"{name}: {ratio:.1f}x its NumPy floor in Pyodide (goal <= {GOAL_RATIO:.0f}x: "
                                 f"{'MET' if ok else 'not met'})")
        rows.append(row)
    return rows, goals, problems


def _table(rows):
    cols = list(rows[0].keys())
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows])


def main(args, names, argv):
    started = datetime.datetime.now()
    reports = {}
    for runtime in RUNTIMES:
        _log(f"starting the {runtime} worker")
        reports[runtime] = run_runtime(runtime, names, args)
    info = machine_info()
    rows, goals, problems = summarize(reports, names)
    versions = {rt: reports[rt].get("versions", {}) for rt in RUNTIMES}
    mode = "QUICK (1 timed launch each; not a result)" if args.quick else (
        f"median of >= 3 timed launches (until {args.max_seconds:g} s, at most 15)")
    loads = ", ".join(f"{rt} worker {reports[rt]['other_load_cores']:.2f}" for rt in RUNTIMES
                      if "other_load_cores" in reports[rt])
    command = " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])])
    lines = [
        "# minitriton in Pyodide (wasm32) and in CPython, against each runtime's own NumPy",
        "",
        f"- date: {started:%Y-%m-%d %H:%M}; CPU: {info['cpu']}, {info['cores']} cores ({info['os']} {info['arch']})",
        f"- Pyodide: Python {versions['pyodide'].get('python')}, numpy {versions['pyodide'].get('numpy')} "
        f"(Node {_node_version()}); CPython {versions['cpython'].get('python')}, numpy "
        f"{versions['cpython'].get('numpy')} (OpenBLAS 1 thread)",
        f"- method: {mode}; fp32 tl.dot: TRITON_F32_DEFAULT={args.f32_default}; command: `{command}`",
        "- mt = minitriton's launch; NumPy = the same work in vectorised NumPy (bench/floors.py); "
        "ratio = mt / NumPy. Both checked against the float64 references.",
        f"- other processes' CPU use during the run, in cores: {loads or 'unknown'}",
        "",
        _table(rows),
        "",
        "Goals (Pyodide):",
        "",
        *[f"- {g}" for g in goals],
        "",
    ]
    if problems:
        lines += ["Problems:", "", *[f"- {p}" for p in problems], ""]
    for rt in RUNTIMES:
        if reports[rt].get("fatal"):
            lines.append(f"{rt} worker could not run: {reports[rt]['fatal']}")
    text = "\n".join(lines)
    print()
    print(text)
    if args.save:
        RESULTS_DIR.mkdir(exist_ok=True)
        suite = "" if args.suite == "lesson" else f"-{args.suite}"
        tag = machine_tag(info) + "-pyodide" + suite + ("-quick" if args.quick else "")
        path = RESULTS_DIR / f"{started:%Y-%m-%d}-{tag}.json"
        payload = {"date": started.isoformat(timespec="seconds"), "machine": info, "command": command,
                   "options": {"only": names, "quick": args.quick, "max_seconds": args.max_seconds,
                               "f32_default": args.f32_default},
                   "goals": goals, "problems": problems, "reports": reports}
        path.write_text(json.dumps(_jsonable(payload), indent=1) + "\n")
        print(f"\nwrote {path.relative_to(REPO_ROOT)}")
        if not args.quick:
            summary = RESULTS_DIR / f"pyodide{suite}.md"
            summary.write_text(text + f"\nFull data: `{path.relative_to(REPO_ROOT / 'bench')}`\n")
            print(f"wrote {summary.relative_to(REPO_ROOT)}")
    unmet = [g for g in goals if "not met" in g]
    return 1 if problems or unmet or any(reports[rt].get("fatal") for rt in RUNTIMES) else 0


def _node_version():
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run `python -m bench --runtime pyodide`")
