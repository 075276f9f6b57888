"""python -m parity.fuzz.record RUN.json [RUN.json ...] [--amend AMENDED.json ...] [--min-fragments N] [--out DIR]

The fuzz's run of record: several `--only fuzz` runs on the GPU, made from the same sources (one command may
run for at most a few minutes on a lent GPU, and ~36,000 fragments take longer), checked and summed into one
report. The runs must share the minitriton/parity source digest, the device and the Triton and torch versions;
their seeds must be fresh (drawn by the run, not replayed with --seed) and distinct. The record counts only
fragments that ran; it holds when every difference in every run is explained by a rule that was live in that
run and shrunk to a kernel of at most ten lines, and the totals reach the minimums. Exit status 0 when it
holds, 1 otherwise (the reasons are printed).

An amendment (`python -m parity.fuzz.amend`, run on the GPU after a rule was written for a difference a run
met) explains a run's distinct mismatch when its shrunk kernel showed the very same difference again, a rule
live in the amending run explained it, and the amendment ran the same emulator sources (minitriton/), Triton,
torch and device as the run. A mismatch the amendment shrank on (the run's deadline cut its shrink short)
takes the amendment's kernel, its length and its rule. The record lists every amended mismatch.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

from parity.report import results_json

MAX_LINES = 10          # every distinct mismatch's shrunk kernel, at most



def load(path) -> dict:
    data = json.loads(pathlib.Path(path).read_text())
    data["path"] = pathlib.Path(path).name
    return data


def _reference(x) -> tuple:
    ref = x["versions"]["reference"]
    return ref.get("triton"), ref.get("torch"), ref.get("device")


def amended(runs, amendments) -> tuple:
    """(the runs with the mismatches their amendments explain marked so, why an amendment counts for nothing)."""
    out, why = [], []
    by_run = {}
    for m in amendments:
        by_run.setdefault(m["amends"], []).append(m)
    for name in sorted(set(by_run) - {r["path"] for r in runs}):
        why.append(f"an amendment names {name}, which is not one of the runs")
    for r in runs:
        fz = dict(r.get("fuzz") or {})
        distinct = [dict(d) for d in fz.get("distinct", [])]
        for m in by_run.get(r["path"], []):
            if _reference(m) != _reference(r):
                why.append(f"{m['path']}: ran on {_reference(m)}, {r['path']} on {_reference(r)}")
                continue
            if not m.get("sources_minitriton") or m["sources_minitriton"] != r.get("sources_minitriton"):
                why.append(f"{m['path']}: the emulator's sources differ from {r['path']}'s "
                           f"({m.get('sources_minitriton')} vs {r.get('sources_minitriton')})")
                continue
            if m.get("run_sources") != r.get("sources"):
                why.append(f"{m['path']}: amends a run of sources {m.get('run_sources')}, not {r['path']}")
                continue
            live = {x["name"] for x in m.get("rules", []) if (x.get("this_run") or {}).get("live")}
            for e in m["mismatches"]:
                k = e["distinct"]
                if not (0 <= k < len(distinct) and e.get("reproduced")):
                    continue
                if "lines" in e:                # shrunk on in the amending run: its kernel and rule replace the run's
                    distinct[k].update(lines=e["lines"], source=e.get("source"), file=e.get("file"),
                                       finished=e.get("finished"), shrunk_by=m["path"], rule=None)
                if distinct[k].get("rule") is None and e.get("rule") in live:
                    distinct[k].update(rule=e["rule"], amended_by=m["path"])
        fz["distinct"] = distinct
        fz["unexplained"] = sum(len(d["members"]) for d in distinct if d.get("rule") is None)
        out.append({**r, "fuzz": fz})
    return out, why


def problems(runs, min_fragments, min_seeds) -> list:
    """Why these runs do not make a run of record (empty when they do)."""
    out = []
    if not runs:
        return ["no runs given"]
    for r in runs:
        if not r["target"].startswith("cuda") or "smoke" in r["target"]:
            out.append(f"{r['path']}: target {r['target']!r}, not the GPU")
        if r.get("sections") != ["fuzz"] or not r.get("fuzz"):
            out.append(f"{r['path']}: not a fuzz-only run (sections {r.get('sections')})")
        if "--seed " in r["command"] or "--seed=" in r["command"]:
            out.append(f"{r['path']}: replays given seeds (`{r['command']}`); a record needs fresh ones")
    for key, name in ((lambda r: r.get("sources"), "source digest"),
                      (lambda r: (r["versions"]["reference"].get("triton"), r["versions"]["reference"].get("torch"),
                                  r["versions"]["reference"].get("device")), "Triton, torch and device")):
        values = {str(key(r)) for r in runs}
        if None in (key(r) for r in runs) or len(values) > 1:
            out.append(f"the runs differ in their {name}: " + ", ".join(f"{r['path']}: {key(r)}" for r in runs))
    seeds = [s["seed"] for r in runs for s in (r.get("fuzz") or {}).get("seeds", [])]
    if len(set(seeds)) < len(seeds):
        out.append(f"a seed appears twice: {seeds}")
    ran = [s for r in runs for s in (r.get("fuzz") or {}).get("seeds", []) if s.get("run", s["generated"])]
    if len(ran) < min_seeds:
        out.append(f"{len(ran)} seed(s) ran; the record needs {min_seeds}")
    fragments = sum((r.get("fuzz") or {}).get("fragments", 0) for r in runs)
    if fragments < min_fragments:
        out.append(f"{fragments} fragments ran; the record needs {min_fragments}")
    for r in runs:
        fz = r.get("fuzz") or {}
        if fz.get("unexplained"):
            out.append(f"{r['path']}: {fz['unexplained']} mismatching fragment(s) no rule explains")
        if fz.get("unresolved"):
            out.append(f"{r['path']}: {fz['unresolved']} fragment(s) unresolved (a failing kernel not isolated)")
        if fz.get("invalid"):
            out.append(f"{r['path']}: {len(fz['invalid'])} invalid program(s) (a generator bug)")
        long = [m["lines"] for m in fz.get("distinct", []) if m["lines"] > MAX_LINES]
        if long:
            out.append(f"{r['path']}: {len(long)} distinct mismatch(es) not shrunk to {MAX_LINES} lines ({long})")
        live = {x["name"] for x in fz.get("rules", []) if (x.get("this_run") or {}).get("live")}
        dead = sorted({m["rule"] for m in fz.get("distinct", []) if m.get("rule") and m["rule"] not in live
                       and not m.get("amended_by")})
        if dead:
            out.append(f"{r['path']}: classified by rules not live in that run: {dead}")
    return out


def summary(runs) -> dict:
    fz = [r["fuzz"] for r in runs]
    rules: dict = {}
    for f in fz:
        for m in f["distinct"]:
            rules.setdefault(m["rule"] or "UNEXPLAINED", [0, 0])
            rules[m["rule"] or "UNEXPLAINED"][0] += 1
            rules[m["rule"] or "UNEXPLAINED"][1] += len(m["members"])
    return {"runs": [r["path"] for r in runs], "sources": runs[0].get("sources"),
            "reference": runs[0]["versions"]["reference"], "minitriton": runs[0]["versions"]["minitriton"],
            "dates": [r["date"] for r in runs], "commands": [r["command"] for r in runs],
            "seeds": [s | {"report": r["path"]} for r in runs for s in r["fuzz"]["seeds"]],
            **{k: sum(f[k] for f in fz) for k in ("fragments", "generated", "outputs", "bounded_outputs", "kernels",
                                                 "matches", "unexplained", "unresolved")},
            "mismatches": sum(len(f["mismatches"]) for f in fz), "distinct": sum(len(f["distinct"]) for f in fz),
            "amended": [{"run": r["path"], "distinct": k, "rule": d["rule"], "by": d["amended_by"],
                         "file": d.get("file")}
                        for r in runs for k, d in enumerate(r["fuzz"]["distinct"]) if d.get("amended_by")],
            "by_rule": {k: {"distinct": v[0], "fragments": v[1]} for k, v in sorted(rules.items())}}


def markdown(s, reasons) -> str:
    ref, mt = s["reference"], s["minitriton"]
    lines = [f"# The fuzz's run of record: minitriton vs the GPU ({', '.join(sorted(set(d[:10] for d in s['dates'])))})",
             "", f"- verdict: **{'holds' if not reasons else 'does not hold'}**"]
    lines += [f"  - {why}" for why in reasons]
    lines += [f"- sources (sha256 of minitriton/ and parity/, the same in every run): `{s['sources']}`",
              f"- reference: triton {ref.get('triton')}, torch {ref.get('torch')}, {ref.get('device')}"
              + (f" (CUDA {ref['cuda']})" if ref.get("cuda") else "") + f"; minitriton {mt.get('minitriton')}, "
              f"numpy {mt.get('numpy')}, python {mt.get('python')}",
              f"- fragments run and compared: **{s['fragments']}** (generated {s['generated']}), outputs "
              f"{s['outputs']} ({s['bounded_outputs']} within a bound), kernels compiled {s['kernels']}",
              f"- match {s['matches']}, mismatch {s['mismatches']} ({s['distinct']} distinct shrunk kernels), "
              f"**{s['unexplained']} unexplained**, unresolved {s['unresolved']}", "",
              "| seed | fragments run | report | replay |", "|---|---:|---|---|"]
    lines += [f"| {x['seed']} | {x.get('run', x['generated'])} | `{x['report']}` | `{x['replay']}` |"
              for x in s["seeds"]]
    if s["amended"]:
        lines += ["", "Explained by an amendment (`parity/fuzz/amend.py`: the shrunk kernel re-run on the GPU showed the "
                  "same difference, and a rule written after the run, live in the amending run, explains it):", "",
                  "| run | distinct mismatch | rule | amendment |", "|---|---:|---|---|"]
        lines += [f"| `{x['run']}` | {x['distinct']} (`{x['file']}`) | {x['rule']} | `{x['by']}` |" for x in s["amended"]]
    lines += ["", "| rule | distinct shrunk kernels | fragments |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['distinct']} | {v['fragments']} |" for k, v in s["by_rule"].items()]
    lines += ["", "Each run's report (its rules with their evidence and this run's probe results, every distinct "
              "mismatch with its shrunk kernel) is the JSON/Markdown named above; the commands:", ""]
    lines += [f"- `{c}`" for c in s["commands"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m parity.fuzz.record",
                                description="Check fuzz-only GPU runs and sum them into the fuzz's run of record.")
    p.add_argument("runs", nargs="+", help="the runs' JSON results (python -m parity --target cuda --only fuzz)")
    p.add_argument("--amend", action="append", default=[],
                   help="an amendment of one of the runs (python -m parity.fuzz.amend), repeatable")
    p.add_argument("--min-fragments", type=int, default=36000)
    p.add_argument("--min-seeds", type=int, default=3)
    p.add_argument("--out", default=None, help="folder for cuda-fuzz-record-<date>.md/.json (default: none)")
    a = p.parse_args(argv)
    runs, void = amended([load(x) for x in a.runs], [load(x) for x in a.amend])
    reasons = void + problems(runs, a.min_fragments, a.min_seeds)
    if any("not a fuzz-only run" in why or "not the GPU" in why for why in reasons):
        print("\n".join(reasons), file=sys.stderr)
        return 1
    s = summary(runs)
    text = markdown(s, reasons)
    print(text)
    if a.out:
        day = max(s["dates"])[:10]
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"cuda-fuzz-record-{day}.json").write_text(results_json({**s, "problems": reasons}))
        (out / f"cuda-fuzz-record-{day}.md").write_text(text)
    return 0 if not reasons else 1


if __name__ == "__main__":
    sys.exit(main())
