"""How errors are explained: the sanitizer's findings as their records in the page's language, 2-D masks as
edits of the learner's line, and the rule that a hint is given only when its cause is detected: a failure
with another cause gets no stride, causal, TF32 or 1-D-mask advice. (The kernel-source analysis behind the
fixes is minitriton's, minitriton.frontend, and tested with it.)"""
from __future__ import annotations

import re


from course_helpers import by_id, check, line_of, plain, solution

from minitriton.diagnostics import Edit

COPY = "copy"


def test_reading_an_output_before_it_is_written_is_explained():
    code = solution(COPY, ("    x = tl.load(x_ptr + offs, mask=mask)\n",
                           "    x = tl.load(x_ptr + offs, mask=mask) + tl.load(out_ptr + offs, mask=mask)\n"))
    line = line_of(code, "tl.load(out_ptr")
    assert by_id(check(COPY, code, "en"))["tail"]["message"] == (
        f"tl.load reads `out_ptr` elements that were never written (line {line}, program 0). Offsets 0…1023 of "
        f"`out_ptr` hold no value yet (the array was made by minitriton.testing.empty, which leaves it "
        f"uninitialised). Mask the load or write these elements first.")
    assert by_id(check(COPY, code, "ru"))["tail"]["message"] == (
        f"tl.load читает элементы `out_ptr`, в которые ещё ничего не записано (строка {line}, программа 0). "
        f"Смещения 0…1023 в `out_ptr` ещё не получили значения (массив создан через minitriton.testing.empty, без "
        f"начальных значений). Закройте чтение маской или сначала запишите эти элементы.")


def test_an_order_dependent_read_is_explained():
    code = solution(COPY, ("    tl.store(out_ptr + offs, x, mask=mask)\n",
                           "    tl.store(x_ptr + offs, x, mask=mask)\n    y = tl.load(x_ptr + offs + 1, mask=offs + 1 < n)\n"
                           "    tl.store(out_ptr + offs, x, mask=mask)\n"))
    line = line_of(code, "tl.store(x_ptr")
    assert plain(by_id(check(COPY, code, "en"))["tail"]["message"]) == (
        f"tl.store writes `x_ptr` elements that several other programs read in the same launch (line {line}, program "
        f"1). Offsets 1024: the result depends on the order in which programs run, which the GPU does not fix. "
        f"Read and write different arrays, or split the work into two launches.")
    assert plain(by_id(check(COPY, code, "ru"))["tail"]["message"]) == (
        f"tl.store пишет элементы `x_ptr`, которые в том же запуске читают несколько других программ (строка "
        f"{line}, программа 1). Смещения 1024: результат зависит от порядка программ, а GPU его не фиксирует. "
        f"Читайте и пишите разные массивы или разбейте работу на два запуска.")


def test_a_race_message_is_in_the_pages_language_with_offsets_and_fix():
    code = solution("softmax_bwd", ("tl.store(dx_ptr + row * stride + cols,", "tl.store(dx_ptr + cols,"))
    result = check("softmax_bwd", code, "ru")
    error = result["error"]
    assert error["type"] == "SanitizerError" and error["line"] == line_of(code, "tl.store(dx_ptr")
    assert error["message"] == by_id(result)["small"]["message"]
    assert error["message"].startswith(
        f"tl.store: гонка с программой 0, обе пишут в `dx_ptr` (строка {error['line']}, программа 1). Смещения 0…7 в "
        f"`dx_ptr` пишут программы 0 и 1 в одном запуске")
    assert (error["diagnostic"]["kind"], error["diagnostic"]["fields"]["other"]) == ("race", [0])
    assert not any(word in error["message"] for word in ("races", "both write", "program ("))


def test_a_race_from_a_store_that_ignores_the_program_id_says_so():
    code = solution("softmax_bwd", ("tl.store(dx_ptr + row * stride + cols,", "tl.store(dx_ptr + cols,"))
    error = check("softmax_bwd", code, "ru")["error"]
    assert error["diagnostic"]["suggestion"]["kind"] == "race_shared"
    assert "сдвиньте его на долю программы" in error["message"]


# ---------------------------------------------------------------- hints only when their cause is there

