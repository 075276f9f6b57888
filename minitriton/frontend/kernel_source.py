"""What a kernel's source says about one memory access: the `tl.load`/`tl.store` call at a line, its pointer and
mask (as written, and with the names assigned earlier substituted in), which index names run along the rows
(`offs_m[:, None]`) and the columns (`offs_n[None, :]`) of a 2-D tile, which names come from `tl.arange` and
`tl.program_id`, the bounds the kernel compares them with (`offs < n` gives offs's bound n), and every name the
kernel defines. Read-only static analysis with `ast` over the kernel's file (through linecache, as tracebacks
read it); the fixes (frontend.fixes) are built from it."""
from __future__ import annotations

import ast
import functools
import linecache
from dataclasses import dataclass, field

ROWS, COLS = "rows", "cols"
MEMORY_CALLS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                "atomic_xor", "atomic_xchg", "atomic_cas")


@dataclass
class Access:
    """One `tl.load`/`tl.store`/atomic call of a kernel: `call` and `pointer_node`/`mask_node` as written,
    `pointer`/`mask` with the earlier assignments substituted in."""

    op: str
    call: ast.Call
    pointer_node: ast.expr
    mask_node: ast.expr | None
    pointer: ast.expr
    mask: ast.expr | None
    kernel: ast.FunctionDef
    axes: dict = field(default_factory=dict)  # ROWS/COLS -> index names used that way in the pointer

    @property
    def is_2d(self) -> bool:
        return bool(self.axes.get(ROWS)) or bool(self.axes.get(COLS))


def source_lines(filename: str) -> list[str]:
    linecache.checkcache(filename)   # the file may have been edited since (a fix applied)
    return linecache.getlines(filename)


def _tree(filename: str):
    return _parsed("".join(source_lines(filename)))


@functools.lru_cache(maxsize=8)
def _parsed(text: str):
    """The module's tree (read-only: the analysis copies what it changes), parsed once per text."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def functions(filename: str) -> list:
    """The top-level function definitions of a file."""
    tree = _tree(filename)
    return [n for n in tree.body if isinstance(n, ast.FunctionDef)] if tree else []


def kernel_at(filename: str, line: int) -> ast.FunctionDef | None:
    """The innermost function definition of `filename` that contains `line`."""
    tree = _tree(filename) if line is not None else None
    found = None
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def is_tl(func, name: str) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Name) \
        and func.value.id in ("tl", "triton")


def keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def access_at(filename: str, line: int | None, op: str, col: int | None = None) -> Access | None:
    """The `tl.<op>` call that spans `line` in `filename` (the one starting at column `col` where a line has
    several), or None when the source does not show one."""
    fn = kernel_at(filename, line) if filename and line is not None else None
    if fn is None:
        return None
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and is_tl(n.func, op)
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    at = [n for n in calls if col is not None and n.lineno == line and span(n, filename)[1] == col]
    return access_of(fn, (at or sorted(calls, key=lambda n: abs(n.lineno - line)))[0], op) if calls else None


def access_of(fn: ast.FunctionDef, call: ast.Call, op: str) -> Access | None:
    pointer = call.args[0] if call.args else keyword(call, "pointer")
    if pointer is None:
        return None
    mask_index = 1 if op == "load" else 2
    mask = call.args[mask_index] if len(call.args) > mask_index else keyword(call, "mask")
    full = substitute(pointer, fn, call.lineno)
    return Access(op, call, pointer, mask, full, substitute(mask, fn, call.lineno) if mask is not None else None,
                  fn, axes=axes_of(full))


def accesses(fn: ast.FunctionDef) -> list:
    """Every tl.load and tl.store of a kernel, in source order."""
    calls = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call)
                    and (is_tl(n.func, "load") or is_tl(n.func, "store"))), key=lambda c: (c.lineno, c.col_offset))
    return [a for a in (access_of(fn, c, c.func.attr) for c in calls) if a is not None]


# ---------------------------------------------------------------- names and their values

def assignments(fn: ast.FunctionDef, before: int) -> dict:
    """name -> its value expression, from the last plain assignment before line `before` (`x += d` read as
    `x + d`), so a pointer built in steps (`a_ptrs = ...; a_ptrs += ...`) reads as one expression. The values
    are the source's own nodes (positions kept)."""
    found: dict = {}
    for node in sorted((n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))),
                       key=lambda n: n.lineno):
        if node.lineno >= before:
            break
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in found:
            found[node.target.id] = ast.BinOp(left=found[node.target.id], op=node.op, right=node.value)
    return found


