"""sandbox.bridge: the JSON protocol the page (Pyodide) and the lab server speak, under CPython."""
from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from minitriton.diagnostics import Diagnostic
from sandbox import bridge, explain, messages
from sandbox.exercises import EXERCISES, get

SANDBOX = Path(bridge.__file__).resolve().parent
PRACTICE = get("practice").solution["en"]
S = messages.NNBSP


def call(op: str, request) -> dict:
    """Through the string entry point, as the page does; the answer must be strict JSON (no NaN)."""
    text = bridge.handle(op, json.dumps(request))
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c} in the answer"))


def error_keys(err):
    assert set(err) - {"program_text", "diagnostic"} == {"type", "message", "line", "col", "program", "traceback"}, err
    return err


# ---------------------------------------------------------------- exercises, hint, solution

def test_exercises_lists_the_course_in_order_in_each_language():
    for lang in ("ru", "en"):
        data = call("exercises", {"lang": lang})["exercises"]
        assert [e["id"] for e in data] == [ex.id for ex in EXERCISES]
        for e, ex in zip(data, EXERCISES):
            assert e["title"] == ex.title[lang] and e["statement"] == ex.statement[lang]
            assert e["starter"] == ex.starter[lang]
            assert e["hints"] == len(ex.hints) == len(e["hint_texts"])
            assert e["hint_texts"] == [h[lang] for h in ex.hints]
            assert e["tests"] == [t.title[lang] for t in ex.tests] and e["test_ids"] == [t.id for t in ex.tests]
            compile(e["starter"], "starter.py", "exec")
    assert call("exercises", {})["exercises"][0]["title"] == EXERCISES[0].title["ru"]   # Russian by default
    assert call("exercises", {"lang": "de"})["exercises"][0]["title"] == EXERCISES[0].title["ru"]


def test_hints_come_one_at_a_time():
    ex = get("rmsnorm")
    for k in range(len(ex.hints)):
        r = call("hint", {"exercise": "rmsnorm", "index": k, "lang": "en"})
        assert r == {"hint": ex.hints[k]["en"], "index": k, "total": len(ex.hints)}
    for bad in (len(ex.hints), -1, "0", True, None):
        err = error_keys(call("hint", {"exercise": "rmsnorm", "index": bad, "lang": "en"})["error"])
        assert err["type"] == "BadRequest" and err["message"].startswith("there is no hint")


def test_the_starter_hash_names_the_starter_in_both_languages():
    ru, en = (call("exercises", {"lang": lang})["exercises"] for lang in ("ru", "en"))
    assert [e["starter_hash"] for e in ru] == [e["starter_hash"] for e in en]
    assert len({e["starter_hash"] for e in ru}) == len(ru)


def test_solutions_come_all_at_once_for_the_built_site():
    for lang in ("ru", "en"):
        assert call("solutions", {"lang": lang}) == {"solutions": {ex.id: ex.solution[lang] for ex in EXERCISES}}


def test_solution_returns_the_hidden_reference():
    assert call("solution", {"exercise": "softmax_bwd", "lang": "ru"}) == {"code": get("softmax_bwd").solution["ru"]}
    assert "solution" not in json.dumps(call("exercises", {"lang": "en"}))  # not leaked by the listing
    assert get("softmax_bwd").solution["en"] not in json.dumps(call("exercises", {"lang": "en"}))


# ---------------------------------------------------------------- the bridge never raises

