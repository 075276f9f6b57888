"""Every text of the diagnostics catalogue exists in English and Russian: both templates of a kind or a
suggestion are non-empty, name the same fields, format with them, and the Russian one is Russian. Every kind a
raise site names exists in the catalogue."""
from __future__ import annotations

import pathlib
import re
import string

import pytest

import minitriton
from minitriton.diagnostics import Diagnostic, Runs, Suggestion, render
from minitriton.diagnostics import catalogue
from minitriton.diagnostics.catalogue import KINDS, NOUNS, SUGGESTIONS, WORDS
from minitriton.diagnostics.render import text

PACKAGE = pathlib.Path(minitriton.__file__).parent
LOCATION_FIELDS = {"kernel", "line", "program", "triton"}   # the renderer supplies these to every template
# Fields only the Russian sentence names, where the English text is Triton's wording and has no place for them.
RUSSIAN_ONLY = {("loop_carried_type", "first_line"), ("loop_scoped_name", "loop_line")}
CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}\b")


def _templates():
    """(name, part, {"en": ..., "ru": ...}) for every kind's head and body and every suggestion."""
    for kind, entry in KINDS.items():
        for part in ("head", "body"):
            if part in entry:
                yield kind, part, entry[part]
    for name, entry in SUGGESTIONS.items():
        yield name, "suggestion", entry


def _fields(template: str) -> dict:
    """{field name: format spec} of a template."""
    out = {}
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is not None:
            field = re.split(r"[.\[!]", name)[0]
            out[field] = spec or out.get(field, "")   # a field named twice: its spec, where one has it
    return out


def _sample(spec: str, lang: str):
    if spec == "runs":
        return Runs.of([3, 4, 5, 9])
    if spec == "pid":
        return (1, 2)
    if spec == "pids":
        return [(1, 2), (3, 4)]
    if spec in NOUNS or spec == "num" or "|" in spec:   # a count (and the forms of a word after it)
        return 12345
    if spec and spec in WORDS[lang]:
        return next(iter(WORDS[lang][spec]))
    return "`sample`"


def _outside_code(said: str) -> str:
    return re.sub(r"`[^`]*`", " ", said)


ENTRIES = list(_templates())


@pytest.mark.parametrize("name, part, entry", ENTRIES, ids=[f"{n}.{p}" for n, p, _ in ENTRIES])
def test_both_languages_with_the_same_fields(name, part, entry):
    assert set(entry) == {"en", "ru"}, f"{name}: languages {sorted(entry)}"
    assert entry["en"].strip() and entry["ru"].strip(), f"{name}.{part}: an empty template"
    en = set(_fields(entry["en"])) - LOCATION_FIELDS
    ru = set(_fields(entry["ru"])) - LOCATION_FIELDS - {f for k, f in RUSSIAN_ONLY if k == name}
    assert en == ru, f"{name}.{part}: English names {sorted(en)}, Russian {sorted(ru)}"


@pytest.mark.parametrize("name, part, entry", ENTRIES, ids=[f"{n}.{p}" for n, p, _ in ENTRIES])
def test_russian_templates_are_russian(name, part, entry):
    """Formatted with sample fields (words from the Russian tables), the Russian text has Cyrillic outside
    code spans and no English sentence there; both languages format without error."""
    for lang in ("en", "ru"):
        fields = {f: _sample(spec, lang) for f, spec in _fields(entry[lang]).items()}
        said = text(entry, lang, fields)
        if lang == "ru":
            plain = _outside_code(said)
            assert CYRILLIC.search(plain), f"{name}.{part}: no Russian in {said!r}"
            assert not ENGLISH_SENTENCE.search(plain), f"{name}.{part}: English in {said!r}"


