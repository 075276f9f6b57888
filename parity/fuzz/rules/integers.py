"""Rules for integer miscompiles: negation, abs, division guards, masked loads' `other`, min/max chains,
reductions."""
from __future__ import annotations

import ast

import numpy as np

from parity.fuzz.explain import Probe, Rule, expression, replace_node, same_all
from parity.fuzz.source import dotted
from parity.oracle import BF16
from parity.fuzz.rules.common import H200, H200_2, H200_3, H200_4, H200_5, INT_MIN, LINEAR, TILE, calls, probe_kernel, \
    reached


# ---- int16_negation_widened

def _int16_negations(typed):
    return [n for n in typed.nodes() if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
            and typed.of(n) == "int16"]


def negations_widened(typed) -> bool:
    return any([replace_node(typed, n, expression(f"(-({ast.unparse(n.operand)}).to(tl.int32))"))
                for n in _int16_negations(typed)])


def _int16_negation_widened(view) -> bool:
    """Every differing lane is one where an int16 `-x` negates -32768 (or reduces such a lane), and the GPU
    holds what the kernel computes with that negation done in 32 bits."""
    negs = _int16_negations(view.typed)
    return bool(negs) and view.explained_by(negations_widened,
                                            reached(view, [(n, n.operand, -32768) for n in negs]))

# ---- abs_of_int_min

def _int_abs(typed):
    return [n for n in calls(typed, "tl.abs") if typed.of(n) in INT_MIN]


def abs_in_64_bits(typed) -> bool:
    return any([replace_node(typed, n, expression(f"tl.abs(({ast.unparse(n.args[0])}).to(tl.int64))"))
                for n in _int_abs(typed)])


def _abs_of_int_min(view) -> bool:
    """Every differing lane is one where an integer `tl.abs` gets its type's minimum (or reduces such a lane),
    and holds what the kernel computes with that abs taken in 64 bits (a non-negative value)."""
    calls = _int_abs(view.typed)
    return bool(calls) and view.explained_by(
        abs_in_64_bits, reached(view, [(n, n.args[0], INT_MIN[view.typed.of(n)]) for n in calls]))


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


def minus_one_arm_dropped(typed) -> bool:
    guards = _narrow_guards(typed)
    for n in guards:
        n.args[0] = expression(f"({ast.unparse(n.args[2])} == 0)")
    return bool(guards)


def guard_always_3(typed) -> bool:
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
    elsewhere = reached(view, [(n, n.args[2], lambda v: (v != 0) & (v != -1)) for n in guards])
    return view.explained_by_any([(minus_one_arm_dropped, reached(view, [(n, n.args[2], -1) for n in guards])),
                                  (guard_always_3, elsewhere)])


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
    for n in calls(view.typed, "tl.load"):
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

# ---- negation_lost_in_a_reduction

def _reduced_negations(typed):
    """(negation, axis) for each signed-integer `tl.min`/`tl.max`/`tl.sum` along a constant axis whose block is
    `-x` or `0 - x`."""
    out = []
    for call in calls(typed, "tl.min") + calls(typed, "tl.max") + calls(typed, "tl.sum"):
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


# ---- the probes' inputs

# the input of the fuzz's shrunk kernel of 2026-11-29 on the H200, two programs
_NEG_X = np.array([[25949, 23907, 0, 23285, 1, -32768, 28964, 1],
                   [-21657, 32766, 19592, -32768, -1, 7457, 18926, -32596]], np.int16)
