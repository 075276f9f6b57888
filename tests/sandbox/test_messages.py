"""The sandbox's wording: one catalogue in two languages with the same fields, Russian plurals, digit groups,
runs of indices from minitriton's own formatter, sentences that end with their periods, and outputs
poisoned with minitriton's own bit patterns (one definition of "never written")."""
from __future__ import annotations

import re
import string

import numpy as np
import pytest
from course_helpers import S
from hypothesis import given
from hypothesis import strategies as st

from minitriton.diagnostics import Diagnostic, Runs, render
from minitriton.errors import format_ranges
from minitriton.testing.poison import poison_bits
from sandbox import catalogue, messages
from sandbox.exercises import _base, _checks

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


def fields(template: str) -> set:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(catalogue.CATALOGUE))
def test_every_entry_has_both_languages_with_the_same_fields(key):
    entry = catalogue.CATALOGUE[key]
    assert set(entry) == {"ru", "en"}
    assert fields(entry["ru"]) == fields(entry["en"])
    assert not CYRILLIC.search(entry["en"])


def test_russian_entries_are_russian():
    prose = [k for k, e in catalogue.CATALOGUE.items() if len(re.sub(r"\{[^}]*\}|`[^`]*`", "", e["en"])) > 25]
    assert prose and all(CYRILLIC.search(catalogue.CATALOGUE[k]["ru"]) for k in prose)


@pytest.mark.parametrize("n, ru, en", [
    (1, "1 элемент", "1 element"), (2, "2 элемента", "2 elements"), (4, "4 элемента", "4 elements"),
    (5, "5 элементов", "5 elements"), (11, "11 элементов", "11 elements"), (14, "14 элементов", "14 elements"),
    (21, "21 элемент", "21 elements"), (112, "112 элементов", "112 elements"), (0, "0 элементов", "0 elements"),
    (98_432, f"98{S}432 элемента", "98,432 elements"), (10_001, f"10{S}001 элемент", "10,001 elements"),
])
def test_counted_nouns(n, ru, en):
    assert messages.count(n, "element", "ru") == ru
    assert messages.count(n, "element", "en") == en


def test_numbers_get_digit_groups_from_ten_thousand_as_minitritons_page_texts_do():
    numbers = (9600, 10_000, 98_432, -123_456, 1_000_000)
    assert [messages.num(n, "ru") for n in numbers] == [
        "9600", f"10{S}000", f"98{S}432", f"-123{S}456", f"1{S}000{S}000"]
    assert [messages.num(n, "en") for n in numbers] == ["9600", "10,000", "98,432", "-123,456", "1,000,000"]
    for lang in ("ru", "en"):   # one rule for a number on the page: the sandbox's and a record's agree
        assert render(Diagnostic("unwritten", {"offsets": Runs.of([98_432]), "tensor": "y"}), lang, "page") \
            .count(messages.num(98_432, lang)) == 1


@given(st.lists(st.integers(-50_000, 200_000), max_size=40), st.integers(1, 6))
def test_ranges_are_minitritons_format_ranges_with_digit_groups(values, limit):
    """One formatter of runs: the sandbox's text is format_ranges' text with digit groups and its tail in words."""
    mine = re.sub(r",(?=\d)", "", messages.ranges(values, "en", limit))      # digit groups: "98,432"
    theirs = format_ranges(values, limit)
    assert mine == re.sub(r"\((\d+) offsets in all\)", r"(\1 in all)", theirs)
    ru = messages.ranges(values, "ru", limit).replace(S, "")
    assert ru == re.sub(r"\((\d+) offsets in all\)", r"(всего \1)", theirs)


def test_sentences_end_with_periods_and_start_with_capitals():
    assert messages.sentences("rows 1…3 of `y` were never written", "on the same rows it passes") == (
        "rows 1…3 of `y` were never written. On the same rows it passes.")
    assert messages.sentences("a (got nan)", None, "", "`x` is fine!") == "a (got nan). `x` is fine!"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_outputs_hold_minitritons_poison(dtype):
    out = _checks.filled((3, 5), dtype)
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    assert (out.view(uint) == poison_bits(np.dtype(dtype))).all()
    assert _checks.unwritten(out).all()
    out[1, 2] = 0.0
    assert _checks.unwritten(out).sum() == 14 and not _checks.unwritten(out)[1, 2]


def test_there_is_one_never_written_marker():
    """The sandbox keeps no bit patterns of its own: the poison comes from minitriton.testing.poison."""
    assert not hasattr(_base, "_SENTINEL_BITS") and not hasattr(_checks, "_SENTINEL_BITS")
    assert _base.filled is _checks.filled and _base.unwritten is _checks.unwritten
