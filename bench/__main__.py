"""Speed benchmark: Triton's interpreter vs minitriton on the seven baseline workloads.

    python -m bench [--only NAME[,NAME]] [--backend interpreter|minitriton|both] [--quick]
                    [--max-seconds S] [--timeout S] [--json PATH] [--save]

The parent process starts one worker subprocess per backend (``python -m bench --worker BACKEND``),
reads one JSON line back from each worker's stdout and prints the comparison table. It writes nothing
unless asked: ``--json PATH`` for the run's data, ``--save`` for a run of record in bench/results/. See
bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bench.settings import (BACKENDS, DEFAULT_BUDGET_S, GEOMEAN_SET, KNOWN_INTERPRETER_BUGS, MAX_TIMED, MIN_TIMED, PROGRAMS,
                            REPO_ROOT, RESULT_MARK, RESULTS_DIR, SUITES, TARGET_GEOMEAN, TARGET_MATMUL, TARGET_MEM,
                            TARGET_VS_FLOOR, TARGET_VS_INTERPRETER, TOLERANCE)
from bench.worker import _jsonable, _log, _num, worker_main


# --------------------------------------------------------------------------------------------------
# Parent: start workers, print and save the table
# --------------------------------------------------------------------------------------------------


def run_worker(backend, names, args):
    cmd = [sys.executable, "-m", "bench", "--worker", backend, "--only", ",".join(names),
           "--max-seconds", str(args.max_seconds), "--timeout", str(args.timeout)]
    if args.quick:
        cmd.append("--quick")
    if backend == "minitriton":
        cmd.append("--floors")      # the NumPy floor of each workload, timed in the same process
    env = dict(os.environ)
    if backend == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    if args.f32_default != "env":
        env["TRITON_F32_DEFAULT"] = args.f32_default
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc_timeout = args.timeout * len(names) + 120 if args.timeout else None
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True,
                              timeout=proc_timeout)
    except subprocess.TimeoutExpired:
        return {"backend": backend, "results": {}, "fatal": f"worker timed out after {proc_timeout} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    tail = proc.stdout.strip().splitlines()[-5:]
    return {"backend": backend, "results": {},
            "fatal": f"worker exited with code {proc.returncode} without a result; stdout tail: {tail}"}


def _busy_cpu_s():
    """CPU seconds the whole machine has spent busy (from /proc/stat), or None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s():
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def machine_info():
    model, cores = None, os.cpu_count()
    try:
        text = Path("/proc/cpuinfo").read_text()
        m = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
        model = m.group(1).strip() if m else None
    except OSError:
        pass
    model = model or platform.processor() or platform.machine()
    return {"cpu": model, "cores": cores, "os": platform.system(), "arch": platform.machine()}


def machine_tag(info):
    words = re.sub(r"\(.*?\)|\b(CPU|Processor|with|Radeon.*|@.*)\b", " ", info["cpu"] or "cpu")
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:40].strip("-") or "cpu"
    return f"{slug}-{info['cores']}c"


def _status(backend, name, r):
    if r is None:
        return "—"
    if "error" in r:
        return "ERROR"
    if r["passed"]:
        return "pass"
    if backend == "interpreter" and name in KNOWN_INTERPRETER_BUGS:
        return "known bug"
    return "FAIL"


def _result(name, ri, rm):
    """One word for the row: `pass` when every backend that ran is within the tolerance (the interpreter's
    known bugs excepted, marked †), else which backend failed and how."""
    si, sm = _status("interpreter", name, ri), _status("minitriton", name, rm)
    bad = [f"{label} {s}" for label, s in (("interp", si), ("mt", sm)) if s in ("ERROR", "FAIL")]
    if bad:
        return ", ".join(bad)
    if si == sm == "—":
        return "—"
    return "pass†" if si == "known bug" else "pass"


def _fmt_ms(x):
    return "—" if x is None else f"{x * 1e3:.3g}"


