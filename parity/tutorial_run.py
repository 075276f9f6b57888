"""Run one tutorial script, top-level statement by statement, and write what happened as JSON.

    python -m minitriton run --no-bench -m parity.tutorial_run SCRIPT REPORT.json [--accuracy]   # minitriton
    python -m parity.tutorial_run SCRIPT REPORT.json --real [--no-bench] [--accuracy]         # real Triton

The script is not changed: its module-level statements are compiled from its own file (line numbers and
tracebacks point into it) and run in order in one `__main__` namespace; a top-level `if` (such as `if
__name__ == "__main__":`) runs its test, then the statements of the branch taken, one by one. A statement that raises is recorded (exception, message, the traceback's last lines) and the next
one runs, so one failing check does not hide what comes after it; the tutorial passes only when no statement
failed. A statement still running after `--statement-seconds` is stopped (`StatementTimeout`: a GPU-sized
benchmark loop such as tutorial 09's 10 000 repetitions of 8192 x 8192 products) and the next one runs.
`--pytest` then runs the script's `@pytest.mark.parametrize`d `test_*` functions with pytest (tutorial 06
keeps its check there; `--pytest-params Z=1,H=2` keeps the cases with those parameters), and `--accuracy` the
float64 comparison of parity/tutorial_accuracy.py for the tutorials that have one. With
`--real` (real Triton) and `--no-bench`, `triton.testing.Mark.run` is replaced by a no-op, as minitriton's
`--no-bench` does.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import pathlib
import signal
import sys
import tempfile
import time
import traceback


def _tail(exc: BaseException, lines: int = 12) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return "\n".join(text.rstrip().splitlines()[-lines:])


class StatementTimeout(Exception):
    """A statement ran past --statement-seconds."""


def _over_budget(signum, frame):
    raise StatementTimeout("stopped after the statement's time budget (--statement-seconds)")


def run_statements(path: pathlib.Path, budget: float = 0) -> tuple[dict, list]:
    """Execute the script's statements in order, each for at most `budget` seconds (0, or a platform without an
    interval timer such as wasm32: no limit); an `if` at
    the top level (`if __name__ == "__main__":` and the `if`s inside the branch taken, recursively) is its
    test, then the statements of the branch it takes. Returns the namespace and one record per statement."""
    source = path.read_text(encoding="utf-8")
    namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": __builtins__}
    records = []
    timed = budget > 0 and hasattr(signal, "setitimer")
    if timed:
        signal.signal(signal.SIGALRM, _over_budget)

    def run(nodes):
        for node in nodes:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring: nothing to run
            branch = isinstance(node, ast.If)
            code = compile(ast.Expression(node.test) if branch else ast.Module(body=[node], type_ignores=[]),
                           str(path), "eval" if branch else "exec")
            start = time.perf_counter()
            record = {"line": node.lineno, "source": ast.get_source_segment(source, node).splitlines()[0][:100]}
            try:
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, budget)
                taken = eval(code, namespace)  # noqa: S307 - the tutorial itself, unmodified
                record["status"] = "ok"
            except BaseException as e:  # noqa: BLE001 - every failure is a result; KeyboardInterrupt re-raised
                if isinstance(e, KeyboardInterrupt):
                    raise
                record.update(status="error", error=type(e).__name__, message=str(e)[:2000], traceback=_tail(e))
            finally:
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            record["seconds"] = round(time.perf_counter() - start, 2)
            records.append(record)
            if branch and record["status"] == "ok":
                run(node.body if taken else node.orelse)

    run(ast.parse(source, str(path)).body)
    return namespace, records


def parametrized_tests(path: pathlib.Path) -> list:
    """Names of the script's `test_*` functions that carry `@pytest.mark.parametrize` (pytest can run them)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            and any("parametrize" in ast.unparse(d) for d in node.decorator_list)]


def run_pytest(path: pathlib.Path, names: list, params: dict | None = None) -> dict:
    """The script's parametrized tests through pytest, in this process (so minitriton stays installed); with
    `params`, only the cases whose parameters have those values (their string forms)."""
    import pytest

    class Outcomes:
        def __init__(self):
            self.tests = []

        def pytest_collection_modifyitems(self, items):
            kept = [i for i in items if all(str(getattr(getattr(i, "callspec", None), "params", {}).get(k)) == v
                                            for k, v in (params or {}).items())]
            items[:] = kept

        def pytest_runtest_logreport(self, report):
            if report.when == "call" or report.outcome != "passed":
                self.tests.append({"test": report.nodeid.split("::", 1)[-1], "when": report.when,
                                   "outcome": report.outcome, "seconds": round(report.duration, 2),
                                   "message": str(report.longrepr)[-3000:] if report.failed else ""})

    plugin = Outcomes()
    start = time.perf_counter()
    code = pytest.main([str(path), "-q", "-p", "no:cacheprovider", "-k", " or ".join(names)], plugins=[plugin])
    return {"exit_code": int(code), "tests": plugin.tests, "seconds": round(time.perf_counter() - start, 2)}


def _skip_real_benchmarks():
    import triton.testing

    def run(self, *args, **kwargs):
        names = [getattr(b, "plot_name", "?") for b in (self.benchmarks if isinstance(self.benchmarks, list)
                                                        else [self.benchmarks])]
        print(f"benchmark skipped (--no-bench): {', '.join(names)}")
    triton.testing.Mark.run = run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m parity.tutorial_run", description=__doc__.splitlines()[0])
    p.add_argument("script")
    p.add_argument("report")
    p.add_argument("--real", action="store_true", help="real Triton (the script's own device), not minitriton")
    p.add_argument("--no-bench", action="store_true", help="with --real: skip perf_report benchmarks")
    p.add_argument("--pytest", action="store_true", help="also run the script's parametrized test_* functions")
    p.add_argument("--pytest-params", default="", help="only the test cases with these parameters: Z=1,H=2")
    p.add_argument("--accuracy", action="store_true", help="also compare its outputs with float64 references")
    p.add_argument("--statement-seconds", type=float, default=0, help="stop a statement after this long (0: never)")
    a = p.parse_args(argv)
    script = pathlib.Path(a.script).resolve()
    report = pathlib.Path(a.report).resolve()
    if a.real and a.no_bench:
        _skip_real_benchmarks()
    sys.path.insert(0, str(script.parent))
    os.chdir(tempfile.mkdtemp(prefix="tutorial-"))   # plots and CSVs a benchmark saves land here
    sys.argv = [str(script)]
    start = time.perf_counter()
    namespace, records = run_statements(script, a.statement_seconds)
    result = {"script": script.name, "statements": records, "seconds": round(time.perf_counter() - start, 2)}
    tests = parametrized_tests(script)
    if a.pytest and tests:
        params = dict(kv.split("=", 1) for kv in a.pytest_params.split(",") if kv)
        result["pytest"] = run_pytest(script, tests, params)
        result["pytest"]["params"] = params
    if a.accuracy:
        from parity import tutorial_accuracy
        probe = tutorial_accuracy.PROBES.get(script.stem)
        if probe is not None:
            try:
                result["accuracy"] = probe(namespace)
            except Exception as e:  # noqa: BLE001 - reported, not raised
                result["accuracy"] = {"error": type(e).__name__, "message": str(e)[:2000], "traceback": _tail(e)}
    report.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
