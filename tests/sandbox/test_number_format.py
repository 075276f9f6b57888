"""One number format per language in everything an exercise shows: its title, statement, hints, test names and
the messages of a Check of the starter and of the solution, and Run's error. Digit groups from 10 000 on,
"98 432" (narrow no-break spaces) in Russian and "98,432" in English, as `messages.num` writes them; code
(in backticks) is Python and keeps Python's "98_432" or "98432"."""
from __future__ import annotations

import json
import re

import pytest

from sandbox import bridge, messages

# a digit group by another sign than the language's, or in a number under 10 000; a number from 10 000 on
# with no groups at all
WRONG_GROUPS = {"en": re.compile(r"\d[\u00a0\u202f ]\d{3}(?!\d)|(?<![\d,.])\d,\d{3}(?![\d,])"),
                "ru": re.compile(r"\d[,\u00a0 ]\d{3}(?!\d)|(?<![\d\u202f])\d\u202f\d{3}(?![\d\u202f])")}
UNGROUPED = re.compile(r"(?<![\d.,\u202fe\-])\d{5,}(?![\d.])")


def prose(text: str) -> str:
    """The text without its code: fenced blocks and `spans`."""
    return re.sub(r"`[^`]*`", " ", re.sub(r"```.*?```", " ", text, flags=re.S))


def foreign_numbers(text: str, lang: str) -> list[str]:
    p = prose(text)
    return WRONG_GROUPS[lang].findall(p) + UNGROUPED.findall(p)


def ask(op: str, **request) -> dict:
    return json.loads(bridge.handle(op, json.dumps(request)))


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_text_of_every_exercise_writes_numbers_in_its_languages_format(lang):
    solutions = ask("solutions", lang=lang)["solutions"]
    wrong = {}
    for ex in ask("exercises", lang=lang)["exercises"]:
        texts = [ex["title"], ex["statement"], *ex.get("hint_texts", []), *ex["tests"]]
        for op, code in (("check", ex["starter"]), ("check", solutions[ex["id"]]), ("run", solutions[ex["id"]])):
            r = ask(op, exercise=ex["id"], lang=lang, code=code)
            texts += [t["message"] for t in r.get("tests") or []] + [(r.get("error") or {}).get("message") or ""]
        for text in texts:
            if foreign_numbers(text, lang):
                wrong.setdefault(ex["id"], []).append(text)
    assert wrong == {}


def test_the_checker_sees_a_number_in_the_other_languages_format():
    assert foreign_numbers("n = 98 432", "en") == ["8 432"]
    assert foreign_numbers("n = 98,432", "ru") == ["8,432"]
    assert foreign_numbers("n = 98432", "en") == ["98432"]
    assert foreign_numbers("8,192 B", "en") == ["8,192"]
    assert foreign_numbers(f"8{messages.NNBSP}192 B", "ru") == [f"8{messages.NNBSP}192"]
    assert foreign_numbers("`n = 98432`, 9600", "ru") == []
    for lang in ("ru", "en"):
        assert foreign_numbers(f"offsets {messages.num(98_432, lang)}…{messages.num(99_327, lang)}", lang) == []


def test_a_tail_test_names_its_n_in_the_languages_format():
    names = {lang: dict(zip(ex["test_ids"], ex["tests"])) for lang in ("ru", "en")
             for ex in ask("exercises", lang=lang)["exercises"] if ex["id"] == "copy"}
    assert names["en"]["tail"].startswith("n = 98,432:")
    assert names["ru"]["tail"].startswith(f"n = 98{messages.NNBSP}432:")
