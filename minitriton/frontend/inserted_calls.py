"""The functions the rewrite inserts calls to (`__mt_*` names in the kernel's globals), run while the kernel runs.

* `snapshot`, `if_test`, `check_loop`, `check_branch`: the types Triton's compiler keeps fixed. A variable
  bound before a loop and re-assigned in it keeps its type ("Loop-carried variable acc has initial type int32
  but is re-assigned to fp32 in loop!", the classic `acc = 0` then `acc += tl.sum(x)`); one bound before a
  runtime `if` and re-assigned in a branch keeps its type ("initial value for `v` is of type int32[], but
  the then block redefines it as fp32[]"); one defined in both branches has one type ("Mismatched type for v
  between then block (fp32) and else block (fp16)").
* `while_test`, `lockstep`: a `while` condition is an int1 scalar (`scf.condition` refuses `while i:` on an int32
  or a block); each iteration is reported to the running group, which tells a spin loop from one that computes.
  A loop whose trip count differs between the programs runs in lockstep (`Lockstep`), unless it may wait.
* `not_`, `bool_op`: `not x`, `a and b`, `a or b`, which Python cannot overload; on tensors they are
  elementwise int1 operations, as Triton compiles them.
* `assert_`: an `assert` statement, which Triton compiles to `tl.device_assert`.
* `assigned`: the value of `x = ...` (and `x += ...`): a Python number becomes a tensor, as Triton types it.
* `value_of`: `x.value`, which a constexpr has (`N: tl.constexpr`, `M: tl.constexpr = 4`, `x.shape[0]`).

Each check gets the kernel (`__mt_kernel`) and the file line and column of the statement it reports.
"""
from __future__ import annotations

import ast
import linecache
import sys
import warnings

import numpy as np

from minitriton import errors
from minitriton.diagnostics import Edit, Suggestion
from minitriton.semantics import dtypes as T
from minitriton.semantics.debug import device_assert
from minitriton.semantics.constexpr import constexpr, to_tensor
from minitriton.semantics.elementwise import logical_and, logical_not, logical_or
from minitriton.semantics.math import _ir_type
from minitriton.values import programs
from minitriton.values.tensor import tensor

PREFIX = "__mt_"   # inserted names; no kernel uses them
KERNEL = PREFIX + "kernel"   # the global naming the JITFunction the rewritten code belongs to


class Snapshot:
    """The types of the watched names before a loop or an `if`, and whether the `if` is a runtime one."""

    __slots__ = ("types", "dynamic")

    def __init__(self, types_by_name):
        self.types = types_by_name
        self.dynamic = False


def _type_of(value):
    """(dtype, shape) as Triton would type the value, or None for what Triton keeps as a Python object."""
    if isinstance(value, tensor):
        return value.dtype, tuple(value.shape)
    if isinstance(value, bool):
        return T.int1, ()
    if isinstance(value, (int, float)):
        try:
            return T.of_python_scalar(value), ()
        except ValueError:
            return None
    return None


def _type_name(t) -> str:
    """Triton's `tensor.type` text: `fp32` for a scalar, `<['4', '16'], fp32>` for a block."""
    dtype, shape = t
    if not shape:
        return dtype.name
    return f"<{[str(s) for s in shape]}, {dtype.name}>"


def _value_text(t) -> str:
    """Triton's `str(tensor)`: `int32[]`, `fp32[4, 16]`."""
    dtype, shape = t
    return f"{dtype.name}[{', '.join(str(s) for s in shape)}]"


def snapshot(local_vars: dict, names: tuple) -> Snapshot:
    """Types of `names` bound now (called before a loop or an `if`)."""
    found = {}
    for name in names:
        if name in local_vars:
            t = _type_of(local_vars[name])
            if t is not None:
                found[name] = t
    return Snapshot(found)


def if_test(snap: Snapshot, test):
    """The `if` condition, unchanged; remembers whether it is a runtime value (Triton's `scf.if`)."""
    snap.dynamic = isinstance(test, tensor)
    return test


def _check_condition(test):
    """Triton 3.6 hands a `while` condition to `scf.condition`, which takes only an int1 scalar (a comparison
    or a bool); any other tensor fails MLIR verification (offline sm_90 compile)."""
    if isinstance(test, tensor) and (test.shape or test.dtype.name != "int1"):
        raise errors.backend_error(
            "error encountered during parsing",
            f"'scf.condition' op operand #0 must be 1-bit signless integer, but got '{_ir_type(test)}'")


