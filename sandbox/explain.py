"""An exception from the learner's code as the page's Error: the text of its diagnostic record
(minitriton.diagnostics, rendered for the page in the page's language), where it happened (line, program), and
the record itself, so the page can show the span, the lanes and an applicable fix.

Every minitriton error carries its record. Python's own exceptions from host code carry none: a SyntaxError or
a NameError gets a record of minitriton's kind for it here (one text per concept), a Stop outside any launch
says the line it stopped at, and any other exception is named with its line. Nothing here reads a message.
"""
from __future__ import annotations

import dataclasses
import traceback

from minitriton.diagnostics import Diagnostic, render

from . import messages as M


def error_info(exc: BaseException, filename: str, lang: str) -> dict:
    """The Error dict for `exc` raised by the learner's module `filename`."""
    kind = "KeyboardInterrupt" if isinstance(exc, KeyboardInterrupt) else type(exc).__name__   # Stop, one name
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    record = record_of(exc, filename, frames)
    if record is not None:
        mine = record.filename in (None, filename)
        line, col = (record.line, record.col) if mine else (None, None)
        message, program = render(record, lang, "page"), record.program
    else:
        line = frames[-1].lineno if frames else None
        col = getattr(frames[-1], "colno", None) if frames else None
        message, program = _unrecorded(exc, kind, line, bool(frames), lang), None
    error = {"type": kind, "message": message, "line": line, "col": col, "program": None, "program_text": None,
             "traceback": _traceback(exc, kind, frames, record, lang),
             "diagnostic": record.to_json() if record is not None else None}
    if program is not None:
        error["program_text"] = M.program(program)
        error["program"] = (list(int(p) for p in program) + [0, 0, 0])[:3]
    return error


def record_of(exc: BaseException, filename: str, frames: list) -> Diagnostic | None:
    """The exception's record, located at the learner's last frame when it says no line of its own; for
    Python's SyntaxError and NameError, a record of minitriton's kind made here."""
    record = getattr(exc, "diagnostic", None)
    if not isinstance(record, Diagnostic):
        record = _host_record(exc, filename, frames)
    elif record.line is None and frames:
        record = dataclasses.replace(record, filename=filename, line=frames[-1].lineno, source=frames[-1].line)
    return record


def _host_record(exc: BaseException, filename: str, frames: list) -> Diagnostic | None:
    if isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno is not None:
        col = exc.offset - 1 if exc.offset else None
        end = exc.end_offset - 1 if getattr(exc, "end_offset", None) and exc.end_lineno == exc.lineno else None
        return Diagnostic("syntax_error", {"message": exc.msg}, filename=filename, line=exc.lineno, col=col,
                          end_col=end, source=exc.text)
    if isinstance(exc, NameError) and getattr(exc, "name", None) and frames:
        last = frames[-1]
        return Diagnostic("name_error", {"name": exc.name}, filename=filename, line=last.lineno,
                          col=getattr(last, "colno", None), end_col=getattr(last, "end_colno", None),
                          source=last.line, names=(exc.name,))
    return None


def _unrecorded(exc: BaseException, kind: str, line, ours: bool, lang: str) -> str:
    """The text of an exception without a record: a Stop, or Python's own error in the learner's code."""
    if isinstance(exc, KeyboardInterrupt):
        return M.say("stopped_at", lang, line=line) if line is not None else M.say("stopped", lang)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else kind
    if ours and line is not None:
        return M.say("host_error", lang, type=kind, line=line, message=message)
    return M.say("internal_error", lang, message=f"{kind}: {message}")


def _traceback(exc: BaseException, kind: str, frames: list, record, lang: str) -> str:
    """The learner's frames in the page's language, then the error: its record for a terminal (which quotes
    the failing line itself, so the last frame gives only its place), or Python's own last line."""
    shown = [M.say("traceback_frame", lang, file=f.filename, line=f.lineno, name=f.name) + "\n"
             + (f"    {f.line.strip()}\n" if f.line else "") for f in frames]
    if record is None:
        return "".join(shown) + "".join(traceback.format_exception_only(type(exc), exc))
    if shown and record.source:
        shown[-1] = shown[-1].splitlines(keepends=True)[0]
    return "".join(shown) + f"{kind}: {render(record, lang, 'terminal')}\n"
