"""Fuzz fragments as Python syntax trees: parsing a fragment's lines, writing them back, dead code.

A fragment's lines (`fragment.Fragment.lines`, names with the `__F__` placeholder) parse as one module;
`rebuilt` turns an edited module back into a fragment without the assignments nobody reads and the
arguments nobody uses. The shrinker (`shrink`) and the type inference (`types`) work on these trees.
"""
from __future__ import annotations

import ast
import dataclasses
import re

# the name prefix of fragment j of a packed kernel made one fragment (`case.packed_fragment`)
PART = re.compile(r"__F__k(\d+)_")


def parse(frag) -> ast.Module:
    return ast.parse("\n".join("    " * indent + text for indent, text in frag.lines))


def unparse(mod) -> list:
    out = []
    for line in ast.unparse(mod).splitlines():
        text = line.lstrip(" ")
        out.append(((len(line) - len(text)) // 4, text))
    return out


def dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return dotted(node.value) + "." + node.attr
    return ""


def loaded(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def statements(body, parents=()):
    for s in body:
        yield s, parents
        if isinstance(s, (ast.If, ast.For)):
            yield from statements(s.body, parents + (s,))
            yield from statements(s.orelse, parents + (s,))


def dead_code_removed(mod) -> ast.Module:
    """Assignments whose variable nobody reads (transitively from the stores) are gone; so are empty if/for."""
    live = set()
    for s, _ in statements(mod.body):
        if isinstance(s, ast.Expr):
            live |= loaded(s)
    changed = True
    while changed:
        changed = False
        for s, parents in statements(mod.body):
            if isinstance(s, ast.Assign) and s.targets[0].id in live:
                need = loaded(s.value)
                for p in parents:
                    need |= loaded(p.test if isinstance(p, ast.If) else p.iter)
                if need - live:
                    live |= need
                    changed = True

    def sweep(body):
        out = []
        for s in body:
            if isinstance(s, ast.Assign) and s.targets[0].id not in live:
                continue
            if isinstance(s, (ast.If, ast.For)):
                s.body, s.orelse = sweep(s.body), sweep(s.orelse)
                if not s.body and not s.orelse:
                    continue
                s.body = s.body or [ast.Pass()]
            out.append(s)
        return out
    mod.body = sweep(mod.body)
    return mod


def rebuilt(frag, mod, **changes):
    """The fragment with `mod` as its source, dead code and unused arguments removed."""
    mod = dead_code_removed(mod)
    used = loaded(mod)
    lines = unparse(mod)
    keep = lambda items: [it for it in items if it[0] in used]        # noqa: E731
    outputs = [o for o in changes.pop("outputs", frag.outputs) if o.name in used]
    return dataclasses.replace(frag, lines=lines, inputs=keep(changes.pop("inputs", frag.inputs)),
                               scalars=keep(changes.pop("scalars", frag.scalars)), outputs=outputs, **changes)
