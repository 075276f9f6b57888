"""The lab server (`python -m sandbox`) in a subprocess on a free 127.0.0.1 port: token and Origin
checks, the API round trips, Stop and the time limit ending a `while True:`, and the GPU op's answer here."""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sandbox.exercises import get

REPO = Path(__file__).resolve().parents[2]


class Server:
    def __init__(self, *args, dist=None, ignore_sigint=False):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MINITRITON_")}
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "sandbox", "--no-browser", *args]
        if dist is not None:
            cmd += ["--dist", str(dist)]
        # started as a background job of a script is, with SIGINT ignored: its workers must still answer Stop
        ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     cwd=REPO, preexec_fn=ignore)
        self.first_line = self.proc.stdout.readline().strip()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", self.first_line)
        if not found:
            self.proc.kill()
            raise AssertionError(f"no URL printed: {self.first_line!r} {self.proc.stderr.read()[-2000:]}")
        self.port, self.token = int(found.group(1)), found.group(2)
        self.origin = f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None, headers=None, host=None, timeout=120):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.putrequest(method, path, skip_host=host is not None)
            if host is not None:
                conn.putheader("Host", host)
            data = body.encode() if isinstance(body, str) else body
            for k, v in (headers or {}).items():
                conn.putheader(k, v)
            if data is not None:
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def api(self, op, request, token=True, origin=True, **kw):
        headers = {}
        if token:
            headers["X-Token"] = self.token if token is True else token
        if origin:
            headers["Origin"] = self.origin if origin is True else origin
        status, _, body = self.request("POST", f"/api/{op}", json.dumps(request), headers, **kw)
        return status, json.loads(body)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    d = tmp_path_factory.mktemp("dist")
    (d / "index.html").write_text("<!doctype html><title>sandbox</title>", encoding="utf-8")
    (d / "app.js").write_text("export const x = 1;\n", encoding="utf-8")
    (d / "config.json").write_text('{"buildId": "b1"}', encoding="utf-8")
    (d.parent / "secret.txt").write_text("not for the browser", encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def server(dist):
    s = Server("--port", "0", "--time-limit", "60", dist=dist)
    yield s
    s.close()


def test_prints_a_url_with_a_random_token(server):
    assert re.fullmatch(r"minitriton lab: http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{32}", server.first_line)


def test_the_api_needs_the_token(server):
    assert server.api("exercises", {}, token=False)[0] == 403
    status, body = server.api("exercises", {}, token="wrong" + server.token)
    assert status == 403 and body["error"]["type"] == "Forbidden"
    assert "X-Token" in body["error"]["message"]


def test_the_api_refuses_other_origins_and_hosts(server):
    status, body = server.api("exercises", {}, origin="http://evil.example")
    assert status == 403 and body["error"]["message"] == "requests from http://evil.example are refused"
    assert server.api("exercises", {}, origin=f"http://127.0.0.1:{server.port + 1}")[0] == 403
    assert server.api("exercises", {}, origin="null")[0] == 403
    assert server.api("exercises", {}, host=f"evil.example:{server.port}")[0] == 403     # DNS rebinding
    status, body = server.api("exercises", {"lang": "en"})
    assert status == 200 and [e["id"] for e in body["exercises"]][0] == "copy"
    assert server.api("exercises", {}, origin=False)[0] == 200                            # curl, same-origin GET


def test_static_files_and_nothing_outside_dist(server):
    status, headers, body = server.request("GET", "/")
    assert status == 200 and body == b"<!doctype html><title>sandbox</title>"
    status, headers, body = server.request("GET", "/app.js")
    assert status == 200 and headers["Content-Type"] == "text/javascript" and body == b"export const x = 1;\n"
    assert server.request("GET", "/../secret.txt")[0] == 404
    assert server.request("GET", "/%2e%2e/secret.txt")[0] == 404
    assert server.request("GET", "/missing.js")[0] == 404
    assert server.request("GET", "/api/run")[0] == 405
    assert server.request("GET", "/", host="evil.example")[0] == 403
    status, _, body = server.request("POST", "/api/run", b"[1]", {"X-Token": server.token})
    assert status == 400


def test_run_check_hint_round_trips(server):
    status, body = server.api("check", {"exercise": "rmsnorm", "code": get("rmsnorm").solution["en"], "lang": "en"})
    assert status == 200 and body["passed"] and len(body["tests"]) == 6
    status, body = server.api("run", {"exercise": "practice", "code": get("practice").starter["ru"]})
    assert status == 200 and body["ok"] and [x["kernel"] for x in body["launches"]] == [
        "add_kernel", "softmax_kernel", "matmul_kernel"]
    assert "часть выхода не записана" in body["stdout"]
    status, body = server.api("hint", {"exercise": "practice", "index": 1, "lang": "en"})
    assert body == {"hint": get("practice").hints[1]["en"], "index": 1, "total": 4}
    status, body = server.api("check", {"exercise": "practice", "code": "def broken(:\n", "lang": "en"})
    assert body["error"]["type"] == "SyntaxError" and body["error"]["line"] == 1
    status, body = server.api("teleport", {})
    assert status == 200 and body["error"]["type"] == "BadRequest"


def test_output_written_to_the_raw_file_descriptor_cannot_corrupt_the_answer(server):
    code = 'import os\nos.write(1, b"{garbage")\nprint("printed")\n'
    status, body = server.api("run", {"exercise": "practice", "code": code})
    assert status == 200 and body["stdout"] == "printed\n"


def _looping(marker) -> str:
    """A student's runaway loop that first leaves `marker`: the test stops it once it runs (a Stop while the
    worker starts up knows no line)."""
    return f"open({str(marker)!r}, 'w').close()\nwhile True:\n    pass\n"


def _wait_for(marker, seconds=60):
    deadline = time.monotonic() + seconds
    while not marker.exists():
        assert time.monotonic() < deadline, "the loop never started"
        time.sleep(0.05)


def test_stop_ends_a_runaway_loop(server, tmp_path):
    answer = {}
    marker = tmp_path / "running"

    def run():
        answer["result"] = server.api("run", {"exercise": "practice", "code": _looping(marker)})
    thread = threading.Thread(target=run)
    thread.start()
    _wait_for(marker)
    deadline = time.monotonic() + 30
    stopped = 0
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.2)
        stopped = server.api("stop", {})[1]["stopped"]
    thread.join(timeout=30)
    assert stopped == 1 and not thread.is_alive()
    status, body = answer["result"]
    assert status == 200 and body["error"]["type"] == "KeyboardInterrupt", body
    line = body["error"]["line"]       # Stop says where the code was
    assert line in (2, 3) and body["error"]["message"] == f"остановлено в строке {line}"
    # and the server keeps serving
    assert server.api("run", {"exercise": "practice", "code": "print(1)\n"})[1]["stdout"] == "1\n"


