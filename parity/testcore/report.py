"""The test_core.py report: counts and times per backend, minitriton's failures by cause, the bf16 cases."""
from __future__ import annotations

import collections
import re


def counts(cases: dict) -> dict:
    c = collections.Counter(case["outcome"] for case in cases.values())
    return {"passed": c["passed"], "failed": c["failed"], "skipped": c["skipped"], "total": len(cases)}


def compact(runs: dict) -> dict:
    """Runs as stored: per backend its times, counts and skip reasons, its failures grouped by the first line of
    their message; and the cases whose outcome differs between the backends (p, f, s per backend). Passing
    cases both agree on are only counted: the command regenerates them."""
    out = {}
    for name, run in runs.items():
        cases = run["cases"]
        skips = collections.Counter(c["message"].splitlines()[0][:160] for c in cases.values()
                                    if c["outcome"] == "skipped" and c["message"])
        failures = collections.defaultdict(list)
        for i, c in sorted(cases.items()):
            if c["outcome"] == "failed":
                failures[(c["message"].splitlines() or [""])[0][:200]].append(i)
        out[name] = {"seconds": run["seconds"], "cpu_seconds": run.get("cpu_seconds"), "counts": counts(cases),
                     "failures": dict(failures), "skip_reasons": dict(skips.most_common())}
    if len(runs) > 1:   # keyed by each backend's outcome letter in `differing_order`: "pf" passed, then failed
        ids = sorted({i for run in runs.values() for i in run["cases"]})
        outcome = {name: {i: c["outcome"][0] for i, c in run["cases"].items()} for name, run in runs.items()}
        differing = collections.defaultdict(list)
        for i in ids:
            letters = "".join(outcome[name].get(i, "-") for name in runs)
            if len(set(letters)) > 1:
                differing[letters].append(i)
        out["differing"], out["differing_order"] = dict(differing), list(runs)
    return out


def _function(case_id: str) -> str:
    return re.sub(r"\[.*", "", case_id)


def classify_failures(result: dict, classify) -> dict:
    """minitriton's failed cases (normal and bf16-lifted runs) grouped by cause; the rest as unexplained."""
    by_cause, unexplained = collections.defaultdict(list), []
    for label, runs in (("", result["runs"]), ("bf16 lifted: ", result.get("bf16_lifted") or {})):
        run = runs.get("minitriton")
        if not run:
            continue
        for case_id, case in run["cases"].items():
            if case["outcome"] != "failed":
                continue
            cause = classify(case_id, case["message"])
            if cause is None:
                unexplained.append((label + case_id, case["message"]))
            else:
                by_cause[cause].append(label + case_id)
    return {"by_cause": by_cause, "unexplained": unexplained}


def _case_list(ids, limit=12) -> str:
    groups = collections.Counter(_function(re.sub(r"^bf16 lifted: ", "", i)) for i in ids)
    parts = [f"{name} ({n})" if n > 1 else name for name, n in groups.most_common()]
    return ", ".join(parts[:limit]) + (f", ... ({len(parts) - limit} more)" if len(parts) > limit else "")