def _goal(value, met):
    return "—" if value is None else "met" if met else "NO"


def _fmt_us(x):
    return "—" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _fmt_err(x):
    if x is None:
        return "—"
    x = _num(x)
    return "0" if x == 0 else f"{x:.2g}"


def summarize(reports, names):
    """Rows of the table, the target lines, the ratios and a one-line headline (the speed ratios of the
    interpreter over minitriton and the worst peak memory; tools/main.sh's summary shows it)."""
    rows, ratios, floor_ratios = [], {}, {}
    for name in names:
        ri = reports.get("interpreter", {}).get("results", {}).get(name)
        rm = reports.get("minitriton", {}).get("results", {}).get(name)
        mi = ri.get("median_s") if ri else None
        mm = rm.get("median_s") if rm else None
        mf = (rm.get("floor") or {}).get("median_s") if rm else None
        ratio = mi / mm if mi and mm else None
        over_floor = mm / mf if mm and mf else None
        if ratio is not None:
            ratios[name] = ratio
        if over_floor is not None:
            floor_ratios[name] = over_floor
        rows.append({
            "workload": name + ("*" if name in KNOWN_INTERPRETER_BUGS else ""),
            "programs": PROGRAMS[name],
            "interp ms": _fmt_ms(mi),
            "mt ms": _fmt_ms(mm),
            "NumPy ms": _fmt_ms(mf),
            "vs interp": "—" if ratio is None else f"{ratio:.1f}x",
            "vs NumPy": "—" if over_floor is None else f"{over_floor:.1f}x",
            f">={TARGET_VS_INTERPRETER:.0f}x interp": _goal(ratio, ratio is not None and ratio >= TARGET_VS_INTERPRETER),
            f"<={TARGET_VS_FLOOR:.0f}x NumPy": _goal(over_floor, over_floor is not None
                                                     and over_floor <= TARGET_VS_FLOOR),
            "tol": _fmt_err(TOLERANCE[name]),
            "interp err": _fmt_err(ri.get("max_abs_error") if ri else None),
            "mt err": _fmt_err(rm.get("max_abs_error") if rm else None),
            "result": _result(name, ri, rm),
            "mt mem": "—" if not rm or rm.get("mem_ratio") is None else f"{rm['mem_ratio']:.2f}x",
        })

    targets, heads = [], []
    in_mean = [ratios[n] for n in GEOMEAN_SET if n in ratios and n in names]
    wanted = [n for n in GEOMEAN_SET if n in names]
    if in_mean:
        gm = math.exp(sum(math.log(r) for r in in_mean) / len(in_mean))
        partial = "" if len(in_mean) == len(wanted) == len(GEOMEAN_SET) else f" (over {len(in_mean)} of 6)"
        targets.append(f"geomean speed ratio{partial}: {gm:.1f}x  (target >= {TARGET_GEOMEAN:.0f}x: "
                       f"{'MET' if gm >= TARGET_GEOMEAN else 'not met'})")
        heads.append(f"geomean {gm:.1f}x{partial}" + ("" if gm >= TARGET_GEOMEAN else " (target NOT MET)"))
    elif wanted:
        targets.append(f"geomean speed ratio: — (needs both backends; target >= {TARGET_GEOMEAN:.0f}x)")
    if "matmul_fp32" in ratios:
        r = ratios["matmul_fp32"]
        targets.append(f"matmul_fp32 512^3 ratio: {r:.1f}x  (target >= {TARGET_MATMUL:.0f}x: "
                       f"{'MET' if r >= TARGET_MATMUL else 'not met'})")
        heads.append(f"matmul_fp32 {r:.1f}x" + ("" if r >= TARGET_MATMUL else " (target NOT MET)"))
    elif "matmul_fp32" in names:
        targets.append(f"matmul_fp32 512^3 ratio: —  (target >= {TARGET_MATMUL:.0f}x)")
    mems = {n: r["mem_ratio"] for n, r in reports.get("minitriton", {}).get("results", {}).items()
            if r.get("mem_ratio") is not None}
    if mems:
        worst = max(mems, key=mems.get)
        targets.append(f"minitriton peak memory / array bytes, worst: {mems[worst]:.2f}x ({worst})  "
                       f"(target <= {TARGET_MEM:.0f}x: {'MET' if mems[worst] <= TARGET_MEM else 'not met'})")
        heads.append(f"peak memory {mems[worst]:.2f}x the arrays"
                     + ("" if mems[worst] <= TARGET_MEM else " (target NOT MET)"))
    else:
        targets.append(f"minitriton peak memory: —  (target <= {TARGET_MEM:.0f}x the array bytes)")
    if "matmul_bf16" in ratios:
        targets.append(f"matmul_bf16 ratio (shown, not in the geomean): {ratios['matmul_bf16']:.1f}x")
    targets_met = all("not met" not in t for t in targets)
    headline = ", ".join(heads) + (" (targets met)" if heads and targets_met else "")
    if ratios:
        met = sum(r >= TARGET_VS_INTERPRETER for r in ratios.values())
        targets.append(f"per workload, >= {TARGET_VS_INTERPRETER:.0f}x the interpreter: {met} of {len(ratios)}")
    if floor_ratios:
        met = sum(r <= TARGET_VS_FLOOR for r in floor_ratios.values())
        targets.append(f"per workload, <= {TARGET_VS_FLOOR:.0f}x the NumPy floor: {met} of {len(floor_ratios)}")
    return rows, targets, ratios, headline