def test_stop_kills_a_worker_that_does_not_answer_the_interrupt(server):
    answer = {}
    code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"

    def run():
        answer["result"] = server.api("run", {"exercise": "practice", "code": code})
    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 30
    stopped = 0
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.2)
        stopped = server.api("stop", {})[1]["stopped"]
    thread.join(timeout=30)
    assert stopped == 1 and not thread.is_alive()
    status, body = answer["result"]
    assert status == 200 and body["error"]["type"] == "Stopped" and body["error"]["message"] == "остановлено"


def test_a_stop_that_cuts_the_request_leaves_one_line_in_the_terminal(dist, tmp_path):
    """The page's Stop cuts its request once the server has stopped the run: the answer has nobody to go to,
    and the terminal gets one line saying what stopped where (no traceback of the broken connection)."""
    s = Server(dist=dist, ignore_sigint=True)
    try:
        marker = tmp_path / "running"
        body = json.dumps({"exercise": "practice", "code": _looping(marker)})
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
        conn.request("POST", "/api/run", body, {"X-Token": s.token, "Content-Type": "application/json"})
        _wait_for(marker)
        conn.close()          # the page cuts the request...
        deadline = time.monotonic() + 30
        stopped = 0
        while not stopped and time.monotonic() < deadline:
            stopped = s.api("stop", {})[1]["stopped"]     # ...and the server stops the run
            time.sleep(0.2)
        assert stopped == 1
        time.sleep(0.5)       # the stopped run's answer meets the closed connection
        assert s.api("run", {"exercise": "practice", "code": "print(1)\n"})[1]["stdout"] == "1\n"
    finally:
        assert s.close() == 0
    lines = s.proc.stderr.read().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"stopped: practice \(run\) at line [23]", lines[0]), lines


def _cuda_available() -> bool | None:
    probe = "import torch; print(torch.cuda.is_available())"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    return None if done.returncode else done.stdout.strip() == "True"


