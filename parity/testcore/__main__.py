"""python -m parity.testcore: Triton's own test_core.py, run on minitriton (and on Triton's interpreter), reported.

    .venv/bin/python -m parity.testcore                       # minitriton and the interpreter, bf16 lifted too
    .venv/bin/python -m parity.testcore --backend minitriton -k "test_cast or test_dot"
    .venv/bin/python -m parity.testcore --file PATH --helpers PATH   # files fetched by hand

test_core.py and the helpers it imports (triton/_internal_testing.py) are read at the pinned commits below and
checked against their SHA-256: from `--file`/`--helpers`, from the cache (build/triton-tests/), or fetched from
GitHub's raw URL when the network allows. They are never part of this repository. Where GitHub is out of reach,
take them from a clone of triton-lang/triton (or a fork that has these commits) and pass them once; a file
given is checked and copied into the cache, so later runs need no flags:

    git -C triton show c2698d07543514cf4f6837199cde5c37a40fec81:python/test/unit/language/test_core.py > test_core.py
    git -C triton show 5bcfc513ddbbc64f2688dfb15a4d824c56a9649a:python/triton/_internal_testing.py > _internal_testing.py
    .venv/bin/python -m parity.testcore --file test_core.py --helpers _internal_testing.py

(or `curl -O` of the raw URLs, https://raw.githubusercontent.com/triton-lang/triton/<commit>/<path>, on a machine
that reaches GitHub). Each backend runs the cases marked `interpreter` with TRITON_INTERPRET=1 (so test_core
takes its interpreter paths) in its own pytest process (parity/testcore/plugin.py). `--bf16` also runs the cases
test_core skips under the interpreter for bf16 (BF16_SKIPS) from a derived copy with those skips replaced by
`pass`. Failures on minitriton are classified by cause (parity/testcore/causes.py). Writes
parity/results/testcore-<date>.json (counts, times, failures and the cases where the backends differ) and .md;
exit status 1 when a minitriton failure has no known cause, 2 when the files cannot be had.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import platform
import resource
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

from parity.report import results_json
from parity.testcore import causes, report

REPO = pathlib.Path(__file__).resolve().parents[2]
CACHE = REPO / "build" / "triton-tests"
RESULTS = REPO / "parity" / "results"
RAW = "https://raw.githubusercontent.com/triton-lang/triton/{commit}/{path}"
# (path in triton-lang/triton, commit, sha256): test_core.py as of 2026-08-21 (blob 3060faec44ab) and the helpers it
# imports, each at the commit that last changed it
PINNED = {
    "test_core.py": ("python/test/unit/language/test_core.py", "c2698d07543514cf4f6837199cde5c37a40fec81",
                     "44882139ee4bb4fbc91deffb30b2990f6884e89a59f03d152e30fa33260ca66d"),
    "_internal_testing.py": ("python/triton/_internal_testing.py", "5bcfc513ddbbc64f2688dfb15a4d824c56a9649a",
                             "b9e614ab14d394c4c6b4339b61472a0d2c1f3ff5b7c78fefe1782c3de30fa58d"),
}
# test_core's skips of bf16 cases under the interpreter, each with the number of times the pinned file has it:
# check_type_supported, test_dot, test_scaled_dot, test_dot_multidim; test_atomic_rmw's bf16/fp16 atomics
BF16_SKIPS = {'pytest.skip("bfloat16 is not supported in the interpreter")': 4,
              'pytest.skip("Only test atomic bfloat16/float16 ops on GPU")': 1}


class Unavailable(Exception):
    """A pinned file could not be had (not given, not cached, no network) or its hash differs."""


def log(msg):
    print(f"[testcore] {msg}", file=sys.stderr, flush=True)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pinned_file(name: str, given: str | None) -> pathlib.Path:
    """The pinned file: the given one, the cached one, or a download; its SHA-256 checked."""
    path, commit, digest = PINNED[name]
    cached = CACHE / commit[:12] / name
    if given:
        data = pathlib.Path(given).read_bytes()
    elif cached.exists():
        data = cached.read_bytes()
    else:
        url = RAW.format(commit=commit, path=path)
        log(f"fetching {url}")
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                data = r.read()
        except OSError as e:
            raise Unavailable(f"{name}: not cached and {url} cannot be fetched ({e}); download it elsewhere and "
                              f"pass --file/--helpers") from None
    if sha256(data) != digest:
        raise Unavailable(f"{name}: SHA-256 {sha256(data)} is not the pinned {digest} "
                          f"({path} at {commit})")
    cached.parent.mkdir(parents=True, exist_ok=True)
    if not cached.exists():
        cached.write_bytes(data)
    return cached


def lift_bf16(test_core: pathlib.Path) -> pathlib.Path:
    """A copy of test_core.py whose interpreter-only bf16 skips are `pass`."""
    text = test_core.read_text()
    for skip, expected in BF16_SKIPS.items():
        if text.count(skip) != expected:
            raise Unavailable(f"expected test_core.py to have {skip} {expected} times, found {text.count(skip)}")
        text = text.replace(skip, "pass  # bf16 skip lifted by parity.testcore")
    out = test_core.with_name("test_core_bf16.py")
    out.write_text(text)
    return out


def lifted_skip(skip: str) -> str:
    """The reason a lifted skip gives (its string argument)."""
    return skip.split('"')[1]


def run_backend(backend: str, test_file: pathlib.Path, helpers: pathlib.Path, extra: list, timeout: float,
                targets=None, reuse=False) -> dict:
    """One pytest process over the interpreter-marked cases of `test_file` (or the node ids in `targets`, a file
    of ids); outcomes read from its JUnit XML (`reuse`: the XML and times the last run left, if any)."""
    xml = test_file.with_name(f"{test_file.stem}.{backend}.xml")
    times = xml.with_suffix(".times.json")
    if reuse and xml.exists() and times.exists():
        log(f"{backend}: the cases as {xml.name} recorded them")
        return dict(json.loads(times.read_text()), backend=backend, cases=read_junit(xml))
    env = dict(os.environ, TESTCORE_BACKEND=backend, TESTCORE_HELPERS=str(helpers), TESTCORE_TIMEOUT=str(timeout),
               TRITON_INTERPRET="1", PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS=os.environ.get(
                   "OPENBLAS_NUM_THREADS", "1"))
    selection = [f"@{targets.name}"] if targets else [test_file.name]
    # --tb=native: pytest's own failure report parses the 7,000-line test file once per traceback entry, which
    # costs more than the cases themselves when hundreds fail (both backends alike)
    cmd = [sys.executable, "-m", "pytest", *selection, "-p", "parity.testcore.plugin", "-m", "interpreter", "-q",
           "--tb=native", "-p", "no:cacheprovider", "-o", "addopts=", "-o", "testpaths=", f"--junitxml={xml.name}",
           *extra]
    log(f"{backend}: {' '.join(cmd[2:])}")
    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, cwd=test_file.parent, env=env, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if not xml.exists():
        raise RuntimeError(f"{backend}: pytest wrote no results (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"{proc.stderr[-3000:]}")
    tail = [line for line in proc.stdout.splitlines() if line.strip()][-1:]
    log(f"{backend}: {tail[0] if tail else ''} ({seconds:.0f} s, {cpu:.0f} s CPU)")
    times.write_text(json.dumps({"seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1)}))
    return dict(json.loads(times.read_text()), backend=backend, cases=read_junit(xml))


def _children_cpu() -> float:
    """CPU seconds (user + system) the finished child processes used: on a shared machine, the work a run took."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def read_junit(xml: pathlib.Path) -> dict:
    """{case id: {"outcome": passed|failed|skipped, "seconds": s, "message": first lines}}."""
    cases = {}
    for tc in ET.parse(xml).iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = tc.find(tag)
            if node is not None:
                outcome = "skipped" if tag == "skipped" else "failed"
                head = (node.get("message") or "").strip()
                text = (node.text or "").strip()
                # the message's first line, then the end of the report (where the error's reason is)
                message = head.splitlines()[0][:300] + ("\n" + text[-700:] if text else "") if head else text[-1000:]
                message = message.replace(f"{REPO}{os.sep}", "")  # paths as the repository names them
                break
        cases[tc.get("name")] = {"outcome": outcome, "seconds": float(tc.get("time") or 0), "message": message}
    return cases


