"""Differential fuzzing: hypothesis-generated kernels run on minitriton and on real Triton, compared, and every
difference shrunk and explained.

1. Seeds: each run draws fresh seeds (printed; `--seed S` replays one) unless given. A seed's fragments come
   from `shards` hypothesis processes (shard k uses seed * 64 + k, generate phase only), so a seed, the
   fragment count and the shard count replay the same fragments.
2. Run: fragments are packed `per_kernel` to a kernel (`case.kernel_case`); both sides run the same
   kernels in parallel worker processes; a packed kernel that fails on either side is split until the
   fragment at fault runs alone. Outputs are judged by `case.judge`.
3. Shrink: mismatches that differ identically (the same values at the same lanes: hypothesis's near-copies of
   one program) are shrunk once; every other mismatch is shrunk by `shrink.shrink_many`, all at once,
   candidates run live on both sides. A fragment that does not differ alone (the compiler treats it otherwise
   among the other fragments' code) is shrunk as its whole packed kernel, the other fragments dropped first.
4. Explain: each shrunk kernel is classified by `rules`: a named rule with its reason and its evidence, a
   minimised probe run in the same session on the same device. A mismatch no rule explains is unexplained,
   and fails the run. Distinct mismatches (a rule and a shrunk source, names aside) get a runnable reproducer.

Counts are reported honestly: fragments ("expressions"), outputs compared, kernels compiled, candidates run.
Both sides raising (an invalid program: a generator bug) is counted as `invalid`, never as a match.
"""
from __future__ import annotations

import ast
import pathlib
import pickle
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from parity.fuzz import rules
from parity.fuzz.case import evaluate, f64, kernel_case, packed_fragment, run_alone
from parity.fuzz.fragment import PROGRAMS
from parity.fuzz.gen import fragments
from parity.fuzz.shrink import kernel_lines, shrink_many
from parity.oracle import BF16, PYTHON, REPO_ROOT, child_env

MAX_REPRODUCERS = 24      # reproducer files written (one per distinct mismatch)
SHARD_STRIDE = 64         # shard k of seed s draws with hypothesis seed s * SHARD_STRIDE + k


def fresh_seed() -> int:
    return secrets.randbelow(2 ** 31 - 1) + 1


# ---------------------------------------------------------------------------------------- generate

def _settings(n, phases):
    from hypothesis import HealthCheck, settings
    return settings(max_examples=n, database=None, deadline=None, phases=phases, derandomize=False,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False)


def _collect(args):
    target, n, seed = args
    from hypothesis import Phase, given
    from hypothesis import seed as hseed
    out = []

    @hseed(seed)
    @_settings(n, [Phase.generate])
    @given(fragments(target))
    def collect(frag):
        out.append(frag)

    collect()
    return out


