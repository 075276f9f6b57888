"""The course's exercises, in the order the page lists them. Each module defines one `EXERCISE`
(see `_base.Exercise`)."""
from __future__ import annotations

from . import (copy, dropout, flash_attention, matmul, matmul_act, outer, practice, rmsnorm, rmsnorm_bwd, row_stats,
               softmax_bwd, strided_copy, transpose)

_MODULES = (copy, strided_copy, transpose, outer, row_stats, practice, softmax_bwd, rmsnorm, rmsnorm_bwd, matmul,
            matmul_act, dropout, flash_attention)
EXERCISES = tuple(sorted((m.EXERCISE for m in _MODULES), key=lambda ex: ex.order))
_BY_ID = {ex.id: ex for ex in EXERCISES}


def get(exercise_id):
    """The exercise with this id, or None."""
    return _BY_ID.get(exercise_id) if isinstance(exercise_id, str) else None
