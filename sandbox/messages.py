"""How the sandbox words what it shows, in Russian and English: `say(key, lang, **fields)` formats an entry of
the catalogue (`sandbox.catalogue`), `text(entry, lang, **fields)` any {"ru", "en"} pair (an exercise's own
diagnoses). Russian is the default and the fallback.

Numbers go through `num()` (minitriton's digit groups for the page: "98 432" with narrow no-break spaces in
Russian, "98,432" in English), counted nouns through `count()` ("98 432 элемента", "1 element"), runs of indices through
`ranges()` (minitriton's own `Runs`, with the digit groups), and failure messages made of several
sentences through `sentences()`, so each ends with its period.
"""
from __future__ import annotations

from minitriton.diagnostics import Runs
from minitriton.diagnostics.render import number, pick
# the sandbox writes sentences and program ids as minitriton's records do
from minitriton.diagnostics.render import program_text as program, sentences  # noqa: F401

from .catalogue import CATALOGUE, NOUNS

LANGS = ("ru", "en")
NNBSP = "\u202f"   # narrow no-break space: the Russian digit-group separator


def say(key: str, lang: str = "ru", **fields) -> str:
    """The catalogue entry `key` in `lang` (Russian if missing), formatted with `fields`."""
    return text(CATALOGUE[key], lang, **fields)


def text(entry: dict, lang: str = "ru", **fields) -> str:
    """A {"ru": ..., "en": ...} entry in `lang` (Russian if missing), formatted with `fields`."""
    template = entry.get(lang) or entry["ru"]
    return template.format(**fields) if fields else template


def lang_of(request: dict) -> str:
    """The request's language: "ru" (default) or "en"."""
    lang = request.get("lang", "ru") if isinstance(request, dict) else "ru"
    return lang if lang in LANGS else "ru"


def num(n, lang: str) -> str:
    """An integer as the page writes it in `lang` (minitriton's one rule, diagnostics.render.number): digit
    groups from 10 000 on, '98 432' in Russian (narrow no-break spaces), '98,432' in English; '9600'."""
    return number(n, lang, "page")


def plural(n, noun: str, lang: str) -> str:
    """The form of `noun` that goes after the number n: 1 элемент, 2 элемента, 5 элементов; 1 element, 2 elements."""
    return pick(n, NOUNS[noun][lang if lang in NOUNS[noun] else "ru"], lang)


def count(n, noun: str, lang: str) -> str:
    """'98 432 элемента', '1 element'."""
    return f"{num(n, lang)} {plural(n, noun, lang)}"


def ranges(values, lang: str = "ru", limit: int = 4) -> str:
    """Sorted integers as compact runs, by minitriton's Runs (one writer of runs): [1, 2, 3, 7] -> '1…3, 7';
    digit groups as `num` writes them, and a long list ends with how many there are ('… (всего 1200)')."""
    return Runs.of(values).text(limit, number=lambda n: num(n, lang), more=CATALOGUE["ranges_more"][lang])


def real(x) -> str:
    """A float as the messages show it: 0.125, 3.2e-01 for errors, nan, inf."""
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.2e}"


def err(x) -> str:
    """An error size: 3.2e-01."""
    x = float(x)
    return f"{x:.1e}" if x == x else "nan"
