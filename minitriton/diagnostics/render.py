"""Text from a diagnostic record: one renderer per language (the catalogue's "en" and "ru" texts) and per
medium ("terminal": headline, location, details, fix, the source line with a caret; "page": sentences for the
sandbox, whose editor marks the line itself).

Templates are `str.format` strings over the record's fields, with format specs that name how a field is
written: `{n:num}` a number in the language's digit groups, `{offsets:runs}` runs of offsets, `{n:element}`
a count and its noun (NOUNS), `{n:is|are}` the form of a word that goes with a number (Russian: one|few|many),
`{program:pid}` a program id, `{programs:pids}` a list of them, and `{op:verb}` (any other spec) the field's value looked up in the language's word table."""
from __future__ import annotations

import os
import string

from minitriton.diagnostics.catalogue import KINDS, LOCATION, NOUNS, SUGGESTIONS, WORDS
from minitriton.diagnostics.record import Diagnostic, Runs

LANGS = ("en", "ru")
NNBSP = "\u202f"   # narrow no-break space: Russian digit groups


def number(n, lang: str, medium: str = "page") -> str:
    """An integer as the language writes it: '98 432' in Russian (narrow no-break spaces, from 10 000 on),
    '98,432' on an English page, '98432' in an English terminal (as Python prints it)."""
    n = int(n)
    if lang == "en" and medium == "terminal" or abs(n) < 10000:
        return str(n)
    text = f"{abs(n):,}"
    if lang != "en":
        text = text.replace(",", NNBSP)
    return ("-" if n < 0 else "") + text


def plural(n, noun: str, lang: str) -> str:
    """The form of `noun` after the number n: 1 элемент, 2 элемента, 5 элементов; 1 element, 2 elements."""
    return pick(n, NOUNS[noun][lang], lang)


def pick(n, forms, lang: str) -> str:
    """The one of `forms` that goes with the number n: English (one, other); Russian (one, few, many)."""
    n = abs(int(n))
    if lang == "en" or len(forms) < 3:
        return forms[0] if n == 1 else forms[-1]
    if 11 <= n % 100 <= 14:
        return forms[2]
    return forms[0] if n % 10 == 1 else forms[1] if 2 <= n % 10 <= 4 else forms[2]


def program_text(pid) -> str:
    """96 on a 1-D grid, (1, 5) otherwise."""
    if pid is None:
        return "?"
    pid = tuple(int(v) for v in pid)
    return str(pid[0]) if len(pid) == 1 else "(" + ", ".join(str(v) for v in pid) + ")"


class _Formatter(string.Formatter):
    def __init__(self, lang: str, medium: str):
        self.lang, self.medium = lang, medium

    def format_field(self, value, spec):
        if spec == "num":
            return number(value, self.lang, self.medium)
        if spec == "runs":
            runs = value if isinstance(value, Runs) else Runs.of(value)
            return runs.text(number=lambda n: number(n, self.lang, self.medium),
                             more=WORDS[self.lang]["more"]["offsets"])
        if spec == "pids":   # a list of program ids: the first 8, then how many in all
            shown = [self.format_field(p, "pid") for p in value[:8]]
            more = WORDS[self.lang]["more"]["values"].format(n=len(value)) if len(value) > 8 else ""
            return ", ".join(shown + ([more] if more else []))
        if "|" in spec:   # forms of a word after the number: {bad:is|are}, {n:программа|программы|программ}
            return pick(value, spec.split("|"), self.lang)
        if spec == "pid":   # a terminal shows the id as Python prints it, as Triton's interpreter does
            return str(tuple(int(v) for v in value)) if self.medium == "terminal" else program_text(value)
        if spec in NOUNS:   # a count and its noun in the right form: '98 432 элемента', '1 element'
            return f"{number(value, self.lang, self.medium)} {plural(value, spec, self.lang)}"
        if spec and spec in WORDS[self.lang]:
            return WORDS[self.lang][spec].get(str(value), str(value))
        return super().format_field(value, spec)


