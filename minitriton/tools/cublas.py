"""`triton._C.libtriton` as far as tutorials reach into it: `nvidia.cublas.CublasLt`, the emulated H200's cuBLAS.

Tutorial 09 (`if is_cuda(): from triton._C.libtriton import nvidia`) times and checks its kernels against
`CublasLt(workspace).matmul(a, b, c)`: c = a @ b.T (a M x K, b N x K, fp16 or fp8 e4m3), accumulated in fp32
and rounded once to c's type. Here that is torch's fp32 matmul of the exactly widened operands: a cuBLAS
stand-in for checks, not cuBLAS's own summation order. Nothing else of Triton's C extension exists.
"""
from __future__ import annotations

from types import SimpleNamespace


class CublasLt:
    """`nvidia.cublas.CublasLt(workspace)`."""

    def __init__(self, workspace):
        self.workspace = workspace

    def matmul(self, a, b, c) -> None:
        """c = a @ b.T in fp32, rounded to c's dtype."""
        c.copy_((a.float() @ b.float().T).to(c.dtype))


nvidia = SimpleNamespace(cublas=SimpleNamespace(CublasLt=CublasLt))
