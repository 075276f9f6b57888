"""`triton.profiler` (Proton) after `minitriton.install()`: sessions, scopes and the hatchet file they write.

    import triton.profiler as proton
    session = proton.start("matmul", hook="triton")   # writes matmul.hatchet at finalize()
    with proton.scope("fp16", {"flops16": 2 * M * N * K}):
        matmul(a, b)
    proton.finalize()

Proton's API as scripts use it: `start(name, context=, data=, backend=, mode=, hook=)`, `activate(session)`,
`deactivate(session)`, `finalize(session, output_format)`, `profile` (decorator), `scope(name, metrics)` as a
context manager and a decorator, `cpu_timed_scope`, `enter_scope`/`exit_scope`. The file is Proton's tree in
hatchet JSON: `[root, {}]`, each node `{"frame": {"name", "type"}, "metrics", "children"}`, kernels under
the scopes they were launched in (with `hook="triton"` under a node named by the kernel's
`launch_metadata`, which holds the metrics that function declares, e.g. `flops16`, `bytes`).

What a kernel node holds is what the emulator measures, never a GPU's numbers: `count` (launches),
`emulation_time (ns)` (the emulator's wall time on the CPU for the launch: not GPU time, and no guide to it),
`loaded_bytes`, `stored_bytes`, `atomic_bytes` (the traffic counters of `minitriton.record()`: bytes of the
active lanes of every access) and `dot_flops` (2·M·N·K of each `tl.dot`). Flops and bytes a script declares
(scope metrics, launch metadata) are kept as given; `cpu_time (ns)` of a `cpu_timed_scope` is host time.
There is no `time (ns)`: Proton's viewer asked for GPU time says the metric does not exist, and
`minitriton.profiler.viewer` derives its times and rates from the emulation time, saying so.
Only the tree is written (`data="tree"`, `output_format="hatchet"`); no device is sampled, so `backend`
and `mode` other than the default and `"cupti"` are refused, as is `context` other than "shadow"/"python".
Profiling counts each launch's traffic, which makes launches slower while a session is active; a launch
inside a `minitriton.record()` block is that block's only. Proton's other modules (`triton.profiler.language`'s
in-kernel scopes, `state`, `data`, `specs`) are not provided.
"""
from __future__ import annotations

import functools
import json
import threading
import time
from types import SimpleNamespace

from minitriton.observers import counters

DEFAULT_PROFILE_NAME = "proton"
_sessions: dict = {}       # session id -> _Session, until finalized
_scopes = threading.local()   # .names: the scopes entered (outermost first); .ids: enter_scope's stack
_recording = None          # the counters' recording while a session is active
profiling_on = False       # between the first start() and finalize() of all sessions, as Proton's flag


class _Node:
    """A frame of the tree: its metrics and its children by name."""

    def __init__(self, name: str):
        self.name, self.metrics, self.children = name, {}, {}

    def at(self, path) -> "_Node":
        node = self
        for name in path:
            node = node.children.setdefault(name, _Node(name))
        return node

    def add(self, metrics: dict) -> None:
        for key, value in metrics.items():
            self.metrics[key] = self.metrics.get(key, 0) + value

    def hatchet(self) -> dict:
        return {"frame": {"name": self.name, "type": "function"}, "metrics": dict(self.metrics),
                "children": [c.hatchet() for c in self.children.values()]}


class _Session:
    def __init__(self, name: str, hook):
        self.path = name if name.endswith(".hatchet") else name + ".hatchet"
        self.hook, self.active, self.root = hook, True, _Node("ROOT")


def _names() -> list:
    if not hasattr(_scopes, "names"):
        _scopes.names, _scopes.ids = [], []
    return _scopes.names


def _active():
    return [s for s in _sessions.values() if s.active]


