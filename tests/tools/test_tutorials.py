"""parity.tutorials: Triton's tutorials, unmodified, under `python -m minitriton run`.

The runner's parts are tested on scripts written here. The tutorials themselves are not part of the
repository (`python -m parity.tutorials --dir .tutorials --fetch` downloads them at their pinned commits):
the tests that run them skip when `.tutorials/` does not hold the pinned files (CI has no GitHub access).
"""
from __future__ import annotations

import pathlib
import textwrap

import pytest

from parity import tutorial_run, tutorials

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDER = ROOT / ".tutorials"


def test_statements_run_in_order_and_a_failing_one_does_not_stop_the_rest(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent('''\
        """A docstring."""
        x = 1
        assert x == 2, "a check"
        y = x + 1


        def f():
            raise ValueError("inside f")


        f()
        z = y * 10
    '''))
    namespace, records = tutorial_run.run_statements(script)
    assert [(r["line"], r["status"]) for r in records] == [(2, "ok"), (3, "error"), (4, "ok"), (7, "ok"),
                                                          (11, "error"), (12, "ok")]
    assert records[1]["error"] == "AssertionError" and records[1]["message"] == "a check"
    assert 'script.py", line 8, in f' in records[4]["traceback"]   # tracebacks point into the script
    assert namespace["z"] == 20 and namespace["__name__"] == "__main__"


def test_only_parametrized_tests_are_given_to_pytest(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import pytest\n\n@pytest.mark.parametrize('n', [1])\ndef test_a(n):\n    pass\n\n"
                      "def test_b(M, N):\n    pass\n\ntest_b(1, 2)\n")
    assert tutorial_run.parametrized_tests(script) == ["test_a"]


def test_verdicts():
    ok = {"status": "ok"}
    check = {"status": "error", "error": "AssertionError"}
    crash = {"status": "error", "error": "TypeError"}
    close = {"output": "y", "kernel": {}, "no_further": True, "tutorial_check_passes": False}
    assert tutorials.verdict({"statements": [ok, ok], "exit_status": 0}) == {
        "ran_to_end": True, "own_checks_pass": True, "no_further_than_reference": None}
    assert tutorials.verdict({"statements": [ok, check, ok], "exit_status": 0, "accuracy": {"outputs": [close]}}) == {
        "ran_to_end": True, "own_checks_pass": False, "no_further_than_reference": True}
    assert tutorials.verdict({"statements": [ok, crash], "exit_status": 0})["ran_to_end"] is False
    assert tutorials.verdict({"statements": [ok], "exit_status": "timeout"})["ran_to_end"] is False
    failed_test = {"exit_code": 1, "tests": []}
    assert tutorials.verdict({"statements": [ok], "exit_status": 0, "pytest": failed_test})["own_checks_pass"] is False


def test_a_file_that_differs_from_its_pin_is_not_run(tmp_path, capsys):
    (tmp_path / "01-vector-add.py").write_text("raise SystemExit('must not run')\n")
    assert tutorials.main(["--dir", str(tmp_path), "--only", "01", "--no-save"]) == 1
    assert "changed (hash differs from the pinned one)" in capsys.readouterr().out


def test_missing_files_are_named(tmp_path, capsys):
    assert tutorials.main(["--dir", str(tmp_path), "--only", "02", "--no-save"]) == 2
    assert "02-fused-softmax" in capsys.readouterr().err


def _pinned(name: str) -> pathlib.Path:
    path = FOLDER / f"{name}.py"
    if not path.exists() or tutorials.digest(path) != tutorials.PINNED[name][1]:
        pytest.skip(f"{name}.py is not in .tutorials/ at its pinned version (python -m parity.tutorials "
                    f"--dir .tutorials --fetch downloads it; it needs github.com)")
    return path


def _run(name: str) -> dict:
    record = tutorials.run_one(_pinned(name), real=False, timeout=1800)
    record["verdict"] = tutorials.verdict(record)
    return record


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("name", ["01-vector-add", "02-fused-softmax", "04-low-memory-dropout", "06-fused-attention"])
def test_tutorial_passes_its_own_checks(name):
    record = _run(name)
    assert record["verdict"]["ran_to_end"] and record["verdict"]["own_checks_pass"], record
    if name == "06-fused-attention":  # its check is a pytest test
        assert [t["outcome"] for t in record["pytest"]["tests"]] == ["passed"]


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("name", ["03-matrix-multiplication", "05-layer-norm", "08-grouped-gemm"])
def test_tutorial_outputs_are_no_further_from_float64_than_its_reference(name):
    """These check against torch on the CPU, whose fp16 matmul and layer norm round differently from a GPU's:
    the check may fail while the kernel's outputs are the closer ones to float64."""
    record = _run(name)
    failing = [s for s in record["statements"] if s["status"] != "ok"]
    fp8 = [s for s in failing if "Float8_e5m2" in s.get("message", "")]   # 03's fp8 block: fp8 not emulated yet
    assert all(s["error"] == "AssertionError" for s in failing if s not in fp8), failing
    rows = [o for o in record["accuracy"]["outputs"] if "kernel" in o]
    assert rows and all(o["no_further"] for o in rows), rows
