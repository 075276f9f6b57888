"""Shared test set-up: hypothesis profiles, options restored after every test, the one-program-per-pass
fixture. Helpers live in tests/helpers/ (this directory is on sys.path: `from helpers.kernels import ...`)."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

import minitriton

# `dev` for local runs; `ci` (chosen when CI=true) is reproducible: derandomized, no deadline.
settings.register_profile("dev", deadline=None, max_examples=50)
settings.register_profile("ci", deadline=None, derandomize=True, max_examples=50)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")

@pytest.fixture(autouse=True)
def _options_restored_after_each_test():
    """Every test starts and ends with the options it found (a test may call minitriton.set_options)."""
    with minitriton.set_options():
        yield


@pytest.fixture
def group_size_one():
    """Run every program in its own pass (minitriton.set_options(group_size=1)), restoring the old value."""
    old = minitriton.options().group_size
    minitriton.set_options(group_size=1)
    try:
        yield
    finally:
        minitriton.set_options(group_size=old)