@pytest.mark.parametrize("op, text, message", [
    ("run", "[1, 2]", "неверный запрос: the request must be a JSON object"),
    ("run", "{not json", "неверный запрос: "),
    ("teleport", "{}", "неизвестная операция «teleport»"),
    ("run", '{"exercise": "nope", "code": ""}', f"нет упражнения «nope» (есть: {', '.join(e.id for e in EXERCISES)})"),
    ("check", '{"exercise": "practice"}', "неверный запрос: `code` must be a string"),
    ("memory", '{"exercise": "practice", "code": "", "source": "demo"}', "неверный запрос: `source` must be"),
    ("memory", '{"exercise": "practice", "code": "", "launch": "x"}', "неверный запрос: `launch`"),
    ("memory", '{"exercise": "practice", "code": "", "launch": 0, "grid": [2, -1]}', "неверный запрос: `grid`"),
])
def test_bad_requests_become_errors(op, text, message):
    answer = json.loads(bridge.handle(op, text))
    err = error_keys(answer["error"])
    assert err["type"] == "BadRequest" and err["message"].startswith(message)


def test_gpu_is_a_lab_only_op():
    assert call("gpu", {"exercise": "practice", "code": PRACTICE, "lang": "en"}) == {
        "available": False, "reason": "running on the GPU needs lab mode (python -m sandbox)"}


# ---------------------------------------------------------------- run

def test_run_shows_the_demo_its_prints_and_counters():
    code = PRACTICE.replace("    pid = tl.program_id(0)                      # this program's number: 0, 1, 2, ...\n",
                            "    pid = tl.program_id(0)\n    print(\"pid\", pid)\n") + \
        '\nprint("module level")\nif __name__ == "__main__":\n    print("main block")\n'
    r = call("run", {"exercise": "practice", "code": code, "lang": "en"})
    assert r["ok"] and r["error"] is None and isinstance(r["seconds"], float)
    out = r["stdout"]
    assert out.startswith("module level\nmain block\n")
    assert [line for line in out.splitlines() if line.startswith("pid (")] == [
        f"pid ({p}, 0, 0) idx () pid: {p}" for p in range(3)]       # add_kernel, n = 10, BLOCK = 4: 3 programs
    assert "add_kernel, n = 10, BLOCK = 4: [ 1.  2.  3.  4.  5.  6.  7.  8.  9. 10.] — matches NumPy" in out
    assert [(x["kernel"], x["grid"]) for x in r["launches"]] == [
        ("add_kernel", [3, 1, 1]), ("softmax_kernel", [4, 1, 1]), ("matmul_kernel", [3, 3, 1])]
    add = r["launches"][0]["tensors"]
    assert add["out_ptr"]["totals"]["stored_bytes"] == 10 * 4
    assert add["x_ptr"]["per_program"]["masked_load_lanes"] == [0, 0, 2]


def test_check_does_not_run_the_main_block():
    code = PRACTICE + '\nif __name__ == "__main__":\n    print("main block")\n'
    r = call("check", {"exercise": "practice", "code": code, "lang": "en"})
    assert r["passed"] and "main block" not in r["stdout"]


def test_run_points_at_the_line_and_program_of_a_kernel_error():
    code = PRACTICE.replace("    y = tl.load(y_ptr + offs, mask=mask)\n", "    y = tl.load(y_ptr + offs)\n")
    line = code.splitlines().index("    y = tl.load(y_ptr + offs)") + 1
    r = call("run", {"exercise": "practice", "code": code, "lang": "ru"})
    assert not r["ok"]
    err = error_keys(r["error"])
    assert (err["type"], err["line"], err["col"], err["program"]) == ("OutOfBoundsError", line, 8, [2, 0, 0])
    assert err["message"].startswith(
        f"tl.load читает за концом `y_ptr` (строка {line}, программа 2). За границу выходят 2 из 4 дорожек (первая: "
        f"2): смещения 10…11 от `y_ptr`, а в `y_ptr` 10 элементов (допустимые смещения 0…9). ")
    # the record comes along: the span, the offsets, the suggestion
    record = err["diagnostic"]
    assert (record["kind"], record["line"], record["program"], record["source"]) == (
        "out_of_bounds", line, [2], "    y = tl.load(y_ptr + offs)\n")
    assert (record["fields"]["tensor"], record["fields"]["offsets"]) == ("y_ptr", {"runs": [[10, 11]], "count": 2})
    assert record["suggestion"]["kind"]
    # the traceback keeps the learner's frames only, in Russian, and ends with the record for a terminal
    assert "minitriton/" not in err["traceback"] and "sandbox/" not in err["traceback"]
    assert err["traceback"].startswith(f'  файл "practice.py", строка {line}, в add_kernel\nOutOfBoundsError: tl.load '
                                       f'читает за концом `y_ptr` (practice.py:{line}, программа (2,))\n')
    tail = err["traceback"].rstrip("\n").splitlines()
    assert tail[-3].startswith("  исправление: ") and tail[-2:] == ["    y = tl.load(y_ptr + offs)",
                                                                    "        ^^^^^^^^^^^^^^^^^^^^^"]


