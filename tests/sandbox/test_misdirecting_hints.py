"""Hints that once sent a learner the wrong way, as the page shows them in both languages: the fix names only
what the learner's code has, fits the tile's dimensions, and (where it is an edit) applying it makes the check
pass; Triton's compile-time rules reach a Russian page in Russian; and Stop says where the code was."""
from __future__ import annotations

import io
import re
import tokenize

import pytest
from course_helpers import check, english_sentences, exercise, line_of, solution

from minitriton.diagnostics import Edit
from sandbox import bridge

LANGS = ("ru", "en")


def names_of(code: str) -> set:
    """Every identifier of the learner's code."""
    return {t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.NAME}


def latin_names(text: str) -> set:
    """The identifiers a Russian text mentions: every Latin name in it is code (the catalogue's Russian
    sentences have no English words)."""
    return set(re.findall(r"(?<![\w.])[A-Za-z_][A-Za-z_0-9]*", text))


def first_failure(result: dict) -> dict:
    return next(t for t in result["tests"] if not t["passed"])


def applied(code: str, error: dict) -> str | None:
    """The learner's code with the record's suggested edit made, or None when the fix is no edit."""
    edit = ((error.get("diagnostic") or {}).get("suggestion") or {}).get("edit")
    return Edit(**edit).apply(code) if edit else None


# ---------------------------------------------------------------- the fixes name the learner's own code

def transpose_without_store_mask() -> str:
    code = exercise("transpose").solution["en"]
    unmasked = re.sub(r"tl\.trans\(tile\),[^\n]*\n\s*mask=\(offs_n\[:, None\] < N\) & \(offs_m\[None, :\] < M\)\)",
                      "tl.trans(tile))", code)
    assert unmasked != code
    return unmasked


KERNEL_VOCABULARY = {"tl", "stride", "None"}   # words of Triton itself the texts may use
WORD_FIELDS = {"op", "axis", "side"}           # fields looked up in the catalogue's word tables


@pytest.mark.parametrize("lang", LANGS)
def test_an_unmasked_2d_store_is_told_in_the_kernels_own_names(lang):
    code = transpose_without_store_mask()
    result = check("transpose", code, lang)
    error, failed = result["error"], first_failure(result)
    assert error["type"] == "OutOfBoundsError" and error["line"] == line_of(code, "tl.store(")
    assert failed["message"] == error["message"]
    assert "offs < n" not in error["message"]
    if lang == "ru":
        assert latin_names(error["message"]) <= names_of(code) | KERNEL_VOCABULARY, error["message"]
    assert code_names(error["diagnostic"]["suggestion"]) <= names_of(code) | KERNEL_VOCABULARY


def test_the_unmasked_2d_store_gets_both_axes_as_an_edit_that_passes():
    code = transpose_without_store_mask()
    error = check("transpose", code, "en")["error"]
    assert "<offsets>" not in error["message"]         # not the 1-D template: the tile's own two conditions
    fixed = applied(code, error)
    assert fixed is not None and "(offs_n[:, None] < N) & (offs_m[None, :] < M)" in fixed
    assert check("transpose", fixed, "en")["passed"]


def matmul_without_k_tail() -> str:
    return solution("matmul", ("mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N)", "mask=offs_n[None, :] < N"))


@pytest.mark.parametrize("lang", LANGS)
def test_a_missing_k_tail_mask_names_no_n_and_nothing_the_kernel_lacks(lang):
    code = matmul_without_k_tail()
    result = check("matmul", code, lang)
    error = result["error"]
    assert error["type"] == "OutOfBoundsError" and error["line"] == line_of(code, "b = tl.load(")
    assert not re.search(r"(?<![\w.])n(?![\w(])", error["message"]), error["message"]
    if lang == "ru":
        assert latin_names(error["message"]) <= names_of(code) | KERNEL_VOCABULARY, error["message"]
    suggestion = error["diagnostic"]["suggestion"]
    assert not re.search(r"(?<![\w.])n(?![\w(])", str(suggestion)), suggestion
    assert code_names(suggestion) <= names_of(code) | KERNEL_VOCABULARY, suggestion


def code_names(suggestion: dict) -> set:
    """The names a suggestion writes as code: in its fields (the kernel's expressions; not the fields that
    name a word of the catalogue, such as the axis) and its edit."""
    written = [v for k, v in suggestion["fields"].items() if isinstance(v, str) and k not in WORD_FIELDS]
    written += [suggestion["edit"]["text"]] if suggestion.get("edit") else []
    return set().union(*(names_of(text) for text in written)) if written else set()


def test_the_k_tail_edit_uses_k_left_and_passes():
    code = matmul_without_k_tail()
    fixed = applied(code, check("matmul", code, "en")["error"])
    assert fixed is not None and "k_left" in fixed.splitlines()[line_of(code, "b = tl.load(") - 1]
    assert check("matmul", fixed, "en")["passed"]


def transpose_with_wrong_store_stride() -> str:
    return solution("transpose", ("offs_n[:, None] * M + offs_m[None, :]", "offs_n[:, None] * N + offs_m[None, :]"))