def versions() -> dict:
    """The Python, NumPy, torch and Triton versions the runs used (read in a child: triton must not be imported
    in this process next to minitriton)."""
    code = ("import json, platform, numpy, torch\ntry:\n import triton; t = triton.__version__\nexcept Exception:\n"
            " t = None\nprint(json.dumps({'python': platform.python_version(), 'numpy': numpy.__version__, "
            "'torch': torch.__version__, 'triton': t}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def machine() -> dict:
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count()}


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m parity.testcore", description=__doc__.splitlines()[0])
    p.add_argument("--file", help="test_core.py at the pinned commit (else cached or fetched)")
    p.add_argument("--helpers", help="triton/_internal_testing.py at its pinned commit (else cached or fetched)")
    p.add_argument("--backend", choices=["minitriton", "interpreter", "both"], default="both")
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True,
                   help="also run the bf16 cases with test_core's interpreter bf16 skips lifted (default on)")
    p.add_argument("-k", dest="keyword", help="pytest -k expression (a partial run is not saved by default)")
    p.add_argument("--timeout", type=float, default=300, help="seconds a single case may run (default 300)")
    p.add_argument("--out", default=str(RESULTS), help="results folder")
    p.add_argument("--no-save", action="store_true", help="print only")
    p.add_argument("--reuse", action="store_true",
                   help="report the cases the last run recorded (build/triton-tests/), e.g. after editing causes.py")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    try:
        test_core = pinned_file("test_core.py", args.file)
        helpers = pinned_file("_internal_testing.py", args.helpers)
    except Unavailable as e:
        log(str(e))
        return 2
    extra = ["-k", args.keyword] if args.keyword else []
    backends = ["minitriton", "interpreter"] if args.backend == "both" else [args.backend]
    runs = {b: run_backend(b, test_core, helpers, extra, args.timeout, reuse=args.reuse) for b in backends}
    bf16 = {}
    if args.bf16:
        ids = sorted({name for run in runs.values() for name, case in run["cases"].items()
                      if case["outcome"] == "skipped" and any(lifted_skip(skip) in case["message"] for skip in BF16_SKIPS)})
        if ids:
            lifted = lift_bf16(test_core)
            id_file = lifted.with_suffix(".ids")
            id_file.write_text("\n".join(f"{lifted.name}::{i}" for i in ids) + "\n")
            bf16 = {b: run_backend(b, lifted, helpers, [], args.timeout, targets=id_file, reuse=args.reuse)
                    for b in backends}
            for run in bf16.values():
                run["cases"] = {k: v for k, v in run["cases"].items() if k in set(ids)}
    result = {"date": datetime.date.today().isoformat(), "machine": machine(), "versions": versions(),
              "pinned": {k: {"path": v[0], "commit": v[1], "sha256": v[2]} for k, v in PINNED.items()},
              "keyword": args.keyword, "runs": runs, "bf16_lifted": bf16}
    classified = report.classify_failures(result, causes.classify)
    text = report.markdown(result, classified)
    print(text)
    if not args.no_save and not args.keyword:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = out / f"testcore-{result['date']}"
        stored = dict(result, runs=report.compact(runs), bf16_lifted=report.compact(bf16) if bf16 else {})
        stem.with_suffix(".json").write_text(results_json(stored, sort_keys=True))
        stem.with_suffix(".md").write_text(text)
        log(f"wrote {stem}.md and .json")
    return 1 if classified["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
