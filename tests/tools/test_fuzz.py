"""The parity fuzzer's parts on the CPU: seeds, the shrinker, the types, the rules that explain GPU differences.

The shrinker runs against a synthetic reference (minitriton on a source whose `^` reads `|`: a difference with a
known cause) and against Triton's CPU interpreter (integer division by zero: -1 on the GPU and in minitriton, 0
in the interpreter). The rules are checked on mismatches made from minitriton's own results and a GPU result
built the way each rule says the GPU behaves, and on near misses that they must not explain.
"""
from __future__ import annotations

import ast
import pathlib
import re
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from parity.fuzz import case as fuzzcase, explain as fuzzexplain, rules as fuzzrules  # noqa: E402
from parity.fuzz import run as fuzzrun, shrink as fuzzshrink, shrink_passes, source as fuzzsource  # noqa: E402
from parity.fuzz.rules import common as rules_common, dots as rules_dots, integers as rules_integers  # noqa: E402
from parity.fuzz.case import f64, judge, kernel_case, run_alone  # noqa: E402
from parity.fuzz.fragment import Fragment, Output  # noqa: E402
from parity.fuzz.types import infer  # noqa: E402
from parity.oracle import OracleUnavailable, Pool, Result, clone, run_in_minitriton  # noqa: E402

OFFS = "pid * 8 + tl.arange(0, 8)"


def fragment(lines, inputs, outputs, scalars=(), shape=(8,)):
    return Fragment([(0, ln) if isinstance(ln, str) else ln for ln in lines], list(inputs), list(scalars),
                    list(outputs), tuple(shape))


def _stored_expression(expr, x, dtype, out_dtype):
    """A fragment that loads x (two programs of 8 lanes) as `__F__x1` and stores `expr`."""
    return fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", f"tl.store(__F__out2 + {OFFS}, {expr})"],
                    [("__F__in1", x, dtype)], [Output("__F__out2", out_dtype, (8,))])


def run_twisted(frags, twist=lambda src: src.replace(" ^ ", " | ")):
    """(Verdict, minitriton, "reference") per fragment: the reference is minitriton on the twisted source."""
    out = []
    for f in frags:
        case, slots = kernel_case([f])
        mt = run_in_minitriton(case.source, case.kernel, case.grid, case.args, raise_errors=False)
        ref = run_in_minitriton(twist(case.source), case.kernel, case.grid, case.args, raise_errors=False)
        out.append((judge(f, slots[0], mt, ref, "cuda"), mt, ref))
    return out


# ------------------------------------------------------------------------------------------- seeds


def test_a_seed_replays_and_fresh_seeds_differ():
    a = [f.key() for _, _, f in fuzzrun.generate("interpreter", 12, 1, 77)]
    b = [f.key() for _, _, f in fuzzrun.generate("interpreter", 12, 1, 77)]
    c = [f.key() for _, _, f in fuzzrun.generate("interpreter", 12, 1, 78)]
    assert a == b and len(set(a)) > 6
    assert len(set(a) & set(c)) <= 2          # hypothesis may start any seed with its simplest example
    assert len({fuzzrun.fresh_seed() for _ in range(8)}) == 8
    assert "--seed 77 --fuzz-examples 12 --shards 1" in fuzzrun.replay_command("cuda", 77, 12, 1)


def test_distinct_kernels_are_told_apart_by_their_code_not_their_names():
    a = "def fuzz_kernel(f0_in1, f0_out3):\n    f0_x2 = tl.load(f0_in1)\n    tl.store(f0_out3, -f0_x2)\n"
    b = "def fuzz_kernel(f0_in7, f0_out9):\n    f0_x8 = tl.load(f0_in7)\n    tl.store(f0_out9, -f0_x8)\n"
    c = "def fuzz_kernel(f0_in7, f0_out9):\n    f0_x8 = tl.load(f0_in7)\n    tl.store(f0_out9, ~f0_x8)\n"
    assert fuzzrun.normalized(a) == fuzzrun.normalized(b) != fuzzrun.normalized(c)


def _guards_in_dot_operands(frags):
    """(dot operands drawn, those computed through a divisor guard, other statements with one)."""
    seen = in_operands = elsewhere = 0
    for f in frags:
        typed = infer(f)
        guards = {id(n) for n in typed.nodes() if rules_integers._guarded_divisor(n) is not None}
        operands = {ast.unparse(a) for c in rules_common.calls(typed, "tl.dot") for a in c.args[:2]}
        for stmt in typed.tree.body:
            guarded = any(id(n) in guards for n in ast.walk(stmt))
            if isinstance(stmt, ast.Assign) and ast.unparse(stmt.targets[0]) in operands:
                seen, in_operands = seen + 1, in_operands + guarded
            else:
                elsewhere += guarded
    return seen, in_operands, elsewhere


def test_dot_operands_do_not_divide_integers_on_the_gpu():
    """On the cuda target a dot's operands are not computed through an integer division or remainder: the dot's
    own copy of such an operand may take the divisor guard's other arm (semantics S15.29), unseen in any stored
    output. Guards stay everywhere else, and in the interpreter target's dot operands."""
    seen, in_operands, elsewhere = _guards_in_dot_operands(f for _, _, f in fuzzrun.generate("cuda", 400, 1, 991))
    assert seen > 100 and in_operands == 0 and elsewhere > 0
    seen, in_operands, _ = _guards_in_dot_operands(f for _, _, f in fuzzrun.generate("interpreter", 400, 1, 991))
    assert seen > 100 and in_operands > 0
    offs = "tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]"
    x = np.ones((2, 16, 16), np.int16)
    guarded = fragment([f"__F__x1 = tl.load(__F__in1 + pid * 256 + {offs})",
                        "__F__v2 = (__F__x1 % tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1)).to(tl.float16)",
                        f"tl.store(__F__out3 + pid * 256 + {offs}, tl.dot(__F__v2, __F__v2))"],
                       [("__F__in1", x, "int16")], [Output("__F__out3", "fp32", (16, 16))], shape=(16, 16))
    assert _guards_in_dot_operands([guarded]) == (1, 1, 0)          # the check sees one where it is


def test_generated_gpu_fragments_compile_on_minitriton():
    """Every fragment the cuda target generates is a valid Triton program: minitriton compiles and runs it
    (a program both sides refuse is a generator bug, counted `invalid` by a GPU run)."""
    frags = [f for _, _, f in fuzzrun.generate("cuda", 960, 1, 7)]
    for k in range(0, len(frags), 16):
        case, _ = kernel_case(frags[k:k + 16])
        res = run_in_minitriton(case.source, case.kernel, case.grid, case.args, raise_errors=False)
        assert res.error is None, (res.error, case.source)


# ------------------------------------------------------------------------------------------- the shrinker


def test_shrinker_reduces_generated_kernels_to_the_cause():
    frags = [f for _, _, f in fuzzrun.generate("cuda", 960, 1, 7)]
    outcomes = run_twisted(frags)
    found = [(f, v) for f, (v, _, _) in zip(frags, outcomes) if v.status == "mismatch" and not v.raised]
    assert len(found) >= 5
    found = sorted(found, key=lambda fv: -len(fv[0].lines))[:4]
    assert min(len(f.lines) for f, _ in found) >= 6
    shrunk = fuzzshrink.shrink_many(found, run_twisted)
    for (before, _), s in zip(found, shrunk):
        source = kernel_case([s.frag])[0].source
        assert s.alone and s.finished and s.steps > 0
        assert fuzzshrink.kernel_lines(s.frag) <= 10, source
        assert fuzzshrink.size(s.frag) < fuzzshrink.size(before)
        assert len(s.frag.inputs) + len(s.frag.scalars) + len(s.frag.outputs) <= 4, source
        assert " ^ " in source, source                  # the cause stays; what it needs, nothing more
        again = run_twisted([s.frag])[0][0]
        assert again.status == "mismatch" and set(again.bad) & {o.name for o in s.frag.outputs}


