"""Rules for float miscompiles: narrow-float conversions, float remainders, FMA contraction, abs of remainders."""
from __future__ import annotations

import ast

import numpy as np

from parity.fuzz.explain import Probe, Rule, expression, replace_node, same_all
from parity.fuzz.dtypes import FLOATS, INTS
from parity.fuzz.source import dotted, statements
from parity.fuzz.types import combine
from parity.oracle import BF16
from parity.fuzz.rules.common import H200, H200_2, H200_3, H200_4, H200_5, LINEAR, TL_OF, calls, probe_kernel, reached, \
    to_narrow_float


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


def low_16_bits_converted(typed) -> bool:
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
    return view.explained_by(low_16_bits_converted)


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
    inexact = [(n, n.func.value, lambda v, t=view.typed.of(n): to_narrow_float(t, v) != v) for n in convs]
    return bool(convs) and view.explained_by(_converted_to_fp32, reached(view, inexact))


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
    return [n for n in calls(typed, "tl.abs") if len(n.args) == 1 and isinstance(n.args[0], ast.BinOp)
            and isinstance(n.args[0].op, ast.Mod) and typed.of(n.args[0]) in FLOATS
            and _never_negative(typed, n.args[0].left)]


def abs_dropped(typed) -> bool:
    calls = _abs_of_never_negative_remainders(typed)
    return any([replace_node(typed, n, n.args[0]) for n in calls])


def _abs_of_a_remainder_dropped(view) -> bool:
    """Every differing lane holds what the kernel computes with each `tl.abs` of a float remainder of a
    never-negative dividend left out (the remainder the GPU computes is negative there)."""
    return bool(_abs_of_never_negative_remainders(view.typed)) and view.explained_by(abs_dropped)


# ---- the probes' inputs

_I8 = np.resize(np.array([-47, -1, 0, 1, 100, -128, 127, 5, -73, -91, -40, 20, -20, 2, -2, 64], np.int8), 1024)
_FX = np.resize(np.array([-3., -2.5, -0.0, 0.0, 3.0, 5.1, -7.5, -16256., 1e30, -1e30, np.inf, np.nan, 1e-45, -1e-45,
                          0.75, -0.75], np.float32), 1024)
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


_FMA_TWO, _FMA_ONE = _fma_sides()