@pytest.mark.parametrize("lang", LANGS)
def test_a_wrong_store_stride_gets_no_atomics_and_no_1d_advice(lang):
    code = transpose_with_wrong_store_stride()
    result = check("transpose", code, lang)
    for test in result["tests"]:
        if not test["passed"]:
            message = test["message"]
            assert "atomic_add" not in message and "pid * BLOCK" not in message and "tl.arange(0, BLOCK)" not in message
    assert result["error"]["line"] == line_of(code, "tl.store(")


@pytest.mark.parametrize("lang", LANGS)
def test_a_wrong_store_stride_names_the_stride(lang):
    code = transpose_with_wrong_store_stride()
    error = check("transpose", code, lang)["error"]
    assert "offs_n[:, None] * N" in error["message"] or "* N" in error["message"], error["message"]
    fixed = applied(code, error)
    assert fixed is not None and check("transpose", fixed, lang)["passed"]


# ---------------------------------------------------------------- Triton's rules, in the page's language

COPY_LOAD = "    x = tl.load(x_ptr + offs, mask=mask)\n"
COMPILE_MISTAKES = {   # name -> (substitution in the copy exercise, the line's text, Triton's own message or "")
    "loop_carried_type": ((COPY_LOAD, COPY_LOAD + "    s = 0\n    for i in range(3):\n        s = s + 0.5\n"),
                          "s = s + 0.5", ""),
    "broadcast": ((COPY_LOAD, "    x = tl.load(x_ptr + offs, mask=mask) + tl.arange(0, 16)\n"), "x = tl.load(", ""),
    "name_error": ((COPY_LOAD, "    x = tl.load(x_ptr + ofs, mask=mask)\n"), "x = tl.load(", ""),
    "arange": (("offs = pid * BLOCK + tl.arange(0, BLOCK)", "offs = pid * BLOCK + tl.arange(0, 1000)"),
               "tl.arange(0, 1000)", ""),
    "syntax_error": (("mask = offs < n ", "mask = offs < n) "), "mask = offs < n)", "unmatched ')'"),
}


def _run(name: str, lang: str):
    sub, needle, _ = COMPILE_MISTAKES[name]
    code = solution("copy", sub)
    return code, line_of(code, needle), bridge.dispatch("run", {"exercise": "copy", "code": code, "lang": lang})


@pytest.mark.parametrize("name", list(COMPILE_MISTAKES))
def test_a_compile_time_mistake_reads_as_russian_on_a_russian_page(name):
    code, line, result = _run(name, "ru")
    error = result["error"]
    assert error["diagnostic"]["kind"] != "compile_error", error["diagnostic"]
    assert error["line"] == line, error
    assert re.search("[а-яё]", error["message"]) and f"строка {line}" in error["message"], error["message"]
    assert "Error(" not in error["message"] and "\n" not in error["message"], error["message"]
    assert not english_sentences(error["message"], COMPILE_MISTAKES[name][2]), error["message"]


@pytest.mark.parametrize("name", list(COMPILE_MISTAKES))
def test_a_compile_time_mistake_points_at_its_line_in_english(name):
    code, line, result = _run(name, "en")
    assert result["error"]["line"] == line, result["error"]
    assert result["error"]["message"] and not re.search("[а-яё]", result["error"]["message"])


@pytest.mark.parametrize("lang, first", [("ru", "строке {line}"), ("en", "line {line}")])
def test_a_loop_carried_type_change_names_the_first_assignment_too(lang, first):
    code, line, result = _run("loop_carried_type", lang)
    assert first.format(line=line_of(code, "s = 0")) in result["error"]["message"], result["error"]["message"]


def test_a_host_name_error_and_syntax_error_are_records_of_minitritons_kinds():
    code = solution("copy", ("n = x.shape[0]", "n = y.shape[0]"))
    line = line_of(code, "n = y.shape[0]")
    for lang, place in (("ru", f"(строка {line})."), ("en", f"(line {line}).")):
        error = bridge.dispatch("run", {"exercise": "copy", "code": code, "lang": lang})["error"]
        assert (error["type"], error["line"], error["col"]) == ("NameError", line, 8)
        assert error["diagnostic"]["kind"] == "name_error" and error["diagnostic"]["names"] == ["y"]
        assert error["message"].endswith(place) and "y" in error["message"] and "name '" not in error["message"]
        assert bool(re.search("[а-яё]", error["message"])) == (lang == "ru")
    code, line, result = _run("syntax_error", "ru")
    assert result["error"]["diagnostic"]["kind"] == "syntax_error"
    assert "unmatched ')'" in result["error"]["message"] and result["error"]["message"].endswith(f"(строка {line}).")


@pytest.mark.parametrize("lang", LANGS)
def test_one_programs_endless_loop_is_an_infinite_loop_not_a_deadlock(lang):
    """`while True:` in a kernel: the line and the program, the loop named as a loop that never ends, and on a
    Russian page nothing in English."""
    code = solution("copy", (COPY_LOAD, COPY_LOAD + "    while True:\n        x = x + 0\n"))
    error = bridge.dispatch("run", {"exercise": "copy", "code": code, "lang": lang})["error"]
    assert (error["type"], error["line"], error["program_text"]) == ("InfiniteLoopError", line_of(code, "while"), "0")
    words = {"ru": ("не заканчивается", "взаимн"), "en": ("never ends", "deadlock")}[lang]
    assert words[0] in error["message"] and words[1] not in error["message"], error["message"]
    if lang == "ru":
        assert not english_sentences(error["message"]), error["message"]