def test_a_difference_only_inside_its_packed_kernel_is_shrunk_there():
    """A fragment that differs only next to other fragments' code (here: the reference reads `^` as `|` only
    in a kernel that also takes a `tl.abs`) is shrunk as its packed kernel: the companion it needs stays, the
    others go, and what is left still differs when run."""
    needs_abs = lambda src: src.replace(" ^ ", " | ") if "tl.abs(" in src else src        # noqa: E731
    run = lambda frags: run_twisted(frags, needs_abs)                                      # noqa: E731
    x = np.arange(16, dtype=np.int32).reshape(2, 8) * 3 - 20

    def frag(code, k):
        return fragment([f"__F__x1 = tl.load(__F__in1 + {OFFS})", f"__F__v2 = {code}",
                         f"tl.store(__F__out3 + {OFFS}, __F__v2 + {k})"],
                        [("__F__in1", x + k, "int32")], [Output("__F__out3", "int32", (8,))])
    frags = [frag("(__F__x1 + 1) * 2", 1), frag("__F__x1 ^ 5", 2), frag("__F__x1 - 7", 3), frag("tl.abs(__F__x1)", 4),
             frag("__F__x1 * 3", 5)]
    case, slots = kernel_case(frags)
    mt = run_in_minitriton(case.source, case.kernel, case.grid, case.args)
    ref = run_in_minitriton(needs_abs(case.source), case.kernel, case.grid, case.args)
    verdict = judge(frags[1], slots[1], mt, ref, "cuda")
    assert verdict.status == "mismatch" and run([frags[1]])[0][0].status == "match"      # not alone
    s = fuzzshrink.shrink_many([(frags[1], verdict, fuzzcase.packed_fragment(frags, 1, verdict))], run)[0]
    source = kernel_case([s.frag])[0].source
    assert s.alone and s.packed and s.finished, source
    assert " ^ " in source and "tl.abs(" in source and "* 3" not in source and "- 7" not in source, source
    assert fuzzshrink.kernel_lines(s.frag) <= 8, source
    again = run([s.frag])[0][0]
    assert again.status == "mismatch" and set(again.bad) == {o.name for o in s.frag.outputs if "k1_" in o.name}
    without_it = fuzzshrink.shrink_many([(frags[1], verdict)], run)[0]
    assert not without_it.alone and not without_it.packed                  # no packed kernel given: not shrunk


def test_shrinker_never_takes_a_guard_apart():
    """Every candidate of every pass keeps divisor guards, clamps before float -> int casts and shift masks."""
    lines = ["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
             "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
             "__F__v3 = (__F__x1 + 5) // tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1)",
             "__F__v4 = tl.minimum(tl.maximum(__F__x2 * 2.0, -128.0), 127.0).to(tl.int8)",
             "__F__v5 = (__F__v3 - 1) << ((__F__x1 ^ 9) & 31)",
             "tl.store(__F__out6 + " + OFFS + ", __F__v3 + __F__v4 + __F__v5)"]
    f = fragment(lines, [("__F__in1", np.arange(16, dtype=np.int32).reshape(2, 8) - 8, "int32"),
                         ("__F__in2", np.linspace(-300, 300, 16, dtype=np.float32).reshape(2, 8), "fp32")],
                 [Output("__F__out6", "int32", (8,))])
    seen = 0
    for p in shrink_passes.PASSES:
        gen = p(f, {"__F__out6"}, (0, 3), (8,)) if p is shrink_passes.pass_data else p(f, {"__F__out6"})
        for cand in gen:
            seen += 1
            src = "\n".join(t for _, t in cand.lines)
            if " // " in src:
                assert "tl.where((" in src and "== 0" in src, src
            if ".to(tl.int8)" in src and "x2" in src.split(".to(tl.int8)")[0].split("tl.maximum(")[-1]:
                assert "-128.0" in src and "127.0" in src, src
            if " << " in src:
                assert "& 31)" in src, src
    assert seen > 20


def test_smaller_blocks_run_on_the_elements_they_keep():
    """A candidate of the shapes pass runs on exactly its inputs' kept elements: its kernel gets them as
    contiguous blocks (a strided view would let it read the elements cut away: a shrunk kernel whose verdict no
    longer matched its own data, fuzz seed 1516684745)."""
    block = "pid * 32 + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]"
    x = (np.arange(64, dtype=np.int32) * 7 - 200).reshape(2, 4, 8)
    f = fragment([f"__F__x1 = tl.load(__F__in1 + {block})", f"tl.store(__F__out2 + {block}, __F__x1 * 3)"],
                 [("__F__in1", x, "int32")], [Output("__F__out2", "int32", (4, 8))], shape=(4, 8))
    cands = list(shrink_passes.pass_shapes(f, {"__F__out2"}))
    assert {c.shape for c in cands} == {(2, 2), (2, 4), (2, 8), (4, 2), (4, 4)}
    for c in cands:
        m, n = c.shape
        kept = c.inputs[0][1]
        assert np.array_equal(kept, x[:, :m, :n])
        case, _ = kernel_case([c])
        assert case.args[0].flags.c_contiguous
        got = run_in_minitriton(case.source, case.kernel, case.grid, case.args).args[1]
        assert np.array_equal(got, x[:, :m, :n] * 3), (c.shape, case.source)


def test_dead_code_goes_with_its_arguments():
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
                  "__F__v3 = __F__x2 * __F__s4",
                  "tl.store(__F__out5 + " + OFFS + ", -__F__x1)"],
                 [("__F__in1", np.zeros((2, 8), np.int32), "int32"), ("__F__in2", np.zeros((2, 8), np.int32), "int32")],
                 [Output("__F__out5", "int32", (8,))], scalars=[("__F__s4", 3)])
    g = fuzzsource.rebuilt(f, fuzzsource.parse(f))
    assert [t.split(" =")[0] for _, t in g.lines] == ["__F__x1", "tl.store(__F__out5 + pid * 8 + tl.arange(0, 8), -__F__x1)"]
    assert [n for n, _, _ in g.inputs] == ["__F__in1"] and g.scalars == []


@pytest.fixture(scope="module")
def interpreter_pools():
    try:
        pools = {"minitriton": Pool("minitriton", 1), "interpreter": Pool("interpreter", 1)}
    except OracleUnavailable as e:
        pytest.skip(f"Triton's interpreter is not available: {e}")
    yield pools
    for p in pools.values():
        p.close()


def test_each_verdict_names_the_kernel_it_was_judged_in(interpreter_pools):
    """`evaluate` packs fragments per kernel and says which; `fuzzrun._with_its_kernel` rebuilds that kernel as one
    fragment for the shrinker, the mismatching fragment's outputs renamed in its verdict."""
    frags = [f for _, _, f in fuzzrun.generate("interpreter", 5, 1, 31)]
    verdicts = fuzzcase.evaluate(frags, interpreter_pools, "interpreter", 2, {})
    assert [v.group for v in verdicts] == [(0, 1), (0, 1), (2, 3), (2, 3), (4,)]
    v = fuzzcase.Verdict("mismatch", "x", bad={frags[3].outputs[0].name: (0,)}, group=(2, 3))
    frag, verdict, (packed, renamed) = fuzzrun._with_its_kernel(3, frags, v)
    assert frag is frags[3] and verdict is v
    one, two = kernel_case([packed])[0], kernel_case(frags[2:4])[0]
    assert re.sub(r"f0_k(\d+)_", r"f\1_", one.source) == two.source         # the same kernel, names aside,
    assert all(a is b or np.array_equal(a, b) for a, b in zip(one.args, two.args))   # the same arguments
    assert list(renamed.bad) == [frags[3].outputs[0].name.replace("__F__", "__F__k1_")]
    assert len(fuzzrun._with_its_kernel(4, frags, verdicts[4])) == 2                  # alone in its kernel


def test_an_amendment_reruns_the_shrunk_kernel_and_asks_whether_it_differs_the_same_way(interpreter_pools, tmp_path):
    """parity.fuzz.amend re-runs a run's unexplained shrunk kernel from the fragment its reproducer left beside it
    (integer division by zero: -1 in minitriton, 0 in Triton's interpreter) and counts it only when the very same
    difference shows again."""
    from parity.fuzz import amend as fuzzamend
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", __F__x1 // (__F__x1 - __F__x1))"],
                 [("__F__in1", np.arange(16, dtype=np.int32).reshape(2, 8) - 5, "int32")],
                 [Output("__F__out2", "int32", (8,))])
    ((verdict, mt, ref),) = run_alone([f], interpreter_pools, "interpreter", {})
    assert verdict.status == "mismatch"
    shrunk = fuzzshrink.Shrunk(f, verdict, mt, ref, alone=True, finished=True)
    info = {"rule": None, "lines": fuzzshrink.kernel_lines(f), "detail": verdict.detail[:1500], "lanes": fuzzrun.differing_lanes(shrunk)}
    info["file"] = fuzzrun.write_reproducer(tmp_path / "fuzz-run", 0, "interpreter", shrunk, info)
    assert (tmp_path / "fuzz-run" / "mismatch_0.pkl").is_file()
    other = {**info, "detail": info["detail"].replace("-1", "-2")}        # a difference the kernel does not show
    gone = {**info, "file": "fuzz-run/mismatch_7.py"}                     # no fragment left beside it
    explained = {**info, "rule": "int16_negation_widened"}                # not asked again
    run = {"fuzz": {"distinct": [info, other, gone, explained]}}
    got = fuzzamend.amend(run, tmp_path, interpreter_pools, "interpreter", {})
    assert [e["distinct"] for e in got] == [0, 1, 2]
    assert [e["reproduced"] for e in got] == [True, False, False] and all(e["rule"] is None for e in got)
    assert "did not show the same difference" in got[1]["why"] and "no shrunk fragment" in got[2]["why"]


