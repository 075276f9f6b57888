"""Comparisons between minitriton's arrays and real Triton's, and the per-dtype tolerance table.

A comparator takes (minitriton array, reference array) and returns an `Outcome` (ok, a one-number error
for the table, a short detail). Exact means bit for bit, except that any NaN equals any NaN (payloads are
not specified); bf16 arrays (`BF16`) compare their bits. Where the GPU is approximate the bounds are the
measured ones (docs/semantics.md S1.33, S12), with a little headroom; see TOLERANCES and parity/README.md.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from parity.oracle import BF16, ulp_distance

# What each kind of value is compared with: the documented tolerance table (README.md shows it too).
TOLERANCES = {
    "integers, bools, masks, indices, program ids, atomics": ("exact", "exact"),
    "loads/stores, where, maximum/minimum, abs, neg, casts (float->int in range, fp16/bf16 RTNE/RTZ)":
        ("exact", "exact"),
    "fp16/fp32/fp64 + - * (no rounded product feeding an add)": ("exact", "exact"),
    "an add of a rounded product (FMA contraction)": ("exact", "<= ulp(a*b) + 2 ulp(r)"),
    "bf16 arithmetic (fp32, then RTNE)": ("expected divergence", "exact"),
    "exp fp32": ("exact", "8 ulp (probe); fuzz (16 + 2|x|) eps |r|"),
    "log, /, sin fp32": ("exact", "2 ulp (probe); fuzz log 2^-21 + 8 eps |r|, / 4 eps |r|"),
    "sqrt fp32": ("exact", "1 ulp (probe); fuzz 4 eps |r|"),
    "float sums over n terms": ("2 n eps sum|x|", "2 n eps sum|x|"),
    "tl.dot over K (fp16/bf16/fp32; TF32-truncated inputs on the GPU)": ("2 K eps |a|@|b|", "2 K eps |a|@|b|"),
    "kernels/ outputs": ("kernels/tolerances.py per dtype", "kernels/tolerances.py per dtype"),
    "fuzz outputs": ("exact, +0.0 == -0.0", "bit exact"),
}

MATH_ULPS = {"exp": 8, "log": 2, "sqrt": 1, "sin": 2, "cos": 2, "div": 2, "exp2": 8, "log2": 2, "rsqrt": 2}


@dataclass
class Outcome:
    ok: bool
    error: float = 0.0          # the table's "max err": mismatching elements (exact), ulps, or |diff|
    detail: str = ""


def _bits(a):
    return a.array if isinstance(a, BF16) else np.asarray(a)


def _floatview(a):
    """Values as float64 (bf16 decoded), for tolerances and messages."""
    with np.errstate(invalid="ignore"):
        if isinstance(a, BF16):
            return a.to_float().astype(np.float64)
        a = np.asarray(a)
        return a.astype(np.float64) if a.dtype.kind in "fiub" else a


def _nan_mask(a):
    if isinstance(a, BF16):
        b = a.array
        return ((b & 0x7F80) == 0x7F80) & ((b & 0x007F) != 0)
    a = np.asarray(a)
    return np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)


def _shape_check(mt, ref):
    bm, br = _bits(mt), _bits(ref)
    if bm.shape != br.shape or bm.dtype != br.dtype or isinstance(mt, BF16) != isinstance(ref, BF16):
        return Outcome(False, float("inf"), f"shape/dtype differ: {bm.shape} {bm.dtype} vs {br.shape} {br.dtype}")
    return None


def _where(bad, mt, ref, limit=4):
    idx = np.argwhere(bad)[:limit]
    fm, fr = _floatview(mt), _floatview(ref)
    return "; ".join(f"at {tuple(int(i) for i in b)}: minitriton {fm[tuple(b)]!r} vs triton {fr[tuple(b)]!r}"
                     for b in idx)


def exact(mt, ref) -> Outcome:
    """Bit for bit (any NaN equals any NaN)."""
    bad = _shape_check(mt, ref)
    if bad:
        return bad
    bm, br = _bits(mt), _bits(ref)
    if bm.dtype.kind == "f":
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[bm.dtype.itemsize]
        same = np.ascontiguousarray(bm).view(width) == np.ascontiguousarray(br).view(width)
    else:
        same = bm == br
    same = same | (_nan_mask(mt) & _nan_mask(ref))
    n = int(np.size(same) - np.count_nonzero(same))
    if n == 0:
        return Outcome(True, 0.0)
    return Outcome(False, float(n), f"{n} of {np.size(same)} differ: {_where(~same, mt, ref)}")


def exact_any_zero(mt, ref) -> Outcome:
    """Bit for bit, except that +0.0 equals -0.0 (and any NaN any NaN): for the interpreter, whose NumPy
    min/max/sum order signed zeros differently from the GPU (probes minmax_signed_zeros, sum_of_negative_zeros)."""
    o = exact(mt, ref)
    if o.ok or _bits(mt).dtype.kind != "f" and not isinstance(mt, BF16):
        return o
    a, b = _floatview(mt), _floatview(ref)
    same = (a == b) | (_nan_mask(mt) & _nan_mask(ref))
    n = int(np.size(same) - np.count_nonzero(same))
    if n == 0:
        return Outcome(True, 0.0, "equal up to the sign of zero")
    return Outcome(False, float(n), f"{n} of {np.size(same)} differ: {_where(~same, mt, ref)}")


def ulps(n: float):
    """|mt - ref| <= n units in the last place of the array's float type (NaN only equals NaN)."""
    def check(mt, ref):
        bad = _shape_check(mt, ref)
        if bad:
            return bad
        if isinstance(mt, BF16):
            a, b = mt.array.astype(np.int16), ref.array.astype(np.int16)
            d = np.abs(np.where(a < 0, -32768 - a.astype(np.int64), a).astype(np.int64)
                       - np.where(b < 0, -32768 - b.astype(np.int64), b).astype(np.int64)).astype(np.float64)
            nm, nr = _nan_mask(mt), _nan_mask(ref)
            d = np.where(nm & nr, 0.0, np.where(nm ^ nr, np.inf, d))
        else:
            d = ulp_distance(mt, ref, np.asarray(mt).dtype)
        worst = float(d.max()) if d.size else 0.0
        ok = bool(np.all(d <= n))
        return Outcome(ok, worst, "" if ok else f"max {worst:g} ulp > {n}: {_where(d > n, mt, ref)}")
    check.describe = f"<= {n} ulp"
    return check


