"""`tools/test.sh` runs what it is asked to: with pytest arguments, those tests alone (the page is neither built
nor tested); without, pytest and the page's suite side by side. The script runs here as written, in a copy of the
repository's layout whose set-up, linter and `node` are stand-ins that record how they were called, so no
browser can start and nothing is installed; pytest is the real one."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TINY = '''\
from pathlib import Path


def test_one():
    Path("ran").write_text("test_one")
    assert 1 + 1 == 2
'''


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + text)
    path.chmod(0o755)


@pytest.fixture
def checkout(tmp_path):
    """A folder laid out as the repository for tools/test.sh: the script itself, a tiny test file, and
    stand-ins for tools/setup.sh, .venv's ruff and python, and `node` (first on PATH), each appending its
    arguments to calls.log."""
    shutil.copy(ROOT / "tools" / "test.sh", tmp_path / "test.sh")
    (tmp_path / "tools").mkdir()
    (tmp_path / "test.sh").rename(tmp_path / "tools" / "test.sh")
    log = tmp_path / "calls.log"
    _executable(tmp_path / "tools" / "setup.sh", f'echo "setup SKIP_WEB=${{SKIP_WEB:-}}" >> {log}\n')
    _executable(tmp_path / ".venv" / "bin" / "ruff", f'echo "ruff $*" >> {log}\n')
    _executable(tmp_path / ".venv" / "bin" / "python", f'exec {sys.executable} "$@"\n')
    _executable(tmp_path / "bin" / "node", f'echo "node $*" >> {log}\n')
    (tmp_path / "test_tiny.py").write_text(TINY)
    return tmp_path


def _test_sh(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SKIP_WEB"}
    env["PATH"] = f"{checkout / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", str(checkout / "tools" / "test.sh"), *args], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=120)


def _calls(checkout: Path) -> list[str]:
    return (checkout / "calls.log").read_text().splitlines()


def test_pytest_arguments_run_those_tests_alone(checkout):
    done = _test_sh(checkout, "test_tiny.py", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (checkout / "ran").read_text() == "test_one"
    assert ("web tests not run: pytest arguments given (run `bash tools/test.sh` for everything)"
            in done.stdout.splitlines())
    calls = _calls(checkout)
    assert calls[0] == "setup SKIP_WEB=1"          # the page is not built either
    assert not [c for c in calls if c.startswith("node")], calls


def test_a_failing_test_fails_the_run(checkout):
    (checkout / "test_tiny.py").write_text(TINY.replace("== 2", "== 3"))
    done = _test_sh(checkout, "test_tiny.py")
    assert done.returncode != 0 and "1 failed" in done.stdout, done.stdout
    assert not [c for c in _calls(checkout) if c.startswith("node")]


def test_no_arguments_run_everything(checkout):
    done = _test_sh(checkout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "web tests not run" not in done.stdout
    assert (checkout / "ran").read_text() == "test_one"
    calls = _calls(checkout)
    assert calls[0] == "setup SKIP_WEB="
    (node,) = [c for c in calls if c.startswith("node")]
    assert node.startswith("node --test ") and node.endswith(" web/tests/")


def test_without_arguments_a_failure_on_either_side_fails_the_run(checkout):
    """pytest runs beside the page's tests: its failure still fails the run, and so does the page's."""
    (checkout / "test_tiny.py").write_text(TINY.replace("== 2", "== 3"))
    done = _test_sh(checkout)
    assert done.returncode != 0 and "1 failed" in done.stdout, done.stdout
    assert [c for c in _calls(checkout) if c.startswith("node")], "the page's tests ran all the same"
    (checkout / "test_tiny.py").write_text(TINY)
    _executable(checkout / "bin" / "node", "exit 1\n")
    done = _test_sh(checkout)
    assert done.returncode != 0 and "1 passed" in done.stdout, done.stdout
