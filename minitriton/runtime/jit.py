"""`@triton.jit`: kernels and helper functions, argument binding and the kernel's view of Python builtins.

A kernel body runs as ordinary Python, once per group of programs. Its code runs with Triton's builtin
namespace: `min`/`max` are `tl.minimum`/`tl.maximum` on tensors, `print` is `tl.device_print`, and
`range` yields int32 loop counters (as the compiled loop would). Nothing in `triton.language` or in the
user's module is patched.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import os
import re
import textwrap
import types

import numpy as np

from minitriton.values import programs
from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.memory.allocation import as_array
from minitriton.semantics.constexpr import constexpr, to_tensor, unwrap
from minitriton.values.tensor import tensor
from minitriton.tools.tensor_descriptor import TensorDescriptor

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                  "launch_pdl", "enable_warp_specialization", "stream", "debug", "sanitize_overflow",
                  "matrix_instr_nonkdim", "waves_per_eu", "kpack", "instrumentation_mode", "extern_libs")


class KernelInterface:
    """`kernel[grid](*args)`: remember the grid, then run."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def warmup(self, *args, grid, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


class _KernelGlobals(dict):
    """The kernel function's globals as Triton 3.6's code generator resolves them (`global_lookup`): the
    module's globals, read live, but only those a kernel may use (constexprs, dtypes, modules, @jit functions,
    Triton's own objects, named tuples), then the few Python builtins Triton maps (len, range, min, ...)."""

    def __init__(self, module_globals: dict):
        super().__init__(__builtins__=KERNEL_BUILTINS)
        self.module_globals = module_globals

    def __missing__(self, key):
        try:
            value = self.module_globals[key]
        except KeyError:
            if key in KERNEL_BUILTINS:
                return KERNEL_BUILTINS[key]
            raise NameError(f"{key} is not defined") from None
        if key in KERNEL_BUILTINS or _kernel_may_read(value) or _allow_non_constexpr_globals():
            return value
        raise NameError(_GLOBAL_REFUSED.format(name=key))


_GLOBAL_REFUSED = (
    "Cannot access global variable {name} from within @jit'ed function. Triton kernels can only access global "
    "variables that are instanstiated as constexpr (`x = triton.language.constexpr(42)`). Note that this is "
    "different from annotating a variable as constexpr (`x: triton.language.constexpr = 42`), which is not "
    "supported.  Alternatively, set the envvar TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, but we do not promise to "
    "support this forever.")


def _kernel_may_read(value) -> bool:
    """Triton 3.6's rule for a global a kernel reads (code_generator.global_lookup)."""
    if isinstance(value, (types.ModuleType, KernelInterface, constexpr, T.dtype)):
        return True
    if getattr(value, "__triton_builtin__", False) or getattr(value, "__triton_aggregate__", False):
        return True
    module = getattr(value, "__module__", None) or ""
    if module.startswith(("triton.language", "minitriton")):
        return True
    return isinstance(value, tuple) and hasattr(type(value), "_fields")   # a named tuple


