"""The machinery that explains a fuzz difference between minitriton and the GPU by a named rule.

`Probe` is a rule's evidence: a minimised kernel with its inputs, what the source computes there, and what the
GPU shows (a predicate over its values, or the error it raises). `Mismatch` is what a rule may read about a
shrunk mismatch: the fragment, its types (`types`), the differing lanes, what the source computes for any
sub-expression (`evaluate`) and what minitriton computes after a rule's rewrite of the source
(`counterfactual`): a rule explains a difference when every differing lane shows what its rewrite computes.
The rules themselves are in `parity/fuzz/rules.py`.
"""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from parity.fuzz.case import bound, differing, f64, kernel_case
from parity.fuzz.dtypes import NP
from parity.fuzz.fragment import Output, block_offsets
from parity.fuzz.source import statements, unparse
from parity.fuzz.types import infer
from parity.oracle import Case, run_in_minitriton
from parity.runner import run_both

HEADER = "import triton\nimport triton.language as tl\n\n"


@dataclass
class Probe:
    source: str                  # one @triton.jit kernel named `probe`; its last argument receives the result
    args: tuple                  # its arrays (and scalars)
    grid: tuple
    source_values: list          # what the source computes, lane by lane (the last argument, flattened)
    gpu_shows: Callable          # (source values, GPU values) -> bool: the GPU's behaviour the rule names
    recorded: str                # where and when the GPU showed it; what the compiler emits for it
    gpu_raises: str = ""         # the GPU side raises an error containing this (then gpu_shows is not asked)


@dataclass
class Rule:
    name: str
    reason: str
    probe: Probe
    matches: Callable            # (Mismatch) -> bool
    targets: tuple = ("cuda",)


@dataclass
class Mismatch:
    """What a rule may read about a shrunk mismatch."""
    frag: object
    typed: object
    verdict: object
    values: dict = field(default_factory=dict)    # output name -> (minitriton f64, triton f64, differing mask)
    stored: dict = field(default_factory=dict)    # output name -> what the GPU stored there (f64)
    gpu_error: str = ""                           # the GPU side's error text, when only it raised

    def output(self, name):
        return next(o for o in self.frag.outputs if o.name == name)

    def evaluate(self, node, name):
        """What the source computes for expression `node` (of `typed.tree`) at the lanes of output `name`
        (broadcast to the block the kernel stores there, laid out as it stores it), per program, as float64
        (minitriton in this process); None when it cannot be stored (a weak literal, a node inside an if or a
        loop)."""
        dtype = self.typed.of(node)
        if dtype not in NP or any(isinstance(p, (ast.If, ast.For)) for p in self._statement_parents(node)):
            return None
        return self.evaluate_code(ast.unparse(node), dtype, name)

    def evaluate_code(self, code, dtype, like):
        """What the fragment computes for expression `code` of type `dtype`, laid out as output `like` (a name)
        is stored, or as a block of shape `like` (a tuple)."""
        if dtype == "int1":
            dtype, code = "int8", f"({code}).to(tl.int8)"
        name = "__F__evaluated"
        pointer = self._store_pointer(like, name) if isinstance(like, str) else None
        shape = tuple(self.output(like).shape if isinstance(like, str) else like)
        if pointer is not None:
            line = f"tl.store({pointer}, tl.broadcast_to({code}, ({pointer}).shape))"
        else:                                       # the output's block shape, laid out row by row
            offs = block_offsets(shape)
            line = f"tl.store({name} + pid * {int(np.prod(shape))} + {offs}, tl.broadcast_to({code}, {shape!r}))"
        frag = dataclasses.replace(self.frag, lines=list(self.frag.lines) + [(0, line)],
                                   outputs=list(self.frag.outputs) + [Output(name, dtype, tuple(shape))])
        case, slots = kernel_case([frag])
        res = run_in_minitriton(case.source, case.kernel, case.grid, case.args, raise_errors=False)
        return None if res.error else f64(res.args[slots[0][name]])

    def _store_pointer(self, output, renamed):
        """The pointer expression of the kernel's store into `output`, with `output` renamed; None if there is
        no plain `tl.store(<output> + ..., value)` statement at the kernel's top level."""
        for indent, text in self.frag.lines:
            try:
                call = ast.parse(text.strip(), mode="eval").body if indent == 0 else None
            except SyntaxError:
                continue
            if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "tl.store" and call.args):
                continue
            names = [n for n in ast.walk(call.args[0]) if isinstance(n, ast.Name) and n.id == output]
            for n in names:
                n.id = renamed
            if names:
                return ast.unparse(call.args[0])
        return None

    def _statement_parents(self, node):
        for stmt, parents in statements(self.typed.tree.body):
            if any(n is node for n in ast.walk(stmt)):
                return parents
        return ()

    def counterfactual(self, rewrite, names=None):
        """What minitriton computes for each differing output (or each output named) once `rewrite(typed)` has
        edited a fresh typed tree of the fragment (it returns whether it changed anything); None when nothing
        changed or it raised."""
        typed = infer(self.frag)
        if not rewrite(typed):
            return None
        frag = dataclasses.replace(self.frag, lines=unparse(ast.fix_missing_locations(typed.tree)))
        case, slots = kernel_case([frag])
        res = run_in_minitriton(case.source, case.kernel, case.grid, case.args, raise_errors=False)
        if res.error:
            return None
        return {name: f64(res.args[slots[0][name]]) for name in (self.values if names is None else names)}

    def follows_its_operand(self, name) -> bool:
        """Whether output `name` is a stored `tl.sum` whose operand (also stored) differs too, and what the GPU
        stored there is the sum of what the GPU stored as that operand (within the sum's bound): its difference
        is its operand's, which a rule must explain."""
        o = self.output(name)
        if "axis" not in o.info or len(o.operands) != 1 or o.operands[0] not in self.values:
            return False
        gpu, operand = self.stored[name], self.stored[o.operands[0]]
        with np.errstate(all="ignore"):
            again = np.broadcast_to(operand.sum(axis=o.info["axis"] + 1, keepdims=True), gpu.shape)
            if o.kind == "exact":
                return bool(np.all(same_lanes(again, gpu)))
            limit = bound(o, {name: gpu, o.operands[0]: operand})
            return bool(np.all((np.abs(again - gpu) <= limit) | (again == gpu)))

    def explained_by(self, rewrite, lanes=None) -> bool:
        """Every differing lane of every differing output holds what minitriton computes after `rewrite`
        (and, with `lanes(name, shape)`, lies where that boolean mask is true)."""
        return self.explained_by_any([(rewrite, lanes)])

    def explained_by_any(self, options) -> bool:
        """Every differing lane holds what minitriton computes after one of the (rewrite, lanes) options, and
        lies where that option's lanes are (None: anywhere): one kernel may show two ways of one miscompile."""
        alts = [(alt, lanes) for alt, lanes in ((self.counterfactual(rw), lanes) for rw, lanes in options)
                if alt is not None]
        consequences = {name for name in self.values if self.follows_its_operand(name)}
        if not alts or not set(self.values) - consequences:
            return False
        for name, (_, r, mask) in self.values.items():
            if name in consequences:
                continue
            ok = np.zeros(mask.shape, bool)
            for alt, lanes in alts:
                hit = same_lanes(alt[name], r)
                if lanes is not None:
                    allowed = lanes(name, mask.shape)
                    if allowed is None:
                        continue
                    hit &= allowed
                ok |= hit
            if not (mask.any() and np.all(ok[mask])):
                return False
        return True


