"""The course under CPython (lab mode): every exercise's hidden reference passes every test in both languages,
every starter fails every test with a friendly message, the texts stand on their own in both languages, and
the checks that are not about one mistake (kernel names and signatures, code that does not load, compile
errors, the counters a Check reports) behave."""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest
from course_helpers import HAS_RAND, NO_RAND, by_id, check, exercise, failing, line_of, mutate, solution

import minitriton
from sandbox import bridge
from sandbox.exercises import COURSE, EXERCISES
from sandbox.exercises._base import available

IDS = [ex.id for ex in COURSE]
ORDER = ["copy", "strided_copy", "transpose", "outer", "row_stats", "practice", "softmax_bwd", "rmsnorm",
          "rmsnorm_bwd", "matmul", "matmul_act", "dropout", "flash_attention"]


def runnable(exercise_id: str):
    """Skip an exercise whose tl functions this minitriton lacks (dropout before tl.rand lands)."""
    if not available(exercise(exercise_id)):
        pytest.skip(NO_RAND)


def test_the_course_order():
    assert IDS == ORDER
    assert [ex.order for ex in COURSE] == list(range(1, len(ORDER) + 1))
    assert [ex.id for ex in EXERCISES] == [i for i in ORDER if HAS_RAND or i != "dropout"]
    assert len(EXERCISES) >= 12


# ---------------------------------------------------------------- references and starters

@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("ex_id", IDS)
def test_reference_passes_every_test(ex_id, lang):
    runnable(ex_id)
    ex = exercise(ex_id)
    result = check(ex_id, ex.solution[lang], lang)
    assert [(t["id"], t["message"]) for t in result["tests"] if not t["passed"]] == []
    assert result["passed"] and result["error"] is None
    assert [t["id"] for t in result["tests"]] == [t.id for t in ex.tests]
    assert all(t["message"] for t in result["tests"])


@pytest.fixture
def one_program_per_pass():
    old = minitriton.options().group_size
    minitriton.set_options(group_size=1)
    try:
        yield
    finally:
        minitriton.set_options(group_size=old)


@pytest.mark.parametrize("ex_id", [i for i in IDS if i != "flash_attention"])
def test_reference_passes_one_program_per_pass(ex_id, one_program_per_pass):
    """Results, counters and traces (the traffic and address tests) do not depend on how programs are grouped."""
    runnable(ex_id)
    assert failing(check(ex_id, exercise(ex_id).solution["en"])) == []


FRIENDLY = {"en": [r"the kernel wrote nothing to `\w+` \(is it still a TODO\?\)", r"`\w+`: loaded 0 elements",
                   r"copy\(x, out\) launched no kernel"],
            "ru": [r"ядро ничего не записало в `\w+` \(там всё ещё TODO\?\)", r"`\w+`: прочитано 0 элементов",
                   r"copy\(x, out\) не запустила ни одного ядра"]}


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("ex_id", IDS)
def test_starter_fails_every_test_with_a_friendly_message(ex_id, lang):
    runnable(ex_id)
    result = check(ex_id, exercise(ex_id).starter[lang], lang)
    assert result["error"] is None                     # the starter runs: it just computes nothing yet
    assert not result["passed"]
    for t in result["tests"]:
        assert not t["passed"], t["id"]
        assert any(re.match(p, t["message"]) for p in FRIENDLY[lang]), (t["id"], t["message"])


@pytest.mark.parametrize("ex_id", IDS)
def test_reference_run_prints_a_verdict(ex_id):
    runnable(ex_id)
    r = bridge.dispatch("run", {"exercise": ex_id, "code": exercise(ex_id).solution["en"], "lang": "en"})
    assert r["ok"] and r["error"] is None and r["launches"]
    assert "matches NumPy" in r["stdout"] and "does NOT match" not in r["stdout"]


@pytest.mark.parametrize("ex_id", IDS)
def test_a_check_of_the_reference_reports_its_launches(ex_id):
    """The counters a Check shows come from at least one recorded test (FlashAttention's traffic test among them),
    so a passing Check never reads as 'no kernel was launched'."""
    runnable(ex_id)
    result = check(ex_id, exercise(ex_id).solution["en"])
    assert result["launches"]
    recorded = {t.id for t in exercise(ex_id).tests if t.counters}
    assert {launch["test"] for launch in result["launches"]} <= recorded
    assert all("trace" not in launch for launch in result["launches"])   # traces stay inside the address tests