def test_an_amendment_shrinks_on_where_the_run_stopped(interpreter_pools, tmp_path):
    """A reproduced mismatch whose shrink the run's deadline cut short is shrunk on in the amendment, and its
    smaller kernel is written beside the old one."""
    from parity.fuzz import amend as fuzzamend
    lines = ["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
             "__F__v3 = __F__x2 * 3 + 1", "__F__v4 = __F__v3 - __F__x2",
             "tl.store(__F__out5 + " + OFFS + ", __F__v4)",
             "tl.store(__F__out6 + " + OFFS + ", (__F__x1 + __F__v3) // (__F__x1 - __F__x1))"]
    f = fragment(lines, [("__F__in1", np.arange(16, dtype=np.int32).reshape(2, 8) - 5, "int32"),
                         ("__F__in2", np.arange(16, dtype=np.int32).reshape(2, 8), "int32")],
                 [Output("__F__out5", "int32", (8,)), Output("__F__out6", "int32", (8,))])
    ((verdict, mt, ref),) = run_alone([f], interpreter_pools, "interpreter", {})
    assert verdict.status == "mismatch"
    cut_short = fuzzshrink.Shrunk(f, verdict, mt, ref, alone=True, finished=False)
    info = {"rule": None, "lines": fuzzshrink.kernel_lines(f), "detail": verdict.detail[:1500], "finished": False,
            "lanes": fuzzrun.differing_lanes(cut_short)}
    info["file"] = fuzzrun.write_reproducer(tmp_path / "fuzz-run", 0, "interpreter", cut_short, info)
    done = {**info, "finished": True}
    (got,) = fuzzamend.amend({"fuzz": {"distinct": [info]}}, tmp_path, interpreter_pools, "interpreter", {}, 120)
    assert got["reproduced"] and got["finished"] and got["lines"] < info["lines"], got
    assert got["file"] == "fuzz-run/mismatch_0-amended.py" and "mismatch_0-amended" not in got["source"]
    written = (tmp_path / got["file"]).read_text()
    assert " // " in written and "f0_v4" not in written and "f0_in2" not in written, got["source"]
    assert (tmp_path / "fuzz-run" / "mismatch_0-amended.pkl").is_file()
    (kept,) = fuzzamend.amend({"fuzz": {"distinct": [done]}}, tmp_path, interpreter_pools, "interpreter", {}, 120)
    assert kept["reproduced"] and "lines" not in kept                      # a finished shrink is not redone


def test_shrinker_against_triton_interpreter(interpreter_pools):
    """Integer division by zero at run time: -1 on the GPU and in minitriton, 0 in Triton's interpreter."""
    lines = ["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
             "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
             "__F__v3 = __F__x1 * 3 + __F__s9",
             "__F__v4 = tl.minimum(tl.maximum(__F__x2 * 2.0, -1000.0), 1000.0).to(tl.int32)",
             "if __F__s10 > 0:",
             (1, "__F__v5 = tl.broadcast_to(__F__v3 + __F__v4, (8,))"),
             "else:",
             (1, "__F__v5 = tl.broadcast_to(__F__v3 - __F__v4, (8,))"),
             "__F__v6 = __F__v5 & 255",
             "for __F__i7 in range(0, __F__n11 + pid):",
             (1, "__F__v6 = __F__v6 ^ (__F__x1 + (__F__i7 + tl.zeros((1,), tl.int32)))"),
             "__F__v8 = __F__v6 // (__F__x1 - __F__x1)",
             "tl.store(__F__out12 + " + OFFS + ", __F__v3)",
             "tl.store(__F__out13 + " + OFFS + ", __F__v8 + __F__v4)",
             "tl.store(__F__out14 + " + OFFS + ", __F__x2 * 0.5)"]
    rng = np.random.default_rng(5)
    f = fragment(lines, [("__F__in1", rng.integers(-50, 50, (2, 8)).astype(np.int32), "int32"),
                         ("__F__in2", rng.normal(0, 20, (2, 8)).astype(np.float32), "fp32")],
                 [Output(n, t, (8,)) for n, t in (("__F__out12", "int32"), ("__F__out13", "int32"),
                                                   ("__F__out14", "fp32"))],
                 scalars=[("__F__s9", 7), ("__F__s10", 2), ("__F__n11", 2)])
    stats = {}
    run = lambda frags: run_alone(frags, interpreter_pools, "interpreter", stats)  # noqa: E731
    verdict = run([f])[0][0]
    assert verdict.status == "mismatch" and list(verdict.bad) == ["__F__out13"]
    s = fuzzshrink.shrink_many([(f, verdict)], run)[0]
    source = kernel_case([s.frag])[0].source
    assert s.alone and s.finished
    assert fuzzshrink.kernel_lines(s.frag) <= 5, source
    assert " // " in source and "if " not in source and "for " not in source, source
    assert s.verdict.status == "mismatch" and "__F__out13" in s.verdict.bad
    assert [n for n, _, _ in s.frag.inputs] == ["__F__in1"] and len(s.frag.outputs) == 1


# ------------------------------------------------------------------------------------------- types


def test_types_follow_triton_promotion():
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
                  "tl.store(__F__out3 + " + OFFS + ", -__F__x1 + tl.full((8,), 0, tl.int32))",
                  "tl.store(__F__out4 + " + OFFS + ", ((~tl.full((8,), 48, tl.uint32)) | __F__x2).to(tl.float16))",
                  "tl.store(__F__out5 + " + OFFS + ", tl.where(__F__x1 > 0, __F__x1, 0.5) % 2)"],
                 [("__F__in1", np.zeros((2, 8), np.int16), "int16"), ("__F__in2", np.zeros((2, 8), np.uint32), "uint32")],
                 [Output("__F__out3", "int32", (8,)), Output("__F__out4", "fp16", (8,)), Output("__F__out5", "fp32", (8,))])
    typed = infer(f)
    nodes = {ast.unparse(n): n for n in typed.nodes()}
    assert typed.of(nodes["-__F__x1"]) == "int16" and typed.consumer(nodes["-__F__x1"]) == "int32"
    assert typed.of(nodes["~tl.full((8,), 48, tl.uint32) | __F__x2"]) == "uint32"
    assert typed.of(nodes["(~tl.full((8,), 48, tl.uint32) | __F__x2).to(tl.float16)"]) == "fp16"
    assert typed.of(nodes["tl.where(__F__x1 > 0, __F__x1, 0.5)"]) == "fp32"
    assert typed.of(nodes["tl.where(__F__x1 > 0, __F__x1, 0.5) % 2"]) == "fp32"


def test_clamp_bounds_stay_in_range_as_fp32_literals():
    """A float -> int cast is clamped first; the bounds are literals, which Triton 3.6 makes fp32 tensors
    (semantics S15.5), so they must convert into the integer's range from fp32 too (fp64 4294967295.0 would
    clamp to 2**32: an out-of-range uint32 conversion, undefined on the GPU)."""
    from parity.fuzz.dtypes import FLOATS, INTS, NP, float_limits
    for src in FLOATS:
        for dst in INTS:
            if dst == "int1":
                continue
            info = np.iinfo(NP[dst])
            lo, hi = float_limits(src, int(info.min), int(info.max))
            assert info.min <= int(np.float32(lo)) and int(np.float32(hi)) <= info.max, (src, dst)
            assert lo == float(np.float32(lo)) and hi == float(np.float32(hi)), (src, dst)


# ------------------------------------------------------------------------------------------- the rules

LIVE = {r.name: {"live": True} for r in fuzzrules.RULES}


def shrunk_with_gpu(frag, gpu_fn):
    """A finished shrink whose "GPU" result is minitriton's with gpu_fn(name, array) applied to each output."""
    case, slots = kernel_case([frag])
    mt = run_in_minitriton(case.source, case.kernel, case.grid, case.args)
    args = [clone(a) for a in mt.args]
    for o in frag.outputs:
        i = slots[0][o.name]
        args[i] = gpu_fn(o.name, args[i])
    ref = Result(args, {})
    return fuzzshrink.Shrunk(frag, judge(frag, slots[0], mt, ref, "cuda"), mt, ref, alone=True, finished=True)


def classify(shrunk, evidence=LIVE):
    rule = fuzzrules.classify(shrunk, evidence, "cuda")
    return rule.name if rule else None


