"""The memory picture: what each program of a launch loaded, stored and updated, in order, with the kernel line
of each access and the values on hover, drawn as the sandbox page draws it.

Any script gets it as one self-contained HTML file that opens offline:

    python -m minitriton run --picture script.py          # writes minitriton-picture.html
    python -m minitriton run --picture=out.html --lang ru script.py

or in code, around the launches to draw:

    with minitriton.picture.recording("out.html"):
        kernel[grid](...)

Every launch inside is recorded with its programs traced (the first `MAX_LAUNCHES` launches, the first
`MAX_PROGRAMS` programs of each, up to `MAX_BYTES` of data; the page says what was left out); the file is
written when the block ends, also when it ends with an error. `lang`: "en" or "ru" (default: the locale's).

Modules: `data` (the picture's data from one launch record: what the sandbox page and this page draw),
`recorder` (the `recording` block), `page` (the HTML file, with the viewer built from the sandbox page's
sources: `viewer.js`, `viewer.css`).
"""
from minitriton.picture.page import DEFAULT_PATH
from minitriton.picture.recorder import MAX_BYTES, MAX_LAUNCHES, MAX_PROGRAMS, recording

__all__ = ["DEFAULT_PATH", "MAX_BYTES", "MAX_LAUNCHES", "MAX_PROGRAMS", "recording"]
