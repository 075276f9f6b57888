"""The exercise sandbox's Python side: exercises with hidden reference solutions and tests, and the bridge the
page calls (`sandbox.bridge.handle(op, json) -> json`), in Pyodide or in the lab server (`sandbox.server`,
CPython only, started by `python -m sandbox`).

`bridge` and `exercises` use NumPy, the standard library and minitriton only (no threads, subprocesses or
signals), so the same code runs in the browser and under pytest.
"""
from __future__ import annotations

__all__ = ["bridge", "exercises", "messages"]