def test_rule_int16_negation_widened():
    x = np.array([[-32768, 5, -7, 32767, 0, 1, -32768, 9], [3, -32768, 2, 2, 2, 2, 2, -1]], np.int16)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", -__F__x1 + tl.full((8,), 0, tl.int32))"],
                 [("__F__in1", x, "int16")], [Output("__F__out2", "int32", (8,))])
    widened = shrunk_with_gpu(f, lambda n, a: np.where(x == -32768, 32768, a).astype(a.dtype))
    assert widened.verdict.status == "mismatch"
    assert classify(widened) == "int16_negation_widened"
    assert classify(widened, {}) is None                                     # a rule explains only while live
    elsewhere = shrunk_with_gpu(f, lambda n, a: np.where(x == 5, a + 65536, a).astype(a.dtype))
    assert elsewhere.verdict.status == "mismatch" and classify(elsewhere) is None
    off_by_one = shrunk_with_gpu(f, lambda n, a: np.where(x == -32768, 32767, a).astype(a.dtype))
    assert classify(off_by_one) is None


def test_rule_int16_negation_widened_through_a_reduction_and_a_remainder():
    """The widened +32768 also reaches a `tl.max` over the block and an int16 `%` (fuzz run of 2026-12-02)."""
    offs = "pid * 64 + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]"
    x = np.arange(128).reshape(2, 8, 8).astype(np.int16) * 300 - 19000
    x[0, 5, 2] = -32768                                          # column 2 of program 0 holds the minimum
    f = fragment([f"__F__x1 = tl.load(__F__in1 + {offs})",
                  f"tl.store(__F__out2 + {offs}, tl.max(-__F__x1, axis=0, keep_dims=True))"],
                 [("__F__in1", x, "int16")], [Output("__F__out2", "int8", (8, 8))], shape=(8, 8))
    wide = (-x.astype(np.int64)).max(axis=1, keepdims=True)          # the max of the negations done in 32 bits
    widened = shrunk_with_gpu(f, lambda n, a: np.broadcast_to(wide, a.shape).astype(np.int8))
    assert widened.verdict.status == "mismatch" and classify(widened) == "int16_negation_widened"
    bad = np.broadcast_to(wide, x.shape).astype(np.int8).copy()
    bad[1, 0, 0] += 1                                                   # a program without -32768 differs too
    elsewhere = shrunk_with_gpu(f, lambda n, a: bad)
    assert elsewhere.verdict.status == "mismatch" and classify(elsewhere) is None
    d = np.full((2, 8), 3, np.int8)
    g = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
                  "tl.store(__F__out3 + " + OFFS + ", -__F__x1 % tl.where((__F__x2 == 0) | (__F__x2 == -1), 3, __F__x2))"],
                 [("__F__in1", x[:, 5, :].copy(), "int16"), ("__F__in2", d, "int8")], [Output("__F__out3", "int16", (8,))])
    rem = shrunk_with_gpu(g, lambda n, a: np.where(x[:, 5, :] == -32768, 2, a).astype(a.dtype))
    assert rem.verdict.status == "mismatch" and classify(rem) == "int16_negation_widened"


def test_rule_division_guard_takes_3():
    d = np.array([[1, 5, -1, 7, 0, 1, 9, 9], [3, -1, 2, 2, 2, 2, 2, -1]], np.int16)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", -(__F__x1 % tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1)) "
                  "+ tl.full((8,), 40, tl.int16) // tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1))"],
                 [("__F__in1", d, "int16")], [Output("__F__out2", "int16", (8,))])
    lanes = (np.arange(8) % 4 < 2) & (d != 0) & (d != -1)
    by3 = (-(d.astype(np.int64) % 3) + 40 // 3)
    taken = shrunk_with_gpu(f, lambda n, a: np.where(lanes, by3, a).astype(a.dtype))
    assert taken.verdict.status == "mismatch" and classify(taken) == "division_guard_minus_one_dropped"  # the first
    assert classify(taken, {"division_guard_takes_3": {"live": True}}) == "division_guard_takes_3"       # live rule
    wrong = shrunk_with_gpu(f, lambda n, a: np.where(lanes, by3 + 1, a).astype(a.dtype))
    assert wrong.verdict.status == "mismatch" and classify(wrong) is None


def test_rule_division_guard_both_arms_in_one_kernel():
    """One 16-bit remainder took the guard's 3 on some lanes and divided by -1 on others (fuzz, 2026-12-02)."""
    d = np.array([[4, 5, -1, 7, 0, 1, -1, 9], [-1, -1, 2, 4, 2, 7, 2, -1]], np.int16)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", (__F__x1 % tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1))"
                  ".to(tl.float32))"],
                 [("__F__in1", d, "int16")], [Output("__F__out2", "fp32", (8,))])
    both = np.where(d == -1, 0.0, np.where(np.arange(8) % 4 < 2, np.fmod(d, 3), 0.0))
    shown = shrunk_with_gpu(f, lambda n, a: both.astype(a.dtype))
    assert shown.verdict.status == "mismatch" and classify(shown) == "division_guard_minus_one_dropped"
    wrong = shrunk_with_gpu(f, lambda n, a: np.where(d == 4, 2.0, both).astype(a.dtype))     # 4 % 3 is not 2
    assert wrong.verdict.status == "mismatch" and classify(wrong) is None


def test_rule_fma_contraction_in_a_remainder():
    a = np.array([[711.268310546875, 3.3, -5.7, 1.1, 100.01, 0.3, 7.77, -9.1]] * 2, np.float32)
    b = np.array([[9, 3, 7, 11, 13, 17, 19, 23]] * 2, np.uint32)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
                  "tl.store(__F__out3 + " + OFFS + ", __F__x2 * __F__x1 % tl.full((8,), 1.0, tl.float16))"],
                 [("__F__in1", a, "fp32"), ("__F__in2", b, "uint32")], [Output("__F__out3", "fp32", (8,))])
    exact = a.astype(np.float64) * b
    rounded = (a * b.astype(np.float32)).astype(np.float64)
    fused = (exact - np.trunc(rounded)).astype(np.float32)         # the remainder of the exact product
    one = shrunk_with_gpu(f, lambda n, v: fused)
    assert one.verdict.status == "mismatch" and classify(one) == "fma_contraction_in_a_remainder"
    off = shrunk_with_gpu(f, lambda n, v: np.nextafter(fused, np.float32(np.inf)))
    assert off.verdict.status == "mismatch" and classify(off) is None


def _fp16(v):
    return np.asarray(v, np.float64).astype(np.float16)


def test_rule_narrow_float_of_low_16_bits():
    x = np.array([[0, 16, 32, 48, 0, 16, 32, 48], [48, 32, 16, 0, 0, 0, 0, 0]], np.uint32)
    wide = (~np.uint32(48) | x).astype(np.float64)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", ((~tl.full((8,), 48, tl.uint32)) | __F__x1).to(tl.float16))"],
                 [("__F__in1", x, "uint32")], [Output("__F__out2", "fp16", (8,))])
    with np.errstate(over="ignore"):
        low = shrunk_with_gpu(f, lambda n, a: _fp16(np.mod(wide, 65536.0)))
        assert low.verdict.status == "mismatch" and np.isinf(low.mt.args[1]).all()
        assert classify(low) == "narrow_float_of_low_16_bits"
        saturated = shrunk_with_gpu(f, lambda n, a: np.full_like(a, 65504.0))
        assert saturated.verdict.status == "mismatch" and classify(saturated) is None


def dot_fragment(a, b, options=""):
    """A fragment that stores fp32 (16, 16) blocks a and b and `tl.dot(a, b<options>)`, two programs."""
    offs = "tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]"
    return fragment([f"__F__x1 = tl.load(__F__in1 + pid * 256 + {offs})",
                     f"__F__x2 = tl.load(__F__in2 + pid * 256 + {offs})",
                     f"tl.store(__F__out3 + pid * 256 + {offs}, __F__x1)",
                     f"tl.store(__F__out4 + pid * 256 + {offs}, __F__x2)",
                     f"tl.store(__F__out5 + pid * 256 + {offs}, tl.dot(__F__x1, __F__x2{options}))"],
                    [("__F__in1", a, "fp32"), ("__F__in2", b, "fp32")],
                    [Output("__F__out3", "fp32", (16, 16)), Output("__F__out4", "fp32", (16, 16)),
                     Output("__F__out5", "fp32", (16, 16), "dot", ("__F__out3", "__F__out4"),
                            {"K": 16, "acc": "fp32"})],
                    shape=(16, 16))


