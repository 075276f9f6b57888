"""The lesson's Triton scripts, unmodified, under `python -m minitriton run`.

Each script checks itself against torch (torch.testing.assert_close) and prints a success line; test_flash.py
is the lesson's own pytest file. All subprocesses start at once and are awaited together.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
LESSON = Path(os.environ.get("LESSON") or REPO.parent / "shared" / "seed" / "lesson").resolve()
TIMEOUT = 600

SCRIPTS = {
    "vector_add.py": "add: совпадает с x + y",
    "softmax_triton.py": "softmax: прямой и обратный проход совпадают с torch.softmax",
    "rmsnorm_triton.py": "rmsnorm: совпадает",
    "matmul_triton.py": "matmul: совпадает с a @ b",
}
FLASH = "test_flash.py"

if not LESSON.is_dir():
    pytest.skip(f"the lesson scripts are not at {LESSON} (set LESSON=...)", allow_module_level=True)
if importlib.util.find_spec("torch") is None:
    pytest.skip("the lesson scripts need torch (CPU), which is not installed", allow_module_level=True)


def _env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MINITRITON_") and k not in ("TRITON_F32_DEFAULT", "TRITON_INTERPRET", "TRITON_DEBUG")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the lesson directory is read-only
    return env


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Start every script in parallel; returns {name: (returncode, stdout, stderr)}."""
    procs = {}
    for name in SCRIPTS:
        missing = not (LESSON / name).is_file()
        if missing:
            continue
        cwd = tmp_path_factory.mktemp(name.replace(".py", ""))
        procs[name] = subprocess.Popen([sys.executable, "-m", "minitriton", "run", str(LESSON / name)], cwd=cwd,
                                       env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if (LESSON / FLASH).is_file():
        procs[FLASH] = subprocess.Popen(
            [sys.executable, "-m", "minitriton", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider", FLASH],
            cwd=LESSON, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = {}
    try:
        for name, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=TIMEOUT)
            out[name] = (proc.returncode, stdout, stderr)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return out


def _get(results, name):
    if name not in results:
        pytest.skip(f"{name} is missing from {LESSON}")
    return results[name]


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_lesson_script(results, script):
    rc, stdout, stderr = _get(results, script)
    assert rc == 0, f"{script} exited with {rc}\n--- stdout\n{stdout}\n--- stderr\n{stderr[-4000:]}"
    assert SCRIPTS[script] in stdout.splitlines(), stdout
    assert "Traceback" not in stderr


def test_lesson_flash_pytest(results):
    rc, stdout, stderr = _get(results, FLASH)
    assert rc == 0, f"pytest exited with {rc}\n--- stdout\n{stdout[-4000:]}\n--- stderr\n{stderr[-4000:]}"
    summary = [line for line in stdout.splitlines() if " passed" in line]
    assert summary and summary[-1].startswith("7 passed"), stdout[-2000:]
    assert "failed" not in summary[-1] and "error" not in summary[-1]
