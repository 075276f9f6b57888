"""The types Triton's code generator keeps fixed: values carried through loops and out of `if` branches.

Triton compiles a non-static loop to `scf.for`/`scf.while` and an `if` on a runtime value to `scf.if`,
whose results have one type. So, as the compiler asserts:

* a variable bound before a loop and re-assigned in it keeps its type ("Loop-carried variable acc has
  initial type int32 but is re-assigned to fp32 in loop!", the classic `acc = 0` then
  `acc += tl.sum(x)`);
* a variable bound before a runtime `if` and re-assigned in a branch keeps its type ("initial value for
  `v` is of type int32[], but the then block redefines it as fp32[]");
* a variable defined in both branches has one type ("Mismatched type for v between then block (fp32) and
  else block (fp16)");
* a `while` condition is an int1 scalar (`scf.condition` refuses `while i:` on an int32 or a block).

The same rewrite turns `not x`, `a and b` and `a or b` into calls (`not_`, `bool_op`), because Python cannot
overload them: on tensors they are elementwise int1 operations, as Triton compiles them; and an `assert`
statement into `tl.device_assert` (what Triton compiles it to).

minitriton runs the kernel as Python, so these are checked while it runs: `instrument` recompiles the
kernel's source with a call at the end of every loop body and branch. A loop is checked on the
iterations that run, a branch when it runs, and two branches against each other when both run in one
launch (the compiler checks every path, even one that no program takes). `static_range` loops and `if`s
on constexpr values are unrolled or folded by Triton and are not checked, as there.
"""
from __future__ import annotations

import ast
import linecache
import types

from minitriton.values import programs
from minitriton import errors
from minitriton.values.tensor import tensor

PREFIX = "__mt_"   # inserted names; no kernel uses them


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
        from minitriton.semantics import dtypes as T
        return T.int1, ()
    if isinstance(value, (int, float)):
        from minitriton.semantics import dtypes as T
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


def while_test(test):
    """A `while` condition: Triton 3.6 hands it to `scf.condition`, which takes only an int1 scalar (a
    comparison or a bool); any other tensor fails MLIR verification (offline sm_90 compile)."""
    if isinstance(test, tensor) and (test.shape or test.dtype.name != "int1"):
        from minitriton.semantics.math import _ir_type
        raise errors.backend_error(
            "error encountered during parsing",
            f"'scf.condition' op operand #0 must be 1-bit signless integer, but got '{_ir_type(test)}'")
    return test


def not_(value):
    """`not value`: Triton 3.6 calls `tensor.__not__` on a tensor (an elementwise logical not of an int1
    tensor; any wider type fails to bitcast to int1), Python's `not` on anything else."""
    if isinstance(value, tensor):
        from minitriton.semantics.elementwise import logical_not
        return logical_not(value)
    return not value


def bool_op(method: str, site: int, *operands):
    """`a and b and ...` / `a or b or ...` as 3.6's `visit_BoolOp` compiles it: operands (thunks) are evaluated
    in order; a non-tensor one short-circuits when it decides the result and is dropped otherwise; the tensors
    are combined elementwise (logical_and / logical_or), every one of them evaluated. A block operand gets
    3.6's deprecation warning."""
    from minitriton.semantics.elementwise import logical_and, logical_or
    tensors, value = [], None
    for thunk in operands:
        value = thunk()
        if not isinstance(value, tensor):
            truth = bool(value)
            if truth is (method == "or"):
                return value
            continue
        if value.shape and site not in _WARNED:
            _WARNED.add(site)
            jit_fn, line, _ = SITES[site]
            import warnings
            warnings.warn_explicit("Logical operators 'and' and 'or' are deprecated for non-scalar tensors; "
                                   "please use '&' or '|' instead", UserWarning, jit_fn.file_name, line)
        tensors.append(value)
    if not tensors:
        return value
    combine = logical_and if method == "and" else logical_or
    while len(tensors) >= 2:
        rhs = tensors.pop()
        tensors.append(combine(tensors.pop(), rhs))
    return tensors[0]


_WARNED: set = set()


def assert_(test, msg=""):
    """`assert test, msg` in a kernel: Triton 3.6 compiles it as `tl.device_assert(test, msg)`, checked only
    in debug mode (a block condition is fine; a false one is silent without debug)."""
    from minitriton.semantics.debug import device_assert
    return device_assert(test, msg)


