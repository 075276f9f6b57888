"""Named rules that explain a fuzz difference between minitriton and the GPU, each with its reason and evidence.

A `Rule` says why the GPU computes something other than the kernel's source (a miscompile of the pinned Triton
and its ptxas, a value the compiler may choose, a compiler crash), and carries its evidence: a minimised probe
kernel with its inputs, the values the source computes there (minitriton must compute exactly these), what the
GPU shows there (a predicate over the GPU's values, or the error it raises; `recorded`: where and when it was
seen). Every cuda fuzz run that has a difference runs every probe on both sides first (`check`): a rule
explains nothing in a run whose GPU does not show the rule's behaviour on its probe, or whose minitriton does
not compute the source's values. `classify` asks each live rule whether it explains a shrunk mismatch; most
rules rewrite the shrunk kernel the way the GPU behaves (`Mismatch.explained_by`: every differing lane must
hold what minitriton computes for the rewritten kernel). The machinery is in `parity/fuzz/explain.py`; the rules, by
family, in `integers.py`, `floats.py`, `dots.py` and `errors.py` beside this file.
"""
from __future__ import annotations

import numpy as np

from parity.fuzz.case import f64
from parity.fuzz.explain import Mismatch, mismatch_view, run_probe, same_all
from parity.fuzz.rules import dots, errors, floats, integers

__all__ = ["RULES", "Mismatch", "check", "classify", "describe"]


def check(pools, target) -> dict:
    """Run every rule's probe on both sides: {rule name: evidence}. A rule is live when the GPU shows the rule's
    behaviour on its probe and minitriton computes the source's values."""
    out = {}
    for rule in RULES:
        if target not in rule.targets:
            continue
        mt, ref = run_probe(rule.probe, pools, target)
        if rule.probe.gpu_raises:
            shows = bool(ref.error) and rule.probe.gpu_raises in ref.error
            computes = not mt.error and same_all(f64(mt.args[-1]).reshape(-1), rule.probe.source_values)
            out[rule.name] = {"live": shows and computes, "gpu": (ref.error or "")[-600:],
                              "detail": ("the GPU side raises as the rule says" if shows else
                                         "the GPU side does not raise as the rule says")
                              + ("" if computes else "; minitriton does not compute the source's values")}
            continue
        if mt.error or ref.error:
            out[rule.name] = {"live": False, "detail": f"the probe raised: {mt.error or ref.error}"[:300]}
            continue
        got_mt, got_gpu = f64(mt.args[-1]).reshape(-1), f64(ref.args[-1]).reshape(-1)
        source = np.asarray(rule.probe.source_values, np.float64)
        shows = bool(rule.probe.gpu_shows(source, got_gpu))
        computes = same_all(got_mt, source)
        out[rule.name] = {"live": shows and computes, "gpu": got_gpu.tolist()[:64], "minitriton": got_mt.tolist()[:64],
                          "detail": "the GPU shows the rule's behaviour on the probe" if shows else
                          "the GPU does not show the rule's behaviour on the probe"
                          + ("" if computes else "; minitriton does not compute the source's values")}
    return out


def describe(evidence, target) -> list:
    """Every rule with its reason, probe, recorded evidence and this run's measurement."""
    return [{"name": r.name, "reason": r.reason, "probe": r.probe.source, "source_values": r.probe.source_values[:64],
             "recorded": r.probe.recorded, "this_run": evidence.get(r.name)}
            for r in RULES if target in r.targets]


def classify(shrunk, evidence, target):
    """The first live rule that explains the shrunk mismatch, or None."""
    if not shrunk.alone:
        return None
    view = mismatch_view(shrunk, target)
    if not view.values and not view.gpu_error:
        return None
    for rule in RULES:
        if bool(rule.probe.gpu_raises) != bool(view.gpu_error):     # a rule explains values, or an error
            continue
        if target in rule.targets and evidence.get(rule.name, {}).get("live") and _matches(rule, view):
            return rule
    return None


def _matches(rule, view) -> bool:
    """Whether the rule explains the view; a rule that cannot read this kernel explains nothing."""
    try:
        return bool(rule.matches(view))
    except Exception:                                                                                   # noqa: BLE001
        return False


_BY_NAME = {r.name: r for m in (integers, floats, errors, dots) for r in m.RULES}
# the order a mismatch is tried in: the first live rule that explains it names it
RULES = [_BY_NAME[name] for name in (
    "int16_negation_widened", "narrow_float_of_low_16_bits", "narrow_float_conversion_skipped",
    "float_mod_by_a_computed_power_of_two", "abs_of_int_min", "division_guard_minus_one_dropped",
    "division_guard_takes_3", "masked_16_bit_other_loses_its_sign", "int32_min_max_chain_folded_to_x",
    "fma_contraction", "fma_contraction_in_a_remainder", "negation_lost_in_a_reduction",
    "remainder_of_infinities_converted_to_an_integer", "abs_of_a_remainder_dropped", "compiler_assertion",
    "dot_copy_of_an_operand_miscompiled")]