_NEG_SOURCE = (-_NEG_X.astype(np.int64)).astype(np.int16).astype(np.int64)
_OTHER_X = (np.arange(512) % 5 - 2).astype(np.float64)
_CHAIN_X = np.array([1, -1, 0, 5, -7, 2 ** 31 - 1, -2 ** 31, 3], np.int32).reshape(2, 2, 2)
_CHAIN_SOURCE = np.where(_CHAIN_X > 0, -_CHAIN_X.astype(np.int64), _CHAIN_X).reshape(-1).astype(np.float64)
_OTHER_SOURCE = np.where(np.arange(512) < 3, _OTHER_X ** 2, np.inf)
_OTHER_GPU = np.where((np.arange(512) >= 3) & (np.arange(512) % 4 == 3), -np.inf, _OTHER_SOURCE)
_RED_X = ((np.arange(1024, dtype=np.int64) * 7919 % 20011) - 10005).astype(np.int32).reshape(2, 16, 32)
_RED_KEPT = np.where(np.arange(32) % 4 == 2, _RED_X, -_RED_X)
_RED_SOURCE = np.broadcast_to((-_RED_X).min(axis=2, keepdims=True), (2, 16, 32)).reshape(-1).astype(np.float64)
_RED_GPU = np.broadcast_to(_RED_KEPT.min(axis=2, keepdims=True), (2, 16, 32)).reshape(-1).astype(np.float64)


