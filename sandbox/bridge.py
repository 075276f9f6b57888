"""The one entry point the page calls: `handle(op, request_json) -> response_json`. It never raises.

Ops (each request may carry "lang": "ru" | "en"; Russian by default):
  exercises {}                                     -> {"exercises": [{id, title, statement, starter, starter_hash,
                                                       hints, hint_texts, tests, ...}]}
  solutions {}                                     -> {"solutions": {id: code}} (a file of the built site, so
                                                       Solution works while Python is not up)
  run       {exercise, code}                       -> {ok, stdout, error, launches, seconds}
  check     {exercise, code}                       -> {passed, tests: [{id, name, passed, message, tolerance, fix?}],
                                                       stdout, error, launches, seconds} (fix: the suggestion a
                                                       failed test's diagnosis found in the source)
  hint      {exercise, index}                      -> {hint, index, total}
  solution  {exercise}                             -> {code}
  memory    {exercise, code, source, launch, grid} -> {source, launch_index, launches, launch, tensors: {name: {shape,
                                                       strides, dtype, itemsize}}, programs: [{program, linear,
                                                       tensors: {name: {loaded, stored, atomic}}, counters}],
                                                       traced, traffic, stdout, seconds} (offsets as runs; a
                                                       launch that failed: launch.error, the failing program
                                                       marked "failed" with its `outside` lanes)
  gpu       {exercise, code}                       -> {available: false, reason} here; the lab server answers it
Failures become {"error": Error}, Error = {type, message, line, col, program, traceback} (+ program_text,
diagnostic): the line is in the learner's code, the program is [x, y, z] and program_text writes it as the
messages do ("96" on a 1-D grid, "(0, 5)" on a 2-D one); `diagnostic` is minitriton's record of the error
(Diagnostic.to_json(): the span, the lanes, the suggestion and its edit), null for Python's own errors.
The page's Stop (a KeyboardInterrupt) ends the op with an Error of type "KeyboardInterrupt" that says where
the code was.

The learner's code runs as a module named "<exercise>.py" (registered with linecache, so @triton.jit can read
its source and errors can quote it) in which `import triton` / `import triton.language` resolve to minitriton.
Nothing is installed into sys.modules, so a process may hold real Triton too (the lab's GPU run). NumPy and
the standard library only, no threads: this runs in Pyodide.
"""
from __future__ import annotations

import builtins
import contextlib
import hashlib
import io
import json
import linecache
import os
import time
import traceback
import types

import numpy as np

import minitriton
from minitriton.picture import data as picture_data

from . import explain, memory_picture
from . import messages as M
from .exercises import EXERCISES, get as get_exercise
from .exercises._base import Fail, Session

STDOUT_LIMIT = 20_000
OPS = ("exercises", "solutions", "run", "check", "hint", "solution", "memory", "gpu")


class RequestError(Exception):
    """A malformed request: unknown exercise or op, a missing field."""


# ---------------------------------------------------------------- the entry points

def handle(op: str, request_json: str) -> str:
    """JSON in, JSON out; never raises (a KeyboardInterrupt from the page's Stop that comes between ops
    excepted)."""
    try:
        request = json.loads(request_json) if request_json else {}
        if not isinstance(request, dict):
            raise ValueError("the request must be a JSON object")
    except ValueError as exc:
        return dumps({"error": _error("BadRequest", M.say("bad_request", "ru", message=str(exc)))})
    try:
        result = dispatch(op, request)
    except Exception as exc:  # the page must always get an answer
        result = {"error": {"type": type(exc).__name__, "message": str(exc), "line": None, "col": None,
                            "program": None, "traceback": traceback.format_exc(limit=-3)}}
    return dumps(result)


def dumps(result: dict) -> str:
    try:
        return json.dumps(result, ensure_ascii=False, allow_nan=False, default=_jsonable)
    except ValueError:   # a NaN or inf slipped into the counters: JSON has no such numbers
        return json.dumps(_finite(result), ensure_ascii=False, default=_jsonable)


def dispatch(op: str, request: dict) -> dict:
    """The dict-level API under `handle` (what the tests and the lab server call)."""
    lang = M.lang_of(request)
    try:
        if op == "exercises":
            return {"exercises": [describe(ex, lang) for ex in EXERCISES]}
        if op == "solutions":
            return {"solutions": {ex.id: ex.solution[lang] for ex in EXERCISES}}
        if op not in OPS:
            raise RequestError(M.say("unknown_op", lang, op=op, known=", ".join(OPS + ("stop",))))
        ex = _exercise(request, lang)
        if op == "hint":
            return hint(ex, request, lang)
        if op == "solution":
            return {"code": ex.solution[lang]}
        if op == "gpu":
            return {"available": False, "reason": M.say("gpu_only_lab", lang)}
        code = request.get("code")
        if not isinstance(code, str):
            raise RequestError(M.say("bad_request", lang, message="`code` must be a string"))
        if op == "run":
            return run(ex, code, lang)
        if op == "check":
            return check(ex, code, lang)
        return memory(ex, code, request, lang)
    except RequestError as exc:
        return {"error": {"type": "BadRequest", "message": str(exc), "line": None, "col": None, "program": None,
                          "traceback": ""}}


