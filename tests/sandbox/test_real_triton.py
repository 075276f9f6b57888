"""The course's reference solutions are real Triton: each exercise's demo runs them through Triton's own CPU
interpreter (torch CPU tensors) and through minitriton, and the outputs agree (exactly for copies and
elementwise work; within float rounding for reductions; within TF32's bound for FP32 tl.dot, which the
interpreter computes exactly and minitriton, like the GPU, in TF32). Skipped without torch and triton."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = pathlib.Path(__file__).with_name("real_triton_demos.py")

# the largest difference each exercise's outputs may show between the interpreter and minitriton
BOUND = {"copy": 0.0, "strided_copy": 0.0, "transpose": 0.0, "outer": 0.0, "row_stats": 1e-5, "softmax_bwd": 1e-6,
         "rmsnorm": 1e-5, "rmsnorm_bwd": 1e-4, "dropout": 0.0, "flash_attention": 1e-5,
         "practice": 0.05, "matmul": 0.05, "matmul_act": 0.01}


@pytest.fixture(scope="module")
def rows():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    env = dict(os.environ, PYTHONPATH=str(ROOT))   # sandbox/ is a folder of the repository, not installed
    proc = subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_every_served_exercise_ran_on_the_interpreter(rows):
    from sandbox.exercises import EXERCISES
    assert {r["exercise"] for r in rows} == {ex.id for ex in EXERCISES}


def test_the_interpreter_and_minitriton_agree(rows):
    for r in rows:
        assert r["unwritten"] == [0, 0], r
        assert r["max_abs_diff"] <= BOUND[r["exercise"]], r
