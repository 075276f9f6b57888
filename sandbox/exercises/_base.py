"""What an exercise is, and the helpers its tests share: launching the learner's kernel with counters,
outputs pre-filled with a sentinel (so "never written" is visible), and comparisons whose messages speak
in kernel terms (tensor, row, column, program). NumPy + stdlib only: this runs in Pyodide too.

A test is `fn(mod, lang) -> (passed, message)`; it may also raise. `Fail(message)` is a friendly failure;
any other exception (an `OutOfBoundsError` from the kernel, a `CompilationError`, ...) is turned into a
kernel-terms message by the bridge, which also points the editor at the line and the program.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import minitriton

from .. import messages as M


class Fail(Exception):
    """A test failed for a reason the message explains (already in the learner's language)."""


@dataclass(frozen=True)
class Test:
    id: str                                   # stable: "add_tail"
    title: dict                               # {"ru": ..., "en": ...}: what the page lists
    fn: Callable                              # (mod, lang) -> (passed, message)
    tolerance: dict | None = None             # {"ru", "en"}: shown next to the test ("atol = 1e-4, rtol = 1e-4")
    counters: bool = True                     # record traffic (its launches appear in Check's answer); costly


@dataclass(frozen=True)
class Exercise:
    id: str
    order: int
    title: dict
    statement: dict                           # Markdown
    starter: dict                             # code per language (comments differ, code is the same)
    solution: dict
    hints: tuple                              # ({"ru", "en"}, ...), revealed one at a time
    tests: tuple                              # (Test, ...)
    demo: Callable                            # (mod, lang, backend) -> list[(label, np.ndarray)]; prints a summary
    kernels: dict = field(default_factory=dict)   # kernel name -> parameter names the tests launch with


# ---------------------------------------------------------------- code text in two languages

_MARK = re.compile(r"«([a-z0-9_]+)»")


def localize(template: str, comments: dict, lang: str) -> str:
    """Replace «key» markers in code with comments[key][lang] (the code itself is shared by the languages)."""
    def sub(m):
        entry = comments[m.group(1)]
        return entry.get(lang) or entry["ru"]
    return _MARK.sub(sub, template).strip("\n") + "\n"


def both(template: str, comments: dict) -> dict:
    return {lang: localize(template, comments, lang) for lang in M.LANGS}


# ---------------------------------------------------------------- launching the learner's kernels

class Session:
    """The launches of the current op (tests and demos append here) and the programs to trace."""

    launches: list = []
    trace_programs: list = []
    label: str | None = None
    counters: bool = True

    @classmethod
    def reset(cls, trace_programs=()):
        cls.launches = []
        cls.trace_programs = list(trace_programs)
        cls.label = None
        cls.counters = True


def kernel(mod, name: str, params, lang: str):
    """The learner's kernel `name`, checked to be a @triton.jit function with the parameters the tests use."""
    obj = getattr(mod, name, None)
    shown = ", ".join(params)
    if obj is None:
        raise Fail(M.say("missing_kernel", lang, name=name, params=shown))
    if not isinstance(obj, minitriton.KernelInterface):
        if hasattr(obj, "__getitem__") and hasattr(obj, "run"):
            return obj                         # real Triton's JITFunction (the GPU run)
        raise Fail(M.say("not_jit", lang, name=name))
    names = list(getattr(obj, "arg_names", None) or _base_names(obj))
    if names and names != list(params):
        raise Fail(M.say("bad_signature", lang, name=name, expected=shown, got=", ".join(names)))
    return obj


def _base_names(obj):
    fn = getattr(obj, "fn", None)
    return getattr(fn, "arg_names", []) if fn is not None else []


def launch(kern, grid, *args, **kwargs) -> dict | None:
    """kern[grid](*args, **kwargs) under a traffic recording; returns the launch record (also kept in Session).

    Without `Session.counters` (a test that only compares values) the launch runs unrecorded: the counters'
    bookkeeping costs more than the kernel itself in the larger tests, and returns None.
    """
    if not Session.counters:
        kern[grid](*args, **kwargs)
        return None
    with minitriton.record(trace_programs=Session.trace_programs) as rec:
        kern[grid](*args, **kwargs)
    for r in rec.launches:
        if Session.label:
            r["test"] = Session.label
        Session.launches.append(r)
    return rec.launches[-1] if rec.launches else None


class Numpy:
    """The emulator's arrays: NumPy in and out (the GPU run swaps in torch CUDA tensors)."""

    name = "minitriton"

    @staticmethod
    def put(a: np.ndarray):
        return a

    @staticmethod
    def get(a) -> np.ndarray:
        return np.asarray(a)


# ---------------------------------------------------------------- sentinels: what was never written

_SENTINEL_BITS = {np.dtype(np.float32): (np.uint32, 0x7FBADBAD), np.dtype(np.float16): (np.uint16, 0x7D5A),
                  np.dtype(np.float64): (np.uint64, 0x7FF4BADBADBADBAD)}


def filled(shape, dtype) -> np.ndarray:
    """An output array holding a NaN with a payload no kernel produces, so unwritten elements stay visible."""
    dtype = np.dtype(dtype)
    uint, bits = _SENTINEL_BITS[dtype]
    return np.full(shape, bits, dtype=uint).view(dtype)


def unwritten(a: np.ndarray) -> np.ndarray:
    """Boolean mask of the elements of `a` that still hold the sentinel."""
    a = np.asarray(a)
    uint, bits = _SENTINEL_BITS[a.dtype]
    return np.ascontiguousarray(a).view(uint) == uint(bits)


def where(index, lang: str, style: str = "auto") -> str:
    index = tuple(int(i) for i in index)
    if style == "bhtd" and len(index) == 4:
        return M.say("where_bhtd", lang, b=index[0], h=index[1], t=index[2], d=index[3])
    if style == "bht" and len(index) == 3:
        return M.say("where_bht", lang, b=index[0], h=index[1], t=index[2])
    if len(index) == 1:
        return M.say("where_index", lang, i=M.num(index[0]))
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
        return M.say("never_written", lang, tensor=name, ranges=M.ranges(np.flatnonzero(missing)))
    if got.ndim == 2 and style == "auto":
        rows = missing.all(axis=1)
        if rows.any() and not (missing & ~rows[:, None]).any():
            return M.say("never_written_rows", lang, tensor=name, ranges=M.ranges(np.flatnonzero(rows)))
    first = np.argwhere(missing)[0]
    return M.say("never_written_some", lang, tensor=name, count=M.num(missing.sum()), total=M.num(missing.size),
                 where=where(first, lang, style))


# ---------------------------------------------------------------- comparisons

def tol_text(atol, rtol, lang) -> str:
    return M.say("tolerance", lang, atol=f"{atol:g}", rtol=f"{rtol:g}")


def compare(name: str, got, expected, lang: str, *, atol=0.0, rtol=0.0, style="auto", tol=None, diagnose=None,
            note: str | None = None):
    """(passed, message) for an output against its float64 reference: |got - expected| <= atol + rtol·|expected|.

    `atol` may be an array (a per-element bound). `diagnose(got, expected)` may return a sentence appended to a
    failure (the likely cause); `note` is appended to every failure of this test.
    """
    got = np.asarray(got)
    exp = np.asarray(expected, dtype=np.float64)
    tol = tol or (tol_text(float(np.max(atol)), rtol, lang))

    def failed(text):
        extra = diagnose(got, exp) if diagnose else None
        return False, " ".join(t for t in (text, extra, note) if t)

    missing = unwritten_message(name, got, lang, style)
    if missing:   # the likely cause is the missing store itself: no diagnosis
        nothing = unwritten(got).all()
        return False, missing if nothing or not note else f"{missing} {note}"
    g = got.astype(np.float64)
    finite = np.isfinite(exp)
    bad_nan = ~np.isfinite(g) & finite
    if bad_nan.any():
        first = tuple(np.argwhere(bad_nan)[0])
        return failed(M.say("nonfinite", lang, tensor=name, count=M.num(bad_nan.sum()), where=where(first, lang, style),
                            expected=M.real(exp[first]), got=M.real(g[first])))
    with np.errstate(invalid="ignore"):
        diff = np.where(finite, np.abs(g - exp), np.where(g == exp, 0.0, np.inf))
    bound = np.asarray(atol, dtype=np.float64) + rtol * np.abs(np.where(finite, exp, 0.0))
    bad = diff > bound
    if bad.any():
        first = np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), diff.shape)
        return failed(M.say("mismatch", lang, tensor=name, count=M.num(bad.sum()), total=M.num(bad.size), tol=tol,
                            err=M.err(diff[first]), where=where(first, lang, style), expected=M.real(exp[first]),
                            got=M.real(g[first])))
    worst = float(diff.max()) if diff.size else 0.0
    if worst == 0.0:
        return True, M.say("ok_exact", lang)
    return True, M.say("ok_close", lang, err=M.err(worst), tol=tol)


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
    """(passed, message): the columns past n_cols of a padded array still hold the sentinel."""
    pad = full[:, n_cols:]
    touched = ~unwritten(pad)
    if not touched.any():
        return True, ""
    r, c = np.argwhere(touched)[0]
    return False, M.say("wrote_outside", lang, tensor=name, count=M.num(touched.sum()), n_cols=n_cols, row=int(r),
                        col=int(c) + n_cols)