def describe(ex, lang: str) -> dict:
    hints = hint_list(ex)
    return {"id": ex.id, "title": ex.title[lang], "statement": ex.statement[lang], "starter": ex.starter[lang],
            "starter_hash": starter_hash(ex), "hints": len(hints), "hint_texts": [h[lang] for h in hints],
            "tests": [t.title[lang] for t in ex.tests], "test_ids": [t.id for t in ex.tests],
            "tolerances": [(t.tolerance or {}).get(lang) for t in ex.tests],
            "kernels": {name: list(params) for name, params in ex.kernels.items()}}


def hint_list(ex) -> list:
    """The exercise's hints, each {"ru", "en"}, in the order they are revealed (one hint alone counts as a list)."""
    return [ex.hints] if isinstance(ex.hints, dict) else list(ex.hints)


def starter_hash(ex) -> str:
    """A name for the starter in every language at once: saved code remembers it, and a new one means the starter
    changed (not the page's language)."""
    text = "\0".join(ex.starter[lang] for lang in M.LANGS)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _exercise(request: dict, lang: str):
    ex = get_exercise(request.get("exercise"))
    if ex is None:
        raise RequestError(M.say("unknown_exercise", lang, id=request.get("exercise"),
                                 known=", ".join(e.id for e in EXERCISES)))
    return ex


def hint(ex, request: dict, lang: str) -> dict:
    hints = hint_list(ex)
    index = request.get("index", 0)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(hints):
        raise RequestError(M.say("bad_hint", lang, index=index, total=len(hints)))
    return {"hint": hints[index][lang], "index": index, "total": len(hints)}


# ---------------------------------------------------------------- run, check, memory

def run(ex, code: str, lang: str) -> dict:
    """Run the module as __main__ (its own demo code included), then the exercise's demo."""
    started = time.perf_counter()
    out = Capture()
    error = None
    with _op(out):
        try:
            mod = load(ex, code, as_main=True)
            ex.demo(mod, lang)
        except Fail as f:
            error = _error("ExerciseError", str(f))
        except (Exception, KeyboardInterrupt) as exc:
            error = error_info(exc, ex, lang)
    return {"ok": error is None, "stdout": out.text(lang), "error": error, "launches": _launches(),
            "seconds": round(time.perf_counter() - started, 4)}


def check(ex, code: str, lang: str) -> dict:
    """Every test of the exercise on fresh inputs; messages in kernel terms."""
    started = time.perf_counter()
    out = Capture()
    results = []
    first_error = None
    with _op(out):
        try:
            mod = load(ex, code, as_main=False)
        except (Exception, KeyboardInterrupt) as exc:
            first_error = error_info(exc, ex, lang)
            message = M.say("module_failed", lang, message=first_error["message"])
            results = [_result(t, lang, False, message) for t in ex.tests]
        else:
            for test in ex.tests:
                Session.label = test.id
                Session.counters = test.counters
                Session.fix = None
                try:
                    passed, message = test.fn(mod, lang)
                except Fail as f:
                    passed, message = False, str(f)
                except KeyboardInterrupt as exc:      # Stop: the tests after this one do not run
                    first_error = error_info(exc, ex, lang)
                    results.append(_result(test, lang, False, first_error["message"]))
                    break
                except Exception as exc:
                    info = error_info(exc, ex, lang)
                    first_error = first_error or info
                    passed, message = False, info["message"]
                results.append(_result(test, lang, bool(passed), message, Session.fix))
    return {"passed": all(r["passed"] for r in results), "tests": results, "stdout": out.text(lang),
            "error": first_error, "launches": _launches(), "seconds": round(time.perf_counter() - started, 4)}


def _result(test, lang, passed, message, fix=None):
    """A test's result; a failed one carries the fix its diagnosis found (a suggestion, as JSON) when any."""
    result = {"id": test.id, "name": test.title[lang], "passed": passed, "message": message,
              "tolerance": (test.tolerance or {}).get(lang)}
    if fix is not None and not passed:
        result["fix"] = fix.to_json()
    return result


