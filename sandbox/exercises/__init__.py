"""The course's exercises, in order. Each module defines one `EXERCISE` (see `_base.Exercise`).

`COURSE` holds every exercise; `EXERCISES`, what the page lists and the bridge serves, leaves out those this
minitriton cannot run yet (dropout needs `tl.rand`), so each appears as soon as what it needs is there.
"""
from __future__ import annotations

from . import (copy, dropout, flash_attention, matmul, matmul_act, outer, practice, rmsnorm, rmsnorm_bwd, row_stats,
               softmax_bwd, strided_copy, transpose)
from ._base import available

_MODULES = (copy, strided_copy, transpose, outer, row_stats, practice, softmax_bwd, rmsnorm, rmsnorm_bwd, matmul,
            matmul_act, dropout, flash_attention)
COURSE = tuple(sorted((m.EXERCISE for m in _MODULES), key=lambda ex: ex.order))
EXERCISES = tuple(ex for ex in COURSE if available(ex))
_BY_ID = {ex.id: ex for ex in EXERCISES}


def get(exercise_id):
    """The exercise with this id among those served, or None."""
    return _BY_ID.get(exercise_id) if isinstance(exercise_id, str) else None