def test_gpu_op_reports_why_it_is_unavailable(server):
    cuda = _cuda_available()
    if cuda:
        pytest.skip("this machine has CUDA: the GPU comparison itself runs (not covered here)")
    status, body = server.api("gpu", {"exercise": "practice", "code": get("practice").solution["en"]}, timeout=300)
    assert status == 200 and body["available"] is False
    expected = "CUDA is not available to torch" if cuda is False else "torch does not import"
    assert body["reason"].startswith(expected)


def test_time_limit_and_a_clean_exit(dist):
    s = Server("--time-limit", "1.5", dist=dist)
    try:
        status, body = s.api("run", {"exercise": "practice", "code": "while True:\n    pass\n", "lang": "en"})
        assert status == 200 and body["error"] == {"type": "TimeLimit", "message": "stopped after the 1.5 s limit",
                                                   "line": None, "col": None, "program": None, "traceback": ""}
    finally:
        code = s.close()
    assert code == 0          # SIGTERM shuts down like Ctrl-C, its worker processes with it


def test_without_a_built_page_it_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINITRITON_")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-m", "sandbox", "--no-browser", "--dist", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "node web/build.mjs" in done.stderr, done.stderr


def test_the_emulator_has_no_serve_command():
    done = subprocess.run([sys.executable, "-m", "minitriton", "serve"], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert done.returncode == 2 and "invalid choice: 'serve'" in done.stderr


def _raw(port, data: bytes) -> bytes:
    """Bytes sent on one connection; everything the server answers until it closes or goes quiet."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        sock.settimeout(3)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def _post(port, path, body: bytes, token="", length=None):
    length = len(body) if length is None else length
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"X-Token: {token}\r\nContent-Length: {length}\r\n\r\n").encode() + body


def test_a_refused_request_leaves_its_connection_in_step(server):
    """The 403 reads its body, so the next request on the kept-alive connection is parsed as sent."""
    body = b'{"lang": "ru"}'
    out = _raw(server.port, _post(server.port, "/api/exercises", body, token="stale")
               + _post(server.port, "/api/info", b"{}", token=server.token)
               + f"GET /app.js HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n".encode())
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", out)
    assert statuses == [b"403", b"200", b"200"], out[:600]
    assert b'"reason": "token"' in out and b'"lab": true' in out and out.endswith(b"export const x = 1;\n")


def test_a_body_over_the_limit_is_refused_and_the_connection_closed(server):
    big = b"x" * (2**20 + 1)
    out = _raw(server.port, _post(server.port, "/api/run", big, token=server.token)
               + _post(server.port, "/api/info", b"{}", token=server.token))
    assert re.findall(rb"HTTP/1\.1 (\d{3}) ", out) == [b"413"], out[:600]
    assert b"Connection: close" in out and b'"type": "TooLarge"' in out


def test_the_page_learns_it_is_in_lab_mode_from_its_config_without_the_token(server):
    status, headers, body = server.request("GET", "/config.json")
    assert status == 200 and json.loads(body) == {"buildId": "b1", "lab": True}
    status, headers, body = server.request("GET", "/api/info")
    assert status == 405
    status, body = server.api("info", {}, token="stale")
    assert status == 403 and body["error"]["reason"] == "token"
    status, body = server.api("info", {}, origin="http://evil.example")
    assert status == 403 and body["error"]["reason"] == "origin"
    status, body = server.api("info", {})
    assert status == 200 and body["lab"] is True


def test_gpu_comparison_of_outputs():
    """What the GPU op reports per output, on arrays made here (the GPU run itself needs CUDA)."""
    import numpy as np

    from sandbox.exercises._base import filled
    from sandbox.gpu import compare_outputs
    emu = filled(4, np.float32)
    emu[:2] = [1.0, 2.0]                                  # elements 2 and 3 never written
    gpu = np.array([1.0, 2.5, 3.0, np.inf], np.float32)
    row = compare_outputs([("out", emu)], [("out", gpu)])[0]
    assert row == {"output": "out", "shape": [4], "bitwise_equal": False, "max_abs_diff": 0.5,
                   "max_rel_diff": 0.5 / (2.5 + 1e-6), "unwritten_emulator": 2, "unwritten_gpu": 0,
                   "nonfinite_mismatch": 1}
    same = compare_outputs([("c", filled((2, 2), np.float16))], [("c", filled((2, 2), np.float16))])[0]
    assert same["bitwise_equal"] and same["max_abs_diff"] == 0.0 and same["unwritten_gpu"] == 4
