"""minitriton: Triton's kernel language emulated in pure Python + NumPy, faithful to what an NVIDIA GPU computes.

    import minitriton as triton               # or: minitriton.install(); import triton
    import minitriton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)   # NumPy arrays or torch CPU tensors

Supported: the `triton` launch surface (jit, autotune, heuristics, Config, cdiv, next_power_of_2, testing) and
`triton.language` (program ids, arange/full/zeros, masked load/store with pointer arithmetic, atomics, dot with
the GPU's TF32/bf16/fp16 rules, reductions and scans, shape ops, math and libdevice, Philox random numbers
(`tl.rand`, `tl.randn`, `tl.randint`, bit-exact with Triton), `tl.swizzle2d`, debug ops), every
integer and float dtype with bf16 rounded like the GPU, bounds-checked memory with precise errors, and
traffic counters (`record()`), which `triton.profiler` (Proton's sessions and scopes, minitriton/profiler) reports
per scope with the emulator's own time, never GPU time; `triton.tools.mxfp` (the MX formats' host tensors).
`triton.runtime.driver` and `kernel.warmup()` describe an emulated H200 (docs/device.md).
Block pointers (`tl.make_block_ptr`, `tl.advance`) and tensor descriptors (`tl.make_tensor_descriptor`,
`triton.tools.tensor_descriptor.TensorDescriptor` arguments) load and store blocks with their padding.
fp8 types (`tl.float8e4nv`, `float8e5`, `float8e4b15`) convert as an H200 does (`triton.reinterpret` passes
their bytes; torch float8 tensors work too). Settings: `options()` / `set_options(...)` (minitriton.options).
Not supported: inline asm, multi-CTA features; scheduling hints (num_warps, num_stages, ...)
are accepted and have no effect.
"""
from __future__ import annotations

import importlib
import sys
import types

from minitriton import language, testing
from minitriton.memory.buffers import Buffer, TensorWrapper, reinterpret
from minitriton.runtime.autotune import Autotuner, Config, Heuristics, autotune, heuristics
from minitriton.observers.counters import Recording, record
from minitriton.options import Options, options, set_options
from minitriton.errors import (AutotuneMismatchError, CompilationError, CompileTimeAssertionFailure, DeadlockError,
                               DescriptorError, DeviceAssertionError, InfiniteLoopError, InterpreterError, KernelInterrupted,
                               LaunchError, MiniTritonError, OutOfBoundsError, OutOfResources, TritonError)
from minitriton.runtime.jit import JITFunction, KernelInterface, jit
from minitriton.semantics.constexpr import constexpr
from minitriton.runtime import driver as _driver  # noqa: F401 - triton.runtime.driver
from minitriton.compiler import backends  # noqa: F401 - triton.backends
from minitriton.memory import host as _host
from minitriton import picture  # noqa: F401 - minitriton.picture.recording(path): the memory picture of launches

__version__ = "0.1.0"
# Kernels are written against Triton 3.9.0's language (its interpreter is the reference the tests compare with);
# where its numbers differ from the 3.6 GPU's, docs/faithfulness.md says which one minitriton follows.
TRITON_VERSION = "3.9.0"


class _TritonModule(types.ModuleType):
    """`triton` after install(): every name is minitriton's, `__version__` is the emulated Triton's."""

    def __getattr__(self, name):
        return getattr(sys.modules[__name__], name)

    def __setattr__(self, name, value):
        setattr(sys.modules[__name__], name, value)

    def __dir__(self):
        return dir(sys.modules[__name__])


triton_module = _TritonModule("triton", __doc__)
triton_module.__dict__["__version__"] = TRITON_VERSION


def cdiv(x: int, y: int) -> int:
    """Ceiling division on the host: (x + y - 1) // y."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 >= n (1 for n <= 1)."""
    n = int(n)
    if n <= 1:
        return 1
    return 1 << (n - 1).bit_length()


_allocator = None


