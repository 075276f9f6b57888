"""A kernel function's source, read and parsed once; the frontend's passes (refusals, scopes, rewrite) walk
its tree, and one mapper places a position in the file and in Triton's error layout.

The tree is parsed at the file's coordinates: the source is preceded by blank lines up to its first line,
and an indented function (a kernel defined in a class or a function) is parsed inside an `if 1:` block, so a
node's `lineno` and `col_offset` are the file's line and column, as a traceback reports them and as the
rewritten kernel is compiled.

Triton numbers positions in its own copy of the source (`JITFunction.src`): dedented, starting at the `def`
line (line 1), decorators dropped. `triton_excerpt` maps a file position into that copy.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import tokenize
from functools import cached_property


EXCERPT_LINES = 12   # source lines Triton's CompilationError shows above the caret


class KernelSource:
    """The source of the function `fn`: its lines as `inspect` reads them, and its `def` parsed on first use."""

    def __init__(self, fn):
        fn = inspect.unwrap(fn)
        self.fn = fn
        code = getattr(fn, "__code__", None)
        self.file_name = code.co_filename if code is not None else None
        try:
            self.lines, self.first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError, SyntaxError, tokenize.TokenError):  # no source, or text that is not Python
            self.lines, self.first_line = None, code.co_firstlineno if code is not None else 0

    @cached_property
    def func(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function's `def` node at file coordinates; None without a source or when it is not a `def`."""
        return self._parse()

    def _parse(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if not self.lines:
            return None
        indented = self.lines[0][:1].isspace()
        if indented and self.first_line < 2:
            return None
        head = "\n" * (self.first_line - 2) + "if 1:\n" if indented else "\n" * (self.first_line - 1)
        try:
            tree = ast.parse(head + "".join(self.lines))
        except SyntaxError:
            return None
        body = tree.body[0].body if indented else tree.body
        node = body[0] if body else None
        return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    @cached_property
    def nodes(self) -> list:
        """Every node of `func` (`ast.walk` order), for the passes that look for a kind of node."""
        return list(ast.walk(self.func)) if self.func is not None else []

    def func_copy(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """A copy of `func` a pass may change (the rewrite): parsed again, which is several times faster than
        copying the tree."""
        return self._parse() if self.func is not None else None

    @property
    def def_line(self) -> int:
        """The file line of the `def` (decorators above it are not counted)."""
        return self.func.lineno if self.func is not None else self.first_line

    @property
    def indent(self) -> int:
        """The column of the `def` in the file."""
        return self.func.col_offset if self.func is not None else 0

    @staticmethod
    def position(node: ast.AST) -> tuple[int, int]:
        """(file line, file column) of a node of `func`."""
        return node.lineno, node.col_offset

    @cached_property
    def text(self) -> str | None:
        """Triton's copy of the source: from the `def` line on, dedented; None without a parsed `def`."""
        if self.func is None:
            return None
        return "".join(_dedent(line, self.indent) for line in self.lines[self.def_line - self.first_line:])

    def triton_excerpt(self, lineno: int, col: int) -> str:
        """`at {line}:{col}:`, the source up to file line `lineno` and a caret under column `col`, numbered as
        Triton numbers them (line 1 is the `def` line; columns of the dedented source)."""
        rel = lineno - self.def_line + 1
        if self.text is not None and rel >= 1:
            rel_col = max(col - self.indent, 0)
            shown = self.text.split("\n")[:rel][-EXCERPT_LINES:]
        else:
            rel_col = col
            shown = [linecache.getline(self.file_name or "", lineno).rstrip("\n")]
        return f"at {rel}:{rel_col}:\n" + "\n".join(shown + [" " * rel_col + "^"])

    def loop_assignments(self, loop_line: int, name: str):
        """(the last assignment of `name` before the loop at file line `loop_line`, its first assignment
        inside that loop): statement nodes, each None when there is none (a parameter; no parse)."""
        nodes = self.nodes
        loop = next((n for n in nodes if isinstance(n, (ast.For, ast.While)) and n.lineno == loop_line), None)
        found = sorted((n for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
            isinstance(t, ast.Name) and t.id == name for target in getattr(n, "targets", [getattr(n, "target", None)])
            for t in ast.walk(target))), key=lambda n: (n.lineno, n.col_offset)) if loop else []
        before = [n for n in found if n.lineno < loop.lineno]
        inside = [n for n in found if loop.lineno < n.lineno <= loop.end_lineno]
        return (before[-1] if before else None), (inside[0] if inside else None)

    @cached_property
    def returns_none_literally(self) -> bool:
        """Whether the function has a `return None` statement (3.6's visit_Return makes it a tensor, which
        fails, unlike a bare `return`)."""
        return any(isinstance(n, ast.Return) and isinstance(n.value, ast.Constant) and n.value.value is None
                   for n in self.nodes)


def _dedent(line: str, indent: int) -> str:
    """`line` without up to `indent` leading blanks; a blank line as an empty one (as textwrap.dedent)."""
    if not line.strip():
        return "\n"
    return line[min(indent, len(line) - len(line.lstrip(" \t"))):]
