"""Diagnostics as data: `Diagnostic` records, their suggestions as `Edit`s of the user's source, and the
renderers that turn a record into text in English or Russian, for a terminal or the sandbox page."""
from minitriton.diagnostics.record import Diagnostic, Edit, Runs, Suggestion
from minitriton.diagnostics.render import render

__all__ = ["Diagnostic", "Edit", "Runs", "Suggestion", "render"]