# ---------------------------------------------------------------- texts

@pytest.mark.parametrize("ex_id", IDS)
def test_code_is_the_same_in_both_languages(ex_id):
    """Starter and solution differ between ru and en only in comments."""
    ex = exercise(ex_id)
    for code in (ex.starter, ex.solution):
        assert ast.dump(ast.parse(code["ru"])) == ast.dump(ast.parse(code["en"]))
        assert "«" not in code["ru"] + code["en"]
    assert ex.starter["ru"] != ex.starter["en"]


@pytest.mark.parametrize("ex_id", IDS)
def test_starter_is_real_triton_syntax_with_todos(ex_id):
    ex = exercise(ex_id)
    tree = ast.parse(ex.starter["en"])
    imports = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert {"triton", "triton.language"} <= imports
    jitted = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
              and any(ast.unparse(d) == "triton.jit" for d in n.decorator_list)}
    assert jitted == set(ex.kernels)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name, params in {**ex.kernels, **ex.functions}.items():
        assert [a.arg for a in functions[name].args.args] == list(params)
    assert "# TODO" in ex.starter["en"] and "# TODO" in ex.starter["ru"]
    assert "TODO" not in ex.solution["en"]


CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
# A statement stands on its own: it may name the lesson, never point at a numbered one ("урок 5.7.2").
NUMBERED_LESSON = re.compile(r"(урок\w*|lesson)\s+\d+(\.\d+)+", re.IGNORECASE)


@pytest.mark.parametrize("ex_id", IDS)
def test_texts_exist_in_both_languages_and_stand_alone(ex_id):
    ex = exercise(ex_id)
    for field in (ex.title, ex.statement):
        assert field["ru"].strip() and field["en"].strip() and field["ru"] != field["en"]
        assert CYRILLIC.search(field["ru"]) and not CYRILLIC.search(field["en"])
    assert len(ex.hints) >= 3
    for hint in ex.hints:
        assert hint["ru"] != hint["en"] and CYRILLIC.search(hint["ru"]) and not CYRILLIC.search(hint["en"])
    for t in ex.tests:
        assert t.title["ru"] and t.title["en"] and not CYRILLIC.search(t.title["en"])
    assert len({t.id for t in ex.tests}) == len(ex.tests) >= 4
    texts = [ex.statement[lang] for lang in ("ru", "en")] + [ex.starter[lang] for lang in ("ru", "en")]
    texts += [h[lang] for h in ex.hints for lang in ("ru", "en")]
    assert not [m.group() for text in texts for m in NUMBERED_LESSON.finditer(text)]


def test_the_bridge_describes_every_exercise_with_its_hint_count():
    listed = bridge.dispatch("exercises", {"lang": "en"})["exercises"]
    assert [e["id"] for e in listed] == [ex.id for ex in EXERCISES]
    for entry in listed:
        ex = exercise(entry["id"])
        assert entry["hints"] == len(ex.hints)
        assert [bridge.dispatch("hint", {"exercise": ex.id, "index": i, "lang": "en"})["hint"]
                for i in range(len(ex.hints))] == [h["en"] for h in ex.hints]


def test_the_practice_keeps_the_lessons_six_tests_and_the_boss_mirrors_test_flash():
    assert [t.id for t in exercise("practice").tests] == ["add_exact", "add_tail", "softmax_rows", "softmax_stable",
                                                    "matmul_values", "matmul_traffic"]
    flash = [t.id for t in exercise("flash_attention").tests]
    assert flash == [f"sdpa_T{t}{c}" for t in (64, 100, 257) for c in ("", "_causal")] + ["logsumexp", "causal_skip"]


@pytest.mark.skipif(HAS_RAND, reason="tl.rand is there: the dropout exercise is served like the others")
def test_without_tl_rand_the_page_leaves_dropout_out():
    listed = [e["id"] for e in bridge.dispatch("exercises", {"lang": "en"})["exercises"]]
    assert "dropout" not in listed and len(listed) >= 12
    answer = check("dropout", exercise("dropout").solution["en"])
    assert answer["error"]["message"].startswith("no exercise 'dropout'")