def test_the_program_is_written_as_the_message_writes_it():
    """A 2-D grid's program is "(0, 0)" in the message, so the error's program_text says the same (the padded
    [x, y, z] stays for the editor)."""
    start = PRACTICE.index("        b = tl.load(b_ptr + ks[:, None] * N + offs_n[None, :],")
    end = PRACTICE.index("\n", PRACTICE.index("\n", start) + 1)
    code = PRACTICE[:start] + "        b = tl.load(b_ptr + ks[:, None] * N + offs_n[None, :])" + PRACTICE[end:]
    err = error_keys(call("run", {"exercise": "practice", "code": code, "lang": "en"})["error"])
    assert err["type"] == "OutOfBoundsError" and err["program"] == [0, 0, 0]
    assert err["program_text"] == "(0, 0)" and err["message"].startswith("tl.load reads past the end of `b_ptr` (line ")
    assert ", program (0, 0))" in err["message"]
    one_d = PRACTICE.replace("    y = tl.load(y_ptr + offs, mask=mask)\n", "    y = tl.load(y_ptr + offs)\n")
    assert call("run", {"exercise": "practice", "code": one_d, "lang": "en"})["error"]["program_text"] == "2"


def test_host_errors_point_at_the_line():
    code = "import triton\n\n\ndef helper():\n    return 1 / 0\n\n\nhelper()\n"
    err = error_keys(call("run", {"exercise": "rmsnorm", "code": code, "lang": "en"})["error"])
    assert (err["type"], err["line"], err["program"]) == ("ZeroDivisionError", 5, None)
    assert err["message"] == "ZeroDivisionError at line 5: division by zero"
    assert 'File "rmsnorm.py", line 8, in <module>' in err["traceback"]


def test_a_missing_kernel_in_run_is_an_exercise_error():
    r = call("run", {"exercise": "rmsnorm", "code": "import triton\n", "lang": "en"})
    assert not r["ok"] and r["error"]["type"] == "ExerciseError"
    assert r["error"]["message"].startswith("there is no `rmsnorm_kernel` in your code")


def test_output_is_capped():
    r = call("run", {"exercise": "practice", "code": 'print("x" * 50_000)\n', "lang": "en"})
    assert r["stdout"] == "x" * bridge.STDOUT_LIMIT + "\n… (output cut at 20,000 characters)"


def test_imports_of_triton_give_minitriton_without_touching_sys_modules():
    before = {k: sys.modules.get(k) for k in ("triton", "triton.language")}
    code = ("import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n"
            "print(triton.__name__, tl.__name__, libdevice.__name__)\n")
    r = call("run", {"exercise": "practice", "code": code, "lang": "en"})
    assert r["stdout"].splitlines()[0] == "minitriton minitriton.language minitriton.language.extra.libdevice"
    assert {k: sys.modules.get(k) for k in before} == before


