"""The integer values of a kernel's index expressions at one program, computed from the source and the launch's
arguments: each exactly (64-bit) and as Triton computes it (32-bit integers wrap), so a fix can name the
subexpression that overflows int32 or goes negative. Only what is certain is computed (program ids, aranges,
integer arguments and constants, arithmetic, casts); anything else (a loop variable, a loaded value) makes the
expression unknown."""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass

import numpy as np

from minitriton.frontend import kernel_source as S

INT32 = (-2**31, 2**31 - 1)
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}


class Unknown(Exception):
    """The expression depends on something the source and the arguments do not fix."""


@dataclass
class Value:
    exact: np.ndarray     # the mathematical value (int64; Python ints for constants)
    wrapped: np.ndarray   # the value as the kernel computes it
    wide: bool            # 64-bit (or a pointer): no int32 wrap
    pointer: bool = False


@dataclass
class Overflow:
    node: ast.BinOp       # the innermost operation whose int32 result wraps
    value: int            # its largest exact magnitude


def _wrap32(a):
    return ((np.asarray(a, np.int64) + 2**31) % 2**32) - 2**31


def _fits(a) -> bool:
    a = np.asarray(a)
    return a.size == 0 or (int(a.min()) >= INT32[0] and int(a.max()) <= INT32[1])


class Evaluator:
    """Evaluates the source's own nodes of a kernel at one program: names through their last assignment
    before the line that uses them; `overflows` collects the operations whose int32 result wraps."""

    def __init__(self, fn: ast.FunctionDef, arguments: dict, program: tuple):
        self.fn = fn
        self.arguments = arguments
        self.program = tuple(program) + (0,) * (3 - len(program))
        self.pointers = S.pointer_params(fn)
        self.overflows: list[Overflow] = []
        self._assigned: dict = {}

    def value(self, node, line: int) -> Value:
        if line not in self._assigned:
            self._assigned[line] = S.assignments(self.fn, line)
        return self._eval(node, line, 12)

    def _eval(self, node, line, depth) -> Value:
        if depth <= 0:
            raise Unknown
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            v = np.int64(node.value)
            return Value(v, v, not _fits(v))
        if isinstance(node, ast.Name):
            return self._name(node, line, depth)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._eval(node.operand, line, depth - 1)
            return Value(-v.exact, v.wrapped if v.wide else _wrap32(-v.wrapped), v.wide)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return self._binop(node, line, depth)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            a, b = self._eval(node.left, line, depth - 1), self._eval(node.comparators[0], line, depth - 1)
            v = _COMPARE[type(node.ops[0])](np.asarray(a.wrapped), np.asarray(b.wrapped))
            return Value(v, v, True)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            a, b = self._eval(node.left, line, depth - 1), self._eval(node.right, line, depth - 1)
            if np.asarray(a.exact).dtype != bool or np.asarray(b.exact).dtype != bool:
                raise Unknown
            v = (operator.and_ if isinstance(node.op, ast.BitAnd) else operator.or_)(a.exact, b.exact)
            return Value(v, v, True)
        if isinstance(node, ast.Subscript) and S.axis_of(node):
            v = self._eval(node.value, line, depth - 1)
            index = (slice(None), None) if S.axis_of(node) == S.ROWS else (None, slice(None))
            return Value(np.asarray(v.exact)[index], np.asarray(v.wrapped)[index], v.wide, v.pointer)
        if isinstance(node, ast.Call):
            return self._call(node, line, depth)
        raise Unknown

    def _name(self, node, line, depth) -> Value:
        assigned = self._assigned.get(line) or S.assignments(self.fn, line)
        if node.id in assigned:
            value = assigned[node.id]
            at = getattr(value, "lineno", line)
            self._assigned.setdefault(at, S.assignments(self.fn, at))
            return self._eval(value, at if hasattr(value, "lineno") else line, depth - 1)
        if node.id in self.pointers:
            return Value(np.int64(0), np.int64(0), True, pointer=True)
        v = self.arguments.get(node.id)
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            v = np.int64(v)
            return Value(v, v, not _fits(v))
        raise Unknown

    def _binop(self, node, line, depth) -> Value:
        a, b = self._eval(node.left, line, depth - 1), self._eval(node.right, line, depth - 1)
        op = _OPS[type(node.op)]
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and np.any(np.asarray(b.exact) == 0):
            raise Unknown
        if a.pointer or b.pointer:   # pointer + offsets: the offsets as computed, in 64-bit addresses
            return Value(op(a.exact, b.exact), op(a.wrapped, b.wrapped), True, pointer=True)
        with np.errstate(all="ignore"):
            exact = op(np.asarray(a.exact, np.int64), np.asarray(b.exact, np.int64))
            computed = op(np.asarray(a.wrapped, np.int64), np.asarray(b.wrapped, np.int64))
        wide = a.wide or b.wide
        wrapped = computed if wide else _wrap32(computed)
        if not wide and not _fits(exact) and _fits(a.exact) and _fits(b.exact):
            self.overflows.append(Overflow(node, int(np.abs(exact).max())))
        return Value(exact, wrapped, wide)

    def _call(self, node, line, depth) -> Value:
        func = node.func
        if S.is_tl(func, "program_id"):
            axis = self._constant(node.args[0] if node.args else S.keyword(node, "axis"), line, depth)
            v = np.int64(self.program[axis])
            return Value(v, v, False)
        if S.is_tl(func, "arange") and len(node.args) == 2:
            lo, hi = (self._constant(a, line, depth) for a in node.args)
            v = np.arange(lo, hi, dtype=np.int64)
            return Value(v, v, False)
        if isinstance(func, ast.Attribute) and func.attr == "to" and node.args:
            v = self._eval(func.value, line, depth - 1)
            dtype = node.args[0]
            if isinstance(dtype, ast.Attribute) and dtype.attr in ("int64", "uint64"):
                return Value(v.wrapped, v.wrapped, True)
            if isinstance(dtype, ast.Attribute) and dtype.attr == "int32":
                return Value(_wrap32(v.wrapped), _wrap32(v.wrapped), False)
        if S.is_tl(func, "cdiv") and len(node.args) == 2:
            a, b = (self._eval(x, line, depth - 1) for x in node.args)
            if np.any(np.asarray(b.exact) == 0):
                raise Unknown
            v = -(-np.asarray(a.exact) // np.asarray(b.exact))
            return Value(v, v, a.wide or b.wide)
        raise Unknown

    def _constant(self, node, line, depth) -> int:
        v = self._eval(node, line, depth - 1)
        if np.ndim(v.exact) != 0:
            raise Unknown
        return int(v.exact)


def offsets_at(fn: ast.FunctionDef, access: S.Access, arguments: dict, program: tuple):
    """(the pointer's offsets as the kernel computes them, the Evaluator) at `program`; None when unknown."""
    ev = Evaluator(fn, arguments, program)
    try:
        v = ev.value(access.pointer_node, access.call.lineno)
    except (Unknown, TypeError, ValueError, IndexError, OverflowError):
        return None
    return (v, ev) if v.pointer else None
