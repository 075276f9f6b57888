"""The Triton type of every expression in a (shrunk) fuzz fragment, for the rules that explain a difference.

`infer(frag)` walks the fragment's source with Triton 3.6's promotion rules (`dtypes.promote`) and returns
`Typed`: each expression node's dtype name ("int16", "fp32", "int1", ...; a Python literal is "weak int" or
"weak float" until an operand gives it a type), each node's parent, and where a value goes: `consumer(node)`
is the dtype the value is converted to or combined at (a wider operation, a `.to`, a store's element type).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from parity.fuzz.dtypes import FLOATS, INTS, promote, widen_bf16
from parity.fuzz.source import dotted, parse, statements

TL = {f"tl.{n}": d for n, d in (("int1", "int1"), ("int8", "int8"), ("int16", "int16"), ("int32", "int32"),
                                  ("int64", "int64"), ("uint8", "uint8"), ("uint32", "uint32"), ("float16", "fp16"),
                                  ("bfloat16", "bf16"), ("float32", "fp32"), ("float64", "fp64"))}
WEAK_INT, WEAK_FLOAT = "weak int", "weak float"


def width(d) -> int:
    """Bits of a dtype (a weak literal: 0)."""
    if d in INTS:
        return INTS[d]
    if d in FLOATS:
        return {"fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64}[d]
    return 1 if d == "int1" else 0


def combine(a, b, div=False):
    """The type of a binary operation on types a and b (weak literals take the other operand's type)."""
    weak = (WEAK_INT, WEAK_FLOAT)
    if a in weak and b in weak:
        return WEAK_FLOAT if WEAK_FLOAT in (a, b) else WEAK_INT
    if a in weak or b in weak:
        lit, t = (a, b) if a in weak else (b, a)
        if lit == WEAK_FLOAT and t not in FLOATS:
            t = "fp32"
        return "fp32" if div and t in ("fp16", "bf16") else t
    if a == "int1" and b == "int1":
        return "int1"
    a, b = ("int8" if x == "int1" else x for x in (a, b))
    return promote(a, b, div=div)


@dataclass
class Typed:
    types: dict = field(default_factory=dict)       # id(node) -> dtype name
    parents: dict = field(default_factory=dict)     # id(node) -> parent node
    tree: ast.Module | None = None
    stores: dict = field(default_factory=dict)      # id(stored value node) -> output dtype

    def of(self, node):
        return self.types.get(id(node))

    def consumer(self, node):
        """The dtype the value of `node` is used at: its parent's (an arithmetic op, a cast, a store)."""
        if id(node) in self.stores:
            return self.stores[id(node)]
        p = self.parents.get(id(node))
        if p is None:
            return None
        if isinstance(p, ast.Attribute) and p.attr == "to":
            return self.of(self.parents.get(id(p)))
        if isinstance(p, ast.Compare):
            return combine(*(self.of(x) for x in (p.left, p.comparators[0])))
        if isinstance(p, ast.Call) and dotted(p.func) == "tl.where" and node is p.args[0]:
            return "int1"
        if isinstance(p, ast.Call) and dotted(p.func) in ("tl.broadcast_to", "tl.sum", "tl.max", "tl.min"):
            return self.consumer(p)
        return self.of(p)

    def nodes(self):
        for n in ast.walk(self.tree):
            if id(n) in self.types:
                yield n


def infer(frag) -> Typed:
    tree = parse(frag)
    env = {"pid": "int32"}
    env.update({name: dtype for name, _, dtype in frag.inputs})
    env.update({name: ("fp32" if isinstance(v, float) else "int32") for name, v in frag.scalars})
    outs = {o.name: o.dtype for o in frag.outputs}
    typed = Typed(tree=tree)

    def visit(node, parent=None):
        if parent is not None:
            typed.parents[id(node)] = parent
        t = _type(node)
        if t is not None:
            typed.types[id(node)] = t
        return t

    def _type(node):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return "int1"
            return WEAK_FLOAT if isinstance(node.value, float) else WEAK_INT if isinstance(node.value, int) else None
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Subscript):
            visit(node.slice, node)
            return visit(node.value, node)
        if isinstance(node, ast.UnaryOp):
            t = visit(node.operand, node)
            return "int1" if isinstance(node.op, ast.Not) else t
        if isinstance(node, ast.BinOp):
            a, b = visit(node.left, node), visit(node.right, node)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Div):
                return "fp64" if "fp64" in (a, b) else "fp32"
            return combine(a, b, div=isinstance(node.op, ast.Mod))
        if isinstance(node, ast.Compare):
            visit(node.left, node)
            for c in node.comparators:
                visit(c, node)
            return "int1"
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                visit(v, node)
            return "int1"
        if isinstance(node, ast.Call):
            return _call(node)
        if isinstance(node, ast.Tuple):
            for e in node.elts:
                visit(e, node)
        return None

    def _call(node):
        name = dotted(node.func)
        args = [visit(a, node) for a in node.args]
        for kw in node.keywords:
            visit(kw.value, node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            visit(node.func.value, node.func)
            typed.parents[id(node.func)] = node
            return TL.get(dotted(node.args[0]))
        if name == "tl.full":
            return TL.get(dotted(node.args[2]))
        if name == "tl.load":
            ptr = node.args[0]
            while isinstance(ptr, ast.BinOp):
                ptr = ptr.left
            return env.get(ptr.id) if isinstance(ptr, ast.Name) else None
        if name == "tl.store":
            ptr = node.args[0]
            while isinstance(ptr, ast.BinOp):
                ptr = ptr.left
            if isinstance(ptr, ast.Name) and ptr.id in outs:
                typed.stores[id(node.args[1])] = outs[ptr.id]
            return None
        if name == "tl.where":
            return combine(args[1], args[2]) if None not in args[1:] else None
        if name in ("tl.maximum", "tl.minimum"):
            a, b = (widen_bf16(x) if x in FLOATS else x for x in args[:2])
            return combine(a, b) if None not in (a, b) else None
        if name in ("tl.abs", "tl.exp", "tl.log", "tl.sqrt", "tl.broadcast_to", "tl.max", "tl.min"):
            return args[0]
        if name == "tl.sum":
            return "int32" if args[0] in ("int1", "int8", "int16", "uint8") else args[0]
        if name == "tl.dot":
            out = next((TL.get(dotted(k.value)) for k in node.keywords if k.arg == "out_dtype"), None)
            return out or ("int32" if args[0] in INTS else "fp64" if args[0] == "fp64" else "fp32")
        if name == "tl.arange":
            return "int32"
        return None

    for stmt, _ in statements(tree.body):
        if isinstance(stmt, ast.Assign):
            t = visit(stmt.value)
            if t is not None:
                env[stmt.targets[0].id] = t
        elif isinstance(stmt, ast.Expr):
            visit(stmt.value)
        elif isinstance(stmt, ast.For):
            env[stmt.target.id] = "int32"
    return typed