def test_fp32_dots_default_to_tf32_whatever_the_host_sets(monkeypatch):
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    code = 'import os\nprint(os.environ.get("TRITON_F32_DEFAULT"))\n'
    assert call("run", {"exercise": "practice", "code": code})["stdout"] == "None\n"
    assert os.environ["TRITON_F32_DEFAULT"] == "ieee"
    # and so the boss's reference without input_precision="ieee" fails even here
    tf32 = get("flash_attention").solution["en"].replace(', input_precision="ieee"', "")
    assert not call("check", {"exercise": "flash_attention", "code": tf32})["passed"]


def test_each_op_starts_afresh():
    first = call("run", {"exercise": "practice", "code": PRACTICE + "\nCOUNT = globals().get('COUNT', 0) + 1\n"
                                                                     "print(COUNT)\n"})
    second = call("run", {"exercise": "practice", "code": PRACTICE + "\nCOUNT = globals().get('COUNT', 0) + 1\n"
                                                                      "print(COUNT)\n"})
    assert first["stdout"].startswith("1\n") and second["stdout"].startswith("1\n")
    assert len(first["launches"]) == len(second["launches"]) == 3


# ---------------------------------------------------------------- check

def test_check_answer_shape():
    r = call("check", {"exercise": "rmsnorm", "code": get("rmsnorm").solution["ru"], "lang": "ru"})
    assert set(r) == {"passed", "tests", "stdout", "error", "launches", "seconds"}
    assert r["passed"] and r["error"] is None
    for t, spec in zip(r["tests"], get("rmsnorm").tests):
        assert t == {"id": spec.id, "name": spec.title["ru"], "passed": True, "message": t["message"],
                     "tolerance": (spec.tolerance or {}).get("ru")}
    assert {x["test"] for x in r["launches"]} == {t.id for t in get("rmsnorm").tests}
    assert all("trace" not in x for x in r["launches"])


def test_value_only_tests_run_without_counters():
    """The boss's value tests run unrecorded (the counters' bookkeeping would double the check's time), so Check
    lists the launch of its traffic test only; Run still shows the demo's counters."""
    code = get("flash_attention").solution["en"]
    assert [x["test"] for x in call("check", {"exercise": "flash_attention", "code": code})["launches"]] == [
        "causal_skip"]
    assert [x["grid"] for x in call("run", {"exercise": "flash_attention", "code": code})["launches"]] == [[2, 2, 1]]


# ---------------------------------------------------------------- memory

def offsets(runs):
    """The offsets of the bridge's runs [start, length, ...]."""
    return [o for s, n in zip(runs[0::2], runs[1::2]) for o in range(s, s + n)]


def memory(source, launch, code=PRACTICE, exercise="practice", lang="en"):
    made = call(source, {"exercise": exercise, "code": code, "lang": lang})
    grid = made["launches"][launch]["grid"]
    return call("memory", {"exercise": exercise, "code": code, "source": source, "launch": launch, "grid": grid,
                           "lang": lang})


