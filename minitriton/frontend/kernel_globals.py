"""What a kernel's code sees as its globals: the module's globals Triton lets a kernel read, and the Python
builtins as Triton's code generator maps them.

A kernel body runs as ordinary Python, once per group of programs. Its code runs with Triton's builtin
namespace: `min`/`max` are `tl.minimum`/`tl.maximum` on tensors, `print` is `tl.device_print`, and
`range` yields int32 loop counters (as the compiled loop would). Nothing in `triton.language` or in the
user's module is patched.
"""
from __future__ import annotations

import builtins
import functools
import sys
import types

import numpy as np

from minitriton import errors
from minitriton.frontend.inserted_calls import PREFIX
from minitriton.options import options
from minitriton.semantics import dtypes as T
from minitriton.semantics.debug import device_print
from minitriton.semantics.constexpr import constexpr, unwrap
from minitriton.semantics.elementwise import maximum, minimum
from minitriton.values import programs
from minitriton.values.tensor import tensor


class KernelInterface:
    """`kernel[grid](*args)`: remember the grid, then run. @jit functions and autotuned kernels are kernel
    interfaces, which a kernel may read from its module."""

    def __getitem__(self, grid):
        return functools.partial(self.run, grid=grid, warmup=False)  # no frame of its own in a traceback

    def warmup(self, *args, grid, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


class KernelGlobals(dict):
    """The kernel function's globals as Triton 3.6's code generator resolves them (`global_lookup`): the
    module's globals, read live, but only those a kernel may use (constexprs, dtypes, modules, @jit functions,
    Triton's own objects, named tuples), then the few Python builtins Triton maps (len, range, min, ...).

    "Live" is per launch: inside `launch_scope` a name once resolved stays in the dict (a C lookup for the
    next `tl.` of the kernel), and leaving the scope forgets it, so the next launch reads the module again."""

    def __init__(self, module_globals: dict):
        super().__init__(__builtins__=KERNEL_BUILTINS)
        self.module_globals = module_globals

    def __missing__(self, key):
        try:
            value = self.module_globals[key]
        except KeyError:
            if key in KERNEL_BUILTINS:
                value = KERNEL_BUILTINS[key]
                if _held is not None:
                    self._hold(key, value)
                return value
            record = errors.diagnostic("name_error", name=key)
            record.names = (key,)
            raise errors.python_error(NameError, record) from None
        if key in KERNEL_BUILTINS or _kernel_may_read(value) or _allow_non_constexpr_globals():
            if _held is not None:
                self._hold(key, value)
            return value
        raise errors.python_error(NameError, errors.diagnostic("global_refused", name=key))

    def _hold(self, key, value):
        self[key] = value
        _held.append((self, key))


_held: list | None = None   # inside launch_scope: the (KernelGlobals, name) pairs resolved since it began


class launch_scope:
    """`with launch_scope():` around one launch: the kernels' global names are resolved once in it."""

    def __enter__(self):
        global _held
        self.outer = _held
        if _held is None:
            _held = []

    def __exit__(self, *exc):
        global _held
        if self.outer is None:
            held, _held = _held, None
            for names, key in held:
                names.pop(key, None)
        return False


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
    return options().allow_non_constexpr_globals


# ---------------------------------------------------------------- the kernel's builtins

def _check_range_types(values):
    """Triton 3.6's visit_For: start, end and step (defaults 0 and 1) must all be integers, literals typed as
    Triton types them (an int is int32 or wider, a float fp32)."""
    start, end, step = (0, values[0], 1) if len(values) == 1 else (*values, 1)[:3]
    kinds = [v.dtype if isinstance(v, tensor) else T.of_python_scalar(v) if isinstance(v, (int, float)) else None
             for v in (start, end, step)]
    if any(k is None or not k.is_int() for k in kinds):
        names = ", ".join(k.name if k is not None else type(v).__name__ for k, v in zip(kinds, (start, end, step)))
        raise errors.python_error(TypeError, errors.diagnostic("loop_bounds", names=names))


class KernelRange:
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
                raise errors.python_error(TypeError, errors.diagnostic("range_step_twice"))
        if not 1 <= len(args) <= 3:
            raise errors.python_error(TypeError, errors.diagnostic("range_arguments", n=len(args)))
        values = [unwrap(a) for a in args]
        _check_range_types(values)
        wide = any(isinstance(v, tensor) and v.dtype.primitive_bitwidth == 64 for v in values)
        try:
            self.ints = known = [int(v) if isinstance(v, tensor) else v for v in values]
        except programs.Diverged:   # bounds that differ between the programs: a lockstep loop
            if not any(n.startswith(PREFIX) for n in sys._getframe(1).f_code.co_names):
                raise   # a kernel run without the rewrite could not keep its carried variables per program
            group = programs.current("range")
            self.ints, self.bounds = None, [np.broadcast_to(np.asarray(getattr(v, "data", v), np.int64).reshape(-1),
                                                            (group.size,)) for v in values]
            on = ... if group.active is None else group.active
            known = [int(f(b[on])) for b in self.bounds for f in (np.min, np.max)]
        self.dtype = T.int64 if wide or any(not -2**31 <= v < 2**31 for v in known) else T.int32

    def __iter__(self):
        ty, dtype = self.dtype.np_compute, self.dtype
        if self.ints is None:
            return self._lockstep(ty)
        return (tensor(np.array([i], ty), dtype, ()) for i in builtins.range(*self.ints))

    def _lockstep(self, ty):
        """The iterations while any program's counter is in its range, `group.active` naming those (Lockstep)."""
        group = programs.current("range")
        outer = group.active
        i, end, step = (0, self.bounds[0], 1) if len(self.bounds) == 1 else (*self.bounds, 1)[:3]
        if not np.broadcast_to(step, (group.size,))[... if outer is None else outer].all():
            builtins.range(0, 1, 0)   # Python's "range() arg 3 must not be zero"
        while True:
            going = np.where(step > 0, i < end, i > end) & (True if outer is None else outer)
            if not going.any():
                break
            group.active = outer if going.all() or outer is not None and (going == outer).all() else going
            yield tensor(np.broadcast_to(i, going.shape).astype(ty), self.dtype, ())
            i = i + step
        group.active = outer   # (not on an error: the scheduler reads which programs were running)


def _kernel_minmax(np_name):
    py = getattr(builtins, np_name)

    def fn(*args, **kwargs):
        if len(args) == 1 and not isinstance(args[0], tensor):
            return py(*args, **kwargs)
        if any(isinstance(unwrap(a), tensor) for a in args):
            op = minimum if np_name == "min" else maximum
            result = args[0]
            for a in args[1:]:
                result = op(result, a)
            return result
        return py(*args, **kwargs)
    fn.__name__ = np_name
    return fn


def _kernel_print(*args, **kwargs):
    if args and isinstance(args[0], str):
        return device_print(args[0], *args[1:])
    return device_print("", *args)


# The Python builtins Triton 3.6's code generator knows (`builtin_namespace`); any other (sum, abs, enumerate,
# zip, tuple, str, ...) is "NameError: sum is not defined" there. `locals` is for minitriton's own checks.
def _no_tensor(builtin, message):
    """A Python builtin as the code generator calls it: on a tl.tensor it fails as Python's would on 3.6's tensor."""
    def fn(*args, **kwargs):
        if args and isinstance(args[0], tensor):
            raise errors.python_error(TypeError, errors.diagnostic("python_refused", message=message))
        return builtin(*args, **kwargs)
    fn.__name__ = builtin.__name__
    return fn


class _NoTensorType(type):
    """`int` / `float` in a kernel: calling one on a tl.tensor fails as on 3.6's tensor; isinstance and
    issubclass checks see the builtin type."""

    def __call__(cls, *args, **kwargs):
        if args and isinstance(args[0], tensor):
            raise errors.python_error(TypeError, errors.diagnostic("python_refused", message=cls.refusal))
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
KERNEL_BUILTINS.update(range=KernelRange, min=_kernel_minmax("min"), max=_kernel_minmax("max"), print=_kernel_print)
