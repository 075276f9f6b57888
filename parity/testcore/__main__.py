"""python -m parity.testcore: Triton's own test_core.py, run on minitriton (and on Triton's interpreter), reported.

    .venv/bin/python -m parity.testcore                       # minitriton and the interpreter, bf16 lifted too
    .venv/bin/python -m parity.testcore --backend minitriton -k "test_cast or test_dot"
    .venv/bin/python -m parity.testcore --file PATH --helpers PATH   # files fetched by hand

test_core.py and the helpers it imports (triton/_internal_testing.py) are read at the pinned commits below and
checked against their SHA-256: from `--file`/`--helpers`, from the cache (build/triton-tests/), or fetched from
GitHub's raw URL when the network allows. They are never part of this repository. Each backend runs the cases
marked `interpreter` with TRITON_INTERPRET=1 (so test_core takes its interpreter paths) in its own pytest
process (parity/testcore/plugin.py). `--bf16` also runs test_core's bf16 cases with the two skips it applies
under the interpreter replaced by `pass` (in a derived copy). Failures on minitriton are classified by cause
(parity/testcore/causes.py). Writes parity/results/testcore-<date>.json and .md; exit status 1 when a minitriton
failure has no known cause, 2 when the files cannot be had.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import platform
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

from parity.testcore import causes, report

REPO = pathlib.Path(__file__).resolve().parents[2]
CACHE = REPO / "build" / "triton-tests"
RESULTS = REPO / "parity" / "results"
RAW = "https://raw.githubusercontent.com/triton-lang/triton/{commit}/{path}"
# (path in triton-lang/triton, commit, sha256): the newest versions the project could read; Triton 3.9.0's
# interpreter passes 6,036 of the 6,985 interpreter-marked cases of this test_core.py
PINNED = {
    "test_core.py": ("python/test/unit/language/test_core.py", "6fa33ef1eecc97348d056688df84845db7d22507",
                     "64cbdff774fac188610558c105f81b8142debcf92835c8c57d7a1fdff3b5675b"),
    "_internal_testing.py": ("python/triton/_internal_testing.py", "075c3d259a8bf08d4d335e92a6f14af55e01ca2f",
                             "0b730d36d2f7b8103c71e6e545b86075b5be5955c15d06d9cbf31790c21a0997"),
}
BF16_SKIP = 'pytest.skip("bfloat16 is not supported in the interpreter")'


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
    count = text.count(BF16_SKIP)
    if count != 2:
        raise Unavailable(f"expected test_core.py to skip bf16 twice under the interpreter, found {count}")
    out = test_core.with_name("test_core_bf16.py")
    out.write_text(text.replace(BF16_SKIP, "pass  # bf16 skip lifted by parity.testcore"))
    return out


def run_backend(backend: str, test_file: pathlib.Path, helpers: pathlib.Path, extra: list, timeout: float,
                targets=None) -> dict:
    """One pytest process over the interpreter-marked cases of `test_file` (or the node ids in `targets`, a file
    of ids); outcomes read from its JUnit XML."""
    xml = test_file.with_name(f"{test_file.stem}.{backend}.xml")
    env = dict(os.environ, TESTCORE_BACKEND=backend, TESTCORE_HELPERS=str(helpers), TESTCORE_TIMEOUT=str(timeout),
               TRITON_INTERPRET="1", PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS=os.environ.get(
                   "OPENBLAS_NUM_THREADS", "1"))
    selection = [f"@{targets.name}"] if targets else [test_file.name]
    cmd = [sys.executable, "-m", "pytest", *selection, "-p", "parity.testcore.plugin", "-m", "interpreter", "-q",
           "-p", "no:cacheprovider", "-o", "addopts=", "-o", "testpaths=", f"--junitxml={xml.name}", *extra]
    log(f"{backend}: {' '.join(cmd[2:])}")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=test_file.parent, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if not xml.exists():
        raise RuntimeError(f"{backend}: pytest wrote no results (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"{proc.stderr[-3000:]}")
    tail = [line for line in proc.stdout.splitlines() if line.strip()][-1:]
    log(f"{backend}: {tail[0] if tail else ''} ({seconds:.0f} s)")
    return {"backend": backend, "seconds": round(seconds, 1), "cases": read_junit(xml)}


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
    runs = {b: run_backend(b, test_core, helpers, extra, args.timeout) for b in backends}
    bf16 = {}
    if args.bf16:
        ids = sorted({name for run in runs.values() for name, case in run["cases"].items()
                      if case["outcome"] == "skipped" and "bfloat16 is not supported" in case["message"]})
        if ids:
            lifted = lift_bf16(test_core)
            id_file = lifted.with_suffix(".ids")
            id_file.write_text("\n".join(f"{lifted.name}::{i}" for i in ids) + "\n")
            bf16 = {b: run_backend(b, lifted, helpers, [], args.timeout, targets=id_file) for b in backends}
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
        stem.with_suffix(".json").write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        stem.with_suffix(".md").write_text(text)
        log(f"wrote {stem}.md and .json")
    return 1 if classified["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
