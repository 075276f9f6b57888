"""The child side of the corpus: set a backend's process up for library code, import a project's module, run
one case and measure it against its reference.

It runs inside `python -m parity._child BACKEND` (a `Call` of `run_case`), so minitriton and real Triton never
share a process. On minitriton the process is made to look as it does under `python -m minitriton run`:
torch.cuda answers with the emulated GPU (libraries size launches from it, `runtime/torch_cuda.py`), and
torch's compiler stack (torch._dynamo/_inductor, which `torch.compile` and `torch.compiler.disable` decorators
import at module level) is imported before `install()`, with no Triton visible, as on a machine without
Triton: torch's inductor imports parts of Triton's compiler (`triton.backends.compiler`) minitriton does not
emulate.
"""
from __future__ import annotations

import ast
import json
import os
import sys
import types

import numpy as np

from parity.corpus import manifest

_READY: list = []


def backend() -> str:
    import minitriton
    if sys.modules.get("triton") is minitriton.triton_module:
        return "minitriton"
    return "interpreter" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def prepare() -> None:
    """Once per process: the library-facing setup described in the module docstring, and sys.path."""
    if _READY:
        return
    import minitriton
    if sys.modules.get("triton") is minitriton.triton_module:
        minitriton.uninstall()
        sys.modules["triton"] = None                 # torch's has_triton_package() is False while importing
        try:
            import torch._dynamo  # noqa: F401
            import torch._inductor.compile_fx  # noqa: F401
        finally:
            del sys.modules["triton"]
        minitriton.install()
        from minitriton.runtime import torch_cuda
        torch_cuda.emulate()
    for p in manifest.PROJECTS:
        if str(p.folder) not in sys.path:
            sys.path.insert(0, str(p.folder))
    sys.path.append(str(manifest.CACHE / "_deps"))   # only where the running Python lacks them
    _READY.append(True)


def stub_packages(*names: str, root) -> None:
    """Empty package modules for `names`: their __init__.py (which imports the whole library) is not run."""
    for name in names:
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [str(root.joinpath(*name.split(".")))]
            sys.modules[name] = m


def jit_functions(path) -> types.ModuleType:
    """The `@triton.jit` functions of a library file (and its triton/math imports and constant assignments),
    without the rest of the module: for files whose host code imports half a framework."""
    tree = ast.parse(path.read_text())
    keep = []
    for node in tree.body:
        if isinstance(node, ast.Import) and all(a.name.split(".")[0] in ("triton", "math") for a in node.names):
            keep.append(node)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton":
            keep.append(node)
        elif isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            keep.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
            keep.append(node)
    module = types.ModuleType(f"corpus_jit_{path.stem}")
    module.__file__ = str(path)
    code = compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec")
    sys.modules[module.__name__] = module          # @triton.jit reads the source through the module's file
    exec(code, module.__dict__)
    return module


class Ctx:
    """What a case gets: torch, the device, seeded inputs made on the CPU (the same on every backend)."""

    def __init__(self, torch, device: str, seed: int):
        self.torch, self.device = torch, device
        self.gen = torch.Generator().manual_seed(seed)

    def randn(self, *shape, dtype=None, scale=1.0, grad=False):
        t = (self.torch.randn(shape, generator=self.gen) * scale).to(dtype or self.torch.float32).to(self.device)
        return t.requires_grad_(grad)

    def rand(self, *shape, dtype=None):
        return self.torch.rand(shape, generator=self.gen).to(dtype or self.torch.float32).to(self.device)

    def randint(self, high, *shape):
        return self.torch.randint(0, high, shape, generator=self.gen).to(self.device)

    def f64(self, t):
        """A float64 CPU copy (a leaf that records gradients when `t` did)."""
        return t.detach().cpu().double().requires_grad_(t.requires_grad)


def compare(pairs, atol: float, rtol: float) -> dict:
    """Every (label, got, reference) within atol * max|ref| + rtol * |ref|; the worst |got - ref|."""
    worst, ratio, failed = 0.0, 0.0, []
    for label, got, ref in pairs:
        g = np.asarray(got.detach().cpu().double().numpy() if hasattr(got, "detach") else got, np.float64)
        r = np.asarray(ref.detach().cpu().double().numpy() if hasattr(ref, "detach") else ref, np.float64)
        if g.shape != r.shape:
            failed.append(f"{label}: shape {g.shape} vs reference {r.shape}")
            continue
        err = np.abs(g - r)
        bound = atol * (np.abs(r).max() if r.size else 0.0) + rtol * np.abs(r)
        bad = ~(err <= bound)
        worst = max(worst, float(np.nanmax(err, initial=0.0)) if np.isfinite(err).all() else float("inf"))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = max(ratio, float(np.nanmax(np.where(bound > 0, err / bound, np.where(err > 0, np.inf, 0)),
                                               initial=0.0)))
        if bad.any():
            failed.append(f"{label}: {int(bad.sum())} of {bad.size} beyond the tolerance")
    if not pairs:
        failed.append("the case compared nothing")
    return {"max_err": worst, "worst_over_tol": ratio, "ok": not failed, "failed": failed,
            "outputs": len(pairs)}


def run_case(name: str) -> str:
    """Run the corpus case `name` on this process's backend; a JSON text with the comparison."""
    prepare()
    import torch

    from parity.corpus import cases
    c = cases.CASE_BY_NAME[name]
    device = "cuda" if backend() == "cuda" else "cpu"
    torch.manual_seed(0)
    module = c.load()
    pairs = c.fn(module, Ctx(torch, device, seed=1234))
    if device == "cuda":
        torch.cuda.synchronize()
    return json.dumps(compare(pairs, c.atol, c.rtol))
