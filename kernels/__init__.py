"""The lesson's kernels: one source for minitriton (browser, CPU) and for real Triton on a GPU.

Each module imports `triton` and `triton.language as tl` exactly as the lesson does — under minitriton call
`minitriton.install()` first — and holds the `@triton.jit` device code, host wrappers that take NumPy arrays,
`minitriton.Buffer`s (bf16) or torch tensors (through `kernels._host`, so nothing imports torch unless the
caller passes torch tensors), a float64 NumPy `reference_*`, and `traffic()`, the bytes an ideal kernel moves
and its FLOPs.

    vector_add       the programming model: grid, program_id, arange, the masked tail
    softmax          fusion: one read, one write per element; online softmax for long rows; backward
    rmsnorm          a row reduction in fp32 over bf16 storage; dw reduced across programs without atomics
    matmul           tiles, tl.dot and the K loop
    flash_attention  attention without materialising the score matrix

For torch tensors the wrappers keep a launch plan per input layout (kind, shape, dtype, strides). On real
Triton, the plans of vector add, softmax, the RMSNorm forward and the TMA attention forward also keep the
`CompiledKernel` and launch it directly while the caller's arrays are 16-byte aligned
(`_host.compiled_launcher`), which cuts a call's host time so that launches of a few microseconds stay
GPU-bound (`docs/findings.md` §4).

`kernels.tolerances` holds the per-dtype tolerances the tests use. Modules load on first access
(`kernels.softmax`), so importing the package imports neither triton nor torch.
"""
from __future__ import annotations

import importlib

KERNELS = ("vector_add", "softmax", "rmsnorm", "matmul", "flash_attention")

__all__ = list(KERNELS) + ["tolerances"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
