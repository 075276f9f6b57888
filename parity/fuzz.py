"""Differential fuzzing: hypothesis-generated kernels run on minitriton and on real Triton, compared.

1. Generate: `parity.fuzzgen.fragments(target)` in `shards` processes (hypothesis, one seed per shard,
   generate phase only). Each example is a fragment: one random program with its inputs and outputs.
2. Run: fragments are packed `per_kernel` to a kernel (each stores to its own outputs), so one compile
   serves many expressions; both sides run the same kernels in parallel worker processes. A packed kernel
   that fails on either side is re-run one fragment per kernel, to find the fragment at fault.
3. Compare: exact outputs bit for bit; a root output (exp/log/sqrt/`/`/sum/dot/FMA, see fuzzgen) within a
   bound computed from its operands, which are themselves compared exactly.
4. Shrink: for each mismatching fragment (up to `shrink_max`), hypothesis replays its shard with the same
   seed and shrinks it; candidates run live on both sides (one kernel each). The minimal fragment is
   written out as a runnable kernel source (parity/results/fuzz-*/mismatch_<n>.py).

Counts are reported honestly: fragments ("expressions"), outputs compared, and kernels compiled.
Both sides raising (an invalid program: a generator bug) is counted as `invalid`, never as a match.
"""
from __future__ import annotations

import json
import pathlib
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from parity.compare import exact, exact_any_zero, within
from parity.fuzzgen import PROGRAMS, fragments
from parity.oracle import BF16, PYTHON, REPO_ROOT, Case, child_env
from parity.runner import run_both