def test_no_stride_hint_when_the_strided_test_fails_for_another_reason():
    for exercise, subs in (("rmsnorm", [("/ n_cols + eps", "/ BLOCK_SIZE + eps")]),
                           ("softmax_bwd", [("other=0.0", 'other=-float("inf")', 2)]),
                           ("row_stats", [("s += tl.sum(tl.where(mask, x, 0.0), axis=0)", "s += tl.sum(x, axis=0)")])):
        result = by_id(check(exercise, solution(exercise, *subs)))["strided_rows"]
        assert not result["passed"]
        assert "stride" not in result["message"].split(").", 1)[-1], (exercise, result["message"])


def test_no_causal_hint_on_a_tf32_error_and_no_tf32_hint_on_a_causal_one():
    tf32 = by_id(check("flash_attention", solution("flash_attention", (', input_precision="ieee"', "", 2))))
    for test_id in ("sdpa_T64_causal", "sdpa_T100_causal", "logsumexp", "causal_skip"):
        assert "TF32" in tf32[test_id]["message"] and "causal" not in tf32[test_id]["message"]
    causal = by_id(check("flash_attention", solution(
        "flash_attention", ("            valid = valid & (offs_n[None, :] <= offs_m[:, None])\n", "            valid = valid\n"))))
    assert "causal mask" in causal["sdpa_T100_causal"]["message"] and "TF32" not in causal["sdpa_T100_causal"]["message"]
    assert causal["sdpa_T100"]["passed"]


def test_a_2d_tile_never_gets_the_1d_mask_advice():
    for exercise, subs, test_id in (("flash_attention", [("mask=kv_mask, other=0.0)", ")", 2)], "sdpa_T257"),
                                    ("transpose", [("mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
                                                    "mask = offs_n[None, :] < N")], "edges"),
                                    ("practice", [("mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)",
                                                   "mask=(offs_m[:, None] < M), other=0.0)")], "matmul_values")):
        message = by_id(check(exercise, solution(exercise, *subs)))[test_id]["message"]
        assert "offs < n" not in message and "<offsets>" not in message and "The tile is 2-D" in message, message


def test_the_k_columns_of_a_matmul_tile_get_their_own_condition():
    code = solution("practice", ("mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)",
                                 "mask=(offs_m[:, None] < M), other=0.0)"))
    error = check("practice", code)["error"]
    assert "The tile is 2-D and the mask leaves an axis open; add ks[None, :] < K: tl.load(" in error["message"]
    edit = error["diagnostic"]["suggestion"]["edit"]
    assert edit["text"] == "(offs_m[:, None] < M) & (ks[None, :] < K)"
    fixed = Edit(**edit).apply(code)
    assert check("practice", fixed)["passed"]


def test_wrong_values_without_a_known_cause_get_no_hint():
    """A formula that is simply wrong: the size of the error, where, and nothing that would send the learner
    after a cause that is not there."""
    code = solution("rmsnorm", ("y = x / rms * w", "y = x * rms * w"))
    message = plain(by_id(check("rmsnorm", code))["tail"]["message"])
    assert re.fullmatch(r"[\d,]+ of [\d,]+ elements of `y` differ \(atol = 1e-05, rtol = 1e-05\); max abs error \S+ "
                        r"at row \d+, col \d+ \(expected \S+, got \S+\)\.", message), message


def test_a_value_only_failure_carries_the_fix_its_diagnosis_read_in_the_source():
    """One stride for both axes of B: the transposed-B test fails on values alone; its message names the
    stride, its result carries the edit, and the edit, applied, passes every test."""
    code = solution("matmul", ("offs_n[None, :] * stride_bn", "offs_n[None, :] * stride_bk"))
    result = by_id(check("matmul", code))
    failed = result["transposed_b"]
    assert not failed["passed"] and failed["message"].endswith("multiply offs_n by stride_bn.")
    assert failed["fix"]["kind"] == "same_stride" and failed["fix"]["edit"]["text"] == "stride_bn"
    assert all("fix" not in t for t in result.values() if t["passed"])
    fixed = Edit(**failed["fix"]["edit"]).apply(code)
    assert fixed == solution("matmul") and check("matmul", fixed)["passed"]
