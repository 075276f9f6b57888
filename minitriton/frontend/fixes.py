"""The suggestion of a diagnostic: a fix in the kernel's own terms, an edit of the user's own line read from the
kernel source (frontend.kernel_source) and checked against the launch's values where they decide it
(frontend.kernel_values). This module picks the fix by the record's kind: fix_bounds (out of bounds, int32
overflow, negative offsets, 2-D masks), fix_races (races), fix_axes (axis mix-ups, also found in the source
alone: `static_hint`). Where no edit is certain, the fix is said in general words, carries no edit and names
the reason."""
from __future__ import annotations

from minitriton.diagnostics import Diagnostic, Suggestion
from minitriton.diagnostics.catalogue import WORDS
from minitriton.diagnostics.render import suggestion_text
from minitriton.frontend import fix_axes, fix_bounds, fix_races
from minitriton.frontend.fix_axes import static_hint
from minitriton.frontend.fix_site import WORD_FIELDS

__all__ = ["suggest", "noted", "static_hint", "WORD_FIELDS"]

_GENERAL = {   # kind -> the suggestion said without reading the source
    "out_of_bounds": lambda r: "mask_bound_generic" if r.fields.get("masked") else "mask_tail_generic",
    "race": lambda r: "race_own_elements",
    "order_read": lambda r: "order_fix",
    "order_read_several": lambda r: "order_fix",
    "order_write": lambda r: "order_fix",
    "order_write_several": lambda r: "order_fix",
    "uninitialized": lambda r: "uninit_fix_generic",
    "no_tensor": lambda r: "pointer_from_argument",
    "misaligned": lambda r: "cast_aligned",
}

_COMPILE = {   # compile kind -> the fix read from the failing line, or None (then the record has no suggestion)
    "broadcast": lambda r: fix_axes.on_line(r.filename, r.line),
    "arange_power_of_two": lambda r: fix_axes.arange_block(r),
}


def suggest(record: Diagnostic, launch=None) -> Diagnostic:
    """Give `record` its suggestion (kept if it has one already); returns the record."""
    if record.suggestion is None and record.kind in _COMPILE and record.filename and record.line is not None:
        try:
            record.suggestion = _COMPILE[record.kind](record)
        except Exception:   # a source the analysis cannot read leaves Triton's error as it is
            record.suggestion = None
    if record.suggestion is not None or record.kind not in _GENERAL:
        return record
    specific = None
    try:
        if record.kind == "out_of_bounds":
            specific = fix_bounds.suggest(record, launch)
        elif record.kind == "race":
            specific = fix_races.suggest(record, launch)
    except Exception:   # a source the analysis cannot read must not hide the error itself: say it generally
        specific = None
    general = Suggestion(_GENERAL[record.kind](record), {"op": record.fields.get("call", "load")})
    if specific is None and record.kind in ("out_of_bounds", "race"):
        general.reason = "reason_no_source"
    record.suggestion = specific or general
    return record


def noted(exc: BaseException, launch=None) -> BaseException:
    """`exc` with its record's suggestion (`suggest`), said as a note where the English text is Triton's own:
    `str(exc)` keeps Triton's words with its reason last (tools compare that line), and a traceback shows the
    note under it."""
    record = suggest(exc.diagnostic, launch)
    if record.suggestion is not None and record.triton is not None:
        exc.add_note(f"  {WORDS['en']['label']['fix']}: {suggestion_text(record)}")
    return exc