def pointer_params(fn: ast.FunctionDef) -> set:
    return {a.arg for a in fn.args.args if a.arg.endswith("ptr") or a.arg.endswith("_ptrs")}


def substitute(expr: ast.expr, fn: ast.FunctionDef, line: int, depth: int = 6) -> ast.expr:
    """`expr` with the pointer-valued and mask-valued names assigned before `line` replaced by their values
    (up to `depth` levels), so `tl.load(a_ptrs, mask=kv_mask)` reads as what the pointer and the mask are.
    Index names (`offs`, `offs_n`) stay names: they are what a fix names."""
    values = assignments(fn, line)
    pointers = pointer_params(fn)

    def expandable(name, seen=()):
        value = values.get(name)
        if value is None or name in seen:
            return False
        if any(isinstance(n, (ast.Compare, ast.BoolOp)) or isinstance(n, ast.Subscript) and axis_of(n)
               for n in ast.walk(value)):   # masks, and 2-D index tables (`offs = rm[:, None] * N + rn[None, :]`)
            return True
        used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        return bool(used & pointers) or any(expandable(u, seen + (name,)) for u in used)

    class Sub(ast.NodeTransformer):
        def __init__(self, level):
            self.level = level

        def visit_Name(self, node):
            if self.level <= 0 or not expandable(node.id):
                return node
            return Sub(self.level - 1).visit(_copy(values[node.id]))

    return Sub(depth).visit(_copy(expr))


def resolved_nodes(expr: ast.expr, fn: ast.FunctionDef, line: int, depth: int = 8) -> list:
    """The source's own nodes of `expr` and, for each name in it, of the value last assigned to it before
    `line` (recursively): where an edit of a name's definition can be made."""
    values = assignments(fn, line)
    out, seen = [], set()

    def visit(node, level):
        for n in ast.walk(node):
            out.append(n)
            if isinstance(n, ast.Name) and n.id in values and n.id not in seen and level > 0:
                seen.add(n.id)
                visit(values[n.id], level - 1)

    visit(expr, depth)
    return out


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


def kernel_names(fn: ast.FunctionDef, filename: str | None = None) -> set:
    """Every name a kernel can use: its parameters, the names it assigns or loops over, the module's
    top-level names (constants, imports, functions)."""
    names = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    tree = _tree(filename) if filename else None
    for node in tree.body if tree else ():
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def names_in_scope(fn: ast.FunctionDef, at: ast.AST) -> set:
    """The names usable at node `at`: the parameters and the names assigned by the statements that enclose it
    or precede it in its own blocks (a name assigned only inside an earlier loop or branch is not: Triton
    refuses it after the block)."""
    names = {a.arg for a in fn.args.args + fn.args.kwonlyargs}

    def walk(body):
        for stmt in body:
            if stmt.lineno <= at.lineno <= (stmt.end_lineno or stmt.lineno):
                if isinstance(stmt, ast.For):
                    names.update(n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name))
                for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
                    if isinstance(block, list) and any(isinstance(b, ast.stmt) and b.lineno <= at.lineno
                                                       <= (b.end_lineno or b.lineno) for b in block):
                        walk(block)
                return
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))

    walk(fn.body)
    return names


# ---------------------------------------------------------------- axes, lanes, bounds

