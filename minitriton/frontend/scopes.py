"""Static detection of names that escape a loop scope in a kernel.

Triton's code generator visits the body of a ``for``/``while`` loop in a sub-region whose local scope is
discarded when the loop ends (only names that were already bound before the loop are carried out as loop
results), so a variable first assigned inside a loop and read after it fails to compile with
``NameError('v is not defined')``, even for ``range(0, 1)``. Plain Python would run such code, so minitriton
checks it on the kernel's parsed source: a small definite-assignment analysis over straight-line blocks
(``if`` branches are intersected, except under a constexpr condition, which Triton inlines into the enclosing
scope so the taken branch's names survive it; loop bodies are discarded afterwards, ``static_range`` loops are unrolled
and keep their bindings). The induction variable of a non-static ``for`` is also loop-scoped: ``visit_For``
binds it with ``self.lscope[target] = iv`` inside ``enter_sub_region``, which restores the outer scope on
exit, so using it after the loop is reported too (unless it was bound before the loop).
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from minitriton.frontend.source import KernelSource

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


@dataclass(frozen=True)
class LoopScopedName:
    """A read of ``name`` after the loop at ``loop_lineno`` that bound it."""

    name: str
    lineno: int
    col_offset: int
    loop_lineno: int


def _loads(node, shadow=frozenset()):
    """Yield Name loads in ``node`` (skipping nested scopes' bodies)."""
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in shadow:
            yield node
    elif isinstance(node, _SCOPES):     # only what the enclosing scope evaluates
        subs = list(getattr(node, "decorator_list", []))
        if isinstance(node, ast.ClassDef):
            subs += node.bases + [k.value for k in node.keywords]
        else:
            subs += node.args.defaults + [d for d in node.args.kw_defaults if d]
        for sub in subs:
            yield from _loads(sub, shadow)
    elif isinstance(node, _COMPS):
        # The first iterable is evaluated outside; targets are comprehension-local.
        yield from _loads(node.generators[0].iter, shadow)
        local = set(shadow)
        for gen in node.generators:
            local |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        rest = [g.iter for g in node.generators[1:]] + [c for g in node.generators for c in g.ifs]
        rest += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for sub in rest:
            yield from _loads(sub, frozenset(local))
    else:
        for sub in ast.iter_child_nodes(node):
            yield from _loads(sub, shadow)


def _bound(nodes):
    """Names bound by the statements/expressions ``nodes`` (not in nested scopes)."""
    out, todo = set(), list(nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        if not isinstance(node, _SCOPES + _COMPS):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _is_static_range(it):
    func = it.func if isinstance(it, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "static_range") or (
        isinstance(func, ast.Attribute) and func.attr == "static_range")


class _Checker:
    def __init__(self, known, constexprs):
        self.known = known          # globals + builtins: always resolvable
        self.constexprs = constexprs    # parameters annotated `tl.constexpr`
        self.loop_only = {}         # name -> line of the outermost loop it escaped
        self.found = {}             # (name, loop line) -> first offending Name node

    def use(self, nodes, defined, extra=()):
        for node in sorted([n for x in nodes for n in _loads(x)] + list(extra),
                           key=lambda n: (n.lineno, n.col_offset)):
            if node.id in self.loop_only and node.id not in defined and node.id not in self.known:
                self.found.setdefault((node.id, self.loop_only[node.id]), node)

    def constexpr_test(self, test):
        """Whether `test` is decided at compile time: it reads only constexpr parameters and globals, calls nothing."""
        return not any(isinstance(n, ast.Call) for n in ast.walk(test)) and all(
            n.id in self.constexprs or n.id in self.known for n in _loads(test))

    def block(self, stmts, defined):
        """Walk ``stmts`` with the definitely-bound set ``defined``; return the set after."""
        defined = set(defined)
        for st in stmts:
            if isinstance(st, ast.If):
                self.use([st.test], defined)
                body, orelse = self.block(st.body, defined), self.block(st.orelse, defined)
                defined = body | orelse if self.constexpr_test(st.test) else body & orelse
            elif isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                loop = not isinstance(st, ast.While)
                self.use([st.iter if loop else st.test], defined)
                targets = _bound([st.target]) if loop else set()
                inner = self.block(st.body, defined | targets)
                if loop and _is_static_range(st.iter):
                    defined = inner     # unrolled at compile time: bindings survive
                else:
                    for name in (_bound(st.body) | targets) - defined:
                        self.loop_only[name] = st.lineno
                defined = self.block(st.orelse, defined)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                self.use([i.context_expr for i in st.items], defined)
                defined |= _bound([i.optional_vars for i in st.items if i.optional_vars])
                defined = self.block(st.body, defined)
            elif isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
                body = self.block(st.body + st.orelse, defined)
                for h in st.handlers:
                    body &= self.block(h.body, defined | ({h.name} if h.name else set()))
                defined = self.block(st.finalbody, body)
            elif isinstance(st, ast.AugAssign):
                own = [st.target] if isinstance(st.target, ast.Name) else []  # v += 1 reads v
                self.use([st.value, st.target], defined, own)
                defined |= _bound([st.target])
            elif isinstance(st, ast.Delete):
                self.use(st.targets, defined)
                defined -= _bound(st.targets)
            elif isinstance(st, ast.AnnAssign) and st.value is None:
                continue
            elif isinstance(st, (ast.Global, ast.Nonlocal)):
                self.known |= set(st.names)
            else:   # Assign, Expr, Return, defs, imports, match, ...: uses then binds
                self.use([st], defined)
                defined |= _bound([st])
        return defined


def find_loop_scoped_names(source: KernelSource) -> list[LoopScopedName]:
    """Reads of names that were only bound inside a preceding loop of the kernel, at file positions.

    Each finding is the first offending read per (name, loop); ``loop_lineno`` is the outermost non-static
    loop the read lies after. ``[]`` when the source is unavailable or is not a plain ``def``.
    """
    func = source.func
    if func is None or not any(isinstance(n, (ast.For, ast.AsyncFor, ast.While)) for n in source.nodes):
        return []   # no loop, no name that lives only in one
    a = func.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
    known = set(getattr(source.fn, "__globals__", {})) | set(dir(builtins))
    constexprs = {x.arg for x in a.args + a.kwonlyargs if x.annotation is not None
                  and getattr(x.annotation, "attr", getattr(x.annotation, "id", None)) == "constexpr"}
    checker = _Checker(known, constexprs)
    checker.block(func.body, params)
    out = [LoopScopedName(name, *source.position(node), loop) for (name, loop), node in checker.found.items()]
    return sorted(out, key=lambda f: (f.lineno, f.col_offset, f.name))