def test_memory_picture_traces_every_program_of_a_run_launch():
    r = memory("run", 0)
    assert r["source"] == "run" and r["launch_index"] == 0 and r["launches"] == 3
    assert r["launch"]["kernel"] == "add_kernel" and "trace" not in r["launch"]
    assert r["traced"] == 3 and [p["program"] for p in r["programs"]] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    assert r["tensors"]["x_ptr"] == {"shape": [10], "strides": [1], "dtype": "fp32", "itemsize": 4}
    # n = 10, BLOCK = 4: program p owns offsets 4p…4p+3; program 2's 10 and 11 are masked off
    for p in range(3):
        own = list(range(4 * p, min(4 * p + 4, 10)))
        t = r["programs"][p]["tensors"]
        assert offsets(t["x_ptr"]["loaded"]) == own and t["x_ptr"]["stored"] == []
        assert offsets(t["out_ptr"]["stored"]) == own and t["out_ptr"]["loaded"] == []
    assert r["programs"][2]["tensors"]["x_ptr"]["loaded"] == [8, 2]                   # one run of two
    assert r["programs"][2]["counters"]["x_ptr"]["masked_load_lanes"] == 2
    assert r["programs"][2]["counters"]["out_ptr"]["masked_store_lanes"] == 2
    assert r["traffic"]["total"] == {"loaded_bytes": 80, "stored_bytes": 40, "ideal_bytes": 120, "ratio": 1.0}
    # per-access detail from the recorder: each program's load and store in order, on their kernel lines,
    # and program 2's masked-off lanes where they point (offsets 10 and 11, past the end of the tensors)
    steps = r["programs"][2]["steps"]
    assert [(s["kind"], s["tensor"], s["offsets"], s["masked"]) for s in steps] == [
        ("load", "x_ptr", [8, 2], [10, 2]), ("load", "y_ptr", [8, 2], [10, 2]), ("store", "out_ptr", [8, 2], [10, 2])]
    assert [s["line"] for s in steps] == [steps[0]["line"], steps[0]["line"] + 1, steps[0]["line"] + 2]
    assert r["programs"][2]["tensors"]["x_ptr"]["masked"] == [10, 2]
    assert r["programs"][0]["tensors"]["x_ptr"].get("masked", []) == []
    assert len(r["values"]["out_ptr"]) == 10


def test_memory_picture_of_a_matmul_tile():
    r = memory("run", 2)
    # the demo: A 40 x 20, B 20 x 36, 16-tiles, grid (3, 3); program (1, 2) computes C rows 16…31, columns 32…35
    prog = next(p for p in r["programs"] if p["program"] == [1, 2, 0])
    assert prog["linear"] == 1 * 3 + 2 and len(r["programs"]) == 9
    t = prog["tensors"]
    assert offsets(t["a_ptr"]["loaded"]) == sorted(r_ * 20 + k for r_ in range(16, 32) for k in range(20))
    assert offsets(t["b_ptr"]["loaded"]) == sorted(k * 36 + c for k in range(20) for c in range(32, 36))
    assert offsets(t["c_ptr"]["stored"]) == sorted(r_ * 36 + c for r_ in range(16, 32) for c in range(32, 36))
    assert r["tensors"]["a_ptr"]["shape"] == [40, 20] and r["tensors"]["a_ptr"]["strides"] == [20, 1]
    # each row of A tiles is read once per column of tiles (3), each column of B once per row of tiles (3)
    assert r["traffic"]["a_ptr"]["loaded_bytes"] == 40 * 20 * 4 * 3 and r["traffic"]["a_ptr"]["ratio"] == 3.0
    assert r["traffic"]["b_ptr"]["loaded_bytes"] == 20 * 36 * 4 * 3
    assert prog["counters"]["a_ptr"]["loaded_bytes"] == 16 * 20 * 4