def set_allocator(allocator) -> None:
    """`triton.set_allocator(fn)`: on a GPU, the global-memory workspace in-kernel tensor descriptors need.

    minitriton needs no workspace: the allocator is only recorded (`minitriton._allocator`). Triton 3.6 calls
    it at launch and fails there without one; minitriton does not require it."""
    global _allocator
    _allocator = allocator


def must_use_result(x, s=True):  # pragma: no cover - decorator Triton exposes
    return x


_ALIASES = {
    "triton.language": f"{__name__}.language",
    "triton.language.math": f"{__name__}.language.math",
    "triton.language.core": f"{__name__}.language.core",
    "triton.language.extra": f"{__name__}.language.extra",
    "triton.language.extra.libdevice": f"{__name__}.language.extra.libdevice",
    "triton.language.extra.cuda": f"{__name__}.language.extra.cuda",
    "triton.language.extra.cuda.libdevice": f"{__name__}.language.extra.cuda.libdevice",
    "triton.testing": f"{__name__}.testing",
    "triton.tools": f"{__name__}.tools",
    "triton.tools.tensor_descriptor": f"{__name__}.tools.tensor_descriptor",
    "triton.backends": f"{__name__}.compiler.backends",
    "triton.backends.compiler": f"{__name__}.compiler.backends",
    "triton.tools.mxfp": f"{__name__}.tools.mxfp",
    "triton._C": f"{__name__}.tools.cublas",
    "triton._C.libtriton": f"{__name__}.tools.cublas",
    "triton.profiler": f"{__name__}.profiler",
    "triton.profiler.viewer": f"{__name__}.profiler.viewer",
    "triton.compiler": f"{__name__}.compiler",
    "triton.compiler.errors": f"{__name__}.compiler.errors",
    "triton.runtime": f"{__name__}.runtime",
    "triton.runtime.jit": f"{__name__}.runtime.jit",
    "triton.runtime.autotuner": f"{__name__}.runtime.autotune",
    "triton.runtime.errors": f"{__name__}.errors",
    "triton.runtime.driver": f"{__name__}.runtime.driver",
}


def install() -> None:
    """Make `import triton` (and triton.language, .testing, .runtime.driver, .language.extra.libdevice) resolve
    to minitriton, and remember the arrays whose address the program takes (`Tensor.data_ptr()`,
    `ndarray.ctypes.data`) so a kernel can load them as pointers (memory/host.py). `triton.__version__` is then
    TRITON_VERSION, the version libraries compare with; minitriton's own is `minitriton.__version__`.

    Call it before the kernel module imports triton. Raises RuntimeError if real Triton is already imported.
    """
    real = sys.modules.get("triton")
    if real is not None and real is not triton_module:
        raise RuntimeError("real Triton is already imported in this process; call minitriton.install() before "
                           "`import triton`, or run the emulator in its own process")
    sys.modules["triton"] = triton_module
    for alias, target in _ALIASES.items():
        sys.modules[alias] = importlib.import_module(target)
    _host.watch()   # addresses scripts take (data_ptr(), ctypes.data) can be loaded back as pointers


def uninstall() -> None:
    """Undo `install()`: `import triton` no longer resolves to minitriton."""
    if sys.modules.get("triton") is triton_module:
        del sys.modules["triton"]
    for alias, target in _ALIASES.items():
        if sys.modules.get(alias) is sys.modules.get(target):
            del sys.modules[alias]
    _host.unwatch()


__all__ = ["Buffer", "TensorWrapper", "reinterpret", "InterpreterError", "jit", "autotune", "heuristics", "Config", "JITFunction", "KernelInterface", "Autotuner", "Heuristics",
           "cdiv", "next_power_of_2", "constexpr", "language", "testing", "record", "Recording", "Options", "options", "set_options",
           "install", "uninstall", "set_allocator", "DescriptorError", "TritonError", "CompilationError", "CompileTimeAssertionFailure", "OutOfResources", "MiniTritonError",
           "OutOfBoundsError", "DeviceAssertionError", "LaunchError", "AutotuneMismatchError", "DeadlockError",
           "InfiniteLoopError", "KernelInterrupted"]
