"""pytest plugin for the test suite inside Pyodide (wasm32): what the platform cannot do is a skip, with why.

Emscripten starts no processes and no threads. A test that starts one (a fresh interpreter for an import
check, Triton's interpreter as an oracle, the lab server) is skipped at that moment with the reason, instead
of failing with "OSError: [Errno 138] emscripten does not support processes" or "can't start new thread".
Everything else runs as under CPython. Used by web/tests-wasm32/pytest.test.mjs:

    node web/pyodide-node.mjs --test-tools -m pytest -p wasm32_pytest_plugin tests ...
"""
from __future__ import annotations

import subprocess
import sys
import threading

import pytest

NO_PROCESSES = "needs a subprocess, which wasm32 (Emscripten) cannot start"
NO_THREADS = "needs a thread, which wasm32 (Emscripten) cannot start"


def _refuse(reason):
    def refuse(*args, **kwargs):
        raise pytest.skip.Exception(reason, allow_module_level=True)
    return refuse


def pytest_configure(config):
    if sys.platform != "emscripten":
        raise pytest.UsageError("wasm32_pytest_plugin is for the test suite inside Pyodide only")
    subprocess.Popen.__init__ = _refuse(NO_PROCESSES)
    threading.Thread.start = _refuse(NO_THREADS)


def pytest_report_header(config):
    import numpy
    import platform
    return f"wasm32 (Pyodide): Python {platform.python_version()} on {sys.platform}, numpy {numpy.__version__}, " \
           f"np.intp = {numpy.dtype(numpy.intp).name}"
