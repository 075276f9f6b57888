"""The corpus: every case of the `cases_<project>` modules, registered as they are imported."""
from __future__ import annotations

from parity.corpus import cases_fla, cases_liger, cases_mamba, cases_unsloth  # noqa: F401 - they register
from parity.corpus.case import CASES

CASE_BY_NAME = {c.name: c for c in CASES}
