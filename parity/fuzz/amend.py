"""python -m parity.fuzz.amend RUN.json [RUN.json ...] [--shrink-seconds S] [--out DIR]

Explains a GPU fuzz run's unexplained differences after the fact, on the GPU. A fuzz run that meets a new GPU
behaviour leaves it unexplained; a rule written for it afterwards explains nothing in that run. This command
re-runs each unexplained distinct mismatch's shrunk kernel (`mismatch_<k>.pkl`, written beside its reproducer)
on both sides, runs every rule's probe (`rules.check`), and classifies the fresh result with the rules of
today's sources. A mismatch whose shrink the run's deadline cut short (or left longer than the record's ten
lines) is shrunk on from there, live on the GPU, until it is done or `--shrink-seconds` have passed; its new
kernel is written beside the old one as `mismatch_<k>-amended.py` (and `.pkl`). It writes `<run>-amended.json`
beside each run: per mismatch whether the GPU showed the very same difference again (its detail, values
included, equal to the run's), the live rule that explains it, and the kernel it was shrunk to.
`python -m parity.fuzz.record RUN.json ... --amend RUN-amended.json ...` counts a mismatch as explained by an
amendment only when it reproduced, its rule was live in the amending run, and the emulator's sources
(minitriton/), Triton, torch and the device are those of the run. Exit status 0 when every amended mismatch is
explained, 1 otherwise, 3 without a GPU.
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import pickle
import sys
import time

from parity import report
from parity.report import results_json
from parity.fuzz import rules
from parity.fuzz.run import differing_lanes, write_reproducer
from parity.fuzz.case import kernel_case, run_alone
from parity.fuzz.record import MAX_LINES
from parity.fuzz.shrink import Shrunk, kernel_lines, shrink_many
from parity.oracle import OracleUnavailable, Pool


def log(msg):
    print(f"[fuzz.amend] {msg}", file=sys.stderr, flush=True)


def unexplained(run) -> list:
    """(index, distinct entry) of each distinct mismatch of the run that no rule explained, or whose shrunk
    kernel is longer than a record allows."""
    return [(k, d) for k, d in enumerate((run.get("fuzz") or {}).get("distinct", []))
            if d.get("rule") is None or d.get("lines", 0) > MAX_LINES]


def _unfinished(d) -> bool:
    return not d.get("finished", True) or d.get("lines", 0) > MAX_LINES


def amend(run, folder, pools, target, evidence, shrink_seconds=0.0) -> list:
    """Re-run and classify the run's unexplained distinct mismatches: one entry per mismatch. A reproduced
    mismatch whose shrink was cut short is shrunk on for up to `shrink_seconds` (all of them together)."""
    out = []
    deadline = time.monotonic() + shrink_seconds
    for k, d in unexplained(run):
        entry = {"distinct": k, "reproduced": False, "rule": None, "detail": None}
        frag_path = folder / pathlib.Path(d.get("file") or "").with_suffix(".pkl")
        if not d.get("file") or not frag_path.is_file():
            entry["why"] = f"no shrunk fragment at {frag_path.name} (a run older than parity.fuzz.amend)"
            out.append(entry)
            continue
        frag = pickle.loads(frag_path.read_bytes())
        ((verdict, mt, ref),) = run_alone([frag], pools, target, {})
        entry["detail"] = verdict.detail[:1500]
        entry["reproduced"] = verdict.status == "mismatch" and entry["detail"] == d["detail"]
        if entry["reproduced"]:
            shrunk = Shrunk(frag, verdict, mt, ref, alone=True, finished=True, packed=d.get("packed", False))
            shrink_on = _unfinished(d) and shrink_seconds > 0
            if shrink_on:
                shrunk = _shrunk_on(frag, verdict, pools, target, deadline, d.get("packed", False))
            rule = rules.classify(shrunk, evidence, target)
            entry["rule"] = rule.name if rule else None
            if shrink_on:
                entry.update(_written(shrunk, entry["rule"], k, d["file"], frag_path.parent, target))
        else:
            entry["why"] = "the GPU did not show the same difference again"
        out.append(entry)
    return out


def _shrunk_on(frag, verdict, pools, target, deadline, packed) -> Shrunk:
    """The fragment shrunk further, live on both sides, until done or the deadline (it stays as it is when
    nothing smaller keeps the difference)."""
    stats: dict = {}
    (s,) = shrink_many([(frag, verdict)], lambda frags: run_alone(frags, pools, target, stats), deadline)
    s.packed = packed
    return s


def _written(shrunk, rule, k, run_file, folder, target) -> dict:
    """The amendment's fields for a kernel shrunk on, its reproducer written beside the run's as
    `<stem>-amended.py` (and `.pkl`)."""
    info = {"rule": rule, "lines": kernel_lines(shrunk.frag), "detail": shrunk.verdict.detail[:1500],
            "lanes": differing_lanes(shrunk)}
    stem = pathlib.Path(run_file).stem + "-amended"
    write_reproducer(folder, k, target, shrunk, info, stem=stem)
    return {"lines": info["lines"], "finished": shrunk.finished, "steps": shrunk.steps, "tried": shrunk.tried,
            "shrunk_detail": info["detail"], "source": kernel_case([shrunk.frag])[0].source,
            "file": str(pathlib.Path(run_file).parent / f"{stem}.py")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m parity.fuzz.amend", description="Re-run a GPU fuzz run's unexplained shrunk kernels and "
                                "classify them with today's rules.")
    p.add_argument("runs", nargs="+", help="fuzz-only GPU runs' JSON results, their reproducer folders beside them")
    p.add_argument("--jobs", type=int, default=4, help="GPU worker processes")
    p.add_argument("--shrink-seconds", type=float, default=240.0,
                   help="time to shrink on the mismatches whose shrink the run cut short (all together)")
    p.add_argument("--out", default=None, help="folder for the amendments (default: beside each run)")
    a = p.parse_args(argv)
    from kernels.check import cuda_devices
    if not cuda_devices():
        print("parity.fuzz.amend: needs an NVIDIA GPU and its driver, and this machine shows none", file=sys.stderr)
        return 3
    runs = [(pathlib.Path(x), json.loads(pathlib.Path(x).read_text())) for x in a.runs]
    try:
        mt_pool, ref_pool = Pool("minitriton", 2), Pool("cuda", a.jobs)
    except OracleUnavailable as e:
        print(f"parity.fuzz.amend: the cuda backend is not available: {e}", file=sys.stderr)
        return 3
    pools = {"minitriton": mt_pool, "cuda": ref_pool}
    failed = 0
    try:
        evidence = rules.check(pools, "cuda")
        for path, run in runs:
            entries = amend(run, path.parent, pools, "cuda", evidence, a.shrink_seconds)
            failed += sum(e["rule"] is None for e in entries)
            result = {"amends": path.name, "run_sources": run.get("sources"),
                      "run_sources_minitriton": run.get("sources_minitriton"),
                      "date": datetime.datetime.now().isoformat(timespec="seconds"),
                      "command": report.command("python -m parity.fuzz.amend", argv if argv is not None else sys.argv[1:]),
                      "sources": report.source_digest(), "sources_minitriton": report.source_digest(dirs=("minitriton",)),
                      "versions": {"minitriton": mt_pool.info, "reference": ref_pool.info},
                      "rules": rules.describe(evidence, "cuda"), "mismatches": entries}
            out = (pathlib.Path(a.out) if a.out else path.parent) / f"{path.stem}-amended.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(results_json(result))
            for e in entries:
                log(f"{path.name} distinct {e['distinct']}: "
                    + (f"reproduced, {e['rule'] or 'UNEXPLAINED'}" if e["reproduced"] else e.get("why", "")))
            log(f"wrote {out}")
    finally:
        mt_pool.close()
        ref_pool.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