def generate(target, n, shards=1, seed=0):
    """[(seed, index, Fragment)] for n examples of `seed` over `shards` processes."""
    sizes = [n // shards + (1 if k < n % shards else 0) for k in range(shards)]
    jobs = [(target, size, seed * SHARD_STRIDE + k) for k, size in enumerate(sizes) if size]
    if len(jobs) == 1:
        results = [_collect(jobs[0])]
    else:
        # one child process per shard (plain subprocesses: no fork under the pool threads, no re-import of
        # the caller's __main__ as multiprocessing's spawn would do)
        with tempfile.TemporaryDirectory(prefix="parity_gen_") as tmp:
            procs = []
            for k, (t, size, s) in enumerate(jobs):
                out = pathlib.Path(tmp) / f"shard{k}.pkl"
                procs.append((out, subprocess.Popen([PYTHON, "-m", "parity.fuzz.run", "--collect", t, str(size), str(s),
                                                     str(out)], cwd=REPO_ROOT, env=child_env("minitriton"))))
            results = []
            for out, proc in procs:
                if proc.wait() != 0 or not out.exists():
                    raise RuntimeError(f"fuzz generation shard failed (rc={proc.returncode})")
                results.append(pickle.loads(out.read_bytes()))
    frags = [f for part in results for f in part]
    return [(seed, i, f) for i, f in enumerate(frags)]


# ---------------------------------------------------------------------------------------- the report

@dataclass
class FuzzReport:
    target: str
    seeds: list = field(default_factory=list)       # {seed, fragments, shards, replay}
    generated: int = 0
    fragments: int = 0
    unresolved: int = 0
    outputs: int = 0
    bounded_outputs: int = 0
    kernels: int = 0
    shrink_runs: int = 0
    matches: int = 0
    invalid: list = field(default_factory=list)
    mismatches: list = field(default_factory=list)  # every mismatching fragment: where it came from, its class
    distinct: list = field(default_factory=list)    # distinct mismatches: rule, shrunk kernel, reproducer
    rules: list = field(default_factory=list)       # every rule with its probe's evidence from this run
    unexplained: int = 0
    seconds: dict = field(default_factory=dict)

    def as_dict(self):
        return dict(self.__dict__)


def replay_command(target, seed, n, shards) -> str:
    return f"python -m parity --target {target} --only fuzz --seed {seed} --fuzz-examples {n} --shards {shards}"


def normalized(source: str) -> str:
    """A kernel source with its names numbered in order of appearance (two shrunk kernels that differ only in
    names are the same)."""
    names = {}
    tree = ast.parse(source)
    for n in ast.walk(tree):
        if isinstance(n, ast.arg) and n.arg.startswith("f0_"):
            names.setdefault(n.arg, f"a{len(names)}")
    body = ast.unparse(tree)
    for old in sorted(names, key=len, reverse=True):
        body = body.replace(old, names[old])
    for n in sorted({t for t in body.split() if t.startswith("f0_")}, key=len, reverse=True):
        body = body.replace(n, "v")
    return body


def run(target, n, pools, per_kernel=8, shards=1, seeds=(0,), shrink_seconds=120.0, out_dir=None, log=print,
        budget_s=None, wave=None, stop_at=None) -> FuzzReport:
    """Generate n fragments per seed, run them in waves until done or `budget_s` (seconds for generate + run)
    is spent, shrink and classify the mismatches; the report counts only what actually ran."""
    rep = FuzzReport(target)
    t0 = time.monotonic()
    deadline = None if budget_s is None else t0 + budget_s
    items = []
    for seed in seeds:
        part = generate(target, n, shards, seed)
        items += part
        rep.seeds.append({"seed": seed, "generated": len(part), "shards": shards,
                          "replay": replay_command(target, seed, n, shards)})
        log(f"fuzz: seed {seed}: {len(part)} fragments ({shards} shard(s)); replay: "
            f"{replay_command(target, seed, n, shards)}")
    rep.seconds["generate"] = round(time.monotonic() - t0, 1)
    rep.generated = len(items)
    stats = {"kernels": 0}
    t1 = time.monotonic()
    wave = wave or max(per_kernel * 32, len(items))
    verdicts, done = [], 0
    while done < len(items):
        t_wave = time.monotonic()
        part = [f for _, _, f in items[done:done + wave]]
        for v in evaluate(part, pools, target, per_kernel, stats, deadline):
            v.group = tuple(done + i for i in v.group)
            verdicts.append(v)
        done += len(part)
        took = time.monotonic() - t_wave
        log(f"fuzz: {done}/{len(items)} fragments run, {stats['kernels']} kernels, {time.monotonic() - t1:.0f} s")
        if deadline is not None and time.monotonic() + took > deadline and done < len(items):
            log(f"fuzz: time budget reached: {len(items) - done} generated fragments not run")
            break
    rep.seconds["run"] = round(time.monotonic() - t1, 1)
    rep.kernels = stats["kernels"]
    items = items[:done]
    for seed_info in rep.seeds:
        seed_info["run"] = sum(1 for s, _, _ in items if s == seed_info["seed"])
    found, at = [], []
    for g, ((seed, i, f), v) in enumerate(zip(items, verdicts)):
        if v.status == "unresolved":
            rep.unresolved += 1
            continue
        rep.fragments += 1
        rep.outputs += v.outputs
        rep.bounded_outputs += v.bounded
        if v.status == "match":
            rep.matches += 1
        elif v.status == "invalid":
            rep.invalid.append({"seed": seed, "index": i, "detail": v.detail[:1000],
                                "source": kernel_case([f])[0].source if len(rep.invalid) < 20 else None})
        else:
            found.append((seed, i, f, v))
            at.append(g)
    log(f"fuzz: {rep.fragments} fragments ({rep.outputs} outputs, {rep.bounded_outputs} bounded) in "
        f"{rep.kernels} kernels, {rep.seconds['run']} s: {rep.matches} match, {len(found)} mismatch, "
        f"{len(rep.invalid)} invalid")
    _explain(rep, found, at, [f for _, _, f in items], pools, target, shrink_seconds, stop_at, out_dir, log)
    return rep


def _with_its_kernel(index, frags, verdict):
    """(fragment, verdict) for fragment `index` of `frags`, plus the packed kernel it was judged in, as one
    fragment, when it shared one."""
    group = verdict.group
    if len(group) < 2 or index not in group or verdict.raised:
        return frags[index], verdict
    return frags[index], verdict, packed_fragment([frags[i] for i in group], group.index(index), verdict)


def _explain(rep, found, at, frags, pools, target, shrink_seconds, stop_at, out_dir, log):
    """Shrink the mismatches (one per identical difference), classify them, group the distinct ones."""
    t2 = time.monotonic()
    reps = {}
    for k, (_, _, f, v) in enumerate(found):
        reps.setdefault((v.signature()[0], v.detail.split(" ", 1)[-1]), k)
    leaders = sorted(set(reps.values()))
    deadline = t2 + shrink_seconds
    if stop_at is not None:
        deadline = min(deadline, stop_at)
    stats = {"kernels": 0}
    if leaders:
        log(f"fuzz: shrinking {len(leaders)} mismatch(es) ({len(found) - len(leaders)} identical to one of them)")
    shrunk = shrink_many([_with_its_kernel(at[k], frags, found[k][3]) for k in leaders],
                         lambda frags: run_alone(frags, pools, target, stats), deadline) if leaders else []
    rep.shrink_runs = stats["kernels"]
    rep.seconds["shrink"] = round(time.monotonic() - t2, 1)
    evidence = rules.check(pools, target) if leaders else {}
    rep.rules = rules.describe(evidence, target)
    by_leader, distinct = {}, {}
    for k, s in zip(leaders, shrunk):
        rule = rules.classify(s, evidence, target)
        source = kernel_case([s.frag])[0].source
        key = (rule.name if rule else None, normalized(source))
        if key not in distinct:
            distinct[key] = {"rule": rule.name if rule else None, "source": source, "lines": kernel_lines(s.frag),
                             "detail": s.verdict.detail[:1500], "alone": s.alone, "packed": s.packed, "finished": s.finished,
                             "steps": s.steps, "tried": s.tried, "members": [], "lanes": differing_lanes(s)}
            if out_dir is not None and len(distinct) <= MAX_REPRODUCERS:
                distinct[key]["file"] = write_reproducer(pathlib.Path(out_dir), len(distinct) - 1, target, s,
                                                         distinct[key])
        by_leader[k] = list(distinct).index(key)
    rep.distinct = list(distinct.values())
    for k, (seed, i, f, v) in enumerate(found):
        leader = reps[(v.signature()[0], v.detail.split(" ", 1)[-1])]
        d = by_leader[leader]
        rep.distinct[d]["members"].append(k)
        rep.mismatches.append({"seed": seed, "index": i, "key": f.key(), "detail": v.detail[:600], "distinct": d,
                               "shrunk_with": leader if leader != k else None})
    rep.unexplained = sum(len(d["members"]) for d in rep.distinct if d["rule"] is None)
    for d in rep.distinct:
        log(f"fuzz: {len(d['members'])} mismatch(es) -> {d['lines']}-line kernel: "
            f"{d['rule'] or 'UNEXPLAINED'}: {d['detail'][:160]}")


def differing_lanes(s) -> list:
    """Both sides' values at the first differing lane of each differing output (shrunk kernel)."""
    out = []
    if s.mt is None or s.ref is None or s.verdict.raised:
        return out
    case, slots = kernel_case([s.frag])
    for name, lane in s.verdict.bad.items():
        i = slots[0][name]
        out.append({"output": name.replace("__F__", ""), "lane": list(lane),
                    "minitriton": repr(float(f64(s.mt.args[i])[lane])), "triton": repr(float(f64(s.ref.args[i])[lane]))})
    return out


def _value_code(v) -> str:
    """Python source for a number or a nested list of them (infinities and NaN as `np.inf`, `np.nan`)."""
    if isinstance(v, list):
        return "[" + ", ".join(_value_code(x) for x in v) + "]"
    if isinstance(v, float) and not np.isfinite(v):
        return "np.nan" if np.isnan(v) else ("np.inf" if v > 0 else "-np.inf")
    return repr(v)


def _array_code(a) -> str:
    if isinstance(a, BF16):
        a = a.array
        wrap = "bf16_bits({})"
    else:
        wrap = "{}"
    flat = np.unique(a)
    if len(flat) == 1:
        return wrap.format(f"np.full({a.shape!r}, {_value_code(flat[0].item())}, dtype=np.{a.dtype.name})")
    return wrap.format(f"np.array({_value_code(a.tolist())}, dtype=np.{a.dtype.name})")


def write_reproducer(folder, k, target, s, info, stem=None) -> str:
    """A runnable kernel for one distinct mismatch (inputs inline), with both sides' values as comments, as
    `<stem>.py` (default `mismatch_<k>`) and its fragment beside it as `<stem>.pkl`."""
    folder.mkdir(parents=True, exist_ok=True)
    case, _ = kernel_case([s.frag])
    names = [p.strip() for p in case.source.split("def fuzz_kernel(")[1].split(")")[0].split(",") if p.strip()]
    rule = info["rule"] or "UNEXPLAINED"
    lines = [f"# parity fuzz: distinct mismatch {k} on {target} ({rule}); shrunk to a {info['lines']}-line kernel",
             f"# {info['detail'][:1000]}"]
    lines += [f"# {ln['output']} at {tuple(ln['lane'])}: minitriton {ln['minitriton']}, triton {ln['triton']}"
              for ln in info["lanes"]]
    lines += ["# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after "
              "minitriton.install().", ""]
    arrays = [f"{name} = {_array_code(a) if isinstance(a, (np.ndarray, BF16)) else _value_code(a)}"
              for name, a in zip(names, case.args)]
    runner = ["", "import numpy as np", "", "",
              "def bf16_bits(values):", "    return np.asarray(values, dtype=np.uint16)", "", "",
              *arrays, f"ARGS = [{', '.join(names)}]", f"GRID = ({PROGRAMS},)", "", "",
              "if __name__ == '__main__':",
              "    import os",
              "    import torch",
              "    dev = 'cpu' if os.environ.get('TRITON_INTERPRET') == '1' else 'cuda'",
              "    targs = [(torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == np.uint16",
              "              else torch.from_numpy(a)).to(dev) if isinstance(a, np.ndarray) else a for a in ARGS]",
              "    fuzz_kernel[GRID](*targs)",
              "    for a in targs:",
              "        if hasattr(a, 'cpu'):",
              "            print(a.float().cpu().numpy() if a.dtype == torch.bfloat16 else a.cpu().numpy())", ""]
    path = folder / f"{stem or f'mismatch_{k}'}.py"
    path.write_text("\n".join(lines) + case.source + "\n".join(runner))
    path.with_suffix(".pkl").write_bytes(pickle.dumps(s.frag))       # the shrunk fragment, for parity.fuzz.amend
    return f"{folder.name}/{path.name}"


if __name__ == "__main__":  # pragma: no cover - a generation shard: --collect TARGET N SEED OUTFILE
    if len(sys.argv) == 6 and sys.argv[1] == "--collect":
        frags = _collect((sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        pathlib.Path(sys.argv[5]).write_bytes(pickle.dumps(frags))