def text(entry: dict, lang: str, fields: dict, medium: str = "page") -> str:
    """A {"en": ..., "ru": ...} template in `lang`, formatted with `fields`."""
    template = entry.get(lang) or entry["en"]
    return _Formatter(lang, medium).format(template, **fields)


def _fields(diag: Diagnostic) -> dict:
    return {"kernel": diag.kernel, "line": diag.line, "program": diag.program, "triton": diag.triton,
            **diag.fields}


def headline(diag: Diagnostic, lang: str = "en", medium: str = "terminal") -> str:
    return text(KINDS[diag.kind]["head"], lang, _fields(diag), medium)


def details(diag: Diagnostic, lang: str = "en", medium: str = "terminal") -> list[str]:
    """The details' sentences: the kind's body, its notes, then the fix (or why there is none)."""
    fields = _fields(diag)
    out = []
    body = KINDS[diag.kind].get("body")
    if body:
        out.append(text(body, lang, fields, medium))
    for kind, note_fields in diag.notes:
        out.append(text(SUGGESTIONS[kind], lang, {**fields, **note_fields}, medium))
    if diag.suggestion is not None:
        out.append(suggestion_text(diag, lang, medium))
    return out


def suggestion_text(diag: Diagnostic, lang: str = "en", medium: str = "terminal") -> str:
    s = diag.suggestion
    said = text(SUGGESTIONS[s.kind], lang, {**_fields(diag), **s.fields}, medium)
    if s.edit is None and s.reason:
        said += " " + text(SUGGESTIONS[s.reason], lang, {**_fields(diag), **s.fields}, medium)
    return said


def where(diag: Diagnostic, lang: str = "en", medium: str = "terminal") -> str:
    """'vector_add.py:12, program 96' (terminal) or 'line 12, program 96' (page); '' when unknown."""
    parts = []
    if diag.line is not None:
        if medium == "terminal" and diag.filename:
            parts.append(f"{os.path.basename(diag.filename)}:{diag.line}")
        else:
            parts.append(text(LOCATION["line"], lang, {"line": diag.line}, medium))
    if diag.program is not None:
        parts.append(text(LOCATION["program"], lang, {"program": diag.program}, medium))
    return ", ".join(parts)


def caret(diag: Diagnostic) -> str:
    """The failing line of the kernel with a caret under the span: '    tl.store(...)\\n    ^^^^^^^^'."""
    if not diag.source:
        return ""
    line = diag.source.rstrip("\n")
    indent = len(line) - len(line.lstrip())
    start = diag.col if diag.col is not None else indent
    end = diag.end_col if diag.end_col is not None and diag.end_col > start else len(line)
    return f"    {line.strip()}\n    {' ' * max(0, start - indent)}{'^' * max(1, end - start)}"


def render(diag: Diagnostic, lang: str = "en", medium: str = "terminal") -> str:
    """The whole text of a diagnostic in `lang` for `medium`."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    head = headline(diag, lang, medium)
    place = where(diag, lang, medium)
    if medium == "page":
        if place:   # the location goes inside the headline's own sentence
            end = len(head.rstrip().rstrip(".!"))
            head = f"{head[:end]} ({place}){head[end:].strip()}"
        return sentences(head, *details(diag, lang, medium))
    if medium != "terminal":
        raise ValueError(f"medium must be 'terminal' or 'page', got {medium!r}")
    tritons = diag.triton is not None and lang == "en"
    if tritons:   # Triton's own layout, word for word, its reason last (tools compare that last line)
        lines = [diag.triton]
    else:
        lines = [f"{head} ({place})" if place else head]
    body = details(diag, lang, medium)
    fix = body.pop() if diag.suggestion is not None else None
    lines += [f"  {b}" for b in body]
    if fix and not tritons:   # under Triton's text the fix is the exception's note (runtime.reporting)
        lines.append(f"  {WORDS[lang]['label']['fix']}: {fix}")
    shown = caret(diag)
    if shown and diag.triton is None:
        lines.append(shown)
    return "\n".join(lines)


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