def _dot_copy_fragment(h):
    """The fuzz's shrunk reproducer of seed 1846161072: a dot of `(h % guard(x) >> x).to(tl.int8)` (x = 1, so 0)
    and ones, its operands stored."""
    tile = "tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :]"
    square = "tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :]"
    w = "__F__x1.to(tl.int32)"
    return fragment([f"__F__x1 = tl.load(__F__in1 + pid * 512 + {tile})",
                     f"__F__x2 = tl.load(__F__in2 + pid * 512 + {tile})",
                     f"__F__v3 = (__F__x2 % tl.where(({w} == 0) | ({w} == -1), 3, {w}) >> (__F__x1 & 31)).to(tl.int8)",
                     f"__F__x4 = tl.load(__F__in4 + pid * 1024 + {square})",
                     f"tl.store(__F__out5 + pid * 512 + {tile}, __F__v3)",
                     f"tl.store(__F__out6 + pid * 1024 + {square}, __F__x4)",
                     f"tl.store(__F__out7 + pid * 512 + {tile}, tl.dot(__F__v3, __F__x4))"],
                    [("__F__in1", np.ones((2, 16, 32), np.int16), "int16"), ("__F__in2", h, "int16"),
                     ("__F__in4", np.ones((2, 32, 32), np.int8), "int8")],
                    [Output("__F__out5", "int8", (16, 32)), Output("__F__out6", "int8", (32, 32)),
                     Output("__F__out7", "int32", (16, 32), "exact", ("__F__out5", "__F__out6"), {"K": 32, "acc": "fp32"})],
                    shape=(16, 32))


def test_rule_dot_copy_of_an_operand_miscompiled():
    """The dot's own copy of an operand took a division guard's other arm on single elements while the stored
    operand was right (H200, fuzz seed 1846161072): each differing row is the product with some elements switched
    to that arm's value, -1 = (-1 % 3) >> 1 where h = -1."""
    h = rules_dots._COPY_H
    f = _dot_copy_fragment(h)
    gpu = np.zeros((2, 16, 32), np.int32)
    minus = np.argwhere(h[0, 3] == -1).ravel()
    gpu[0, 3] = -2                                    # two elements of row 3 of program 0 took the other arm
    gpu[1, 7] = -int((h[1, 7] == -1).sum())           # every -1 of row 7 of program 1
    copy = shrunk_with_gpu(f, lambda n, v: gpu if n == "__F__out7" else v)
    assert len(minus) >= 2 and list(copy.verdict.bad) == ["__F__out7"]
    assert classify(copy) == "dot_copy_of_an_operand_miscompiled"
    too_many = gpu.copy()
    too_many[0, 3] = -len(minus) - 1                  # more -1s than the row holds
    assert classify(shrunk_with_gpu(f, lambda n, v: too_many if n == "__F__out7" else v)) is None
    uneven = gpu.copy()
    uneven[0, 3, 5] = -1                              # one operand element is one value for the whole row
    assert classify(shrunk_with_gpu(f, lambda n, v: uneven if n == "__F__out7" else v)) is None
    operand_too = shrunk_with_gpu(f, lambda n, v: gpu if n == "__F__out7" else (v - 1).astype(v.dtype))
    assert "__F__out5" in operand_too.verdict.bad and classify(operand_too) is None
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-4, 5, (2, 16, 16)).astype(np.float32) for _ in range(2))
    bump = np.zeros((2, 16, 16), np.float32)
    bump[0, 0, 3:7] = 9.0                             # a dot off its operands with no rule's rewrite at hand
    off = shrunk_with_gpu(dot_fragment(a, b), lambda n, v: v + bump if n == "__F__out5" else v)
    assert list(off.verdict.bad) == ["__F__out5"] and classify(off) is None


def _int8_to_float(values, low_bits):
    v = np.asarray(values, np.int64) % (2 ** 16 if low_bits else 2 ** 32)
    return rules_common.to_narrow_float("fp16", v)


def test_rule_narrow_float_of_low_16_bits_by_the_store():
    x = np.array([[-47, 5, -1, 100, -128, 0, 1, 127], [3, -91, 2, 2, -40, 2, 2, -1]], np.int8)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", __F__x1.to(tl.uint32))"],
                 [("__F__in1", x, "int8")], [Output("__F__out2", "fp16", (8,))])
    with np.errstate(over="ignore"):
        low = shrunk_with_gpu(f, lambda n, a: _int8_to_float(x, True).astype(np.float16))
        assert low.verdict.status == "mismatch" and classify(low) == "narrow_float_of_low_16_bits"
        other = shrunk_with_gpu(f, lambda n, a: np.where(x < 0, np.float16(7.0), a).astype(a.dtype))
        assert other.verdict.status == "mismatch" and classify(other) is None


def test_rule_narrow_float_of_low_16_bits_of_a_where_into_a_wider_output():
    """The uint32 may come from a where over a sign-extended int16, and the fp16 value may be stored as fp32."""
    h = np.array([[-13780, 5, -1, 100, -32768, 0, 1, 127], [3, -91, 2, 2, -40, 2, 2, -1]], np.int16)
    c = np.zeros((2, 8), np.int64)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
                  "tl.store(__F__out3 + " + OFFS + ", tl.where(__F__x2, tl.full((8,), 0, tl.uint32), __F__x1)"
                  ".to(tl.float16))"],
                 [("__F__in1", h, "int16"), ("__F__in2", c, "int64")], [Output("__F__out3", "fp32", (8,))])
    with np.errstate(over="ignore"):
        low = rules_common.to_narrow_float("fp16", h.astype(np.int64) % 2 ** 16).astype(np.float32)
        lost = shrunk_with_gpu(f, lambda n, a: low)
        assert lost.verdict.status == "mismatch" and classify(lost) == "narrow_float_of_low_16_bits"
        other = shrunk_with_gpu(f, lambda n, a: np.where(h < 0, np.float32(7.0), a).astype(a.dtype))
        assert other.verdict.status == "mismatch" and classify(other) is None


def test_rule_abs_of_int_min():
    x = np.array([[-2 ** 31, 5, -7, 3, 0, 1, -2 ** 31, 9], [3, -2 ** 31, 2, 2, 2, 2, 2, -1]], np.int32)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__v2 = tl.abs(__F__x1)",
                  "tl.store(__F__out2 + " + OFFS + ", (__F__v2 < 0).to(tl.int8))"],
                 [("__F__in1", x, "int32")], [Output("__F__out2", "int8", (8,))])
    poison = shrunk_with_gpu(f, lambda n, a: np.zeros_like(a))        # the GPU: abs(x) < 0 is false
    assert poison.verdict.status == "mismatch" and classify(poison) == "abs_of_int_min"
    elsewhere = shrunk_with_gpu(f, lambda n, a: np.where(x == 5, 1, a).astype(a.dtype))
    assert elsewhere.verdict.status == "mismatch" and classify(elsewhere) is None


def test_rule_abs_of_int_min_through_a_reduction():
    """The abs of int16 -32768 taken wide reaches the max of its column (fuzz seed 1516684745)."""
    offs = "pid * 16 + tl.arange(0, 2)[:, None] * 8 + tl.arange(0, 8)[None, :]"
    x = np.array([[[24055, 14311, 1, 3140, 32767, -3456, 5520, 5322], [32766, 32766, -3953, 1086, -19170, 1, -2, -1]],
                  [[32766, -28156, 4874, 32767, 32139, 1, 1, -8894], [-1, -32768, 19898, 1, 0, 28442, 30915, 32425]]],
                 np.int16)
    f = fragment([f"__F__x1 = tl.load(__F__in1 + {offs})",
                  f"tl.store(__F__out2 + {offs}, tl.broadcast_to(tl.max(tl.abs(__F__x1).to(tl.int32), axis=0, "
                  "keep_dims=True), (2, 8)))"],
                 [("__F__in1", x, "int16")], [Output("__F__out2", "fp32", (2, 8))], shape=(2, 8))
    assert _minitriton_values(f)[1, 0, 1] == 28156.0                    # the wrapped abs loses the max there
    wide = shrunk_with_gpu(f, lambda n, a: _wide_column_max(x))
    assert wide.verdict.status == "mismatch" and classify(wide) == "abs_of_int_min"
    elsewhere = shrunk_with_gpu(f, lambda n, a: np.where(np.arange(8) == 3, np.float32(5.0), a).astype(a.dtype))
    assert elsewhere.verdict.status == "mismatch" and classify(elsewhere) is None


def _wide_column_max(x):
    return np.broadcast_to(np.abs(x.astype(np.int64)).max(axis=1, keepdims=True), x.shape).astype(np.float32)


def test_rule_division_guard_minus_one_dropped():
    d = np.array([[-1, 5, -1, 3, 0, 1, -1, 9], [3, -1, 2, 2, 2, 2, 2, -1]], np.int16)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", tl.full((8,), 15, tl.int8) // "
                  "tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1))"],
                 [("__F__in1", d, "int16")], [Output("__F__out2", "int16", (8,))])
    lanes = (d == -1) & (np.arange(8) % 2 == 0)
    dropped = shrunk_with_gpu(f, lambda n, a: np.where(lanes, -15, a).astype(a.dtype))
    assert dropped.verdict.status == "mismatch" and classify(dropped) == "division_guard_minus_one_dropped"
    wrong = shrunk_with_gpu(f, lambda n, a: np.where(lanes, -14, a).astype(a.dtype))
    assert wrong.verdict.status == "mismatch" and classify(wrong) is None


