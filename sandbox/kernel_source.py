"""What the learner's kernel source says about one memory access: the `tl.load`/`tl.store` call at a line, the
pointer and mask expressions it was given (names assigned earlier in the kernel substituted in), which
index variables run along the rows (`offs_m[:, None]`) and the columns (`offs_n[None, :]`) of a 2-D tile,
which names come from `tl.arange` and `tl.program_id`, and the bounds the kernel compares them with
(`offs < n` gives offs's bound n).

The explanations of errors (sandbox.explain) use it to name the fix in the kernel's own words, such as
`mask=offs_n[:, None] < T`. Read-only static analysis with `ast`; NumPy-free.
"""
from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass, field

ROWS, COLS = "rows", "cols"


@dataclass
class Access:
    """One `tl.load`/`tl.store` call of a kernel."""

    op: str                                   # "load" | "store"
    pointer: ast.expr                         # with earlier assignments substituted
    mask: ast.expr | None
    kernel: ast.FunctionDef
    axes: dict = field(default_factory=dict)  # ROWS/COLS -> index names used that way in the pointer

    @property
    def is_2d(self) -> bool:
        return bool(self.axes.get(ROWS)) or bool(self.axes.get(COLS))


def source_lines(filename: str) -> list[str]:
    return linecache.getlines(filename)


def functions(filename: str) -> list:
    """The top-level function definitions of the learner's file."""
    try:
        tree = ast.parse("".join(source_lines(filename)))
    except (SyntaxError, ValueError):
        return []
    return [n for n in tree.body if isinstance(n, ast.FunctionDef)]


def kernel_at(filename: str, line: int) -> ast.FunctionDef | None:
    """The function definition of `filename` that contains `line`."""
    try:
        tree = ast.parse("".join(source_lines(filename)))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            return node
    return None


def access_at(filename: str, line: int | None, op: str) -> Access | None:
    """The `tl.<op>` call that spans `line` in the learner's file, or None when it cannot be found."""
    if line is None:
        return None
    fn = kernel_at(filename, line)
    if fn is None:
        return None
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and _is_tl(n.func, op)
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not calls:
        return None
    call = min(calls, key=lambda n: abs(n.lineno - line))
    pointer = call.args[0] if call.args else _keyword(call, "pointer")
    mask_index = 1 if op == "load" else 2
    mask = call.args[mask_index] if len(call.args) > mask_index else _keyword(call, "mask")
    if pointer is None:
        return None
    pointer = substitute(pointer, fn, call.lineno)
    mask = substitute(mask, fn, call.lineno) if mask is not None else None
    return Access(op, pointer, mask, fn, axes=axes_of(pointer))


def accesses(filename: str, line: int) -> list:
    """Every tl.load and tl.store of the kernel that contains `line`."""
    fn = kernel_at(filename, line)
    if fn is None:
        return []
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and (_is_tl(n.func, "load") or _is_tl(n.func, "store"))]
    found = (access_at(filename, c.lineno, c.func.attr) for c in sorted(calls, key=lambda c: c.lineno))
    return [a for a in found if a is not None]


def _is_tl(func, name: str) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Name) \
        and func.value.id in ("tl", "triton")


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


# ---------------------------------------------------------------- names and their values

def assignments(fn: ast.FunctionDef, before: int) -> dict:
    """name -> its value expression, from the last plain assignment before line `before` (`x += d` read as
    `x + d`), so a pointer built in steps (`a_ptrs = ...; a_ptrs += ...`) reads as one expression."""
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


def substitute(expr: ast.expr, fn: ast.FunctionDef, line: int, depth: int = 6) -> ast.expr:
    """`expr` with the pointer-valued and mask-valued names assigned before `line` replaced by their values
    (up to `depth` levels), so `tl.load(a_ptrs, mask=kv_mask)` reads as what the pointer and the mask are.
    Index names (`offs`, `offs_n`) stay names: they are what a fix names."""
    values = assignments(fn, line)
    pointers = {a.arg for a in fn.args.args if a.arg.endswith("ptr")}

    def expandable(name, seen=()):
        value = values.get(name)
        if value is None or name in seen:
            return False
        if any(isinstance(n, (ast.Compare, ast.BoolOp)) for n in ast.walk(value)):
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


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


def _axis_of(node: ast.Subscript) -> str | None:
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