RULES = [
    Rule("narrow_float_of_low_16_bits",
         "The GPU converts a uint32 that holds a sign-extended int8 or int16 (`x.to(tl.uint32)`, `x - tl.full(.., "
         "0, tl.uint32)`, `0 - x`, `tl.where(c, tl.full(.., 0, tl.uint32), x)`) to fp16/bf16 from its low 16 bits "
         "alone, by `.to` or by the store into an fp16/bf16 output: int8 -47 becomes 65489, 65536 in bf16 and "
         "65504 in fp16, where the 32-bit value "
         "(4294967249) converts to 2**32 and inf; also where fp16/bf16 arithmetic converts a uint32 operand "
         "(`tl.maximum(fp16 0.0, h.to(tl.uint32))`; a comparison in fp16 is held to the same rewrite, not yet seen "
         "on the GPU). The compiler narrows the integer to 16 bits before the "
         "conversion (semantics S15.26). minitriton converts the whole integer, rounding once, as the source says.",
         Probe(probe_kernel("x_ptr, out_ptr", [LINEAR, "x = tl.load(x_ptr + offs)",
                                          "tl.store(out_ptr + offs, x.to(tl.uint32).to(tl.bfloat16))"]),
               (_I8, BF16(np.zeros(1024, np.uint16))), (1,), to_narrow_float("bf16", _I8.astype(np.int64) % 2 ** 32).tolist(),
               lambda src, gpu: bool(np.array_equal(gpu, np.where(
                   _I8 < 0, to_narrow_float("bf16", _I8.astype(np.int64) % 2 ** 16), src))),
               f"{H200} (one kernel per expression, 1,024 lanes, int8 inputs -128..127): `x.to(tl.uint32)` to "
               "bf16 (by `.to` and by the store) and to fp16, `x.to(tl.uint64)` to bf16 and `(0u32 - x)` to fp16 "
               "stored the conversion of the low 16 bits on every lane where they differ from the whole value; "
               "int16 and int32 sources, uint32 loads, `u32 + 11` and conversions to fp32 were right. Seen in "
               "the fuzz runs of 2026-11-29 and 2026-12-01 (8 distinct shrunk kernels). "
               f"{H200_3}: "
               "`tl.where(c, tl.full(.., 0, tl.uint32), h).to(tl.float16)` with int16 h = -13780 gave 51744 "
               "(the conversion of 51756, its low 16 bits) where the source gives inf. "
               f"{H200_5} 1916544687: the same for a uint32 operand of fp16 arithmetic, "
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
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])",
             "tl.store(out_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], "
             "(x << (tl.full((2, 2), 29, tl.uint32) & 31)).to(tl.float16))"]),
             (np.ones((2, 2, 2), np.int8), np.zeros((2, 2, 2), np.float32)), (2,), [float("inf")] * 8,
             lambda src, gpu: bool(np.all(gpu == 2.0 ** 29)),
             f"{H200_5} 351809208: this kernel (the fuzz's shrunk reproducer) stored 536870912.0 on all 8 "
             "lanes, where the source's fp16 conversion is inf."),
         _narrow_float_conversion_skipped),
    Rule("float_mod_by_a_computed_power_of_two",
         "A float `%` whose divisor is an expression of constants equal to 2**k, k >= 0 (for instance "
         "`tl.minimum(tl.maximum(tl.full(.., 1.0, ..), lo), hi)`): the compiler folds the divisor to a constant "
         "and rewrites frem by such a constant as copysign(x - trunc(x / c) * c, x), so a zero remainder keeps "
         "the sign of x (-3.0 % 1.0 is -0.0; semantics S15.24). minitriton applies that rule to divisors written "
         "as a literal or `tl.full`; it does not track constants computed from them, and gives the run-time "
         "lowering's +0.0 (S15.1).",
         Probe(probe_kernel("x_ptr, out_ptr", [
             LINEAR, "x = tl.load(x_ptr + offs)",
             "tl.store(out_ptr + offs, x % tl.minimum(tl.maximum(tl.full((1024,), 1.0, tl.float32), "
             "-9.223372036854776e+18), 9.223371487098962e+18))"]),
             (_FX, np.zeros(1024, np.float32)), (1,), _mod_run_time(_FX).tolist(),
             lambda src, gpu: same_all(gpu, np.where((src == 0) & np.signbit(_FX), -0.0, src)),
             f"{H200} (1,024 lanes): this kernel stored -0.0 for x in (-3.0, -0.0, -16256.0, -1e30), +0.0 for "
             "(0.0, 3.0, 1e30); so did `x % 1.0`, `x % -1.0`, `x % 2.0`, `x % 65536.0`, `x % tl.full(.., 1.0, ..)` "
             "in fp16, bf16, fp32 and fp64; `x % 3.0`, `x % 0.1` and a loaded divisor follow S15.1 (+0.0)."),
         _float_mod_by_a_computed_power_of_two),
    Rule("fma_contraction",
         "The GPU fuses a float `a * b + c` into one FMA (one rounding) where the source rounds the product "
         "first; the fuzz generator does not write such adds of rounded products, but shrinking a kernel can "
         "(a scalar kernel argument in place of an exact operand). minitriton rounds twice, as the source says.",
         Probe(probe_kernel("x_ptr, s, out_ptr", ["offs = tl.arange(0, 16)", "x = tl.load(x_ptr + offs)",
                                             "tl.store(out_ptr + offs, x * s + 1.0)"]),
               (_FMA_X, _FMA_S, np.zeros(16, np.float32)), (1,), _FMA_TWO.tolist(),
               lambda src, gpu: same_all(gpu, _FMA_ONE) and not same_all(src, _FMA_ONE),
               f"{H200}: this kernel stored the single-rounded fma(x, s, 1.0) on every lane (5 of 16 differ from "
               "the two roundings); so did `(x * s) + y`."),
         _fma_contraction),
    Rule("fma_contraction_in_a_remainder",
         "A float `(a * b) % c` with a constant power-of-two c: the compiler rewrites the remainder as "
         "x - trunc(x / c) * c (semantics S15.24) and contracts the product into that subtraction, so the "
         "remainder is taken of the exact product a * b, not of the product rounded to the type (semantics S15.30). minitriton "
         "rounds the product first, as the source says.",
         Probe(probe_kernel("a_ptr, b_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "offs = pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :]",
             "a = tl.load(a_ptr + offs)",
             "b = tl.load(b_ptr + offs)",
             "tl.store(out_ptr + offs, b * a % tl.full((2, 2), 1.0, tl.float16))"]),
             (np.full((2, 2, 2), 711.268310546875, np.float32), np.full((2, 2, 2), 9, np.uint32),
              np.zeros((2, 2, 2), np.float16)), (2,), [0.4150390625] * 8,
             lambda src, gpu: bool(np.all(gpu == 0.414794921875)),
             f"{H200_2}: this kernel (the fuzz's shrunk reproducer) stored 0.414794921875 (the remainder of the "
             "exact product 6401.414794921875) on every lane; the source rounds the product to fp32 first "
             "(6401.4150390625), remainder 0.4150390625."),
         _fma_contraction_in_a_remainder),
    Rule("remainder_of_infinities_converted_to_an_integer",
         "A float `x % x` whose value is converted to an integer (by `.to`, or by the store into an integer "
         "output; through `tl.maximum`/`tl.minimum` too): for an infinite x the GPU's remainder is NaN (it "
         "converts to 0), where the lowering of S15.1 gives x for an infinite divisor, as the GPU does when the "
         "remainder stays a float (semantics S15.32). A conversion of an infinity to an integer is poison in "
         "LLVM, so the compiler drops the select that returns x. minitriton computes the source: inf % inf is "
         "inf, and inf converts to the integer type's maximum.",
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 2 + tl.arange(0, 2))",
             "tl.store(out_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], "
             "tl.minimum(tl.maximum(x[None, :] % x[None, :], 0.0), 4294967040.0))"]),
             (np.full((2, 2), np.inf, np.float16), np.zeros((2, 2, 2), np.uint32)), (2,), [4294967040.0] * 8,
             lambda src, gpu: bool(np.all(gpu == 0.0)),
             f"{H200_4}: this kernel (the fuzz's shrunk reproducer) stored 0 on every lane; so did `x % x` and "
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
         Probe(probe_kernel("x_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             "x = tl.load(x_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])",
             "tl.store(out_ptr + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], "
             "tl.abs(x % tl.full((2, 2), 1.5, tl.float16)))"]),
             (np.full((2, 2, 2), 3792463295, np.uint32), np.zeros((2, 2, 2), np.float16)), (2,), [128.0] * 8,
             lambda src, gpu: bool(np.all(gpu == -128.0)),
             f"{H200_5} 283048162: this kernel (the fuzz's shrunk reproducer) stored -128.0 on all 8 lanes, "
             "where the source's remainder is -128.0 and its abs 128.0."),
         _abs_of_a_remainder_dropped),
]
