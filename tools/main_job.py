"""The main job (tools/main.sh runs it in .venv): the project's kernels and exercises on minitriton, the
lesson's Triton scripts when the lesson is there, then the speed benchmark; a summary line per step.

    python tools/main_job.py [--save]

Steps, each a subprocess whose output shows as it runs:
  kernels     python -m kernels: every kernel in kernels/ against its float64 reference
  exercises   every exercise's reference solution through the sandbox's own Check
  lesson      the lesson's scripts, unmodified, under `python -m minitriton run`, from $LESSON (default
              ../shared/seed/lesson beside the repository; skipped when that default is absent)
  benchmark   python -m bench: Triton's interpreter against minitriton; the summary gives its headline ratios

Nothing in the repository is written unless --save is given, which records the benchmark as a run of
record in bench/results/. Exit status 1 when a step fails.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_LESSON = REPO.parent / "shared" / "seed" / "lesson"
LESSON_SCRIPTS = ("vector_add.py", "softmax_triton.py", "rmsnorm_triton.py", "matmul_triton.py")
LESSON_TESTS = "test_flash.py"
sys.path.insert(0, str(REPO))  # kernels/ and sandbox/ are folders of the repository, not installed packages


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.update(extra)
    return env


def _shown(arg) -> str:
    if arg == sys.executable:
        return "python"
    path = Path(str(arg))
    return str(path.relative_to(REPO)) if path.is_absolute() and path.is_relative_to(REPO) else str(arg)


def _run(cmd, cwd=REPO, **env) -> bool:
    print("$ " + " ".join(_shown(c) for c in cmd), flush=True)
    return subprocess.run(cmd, cwd=cwd, env=_env(**env)).returncode == 0


def step_kernels(args) -> tuple[bool, str]:
    from kernels import KERNELS
    return _run([sys.executable, "-m", "kernels"]), f"{len(KERNELS)} kernels against float64 references"


def check_exercises() -> int:
    """Every exercise's solution through sandbox.bridge's check op; one line each; the number failing."""
    from sandbox import bridge
    failed = 0
    for ex in json.loads(bridge.handle("exercises", json.dumps({"lang": "en"})))["exercises"]:
        code = json.loads(bridge.handle("solution", json.dumps({"exercise": ex["id"]})))["code"]
        result = json.loads(bridge.handle("check", json.dumps({"exercise": ex["id"], "code": code, "lang": "en"})))
        tests = result.get("tests", [])
        passed = result.get("passed") is True
        failed += not passed
        print(f"{'ok    ' if passed else 'FAILED'} {ex['id']:<16} {sum(t['passed'] for t in tests)} of "
              f"{len(tests)} tests  ({ex['title']})", flush=True)
        if not passed:
            for t in tests:
                if not t["passed"]:
                    print(f"       {t['name']}: {t['message']}")
            if result.get("error"):
                print(f"       {result['error'].get('type')}: {result['error'].get('message')}")
    return failed


def step_exercises(args) -> tuple[bool, str]:
    ok = _run([sys.executable, str(Path(__file__).resolve()), "--exercises"])
    return ok, "each exercise's solution passes its Check"


def step_lesson(args) -> tuple[bool | None, str]:
    lesson = Path(args.lesson) if args.lesson else DEFAULT_LESSON
    if not lesson.is_dir():
        if args.lesson:
            return False, f"no lesson folder at {lesson}"
        why = f"no lesson at {os.path.relpath(lesson, REPO)} (set LESSON=...)"
        print(why)
        return None, why
    ok = True
    runner = [sys.executable, "-m", "minitriton", "run"]
    for script in LESSON_SCRIPTS:       # bytecode stays out of the lesson folder, which may be read-only
        ok &= _run(runner + [str(lesson / script)], PYTHONDONTWRITEBYTECODE="1")
    ok &= _run(runner + ["-m", "pytest", "-q", "-p", "no:cacheprovider", LESSON_TESTS], cwd=lesson,
               PYTHONDONTWRITEBYTECODE="1")
    return ok, f"{len(LESSON_SCRIPTS) + 1} scripts from {lesson}"


def step_benchmark(args) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "bench.json"
        ok = _run([sys.executable, "-m", "bench", "--json", str(data)] + (["--save"] if args.save else []))
        if not data.exists():
            return False, "no result"
        result = json.loads(data.read_text())
    return ok, result["headline"]


STEPS = (("kernels", "kernels on minitriton", step_kernels),
         ("exercises", "exercise solutions", step_exercises),
         ("lesson", "lesson scripts on minitriton", step_lesson),
         ("benchmark", "benchmark", step_benchmark))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tools/main.sh", description=__doc__.splitlines()[0])
    p.add_argument("--save", action="store_true", help="record the benchmark as a run of record in bench/results/")
    p.add_argument("--exercises", action="store_true", help=argparse.SUPPRESS)   # the exercises step's worker
    args = p.parse_args(argv)
    if args.exercises:
        return 1 if check_exercises() else 0
    args.lesson = os.environ.get("LESSON")
    started, summary, failed = time.perf_counter(), [], 0
    for _key, title, step in STEPS:
        print(f"\n== {title}", flush=True)
        t0 = time.perf_counter()
        ok, what = step(args)
        status = "skipped" if ok is None else "ok" if ok else "FAILED"
        failed += ok is False
        took = "" if ok is None else f"  ({time.perf_counter() - t0:.0f} s)"
        summary.append(f"  {status:<8}{title}: {what}{took}")
    minutes, seconds = divmod(round(time.perf_counter() - started), 60)
    print(f"\nmain job: {'all steps ok' if not failed else f'{failed} step(s) FAILED'} ({minutes} min {seconds} s)")
    print("\n".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