def test_memory_picture_of_a_check_launch_is_the_tests_own():
    check = call("check", {"exercise": "practice", "code": PRACTICE, "lang": "en"})
    k, launch = next((i, L) for i, L in enumerate(check["launches"]) if L["test"] == "add_tail")
    r = memory("check", k)
    assert r["source"] == "check" and r["launch"]["test"] == "add_tail" and r["launch"]["grid"] == launch["grid"]
    n, block = 98_432, 1024
    assert len(r["programs"]) == -(-n // block)
    last = r["programs"][-1]
    assert offsets(last["tensors"]["y_ptr"]["loaded"]) == list(range((len(r["programs"]) - 1) * block, n))
    assert last["counters"]["y_ptr"]["masked_load_lanes"] == len(r["programs"]) * block - n
    # every element is stored by exactly one program
    stored = sorted(o for p in r["programs"] for o in offsets(p["tensors"]["out_ptr"]["stored"]))
    assert stored == list(range(n))


def test_only_the_pictured_launch_is_traced():
    """The other launches of the op keep their usual records (no per-program trace)."""
    from sandbox import memory_picture
    from sandbox.exercises._base import Session
    kept = []
    with bridge._op(bridge.Capture()), memory_picture.trace_launch(1, [4]) as tracer:
        get("practice").demo(bridge.load(get("practice"), PRACTICE, as_main=False), "en")
        kept = list(Session.launches)
    assert [bool(L.get("trace")) for L in kept] == [False, True, False]
    assert tracer.record["kernel"] == "softmax_kernel" and len(tracer.record["trace"]) == 4


def test_memory_refuses_missing_launches_and_bad_grids():
    err = call("memory", {"exercise": "practice", "code": PRACTICE, "source": "run", "launch": 3, "grid": [1],
                          "lang": "en"})["error"]
    assert err["message"] == "there is no launch 4: the demo made 3"
    err = call("memory", {"exercise": "practice", "code": PRACTICE, "source": "run", "launch": 0, "grid": [0],
                          "lang": "en"})["error"]
    assert err["type"] == "BadRequest" and "`grid`" in err["message"]
    starter_oob = PRACTICE.replace("    x = tl.load(x_ptr + offs, mask=mask)\n", "    x = tl.load(x_ptr + offs)\n")
    failed = call("memory", {"exercise": "practice", "code": starter_oob, "source": "run", "launch": 0, "grid": [3],
                             "lang": "en"})          # a launch that failed is drawn up to its failure
    assert "error" not in failed and failed["launch"]["error"]["program"] == [2]


def test_per_access_detail_becomes_steps_masked_lanes_and_values():
    """The picture's steps, masked lanes and values from a record that carries per-access detail (the format the
    page draws; the recorder's part is its own)."""
    from minitriton.picture.data import picture
    zeros = [0, 0]
    per_program = {f: zeros for f in ("loaded_bytes", "stored_bytes", "masked_load_lanes", "masked_store_lanes")}
    totals = {f: 0 for f in ("loaded_elements", "loaded_bytes", "stored_elements", "stored_bytes", "atomic_elements",
                             "unique_loaded_bytes", "masked_load_lanes", "masked_store_lanes")}
    record = {
        "kernel": "copy", "grid": [2, 1, 1], "num_programs": 2,
        "tensors": {"x_ptr": {"dtype": "fp32", "shape": [6], "per_program": per_program, "totals": totals}},
        "trace": [{"program": [1], "tensors": {"x_ptr": {"loaded": [4, 5], "stored": [], "atomic": []}}},
                  {"program": [0], "tensors": {"x_ptr": {"loaded": [0, 1, 2, 3], "stored": [], "atomic": []}}}],
        "accesses": [{"program": [1, 0, 0], "kind": "load", "tensor": "x_ptr", "line": 7, "offsets": [4],
                      "masked": [6, 7]},
                     {"program": [1, 0, 0], "kind": "load", "tensor": "x_ptr", "line": 7, "offsets": [5],
                      "masked": [8, 9]}],
        "values": {"x_ptr": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]},
    }
    d = picture(record)
    assert [p["program"] for p in d["programs"]] == [[0, 0, 0], [1, 0, 0]]
    one = d["programs"][1]
    assert one["steps"] == [{"line": 7, "kind": "load", "tensor": "x_ptr", "offsets": [4, 1], "masked": [6, 2]},
                            {"line": 7, "kind": "load", "tensor": "x_ptr", "offsets": [5, 1], "masked": [8, 2]}]
    assert one["tensors"]["x_ptr"]["masked"] == [6, 4] and "steps" not in d["programs"][0]
    assert d["values"] == {"x_ptr": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]}
    assert "accesses" not in d["launch"] and "values" not in d["launch"]


def test_runs_are_sorted_distinct_consecutive_offsets():
    from minitriton.picture.data import runs
    assert runs([]) == []
    assert runs([5, 3, 4, 4, 9, 10, -2]) == [-2, 1, 3, 3, 9, 2]


# ---------------------------------------------------------------- what the browser can run

