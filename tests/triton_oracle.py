"""Differential-test oracle for the tests: a thin re-export of `parity.oracle` (where the machinery lives).

`run_batch` / `run_in_interpreter` run kernel source under real Triton's interpreter in a child process
(`TRITON_INTERPRET=1`, torch CPU); `run_in_minitriton` runs it in this process against minitriton. See
parity/oracle.py for the argument transport (NumPy arrays, `BF16`, scalars) and the child protocol.
"""
from __future__ import annotations

import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from parity.oracle import (PYTHON, BF16, Call, Case, OracleUnavailable, Pool, Result, clone,  # noqa: E402,F401
                           load_minitriton_module, run_batch, run_in_interpreter, run_in_minitriton, ulp_distance,
                           versions)

__all__ = ["PYTHON", "BF16", "Call", "Case", "OracleUnavailable", "Pool", "Result", "clone", "load_minitriton_module",
           "run_batch", "run_in_interpreter", "run_in_minitriton", "ulp_distance", "versions"]
