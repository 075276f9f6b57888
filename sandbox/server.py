"""Lab mode: the sandbox page served by a local CPython process (`python -m minitriton serve`).

* Listens on 127.0.0.1 only. A random token is made at start and printed in the page's URL
  (http://127.0.0.1:PORT/?token=...); `POST /api/<op>` needs it in the `X-Token` header, and a request
  whose `Origin` (or `Host`) is not this server's own is refused with 403. Static files are public.
* `POST /api/<op>` takes the bridge's JSON (sandbox/bridge.py). exercises/hint/solution answer in this
  process; run/check/memory/gpu each run in a fresh subprocess with a wall-clock limit, so `POST /api/stop`
  (or the limit) ends a `while True:` at once. A spare subprocess is started ahead, with NumPy and minitriton
  already imported, so a request does not wait for Python to start.
* The extra op "gpu" runs the learner's code with real Triton on CUDA and compares its outputs with the
  emulator's; it answers {"available": false, "reason"} when Triton + CUDA do not import.
* Serves web/dist when it exists (build it with `node web/build.mjs`), else a page saying how to build it.

CPython only (threads, subprocesses, sockets): the bridge never imports this module.
"""
from __future__ import annotations

import argparse
import hmac
import http.server
import json
import mimetypes
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import webbrowser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "web" / "dist"
LOCAL_OPS = ("exercises", "hint", "solution")
WORKER_OPS = ("run", "check", "memory", "gpu")
MAX_BODY = 2**20
SERIAL_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}   # latency, not BLAS
CONTENT_TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
                 ".json": "application/json", ".whl": "application/octet-stream", ".zip": "application/zip"}


def _say(key, lang, **fields):
    from . import messages
    return messages.say(key, lang, **fields)


def _error(type_, message):
    return {"error": {"type": type_, "message": message, "line": None, "col": None, "program": None,
                      "traceback": ""}}


# ---------------------------------------------------------------- subprocesses

def worker_env() -> dict:
    env = dict(os.environ)
    env.update(SERIAL_ENV)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONIOENCODING"] = "utf-8"
    return env


