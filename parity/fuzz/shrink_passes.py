"""The shrinker's passes: each yields smaller candidates of a fragment (`shrink.py` says which, in what order,
and runs them); nothing that guards against undefined behaviour is taken apart."""
from __future__ import annotations

import ast
import copy
import dataclasses

import numpy as np

from parity.fuzz.source import PART, dotted, loaded, parse, rebuilt, statements


UNARY_CALLS = ("tl.abs", "tl.exp", "tl.log", "tl.sqrt", "tl.sum", "tl.max", "tl.min", "tl.broadcast_to")


def value_cost(v) -> int:
    """0 for zero, 1 for +-1, 2 for other small integers, 3 for anything else (fractions, NaN, inf, large)."""
    v = float(v)
    if not np.isfinite(v):
        return 3
    if v == 0:
        return 0
    if abs(v) == 1:
        return 1
    return 2 if v == int(v) and abs(v) <= 16 else 3


# ----------------------------------------------------------------------------------------- protected shapes

def _is_guard(node) -> bool:
    """`tl.where((b == 0) | (b == -1), 3, b)`: a divisor kept away from 0 (and INT_MIN // -1)."""
    if not (isinstance(node, ast.Call) and dotted(node.func) == "tl.where" and len(node.args) == 3):
        return False
    return any(isinstance(n, ast.Compare) and isinstance(n.ops[0], ast.Eq) for n in ast.walk(node.args[0]))


def _is_clamp(node) -> bool:
    """`tl.minimum(tl.maximum(x, lo), hi)` with constant bounds: a float kept inside an integer range."""
    def const(n):
        return isinstance(n, ast.Constant) or (isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant))
    return (isinstance(node, ast.Call) and dotted(node.func) == "tl.minimum" and len(node.args) == 2
            and const(node.args[1]) and isinstance(node.args[0], ast.Call)
            and dotted(node.args[0].func) == "tl.maximum" and const(node.args[0].args[1]))


def _is_shift_mask(node, parent) -> bool:
    return (isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.LShift, ast.RShift)) and node is parent.right
            and isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd))


def _children(node):
    """Operands a node may be replaced by."""
    if _is_guard(node) or _is_clamp(node):
        return []
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left] + list(node.comparators)
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        if name == "tl.where":
            return node.args[1:3]
        if name in ("tl.maximum", "tl.minimum"):
            return node.args[:2]
        if name in UNARY_CALLS:
            return node.args[:1]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            return [node.func.value]
    return []


def _walk_editable(node, parent=None, literal_ok=True):
    """(node, parent, may change literals) for the expression nodes a pass may edit, outermost first. Pointer
    arithmetic, shapes, dtypes, axes, load masks and the insides of guards stay as they are."""
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        if name == "tl.arange" or _is_guard(node):
            yield node, parent, False
            return
        yield node, parent, literal_ok
        if name in ("tl.load", "tl.store"):
            args = node.args[1:]
        elif name == "tl.full":
            args = node.args[1:2]
        elif name == "tl.broadcast_to":
            args = node.args[:1]
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            yield from _walk_editable(node.func.value, node, literal_ok)
            return
        else:
            args = node.args
        clamp = _is_clamp(node)
        for a in args:
            if clamp and a is node.args[1]:
                continue
            if clamp and a is node.args[0]:
                yield from _walk_editable(a.args[0], a, literal_ok)
                continue
            yield from _walk_editable(a, node, literal_ok)
        return
    if isinstance(node, ast.Subscript):
        yield node, parent, literal_ok
        yield from _walk_editable(node.value, node, literal_ok)
        return
    if _is_shift_mask(node, parent):           # the mask itself stays; what it masks may change
        yield from _walk_editable(node.left, node, literal_ok)
        return
    yield node, parent, literal_ok
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield from _walk_editable(child, node, literal_ok)


def editable(mod):
    """Every editable expression node of the statements' right-hand sides and stored values, in order."""
    for s, _ in statements(mod.body):
        if isinstance(s, ast.Assign):
            yield from _walk_editable(s.value)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            yield from _walk_editable(s.value)


def _replace(mod, index, make):
    """A copy of `mod` whose `index`-th editable node is replaced by make(node) (None: no candidate)."""
    mod = copy.deepcopy(mod)
    for k, (node, parent, lit) in enumerate(editable(mod)):
        if k == index:
            new = make(node, lit)
            if new is None:
                return None
            for p in ast.walk(mod):
                for field_, value in ast.iter_fields(p):
                    if value is node:
                        setattr(p, field_, new)
                        return mod
                    if isinstance(value, list) and any(v is node for v in value):
                        setattr(p, field_, [new if v is node else v for v in value])
                        return mod
    return None


