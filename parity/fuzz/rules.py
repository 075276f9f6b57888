"""Named rules that explain a fuzz difference between minitriton and the GPU, each with its reason and evidence.

A `Rule` says why the GPU computes something other than the kernel's source (a miscompile of the pinned Triton
and its ptxas, a value the compiler may choose, a compiler crash), and carries its evidence: a minimised probe
kernel with its inputs, the values the source computes there (minitriton must compute exactly these), what the
GPU shows there (a predicate over the GPU's values, or the error it raises; `recorded`: where and when it was
seen). Every cuda fuzz run that has a difference runs every probe on both sides first (`check`): a rule
explains nothing in a run whose GPU does not show the rule's behaviour on its probe, or whose minitriton does
not compute the source's values. `classify` asks each live rule whether it explains a shrunk mismatch; most
rules rewrite the shrunk kernel the way the GPU behaves (`Mismatch.explained_by`: every differing lane must
hold what minitriton computes for the rewritten kernel). The machinery is in `parity/fuzz/explain.py`.
"""
from __future__ import annotations

import ast

import numpy as np

from parity.fuzz.explain import HEADER, Mismatch, Probe, Rule, expression, mismatch_view, replace_node, run_probe, \
    same_all
from parity.fuzz.case import f64
from parity.fuzz.gen import FLOATS, INTS
from parity.fuzz.source import dotted, statements
from parity.fuzz.types import TL, combine
from parity.oracle import BF16

__all__ = ["RULES", "Mismatch", "check", "classify", "describe"]
TL_OF = {d: name for name, d in TL.items()}
INT_MIN = {"int8": -2 ** 7, "int16": -2 ** 15, "int32": -2 ** 31, "int64": -2 ** 63}


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


# ----------------------------------------------------------------------------------------- the rules

def _kernel(signature, body) -> str:
    return HEADER + f"@triton.jit\ndef probe({signature}):\n" + "".join(f"    {ln}\n" for ln in body)


def _to_narrow_float(dtype, v):
    if dtype == "bf16":
        return BF16.round(np.asarray(v, np.float64).astype(np.float32)).to_float().astype(np.float64)
    with np.errstate(over="ignore"):
        return np.asarray(v, np.float64).astype(np.float16).astype(np.float64)


def _calls(typed, name):
    return [n for n in typed.nodes() if isinstance(n, ast.Call) and dotted(n.func) == name]


# ---- lanes a rule may explain

REDUCTIONS = {"tl.max", "tl.min", "tl.sum", "tl.argmax", "tl.argmin", "tl.xor_sum", "tl.cumsum", "tl.cumprod",
              "tl.reduce", "tl.associative_scan"}


def _reduced(typed, node) -> bool:
    """Whether `node`'s value reaches the output through a reduction or scan."""
    p = typed.parents.get(id(node))
    while p is not None:
        if isinstance(p, ast.Call) and dotted(p.func) in REDUCTIONS:
            return True
        p = typed.parents.get(id(p))
    return False


def _reached(view, operands):
    """A lane filter: lanes where some (operation, operand node, test) triple's operand, as the source computes
    it, passes the test (a value it equals, or a function of the values giving a mask), or, for an operation
    that a reduction consumes, every lane of a program where that operand passes it anywhere."""
    def lanes(name, shape):
        at = np.zeros(shape, bool)
        for op, node, test in operands:
            v = view.evaluate(node, name)
            if v is None:
                continue
            hit = test(v) if callable(test) else v == test
            at |= hit.reshape(hit.shape[0], -1).any(axis=1).reshape((-1,) + (1,) * (hit.ndim - 1)) \
                if _reduced(view.typed, op) else hit
        return at
    return lanes


# ---- int16_negation_widened

def _int16_negations(typed):
    return [n for n in typed.nodes() if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
            and typed.of(n) == "int16"]


def _negations_widened(typed) -> bool:
    return any([replace_node(typed, n, expression(f"(-({ast.unparse(n.operand)}).to(tl.int32))"))
                for n in _int16_negations(typed)])


def _int16_negation_widened(view) -> bool:
    """Every differing lane is one where an int16 `-x` negates -32768 (or reduces such a lane), and the GPU
    holds what the kernel computes with that negation done in 32 bits."""
    negs = _int16_negations(view.typed)
    return bool(negs) and view.explained_by(_negations_widened,
                                            _reached(view, [(n, n.operand, -32768) for n in negs]))


# ---- narrow_float_of_low_16_bits

def _promoted_operands(typed, n):
    """The operands that node `n` converts to its own float type (a comparison: to the type it compares in)."""
    if isinstance(n, ast.Compare) and len(n.comparators) == 1:
        a, b = typed.of(n.left), typed.of(n.comparators[0])
        return [n.left, n.comparators[0]] if None not in (a, b) and combine(a, b) in ("fp16", "bf16") else []
    if isinstance(n, ast.BinOp) and not isinstance(n.op, (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)):
        return [n.left, n.right]
    if isinstance(n, ast.Call) and dotted(n.func) in ("tl.maximum", "tl.minimum") and len(n.args) == 2:
        return list(n.args)
    if isinstance(n, ast.Call) and dotted(n.func) == "tl.where" and len(n.args) == 3:
        return list(n.args[1:])
    return []


def _low_16_bits_converted(typed) -> bool:
    low = []
    for n in list(typed.nodes()):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "to"
                and typed.of(n) in ("fp16", "bf16") and typed.of(n.func.value) == "uint32"):
            low.append(n.func.value)
        elif typed.stores.get(id(n)) in ("fp16", "bf16") and typed.of(n) == "uint32":
            low.append(n)
        elif typed.of(n) in ("fp16", "bf16") or isinstance(n, ast.Compare):
            low += [c for c in _promoted_operands(typed, n) if typed.of(c) == "uint32"]
    return any([replace_node(typed, n, expression(f"(({ast.unparse(n)}) & 65535)")) for n in low])


def _narrow_float_of_low_bits(view) -> bool:
    """Every differing lane holds what the kernel computes when each uint32 converted to fp16/bf16 (by `.to`,
    by the store, or as the operand of arithmetic or a comparison in that type) keeps only its low 16 bits."""
    return view.explained_by(_low_16_bits_converted)


# ---- narrow_float_conversion_skipped

def _widened_narrow_conversions(typed):
    """`.to(tl.float16 / tl.bfloat16)` of an integer whose result the store widens to fp32 or fp64."""
    return [n for n in typed.nodes() if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "to" and typed.of(n) in ("fp16", "bf16") and typed.of(n.func.value) in INTS
            and typed.stores.get(id(n)) in ("fp32", "fp64")]


def _converted_to_fp32(typed) -> bool:
    return any([replace_node(typed, n, expression(f"({ast.unparse(n.func.value)}).to(tl.float32)"))
                for n in _widened_narrow_conversions(typed)])


def _narrow_float_conversion_skipped(view) -> bool:
    """Every differing lane is one where an integer's conversion to fp16/bf16 that the store widens is inexact
    (rounds or overflows), and holds what the kernel computes converting that integer to fp32 instead."""
    convs = _widened_narrow_conversions(view.typed)
    inexact = [(n, n.func.value, lambda v, t=view.typed.of(n): _to_narrow_float(t, v) != v) for n in convs]
    return bool(convs) and view.explained_by(_converted_to_fp32, _reached(view, inexact))


