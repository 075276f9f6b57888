"""Lab mode: the sandbox page served by a local CPython process (`python -m sandbox`).

* Listens on 127.0.0.1 only. A random token is made at start and printed in the page's URL
  (http://127.0.0.1:PORT/?token=...); `POST /api/<op>` needs it in the `X-Token` header, and a request
  whose `Origin` (or `Host`) is not this server's own is refused with 403 (the error names the reason:
  "host", "origin" or "token", so the page can say it in its language). Static files are public; the page's
  `config.json` is answered with `"lab": true` added, by which a page opened without its token learns that it
  is in lab mode (a static server's config has no such key, so the page asks nothing that could fail).
* Every request's body is read before it is answered, refused or not, so a kept-alive connection stays in
  step (a body over MAX_BODY gets 413 and the connection is closed).
* `POST /api/<op>` takes the bridge's JSON (sandbox/bridge.py). exercises/solutions/hint/solution answer in
  this process, and "info" checks the token; run/check/memory/gpu each run in a fresh subprocess with a
  wall-clock limit, so `POST /api/stop` (or the limit) ends a `while True:` at once: Stop interrupts the worker
  (its answer says the line and the program the code was at) and kills it if it does not answer within a
  second. The terminal gets one line per Stop ("stopped: copy (run) at line 7"), even when the page has cut
  the request. A spare subprocess is started ahead, with NumPy and minitriton already imported, so a request
  does not wait for Python to start.
* The extra op "gpu" (sandbox/gpu.py) runs the learner's code with real Triton on CUDA and compares its
  outputs with the emulator's; it answers {"available": false, "reason"} when Triton + CUDA do not import.
* Serves the built page (web/dist, from `node web/build.mjs`); without it the server does not start.

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
LOCAL_OPS = ("exercises", "solutions", "hint", "solution")
WORKER_OPS = ("run", "check", "memory", "gpu")
MAX_BODY = 2**20
STOP_GRACE = 3.0          # seconds an interrupted worker has to answer before it is killed (a busy machine needs more than one)
MAX_DRAIN = 16 * 2**20    # a larger refused body is not read: the connection is cut instead
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
            stopped = proc in self.stopped
            self.stopped.discard(proc)
        if stopped:
            answer = _parsed(out) if proc.returncode == 0 else None
            # an interrupted worker answers with where the code was; a killed one says nothing
            if not (answer and answer.get("error")):
                answer = _error("Stopped", _say("stopped", lang))
            print(_stop_line(op, request, answer["error"].get("line")), file=sys.stderr, flush=True)
            return answer
        if proc.returncode != 0 or not out.strip():
            tail = err.decode("utf-8", "replace").strip().splitlines()[-5:]
            return _error("WorkerError", _say("worker_failed", lang,
                                              message="\n".join(tail) or f"exit status {proc.returncode}"))
        return json.loads(out.decode("utf-8"))

    def stop(self) -> int:
        """Interrupt the running workers (a KeyboardInterrupt: the bridge answers with the line and the program
        the code was at), and kill those still running STOP_GRACE seconds later."""
        with self.lock:
            procs = list(self.running)
            self.stopped.update(procs)
        for proc in procs:
            _interrupt_worker(proc)
        deadline = time.monotonic() + STOP_GRACE
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
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


def _stop_line(op: str, request: dict, line) -> str:
    """The terminal's one line about a Stop: which exercise and op, and the line the code was at if known."""
    where = f" at line {line}" if isinstance(line, int) else ""
    return f"stopped: {request.get('exercise')} ({op}){where}"


def _interrupt_worker(proc):
    """Ctrl-C for the worker alone (POSIX); elsewhere it is killed."""
    if os.name != "posix":
        _kill(proc)
        return
    try:
        proc.send_signal(signal.SIGINT)
    except (ProcessLookupError, OSError):
        pass