def _table(rows, markdown):
    cols = list(rows[0].keys())
    cells = [[str(r[c]) for c in cols] for r in rows]
    if markdown:
        lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
    fmt = lambda vals: "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in
                                 enumerate(zip(vals, widths)))
    return "\n".join([fmt(cols), fmt(["-" * w for w in widths])] + [fmt(c) for c in cells])


def _problems(reports):
    """(problems, known): what went wrong (errors, results outside the tolerance), and separately the
    interpreter's known bugs showing as expected."""
    problems, known = [], []
    for backend in BACKENDS:
        rep = reports.get(backend)
        if not rep:
            continue
        if rep.get("fatal"):
            problems.append(f"{backend}: could not run: {rep['fatal']}")
        for name, r in rep.get("results", {}).items():
            if "error" in r:
                problems.append(f"{backend} {name}: {r['error']}")
            elif not r["passed"]:
                line = (f"{backend} {name}: max abs error {_fmt_err(r['max_abs_error'])} > {_fmt_err(r['tol'])}")
                bug = KNOWN_INTERPRETER_BUGS.get(name) if backend == "interpreter" else None
                if bug:
                    known.append(f"{line}: the interpreter's known bug ({bug})")
                else:
                    problems.append(f"{line} (outside the tolerance); per output {r['error_per_output']}")
            floor = r.get("floor")
            if floor and not floor["passed"]:
                problems.append(f"the NumPy floor of {name}: max abs error {_fmt_err(floor['max_abs_error'])} > "
                                f"{_fmt_err(r['tol'])}")
    return problems, known


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--suite", choices=list(SUITES), default="lesson",
                   help="lesson: the lesson's seven workloads (the default, what tools/main.sh runs); shapes: the "
                        "eight shapes of bench/shapes.py; all: both")
    p.add_argument("--only", help="comma-separated workload names, of any suite (default: the suite's)")
    p.add_argument("--backend", choices=["interpreter", "minitriton", "both"], default="both")
    p.add_argument("--quick", action="store_true", help="1 timed launch per workload (smoke test)")
    p.add_argument("--max-seconds", type=float, default=DEFAULT_BUDGET_S,
                   help="timing budget per workload and backend: timed launches continue until this many "
                        "seconds are spent (at least 3, at most 15 launches; default 2)")
    p.add_argument("--timeout", type=float, default=600,
                   help="abort a workload (reported as an error) after this many seconds (default 600)")
    p.add_argument("--f32-default", choices=["ieee", "tf32", "env"], default="ieee",
                   help="TRITON_F32_DEFAULT for both workers, i.e. the precision of fp32 tl.dot (default ieee: "
                        "what the interpreter computes and what the baseline's tolerances assume; tf32 is the "
                        "GPU's default, which minitriton emulates; env: leave the environment alone)")
    p.add_argument("--json", metavar="PATH", help="write the run's data (times, errors, versions) to PATH")
    p.add_argument("--save", action="store_true",
                   help="a run of record: write bench/results/<date>-<time>-<machine>[-<suite>].json and "
                        "latest.md (shapes.md, all.md) (a full run only: a whole suite, both backends, not --quick)")
    p.add_argument("--no-save", action="store_true", help=argparse.SUPPRESS)  # the default; kept for callers
    p.add_argument("--runtime", choices=["cpython", "pyodide"], default="cpython",
                   help="pyodide: minitriton and the NumPy floor inside Pyodide (Node) beside CPython, see "
                        "bench/runtimes.py (default cpython: minitriton against Triton's interpreter)")
    p.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    p.add_argument("--floors", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    suite = SUITES[args.suite]
    args.names = suite if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in args.names if n not in SUITES["all"]]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; choose from {SUITES['all']}")
    if args.save and (args.quick or args.backend != "both" or args.names != suite):
        p.error("--save records full runs only: a whole suite, both backends, without --quick")
    return args


