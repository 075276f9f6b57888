"""A diagnostic as data: what went wrong in a kernel, where, the numbers, and the fix as an edit of the user's
own line. Exceptions carry one (`exc.diagnostic`); renderers (`diagnostics.render`) turn it into text for a
terminal or the sandbox page, in English or Russian. Nothing reads a message back into fields."""
from __future__ import annotations

from dataclasses import dataclass, field, fields as dataclass_fields

import numpy as np

RUNS_KEPT = 64   # runs of offsets a record keeps; `count` says how many values there were in all


@dataclass(frozen=True)
class Runs:
    """Distinct integers as sorted runs of consecutive values: [7, 1, 2, 3] -> ((1, 3), (7, 7)), count 4.
    Only the first RUNS_KEPT runs are kept; `count` is the number of distinct values in all."""

    runs: tuple = ()
    count: int = 0

    @classmethod
    def of(cls, values) -> "Runs":
        v = np.unique(np.asarray(values, dtype=np.int64).reshape(-1))
        if v.size == 0:
            return cls((), 0)
        breaks = np.nonzero(np.diff(v) != 1)[0]
        starts = np.concatenate([[0], breaks + 1])[:RUNS_KEPT]
        ends = np.concatenate([breaks, [v.size - 1]])[:RUNS_KEPT]
        return cls(tuple((int(v[s]), int(v[e])) for s, e in zip(starts, ends)), int(v.size))

    @property
    def low(self) -> int | None:
        return self.runs[0][0] if self.runs else None

    @property
    def high(self) -> int | None:
        """The largest value kept (the largest of all when every run was kept)."""
        return self.runs[-1][1] if self.runs else None

    def text(self, limit: int = 4, number=str, more: str = "… ({n} offsets in all)") -> str:
        """'1…3, 7'; past `limit` runs, the `more` text with the count."""
        if not self.runs:
            return "none"
        parts = [number(a) if a == b else f"{number(a)}…{number(b)}" for a, b in self.runs[:limit]]
        if len(self.runs) > limit:
            parts.append(more.format(n=number(self.count)))
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"runs": [list(r) for r in self.runs], "count": self.count}


@dataclass(frozen=True)
class Edit:
    """Replace columns [col, end_col) of lines line..end_line (1-based lines, 0-based columns) of the user's
    file by `text`: a fix a tool can apply without understanding it."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str

    def apply(self, source: str) -> str:
        """`source` with the edit made."""
        lines = source.splitlines(keepends=True)
        head = "".join(lines[: self.line - 1]) + lines[self.line - 1][: self.col]
        tail = lines[self.end_line - 1][self.end_col:] + "".join(lines[self.end_line:])
        return head + self.text + tail

    def to_json(self) -> dict:
        return {"line": self.line, "col": self.col, "end_line": self.end_line, "end_col": self.end_col,
                "text": self.text}


@dataclass
class Suggestion:
    """A fix: the text `kind` of the catalogue with `fields` (the kernel's own names and expressions), and
    `edit` when the fix is a mechanical change of the user's source. Without an edit, `reason` names the
    catalogue text that says why no automatic fix exists."""

    kind: str
    fields: dict = field(default_factory=dict)
    edit: Edit | None = None
    reason: str | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "fields": _jsonable(self.fields),
                "edit": self.edit.to_json() if self.edit else None, "reason": self.reason}


@dataclass
class Diagnostic:
    """One error about a kernel. `kind` names its texts in the catalogue; `fields` holds the kind's numbers and
    names (the op, the tensor, `offsets` as Runs, the valid range, lane counts, ...). The location is filled in
    by the engine when it knows it: the kernel, its file, the line, the span's columns, the line's text, the
    program that failed. `names` are the kernel's own names in the failing expression. `triton` keeps Triton's
    own message where Triton raises the same error (shown verbatim in English: people search for it)."""

    kind: str
    fields: dict = field(default_factory=dict)
    kernel: str | None = None
    filename: str | None = None
    line: int | None = None
    col: int | None = None
    end_col: int | None = None
    source: str | None = None
    program: tuple | None = None
    names: tuple = ()
    suggestion: Suggestion | None = None
    triton: str | None = None
    notes: list = field(default_factory=list)   # further (kind, fields) pairs, each one sentence

    def located(self, kernel, filename, line, col=None, end_col=None, source=None, program=None) -> "Diagnostic":
        """Fill in where it happened (the engine's part); returns self."""
        self.kernel, self.filename, self.line = kernel, filename, line
        self.col, self.end_col, self.source, self.program = col, end_col, source, program
        return self

    def to_json(self) -> dict:
        """Plain JSON types only (the sandbox page reads this)."""
        out = {}
        for f in dataclass_fields(self):
            value = getattr(self, f.name)
            if f.name == "suggestion":
                value = value.to_json() if value is not None else None
            out[f.name] = _jsonable(value)
        return out


def _jsonable(v):
    if isinstance(v, (Runs, Edit, Suggestion)):
        return v.to_json()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v
