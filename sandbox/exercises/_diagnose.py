"""Finding the cause behind a failed test, so that a hint is given only when its cause is there.

Two ways: compare the output with what a known mistake computes (`_checks.close` against a NumPy model of
the mistake), or re-run the learner's kernel with one thing changed and see the failure go away (the same
rows laid out back to back, exact FP32 products in `tl.dot`, the causal mask off). Re-runs are quiet (no
counters recorded) and a re-run that raises finds nothing.
"""
from __future__ import annotations

import contextlib

import numpy as np

import minitriton

from ._base import quietly


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