RULES = [
    Rule("int16_negation_widened",
         "ptxas (the one Triton 3.6 runs for sm_90) reorders an int16 negation and the sign extension after it: "
         "Triton emits `neg.s16` then `cvt.s32.s16`, ptxas a sign extension then a 32-bit negation, so "
         "-(-32768) is +32768 wherever the value goes on in a 32-bit register: widened to int32 or wider, an "
         "int16 `%` (done in 32 bits), a reduction (`tl.max`, `tl.min` over a block holding it). The language "
         "(and the PTX) wraps the int16 negation to -32768 first; minitriton wraps, as the source says.",
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 8 + tl.arange(0, 8))",
             "tl.store(out_ptr + pid * 8 + tl.arange(0, 8), (-x) + tl.full((8,), 0, tl.int32))"]),
             (_NEG_X, np.zeros((2, 8), np.int32)), (2,), _NEG_SOURCE.reshape(-1).tolist(),
             lambda src, gpu: bool(np.array_equal(gpu, np.where(src == -32768, 32768.0, src))),
             "H200, Triton 3.6.0, torch 2.11, 2026-11-29: this kernel and input (the fuzz run's shrunk "
             "reproducer) stored +32768 at the two lanes where x = -32768, the source's value elsewhere. "
             "Compiled offline by Triton 3.6 for sm_90: PTX `neg.s16 %rs2, %rs1; cvt.s32.s16 %r1, %rs2`, "
             "SASS `PRMT R0, R2, 0x9910, RZ; IMAD.MOV R7, RZ, RZ, -R0` (sign extension, then the negation). "
             f"{H200}: `((-h) >> 1)` with int16 h = -32768 stored 16384 (the source: -16384). {H200_2}: the "
             "fuzz's shrunk `tl.max(-x, axis=0)` and `tl.min(-x, axis=1)` of int16 blocks holding -32768 reduced "
             "+32768 (stored 0 in int8, -32766 as the minimum), and `-x % d` (int16 x = -32768, int8 d = 3) "
             "stored 2 (the source: -2)."),
         _int16_negation_widened),
    Rule("abs_of_int_min",
         "`tl.abs` of an integer type's minimum: Triton emits LLVM's `abs` with int-min-is-poison, so later "
         "instructions may assume the result is non-negative: `tl.abs(INT32_MIN) < 0` is false, "
         "`tl.abs(int16 -32768) >> 1` is 16384 (a logical shift), `tl.abs(INT32_MIN) % d` the remainder of "
         "+2**31, and `tl.max(tl.abs(x).to(tl.int32), axis=0)` over int16 columns holding -32768 is 32768 (semantics "
         "S15.25). The value is undefined on the GPU; minitriton keeps the wrapped minimum, as the language's two's "
         "complement says.",
         Probe(probe_kernel("x_ptr, out_ptr", [LINEAR, "x = tl.load(x_ptr + offs)",
                                          "tl.store(out_ptr + offs, (tl.abs(x) < 0).to(tl.float32))"]),
               (np.full(1024, -2 ** 31, np.int32), np.zeros(1024, np.float32)), (1,), [1.0] * 1024,
               lambda src, gpu: bool(np.all(gpu == 0.0)),
               f"{H200} (1,024 lanes of INT32_MIN): this kernel stored 0.0 everywhere; `(tl.abs(h) >> 1)` of "
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
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :]",
             "x = tl.load(x_ptr + pid * 1024 + offs)",
             "tl.store(out_ptr + pid * 1024 + offs, tl.full((32, 32), 15, tl.int8) // "
             "tl.where((x == 0) | (x == -1), 3, x))"]),
             (np.full((2, 32, 32), -1, np.int16), np.zeros((2, 32, 32), np.int8)), (2,), [5.0] * 2048,
             lambda src, gpu: bool(np.all((gpu == 5.0) | (gpu == -15.0)) and np.any(gpu == -15.0)),
             f"{H200}: this kernel (the fuzz's shrunk reproducer of seed 1135514517) stored -15 (15 // -1) on 512 "
             "of 2,048 lanes, 5 elsewhere; `x // tl.where((x == 0) | (x == -1), 3, x)` with x = -1 stored 1 "
             "(-1 // -1) on half the lanes of a 16x32 tile. One-dimensional 16- and 1,024-lane kernels of the same "
             f"expressions were right. {H200_5} 1846161072: `(x // tl.where((x.to(tl.int32) == 0) | "
             "(x.to(tl.int32) == -1), 3, x.to(tl.int32))).to(tl.int8)` with int16 x = -1 in a 32x16 tile stored 1 "
             "on columns 2, 3, 6, 7, ... (512 of 1,024 lanes), 0 elsewhere."),
         _division_guard_takes_the_other_arm),
    Rule("division_guard_takes_3",
         "The fuzz guards every integer divisor as `tl.where((d == 0) | (d == -1), 3, d)`. For a 16-bit d in a "
         "2-D tile, the GPU divides by the guard's 3 on some lanes (pairs of lanes in the probe) where d is "
         "neither 0 nor -1: the guard's condition is evaluated wrong in the 16-bit vector code (semantics S15.29). minitriton "
         "divides by d, as the source says. One kernel may show this and division_guard_minus_one_dropped together; "
         "either rule explains it.",
         Probe(probe_kernel("x_ptr, s, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :]",
             "x = tl.load(x_ptr + pid * 512 + offs)",
             "d = tl.full((32, 16), 21, tl.int16).to(tl.uint8).to(tl.int16)",
             "tl.store(out_ptr + pid * 512 + offs, tl.where((x % tl.where((d == 0) | (d == -1), 3, d) <= x) & "
             "(x <= pid % tl.where((s == 0) | (s == -1), 3, s)), pid, -(x % tl.where((x == 0) | (x == -1), 3, x))))"]),
             (np.ones((2, 32, 16), np.int16), 0, np.zeros((2, 32, 16), np.int8)), (2,),
             [0.0] * 512 + [1.0] * 512,
             lambda src, gpu: bool(np.all((gpu == src) | ((src == 0) & (gpu == -1))) and np.any(gpu == -1)),
             f"{H200_2}: this kernel (the fuzz's shrunk reproducer, x = 1 everywhere) stored -1 = -(1 % 3) on "
             "256 of the 512 lanes of program 0 (lanes 0, 1, 4, 5, ... of each row) and 0 = -(1 % 1) on the others."),
         _division_guard_takes_the_other_arm),
    Rule("masked_16_bit_other_loses_its_sign",
         "An fp16/bf16 masked load with a negative `other`, its value used twice in arithmetic: in every fourth "
         "masked-off lane (last-axis index 3 mod 4 in the probe, 1 mod 4 in other fuzz kernels), one use sees "
         "`other` without its sign (semantics S15.27), so `x * x` is -inf for other=-inf (and -9.0 for "
         "other=-3.0), `x + x` NaN (0.0 for other=-1.5). Storing x, `-x` and `x * 1.0` are right, and so is "
         "fp32. minitriton uses `other` in every masked-off lane, as the source says.",
         Probe(probe_kernel("x_ptr, out_ptr", [
             "offs = tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]",
             "x = tl.load(x_ptr + offs, mask=offs < 3, other=-float('inf'))",
             "tl.store(out_ptr + offs, x * x)"]),
             (BF16.round(_OTHER_X.astype(np.float32)), BF16(np.zeros(512, np.uint16))), (1,), _OTHER_SOURCE.tolist(),
             lambda src, gpu: same_all(gpu, _OTHER_GPU),
             f"{H200}: this kernel stored -inf at the masked-off lanes 3, 7, 11, ... and +inf at the others; the "
             "same in fp16; `x + x` stored NaN there; other=-3.0 gave -9.0 there. Seen first in the fuzz run of "
             "seed 1113992 (3 fragments)."),
         _masked_16_bit_other),
    Rule("int32_min_max_chain_folded_to_x",
         "In int32, `tl.minimum(tl.minimum(tl.maximum(x, 0), -x), x)` is -|x| by the source (x where x <= 0, -x "
         "where x > 0), and the GPU stores x on every lane; the mirror `tl.maximum(tl.maximum(tl.minimum(x, 0), "
         "-x), x)` (|x|) is x too (semantics S15.28). The compiler folds the chain of smin/smax wrongly: the same chain in int16 "
         "and int64, `tl.minimum(tl.maximum(x, 0), -x)` and `tl.minimum(-x, x)` alone are right. minitriton "
         "computes the source.",
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :]",
             "x = tl.load(x_ptr + offs)",
             "tl.store(out_ptr + offs, tl.minimum(tl.minimum(tl.maximum(x, tl.full((2, 2), 0, tl.int8)), -x), x))"]),
             (_CHAIN_X, np.zeros((2, 2, 2), np.int32)), (2,), _CHAIN_SOURCE.tolist(),
             lambda src, gpu: bool(np.array_equal(gpu, _CHAIN_X.reshape(-1).astype(np.float64))),
             f"{H200_3}: this kernel (the fuzz's shrunk reproducer, x = 1 there) stored x on every lane, -7 "
             "and INT32_MIN included; 16-lane kernels of the chain with a literal 0 or `0 - x`, and of the mirror, "
             "stored x too (70000 for 70000, -47 for -47 in the mirror); int16 and int64 chains were right."),
         _int32_min_max_chain_folded_to_x),
    Rule("negation_lost_in_a_reduction",
         "An integer `tl.min` or `tl.max` along an axis of a negated block (`-x`, `0 - x`): the GPU reduces the "
         "third of every four elements a thread holds along that axis without its negation (semantics S15.31): "
         "`tl.min(-x, axis=1)` of a 16x32 int32 tile is the minimum of -x over the columns i with i % 4 != 2 and "
         "of x over those with i % 4 == 2; along axis 0 with num_warps=1 (four rows per thread, 4 apart) rows "
         "8..11 keep their sign. `-tl.max(x)`, `tl.min(~x)` and `tl.max(x)` are right. A `tl.sum` of `-x` is held "
         "to the same rewrite (the same in-thread reduction; not yet seen on the GPU). minitriton negates every "
         "element, as the source says.",
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             f"x = tl.load(x_ptr + pid * 512 + {TILE})",
             f"tl.store(out_ptr + pid * 512 + {TILE}, tl.min(-x, axis=1, keep_dims=True))"]),
             (_RED_X, np.zeros((2, 16, 32), np.float32)), (2,), _RED_SOURCE.tolist(),
             lambda src, gpu: same_all(gpu, _RED_GPU) and not same_all(src, _RED_GPU),
             f"{H200_4}: the fuzz's shrunk reproducer (this kernel, random int32 inputs) stored the minimum with "
             "columns 2, 6, 10, ... not negated in 10 of its 32 rows (the others happen to agree); probes of the "
             "same input: `tl.min(-x, axis=1)`, `tl.min(0 - x, axis=1)` and `tl.max(-x, axis=1)` matched that "
             "pattern on all 32 rows with num_warps 4 and 1; `tl.min(-x, axis=0)` with num_warps=1 matched rows "
             "8..11 kept, and was right with num_warps=4 (one row per thread)."),
         _negation_lost_in_a_reduction),
]