def _fail(site: int, message: str):
    jit_fn, lineno, col = SITES[site]
    raise errors.CompilationError(errors.compilation_text(jit_fn, lineno, col, message))


def _retyped(snap: Snapshot, local_vars: dict):
    """(name, type before, type now) for the watched variables whose type changed."""
    for name, before in snap.types.items():
        now = _type_of(local_vars.get(name))
        if now is not None and now != before:
            yield name, before, now


def check_loop(snap: Snapshot, local_vars: dict, site: int):
    """End of a loop iteration: every carried variable still has its type from before the loop."""
    for name, before, now in _retyped(snap, local_vars):
        _fail(site, repr(AssertionError(
            f"Loop-carried variable {name} has initial type {_type_name(before)} but is re-assigned to "
            f"{_type_name(now)} in loop! Please make sure that the type stays consistent.")))


def check_branch(snap: Snapshot, local_vars: dict, site: int, branch: str, new_names: tuple):
    """End of a runtime `if` branch: re-assigned variables keep their type; a variable defined in both
    branches has one type (compared with the other branch when it ran earlier in this launch)."""
    if not snap.dynamic:
        return
    for name, before, now in _retyped(snap, local_vars):
        _fail(site, repr(AssertionError(
            f"initial value for `{name}` is of type {_value_text(before)}, but the {branch} block "
            f"redefines it as {_value_text(now)}")))
    group = programs.active()
    if group is None or not new_names:
        return
    seen = group.launch.__dict__.setdefault("branch_types", {})
    other = "else" if branch == "then" else "then"
    for name in new_names:
        if name in snap.types or name not in local_vars:
            continue
        now = _type_of(local_vars[name])
        if now is None:
            continue
        seen[(site, name, branch)] = now
        theirs = seen.get((site, name, other))
        if theirs is not None and theirs != now:
            then_ty, else_ty = (now, theirs) if branch == "then" else (theirs, now)
            _fail(site, repr(AssertionError(
                f"Mismatched type for {name} between then block ({_type_name(then_ty)}) and else block "
                f"({_type_name(else_ty)})")))


HELPERS = {PREFIX + "snapshot": snapshot, PREFIX + "if_test": if_test, PREFIX + "check_loop": check_loop,
           PREFIX + "check_branch": check_branch, PREFIX + "while_test": while_test, PREFIX + "not_": not_,
           PREFIX + "bool_op": bool_op, PREFIX + "assert_": assert_}
SITES: list = []   # site index -> (JITFunction, file line, column)


# ------------------------------------------------------------------------------------- the rewrite

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _stored_names(stmts) -> list:
    """Names assigned anywhere in `stmts` (not inside nested functions), in first-seen order."""
    out = []

    def visit(node):
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in out:
            out.append(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return [n for n in out if not n.startswith(PREFIX)]


def _is_static_loop(node: ast.For) -> bool:
    it = node.iter
    if not isinstance(it, ast.Call):
        return True   # `for x in (a, b)`-style: unrolled
    f = it.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    return name == "static_range"


def _call(fn: str, *args) -> ast.expr:
    return ast.Call(func=ast.Name(id=PREFIX + fn, ctx=ast.Load()), args=list(args), keywords=[])


def _locals() -> ast.expr:
    return ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[])


def _names_tuple(names) -> ast.expr:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


