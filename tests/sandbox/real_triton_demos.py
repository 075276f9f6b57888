"""Run each course exercise's reference solution through real Triton's CPU interpreter (TRITON_INTERPRET=1, torch
CPU tensors) and through minitriton, with the exercise's own demo, and print one JSON line per output: the
exercise, the output, the largest absolute difference and the elements each side left unwritten.

Run in a subprocess by test_real_triton.py: the interpreter must be chosen before triton is imported, and the
learner's `import triton` must mean real Triton here (the bridge makes it minitriton).
"""
from __future__ import annotations

import json
import linecache
import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

import minitriton.language  # noqa: E402
from sandbox import bridge  # noqa: E402
from sandbox.exercises import COURSE  # noqa: E402
from sandbox.exercises._checks import unwritten  # noqa: E402


class TorchCPU:
    """NumPy arrays to and from torch CPU tensors (what Triton's interpreter takes)."""

    name = "triton-interpreter"

    @staticmethod
    def put(a):
        return torch.from_numpy(np.ascontiguousarray(a).copy())

    @staticmethod
    def get(t):
        return t.detach().numpy()


def real_module(ex):
    """The reference solution as a module whose `import triton` is real Triton."""
    filename = f"real_{ex.id}.py"
    code = ex.solution["en"]
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    mod = types.ModuleType(f"real_{ex.id}")
    mod.__file__ = filename
    exec(compile(code, filename, "exec"), mod.__dict__)
    return mod


def main() -> int:
    for ex in COURSE:
        if any(not hasattr(minitriton.language, name) for name in ex.needs):
            continue
        with bridge._op(bridge.Capture()):
            emulated = ex.demo(bridge.load(ex, ex.solution["en"], as_main=False), "en")
            real = ex.demo(real_module(ex), "en", TorchCPU())
        for (label, a), (_, b) in zip(emulated, real):
            a, b = np.asarray(a), np.asarray(b)
            with np.errstate(invalid="ignore"):
                diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            print(json.dumps({"exercise": ex.id, "output": label, "shape": list(a.shape),
                              "max_abs_diff": float(np.nanmax(diff)) if diff.size else 0.0,
                              "unwritten": [int(unwritten(a).sum()), int(unwritten(b).sum())]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
