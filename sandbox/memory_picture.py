"""The memory picture of one launch of a Run or a Check: every program traced (the data itself is
`minitriton.picture.data`).

`trace_launch(index, grid)`: while it is active, the index-th launch an exercise keeps for the page
(`Session.launches`) records the accesses of every one of its programs. The exercises' launch helpers open
`minitriton.record(...)` around each launch; this wraps that public entry point for one op and adds the
programs to trace to the one launch wanted, so the other launches of a Check keep their usual cost.
Per-access detail (masked-off lanes where they point, one step per load or store, the values) comes from a
launch record's "accesses", when the recorder provides them: a list of {"program": [x, y, z], "kind",
"tensor", "line", "offsets", "masked", "outside"?} in the order each program made them ("offsets": its active
lanes, "masked": the offsets its masked-off lanes computed, which may lie outside the tensor, "outside": in a
launch that failed, the lanes of the failing access that raised), and from "values": {tensor: flat list of its
elements after the launch}. A launch that fails is recorded up to its failure (its record's "error"), so its
picture is drawn too: the re-run fails the same way.
NumPy, the standard library and minitriton only: this runs in Pyodide.
"""
from __future__ import annotations

import itertools

import numpy as np

import minitriton

from .exercises._base import Session

MAX_PROGRAMS = 4096          # programs traced per picture: the page scrubs through these


class trace_launch:
    """Context manager; `record` is the wanted launch's record (with its "trace") once it ran."""

    def __init__(self, index: int, grid):
        self.index = index
        grid = [int(g) for g in grid] + [1] * (3 - len(grid))
        self.programs = list(itertools.islice(np.ndindex(*grid), MAX_PROGRAMS))
        self.record = None
        self.real = None

    def __enter__(self):
        self.real = minitriton.record
        minitriton.record = self._record
        return self

    def __exit__(self, *exc):
        minitriton.record = self.real
        return False

    def _record(self, trace_programs=None):
        return _Recording(self, trace_programs)


class _Recording:
    """One `minitriton.record(...)` of an exercise helper, tracing every program when its launch is the one."""

    def __init__(self, tracer: trace_launch, trace_programs):
        self.tracer = tracer
        self.wanted = tracer.record is None and Session.counters and len(Session.launches) == tracer.index
        extra = tracer.programs if self.wanted else []
        self.inner = tracer.real(trace_programs=list(trace_programs or []) + extra, accesses=self.wanted)
        self.recording = None

    def __enter__(self):
        self.recording = self.inner.__enter__()
        return self.recording

    def __exit__(self, *exc):
        result = self.inner.__exit__(*exc)
        if self.wanted and self.recording.launches:
            self.tracer.record = self.recording.launches[0]
        return result