def axes_of(expr: ast.expr | None) -> dict:
    """ROWS/COLS -> the names (in order of appearance) indexed as name[:, None] / name[None, :] in `expr`."""
    out = {ROWS: [], COLS: []}
    if expr is None:
        return out
    for node in ast.walk(expr):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            axis = _axis_of(node)
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
            if value is None or not _depends(value, deps, call_name):
                continue
            for t in targets:
                for name in (n.id for n in ast.walk(t) if isinstance(n, ast.Name)):
                    if name not in deps:
                        deps.add(name)
                        changed = True
    return deps


def _depends(expr, deps: set, call_name: str) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in deps:
            return True
        if isinstance(node, ast.Call) and _is_tl(node.func, call_name):
            return True
    return False


def depends_on(expr: ast.expr, names: set, call_name: str) -> bool:
    """Whether `expr` uses one of `names` or calls tl.<call_name>."""
    return _depends(expr, names, call_name)


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
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Lt, ast.LtE)):
            name = _index_name(node.left)
            if name and name not in out:
                out[name] = ast.unparse(node.comparators[0])
    return out


def _index_name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id
    return None


def compared_with_lte(mask: ast.expr | None) -> list:
    """The names a mask compares with `<=` (`offs <= n`): an off-by-one bound."""
    if mask is None:
        return []
    return [_index_name(n.left) for n in ast.walk(mask)
            if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.LtE) and _index_name(n.left)]


def mask_terms(mask: ast.expr | None) -> list:
    """The source of each `&`-joined condition of a mask."""
    if mask is None:
        return []
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
        return mask_terms(mask.left) + mask_terms(mask.right)
    return [ast.unparse(mask)]


# ---------------------------------------------------------------- axis mix-ups

def _terms(expr):
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def axis_steps(pointer: ast.expr) -> list:
    """(axis, index name, the source of what it is multiplied by or None) for each `name[:, None] * s` or
    `name[None, :]` term of a pointer expression."""
    out = []
    for term in _terms(pointer):
        factors = [term.left, term.right] if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult) else [term]
        for i, f in enumerate(factors):
            if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and _axis_of(f):
                other = factors[1 - i] if len(factors) == 2 else None
                out.append((_axis_of(f), f.value.id, ast.unparse(other) if other is not None else None))
    return out


def same_stride(access: Access):
    """(row name, column name, stride) when a 2-D pointer steps both axes by the same named stride."""
    steps = axis_steps(access.pointer)
    rows = [(n, s) for a, n, s in steps if a == ROWS and s]
    cols = [(n, s) for a, n, s in steps if a == COLS and s]
    for rn, rs in rows:
        for cn, cs in cols:
            if rs == cs:
                return rn, cn, rs
    return None


def broadcast_mixup(fn: ast.FunctionDef):
    """(value, the axis it is used along, its index name, the axis that index numbers) for a vector loaded at a
    1-D index (`x = tl.load(x_ptr + offs_m)`) and broadcast along the other axis than its index runs in the
    kernel's 2-D addresses (`x[None, :]` while the addresses have `offs_m[:, None]`)."""
    along = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            load = next((c for c in ast.walk(node.value) if isinstance(c, ast.Call) and _is_tl(c.func, "load")), None)
            if load is not None and load.args:
                access = access_at_call(fn, load, "load")
                if access is not None and not access.is_2d:
                    names = lane_names(access)
                    if len(names) == 1:
                        along[node.targets[0].id] = names[0]
    index_axis = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and (_is_tl(node.func, "load") or _is_tl(node.func, "store")) and node.args:
            for axis, names in axes_of(substitute(node.args[0], fn, node.lineno)).items():
                for name in names:
                    index_axis.setdefault(name, axis)
    subscripts = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Subscript)), key=lambda n: (n.lineno, n.col_offset))
    for node in subscripts:
        if isinstance(node.value, ast.Name) and node.value.id in along:
            used = _axis_of(node)
            index = along[node.value.id]
            if used and index in index_axis and index_axis[index] != used:
                return node.value.id, used, index, index_axis[index]
    return None


def access_at_call(fn: ast.FunctionDef, call: ast.Call, op: str) -> Access | None:
    pointer = substitute(call.args[0], fn, call.lineno)
    return Access(op, pointer, None, fn, axes=axes_of(pointer))


def stride_for(fn: ast.FunctionDef, index: str, wrong: str) -> str | None:
    """The stride parameter an index most likely goes with, by the kernel's naming: `offs_n` with `stride_bk`
    used in its place gives `stride_bn` when the kernel has such a parameter."""
    params = {a.arg for a in fn.args.args}
    letter = index.rsplit("_", 1)[-1][:1]
    guess = wrong[:-1] + letter if letter and wrong[-1:].isalpha() else None
    return guess if guess in params and guess != wrong else None
