"""Every exercise under CPython: the hidden reference passes every test, the starter fails every test with a
friendly message, and the usual mistakes (a forgotten mask, a wrong stride, an off-by-one, TF32 in the
boss) fail the right tests with messages in kernel terms (program, offsets, tensor, line)."""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest

import minitriton
from sandbox import bridge, messages
from sandbox.exercises import EXERCISES, get

S = messages.NNBSP          # digit groups: "98 432"
IDS = [ex.id for ex in EXERCISES]


def check(exercise: str, code: str, lang: str = "en") -> dict:
    return bridge.dispatch("check", {"exercise": exercise, "code": code, "lang": lang})


def by_id(result: dict) -> dict:
    return {t["id"]: t for t in result["tests"]}


def mutate(code: str, old: str, new: str, count: int = 1) -> str:
    assert code.count(old) == count, f"{old!r} occurs {code.count(old)} times"
    return code.replace(old, new)


# ---------------------------------------------------------------- references and starters

@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("exercise", IDS)
def test_reference_passes_every_test(exercise, lang):
    ex = get(exercise)
    result = check(exercise, ex.solution[lang], lang)
    failing = [(t["id"], t["message"]) for t in result["tests"] if not t["passed"]]
    assert not failing
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


@pytest.mark.parametrize("exercise", ["practice", "rmsnorm", "softmax_bwd"])
def test_reference_passes_one_program_per_pass(exercise, one_program_per_pass):
    """Results and counters (the traffic tests) do not depend on how minitriton groups programs."""
    result = check(exercise, get(exercise).solution["en"])
    assert [t["id"] for t in result["tests"] if not t["passed"]] == []


NOTHING = {"en": r"the kernel wrote nothing to `\w+` \(is it still a TODO\?\)",
           "ru": r"ядро ничего не записало в `\w+` \(там всё ещё TODO\?\)"}
NOTHING_LOADED = {"en": r"`\w+`: loaded 0 elements, expected [\d ]+ \(", "ru": r"`\w+`: прочитано 0 элементов, а должно быть"}


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("exercise", IDS)
def test_starter_fails_every_test_with_a_friendly_message(exercise, lang):
    result = check(exercise, get(exercise).starter[lang], lang)
    assert result["error"] is None                     # the starter runs: it just computes nothing yet
    assert not result["passed"]
    for t in result["tests"]:
        assert not t["passed"], t["id"]
        text = t["message"].replace(S, " ")
        assert re.match(NOTHING[lang], text) or re.match(NOTHING_LOADED[lang], text), (t["id"], t["message"])
        assert "Traceback" not in t["message"] and "internal" not in t["message"]


@pytest.mark.parametrize("exercise", IDS)
def test_code_is_the_same_in_both_languages(exercise):
    """Starter and solution differ between ru and en only in comments."""
    ex = get(exercise)
    for code in (ex.starter, ex.solution):
        assert ast.dump(ast.parse(code["ru"])) == ast.dump(ast.parse(code["en"]))
        assert "«" not in code["ru"] + code["en"]
    assert ex.starter["ru"] != ex.starter["en"]


@pytest.mark.parametrize("exercise", IDS)
def test_starter_is_real_triton_syntax_with_todos(exercise):
    ex = get(exercise)
    tree = ast.parse(ex.starter["en"])
    imports = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert {"triton", "triton.language"} <= imports
    jitted = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
              and any(ast.unparse(d) == "triton.jit" for d in n.decorator_list)}
    assert jitted == set(ex.kernels)
    for name, params in ex.kernels.items():
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
        assert [a.arg for a in fn.args.args] == list(params)
    assert "# TODO" in ex.starter["en"] and "# TODO" in ex.starter["ru"]
    assert "TODO" not in ex.solution["en"]


@pytest.mark.parametrize("exercise", IDS)
def test_texts_exist_in_both_languages(exercise):
    ex = get(exercise)
    for field in (ex.title, ex.statement):
        assert field["ru"].strip() and field["en"].strip() and field["ru"] != field["en"]
        assert re.search("[а-я]", field["ru"]) and not re.search("[а-я]", field["en"])
    assert len(ex.hints) >= 3
    for hint in ex.hints:
        assert hint["ru"] != hint["en"] and re.search("[а-я]", hint["ru"])
    for t in ex.tests:
        assert t.title["ru"] and t.title["en"]
    assert len({t.id for t in ex.tests}) == len(ex.tests)


