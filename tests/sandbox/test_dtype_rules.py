"""Every exercise whose hints teach a dtype rule has a test that fails without the rule: the rule is taken out
of the reference solution by a text edit, Check runs through the bridge as the page calls it, and the test named
here fails with a message that names the dtype problem in kernel terms, in both languages. The edits touch only
the part of the solution the learner writes (after the starter's given lines).

The explicit cast of a stored value to the output's type (`.to(y_ptr.dtype.element_ty)`) is no such rule:
`tl.store` converts to the pointer's element type itself, rounding as `.to` does (Triton's `semantic.store`
casts the value; docs/semantics.md S1.18), so a kernel without it computes the same bits and passes."""
from __future__ import annotations

import re

import pytest
from course_helpers import by_id, check, english_sentences, exercise, failing

from sandbox.exercises import COURSE

NARROW_EN = ("the error comes from computing in bf16", "tl.load(...).to(tl.float32)")
NARROW_RU = ("ошибку даёт счёт в bf16", "tl.load(...).to(tl.float32)")

# name -> (exercise, (old, new) edits of the learner's part (every occurrence), the test that must fail,
#          what its English message must say, what its Russian message must say)
RULES = {
    "softmax_bwd_loads_in_fp32": ("softmax_bwd", ((".to(tl.float32)", ""),), "bf16", NARROW_EN, NARROW_RU),
    "rmsnorm_bwd_loads_in_fp32": ("rmsnorm_bwd", ((".to(tl.float32)", ""),), "bf16",
                                  ("`dw_partial` differ",) + NARROW_EN, ("`dw_partial` не совпадают",) + NARROW_RU),
    "rmsnorm_bwd_every_load_narrow": ("rmsnorm_bwd", ((".to(tl.float32)", ""),), "bf16",
                                      ("`dx` differ",) + NARROW_EN, ("`dx` не совпадают",) + NARROW_RU),
    "rmsnorm_loads_in_fp32": ("rmsnorm", ((".to(tl.float32)", ""),), "fp16",
                              ("Squares overflow in FP16", ".to(tl.float32)"),
                              ("Квадраты во FP16 переполняются", ".to(tl.float32)")),
    "flash_state_m_i_in_fp32": ("flash_attention", (('-float("inf"), dtype=tl.float32)', '-float("inf"), dtype=tl.bfloat16)'),),
                                "sdpa_T64", ("Loop-carried variable m_i", "bf16", "fp32"),
                                ("переменная цикла m_i", "bf16", "fp32")),
    "flash_state_l_i_in_fp32": ("flash_attention", (("l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)",
                                                     "l_i = tl.zeros((BLOCK_M,), dtype=tl.float16)"),),
                                "sdpa_T64", ("Loop-carried variable l_i", "fp16", "fp32"),
                                ("переменная цикла l_i", "fp16", "fp32")),
    "flash_state_acc_in_fp32": ("flash_attention", (("acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)",
                                                     "acc = tl.zeros((BLOCK_M, D), dtype=tl.bfloat16)"),),
                                "sdpa_T64", ("Loop-carried variable acc", "bf16", "fp32"),
                                ("переменная цикла acc", "bf16", "fp32")),
}
# the whole solution's casts, the starter's given one (w's) included
WHOLE = {"rmsnorm_bwd_every_load_narrow"}

DTYPE_WORDS = re.compile(r"\.to\(tl\.float32\)|dtype=tl\.float32|\bFP32\b|\bFP16\b|\bbf16\b|float16|bfloat16")


def given_part(ex, lang: str) -> str:
    """The lines the starter and the solution share from the top: what the learner is given, not writes."""
    given = []
    for a, b in zip(ex.starter[lang].splitlines(True), ex.solution[lang].splitlines(True)):
        if a != b:
            break
        given.append(a)
    return "".join(given)


def without_rule(name: str, lang: str) -> str:
    """The reference solution with the rule `name` taken out of the part the learner writes."""
    ex_id, edits, *_ = RULES[name]
    code = exercise(ex_id).solution[lang]
    head = "" if name in WHOLE else given_part(exercise(ex_id), lang)
    body = code[len(head):]
    for old, new in edits:
        assert old in body, f"{name}: {old!r} is not in the solution's learner part"
        body = body.replace(old, new)
    return head + body


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("name", sorted(RULES))
def test_without_the_rule_its_test_fails_and_says_why(name, lang):
    ex_id, _, test_id, en, ru = RULES[name]
    result = check(ex_id, without_rule(name, lang), lang)
    assert test_id in failing(result), (name, by_id(result)[test_id]["message"])
    message = by_id(result)[test_id]["message"]
    for words in (en if lang == "en" else ru):
        assert words in message, (name, lang, message)
    if lang == "ru":
        assert english_sentences(message, quoted="tl.load(...).to(tl.float32)") == [], message


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("ex_id", sorted({rule[0] for rule in RULES.values()}))
def test_the_reference_passes_the_dtype_tests(ex_id, lang):
    result = check(ex_id, exercise(ex_id).solution[lang], lang)
    assert failing(result) == [] and result["error"] is None, [(t["id"], t["message"]) for t in result["tests"]]


def test_every_exercise_whose_hints_teach_a_dtype_rule_has_one_here():
    teaching = {ex.id for ex in COURSE if any(DTYPE_WORDS.search(h[lang]) for h in ex.hints for lang in ("ru", "en"))}
    assert teaching == {rule[0] for rule in RULES.values()}


STORE_CAST = re.compile(r"(\w+)\.to\((\w+_ptr)\.dtype\.element_ty\)")


@pytest.mark.parametrize("ex_id", [ex.id for ex in COURSE if STORE_CAST.search(ex.solution["en"])])
def test_the_store_converts_by_itself(ex_id):
    """Without `.to(out_ptr.dtype.element_ty)` the store still converts (the bf16 and fp16 tests included)."""
    code = STORE_CAST.sub(r"\1", exercise(ex_id).solution["en"])
    assert code != exercise(ex_id).solution["en"]
    result = check(ex_id, code, "en")
    assert failing(result) == [] and result["error"] is None, [(t["id"], t["message"]) for t in result["tests"]]

