"""The suggestion of a diagnostic: a fix in the kernel's own terms, read from the kernel source at the
failing line. This module picks the suggestion by the record's kind; where the source says nothing more, the
fix is said in general words and carries no edit."""
from __future__ import annotations

from minitriton.diagnostics import Diagnostic, Suggestion

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


def suggest(record: Diagnostic, launch=None) -> Diagnostic:
    """Give `record` its suggestion (kept if it has one already); returns the record."""
    if record.suggestion is None and record.kind in _GENERAL:
        record.suggestion = Suggestion(_GENERAL[record.kind](record), {"op": record.fields.get("call", "load")})
    return record
