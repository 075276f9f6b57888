"""What `kernel.warmup(...)` returns: Triton's `CompiledKernel`, for a kernel minitriton does not compile.

    k = softmax_kernel.warmup(y, x, n_rows, BLOCK=1024, num_stages=4, num_warps=8, grid=(1,))
    k._init_handles()
    k.n_regs, k.n_spills, k.metadata.shared, k.metadata.num_warps, k.name
    k[(programs, 1, 1)](y, x, n_rows, 1024, 4)       # every parameter, positionally

Warming up binds the arguments and runs the source checks Triton's compiler would (a refused construct fails
here, as its compile error does); nothing runs. The object keeps the constexprs and launch options it was
warmed up with: launching it passes every parameter positionally and, as Triton's launcher does, ignores the
values given for constexpr parameters in favour of the compiled ones. Resources are the documented emulated
values of runtime/device.py (`COMPILED_REGS`, `COMPILED_SPILLS`, `COMPILED_SHARED`; docs/device.md).
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

from minitriton import errors
from minitriton.runtime import device, driver


class KernelMetadata(NamedTuple):
    """`CompiledKernel.metadata`: the compile options and results Triton records (the fields scripts read)."""

    name: str
    hash: str
    target: driver.GPUTarget
    backend_name: str
    arch: str
    num_warps: int
    num_ctas: int
    num_stages: int
    maxnreg: int | None
    debug: bool
    shared: int
    warp_size: int


class CompiledKernel:
    """A warmed-up specialization of a `@triton.jit` kernel (see the module docstring)."""

    def __init__(self, fn, constexprs: dict, options: dict):
        self.fn = fn
        self.name = fn.__name__
        self.constexprs = dict(constexprs)
        self.launch_options = dict(options)
        target = driver.active.get_current_target()
        key = repr((fn.__qualname__, sorted((k, repr(v)) for k, v in self.constexprs.items()),
                    sorted((k, repr(v)) for k, v in self.launch_options.items())))
        self.hash = hashlib.sha256(key.encode()).hexdigest()
        self.metadata = KernelMetadata(
            name=self.name, hash=self.hash, target=target, backend_name=target.backend, arch=f"sm{target.arch}",
            num_warps=options.get("num_warps", 4), num_ctas=options.get("num_ctas", 1),
            num_stages=options.get("num_stages", 3), maxnreg=options.get("maxnreg"),
            debug=bool(options.get("debug", fn.debug)), shared=device.COMPILED_SHARED, warp_size=target.warp_size)
        self.asm = {}
        self.function = None
        self.module = None
        self.n_regs = self.n_spills = self.n_max_threads = None

    def _init_handles(self) -> None:
        """Triton loads the binary here and learns its registers and spills; the emulated values are set."""
        if self.function is not None:
            return
        profile = device.current()
        self.n_regs = device.COMPILED_REGS
        self.n_spills = device.COMPILED_SPILLS
        self.n_max_threads = min(1024, profile.max_num_regs // self.n_regs)
        self.function = self.name

    def __getitem__(self, grid):
        """`compiled[grid](*args)`: launch on `grid` with every kernel parameter given positionally."""
        self._init_handles()

        def runner(*args, stream=None):
            params = self.fn.arg_names
            if len(args) != len(params):
                raise errors.python_error(TypeError, errors.diagnostic(
                    "compiled_arguments", kernel_name=self.name, expected=len(params), names=", ".join(params),
                    given=len(args)))
            values = [self.constexprs.get(name, arg) for name, arg in zip(params, args)]
            options = {k: v for k, v in self.launch_options.items() if k not in params}  # given positionally
            return self.fn.run(*values, grid=grid, **options)
        return runner

    def __repr__(self):
        return f"CompiledKernel({self.name}, {self.metadata.num_warps} warps, {self.metadata.num_stages} stages)"
