"""The fuzz's run of record: runs on the same sources, fresh distinct seeds, every difference explained."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from parity import report  # noqa: E402
from parity.fuzz import record as fuzzrecord  # noqa: E402

GPU = {"backend": "cuda", "triton": "3.6.0", "torch": "2.11.0+cu130", "device": "NVIDIA H200", "cuda": "13.0"}
MT = {"backend": "minitriton", "minitriton": "0.1.0", "numpy": "2.5.2", "python": "3.12.3"}
RULE = {"name": "int16_negation_widened", "reason": "...", "probe": "...", "source_values": [], "recorded": "...",
        "this_run": {"live": True}}


def run(seeds, fragments_per_seed=12000, sources="abc", unexplained=0, rule="int16_negation_widened",
        live=True, command=None):
    distinct = [{"rule": rule, "source": "...", "lines": 5, "detail": "...", "alone": True, "finished": True,
                 "members": [1, 2], "lanes": [], "file": "mismatch_0.py"}]
    if unexplained:
        distinct.append({**distinct[0], "rule": None, "members": list(range(unexplained))})
    n = fragments_per_seed * len(seeds)
    return {"target": "cuda", "date": "2026-12-02T01:00:00", "sources": sources, "sections": ["fuzz"],
            "command": command or f"python -m parity --target cuda --only fuzz --fuzz-seeds {len(seeds)}",
            "versions": {"reference": GPU, "minitriton": MT}, "unexplained": unexplained,
            "fuzz": {"seeds": [{"seed": s, "generated": fragments_per_seed, "run": fragments_per_seed, "shards": 8,
                                "replay": f"python -m parity --target cuda --only fuzz --seed {s}"} for s in seeds],
                     "generated": n, "fragments": n, "unresolved": 0, "outputs": 3 * n, "bounded_outputs": n,
                     "kernels": n // 16, "matches": n - 2 - unexplained, "invalid": [],
                     "mismatches": [{}] * (2 + unexplained), "distinct": distinct, "unexplained": unexplained,
                     "rules": [{**RULE, "this_run": {"live": live}}], "seconds": {}}}


def written(tmp_path, runs):
    paths = []
    for k, r in enumerate(runs):
        paths.append(tmp_path / f"cuda-fuzz-2026-12-02-run{k}.json")
        paths[-1].write_text(json.dumps(r))
    return [str(p) for p in paths]


def test_three_fresh_seeds_on_one_source_make_a_record(tmp_path, capsys):
    paths = written(tmp_path, [run([11, 12]), run([13])])
    assert fuzzrecord.main(paths + ["--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "cuda-fuzz-record-2026-12-02.json").read_text())
    assert rec["fragments"] == 36000 and [s["seed"] for s in rec["seeds"]] == [11, 12, 13]
    assert rec["problems"] == [] and rec["by_rule"] == {"int16_negation_widened": {"distinct": 2, "fragments": 4}}
    assert "verdict: **holds**" in (tmp_path / "cuda-fuzz-record-2026-12-02.md").read_text()


def test_what_breaks_a_record(tmp_path):
    def why(runs, **kw):
        return fuzzrecord.problems([{**r, "path": f"run{k}"} for k, r in enumerate(runs)],
                                   kw.get("min_fragments", 36000), kw.get("min_seeds", 3))
    assert why([run([11, 12]), run([13])]) == []
    assert any("source digest" in p for p in why([run([11, 12]), run([13], sources="other")]))
    assert any("source digest" in p for p in why([run([11, 12]), run([13], sources=None)]))
    assert any("appears twice" in p for p in why([run([11, 12]), run([12])]))
    assert any("fresh" in p for p in why([run([11, 12]), run([13], command="python -m parity --seed 13")]))
    assert any("35999 fragments" in p for p in why([run([11, 12], 12000), run([13], 11999)]))
    assert any("2 seed(s)" in p for p in why([run([11], 18000), run([13], 18000)]))
    assert any("no rule explains" in p for p in why([run([11, 12]), run([13], unexplained=1)]))
    assert any("not live" in p for p in why([run([11, 12]), run([13], live=False)]))
    long = run([13])
    long["fuzz"]["distinct"][0]["lines"] = 11
    assert any("not shrunk to 10 lines" in p for p in why([run([11, 12]), long]))


def test_the_source_digest_follows_the_code_not_the_results(tmp_path):
    for d in ("minitriton", "parity", "parity/results/fuzz-x"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "minitriton" / "a.py").write_text("x = 1\n")
    (tmp_path / "parity" / "b.py").write_text("y = 2\n")
    first = report.source_digest(tmp_path)
    (tmp_path / "parity" / "results" / "fuzz-x" / "mismatch_0.py").write_text("reproducer\n")
    (tmp_path / "README.md").write_text("docs\n")
    assert report.source_digest(tmp_path) == first
    (tmp_path / "minitriton" / "a.py").write_text("x = 3\n")
    assert report.source_digest(tmp_path) != first


def test_an_amendment_explains_what_a_rule_written_after_the_run_explains(tmp_path, capsys):
    runs = [run([11, 12]), run([13], unexplained=3)]
    for r in runs:
        r["sources_minitriton"] = "emu"
    paths = written(tmp_path, runs)
    assert fuzzrecord.main(paths) == 1                                        # one distinct mismatch unexplained

    def amendment(**kw):
        m = {"amends": pathlib.Path(paths[1]).name, "run_sources": "abc", "sources": "def",
             "sources_minitriton": "emu", "versions": {"reference": GPU, "minitriton": MT},
             "rules": [{**RULE, "name": "new_rule", "this_run": {"live": True}}],
             "mismatches": [{"distinct": 1, "reproduced": True, "rule": "new_rule", "detail": "..."}]}
        m.update(kw)
        path = tmp_path / f"amendment-{len(list(tmp_path.glob('amendment-*')))}.json"
        path.write_text(json.dumps(m))
        return ["--amend", str(path)]

    assert fuzzrecord.main(paths + amendment() + ["--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "cuda-fuzz-record-2026-12-02.json").read_text())
    assert rec["unexplained"] == 0 and rec["by_rule"]["new_rule"] == {"distinct": 1, "fragments": 3}
    assert [(x["run"], x["distinct"], x["rule"]) for x in rec["amended"]] == [(pathlib.Path(paths[1]).name, 1, "new_rule")]
    assert "Explained by an amendment" in (tmp_path / "cuda-fuzz-record-2026-12-02.md").read_text()
    not_again = [{"distinct": 1, "reproduced": False, "rule": None, "detail": "other"}]
    assert fuzzrecord.main(paths + amendment(mismatches=not_again)) == 1
    dead = [{**RULE, "name": "new_rule", "this_run": {"live": False}}]
    assert fuzzrecord.main(paths + amendment(rules=dead)) == 1
    assert fuzzrecord.main(paths + amendment(sources_minitriton="changed")) == 1
    assert fuzzrecord.main(paths + amendment(versions={"reference": {**GPU, "triton": "3.7.0"}, "minitriton": MT})) == 1
    assert fuzzrecord.main(paths + amendment(run_sources="older")) == 1
    assert fuzzrecord.main(paths + amendment(amends="elsewhere.json")) == 1
    out = capsys.readouterr().out
    assert "emulator's sources differ" in out and "not one of the runs" in out


def test_an_amendment_that_shrank_on_gives_its_kernel_and_its_rule(tmp_path):
    """A distinct mismatch whose shrink the run cut short (127 lines) counts with the kernel the amendment
    shrank it to, and with the rule that explains that kernel, live in the amendment."""
    runs = [run([11, 12]), run([13], unexplained=2)]
    runs[1]["fuzz"]["distinct"][1].update(lines=127, finished=False)
    for r in runs:
        r["sources_minitriton"] = "emu"
    paths = written(tmp_path, runs)
    name = pathlib.Path(paths[1]).name

    def amendment(**entry):
        m = {"amends": name, "run_sources": "abc", "sources": "def", "sources_minitriton": "emu",
             "versions": {"reference": GPU, "minitriton": MT},
             "rules": [{**RULE, "name": "new_rule", "this_run": {"live": True}}],
             "mismatches": [{"distinct": 1, "reproduced": True, "rule": "new_rule", "detail": "...", "lines": 6,
                             "finished": True, "source": "...", "file": "mismatch_1-amended.py", **entry}]}
        path = tmp_path / f"amendment-{len(list(tmp_path.glob('amendment-*')))}.json"
        path.write_text(json.dumps(m))
        return ["--amend", str(path)]

    assert any("not shrunk to 10 lines ([127])" in p for p in fuzzrecord.problems(
        [{**r, "path": f"run{k}"} for k, r in enumerate(runs)], 36000, 3))
    assert fuzzrecord.main(paths + amendment() + ["--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "cuda-fuzz-record-2026-12-02.json").read_text())
    assert [(x["distinct"], x["rule"], x["file"]) for x in rec["amended"]] == [(1, "new_rule", "mismatch_1-amended.py")]
    assert fuzzrecord.main(paths + amendment(lines=11)) == 1                  # still too long
    assert fuzzrecord.main(paths + amendment(rule=None)) == 1                 # the smaller kernel unexplained
    runs[1]["fuzz"]["distinct"][1]["rule"] = "int16_negation_widened"        # explained, but too long to count
    paths = written(tmp_path, runs)
    assert fuzzrecord.main(paths) == 1
    assert fuzzrecord.main(paths + amendment(rule=None)) == 1                 # the old rule does not carry over
    assert fuzzrecord.main(paths + amendment()) == 0


# ---- the committed run of record

RESULTS = ROOT / "parity" / "results"
_VALUE_LINE = re.compile(r"^# (out\d+) at \(([\d, ]*)\): minitriton (\S+), triton (\S+)$", re.M)

# Runs each reproducer's kernel on minitriton as its own `__main__` block would (torch tensors, bf16 from its
# bit patterns) and prints, per file, the value at the lane its header names, or that it ran (no value line).
_DRIVER = r"""
import json, re, runpy, sys
import minitriton
minitriton.install()
import numpy as np, torch
found = {}
for path in sys.argv[1:]:
    text = open(path).read()
    ns = runpy.run_path(path, run_name="reproducer")
    targs = [(torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == np.uint16
              else torch.from_numpy(a)) if isinstance(a, np.ndarray) else a for a in ns["ARGS"]]
    ns["fuzz_kernel"][ns["GRID"]](*targs)
    m = re.search(r"^# (out\d+) at \(([\d, ]*)\):", text, re.M)
    if m is None:
        found[path] = "ran"
        continue
    params = re.search(r"def fuzz_kernel\(([^)]*)\)", text).group(1).split(", ")
    (k,) = [i for i, p in enumerate(params) if p.endswith("_" + m.group(1))]
    lane = tuple(int(x) for x in m.group(2).split(","))
    found[path] = float(targs[k].to(torch.float64)[lane])