# ----------------------------------------------------------------------------------------- passes

def _part(stmt):
    """The packed fragment a statement of a `packed_fragment` belongs to (its `k{j}_` prefix), else None."""
    found = {m.group(1) for m in PART.finditer(ast.unparse(stmt))}
    return found.pop() if len(found) == 1 else None


def pass_companions(frag, keep):
    """Drop whole fragments of a packed kernel (`case.packed_fragment`) that the difference does not need:
    halves of them, then quarters, down to one at a time."""
    kept = {m.group(1) for name in keep for m in PART.finditer(name)}
    mod = parse(frag)
    parts = sorted({p for p in map(_part, mod.body) if p is not None} - kept, key=int)
    n = 2
    while parts and n <= 2 * len(parts):
        step = -(-len(parts) // n)
        for i in range(0, len(parts), step):
            gone = set(parts[i:i + step])
            m = copy.deepcopy(mod)
            m.body = [st for st in m.body if _part(st) not in gone]
            yield rebuilt(frag, m)
        n *= 2


def pass_stores(frag, keep):
    stores = [o for o in frag.outputs if o.name not in keep]
    if not stores:
        return
    mod = parse(frag)

    def without(names):
        names = set(names) | {o.name for o in frag.outputs if set(o.operands) & set(names)}
        m = copy.deepcopy(mod)
        m.body = [s for s in m.body if not (isinstance(s, ast.Expr) and loaded(s) & names)]
        return rebuilt(frag, m)
    if len(stores) > 1:
        yield without({o.name for o in stores})
    for o in stores:
        yield without({o.name})


def pass_statements(frag, keep):
    mod = parse(frag)
    for i, s in enumerate(mod.body):
        if isinstance(s, ast.If):
            for branch in ("body", "orelse"):
                m = copy.deepcopy(mod)
                m.body[i:i + 1] = getattr(m.body[i], branch)
                yield rebuilt(frag, m)
        if isinstance(s, ast.For):
            m = copy.deepcopy(mod)
            del m.body[i]
            yield rebuilt(frag, m)
            m = copy.deepcopy(mod)
            loop = m.body[i]
            var = loop.target.id
            for n in ast.walk(loop):
                for field_, value in ast.iter_fields(n):
                    if isinstance(value, ast.Name) and value.id == var and isinstance(value.ctx, ast.Load):
                        setattr(n, field_, ast.Constant(0))
            m.body[i:i + 1] = loop.body
            yield rebuilt(frag, m)


def pass_expressions(frag, keep):
    mod = parse(frag)
    nodes = list(editable(mod))
    for k, (node, _, _) in enumerate(nodes):
        for j in range(len(_children(node))):
            m = _replace(mod, k, lambda n, lit, j=j: copy.deepcopy(_children(n)[j]))
            if m is not None:
                yield rebuilt(frag, m)
    for k, (node, _, _) in enumerate(nodes):
        if isinstance(node, ast.Call) and dotted(node.func) == "tl.load" and node.keywords:
            m = _replace(mod, k, lambda n, lit: ast.Call(n.func, n.args, []))
            yield rebuilt(frag, m)


def _number(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return -node.operand.value
    return None


def pass_literals(frag, keep):
    mod = parse(frag)
    for k, (node, parent, lit) in enumerate(editable(mod)):
        v = _number(node)
        if v is None or not lit or isinstance(parent, ast.UnaryOp):
            continue
        for simpler in (type(v)(0), type(v)(1)):
            if value_cost(simpler) < value_cost(v):
                m = _replace(mod, k, lambda n, lit, s=simpler: ast.Constant(s))
                if m is not None:
                    yield rebuilt(frag, m)
    for i, (name, v) in enumerate(frag.scalars):
        options = (0, 2, -1) if isinstance(v, int) else (0.0, 1.0)
        for simpler in options:
            if value_cost(simpler) < value_cost(v):
                scalars = list(frag.scalars)
                scalars[i] = (name, simpler)
                yield dataclasses.replace(frag, scalars=scalars)


def _lane_value(arr, lane, out_shape):
    """The input's element feeding the first differing lane (same block shape, a row or column view), else its first."""
    if not lane:
        return arr.reshape(-1)[0]
    prog, idx = lane[0], lane[1:]
    shape = arr.shape[1:]
    if shape == tuple(out_shape):
        return arr[(prog,) + tuple(idx)]
    if len(shape) == 1 and len(idx) == 2:
        return arr[prog, idx[1] if shape[0] == out_shape[1] else idx[0]]
    return arr[prog].reshape(-1)[0]


def _one(dtype, v):
    if dtype == "bf16":
        return np.float32(v).view(np.uint32) >> 16
    return v


def pass_data(frag, keep, lane=None, out_shape=()):
    for i, (name, arr, dtype) in enumerate(frag.inputs):
        options = []
        if len(np.unique(arr)) > 1:
            options.append(_lane_value(arr, lane, out_shape))
        options += [_one(dtype, 0), _one(dtype, 1)]
        for v in options:
            new = np.full_like(arr, v)
            if np.array_equal(new, arr):
                continue
            inputs = list(frag.inputs)
            inputs[i] = (name, new, dtype)
            yield dataclasses.replace(frag, inputs=inputs)


def _shape_texts(S):
    """The source texts that spell block shape S and its row/column views (as the generator writes them), longest
    first, so that no text is found inside another one already replaced."""
    if len(S) == 1:
        (n,) = S
        return [f"pid * {n} + ", f"tl.arange(0, {n})", f"({n},)"]
    m, n = S
    return [f"tl.arange(0, {m})[:, None] * {n} + tl.arange(0, {n})[None, :]", f"pid * {m * n} + ",
            f"tl.arange(0, {n})", f"tl.arange(0, {m})", f"pid * {n} + ", f"pid * {m} + ", f"({m}, {n})"]


def _reshaped_source(lines, old, new):
    texts = []
    for _, text in lines:
        for k, t in enumerate(_shape_texts(old)):
            text = text.replace(t, f"\x00{k}\x00")
        for k, t in enumerate(_shape_texts(new)):
            text = text.replace(f"\x00{k}\x00", t)
        texts.append(text)
    return [(indent, t) for (indent, _), t in zip(lines, texts)]


def pass_shapes(frag, keep):
    S = tuple(frag.shape)
    if not S or any("tl.dot" in t for _, t in frag.lines):
        return
    sizes = lambda n: [s for s in (2, 4, 8, 16) if s < n] + [n]    # noqa: E731
    if len(S) == 1:
        options = [(n,) for n in sizes(S[0])[:-1]]
    else:
        options = sorted(((m, n) for m in sizes(S[0]) for n in sizes(S[1]) if (m, n) != S
                          and (S[0] != S[1] or m == n)),
                         key=lambda s: s[0] * s[1])
    for new in options:
        def cut(arr):
            shape = arr.shape[1:]
            if shape == S:
                return arr[(slice(None),) + tuple(slice(0, k) for k in new)]
            if len(S) == 2 and shape == (S[1],):
                return arr[:, :new[1]]
            if len(S) == 2 and shape == (S[0],):
                return arr[:, :new[0]]
            return arr
        inputs = [(name, cut(a), dt) for name, a, dt in frag.inputs]
        outputs = [dataclasses.replace(o, shape=new) if tuple(o.shape) == S else o for o in frag.outputs]
        yield dataclasses.replace(frag, lines=_reshaped_source(frag.lines, S, new), inputs=inputs, outputs=outputs,
                                  shape=new)


def pass_compaction(frag, keep):
    mod = parse(frag)
    counts = {}
    for n in ast.walk(mod):
        if isinstance(n, ast.Name):
            counts[n.id] = counts.get(n.id, 0) + 1
    for i, s in enumerate(mod.body):
        if not (isinstance(s, ast.Assign) and (counts.get(s.targets[0].id) == 2 or isinstance(s.value, ast.Name))):
            continue
        if isinstance(s.value, ast.Call) and dotted(s.value.func) == "tl.load":
            continue
        m = copy.deepcopy(mod)
        var, value = s.targets[0].id, m.body[i].value
        del m.body[i]
        for n in ast.walk(m):
            for field_, v in ast.iter_fields(n):
                if isinstance(v, ast.Name) and v.id == var:
                    setattr(n, field_, value)
                elif isinstance(v, list):
                    setattr(n, field_, [value if isinstance(x, ast.Name) and x.id == var else x for x in v])
        yield rebuilt(frag, m)


PASSES = (pass_companions, pass_stores, pass_statements, pass_expressions, pass_literals, pass_data, pass_shapes, pass_compaction)
