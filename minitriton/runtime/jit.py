"""`@triton.jit`: kernels and helper functions, argument binding, and the checks Triton's compiler makes
before anything runs.

A kernel's source is read once (frontend/source.py); the refusals, the loop-scope check and the rewrite that
runs Triton's type checks walk that one parse. The kernel's code runs with the globals Triton lets it see
(frontend/kernel_globals.py).
"""
from __future__ import annotations

import inspect
import linecache
import types

from minitriton import errors
from minitriton.diagnostics import render
from minitriton.frontend import refusals, rewrite
from minitriton.frontend.kernel_globals import KernelGlobals, KernelInterface
from minitriton.frontend.scopes import find_loop_scoped_names
from minitriton.frontend.source import KernelSource
from minitriton.values.programs import KERNEL_CODES
from minitriton.memory.buffers import TensorWrapper, reinterpret  # noqa: F401 - triton.runtime.jit's names
from minitriton.options import options
from minitriton.runtime import launch, reporting
from minitriton.semantics.dtypes import CANONICAL_NAMES as type_canonicalisation_dict  # noqa: F401 - likewise
from minitriton.semantics.constexpr import constexpr, to_tensor
from minitriton.runtime.compiled import CompiledKernel
from minitriton.values import programs
from minitriton.values.tensor import tensor

__all__ = ["JITFunction", "KernelInterface", "jit"]

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                  "launch_pdl", "enable_warp_specialization", "stream", "debug", "sanitize_overflow",
                  "matrix_instr_nonkdim", "waves_per_eu", "kpack", "instrumentation_mode", "extern_libs", "clc")