def test_a_sum_of_an_explained_operand_follows_it():
    """A stored `tl.sum` of a stored operand that a rule explains differs only because its operand does: it is
    explained when the GPU's sum is the sum of the GPU's own operand (fuzz seed 351809208: an int8 guarded
    remainder, 0 on some lanes where x = -1, and its row sums)."""
    offs = "pid * 16 + tl.arange(0, 2)[:, None] * 8 + tl.arange(0, 8)[None, :]"
    x = np.array([[[-1, 5, -1, -1, 0, 1, -1, 9], [3, -1, 2, -1, -1, 2, 2, -1]],
                  [[-1, -1, 7, 4, -1, 6, -1, -1], [1, 2, 3, 4, 5, 6, 7, 8]]], np.int8)
    guard = "tl.where((__F__x1 == 0) | (__F__x1 == -1), 3, __F__x1)"
    f = fragment([f"__F__x1 = tl.load(__F__in1 + {offs})", f"__F__v2 = (__F__x1 % {guard}).to(tl.float16)",
                  f"tl.store(__F__out3 + {offs}, __F__v2)",
                  f"tl.store(__F__out4 + {offs}, tl.broadcast_to(tl.sum(__F__v2, axis=1, keep_dims=True), (2, 8)))"],
                 [("__F__in1", x, "int8")],
                 [Output("__F__out3", "fp16", (2, 8)), Output("__F__out4", "fp16", (2, 8), "sum", ("__F__out3",), {"axis": 1})],
                 shape=(2, 8))
    lanes = (x == -1) & (np.arange(8) % 2 == 0)
    mt = _minitriton_values(f)
    gpu3 = np.where(lanes, np.float16(0.0), mt).astype(np.float16)                   # -1 % -1 on those lanes
    gpu4 = np.broadcast_to(gpu3.astype(np.float32).sum(axis=2, keepdims=True), x.shape).astype(np.float16)

    def gpu(sums):
        return lambda n, a: (gpu3 if n == "__F__out3" else sums).copy()
    both = shrunk_with_gpu(f, gpu(gpu4))
    assert set(both.verdict.bad) == {"__F__out3", "__F__out4"}
    assert classify(both) in ("division_guard_minus_one_dropped", "division_guard_takes_3")
    off = gpu4.copy()
    off[1, 0, 0] += 2
    assert classify(shrunk_with_gpu(f, gpu(off))) is None                           # not the operand's sum
    alone = shrunk_with_gpu(f, lambda n, a: a if n == "__F__out3" else gpu4.copy())
    assert list(alone.verdict.bad) == ["__F__out4"] and classify(alone) is None       # its operand is right


def test_rule_division_guard_minus_one_dropped_of_a_widened_divisor():
    """An int16 divisor widened by `.to(tl.int32)` is still compared in 16 bits (fuzz seed 1846161072)."""
    x = np.array([[-1, 5, -1, -1, 0, 1, -1, 9], [3, -1, 2, -1, -1, 2, 2, -1]], np.int16)
    w = "__F__x1.to(tl.int32)"
    expr = f"(__F__x1 // tl.where(({w} == 0) | ({w} == -1), 3, {w})).to(tl.int8)"
    f = _stored_expression(expr, x, "int16", "int8")
    lanes = (x == -1) & (np.arange(8) % 4 >= 2)
    dropped = shrunk_with_gpu(f, lambda n, a: np.where(lanes, 1, a).astype(a.dtype))         # -1 // -1
    assert dropped.verdict.status == "mismatch" and classify(dropped) == "division_guard_minus_one_dropped"
    wrong = shrunk_with_gpu(f, lambda n, a: np.where(lanes, 2, a).astype(a.dtype))
    assert wrong.verdict.status == "mismatch" and classify(wrong) is None
    wide = _stored_expression(expr.replace(w, "__F__x1"), x.astype(np.int32), "int32", "int8")
    int32 = shrunk_with_gpu(wide, lambda n, a: np.where(lanes, 1, a).astype(a.dtype))       # a real int32: no rule
    assert int32.verdict.status == "mismatch" and classify(int32) is None


def test_rule_narrow_float_of_low_16_bits_of_an_operand_of_fp16_arithmetic():
    """A uint32 operand that fp16 arithmetic converts keeps only its low 16 bits too (fuzz seed 1916544687)."""
    h = np.array([[-15512, 5, -1, 100, -32768, 0, 1, 127], [3, -91, 2, 2, -40, 2, 2, -1]], np.int16)
    f = _stored_expression("tl.maximum(tl.full((8,), 0.0, tl.float16), __F__x1.to(tl.uint32))", h, "int16", "fp16")
    with np.errstate(over="ignore"):
        low = rules_common.to_narrow_float("fp16", h.astype(np.int64) % 2 ** 16).astype(np.float16)
        assert low[0, 0] == 50016.0
        lost = shrunk_with_gpu(f, lambda n, a: low)
        assert lost.verdict.status == "mismatch" and np.isinf(lost.mt.args[1][0, 0])
        assert classify(lost) == "narrow_float_of_low_16_bits"
        other = shrunk_with_gpu(f, lambda n, a: np.where(h < 0, np.float16(7.0), a).astype(a.dtype))
        assert other.verdict.status == "mismatch" and classify(other) is None


def test_rule_narrow_float_of_low_16_bits_of_a_comparison_in_fp16():
    h = np.array([[-15512, 5, -1, 100, -32768, 0, 1, 127], [3, -91, 2, 2, -40, 2, 2, -1]], np.int16)
    f = _stored_expression("(tl.full((8,), 60000.0, tl.float16) < __F__x1.to(tl.uint32)).to(tl.int8)", h, "int16", "int8")
    with np.errstate(over="ignore"):
        low = rules_common.to_narrow_float("fp16", h.astype(np.int64) % 2 ** 16)
    lost = shrunk_with_gpu(f, lambda n, a: (60000.0 < low).astype(np.int8))
    assert lost.verdict.status == "mismatch" and classify(lost) == "narrow_float_of_low_16_bits"
    flipped = shrunk_with_gpu(f, lambda n, a: 1 - a)
    assert flipped.verdict.status == "mismatch" and classify(flipped) is None


def _minitriton_values(frag):
    case, _ = kernel_case([frag])
    return run_in_minitriton(case.source, case.kernel, case.grid, case.args).args[1]


def test_rule_abs_of_a_remainder_dropped():
    x = np.array([[3792463295, 7, 3, 4294967295, 100000, 1, 0, 2 ** 31 + 1], [9] * 8], np.uint32)
    f = _stored_expression("tl.abs(__F__x1 % tl.full((8,), 1.5, tl.float16))", x, "uint32", "fp16")
    rem = _minitriton_values(_stored_expression("__F__x1 % tl.full((8,), 1.5, tl.float16)", x, "uint32", "fp16"))
    assert rem[0, 0] == -128.0 and (rem >= 0).sum() > 8                  # negative only where S15.1 rounds so
    dropped = shrunk_with_gpu(f, lambda n, a: rem.copy())
    assert dropped.verdict.status == "mismatch" and classify(dropped) == "abs_of_a_remainder_dropped"
    other = shrunk_with_gpu(f, lambda n, a: np.where(rem < 0, np.float16(-1.0), a).astype(a.dtype))
    assert other.verdict.status == "mismatch" and classify(other) is None
    signed = _stored_expression("tl.abs(__F__x1.to(tl.int32) % tl.full((8,), 1.5, tl.float16))", x, "uint32", "fp16")
    neg = shrunk_with_gpu(signed, lambda n, a: -a)                     # a signed dividend: the abs stays
    assert neg.verdict.status == "mismatch" and classify(neg) is None
    y = np.array([[5.1, -5.1, 0.3, 7.0, -2.2, 1e7, 3.3, 9.9]] * 2, np.float32)
    rem_a = _minitriton_values(_stored_expression("tl.abs(__F__x1) % tl.full((8,), 0.1, tl.float32)", y, "fp32", "fp32"))
    assert (rem_a < 0).any()                                            # 5.1 % 0.1 is -1.7e-7 (S15.1)
    fa = _stored_expression("tl.abs(tl.abs(__F__x1) % tl.full((8,), 0.1, tl.float32))", y, "fp32", "fp32")
    of_abs = shrunk_with_gpu(fa, lambda n, a: rem_a.copy())
    assert of_abs.verdict.status == "mismatch" and classify(of_abs) == "abs_of_a_remainder_dropped"


