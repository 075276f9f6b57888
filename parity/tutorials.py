"""Triton's official tutorials, unmodified, on minitriton: each runs under `python -m minitriton run`.

    python -m parity.tutorials --dir .tutorials --fetch        # download the pinned files first (github.com)
    python -m parity.tutorials --dir .tutorials                # run all; writes parity/results/tutorials-<date>
    python -m parity.tutorials --dir .tutorials --only 02,05 --no-save
    python -m parity.tutorials --dir .tutorials --real         # the same on real Triton (a GPU machine)

The tutorials are Triton's (python/tutorials of triton-lang/triton), not the project's: they are pinned below
by commit and SHA-256 and kept outside the repository (DIR; `.tutorials/` is git-ignored). A file whose hash
differs is reported as `changed` and not run. Each runs in its own process, `python -m minitriton run
--no-bench -m parity.tutorial_run FILE` (benchmarks skipped, everything else as written), statement by
statement (parity/tutorial_run.py), then its parametrized pytest checks (06 keeps its check in `test_op`),
then for 03, 05 and 08 the comparison with float64 (parity/tutorial_accuracy.py: misrounded elements, beyond
chance, and mean difference, no more than the tutorial's own reference). Exit status 0 when every tutorial ran to its end and
each compared output is no further from float64 than the tutorial's own reference; 1 otherwise; 2 when files
are missing.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

from parity.oracle import PYTHON, REPO_ROOT, cpu_model

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
SOURCE = "https://raw.githubusercontent.com/triton-lang/triton/{commit}/python/tutorials/{name}.py"
# name -> (commit of triton-lang/triton, SHA-256 of the file): the versions of Triton 3.4-3.6's time that
# use only APIs Triton 3.6 and 3.9 share (06: host TensorDescriptor kernels; 08: in-kernel descriptors)
PINNED = {
    "01-vector-add": ("545699290b851e70231ee3017481851170f1583d",
                      "842430949e0ccde4fbce07606cce3ac4bac36bf21b2b12619a31b795ca4029b3"),
    "02-fused-softmax": ("fd237c7cf9a7262f32fedbaa5027ab2736ead134",
                         "310c1b12948e1081e032e8c8544bba81d99c0577ad0d896d7ec8c90b44b1e09c"),
    "03-matrix-multiplication": ("7649d87cce6c12361bb9da234b9b227b2880b499",
                                 "540a224365e974e8a407282924101723aa9ba62233bf64d1556cd5627572abed"),
    "04-low-memory-dropout": ("7fd4724371b3a1ab786c0610df19c7683cb6a23b",
                              "43ea69769349d20654fe7bb983e60ad9c38591d195891caf3a56053d9b0ab788"),
    "05-layer-norm": ("545699290b851e70231ee3017481851170f1583d",
                      "31cda7bf7bb9b637ea662b789188d37ff5981c3973626d4e2a293db633f3bb87"),
    "06-fused-attention": ("003da478d84f5bb0f51b3988cf0ea0bbe60282b7",
                           "adf8870b34df3c3f6b1130935c5eb61d719585aa8ac96e6cb26174cc2e796d5e"),
    "08-grouped-gemm": ("7649d87cce6c12361bb9da234b9b227b2880b499",
                        "a0e1a521044fd34006316680a94c7e225e634217e3c4a38a096ff8552eb47966"),
}


def log(msg: str) -> None:
    print(f"[tutorials] {msg}", file=sys.stderr, flush=True)


def digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(folder: pathlib.Path, names) -> None:
    """Download the pinned tutorials into `folder`, checking each file's hash."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        commit, sha = PINNED[name]
        path = folder / f"{name}.py"
        if path.exists() and digest(path) == sha:
            continue
        with urllib.request.urlopen(SOURCE.format(commit=commit, name=name), timeout=60) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != sha:
            raise RuntimeError(f"{name}.py at {commit[:12]} does not have the pinned SHA-256 {sha[:16]}...")
        path.write_bytes(data)
        log(f"fetched {name}.py ({commit[:12]})")