BROWSER_MODULES = ["bridge.py", "memory_picture.py", "messages.py", "__init__.py"] + [
    f"exercises/{p.name}" for p in sorted((SANDBOX / "exercises").glob("*.py"))]
FORBIDDEN = {"threading", "subprocess", "signal", "multiprocessing", "socket", "http", "asyncio", "concurrent",
             "torch", "triton"}


@pytest.mark.parametrize("module", BROWSER_MODULES)
def test_browser_side_imports_numpy_stdlib_and_minitriton_only(module):
    tree = ast.parse((SANDBOX / module).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    assert not names & FORBIDDEN
    assert names <= {"__future__", "builtins", "contextlib", "hashlib", "io", "json", "linecache", "math", "os", "re",
                     "time", "traceback", "types", "dataclasses", "typing", "itertools", "numpy", "minitriton"}


def test_importing_the_bridge_does_not_import_the_server():
    code = "import sys, sandbox.bridge; print('sandbox.server' in sys.modules)"
    import subprocess
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=SANDBOX.parent,
                         timeout=120, check=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------- Stop says where the code was

SPIN = ("    x = tl.load(x_ptr + offs, mask=mask)\n",
        "    x = tl.load(x_ptr + offs, mask=mask)\n    i = 0\n    while i < 1000000000:\n        i += 1\n")


@contextlib.contextmanager
def stop_after(seconds: float):
    """Stop as the page's interrupt buffer does it: a KeyboardInterrupt in the middle of whatever runs."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX timers")
@pytest.mark.parametrize("op", ["run", "check"])
def test_stop_in_a_kernel_says_the_line(op):
    code = get("copy").solution["en"].replace(*SPIN)
    loop = code.splitlines().index("    while i < 1000000000:") + 1
    with stop_after(1.0):
        answer = call(op, {"exercise": "copy", "code": code, "lang": "ru"})
    err = error_keys(answer["error"])
    line = err["line"]
    assert err["type"] == "KeyboardInterrupt" and line in (loop, loop + 1), err
    assert f"строке {line}" in err["message"] or f"строка {line}" in err["message"], err["message"]
    if op == "check":        # the tests after the stopped one do not run
        assert len(answer["tests"]) == 1 and not answer["passed"]
        assert answer["tests"][0]["message"] == err["message"]


def test_stop_with_a_record_says_the_line_and_the_program():
    """A KeyboardInterrupt that minitriton caught in a launch carries a record of kind "stopped"; the page says
    the line and the program from it."""
    code = get("copy").solution["en"].replace(*SPIN)
    line = code.splitlines().index("    while i < 1000000000:") + 1
    stop = KeyboardInterrupt()
    stop.diagnostic = Diagnostic("stopped", {"running": "3, 4", "programs": [[3], [4]], "count": 2}).located(
        "copy_kernel", "copy.py", line, 4, 25, code.splitlines(True)[line - 1], (3,))
    for lang, place in (("ru", f"строка {line}, программа 3"), ("en", f"line {line}, program 3")):
        err = error_keys(explain.error_info(stop, "copy.py", lang))
        assert (err["type"], err["line"], err["col"], err["program"], err["program_text"]) == (
            "KeyboardInterrupt", line, 4, [3, 0, 0], "3")
        assert place in err["message"] and err["diagnostic"]["kind"] == "stopped"
        assert bool(re.search("[а-яё]", err["message"])) == (lang == "ru")


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX timers")
def test_stop_in_host_code_says_the_line():
    code = "import time\n\n\nwhile True:\n    time.sleep(0.01)\n"
    with stop_after(0.3):
        err = error_keys(call("run", {"exercise": "copy", "code": code, "lang": "en"})["error"])
    assert (err["type"], err["line"], err["program"]) == ("KeyboardInterrupt", 5, None)
    assert err["message"] == "stopped at line 5" and err["diagnostic"] is None
