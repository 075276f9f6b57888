"""The parity oracle's worker processes: a child that dies while compiling leaves its message in the result."""
from __future__ import annotations

import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from parity.oracle import Case, Pool  # noqa: E402

ABORTS = '''import os
os.write(2, b"python: Instructions.cpp:3150: CastInst::CreateFPCast: Assertion `Invalid cast' failed.\\n")
os.abort()
'''
RUNS = '''import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    tl.store(x_ptr + tl.arange(0, 4), tl.arange(0, 4))
'''


def test_a_child_that_aborts_while_compiling_reports_what_it_wrote():
    """An LLVM assertion aborts the process inside the stderr capture: the message reaches the result, and the
    restarted child runs the next case."""
    with Pool("minitriton", 1) as pool:
        died, ran = pool.run([Case(ABORTS, "k", (1,), (np.zeros(4, np.int32),)),
                              Case(RUNS, "k", (1,), (np.zeros(4, np.int32),))])
        left = sorted(p.name for p in pool.tmp.glob("compile-stderr-*"))
    assert died.error_type == "WorkerError"
    assert died.error.startswith("WorkerError: the minitriton child died on this case\n")
    assert "Assertion `Invalid cast' failed" in died.error
    assert ran.error is None and ran.args[0].tolist() == [0, 1, 2, 3]
    assert left == []
