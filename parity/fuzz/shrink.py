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
import dataclasses
import time

import numpy as np

from parity.fuzz.shrink_passes import PASSES, pass_data, value_cost
from parity.fuzz.source import parse


# ----------------------------------------------------------------------------------------- size

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

