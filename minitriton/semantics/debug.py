"""Program ids, compiler hints, and the debugging ops (prints and asserts, at run time and compile time)."""
from __future__ import annotations

import sys

import numpy as np

from minitriton import errors
from minitriton.semantics import dtypes as T
from minitriton.semantics.constexpr import to_tensor, unwrap
from minitriton.semantics.shape import broadcast_data, broadcast_shapes
from minitriton.values import programs
from minitriton.values.registry import builtin
from minitriton.values.tensor import tensor


@builtin
def program_id(axis):
    """`tl.program_id(axis)`: this program's int32 index along grid axis 0, 1 or 2."""
    group = programs.current("program_id")
    axis = unwrap(axis)
    if isinstance(axis, tensor) or axis not in (0, 1, 2):   # a run-time axis cannot pick a grid axis either
        raise errors.python_error(ValueError, errors.diagnostic("program_axis", op="program_id", axis=axis))
    if group.grid[axis] == 1:
        return tensor(np.zeros(1, np.int32), T.int32, ())
    return tensor(group.program_ids[axis], T.int32, ())


@builtin
def num_programs(axis):
    """`tl.num_programs(axis)`: the grid size along an axis (int32)."""
    group = programs.current("num_programs")
    axis = unwrap(axis)
    if isinstance(axis, tensor) or axis not in (0, 1, 2):
        raise errors.python_error(ValueError, errors.diagnostic("program_axis", op="num_programs", axis=axis))
    return tensor(np.array([group.grid[axis]], np.int32), T.int32, ())


@builtin("multiple_of")
@builtin("max_contiguous")
@builtin("max_constancy")
def _hint(input, *values, **kwargs):
    """`tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`: promises to the compiler; `input` itself."""
    return input


@builtin
def assume(cond):
    """`tl.assume(cond)`: a promise to the compiler; minitriton does not rely on it."""
    return None


@builtin
def debug_barrier():
    """`tl.debug_barrier()`: programs of a group already run in lock-step; nothing to do."""
    return None


@builtin
def static_range(arg1, arg2=None, step=None, **hints):
    """`tl.static_range`: an unrolled loop over constexpr bounds; the counter is a Python int."""
    values = [unwrap(v) for v in (arg1, arg2, step) if v is not None]
    for v, which in zip(values, ("start", "end", "step")):
        if isinstance(v, tensor):   # 3.6's static_range asserts its arguments are constexprs
            shape = ", ".join(str(s) for s in v.shape)
            raise errors.python_error(AssertionError, errors.diagnostic(
                "static_range_value", type=f"{v.dtype.name}[{shape}]", which=which))
    return range(*values)


def _format_prefix(prefix: str, has_args: bool) -> str:
    if not prefix.endswith(" ") and has_args:
        prefix += " "
    if not prefix.endswith(": ") and has_args:
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


@builtin
def device_print(prefix, *args, hex=False):
    """`tl.device_print`: one line per program and element, as the GPU prints them."""
    group = programs.current("device_print")
    prefix = _format_prefix(str(unwrap(prefix)), bool(args))
    running = range(group.size) if group.active is None else np.flatnonzero(group.active).tolist()
    if not args:
        for p in running:
            x, y, z = (int(a[p]) for a in group.program_ids)
            group.prints.append(f"pid ({x}, {y}, {z}){prefix}")
        return None
    tensors = [to_tensor(a) for a in args]
    for k, t in enumerate(tensors):
        data = np.broadcast_to(t.data, (group.size,) + t.shape)
        label = prefix if len(tensors) == 1 else f"{prefix}(operand {k}) "
        for p in running:
            x, y, z = (int(a[p]) for a in group.program_ids)
            flat = data[p].reshape(-1)
            for i, v in enumerate(flat):
                idx = np.unravel_index(i, t.shape) if t.shape else ()
                idx_text = ", ".join(str(int(j)) for j in idx)
                value = format(int(v), "#x") if hex and t.dtype.is_int() else _fmt(v, t.dtype)
                group.prints.append(f"pid ({x}, {y}, {z}) idx ({idx_text}){label}{value}")
    return None


def _fmt(v, ty):
    if ty.is_floating():
        return f"{float(v):.6f}" if np.isfinite(v) else str(float(v))
    if ty.is_bool():
        return str(int(bool(v)))
    return str(int(v))


@builtin
def device_assert(cond, msg="", mask=None):
    """`tl.device_assert`: checked only in debug mode (TRITON_DEBUG=1, jit(debug=True) or options.debug)."""
    group = programs.current("device_assert")
    if not group.debug:
        return None
    c = to_tensor(cond)
    failed = ~(c.data.astype(bool))
    shape = c.shape
    if mask is not None:
        m = to_tensor(mask)
        shape = broadcast_shapes(shape, m.shape)
        failed = broadcast_data(tensor(failed, T.int1, c.shape), shape) & broadcast_data(m, shape)
    failed = np.broadcast_to(failed, (group.size,) + tuple(failed.shape[1:]))
    if group.active is not None:   # programs that left a lockstep loop assert nothing
        failed = failed & group.active.reshape((-1,) + (1,) * (failed.ndim - 1))
    per_program = failed.reshape(group.size, -1).any(axis=1)
    if per_program.any():
        positions = np.nonzero(per_program)[0]
        first = int(positions[0])
        lanes = np.argwhere(failed[first].reshape(failed.shape[1:]) if failed.ndim > 1 else failed[first:first + 1])
        lane_text = ", ".join(str(tuple(int(i) for i in lane)) for lane in lanes[:4])
        record = errors.diagnostic("device_assert", message=str(unwrap(msg)), failed=int(failed[first].sum()),
                                   lanes=lane_text or "(scalar)")
        raise errors.KernelRuntimeError(errors.DeviceAssertionError, record, positions)
    return None


def _kernel_frame():
    """The frame of the kernel line that called a `tl` function: the first one up the stack outside
    minitriton's modules (`tl.*` reaches the op through the outside-a-kernel guard)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("minitriton."):
        frame = frame.f_back
    return frame


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    """`tl.static_print`: printed once per compiled specialization, like Triton's compile-time print."""
    group = programs.current("static_print")
    caller = _kernel_frame()
    key = (caller.f_code, caller.f_lasti, tuple(sorted((k, repr(v)) for k, v in group.constexprs.items())))
    cache = group.kernel_cache.setdefault("static_print", set())
    if key in cache:
        return None
    cache.add(key)
    print(*[unwrap(v) for v in values], sep=sep, end=end, file=file, flush=flush)
    return None


@builtin
def static_assert(cond, msg=""):
    """`tl.static_assert`: a compile-time check on constexpr values."""
    cond = unwrap(cond)
    if isinstance(cond, tensor):
        raise errors.python_error(NotImplementedError, errors.diagnostic("static_assert_runtime"))
    if not cond:   # 3.6: CompileTimeAssertionFailure whose message is `msg` alone
        raise errors.python_error(errors.StaticAssertionFailed, errors.diagnostic(
            "static_assert", message=str(unwrap(msg))))
    return None
