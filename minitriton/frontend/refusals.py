"""Python constructs Triton's code generator cannot compile, found from the kernel's source before it runs.

minitriton runs a kernel as Python, so `break`, a `lambda`, a `try` or a dict would simply work here and only
fail on the GPU. Triton 3.6's `CodeGenerator` has a `visit_*` method for a fixed set of AST nodes; any other
node is "unsupported AST node type: <Name>" (UnsupportedLanguageConstruct). A few supported nodes fail in
other ways, reproduced with 3.6's words (offline sm_90 compiles, parity/compile_sweep.py's statement cases):
`for ... else`, `while ... else`, `for` over anything but a call (`range(...)`, `tl.range`, `tl.static_range`),
`in` / `not in`, `a = b = x`, a nested `def`, and a chained comparison (`a < b < c`).

The code generator does not visit the branch an `if` on a constexpr folds away, so the bodies of an `if`
whose test reads a constexpr parameter are not checked (a construct there may or may not be compiled).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from minitriton import errors
from minitriton.diagnostics import Diagnostic
from minitriton.frontend.source import KernelSource

# AST node types Triton 3.6's CodeGenerator visits (its visit_* methods), plus the pieces its visitors
# handle inside their parents (comprehension clauses, operators, contexts, f-string parts).
_SUPPORTED = (
    ast.AnnAssign, ast.Assert, ast.Assign, ast.Attribute, ast.AugAssign, ast.BinOp, ast.BoolOp, ast.Call,
    ast.Compare, ast.Constant, ast.Expr, ast.For, ast.FunctionDef, ast.If, ast.IfExp, ast.JoinedStr, ast.List,
    ast.ListComp, ast.Name, ast.Pass, ast.Return, ast.Slice, ast.Subscript, ast.Tuple, ast.UnaryOp, ast.While,
    ast.With, ast.arg, ast.arguments, ast.keyword, ast.comprehension, ast.withitem, ast.FormattedValue,
    ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
)


@dataclass(frozen=True)
class Refusal:
    """The first construct Triton refuses: where (file line and column), the exception class and its record."""

    lineno: int
    col_offset: int
    error: type           # errors.UnsupportedLanguageConstruct or errors.CompilationError
    record: Diagnostic


def _refusal(node, constexpr_params):
    """(error class, record) if Triton 3.6 refuses `node` itself, else None."""
    if isinstance(node, ast.FunctionDef):
        return errors.UnsupportedLanguageConstruct, errors.diagnostic("nested_function", name=node.name)
    if not isinstance(node, _SUPPORTED):
        return errors.UnsupportedLanguageConstruct, errors.diagnostic("unsupported_construct",
                                                                      node=type(node).__name__)
    if isinstance(node, ast.For):
        if not isinstance(node.iter, ast.Call):
            return errors.CompilationError, errors.diagnostic("for_over_non_call", node=type(node.iter).__name__)
        if node.orelse:
            return errors.CompilationError, errors.diagnostic("for_else")
    if isinstance(node, ast.While) and node.orelse:
        return errors.CompilationError, errors.diagnostic("while_else")
    if isinstance(node, ast.Compare):
        for op in node.ops:
            if isinstance(op, (ast.In, ast.NotIn)):
                return errors.CompilationError, errors.diagnostic("in_operator", node=type(op).__name__)
    if isinstance(node, ast.Assign) and len(node.targets) > 1:
        return errors.CompilationError, errors.diagnostic("multiple_assignment")
    return None


def _reads_constexpr(test, constexpr_params) -> bool:
    return any(isinstance(n, ast.Name) and n.id in constexpr_params for n in ast.walk(test))


def _chained_comparison(source: KernelSource) -> Refusal | None:
    """The first chained comparison (`a < b < c`) of the body. Triton 3.6's `visit_Compare` rejects one before
    evaluating either side, constexprs included; checked over the whole body, so one in a branch a constexpr
    condition skips is reported too."""
    found = [n for n in source.nodes if isinstance(n, ast.Compare) and len(n.ops) > 1]
    if not found:
        return None
    lineno, col = min(source.position(n) for n in found)
    return Refusal(lineno, col, errors.UnsupportedLanguageConstruct, errors.diagnostic("chained_comparison"))


def _unsupported_construct(source: KernelSource, constexpr_params) -> Refusal | None:
    """The first construct of the body, in source order, Triton 3.6 cannot compile."""

    def visit(node):
        found = _refusal(node, constexpr_params)
        if found is not None:
            return node, found
        if isinstance(node, ast.If) and _reads_constexpr(node.test, constexpr_params):
            return visit(node.test)
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.Call) and isinstance(child, ast.Starred):
                child = child.value          # visit_Call unpacks `f(*args)`
            hit = visit(child)
            if hit is not None:
                return hit
        return None

    for statement in source.func.body:
        hit = visit(statement)
        if hit is not None:
            node, (error, record) = hit
            return Refusal(*source.position(node), error, record)
    return None


def first_refusal(source: KernelSource, constexpr_params) -> Refusal | None:
    """What Triton 3.6 refuses first in the kernel (a chained comparison anywhere, then the first unsupported
    construct), or None; None also without a parsed source. `constexpr_params`: names of constexpr
    parameters."""
    if source.func is None:
        return None
    if not any(_refusal(n, constexpr_params) for n in source.nodes[1:]):   # nothing anywhere: no order to find
        return _chained_comparison(source)
    return _chained_comparison(source) or _unsupported_construct(source, constexpr_params)
