"""Judging: run probes and kernel cases on both sides and turn each pair of results into a table row.

Statuses: `match`; `expected-divergence` (the interpreter is known to differ from the GPU: the reason is in
the row); `known-gap` (minitriton does not yet do what the GPU does: listed, explained); `MISMATCH` (an
unexplained disagreement, or minitriton differing from a value docs/semantics.md gives); `ERROR` (a case
that could not run on either side); `skipped(reason)`. Only MISMATCH and ERROR fail a run.
"""
from __future__ import annotations

import re
import threading
from dataclasses import asdict, dataclass

import numpy as np

from parity.compare import BF16, describe, exact
from parity.oracle import Case, Descriptor

FAILING = ("MISMATCH", "ERROR")


@dataclass
class Row:
    section: str
    case: str
    rule: str = ""
    dtype: str = ""
    comparison: str = ""
    max_err: str = ""
    status: str = "match"
    detail: str = ""

    def as_dict(self):
        return asdict(self)


def _dtype_name(a) -> str:
    if isinstance(a, BF16):
        return "bf16"
    return {"float32": "fp32", "float16": "fp16", "float64": "fp64"}.get(np.asarray(a).dtype.name,
                                                                         np.asarray(a).dtype.name)


def _fmt_err(x: float) -> str:
    if x == 0:
        return "0"
    if x == float("inf"):
        return "inf"
    return f"{x:.3g}"


def _arrays(args, kwargs):
    """(position or name, array) of every array argument; a Descriptor's array stands for it."""
    items = list(enumerate(args)) + list(kwargs.items())
    return [(k, v.array if isinstance(v, Descriptor) else v) for k, v in items
            if isinstance(v, (np.ndarray, BF16, Descriptor))]


def _get(result, key):
    value = result.args[key] if isinstance(key, int) else result.kwargs[key]
    return value.array if isinstance(value, Descriptor) else value


def _changed(before, after) -> bool:
    return not exact(after, before).ok


def _first_line(text: str | None, n=300) -> str:
    if not text:
        return ""
    return " ".join(text.strip().splitlines()[0].split())[:n]


def compare_outputs(inputs, mt, ref, comparators):
    """Compare every array argument; returns (failures, worst error, comparison names, dtypes written)."""
    failures, worst, names, dtypes = [], 0.0, set(), []
    for key, original in _arrays(*inputs):
        m, r = _get(mt, key), _get(ref, key)
        if not (_changed(original, m) or _changed(original, r)):
            continue
        cmp = comparators.get(key, exact)
        o = cmp(m, r)
        names.add(describe(cmp))
        dtypes.append(_dtype_name(m))
        worst = max(worst, o.error)
        if not o.ok:
            failures.append(f"arg {key}: {o.detail}")
    return failures, worst, sorted(names), sorted(set(dtypes))


def probe_cases(probes, target):
    """The Case to run for each probe that runs on `target` (None for skipped ones)."""
    return [None if (p.skip or target not in p.targets) else Case(p.source, p.kernel, p.grid, p.args, p.kwargs)
            for p in probes]


def judge_probe(p, mt, ref, target) -> Row:
    row = Row("probes", p.name, p.rule)
    if p.skip:
        row.status, row.detail = "skipped", p.skip
        return row
    if target not in p.targets:
        row.status, row.detail = "skipped", f"not run on the {target} target"
        return row
    divergent = target == "interpreter" and p.interp is not None
    if divergent and p.interp_error:
        return _judge_interp_error_probe(p, mt, ref, row)
    if p.error or p.gpu_error:
        return _judge_error_probe(p, mt, ref, target, row, divergent)
    if mt.error or ref.error:
        row.status = "MISMATCH"
        row.detail = (f"minitriton raised {_first_line(mt.error)}; " if mt.error else "") + \
                     (f"triton raised {_first_line(ref.error)}" if ref.error else "")
        return row
    failures, worst, names, dtypes = compare_outputs((p.args, p.kwargs), mt, ref, p.comparators(target))
    row.dtype, row.comparison, row.max_err = ",".join(dtypes), ",".join(names) or "exact", _fmt_err(worst)
    notes = []
    for key, want in p.expect.items():
        o = exact(_get(mt, key), want)
        if not o.ok:
            row.status = "MISMATCH"
            notes.append(f"minitriton differs from the documented value (arg {key}): {o.detail}")
        if target == "cuda":
            o = exact(_get(ref, key), want)
            if not o.ok:
                row.status = "MISMATCH"
                notes.append(f"the GPU differs from the documented value (arg {key}): {o.detail}")
    if divergent:
        for key, want in p.interp_value.items():
            o = exact(_get(ref, key), want)
            if not o.ok:
                row.status = "MISMATCH"
                notes.append(f"the interpreter no longer gives its documented value (arg {key}): {o.detail}")
        if row.status != "MISMATCH":
            row.status = "expected-divergence" if failures else "match"
            notes.insert(0, p.interp if failures else f"(documented divergence not observed: {p.interp})")
    elif failures:
        row.status = "known-gap" if p.known_gap and row.status != "MISMATCH" else "MISMATCH"
        notes = ([p.known_gap] if p.known_gap else []) + failures + notes
    row.detail = "; ".join(notes)
    return row


