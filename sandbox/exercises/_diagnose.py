"""Finding the cause behind a failed test, so that a hint is given only when its cause is there.

Three ways: compare the output with what a known mistake computes (`_checks.close` against a NumPy model of
the mistake), re-run the learner's kernel with one thing changed and see the failure go away (the same
rows laid out back to back, exact FP32 products in `tl.dot`, the causal mask off), or read a mix-up in the
kernel source (minitriton's `static_hint`). Re-runs are quiet (no counters recorded) and a re-run that raises
finds nothing.
"""
from __future__ import annotations

import contextlib

import numpy as np

import minitriton
from minitriton.diagnostics.catalogue import SUGGESTIONS
from minitriton.diagnostics.render import text as catalogue_text
from minitriton.frontend import fix_axes

from .. import messages as M
from ._base import Session, quietly


def first_cause(*detectors):
    """The first sentence a detector (a callable -> str | None) returns; None when none finds its cause."""
    for detect in detectors:
        try:
            found = detect()
        except Exception:  # noqa: BLE001  (a re-run that fails tells nothing about this cause)
            found = None
        if found:
            return found
    return None


def passes(run) -> bool:
    """Whether `run()` (a quiet re-run returning (passed, message)) passes."""
    with quietly():
        passed, _ = run()
    return bool(passed)


@contextlib.contextmanager
def ieee_dots():
    """FP32 `tl.dot` without an explicit input_precision computes exact products (f32_default="ieee")."""
    with minitriton.set_options(f32_default="ieee"):
        yield


def row_step_model(buffers, n_rows: int, n_cols: int, step: int, rows_fn, out_shape, dtype=np.float32):
    """What a row kernel computes when it takes row r at flat offset r * step of its (padded) buffers instead
    of r * stride: rows_fn(*rows of each input) gives the output rows, placed at r * step of an output of
    `out_shape` that is NaN elsewhere (never written)."""
    flats = [np.ascontiguousarray(b).reshape(-1) for b in buffers]
    out = np.full(int(np.prod(out_shape)), np.nan)
    last = (n_rows - 1) * step + n_cols
    if any(last > f.size for f in flats) or last > out.size:
        return None
    index = np.arange(n_rows)[:, None] * step + np.arange(n_cols)[None, :]
    out[index.ravel()] = np.asarray(rows_fn(*(f[index].astype(dtype) for f in flats)), np.float64).ravel()
    return out.reshape(out_shape)


def static_hint(filename: str, lang: str) -> str | None:
    """A mix-up visible in the kernel source alone (a mask on the wrong axis, one stride for both axes of a
    tile, a vector broadcast along the wrong axis), as minitriton's suggestion for it in `lang`, for a failure
    whose values are all the check has; None when the source shows none. The suggestion itself is kept as the
    test's fix (Session.fix): the page offers its edit."""
    suggestion = fix_axes.static_hint(filename)
    if suggestion is None:
        return None
    Session.fix = suggestion
    return M.sentences(catalogue_text(SUGGESTIONS[suggestion.kind], lang, suggestion.fields))