def test_kind_names_are_unique_across_the_catalogue_modules():
    modules = [getattr(catalogue, n) for n in dir(catalogue) if n.isupper() and n not in
               ("KINDS", "SUGGESTIONS", "NOUNS", "WORDS", "LOCATION")]
    kinds = [k for table in modules if isinstance(table, dict) for k in table]
    assert len(kinds) == len(set(kinds)), sorted(k for k in set(kinds) if kinds.count(k) > 1)


_KIND_AT_SITE = re.compile(r"(?:\bdiagnostic|\bDiagnostic)\(\s*\"(\w+)\"")
_SUGGESTION_AT_SITE = re.compile(r"\bSuggestion\(\s*\"(\w+)\"")
_DEFAULT_KIND = re.compile(r"default_kind = \"(\w+)\"")


def _named_in_package(pattern):
    found = {}
    for path in PACKAGE.rglob("*.py"):
        for name in pattern.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, path.relative_to(PACKAGE).as_posix())
    return found


def test_every_kind_a_raise_site_names_exists():
    kinds = {**_named_in_package(_KIND_AT_SITE), **_named_in_package(_DEFAULT_KIND)}
    assert len(kinds) > 100   # the pattern sees the raise sites
    missing = {k: where for k, where in kinds.items() if k not in KINDS}
    assert not missing, missing


def test_every_suggestion_a_site_names_exists():
    names = _named_in_package(_SUGGESTION_AT_SITE)
    missing = {k: where for k, where in names.items() if k not in SUGGESTIONS}
    assert not missing, missing


def test_no_raise_site_builds_an_error_text_inline():
    """Errors about a kernel or a launch raise records: no `raise X("...")` / `raise X(f"...")` in the package
    outside the places that speak of something else (listed below with why)."""
    inline = re.compile(r"raise (?!errors\.backend_error)\w+(?:\.\w+)*\(\s*f?\"")   # a backend error's text is
    # the MLIR/LLVM compiler's own diagnostic, a field of its record
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith(NOT_ABOUT_A_KERNEL):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if inline.search(line):
                found.append(f"{name}: {line.strip()}")
    assert found == ALLOWED_INLINE, "\n".join(found)


# Modules whose errors are about their own API, not a kernel or a launch: the testing kit, the options, the
# renderer's arguments, installing over real Triton, minitriton.record(), the picture's page, the profiler's
# sessions and scopes, the host-side MX tensor helpers (triton.tools.mxfp, Triton's wording).
NOT_ABOUT_A_KERNEL = ("testing/", "options.py", "diagnostics/render.py", "__init__.py", "observers/counters.py",
                      "picture/", "profiler/", "tools/mxfp.py")
# minitriton's own invariants (a bug in minitriton, never a user's mistake).
ALLOWED_INLINE = [
    "values/factored.py: raise AttributeError(\"an outer block is immutable\")",
    "values/registry.py: raise ValueError(f\"{key!r} is registered twice: by "
    "{table[key].__module__}.{table[key].__qualname__} \"",
]


def test_a_record_renders_in_both_languages_with_a_suggestion():
    record = Diagnostic("descriptor_stride_alignment", {"dim": 0, "stride": 6, "bytes": 24})
    record.suggestion = Suggestion("descriptor_stride_fix")
    assert "not a multiple of 16" in render(record, "en")
    ru = render(record, "ru", "page")
    assert "не кратно 16" in ru and "дополните строки" in ru.lower()


_PYTHON_CLASS_KIND = re.compile(r"(?:python_error\([\w.]+,\s*errors\.diagnostic\(\s*|require\([^\"]*?)\"(\w+)\"", re.S)


def test_kinds_raised_as_python_errors_are_one_line():
    """A kind raised as Python's own exception (Triton's ValueError, TypeError, assert) has no body: its text is
    Triton's message alone, which the CompilationError quotes and parity compares."""
    kinds = _named_in_package(_PYTHON_CLASS_KIND)
    assert len(kinds) > 150
    assert not {k: where for k, where in kinds.items() if "body" in KINDS.get(k, {})}
