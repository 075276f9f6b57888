"""The fixes, tested as a user acts: run a kernel with a mistake, read the error's suggestion, apply its edit to
the file as a tool would (Edit.apply, no understanding), run the kernel again, compare with NumPy. A kernel
with several mistakes of one kind (three unmasked accesses) takes one edit per run. At least 90 % of the
mistakes that get an edit must come out right; the ones without an edit must say why; no suggestion may name
a name the kernel does not have."""
from __future__ import annotations

import ast
import importlib.util
import itertools

import numpy as np
import pytest
from fix_mistakes import HEADER, MISTAKES

import minitriton
from minitriton.diagnostics import render
from minitriton.diagnostics.catalogue import SUGGESTIONS
from minitriton.diagnostics.render import suggestion_text
from minitriton.frontend.fix_site import WORD_FIELDS

MAX_EDITS = 4
_count = itertools.count()


def _load(path):
    spec = importlib.util.spec_from_file_location(f"fix_mistake_{next(_count)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names_of(source: str) -> set:
    """Every name the file defines or imports, and each function's parameters (written independently of
    minitriton.frontend.kernel_source)."""
    tree = ast.parse(source)
    names = {"tl", "triton", "np", "min", "max", "range"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def _code_names(text: str) -> set:
    text = text.strip().removeprefix(", ").removeprefix("mask=")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def attempt(name, kind, source, tmp_path):
    """Run, fix, run again. Returns (the records seen, whether the final output matches NumPy)."""
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + source)
    records = []
    for _ in range(MAX_EDITS + 1):
        module = _load(path)
        try:
            with minitriton.set_options(sanitize=kind == "race"):   # the shadow of a 2 GiB array would not fit
                got, want = module.check()
        except minitriton.MiniTritonError as exc:
            record = exc.diagnostic
            assert record.kind == kind, (name, record.kind, str(exc))
            records.append(record)
            if record.suggestion is None or record.suggestion.edit is None:
                return records, False
            path.write_text(record.suggestion.edit.apply(path.read_text()))
            continue
        return records, bool(records) and np.allclose(got, want, rtol=1e-5, atol=1e-5)
    return records, False


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return {name: attempt(name, kind, source, tmp_path_factory.mktemp(name)) for name, kind, _, source in MISTAKES}


def test_the_catalogue_holds_forty_mistakes():
    assert len(MISTAKES) >= 40
    assert len({m[0] for m in MISTAKES}) == len(MISTAKES)


def test_every_mistake_is_reported_with_a_suggestion(results):
    for name, _, _, _ in MISTAKES:
        records, _ = results[name]
        assert records, f"{name}: the kernel ran without an error"
        assert all(r.suggestion is not None for r in records), name


def test_nine_in_ten_edits_fix_the_kernel(results):
    fixable = [m[0] for m in MISTAKES if results[m[0]][0] and results[m[0]][0][0].suggestion.edit is not None]
    fixed = [name for name in fixable if results[name][1]]
    assert len(fixed) >= 0.9 * len(fixable), sorted(set(fixable) - set(fixed))
    expected = [m[0] for m in MISTAKES if m[2]]
    assert set(expected) <= set(fixable), sorted(set(expected) - set(fixable))


def test_a_suggestion_without_an_edit_says_why(results):
    for name, _, editable, _ in MISTAKES:
        for record in results[name][0]:
            s = record.suggestion
            if s.edit is None:
                assert s.reason in SUGGESTIONS, (name, s)
                assert render(record, "en").splitlines()[2].startswith("  fix:")
        if not editable:
            assert results[name][0][0].suggestion.edit is None, name


def test_every_name_in_a_suggestion_is_the_kernels(results):
    for name, _, _, source in MISTAKES:
        names = _names_of(HEADER + source)
        for record in results[name][0]:
            s = record.suggestion
            pieces = [v for k, v in s.fields.items() if isinstance(v, str) and k not in WORD_FIELDS]
            pieces += [s.edit.text] if s.edit else []
            for piece in pieces:
                assert _code_names(piece) <= names, (name, piece, _code_names(piece) - names)


def test_the_issue_examples_read_in_the_kernels_terms(results):
    """The transpose's 2-D mask, the overflow's cast, the negative offset's mask, a stride and not atomics."""
    def fix(name, lang="en"):
        return render(results[name][0][0], lang, "page")

    assert "mask=(cols[:, None] < N) & (rows[None, :] < M)" in fix("transpose_store_unmasked")
    assert "mask=(offs < n) & (prev >= 0)" in fix("shift_negative_offset")
    assert "(offs_m[:, None] < M) & (offs_k[None, :] < k_left)" in fix("matmul_k_tail_a")
    assert "stride_bn" in fix("matmul_same_stride")
    for name in ("race_stride_too_small", "race_stride_half_block", "race_transpose_row_stride"):
        for lang in ("en", "ru"):   # the advice: the stride, never atomics
            assert "atomic" not in suggestion_text(results[name][0][0], lang, "page"), fix(name, lang)
    assert "pid * 8" in fix("race_stride_too_small")
    assert "offs_n[:, None] * M" in fix("race_transpose_row_stride")
    # a store reusing the load's mask gets its own; the mask the load needs stays as it is
    shared = results["transpose_store_reuses_load_mask"][0][0]
    assert shared.suggestion.kind == "mask_axis_shared"
    assert shared.suggestion.edit.text == "(offs_m[None, :] < M) & (offs_n[:, None] < N)"


@pytest.mark.skipif(np.dtype(np.intp).itemsize < 8, reason="needs a 2 GiB array, more than 32-bit NumPy (wasm32) holds")
def test_an_int32_overflow_is_fixed_by_the_cast_of_the_operand_that_wraps(results):
    assert "row.to(tl.int64) * stride" in render(results["int32_row_times_stride"][0][0], "en", "page")
    assert "pid.to(tl.int64) * 2**20" in render(results["int32_pid_times_power_of_two"][0][0], "en", "page")


def test_the_fixes_read_in_both_languages(results):
    """The issue's examples, word for word: the transpose's 2-D mask, the matmul's K tail with the kernel's
    k_left, a store stride too small for a row (the stride, not atomics)."""
    expected = {
        "transpose_store_unmasked": (
            "the tile is 2-D: mask both of its axes, tl.store(dst + cols[:, None] * M + rows[None, :], tl.trans(tile), "
            "mask=(cols[:, None] < N) & (rows[None, :] < M))",
            "тайл двумерный: закройте маской обе его оси, tl.store(dst + cols[:, None] * M + rows[None, :], "
            "tl.trans(tile), mask=(cols[:, None] < N) & (rows[None, :] < M))"),
        "matmul_k_tail_b": (
            "the tile is 2-D and the mask leaves an axis open; add offs_k[:, None] < k_left: tl.load(b_ptrs, "
            "mask=(offs_n[None, :] < N) & (offs_k[:, None] < k_left), other=0.0)",
            "тайл двумерный, и маска не закрывает одну из осей; добавьте offs_k[:, None] < k_left: tl.load(b_ptrs, "
            "mask=(offs_n[None, :] < N) & (offs_k[:, None] < k_left), other=0.0)"),
        "race_transpose_row_stride": (
            "the tile's rows overlap: offs_n[:, None] * N places rows N apart, but a row holds M elements "
            "(offs_m < M); place them M apart: offs_n[:, None] * M",
            "строки тайла перекрываются: offs_n[:, None] * N ставит строки через N, а в строке M элементов "
            "(offs_m < M); ставьте их через M: offs_n[:, None] * M"),
    }
    for name, (en, ru) in expected.items():
        record = results[name][0][0]
        assert suggestion_text(record, "en", "page") == en
        assert suggestion_text(record, "ru", "page") == ru
        assert render(record, "en").splitlines()[2] == f"  fix: {en}"
