"""Short tracebacks: an error in a kernel shows the user's frames (the script's, up to the launch line, then the
kernel's line with a caret); minitriton's and runpy's frames only with `run --traceback` or MINITRITON_DEBUG=1.
Run as the user runs a script: `python -m minitriton run script.py`, `python script.py`, pytest."""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = str(ROOT / "minitriton")

SCRIPT = textwrap.dedent('''\
    import numpy as np
    import triton
    import triton.language as tl


    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        a = tl.load(x + offs)
        tl.store(out + offs, a + tl.load(y + offs))


    def main():
        x = np.ones(100, np.float32)
        add[(2,)](x, x, np.empty_like(x), 100, BLOCK=64)


    if __name__ == "__main__":
        main()
    ''')
KERNEL_LINE, LAUNCH_LINE = 9, 15


def _run(tmp_path, *args, debug=None):
    (tmp_path / "oob.py").write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MINITRITON_DEBUG", None)
    if debug is not None:
        env["MINITRITON_DEBUG"] = debug
    done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    return done.stderr


def _frames(stderr: str) -> list[tuple[str, int, str]]:
    return [(f, int(n), fn) for f, n, fn in re.findall(r'^  File "([^"]+)", line (\d+), in (\S+)$', stderr, re.M)]


def test_run_shows_the_script_and_the_kernel_only(tmp_path):
    """Before: 32 lines, 15 frames of which 13 were runpy's and minitriton's. Now the script's two frames (the
    call of main, the launch line), the kernel's line with its caret, and the error."""
    err = _run(tmp_path, "-m", "minitriton", "run", "oob.py")
    assert _frames(err) == [("oob.py", 19, "<module>"), ("oob.py", LAUNCH_LINE, "main"),
                            ("oob.py", KERNEL_LINE, "add")], err
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "    add[(2,)](x, x, np.empty_like(x), 100, BLOCK=64)" in lines
    assert lines.count("    a = tl.load(x + offs)") == 2   # in the traceback and under the error, with carets
    assert lines[-1].strip() == "^" * len("tl.load(x + offs)")
    assert "OutOfBoundsError: tl.load reads past the end of `x` (oob.py:9, program (1,))" in err
    assert len(lines) <= 14, err


@pytest.mark.parametrize("how", ["--traceback", "MINITRITON_DEBUG=1"])
def test_internal_frames_on_request(tmp_path, how):
    if how == "--traceback":
        err = _run(tmp_path, "-m", "minitriton", "run", "--traceback", "oob.py")
    else:
        err = _run(tmp_path, "-m", "minitriton", "run", "oob.py", debug="1")
    files = [f for f, _, _ in _frames(err)]
    for internal in ("jit.py", "launch.py", "scheduler.py"):
        assert any(f.startswith(PACKAGE) and f.endswith(internal) for f in files), err
    assert "<frozen runpy>" in files
    assert ("oob.py", KERNEL_LINE, "add") == _frames(err)[-1]


def test_plain_python_keeps_at_most_the_launch_frame(tmp_path):
    """`python script.py` prints with Python's own hook: of minitriton's frames at most the one that re-raised
    the error (JITFunction.run, kept by Python 3.13's bare `raise`) is left between the launch line and the
    kernel's."""
    err = _run(tmp_path, "-c", "import minitriton; minitriton.install(); import runpy; "
                               "runpy.run_path('oob.py', run_name='__main__')")
    frames = _frames(err)
    internal = [f for f in frames if f[0].startswith(PACKAGE)]
    assert [f[2] for f in internal] in ([], ["run"]), err
    assert frames[-1] == ("oob.py", KERNEL_LINE, "add")


@triton.jit
def _out_of_bounds(x):
    tl.store(x + tl.arange(0, 8), 1.0)


def _caught(launch):
    try:
        launch()
    except BaseException as exc:  # noqa: BLE001 - the test looks at what is raised
        return exc
    raise AssertionError("no error")


def test_the_exception_carries_the_users_frames():
    """What pytest and a notebook show: this test's launch line (then, on Python 3.13, JITFunction.run, hidden
    from pytest by its __tracebackhide__), then the kernel's line."""
    exc = _caught(lambda: _out_of_bounds[(1,)](np.zeros(4, np.float32)))
    tb, entries = exc.__traceback__, []
    while tb is not None:
        entries.append((tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    assert [name for f, name in entries if f.startswith(PACKAGE)] in ([], ["run"])
    assert entries[-1] == (__file__, "_out_of_bounds")
    with minitriton.set_options(internal_frames=True):
        exc = _caught(lambda: _out_of_bounds[(1,)](np.zeros(4, np.float32)))
    tb, names = exc.__traceback__, []
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert {"launch", "schedule", "_failed"} <= set(names)


def test_a_grid_callables_error_keeps_its_own_frame():
    """A user's frame inside the launch (the grid callable) is the user's: it stays."""
    def grid(meta):
        return (meta["n"] // 0,)

    @triton.jit
    def k(x, n):
        pass

    exc = _caught(lambda: k[grid](np.zeros(4, np.float32), 4))
    assert isinstance(exc, ZeroDivisionError)
    tb, names = exc.__traceback__, []
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert names[-1] == "grid" and "normalize_grid" not in names


@triton.jit
def _retyped_in_a_branch(x_ptr, n):
    x = tl.load(x_ptr)
    if n > 0:
        for i in range(n):
            x = x.to(tl.float16)
    tl.store(x_ptr, x)


def test_a_loops_check_inside_a_branch_shows_the_loops_line():
    """The rewrite's inserted check of a loop's variables stands at the loop's line, also inside an `if`."""
    exc = _caught(lambda: _retyped_in_a_branch[(1,)](np.ones(1, np.float32), 3))
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    lines, start = inspect.getsourcelines(_retyped_in_a_branch.fn)
    assert tb.tb_frame.f_code.co_name == "_retyped_in_a_branch"
    assert lines[tb.tb_lineno - start].strip() == "for i in range(n):"