def _parsed(out: bytes):
    try:
        answer = json.loads(out.decode("utf-8"))
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


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
        self.gpu = None
        self.origins = {f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"}
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def gpu_probe(self):
        if self.gpu is None:
            from .gpu import GpuProbe
            self.gpu = GpuProbe(worker_env(), str(ROOT))
        return self.gpu.get()

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
        if self.close_connection:
            self.send_header("Connection", "close")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        try:
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except ConnectionError:   # the page cut the request (its Stop does): nobody is left to answer
            self.close_connection = True

    def _json(self, status: int, data: dict):
        from .bridge import dumps
        self._send(status, dumps(data).encode("utf-8"), "application/json; charset=utf-8",
                   {"Cache-Control": "no-store"})

    def _refuse(self, status: int, type_: str, message: str, reason: str | None = None):
        answer = _error(type_, message)
        if reason:
            answer["error"]["reason"] = reason
        self._json(status, answer)

    def _host_ok(self) -> bool:
        return self.headers.get("Host", "") in self.server.hosts

    def _read_body(self) -> bytes | None:
        """The request's body, read whatever the answer will be: an unread body would be parsed as the next
        request on this kept-alive connection. None when it cannot be read in full (the connection closes)."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            return None
        if length > MAX_BODY:
            self.close_connection = True
            if length <= MAX_DRAIN:   # drained, so the client reads the 413 instead of a reset connection
                left = length
                while left > 0:
                    chunk = self.rfile.read(min(left, 2**16))
                    if not chunk:
                        break
                    left -= len(chunk)
            return None
        return self.rfile.read(length) if length else b""

    # -------------------------------------------------- static files
    def do_GET(self):
        if self.command == "GET" and self.headers.get("Content-Length"):
            self._read_body()
        if not self._host_ok():
            return self._refuse(403, "Forbidden", "unknown Host header (the lab server answers 127.0.0.1 only)", "host")
        path = unquote(urlsplit(self.path).path)
        if path.startswith("/api/"):
            return self._refuse(405, "MethodNotAllowed", "use POST /api/<op>")
        dist = self.server.dist
        target = (dist / path.lstrip("/")).resolve()
        if path.endswith("/"):
            target = target / "index.html"
        inside = dist.resolve() in target.parents
        if not inside or not target.is_file():
            return self._send(404, b"not found", "text/plain; charset=utf-8")
        kind = CONTENT_TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        body = target.read_bytes()
        if path == "/config.json":
            body = json.dumps({**json.loads(body), "lab": True}).encode("utf-8")
        self._send(200, body, kind, {"Cache-Control": "no-cache"})

    do_HEAD = do_GET

    # -------------------------------------------------- the API
    def do_POST(self):
        body = self._read_body()
        path = urlsplit(self.path).path
        if body is None:
            if self.headers.get("Transfer-Encoding"):
                return self._refuse(411, "LengthRequired", "send the body with a Content-Length")
            return self._refuse(413, "TooLarge", f"the request is over {MAX_BODY} bytes")
        if not path.startswith("/api/"):
            return self._refuse(404, "NotFound", "POST /api/<op> only")
        if not self._host_ok():
            return self._refuse(403, "Forbidden", "unknown Host header (the lab server answers 127.0.0.1 only)", "host")
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.origins:
            return self._refuse(403, "Forbidden", f"requests from {origin} are refused", "origin")
        token = self.headers.get("X-Token", "")
        if not hmac.compare_digest(token.encode(), self.server.token.encode()):
            return self._refuse(403, "Forbidden", "missing or wrong X-Token (open the URL the server printed)", "token")
        try:
            request = json.loads(body or b"{}")
            if not isinstance(request, dict):
                raise ValueError("the request must be a JSON object")
        except ValueError as e:
            return self._refuse(400, "BadRequest", str(e))
        self._json(200, self.server_op(path[len("/api/"):], request))

    def server_op(self, op: str, request: dict) -> dict:
        from . import messages
        lang = messages.lang_of(request)
        if op == "stop":
            return {"stopped": self.server.workers.stop()}
        if op == "info":
            return {"lab": True, "python": sys.version.split()[0]}
        if op in LOCAL_OPS:
            from . import bridge
            return bridge.dispatch(op, request)
        if op == "gpu":
            probe = self.server.gpu_probe()
            if not probe.get("ok"):
                return {"available": False, "reason": probe.get("reason", "")}
        if op in WORKER_OPS:
            return self.server.workers.call(op, request, lang)
        from . import bridge
        return bridge.dispatch(op, request)   # the bridge's own "unknown op" answer


# ---------------------------------------------------------------- entry points

def serve(port: int = 0, open_browser: bool = True, time_limit: float = 60.0, dist: str | None = None) -> int:
    """Run the lab server until Ctrl-C; prints the URL (with the token) first. Without a built page it says
    so in one line on stderr and returns 2."""
    where = Path(dist) if dist else DIST
    if not (where / "index.html").is_file():
        print(f"python -m sandbox: no built page at {where} (index.html is missing): run `node web/build.mjs` "
              "in a checkout of the repository, or pass --dist DIR", file=sys.stderr, flush=True)
        return 2
    server = LabServer(port, time_limit, where)
    server.workers.warm()
    print(f"minitriton lab: {server.url}", flush=True)
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
    parser = argparse.ArgumentParser(prog="python -m sandbox", description="the exercise sandbox in lab mode: "
                                     "the page and a local Python on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds one run/check may take (default 60)")
    parser.add_argument("--dist", default=None, help="the built page (default: web/dist next to the package)")
    args = parser.parse_args(argv)
    return serve(args.port, not args.no_browser, args.time_limit, args.dist)


# ---------------------------------------------------------------- the subprocess side

def worker_main() -> int:
    """One request: JSON {"op", "request"} on stdin, the answer on stdout. Anything the code prints goes to
    stderr at the file-descriptor level, so it cannot corrupt the answer."""
    # Stop is Ctrl-C: a server started where SIGINT is ignored (a background job, nohup) must not pass that on
    signal.signal(signal.SIGINT, signal.default_int_handler)
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    from . import bridge   # noqa: F401  (imported before the request arrives: this process may be the spare)
    data = json.loads(sys.stdin.buffer.read() or b"{}")
    op, request = data.get("op"), data.get("request") or {}
    if op == "gpu":
        from .gpu import gpu_compare
        result = gpu_compare(request)
    else:
        result = bridge.dispatch(op, request)
    answer.write(bridge.dumps(result))
    answer.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker_main())
    sys.exit(main())
