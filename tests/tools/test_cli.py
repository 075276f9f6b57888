"""The command lines' answers to a missing file, module, GPU or extra: one line saying what to do, no traceback."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.check import cuda_devices

ROOT = Path(__file__).resolve().parents[2]
no_gpu = pytest.mark.skipif(cuda_devices() > 0, reason="this machine has a CUDA GPU")


def _run(*args, cwd=ROOT, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT))   # the repository's packages, from any folder
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_run_a_missing_script(tmp_path):
    done = _run("-m", "minitriton", "run", "nosuch.py", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"python -m minitriton run: can't open file '{tmp_path / 'nosuch.py'}': "
                           "[Errno 2] No such file or directory\n")


@pytest.mark.parametrize("module", ["nosuch", "nosuch.sub"])
def test_run_a_missing_module(tmp_path, module):
    done = _run("-m", "minitriton", "run", "-m", module, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"python -m minitriton run: No module named {module}\n"


def test_check_kernel_without_hypothesis_names_the_extra(tmp_path):
    (tmp_path / "hypothesis.py").write_text("raise ModuleNotFoundError(\"No module named 'hypothesis'\", "
                                            "name='hypothesis')\n")   # stands for hypothesis not installed
    done = _run("-c", "import minitriton.testing as t; t.empty((2,), 'float32'); from minitriton.testing "
                "import check_kernel", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == ("ModuleNotFoundError: minitriton.testing.check_kernel needs hypothesis: "
                                            "pip install 'minitriton[testing]'")


@no_gpu
def test_parity_on_cuda_without_a_gpu_says_so_at_once():
    done = _run("-m", "parity", "--target", "cuda", timeout=60)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "shows none" in done.stderr
    assert "python -m parity --target interpreter" in done.stderr


@no_gpu
@pytest.mark.parametrize("name", ["vector_add", "matmul"])
def test_kernel_module_without_a_gpu_checks_on_minitriton(name):
    done = _run("-m", f"kernels.{name}")
    assert done.returncode == 0, done.stdout + done.stderr
    first, header, line = done.stdout.splitlines()
    assert first == f"kernels.{name}: no CUDA GPU here, so it runs on minitriton instead (python -m kernels {name})"
    assert header.startswith("the lesson's kernels on minitriton")
    assert line.startswith(f"ok     {name} ") and "moved" in line and "ideal" in line


def test_kernels_check_refuses_an_unknown_name():
    done = _run("-m", "kernels", "nosuch")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: python -m kernels [NAME ...]")


def test_bench_save_records_full_runs_only():
    done = _run("-m", "bench", "--save", "--quick")
    assert done.returncode == 2 and "--save records full runs only" in done.stderr.splitlines()[-1]
