"""Differential-test oracle: run kernel source under real Triton's interpreter (in a subprocess) and minitriton.

Real Triton cannot be imported in the pytest process (minitriton.install() aliases `triton`), so
`run_in_interpreter` / `run_batch` write the cases to a temporary folder and run this file as a script with
the venv's Python and `TRITON_INTERPRET=1`. The script turns NumPy arrays into torch CPU tensors (bf16 via
uint16 bit views), launches each kernel, and sends every array argument back (after the launch) in an .npz
file. One subprocess runs a whole batch: starting it costs ~2-3 s (the torch import).

`run_in_minitriton` runs the same source text in-process against minitriton: the source is written to a
temporary module file (so `inspect.getsource` works) and imported while `triton` is aliased to minitriton;
the alias is removed again afterwards unless it was already installed.

Kernel source: Python text with one or more `@triton.jit` kernels that starts with `import triton` and
`import triton.language as tl`. Arguments: NumPy arrays (in/out; non-contiguous views with non-negative
strides keep their strides), `BF16` (a uint16 bit array that both sides treat as bfloat16), and Python
scalars / constexpr values (ints, floats, bools, None).
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

PYTHON = sys.executable  # the venv's Python: it runs the tests and has triton + torch installed


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

    @classmethod
    def from_float(cls, values):
        """Exact bf16 values (their fp32 bits must have a zero low half)."""
        f = np.asarray(values, np.float32)
        u = f.view(np.uint32)
        if np.any(u & 0xFFFF):
            raise ValueError("values are not exactly representable in bf16")
        return cls((u >> 16).astype(np.uint16))

    def to_float(self) -> np.ndarray:
        return (self.array.astype(np.uint32) << 16).view(np.float32)

    def __repr__(self):
        return f"BF16({self.array!r})"


class OracleUnavailable(RuntimeError):
    """Real Triton (with torch) cannot be run in a subprocess."""


@dataclass
class Case:
    source: str
    kernel: str
    grid: tuple
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
    exception: BaseException | None = None   # minitriton only: the exception object itself

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------- argument transport

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
    if len(flat) == int(np.prod(shape)) and strides == _c_strides(shape):
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
    if isinstance(value, np.ndarray):
        flat, _, shape, strides = _span(value)
        return _view(flat, tuple(shape), tuple(strides))
    return value


def _encode(value, key, arrays):
    if isinstance(value, (BF16, np.ndarray)):
        bits = value.array if isinstance(value, BF16) else value
        flat, _, shape, strides = _span(bits)
        arrays[key] = flat
        return {"array": key, "bf16": isinstance(value, BF16), "shape": list(shape), "strides": list(strides)}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"scalar": value}
    raise TypeError(f"unsupported oracle argument {value!r}")


def _decode_result(spec, original, npz):
    if "array" not in spec:
        return original
    flat = npz[spec["array"]]
    view = _view(flat, tuple(spec["shape"]), tuple(spec["strides"]))
    return BF16(view) if spec["bf16"] else view


# --------------------------------------------------------------------------- the parent side

def run_in_interpreter(source: str, kernel_name: str, grid, args, kwargs=None, timeout=120) -> Result:
    """Launch one kernel under real Triton's interpreter; see `run_batch`."""
    return run_batch([Case(source, kernel_name, tuple(grid), tuple(args), dict(kwargs or {}))], timeout)[0]


