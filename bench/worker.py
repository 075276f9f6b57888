"""The benchmark's worker: runs inside one backend's subprocess (`python -m bench --worker BACKEND`), times
the workloads and prints one JSON line for the parent."""
from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import signal
import statistics
import sys
import time
import traceback
from pathlib import Path

from bench.settings import MAX_TIMED, MIN_TIMED, RESULT_MARK


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("workload exceeded its time limit")


def _log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def _error_text(exc: BaseException) -> str:
    """The exception in one line plus the innermost frames, short enough for a table footnote."""
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))
    return f"{type(exc).__name__}: {exc}".strip() + (f"  [at {where}]" if where else "")


def _time_launches(launch, quick: bool, budget_s: float) -> list[float]:
    """Timed launches per the baseline: >= 3, until budget_s spent in total, at most 15 (1 if quick)."""
    times = []
    while True:
        if quick and times:
            break
        if not quick and len(times) >= MIN_TIMED and (sum(times) >= budget_s or len(times) >= MAX_TIMED):
            break
        t0 = time.perf_counter()
        launch()
        times.append(time.perf_counter() - t0)
    return times


def _run_workload(w, data, ar, backend, quick, budget_s):
    import tracemalloc

    from bench import workloads as wl

    res = {"programs": w.programs, "tol": w.tol, "arrays": ar.name}
    prepared = w.setup(data, ar)
    res["array_bytes"] = int(sum(ar.nbytes(a) for a in prepared.arrays))
    if w.name == "matmul_bf16":
        res["arrays"] = ar.bf16_note
    reference = w.reference(data)

    t0 = time.perf_counter()
    prepared.launch()                                   # warm-up, not counted
    res["warmup_s"] = time.perf_counter() - t0
    err, per_output = wl.max_abs_error(prepared, reference, ar)
    res["max_abs_error"] = err
    res["error_per_output"] = per_output
    res["passed"] = bool(err <= w.tol)

    times = _time_launches(prepared.launch, quick, budget_s)
    res.update(times=times, n_timed=len(times), median_s=statistics.median(times), min_s=min(times),
               max_s=max(times))
    res["us_per_program"] = res["median_s"] / w.programs * 1e6

    if backend == "minitriton":
        # Peak memory of one extra, untimed launch under tracemalloc (it slows Python allocation down, so
        # it stays out of the timed launches). NumPy allocations are tracked; the arrays already exist.
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            prepared.launch()
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        res["peak_extra_bytes"] = int(peak)
        res["mem_ratio"] = (res["array_bytes"] + peak) / res["array_bytes"]
    return res


def _versions(backend):
    import numpy

    v = {"python": platform.python_version(), "numpy": numpy.__version__}
    for pkg in ("torch", "triton"):
        try:
            v[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            v[pkg] = None
    if backend == "interpreter":
        import torch

        v["torch_threads"] = torch.get_num_threads()
    return v


def worker_main(backend, names, quick, budget_s, timeout_s, floors=False):
    out = {"backend": backend, "results": {}, "fatal": None}
    if backend == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"            # must precede `import triton`
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    try:
        if backend == "minitriton":
            import minitriton

            minitriton.install()
            out["minitriton_version"] = getattr(minitriton, "__version__", None)
        from bench import shapes
        from bench import workloads as wl

        ar = wl.TorchArrays() if backend == "interpreter" else wl.NumpyArrays()
        data = shapes.make_data()
    except BaseException as exc:                         # noqa: BLE001 -- report, do not crash
        out["fatal"] = _error_text(exc)
        _log(f"{backend}: cannot start: {out['fatal']}")
        traceback.print_exc(file=sys.stderr)
        out["versions"] = _versions(backend)
        print(RESULT_MARK + json.dumps(_jsonable(out)), flush=True)
        return

    out["versions"] = _versions(backend)
    alarm = hasattr(signal, "alarm")  # not in Pyodide (wasm32): no per-workload time limit there
    if floors and sys.platform == "emscripten":
        # in Pyodide (bench/runtimes.py): one untimed launch of every workload first, since V8 keeps
        # optimising Pyodide's WebAssembly in the background during its first seconds
        for name in names:
            try:
                shapes.BY_NAME[name].setup(data, ar).launch()
            except Exception:                            # noqa: BLE001 -- reported by the timed run below
                pass
    if alarm:
        signal.signal(signal.SIGALRM, _on_alarm)
    for name in names:
        w = shapes.BY_NAME[name]
        _log(f"{backend}: {name} ...")
        if alarm:
            signal.alarm(int(timeout_s) if timeout_s else 0)
        try:
            res = _run_workload(w, data, ar, backend, quick, budget_s)
            if floors:
                from bench import floors as fl

                res["floor"] = fl.measure(w, shapes.FLOORS[name], data,
                                          lambda run: _time_launches(run, quick, budget_s))
        except BaseException as exc:                     # noqa: BLE001 -- one workload failing is data
            if isinstance(exc, KeyboardInterrupt):
                raise
            res = {"programs": w.programs, "tol": w.tol, "error": _error_text(exc)}
            _log(f"{backend}: {name} raised {res['error']}")
            traceback.print_exc(file=sys.stderr)
        finally:
            if alarm:
                signal.alarm(0)
        if "median_s" in res:
            _log(f"{backend}: {name}: median {res['median_s']:.4g} s over {res['n_timed']} launches, "
                 f"error {res['max_abs_error']:.3g}")
        out["results"][name] = res
    print(RESULT_MARK + json.dumps(_jsonable(out)), flush=True)


def _jsonable(obj):
    """Replace non-finite floats by strings so that the JSON is standard."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


def _num(x):
    return float(x) if isinstance(x, str) else x