def while_test(test):
    """The condition of a `while` loop that may wait for other programs (rewrite.py, `_may_wait`), as the bool
    the loop takes. A condition that differs between the programs of the group splits the group, those
    leaving the loop first (a lock's holder goes on to release it); every iteration is reported to the group,
    which tells a loop waiting for other programs (a spin lock) from one that computes (runtime/spinning.py)."""
    _check_condition(test)
    try:
        going_on = bool(test)
    except programs.Diverged as d:
        d.loop = True
        raise
    if going_on:
        group = programs.active()
        if group is not None:
            group.loop_iteration(sys._getframe(1))
    return going_on


class Lockstep:
    """A non-static loop whose trip count may differ between the programs of the group: the group iterates
    while any program's condition holds, `group.active` naming the programs still in the loop (None: all of
    the enclosing loop's). The others sit out the remaining iterations: their memory ops, prints and asserts
    are masked off (memory/access.py, semantics/debug.py), and `carry` gives their loop-carried variables
    back what they held when they left. `range` bounds set the mask in kernel_globals.KernelRange, a `while`
    condition in `test`."""

    __slots__ = ("group", "outer", "names", "held")

    def __init__(self, names: tuple):
        self.group = programs.current("while")
        self.outer, self.names, self.held = self.group.active, names, None   # the enclosing loop's mask

    def test(self, test) -> bool:
        """A `while` condition: the programs whose condition holds stay in the loop; False when none does."""
        _check_condition(test)
        group, outer = self.group, self.outer
        if not isinstance(test, tensor) or test.data.shape[0] == 1:
            going = bool(test)
        else:
            on = (test.data.reshape(-1) != 0) & (True if group.active is None else group.active)
            going = bool(on.any())
            if going:
                group.active = outer if on.all() or outer is not None and (on == outer).all() else on
        if not going:
            group.active = outer
            return False
        group.loop_iteration(sys._getframe(1))
        return True

    def partial(self) -> bool:   # whether some program of the loop sits this iteration out
        return self.group.active is not self.outer

    def begin(self, local_vars: dict):   # such an iteration starts: they keep what the carried variables hold
        self.held = {n: local_vars[n] for n in self.names if n in local_vars}

    def carry(self, local_vars: dict) -> tuple:
        """The carried variables at the end of such an iteration: the running programs' new values, the others'
        held ones. Values that cannot be merged per program split the group instead (`Diverged`)."""
        on, out = self.group.active, []
        for name in self.names:
            new, old = local_vars.get(name, _UNBOUND), self.held.get(name, _UNBOUND)
            if new is old or old is _UNBOUND and new is not _UNBOUND:
                out.append(new)
            elif isinstance(new, tensor) and isinstance(old, tensor) and new.dtype == old.dtype and \
                    new.shape == old.shape and new.alloc is old.alloc:
                keep = on.reshape((-1,) + (1,) * len(new.shape))
                out.append(tensor(np.where(keep, new.data, old.data), new.dtype, new.shape, new.alloc))
            else:
                raise programs.Diverged(on, loop=True)
        return tuple(out)


_UNBOUND = object()


def not_(value):
    """`not value`: Triton 3.6 calls `tensor.__not__` on a tensor (an elementwise logical not of an int1
    tensor; any wider type fails to bitcast to int1), Python's `not` on anything else."""
    if isinstance(value, tensor):
        return logical_not(value)
    return not value


def bool_op(method: str, kernel, line: int, col: int, *operands):
    """`a and b and ...` / `a or b or ...` as 3.6's `visit_BoolOp` compiles it: operands (thunks) are evaluated
    in order; a non-tensor one short-circuits when it decides the result and is dropped otherwise; the tensors
    are combined elementwise (logical_and / logical_or), every one of them evaluated. A block operand gets
    3.6's deprecation warning, once per expression."""
    tensors, value = [], None
    for thunk in operands:
        value = thunk()
        if not isinstance(value, tensor):
            truth = bool(value)
            if truth is (method == "or"):
                return value
            continue
        if value.shape and (kernel, line, col) not in _WARNED:
            _WARNED.add((kernel, line, col))
            warnings.warn_explicit("Logical operators 'and' and 'or' are deprecated for non-scalar tensors; "
                                   "please use '&' or '|' instead", UserWarning, kernel.file_name, line)
        tensors.append(value)
    if not tensors:
        return value
    combine = logical_and if method == "and" else logical_or
    while len(tensors) >= 2:
        rhs = tensors.pop()
        tensors.append(combine(tensors.pop(), rhs))
    return tensors[0]


_WARNED: set = set()   # (kernel, line, column) of the `and`/`or` expressions warned about


def assert_(test, msg=""):
    """`assert test, msg` in a kernel: Triton 3.6 compiles it as `tl.device_assert(test, msg)`, checked only
    in debug mode (a block condition is fine; a false one is silent without debug)."""
    return device_assert(test, msg)