def test_the_practice_has_six_tests_and_the_boss_mirrors_test_flash():
    assert [t.id for t in get("practice").tests] == ["add_exact", "add_tail", "softmax_rows", "softmax_stable",
                                                    "matmul_values", "matmul_traffic"]
    flash = [t.id for t in get("flash_attention").tests]
    assert flash == [f"sdpa_T{t}{c}" for t in (64, 100, 257) for c in ("", "_causal")] + ["logsumexp"]


# ---------------------------------------------------------------- the practice

PRACTICE = get("practice").solution["en"]


def test_forgotten_mask_names_program_offsets_and_line():
    code = mutate(PRACTICE, "    x = tl.load(x_ptr + offs, mask=mask)\n", "    x = tl.load(x_ptr + offs)\n")
    result = check("practice", code)
    tests = by_id(result)
    assert tests["add_exact"]["passed"]                # whole blocks need no mask
    assert not tests["add_tail"]["passed"]
    line = code.splitlines().index("    x = tl.load(x_ptr + offs)") + 1
    assert tests["add_tail"]["message"] == (
        f"program 96 reads offsets 98{S}432…99{S}327 past the end of `x_ptr` (n = 98{S}432), line {line}. "
        f"Mask the tail: mask=offs < n.")
    err = result["error"]
    assert (err["type"], err["line"], err["program"]) == ("OutOfBoundsError", line, [96, 0, 0])
    ru = by_id(check("practice", code, "ru"))["add_tail"]["message"]
    assert ru == (f"программа 96 читает смещения 98{S}432…99{S}327 за концом `x_ptr` (в нём n = 98{S}432 элементов), "
                  f"строка {line}. Закройте хвост маской: mask=offs < n.")


def test_off_by_one_mask_points_at_the_bound():
    code = mutate(PRACTICE, "mask = offs < n ", "mask = offs <= n ")
    message = by_id(check("practice", code))["add_tail"]["message"]
    assert re.fullmatch(rf"program 96 reads offsets 98{S}432 past the end of `x_ptr` \(n = 98{S}432\), line \d+\. "
                        r"The mask lets these lanes through: check its bound .*", message)


def test_an_unwritten_tail_is_named_by_its_range():
    code = mutate(PRACTICE, "mask = offs < n ", "mask = offs < n - n % BLOCK ")
    tests = by_id(check("practice", code))
    assert tests["add_exact"]["passed"]
    assert tests["add_tail"]["message"] == f"out[98{S}304…98{S}431] were never written"


def test_softmax_tail_read_as_zero_is_a_mismatch():
    code = mutate(PRACTICE, 'other=-float("inf")', "other=0.0")
    tests = by_id(check("practice", code))
    assert not tests["softmax_rows"]["passed"]
    assert re.fullmatch(r"[\d ]+ of 6400 elements of `out` differ \(atol = 1e-06, rtol = 1e-05\); max abs error "
                        r"\d\.\de-\d\d at row \d+, col \d+ \(expected \S+, got \S+\)",
                        tests["softmax_rows"]["message"].replace(S, " "))


def test_softmax_without_the_max_overflows():
    code = mutate(PRACTICE, "x = x - tl.max(x, axis=0)", "x = x")
    tests = by_id(check("practice", code))
    assert tests["softmax_rows"]["passed"]             # small values survive without it
    message = tests["softmax_stable"]["message"]
    assert message.startswith("`out` has 1600 NaN/inf values (first at row 0, col 0: expected ")
    assert message.endswith("Looks like tl.exp overflowed: subtract the row max before the exponential.")


def test_matmul_without_the_k_mask_reads_past_a():
    code = mutate(PRACTICE, "mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)",
                  "mask=(offs_m[:, None] < M), other=0.0)")
    tests = by_id(check("practice", code))
    # rows 64…69 of A: the last tile's K columns 45…47 of row 69 run past 70·45 = 3150 elements
    assert re.fullmatch(r"program \(4, 0\) reads offsets 3150…3152 past the end of `a_ptr` \(n = 3150\), line \d+\. "
                        r"The mask lets these lanes through.*", tests["matmul_values"]["message"])


