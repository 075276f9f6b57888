"""parity.testcore without Triton's files: the bf16 lift counts the skips it replaces, the stored runs keep
failures and the cases where the backends differ (not the cases both pass), messages name paths as the
repository does, and the failures are classified by cause."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("resource", reason="parity.testcore reads its children's CPU time with the POSIX `resource` "
                    "module, which wasm32 (Pyodide) lacks")
from parity.testcore import __main__ as testcore  # noqa: E402
from parity.testcore import causes, report  # noqa: E402

SKIP = 'pytest.skip("bfloat16 is not supported in the interpreter")'
ATOMIC_SKIP = 'pytest.skip("Only test atomic bfloat16/float16 ops on GPU")'


def test_bf16_lift_replaces_every_counted_skip(tmp_path):
    source = tmp_path / "test_core.py"
    body = "\n".join(f"def test_{i}():\n    {SKIP}\n" for i in range(4)) + f"\ndef test_atomic():\n    {ATOMIC_SKIP}\n"
    source.write_text(body)
    lifted = testcore.lift_bf16(source).read_text()
    assert "pytest.skip" not in lifted and lifted.count("pass  # bf16 skip lifted") == 5
    source.write_text(body.replace(SKIP, "pass", 1))  # a file with a skip fewer is not the pinned one
    with pytest.raises(testcore.Unavailable, match="3"):
        testcore.lift_bf16(source)


def _case(outcome, message=""):
    return {"outcome": outcome, "seconds": 0.1, "message": message}


def test_stored_runs_keep_failures_and_differences_only():
    runs = {
        "minitriton": {"seconds": 2.0, "cpu_seconds": 1.5, "cases": {
            "test_a[1]": _case("passed"), "test_a[2]": _case("passed"), "test_b[1]": _case("failed", "E: x\nmore"),
            "test_c[1]": _case("skipped", "why not")}},
        "interpreter": {"seconds": 5.0, "cpu_seconds": 4.0, "cases": {
            "test_a[1]": _case("passed"), "test_a[2]": _case("failed", "F: y"), "test_b[1]": _case("failed", "E: x"),
            "test_c[1]": _case("skipped", "why not")}},
    }
    stored = report.compact(runs)
    assert stored["minitriton"]["counts"] == {"passed": 2, "failed": 1, "skipped": 1, "total": 4}
    assert stored["minitriton"]["failures"] == {"E: x": ["test_b[1]"]}
    assert stored["interpreter"]["failures"] == {"E: x": ["test_b[1]"], "F: y": ["test_a[2]"]}
    assert stored["differing"] == {"pf": ["test_a[2]"]} and stored["differing_order"] == ["minitriton", "interpreter"]
    assert "test_a[1]" not in json.dumps(stored)


def test_messages_name_paths_inside_the_repository(tmp_path):
    xml = tmp_path / "run.xml"
    path = f"{testcore.REPO}/build/triton-tests/c2698d075435/test_core.py"
    xml.write_text(f'<testsuite><testcase name="test_x[1]" time="0.5"><failure message="E: at {path}:3">'
                   f'Traceback in {path}</failure></testcase></testsuite>')
    [(name, case)] = testcore.read_junit(xml).items()
    assert name == "test_x[1]" and case["outcome"] == "failed"
    assert str(testcore.REPO) not in case["message"] and "build/triton-tests/c2698d075435/test_core.py:3" in case["message"]


def test_each_failure_class_has_a_cause():
    mismatch = "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1 / 2048 (0.0%)"
    assert causes.classify("test_scaled_dot[32-64-128-True-True-False-e2m1-e5m2-4-16-1]", mismatch).kind == "reference"
    # a scaled dot failing otherwise, or another case of it, is not excused by the CPU reference
    assert causes.classify("test_scaled_dot[32-64-128-True-True-False-e2m1-e5m2-4-16-1]", "CompilationError") is None
    assert causes.classify("test_scaled_dot[32-64-128-False-True-True-e2m1-bf16-4-16-1]", mismatch) is None
    assert causes.classify("test_tma_load_block_shape_err", "CompilationError: at 2:11").kind == "gpu"
    assert causes.classify("test_dot[1-2-3]", "AssertionError") is None
