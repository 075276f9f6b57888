"""The parity run's table (terminal) and results files (JSON + Markdown) with date, machine and versions."""
from __future__ import annotations

import hashlib
import json
import math
import pathlib

from parity.compare import TOLERANCES
from parity.runner import FAILING


SOURCES = ("minitriton", "parity")     # the code whose behaviour a parity run measures

PACKED = ", shrunk inside its packed kernel: it differs only among the other fragments' code"


def source_digest(root=None, dirs=SOURCES) -> str:
    """sha256 of the Python sources of minitriton/ and parity/ (paths and contents): two runs with the same
    digest measured the same emulator, generator and rules, whatever else the tree held. `dirs=("minitriton",)`:
    the emulator alone."""
    root = pathlib.Path(root) if root else pathlib.Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    results = root / "parity" / "results"                                # reproducers are outputs, not code
    for path in sorted(p for d in dirs for p in (root / d).rglob("*.py") if results not in p.parents):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def results_json(data, **dump) -> str:
    """The text of a results file's JSON: one line per top-level key, the values compact. People read a run
    through its Markdown; the JSON is for programs, and indented it would run to thousands of lines."""
    def compact(value):
        return json.dumps(value, separators=(",", ":"), **dump)
    if not isinstance(data, dict) or not data:
        return compact(data) + "\n"
    keys = sorted(data) if dump.get("sort_keys") else list(data)
    return "{" + ",\n".join(f"{json.dumps(k)}:{compact(data[k])}" for k in keys) + "}\n"


