"""Triton's official tutorials 01-11, unmodified, on minitriton: each runs under `python -m minitriton run`.

    python -m parity.tutorials                         # run all; writes parity/results/tutorials-minitriton-<date>
    python -m parity.tutorials --only 02,05 --no-save
    python -m parity.tutorials --only 10 --into parity/results/tutorials-minitriton-DATE.json   # redo one row
    python -m parity.tutorials --fetch                 # first download the pinned files (raw.githubusercontent.com)
    python -m parity.tutorials --real                  # the same on real Triton (a GPU machine)

The tutorials are Triton's (python/tutorials of triton-lang/triton), not the project's: they are pinned below
by commit and SHA-256 and kept outside the repository, in DIR (`--dir`, default build/tutorials/, git-ignored).
`--fetch` downloads them from raw.githubusercontent.com; where that is out of reach, copy each pinned file
there from a clone of Triton's history, e.g. `git -C TRITON show COMMIT:python/tutorials/NAME.py >
build/tutorials/NAME.py` (the missing-files message prints the commands). A file whose hash differs is
reported as `changed` and not run. Each runs in its own process, `python -m minitriton run --no-bench -m
parity.tutorial_run FILE` (benchmarks skipped, everything else as written), statement by statement, the
`__main__` block's too, each for at most `--statement-seconds` (parity/tutorial_run.py), then its
parametrized pytest checks (06 keeps its check in `test_op`; run at its smallest parameters, PYTEST_PARAMS),
then the comparison with float64 of the outputs it checks (parity/tutorial_accuracy.py: misrounded elements,
beyond chance, and mean difference, no more than the tutorial's own reference). Exit status 0 when every
tutorial ran to its end (a statement stopped at its time budget aside) and, where one of its checks fails,
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
from parity.report import results_json

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
SOURCE = "https://raw.githubusercontent.com/triton-lang/triton/{commit}/python/tutorials/{name}.py"
# name -> (commit of triton-lang/triton that last changed the file, SHA-256 of the file): the tutorials as of
# triton-lang/triton's history on 2026-08-22 (f4fca2c0bc0e)
PINNED = {
    "01-vector-add": ("105cb56487cd8a433b8fbfe9cc63c1f1c04a4b2a",
                      "842430949e0ccde4fbce07606cce3ac4bac36bf21b2b12619a31b795ca4029b3"),
    "02-fused-softmax": ("d6b0238086c5f8c8849c97d39fb7b41709393ee4",
                         "8a65b696d5b02a3900380395ecd883671afeb66328db108f55622ed8853a05da"),
    "03-matrix-multiplication": ("933cefce4ecbb1600bac10e975d1e6fad166b587",
                                 "f88a9506694c58d483ad3cdb4aa672c23df0300803bcfaca13b9396184825008"),
    "04-low-memory-dropout": ("105cb56487cd8a433b8fbfe9cc63c1f1c04a4b2a",
                              "43ea69769349d20654fe7bb983e60ad9c38591d195891caf3a56053d9b0ab788"),
    "05-layer-norm": ("3785150e4d097f32c11af3aa955b78f80e2c16a8",
                      "241f9f74e2f18567b26f3b4cf9b9873ae859150ccd10976d65d38fe24896d1d2"),
    "06-fused-attention": ("d4882a373af24737eb6d8aa911f222a7e5bcde86",
                           "b3e39b472b1ed0c2fe51b99f92eff1e44557ca7daded20bddb5c69d2e2c1c172"),
    "07-extern-functions": ("105cb56487cd8a433b8fbfe9cc63c1f1c04a4b2a",
                            "c9412656298e9bd737d944ac94c5dd6ec427cd30b7657c09d36fa5495ce0d4ba"),
    "08-grouped-gemm": ("311b3e4b27927a9a55a5c89e04316f28ef9f364c",
                        "0b474fc69d34dfde591454ca735d10abdc72bcc03d6b42530390aceaa2844c3b"),
    "09-persistent-matmul": ("2e5ace0605bd5005da5c907a25de14d9d1707a98",
                             "43e51750a2271af05ed5fb7221c811b8d140b2a06665863eaff8799e474a7e03"),
    "10-block-scaled-matmul": ("9f6f9e0866e70f3dd8cde1a3365681916d20401a",
                               "2e6ac55f932a4a3c44ed805b14171c909bd5284efe66ad778693774518209ad2"),
    "11-programmatic-dependent-launch": ("ca4d9571d3aacb32a7d079e3393c351531a790aa",
                                         "773415d0a82c8b5c9895cfe87ead2e610c8ae56ae922475e87aa12991ba9be2e"),
}
# the parameters of the pytest cases run (06's test_op spans up to 4 x 48 heads x 4096 x 4096: GPU-sized)
PYTEST_PARAMS = {"06-fused-attention": "Z=1,H=2,N_CTX=128"}
DEFAULT_DIR = REPO_ROOT / "build" / "tutorials"
# what each tutorial checks where a CPU differs from the GPU it was written for (the report's notes)
NOTES = {
    "05-layer-norm": "Its check compares dw and db with CPU torch's fp16 layer norm, which is further from float64 "
                     "than the kernel (table below).",
    "06-fused-attention": "`test_op` runs at Z=1, H=2, N_CTX=128 (HEAD_DIM 64 and 128, causal or not, fwd fp8 and "
                          "bwd fp16; the test skips the other two); its other shapes, up to 4 x 48 heads x 4096 x "
                          "4096, are GPU-sized.",
    "07-extern-functions": "Line 57 asserts `x.is_cuda`: the emulated GPU's tensors are CPU tensors (docs/device.md), "
                           "a check no CPU passes. `extern_libs=` is accepted; libdevice is NumPy's float32 math, as "
                           "in Triton's interpreter, so its asin misrounds more elements than CPU torch's (not a check "
                           "of the tutorial, which only prints the difference).",
    "09-persistent-matmul": "cuBLAS is the emulated device's (minitriton/tools/cublas.py: torch's fp32 product). "
                            "`validate(8192, 8192, 512)` and the benchmark loop (10 000 repetitions per kernel of "
                            "8192 x 8192 products) are GPU-sized and stop at the statement budget; the loop stops in "
                            "its warm-up, before `proton.activate`, so the profile `show_profile` reads holds no "
                            "launch and its metric lookup fails as Proton's does on an empty profile. The probe's "
                            "profiled runs show the tree. At 512 x 512 x 512 every kernel passes the check but "
                            "misrounds 267 of 262,144 elements where CPU torch's fp16 matmul misrounds 189 (mean "
                            "error equal): the kernels accumulate in fp32 tile by tile (S1.28, S8.2), as the GPU's "
                            "MMA does; a plain fp32 product of the same inputs misrounds 385.",
    "10-block-scaled-matmul": "Block-scaled MMA needs sm100: on the emulated H200, as on a real one, "
                              "`supports_block_scaling()` is False and the script stops after saying so. The probe "
                              "builds its operands (MXFP4Tensor, 5-D scale descriptors) and runs its kernel in every "
                              "format anyway, which needs `tl.dot_scaled`.",
    "11-programmatic-dependent-launch": "`launch_pdl=True`, `gdc_wait()` and `gdc_launch_dependents()` are accepted; "
                                        "launches run one after another on the emulator's one stream, so they order "
                                        "nothing more. Its benchmark is a perf_report (skipped).",
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


def missing_message(folder: pathlib.Path, names) -> str:
    """What to do when files are missing: --fetch, or the git commands that copy each one from Triton's history."""
    lines = [f"missing in {folder}: {', '.join(names)}. Download them with `python -m parity.tutorials --fetch`, "
             f"or, without access to GitHub, copy them from a clone of triton-lang/triton (TRITON below):",
             f"  mkdir -p {folder}"]
    lines += [f"  git -C TRITON show {PINNED[n][0]}:python/tutorials/{n}.py > {folder / n}.py" for n in names]
    return "\n".join(lines)