def _numbers(metrics: dict) -> dict:
    """The metrics Proton records: numbers, with Proton's suffixes "(exc)" and "(pty)" stripped from names."""
    return {k.replace("(exc)", "").replace("(pty)", "").strip(): v for k, v in (metrics or {}).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


class _Launches(counters.Recording):
    """Each launch of an active session becomes a kernel node under the scopes it ran in."""

    def add(self, record: dict, launch) -> None:
        nanoseconds = int((time.perf_counter() - launch.started) * 1e9)
        totals = [t["totals"] for t in record["tensors"].values()]
        measured = {"count": 1, "emulation_time (ns)": nanoseconds,
                    **{f"{k}_bytes": sum(t[f"{k}_bytes"] for t in totals) for k in ("loaded", "stored", "atomic")},
                    "dot_flops": record["dot_flops"]["total"]}
        described = launch.kernel.launch_metadata
        for session in _active():
            path = list(_names())
            if session.hook == "triton" and described is not None:
                meta = described(launch.grid, SimpleNamespace(name=launch.kernel.__name__), dict(launch.arguments))
                path.append(meta.get("name", launch.kernel.__name__))
                session.root.at(path).add(_numbers({k: v for k, v in meta.items() if k != "name"}))
            session.root.at(path + [launch.kernel.__name__]).add(measured)


class _record(counters.record):
    kind = _Launches


def _listen() -> None:
    """Count launches' traffic exactly while some session is active."""
    global _recording
    if _active() and _recording is None:
        _recording = _record()
        _recording.__enter__()
    elif not _active() and _recording is not None:
        _recording.__exit__(None, None, None)
        _recording = None


def _refuse(what: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"minitriton's profiler supports {what} {', '.join(map(repr, allowed))}, not {value!r}: "
                         f"it writes the tree of what the emulator measures (minitriton/profiler)")


def start(name=None, *, context="shadow", data="tree", backend=None, mode=None, hook=None):
    """Start a session writing `name`.hatchet (default "proton"); returns its id (0, 1, ...), active."""
    global profiling_on
    _refuse("context", context, ("shadow", "python"))
    _refuse("data", data, ("tree",))
    _refuse("backend", backend, (None, "cupti"))
    _refuse("mode", mode, (None,))
    _refuse("hook", hook, (None, "triton"))
    session = max(_sessions, default=-1) + 1
    _sessions[session] = _Session(DEFAULT_PROFILE_NAME if name is None else name, hook)
    profiling_on = True
    _listen()
    return session


def _chosen(session):
    return list(_sessions.values()) if session is None else [_sessions[session]] if session in _sessions else []


def activate(session=None) -> None:
    """Record into `session` (None: every session) again."""
    for s in _chosen(session):
        s.active = True
    _listen()


def deactivate(session=None, flushing: bool = False) -> None:
    """Stop recording into `session` (None: every session); its data stays until finalize()."""
    for s in _chosen(session):
        s.active = False
    _listen()


def finalize(session=None, output_format: str = "") -> None:
    """Write `session`'s tree (None: every session's) to its file and end it."""
    global profiling_on
    _refuse("output_format", output_format or "hatchet", ("hatchet",))
    for s in _chosen(session):
        tree = s.root.hatchet()
        tree["metrics"].update({"count": 0, "emulation_time (ns)": 0})   # Proton's root carries zeros
        with open(s.path, "w") as f:
            json.dump([tree, {}], f)
    for key in [k for k, s in _sessions.items() if s in _chosen(session)]:
        del _sessions[key]
    if session is None:
        profiling_on = False
    _listen()


def profile(func=None, *, name=None, context="shadow", data="tree", backend=None, mode=None, hook=None):
    """`@proton.profile` / `@proton.profile(name=...)`: a session started at each call, deactivated after."""
    def decorator(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            session = start(name, context=context, data=data, backend=backend, mode=mode, hook=hook)
            result = f(*args, **kwargs)
            deactivate(session)
            return result
        return wrapper
    return decorator if func is None else decorator(func)


def _enter(name: str, metrics) -> None:
    names = _names()
    names.append(name)
    for session in _active():
        session.root.at(names).add(_numbers(metrics))


def _exit(name: str, metrics=None) -> None:
    names = _names()
    for session in _active():
        session.root.at(names).add(_numbers(metrics))
    names.pop()


class scope:
    """`with proton.scope(name, {metric: value}):` or `@proton.scope(name, ...)`: a node of the tree holding the
    launches inside it, and the metrics given (added each time the scope is entered)."""

    def __init__(self, name: str, metrics: dict | None = None):
        self.name, self.metrics, self.entered = name, metrics, False

    def _enter_scope(self):
        self.entered = profiling_on
        if self.entered:
            _enter(self.name, self.metrics)

    def _exit_scope(self, extra=None):
        if self.entered:
            _exit(self.name, extra)

    def __enter__(self):
        self._enter_scope()
        return self

    def __exit__(self, *exc):
        self._exit_scope()

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self._enter_scope()
            try:
                return func(*args, **kwargs)
            finally:
                self._exit_scope()
        return wrapper


class cpu_timed_scope(scope):
    """A scope that also records the host's time inside it, as `cpu_time (ns)`."""

    def __init__(self, name: str, metrics: dict | None = None):
        if metrics and "cpu_time" in metrics:
            raise ValueError("The metric name 'cpu_time' is reserved.")
        super().__init__(name, metrics)

    def _enter_scope(self):
        self.start_time = time.perf_counter_ns()
        super()._enter_scope()

    def _exit_scope(self, extra=None):
        super()._exit_scope({"cpu_time (ns)": time.perf_counter_ns() - self.start_time})


def enter_scope(name: str, *, metrics: dict | None = None):
    """Enter a scope until the matching `exit_scope()`; returns its id (None when not profiling)."""
    if not profiling_on:
        return None
    _names()
    _scopes.ids.append((len(_scopes.ids), name))
    _enter(name, metrics)
    return _scopes.ids[-1][0]


def exit_scope(name: str | None = None, *, metrics: dict | None = None):
    """Leave the innermost scope `enter_scope` entered (its name, if given, must match)."""
    if not profiling_on:
        return None
    scope_id, entered = _scopes.ids.pop()
    if name and name != entered:
        raise ValueError(f"Scope name mismatch: {name} != {entered}")
    _exit(entered, metrics)
    return scope_id