def run_one(path: pathlib.Path, real: bool, timeout: float) -> dict:
    """One tutorial in its own process; the child's JSON record plus its exit status and output's tail."""
    with tempfile.TemporaryDirectory(prefix="tutorial-report-") as tmp:
        report = pathlib.Path(tmp) / "report.json"
        child = ["-m", "parity.tutorial_run", str(path), str(report), "--pytest", "--accuracy"]
        cmd = [PYTHON] + (child + ["--real", "--no-bench"] if real else
                          ["-m", "minitriton", "run", "--no-bench"] + child)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
            status, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as e:
            status, output = "timeout", ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes)
                                         else (e.stdout or ""))
        record = json.loads(report.read_text()) if report.exists() else {}
        record.update(exit_status=status, output_tail=output[-4000:], wall_seconds=round(time.perf_counter() - start, 1))
        return record


def scrub(text: str, folder: pathlib.Path) -> str:
    """`text` without this machine's paths: the tutorials' folder becomes DIR/, the repository's root and any
    other absolute path up to a `site-packages/` go, so tracebacks read `minitriton/...`, `torch/...`."""
    text = text.replace(str(folder.resolve()) + os.sep, "DIR/")
    text = text.replace(str(REPO_ROOT) + os.sep, "")
    return re.sub(r"(?<![\w.])/[^\s\"']*?site-packages/", "", text)


def verdict(record: dict) -> dict:
    """What the record says: ran to the end, the tutorial's own checks, the float64 comparison."""
    failed = [s for s in record.get("statements", []) if s["status"] != "ok"]
    tests = record.get("pytest")
    accuracy = record.get("accuracy") or {}
    outputs = [o for o in accuracy.get("outputs", []) if "kernel" in o]
    checks_fail = [s for s in failed if s["error"] == "AssertionError"]
    checks_fail += [o for o in outputs if not o["tutorial_check_passes"]]
    if tests is not None and tests["exit_code"] != 0:
        checks_fail.append(tests)
    crashed = [s for s in failed if s["error"] != "AssertionError"] or record.get("exit_status") not in (0, None)
    crashed = crashed or "error" in accuracy or any("error" in o for o in accuracy.get("outputs", []))
    return {"ran_to_end": bool(record.get("statements")) and not crashed,
            "own_checks_pass": not checks_fail and bool(record.get("statements")),
            "no_further_than_reference": all(o["no_further"] for o in outputs) if outputs else None}


