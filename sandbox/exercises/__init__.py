"""The exercises, in the order the page lists them. Each module defines one `EXERCISE` (see `_base.Exercise`)."""
from __future__ import annotations

from . import flash_attention, practice, rmsnorm, softmax_bwd

EXERCISES = tuple(sorted((m.EXERCISE for m in (practice, rmsnorm, softmax_bwd, flash_attention)),
                         key=lambda ex: ex.order))
_BY_ID = {ex.id: ex for ex in EXERCISES}


def get(exercise_id):
    """The exercise with this id, or None."""
    return _BY_ID.get(exercise_id) if isinstance(exercise_id, str) else None
