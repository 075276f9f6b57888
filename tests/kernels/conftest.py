"""Set-up for the kernel tests: minitriton stands in for `triton` before any kernel module is imported, and
the array kinds every host wrapper must accept are fixtures.

This directory deliberately has no __init__.py: under pytest's default (prepend) import mode a package
here would be imported as `kernels` — the name of its directory — and shadow the project's `kernels`
package.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import minitriton

minitriton.install()  # `import triton` in kernels/*.py now resolves to minitriton

import minitriton.language as tl  # noqa: E402

from kernels import _host  # noqa: E402


@dataclass(frozen=True)
class ArrayKind:
    """One kind of array the kernels accept: 'numpy' (float32/float16), 'buffer' (minitriton.Buffer, bf16)
    or 'torch' (CPU tensors, float32/bfloat16)."""

    lib: str
    dtype: str

    def __str__(self):
        return f"{self.lib}-{self.dtype}"

    def make(self, values):
        """`values` (any float array) stored as this kind, rounded to nearest even for bf16/fp16."""
        values = np.asarray(values, dtype=np.float64)
        if self.lib == "torch":
            import torch
            return torch.from_numpy(values).to(getattr(torch, self.dtype))
        if self.lib == "buffer":
            return minitriton.Buffer.from_float(values.astype(np.float32), tl.bfloat16)
        return values.astype(self.dtype)

    def is_kind(self, a) -> bool:
        """True if `a` is an array of this kind and dtype (what a wrapper must return)."""
        if self.lib == "torch":
            return _host.is_torch(a) and _host.dtype_name(a) == self.dtype
        if self.lib == "buffer":
            return isinstance(a, minitriton.Buffer) and _host.dtype_name(a) == self.dtype
        return isinstance(a, np.ndarray) and a.dtype == np.dtype(self.dtype)


KINDS = [ArrayKind("numpy", "float32"), ArrayKind("buffer", "bfloat16"), ArrayKind("torch", "float32"),
         ArrayKind("torch", "bfloat16")]


@pytest.fixture(params=KINDS, ids=str)
def array_kind(request) -> ArrayKind:
    """Each array kind in turn: NumPy fp32, bf16 through minitriton.Buffer, torch CPU fp32 and bf16."""
    if request.param.lib == "torch":
        pytest.importorskip("torch", reason="torch is not installed")
    return request.param


@pytest.fixture(params=[ArrayKind("numpy", "float32"), ArrayKind("buffer", "bfloat16")], ids=str)
def storage_kind(request) -> ArrayKind:
    """The two storage dtypes without torch: fp32 (NumPy) and bf16 (minitriton.Buffer)."""
    return request.param