def test_matmul_with_the_wrong_row_stride():
    code = mutate(PRACTICE, "a_ptr + offs_m[:, None] * K", "a_ptr + offs_m[:, None] * N")
    message = by_id(check("practice", code))["matmul_values"]["message"]
    assert re.fullmatch(r"program \(3, 0\) reads offsets 3150…3165 past the end of `a_ptr` .*", message)


def test_matmul_traffic_catches_a_reread_that_values_do_not():
    code = mutate(PRACTICE, "        acc = tl.dot(a, b, acc)",
                  "        b = b + 0.0 * tl.load(b_ptr + ks[:, None] * N + offs_n[None, :],\n"
                  "                              mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)\n"
                  "        acc = tl.dot(a, b, acc)")
    tests = by_id(check("practice", code))
    assert tests["matmul_values"]["passed"]
    # B is 45 x 50, read once per row of tiles (5 of them), and twice here; program (0, 0) reads a 45 x 16 strip
    assert tests["matmul_traffic"]["message"] == (
        f"`b_ptr`: loaded 22{S}500 elements, expected 11{S}250 (K·N·⌈M/BM⌉ = 45·50·5); "
        f"e.g. program (0, 0): 1440 instead of 720")


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
    ieee = mutate(PRACTICE, "acc = tl.dot(a, b, acc)", 'acc = tl.dot(a, b, acc, input_precision="ieee")')
    assert by_id(check("practice", ieee))["matmul_values"]["passed"]
    short = mutate(PRACTICE, "for k0 in range(0, K, BK):", "for k0 in range(0, K - BK, BK):")
    message = by_id(check("practice", short))["matmul_values"]["message"]
    assert "elements of `c` differ (1e-5 + 2⁻⁹·Σ|a·b|, admits TF32)" in message


def test_compile_errors_point_at_the_kernel_line():
    code = mutate(PRACTICE, "tl.arange(0, BLOCK)\n    mask", "tl.arange(0, 100)\n    mask")
    result = check("practice", code)
    line = next(i for i, l in enumerate(code.splitlines(), 1) if "tl.arange(0, 100)" in l)
    assert by_id(result)["add_tail"]["message"] == (
        f"compile error in kernel `add_kernel`, line {line}: arange's range must be a power of 2")
    assert (result["error"]["type"], result["error"]["line"], result["error"]["program"]) == (
        "CompilationError", line, None)


def test_a_failed_static_assert_is_named_by_its_message_or_statement():
    with_message = mutate(PRACTICE, "tl.arange(0, BLOCK)\n    mask",
                          "tl.arange(0, BLOCK)\n    tl.static_assert(BLOCK < 0, 'BLOCK must be negative')\n    mask")
    result = check("practice", with_message)
    assert by_id(result)["add_tail"]["message"].endswith(": BLOCK must be negative")
    assert result["error"]["type"] == "CompileTimeAssertionFailure"
    bare = mutate(PRACTICE, "tl.arange(0, BLOCK)\n    mask", "tl.arange(0, BLOCK)\n    tl.static_assert(BLOCK < 0)\n    mask")
    assert by_id(check("practice", bare))["add_tail"]["message"].endswith(": tl.static_assert(BLOCK < 0)")


def test_renamed_unjitted_or_resigned_kernels_are_explained():
    renamed = check("practice", PRACTICE.replace("def add_kernel(", "def my_add("))
    assert by_id(renamed)["add_exact"]["message"] == (
        "there is no `add_kernel` in your code: keep the kernel's name and parameters, the tests launch "
        "add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK)")
    assert by_id(renamed)["softmax_rows"]["passed"]
    unjitted = PRACTICE.replace("@triton.jit\ndef add_kernel", "def add_kernel")
    assert by_id(check("practice", unjitted))["add_exact"]["message"] == (
        "`add_kernel` is not a kernel: it needs the @triton.jit decorator")
    resigned = mutate(PRACTICE, "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):",
                      "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):")
    resigned = resigned.replace("pid * BLOCK + tl.arange(0, BLOCK)", "pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)")
    assert by_id(check("practice", resigned))["add_exact"]["message"] == (
        "the tests launch add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK) but your kernel takes "
        "(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE); keep the parameters of the starter")