def command(prog, argv) -> str:
    """The command line a result records: `prog` and its arguments, an `--out` folder outside the repository
    written as `DIR` (where a result went on one machine says nothing about the run)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    args = list(argv)
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if key == "--out" and (eq or i + 1 < len(args)):
            j, value = (i, value) if eq else (i + 1, args[i + 1])
            path = pathlib.Path(value).resolve()
            shown = path.relative_to(root).as_posix() if root in path.parents else "DIR"
            args[j] = f"--out={shown}" if eq else shown
    return " ".join([prog, *args])


def table(rows, markdown=False, detail_width=160) -> str:
    cells = [[r.case, r.dtype, r.comparison, r.max_err, r.status, r.detail] for r in rows]
    head = ["case", "dtype", "comparison", "max err", "status", "detail"]
    if markdown:
        esc = [[str(c).replace("|", "\\|").replace("\n", " ") for c in row] for row in cells]
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] +
                         ["| " + " | ".join(row) + " |" for row in esc])
    widths = [max([len(head[i])] + [len(str(c[i])) for c in cells]) for i in range(5)]
    widths = [min(w, 48) for w in widths]

    def line(vals):
        left = "  ".join(str(v)[:w].ljust(w) for v, w in zip(vals[:5], widths))
        extra = str(vals[5]).replace("\n", " ")
        return left + ("  " + extra[:detail_width] if extra else "")
    return "\n".join([line(head), line(["-" * w for w in widths] + [""])] + [line(c) for c in cells])


def summary(rows) -> dict:
    out = {}
    for r in rows:
        key = r.status.split("(")[0]
        out[key] = out.get(key, 0) + 1
    return out


def failing(rows) -> list:
    return [r for r in rows if r.status in FAILING]


def _jsonable(o):
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    return o


def bench_markdown(bench: dict) -> str:
    if not bench:
        return ""
    lines = []
    if "interpreter_bench" in bench:
        ib = bench["interpreter_bench"]
        lines += ["### minitriton vs Triton's interpreter (`python -m bench`, one run)", "",
                  f"exit code {ib.get('returncode')}; `python {ib.get('command')}`", "", "```",
                  ib.get("stdout", "").rstrip(),
                  "```", ""]
    gpu = bench.get("gpu")
    if gpu:
        if "fatal" in gpu:
            lines += ["### GPU benchmark", "", "```", gpu["fatal"], "```"]
            return "\n".join(lines)
        info = gpu.get("info", {})
        lines += ["### GPU benchmark: kernels/ next to torch eager, torch.compile, cuBLAS, SDPA", "",
                  f"{info.get('device')}, torch {info.get('torch')}, triton {info.get('triton')}, CUDA "
                  f"{info.get('cuda')}; {info.get('method')}; {info.get('seconds')} s"
                  + (" (SMOKE RUN on the CPU: times mean nothing)" if info.get("smoke") else ""), "",
                  "ratios: other time / ours (> 1: ours is faster), from the interquartile mean time of each "
                  "(the JSON also holds the medians and their ratios), with [min-max] of the ratios"
                  " over slices of the run where there were several; `of d2d copy`: our GB/s over a "
                  "device-to-device copy's, measured in the same run; `x.clone()`, `y + dy` and `x + dy`: torch elementwise "
                  "ops that move the same bytes as the row's kernel, the most that size allows (a ratio near 1 "
                  "is a kernel at that ceiling).", "",
                  "| kernel | size | unit | ours | baselines | ratios |", "|---|---|---|---|---|---|"]
        for r in gpu.get("rows", []):
            rate = r["rate"]
            ours = rate.get("triton", rate.get("copy"))
            others = ", ".join(f"{k} {v:.1f}" for k, v in rate.items() if k not in ("triton",) and v is not None
                               and not (k == "copy" and "triton" not in rate))
            spread = r.get("ratio_spread", {})
            ratios = ", ".join(f"{k} {v:.2f}" + (f" [{spread[k][0]:.2f}-{spread[k][1]:.2f}]" if k in spread else "")
                               for k, v in r["ratios"].items() if v is not None)
            size = r["size"] + (f" ({r['config']})" if r.get("config") else "")
            lines.append(f"| {r['kernel']} | {size} | {r['unit']} | "
                         f"{'—' if ours is None else f'{ours:.1f}'} | {others or '—'} | {ratios or '—'} |")
        if gpu.get("skipped"):
            lines += ["", "Skipped (time budget): " + ", ".join(gpu["skipped"])]
        if gpu.get("errors"):
            lines += ["", "Errors: " + "; ".join(gpu["errors"])]
    return "\n".join(lines)


def fuzz_markdown(fz: dict) -> str:
    if not fz:
        return ""
    found = len(fz["mismatches"])
    seeds = "; ".join(f"{s['seed']} ({s.get('run', s['generated'])} fragments; replay: `{s['replay']}`)"
                      for s in fz["seeds"])
    lines = [f"- seeds: {seeds}",
             f"- fragments (random expressions/programs) run and compared: **{fz['fragments']}** (generated: "
             f"{fz['generated']}; unresolved: {fz['unresolved']}), outputs compared: {fz['outputs']} "
             f"({fz['bounded_outputs']} within a bound, the rest bit for bit)",
             f"- compiled kernels: {fz['kernels']} (fragments packed per kernel, plus one-fragment re-runs) + "
             f"{fz['shrink_runs']} shrink candidates",
             f"- match: {fz['matches']}, mismatch: {found} ({found - fz['unexplained']} explained by a rule, "
             f"**{fz['unexplained']} unexplained**; {len(fz['distinct'])} distinct), invalid (both sides raise; a "
             f"generator bug): {len(fz['invalid'])}",
             f"- seconds: {fz['seconds']}"]
    if fz.get("rules"):
        lines += ["", "### rules", ""]
        for r in fz["rules"]:
            run = r.get("this_run") or {}
            state = "not run (no difference to explain)" if not run else \
                ("live" if run.get("live") else "NOT LIVE") + f": {run.get('detail')}"
            lines += [f"- **{r['name']}**: {r['reason']}", f"  - evidence: {r['recorded']}",
                      f"  - this run: {state}", "", "```python", r["probe"].strip(), "```", ""]
    for k, m in enumerate(fz["distinct"]):
        lines += ["", f"#### distinct mismatch {k}: {m['rule'] or 'UNEXPLAINED'} ({len(m['members'])} fragment(s); "
                  f"shrunk to {m['lines']} lines{'' if m['finished'] else ', shrinking cut short'}"
                  f"{'' if m['alone'] else ', differs neither alone nor in its packed kernel when re-run'}"
                  f"{PACKED if m.get('packed') else ''})",
                  "",
                  m["detail"][:1500], ""]
        lines += [f"- {ln['output']} at {tuple(ln['lane'])}: minitriton {ln['minitriton']}, triton {ln['triton']}"
                  for ln in m.get("lanes", [])]
        lines += ["", f"reproducer: `{m.get('file', '')}`", "", "```python", m["source"].strip()[:6000], "```"]
    for k, m in enumerate(fz["invalid"][:5]):
        lines += ["", f"#### invalid program {k}", "", m["detail"][:800]]
    return "\n".join(lines)


def write(out_dir, stem, result: dict, rows) -> tuple:
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath, mpath = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    data = {**result, "rows": [r.as_dict() for r in rows], "tolerances": TOLERANCES}
    jpath.write_text(results_json(_jsonable(data), default=str))
    v = result["versions"]
    md = [f"# parity: minitriton vs {result['target']} — {result['date']}", "",
          f"- command: `{result['command']}`"] + \
        ([f"- sources (sha256 of minitriton/ and parity/): `{result['sources']}`"] if result.get("sources") else [])
    if not v["reference"] and not v["minitriton"]:     # a benchmark-only run: its table names the versions
        md += [f"- sections: {', '.join(result['sections'])}; wall {result['seconds']} s", ""]
    else:
        md += [
          f"- reference: triton {v['reference'].get('triton')}, torch {v['reference'].get('torch')}, numpy "
          f"{v['reference'].get('numpy')}, python {v['reference'].get('python')}; device: "
          f"{v['reference'].get('device')}" + (f" (CUDA {v['reference']['cuda']})" if v['reference'].get('cuda') else ""),
          f"- minitriton side: minitriton {v['minitriton'].get('minitriton')}, numpy {v['minitriton'].get('numpy')}, "
          f"python {v['minitriton'].get('python')}; {v['minitriton'].get('device')}",
          f"- summary: {result['summary']}; unexplained (MISMATCH/ERROR): **{result['unexplained']}**",
          f"- sections: {', '.join(result['sections'])}; wall {result['seconds']} s", ""]
    for section in ("kernels", "probes"):
        part = [r for r in rows if r.section == section]
        if part:
            md += [f"## {section}", "", table(part, markdown=True), ""]
    if result.get("fuzz"):
        md += ["## fuzz", "", fuzz_markdown(result["fuzz"]), ""]
    if result.get("bench"):
        md += ["## bench", "", bench_markdown(result["bench"]), ""]
    md += ["## tolerance table", "", "| values | vs interpreter | vs GPU |", "|---|---|---|"]
    md += [f"| {k} | {a} | {b} |" for k, (a, b) in TOLERANCES.items()]
    divs = [r for r in rows if r.status == "expected-divergence" or r.status == "known-gap"]
    if divs:
        md += ["", "## expected divergences and known gaps", ""]
        md += [f"- `{r.case}` ({r.status}): {r.detail}" for r in divs]
    mpath.write_text("\n".join(md) + "\n")
    return str(jpath), str(mpath)
