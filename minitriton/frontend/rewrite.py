"""The rewrite of a kernel's `def` that runs Triton's compile-time checks while the kernel runs as Python.

Triton compiles a non-static loop to `scf.for`/`scf.while` and an `if` on a runtime value to `scf.if`, whose
results have one type, and compiles `not`, `and`, `or` and `assert` its own way (inserted_calls.py says how).
minitriton runs the kernel as Python, so `instrument` recompiles the kernel from a copy of its parsed source
with calls inserted: a snapshot of the watched variables' types before every loop and branch, a check at the
end of every loop body and branch, a check of every `while` condition, and calls in place of `not x`,
`a and b`, `a or b` and `assert`.

A loop is checked on the iterations that run, a branch when it runs, and two branches against each other when
both run in one launch (the compiler checks every path, even one that no program takes). `static_range` loops
and `if`s on constexpr values are unrolled or folded by Triton and are not checked, as there. The tree keeps
the file's positions (source.py), so tracebacks through the rewritten kernel point at the user's lines.
"""
from __future__ import annotations

import ast
import types

from minitriton.frontend.inserted_calls import CALLS, KERNEL, PREFIX
from minitriton.frontend.source import KernelSource


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


def _may_wait(node: ast.While) -> bool:
    """Whether a `while` loop may wait for other programs (a lock, a flag): its condition loads, calls an atomic
    or a @jit helper, or its body calls an atomic or loads `volatile`. Where its programs differ, such a loop
    splits its group (those leaving first) instead of running in lockstep."""
    calls = [(n.func.attr if isinstance(n.func, ast.Attribute) else "?" if getattr(n.func, "id", "?") not in
              ("min", "max") else "", n) for n in ast.walk(node) if isinstance(n, ast.Call)]
    test = {id(n) for n in ast.walk(node.test)}
    return any(name.startswith("atomic_") or id(n) in test and name in ("load", "?") or
               any(k.arg == "volatile" for k in n.keywords) for name, n in calls)


def _store_chains(func) -> dict:
    """name -> for each of its assignments (and parameters: ()), the ids of the non-static loops around it.
    Triton discards a loop body's scope when the loop ends, so only an assignment outside every loop that does
    not also enclose a later loop makes the name carried by that loop."""
    chains = {a.arg: [()] for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}

    def visit(node, chain):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            chains.setdefault(node.id, []).append(chain)
        if isinstance(node, ast.While) or isinstance(node, ast.For) and not _is_static_loop(node):
            chain += (id(node),)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                visit(child, chain)

    visit(func, ())
    return chains


def _placed(new, at):
    """`new`, with the nodes the rewrite made in it (those without a position) at the position of `at`: a
    traceback through the rewritten kernel shows the user's line."""
    todo = [new]
    while todo:
        node = todo.pop()
        if not hasattr(node, "lineno"):
            if isinstance(node, (ast.stmt, ast.expr)):
                ast.copy_location(node, at)
            todo.extend(ast.iter_child_nodes(node))
    return new


def _call(fn: str, *args) -> ast.expr:
    return ast.Call(func=ast.Name(id=PREFIX + fn, ctx=ast.Load()), args=list(args), keywords=[])


def _site(node) -> list:
    """The arguments naming where a check reports: the kernel, and the node's file line and column."""
    return [ast.Name(id=KERNEL, ctx=ast.Load()), ast.Constant(node.lineno), ast.Constant(node.col_offset)]


def _locals() -> ast.expr:
    return ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[])


def _names_tuple(names) -> ast.expr:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _logic(node) -> bool:
    """Whether `node` is an expression the logic rewrite replaces."""
    return isinstance(node, ast.BoolOp) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) or \
        isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(node.ctx, ast.Load)


