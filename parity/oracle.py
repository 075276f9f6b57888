"""Run kernel sources (or kernels/ host wrappers) in child processes under a chosen backend.

Backends: `minitriton` (NumPy; `minitriton.install()` makes `import triton` resolve to it), `interpreter`
(real Triton with `TRITON_INTERPRET=1`, torch CPU tensors) and `cuda` (real Triton, torch CUDA tensors).
Real Triton can never share a process with minitriton (install() aliases `triton`), so each backend runs in
its own child: `python -m parity._child BACKEND`. A child starts once (the torch import costs
2-3 s), announces its versions and device, then runs jobs the parent sends it; a `Pool` keeps `jobs`
children of one backend busy from parent threads, so compile-bound work (the GPU) runs in parallel.

Two kinds of case:
* `Case(source, kernel, grid, args, kwargs)`: Python text with `@triton.jit` kernels that starts with
  `import triton` / `import triton.language as tl`; the child imports it as a module and launches
  `kernel[grid](*args, **kwargs)`.
* `Call(module, function, args, kwargs)`: calls a host wrapper such as `kernels.matmul.matmul(a, b)`; its
  return value comes back in `Result.value` (a list of arrays).

Arguments (`parity/transport.py`, re-exported here): NumPy arrays (in/out; views with non-negative strides
keep their strides), `BF16` (uint16 bit patterns both sides treat as bfloat16: torch.bfloat16 or
minitriton.Buffer), `Descriptor` (a host-side `TensorDescriptor` over an array, made in the child), Python
scalars, None. Every array argument comes back after the launch, so outputs are simply arrays the kernel wrote.

Transport: a job is a folder holding manifest.json and inputs.npz; the child writes out_<i>.npz and
status_<i>.json per case and answers `DONE`. A child that dies (or, on CUDA, hits a sticky error such as
an illegal address) is restarted and the remaining cases go on; the case it died on reports the error.

`run_in_minitriton` runs a source in this process instead (for tests that want exception objects).
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import math
import os
import pathlib
import platform
import queue
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np

from parity.transport import BF16, Call, Case, Descriptor, Result, _decode_result, _encode, clone

# the cases and arguments are defined in parity/transport.py; callers take them from here with the rest
__all__ = ["BACKENDS", "BF16", "CRASH_STDERR", "Call", "Case", "Descriptor", "OracleUnavailable", "PYTHON", "Pool",
           "REPO_ROOT", "Result", "Worker", "child_env", "clone", "cpu_model", "load_minitriton_module", "run_batch",
           "run_in_interpreter", "run_in_minitriton", "ulp_distance", "versions"]

PYTHON = sys.executable  # the Python that runs the parent; it must have triton + torch for those backends
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
BACKENDS = ("minitriton", "interpreter", "cuda")
CRASH_STDERR = "compile-stderr-{pid}.txt"   # a child's copy of its compiler's stderr, in its working folder
_STICKY_CUDA = ("illegal memory access", "device-side assert", "CUDA error: an illegal", "unspecified launch failure",
                "misaligned address", "CUDA error: device-side")


class OracleUnavailable(RuntimeError):
    """The backend (triton + torch, or a CUDA device) cannot be run in a child process."""


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- the parent side: workers

def child_env(backend: str, extra: dict | None = None) -> dict:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                            if p])
    env.pop("TRITON_DEBUG", None)
    if backend == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    elif backend == "cuda" and env.get("PARITY_CUDA_SMOKE") == "1":
        env["TRITON_INTERPRET"] = "1"       # a CPU dry run of the cuda code paths (tiny sizes, wrong numerics)
    else:
        env.pop("TRITON_INTERPRET", None)
    env.update(extra or {})
    return env


class Worker:
    """One child process of a backend; `run_job(folder, n)` blocks until the child finished the job."""

    def __init__(self, backend: str, workdir: pathlib.Path, env: dict | None = None, start_timeout=300):
        self.backend, self.workdir, self.env = backend, workdir, env
        self.start_timeout = start_timeout
        self.info: dict = {}
        self.proc = None
        self.log = None
        self.crash_text = ""        # what the last child that died had written while compiling
        self.lines: queue.Queue = queue.Queue()
        self._start()

    def _start(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log = open(self.workdir / f"child-{self.backend}-{os.getpid()}-{id(self)}.log", "a")
        self.proc = subprocess.Popen([PYTHON, "-m", "parity._child", self.backend],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     text=True, cwd=self.workdir, env=child_env(self.backend, self.env))
        self.lines = queue.Queue()
        threading.Thread(target=self._reader, args=(self.proc, self.lines), daemon=True).start()
        line = self._next_line(self.start_timeout)
        if line is None or not line.startswith("READY "):
            tail = self.log_tail()
            self.close()
            msg = line[len("UNAVAILABLE "):] if line and line.startswith("UNAVAILABLE ") else \
                f"the {self.backend} child did not start: {line!r}\n{tail}"
            raise OracleUnavailable(f"{msg} (python: {PYTHON})")
        self.info = json.loads(line[len("READY "):])

    @staticmethod
    def _reader(proc, lines):
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def _next_line(self, timeout):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return "TIMEOUT"

    def log_tail(self, n=4000) -> str:
        try:
            self.log.flush()
            return pathlib.Path(self.log.name).read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def run_job(self, folder: pathlib.Path, timeout: float) -> str:
        """'DONE', 'DIED' (the child exited; restarted) or 'TIMEOUT' (killed; restarted)."""
        self.proc.stdin.write(str(folder) + "\n")
        self.proc.stdin.flush()
        line = self._next_line(timeout)
        if line == "DONE":
            return "DONE"
        outcome = "TIMEOUT" if line == "TIMEOUT" else "DIED"
        pid = self.proc.pid
        self.close()
        crashed = self.workdir / CRASH_STDERR.format(pid=pid)
        try:
            self.crash_text = crashed.read_text(errors="replace")
            crashed.unlink()
        except OSError:
            self.crash_text = ""
        self._start()
        return outcome

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        if self.log is not None:
            self.log.close()


class Pool:
    """`jobs` children of one backend. `run(cases)` returns one Result per case, in order."""

    def __init__(self, backend: str, jobs: int = 1, env: dict | None = None, case_timeout: float = 300):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
        self.backend, self.case_timeout = backend, case_timeout
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"parity_{backend}_"))
        (self.tmp / "src").mkdir()
        self._sources: set = set()
        self._job = 0
        self._lock = threading.Lock()
        self.workers: list = []
        errors = []

        def start(i):
            try:
                w = Worker(backend, self.tmp, env)
                with self._lock:
                    self.workers.append(w)
            except Exception as e:  # noqa: BLE001 - re-raised below
                errors.append(e)

        threads = [threading.Thread(target=start, args=(i,)) for i in range(max(1, jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            self.close()
            raise errors[0]

    @property
    def info(self) -> dict:
        return self.workers[0].info if self.workers else {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for w in self.workers:
            w.close()
        self.workers = []
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _write_source(self, source: str) -> str:
        name = f"parity_src_{_digest(source)}"
        with self._lock:
            if name not in self._sources:
                (self.tmp / "src" / f"{name}.py").write_text(source)
                self._sources.add(name)
        return name

    def _encode(self, cases, start):
        with self._lock:
            self._job += 1
            folder = self.tmp / f"job{self._job}"
        folder.mkdir()
        arrays, manifest = {}, []
        for i, c in enumerate(cases):
            entry = {"args": [_encode(a, f"c{i}_a{j}", arrays) for j, a in enumerate(c.args)],
                     "kwargs": {k: _encode(v, f"c{i}_k_{k}", arrays) for k, v in c.kwargs.items()},
                     "index": start + i}
            if isinstance(c, Call):
                entry.update(call=True, module=c.module, function=c.function)
            else:
                entry.update(call=False, module=self._write_source(c.source), kernel=c.kernel, grid=list(c.grid))
            manifest.append(entry)
        np.savez(folder / "inputs.npz", **arrays)
        (folder / "manifest.json").write_text(json.dumps(manifest))
        return folder, manifest

    def _decode(self, folder, i, case, entry):
        status_file = folder / f"status_{i}.json"
        st = json.loads(status_file.read_text())
        with np.load(folder / f"out_{i}.npz") as npz:
            args = [_decode_result(s, a, npz) for s, a in zip(entry["args"], case.args)]
            kwargs = {k: _decode_result(entry["kwargs"][k], v, npz) for k, v in case.kwargs.items()}
            value = None
            if st.get("value") is not None:
                value = [_decode_result(s, None, npz) if isinstance(s, dict) else s for s in st["value"]]
        return Result(args, kwargs, st["error"], st["error_type"], st["warnings"], value=value)

    def _run_chunk(self, worker: Worker, cases, start, results):
        pending = list(range(len(cases)))
        while pending:
            sub = [cases[i] for i in pending]
            folder, manifest = self._encode(sub, start + pending[0])
            outcome = worker.run_job(folder, self.case_timeout * len(sub))
            done = 0
            for k, i in enumerate(pending):
                if not (folder / f"status_{k}.json").exists():
                    break
                results[start + i] = self._decode(folder, k, sub[k], manifest[k])
                done += 1
            shutil.rmtree(folder, ignore_errors=True)
            if done < len(pending) and outcome != "DONE" and done == 0:
                # The child died on this very case. (A child that stopped after finishing some cases, e.g. when
                # a device-side assert left its CUDA context unusable, is restarted and the rest re-run.)
                i = pending[done]
                what = "timed out" if outcome == "TIMEOUT" else "died"
                results[start + i] = Result(list(cases[i].args), dict(cases[i].kwargs),
                                            f"WorkerError: the {self.backend} child {what} on this case\n"
                                            f"{worker.crash_text[-2000:] or worker.log_tail(2000)}",
                                            "WorkerError")
                done += 1
            elif done < len(pending) and outcome == "DONE":
                raise RuntimeError(f"the {self.backend} child answered DONE without results")
            pending = pending[done:]

    def run(self, cases, chunk: int | None = None) -> list:
        cases = list(cases)
        if not cases:
            return []
        n = len(self.workers)
        chunk = chunk or max(1, min(64, math.ceil(len(cases) / (4 * n))))
        chunks = queue.Queue()
        for s in range(0, len(cases), chunk):
            chunks.put((s, cases[s:s + chunk]))
        results: list = [None] * len(cases)
        failures = []

        def drive(worker):
            while True:
                try:
                    s, part = chunks.get_nowait()
                except queue.Empty:
                    return
                try:
                    self._run_chunk(worker, part, s, results)
                except Exception as e:  # noqa: BLE001 - re-raised in the caller's thread
                    failures.append(e)
                    return

        threads = [threading.Thread(target=drive, args=(w,)) for w in self.workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
        return results


def run_batch(cases, timeout=300, backend="interpreter", jobs=1, env=None) -> list:
    """Run every case in `jobs` child processes of `backend`; a case that raises gives a Result with `error`.

    Raises OracleUnavailable when the backend cannot start (triton/torch missing, no CUDA device).
    """
    with Pool(backend, jobs, env, case_timeout=timeout) as pool:
        return pool.run(cases)


def run_in_interpreter(source: str, kernel_name: str, grid, args, kwargs=None, timeout=120) -> Result:
    """Launch one kernel under real Triton's interpreter; see `run_batch`."""
    return run_batch([Case(source, kernel_name, tuple(grid), tuple(args), dict(kwargs or {}))], timeout)[0]