def test_code_that_does_not_load_fails_every_test_with_the_reason():
    result = check("practice", PRACTICE + "\nprint(undefined_name)\n")
    line = len((PRACTICE + "\nprint(undefined_name)\n").splitlines())
    assert {t["message"] for t in result["tests"]} == {
        f"the code did not load, so no test ran: NameError at line {line}: name 'undefined_name' is not defined"}
    assert (result["error"]["type"], result["error"]["line"]) == ("NameError", line)
    syntax = check("practice", "def broken(:\n", "ru")
    assert syntax["error"]["type"] == "SyntaxError" and syntax["error"]["line"] == 1
    assert syntax["tests"][0]["message"].startswith("код не загрузился, тесты не запускались: SyntaxError в строке 1")


# ---------------------------------------------------------------- RMSNorm

RMS = get("rmsnorm").solution["en"]


def test_rmsnorm_row_step_of_n_cols_fails_only_the_strided_test():
    code = RMS.replace("row * stride", "row * n_cols")
    tests = by_id(check("rmsnorm", code))
    assert [i for i, t in tests.items() if not t["passed"]] == ["strided_rows"]
    assert tests["strided_rows"]["message"] == (
        "rows 28…31 of `y` were never written In this test rows are stride = 1024 elements apart while n_cols = 896: "
        "the row offset is row * stride.")


def test_rmsnorm_mean_over_the_block_fails_with_a_tail():
    tests = by_id(check("rmsnorm", mutate(RMS, "/ n_cols + eps", "/ BLOCK_SIZE + eps")))
    assert tests["small"]["passed"] and not tests["tail"]["passed"]
    assert "elements of `y` differ (atol = 1e-05, rtol = 1e-05)" in tests["tail"]["message"]


def test_rmsnorm_weights_per_row_read_past_w():
    tests = by_id(check("rmsnorm", mutate(RMS, "w_ptr + cols", "w_ptr + row * stride + cols")))
    assert re.fullmatch(r"program 1 reads offsets 8…15 past the end of `w_ptr` \(n = 8\), line \d+\. The mask lets.*",
                        tests["small"]["message"])


def test_rmsnorm_fp16_math_overflows():
    tests = by_id(check("rmsnorm", RMS.replace(".to(tl.float32)", "")))
    assert [i for i, t in tests.items() if not t["passed"]] == ["fp16"]
    assert tests["fp16"]["message"].endswith("Squares overflow in FP16 (300² > 65 504): convert the row to FP32 "
                                             "with .to(tl.float32) before squaring.")


def test_rmsnorm_eps_outside_the_root_and_zero_rows():
    outside = mutate(RMS, "tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)", "tl.sqrt(tl.sum(x * x, axis=0) / n_cols) + eps")
    assert [i for i, t in by_id(check("rmsnorm", outside)).items() if not t["passed"]] == ["eps"]
    no_eps = mutate(RMS, "/ n_cols + eps)", "/ n_cols)")
    message = by_id(check("rmsnorm", no_eps))["eps"]["message"]
    assert message.startswith("`y` has 100 NaN/inf values (first at row 3, col 0: expected 0, got nan)")
    assert message.endswith("eps belongs under the square root, sqrt(mean(x²) + eps).")


def test_rmsnorm_reading_x_twice_fails_the_traffic_test():
    code = mutate(RMS, "    y = x / rms * w\n",
                  "    x2 = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)\n"
                  "    y = x2 / rms * w\n")
    tests = by_id(check("rmsnorm", code))
    assert [i for i, t in tests.items() if not t["passed"]] == ["traffic"]
    assert tests["traffic"]["message"] == (
        "`x_ptr`: loaded 9600 elements, expected 4800 (n_rows·n_cols = 16·300); e.g. program 0: 600 instead of 300. "
        "`x_ptr` was read 2×: a fused kernel reads each element once, keep the row in registers")