# ---------------------------------------------------------------- checks about the code as a whole

PRACTICE = exercise("practice").solution["en"]


def test_matmul_traffic_counts_match_the_lesson_formula():
    """The recorded launch of the traffic test, against the formula computed here with Python ints."""
    result = check("practice", PRACTICE)
    launch = next(r for r in result["launches"] if r.get("test") == "matmul_traffic")
    m, n, k, b = 70, 50, 45, 16
    cdiv = lambda x, y: -(-x // y)   # noqa: E731
    totals = {name: t["totals"] for name, t in launch["tensors"].items()}
    assert totals["a_ptr"]["loaded_elements"] == m * k * cdiv(n, b) == 12_600
    assert totals["b_ptr"]["loaded_elements"] == k * n * cdiv(m, b) == 11_250
    assert totals["c_ptr"]["stored_elements"] == m * n
    assert totals["a_ptr"]["unique_loaded_bytes"] == m * k * 4


def test_matmul_accepts_ieee_and_tf32_but_not_a_wrong_product():
    ieee = mutate(PRACTICE, ("acc = tl.dot(a, b, acc)", 'acc = tl.dot(a, b, acc, input_precision="ieee")'))
    assert by_id(check("practice", ieee))["matmul_values"]["passed"]
    short = mutate(PRACTICE, ("for k0 in range(0, K, BK):", "for k0 in range(0, K - BK, BK):"))
    message = by_id(check("practice", short))["matmul_values"]["message"]
    assert "elements of `c` differ (1e-5 + 2⁻⁹·Σ|a·b|, admits TF32)" in message


def compile_record(result):
    """The record of a Check's compile error: of its own kind, not only Triton's whole compile-error layout
    (kind "compile_error")."""
    record = result["error"]["diagnostic"]
    assert record["kind"] != "compile_error", record
    return record


def test_compile_errors_point_at_the_kernel_line():
    code = mutate(PRACTICE, ("tl.arange(0, BLOCK)\n    mask", "tl.arange(0, 100)\n    mask"))
    line = line_of(code, "tl.arange(0, 100)")
    result = check("practice", code)
    assert (result["error"]["type"], result["error"]["line"], result["error"]["program"]) == (
        "CompilationError", line, None)
    assert compile_record(result)["kind"] == "arange_power_of_two"
    assert by_id(result)["add_tail"]["message"] == (f"arange's range must be a power of 2 (line {line}). Use a "
                                                     f"power-of-2 block (128) and mask the extra lanes.")
    assert by_id(check("practice", code, "ru"))["add_tail"]["message"].endswith(
        f"(строка {line}). Возьмите блок длиной в степень двойки (128) и закройте лишние дорожки маской.")


def test_a_failed_static_assert_is_named_by_its_message_or_statement():
    with_message = mutate(PRACTICE, ("tl.arange(0, BLOCK)\n    mask",
                                     "tl.arange(0, BLOCK)\n    tl.static_assert(BLOCK < 0, 'BLOCK must be negative')\n    mask"))
    result = check("practice", with_message)
    assert result["error"]["type"] == "CompileTimeAssertionFailure"
    compile_record(result)
    line = line_of(with_message, "tl.static_assert(")
    assert by_id(result)["add_tail"]["message"] == f"BLOCK must be negative (line {line})."
    bare = mutate(PRACTICE, ("tl.arange(0, BLOCK)\n    mask", "tl.arange(0, BLOCK)\n    tl.static_assert(BLOCK < 0)\n    mask"))
    for lang in ("en", "ru"):
        assert "tl.static_assert(BLOCK < 0)" in by_id(check("practice", bare, lang))["add_tail"]["message"]


def test_renamed_unjitted_or_resigned_kernels_are_explained():
    renamed = check("practice", PRACTICE.replace("def add_kernel(", "def my_add("))
    assert by_id(renamed)["add_exact"]["message"] == (
        "there is no `add_kernel` in your code: keep the kernel's name and parameters, the tests launch "
        "add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK)")
    assert by_id(renamed)["softmax_rows"]["passed"]
    unjitted = PRACTICE.replace("@triton.jit\ndef add_kernel", "def add_kernel")
    assert by_id(check("practice", unjitted))["add_exact"]["message"] == (
        "`add_kernel` is not a kernel: it needs the @triton.jit decorator")
    resigned = mutate(PRACTICE, ("def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):",
                                 "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):"))
    resigned = resigned.replace("pid * BLOCK + tl.arange(0, BLOCK)", "pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)")
    assert by_id(check("practice", resigned))["add_exact"]["message"] == (
        "the tests launch add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK) but your kernel takes "
        "(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE); keep the parameters of the starter")


def test_a_missing_host_function_is_named_with_its_parameters():
    code = solution("copy", ("def copy(x, out):", "def copy_all(x, out):"))
    for lang, text in (("en", "there is no function `copy` in your code: the tests call copy(x, out)"),
                       ("ru", "в коде нет функции `copy`: тесты вызывают copy(x, out)")):
        assert {t["message"] for t in check("copy", code, lang)["tests"]} == {text}


def test_code_that_does_not_load_fails_every_test_with_the_reason():
    result = check("practice", PRACTICE + "\nprint(undefined_name)\n")
    line = len((PRACTICE + "\nprint(undefined_name)\n").splitlines())
    assert {t["message"] for t in result["tests"]} == {
        f"the code did not load, so no test ran: undefined_name is not defined (line {line})."}
    assert (result["error"]["type"], result["error"]["line"]) == ("NameError", line)
    syntax = check("practice", "def broken(:\n", "ru")
    assert syntax["error"]["type"] == "SyntaxError" and syntax["error"]["line"] == 1
    assert syntax["tests"][0]["message"].startswith("код не загрузился, тесты не запускались: синтаксическая ошибка: ")
    assert syntax["tests"][0]["message"].endswith("(строка 1).")


def test_flash_reference_matches_an_independent_attention():
    """The exercise's float64 reference against a per-row computation written out here."""
    from sandbox.exercises import flash_attention as fa
    g = np.random.default_rng(5)
    q, k, v = (g.standard_normal((1, 1, 5, 16)) for _ in range(3))
    o, lse = fa.reference(q, k, v, causal=True)
    for i in range(5):
        scores = np.array([q[0, 0, i] @ k[0, 0, j] / 4.0 for j in range(i + 1)])
        w = np.exp(scores - scores.max())
        assert np.allclose(o[0, 0, i], (w / w.sum()) @ v[0, 0, : i + 1], rtol=1e-12, atol=1e-12)
        assert np.isclose(lse[0, 0, i], np.log(np.exp(scores).sum()), rtol=1e-12)


def test_rmsnorm_backward_reference_matches_finite_differences():
    """dx and dw of the exercise's float64 formulas against central differences of the forward pass."""
    from sandbox.exercises import rmsnorm_bwd as rb
    g = np.random.default_rng(6)
    x, w, dy = g.standard_normal((3, 5)), g.standard_normal(5), g.standard_normal((3, 5))
    eps = 1e-6

    def loss(x_, w_):
        return float((dy * x_ / np.sqrt((x_ * x_).mean(axis=1, keepdims=True) + eps) * w_).sum())
    rstd = 1.0 / np.sqrt((x * x).mean(axis=1) + eps)
    dx, dw = rb.reference(x, w, dy, rstd)
    h = 1e-6
    for i, j in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[i, j] = h
        assert np.isclose(dx[i, j], (loss(x + e, w) - loss(x - e, w)) / (2 * h), rtol=1e-6, atol=1e-8)
    for j in range(5):
        e = np.zeros_like(w)
        e[j] = h
        assert np.isclose(dw[j], (loss(x, w + e) - loss(x, w - e)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_the_matmul_group_order_matches_the_lessons_kernel_order():
    """The tiles the test expects, program by program, written out for 5 x 4 tiles and GROUP_M = 2."""
    from sandbox.exercises import matmul
    order = [matmul.grouped_tile(p, 70, 50) for p in range(20)]
    assert order[:8] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    assert order[16:] == [(4, 0), (4, 1), (4, 2), (4, 3)]     # the last group has one tile row
    assert sorted(order) == [(m, n) for m in range(5) for n in range(4)]


def test_minitriton_state_is_left_alone():
    before = minitriton.options().group_size
    check("practice", PRACTICE)
    assert minitriton.options().group_size == before