def versions(backend="interpreter") -> dict:
    """Versions (triton, torch, numpy, python) and device the backend's child sees (raises OracleUnavailable)."""
    with Pool(backend, 1) as pool:
        return dict(pool.info)


# --------------------------------------------------------------------------- minitriton, in-process

_MT_MODULES: dict = {}
_FOLDER: list = []


def _module_folder() -> pathlib.Path:
    """One temporary folder per process for the kernel modules, removed at exit (tracebacks read it until then)."""
    if not _FOLDER:
        _FOLDER.append(pathlib.Path(tempfile.mkdtemp(prefix="minitriton_oracle_")))
        atexit.register(shutil.rmtree, _FOLDER[0], True)
    return _FOLDER[0]


def load_minitriton_module(source: str):
    """Import `source` as a module whose `import triton` resolves to minitriton (no alias leaks out)."""
    digest = _digest(source)
    if digest in _MT_MODULES:
        return _MT_MODULES[digest]
    import minitriton
    folder = _module_folder()
    name = f"mt_oracle_src_{digest}"
    path = folder / f"{name}.py"
    path.write_text(source)
    installed_before = sys.modules.get("triton") is minitriton.triton_module
    minitriton.install()
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        if not installed_before:
            minitriton.uninstall()
    _MT_MODULES[digest] = module
    return module