def markdown(result: dict) -> str:
    lines = [f"# Triton's tutorials on {result['backend']} ({result['date']})", "",
             f"`python -m parity.tutorials --dir DIR{' --real' if result['backend'] != 'minitriton' else ''}` on "
             f"{result['machine']['cpu']} ({result['machine']['cores']} cores), Python {result['machine']['python']}, "
             f"{', '.join(f'{k} {v}' for k, v in result['versions'].items())}. Each tutorial runs unmodified, "
             f"statement by statement, benchmarks skipped; a failing statement is listed and the next one runs. "
             f"03, 05 and 08 check their kernels against torch on the script's device; each compared output is also "
             f"measured against float64, next to that reference (misrounded: elements that differ from the float64 "
             f"result rounded to the output's type).", "",
             "| tutorial | pinned commit | statements ok | failing statements | pytest | own checks | ran to end "
             "| no further from float64 than its reference | seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for name, rec in result["tutorials"].items():
        if rec.get("status"):
            lines.append(f"| {name} | {PINNED[name][0][:12]} | {rec['status']} | | | | | | |")
            continue
        v = rec["verdict"]
        stmts = rec.get("statements", [])
        failing = "; ".join(f"line {s['line']}: {s['error']}" + (f": {s['message'][:70]}" if s["message"] else "")
                            for s in stmts if s["status"] != "ok") or "none"
        tests = rec.get("pytest")
        pytest_cell = "—" if tests is None else ", ".join(f"{t['test']} {t['outcome']}" for t in tests["tests"])
        nf = {True: "yes", False: "**no**", None: "—"}[v["no_further_than_reference"]]
        lines.append(f"| {name} | {PINNED[name][0][:12]} | {sum(s['status'] == 'ok' for s in stmts)}/{len(stmts)} "
                     f"| {failing} | {pytest_cell} | {'pass' if v['own_checks_pass'] else 'fail'} "
                     f"| {'yes' if v['ran_to_end'] else '**no**'} | {nf} | {rec.get('wall_seconds')} |")
    for name, rec in result["tutorials"].items():
        accuracy = rec.get("accuracy")
        if not accuracy:
            continue
        lines += ["", f"## {name}: distance from float64", ""]
        if "error" in accuracy:
            lines.append(f"error: {accuracy['error']}: {accuracy['message']}")
            continue
        lines += [f"| output | the tutorial's kernel on {result['backend']}: max abs, mean abs, misrounded "
                  "| the tutorial's reference: max abs, mean abs, misrounded | no further | tutorial's check |",
                  "|---|---|---|---|---|"]
        for o in accuracy["outputs"]:
            if "error" in o:
                lines.append(f"| {o['output']} | error: {o['error']} | | | |")
                continue
            m, r = o["kernel"], o["tutorial_reference"]
            cell = lambda d: f"{d['max_abs']:.6g}, {d['mean_abs']:.6g}, {d['misrounded']} of {d['elements']}"
            lines.append(f"| {o['output']} | {cell(m)} | {cell(r)} | {'yes' if o['no_further'] else '**no**'} "
                         f"| {'pass' if o['tutorial_check_passes'] else 'fail'} |")
    return "\n".join(lines) + "\n"


def versions(real: bool) -> dict:
    code = ("import json, numpy, torch; out = {'numpy': numpy.__version__, 'torch': torch.__version__}\n"
            + ("import triton; out['triton'] = triton.__version__\n" if real else
               "import minitriton; out['minitriton'] = minitriton.__version__\n") + "print(json.dumps(out))")
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr[-300:]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m parity.tutorials", description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True, help="folder holding the tutorial files (e.g. .tutorials)")
    p.add_argument("--fetch", action="store_true", help="download the pinned files into --dir first")
    p.add_argument("--only", default="", help="comma-separated prefixes or names, e.g. 02,05")
    p.add_argument("--real", action="store_true", help="run on real Triton (its device) instead of minitriton")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per tutorial (default 1800)")
    p.add_argument("--out", default=str(RESULTS), help="results folder (default parity/results)")
    p.add_argument("--no-save", action="store_true")
    a = p.parse_args(argv)
    wanted = [w.strip() for w in a.only.split(",") if w.strip()]
    names = [n for n in PINNED if not wanted or any(n == w or n.startswith(w) for w in wanted)]
    folder = pathlib.Path(a.dir)
    if a.fetch:
        fetch(folder, names)
    missing = [n for n in names if not (folder / f"{n}.py").exists()]
    if missing:
        log(f"missing in {folder}: {', '.join(missing)} (download them with --fetch)")
        return 2
    backend = "real Triton" if a.real else "minitriton"
    result = {"backend": backend, "date": datetime.date.today().isoformat(), "versions": versions(a.real),
              "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
              "pinned": {n: PINNED[n][0] for n in names}, "tutorials": {}}
    for name in names:
        path = folder / f"{name}.py"
        if digest(path) != PINNED[name][1]:
            log(f"{name}: the file differs from the pinned version; not run")
            result["tutorials"][name] = {"status": "changed (hash differs from the pinned one)"}
            continue
        log(f"{name} ...")
        record = run_one(path.resolve(), a.real, a.timeout)
        record["verdict"] = verdict(record)
        v = record["verdict"]
        log(f"{name}: ran to end {v['ran_to_end']}, own checks pass {v['own_checks_pass']}, "
            f"no further than its reference {v['no_further_than_reference']} ({record['wall_seconds']} s)")
        result["tutorials"][name] = record
    text = scrub(markdown(result), folder)
    print(text)
    if not a.no_save:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"tutorials-{'cuda' if a.real else 'minitriton'}-{result['date']}"
        (out / f"{stem}.json").write_text(scrub(json.dumps(result, indent=1, default=str), folder))
        (out / f"{stem}.md").write_text(text)
        log(f"wrote {out / stem}.json and .md")
    good = all(r.get("verdict", {}).get("ran_to_end") and r["verdict"]["no_further_than_reference"] is not False
               for r in result["tutorials"].values())
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
