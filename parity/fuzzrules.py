"""Named rules that explain a fuzz difference between minitriton and the GPU, each with its reason and evidence.

A `Rule` says why the GPU computes something else than the kernel's source (a miscompile of the pinned Triton,
or compiler behaviour minitriton does not follow), and carries its evidence: a minimised probe kernel, the
values the source computes there (NumPy, written out), and the values the H200 gave when the rule was found.
Every cuda fuzz run that has a difference runs every probe on both sides first (`check`): a rule explains
nothing on a device where its probe no longer shows the GPU's value, or where minitriton no longer computes
the source's. `classify` asks each live rule whether it matches a shrunk mismatch: the rule reads the shrunk
kernel (its types, `fuzztypes`) and the differing values. A rule runs only on the targets it names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from parity.fuzzcase import f64, kernel_case
from parity.fuzztypes import infer
from parity.oracle import Case
from parity.runner import run_both

HEADER = "import triton\nimport triton.language as tl\n\n"


@dataclass
class Probe:
    source: str                  # one @triton.jit kernel named `probe`, writing its result to the last argument
    args: tuple                  # the arrays (the last one receives the result)
    source_values: list          # what the source computes there, lane by lane (NumPy)
    gpu_values: list             # what the H200 gave (Triton 3.6.0), lane by lane
    seen: str                    # where and when


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
    values: dict = field(default_factory=dict)    # output name -> (minitriton f64 array, triton f64 array, mask)

    def differing(self, name):
        m, r, mask = self.values[name]
        return m[mask], r[mask]


def _run_probe(probe, pools, target):
    case = Case(probe.source, "probe", (1,), tuple(np.array(a, copy=True) for a in probe.args))
    mt, ref = run_both(pools, target, [case])
    return mt[0], ref[0]


def _same(a, b) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


def check(pools, target) -> dict:
    """Run every rule's probe on both sides: {rule name: evidence}; a rule is live when the GPU still gives what
    it gave when the rule was found and minitriton computes the source's values."""
    out = {}
    for rule in RULES:
        if target not in rule.targets:
            continue
        mt, ref = _run_probe(rule.probe, pools, target)
        if mt.error or ref.error:
            out[rule.name] = {"live": False, "detail": f"probe raised: {mt.error or ref.error}"[:300]}
            continue
        got_mt, got_gpu = f64(mt.args[-1]).reshape(-1), f64(ref.args[-1]).reshape(-1)
        live = _same(got_gpu, rule.probe.gpu_values) and _same(got_mt, rule.probe.source_values)
        out[rule.name] = {"live": live, "gpu": got_gpu.tolist(), "minitriton": got_mt.tolist(),
                          "detail": "the probe shows the rule's values" if live else
                          "the probe no longer shows the values the rule was found with"}
    return out


def describe(evidence, target) -> list:
    """Every rule with its reason, probe, recorded and (this run's) measured evidence."""
    return [{"name": r.name, "reason": r.reason, "probe": r.probe.source, "source_values": r.probe.source_values,
             "gpu_values": r.probe.gpu_values, "seen": r.probe.seen, "this_run": evidence.get(r.name)}
            for r in RULES if target in r.targets]


def mismatch_view(shrunk, target) -> Mismatch:
    from parity.fuzzcase import differing
    view = Mismatch(shrunk.frag, infer(shrunk.frag), shrunk.verdict)
    if shrunk.mt is None or shrunk.ref is None or shrunk.verdict.raised:
        return view
    _, slots = kernel_case([shrunk.frag])
    for o in shrunk.frag.outputs:
        if o.name in shrunk.verdict.bad:
            i = slots[0][o.name]
            m, r = shrunk.mt.args[i], shrunk.ref.args[i]
            mask = differing(m, r, "exact", any_zero=target != "cuda")
            view.values[o.name] = (f64(m), f64(r), mask)
    return view


def classify(shrunk, evidence, target):
    """The first live rule that explains the shrunk mismatch, or None."""
    if not shrunk.alone:
        return None
    view = mismatch_view(shrunk, target)
    for rule in RULES:
        if target in rule.targets and evidence.get(rule.name, {}).get("live") and rule.matches(view):
            return rule
    return None


RULES: list = []