def _allow_non_constexpr_globals() -> bool:
    return os.environ.get("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "0").lower() in ("1", "true", "on", "yes")


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
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.params = list(self.signature.parameters.values())
        self.constexprs = [i for i, p in enumerate(self.params) if _is_constexpr_annotation(p.annotation)]
        spec = do_not_specialize or ()
        self.do_not_specialize = {self.arg_names[i] if isinstance(i, int) else i for i in spec}
        self._kernel_fn = None
        self._checked = False
        self._literal_none_return = None
        self.cache = {}
        try:
            src = textwrap.dedent(inspect.getsource(fn))
            match = re.search(r"^def\s+\w+\s*\(", src, re.MULTILINE)
            self.src = src[match.start():] if match else src
            lines, start = inspect.getsourcelines(fn)
            offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
            self.def_line = start + offset
        except (OSError, TypeError):
            self.src, self.def_line = None, fn.__code__.co_firstlineno
        self.file_name = fn.__code__.co_filename
        JIT_CODES[fn.__code__] = self

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    @property
    def kernel_fn(self):
        """The function with Triton's builtins (built once; reads module globals live)."""
        if self._kernel_fn is None:
            from minitriton.frontend import rewrite as carried
            fn = self.fn
            kernel_globals = _KernelGlobals(fn.__globals__)
            kernel_globals.update(carried.HELPERS)
            checked = carried.instrument(self, fn, kernel_globals)
            if checked is not None:
                JIT_CODES[checked.__code__] = self
                self._kernel_fn = checked
            else:
                self._kernel_fn = types.FunctionType(fn.__code__, kernel_globals, fn.__name__, fn.__defaults__,
                                                     fn.__closure__)
                self._kernel_fn.__kwdefaults__ = fn.__kwdefaults__
        return self._kernel_fn

    def check_scoping(self):
        """Reject what Triton's compiler rejects before anything runs (variables that only live in a loop)."""
        if self._checked:
            return
        from minitriton.frontend.scopes import find_chained_comparison, find_loop_scoped_names
        chained = find_chained_comparison(self.fn)
        if chained is not None:
            raise _chained_error(self, *chained)
        unsupported = _find_unsupported(self)
        if unsupported is not None:
            raise unsupported
        found = find_loop_scoped_names(self.fn)
        self._checked = not found  # a rejected kernel stays rejected on every launch, as with Triton's compiler
        if found:
            f = found[0]
            raise _scoping_error(self, f, errors.compilation_text(
                self, f.lineno, f.col_offset, f"NameError('{f.name} is not defined')",
                extra=f"  `{f.name}` is first assigned inside the loop at line {f.loop_lineno} and used after "
                      f"it; Triton's compiler only keeps variables defined before a loop.\n"
                      f"  fix: give `{f.name}` a value before the loop (e.g. {f.name} = 0 or tl.zeros(...))"))

    def __call__(self, *args, **kwargs):
        if programs.active() is None:
            raise RuntimeError("Cannot call @triton.jit'd outside of the scope of a kernel")
        self.check_scoping()
        result = self.kernel_fn(*args, **kwargs)
        if result is None and self._returns_none_literally():
            # 3.6's visit_Return makes `return None` (unlike a bare `return`) a tensor, and None is none
            raise TypeError("cannot convert None of type <class 'NoneType'> to tensor")
        return _decay(result)

    def _returns_none_literally(self) -> bool:
        """Whether the source has a `return None` statement (cached)."""
        if self._literal_none_return is None:
            try:
                tree = ast.parse(self.src) if self.src is not None else None
            except SyntaxError:
                tree = None
            self._literal_none_return = tree is not None and any(
                isinstance(n, ast.Return) and isinstance(n.value, ast.Constant) and n.value.value is None
                for n in ast.walk(tree))
        return self._literal_none_return

    def run(self, *args, grid, warmup=False, **kwargs):
        """Launch the kernel on `grid` (a tuple or a callable of the meta-parameters)."""
        from minitriton.runtime import launch as engine
        return engine.launch(self, args, kwargs, grid, warmup)

    def bind(self, args, kwargs):
        """Map call arguments to parameters; returns (values by name, launch options)."""
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in LAUNCH_OPTIONS}
        if len(args) > len(self.params):
            raise TypeError(f"{self.__name__}() takes {len(self.params)} arguments but {len(args)} were given")
        values = {}
        for p, a in zip(self.params, args):
            values[p.name] = a
        for k, v in kwargs.items():
            if k not in self.arg_names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if k in values:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
            values[k] = v
        for p in self.params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    raise TypeError(f"{self.__name__}() missing required argument: '{p.name}'")
                values[p.name] = p.default
        return values, options


