"""`python -m parity.torch_agreement`: kernels/ against torch's own ops, outputs and gradients.

On the GPU it runs full shapes (results in parity/results/); here it runs `--small` on Triton's CPU interpreter
in a subprocess, so the script and its references stay correct between GPU runs. Plus a check that the
comparison fails when it should. Skipped when real Triton or torch is not installed.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

def _installed(name):
    # the distribution, not `import triton`: the kernel tests' conftest makes `triton` minitriton in this process
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_real_triton = pytest.mark.skipif(not (_installed("torch") and _installed("triton")),
                                       reason="needs torch and real Triton (its CPU interpreter) installed")


@needs_real_triton
def test_small_run_on_the_interpreter_agrees_with_torch(tmp_path):
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-m", "parity.torch_agreement", "--small", "--out", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    (result,) = tmp_path.glob("torch-agreement-interpreter-*.json")
    checks = json.loads(result.read_text())["checks"]
    made = [r for r in checks if r["ok"] is not None]
    assert made and all(r["ok"] for r in made)
    # every kernel and every gradient of the three autograd wrappers is checked
    outputs = {(r["case"].split()[0], r["output"]) for r in made}
    assert outputs >= {("vector_add", "out"), ("softmax", "y"), ("softmax", "dx"), ("rmsnorm", "y"),
                       ("rmsnorm", "dx"), ("rmsnorm", "dw"), ("matmul", "c"), ("attention", "o"),
                       ("attention", "dq"), ("attention", "dk"), ("attention", "dv")}
    # what the interpreter cannot do is listed with its reason, not dropped
    skipped = [r for r in checks if r["ok"] is None]
    assert skipped and all("bf16" in r["detail"] for r in skipped)
    assert (tmp_path / result.name.replace(".json", ".md")).read_text().count("| ok |") == len(made)


def test_a_wrong_output_fails_and_says_by_how_much():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from parity.torch_agreement import Checks
    c = Checks()
    ref = torch.linspace(-1, 1, 101, dtype=torch.float64)
    c.close("case", "y", "float32", ref.float(), ref)                  # fp32 rounding only: passes
    wrong = ref.clone()
    wrong[7] += 1e-3                                                    # one element off by 1e-3 of the scale
    c.close("case", "y", "float32", wrong.float(), ref)
    c.close("case", "y", "exact", ref.float() + 0, ref.float().double() + 1e-12)
    assert [r["ok"] for r in c.rows] == [True, False, False]
    assert c.rows[1]["max_err"] == pytest.approx(1e-3, rel=1e-3)
    assert "1 of 101 elements" in c.rows[1]["detail"]
    assert c.rows[2]["detail"] == "101 elements differ"
