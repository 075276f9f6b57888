"""The exception a user sees for an error in a kernel: located at the kernel line, naming the program,
in Triton's layout where Triton reports it at compile time."""
from __future__ import annotations

import dis
import linecache
import os
import types

from minitriton import errors
from minitriton.frontend import fixes
from minitriton.values.programs import KERNEL_CODES

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
RUNPY_FILES = ("<frozen runpy>", os.path.join(os.path.dirname(os.__file__), "runpy.py"))


def user_frames(tb):
    """The traceback `tb` without minitriton's own frames (nor runpy's, under `python -m minitriton run`): the
    user's frames (the script up to the launch line, a grid callable, the kernel and its helpers, whose code
    minitriton compiled), outermost first; None when none is left."""
    kept = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code in KERNEL_CODES or not (code.co_filename.startswith(PACKAGE_DIR) or code.co_filename in RUNPY_FILES):
            kept.append(tb)
        tb = tb.tb_next
    return _rebuilt(kept)


def _rebuilt(entries):
    tb_next = None
    for tb in reversed(entries):
        # an entry may have no line (an instruction without one, as a signal can interrupt in 3.11)
        line = tb.tb_lineno if tb.tb_lineno is not None else tb.tb_frame.f_code.co_firstlineno
        tb_next = types.TracebackType(tb_next, tb.tb_frame, tb.tb_lasti, line)
    return tb_next


def kernel_frames(tb):
    """The traceback entries that are inside @jit functions, outermost first."""
    frames = []
    while tb is not None:
        jit_fn = KERNEL_CODES.get(tb.tb_frame.f_code)
        if jit_fn is not None:
            frames.append((tb, jit_fn))
        tb = tb.tb_next
    return frames


def _span(tb):
    """(line, column, end column or None) of the instruction a traceback entry stopped at."""
    code = tb.tb_frame.f_code
    try:
        line, end_line, col, end_col = list(code.co_positions())[tb.tb_lasti // 2]
        return (line or tb.tb_lineno), (col or 0), (end_col if end_line == line else None)
    except (AttributeError, IndexError, TypeError):
        return tb.tb_lineno, 0, None


def finalize(run, exc: BaseException, failing: int) -> BaseException:
    """The exception the user sees: located at the kernel line, naming the program."""
    frames = kernel_frames(exc.__traceback__)
    pid = run.pid_tuple(failing)
    if not frames:
        return exc
    tb, jit_fn = frames[-1]
    line, col, end_col = _span(tb)
    user_tb = _rebuilt([tb for tb, _ in frames])
    if isinstance(exc, errors.KernelRuntimeError):
        record = exc.diagnostic.located(jit_fn.__name__, jit_fn.file_name, line, col, end_col,
                                        linecache.getline(jit_fn.file_name, line) or None, pid)
        fixes.suggest(record, run)
        final = exc.kind(record)
        final.__cause__ = None
        return _located(final, jit_fn, line, col, pid).with_traceback(user_tb)
    if isinstance(exc, errors.CompilationError):
        if getattr(exc, "lineno", None) is None:
            _located(exc, jit_fn, line, col, None)
        return fixes.noted(exc, run)
    if isinstance(exc, errors.StaticAssertionFailed):
        record = _cause_record(exc, errors.compilation_text(jit_fn, line, col, str(exc)), "static_assert")
        if not record.fields.get("message"):   # no message: the statement that failed says it
            record.kind = "static_assert_bare"
            record.fields["statement"] = linecache.getline(jit_fn.file_name, line).strip()
        final = errors.CompileTimeAssertionFailure(record)
        final.__cause__ = None
        return _located(final, jit_fn, line, col, None).with_traceback(user_tb)
    if isinstance(exc, (AssertionError, ValueError, TypeError, NameError, NotImplementedError, IndexError,
                        AttributeError, ZeroDivisionError, RuntimeError, KeyError, OverflowError)):
        below = _frame_below(exc.__traceback__, tb)
        dunder = below is not None and below.tb_frame.f_code.co_name.startswith("__")
        message = repr(exc) if dunder or below is None or _at_operator(tb) else str(exc)
        final = errors.CompilationError(_cause_record(exc, errors.compilation_text(jit_fn, line, col, message)))
        final.__cause__ = exc
        final.error = exc
        return fixes.noted(_located(final, jit_fn, line, col, None), run).with_traceback(user_tb)
    return exc


def _cause_record(exc: BaseException, triton: str, kind: str = "compile_error"):
    """The record of the CompilationError a Python error `exc` in a kernel line becomes: the op's record (its
    kind and fields), else `kind` with Python's message; `triton` keeps Triton's layout text."""
    record = getattr(exc, "diagnostic", None) or _python_record(exc, kind)
    record.triton = triton
    return record


def _python_record(exc: BaseException, kind: str):
    """Python's own error in a kernel line: a name a module lacks (a misspelt `tl.` function) by its names,
    else `kind` with Python's message."""
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), types.ModuleType):
        return errors.diagnostic("module_attribute", module=exc.obj.__name__, name=exc.name)
    return errors.diagnostic(kind, message=str(exc) or type(exc).__name__)


def interrupted(run, exc: KeyboardInterrupt, pids) -> KeyboardInterrupt:
    """A KeyboardInterrupt that came while programs `pids` (linear ids) of `run` ran: a KernelInterrupted
    (still a KeyboardInterrupt) whose record says where the kernel was: its line and the programs running."""
    frames = kernel_frames(exc.__traceback__)
    shown = [run.pid_tuple(p) for p in pids[:8]]
    record = errors.diagnostic("stopped", programs=[run.pid_tuple(p) for p in pids], count=len(pids))
    tb, jit_fn = frames[-1] if frames else (None, run.kernel)   # between two passes: no kernel line
    line, col, end_col = _span(tb) if tb else (None, None, None)
    record.located(jit_fn.__name__, jit_fn.file_name, line, col, end_col,
                   linecache.getline(jit_fn.file_name, line) or None if line else None, shown[0])
    return errors.KernelInterrupted(record).with_traceback(_rebuilt([tb for tb, _ in frames]) or exc.__traceback__)


_OPERATOR_OPS = frozenset(op for op, name in enumerate(dis.opname)
                          if name in ("BINARY_OP", "COMPARE_OP", "BINARY_SUBSCR", "UNARY_NEGATIVE", "UNARY_INVERT",
                                      "UNARY_NOT", "CONTAINS_OP") or name.startswith("BINARY_"))


def _at_operator(tb) -> bool:
    """Whether the kernel line failed in an operator (`p < q`, `x // y`, `x[i]`) rather than a call. Triton's
    code generator shows an operator's error as `repr(e)` (its `visit` wrapper), a builtin call's as `str(e)`."""
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] in _OPERATOR_OPS


def _located(exc, jit_fn, line, col, pid):
    """Attach where the error happened, for tools (the sandbox points at the line and the program); the record
    (`exc.diagnostic`) says it too."""
    record = getattr(exc, "diagnostic", None)
    if record is not None and record.line is None:
        record.located(jit_fn.__name__, jit_fn.file_name, line, col, None,
                       linecache.getline(jit_fn.file_name, line) or None, pid)
    exc.kernel = jit_fn.__name__
    exc.filename = jit_fn.file_name
    exc.lineno = line
    exc.col = col
    exc.program = pid
    return exc


def _frame_below(tb, target):
    while tb is not None:
        if tb is target:
            return tb.tb_next
        tb = tb.tb_next
    return None