class JITFunction(KernelInterface):
    """A `@triton.jit` function: a kernel when launched with `[grid]`, a helper when called from a kernel."""

    def __init__(self, fn, version=None, do_not_specialize=None, do_not_specialize_on_alignment=None, debug=None,
                 noinline=None, repr=None, launch_metadata=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.debug = debug
        self.noinline = noinline
        self.launch_metadata = launch_metadata   # fn(grid, kernel, args) -> dict: what a profiler records
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.params = list(self.signature.parameters.values())
        self.constexprs = [i for i, p in enumerate(self.params) if _is_constexpr_annotation(p.annotation)]
        spec = do_not_specialize or ()
        self.do_not_specialize = {self.arg_names[i] if isinstance(i, int) else i for i in spec}
        self._kernel_fn = None
        self._checked = False
        self.cache = {}
        self.source = KernelSource(fn)
        self.file_name = fn.__code__.co_filename
        KERNEL_CODES[fn.__code__] = self

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    @property
    def src(self) -> str | None:
        """Triton's `JITFunction.src`: the source from the `def` line on, dedented (None when unavailable)."""
        return self.source.text

    @property
    def def_line(self) -> int:
        """The file line of the kernel's `def`."""
        return self.source.def_line

    @property
    def kernel_fn(self):
        """The function with Triton's builtins and checks (built once; reads module globals live)."""
        if self._kernel_fn is None:
            fn = self.fn
            kernel_globals = KernelGlobals(fn.__globals__)
            checked = rewrite.instrument(self.source, self, kernel_globals)
            if checked is not None:
                KERNEL_CODES[checked.__code__] = self
                self._kernel_fn = checked
            else:
                self._kernel_fn = types.FunctionType(fn.__code__, kernel_globals, fn.__name__, fn.__defaults__,
                                                     fn.__closure__)
                self._kernel_fn.__kwdefaults__ = fn.__kwdefaults__
        return self._kernel_fn

    def check_scoping(self):
        """Reject what Triton's compiler rejects before anything runs: constructs it cannot compile, chained
        comparisons, variables that only live in a loop. A rejected kernel stays rejected on every launch, as
        with Triton's compiler."""
        if self._checked:
            return
        refusal = refusals.first_refusal(self.source, {self.params[i].name for i in self.constexprs})
        if refusal is not None:
            raise self._compile_error(refusal.error, refusal.lineno, refusal.col_offset, refusal.record)
        found = find_loop_scoped_names(self.source)
        if found:
            f = found[0]
            raise self._compile_error(
                errors.CompilationError, f.lineno, f.col_offset,
                errors.diagnostic("loop_scoped_name", name=f.name, loop_line=f.loop_lineno),
                extra=f"  `{f.name}` is first assigned inside the loop at line {f.loop_lineno} and used after "
                      f"it; Triton's compiler only keeps variables defined before a loop.\n"
                      f"  fix: give `{f.name}` a value before the loop (e.g. {f.name} = 0 or tl.zeros(...))")
        self._checked = True

    def _compile_error(self, cls, lineno: int, col: int, record, extra: str = ""):
        """`cls` (a CompilationError) carrying `record`, in Triton's layout at file line `lineno`, column `col`
        (the record's English text as the message, then `extra`)."""
        record.triton = errors.compilation_text(self, lineno, col, render(record), extra=extra)
        exc = cls(record.located(self.__name__, self.file_name, lineno, col, None,
                                 linecache.getline(self.file_name, lineno) or None))
        exc.kernel, exc.filename, exc.lineno, exc.col, exc.program = self.__name__, self.file_name, lineno, col, None
        return exc

    def __call__(self, *args, **kwargs):
        if programs.active() is None:
            raise errors.python_error(RuntimeError, errors.diagnostic("jit_call_outside"))
        self.check_scoping()
        result = self.kernel_fn(*args, **kwargs)
        if result is None and self.source.returns_none_literally:
            # 3.6's visit_Return makes `return None` (unlike a bare `return`) a tensor, and None is none
            raise errors.python_error(TypeError, errors.diagnostic("to_tensor", value="None",
                                                                   type="<class 'NoneType'>"))
        return _decay(result)

    def run(self, *args, grid, warmup=False, **kwargs):
        """Launch the kernel on `grid` (a tuple or a callable of the meta-parameters); with `warmup`, only
        warm it up (see `warmup`)."""
        __tracebackhide__ = True  # pytest: the user's launch line leads to the kernel's line
        if warmup:
            return self.warmup(*args, grid=grid, **kwargs)
        try:
            return launch.launch(self, args, kwargs, grid)
        except BaseException as exc:   # shown with the user's frames alone: this launch line, then the kernel's
            if not options().internal_frames:
                exc.with_traceback(reporting.user_frames(exc.__traceback__))
            raise

    def warmup(self, *args, grid, **kwargs) -> CompiledKernel:
        """`kernel.warmup(*args, grid=..., **kwargs)`: bind the arguments (types such as `torch.float16` may
        stand for tensors), run the compile-time source checks, and return the compiled kernel
        (runtime/compiled.py) without running anything."""
        values, options = self.bind(list(args), dict(kwargs))
        self.check_scoping()
        constexprs = {self.arg_names[i]: getattr(values[self.arg_names[i]], "value", values[self.arg_names[i]])
                      for i in self.constexprs}
        return CompiledKernel(self, constexprs, options)

    def bind(self, args, kwargs):
        """Map call arguments to parameters; returns (values by name, launch options).

        A keyword naming a launch option (`num_stages=4`) is that option; when the kernel also has a parameter
        of that name, it binds the parameter too (as Triton passes every keyword to both)."""
        options = {k: kwargs[k] for k in kwargs if k in LAUNCH_OPTIONS}
        kwargs = {k: v for k, v in kwargs.items() if k not in LAUNCH_OPTIONS or k in self.arg_names}
        if len(args) > len(self.params):
            raise errors.python_error(TypeError, errors.diagnostic(
                "too_many_arguments", kernel_name=self.__name__, expected=len(self.params), given=len(args)))
        values = {}
        for p, a in zip(self.params, args):
            values[p.name] = a
        for k, v in kwargs.items():
            if k not in self.arg_names:
                raise errors.python_error(TypeError, errors.diagnostic("unexpected_keyword",
                                                                       kernel_name=self.__name__, name=k))
            if k in values:
                raise errors.python_error(TypeError, errors.diagnostic("argument_twice",
                                                                       kernel_name=self.__name__, name=k))
            values[k] = v
        for p in self.params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    raise errors.python_error(TypeError, errors.diagnostic("missing_argument",
                                                                           kernel_name=self.__name__, name=p.name))
                values[p.name] = p.default
        return values, options


def _decay(value):
    """A helper's return value as Triton 3.6's `visit_Return` leaves it: Python numbers and constexprs become
    tensors of their literal type (`return 0.5` gives an fp32 scalar), tuples element by element."""
    if type(value) is tensor or value is None:
        return value
    if isinstance(value, (constexpr, int, float)):
        return to_tensor(value)
    if isinstance(value, tuple):
        return tuple(_decay(v) for v in value)
    return value


def _is_constexpr_annotation(annotation) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        return "constexpr" in annotation
    return annotation is constexpr or getattr(annotation, "__name__", "") == "constexpr"


def jit(fn=None, *, version=None, repr=None, launch_metadata=None, do_not_specialize=None,
        do_not_specialize_on_alignment=None, debug=None, noinline=None):
    """`@triton.jit` / `@triton.jit(debug=True, ...)`."""
    def decorator(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, debug=debug, noinline=noinline,
                           launch_metadata=launch_metadata)
    if fn is not None:
        return decorator(fn)
    return decorator
