"""python -m parity --target interpreter|cuda [--only kernels,probes,fuzz,bench] [--fuzz-examples N] [--jobs N]

Runs the sections on minitriton (NumPy, child processes) and on real Triton (interpreter on the CPU, or CUDA),
prints a table and writes parity/results/<target>-<date>.json and .md. Exit status: 0 when every difference is
explained (match, expected divergence, known gap, classified), 1 on any MISMATCH/ERROR or a fuzz mismatch no
rule explains, 3 when the reference backend cannot start. See parity/README.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

from parity import kernel_cases, probes, report, runner
from parity.oracle import PYTHON, REPO_ROOT, OracleUnavailable, Pool
from parity.runner import Row

SECTIONS = ("kernels", "probes", "fuzz", "bench")
RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def log(msg):
    print(f"[parity] {msg}", file=sys.stderr, flush=True)


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m parity", description=__doc__.splitlines()[0])
    p.add_argument("--target", choices=["interpreter", "cuda"], required=True)
    p.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    p.add_argument("--fuzz-examples", type=int, default=None,
                   help="random fragments per seed (default 300 on the interpreter, 12000 on cuda)")
    p.add_argument("--jobs", type=int, default=None, help="reference worker processes (default: 2 / 14 on cuda)")
    p.add_argument("--mt-jobs", type=int, default=None, help="minitriton worker processes (default: jobs // 3 + 1)")
    p.add_argument("--per-kernel", type=int, default=None, help="fuzz fragments packed per kernel (8 / 16 on cuda)")
    p.add_argument("--shards", type=int, default=None, help="hypothesis generation processes per seed (default: cores, "
                   "at most 8)")
    p.add_argument("--seed", default=None,
                   help="fuzz seed(s), comma-separated, to replay a run (default: fresh seeds, printed)")
    p.add_argument("--fuzz-seeds", type=int, default=1, help="fresh fuzz seeds when --seed is not given (default 1)")
    p.add_argument("--fuzz-seconds", type=float, default=None,
                   help="time for generating and running the fuzz cases (default 330 s on cuda, no limit otherwise)")
    p.add_argument("--shrink-seconds", type=float, default=None,
                   help="time for shrinking the fuzz mismatches, all at once (default 240 s)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="shrinking stops after this many seconds of the run (default: no limit)")
    p.add_argument("--bench-budget", type=float, default=330.0, help="seconds for the GPU benchmark")
    p.add_argument("--no-compile", action="store_true", help="GPU benchmark without torch.compile")
    p.add_argument("--quick-bench", action="store_true", help="interpreter bench: one timed launch each")
    p.add_argument("--out", default=None, help="results folder (default parity/results; smoke: a temp folder)")
    p.add_argument("--no-save", action="store_true")
    p.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)   # cuda code paths on the CPU
    a = p.parse_args(argv)
    a.sections = [s.strip() for s in a.only.split(",") if s.strip()]
    bad = [s for s in a.sections if s not in SECTIONS]
    if bad:
        p.error(f"unknown section(s) {bad}; choose from {SECTIONS}")
    gpu = a.target == "cuda" and not a.smoke
    a.jobs = a.jobs or (14 if gpu else 2)
    a.mt_jobs = a.mt_jobs or (a.jobs // 3 + 1)
    a.per_kernel = a.per_kernel or (16 if gpu else 8)
    a.shards = a.shards or min(os.cpu_count() or 1, 8)
    a.shrink_seconds = a.shrink_seconds or 240.0
    a.seeds = [int(s) for s in a.seed.split(",")] if a.seed else []
    if a.fuzz_seconds is None and gpu:
        a.fuzz_seconds = 300.0 * max(len(a.seeds), a.fuzz_seeds)
    a.started = time.monotonic()
    if a.fuzz_examples is None:
        a.fuzz_examples = 12000 if gpu else (40 if a.smoke else 300)
    return a


def section_kernels(target, pools, smoke):
    cases = kernel_cases.kernel_cases(target, small=smoke)
    rows, live = [], []
    for kc in cases:
        why = kc.missing()
        if why:
            rows.append(Row("kernels", kc.name, f"kernels/{kc.module}.py", status="skipped", detail=why))
        else:
            live.append(kc)
    pairs = runner.run_pairs([kc.call() for kc in live], pools, target)
    rows += [runner.judge_kernel(kc, mt, ref, target) for kc, (mt, ref) in zip(live, pairs)]
    return rows


def section_probes(target, pools):
    ps = list(probes.PROBES.values())
    pairs = runner.run_pairs(runner.probe_cases(ps, target), pools, target)
    return [runner.judge_probe(p, *(pair or (None, None)), target) for p, pair in zip(ps, pairs)]


def section_fuzz(a, pools, out_dir):
    from parity.fuzz.run import fresh_seed, run as run_fuzz
    seeds = a.seeds or [fresh_seed() for _ in range(a.fuzz_seeds)]
    log(f"fuzz: seed(s) {', '.join(map(str, seeds))}" + ("" if a.seeds else " (fresh; replay with --seed)"))
    rep = run_fuzz(a.target, a.fuzz_examples, pools, per_kernel=a.per_kernel, shards=a.shards, seeds=seeds,
                   shrink_seconds=a.shrink_seconds, out_dir=out_dir, log=log, budget_s=a.fuzz_seconds,
                   wave=a.jobs * a.per_kernel * 8,
                   stop_at=None if a.max_seconds is None else a.started + a.max_seconds)
    d = rep.as_dict()
    found = len(d["mismatches"])
    rows = [Row("fuzz", f"fuzz ({d['fragments']} fragments, {d['kernels']} kernels)", "hypothesis, seeds " +
                ", ".join(str(s["seed"]) for s in d["seeds"]), comparison="exact / bound", max_err=str(d["unexplained"]),
                status="match" if not d["unexplained"] else "MISMATCH",
                detail=f"{d['matches']} match, {found} mismatch ({found - d['unexplained']} explained by a rule, "
                       f"{len(d['distinct'])} distinct), {len(d['invalid'])} invalid, {d['unresolved']} unresolved; "
                       f"{d['outputs']} outputs ({d['bounded_outputs']} bounded); "
                       f"{d['generated'] - d['fragments'] - d['unresolved']} generated but not run (time budget)")]
    for k, m in enumerate(d["distinct"]):
        rows.append(Row("fuzz", f"fuzz distinct mismatch {k}", m["rule"] or "no rule", comparison="exact / bound",
                        max_err=str(len(m["members"])), status="classified" if m["rule"] else "MISMATCH",
                        detail=f"{len(m['members'])} fragment(s), shrunk to {m['lines']} lines: {m['detail'][:200]}"
                               f" -> {m.get('file', '')}"))
    return rows, d


def section_bench(a):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    if a.target == "interpreter":
        # --no-save: bench/results/ belongs to the bench package; its table is copied into our results
        cmd = [PYTHON, "-m", "bench", "--no-save"] + (["--quick"] if a.quick_bench else [])
        log("bench: " + " ".join(cmd))
        p = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        return {"interpreter_bench": {"command": " ".join(cmd[1:]), "returncode": p.returncode,
                                      "stdout": p.stdout[-20000:], "stderr_tail": p.stderr[-3000:]}}
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "gpubench.json"
        cmd = [PYTHON, "-m", "parity.gpubench", "--budget-s", str(a.bench_budget), "--json", str(path)] + \
              (["--no-compile"] if a.no_compile else [])
        if a.smoke:
            env.update(PARITY_CUDA_SMOKE="1", TRITON_INTERPRET="1")
        log("bench: " + " ".join(cmd[1:]))
        p = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        gpu = json.loads(path.read_text()) if path.exists() else {"fatal": p.stderr[-4000:]}
    return {"gpu": gpu}


def main(argv=None) -> int:
    a = parse(argv)
    if a.target == "cuda" and not a.smoke:
        from kernels.check import cuda_devices
        if not cuda_devices():
            print("parity: --target cuda needs an NVIDIA GPU and its driver, and this machine shows none; "
                  "on the CPU: python -m parity --target interpreter", file=sys.stderr)
            return 3
    started = time.monotonic()
    date = datetime.datetime.now().strftime("%Y-%m-%d")
    if a.smoke:
        os.environ["PARITY_CUDA_SMOKE"] = "1"
    out_dir = pathlib.Path(a.out) if a.out else (pathlib.Path(tempfile.mkdtemp(prefix="parity_smoke_"))
                                                 if a.smoke else RESULTS)
    part = "" if set(a.sections) == set(SECTIONS) else "-" + "+".join(a.sections)
    stem = f"{a.target}{'-smoke' if a.smoke else ''}{part}-{date}"
    if a.sections == ["fuzz"]:
        from parity.fuzz.run import fresh_seed
        a.seeds = a.seeds or [fresh_seed() for _ in range(a.fuzz_seeds)]
        stem += f"-seed{a.seeds[0]}"
    rows, fuzz_report, bench, info = [], None, None, {"minitriton": {}, "reference": {}}
    need_pools = any(s in a.sections for s in ("kernels", "probes", "fuzz"))
    if need_pools:
        try:
            log(f"starting {a.mt_jobs} minitriton and {a.jobs} {a.target} worker(s)")
            mt_pool = Pool("minitriton", a.mt_jobs)
            ref_pool = Pool(a.target, a.jobs)
        except OracleUnavailable as e:
            print(f"parity: the {a.target} backend is not available: {e}", file=sys.stderr)
            return 3
        info = {"minitriton": mt_pool.info, "reference": ref_pool.info}
        pools = {"minitriton": mt_pool, a.target: ref_pool}
        try:
            if "kernels" in a.sections:
                log("kernels ...")
                rows += section_kernels(a.target, pools, a.smoke)
            if "probes" in a.sections:
                log("probes ...")
                rows += section_probes(a.target, pools)
            if "fuzz" in a.sections:
                log(f"fuzz: {a.fuzz_examples} fragments, {a.per_kernel} per kernel ...")
                fuzz_rows, fuzz_report = section_fuzz(a, pools, out_dir / f"fuzz-{stem}")
                rows += fuzz_rows
        finally:
            mt_pool.close()
            ref_pool.close()
    if "bench" in a.sections:
        bench = section_bench(a)
        if a.target == "interpreter":
            print(bench["interpreter_bench"]["stdout"])
    print(report.table(rows))
    summ = report.summary(rows)
    unexplained = len(report.failing(rows))
    print(f"\nsummary: {summ}; unexplained (MISMATCH/ERROR): {unexplained}")
    if bench and "gpu" in bench:
        print(report.bench_markdown(bench))
    result = {"target": a.target + (" (smoke: cuda code paths under TRITON_INTERPRET=1)" if a.smoke else ""),
              "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "command": report.command("python -m parity", argv if argv is not None else sys.argv[1:]),
              "host": {"python": platform.python_version(), "platform": platform.platform(),
                       "cpus": os.cpu_count()},
              "sources": report.source_digest(), "sources_minitriton": report.source_digest(dirs=("minitriton",)),
              "versions": info, "sections": a.sections, "summary": summ, "unexplained": unexplained,
              "seconds": round(time.monotonic() - started, 1), "fuzz": fuzz_report, "bench": bench}
    if not a.no_save:
        jpath, mpath = report.write(out_dir, stem, result, rows)
        log(f"wrote {jpath} and {mpath}")
    if a.smoke:
        return 0
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
