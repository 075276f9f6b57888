"""How the sandbox words what it shows, in Russian and English: `say(key, lang, **fields)` formats an entry of
the catalogue (`sandbox.catalogue`), `text(entry, lang, **fields)` any {"ru", "en"} pair (an exercise's own
diagnoses). Russian is the default and the fallback.

Numbers go through `num()` (digit groups with a narrow no-break space, "98 432", as Russian typography
writes them), counted nouns through `count()` ("98 432 элемента", "1 element"), runs of indices through
`ranges()` (minitriton's own `Runs`, with the digit groups), and failure messages made of several
sentences through `sentences()`, so each ends with its period.
"""
from __future__ import annotations

from minitriton.diagnostics import Runs

from .catalogue import CATALOGUE, NOUNS

LANGS = ("ru", "en")
NNBSP = "\u202f"   # narrow no-break space: the digit-group separator


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


def num(n) -> str:
    """An integer with digit groups from 10 000 on: 98432 -> '98 432' (narrow no-break spaces), 9600 -> '9600'."""
    n = int(n)
    sign = "-" if n < 0 else ""
    s = str(abs(n))
    if abs(n) < 10000:
        return sign + s
    groups = []
    while len(s) > 3:
        groups.insert(0, s[-3:])
        s = s[:-3]
    groups.insert(0, s)
    return sign + NNBSP.join(groups)


def plural(n, noun: str, lang: str) -> str:
    """The form of `noun` that goes after the number n: 1 элемент, 2 элемента, 5 элементов; 1 element, 2 elements."""
    forms = NOUNS[noun][lang if lang in NOUNS[noun] else "ru"]
    n = abs(int(n))
    if lang == "en":
        return forms[0] if n == 1 else forms[1]
    if 11 <= n % 100 <= 14:
        return forms[2]
    last = n % 10
    return forms[0] if last == 1 else forms[1] if 2 <= last <= 4 else forms[2]


def count(n, noun: str, lang: str) -> str:
    """'98 432 элемента', '1 element'."""
    return f"{num(n)} {plural(n, noun, lang)}"


def ranges(values, lang: str = "ru", limit: int = 4) -> str:
    """Sorted integers as compact runs, by minitriton's Runs (one writer of runs): [1, 2, 3, 7] -> '1…3, 7';
    digit groups as `num` writes them, and a long list ends with how many there are ('… (всего 1200)')."""
    return Runs.of(values).text(limit, number=num, more=CATALOGUE["ranges_more"][lang])


def sentences(*parts) -> str:
    """Parts joined into one text, each ending with a period unless it ends with its own punctuation; a part
    after the first starts with a capital letter."""
    out = []
    for part in parts:
        part = (part or "").strip()
        if not part:
            continue
        if out and part[0].islower():
            part = part[0].upper() + part[1:]
        out.append(part if part[-1] in ".!?…:" else part + ".")
    return " ".join(out)


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


def program(p) -> str:
    """A program id as the messages show it: 96 for a 1-D grid, (1, 5) otherwise."""
    if p is None:
        return "?"
    p = tuple(int(v) for v in p)
    return str(p[0]) if len(p) == 1 else "(" + ", ".join(str(v) for v in p) + ")"