EPS = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24, "fp64": 2.0 ** -53}
TINY = 1e-37
MAX_REPRODUCERS = 6       # reproducer files written (the first mismatches, shrunk ones first come first)
MAX_SOURCES = 50          # mismatch sources kept in the results JSON
HEADER = "import triton\nimport triton.language as tl\n\n"


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
    """[(shard seed, shard size, index, Fragment)] for n examples over `shards` processes."""
    sizes = [n // shards + (1 if k < n % shards else 0) for k in range(shards)]
    jobs = [(target, size, seed + k) for k, size in enumerate(sizes) if size]
    if len(jobs) == 1:
        results = [_collect(jobs[0])]
    else:
        # one child process per shard (plain subprocesses: no fork under the pool threads, no re-import of
        # the caller's __main__ as multiprocessing's spawn would do)
        with tempfile.TemporaryDirectory(prefix="parity_gen_") as tmp:
            procs = []
            for k, (t, size, s) in enumerate(jobs):
                out = pathlib.Path(tmp) / f"shard{k}.pkl"
                procs.append((out, subprocess.Popen([PYTHON, "-m", "parity.fuzz", "--collect", t, str(size), str(s),
                                                     str(out)], cwd=REPO_ROOT, env=child_env("minitriton"))))
            results = []
            for out, proc in procs:
                if proc.wait() != 0 or not out.exists():
                    raise RuntimeError(f"fuzz generation shard failed (rc={proc.returncode})")
                results.append(pickle.loads(out.read_bytes()))
    out = []
    for (t, size, s), frags in zip(jobs, results):
        out += [(s, size, i, f) for i, f in enumerate(frags)]
    return out


# ---------------------------------------------------------------------------------------- pack and run

def _arg(arr, dtype):
    return BF16(arr) if dtype == "bf16" else arr


def _zeros(o):
    shape = (PROGRAMS,) + tuple(o.shape)
    return BF16(np.zeros(shape, np.uint16)) if o.dtype == "bf16" else np.zeros(shape, _np(o.dtype))


def _np(dtype):
    from parity.fuzzgen import NP
    return NP[dtype]


def kernel_case(frags) -> tuple:
    """(Case, slots): slots[j] maps fragment j's output names to the kernel's argument indices."""
    params, args, body, slots = [], [], [], []
    for j, f in enumerate(frags):
        pre = f"f{j}_"
        slot = {}
        for name, arr, dtype in f.inputs:
            params.append(name.replace("__F__", pre))
            args.append(_arg(arr, dtype))
        for o in f.outputs:
            slot[o.name] = len(args)
            params.append(o.name.replace("__F__", pre))
            args.append(_zeros(o))
        for name, value in f.scalars:
            params.append(name.replace("__F__", pre))
            args.append(value)
        body += ["    " * (1 + indent) + text.replace("__F__", pre) for indent, text in f.lines]
        slots.append(slot)
    src = HEADER + "@triton.jit\ndef fuzz_kernel(" + ", ".join(params) + "):\n    pid = tl.program_id(0)\n" + \
        "\n".join(body) + "\n"
    return Case(src, "fuzz_kernel", (PROGRAMS,), tuple(args)), slots


def _f64(a):
    return a.to_float().astype(np.float64) if isinstance(a, BF16) else np.asarray(a, np.float64)


def bound(o, ref_outs):
    """The allowed |difference| of a root output, from the reference's operand values."""
    r = np.abs(_f64(ref_outs[o.name]))
    ops = [_f64(ref_outs[n]) for n in o.operands]
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
            return 2 * o.info["K"] * acc_e * (a @ b) + (2 * e * r if o.dtype == "fp16" else 0) + TINY
        if o.kind == "fma":
            return e * np.abs(ops[0] * ops[1]) + 2 * e * r + TINY
    raise ValueError(f"unknown root kind {o.kind}")


@dataclass
class Verdict:
    status: str                   # match, mismatch, invalid
    detail: str = ""
    outputs: int = 0
    bounded: int = 0


def judge(frag, slot, mt, ref, target="cuda") -> Verdict:
    if mt.error or ref.error:
        if mt.error and ref.error:
            return Verdict("invalid", f"both raised: minitriton {_line(mt.error)}; triton {_line(ref.error)}")
        side, err = ("minitriton", mt.error) if mt.error else ("triton", ref.error)
        return Verdict("mismatch", f"only {side} raised: {_line(err)}")
    ref_outs = {name: ref.args[i] for name, i in slot.items()}
    problems, bounded = [], 0
    for o in frag.outputs:
        m, r = mt.args[slot[o.name]], ref.args[slot[o.name]]
        if o.kind == "exact":
            res = exact(m, r) if target == "cuda" else exact_any_zero(m, r)
        else:
            bounded += 1
            res = within(m, r, bound(o, ref_outs))
        if not res.ok:
            problems.append(f"{o.name.replace('__F__', '')} ({o.dtype}, {o.kind}): {res.detail}")
    return Verdict("mismatch" if problems else "match", "; ".join(problems), len(frag.outputs), bounded)


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


def evaluate(frags, pools, target, per_kernel, stats, deadline=None):
    """Verdict per fragment. A packed kernel that raises on either side is split in halves and re-run
    until the fragment at fault runs alone (after `deadline`, the rest get "unresolved")."""
    verdicts = [None] * len(frags)
    groups = [list(range(i, min(i + per_kernel, len(frags)))) for i in range(0, len(frags), per_kernel)]
    while groups:
        if deadline is not None and time.monotonic() > deadline and stats["kernels"]:
            for g in groups:
                for i in g:
                    verdicts[i] = Verdict("unresolved", "not run: the fuzz time budget ran out while isolating "
                                                        "a failing packed kernel")
            break
        built = [kernel_case([frags[i] for i in g]) for g in groups]
        mt, ref = run_both(pools, target, [c for c, _ in built])
        stats["kernels"] += len(built)
        split = []
        for g, (case, slots), m, r in zip(groups, built, mt, ref):
            if (m.error or r.error) and len(g) > 1:
                split += [g[:len(g) // 2], g[len(g) // 2:]]
                continue
            for i, slot in zip(g, slots):
                verdicts[i] = judge(frags[i], slot, m, r, target)
        groups = split
    return verdicts


# ---------------------------------------------------------------------------------------- shrink

class _Mismatch(AssertionError):
    pass


def shrink(target, shard_seed, shard_n, wanted_key, known, pools, stats, budget_s=120.0):
    """Replay the shard's hypothesis run and shrink the example whose key is `wanted_key`."""
    from hypothesis import Phase, given
    from hypothesis import seed as hseed
    state = {"hit": False, "best": None, "deadline": None}

    def outcome(frag):
        key = frag.key()
        if key not in known:
            if state["deadline"] is not None and time.monotonic() > state["deadline"]:
                return "skip"
            known[key] = evaluate([frag], pools, target, 1, stats)[0].status
            stats["shrink_runs"] += 1
        return known[key]

    @hseed(shard_seed)
    @_settings(shard_n, [Phase.generate, Phase.shrink])
    @given(fragments(target))
    def check(frag):
        key = frag.key()
        if not state["hit"]:
            if key != wanted_key:
                return
            state["hit"] = True
            state["deadline"] = time.monotonic() + budget_s
        if outcome(frag) == "mismatch":
            state["best"] = frag
            raise _Mismatch(key)

    try:
        check()
    except _Mismatch:
        pass
    return state["best"]


# ---------------------------------------------------------------------------------------- the run

@dataclass
class FuzzReport:
    target: str
    generated: int = 0
    fragments: int = 0
    unresolved: int = 0
    outputs: int = 0
    bounded_outputs: int = 0
    kernels: int = 0
    shrink_runs: int = 0
    matches: int = 0
    invalid: list = field(default_factory=list)
    mismatches: list = field(default_factory=list)
    seconds: dict = field(default_factory=dict)

    def as_dict(self):
        return dict(self.__dict__)


def run(target, n, pools, per_kernel=8, shards=1, seed=0, shrink_max=3, shrink_budget_s=120.0, out_dir=None,
        log=print, budget_s=None, wave=None, stop_at=None) -> FuzzReport:
    """Generate n fragments, run them in waves until done or `budget_s` (seconds for generate + run) is
    spent, shrink up to `shrink_max` distinct mismatches; the report counts only what actually ran."""
    rep = FuzzReport(target)
    t0 = time.monotonic()
    deadline = None if budget_s is None else t0 + budget_s
    items = generate(target, n, shards, seed)
    rep.seconds["generate"] = round(time.monotonic() - t0, 1)
    rep.generated = len(items)
    log(f"fuzz: generated {len(items)} fragments in {rep.seconds['generate']} s ({shards} shard(s), seed {seed})")
    stats = {"kernels": 0, "shrink_runs": 0}
    t1 = time.monotonic()
    wave = wave or max(per_kernel * 32, len(items))
    verdicts, done = [], 0
    while done < len(items):
        t_wave = time.monotonic()
        part = [f for _, _, _, f in items[done:done + wave]]
        verdicts += evaluate(part, pools, target, per_kernel, stats, deadline)
        done += len(part)
        took = time.monotonic() - t_wave
        log(f"fuzz: {done}/{len(items)} fragments run, {stats['kernels']} kernels, {time.monotonic() - t1:.0f} s")
        if deadline is not None and time.monotonic() + took > deadline and done < len(items):
            log(f"fuzz: time budget reached: {len(items) - done} generated fragments not run")
            break
    rep.seconds["run"] = round(time.monotonic() - t1, 1)
    items = items[:done]
    known = {}
    for (s, size, i, f), v in zip(items, verdicts):
        known[f.key()] = v.status
        if v.status == "unresolved":
            rep.unresolved += 1
            continue
        rep.fragments += 1
        rep.outputs += v.outputs
        rep.bounded_outputs += v.bounded
        if v.status == "match":
            rep.matches += 1
        elif v.status == "invalid":
            rep.invalid.append({"key": f.key(), "shard_seed": s, "index": i, "detail": v.detail[:1000],
                                "source": kernel_case([f])[0].source if len(rep.invalid) < 20 else None})
        else:
            rep.mismatches.append({"key": f.key(), "shard_seed": s, "shard_size": size, "index": i,
                                   "detail": v.detail[:2000], "fragment": f})
    log(f"fuzz: {rep.fragments} fragments ({rep.outputs} outputs, {rep.bounded_outputs} bounded) in "
        f"{stats['kernels']} kernels, {rep.seconds['run']} s: {rep.matches} match, {len(rep.mismatches)} mismatch, "
        f"{len(rep.invalid)} invalid")
    t2 = time.monotonic()
    seen_details = set()
    for k, mm in enumerate(rep.mismatches):
        kind = mm["detail"].split(":")[0]
        late = stop_at is not None and time.monotonic() + shrink_budget_s > stop_at
        if late or k >= shrink_max * 4 or len(seen_details) >= shrink_max or kind in seen_details:
            mm["shrunk"] = None
            continue
        seen_details.add(kind)
        log(f"fuzz: shrinking mismatch {k} ({mm['detail'][:120]})")
        best = shrink(target, mm["shard_seed"], mm["shard_size"], mm["key"], known, pools, stats, shrink_budget_s)
        mm["shrunk"] = best
    rep.seconds["shrink"] = round(time.monotonic() - t2, 1)
    rep.kernels, rep.shrink_runs = stats["kernels"], stats["shrink_runs"]
    for k, mm in enumerate(rep.mismatches):
        frag = mm.pop("fragment")
        best = mm.pop("shrunk", None) or frag
        mm["source"] = kernel_case([best])[0].source if k < MAX_SOURCES else None
        mm["minimal"] = best is not frag
        if out_dir is not None and k < MAX_REPRODUCERS:
            mm["file"] = write_reproducer(pathlib.Path(out_dir), k, target, best, mm, pools)
    return rep


def write_reproducer(folder, k, target, frag, mm, pools) -> str:
    """A runnable kernel source for one mismatch (inputs inline), with both sides' outputs as comments."""
    folder.mkdir(parents=True, exist_ok=True)
    case, slots = kernel_case([frag])
    mt, ref = run_both(pools, target, [case])
    verdict = judge(frag, slots[0], mt[0], ref[0], target)
    names = [p.strip() for p in case.source.split("def fuzz_kernel(")[1].split(")")[0].split(",")]
    lines = [f"# parity fuzz mismatch {k} (target {target}{', shrunk by hypothesis' if mm['minimal'] else ''})",
             f"# {verdict.status}: {verdict.detail[:2000]}", "# Run: python this_file.py (real Triton + torch "
             "on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().", ""]
    src = case.source
    arrays = []
    for name, a in zip(names, case.args):
        if isinstance(a, BF16):
            arrays.append(f"{name} = bf16_bits({a.array.tolist()!r})")
        elif isinstance(a, np.ndarray):
            arrays.append(f"{name} = np.array({a.tolist()!r}, dtype=np.{a.dtype.name})")
        else:
            arrays.append(f"{name} = {a!r}")
    outs = {}
    for o in frag.outputs:
        i = slots[0][o.name]
        for side, res in (("minitriton", mt[0]), ("triton", ref[0])):
            v = res.args[i]
            outs.setdefault(o.name.replace("__F__", "f0_"), {})[side] = (
                _f64(v).tolist() if res.error is None else None)
    runner = "\n".join([
        "", "import numpy as np", "", "",
        "def bf16_bits(values):", "    return np.array(values, dtype=np.uint16)", "", "",
        *arrays,
        f"ARGS = [{', '.join(names)}]",
        f"GRID = ({PROGRAMS},)",
        f"OUTPUTS = {json.dumps(outs, default=str)[:50000]!r}  # JSON: per output, each side's values",
        "", "",
        "if __name__ == '__main__':",
        "    import os",
        "    import torch",
        "    dev = 'cpu' if os.environ.get('TRITON_INTERPRET') == '1' else 'cuda'",
        "    targs = [(torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == np.uint16",
        "              else torch.from_numpy(a)).to(dev) if isinstance(a, np.ndarray) else a for a in ARGS]",
        "    fuzz_kernel[GRID](*targs)",
        "    for a in targs:",
        "        if hasattr(a, 'cpu'):",
        "            print(a.float().cpu().numpy() if a.dtype == torch.bfloat16 else a.cpu().numpy())",
        ""])
    path = folder / f"mismatch_{k}.py"
    path.write_text("\n".join(lines) + src + runner)
    return str(path)


if __name__ == "__main__":  # pragma: no cover - a generation shard: --collect TARGET N SEED OUTFILE
    if len(sys.argv) == 6 and sys.argv[1] == "--collect":
        frags = _collect((sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        pathlib.Path(sys.argv[5]).write_bytes(pickle.dumps(frags))