def test_rule_narrow_float_conversion_skipped():
    """An integer `.to(tl.float16)` that the store widens to fp32 is converted to fp32 at once where the fp16
    conversion is inexact (fuzz seed 351809208: uint32 2**29 stored 536870912, not inf)."""
    x = np.array([[1, 0, -1, 3, 2, 1, 0, 0], [0, 1, 1, 0, 0, 0, 5, 1]], np.int8)
    expr = "(__F__x1 << (tl.full((8,), 29, tl.uint32) & 31)).to(tl.float16)"
    wide = (x.astype(np.int64).astype(np.uint32) << np.uint32(29)).astype(np.float32)
    f = _stored_expression(expr, x, "int8", "fp32")
    assert np.isinf(_minitriton_values(f)[0, 0])
    skipped = shrunk_with_gpu(f, lambda n, a: np.where(np.isinf(a), wide, a).astype(a.dtype))
    assert skipped.verdict.status == "mismatch" and classify(skipped) == "narrow_float_conversion_skipped"
    other = shrunk_with_gpu(f, lambda n, a: np.where(np.isinf(a), np.float32(65504.0), a).astype(a.dtype))
    assert other.verdict.status == "mismatch" and classify(other) is None
    exact = shrunk_with_gpu(f, lambda n, a: np.where(x == 0, np.float32(1.0), a).astype(a.dtype))
    assert exact.verdict.status == "mismatch" and classify(exact) is None      # 0 converts exactly: no rule
    narrow = _stored_expression(expr, x, "int8", "fp16")                       # no widening store: no rule
    kept = shrunk_with_gpu(narrow, lambda n, a: np.where(np.isinf(a), np.float16(65504.0), a).astype(a.dtype))
    assert kept.verdict.status == "mismatch" and classify(kept) is None


def test_rule_masked_16_bit_other_loses_its_sign():
    x = (np.arange(16).reshape(2, 8) % 5 - 2).astype(np.float16)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ", mask=tl.arange(0, 8) < 3, other=-3.0)",
                  "tl.store(__F__out2 + " + OFFS + ", __F__x1 * __F__x1)"],
                 [("__F__in1", x, "fp16")], [Output("__F__out2", "fp16", (8,))])
    masked_off = np.arange(8) % 4 == 3                                    # lanes 3 and 7: masked off
    lost = shrunk_with_gpu(f, lambda n, a: np.where(masked_off, np.float16(-9.0), a).astype(a.dtype))
    assert lost.verdict.status == "mismatch" and classify(lost) == "masked_16_bit_other_loses_its_sign"
    loaded = shrunk_with_gpu(f, lambda n, a: np.where(np.arange(8) == 1, np.float16(-9.0), a).astype(a.dtype))
    assert loaded.verdict.status == "mismatch" and classify(loaded) is None


def test_rules_read_lanes_where_the_kernel_stores_them():
    """A shrunk kernel may store a 4x4 block into an 8x8 output with row stride 8 (the shrinker narrows the
    block, not the layout): the rules' lanes follow the store (fuzz run of 2026-12-02, seed 1549857666)."""
    offs = "pid * 64 + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 4)[None, :]"
    x = (np.arange(128).reshape(2, 8, 8) % 5 - 2).astype(np.float16)
    f = fragment([f"__F__x1 = tl.load(__F__in1 + {offs}, mask=tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 4)[None, :] < 1, "
                  "other=-float('inf'))",
                  f"tl.store(__F__out2 + {offs}, __F__x1 * __F__x1)"],
                 [("__F__in1", x, "fp16")], [Output("__F__out2", "fp16", (8, 8))], shape=(4, 4))
    lanes = np.zeros((2, 8, 8), bool)
    lanes[:, :4, 1:4:2] = True                                           # masked off, odd columns of the block
    lost = shrunk_with_gpu(f, lambda n, a: np.where(lanes, np.float16(-np.inf), a).astype(a.dtype))
    assert lost.verdict.status == "mismatch" and classify(lost) == "masked_16_bit_other_loses_its_sign"
    loaded = np.zeros((2, 8, 8), bool)
    loaded[:, 0, 0] = True                                               # the one lane the mask keeps
    kept = shrunk_with_gpu(f, lambda n, a: np.where(loaded, np.float16(-1.0), a).astype(a.dtype))
    assert kept.verdict.status == "mismatch" and classify(kept) is None


def test_rule_int32_min_max_chain_folded_to_x():
    x = np.array([[1, -1, 0, 5, -7, 2 ** 31 - 1, -2 ** 31, 3], [70000, -47, 2, 9, -2, 65535, 1, -65519]], np.int32)
    chain = "tl.minimum(__F__x1, tl.minimum(0 - __F__x1, tl.maximum(tl.full((8,), 0, tl.int8), __F__x1)))"
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + f", {chain} + 3)"],
                 [("__F__in1", x, "int32")], [Output("__F__out2", "int32", (8,))])
    folded = shrunk_with_gpu(f, lambda n, a: (x + 3).astype(a.dtype))
    assert folded.verdict.status == "mismatch" and classify(folded) == "int32_min_max_chain_folded_to_x"
    other = shrunk_with_gpu(f, lambda n, a: np.abs(x).astype(a.dtype) + 3)         # |x| is not the fold
    assert other.verdict.status == "mismatch" and classify(other) is None
    wide = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                     "tl.store(__F__out2 + " + OFFS + f", {chain.replace('__F__x1', '__F__x1.to(tl.int64)')})"],
                    [("__F__in1", x, "int32")], [Output("__F__out2", "int64", (8,))])
    int64 = shrunk_with_gpu(wide, lambda n, a: x.astype(a.dtype))                  # the GPU folds int32 only
    assert int64.verdict.status == "mismatch" and classify(int64) is None


def test_rule_negation_lost_in_a_reduction():
    """The GPU reduces the third of each thread's four elements without the negation (fuzz run of 2026-12-02):
    consecutive columns along the last axis, rows two apart along the first in this block."""
    offs = "pid * 64 + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]"
    x = ((np.arange(128) * 7919 % 20011) - 10005).astype(np.int32).reshape(2, 8, 8)
    x[:, :, 2] = -30000 - np.arange(8)                    # lanes whose sign, if kept, decides a row's minimum
    x[:, :, 1] = -31000 - np.arange(8)
    x[:, 4, :] = 29000 + np.arange(8)                     # and a column's maximum

    def reduced(code, axis):
        return fragment([f"__F__x1 = tl.load(__F__in1 + {offs})",
                         f"tl.store(__F__out2 + {offs}, {code.replace('AXIS', str(axis))})"],
                        [("__F__in1", x, "int32")], [Output("__F__out2", "int32", (8, 8))], shape=(8, 8))

    def kept_at(index, axis, fn=np.min):
        along = np.arange(8).reshape((8, 1) if axis == 0 else (1, 8))
        return np.broadcast_to(fn(np.where(index(along), x, -x), axis=axis + 1, keepdims=True), x.shape)

    cols = shrunk_with_gpu(reduced("tl.min(-__F__x1, axis=AXIS, keep_dims=True)", 1),
                           lambda n, a: kept_at(lambda i: i % 4 == 2, 1).astype(a.dtype))
    assert cols.verdict.status == "mismatch" and classify(cols) == "negation_lost_in_a_reduction"
    rows = shrunk_with_gpu(reduced("tl.max(0 - __F__x1, axis=AXIS, keep_dims=True) + 1", 0),
                           lambda n, a: (kept_at(lambda i: i // 2 % 4 == 2, 0, np.max) + 1).astype(a.dtype))
    assert rows.verdict.status == "mismatch" and classify(rows) == "negation_lost_in_a_reduction"
    summed = shrunk_with_gpu(reduced("tl.sum(-__F__x1, axis=AXIS, keep_dims=True)", 1),
                             lambda n, a: kept_at(lambda i: i % 4 == 2, 1, np.sum).astype(a.dtype))
    assert summed.verdict.status == "mismatch" and classify(summed) == "negation_lost_in_a_reduction"
    second = shrunk_with_gpu(reduced("tl.min(-__F__x1, axis=AXIS, keep_dims=True)", 1),
                             lambda n, a: kept_at(lambda i: i % 4 == 1, 1).astype(a.dtype))
    assert second.verdict.status == "mismatch" and classify(second) is None     # not the third of four
    plain = shrunk_with_gpu(reduced("tl.min(__F__x1 + 0, axis=AXIS, keep_dims=True)", 1),
                            lambda n, a: kept_at(lambda i: i % 4 != 2, 1).astype(a.dtype))
    assert plain.verdict.status == "mismatch" and classify(plain) is None       # no negation to lose


def test_rule_remainder_of_infinities_converted_to_an_integer():
    """`x % x` converted to an integer is NaN (so 0) on the GPU for an infinite x (fuzz run of 2026-12-02)."""
    x = np.array([[np.inf, 1.0, -np.inf, 3.0, np.inf, 0.5, 7.0, 2.0]] * 2, np.float16)
    clamped = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                        "tl.store(__F__out2 + " + OFFS + ", tl.minimum(tl.maximum(__F__x1 % __F__x1, 0.0), 4294967040.0))"],
                       [("__F__in1", x, "fp16")], [Output("__F__out2", "uint32", (8,))])
    zero = shrunk_with_gpu(clamped, lambda n, a: np.where(x == np.inf, 0, a).astype(a.dtype))
    assert zero.verdict.status == "mismatch" and classify(zero) == "remainder_of_infinities_converted_to_an_integer"
    one = shrunk_with_gpu(clamped, lambda n, a: np.where(x == np.inf, 1, a).astype(a.dtype))
    assert one.verdict.status == "mismatch" and classify(one) is None
    through_a_variable = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__v2 = __F__x1 % __F__x1",
                                   "tl.store(__F__out3 + " + OFFS + ", (__F__v2 * 2.0).to(tl.int32))"],
                                  [("__F__in1", x, "fp16")], [Output("__F__out3", "int32", (8,))])
    nan = shrunk_with_gpu(through_a_variable, lambda n, a: np.where(np.isinf(x), 0, a).astype(a.dtype))
    assert nan.verdict.status == "mismatch" and classify(nan) == "remainder_of_infinities_converted_to_an_integer"
    stays_float = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                            "tl.store(__F__out2 + " + OFFS + ", __F__x1 % __F__x1)"],
                           [("__F__in1", x, "fp16")], [Output("__F__out2", "fp16", (8,))])
    float_nan = shrunk_with_gpu(stays_float, lambda n, a: np.where(np.isinf(x), np.nan, a).astype(a.dtype))
    assert float_nan.verdict.status == "mismatch" and classify(float_nan) is None   # the GPU keeps inf there


