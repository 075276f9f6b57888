"""Differential-test oracle for the tests: a thin re-export of `parity.oracle` (where the machinery lives).

`run_batch` / `run_in_interpreter` run kernel source under real Triton's interpreter in a child process
(`TRITON_INTERPRET=1`, torch CPU); `run_in_minitriton` runs it in this process against minitriton. See
parity/oracle.py for the argument transport (NumPy arrays, `BF16`, scalars) and the child protocol.
"""
from __future__ import annotations

import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from parity.oracle import (PYTHON, BF16, Call, Case, OracleUnavailable, Pool, Result, clone,  # noqa: E402,F401
                           load_minitriton_module, run_batch, run_in_interpreter, run_in_minitriton, ulp_distance,
                           versions)

__all__ = ["PYTHON", "BF16", "Call", "Case", "OracleUnavailable", "Pool", "Result", "clone", "load_minitriton_module",
           "run_batch", "run_in_interpreter", "run_in_minitriton", "ulp_distance", "versions",
           "assert_same_as_interpreter"]


def assert_same_as_interpreter(src: str, cases: list, bitwise_floats: bool = False):
    """Run every (kernel name, grid, args, kwargs) of `src` in Triton's interpreter and in minitriton and
    assert that every array argument ends equal (float bit patterns with `bitwise_floats`: NaN payloads and
    zero signs count). Skips the calling test when the interpreter cannot run here."""
    import numpy as np
    import pytest
    try:
        results = run_batch([Case(src, name, grid, args, kwargs) for name, grid, args, kwargs in cases])
    except OracleUnavailable as e:
        pytest.skip(f"real Triton's interpreter is not available in a subprocess: {e}")
    for (name, grid, args, kwargs), it in zip(cases, results):
        assert it.ok, f"{name}: interpreter failed: {it.error}"
        mt = run_in_minitriton(src, name, grid, args, kwargs)
        for i, a in enumerate(args):
            if isinstance(a, (np.ndarray, BF16)):
                x = mt.args[i].array if isinstance(a, BF16) else mt.args[i]
                y = it.args[i].array if isinstance(a, BF16) else it.args[i]
                if bitwise_floats and x.dtype.kind == "f":
                    x, y = x.view(np.dtype(f"u{x.itemsize}")), y.view(np.dtype(f"u{y.itemsize}"))
                np.testing.assert_array_equal(x, y, err_msg=f"{name} {kwargs} arg {i}")
