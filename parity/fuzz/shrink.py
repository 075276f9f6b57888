"""Shrinking mismatching fuzz fragments to small kernels that still differ the same way.

A greedy reducer over a fragment's source (Python's `ast`) and data, checked live: every candidate is a smaller
fragment, run on both sides (one kernel each) and kept when it still differs the same way
(`keeps`: the output it focuses on still differs, or the same side raises the same exception type). Passes:

0. companions: for a difference that shows only inside its packed kernel, the other fragments go, halves first;
1. stores: drop the outputs that do not differ (all at once, then one by one; a kept root keeps its operands);
2. statements: an `if` becomes one of its branches, a `for` loop goes or runs its body once;
3. expressions: a sub-expression becomes one of its operands, largest first; a load loses its mask;
4. literals and scalar arguments become 0, 1 (arguments 2 or -1: an int argument equal to 1 is a constexpr);
5. data: an input holds one value everywhere (the value at the first differing lane, then 0, then 1);
6. shapes: smaller blocks (not in fragments with a dot, whose K is at least 16);
7. compaction: a variable read once is written where it is read.

Dead code goes after every step (assignments nobody reads, then loads and arguments nobody uses). Nothing that
guards against undefined behaviour is taken apart: divisor guards, clamps before float -> int casts and
shift-amount masks stay whole, so a shrunk kernel is as well defined as the fragment it came from.
Every candidate must be smaller by `size` (lines, arguments, syntax nodes, elements, distinct values, the
magnitude of constants), so shrinking ends. Many fragments shrink at once: each round runs a few candidates of
every unfinished fragment together, which keeps the reference's workers busy; a fragment is done when a whole
cycle of passes finds nothing smaller, or at the deadline.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import time

import numpy as np

from parity.fuzz.source import PART, dotted, loaded, parse, rebuilt, statements

UNARY_CALLS = ("tl.abs", "tl.exp", "tl.log", "tl.sqrt", "tl.sum", "tl.max", "tl.min", "tl.broadcast_to")


# ----------------------------------------------------------------------------------------- size

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


def _values(arr, dtype):
    return (arr.astype(np.uint32) << 16).view(np.float32) if dtype == "bf16" else arr


def size(frag) -> tuple:
    """What shrinking makes smaller, most important first."""
    mod = parse(frag)
    literals = [n.value for n in ast.walk(mod) if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
                and not isinstance(n.value, bool)]
    distinct, cost = 0, sum(value_cost(v) for v in literals) + sum(value_cost(v) for _, v in frag.scalars)
    for _, arr, dtype in frag.inputs:
        u = np.unique(_values(arr, dtype))
        distinct += len(u)
        cost += sum(value_cost(v) for v in u[:64]) if len(u) else 0
    return (len(frag.lines), len(frag.inputs) + len(frag.outputs) + len(frag.scalars),
            sum(1 for _ in ast.walk(mod)), sum(a.size for _, a, _ in frag.inputs), distinct, cost)


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
    """The source texts that spell block shape S and its row/column views (as gen writes them), longest
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


# ----------------------------------------------------------------------------------------- the driver

@dataclasses.dataclass
class Shrunk:
    frag: object                 # the smallest fragment found
    verdict: object              # its verdict, mt and ref Results (run alone)
    mt: object
    ref: object
    alone: bool = True           # False: the fragment shows no difference alone, nor inside its packed kernel
    finished: bool = False       # a whole cycle of passes found nothing smaller (else the deadline came first)
    steps: int = 0               # candidates kept
    tried: int = 0               # candidates run
    packed: bool = False         # the difference shows only among other fragments' code: `frag` is the packed
                                 # kernel (`case.packed_fragment`), shrunk


def focus(frag, verdict):
    """The output a shrink keeps differing: the first exactly compared one that differs (a root's difference
    often comes from its operands), else the first differing root; None when a side raised."""
    bad = [o for o in frag.outputs if o.name in verdict.bad]
    exact = [o for o in bad if o.kind == "exact"]
    return (exact or bad or [None])[0]


