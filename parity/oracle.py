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

Arguments: NumPy arrays (in/out; views with non-negative strides keep their strides), `BF16` (uint16 bit
patterns both sides treat as bfloat16: torch.bfloat16 or minitriton.Buffer), `Descriptor` (a host-side
`TensorDescriptor` over an array, made in the child), Python scalars, None. Every
array argument comes back after the launch, so outputs are simply arrays the kernel wrote.

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
from dataclasses import dataclass, field

import numpy as np

PYTHON = sys.executable  # the Python that runs the parent; it must have triton + torch for those backends
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
BACKENDS = ("minitriton", "interpreter", "cuda")
CRASH_STDERR = "compile-stderr-{pid}.txt"   # a child's copy of its compiler's stderr, in its working folder
_STICKY_CUDA = ("illegal memory access", "device-side assert", "CUDA error: an illegal", "unspecified launch failure",
                "misaligned address", "CUDA error: device-side")


class BF16:
    """A bfloat16 array given as its uint16 bit patterns (NumPy has no bfloat16)."""

    def __init__(self, bits):
        bits = np.asarray(bits)
        if bits.dtype != np.uint16:
            raise TypeError(f"BF16 takes uint16 bit patterns, got {bits.dtype}")
        self.array = bits

    @property
    def triton_dtype(self):  # minitriton reads `.array` + `.triton_dtype` (minitriton.memory.as_array)
        import minitriton.language as mtl
        return mtl.bfloat16

    @property
    def shape(self):
        return self.array.shape

    @classmethod
    def from_float(cls, values):
        """Exact bf16 values (their fp32 bits must have a zero low half)."""
        f = np.asarray(values, np.float32)
        u = f.view(np.uint32)
        if np.any(u & 0xFFFF):
            raise ValueError("values are not exactly representable in bf16")
        return cls((u >> 16).astype(np.uint16))

    @classmethod
    def round(cls, values):
        """fp32 values rounded to nearest even bf16 (NaN stays a quiet NaN)."""
        u = np.ascontiguousarray(np.asarray(values, np.float32)).view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        nan = np.isnan(np.asarray(values, np.float32))
        return cls(np.where(nan, np.uint16(0x7FC0), r).astype(np.uint16))

    def to_float(self) -> np.ndarray:
        return (self.array.astype(np.uint32) << 16).view(np.float32)

    def __repr__(self):
        return f"BF16({self.array!r})"


class OracleUnavailable(RuntimeError):
    """The backend (triton + torch, or a CUDA device) cannot be run in a child process."""


@dataclass
class Case:
    source: str
    kernel: str
    grid: tuple
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass
class Call:
    """`module.function(*args, **kwargs)` in the child (e.g. kernels.vector_add.add); returns arrays."""
    module: str
    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass
class Result:
    """What one launch left behind: `args`/`kwargs` mirror the inputs, arrays replaced by their final contents."""
    args: list
    kwargs: dict
    error: str | None = None          # repr of the exception (the interpreter wraps it in InterpreterError)
    error_type: str | None = None
    warnings: list = field(default_factory=list)
    exception: BaseException | None = None   # in-process minitriton only: the exception object itself
    value: list | None = None         # a Call's return value: its arrays (None for launches)

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------- argument transport


class Descriptor:
    """A tensor descriptor argument: the child passes `TensorDescriptor.from_tensor(array, block_shape,
    padding)` (`triton.tools.tensor_descriptor`, minitriton's under minitriton), so the kernel reads and writes
    `array` (a NumPy array or `BF16`) through desc.load / desc.store; the array comes back like any other."""

    def __init__(self, array, block_shape, padding="zero"):
        if not isinstance(array, (np.ndarray, BF16)):
            raise TypeError(f"Descriptor takes a NumPy array or BF16, got {type(array).__name__}")
        self.array, self.block_shape, self.padding = array, list(block_shape), padding

    def __repr__(self):
        return f"Descriptor({self.array!r}, block_shape={self.block_shape}, padding={self.padding!r})"

def _span(a: np.ndarray):
    """(flat copy of every element `a` covers, element offset, shape, strides in elements)."""
    item = a.dtype.itemsize
    if any(s < 0 or s % item for s in a.strides):
        raise ValueError(f"only non-negative strides that are multiples of the item size: {a.strides}")
    if a.size == 0 or a.flags.c_contiguous:
        return a.reshape(-1).copy(), 0, a.shape, tuple(s // item for s in a.strides) if a.size else ()
    extent = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // item + 1
    flat = np.lib.stride_tricks.as_strided(a, shape=(extent,), strides=(item,), writeable=False).copy()
    return flat, 0, a.shape, tuple(s // item for s in a.strides)


def _view(flat: np.ndarray, shape, strides) -> np.ndarray:
    if not shape:
        return flat.reshape(())
    if len(flat) == int(np.prod(shape)) and tuple(strides) == _c_strides(shape):
        return flat.reshape(shape)
    item = flat.dtype.itemsize
    return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=tuple(s * item for s in strides))


def _c_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def clone(value):
    """A deep copy of an argument; array views keep their shape and strides (over a fresh span)."""
    if isinstance(value, BF16):
        return BF16(clone(value.array))
    if isinstance(value, Descriptor):
        return Descriptor(clone(value.array), value.block_shape, value.padding)
    if isinstance(value, np.ndarray):
        flat, _, shape, strides = _span(value)
        return _view(flat, tuple(shape), tuple(strides))
    return value


def _encode(value, key, arrays):
    if isinstance(value, Descriptor):
        spec = _encode(value.array, key, arrays)
        spec["descriptor"] = {"block": list(value.block_shape), "padding": value.padding}
        return spec
    if isinstance(value, (BF16, np.ndarray)):
        bits = value.array if isinstance(value, BF16) else value
        flat, _, shape, strides = _span(bits)
        arrays[key] = flat
        return {"array": key, "bf16": isinstance(value, BF16), "shape": list(shape), "strides": list(strides)}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"scalar": value}
    if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value):
        return {"scalar": list(value), "tuple": isinstance(value, tuple)}
    if isinstance(value, dict) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value.values()):
        return {"scalar": dict(value)}
    raise TypeError(f"unsupported oracle argument {value!r}")


def _decode_result(spec, original, npz):
    if "array" not in spec or spec["array"] not in npz.files:  # a case whose launch failed sends nothing back
        return original
    flat = npz[spec["array"]]
    view = _view(flat, tuple(spec["shape"]), tuple(spec["strides"]))
    view = BF16(view) if spec["bf16"] else view
    if "descriptor" in spec:
        return Descriptor(view, spec["descriptor"]["block"], spec["descriptor"]["padding"])
    return view


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
