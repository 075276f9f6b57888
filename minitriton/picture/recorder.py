"""`recording(path)`: every kernel launch inside the block recorded with its programs traced and each access
kept, written as one self-contained page (`page.py`) when the block ends, also when it ends with an error.

The cost is bounded: the first `max_launches` launches are traced (later ones are only counted), and of each
the first `max_programs` programs in launch order; once the pictures kept hold `max_bytes` of JSON, no later
launch is traced either. The page says what was left out. Each launch's record
becomes the picture's data (`data.picture`) as soon as the launch ends, so its lane lists do not pile up.
A `minitriton.record()` block opened inside the recording takes the launches made inside it for itself.
"""
from __future__ import annotations

import itertools
import json

import numpy as np

from minitriton.diagnostics import Diagnostic, render
from minitriton.observers.counters import record
from minitriton.picture import data, page

MAX_LAUNCHES = 16            # launches traced and drawn
MAX_PROGRAMS = 1024          # programs traced per launch (the page scrubs through these)
MAX_BYTES = 32 * 2**20       # of the pictures' JSON in one page: a browser still opens it quickly
MAX_ERROR_CHARS = 4000       # of the text of the error that ended the block


class recording:
    """Context manager: `with minitriton.picture.recording("picture.html"): ...` writes the memory picture of
    the launches made inside the block to that file (`lang`: "en" or "ru", default from the locale).
    It yields itself: `launches` (the pictures kept), `left_out` (launches not drawn), `path` once written."""

    def __init__(self, path: str = page.DEFAULT_PATH, lang: str | None = None, title: str = "",
                 max_launches: int = MAX_LAUNCHES, max_programs: int = MAX_PROGRAMS, max_bytes: int = MAX_BYTES):
        self.target = path
        self.lang = page.language(lang)
        self.title = title
        self.max_launches = max_launches
        self.max_programs = max_programs
        self.max_bytes = max_bytes
        self.bytes = 0                   # of the pictures kept, as JSON
        self.launches: list = []         # the picture data of each drawn launch, as the page's panel takes it
        self.summaries: list = []        # kernel, grid and number of programs of each drawn launch
        self.left_out = 0
        self.path = None
        self.inner = None

    def __enter__(self):
        self.inner = record(trace_programs=self.programs_to_trace, accesses=True)
        self.inner.__enter__().launches = _Launches(self)
        return self

    def __exit__(self, kind, exc, tb):
        self.inner.__exit__(kind, exc, tb)
        self.path = page.write(self.target, self.payload(_failure(kind, exc, self.lang)))
        return False

    def programs_to_trace(self, grid) -> list:
        """The programs of a launch that is about to run: the first ones in launch order while launches are
        still drawn, none after."""
        if self.full():
            return []
        return list(itertools.islice(np.ndindex(*grid), self.max_programs))

    def add(self, launch_record: dict) -> None:
        """One launch's record, as the launch ends."""
        if self.full():
            self.left_out += 1
            return
        picture = data.picture(launch_record)
        picture["traced"] = len(launch_record.get("trace", []))
        self.bytes += len(json.dumps(picture, separators=(",", ":")))
        self.launches.append(picture)
        self.summaries.append({k: launch_record[k] for k in ("kernel", "grid", "num_programs", "error")
                               if k in launch_record})

    def full(self) -> bool:
        """Whether the page holds all the launches it may."""
        return len(self.launches) >= self.max_launches or self.bytes >= self.max_bytes

    def payload(self, error) -> dict:
        """What the page embeds."""
        for i, picture in enumerate(self.launches):
            picture["launch_index"], picture["launches"] = i, len(self.launches)
        return {"lang": self.lang, "title": self.title, "launches": self.summaries, "pictures": self.launches,
                "left_out": {"launches": self.left_out, "max_launches": self.max_launches,
                             "max_programs": self.max_programs},
                "error": error}


class _Launches(list):
    """The recording's list of launch records: each record goes to the picture as it is appended."""

    def __init__(self, owner: recording):
        super().__init__()
        self.owner = owner

    def append(self, launch_record):
        self.owner.add(launch_record)


def _failure(kind, exc, lang: str) -> dict | None:
    """The error that ended the block, as the page shows it: minitriton's in the page's language (a clean
    `sys.exit` is none)."""
    if kind is None or (issubclass(kind, SystemExit) and exc.code in (None, 0)):
        return None
    record = getattr(exc, "diagnostic", None)
    text = render(record, lang) if isinstance(record, Diagnostic) else str(exc)
    return {"type": kind.__name__, "message": text[:MAX_ERROR_CHARS]}
