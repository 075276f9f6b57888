"""A tl.dot's own copy of an operand miscompiled where the stored copy is not."""
from __future__ import annotations


import numpy as np

from parity.fuzz.explain import Probe, Rule
from parity.oracle import BF16
from parity.fuzz.rules.common import H200_5, TILE, probe_kernel
from parity.fuzz.rules.floats import abs_dropped, low_16_bits_converted
from parity.fuzz.rules.integers import abs_in_64_bits, guard_always_3, minus_one_arm_dropped, negations_widened


# ---- dot_copy_of_an_operand_miscompiled

# the rewrites of the elementwise rules: what a dot's own copy of an operand may compute instead, element by element
_OPERAND_REWRITES = (guard_always_3, minus_one_arm_dropped, negations_widened, low_16_bits_converted,
                     abs_in_64_bits, abs_dropped)
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


# ---- the probes' inputs

_COPY_H = np.where(np.arange(1024) * 7919 % 8 < 2, -1, np.arange(1024) * 31 % 3 - 1).astype(np.int16).reshape(2, 16, 32)
_COPY_BF16 = BF16(np.choose(_COPY_H + 1, [0xBFC0, 0x3F00, 0x3FC0]).astype(np.uint16))  # -1.5, 0.5, 1.5


RULES = [
    Rule("dot_copy_of_an_operand_miscompiled",
         "A tl.dot whose result is not the product of the operands the same kernel stores: the compiler "
         "computes the dot's own copy of an operand (in the dot's operand layout) apart from the stored copy, and "
         "a miscompile of another rule (a division guard's other arm, S15.29, above all) hits different "
         "elements there. Checked exactly: each row (or column) of the dot that differs is the product with "
         "some elements of one operand taking what such a rule computes there. The fuzz draws no integer "
         "division in dot operands on the GPU since 2026-12-02. minitriton multiplies the operands it stores.",
         Probe(probe_kernel("x_ptr, h_ptr, y_ptr, v_ptr, y_out_ptr, out_ptr", [
             "pid = tl.program_id(0)",
             f"x = tl.load(x_ptr + pid * 512 + {TILE})",
             f"h = tl.load(h_ptr + pid * 512 + {TILE}, mask={TILE} < 511, other=2.0)",
             "v = (tl.minimum(tl.maximum(h, -32768.0), 32640.0).to(tl.int16) % tl.where((x.to(tl.int32) == 0) | "
             "(x.to(tl.int32) == -1), 3, x.to(tl.int32)) >> (x & 31)).to(tl.int8)",
             "y = tl.load(y_ptr + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])",
             f"tl.store(v_ptr + pid * 512 + {TILE}, v)",
             "tl.store(y_out_ptr + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], y)",
             f"tl.store(out_ptr + pid * 512 + {TILE}, tl.dot(v, y))"]),
             (np.ones((2, 16, 32), np.int16), _COPY_BF16, np.ones((2, 32, 32), np.int8), np.zeros((2, 16, 32), np.int8),
              np.zeros((2, 32, 32), np.int8), np.zeros((2, 16, 32), np.int32)),
             (2,), [0.0] * 1024,
             lambda src, gpu: bool(np.any(gpu != src) and np.all((gpu <= 0) & (gpu >= -32) & (gpu == np.round(gpu)))),
             f"{H200_5} 1846161072: the fuzz's shrunk reproducer (this kernel with x = 1, h a bf16 tile whose "
             "int16 values are -1, 0 and 1, y = 1; the source's dot is 0 everywhere, as `h % 1 >> 1` is 0) stored "
             "-2 on 480 of 1,024 lanes while the stored operand was 0 everywhere: -1 = (-1 % 3) >> 1 taken on two "
             "elements of those rows. The H200, 2026-12-02: this kernel on its own tile (-1.5 on half of the "
             "lanes, 0.5 and 1.5) stored -5, -4 or -3 on 512 of 1,024 lanes; the same kernel loading h as int16 "
             "(no clamp) stored 0 everywhere. "
             "The H200, Triton 3.6.0, 2026-11-29: the dot of `tl.where(pid >= x, s, y).to(tl.float32)` and "
             "`(z % guard(z)).to(tl.float32)` stored 9.0 where the product of the stored operands is 0.0."),
         _dot_copy_of_an_operand_miscompiled),
]