# ---- float_mod_by_a_computed_power_of_two

def _constant_code(node) -> bool:
    return all(n.id == "tl" for n in ast.walk(node) if isinstance(n, ast.Name)) and dotted(node) != "tl"


def _computed_constant_divisors_written(view):
    def rewrite(typed) -> bool:
        changed = False
        for n in list(typed.nodes()):
            dtype = typed.of(n.right) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) else None
            if dtype not in ("fp16", "bf16", "fp32", "fp64") or not _constant_code(n.right):
                continue
            if isinstance(n.right, ast.Call) and dotted(n.right.func) == "tl.full":
                continue                                   # written: minitriton applies S15.24 itself
            v = view.evaluate_code(ast.unparse(n.right), dtype, view.frag.shape)
            if v is None or not np.all(v == v.flat[0]) or not np.isfinite(v.flat[0]) or v.flat[0] == 0:
                continue
            mantissa, exponent = np.frexp(v.flat[0])
            if abs(mantissa) != 0.5 or exponent < 1:          # 2**k with k >= 0 (S15.24)
                continue
            shape = tuple(view.frag.shape)
            changed |= replace_node(typed, n.right,
                                    expression(f"tl.full({shape!r}, {float(v.flat[0])!r}, {TL_OF[dtype]})"))
        return changed
    return rewrite


def _float_mod_by_a_computed_power_of_two(view) -> bool:
    """Every differing lane holds what the kernel computes once each float `%` divisor that is an expression
    of constants equal to 2**k, k >= 0, is written as that constant (so S15.24 applies)."""
    return view.explained_by(_computed_constant_divisors_written(view))


# ---- abs_of_int_min

def _int_abs(typed):
    return [n for n in _calls(typed, "tl.abs") if typed.of(n) in INT_MIN]


def _abs_in_64_bits(typed) -> bool:
    return any([replace_node(typed, n, expression(f"tl.abs(({ast.unparse(n.args[0])}).to(tl.int64))"))
                for n in _int_abs(typed)])


def _abs_of_int_min(view) -> bool:
    """Every differing lane is one where an integer `tl.abs` gets its type's minimum (or reduces such a lane),
    and holds what the kernel computes with that abs taken in 64 bits (a non-negative value)."""
    calls = _int_abs(view.typed)
    return bool(calls) and view.explained_by(
        _abs_in_64_bits, _reached(view, [(n, n.args[0], INT_MIN[view.typed.of(n)]) for n in calls]))


# ---- division_guard_minus_one_dropped, division_guard_takes_3

def _guarded_divisor(n):
    """`d` of the generator's division guard `tl.where((d == 0) | (d == -1), 3, d)`, else None."""
    if not (isinstance(n, ast.Call) and dotted(n.func) == "tl.where" and len(n.args) == 3):
        return None
    c, d = n.args[0], ast.unparse(n.args[2])
    if isinstance(c, ast.BinOp) and isinstance(c.op, ast.BitOr) and \
            [ast.unparse(c.left), ast.unparse(c.right)] == [f"{d} == 0", f"{d} == -1"]:
        return n.args[2]
    return None


def _narrow_value(typed, node) -> bool:
    """`node` is an 8/16-bit signed integer, or one widened by `.to` (the compiler compares it in 16 bits)."""
    while typed.of(node) in ("int32", "int64") and isinstance(node, ast.Call) and \
            isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        node = node.func.value
    return typed.of(node) in ("int8", "int16")


def _narrow_guards(typed):
    return [n for n in typed.nodes() if _guarded_divisor(n) is not None and _narrow_value(typed, _guarded_divisor(n))]


def _minus_one_arm_dropped(typed) -> bool:
    guards = _narrow_guards(typed)
    for n in guards:
        n.args[0] = expression(f"({ast.unparse(n.args[2])} == 0)")
    return bool(guards)


def _guard_always_3(typed) -> bool:
    guards = _narrow_guards(typed)
    for n in guards:
        replace_node(typed, n, expression("3"))
    return bool(guards)


def _division_guard_takes_the_other_arm(view) -> bool:
    """Every differing lane is one where an 8/16-bit guarded divisor is -1 and holds what the kernel computes
    with the guard's `d == -1` arm dropped (so it divides by -1), or one where it is neither 0 nor -1 and holds
    what the kernel computes dividing by the guard's 3 there (S15.29: one kernel may show both)."""
    guards = _narrow_guards(view.typed)
    if not guards:
        return False
    elsewhere = _reached(view, [(n, n.args[2], lambda v: (v != 0) & (v != -1)) for n in guards])
    return view.explained_by_any([(_minus_one_arm_dropped, _reached(view, [(n, n.args[2], -1) for n in guards])),
                                  (_guard_always_3, elsewhere)])


# ---- masked_16_bit_other_loses_its_sign

def _negative_constant(node) -> bool:
    if isinstance(node, ast.Call) and dotted(node.func) == "tl.full" and len(node.args) >= 2:
        node = node.args[1]
    try:
        v = eval(compile(ast.Expression(node), "<other>", "eval"), {"__builtins__": {}, "float": float})  # noqa: S307
    except Exception:                                                                                   # noqa: BLE001
        return False
    return isinstance(v, (int, float)) and np.signbit(v)


def _masked_16_bit_other(view) -> bool:
    """Every differing lane is a masked-off lane of an fp16/bf16 load whose `other` is a negative constant."""
    masks = []
    for n in _calls(view.typed, "tl.load"):
        kw = {k.arg: k.value for k in n.keywords}
        if view.typed.of(n) in ("fp16", "bf16") and "mask" in kw and "other" in kw and _negative_constant(kw["other"]):
            masks.append(kw["mask"])
    if not masks or not view.values:
        return False
    for name, (_, _, mask) in view.values.items():
        allowed = np.zeros(mask.shape, bool)
        for mk in masks:
            v = view.evaluate(mk, name)
            if v is None or v.shape != mask.shape:
                return False
            allowed |= v == 0
        if not (mask.any() and np.all(allowed[mask])):
            return False
    return True


# ---- int32_min_max_chain_folded_to_x