def run_in_minitriton(source: str, kernel_name: str, grid, args, kwargs=None, raise_errors=True) -> Result:
    """Launch the kernel with minitriton on copies of the arguments; returns the copies after the launch."""
    module = load_minitriton_module(source)
    args = [clone(a) for a in args]
    kwargs = {k: clone(v) for k, v in (kwargs or {}).items()}
    try:
        getattr(module, kernel_name)[tuple(grid)](*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - reported to the caller
        if raise_errors:
            raise
        return Result(args, kwargs, repr(e), type(e).__name__, exception=e)
    return Result(args, kwargs)


def ulp_distance(a, b, dtype=np.float32) -> np.ndarray:
    """|a - b| in units in the last place of `dtype` (NaN == NaN is 0; NaN vs number is inf)."""
    a = np.asarray(a, dtype)
    b = np.asarray(b, dtype)
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(dtype).itemsize]

    def ordered(x):
        i = np.ascontiguousarray(x).view(bits).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(bits).min) - i, i)

    with np.errstate(over="ignore"):
        d = np.abs(ordered(a) - ordered(b)).astype(np.float64)
    d = np.where(np.isnan(a) & np.isnan(b), 0.0, d)
    return np.where(np.isnan(a) ^ np.isnan(b), math.inf, d)


def cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
