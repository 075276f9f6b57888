"""A corpus case: one library kernel (or host wrapper that launches it), with small inputs, the
reference the library's own tests use (a torch formula evaluated in float64) and a tolerance.

A case is a function `(module, ctx) -> [(label, got, reference), ...]`, registered with `@case(...)` in the
`cases_<project>` modules; `module` is the library module `KernelCase.module` names, imported from the cache
(or, with `jit_file`, only that file's `@triton.jit` functions: `harness.jit_functions`). Outputs pass when
every element is within `atol * max|ref| + rtol * |ref|`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from parity.corpus import harness, manifest


@dataclass(frozen=True)
class KernelCase:
    name: str
    project: str
    module: str           # the library module (dotted), or the file for `jit_file` cases
    kernels: str          # the @triton.jit functions it launches
    fn: Callable
    atol: float
    rtol: float
    stub: tuple = ()      # packages whose __init__.py is skipped (harness.stub_packages)
    jit_file: bool = False

    def load(self):
        p = manifest.project(self.project)
        if self.jit_file:
            return harness.jit_functions(p.folder / self.module)
        harness.stub_packages(*self.stub, root=p.folder)
        return importlib.import_module(self.module)


CASES: list = []
# Kernels built on fp32 tl.dot: on sm90 (and on minitriton) its inputs are rounded to TF32 (docs/semantics.md
# S1.24), 10 mantissa bits, so outputs carried through chunked states differ from float64 by ~1e-3 of their
# size (with TRITON_F32_DEFAULT=ieee, minitriton's errors are 4e-6 and 2e-5).
TF32 = {"atol": 1e-2, "rtol": 1e-2}


def case(project, name, module, kernels, atol=1e-5, rtol=1e-4, stub=(), jit_file=False):
    def register(fn):
        CASES.append(KernelCase(name, project, module, kernels, fn, atol, rtol, tuple(stub), jit_file))
        return fn
    return register


def with_grads(ctx, fn, ref, inputs, grad_of=None, dy=None):
    """Outputs of `fn(*inputs)` and the gradients of `(out * dy).sum()` against `ref` on float64 copies."""
    torch = ctx.torch
    ins = [t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t
           for t in inputs]
    ref_ins = [ctx.f64(t) if isinstance(t, torch.Tensor) and t.is_floating_point() else
               (t.cpu() if isinstance(t, torch.Tensor) else t) for t in ins]
    out, want = fn(*ins), ref(*ref_ins)
    pairs = [("out", out, want)]
    grads = [i for i, t in enumerate(ins) if isinstance(t, torch.Tensor) and t.requires_grad]
    if grads:
        dy = ctx.randn(*out.shape) if dy is None else dy
        out.backward(dy.to(out.dtype))
        want.backward(dy.detach().cpu().double())
        pairs += [(f"grad{i}", ins[i].grad, ref_ins[i].grad) for i in grads]
    return pairs