def keeps(verdict, want) -> bool:
    """Whether a candidate's verdict is still the mismatch being shrunk."""
    if verdict.status != "mismatch":
        return False
    if want[0] == "raised":
        return verdict.raised == want[1]
    return want[1] in verdict.bad


class _Job:
    def __init__(self, frag, verdict, packed=None):
        self.packed_with, self.packed = packed, False
        self._focus(frag, verdict)
        self.pass_i, self.pos, self.progress = 0, 0, False
        self.cands = None
        self.done, self.started, self.alone = False, False, True
        self.steps = self.tried = 0

    def _focus(self, frag, verdict):
        self.best, self.verdict, self.mt, self.ref = frag, verdict, None, None
        out = focus(frag, verdict)
        self.want = ("raised", verdict.raised) if out is None else ("differs", out.name)
        self.keep = set() if out is None else {out.name, *out.operands}
        self.size = size(frag)

    def candidates(self):
        if self.cands is None:
            lane, shape = (), ()
            if self.want[0] == "differs":
                lane = self.verdict.bad[self.want[1]]
                shape = next(o.shape for o in self.best.outputs if o.name == self.want[1])
            fn = PASSES[self.pass_i]
            gen = fn(self.best, self.keep, lane, shape) if fn is pass_data else fn(self.best, self.keep)
            self.cands = [c for c in gen if size(c) < self.size]
        return self.cands

    def take(self, k):
        """The next k candidates (or the fragment itself, alone, first); [] once finished."""
        if not self.started:
            return [self.best]
        while not self.done:
            part = self.candidates()[self.pos:self.pos + k]
            if part:
                return part
            self.pass_i, self.pos, self.cands = self.pass_i + 1, 0, None
            if self.pass_i == len(PASSES):
                if not self.progress:
                    self.done = True
                self.pass_i, self.progress = 0, False
        return []

    def feed(self, part, outcomes):
        self.tried += len(part)
        if not self.started:
            self.started = True
            verdict, mt, ref = outcomes[0]
            if not keeps(verdict, self.want) and self.packed_with is not None:
                self._focus(*self.packed_with)         # then shrink the packed kernel it differed in
                self.packed_with, self.packed, self.started = None, True, False
            elif not keeps(verdict, self.want):
                self.alone, self.done = False, True
            else:
                self.verdict, self.mt, self.ref = verdict, mt, ref
            return
        for j, (cand, (verdict, mt, ref)) in enumerate(zip(part, outcomes)):
            if keeps(verdict, self.want):
                self.best, self.verdict, self.mt, self.ref = cand, verdict, mt, ref
                self.size = size(cand)
                self.pos, self.cands, self.progress = self.pos + j, None, True
                self.steps += 1
                return
        self.pos += len(part)


def shrink_many(items, run, deadline=None, width=28) -> list:
    """Shrink every (fragment, verdict) of `items` at once; `run(fragments)` gives (Verdict, mt, ref) per fragment,
    each run alone. An item may carry a third element, (fragment, verdict) of the packed kernel it differed in
    (`case.packed_fragment`): shrunk instead when the fragment alone does not differ. Returns one `Shrunk`
    per item."""
    jobs = [_Job(*item) for item in items]
    memo = {}
    while True:
        active = [j for j in jobs if not j.done]
        if not active or (deadline is not None and time.monotonic() > deadline and all(j.started for j in jobs)):
            break
        k = max(2, width // len(active))
        parts = [(j, j.take(k)) for j in active]
        fresh = {}
        for _, part in parts:
            for c in part:
                key = c.key()
                if key not in memo:
                    fresh.setdefault(key, c)
        if fresh:
            for key, outcome in zip(fresh, run(list(fresh.values()))):
                memo[key] = outcome
        for j, part in parts:
            if part:
                j.feed(part, [memo[c.key()] for c in part])
    return [Shrunk(j.best, j.verdict, j.mt, j.ref, j.alone, j.done and j.alone, j.steps, j.tried, j.packed)
            for j in jobs]


def kernel_lines(frag) -> int:
    """Lines of the kernel a fragment makes alone: decorator, signature, program id and the body."""
    return 3 + len(frag.lines)

