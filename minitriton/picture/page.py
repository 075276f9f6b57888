"""The memory picture as one self-contained HTML page: the pictures' data as JSON inside it, the viewer
(`viewer.js` and `viewer.css`, built from the sandbox page's own sources by web/build.mjs) inlined. The page
requests nothing (its Content-Security-Policy forbids it) and opens from a file.
"""
from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path

DEFAULT_PATH = "minitriton-picture.html"
LANGS = ("en", "ru")
_VIEWER = Path(__file__).with_name("viewer.js")
_STYLE = Path(__file__).with_name("viewer.css")
_TITLES = {"en": "Memory picture", "ru": "Картина памяти"}
_POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def language(lang: str | None = None) -> str:
    """`lang` when given ("en" or "ru"), else Russian where the locale is Russian, else English."""
    if lang is not None:
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {', '.join(LANGS)}, not {lang!r}")
        return lang
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value:
            return "ru" if value.lower().startswith("ru") else "en"
    return "en"


def render(payload: dict) -> str:
    """The page for the viewer's data (see recorder.recording.payload)."""
    lang = payload.get("lang", "en")
    title = _TITLES[lang] + (f": {payload['title']}" if payload.get("title") else "")
    script = _VIEWER.read_text(encoding="utf-8").replace("</script", "<\\/script")
    style = _STYLE.read_text(encoding="utf-8").replace("</style", "<\\/style")
    return (f'<!doctype html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
            f'<main id="picture"></main>\n'
            f'<script type="application/json" id="picture-data">{_json(payload)}</script>\n'
            f"<script>{script}</script>\n</body>\n</html>\n")


def write(path, payload: dict) -> str:
    """Write the page to `path`; its absolute path."""
    target = Path(path)
    target.write_text(render(payload), encoding="utf-8")
    return str(target.resolve())


def _json(payload) -> str:
    """JSON that cannot end the script element it sits in (every "<" escaped), with no NaN or infinity."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:   # a NaN or infinity among the numbers: JSON has none
        text = json.dumps(_finite(payload), ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