class _LogicRewriter(ast.NodeTransformer):
    """`not x`, `a and b`, `a or b` as calls of `not_` / `bool_op` (Python cannot overload them), so tensors
    get Triton's elementwise meaning; assigned values go through `assigned`; nested functions and lambdas
    stay Python."""

    def __init__(self, rewriter: _Rewriter, expressions: bool = True):
        self.rewriter = rewriter
        self.depth = 0
        self.expressions = expressions   # whether an expression holds `not`, `and`, `or` or `.value`

    def generic_visit(self, node):
        return node if not self.expressions and isinstance(node, ast.expr) else super().generic_visit(node)

    def visit_FunctionDef(self, node):
        self.depth += 1
        if self.depth == 1:
            self.generic_visit(node)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        self.rewriter.count += 1
        node.value = _placed(_call("assigned", node.value), node.value)
        return node

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        ann = node.annotation
        if node.value is None or getattr(ann, "attr", getattr(ann, "id", None)) == "constexpr":
            return node
        self.rewriter.count += 1
        node.value = _placed(_call("assigned", node.value), node.value)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            return node
        self.rewriter.count += 1
        value = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
        _placed(value, node)
        new = ast.Assign(targets=[node.target], value=_placed(_call("assigned", value), node))
        return _placed(new, node)

    def visit_Assert(self, node):
        self.generic_visit(node)
        self.rewriter.count += 1
        args = [node.test] + ([node.msg] if node.msg is not None else [])
        return _placed(ast.Expr(_call("assert_", *args)), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.rewriter.count += 1
        return _placed(_call("not_", node.operand), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr != "value" or not isinstance(node.ctx, ast.Load):
            return node
        self.rewriter.count += 1
        return _placed(_call("value_of", node.value), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        self.rewriter.count += 1
        thunks = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                             body=v) for v in node.values]
        method = "and" if isinstance(node.op, ast.And) else "or"
        return _placed(_call("bool_op", ast.Constant(method), *_site(node), *thunks), node)


class _Rewriter(ast.NodeTransformer):
    """Snapshots before, and type checks at the end of, every non-static loop and every `if` that assigns;
    `while` conditions through `while_test`; nested functions and lambdas stay Python."""

    def __init__(self, chains=None):
        self.count = 0
        self.chains, self.loops = chains or {}, []

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

    def generic_visit(self, node):
        # loops and branches sit in statement bodies only: no expression holds one
        return node if isinstance(node, ast.expr) else super().generic_visit(node)

    def _block(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def _visible(self, name, outer=None) -> bool:
        """Whether an assignment of `name` outside the loops that end before here binds it here."""
        outer = tuple(self.loops) if outer is None else outer
        return any(c == outer[:len(c)] for c in self.chains.get(name, [()]))

    def _loop(self, node):
        outer = tuple(self.loops)
        self.loops.append(id(node))
        node.body = self._block(node.body)
        self.loops.pop()
        node.orelse = self._block(node.orelse)
        names = [n for n in _stored_names(node.body)
                 if not (isinstance(node, ast.For) and n in _stored_names([node.target])) and self._visible(n, outer)]
        out, body = [node], list(node.body)
        if names:
            var = self._var()
            out.insert(0, ast.Assign(targets=[ast.Name(id=var, ctx=ast.Store())],
                                     value=_call("snapshot", _locals(), _names_tuple(names))))
            node.body.append(ast.Expr(_call("check_loop", ast.Name(id=var, ctx=ast.Load()), _locals(), *_site(node))))
        if isinstance(node, ast.While) and _may_wait(node):
            node.test = _call("while_test", node.test)
        elif names or isinstance(node, ast.While):   # run as a `Lockstep` (inserted_calls.py)
            var = self._var()
            steps = ast.Name(id=var, ctx=ast.Load())
            out.insert(-1, ast.Assign(targets=[ast.Name(id=var, ctx=ast.Store())],
                                      value=_call("lockstep", _names_tuple(names))))
            if isinstance(node, ast.While):   # (a plain call: a method call's line would be the loop's last)
                node.test = _call("loop_test", steps, node.test)
            if names:
                def method(name, *args):
                    return ast.Call(func=ast.Attribute(value=steps, attr=name, ctx=ast.Load()), args=list(args),
                                    keywords=[])
                carried = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names], ctx=ast.Store())
                node.body.insert(0, ast.If(test=method("partial"), orelse=[], body=[ast.Expr(method("begin", _locals()))]))
                node.body.append(ast.If(test=method("partial"), orelse=[], body=[
                    ast.Assign(targets=[carried], value=method("carry", _locals()))]))
        tests = [node.test] if isinstance(node, ast.While) else []
        for new in [s for s in out + node.body if s is not node and s not in body] + tests:
            _placed(new, node)   # a `while` condition's errors are reported at the `while`, as 3.6 does
        return out

    def visit_For(self, node):
        if _is_static_loop(node):
            node.body = self._block(node.body)
            node.orelse = self._block(node.orelse)
            return node
        return self._loop(node)

    def visit_While(self, node):
        self.count += 1
        return self._loop(node)

    def visit_If(self, node):
        node.body = self._block(node.body)
        node.orelse = self._block(node.orelse)
        then_names, else_names = _stored_names(node.body), _stored_names(node.orelse)
        names = [n for n in dict.fromkeys(then_names + else_names) if self._visible(n)]
        if not names:
            return node
        both = [n for n in then_names if n in else_names]
        var = self._var()
        before = ast.Assign(targets=[ast.Name(id=var, ctx=ast.Store())],
                            value=_call("snapshot", _locals(), _names_tuple(names)))
        node.test = _placed(_call("if_test", ast.Name(id=var, ctx=ast.Load()), node.test), node)
        for branch, body in (("then", node.body), ("else", node.orelse)):
            if body:
                body.append(_placed(ast.Expr(_call("check_branch", ast.Name(id=var, ctx=ast.Load()), _locals(),
                                                   *_site(node), ast.Constant(branch), _names_tuple(both))), node))
        _placed(before, node)
        return [before, node]


def instrument(source: KernelSource, kernel, kernel_globals: dict) -> types.FunctionType | None:
    """The kernel's function recompiled with the checks, bound to `kernel_globals` (which gets the inserted
    calls and `kernel`, the JITFunction they report for); None when it cannot be (no source, a closure) or has
    nothing to check."""
    fn = source.fn
    func = source.func_copy()
    if func is None or fn.__closure__ or func.name != fn.__name__:
        return None
    func.decorator_list = []
    func.returns = None
    for a in func.args.args + func.args.kwonlyargs + func.args.posonlyargs:
        a.annotation = None     # annotations (tl.constexpr) would be evaluated at definition time
    if func.args.vararg:
        func.args.vararg.annotation = None
    if func.args.kwarg:
        func.args.kwarg.annotation = None
    rewriter = _Rewriter()
    _LogicRewriter(rewriter, any(map(_logic, source.nodes))).visit(func)
    rewriter.chains = _store_chains(func)
    rewriter.visit(func)
    if not rewriter.count:
        return None
    module = ast.Module(body=[func], type_ignores=[])
    code = compile(module, source.file_name, "exec")
    inner = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == fn.__name__)
    kernel_globals.update(CALLS)
    kernel_globals[KERNEL] = kernel
    new = types.FunctionType(inner, kernel_globals, fn.__name__, fn.__defaults__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new