def axis_of(node: ast.Subscript) -> str | None:
    """ROWS for x[:, None], COLS for x[None, :], else None."""
    s = node.slice
    if not isinstance(s, ast.Tuple) or len(s.elts) != 2:
        return None
    a, b = s.elts
    if isinstance(a, ast.Slice) and _is_none(b):
        return ROWS
    if _is_none(a) and isinstance(b, ast.Slice):
        return COLS
    return None


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def indexed(name: str, axis: str) -> str:
    """`name[:, None]` (rows) or `name[None, :]` (columns)."""
    return f"{name}[:, None]" if axis == ROWS else f"{name}[None, :]"


def axes_of(expr: ast.expr | None) -> dict:
    """ROWS/COLS -> the names (in order of appearance) indexed as name[:, None] / name[None, :] in `expr`."""
    out = {ROWS: [], COLS: []}
    for node in ast.walk(expr) if expr is not None else ():
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            axis = axis_of(node)
            if axis and node.value.id not in out[axis]:
                out[axis].append(node.value.id)
    return out


def derived_from(fn: ast.FunctionDef, call_name: str) -> set:
    """Names whose value depends (through assignments, loops) on a `tl.<call_name>(...)` call."""
    deps = set()
    nodes = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For))]
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if isinstance(node, ast.For):
                targets, value = [node.target], node.iter
            elif isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            else:
                targets, value = [node.target], node.value
            if value is None or not depends_on(value, deps, call_name):
                continue
            for name in (n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
                if name not in deps:
                    deps.add(name)
                    changed = True
    return deps


def depends_on(expr, names: set, call_name: str) -> bool:
    """Whether `expr` uses one of `names` or calls tl.<call_name>."""
    return any(isinstance(n, ast.Name) and n.id in names or isinstance(n, ast.Call) and is_tl(n.func, call_name)
               for n in ast.walk(expr))


def lane_names(access: Access) -> list:
    """The names in the pointer that come from tl.arange (the lanes' own index), in order of appearance."""
    lanes = derived_from(access.kernel, "arange")
    seen = []
    for node in ast.walk(access.pointer):
        if isinstance(node, ast.Name) and node.id in lanes and node.id not in seen:
            seen.append(node.id)
    return seen


def bounds(fn: ast.FunctionDef) -> dict:
    """name -> the source of what the kernel compares it with (`offs < n`, `offs_n[:, None] < T`: n, T)."""
    out = {}
    for node in sorted((n for n in ast.walk(fn) if isinstance(n, ast.Compare)), key=lambda n: (n.lineno, n.col_offset)):
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Lt, ast.LtE)):
            name = index_name(node.left)
            if name and name not in out:
                out[name] = ast.unparse(node.comparators[0])
    return out


def index_name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id
    return None


def mask_terms(mask: ast.expr | None) -> list:
    """The source of each `&`-joined condition of a mask."""
    if mask is None:
        return []
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
        return mask_terms(mask.left) + mask_terms(mask.right)
    return [ast.unparse(mask)]


def additive_terms(expr):
    """The `+`/`-` operands of an expression: a + b * c - d -> [a, b * c, d]."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return additive_terms(expr.left) + additive_terms(expr.right)
    return [expr]


# ---------------------------------------------------------------- positions and edits

def span(node, filename: str) -> tuple:
    """(line, col, end_line, end_col) of a node in characters (ast counts UTF-8 bytes)."""
    lines = source_lines(filename)

    def chars(line, col):
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text.encode()[:col].decode(errors="ignore"))

    return (node.lineno, chars(node.lineno, node.col_offset), node.end_lineno,
            chars(node.end_lineno, node.end_col_offset))


def text_of(node, filename: str) -> str:
    """The node's source as written."""
    line, col, end_line, end_col = span(node, filename)
    lines = source_lines(filename)[line - 1:end_line]
    if not lines:
        return ast.unparse(node)
    if len(lines) == 1:
        return lines[0][col:end_col]
    return lines[0][col:] + "".join(lines[1:-1]) + lines[-1][:end_col]


def atom(source: str) -> str:
    """`source` parenthesised unless it is a name, a call, an attribute, a subscript or a constant."""
    node = ast.parse(source, mode="eval").body
    simple = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant)
    return source if isinstance(node, simple) else f"({source})"