print(json.dumps(found))
"""


def _record():
    records = sorted(RESULTS.glob("cuda-fuzz-record-*.json"))
    assert records, "parity/results holds no fuzz run of record"
    return json.loads(records[-1].read_text())


def test_the_committed_fuzz_record_holds(tmp_path, capsys):
    rec = _record()
    assert rec["fragments"] >= 36000 and len(rec["seeds"]) >= 3 and rec["unexplained"] == 0
    assert fuzzrecord.main([str(RESULTS / r) for r in rec["runs"]] + ["--out", str(tmp_path)]) == 0
    for r in rec["runs"]:
        for d in json.loads((RESULTS / r).read_text())["fuzz"]["distinct"]:
            assert (RESULTS / d["file"]).is_file() and d["lines"] <= fuzzrecord.MAX_LINES


def test_committed_reproducers_still_compute_what_minitriton_computed_in_their_run():
    """Each committed GPU reproducer, run on today's minitriton, holds the value its run recorded for
    minitriton at the lane its header names (or runs, where only the GPU raised): a change of minitriton's
    results there means the fuzz results describe an older emulator."""
    files = sorted(RESULTS.glob("fuzz-cuda-*/mismatch_*.py"))
    assert files
    proc = subprocess.run([sys.executable, "-c", _DRIVER, *map(str, files)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    for f in files:
        m = _VALUE_LINE.search(f.read_text())
        if m is None:
            assert found[str(f)] == "ran" and "raised" in f.read_text().splitlines()[1], f
        else:
            want = float(m.group(3))
            assert found[str(f)] == want or (np.isnan(want) and np.isnan(found[str(f)])), (f, found[str(f)], want)


def test_a_recorded_command_names_no_folder_outside_the_repository():
    assert report.command("python -m parity", ["--only", "fuzz", "--out", "/root/out"]) == \
        "python -m parity --only fuzz --out DIR"
    assert report.command("python -m parity", ["--out=/tmp/x", "--seed", "3"]) == "python -m parity --out=DIR --seed 3"
    assert report.command("python -m parity", ["--out", str(ROOT / "parity" / "results")]) == \
        "python -m parity --out parity/results"
    assert report.command("python -m parity", ["--out"]) == "python -m parity --out"
