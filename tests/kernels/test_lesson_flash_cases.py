"""The lesson's test_flash.py cases, run against OUR flash kernel (kernels.flash_attention) on minitriton.

The lesson's file is read from $LESSON (default ../shared/seed/lesson, beside the repository), never copied. Its
`from flash_triton import flash_attention` is served by a stand-in module exposing ours, and it runs as
under `python -m minitriton run -m pytest test_flash.py`: TRITON_INTERPRET=1 (so the file picks torch CPU
tensors in float32 with its 1e-4 tolerance) and TRITON_F32_DEFAULT=ieee (the interpreter's exact fp32 dot,
which that tolerance assumes).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

import minitriton

minitriton.install()  # before the kernels import `triton` (idempotent; conftest does it too)

pytest.importorskip("torch")

from kernels import flash_attention as fa  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LESSON_DIR = Path(os.environ.get("LESSON") or REPO.parent / "shared" / "seed" / "lesson").resolve()
LESSON_TEST = LESSON_DIR / "test_flash.py"


def _load_lesson():
    """Import the lesson's test module with `flash_triton` standing for kernels.flash_attention."""
    if not LESSON_TEST.exists():
        pytest.skip(f"the lesson is not at {LESSON_TEST.parent} (set LESSON=...)", allow_module_level=True)
    shim = types.ModuleType("flash_triton")
    shim.flash_attention = fa.flash_attention
    saved = {name: sys.modules.get(name) for name in ("flash_triton",)}
    old_env = os.environ.get("TRITON_INTERPRET")
    sys.modules["flash_triton"] = shim
    os.environ["TRITON_INTERPRET"] = "1"  # read once, at import: DEVICE = "cpu"
    try:
        spec = importlib.util.spec_from_file_location("lesson_test_flash", LESSON_TEST)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod
        if old_env is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = old_env
    return module


LESSON = _load_lesson()


def _lesson_cases(fn):
    """The (arg names, values) of the lesson's stacked @pytest.mark.parametrize marks, as a list of dicts."""
    cases = [{}]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        cases = [dict(c, **dict(zip(names, v if len(names) > 1 else (v,)))) for c in cases for v in values]
    return cases


@pytest.fixture(autouse=True)
def _as_minitriton_run(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")


def test_lesson_file_uses_our_kernel_on_the_cpu():
    assert LESSON.flash_attention is fa.flash_attention
    assert LESSON.DEVICE == "cpu" and str(LESSON.DTYPE) == "torch.float32" and LESSON.TOL == 1e-4


@pytest.mark.parametrize("case", _lesson_cases(LESSON.test_matches_sdpa), ids=lambda c: "-".join(
    f"{k}={v}" for k, v in c.items()))
def test_matches_sdpa(case):
    LESSON.test_matches_sdpa(**case)


def test_lesson_parametrization_was_read():
    cases = _lesson_cases(LESSON.test_matches_sdpa)
    assert {c["T"] for c in cases} == {64, 100, 257} and {c["causal"] for c in cases} == {False, True}


def test_logsumexp():
    LESSON.test_logsumexp()
