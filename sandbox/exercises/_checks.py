"""Comparisons whose messages speak in kernel terms (tensor, row, column, program), over outputs pre-filled
with minitriton's poison (minitriton.testing.poison: a NaN with a payload no kernel produces), so "never
written" is told apart from "wrong". NumPy + stdlib: this runs in Pyodide too.
"""
from __future__ import annotations

import numpy as np

from minitriton.testing.poison import empty
from minitriton.testing.poison import unwritten as _poisoned

from .. import messages as M


def filled(shape, dtype) -> np.ndarray:
    """An output array whose every element holds minitriton's poison for its dtype (unwritten stays visible,
    and with the sanitizer on a kernel reading an element before anyone wrote it is reported)."""
    return empty(shape, np.dtype(dtype))


def unwritten(a) -> np.ndarray:
    """Boolean mask of the elements of `a` that still hold the poison."""
    return _poisoned(np.ascontiguousarray(np.asarray(a)))


def where(index, lang: str, style: str = "auto") -> str:
    index = tuple(int(i) for i in index)
    if style == "bhtd" and len(index) == 4:
        return M.say("where_bhtd", lang, b=index[0], h=index[1], t=index[2], d=index[3])
    if style == "bht" and len(index) == 3:
        return M.say("where_bht", lang, b=index[0], h=index[1], t=index[2])
    if len(index) == 1:
        return M.say("where_index", lang, i=M.num(index[0], lang))
    if len(index) == 2:
        return M.say("where_row_col", lang, r=index[0], c=index[1])
    return M.say("where_nd", lang, idx=", ".join(str(i) for i in index))


def unwritten_message(name: str, got: np.ndarray, lang: str, style: str = "auto") -> str | None:
    """None when every element was written, else what was missed, as ranges or rows."""
    missing = unwritten(got)
    if not missing.any():
        return None
    if missing.all():
        return M.say("nothing_written", lang, tensor=name)
    if got.ndim == 1:
        return M.say("never_written", lang, tensor=name, ranges=M.ranges(np.flatnonzero(missing), lang))
    if got.ndim == 2 and style == "auto":
        rows = missing.all(axis=1)
        if rows.any() and not (missing & ~rows[:, None]).any():
            return M.say("never_written_rows", lang, tensor=name, ranges=M.ranges(np.flatnonzero(rows), lang))
    first = np.argwhere(missing)[0]
    return M.say("never_written_some", lang, tensor=name, count=M.num(missing.sum(), lang), total=M.num(missing.size, lang),
                 where=where(first, lang, style))


def tol_text(atol, rtol, lang) -> str:
    if atol == 0 and rtol == 0:
        return M.say("tolerance_exact", lang)
    return M.say("tolerance", lang, atol=f"{atol:g}", rtol=f"{rtol:g}")


def compare(name: str, got, expected, lang: str, *, atol=0.0, rtol=0.0, style="auto", tol=None, diagnose=None):
    """(passed, message) for an output against its float64 reference: |got - expected| <= atol + rtol·|expected|.

    `atol` may be an array (a per-element bound). On a failure `diagnose(got, expected)` is asked for the
    cause it can detect (a sentence, or None when it finds none), which follows the failure.
    """
    got = np.asarray(got)
    exp = np.asarray(expected, dtype=np.float64)
    tol = tol or (tol_text(float(np.max(atol)), rtol, lang))

    def failed(text):
        return False, M.sentences(text, diagnose(got, exp) if diagnose else None)

    missing = unwritten_message(name, got, lang, style)
    if missing and unwritten(got).all():
        cause = diagnose(got, exp) if diagnose else None   # e.g. a grid of no programs
        return False, M.sentences(M.say("nothing_written_plain", lang, tensor=name), cause) if cause else missing
    if missing:
        return failed(missing)
    g = got.astype(np.float64)
    finite = np.isfinite(exp)
    bad_nan = ~np.isfinite(g) & finite
    if bad_nan.any():
        first = tuple(np.argwhere(bad_nan)[0])
        return failed(M.say("nonfinite", lang, tensor=name, count=M.count(bad_nan.sum(), "nonfinite", lang),
                            where=where(first, lang, style), expected=M.real(exp[first]), got=M.real(g[first])))
    with np.errstate(invalid="ignore"):
        diff = np.where(finite, np.abs(g - exp), np.where(g == exp, 0.0, np.inf))
    bound = np.asarray(atol, dtype=np.float64) + rtol * np.abs(np.where(finite, exp, 0.0))
    bad = diff > bound
    if bad.any():
        first = np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), diff.shape)
        return failed(M.say("mismatch", lang, tensor=name, count=M.num(bad.sum(), lang), total=M.num(bad.size, lang), tol=tol,
                            err=M.err(diff[first]), where=where(first, lang, style), expected=M.real(exp[first]),
                            got=M.real(g[first])))
    worst = float(diff.max()) if diff.size else 0.0
    if worst == 0.0:
        return True, M.say("ok_exact", lang)
    return True, M.say("ok_close", lang, err=M.err(worst), tol=tol)


def close(got, candidate, atol=1e-5, rtol=1e-4, partial: bool = False) -> bool:
    """Whether `got` is `candidate` (what a known mistake computes) within a tolerance, NaNs in the same places.
    `partial`: the candidate may leave elements unwritten (NaN there), and so may `got`."""
    g = np.asarray(got, dtype=np.float64)
    c = np.asarray(candidate, dtype=np.float64)
    if g.shape != c.shape or (not partial and unwritten(np.asarray(got)).any()):
        return False
    with np.errstate(invalid="ignore"):
        near = np.isfinite(c) & (np.abs(g - c) <= atol + rtol * np.abs(c))   # an infinite c is met only by itself
        return bool(np.all((np.isnan(g) & np.isnan(c)) | (g == c) | near))


def verdict(got, expected, atol, lang: str, rtol: float = 1e-5) -> str:
    """One short phrase for Run: matches NumPy, differs (by how much), or was not fully written."""
    if unwritten(got).any():
        return M.say("demo_unwritten", lang)
    with np.errstate(invalid="ignore"):
        diff = np.abs(np.asarray(got, dtype=np.float64) - expected)
    if bool(np.all(diff <= atol + rtol * np.abs(expected))):
        return M.say("demo_match", lang)
    return M.say("demo_differs", lang, err=M.err(np.nanmax(diff) if np.isfinite(diff).any() else np.inf))


def untouched_padding(name: str, full: np.ndarray, n_cols: int, lang: str):
    """(passed, message): the columns past n_cols of a padded array still hold the poison."""
    pad = full[:, n_cols:]
    touched = ~unwritten(pad)
    if not touched.any():
        return True, ""
    r, c = np.argwhere(touched)[0]
    return False, M.say("wrote_outside", lang, tensor=name, count=M.count(touched.sum(), "element", lang),
                        n_cols=n_cols, row=int(r), col=int(c) + n_cols)