def replace_node(typed, node, new) -> bool:
    """Put `new` where `node` is in the typed tree; False when `node` is not in it."""
    parent = typed.parents.get(id(node)) or next(
        (p for p in ast.walk(typed.tree) for c in ast.iter_child_nodes(p) if c is node), None)
    for name, value in ast.iter_fields(parent) if parent is not None else ():
        if value is node:
            setattr(parent, name, new)
            return True
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is node:
                    value[i] = new
                    return True
    return False


def expression(code: str) -> ast.expr:
    return ast.parse(code, mode="eval").body


def same_lanes(a, b) -> np.ndarray:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def run_probe(probe, pools, target):
    args = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in probe.args)
    mt, ref = run_both(pools, target, [Case(probe.source, "probe", probe.grid, args)])
    return mt[0], ref[0]


def same_all(a, b) -> bool:
    """The same shape and every lane the same (the sign of a zero counts; any NaN equals any NaN)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all(same_lanes(a, b)))


def mismatch_view(shrunk, target) -> Mismatch:
    """What the rules may read about a finished shrink."""
    view = Mismatch(shrunk.frag, infer(shrunk.frag), shrunk.verdict)
    if shrunk.verdict.raised and shrunk.ref is not None:
        view.gpu_error = shrunk.ref.error or ""
    if shrunk.mt is None or shrunk.ref is None or shrunk.verdict.raised:
        return view
    _, slots = kernel_case([shrunk.frag])
    for o in shrunk.frag.outputs:
        i = slots[0][o.name]
        m, r = shrunk.mt.args[i], shrunk.ref.args[i]
        view.stored[o.name] = f64(r)
        if o.name in shrunk.verdict.bad:
            view.values[o.name] = (f64(m), f64(r), differing(m, r, "exact", any_zero=target != "cuda"))
    return view
