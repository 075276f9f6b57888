"""The pytest plugin that runs Triton's test_core.py on one backend (loaded with `-p parity.testcore.plugin`).

Environment: TESTCORE_BACKEND = `minitriton` (`minitriton.install()` first, so `import triton` is minitriton)
or `interpreter` (real Triton with TRITON_INTERPRET=1); TESTCORE_HELPERS = the path of Triton's
`_internal_testing.py` at the pinned commit, imported as `triton._internal_testing` for both backends (the
wheel's own copy belongs to a different commit); TESTCORE_TIMEOUT = seconds a single case may run (SIGALRM).

It provides what Triton's conftest.py files provide to test_core.py: the `device` fixture (`cpu`: both backends
run on the CPU), the `with_allocator` fixture and the `interpreter` marker.
"""
from __future__ import annotations

import gc
import importlib.util
import os
import signal
import sys
import types

import pytest

BACKEND = os.environ.get("TESTCORE_BACKEND", "minitriton")
HELPERS = os.environ.get("TESTCORE_HELPERS")
TIMEOUT = float(os.environ.get("TESTCORE_TIMEOUT", "0") or 0)


class CaseTimeout(Exception):
    """A test_core case ran past TESTCORE_TIMEOUT seconds."""


def _load_helpers():
    if BACKEND == "minitriton":
        import minitriton
        minitriton.install()
        if "triton.knobs" not in sys.modules:
            # The helpers import Triton's settings object (`from triton import knobs`) for GPU-only paths
            # (TMA support, fresh-knobs fixtures); minitriton's settings are `options()`, so an empty one stands in.
            sys.modules["triton.knobs"] = minitriton.knobs = types.ModuleType("triton.knobs")
    import triton
    if HELPERS:
        spec = importlib.util.spec_from_file_location("triton._internal_testing", HELPERS)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        triton._internal_testing = module


def pytest_configure(config):
    config.addinivalue_line("markers", "interpreter: indicate whether interpreter supports the test")
    config.addinivalue_line("markers", "enable_warmup: the case takes part in Triton's compile warm-up (GPU CI)")
    _load_helpers()


def pytest_collection_finish(session):
    # test_core collects ~8,300 cases: once they exist, keep them out of the garbage collector's full passes,
    # which would otherwise walk them all again and again while the cases run (both backends alike).
    gc.freeze()


@pytest.fixture
def device():
    return "cpu"


@pytest.fixture
def with_allocator():
    """Triton's fixture: the helpers' workspace allocator set for the case (in-kernel tensor descriptors), then
    none again (Triton's `NullAllocator`; minitriton's `set_allocator(None)`)."""
    import triton
    from triton._internal_testing import default_alloc_fn
    none = None if BACKEND == "minitriton" else importlib.import_module("triton.runtime._allocation").NullAllocator()
    triton.set_allocator(default_alloc_fn)
    try:
        yield
    finally:
        triton.set_allocator(none)


def _on_alarm(signum, frame):
    raise CaseTimeout(f"the case ran longer than {TIMEOUT:g} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if TIMEOUT <= 0:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