def main(argv=None):
    args = _parse(argv)
    names = args.names
    if args.worker:
        worker_main(args.worker, names, args.quick, args.max_seconds, args.timeout, args.floors)
        return 0
    if args.runtime == "pyodide":
        from bench import runtimes

        return runtimes.main(args, names, argv)

    backends = BACKENDS if args.backend == "both" else [args.backend]
    started = datetime.datetime.now()
    reports = {}
    for backend in backends:
        _log(f"starting the {backend} worker")
        t0, busy0, own0 = time.perf_counter(), _busy_cpu_s(), _children_cpu_s()
        reports[backend] = run_worker(backend, names, args)
        wall = time.perf_counter() - t0
        reports[backend]["wall_s"] = wall
        if busy0 is not None:
            # CPU used by *other* processes while this worker ran, in cores: contention inflates times.
            other = (_busy_cpu_s() - busy0) - (_children_cpu_s() - own0)
            reports[backend]["other_load_cores"] = max(0.0, other / wall)

    info = machine_info()
    versions = {}
    for rep in reports.values():
        versions.update({k: v for k, v in (rep.get("versions") or {}).items() if v is not None})
    rows, targets, ratios, headline = summarize(reports, names)
    problems, known = _problems(reports)

    header = (f"{started:%Y-%m-%d %H:%M}  |  {info['cpu']}, {info['cores']} cores  |  Python "
              f"{versions.get('python', platform.python_version())}, numpy {versions.get('numpy')}, "
              f"triton {versions.get('triton')}, torch {versions.get('torch')}"
              + (f" ({versions['torch_threads']} threads)" if "torch_threads" in versions else ""))
    mode = "QUICK (1 timed launch each; not a result)" if args.quick else (
        f"median of >= {MIN_TIMED} timed launches (until {args.max_seconds:g} s, at most {MAX_TIMED})")
    f32_default = os.environ.get("TRITON_F32_DEFAULT", "unset") if args.f32_default == "env" else args.f32_default
    loads = {b: r["other_load_cores"] for b, r in reports.items() if "other_load_cores" in r}
    load_note = None
    if loads:
        load_note = ("Other processes' CPU use during the run, in cores (of " + str(info["cores"]) + "): "
                     + ", ".join(f"{b} worker {v:.2f}" for b, v in loads.items()))
        if max(loads.values()) > 0.25:
            load_note += "  -- WARNING: the machine was busy; times are inflated and ratios less reliable."
    bf16_arrays = reports.get("minitriton", {}).get("results", {}).get("matmul_bf16", {}).get("arrays")
    notes = [
        "ms = median milliseconds per launch; NumPy = the same work as vectorised NumPy (the floor, timed in the "
        "minitriton worker); vs interp = interpreter / minitriton; vs NumPy = minitriton / floor; err = max abs "
        "error vs a float64 NumPy reference; mt mem = (array bytes + tracemalloc peak of one extra launch) / "
        "array bytes.",
        "Interpreter: TRITON_INTERPRET=1, torch CPU tensors. minitriton: NumPy arrays"
        + (f" (matmul_bf16: {bf16_arrays})." if bf16_arrays else "."),
        f"BLAS threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}.",
        f"fp32 tl.dot precision: TRITON_F32_DEFAULT={f32_default} "
        + ("(the interpreter ignores it and always computes plain fp32)." if f32_default != "tf32" else
           "(the GPU default; the interpreter ignores it and computes plain fp32, so fp32 dot workloads "
           "cannot meet the baseline's fp32 tolerances on minitriton)."),
    ]
    if "matmul_bf16" in names:
        notes.insert(1, "* not in the geomean: Triton's interpreter computes bf16 dots wrongly ("
                     f"{KNOWN_INTERPRETER_BUGS['matmul_bf16']})" + ("; † minitriton passes, the interpreter "
                                                                    "shows that bug." if known else "."))
    if load_note:
        notes.append(load_note)

    print()
    print(header)
    print(mode)
    print()
    print(_table(rows, markdown=False))
    print()
    for t in targets:
        print("  " + t)
    if problems:
        print("\nProblems:")
        for line in problems:
            print("  - " + line)
    print()
    for n in notes:
        print(textwrap.fill(n, width=110, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))

    payload = {"date": started.isoformat(timespec="seconds"), "machine": info, "versions": versions,
               "options": {"only": names, "backend": args.backend, "quick": args.quick,
                           "max_seconds": args.max_seconds, "f32_default": f32_default},
               "ratios": ratios, "targets": targets, "headline": headline, "problems": problems, "known_interpreter_bugs": known,
               "reports": reports}
    if args.json:
        Path(args.json).write_text(json.dumps(_jsonable(payload), indent=1) + "\n")
    if args.save:
        RESULTS_DIR.mkdir(exist_ok=True)
        suffix = "" if args.suite == "lesson" else f"-{args.suite}"
        path = RESULTS_DIR / f"{started:%Y-%m-%d-%H%M}-{machine_tag(info)}{suffix}.json"
        summary = RESULTS_DIR / ("latest.md" if args.suite == "lesson" else f"{args.suite}.md")
        path.write_text(json.dumps(_jsonable(payload), indent=1) + "\n")
        md = [
            "# minitriton speed benchmark: latest run of record",
            "",
            f"- date: {started:%Y-%m-%d %H:%M}",
            f"- CPU: {info['cpu']}, {info['cores']} cores ({info['os']} {info['arch']})",
            f"- Python {versions.get('python')}, numpy {versions.get('numpy')}, triton "
            f"{versions.get('triton')}, torch {versions.get('torch')}"
            + (f" ({versions['torch_threads']} intra-op threads)" if "torch_threads" in versions else ""),
            f"- method: {mode}; command: `"
            + " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])]) + "`",
            f"- full data: `{path.relative_to(REPO_ROOT / 'bench')}`",
            "",
            _table(rows, markdown=True),
            "",
            *[f"- {t}" for t in targets],
            "",
        ]
        if problems:
            md += ["Problems:", "", *[f"- {line}" for line in problems], ""]
        md += notes + [""]
        summary.write_text("\n".join(md))
        print(f"\nwrote {path.relative_to(REPO_ROOT)} and {summary.relative_to(REPO_ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