def markdown(result: dict, classified: dict) -> str:
    runs = result["runs"]
    v, m = result.get("versions", {}), result["machine"]
    lines = [f"# Triton's test_core.py on minitriton ({result['date']})", ""]
    pin = result["pinned"]["test_core.py"]
    lines += [f"File: `{pin['path']}` at triton-lang/triton `{pin['commit']}` (SHA-256 `{pin['sha256'][:16]}...`), "
              f"its helpers `{result['pinned']['_internal_testing.py']['path']}` at "
              f"`{result['pinned']['_internal_testing.py']['commit'][:12]}`; the cases marked `interpreter`, with "
              f"TRITON_INTERPRET=1, each backend in its own process, one after the other.",
              f"Machine: {m['cpus']} CPUs, {m['processor']}, {m['platform']}. Python {v.get('python')}, NumPy "
              f"{v.get('numpy')}, torch {v.get('torch')}, Triton {v.get('triton')} (its interpreter is the reference).",
              "", "| backend | passed | failed | skipped | cases | wall time | CPU time |", "|---|---|---|---|---|---|---|"]
    for name, run in runs.items():
        c = counts(run["cases"])
        label = "minitriton" if name == "minitriton" else f"Triton {v.get('triton')} interpreter"
        lines.append(f"| {label} | {c['passed']} | {c['failed']} | {c['skipped']} | {c['total']} | "
                     f"{run['seconds']:.0f} s | {run.get('cpu_seconds', 0):.0f} s |")
    bf16 = result.get("bf16_lifted") or {}
    if bf16:
        lines += ["", "## bf16 cases with test_core's interpreter skips lifted", "",
                  "test_core skips bf16 under TRITON_INTERPRET=1 (`check_type_supported`, `test_dot`, `test_scaled_dot`, "
                  "`test_dot_multidim`, and `test_atomic_rmw`'s bf16/fp16 atomics); these are the cases it skipped, "
                  "run from a copy with those skips replaced by `pass`.", "",
                  "| backend | passed | failed | skipped (other reasons) | cases | wall time | CPU time |",
                  "|---|---|---|---|---|---|---|"]
        for name, run in bf16.items():
            c = counts(run["cases"])
            lines.append(f"| {name} | {c['passed']} | {c['failed']} | {c['skipped']} | {c['total']} | "
                         f"{run['seconds']:.0f} s | {run.get('cpu_seconds', 0):.0f} s |")
        for name, run in bf16.items():
            reasons = collections.Counter(case["message"].splitlines()[0][:120] for case in run["cases"].values()
                                          if case["outcome"] == "skipped")
            if reasons:
                lines += ["", f"Still skipped on {name}, by test_core's own reason: " +
                          "; ".join(f"{why!r} ({n})" for why, n in reasons.most_common()) + "."]
    lines += ["", "## minitriton's failures by cause", "",
              "Kinds: **gpu** - minitriton does what the GPU does (the docs/semantics.md row measured it); "
              "**missing** - a feature minitriton lacks; **needs-gpu** - the case needs CUDA itself (it fails on "
              "Triton's interpreter too); **elsewhere** - behaviour being reworked in another part of the project; **reference** - the "
              "test's own reference, computed by CPU torch, is further from float64 than minitriton.",
              "", "| cause | kind | evidence | cases | which |", "|---|---|---|---|---|"]
    for cause, ids in sorted(classified["by_cause"].items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| {cause.explanation} | {cause.kind} | {cause.row or '-'} | {len(ids)} | {_case_list(ids)} |")
    if classified["unexplained"]:
        lines += ["", f"## Unexplained failures ({len(classified['unexplained'])})", ""]
        lines += [f"- `{i}`: {msg.splitlines()[0][:200] if msg else ''}" for i, msg in classified["unexplained"]]
    for title, pair in (("Where the two differ", runs), ("Where the two differ, bf16 lifted", bf16)):
        interp, mt = pair.get("interpreter"), pair.get("minitriton")
        if not (interp and mt):
            continue
        only_interp = sorted(k for k, c in interp["cases"].items()
                             if c["outcome"] == "passed" and mt["cases"].get(k, {}).get("outcome") != "passed")
        only_mt = sorted(k for k, c in mt["cases"].items()
                         if c["outcome"] == "passed" and interp["cases"].get(k, {}).get("outcome") != "passed")
        lines += ["", f"## {title}", "",
                  f"Passed on minitriton only ({len(only_mt)}): {_case_list(only_mt, 30) or '-'}.", "",
                  f"Passed on the interpreter only ({len(only_interp)}): {_case_list(only_interp, 30) or '-'}."]
    lines += ["", "Reproduce: `.venv/bin/python -m parity.testcore` (see parity/README.md).", ""]
    return "\n".join(lines)
