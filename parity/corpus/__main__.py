"""`python -m parity.corpus`: run every corpus case on minitriton and on Triton's interpreter (or, with
`--target cuda`, on the GPU), print the table and write `parity/results/corpus-<date>.md` / `.json`.

    python -m parity.corpus --fetch                        # download the pinned archives into build/corpus/
    python -m parity.corpus                                # minitriton + interpreter; add a GPU run's column:
    python -m parity.corpus --gpu-results corpus-cuda-<date>.json
    python3 -m parity.corpus --target cuda --out $OUT      # on a GPU machine (the cache carried along)

Exit status: 0 when every case passes or has a named cause (`causes.py`), 1 otherwise, 2 when the cache lacks
a project (run `--fetch`), 3 when a backend cannot start.
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import sys

from parity.corpus import causes, manifest
from parity.oracle import Call, OracleUnavailable, Pool

RESULTS = manifest.REPO_ROOT / "parity" / "results"


def outcome(result) -> dict:
    """A backend's outcome for one case: pass / fail (beyond the tolerance) / error, with the detail."""
    if result.error is not None:
        lines = [ln for ln in result.error.splitlines() if ln.strip()]
        return {"outcome": "error", "detail": lines[0][:200] if lines else result.error_type}
    value = json.loads(result.value[0])
    value["outcome"] = "pass" if value["ok"] else "fail"
    value["detail"] = "; ".join(value.pop("failed"))
    return value


def run(backend: str, names: list, jobs: int, timeout: float) -> tuple:
    with Pool(backend, jobs, case_timeout=timeout) as pool:
        results = pool.run([Call("parity.corpus.harness", "run_case", (n,)) for n in names], chunk=1)
        return dict(pool.info), {n: outcome(r) for n, r in zip(names, results)}


def classify(rows: list, backends: list) -> int:
    """Give every non-passing outcome its named cause; the count of those without one."""
    unexplained = 0
    for row in rows:
        for b in backends:
            got = row.get(b)
            if got is None or got["outcome"] == "pass":
                continue
            cause = causes.cause_of(row["name"], b, got)
            got["cause"] = cause.key if cause else "UNEXPLAINED"
            unexplained += cause is None
    return unexplained


def _cell(got: dict) -> str:
    if got is None:
        return "-"
    if got["outcome"] == "pass":
        return f"pass ({got['max_err']:.1e})"
    if got["outcome"] == "fail":
        return f"fail ({got['max_err']:.1e}, {got['worst_over_tol']:.0f}x tol)"
    return "error"