def close(rtol: float, atol: float):
    """|mt - ref| <= atol + rtol * |ref| (NaN only equals NaN; equal infinities match)."""
    def check(mt, ref):
        return within(mt, ref, atol + rtol * np.abs(np.nan_to_num(_floatview(ref), posinf=0, neginf=0)))
    check.describe = f"rtol {rtol:g}, atol {atol:g}"
    return check


def within(mt, ref, bound) -> Outcome:
    """|mt - ref| <= bound elementwise (bound: array or scalar); NaN only equals NaN; infinities must agree."""
    bad = _shape_check(mt, ref)
    if bad:
        return bad
    a, b = _floatview(mt), _floatview(ref)
    nm, nr = _nan_mask(mt), _nan_mask(ref)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(a == b, 0.0, np.abs(a - b))  # equal infinities differ by 0, not NaN
        ok = (nm & nr) | (a == b) | (np.isfinite(a) & np.isfinite(b) & (diff <= bound))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # an all-NaN slice: both sides NaN everywhere
        worst = float(np.nanmax(np.where(nm & nr, 0.0, np.where(nm ^ nr, np.inf, diff)))) if diff.size else 0.0
    good = bool(np.all(ok))
    return Outcome(good, worst, "" if good else f"max |diff| {worst:.3g} over the bound: {_where(~ok, mt, ref)}")


def by_parts(parts):
    """Compare slices of a flat output with their own comparators: parts = [(slice, comparator), ...]."""
    def check(mt, ref):
        outs = []
        for sl, cmp in parts:
            pm = BF16(mt.array.reshape(-1)[sl]) if isinstance(mt, BF16) else np.asarray(mt).reshape(-1)[sl]
            pr = BF16(ref.array.reshape(-1)[sl]) if isinstance(ref, BF16) else np.asarray(ref).reshape(-1)[sl]
            outs.append((sl, cmp(pm, pr)))
        bad = [(sl, o) for sl, o in outs if not o.ok]
        worst = max((o.error for _, o in outs), default=0.0)
        if not bad:
            return Outcome(True, worst)
        return Outcome(False, worst, "; ".join(f"[{sl.start}:{sl.stop}] {o.detail}" for sl, o in bad))
    return check


def describe(cmp) -> str:
    """A short name for the table's comparison column."""
    if cmp is exact:
        return "exact"
    return getattr(cmp, "describe", getattr(cmp, "__name__", "custom"))