def test_rmsnorm_writing_past_the_row_is_caught():
    """Row 0 also writes the padding between its row and the next: only the strided test can see it."""
    code = mutate(RMS, "y.to(y_ptr.dtype.element_ty), mask=mask)",
                  "y.to(y_ptr.dtype.element_ty), mask=mask | ((cols < stride) & (row == 0)))")
    tests = by_id(check("rmsnorm", code))
    assert [i for i, t in tests.items() if not t["passed"]] == ["strided_rows"]
    assert tests["strided_rows"]["message"].startswith(
        "programs wrote to `y` outside the rows: 128 elements beyond column n_cols = 896 (first at row 0, col 896)")


# ---------------------------------------------------------------- softmax backward

BWD = get("softmax_bwd").solution["en"]


def test_backward_tail_read_as_minus_inf_gives_nan():
    tests = by_id(check("softmax_bwd", BWD.replace("other=0.0", 'other=-float("inf")')))
    assert tests["small"]["passed"] and not tests["tail"]["passed"]
    assert tests["tail"]["message"].endswith("not -inf, or else 0·(-inf) = NaN.")
    assert "NaN/inf values" in tests["tail"]["message"]


def test_backward_without_the_y_factor_breaks_the_row_sums():
    code = mutate(BWD, "dx = y * (dy - tl.sum(dy * y, axis=0))", "dx = dy - tl.sum(dy * y, axis=0)")
    tests = by_id(check("softmax_bwd", code))
    assert not any(t["passed"] for i, t in tests.items() if i != "traffic")
    assert re.fullmatch(r"row 0: dx sums to \S+, not 0 \(softmax's outputs sum to 1, .*\)",
                        tests["rows_sum_to_zero"]["message"])


def test_backward_row_step_of_n_cols():
    tests = by_id(check("softmax_bwd", BWD.replace("row * stride", "row * n_cols")))
    assert [i for i, t in tests.items() if not t["passed"]] == ["strided_rows"]


# ---------------------------------------------------------------- the boss

FLASH = get("flash_attention").solution["en"]


def test_flash_with_tf32_dots_fails_with_the_reason():
    tests = check("flash_attention", FLASH.replace(', input_precision="ieee"', ""))["tests"]
    assert not any(t["passed"] for t in tests)
    for t in tests:
        assert 'An error of TF32 size (~1e-3): pass input_precision="ieee" to both tl.dot calls.' in t["message"]


def test_flash_without_the_causal_mask_fails_only_causal_tests():
    code = mutate(FLASH, "            valid = valid & (offs_n[None, :] <= offs_m[:, None])\n", "            valid = valid\n")
    failing = [i for i, t in by_id(check("flash_attention", code)).items() if not t["passed"]]
    assert failing == ["sdpa_T64_causal", "sdpa_T100_causal", "sdpa_T257_causal", "logsumexp"]


def test_flash_strong_level_without_masks_passes_t64_only():
    code = mutate(FLASH, ", mask=offs_m[:, None] < T, other=0.0)", ")")
    code = mutate(code, "mask=kv_mask, other=0.0)", ")", count=2)
    tests = by_id(check("flash_attention", code))
    assert [i for i, t in tests.items() if t["passed"]] == ["sdpa_T64", "sdpa_T64_causal"]
    # T = 100, the last (batch, head) pair bh = 5 starts at 5·100·64 = 32 000; the second K block, rows 64…127,
    # covers offsets 36 096…40 191, of which 38 400 on are past the end. Programs run x-outermost, so (0, 5)
    # fails before any (1, bh).
    assert re.fullmatch(rf"program \(0, 5\) reads offsets 38{S}400…40{S}191 past the end of `k_ptr` "
                        rf"\(n = 38{S}400\), line \d+\. Mask the tail: mask=offs < n\.", tests["sdpa_T100"]["message"])


def test_flash_without_the_logsumexp():
    code = mutate(FLASH, "tl.store(l_ptr + bh * T + offs_m, m_i + tl.log(l_i), mask=offs_m < T)", "pass")
    tests = by_id(check("flash_attention", code))
    assert [i for i, t in tests.items() if not t["passed"]] == ["logsumexp"]
    assert tests["logsumexp"]["message"] == "the kernel wrote nothing to `L` (is it still a TODO?)"


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


def test_minitriton_state_is_left_alone():
    before = minitriton.options().group_size
    check("practice", PRACTICE)
    assert minitriton.options().group_size == before
