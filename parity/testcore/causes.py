"""Why a test_core.py case fails on minitriton: each known failure class with its kind and its evidence.

A cause matches a case by its test name (regex on the pytest node id) and, where given, the failure message. Kinds:

* `gpu` - a real difference where minitriton does what the GPU does (Triton 3.6 on an H200); `row` names the
  measurement in docs/semantics.md.
* `missing` - a feature minitriton lacks.
* `needs-gpu` - the case needs CUDA itself (a CUDA device, PTX, ...): it fails on Triton's interpreter too.
* `elsewhere` - behaviour another part of the project owns and is changing.
* `reference` - the test's own reference, computed by CPU torch, is further from float64 than minitriton.

A failure no cause matches is listed as unexplained: the report and the command's exit status show it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    name: str
    kind: str
    test: str            # regex on the node id
    explanation: str
    row: str = ""        # docs/semantics.md row of the GPU measurement (kind "gpu")
    message: str = ""    # regex on the failure message (optional)

    def matches(self, nodeid: str, message: str) -> bool:
        if not re.search(self.test, nodeid):
            return False
        return not self.message or re.search(self.message, message or "", re.S) is not None


CAUSES = [
    Cause("cpu-reference", "reference", r"test_scaled_dot\[(32-64-128|128-128-64)-True-True-False-e2m1-e5m2-",
          "the test's reference is CPU torch's bf16 matmul, whose result is bf16: one element is 120.0 where the "
          "float64 sum of the same bf16 operands is 121.52; minitriton accumulates in fp32 as the GPU's MMA does "
          "(121.5), 1.25 % off the reference's value (the other case: 1.7 %), over the test's rtol of 1 %. On a GPU the reference is "
          "cuBLAS's, accumulated in fp32.", message=r"Mismatched elements: 1 /"),
    Cause("compile-error-type", "gpu", r"test_tma_(load|store)_block_shape_err",
          "the test expects the interpreter's InterpreterError; minitriton raises what the GPU raises, "
          "CompilationError (with the same message in its __cause__).",
          row="S14.17", message=r"CompilationError"),
    Cause("cuda-device", "needs-gpu", r"test_zero_strided_tensors",
          "the test enters torch.cuda.device(...), which needs CUDA (Triton's interpreter fails it the same way).",
          message=r"'<' not supported"),
]


def classify(nodeid: str, message: str):
    """The first cause matching a failed case, or None."""
    for cause in CAUSES:
        if cause.matches(nodeid, message):
            return cause
    return None
