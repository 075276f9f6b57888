"""What the course's tests share: a Check through the bridge (as the page calls it), mutating a reference
solution into a known mistake, and whether this minitriton has tl.rand (the dropout exercise needs it)."""
from __future__ import annotations

import re

import minitriton.language as tl
from sandbox import bridge, messages
from sandbox.exercises import COURSE

S = messages.NNBSP                          # digit groups: "98 432"
HAS_RAND = hasattr(tl, "rand")
NO_RAND = "minitriton has no tl.rand yet: the dropout exercise's reference needs it"


def check(exercise: str, code: str, lang: str = "en") -> dict:
    return bridge.dispatch("check", {"exercise": exercise, "code": code, "lang": lang})


def by_id(result: dict) -> dict:
    return {t["id"]: t for t in result["tests"]}


def failing(result: dict) -> list:
    return [t["id"] for t in result["tests"] if not t["passed"]]


def mutate(code: str, *subs) -> str:
    """`code` with each (old, new[, count]) replaced; each `old` must occur exactly `count` (1) times."""
    for old, new, *count in subs:
        assert code.count(old) == (count[0] if count else 1), f"{old!r} occurs {code.count(old)} times"
        code = code.replace(old, new)
    return code


def exercise(exercise_id: str):
    """Any exercise of the course, served or not (dropout is served once minitriton has tl.rand)."""
    return next(ex for ex in COURSE if ex.id == exercise_id)


def solution(exercise_id: str, *subs) -> str:
    return mutate(exercise(exercise_id).solution["en"], *subs)


def plain(text: str) -> str:
    """A message with its digit groups as plain spaces (the expected texts are written that way)."""
    return text.replace(S, " ")


def line_of(code: str, needle: str) -> int:
    """The 1-based line of the first line of `code` containing `needle`."""
    return next(i for i, line in enumerate(code.splitlines(), 1) if needle in line)


LATIN_WORD = r"(?<![\w.\[`'<])[A-Za-z]{2,}(?![\w.(\[`'])"


def english_sentences(text: str, quoted: str = "") -> list:
    """Runs of two or more English words in a Russian text, once code spans (`...`) and Triton's own quoted
    message are taken out: a Russian page says nothing else in English."""
    text = re.sub(r"`[^`]*`", " ", text.replace(quoted, " ") if quoted else text)
    return re.findall(rf"{LATIN_WORD}(?:\s+{LATIN_WORD})+", text)
