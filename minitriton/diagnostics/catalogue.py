"""Every text minitriton shows about a kernel, in English and Russian: the kinds of diagnostics (a headline and
details each), the suggestions (fixes and notes), the words the templates look up, and the location phrases.
`diagnostics.render` formats them (format specs: `num`, `runs`, `pid`, or a WORDS table's name).

English keeps Triton's wording where Triton raises the same error. Every kind and suggestion has both
languages (tests/diagnostics checks it)."""
from __future__ import annotations

from minitriton.diagnostics.kinds_access import ACCESS, ACCESS_SUGGESTIONS
from minitriton.diagnostics.kinds_compile import COMPILE, COMPILE_SUGGESTIONS
from minitriton.diagnostics.kinds_descriptor import DESCRIPTOR, DESCRIPTOR_SUGGESTIONS
from minitriton.diagnostics.kinds_launch import LAUNCH, LAUNCH_SUGGESTIONS
from minitriton.diagnostics.kinds_memory import MEMORY, MEMORY_SUGGESTIONS
from minitriton.diagnostics.kinds_runtime import RUNTIME, RUNTIME_SUGGESTIONS
from minitriton.diagnostics.kinds_shape import SHAPE, SHAPE_SUGGESTIONS
from minitriton.diagnostics.kinds_types import TYPES, TYPES_SUGGESTIONS

KINDS: dict = {**MEMORY, **RUNTIME, **COMPILE, **SHAPE, **TYPES, **LAUNCH, **DESCRIPTOR, **ACCESS}
SUGGESTIONS: dict = {**MEMORY_SUGGESTIONS, **RUNTIME_SUGGESTIONS, **COMPILE_SUGGESTIONS, **SHAPE_SUGGESTIONS,
                     **TYPES_SUGGESTIONS, **LAUNCH_SUGGESTIONS, **DESCRIPTOR_SUGGESTIONS,
                     **ACCESS_SUGGESTIONS}

# The forms of a noun after a number: Russian one / few / many, English singular / plural.
NOUNS = {
    "element": {"ru": ("элемент", "элемента", "элементов"), "en": ("element", "elements")},
    "lane": {"ru": ("дорожка", "дорожки", "дорожек"), "en": ("lane", "lanes")},
    "program": {"ru": ("программа", "программы", "программ"), "en": ("program", "programs")},
    "iteration": {"ru": ("итерация", "итерации", "итераций"), "en": ("iteration", "iterations")},
}

WORDS = {
    "en": {
        "verb": {"load": "reads", "store": "writes", "atomic": "updates", "gather": "reads"},
        "side": {"past": "past the end of", "before": "before the start of"},
        "axis": {"rows": "rows", "cols": "columns"},
        "access": {"load": "reads", "store": "writes"},
        "more": {"offsets": "… ({n} offsets in all)", "values": "… ({n} in all)"},
        "label": {"fix": "fix", "note": "note"},
        "use": {"condition": "condition", "integer": "integer", "number": "number"},
        "unary": {"minus": "minus", "invert": "invert"},
    },
    "ru": {
        "verb": {"load": "читает", "store": "пишет", "atomic": "обновляет", "gather": "читает"},
        "side": {"past": "за концом", "before": "перед началом"},
        "axis": {"rows": "строки", "cols": "столбцы"},
        "access": {"load": "читает", "store": "пишет"},
        "more": {"offsets": "… (всего {n})", "values": "… (всего {n})"},
        "label": {"fix": "исправление", "note": "заметка"},
        "use": {"condition": "условие", "integer": "целое число", "number": "число"},
        "unary": {"minus": "минус", "invert": "оператор ~"},
    },
}

LOCATION = {
    "line": {"en": "line {line}", "ru": "строка {line}"},
    "program": {"en": "program {program:pid}", "ru": "программа {program:pid}"},
}