def run_one(path: pathlib.Path, real: bool, timeout: float, statement_seconds: float = 0) -> dict:
    """One tutorial in its own process; the child's JSON record plus its exit status and output's tail."""
    with tempfile.TemporaryDirectory(prefix="tutorial-report-") as tmp:
        report = pathlib.Path(tmp) / "report.json"
        child = ["-m", "parity.tutorial_run", str(path), str(report), "--pytest", "--accuracy",
                 "--statement-seconds", str(statement_seconds)]
        if path.stem in PYTEST_PARAMS:
            child += ["--pytest-params", PYTEST_PARAMS[path.stem]]
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
    checked = [o for o in outputs if o["tutorial_check_passes"] is not None]   # 07's asin is only printed
    checks_fail = [s for s in failed if s["error"] == "AssertionError"]
    checks_fail += [o for o in outputs if o["tutorial_check_passes"] is False]
    if tests is not None and tests["exit_code"] != 0:
        checks_fail.append(tests)
    stopped = [s["line"] for s in failed if s["error"] == "StatementTimeout"]
    crashed = ([s for s in failed if s["error"] not in ("AssertionError", "StatementTimeout")]
               or record.get("exit_status") not in (0, None))
    crashed = crashed or "error" in accuracy or any("error" in o for o in accuracy.get("outputs", []))
    return {"ran_to_end": bool(record.get("statements")) and not crashed, "stopped_at_budget": stopped,
            "own_checks_pass": not checks_fail and bool(record.get("statements")),
            "no_further_than_reference": all(o["no_further"] for o in checked) if checked else None}