def _find_unsupported(jit_fn):
    """The error Triton 3.6 raises for the first Python construct of the kernel it cannot compile, or None."""
    from minitriton.frontend.rewrite import _indent_of_def
    from minitriton.frontend.refusals import find_unsupported
    if jit_fn.src is None:
        return None
    try:
        tree = ast.parse(jit_fn.src)
    except SyntaxError:
        return None
    func = tree.body[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
    if func is None:
        return None
    constexprs = {jit_fn.params[i].name for i in jit_fn.constexprs}
    hit = find_unsupported(func, constexprs)
    if hit is None:
        return None
    node, kind, message = hit
    lineno = jit_fn.def_line + node.lineno - func.lineno
    col = node.col_offset + _indent_of_def(jit_fn)
    cls = errors.UnsupportedLanguageConstruct if kind == "UnsupportedLanguageConstruct" else errors.CompilationError
    exc = cls(errors.compilation_text(jit_fn, lineno, col, message))
    exc.kernel, exc.filename, exc.lineno, exc.col, exc.program = jit_fn.__name__, jit_fn.file_name, lineno, col, None
    return exc


def _chained_error(jit_fn, lineno: int, col: int):
    """Triton 3.6's UnsupportedLanguageConstruct for `a < b < c` (code_generator.visit_Compare)."""
    exc = errors.UnsupportedLanguageConstruct(errors.compilation_text(
        jit_fn, lineno, col, "simultaneous multiple comparison is not supported"))
    exc.kernel, exc.filename, exc.lineno, exc.col, exc.program = jit_fn.__name__, jit_fn.file_name, lineno, col, None
    return exc


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


def _scoping_error(jit_fn, found, text):
    exc = errors.CompilationError(text)
    exc.kernel, exc.filename, exc.lineno, exc.col, exc.program = (jit_fn.__name__, jit_fn.file_name, found.lineno,
                                                                  found.col_offset, None)
    return exc


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
        return JITFunction(f, do_not_specialize=do_not_specialize, debug=debug, noinline=noinline)
    if fn is not None:
        return decorator(fn)
    return decorator


JIT_CODES: dict = {}


def convert_argument(name: str, value, is_constexpr: bool, specialize: bool, launch):
    """A launch argument as the kernel sees it: pointers for arrays, typed scalars, plain constexprs."""
    value = value.value if isinstance(value, constexpr) else value
    if is_constexpr:
        if as_array(value) is not None:
            raise TypeError(f"argument `{name}` is a tl.constexpr but received an array; "
                            f"constexpr parameters take Python values (ints, floats, bools, dtypes)")
        return value
    if isinstance(value, TensorDescriptor):
        from minitriton.memory.descriptor import from_host
        return from_host(name, value, launch)
    found = as_array(value)
    if found is not None:
        array, elem = found
        alloc = launch.add_allocation(name, array, elem, value)
        return tensor(np.array([alloc.base_offset], np.int64), T.pointer_type(elem), (), alloc)
    if value is None or isinstance(value, (T.dtype, str, types.FunctionType, JITFunction)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return to_tensor(value)
    if isinstance(value, int):
        if value == 1 and specialize:
            return 1  # Triton specializes integer arguments equal to 1 as constexpr
        if -2**31 <= value < 2**31:
            ty = T.int32
        elif -2**63 <= value < 2**63:
            ty = T.int64
        elif value < 2**64:
            ty = T.uint64
        else:
            raise ValueError(f"argument `{name}` = {value} does not fit in 64 bits")
        return tensor(np.array([value], ty.np_compute), ty, ())
    if isinstance(value, float):
        return tensor(np.array([value], np.float32), T.float32, ())
    if isinstance(value, tuple):
        return tuple(convert_argument(f"{name}[{i}]", v, False, specialize, launch) for i, v in enumerate(value))
    raise TypeError(f"argument `{name}` has unsupported type {type(value).__name__}; kernels take arrays "
                    f"(numpy or torch CPU tensors), TensorDescriptors, ints, floats, bools, None and tl.dtype values")


# ---------------------------------------------------------------- the kernel's builtins

def _check_range_types(values):
    """Triton 3.6's visit_For: start, end and step (defaults 0 and 1) must all be integers, literals typed as
    Triton types them (an int is int32 or wider, a float fp32)."""
    start, end, step = (0, values[0], 1) if len(values) == 1 else (*values, 1)[:3]
    kinds = [v.dtype if isinstance(v, tensor) else T.of_python_scalar(v) if isinstance(v, (int, float)) else None
             for v in (start, end, step)]
    if any(k is None or not k.is_int() for k in kinds):
        names = ", ".join(k.name if k is not None else type(v).__name__ for k, v in zip(kinds, (start, end, step)))
        raise TypeError(f"For loop bounds and step must all be ints, are ({names})")


class _KernelRange:
    """`range(...)` / `tl.range(...)` inside a kernel: bounds may be scalar tensors; the counter is an int32 (or
    int64) tensor. Triton 3.6's scheduling keywords (num_stages, loop_unroll_factor, disallow_acc_multi_buffer,
    flatten, warp_specialize, disable_licm) are accepted and have no effect."""

    def __init__(self, *args, step=None, num_stages=None, loop_unroll_factor=None, disallow_acc_multi_buffer=False,
                 flatten=False, warp_specialize=False, disable_licm=False):
        if step is not None:
            if len(args) == 1:
                args = (0, args[0], step)
            elif len(args) == 2:
                args = args + (step,)
            else:
                raise TypeError("range() got multiple values for argument 'step'")
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
        values = [unwrap(a) for a in args]
        _check_range_types(values)
        wide = any(isinstance(v, tensor) and v.dtype.primitive_bitwidth == 64 for v in values)
        self.ints = [int(v) if isinstance(v, tensor) else v for v in values]
        self.dtype = T.int64 if wide or any(not -2**31 <= v < 2**31 for v in self.ints) else T.int32

    def __iter__(self):
        ty = self.dtype.np_compute
        for i in builtins.range(*self.ints):
            yield tensor(np.array([i], ty), self.dtype, ())


def _kernel_minmax(np_name):
    py = getattr(builtins, np_name)

    def fn(*args, **kwargs):
        if len(args) == 1 and not isinstance(args[0], tensor):
            return py(*args, **kwargs)
        if any(isinstance(unwrap(a), tensor) for a in args):
            from minitriton.semantics import elementwise as ops_basic
            op = ops_basic.minimum if np_name == "min" else ops_basic.maximum
            result = args[0]
            for a in args[1:]:
                result = op(result, a)
            return result
        return py(*args, **kwargs)
    fn.__name__ = np_name
    return fn


def _kernel_print(*args, **kwargs):
    from minitriton.semantics.debug import device_print
    if args and isinstance(args[0], str):
        return device_print(args[0], *args[1:])
    return device_print("", *args)


# The Python builtins Triton 3.6's code generator knows (`builtin_namespace`); any other (sum, abs, enumerate,
# zip, tuple, str, ...) is "NameError: sum is not defined" there. `locals` is for minitriton's own checks.
def _no_tensor(builtin, message):
    """A Python builtin as the code generator calls it: on a tl.tensor it fails as Python's would on 3.6's tensor."""
    def fn(*args, **kwargs):
        if args and isinstance(args[0], tensor):
            raise TypeError(message)
        return builtin(*args, **kwargs)
    fn.__name__ = builtin.__name__
    return fn


class _NoTensorType(type):
    """`int` / `float` in a kernel: calling one on a tl.tensor fails as on 3.6's tensor; isinstance and
    issubclass checks see the builtin type."""

    def __call__(cls, *args, **kwargs):
        if args and isinstance(args[0], tensor):
            raise TypeError(cls.refusal)
        return cls.builtin(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.builtin)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.builtin)


def _no_tensor_type(builtin, refusal):
    return _NoTensorType(builtin.__name__, (), {"builtin": builtin, "refusal": refusal})


KERNEL_BUILTINS = {name: getattr(builtins, name) for name in ("list", "isinstance", "getattr", "hasattr", "locals")}
KERNEL_BUILTINS.update(
    len=_no_tensor(len, "object of type 'tensor' has no len()"),
    int=_no_tensor_type(int, "int() argument must be a string, a bytes-like object or a real number, not 'tensor'"),
    float=_no_tensor_type(float, "float() argument must be a string or a real number, not 'tensor'"))
KERNEL_BUILTINS.update(range=_KernelRange, min=_kernel_minmax("min"), max=_kernel_minmax("max"), print=_kernel_print)
