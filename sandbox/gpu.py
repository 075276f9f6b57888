"""The lab's "Run on GPU": the learner's code with real Triton on CUDA, its outputs compared with the emulator's.

`GpuProbe` asks once (in a subprocess) whether torch + CUDA + Triton import; `gpu_compare` runs in a lab
worker process (sandbox/server.py) and runs the exercise's demo on both. CPython only: the bridge never
imports this module.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

from . import bridge, messages
from .exercises._base import Fail


def _error(type_, message):
    return {"error": {"type": type_, "message": message, "line": None, "col": None, "program": None,
                      "traceback": ""}}


GPU_PROBE = r"""
import json
try:
    import torch
except Exception as e:
    print(json.dumps({"ok": False, "reason": f"torch does not import ({type(e).__name__}: {e})"})); raise SystemExit
if not torch.cuda.is_available():
    print(json.dumps({"ok": False, "reason": f"CUDA is not available to torch {torch.__version__}"})); raise SystemExit
try:
    import triton
except Exception as e:
    reason = f"real Triton does not import ({type(e).__name__}: {e})"
    print(json.dumps({"ok": False, "reason": reason})); raise SystemExit
print(json.dumps({"ok": True, "reason": "", "device": torch.cuda.get_device_name(0), "triton": triton.__version__,
                  "torch": torch.__version__}))
"""


class GpuProbe:
    """Whether real Triton + CUDA import in a subprocess (asked once, then remembered)."""

    def __init__(self, env: dict, cwd: str):
        self.lock = threading.Lock()
        self.result = None
        self.env, self.cwd = env, cwd

    def get(self) -> dict:
        with self.lock:
            if self.result is None:
                try:
                    done = subprocess.run([sys.executable, "-c", GPU_PROBE], capture_output=True, timeout=120,
                                          env=self.env, cwd=self.cwd)
                    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
                    self.result = json.loads(lines[-1]) if lines else {
                        "ok": False, "reason": "the probe printed nothing: " + done.stderr.decode()[-300:]}
                except (subprocess.TimeoutExpired, OSError, ValueError) as e:
                    self.result = {"ok": False, "reason": f"the probe failed ({type(e).__name__}: {e})"}
            return self.result


class TorchCuda:
    """NumPy arrays to and from CUDA tensors, for the demos' `backend`."""

    name = "triton"

    def __init__(self, torch):
        self.torch = torch

    def put(self, a):
        import numpy as np
        return self.torch.from_numpy(np.ascontiguousarray(a)).to("cuda")

    def get(self, t):
        self.torch.cuda.synchronize()
        return t.detach().cpu().numpy()


def gpu_compare(request: dict) -> dict:
    """Run the exercise's demo on the emulator and with real Triton on the GPU; compare the outputs."""
    lang = messages.lang_of(request)
    ex = bridge.get_exercise(request.get("exercise"))
    code = request.get("code")
    if ex is None or not isinstance(code, str):
        return _error("BadRequest", messages.say("bad_request", lang, message="`exercise` and `code` are needed"))
    out = bridge.Capture()
    with bridge._op(out):
        print("--- minitriton ---")
        started = time.perf_counter()
        try:
            emulated = ex.demo(bridge.load(ex, code, as_main=False), lang)
        except Fail as f:
            return {"available": True, **_error("ExerciseError", str(f)), "stdout": out.text(lang)}
        except Exception as exc:
            return {"available": True, "error": bridge.error_info(exc, ex, lang), "stdout": out.text(lang)}
        emu_seconds = time.perf_counter() - started
        import torch
        import triton
        print(f"--- GPU: {torch.cuda.get_device_name(0)}, Triton {triton.__version__} ---")
        started = time.perf_counter()
        try:
            gpu_mod = _load_real(ex, code)
            on_gpu = ex.demo(gpu_mod, lang, TorchCuda(torch))
        except Fail as f:
            return {"available": True, **_error("ExerciseError", str(f)), "stdout": out.text(lang)}
        except Exception as exc:
            info = bridge.error_info(exc, ex, lang)
            info["message"] = "GPU: " + (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return {"available": True, "error": info, "stdout": out.text(lang)}
        gpu_seconds = time.perf_counter() - started
    rows = compare_outputs(emulated, on_gpu)
    return {"available": True, "device": torch.cuda.get_device_name(0), "triton": triton.__version__,
            "outputs": rows, "emulator_seconds": round(emu_seconds, 4), "gpu_seconds": round(gpu_seconds, 4),
            "stdout": out.text(lang)}


def compare_outputs(emulated, on_gpu) -> list:
    """Per output: equal bits?, the largest absolute difference and the largest relative one (to |gpu| + 1e-6)
    where both sides are numbers, how many elements each side left unwritten (the demos pre-fill outputs with a
    NaN sentinel), and where one side is finite and the other not."""
    import numpy as np

    from .exercises._base import unwritten
    rows = []
    for (label, a), (_, b) in zip(emulated, on_gpu):
        a, b = np.asarray(a), np.asarray(b)
        with np.errstate(all="ignore"):
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            both = np.isfinite(a64) & np.isfinite(b64)
            diff = np.abs(a64 - b64)[both]
            rel = diff / (np.abs(b64[both]) + 1e-6)
        rows.append({"output": label, "shape": list(a.shape), "bitwise_equal": a.tobytes() == b.tobytes(),
                     "max_abs_diff": float(diff.max()) if diff.size else 0.0,
                     "max_rel_diff": float(rel.max()) if rel.size else 0.0,
                     "unwritten_emulator": int(unwritten(a).sum()), "unwritten_gpu": int(unwritten(b).sum()),
                     "nonfinite_mismatch": int((np.isfinite(a64) != np.isfinite(b64)).sum())})
    return rows


def _load_real(ex, code: str):
    """The learner's module with `import triton` giving real Triton (its jit reads the source via linecache)."""
    import linecache
    import types
    filename = f"{ex.id}.py"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    mod = types.ModuleType(f"sandbox_gpu_{ex.id}")
    mod.__file__ = filename
    exec(compile(code, filename, "exec"), mod.__dict__)
    return mod
