"""Fuzz fragments as kernels, and the verdict on one fragment's outputs from both sides.

`kernel_case(frags)` packs fragments into one kernel (each stores to its own outputs); `judge` compares one
fragment's outputs: exact outputs bit for bit (on the interpreter target +0.0 equals -0.0), a root output
(exp/log/sqrt/`/`/sum/dot/FMA, see gen.py) within a bound computed from its operands, which are themselves
compared exactly. A `Verdict` names the outputs that differ and the first lane where each does, or the side
that raised. `evaluate` runs many fragments packed per kernel and splits a packed kernel that fails on either
side until the fragment at fault runs alone.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from parity.compare import exact, exact_any_zero, within
from parity.fuzz.dtypes import NP
from parity.fuzz.fragment import PROGRAMS
from parity.fuzz.source import PART
from parity.oracle import BF16, Case
from parity.runner import run_both

EPS = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24, "fp64": 2.0 ** -53}
TINY = 1e-37
ACC_MAX = {"fp16": 65504.0, "fp32": float(np.finfo(np.float32).max), "fp64": float(np.finfo(np.float64).max)}
HEADER = "import triton\nimport triton.language as tl\n\n"


def _arg(arr, dtype):
    arr = np.ascontiguousarray(arr)        # the kernel's offsets address its arguments as C-contiguous blocks
    return BF16(arr) if dtype == "bf16" else arr


def _zeros(o):
    shape = (PROGRAMS,) + tuple(o.shape)
    return BF16(np.zeros(shape, np.uint16)) if o.dtype == "bf16" else np.zeros(shape, NP[o.dtype])


def kernel_case(frags) -> tuple:
    """(Case, slots): slots[j] maps fragment j's output names to the kernel's argument indices."""
    params, args, body, slots = [], [], [], []
    for j, f in enumerate(frags):
        pre = f"f{j}_"
        entries = [(name, _arg(arr, dtype), None) for name, arr, dtype in f.inputs] + \
            [(o.name, _zeros(o), o.name) for o in f.outputs] + [(name, value, None) for name, value in f.scalars]
        # a packed kernel made one fragment keeps the packed kernel's argument order
        entries.sort(key=lambda e: int(m.group(1)) if (m := PART.match(e[0])) else -1)
        slot = {}
        for name, arg, output in entries:
            if output is not None:
                slot[output] = len(args)
            params.append(name.replace("__F__", pre))
            args.append(arg)
        body += ["    " * (1 + indent) + text.replace("__F__", pre) for indent, text in f.lines]
        slots.append(slot)
    src = HEADER + "@triton.jit\ndef fuzz_kernel(" + ", ".join(params) + "):\n    pid = tl.program_id(0)\n" + \
        "\n".join(body) + "\n"
    return Case(src, "fuzz_kernel", (PROGRAMS,), tuple(args)), slots


def packed_fragment(frags, at, verdict):
    """The kernel `kernel_case(frags)` builds, as one fragment (fragment j's names get the prefix `k{j}_`), with
    `verdict` (fragment `at`'s) renamed to it: for a difference that only shows among the other fragments'
    code. The block shape is fragment `at`'s."""
    def renamed(j, name):
        return name.replace("__F__", f"__F__k{j}_")
    lines, inputs, scalars, outputs = [], [], [], []
    for j, f in enumerate(frags):
        lines += [(indent, renamed(j, text)) for indent, text in f.lines]
        inputs += [(renamed(j, name), arr, dtype) for name, arr, dtype in f.inputs]
        scalars += [(renamed(j, name), value) for name, value in f.scalars]
        outputs += [dataclasses.replace(o, name=renamed(j, o.name), operands=tuple(renamed(j, n) for n in o.operands))
                    for o in f.outputs]
    frag = dataclasses.replace(frags[at], lines=lines, inputs=inputs, scalars=scalars, outputs=outputs)
    return frag, dataclasses.replace(verdict, bad={renamed(at, k): v for k, v in verdict.bad.items()}, group=())


def f64(a):
    """Values as float64 (bf16 decoded)."""
    return a.to_float().astype(np.float64) if isinstance(a, BF16) else np.asarray(a, np.float64)


def bound(o, ref_outs):
    """The allowed |difference| of a root output, from the reference's operand values."""
    r = np.abs(f64(ref_outs[o.name]))
    ops = [f64(ref_outs[n]) for n in o.operands]
    e = EPS.get(o.dtype, 2.0 ** -24)
    with np.errstate(all="ignore"):
        if o.kind == "exp":
            return r * (16 + 2 * np.abs(ops[0])) * e + TINY
        if o.kind == "log":
            return (2.0 ** -21 if o.dtype == "fp32" else 2.0 ** -50) + 8 * e * r
        if o.kind == "sqrt":
            return 4 * e * r + 1e-30
        if o.kind == "div":
            return 4 * e * r + 2.0 ** -120
        if o.kind == "sum":
            axis = o.info["axis"] + 1
            n = ops[0].shape[axis]
            return 2 * n * e * np.abs(ops[0]).sum(axis=axis, keepdims=True) + 2 * e * r + TINY
        if o.kind == "dot":
            a, b = np.abs(ops[0]), np.abs(ops[1])
            acc_e = EPS[o.info.get("acc", "fp32")]
            magnitude = a @ b
            limit = 2 * o.info["K"] * acc_e * magnitude + (2 * e * r if o.dtype == "fp16" else 0) + TINY
            # where |a| @ |b| reaches the accumulator's largest value, whether a partial sum overflows depends
            # on the order of accumulation (the H200 gave inf and 3.2e38 where minitriton gave 3.2e38 and inf)
            return np.where(magnitude >= ACC_MAX[o.info.get("acc", "fp32")], np.inf, limit)
        if o.kind == "fma":
            return e * np.abs(ops[0] * ops[1]) + 2 * e * r + TINY
    raise ValueError(f"unknown root kind {o.kind}")


def _overflow_zone_cleared(m, r, limit):
    """`m` and `r` (as float64) with 0.0 on both sides at the lanes whose bound is infinite (an overflow whose occurrence
    depends on the order of accumulation, see `bound`), unless one side is NaN there."""
    zone = np.isposinf(limit)
    if not np.any(zone):
        return m, r
    a, b = f64(m), f64(r)
    zone = zone & ~np.isnan(a) & ~np.isnan(b)
    return np.where(zone, 0.0, a), np.where(zone, 0.0, b)


def differing(m, r, kind="exact", limit=None, any_zero=False):
    """The boolean mask of lanes where minitriton's `m` and the reference's `r` differ: bits (any NaN equals
    any NaN; with `any_zero`, +0.0 equals -0.0), or |m - r| > limit for a bounded output."""
    if kind != "exact":
        a, b = f64(m), f64(r)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (np.isnan(a) & np.isnan(b)) | (a == b) | (np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= limit))
        return ~ok
    bm, br = (m.array, r.array) if isinstance(m, BF16) else (np.asarray(m), np.asarray(r))
    if isinstance(m, BF16) or bm.dtype.kind == "f":
        a, b = f64(m), f64(r)
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[bm.dtype.itemsize]
        same = np.ascontiguousarray(bm).view(width) == np.ascontiguousarray(br).view(width)
        same |= np.isnan(a) & np.isnan(b)
        if any_zero:
            same |= a == b
        return ~same
    return bm != br


@dataclass
class Verdict:
    status: str                   # match, mismatch, invalid, unresolved
    detail: str = ""
    outputs: int = 0
    bounded: int = 0
    bad: dict = field(default_factory=dict)    # output name (with __F__) -> first differing lane (tuple)
    raised: tuple = ()                          # (side, exception type) when only one side raised
    group: tuple = ()                           # the fragments of the kernel it was judged in (their indices)

    def signature(self) -> tuple:
        """What a shrunk fragment must keep doing to count as the same mismatch."""
        return ("raised",) + self.raised if self.raised else ("differs",) + tuple(sorted(self.bad))


def judge(frag, slot, mt, ref, target="cuda") -> Verdict:
    if mt.error or ref.error:
        if mt.error and ref.error:
            return Verdict("invalid", f"both raised: minitriton {_line(mt.error)}; triton {_line(ref.error)}")
        side, res = ("minitriton", mt) if mt.error else ("triton", ref)
        return Verdict("mismatch", f"only {side} raised: {_line(res.error)}",
                       raised=(side, res.error_type or _line(res.error).split("(")[0]))
    ref_outs = {name: ref.args[i] for name, i in slot.items()}
    problems, bounded, bad = [], 0, {}
    for o in frag.outputs:
        m, r = mt.args[slot[o.name]], ref.args[slot[o.name]]
        if o.kind == "exact":
            res = exact(m, r) if target == "cuda" else exact_any_zero(m, r)
            limit = None
        else:
            bounded += 1
            limit = bound(o, ref_outs)
            m, r = _overflow_zone_cleared(m, r, limit)
            res = within(m, r, limit)
        if not res.ok:
            problems.append(f"{o.name.replace('__F__', '')} ({o.dtype}, {o.kind}): {res.detail}")
            mask = differing(m, r, o.kind, limit, any_zero=target != "cuda")
            where = np.argwhere(mask)
            bad[o.name] = tuple(int(i) for i in where[0]) if len(where) else ()
    return Verdict("mismatch" if problems else "match", "; ".join(problems), len(frag.outputs), bounded, bad)


def _line(text):
    """One line for a report: the exception's repr, shortened in the middle (a CompilationError's repr is the
    whole kernel source; its reason is at the end), plus the compiler's stderr diagnostics when captured."""
    if not text:
        return ""
    first = " ".join(text.strip().splitlines()[0].split())
    if len(first) > 400:
        first = first[:120] + " ... " + first[-280:]
    if "[compiler stderr]" in text:
        diag = " | ".join(ln.strip() for ln in text.split("[compiler stderr]", 1)[1].strip().splitlines()[:4])
        first += " [compiler stderr: " + diag[:400] + "]"
    return first


def run_alone(frags, pools, target, stats) -> list:
    """(Verdict, minitriton Result, reference Result) for each fragment, one kernel each, in parallel."""
    built = [kernel_case([f]) for f in frags]
    mt, ref = run_both(pools, target, [c for c, _ in built])
    stats["kernels"] = stats.get("kernels", 0) + len(built)
    return [(judge(f, slots[0], m, r, target), m, r) for f, (_, slots), m, r in zip(frags, built, mt, ref)]


def evaluate(frags, pools, target, per_kernel, stats, deadline=None):
    """Verdict per fragment. A packed kernel that raises on either side is split in halves and re-run
    until the fragment at fault runs alone (after `deadline`, the rest get "unresolved")."""
    verdicts = [None] * len(frags)
    groups = [list(range(i, min(i + per_kernel, len(frags)))) for i in range(0, len(frags), per_kernel)]
    while groups:
        if deadline is not None and time.monotonic() > deadline and stats.get("kernels"):
            for g in groups:
                for i in g:
                    verdicts[i] = Verdict("unresolved", "not run: the fuzz time budget ran out while isolating "
                                                        "a failing packed kernel")
            break
        built = [kernel_case([frags[i] for i in g]) for g in groups]
        mt, ref = run_both(pools, target, [c for c, _ in built])
        stats["kernels"] = stats.get("kernels", 0) + len(built)
        split = []
        for g, (case, slots), m, r in zip(groups, built, mt, ref):
            if (m.error or r.error) and len(g) > 1:
                split += [g[:len(g) // 2], g[len(g) // 2:]]
                continue
            for i, slot in zip(g, slots):
                verdicts[i] = judge(frags[i], slot, m, r, target)
                verdicts[i].group = tuple(g)
        groups = split
    return verdicts