def memory(ex, code: str, request: dict, lang: str) -> dict:
    """One launch of the last Run or Check again, every program traced: the page's memory picture
    (sandbox/memory_picture.py). The launch is named by its source ("run" or "check"), its index among that
    source's launches and its grid."""
    started = time.perf_counter()
    source, which, grid = request.get("source", "run"), request.get("launch", 0), request.get("grid")
    if source not in ("run", "check"):
        raise RequestError(M.say("bad_request", lang, message="`source` must be \"run\" or \"check\""))
    if not isinstance(which, int) or isinstance(which, bool) or which < 0:
        raise RequestError(M.say("bad_request", lang, message="`launch` must be an int >= 0"))
    if (not isinstance(grid, list) or not 1 <= len(grid) <= 3
            or not all(isinstance(g, int) and not isinstance(g, bool) and g >= 1 for g in grid)):
        raise RequestError(M.say("bad_request", lang, message="`grid` must be a list of 1 to 3 ints >= 1"))
    out = Capture()
    error = None
    with _op(out), memory_picture.trace_launch(which, grid) as tracer:
        try:
            if source == "run":
                ex.demo(load(ex, code, as_main=True), lang)
            else:
                mod = load(ex, code, as_main=False)
                for test in ex.tests:                  # as Check runs them, until the launch is made
                    Session.label, Session.counters = test.id, test.counters
                    try:
                        test.fn(mod, lang)
                    except Exception:                   # a failing test made its launches all the same
                        pass
                    if len(Session.launches) > which:
                        break
        except Fail as f:
            error = _error("ExerciseError", str(f))
        except (Exception, KeyboardInterrupt) as exc:
            error = error_info(exc, ex, lang)
        kept = list(Session.launches)
    count = len(kept)
    if tracer.record is None or which >= count:
        return {"error": error or _error("BadRequest", M.say("no_launch", lang, launch=which + 1, count=count)),
                "stdout": out.text(lang)}
    record = {**tracer.record, **{k: v for k, v in kept[which].items() if k == "test"}}   # the copy kept names it
    return {"source": source, "launch_index": which, "launches": count, **picture_data.picture(record),
            "traced": len(record.get("trace", [])), "stdout": out.text(lang),
            "seconds": round(time.perf_counter() - started, 4)}


def _launches():
    return [{k: v for k, v in r.items() if not (k == "trace" and not v)} for r in Session.launches]


# ---------------------------------------------------------------- the learner's module

def load(ex, code: str, as_main: bool):
    """Execute `code` as the module "<exercise>.py"; `import triton` gives minitriton."""
    filename = f"{ex.id}.py"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    mod = types.ModuleType("__main__" if as_main else f"sandbox_{ex.id}")
    mod.__file__ = filename
    mod.__dict__["__builtins__"] = _BUILTINS
    exec(compile(code, filename, "exec"), mod.__dict__)
    return mod


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and (name == "triton" or name.startswith("triton.")):
        name = "minitriton" + name[len("triton"):]
    return builtins.__import__(name, globals, locals, fromlist, level)


_BUILTINS = dict(builtins.__dict__)
_BUILTINS["__import__"] = _import


class Capture(io.TextIOBase):
    """stdout and stderr of an op, kept up to STDOUT_LIMIT characters."""

    def __init__(self):
        self.parts, self.size, self.cut = [], 0, False

    def writable(self):
        return True

    def write(self, s):
        if self.size < STDOUT_LIMIT:
            keep = s[: STDOUT_LIMIT - self.size]
            self.parts.append(keep)
            self.size += len(keep)
            self.cut = self.cut or len(keep) < len(s)
        elif s:
            self.cut = True
        return len(s)

    def text(self, lang: str) -> str:
        text = "".join(self.parts)
        return text + M.say("stdout_cut", lang, n=M.num(STDOUT_LIMIT, lang)) if self.cut else text


@contextlib.contextmanager
def _op(out: Capture, trace=()):
    """One op's surroundings: captured output, fresh launch list, the sanitizers on (races and order-dependent
    reads are reported like out-of-bounds accesses), and fp32 `tl.dot` at the GPU's default (TF32) whatever
    TRITON_F32_DEFAULT the host process has (so Check grades the same everywhere)."""
    Session.reset(trace)
    saved = os.environ.pop("TRITON_F32_DEFAULT", None)
    try:
        with minitriton.set_options(sanitize=True, f32_default="tf32"), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(out), np.errstate(all="ignore"):
            yield
    finally:
        if saved is not None:
            os.environ["TRITON_F32_DEFAULT"] = saved
        Session.label = None


# ---------------------------------------------------------------- errors: their records, for the page

def _error(type_: str, message: str) -> dict:
    return {"type": type_, "message": message, "line": None, "col": None, "program": None, "traceback": ""}


def error_info(exc: BaseException, ex, lang: str) -> dict:
    """The Error dict for an exception from the learner's code (sandbox.explain)."""
    return explain.error_info(exc, f"{ex.id}.py", lang)


# ---------------------------------------------------------------- JSON

def _jsonable(v):
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def _finite(v):
    if isinstance(v, float) and not np.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v
