"""The child side of `parity.oracle`: `python -m parity._child BACKEND` serves jobs on stdin.

Protocol: the child prints `READY {json info}` (or `UNAVAILABLE message` and exits 3) on its stdout, then
reads one job folder per line from stdin, runs its cases and prints `DONE`. Anything the kernels print goes
to stderr (the protocol keeps the original stdout to itself). After a sticky CUDA error (illegal address,
device-side assert) the context is unusable: the child writes that case's status and exits, and the parent
starts a new child for the remaining cases.
"""
from __future__ import annotations

import importlib
import json
import os
import pathlib
import platform
import sys
import traceback
import warnings
from contextlib import contextmanager

import numpy as np

from parity.oracle import _STICKY_CUDA, CRASH_STDERR, cpu_model
from parity.transport import _c_strides, _view


@contextmanager
def captured_stderr(box: list):
    """Copy what the process writes to file descriptor 2 (MLIR/ptxas diagnostics come from C++, below
    Python's sys.stderr) into box[0] as text, and still pass it on to the real stderr. The copy is a file in
    the working folder named after the process: when the compiler aborts the process (an LLVM assertion),
    its message stays there for the parent to read (`oracle.Worker.crash_text`)."""
    sys.stderr.flush()
    saved = os.dup(2)
    path = pathlib.Path(CRASH_STDERR.format(pid=os.getpid()))
    with open(path, "w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield box
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            data = tmp.read()
            os.write(2, data)
            box.append(data.decode("utf-8", "replace"))
    path.unlink(missing_ok=True)


def diagnostics(text: str, limit: int = 12) -> str:
    """The compiler's messages from captured stderr: what it printed before dumping the failing MLIR module
    (e.g. "Unsupported conversion ..."), then its "error:" lines."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    dump = next((i for i, ln in enumerate(lines) if ln.startswith(("#", "module", "{-#"))), len(lines))
    picked = lines[:dump][-4:] + [ln for ln in lines[dump:] if "error" in ln.lower()]
    return "\n".join(picked[:limit])


class Runtime:
    def __init__(self, backend: str):
        self.backend = backend
        self.torch = None
        self.device = "cpu"
        info = {"backend": backend, "python": platform.python_version(), "numpy": np.__version__}
        if backend == "minitriton":
            import minitriton
            minitriton.install()
            import minitriton.language as mtl
            self.mt, self.mtl = minitriton, mtl
            info.update(minitriton=minitriton.__version__, device=cpu_model())
        else:
            import torch
            import triton
            self.torch = torch
            info.update(triton=triton.__version__, torch=torch.__version__)
            if backend == "cuda" and os.environ.get("PARITY_CUDA_SMOKE") != "1":
                if not torch.cuda.is_available():
                    raise RuntimeError("torch.cuda.is_available() is False: no CUDA device for --target cuda")
                self.device = "cuda"
                props = torch.cuda.get_device_properties(0)
                info.update(device=torch.cuda.get_device_name(0), cuda=torch.version.cuda,
                            capability=".".join(map(str, torch.cuda.get_device_capability(0))),
                            sm_count=props.multi_processor_count)
            else:
                info.update(device=cpu_model() + (" (cuda smoke run under TRITON_INTERPRET=1)"
                                                  if backend == "cuda" else ""),
                            interpret=os.environ.get("TRITON_INTERPRET"))
        info["TRITON_F32_DEFAULT"] = os.environ.get("TRITON_F32_DEFAULT")
        self.info = info

    # ---------------------------------------------------------------- arrays in and out
    def to_backend(self, spec, inputs):
        value, keep = self._to_backend(spec, inputs)
        if "descriptor" in spec:
            from triton.tools.tensor_descriptor import TensorDescriptor   # minitriton's under minitriton
            value = TensorDescriptor.from_tensor(value, spec["descriptor"]["block"],
                                                 padding=spec["descriptor"]["padding"])
        return value, keep

    def _to_backend(self, spec, inputs):
        if "array" not in spec:
            v = spec["scalar"]
            return (tuple(v) if spec.get("tuple") else v), None
        flat = inputs[spec["array"]].copy()
        shape, strides = tuple(spec["shape"]), tuple(spec["strides"])
        if self.torch is None:
            view = _view(flat, shape, strides)
            if spec["bf16"]:
                view = self.mt.Buffer(view, self.mtl.bfloat16)
            return view, (flat, spec)
        torch = self.torch
        if spec["bf16"]:
            t = torch.from_numpy(flat.view(np.int16)).to(self.device).view(torch.bfloat16)
        elif flat.dtype.kind == "u" and flat.dtype.itemsize > 1:
            # torch's uint16/32/64 are shell dtypes: move the signed bits, then view them unsigned
            signed = np.dtype(f"i{flat.dtype.itemsize}")
            t = torch.from_numpy(flat.view(signed)).to(self.device).view(getattr(torch, flat.dtype.name))
        else:
            t = torch.from_numpy(flat).to(self.device)
        view = t.as_strided(shape, strides) if shape else t.reshape(())
        return view, (t, spec)

    def back(self, keep, outputs):
        data, spec = keep
        if self.torch is None:
            outputs[spec["array"]] = data
        else:
            outputs[spec["array"]] = self.to_numpy(data)

    def to_numpy(self, t) -> np.ndarray:
        torch = self.torch
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).cpu().numpy().view(np.uint16)
        name = str(t.dtype).replace("torch.", "")
        if name in ("uint16", "uint32", "uint64"):
            signed = getattr(torch, name.replace("u", ""))
            return t.view(signed).cpu().numpy().view(np.dtype(name))
        return t.cpu().numpy()

    def value_out(self, v, key, outputs):
        """A Call's return value (array, Buffer, tensor, scalar) as a JSON spec + an npz entry."""
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, np.generic):
            return v.item()
        bf16 = False
        if self.torch is not None and isinstance(v, self.torch.Tensor):
            v = v.detach().contiguous()
            arr, bf16 = self.to_numpy(v), v.dtype == self.torch.bfloat16
        elif hasattr(v, "triton_dtype") and hasattr(v, "array"):
            arr, bf16 = np.ascontiguousarray(v.array), str(v.triton_dtype) == "bf16"
        else:
            arr = np.ascontiguousarray(np.asarray(v))
        outputs[key] = arr.reshape(-1)
        return {"array": key, "bf16": bf16, "shape": list(arr.shape), "strides": list(_c_strides(arr.shape))}

    # ---------------------------------------------------------------- one job
    def run_job(self, folder: pathlib.Path) -> bool:
        """Run the job's cases; returns False when the process must exit (a sticky CUDA error)."""
        src = str(folder.parent / "src")
        if src not in sys.path:
            sys.path.insert(0, src)
        manifest = json.loads((folder / "manifest.json").read_text())
        with np.load(folder / "inputs.npz") as npz:
            inputs = {k: npz[k] for k in npz.files}
        for i, m in enumerate(manifest):
            outputs, status = {}, {"error": None, "error_type": None, "value": None}
            kept, args, kwargs = [], [], {}
            for spec in m["args"]:
                v, keep = self.to_backend(spec, inputs)
                args.append(v)
                kept.append(keep)
            for k, spec in m["kwargs"].items():
                v, keep = self.to_backend(spec, inputs)
                kwargs[k] = v
                kept.append(keep)
            box = []
            with warnings.catch_warnings(record=True) as caught, captured_stderr(box):
                warnings.simplefilter("always")
                try:
                    if m["call"]:
                        fn = getattr(importlib.import_module(m["module"]), m["function"])
                        ret = fn(*args, **kwargs)
                        rets = list(ret) if isinstance(ret, (tuple, list)) else [ret]
                        status["value"] = [self.value_out(r, f"v{j}", outputs) for j, r in enumerate(rets)]
                    else:
                        module = importlib.import_module(m["module"])
                        getattr(module, m["kernel"])[tuple(m["grid"])](*args, **kwargs)
                    if self.device == "cuda":
                        self.torch.cuda.synchronize()
                except Exception as e:  # noqa: BLE001 - reported per case
                    text = repr(e)
                    if e.__cause__ is not None:
                        text += f" [cause: {e.__cause__!r}]"
                    status["error"] = text + "\n" + traceback.format_exc(limit=-3)
                    status["error_type"] = type(e).__name__
            status["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
            if status["error"] is not None:
                diag = diagnostics(box[0] if box else "")
                status["error"] += ("\n[compiler stderr]\n" + diag) if diag else ""
            sticky = self.device == "cuda" and status["error"] and any(s in status["error"] for s in _STICKY_CUDA)
            if not sticky:
                for keep in kept:
                    if keep is not None:
                        self.back(keep, outputs)
            np.savez(folder / f"out_{i}.npz", **outputs)
            (folder / f"status_{i}.json").write_text(json.dumps(status, default=str))
            if sticky:
                return False
        return True


def main(argv) -> int:
    backend = argv[0]
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                                       # kernel prints (Python or C level) go to stderr
    try:
        rt = Runtime(backend)
    except Exception as e:  # noqa: BLE001 - reported to the parent
        traceback.print_exc()
        proto.write(f"UNAVAILABLE cannot start the {backend} backend: {type(e).__name__}: {e}\n")
        return 3
    proto.write("READY " + json.dumps(rt.info) + "\n")
    for line in sys.stdin:
        folder = line.strip()
        if not folder:
            continue
        if not rt.run_job(pathlib.Path(folder)):
            return 17
        proto.write("DONE\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
