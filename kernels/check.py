"""Each kernel run once against its float64 reference, with the bytes its launches moved.

    python -m kernels [NAME ...]      on minitriton (NumPy arrays, any CPU); all five kernels by default
    python -m kernels.NAME            with a CUDA GPU and Triton: the module's GPU check (matmul and
                                      flash_attention also time themselves against torch); without one it
                                      says so and checks NAME on minitriton instead

One line per kernel: the inputs, whether every output is within `kernels.tolerances` of the module's
`reference_*`, the largest absolute error, and on minitriton the bytes the launches loaded and stored against
the ideal `traffic()`. Shapes have ragged tails (sizes that are no multiple of the block). fp32 `tl.dot` runs
as on the GPU, in TF32, and is compared with the TF32 tolerance. Exit status 1 when a check fails.
"""
from __future__ import annotations

import ctypes
import importlib
import importlib.util
import subprocess
import sys
import time

import numpy as np

from kernels import KERNELS, tolerances

_rng = np.random.default_rng(0)


def _normal(*shape):
    return _rng.standard_normal(shape, dtype=np.float32)


def _vector_add(m, arr):
    x, y = _normal(98_432), _normal(98_432)
    return "x, y: float32[98432]", [("out", m.add(arr(x), arr(y)), m.reference_add(x, y), "float32")], \
        m.traffic(98_432)["bytes"]


def _softmax(m, arr):
    x = _normal(1823, 781)
    return "x: float32[1823, 781]", [("y", m.softmax(arr(x)), m.reference_softmax(x), "float32")], \
        m.traffic(1823, 781)["bytes"]


def _rmsnorm(m, arr):
    x, w = _normal(512, 1000), _normal(1000)
    return "x: float32[512, 1000], w: float32[1000]", \
        [("y", m.rmsnorm(arr(x), arr(w)), m.reference_rmsnorm(x, w), "float32")], m.traffic(512, 1000)["bytes"]


def _matmul(m, arr):
    a, b = _normal(300, 200), _normal(200, 129)
    return "a: float32[300, 200], b: float32[200, 129]", \
        [("c", m.matmul(arr(a), arr(b)), m.reference_matmul(a, b, tf32=True), "tf32")], \
        m.traffic(300, 129, 200, "float32")["bytes"]


def _flash_attention(m, arr):
    q, k, v = _normal(2, 3, 100, 64), _normal(2, 3, 100, 64), _normal(2, 3, 100, 64)
    o, lse = m.flash_attention(arr(q), arr(k), arr(v), causal=True)
    ref_o, ref_lse = m.reference_attention(q, k, v, causal=True)
    return "q, k, v: float32[2, 3, 100, 64], causal", [("O", o, ref_o, "tf32"), ("L", lse, ref_lse, "tf32")], \
        m.traffic(2, 3, 100, 64, True, "float32")["bytes"]


CASES = {"vector_add": _vector_add, "softmax": _softmax, "rmsnorm": _rmsnorm, "matmul": _matmul,
         "flash_attention": _flash_attention}
assert tuple(CASES) == KERNELS


def _max_error(actual, expected) -> float:
    from kernels import _host
    diff = np.abs(_host.to_float64(actual) - expected)
    return float(np.nanmax(diff)) if diff.size else 0.0


def _moved_bytes(recording) -> int:
    return sum(t["totals"]["loaded_bytes"] + t["totals"]["stored_bytes"] + t["totals"]["atomic_bytes"]
               for launch in recording for t in launch["tensors"].values())


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def check(name: str, arr=np.asarray, counters: bool = True) -> bool:
    """Run kernel `name` on arrays made by `arr` (NumPy by default); print its line; True when it passes."""
    from kernels import _host
    module = importlib.import_module(f"kernels.{name}")
    t0 = time.perf_counter()
    if counters:
        import minitriton
        with minitriton.record() as rec:
            inputs, outputs, ideal = CASES[name](module, arr)
        moved = f"moved {_mb(_moved_bytes(rec))} (ideal {_mb(ideal)})"
    else:
        inputs, outputs, ideal = CASES[name](module, arr)
        moved = f"ideal traffic {_mb(ideal)}"
    seconds = time.perf_counter() - t0
    failures = []
    for what, actual, expected, tol in outputs:
        try:
            tolerances.assert_close(_host.to_float64(actual), expected, tol, what)
        except AssertionError as exc:
            failures.append(str(exc))
    err = max(_max_error(actual, expected) for _, actual, expected, _ in outputs)
    status = "ok    " if not failures else "FAILED"
    print(f"{status} {name:<16} {inputs:<42} err {err:<8.2g} {moved}  {seconds:.2f} s", flush=True)
    for line in failures:
        print(f"       {line}")
    return not failures


def main(argv=None) -> int:
    """`python -m kernels [NAME ...]`: check the kernels on minitriton."""
    names = list(sys.argv[1:] if argv is None else argv) or list(KERNELS)
    unknown = [n for n in names if n not in KERNELS]
    if unknown or any(n.startswith("-") for n in names):
        print(f"usage: python -m kernels [NAME ...]  (NAME: {', '.join(KERNELS)})", file=sys.stderr)
        return 2
    import minitriton
    minitriton.install()  # before the kernel modules import `triton`
    print(f"the lesson's kernels on minitriton {minitriton.__version__}, against float64 NumPy references")
    results = [check(n) for n in names]
    return 0 if all(results) else 1


def cuda_devices() -> int:
    """How many CUDA devices the NVIDIA driver shows this process (0 without a driver); imports no torch."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def _cuda_available() -> bool:
    if not cuda_devices() or importlib.util.find_spec("torch") is None:
        return False
    import torch
    return torch.cuda.is_available()


def main_for(name: str, gpu_main=None) -> int:
    """`python -m kernels.NAME`: on a CUDA GPU `gpu_main()` (or this check on CUDA tensors); else minitriton."""
    if not _cuda_available():
        print(f"kernels.{name}: no CUDA GPU here, so it runs on minitriton instead "
              f"(python -m kernels {name})", flush=True)
        return subprocess.call([sys.executable, "-m", "kernels", name])
    if gpu_main is not None:
        gpu_main()
        return 0
    import torch
    return 0 if check(name, arr=lambda a: torch.from_numpy(a).cuda(), counters=False) else 1