def markdown(result: dict) -> str:
    """The report of a result as `compact` saves it."""
    lines = [f"# Triton's tutorials on {result['backend']} ({result['date']})", "",
             f"`python -m parity.tutorials --dir DIR{' --real' if result['backend'] != 'minitriton' else ''}` on "
             f"{result['machine']['cpu']} ({result['machine']['cores']} cores), Python {result['machine']['python']}, "
             f"{', '.join(f'{k} {v}' for k, v in result['versions'].items())}. Each tutorial runs unmodified, "
             f"statement by statement (those of its `__main__` block too), benchmarks skipped, each statement "
             f"for at most {result['statement_seconds']} s; a failing statement is listed and the next one runs. "
             f"Each output a tutorial checks is also measured against float64, next to the tutorial's own reference "
             f"(misrounded: elements that differ from the float64 result rounded to the output's type); 07's "
             f"asin, which it only prints, too.", "",
             "| tutorial | pinned commit | statements ok | failing statements | pytest | own checks | ran to end "
             "| no further from float64 than its reference | seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for name, rec in result["tutorials"].items():
        if rec.get("status"):
            lines.append(f"| {name} | {PINNED[name][0][:12]} | {rec['status']} | | | | | | |")
            continue
        v = rec["verdict"]
        failing = "; ".join(f"line {s['line']}: {s['error']}" + (f": {s['message'][:90]}" if s["message"] else "")
                            for s in rec["failing"]) or "none"
        tests = rec.get("pytest")
        pytest_cell = "—" if tests is None else "; ".join(
            f"{n} {o}" for o in ("passed", "failed", "skipped")
            if (n := sum(t["outcome"] == o for t in tests["tests"]))) + (
            f" (cases with {', '.join(f'{k}={v}' for k, v in tests.get('params', {}).items())})"
            if tests.get("params") else "")
        nf = {True: "yes", False: "**no**", None: "—"}[v["no_further_than_reference"]]
        lines.append(f"| {name} | {PINNED[name][0][:12]} | {rec['statements_ok']}/{rec['statements']} "
                     f"| {failing} | {pytest_cell} | {'pass' if v['own_checks_pass'] else 'fail'} "
                     f"| {'yes' if v['ran_to_end'] else '**no**'} | {nf} | {rec.get('wall_seconds')} |")
    lines += [""] * bool(result.get("rerun")) + [f"Rerun on {r['date']} (`--into`): {name}, with "
              f"{', '.join(f'{k} {v}' for k, v in r['versions'].items())}." for name, r in result.get("rerun", {}).items()]
    lines += ["", "Notes:", ""] + [f"- {name}: {NOTES[name]}" for name in result["tutorials"] if name in NOTES]
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
                text = [t.strip() for t in o["error"].splitlines() if t.strip()]
                shown = " ".join(text) if len(text) <= 3 else f"{text[0]} ... {' '.join(text[-2:])}"
                lines.append(f"| {o['output']} | error: {shown} | | | |")
                continue
            m, r = o["kernel"], o["tutorial_reference"]
            cell = lambda d: f"{d['max_abs']:.6g}, {d['mean_abs']:.6g}, {d['misrounded']} of {d['elements']}"
            verdict_cell = {True: "pass", False: "fail", None: "— (none)"}[o["tutorial_check_passes"]]
            lines.append(f"| {o['output']} | {cell(m)} | {cell(r)} | {'yes' if o['no_further'] else '**no**'} "
                         f"| {verdict_cell} |")
        if accuracy.get("profile"):
            lines += ["", "The probe's runs profiled (`hook=\"triton\"`), shown by the tutorial's own `show_profile`:",
                      "", "```", accuracy["profile"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


def compact(result: dict) -> dict:
    """The result as saved: per tutorial its verdict, the failing statements, pytest's outcomes and the float64
    comparison; statements that ran fine are counted, long texts cut."""
    saved = dict(result, tutorials={})
    for name, rec in result["tutorials"].items():
        if "statements_ok" in rec or rec.get("status"):   # already compact, or not run
            saved["tutorials"][name] = rec
            continue
        stmts = rec.get("statements", [])
        keep = {k: v for k, v in rec.items() if k not in ("statements", "output_tail", "pytest", "script")}
        keep["statements_ok"], keep["statements"] = sum(s["status"] == "ok" for s in stmts), len(stmts)
        keep["failing"] = [{k: (v[-600:] if k == "traceback" else v[:600]) if isinstance(v, str) else v
                            for k, v in st.items() if k != "status"}
                           for st in stmts if st["status"] != "ok"]
        if rec.get("pytest"):
            keep["pytest"] = dict(rec["pytest"], tests=[dict(t, message=t["message"][-600:])
                                                        for t in rec["pytest"]["tests"]])
        if "output_tail" in rec:
            keep["output_tail"] = rec["output_tail"][-800:]
        saved["tutorials"][name] = keep
    return saved


def versions(real: bool) -> dict:
    code = ("import json, numpy, torch; out = {'numpy': numpy.__version__, 'torch': torch.__version__}\n"
            + ("import triton; out['triton'] = triton.__version__\n" if real else
               "import minitriton; out['minitriton'] = minitriton.__version__\n") + "print(json.dumps(out))")
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr[-300:]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m parity.tutorials", description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=str(DEFAULT_DIR), help="folder holding the tutorial files (default build/tutorials)")
    p.add_argument("--fetch", action="store_true", help="download the pinned files into --dir first")
    p.add_argument("--only", default="", help="comma-separated prefixes or names, e.g. 02,05")
    p.add_argument("--real", action="store_true", help="run on real Triton (its device) instead of minitriton")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per tutorial (default 1800)")
    p.add_argument("--statement-seconds", type=float, default=120.0,
                   help="seconds one statement may run before it is stopped (default 120; 0: no limit)")
    p.add_argument("--out", default=str(RESULTS), help="results folder (default parity/results)")
    p.add_argument("--no-save", action="store_true")
    p.add_argument("--render", metavar="JSON", help="print the report of a saved result again, run nothing")
    p.add_argument("--into", metavar="JSON", help="put the rows of this run into a saved result (e.g. after --only "
                                                  "10) and rewrite it and its .md")
    a = p.parse_args(argv)
    if a.render:
        print(markdown(json.loads(pathlib.Path(a.render).read_text())))
        return 0
    wanted = [w.strip() for w in a.only.split(",") if w.strip()]
    names = [n for n in PINNED if not wanted or any(n == w or n.startswith(w) for w in wanted)]
    folder = pathlib.Path(a.dir)
    if a.fetch:
        fetch(folder, names)
    missing = [n for n in names if not (folder / f"{n}.py").exists()]
    if missing:
        log(missing_message(folder, missing))
        return 2
    backend = "real Triton" if a.real else "minitriton"
    result = {"backend": backend, "date": datetime.date.today().isoformat(), "versions": versions(a.real),
              "statement_seconds": a.statement_seconds,
              "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
              "pinned": {n: PINNED[n][0] for n in names}, "tutorials": {}}
    for name in names:
        path = folder / f"{name}.py"
        if digest(path) != PINNED[name][1]:
            log(f"{name}: the file differs from the pinned version; not run")
            result["tutorials"][name] = {"status": "changed (hash differs from the pinned one)"}
            continue
        log(f"{name} ...")
        record = run_one(path.resolve(), a.real, a.timeout, a.statement_seconds)
        record["verdict"] = verdict(record)
        v = record["verdict"]
        log(f"{name}: ran to end {v['ran_to_end']}, own checks pass {v['own_checks_pass']}, "
            f"no further than its reference {v['no_further_than_reference']} ({record['wall_seconds']} s)")
        result["tutorials"][name] = record
    saved = json.loads(scrub(json.dumps(compact(result), default=str), folder))
    if a.into:   # the tutorials run replace their rows in a saved result, which is rewritten (.json and .md)
        into = pathlib.Path(a.into)
        merged = json.loads(into.read_text())
        merged["tutorials"].update(saved["tutorials"])
        merged["pinned"].update(saved["pinned"])
        merged.setdefault("rerun", {}).update({n: {"date": result["date"], "versions": result["versions"]}
                                               for n in saved["tutorials"]})
        saved, a.no_save = merged, True
        into.write_text(results_json(saved))
        into.with_suffix(".md").write_text(markdown(saved))
        log(f"updated {into} and its .md")
    text = markdown(saved)
    print(text)
    if not a.no_save:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"tutorials-{'cuda' if a.real else 'minitriton'}-{result['date']}"
        (out / f"{stem}.json").write_text(results_json(saved))
        (out / f"{stem}.md").write_text(text)
        log(f"wrote {out / stem}.json and .md")
    good = all(r.get("verdict", {}).get("ran_to_end") and (r["verdict"]["own_checks_pass"]
                                                           or r["verdict"]["no_further_than_reference"] is not False)
               for r in result["tutorials"].values())
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
