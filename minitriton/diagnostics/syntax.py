"""The record of a Python syntax error in the user's file: Python raises it before any kernel runs, so no op
makes it; tools (the sandbox) turn the SyntaxError into this record to render it like the others."""
from __future__ import annotations

from minitriton.diagnostics.record import Diagnostic


def syntax_diagnostic(exc: SyntaxError) -> Diagnostic:
    """Kind syntax_error with Python's message, where it is (line, the span's columns) and the line's text."""
    col = (exc.offset or 1) - 1
    end = (exc.end_offset or 0) - 1 if exc.end_lineno in (None, exc.lineno) else None
    record = Diagnostic("syntax_error", {"message": exc.msg})
    return record.located(None, exc.filename, exc.lineno, col, end if end and end > col else None, exc.text)