def test_lanes_of_an_output_stored_inside_an_if_are_laid_out_row_by_row():
    """With no top-level store to copy, evaluation falls back to the output's own block, row by row."""
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "if pid < 1:",
                  (1, "tl.store(__F__out2 + " + OFFS + ", __F__x1 * 2)")],
                 [("__F__in1", x, "int32")], [Output("__F__out2", "int32", (8,))])
    view = fuzzexplain.Mismatch(f, infer(f), None)
    assert view.evaluate_code("__F__x1 + 1", "int32", "__F__out2").tolist() == (x + 1).tolist()


def test_rule_fma_contraction():
    x = ((np.arange(16, dtype=np.float32) - 7.3) / 3.1).reshape(2, 8)
    s = float(np.float32(0.4210987))
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", __F__x1 * __F__s3 + 1.0)"],
                 [("__F__in1", x, "fp32")], [Output("__F__out2", "fp32", (8,))], scalars=[("__F__s3", s)])
    fused = (x.astype(np.float64) * s + 1.0).astype(np.float32)
    one = shrunk_with_gpu(f, lambda n, a: fused)
    assert one.verdict.status == "mismatch" and classify(one) == "fma_contraction"
    off = shrunk_with_gpu(f, lambda n, a: np.nextafter(fused, np.float32(np.inf)))
    assert off.verdict.status == "mismatch" and classify(off) is None


def test_rule_float_mod_by_a_computed_power_of_two():
    x = np.array([[-3.0, -2.5, 4.0, -0.0, 0.0, -8.0, 1.5, -1e30], [2.0, -5.0, 0.5, 7.0, -6.0, 3.0, 1.0, -1.0]],
                 np.float32)
    divisor = "tl.minimum(tl.maximum(tl.full((8,), 1.0, tl.float32), -5.0), 5.0)"
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + f", __F__x1 % {divisor})"],
                 [("__F__in1", x, "fp32")], [Output("__F__out2", "fp32", (8,))])
    signed = shrunk_with_gpu(f, lambda n, a: np.fmod(x, np.float32(1.0)))
    assert signed.verdict.status == "mismatch" and classify(signed) == "float_mod_by_a_computed_power_of_two"
    flipped = shrunk_with_gpu(f, lambda n, a: np.where(a == 0, np.float32(-0.0), a))   # -0.0 for positive x too
    assert flipped.verdict.status == "mismatch" and classify(flipped) is None


def test_rule_compiler_assertion():
    x = np.zeros((2, 8), np.int32)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")",
                  "tl.store(__F__out2 + " + OFFS + ", __F__x1 + 1)"],
                 [("__F__in1", x, "int32")], [Output("__F__out2", "int32", (8,))])
    case, slots = kernel_case([f])
    mt = run_in_minitriton(case.source, case.kernel, case.grid, case.args)
    for error, want in [("WorkerError: the cuda child died on this case\npython: /source/llvm-project/llvm/lib/IR/"
                         "Instructions.cpp:3150: ... Assertion `(C->getType() == Ty)' failed.", "compiler_assertion"),
                        ("WorkerError: the cuda child died on this case\nSegmentation fault", None)]:
        ref = Result([], {}, error=error, error_type="WorkerError")
        verdict = judge(f, slots[0], mt, ref, "cuda")
        assert verdict.raised == ("triton", "WorkerError")
        assert classify(fuzzshrink.Shrunk(f, verdict, mt, ref, alone=True, finished=True)) == want


def test_dot_near_the_accumulators_maximum_compares_either_overflow():
    """Where |a| @ |b| reaches fp32's largest value, whether a partial sum overflows depends on the order of
    accumulation (the H200 gave inf and 3.2e38 where minitriton gave 3.2e38 and inf): any two non-NaN values
    agree there; elsewhere the dot keeps its bound."""
    a = np.full((2, 16, 16), 1.0, np.float32)
    a[0, 0, :] = 3e37                                   # row 0 of program 0: 16 products of 3e37 overflow fp32
    b = np.ones((2, 16, 16), np.float32)
    f = dot_fragment(a, b, ", input_precision='ieee'")
    finite = shrunk_with_gpu(f, lambda n, v: np.where(np.isinf(v), np.float32(3.2e38), v) if n == "__F__out5" else v)
    assert np.isinf(finite.mt.args[4][0, 0]).all() and finite.verdict.status == "match"
    elsewhere = shrunk_with_gpu(f, lambda n, v: v + np.float32(1.0) if n == "__F__out5" else v)
    assert elsewhere.verdict.status == "mismatch" and list(elsewhere.verdict.bad) == ["__F__out5"]
    nan = shrunk_with_gpu(f, lambda n, v: np.where(np.isinf(v), np.float32(np.nan), v) if n == "__F__out5" else v)
    assert nan.verdict.status == "mismatch"


def test_rule_probes_compute_the_source_values_on_minitriton():
    """Each probe's source values are what minitriton computes, and its GPU predicate tells them apart from
    what the GPU was seen to store; the int16 probe's values are the H200's of 2026-11-29."""
    for rule in fuzzrules.RULES:
        p = rule.probe
        res = run_in_minitriton(p.source, "probe", p.grid, p.args)
        got = f64(res.args[-1]).reshape(-1)
        assert fuzzexplain.same_all(got, p.source_values), rule.name
        assert not p.gpu_shows(np.asarray(p.source_values, np.float64), got), rule.name
    neg = next(r for r in fuzzrules.RULES if r.name == "int16_negation_widened").probe
    h200 = [-25949, -23907, 0, -23285, -1, 32768, -28964, -1, 21657, -32766, -19592, 32768, 1, -7457, -18926, 32596]
    assert neg.gpu_shows(np.asarray(neg.source_values, np.float64), np.asarray(h200, np.float64))


def test_a_reproducer_writes_infinities_and_nan_as_numpy_names(tmp_path):
    """A reproducer's inline inputs are Python that makes what the fragment held, non-finite values included."""
    mixed = np.array([[-np.inf, np.nan, np.inf, 1.5, 0, -0.0, 2, 3]] * 2, dtype=np.float32)
    f = fragment(["__F__x1 = tl.load(__F__in1 + " + OFFS + ")", "__F__x2 = tl.load(__F__in2 + " + OFFS + ")",
                  "tl.store(__F__out3 + " + OFFS + ", __F__x1 + __F__x2)"],
                 [("__F__in1", mixed, "fp32"), ("__F__in2", np.full((2, 8), -np.inf, np.float16), "fp16")],
                 [Output("__F__out3", "fp32", (8,))])
    shrunk = fuzzshrink.Shrunk(f, None, None, None, alone=True, finished=True)
    info = {"rule": None, "lines": fuzzshrink.kernel_lines(f), "detail": "x", "lanes": []}
    path = tmp_path / fuzzrun.write_reproducer(tmp_path / "fuzz-run", 0, "cuda", shrunk, info)
    text = path.read_text()
    assert "-np.inf" in text and "np.nan" in text
    args = _reproducer_args(text)
    np.testing.assert_array_equal(args["f0_in1"], mixed)
    np.testing.assert_array_equal(args["f0_in2"], np.full((2, 8), -np.inf, np.float16))


def _reproducer_args(text):
    """The reproducer's inputs: its data block run on its own (the kernel above it needs Triton)."""
    data = text[text.index("import numpy as np"):text.index("if __name__")]
    ns: dict = {}
    exec(data, ns)
    return ns