# ---------------------------------------------------------------- traffic

def counts(record: dict | None, tensor: str, field_: str):
    """(total, per-program list) of a counter for one tensor argument of a launch record."""
    if record is None or tensor not in record["tensors"]:
        return 0, []
    t = record["tensors"][tensor]
    return int(t["totals"][field_]), list(t["per_program"][field_])


def expect_traffic(record: dict | None, lang: str, rules) -> tuple[bool, str]:
    """Check element counts: rules = [(tensor, "load"|"store", expected total, formula, per-program fn|None)].

    `per-program fn(program tuple) -> expected count` lets the message name the first program that is off.
    """
    problems, fine = [], []
    grid = record["grid"] if record else [1, 1, 1]
    for tensor, kind, expected, formula, per_program in rules:
        field_ = "loaded_elements" if kind == "load" else "stored_elements"
        got, per = counts(record, tensor, field_)
        if got == expected:
            fine.append(M.say("traffic_summary", lang, tensor=tensor, got=M.num(got)))
            continue
        text = M.say("traffic_load" if kind == "load" else "traffic_store", lang, tensor=tensor, got=M.num(got),
                     expected=M.num(expected), formula=formula)
        if per_program is not None and per:
            for linear, value in enumerate(per):
                pid = _pid(linear, grid)
                want = per_program(pid)
                if value != want:
                    text += "; " + M.say("traffic_program", lang, program=M.program(_trim(pid, grid)),
                                         got=M.num(value), expected=M.num(want))
                    break
        problems.append(text)
    if problems:
        return False, "; ".join(problems)
    return True, M.say("ok_traffic", lang, details=", ".join(fine))


def _pid(linear: int, grid) -> tuple:
    """minitriton's program order: x outermost, z fastest."""
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    return (linear // (gy * gz), (linear // gz) % gy, linear % gz)


def _trim(pid, grid):
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    if gy == 1 and gz == 1:
        return pid[:1]
    if gz == 1:
        return pid[:2]
    return pid


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def randn(g: np.random.Generator, shape, dtype=np.float32) -> np.ndarray:
    return g.standard_normal(shape).astype(dtype)