def markdown(rows, backends, info, date) -> str:
    head = ["# Real Triton kernels from open-source projects", "",
            f"`python -m parity.corpus` ({date}). Each kernel's outputs (and gradients, for fwd+bwd) against the "
            "project's own reference computed in float64; a pass is every element within the case's tolerance "
            "(max |error| in brackets). Sources: " + ", ".join(
                f"{p.package} {p.version} ({p.licence}, sha256 {p.sha256[:12]})" for p in manifest.PROJECTS) + ".",
            ""]
    for b in backends:
        i = info.get(b, {})
        n = sum(bool(r.get(b)) and r[b]["outcome"] == "pass" for r in rows)
        head.append(f"- **{b}**: {n} of {len(rows)} pass; " + ", ".join(f"{k} {v}" for k, v in i.items()
                                                                       if k in ("triton", "torch", "minitriton", "device", "date")))
    head += ["", "| project | kernels | " + " | ".join(f"{b} passes" for b in backends) + " |",
             "|---|---|" + "---|" * len(backends)]
    for p in manifest.PROJECTS:
        mine = [r for r in rows if r["project"] == p.name]
        head.append(f"| {p.package} {p.version} | {len(mine)} | " + " | ".join(
            str(sum(bool(r.get(b)) and r[b]["outcome"] == "pass" for r in mine)) for b in backends) + " |")
    head += ["", "| kernel | project | launches | " + " | ".join(backends) + " | cause when not passing |",
             "|---|---|---|" + "---|" * len(backends) + "---|"]
    for r in rows:
        why = "; ".join(sorted({f"{b}: `{r[b]['cause']}`" for b in backends if r.get(b) and r[b].get("cause")}))
        head.append(f"| {r['name']} | {r['project']} | `{r['kernels']}` | "
                    + " | ".join(_cell(r.get(b)) for b in backends) + f" | {why} |")
    head += ["", "Tolerances: `atol * max|ref| + rtol * |ref|`, fp32 1e-5/1e-4; kernels built on fp32 `tl.dot` 1e-2/1e-2 "
             "(the GPU and minitriton round its inputs to TF32, docs/semantics.md S1.24; under "
             "TRITON_F32_DEFAULT=ieee minitriton's errors there are 3e-7 to 2e-5); fla's bf16-only delta rule "
             "2e-2/2e-2. A cause names why a backend cannot run a case (`parity/corpus/causes.py`)."]
    used = sorted({r[b]["cause"] for r in rows for b in backends if r.get(b) and r[b].get("cause")})
    head += ["", "Causes:", ""] + [f"- `{k}`: {causes.BY_KEY[k].text if k in causes.BY_KEY else 'no named cause'}"
                                   for k in used]
    details = [f"- {r['name']} on {b}: {r[b]['detail']}" for r in rows for b in backends
               if r.get(b) and r[b]["outcome"] != "pass" and r[b].get("detail")]
    return "\n".join(head + (["", "## Details", ""] + details if details else [])) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m parity.corpus", description=__doc__.splitlines()[0])
    ap.add_argument("--fetch", action="store_true", help="download the pinned archives into build/corpus/ first")
    ap.add_argument("--target", choices=("interpreter", "cuda"), default="interpreter")
    ap.add_argument("--only", default="", help="cases whose name contains this text")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--gpu-results", type=pathlib.Path, help="a `--target cuda` run's JSON: its column joins the table")
    ap.add_argument("--out", type=pathlib.Path, default=RESULTS)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    if args.fetch:
        manifest.fetch_all()
    missing = [p.package for p in manifest.PROJECTS if not manifest.is_cached(p)]
    if missing:
        print(f"not in build/corpus/: {', '.join(missing)}; run `python -m parity.corpus --fetch`", file=sys.stderr)
        return 2
    from parity.corpus.cases import CASES
    chosen = [c for c in CASES if args.only in c.name]
    backends = ["minitriton", "interpreter"] if args.target == "interpreter" else ["cuda"]
    rows = [{"name": c.name, "project": c.project, "kernels": c.kernels} for c in chosen]
    info = {}
    for b in backends:
        try:
            info[b], got = run(b, [c.name for c in chosen], args.jobs, args.timeout)
        except OracleUnavailable as e:
            print(e, file=sys.stderr)
            return 3
        for r in rows:
            r[b] = got[r["name"]]
    if args.gpu_results:
        gpu = json.loads(args.gpu_results.read_text())
        info["cuda"] = gpu["info"]["cuda"]
        by_name = {r["name"]: r["cuda"] for r in gpu["rows"]}
        for r in rows:
            r["cuda"] = by_name.get(r["name"])
        backends.append("cuda")
    unexplained = classify(rows, [b for b in backends if any(r.get(b) for r in rows)])
    date = datetime.date.today().isoformat()
    text = markdown(rows, backends, info, date)
    print(text)
    if not args.no_save:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = f"corpus-{'cuda-' if args.target == 'cuda' else ''}{date}"
        (args.out / f"{stem}.md").write_text(text)
        compact = {"date": date, "info": info, "projects": [p.__dict__ for p in manifest.PROJECTS],
                   "rows": [{k: ({kk: vv for kk, vv in v.items() if kk in ("outcome", "max_err", "worst_over_tol",
                                                                            "cause", "detail") and vv != ""}
                                 if isinstance(v, dict) else v) for k, v in r.items()} for r in rows]}
        text = json.dumps(compact, default=str).replace('}, {"name"', '},\n{"name"')   # a row per line
        (args.out / f"{stem}.json").write_text(text + "\n")
        print(f"wrote {args.out / stem}.md/.json")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