def run_batch(cases, timeout=300) -> list:
    """Run every case in one interpreter subprocess; a case that raises gives a Result with `error` set.

    Raises OracleUnavailable when triton/torch cannot be imported in the subprocess.
    """
    cases = list(cases)
    with tempfile.TemporaryDirectory(prefix="triton_oracle_") as tmp:
        tmp = pathlib.Path(tmp)
        arrays, manifest, sources = {}, [], {}
        for i, c in enumerate(cases):
            digest = hashlib.sha1(c.source.encode()).hexdigest()[:12]
            if digest not in sources:
                sources[digest] = f"oracle_src_{digest}"
                (tmp / f"oracle_src_{digest}.py").write_text(c.source)
            manifest.append({
                "module": sources[digest], "kernel": c.kernel, "grid": list(c.grid),
                "args": [_encode(a, f"c{i}_a{j}", arrays) for j, a in enumerate(c.args)],
                "kwargs": {k: _encode(v, f"c{i}_k_{k}", arrays) for k, v in c.kwargs.items()},
            })
        np.savez(tmp / "inputs.npz", **arrays)
        (tmp / "manifest.json").write_text(json.dumps(manifest))
        env = dict(os.environ, TRITON_INTERPRET="1", PYTHONDONTWRITEBYTECODE="1")
        env.pop("TRITON_DEBUG", None)
        proc = subprocess.run([PYTHON, str(pathlib.Path(__file__).resolve()), str(tmp)], env=env, cwd=tmp,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode == 3 or (proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr
                                    and not (tmp / "status.json").exists()):
            lines = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()
            raise OracleUnavailable(f"{lines[-1]} (python: {PYTHON})")
        if proc.returncode != 0:
            raise RuntimeError(f"interpreter subprocess failed (rc={proc.returncode}):\n{proc.stderr[-4000:]}")
        status = json.loads((tmp / "status.json").read_text())
        results = []
        with np.load(tmp / "outputs.npz") as npz:
            for c, m, st in zip(cases, manifest, status):
                args = [_decode_result(s, a, npz) for s, a in zip(m["args"], c.args)]
                kwargs = {k: _decode_result(m["kwargs"][k], v, npz) for k, v in c.kwargs.items()}
                results.append(Result(args, kwargs, st["error"], st["error_type"], st["warnings"]))
    return results


def versions() -> dict:
    """Versions of triton/torch the subprocess sees (raises OracleUnavailable)."""
    proc = subprocess.run([PYTHON, "-c", "import json, triton, torch; "
                           "print(json.dumps({'triton': triton.__version__, 'torch': torch.__version__}))"],
                          env=dict(os.environ, TRITON_INTERPRET="1"), capture_output=True, text=True, timeout=120)
    if proc.returncode:
        raise OracleUnavailable(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "import failed")
    return json.loads(proc.stdout)


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
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    if digest in _MT_MODULES:
        return _MT_MODULES[digest]
    import minitriton
    folder = _module_folder()
    name = f"mt_oracle_src_{digest}"
    path = folder / f"{name}.py"
    path.write_text(source)
    installed_before = sys.modules.get("triton") is minitriton
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


# --------------------------------------------------------------------------- the subprocess side

def _child(folder: str) -> int:  # pragma: no cover - runs in the interpreter subprocess
    folder = pathlib.Path(folder)
    try:
        import torch
        import triton  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"cannot import triton/torch in a subprocess: {type(e).__name__}: {e}")
        return 3
    import traceback
    import warnings
    sys.path.insert(0, str(folder))
    manifest = json.loads((folder / "manifest.json").read_text())
    inputs = np.load(folder / "inputs.npz")
    outputs, status = {}, []

    def to_torch(spec):
        if "array" not in spec:
            return spec["scalar"], None
        flat = inputs[spec["array"]]
        if spec["bf16"]:
            t = torch.from_numpy(flat.view(np.int16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(flat.copy())
        shape, strides = tuple(spec["shape"]), tuple(spec["strides"])
        view = t.as_strided(shape, strides) if shape else t.reshape(())
        return view, (t, spec)

    def back(keep):
        t, spec = keep
        if spec["bf16"]:
            outputs[spec["array"]] = t.view(torch.int16).numpy().view(np.uint16)
        else:
            outputs[spec["array"]] = t.numpy()

    for m in manifest:
        kept, args, kwargs = [], [], {}
        for spec in m["args"]:
            v, keep = to_torch(spec)
            args.append(v)
            kept.append(keep)
        for k, spec in m["kwargs"].items():
            v, keep = to_torch(spec)
            kwargs[k] = v
            kept.append(keep)
        error = error_type = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                module = __import__(m["module"])
                getattr(module, m["kernel"])[tuple(m["grid"])](*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - reported per case
                error, error_type = repr(e), type(e).__name__
                cause = e.__cause__
                if cause is not None:
                    error += f" [cause: {cause!r}]"
                error += "\n" + traceback.format_exc(limit=-3)
        for keep in kept:
            if keep is not None:
                back(keep)
        status.append({"error": error, "error_type": error_type,
                       "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]})
    np.savez(folder / "outputs.npz", **outputs)
    (folder / "status.json").write_text(json.dumps(status, default=lambda o: str(o)))
    return 0


def ulp_distance(a, b, dtype=np.float32) -> np.ndarray:
    """|a - b| in units in the last place of `dtype` (NaN == NaN is 0; NaN vs number is inf)."""
    a = np.asarray(a, dtype)
    b = np.asarray(b, dtype)
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(dtype).itemsize]

    def ordered(x):
        i = x.view(bits).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(bits).min) - i, i)

    d = np.abs(ordered(a) - ordered(b)).astype(np.float64)
    d = np.where(np.isnan(a) & np.isnan(b), 0.0, d)
    return np.where(np.isnan(a) ^ np.isnan(b), math.inf, d)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_child(sys.argv[1]))