def _judge_interp_error_probe(p, mt, ref, row) -> Row:
    """The interpreter target of a probe the interpreter refuses while the GPU runs it: the interpreter must
    still raise, minitriton must run and give the documented values."""
    row.comparison = "error"
    problems = []
    if ref.error is None or not re.search(p.interp_error, ref.error):
        problems.append(f"the interpreter {'raised ' + _first_line(ref.error) if ref.error else 'ran'} "
                        f"(expected /{p.interp_error}/): update the probe")
    if mt.error:
        problems.append(f"minitriton raised {_first_line(mt.error)}")
    else:
        for key, want in p.expect.items():
            o = exact(_get(mt, key), want)
            if not o.ok:
                problems.append(f"minitriton differs from the documented value (arg {key}): {o.detail}")
    if problems:
        row.status, row.detail = "MISMATCH", "; ".join(problems)
    else:
        row.status, row.detail = "expected-divergence", f"{p.interp} (the interpreter raises /{p.interp_error}/)"
    return row


def _judge_error_probe(p, mt, ref, target, row, divergent) -> Row:
    row.comparison = "error"
    pattern = p.error or p.gpu_error
    mt_ok = mt.error is not None and re.search(pattern, mt.error) is not None
    ref_raises = ref.error is not None and re.search(pattern, ref.error) is not None
    problems = []
    if not mt_ok:
        problems.append(f"minitriton {'raised ' + _first_line(mt.error) if mt.error else 'did not raise'} "
                        f"(expected /{pattern}/)")
    if p.error or target == "cuda":
        if not ref_raises:
            problems.append(f"triton {'raised ' + _first_line(ref.error) if ref.error else 'did not raise'} "
                            f"(expected /{pattern}/)")
        if problems:
            row.status = "known-gap" if p.known_gap and mt_ok is False and ref_raises else "MISMATCH"
            row.detail = "; ".join(([p.known_gap] if row.status == "known-gap" else []) + problems)
        else:
            row.detail = f"both raise /{pattern}/"
        return row
    # the interpreter target, where the GPU raises but the interpreter runs
    if ref.error is not None:
        problems.append(f"the interpreter now raises ({_first_line(ref.error)}); update the probe")
    if problems:
        row.status = "known-gap" if p.known_gap and not mt_ok and ref.error is None else "MISMATCH"
        row.detail = "; ".join(([p.known_gap] if row.status == "known-gap" else []) + problems)
    else:
        row.status, row.detail = "expected-divergence", (p.interp or "") + f" (minitriton raises /{pattern}/)"
    return row


def run_both(pools, target, cases):
    """Run the same cases on the minitriton pool and the target's pool at the same time: (mt, ref) lists."""
    out, errors = {}, []

    def go(name):
        try:
            out[name] = pools[name].run(cases)
        except Exception as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(e)
    threads = [threading.Thread(target=go, args=(n,)) for n in ("minitriton", target)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out["minitriton"], out[target]


def run_pairs(cases, pools, target):
    """Run cases (None = skip) on both pools; returns [(mt, ref)] (None where skipped)."""
    live = [c for c in cases if c is not None]
    mt, ref = run_both(pools, target, live)
    mt, ref = iter(mt), iter(ref)
    return [None if c is None else (next(mt), next(ref)) for c in cases]


def judge_kernel(kc, mt, ref, target) -> Row:
    """A kernels/ case: every returned array compared with its comparator."""
    row = Row("kernels", kc.name, f"kernels/{kc.module}.py {kc.function}()")
    if mt.error or ref.error:
        row.status = "ERROR" if (mt.error and ref.error) else "MISMATCH"
        row.detail = (f"minitriton raised {_first_line(mt.error)}; " if mt.error else "") + \
                     (f"triton raised {_first_line(ref.error)}" if ref.error else "")
        return row
    if len(mt.value or []) != len(ref.value or []) or len(mt.value or []) != len(kc.checks):
        row.status = "ERROR"
        row.detail = f"returned {len(mt.value or [])} / {len(ref.value or [])} values, expected {len(kc.checks)}"
        return row
    failures, worst, names, dtypes = [], 0.0, set(), []
    for i, (m, r, cmp) in enumerate(zip(mt.value, ref.value, kc.checks)):
        o = cmp(m, r)
        names.add(describe(cmp))
        dtypes.append(_dtype_name(m))
        worst = max(worst, o.error)
        if not o.ok:
            failures.append(f"output {i}: {o.detail}")
    row.dtype, row.comparison, row.max_err = ",".join(dtypes), ",".join(sorted(names)), _fmt_err(worst)
    if target == "interpreter" and kc.interp:
        row.status = "expected-divergence" if failures else "match"
        row.detail = kc.interp if failures else f"(documented divergence not observed: {kc.interp})"
    elif failures:
        row.status, row.detail = "MISMATCH", "; ".join(failures)
    return row
