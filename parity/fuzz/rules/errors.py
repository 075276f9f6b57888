"""Rules that explain an error of the GPU side instead of values: a compiler assertion."""
from __future__ import annotations


import numpy as np

from parity.fuzz.explain import Probe, Rule
from parity.fuzz.rules.common import H200, probe_kernel


# ---- compiler_assertion

def _compiler_assertion(view) -> bool:
    """Only the GPU side raised, and its compiler stopped on an LLVM assertion."""
    return bool(view.verdict.raised) and view.verdict.raised[0] == "triton" and "Assertion" in view.gpu_error \
        and "llvm" in view.gpu_error.lower()


RULES = [
    Rule("compiler_assertion",
         "Triton's compiler stops on an LLVM assertion (the GPU side's worker aborts) for a kernel minitriton "
         "runs: a crash of the pinned toolchain, not a value to compare.",
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 2 + tl.arange(0, 2))",
             "tl.store(out_ptr + pid * 2 + tl.arange(0, 2), (x.to(tl.float16) % tl.full((2,), 0, tl.uint32))"
             ".to(tl.bfloat16))"]),
             (np.zeros((2, 2), np.int32), np.zeros((2, 2), np.float32)), (2,), [float("nan")] * 4,
             lambda src, gpu: False,
             f"{H200}: compiling this kernel (the fuzz's shrunk reproducer of seed 1113992, 7 fragments) aborts "
             "with `llvm/lib/IR/Instructions.cpp:3150: CastInst::CreateFPCast: Assertion `(C->getType() == Ty || "
             "SrcBits != DstBits) && \"Invalid cast\"' failed`; the same remainder converted to fp32 compiles.",
             gpu_raises="Assertion"),
         _compiler_assertion),
]