class Workers:
    """One subprocess per request, one spare started ahead; stop() kills the running ones."""

    def __init__(self, time_limit: float):
        self.time_limit = time_limit
        self.lock = threading.Lock()
        self.running: set = set()
        self.stopped: set = set()
        self.spare = None
        self.env = worker_env()
        self.closed = False

    def _spawn(self):
        return subprocess.Popen([sys.executable, "-m", "sandbox.server", "--worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, cwd=str(ROOT),
                                start_new_session=os.name == "posix")

    def warm(self):
        with self.lock:
            if self.spare is None and not self.closed:
                self.spare = self._spawn()

    def _take(self):
        with self.lock:
            proc = self.spare if self.spare is not None and self.spare.poll() is None else self._spawn()
            self.spare = None if self.closed else self._spawn()
            self.running.add(proc)
            return proc

    def call(self, op: str, request: dict, lang: str) -> dict:
        proc = self._take()
        payload = json.dumps({"op": op, "request": request}).encode()
        try:
            out, err = proc.communicate(payload, timeout=self.time_limit)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            return _error("TimeLimit", _say("time_limit", lang, seconds=f"{self.time_limit:g}"))
        finally:
            with self.lock:
                self.running.discard(proc)
        with self.lock:
            if proc in self.stopped:
                self.stopped.discard(proc)
                return _error("Stopped", _say("stopped", lang))
        if proc.returncode != 0 or not out.strip():
            tail = err.decode("utf-8", "replace").strip().splitlines()[-5:]
            return _error("WorkerError", _say("worker_failed", lang,
                                              message="\n".join(tail) or f"exit status {proc.returncode}"))
        return json.loads(out.decode("utf-8"))

    def stop(self) -> int:
        with self.lock:
            procs = list(self.running)
            self.stopped.update(procs)
        for proc in procs:
            _kill(proc)
        return len(procs)

    def close(self):
        with self.lock:
            self.closed = True
            procs = list(self.running) + ([self.spare] if self.spare is not None else [])
            self.spare = None
        for proc in procs:
            _kill(proc)
            try:
                proc.communicate(timeout=5)
            except (subprocess.TimeoutExpired, ValueError, OSError):
                pass


def _kill(proc):
    """Kill a worker and anything it started (its own session on POSIX)."""
    if proc.poll() is not None:
        return
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


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
    print(json.dumps({"ok": False, "reason": f"real Triton does not import ({type(e).__name__}: {e})"})); raise SystemExit
print(json.dumps({"ok": True, "reason": "", "device": torch.cuda.get_device_name(0), "triton": triton.__version__,
                  "torch": torch.__version__}))
"""


class GpuProbe:
    """Whether real Triton + CUDA import in a subprocess (asked once, then remembered)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.result = None

    def get(self) -> dict:
        with self.lock:
            if self.result is None:
                try:
                    done = subprocess.run([sys.executable, "-c", GPU_PROBE], capture_output=True, timeout=120,
                                          env=worker_env(), cwd=str(ROOT))
                    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
                    self.result = json.loads(lines[-1]) if lines else {
                        "ok": False, "reason": "the probe printed nothing: " + done.stderr.decode()[-300:]}
                except (subprocess.TimeoutExpired, OSError, ValueError) as e:
                    self.result = {"ok": False, "reason": f"the probe failed ({type(e).__name__}: {e})"}
            return self.result


# ---------------------------------------------------------------- HTTP

class LabServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, time_limit: float = 60.0, dist: Path | None = None, token: str | None = None):
        super().__init__(("127.0.0.1", port), Handler)
        self.port = self.server_address[1]
        self.token = token or secrets.token_urlsafe(24)
        self.dist = Path(dist) if dist else DIST
        self.workers = Workers(time_limit)
        self.gpu = GpuProbe()
        self.origins = {f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"}
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def server_close(self):
        self.workers.close()
        super().server_close()


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "minitriton-lab/0.1"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # keep the terminal for the URL and real problems
        if os.environ.get("MINITRITON_SERVE_LOG"):
            super().log_message(format, *args)

    # -------------------------------------------------- answers
    def _send(self, status: int, body: bytes, content_type: str, extra: dict | None = None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: dict):
        from .bridge import dumps
        self._send(status, dumps(data).encode("utf-8"), "application/json; charset=utf-8", {"Cache-Control": "no-store"})

    def _forbidden(self, why: str):
        self._json(403, _error("Forbidden", why))

    def _host_ok(self) -> bool:
        return self.headers.get("Host", "") in self.server.hosts

    # -------------------------------------------------- static files
    def do_GET(self):
        if not self._host_ok():
            return self._forbidden("unknown Host header (the lab server answers 127.0.0.1 only)")
        path = unquote(urlsplit(self.path).path)
        if path.startswith("/api/"):
            return self._json(405, _error("MethodNotAllowed", "use POST /api/<op>"))
        dist = self.server.dist
        if not (dist / "index.html").is_file():
            return self._send(200, NOT_BUILT.encode("utf-8"), "text/html; charset=utf-8")
        target = (dist / path.lstrip("/")).resolve()
        if path.endswith("/"):
            target = target / "index.html"
        inside = dist.resolve() in target.parents
        if not inside or not target.is_file():
            return self._send(404, b"not found", "text/plain; charset=utf-8")
        kind = CONTENT_TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        self._send(200, target.read_bytes(), kind, {"Cache-Control": "no-cache"})

    do_HEAD = do_GET

    # -------------------------------------------------- the API
    def do_POST(self):
        path = urlsplit(self.path).path
        if not path.startswith("/api/"):
            return self._json(404, _error("NotFound", "POST /api/<op> only"))
        if not self._host_ok():
            return self._forbidden("unknown Host header (the lab server answers 127.0.0.1 only)")
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.origins:
            return self._forbidden(f"requests from {origin} are refused")
        token = self.headers.get("X-Token", "")
        if not hmac.compare_digest(token.encode(), self.server.token.encode()):
            return self._forbidden("missing or wrong X-Token (open the URL the server printed)")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._json(413, _error("TooLarge", f"the request is over {MAX_BODY} bytes"))
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(request, dict):
                raise ValueError("the request must be a JSON object")
        except ValueError as e:
            return self._json(400, _error("BadRequest", str(e)))
        self._json(200, self.server_op(path[len("/api/"):], request))

    def server_op(self, op: str, request: dict) -> dict:
        from . import messages
        lang = messages.lang_of(request)
        if op == "stop":
            return {"stopped": self.server.workers.stop()}
        if op in LOCAL_OPS:
            from . import bridge
            return bridge.dispatch(op, request)
        if op == "gpu":
            probe = self.server.gpu.get()
            if not probe.get("ok"):
                return {"available": False, "reason": probe.get("reason", "")}
        if op in WORKER_OPS:
            return self.server.workers.call(op, request, lang)
        from . import bridge
        return bridge.dispatch(op, request)   # the bridge's own "unknown op" answer


NOT_BUILT = """<!doctype html>
<html lang="ru"><meta charset="utf-8"><title>minitriton lab</title>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 46em; margin: 3em auto">
<h1>minitriton lab</h1>
<p>Сервер работает, но страница песочницы ещё не собрана. Соберите её и перезапустите сервер:</p>
<p>The server is up, but the sandbox page is not built yet. Build it, then restart the server:</p>
<pre>cd web &amp;&amp; npm ci &amp;&amp; node build.mjs
python -m minitriton serve</pre>
<p>API: <code>POST /api/&lt;op&gt;</code> (exercises, run, check, hint, solution, memory, gpu, stop) with the
header <code>X-Token</code> from the URL the server printed.</p>
</body></html>
"""


# ---------------------------------------------------------------- entry points

def serve(port: int = 0, open_browser: bool = True, time_limit: float = 60.0, dist: str | None = None) -> int:
    """Run the lab server until Ctrl-C; prints the URL (with the token) first."""
    server = LabServer(port, time_limit, Path(dist) if dist else None)
    server.workers.warm()
    print(f"minitriton lab: {server.url}", flush=True)
    if not (server.dist / "index.html").is_file():
        print(f"  (the page is not built: {server.dist} has no index.html; run `node web/build.mjs`)", flush=True)
    print("  listening on 127.0.0.1 only; Ctrl-C stops it", flush=True)
    if open_browser:
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)   # `kill PID` closes down like Ctrl-C: workers included
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitriton serve", description="the sandbox in lab mode")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return serve(args.port, not args.no_browser, args.time_limit, args.dist)


def add_arguments(parser):
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds one run/check may take (default 60)")
    parser.add_argument("--dist", default=None, help="the built page (default: web/dist next to the package)")


# ---------------------------------------------------------------- the subprocess side

def worker_main() -> int:
    """One request: JSON {"op", "request"} on stdin, the answer on stdout. Anything the code prints goes to
    stderr at the file-descriptor level, so it cannot corrupt the answer."""
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    from . import bridge   # noqa: F401  (imported before the request arrives: this process may be the spare)
    data = json.loads(sys.stdin.buffer.read() or b"{}")
    op, request = data.get("op"), data.get("request") or {}
    if op == "gpu":
        result = gpu_compare(request)
    else:
        result = bridge.dispatch(op, request)
    answer.write(bridge.dumps(result))
    answer.flush()
    return 0


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
    from . import bridge, messages
    from .exercises._base import Fail
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


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker_main())
    sys.exit(main())