def _is_zero(node) -> bool:
    if isinstance(node, ast.Call) and dotted(node.func) == "tl.full" and len(node.args) >= 2:
        node = node.args[1]
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _negated(node):
    """x when `node` is `-x` or `0 - x`, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return node.operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _is_zero(node.left):
        return node.right
    return None


def _is_negation_of(node, x) -> bool:
    return (operand := _negated(node)) is not None and ast.unparse(operand) == x


def _chain_operand(node, outer, inner):
    """x when `node` is outer(outer(inner(x, 0), -x), x) in any operand order, else None."""
    if not (isinstance(node, ast.Call) and dotted(node.func) == outer and len(node.args) == 2):
        return None
    for a, x in (node.args, node.args[::-1]):
        if not (isinstance(a, ast.Call) and dotted(a.func) == outer and len(a.args) == 2):
            continue
        xs = ast.unparse(x)
        for m, neg in (a.args, a.args[::-1]):
            if isinstance(m, ast.Call) and dotted(m.func) == inner and len(m.args) == 2 and _is_negation_of(neg, xs) \
                    and any(ast.unparse(v) == xs and _is_zero(z) for v, z in (m.args, m.args[::-1])):
                return x
    return None


def _chains_folded(typed) -> bool:
    changed = False
    for n in list(typed.nodes()):
        if typed.of(n) != "int32":
            continue
        x = _chain_operand(n, "tl.minimum", "tl.maximum") or _chain_operand(n, "tl.maximum", "tl.minimum")
        if x is not None:
            changed |= replace_node(typed, n, expression(f"({ast.unparse(x)})"))
    return changed


def _int32_min_max_chain_folded_to_x(view) -> bool:
    """Every differing lane holds what the kernel computes with each int32 `tl.minimum(tl.minimum(
    tl.maximum(x, 0), -x), x)` (or its mirror with maximum and minimum swapped) replaced by x."""
    return view.explained_by(_chains_folded)


# ---- fma_contraction

def _fused(typed) -> bool:
    changed = False
    for n in list(typed.nodes()):
        if not (isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)) and typed.of(n) in ("fp16", "fp32", "fp64")):
            continue
        for side in ("left", "right"):
            m = getattr(n, side)
            if isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mult) and typed.of(m) == typed.of(n):
                a, b = ast.unparse(m.left), ast.unparse(m.right)
                c = ast.unparse(n.right if side == "left" else n.left)
                code = (f"tl.fma({a}, {b}, {c})" if isinstance(n.op, ast.Add) else
                        f"tl.fma({a}, {b}, -({c}))" if side == "left" else f"tl.fma(-({a}), {b}, {c})")
                changed |= replace_node(typed, n, expression(code))
                break
    return changed


def _fma_contraction(view) -> bool:
    """Every differing lane holds what the kernel computes with each float `a * b + c` fused into one FMA."""
    return view.explained_by(_fused)


# ---- fma_contraction_in_a_remainder

def _fused_remainders(typed) -> bool:
    changed = False
    for n in list(typed.nodes()):
        if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and typed.of(n) in ("fp16", "fp32", "fp64")
                and _constant_code(n.right)):
            continue
        m = n.left
        if isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mult) and typed.of(m) == typed.of(n):
            a, b, c, p = ast.unparse(m.left), ast.unparse(m.right), ast.unparse(n.right), ast.unparse(m)
            changed |= replace_node(typed, n, expression(f"tl.fma({a}, {b}, -(({p}) - ({p}) % {c}))"))
    return changed


def _fma_contraction_in_a_remainder(view) -> bool:
    """Every differing lane holds what the kernel computes with each float `(a * b) % c` (c a constant) as
    fma(a, b, -trunc(a * b / c) * c): the product not rounded before the subtraction."""
    return view.explained_by(_fused_remainders)


# ---- negation_lost_in_a_reduction

def _reduced_negations(typed):
    """(negation, axis) for each signed-integer `tl.min`/`tl.max`/`tl.sum` along a constant axis whose block is
    `-x` or `0 - x`."""
    out = []
    for call in _calls(typed, "tl.min") + _calls(typed, "tl.max") + _calls(typed, "tl.sum"):
        kw = {k.arg: k.value for k in call.keywords}
        axis = kw.get("axis", call.args[1] if len(call.args) > 1 else None)
        if call.args and _negated(call.args[0]) is not None and typed.of(call.args[0]) in INT_MIN \
                and isinstance(axis, ast.Constant) and isinstance(axis.value, int):
            out.append((call.args[0], axis.value))
    return out


def _third_of_four_kept(view, stride):
    """A rewrite: each reduced negation keeps its operand's sign at the indices i along the reduced axis with
    (i // stride) % 4 == 2 (the third of each thread's four elements when a thread holds elements `stride`
    apart)."""
    def rewrite(typed) -> bool:
        negs = _reduced_negations(typed)
        shape = tuple(view.frag.shape)
        for neg, axis in negs:
            x = ast.unparse(_negated(neg))
            index = "" if len(shape) < 2 else "[" + ", ".join(":" if d == axis else "None" for d in range(len(shape))) + "]"
            kept = f"((tl.arange(0, {shape[axis]}){index} // {stride}) % 4 == 2)"
            replace_node(typed, neg, expression(f"tl.where({kept}, ({x}), -({x}))"))
        return bool(negs)
    return rewrite


def _negation_lost_in_a_reduction(view) -> bool:
    """Every differing lane holds what the kernel computes when each integer `tl.min`/`tl.max`/`tl.sum` of `-x`
    along an axis takes the third of every four elements (`stride` apart, one stride for the kernel) without
    the negation."""
    negs = _reduced_negations(view.typed)
    shape = tuple(view.frag.shape)
    if not negs or any(not 0 <= axis < len(shape) for _, axis in negs):
        return False
    length = min(shape[axis] for _, axis in negs)
    strides = [2 ** k for k in range(8) if 4 * 2 ** k <= length]
    return any(view.explained_by(_third_of_four_kept(view, s)) for s in strides)


# ---- remainder_of_infinities_converted_to_an_integer

def _converted_to_an_integer(typed, node, seen=None) -> bool:
    """Whether the float value of `node` reaches a conversion to an integer type (a `.to`, or the store into an
    integer output) through float operations and variables."""
    seen = set() if seen is None else seen
    child, p = node, typed.parents.get(id(node))
    while True:
        if typed.stores.get(id(child)) in INTS:
            return True
        if isinstance(p, ast.Attribute) and p.attr == "to":
            return typed.of(typed.parents.get(id(p))) in INTS
        if p is None:
            break
        if typed.of(p) not in FLOATS:
            return False
        child, p = p, typed.parents.get(id(p))
    for stmt, _ in statements(typed.tree.body):
        if isinstance(stmt, ast.Assign) and stmt.value is child and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if name in seen:
                return False
            seen.add(name)
            return any(_converted_to_an_integer(typed, n, seen) for n in ast.walk(typed.tree)
                       if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))
    return False


def _self_remainders(typed):
    return [n for n in typed.nodes() if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
            and typed.of(n) in FLOATS and ast.unparse(n.left) == ast.unparse(n.right)
            and _converted_to_an_integer(typed, n)]


def _infinite_arm_dropped(typed) -> bool:
    rems = _self_remainders(typed)
    for n in rems:
        x = ast.unparse(n.left)
        replace_node(typed, n, expression(f"tl.where(tl.abs({x}) == float('inf'), ({x}) - ({x}), {ast.unparse(n)})"))
    return bool(rems)


def _remainder_of_infinities_converted(view) -> bool:
    """Every differing lane holds what the kernel computes when each float `x % x` whose value is converted to
    an integer is NaN (not x) for an infinite x."""
    return bool(_self_remainders(view.typed)) and view.explained_by(_infinite_arm_dropped)


# ---- abs_of_a_remainder_dropped

def _never_negative(typed, node) -> bool:
    """LLVM knows `node` is never negative: an unsigned integer (converted to a float), or a float `tl.abs`."""
    return typed.of(node) in ("uint8", "uint32") or (
        isinstance(node, ast.Call) and dotted(node.func) == "tl.abs" and typed.of(node) in FLOATS)


def _abs_of_never_negative_remainders(typed):
    """`tl.abs(x % y)` of a float remainder whose dividend LLVM knows is never negative."""
    return [n for n in _calls(typed, "tl.abs") if len(n.args) == 1 and isinstance(n.args[0], ast.BinOp)
            and isinstance(n.args[0].op, ast.Mod) and typed.of(n.args[0]) in FLOATS
            and _never_negative(typed, n.args[0].left)]


def _abs_dropped(typed) -> bool:
    calls = _abs_of_never_negative_remainders(typed)
    return any([replace_node(typed, n, n.args[0]) for n in calls])


def _abs_of_a_remainder_dropped(view) -> bool:
    """Every differing lane holds what the kernel computes with each `tl.abs` of a float remainder of a
    never-negative dividend left out (the remainder the GPU computes is negative there)."""
    return bool(_abs_of_never_negative_remainders(view.typed)) and view.explained_by(_abs_dropped)


# ---- compiler_assertion

def _compiler_assertion(view) -> bool:
    """Only the GPU side raised, and its compiler stopped on an LLVM assertion."""
    return bool(view.verdict.raised) and view.verdict.raised[0] == "triton" and "Assertion" in view.gpu_error \
        and "llvm" in view.gpu_error.lower()


# ------------------------------------------------------------------------------------- the probes' inputs

# the input of the fuzz's shrunk kernel of 2026-11-29 on the H200, two programs
_NEG_X = np.array([[25949, 23907, 0, 23285, 1, -32768, 28964, 1],
                   [-21657, 32766, 19592, -32768, -1, 7457, 18926, -32596]], np.int16)
_NEG_SOURCE = (-_NEG_X.astype(np.int64)).astype(np.int16).astype(np.int64)
_U32 = (np.arange(16 * 32, dtype=np.uint32) * 16) % 64
_I8 = np.resize(np.array([-47, -1, 0, 1, 100, -128, 127, 5, -73, -91, -40, 20, -20, 2, -2, 64], np.int8), 1024)
_FX = np.resize(np.array([-3., -2.5, -0.0, 0.0, 3.0, 5.1, -7.5, -16256., 1e30, -1e30, np.inf, np.nan, 1e-45, -1e-45,
                          0.75, -0.75], np.float32), 1024)
_OTHER_X = (np.arange(512) % 5 - 2).astype(np.float64)
_FMA_X = (np.arange(16, dtype=np.float32) - 7.3) / 3.1
_FMA_S = float(np.float32(0.4210987))


def _mod_run_time(x):
    """fp32 `x % 1.0` by the run-time lowering (S15.1): fma(-trunc(x), 1, x) is exact; +0.0 for a zero."""
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(x), np.nan, x - np.trunc(x)) + 0.0


def _fma_sides():
    two = (_FMA_X * np.float32(_FMA_S)).astype(np.float32) + np.float32(1.0)
    one = (_FMA_X.astype(np.float64) * _FMA_S + 1.0).astype(np.float32)
    return two.astype(np.float64), one.astype(np.float64)


_CHAIN_X = np.array([1, -1, 0, 5, -7, 2 ** 31 - 1, -2 ** 31, 3], np.int32).reshape(2, 2, 2)
_CHAIN_SOURCE = np.where(_CHAIN_X > 0, -_CHAIN_X.astype(np.int64), _CHAIN_X).reshape(-1).astype(np.float64)
_COPY_H = np.where(np.arange(1024) * 7919 % 8 < 2, -1, np.arange(1024) * 31 % 3 - 1).astype(np.int16).reshape(2, 16, 32)
_COPY_BF16 = BF16(np.choose(_COPY_H + 1, [0xBFC0, 0x3F00, 0x3FC0]).astype(np.uint16))  # -1.5, 0.5, 1.5
_FMA_TWO, _FMA_ONE = _fma_sides()
_OTHER_SOURCE = np.where(np.arange(512) < 3, _OTHER_X ** 2, np.inf)
_OTHER_GPU = np.where((np.arange(512) >= 3) & (np.arange(512) % 4 == 3), -np.inf, _OTHER_SOURCE)
_LINEAR = "offs = tl.arange(0, 1024)"
_H200 = "H200, Triton 3.6.0, torch 2.11, 2026-12-01"
_H200_2 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02 (fuzz seeds 462229468 and 1827498631)"
_H200_3 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02 (fuzz seed 1549857666)"
_H200_4 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02 (fuzz seed 308746962)"
_H200_5 = "H200, Triton 3.6.0, torch 2.11, 2026-12-02, fuzz seed"
_RED_X = ((np.arange(1024, dtype=np.int64) * 7919 % 20011) - 10005).astype(np.int32).reshape(2, 16, 32)
_RED_KEPT = np.where(np.arange(32) % 4 == 2, _RED_X, -_RED_X)
_RED_SOURCE = np.broadcast_to((-_RED_X).min(axis=2, keepdims=True), (2, 16, 32)).reshape(-1).astype(np.float64)
_RED_GPU = np.broadcast_to(_RED_KEPT.min(axis=2, keepdims=True), (2, 16, 32)).reshape(-1).astype(np.float64)
_TILE = "tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]"

# ---- dot_copy_of_an_operand_miscompiled

# the rewrites of the elementwise rules: what a dot's own copy of an operand may compute instead, element by element
_OPERAND_REWRITES = (_guard_always_3, _minus_one_arm_dropped, _negations_widened, _low_16_bits_converted,
                     _abs_in_64_bits, _abs_dropped)
_MAX_SUMS = 4096        # reachable row sums kept per row of a dot, at most (else the rule does not explain)


def _row_switched(row_a, alts, b, target, slack) -> bool:
    """Some elements of the row `row_a` (at least one) replaced by one of their alternatives make `row_a @ b`
    equal `target` (within `slack`, per column)."""
    sums = {(0.0,) * b.shape[1]: np.zeros(b.shape[1])}
    with np.errstate(all="ignore"):
        need = target - row_a @ b
        for k in range(len(row_a)):
            steps = {float(alt[k] - row_a[k]) for alt in alts if np.isfinite(alt[k]) and alt[k] != row_a[k]}
            for d in steps:
                for v in list(sums.values()):
                    w = v + d * b[k]
                    sums.setdefault(tuple(np.round(w, 9)), w)
            if len(sums) > _MAX_SUMS:
                return False
    return any(np.any(v != 0) and np.all(np.abs(v - need) <= slack) for v in sums.values())   # a switch, not slack


def _dot_rows_switched(a, alts, b, r, mask, K, exact) -> bool:
    """Every row holding a differing lane of the dot `r` (programs, M, N) of `a` (programs, M, K) and `b` is a
    product with some elements of its row of `a` switched to an alternative."""
    for p, i in zip(*np.nonzero(mask.any(axis=-1))):
        with np.errstate(all="ignore"):
            slack = 0.0 if exact else 2.0 * K * 2.0 ** -10 * (np.abs(a[p, i]) @ np.abs(b[p])) + 1e-30
        if not _row_switched(a[p, i], [alt[p, i] for alt in alts], b[p], r[p, i], slack):
            return False
    return True


def _dot_copy_of_an_operand_miscompiled(view) -> bool:
    """Each differing output is a tl.dot whose stored operands agree on both sides, and each of its rows (or
    columns) holding a differing lane is the product with some elements of one operand taking what an
    elementwise rule's rewrite computes there (the dot's own copy of the operand went wrong where the stored
    copy did not)."""
    dots = {name: view.output(name) for name in view.values}
    if not dots or any(len(o.operands) != 2 or "K" not in o.info or set(o.operands) & set(view.values)
                       for o in dots.values()):
        return False
    names = sorted({op for o in dots.values() for op in o.operands})
    alts = [alt for alt in (view.counterfactual(rw, names) for rw in _OPERAND_REWRITES) if alt is not None]
    if not alts:
        return False
    for name, (_, r, mask) in view.values.items():
        o = dots[name]
        x, y = (view.stored[op] for op in o.operands)
        exact = o.dtype.startswith("int")
        if not (_dot_rows_switched(x, [alt[o.operands[0]] for alt in alts], y, r, mask, o.info["K"], exact)
                or _dot_rows_switched(np.swapaxes(y, 1, 2), [np.swapaxes(alt[o.operands[1]], 1, 2) for alt in alts],
                                      np.swapaxes(x, 1, 2), np.swapaxes(r, 1, 2), np.swapaxes(mask, 1, 2),
                                      o.info["K"], exact)):
            return False
    return True


RULES = [
    Rule("int16_negation_widened",
         "ptxas (the one Triton 3.6 runs for sm_90) reorders an int16 negation and the sign extension after it: "
         "Triton emits `neg.s16` then `cvt.s32.s16`, ptxas a sign extension then a 32-bit negation, so "
         "-(-32768) is +32768 wherever the value goes on in a 32-bit register: widened to int32 or wider, an "
         "int16 `%` (done in 32 bits), a reduction (`tl.max`, `tl.min` over a block holding it). The language "
         "(and the PTX) wraps the int16 negation to -32768 first; minitriton wraps, as the source says.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 8 + tl.arange(0, 8))",
             "tl.store(out_ptr + pid * 8 + tl.arange(0, 8), (-x) + tl.full((8,), 0, tl.int32))"]),
             (_NEG_X, np.zeros((2, 8), np.int32)), (2,), _NEG_SOURCE.reshape(-1).tolist(),
             lambda src, gpu: bool(np.array_equal(gpu, np.where(src == -32768, 32768.0, src))),
             "H200, Triton 3.6.0, torch 2.11, 2026-11-29: this kernel and input (the fuzz run's shrunk "
             "reproducer) stored +32768 at the two lanes where x = -32768, the source's value elsewhere. "
             "Compiled offline by Triton 3.6 for sm_90: PTX `neg.s16 %rs2, %rs1; cvt.s32.s16 %r1, %rs2`, "
             "SASS `PRMT R0, R2, 0x9910, RZ; IMAD.MOV R7, RZ, RZ, -R0` (sign extension, then the negation). "
             f"{_H200}: `((-h) >> 1)` with int16 h = -32768 stored 16384 (the source: -16384). {_H200_2}: the "
             "fuzz's shrunk `tl.max(-x, axis=0)` and `tl.min(-x, axis=1)` of int16 blocks holding -32768 reduced "
             "+32768 (stored 0 in int8, -32766 as the minimum), and `-x % d` (int16 x = -32768, int8 d = 3) "
             "stored 2 (the source: -2)."),
         _int16_negation_widened),
    Rule("narrow_float_of_low_16_bits",
         "The GPU converts a uint32 that holds a sign-extended int8 or int16 (`x.to(tl.uint32)`, `x - tl.full(.., "
         "0, tl.uint32)`, `0 - x`, `tl.where(c, tl.full(.., 0, tl.uint32), x)`) to fp16/bf16 from its low 16 bits "
         "alone, by `.to` or by the store into an fp16/bf16 output: int8 -47 becomes 65489, 65536 in bf16 and "
         "65504 in fp16, where the 32-bit value "
         "(4294967249) converts to 2**32 and inf; also where fp16/bf16 arithmetic converts a uint32 operand "
         "(`tl.maximum(fp16 0.0, h.to(tl.uint32))`; a comparison in fp16 is held to the same rewrite, not yet seen "
         "on the GPU). The compiler narrows the integer to 16 bits before the "
         "conversion (semantics S15.26). minitriton converts the whole integer, rounding once, as the source says.",
         Probe(_kernel("x_ptr, out_ptr", [_LINEAR, "x = tl.load(x_ptr + offs)",
                                          "tl.store(out_ptr + offs, x.to(tl.uint32).to(tl.bfloat16))"]),
               (_I8, BF16(np.zeros(1024, np.uint16))), (1,), _to_narrow_float("bf16", _I8.astype(np.int64) % 2 ** 32).tolist(),
               lambda src, gpu: bool(np.array_equal(gpu, np.where(
                   _I8 < 0, _to_narrow_float("bf16", _I8.astype(np.int64) % 2 ** 16), src))),
               f"{_H200} (one kernel per expression, 1,024 lanes, int8 inputs -128..127): `x.to(tl.uint32)` to "
               "bf16 (by `.to` and by the store) and to fp16, `x.to(tl.uint64)` to bf16 and `(0u32 - x)` to fp16 "
               "stored the conversion of the low 16 bits on every lane where they differ from the whole value; "
               "int16 and int32 sources, uint32 loads, `u32 + 11` and conversions to fp32 were right. Seen in "
               "the fuzz runs of 2026-11-29 and 2026-12-01 (8 distinct shrunk kernels). "
               f"{_H200_3}: "
               "`tl.where(c, tl.full(.., 0, tl.uint32), h).to(tl.float16)` with int16 h = -13780 gave 51744 "
               "(the conversion of 51756, its low 16 bits) where the source gives inf. "
               f"{_H200_5} 1916544687: the same for a uint32 operand of fp16 arithmetic, "
               "`tl.maximum(tl.full(.., 0.0, tl.float16), h.to(tl.uint32))` with int16 h = -15512 stored 50016 "
               "(the conversion of 50024) where the source gives inf."),
         _narrow_float_of_low_bits),
    Rule("narrow_float_conversion_skipped",
         "An integer converted to fp16 or bf16 by `.to` and stored into an fp32 (or fp64) output: the GPU "
         "stores the integer converted to fp32, as if the narrow conversion were not there, where that "
         "conversion is inexact: uint32 2**29 (`x << 29` of int8 x = 1) `.to(tl.float16)` is stored as "
         "536870912, where fp16 overflows to inf. LLVM folds the widening of an integer-to-fp16 conversion into "
         "one integer-to-fp32 conversion when the integer's known bits fit fp16's significand, without asking "
         "whether its exponent fits (semantics S15.34). minitriton converts to fp16 and then widens, as the "
         "source says.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])",
             "tl.store(out_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], "
             "(x << (tl.full((2, 2), 29, tl.uint32) & 31)).to(tl.float16))"]),
             (np.ones((2, 2, 2), np.int8), np.zeros((2, 2, 2), np.float32)), (2,), [float("inf")] * 8,
             lambda src, gpu: bool(np.all(gpu == 2.0 ** 29)),
             f"{_H200_5} 351809208: this kernel (the fuzz's shrunk reproducer) stored 536870912.0 on all 8 "
             "lanes, where the source's fp16 conversion is inf."),
         _narrow_float_conversion_skipped),
    Rule("float_mod_by_a_computed_power_of_two",
         "A float `%` whose divisor is an expression of constants equal to 2**k, k >= 0 (for instance "
         "`tl.minimum(tl.maximum(tl.full(.., 1.0, ..), lo), hi)`): the compiler folds the divisor to a constant "
         "and rewrites frem by such a constant as copysign(x - trunc(x / c) * c, x), so a zero remainder keeps "
         "the sign of x (-3.0 % 1.0 is -0.0; semantics S15.24). minitriton applies that rule to divisors written "
         "as a literal or `tl.full`; it does not track constants computed from them, and gives the run-time "
         "lowering's +0.0 (S15.1).",
         Probe(_kernel("x_ptr, out_ptr", [
             _LINEAR, "x = tl.load(x_ptr + offs)",
             "tl.store(out_ptr + offs, x % tl.minimum(tl.maximum(tl.full((1024,), 1.0, tl.float32), "
             "-9.223372036854776e+18), 9.223371487098962e+18))"]),
             (_FX, np.zeros(1024, np.float32)), (1,), _mod_run_time(_FX).tolist(),
             lambda src, gpu: same_all(gpu, np.where((src == 0) & np.signbit(_FX), -0.0, src)),
             f"{_H200} (1,024 lanes): this kernel stored -0.0 for x in (-3.0, -0.0, -16256.0, -1e30), +0.0 for "
             "(0.0, 3.0, 1e30); so did `x % 1.0`, `x % -1.0`, `x % 2.0`, `x % 65536.0`, `x % tl.full(.., 1.0, ..)` "
             "in fp16, bf16, fp32 and fp64; `x % 3.0`, `x % 0.1` and a loaded divisor follow S15.1 (+0.0)."),
         _float_mod_by_a_computed_power_of_two),
    Rule("abs_of_int_min",
         "`tl.abs` of an integer type's minimum: Triton emits LLVM's `abs` with int-min-is-poison, so later "
         "instructions may assume the result is non-negative: `tl.abs(INT32_MIN) < 0` is false, "
         "`tl.abs(int16 -32768) >> 1` is 16384 (a logical shift), `tl.abs(INT32_MIN) % d` the remainder of "
         "+2**31, and `tl.max(tl.abs(x).to(tl.int32), axis=0)` over int16 columns holding -32768 is 32768 (semantics "
         "S15.25). The value is undefined on the GPU; minitriton keeps the wrapped minimum, as the language's two's "
         "complement says.",
         Probe(_kernel("x_ptr, out_ptr", [_LINEAR, "x = tl.load(x_ptr + offs)",
                                          "tl.store(out_ptr + offs, (tl.abs(x) < 0).to(tl.float32))"]),
               (np.full(1024, -2 ** 31, np.int32), np.zeros(1024, np.float32)), (1,), [1.0] * 1024,
               lambda src, gpu: bool(np.all(gpu == 0.0)),
               f"{_H200} (1,024 lanes of INT32_MIN): this kernel stored 0.0 everywhere; `(tl.abs(h) >> 1)` of "
               "int16 -32768 stored 16384; the fuzz's shrunk `tl.abs(x) % tl.where(..)` with x = INT32_MIN stored "
               "2 (the source: -2)."),
         _abs_of_int_min),
    Rule("division_guard_minus_one_dropped",
         "The fuzz guards every integer divisor as `tl.where((d == 0) | (d == -1), 3, d)`. For an 8- or 16-bit "
         "d (or such a d widened by `.to(tl.int32)`, which the compiler compares in 16 bits) equal to -1 in 2-D "
         "tiles, the GPU divides by -1 on some lanes (every other or every fourth): the "
         "`d == -1` arm of the guard is lost in the 16-bit vector code (semantics S15.29). minitriton divides by 3, as the source "
         "says. One kernel may show this and division_guard_takes_3 together (a 16-bit remainder of the fuzz run "
         "of 2026-12-02, seeds 256307443 and 442604376: `x % guard(x)` was x % 3 on some lanes, 0 = x % -1 where x = -1 on others); either rule explains it.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :]",
             "x = tl.load(x_ptr + pid * 1024 + offs)",
             "tl.store(out_ptr + pid * 1024 + offs, tl.full((32, 32), 15, tl.int8) // "
             "tl.where((x == 0) | (x == -1), 3, x))"]),
             (np.full((2, 32, 32), -1, np.int16), np.zeros((2, 32, 32), np.int8)), (2,), [5.0] * 2048,
             lambda src, gpu: bool(np.all((gpu == 5.0) | (gpu == -15.0)) and np.any(gpu == -15.0)),
             f"{_H200}: this kernel (the fuzz's shrunk reproducer of seed 1135514517) stored -15 (15 // -1) on 512 "
             "of 2,048 lanes, 5 elsewhere; `x // tl.where((x == 0) | (x == -1), 3, x)` with x = -1 stored 1 "
             "(-1 // -1) on half the lanes of a 16x32 tile. One-dimensional 16- and 1,024-lane kernels of the same "
             f"expressions were right. {_H200_5} 1846161072: `(x // tl.where((x.to(tl.int32) == 0) | "
             "(x.to(tl.int32) == -1), 3, x.to(tl.int32))).to(tl.int8)` with int16 x = -1 in a 32x16 tile stored 1 "
             "on columns 2, 3, 6, 7, ... (512 of 1,024 lanes), 0 elsewhere."),
         _division_guard_takes_the_other_arm),
    Rule("division_guard_takes_3",
         "The fuzz guards every integer divisor as `tl.where((d == 0) | (d == -1), 3, d)`. For a 16-bit d in a "
         "2-D tile, the GPU divides by the guard's 3 on some lanes (pairs of lanes in the probe) where d is "
         "neither 0 nor -1: the guard's condition is evaluated wrong in the 16-bit vector code (semantics S15.29). minitriton "
         "divides by d, as the source says. One kernel may show this and division_guard_minus_one_dropped together; "
         "either rule explains it.",
         Probe(_kernel("x_ptr, s, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :]",
             "x = tl.load(x_ptr + pid * 512 + offs)",
             "d = tl.full((32, 16), 21, tl.int16).to(tl.uint8).to(tl.int16)",
             "tl.store(out_ptr + pid * 512 + offs, tl.where((x % tl.where((d == 0) | (d == -1), 3, d) <= x) & "
             "(x <= pid % tl.where((s == 0) | (s == -1), 3, s)), pid, -(x % tl.where((x == 0) | (x == -1), 3, x))))"]),
             (np.ones((2, 32, 16), np.int16), 0, np.zeros((2, 32, 16), np.int8)), (2,),
             [0.0] * 512 + [1.0] * 512,
             lambda src, gpu: bool(np.all((gpu == src) | ((src == 0) & (gpu == -1))) and np.any(gpu == -1)),
             f"{_H200_2}: this kernel (the fuzz's shrunk reproducer, x = 1 everywhere) stored -1 = -(1 % 3) on "
             "256 of the 512 lanes of program 0 (lanes 0, 1, 4, 5, ... of each row) and 0 = -(1 % 1) on the others."),
         _division_guard_takes_the_other_arm),
    Rule("masked_16_bit_other_loses_its_sign",
         "An fp16/bf16 masked load with a negative `other`, its value used twice in arithmetic: in every fourth "
         "masked-off lane (last-axis index 3 mod 4 in the probe, 1 mod 4 in other fuzz kernels), one use sees "
         "`other` without its sign (semantics S15.27), so `x * x` is -inf for other=-inf (and -9.0 for "
         "other=-3.0), `x + x` NaN (0.0 for other=-1.5). Storing x, `-x` and `x * 1.0` are right, and so is "
         "fp32. minitriton uses `other` in every masked-off lane, as the source says.",
         Probe(_kernel("x_ptr, out_ptr", [
             "offs = tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]",
             "x = tl.load(x_ptr + offs, mask=offs < 3, other=-float('inf'))",
             "tl.store(out_ptr + offs, x * x)"]),
             (BF16.round(_OTHER_X.astype(np.float32)), BF16(np.zeros(512, np.uint16))), (1,), _OTHER_SOURCE.tolist(),
             lambda src, gpu: same_all(gpu, _OTHER_GPU),
             f"{_H200}: this kernel stored -inf at the masked-off lanes 3, 7, 11, ... and +inf at the others; the "
             "same in fp16; `x + x` stored NaN there; other=-3.0 gave -9.0 there. Seen first in the fuzz run of "
             "seed 1113992 (3 fragments)."),
         _masked_16_bit_other),
    Rule("int32_min_max_chain_folded_to_x",
         "In int32, `tl.minimum(tl.minimum(tl.maximum(x, 0), -x), x)` is -|x| by the source (x where x <= 0, -x "
         "where x > 0), and the GPU stores x on every lane; the mirror `tl.maximum(tl.maximum(tl.minimum(x, 0), "
         "-x), x)` (|x|) is x too (semantics S15.28). The compiler folds the chain of smin/smax wrongly: the same chain in int16 "
         "and int64, `tl.minimum(tl.maximum(x, 0), -x)` and `tl.minimum(-x, x)` alone are right. minitriton "
         "computes the source.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :]",
             "x = tl.load(x_ptr + offs)",
             "tl.store(out_ptr + offs, tl.minimum(tl.minimum(tl.maximum(x, tl.full((2, 2), 0, tl.int8)), -x), x))"]),
             (_CHAIN_X, np.zeros((2, 2, 2), np.int32)), (2,), _CHAIN_SOURCE.tolist(),
             lambda src, gpu: bool(np.array_equal(gpu, _CHAIN_X.reshape(-1).astype(np.float64))),
             f"{_H200_3}: this kernel (the fuzz's shrunk reproducer, x = 1 there) stored x on every lane, -7 "
             "and INT32_MIN included; 16-lane kernels of the chain with a literal 0 or `0 - x`, and of the mirror, "
             "stored x too (70000 for 70000, -47 for -47 in the mirror); int16 and int64 chains were right."),
         _int32_min_max_chain_folded_to_x),
    Rule("fma_contraction",
         "The GPU fuses a float `a * b + c` into one FMA (one rounding) where the source rounds the product "
         "first; the fuzz generator does not write such adds of rounded products, but shrinking a kernel can "
         "(a scalar kernel argument in place of an exact operand). minitriton rounds twice, as the source says.",
         Probe(_kernel("x_ptr, s, out_ptr", ["offs = tl.arange(0, 16)", "x = tl.load(x_ptr + offs)",
                                             "tl.store(out_ptr + offs, x * s + 1.0)"]),
               (_FMA_X, _FMA_S, np.zeros(16, np.float32)), (1,), _FMA_TWO.tolist(),
               lambda src, gpu: same_all(gpu, _FMA_ONE) and not same_all(src, _FMA_ONE),
               f"{_H200}: this kernel stored the single-rounded fma(x, s, 1.0) on every lane (5 of 16 differ from "
               "the two roundings); so did `(x * s) + y`."),
         _fma_contraction),
    Rule("fma_contraction_in_a_remainder",
         "A float `(a * b) % c` with a constant power-of-two c: the compiler rewrites the remainder as "
         "x - trunc(x / c) * c (semantics S15.24) and contracts the product into that subtraction, so the "
         "remainder is taken of the exact product a * b, not of the product rounded to the type (semantics S15.30). minitriton "
         "rounds the product first, as the source says.",
         Probe(_kernel("a_ptr, b_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :]",
             "a = tl.load(a_ptr + offs)",
             "b = tl.load(b_ptr + offs)",
             "tl.store(out_ptr + offs, b * a % tl.full((2, 2), 1.0, tl.float16))"]),
             (np.full((2, 2, 2), 711.268310546875, np.float32), np.full((2, 2, 2), 9, np.uint32),
              np.zeros((2, 2, 2), np.float16)), (2,), [0.4150390625] * 8,
             lambda src, gpu: bool(np.all(gpu == 0.414794921875)),
             f"{_H200_2}: this kernel (the fuzz's shrunk reproducer) stored 0.414794921875 (the remainder of the "
             "exact product 6401.414794921875) on every lane; the source rounds the product to fp32 first "
             "(6401.4150390625), remainder 0.4150390625."),
         _fma_contraction_in_a_remainder),
    Rule("negation_lost_in_a_reduction",
         "An integer `tl.min` or `tl.max` along an axis of a negated block (`-x`, `0 - x`): the GPU reduces the "
         "third of every four elements a thread holds along that axis without its negation (semantics S15.31): "
         "`tl.min(-x, axis=1)` of a 16x32 int32 tile is the minimum of -x over the columns i with i % 4 != 2 and "
         "of x over those with i % 4 == 2; along axis 0 with num_warps=1 (four rows per thread, 4 apart) rows "
         "8..11 keep their sign. `-tl.max(x)`, `tl.min(~x)` and `tl.max(x)` are right. A `tl.sum` of `-x` is held "
         "to the same rewrite (the same in-thread reduction; not yet seen on the GPU). minitriton negates every "
         "element, as the source says.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             f"x = tl.load(x_ptr + pid * 512 + {_TILE})",
             f"tl.store(out_ptr + pid * 512 + {_TILE}, tl.min(-x, axis=1, keep_dims=True))"]),
             (_RED_X, np.zeros((2, 16, 32), np.float32)), (2,), _RED_SOURCE.tolist(),
             lambda src, gpu: same_all(gpu, _RED_GPU) and not same_all(src, _RED_GPU),
             f"{_H200_4}: the fuzz's shrunk reproducer (this kernel, random int32 inputs) stored the minimum with "
             "columns 2, 6, 10, ... not negated in 10 of its 32 rows (the others happen to agree); probes of the "
             "same input: `tl.min(-x, axis=1)`, `tl.min(0 - x, axis=1)` and `tl.max(-x, axis=1)` matched that "
             "pattern on all 32 rows with num_warps 4 and 1; `tl.min(-x, axis=0)` with num_warps=1 matched rows "
             "8..11 kept, and was right with num_warps=4 (one row per thread)."),
         _negation_lost_in_a_reduction),
    Rule("remainder_of_infinities_converted_to_an_integer",
         "A float `x % x` whose value is converted to an integer (by `.to`, or by the store into an integer "
         "output; through `tl.maximum`/`tl.minimum` too): for an infinite x the GPU's remainder is NaN (it "
         "converts to 0), where the lowering of S15.1 gives x for an infinite divisor, as the GPU does when the "
         "remainder stays a float (semantics S15.32). A conversion of an infinity to an integer is poison in "
         "LLVM, so the compiler drops the select that returns x. minitriton computes the source: inf % inf is "
         "inf, and inf converts to the integer type's maximum.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 2 + tl.arange(0, 2))",
             "tl.store(out_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], "
             "tl.minimum(tl.maximum(x[None, :] % x[None, :], 0.0), 4294967040.0))"]),
             (np.full((2, 2), np.inf, np.float16), np.zeros((2, 2, 2), np.uint32)), (2,), [4294967040.0] * 8,
             lambda src, gpu: bool(np.all(gpu == 0.0)),
             f"{_H200_4}: this kernel (the fuzz's shrunk reproducer) stored 0 on every lane; so did `x % x` and "
             "`tl.maximum(x % x, 0.0)` stored into uint32 and the clamp stored into int32, for fp16 and fp32 "
             "x = inf; the same clamp of x itself stored 4294967040, and `x % x` stored into fp16 or fp32 was inf."),
         _remainder_of_infinities_converted),
    Rule("abs_of_a_remainder_dropped",
         "`tl.abs(x % y)` of a float remainder whose dividend is an unsigned integer: LLVM knows that fmod "
         "keeps the sign of its dividend and that an unsigned integer converted to a float is never negative, so "
         "it drops the abs; but NVPTX lowers `%` as fma(-trunc(x / y), y, x) (semantics S15.1), which can be "
         "negative: uint32 3792463295 % fp16 1.5 (computed in fp32) is -128, and the GPU stores -128 for its "
         "abs (semantics S15.33). A float `tl.abs(x)` dividend is held to the same rewrite (LLVM knows it is "
         "never negative either; not yet seen on the GPU). minitriton computes the same remainder and takes its "
         "absolute value, as the source says.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])",
             "tl.store(out_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], "
             "tl.abs(x % tl.full((2, 2), 1.5, tl.float16)))"]),
             (np.full((2, 2, 2), 3792463295, np.uint32), np.zeros((2, 2, 2), np.float16)), (2,), [128.0] * 8,
             lambda src, gpu: bool(np.all(gpu == -128.0)),
             f"{_H200_5} 283048162: this kernel (the fuzz's shrunk reproducer) stored -128.0 on all 8 lanes, "
             "where the source's remainder is -128.0 and its abs 128.0."),
         _abs_of_a_remainder_dropped),
    Rule("compiler_assertion",
         "Triton's compiler stops on an LLVM assertion (the GPU side's worker aborts) for a kernel minitriton "
         "runs: a crash of the pinned toolchain, not a value to compare.",
         Probe(_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 2 + tl.arange(0, 2))",
             "tl.store(out_ptr + pid * 2 + tl.arange(0, 2), (x.to(tl.float16) % tl.full((2,), 0, tl.uint32))"
             ".to(tl.bfloat16))"]),
             (np.zeros((2, 2), np.int32), np.zeros((2, 2), np.float32)), (2,), [float("nan")] * 4,
             lambda src, gpu: False,
             f"{_H200}: compiling this kernel (the fuzz's shrunk reproducer of seed 1113992, 7 fragments) aborts "
             "with `llvm/lib/IR/Instructions.cpp:3150: CastInst::CreateFPCast: Assertion `(C->getType() == Ty || "
             "SrcBits != DstBits) && \"Invalid cast\"' failed`; the same remainder converted to fp32 compiles.",
             gpu_raises="Assertion"),
         _compiler_assertion),
    Rule("dot_copy_of_an_operand_miscompiled",
         "A tl.dot whose result is not the product of the operands the same kernel stores: the compiler "
         "computes the dot's own copy of an operand (in the dot's operand layout) apart from the stored copy, and "
         "a miscompile of another rule (a division guard's other arm, S15.29, above all) hits different "
         "elements there. Checked exactly: each row (or column) of the dot that differs is the product with "
         "some elements of one operand taking what such a rule computes there. The fuzz draws no integer "
         "division in dot operands on the GPU since 2026-12-02. minitriton multiplies the operands it stores.",
         Probe(_kernel("x_ptr, h_ptr, y_ptr, v_ptr, y_out_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             f"x = tl.load(x_ptr + pid * 512 + {_TILE})",
             f"h = tl.load(h_ptr + pid * 512 + {_TILE}, mask={_TILE} < 511, other=2.0)",
             "v = (tl.minimum(tl.maximum(h, -32768.0), 32640.0).to(tl.int16) % tl.where((x.to(tl.int32) == 0) | "
             "(x.to(tl.int32) == -1), 3, x.to(tl.int32)) >> (x & 31)).to(tl.int8)",
             "y = tl.load(y_ptr + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])",
             f"tl.store(v_ptr + pid * 512 + {_TILE}, v)",
             "tl.store(y_out_ptr + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], y)",
             f"tl.store(out_ptr + pid * 512 + {_TILE}, tl.dot(v, y))"]),
             (np.ones((2, 16, 32), np.int16), _COPY_BF16, np.ones((2, 32, 32), np.int8), np.zeros((2, 16, 32), np.int8),
              np.zeros((2, 32, 32), np.int8), np.zeros((2, 16, 32), np.int32)),
             (2,), [0.0] * 1024,
             lambda src, gpu: bool(np.any(gpu != src) and np.all((gpu <= 0) & (gpu >= -32) & (gpu == np.round(gpu)))),
             f"{_H200_5} 1846161072: the fuzz's shrunk reproducer (this kernel with x = 1, h a bf16 tile whose "
             "int16 values are -1, 0 and 1, y = 1; the source's dot is 0 everywhere, as `h % 1 >> 1` is 0) stored "
             "-2 on 480 of 1,024 lanes while the stored operand was 0 everywhere: -1 = (-1 % 3) >> 1 taken on two "
             "elements of those rows. The H200, 2026-12-02: this kernel on its own tile (-1.5 on half of the "
             "lanes, 0.5 and 1.5) stored -5, -4 or -3 on 512 of 1,024 lanes; the same kernel loading h as int16 "
             "(no clamp) stored 0 everywhere. "
             "The H200, Triton 3.6.0, 2026-11-29: the dot of `tl.where(pid >= x, s, y).to(tl.float32)` and "
             "`(z % guard(z)).to(tl.float32)` stored 9.0 where the product of the stored operands is 0.0."),
         _dot_copy_of_an_operand_miscompiled),
]