class _LogicRewriter(ast.NodeTransformer):
    """`not x`, `a and b`, `a or b` as calls of `not_` / `bool_op` (Python cannot overload them), so tensors
    get Triton's elementwise meaning; nested functions and lambdas stay Python."""

    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        if self.depth == 1:
            self.generic_visit(node)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def visit_Assert(self, node):
        self.generic_visit(node)
        self.rewriter.count += 1
        args = [node.test] + ([node.msg] if node.msg is not None else [])
        return ast.copy_location(ast.Expr(_call("assert_", *args)), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.rewriter.count += 1
        return ast.copy_location(_call("not_", node.operand), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        self.rewriter.count += 1
        site = self.rewriter._site(node)
        thunks = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                             body=v) for v in node.values]
        method = "and" if isinstance(node.op, ast.And) else "or"
        return ast.copy_location(_call("bool_op", ast.Constant(method), ast.Constant(site), *thunks), node)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, jit_fn, line_offset: int, col_offset: int):
        self.jit_fn = jit_fn
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.count = 0

    def _site(self, node) -> int:
        SITES.append((self.jit_fn, node.lineno + self.line_offset, node.col_offset + self.col_offset))
        return len(SITES) - 1

    def _var(self) -> str:
        self.count += 1
        return f"{PREFIX}s{self.count}"

    def visit_FunctionDef(self, node):
        if getattr(self, "_top_seen", False):
            return node           # nested functions run as plain Python
        self._top_seen = True
        node.body = self._block(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def _block(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def _loop(self, node):
        node.body = self._block(node.body)
        node.orelse = self._block(node.orelse)
        names = [n for n in _stored_names(node.body)
                 if not (isinstance(node, ast.For) and n in _stored_names([node.target]))]
        if not names:
            return node
        var, site = self._var(), self._site(node)
        before = ast.Assign(targets=[ast.Name(id=var, ctx=ast.Store())],
                            value=_call("snapshot", _locals(), _names_tuple(names)))
        check = ast.Expr(_call("check_loop", ast.Name(id=var, ctx=ast.Load()), _locals(), ast.Constant(site)))
        node.body.append(check)
        for new in (before, check):
            ast.copy_location(new, node)
        return [before, node]

    def visit_For(self, node):
        if _is_static_loop(node):
            node.body = self._block(node.body)
            node.orelse = self._block(node.orelse)
            return node
        return self._loop(node)

    def visit_While(self, node):
        node.test = ast.copy_location(_call("while_test", node.test), node)   # 3.6 reports the `while`
        self.count += 1
        return self._loop(node)

    def visit_If(self, node):
        node.body = self._block(node.body)
        node.orelse = self._block(node.orelse)
        then_names, else_names = _stored_names(node.body), _stored_names(node.orelse)
        names = list(dict.fromkeys(then_names + else_names))
        if not names:
            return node
        both = [n for n in then_names if n in else_names]
        var, site = self._var(), self._site(node)
        before = ast.Assign(targets=[ast.Name(id=var, ctx=ast.Store())],
                            value=_call("snapshot", _locals(), _names_tuple(names)))
        node.test = _call("if_test", ast.Name(id=var, ctx=ast.Load()), node.test)
        for branch, body in (("then", node.body), ("else", node.orelse)):
            if body:
                body.append(ast.Expr(_call("check_branch", ast.Name(id=var, ctx=ast.Load()), _locals(),
                                           ast.Constant(site), ast.Constant(branch), _names_tuple(both))))
        ast.copy_location(before, node)
        for n in ast.walk(node):
            if not hasattr(n, "lineno") and isinstance(n, (ast.stmt, ast.expr)):
                ast.copy_location(n, node)
        return [before, node]


def instrument(jit_fn, fn, kernel_globals) -> types.FunctionType | None:
    """`fn` recompiled with the checks, bound to `kernel_globals`; None when it cannot be (no source, a
    closure) or has nothing to check."""
    if jit_fn.src is None or fn.__closure__:
        return None
    try:
        tree = ast.parse(jit_fn.src)
    except SyntaxError:
        return None
    func = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else None
    if func is None or func.name != fn.__name__:
        return None
    func.decorator_list = []
    func.returns = None
    for a in func.args.args + func.args.kwonlyargs + func.args.posonlyargs:
        a.annotation = None     # annotations (tl.constexpr) would be evaluated at definition time
    if func.args.vararg:
        func.args.vararg.annotation = None
    if func.args.kwarg:
        func.args.kwarg.annotation = None
    col_offset = _indent_of_def(jit_fn)   # jit_fn.src is dedented to the `def`
    rewriter = _Rewriter(jit_fn, jit_fn.def_line - func.lineno, col_offset)
    _LogicRewriter(rewriter).visit(func)
    rewriter.visit(func)
    if not rewriter.count:
        return None
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, jit_fn.def_line - func.lineno)
    if col_offset:
        for n in ast.walk(tree):
            if hasattr(n, "col_offset") and n.col_offset is not None:
                n.col_offset += col_offset
                if getattr(n, "end_col_offset", None) is not None:
                    n.end_col_offset += col_offset
    code = compile(tree, jit_fn.file_name, "exec")
    inner = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == fn.__name__)
    new = types.FunctionType(inner, kernel_globals, fn.__name__, fn.__defaults__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _indent_of_def(jit_fn) -> int:
    """Column of the `def` in the file (kernels defined in a class or a function are indented)."""
    line = linecache.getline(jit_fn.file_name, jit_fn.def_line)
    return len(line) - len(line.lstrip()) if line.strip() else 0
