"""What an exercise is, and how its tests launch the learner's kernels: with traffic counters, or quietly (a
diagnosis re-running a kernel to find the cause of a failure), or tracing every program (a test of which
elements each program touched). NumPy + stdlib + minitriton: this runs in Pyodide too.

A test is `fn(mod, lang) -> (passed, message)`; it may also raise. `Fail(message)` is a friendly failure;
any other exception (an `OutOfBoundsError` from the kernel, a `CompilationError`, ...) becomes its diagnostic
record's text in the page's language (sandbox.explain), which also points the editor at the line and the
program.
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import minitriton
import minitriton.language as tl

from .. import messages as M
from ._checks import filled, unwritten  # noqa: F401  (the bridge and the lab server take them from here)


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
    functions: dict = field(default_factory=dict)  # host function name -> parameter names the tests call it with
    needs: tuple = ()                         # tl functions the exercise needs beyond the basics ("rand",)


def t(ru: str, en: str) -> dict:
    """A text in both languages."""
    return {"ru": ru, "en": en}


def available(ex: Exercise) -> bool:
    """Whether this minitriton has every tl function the exercise needs."""
    return all(hasattr(tl, name) for name in ex.needs)


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
    """The launches of the current op (tests and demos append here), the programs to trace, and the fix a
    failing test's diagnosis found in the kernel source (a minitriton Suggestion; the bridge sends it along
    with the test's result)."""

    launches: list = []
    trace_programs: list = []
    label: str | None = None
    counters: bool = True
    fix = None

    @classmethod
    def reset(cls, trace_programs=()):
        cls.launches = []
        cls.trace_programs = list(trace_programs)
        cls.label = None
        cls.counters = True
        cls.fix = None


@contextlib.contextmanager
def quietly():
    """Launches inside are not recorded: a diagnosis re-running the kernel leaves the Check's counters alone."""
    saved = Session.counters
    Session.counters = False
    try:
        yield
    finally:
        Session.counters = saved


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


def function(mod, name: str, params, lang: str):
    """The learner's host function `name` (a plain Python function that launches a kernel)."""
    obj = getattr(mod, name, None)
    if not callable(obj) or isinstance(obj, minitriton.KernelInterface):
        raise Fail(M.say("missing_function", lang, name=name, params=", ".join(params)))
    return obj


def _base_names(obj):
    fn = getattr(obj, "fn", None)
    return getattr(fn, "arg_names", []) if fn is not None else []


def launch(kern, grid, *args, trace_all: bool = False, **kwargs) -> dict | None:
    """kern[grid](*args, **kwargs) under a traffic recording; returns the launch record (also kept in Session).

    Without `Session.counters` (a test that only compares values, or a diagnosis) the launch runs unrecorded:
    the counters' bookkeeping costs more than the kernel itself in the larger tests, and it returns None.
    `trace_all`: the record also holds, per program, the offsets it loaded and stored ("trace"), for the
    tests of which elements each program touched; the copy kept for the page leaves them out.
    """
    if not Session.counters:
        kern[grid](*args, **kwargs)
        return None
    programs = list(np.ndindex(*_grid3(grid))) if trace_all else Session.trace_programs
    with minitriton.record(trace_programs=programs) as rec, _kept(rec, trace_all):
        kern[grid](*args, **kwargs)
    return rec.launches[-1] if rec.launches else None


@contextlib.contextmanager
def _kept(rec, trace_all: bool = False):
    """The launches recorded in `rec` join Session.launches, a failed one too (recorded up to its failure)."""
    try:
        yield
    finally:
        for r in rec.launches:
            kept = {k: v for k, v in r.items() if k != "trace"} if trace_all else r
            if Session.label:
                kept["test"] = Session.label
            Session.launches.append(kept)


def traced(kern, grid, *args, **kwargs) -> dict | None:
    """kern[grid](...) with every program traced, for a diagnosis: the record is returned, not kept for the page."""
    with minitriton.record(trace_programs=list(np.ndindex(*_grid3(grid)))) as rec:
        kern[grid](*args, **kwargs)
    return rec.launches[-1] if rec.launches else None


def call_host(fn, *args, **kwargs):
    """fn(*args, **kwargs) for a learner's host function that launches kernels itself; returns (its result, the
    launch records it made), recorded like `launch` does."""
    if not Session.counters:
        return fn(*args, **kwargs), []
    with minitriton.record(trace_programs=Session.trace_programs) as rec, _kept(rec):
        result = fn(*args, **kwargs)
    return result, list(rec.launches)


def _grid3(grid) -> tuple:
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    return tuple(int(g) for g in grid) + (1,) * (3 - len(grid))


class Numpy:
    """The emulator's arrays: NumPy in and out (the GPU run swaps in torch CUDA tensors)."""

    name = "minitriton"

    @staticmethod
    def put(a: np.ndarray):
        return a

    @staticmethod
    def get(a) -> np.ndarray:
        return np.asarray(a)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def randn(g: np.random.Generator, shape, dtype=np.float32) -> np.ndarray:
    return g.standard_normal(shape).astype(dtype)


def next_pow2(n: int) -> int:
    """triton.next_power_of_2."""
    return 1 << max(0, (int(n) - 1).bit_length())