def _refuse(kernel, line: int, col: int, record):
    """The CompilationError Triton's code generator raises for an AssertionError of its own about `record`
    (its layout shows `AssertionError('...')`), carrying the record."""
    record.triton = errors.compilation_text(kernel, line, col, repr(errors.python_error(AssertionError, record)))
    raise errors.CompilationError(record)


def _retyped(snap: Snapshot, local_vars: dict):
    """(name, type before, type now) for the watched variables whose type changed."""
    for name, before in snap.types.items():
        now = _type_of(local_vars.get(name))
        if now is not None and now != before:
            yield name, before, now


def check_loop(snap: Snapshot, local_vars: dict, kernel, line: int, col: int):
    """End of a loop iteration: every carried variable still has its type from before the loop. Triton's error
    is shown at the re-assignment, with a note naming the assignment before the loop."""
    for name, before, now in _retyped(snap, local_vars):
        first, again = kernel.source.loop_assignments(line, name)
        at, c = (again.lineno, again.col_offset) if again is not None else (line, col)
        first_line, b, a = first.lineno if first is not None else kernel.source.def_line, _type_name(before), _type_name(now)
        record = errors.diagnostic("loop_carried_type", name=name, before=b, after=a, first_line=first_line,
                                   first_source=linecache.getline(kernel.file_name, first_line).strip())
        record.notes.append(("loop_first_assigned", {}))
        if isinstance(first, ast.Assign) and isinstance(first.value, ast.Constant) and a == "fp32":
            right = f"{name} = {float(first.value.value)!r}"   # `s = 0` -> `s = 0.0`, an fp32 from the start
            record.suggestion = Suggestion("loop_type_fix", {"right": right}, Edit(
                first.lineno, first.col_offset, first.end_lineno, first.end_col_offset, right))
        record.triton = errors.compilation_text(kernel, at, c, repr(AssertionError(
            f"Loop-carried variable {name} has initial type {b} but is re-assigned to {a} in loop! Please make sure "
            f"that the type stays consistent.")))
        exc = errors.CompilationError(record.located(kernel.__name__, kernel.file_name, at, c, None,
                                                     linecache.getline(kernel.file_name, at) or None))
        exc.kernel, exc.filename, exc.lineno, exc.col, exc.program = kernel.__name__, kernel.file_name, at, c, None
        raise exc


def check_branch(snap: Snapshot, local_vars: dict, kernel, line: int, col: int, branch: str, new_names: tuple):
    """End of a runtime `if` branch: re-assigned variables keep their type; a variable defined in both
    branches has one type (compared with the other branch when it ran earlier in this launch)."""
    if not snap.dynamic:
        return
    for name, before, now in _retyped(snap, local_vars):
        _refuse(kernel, line, col, errors.diagnostic("branch_retyped", name=name, before=_value_text(before),
                                                     branch=branch, after=_value_text(now)))
    group = programs.active()
    if group is None or not new_names:
        return
    seen = group.branch_types
    other = "else" if branch == "then" else "then"
    for name in new_names:
        if name in snap.types or name not in local_vars:
            continue
        now = _type_of(local_vars[name])
        if now is None:
            continue
        seen[(kernel, line, col, name, branch)] = now
        theirs = seen.get((kernel, line, col, name, other))
        if theirs is not None and theirs != now:
            then_ty, else_ty = (now, theirs) if branch == "then" else (theirs, now)
            _refuse(kernel, line, col, errors.diagnostic("branch_types", name=name, then=_type_name(then_ty),
                                                         otherwise=_type_name(else_ty)))


def assigned(value):
    """`x = value`: Triton's code generator (and interpreter) make a Python number assigned to a name a tensor of
    its literal type (`to_tensor`), so after `value = 1` the kernel holds an int32 scalar with a `.dtype`, and
    `x: tl.constexpr = 1` (not rewritten) stays a number."""
    t = type(value)
    if t is int or t is float or t is bool:
        return to_tensor(value)
    if t is constexpr and isinstance(value.value, (int, float, bool)):
        return to_tensor(value.value)
    return value


def value_of(obj):
    """`obj.value`: minitriton keeps a kernel's constexprs as plain Python values, whose `.value` in Triton (a
    `tl.constexpr` there) is the value itself; anything else answers as Python does."""
    if obj is None or type(obj) in (int, float, bool, str):
        return obj
    return obj.value


CALLS = {PREFIX + "snapshot": snapshot, PREFIX + "if_test": if_test, PREFIX + "check_loop": check_loop,
         PREFIX + "check_branch": check_branch, PREFIX + "while_test": while_test, PREFIX + "not_": not_,
         PREFIX + "bool_op": bool_op, PREFIX + "assert_": assert_, PREFIX + "assigned": assigned,
         PREFIX + "value_of": value_of, PREFIX + "lockstep": Lockstep, PREFIX + "loop_test": Lockstep.test}
