"""`python -m minitriton run` sanitizes unless told not to: scripts as a user writes them, run in a subprocess.

Races, loads of memory made by `np.empty` / `torch.empty` & co. that nothing wrote, and launches that leave such
an output partly unwritten are reported; `--no-sanitize`, MINITRITON_SANITIZE=0 and `set_options(sanitize=False)`
switch it off. A plain `python script.py` keeps the library's default (off).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

KERNELS = '''
import numpy as np
import triton
import triton.language as tl


@triton.jit
def forgot_pid(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)            # every program writes the same elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.program_id(0), mask=offs < n)


@triton.jit
def copy(x_ptr, out_ptr, n, STORE_N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < STORE_N)
'''


def _run(tmp_path, body, *flags, env=None, runner=("-m", "minitriton", "run")):
    script = tmp_path / "script.py"
    kernels = KERNELS if runner else KERNELS.replace("import triton", "import minitriton as triton", 1).replace(
        "import triton.language", "import minitriton.language")
    script.write_text(kernels + textwrap.dedent(body))
    environ = {k: v for k, v in os.environ.items() if k != "MINITRITON_SANITIZE"}
    environ.update(PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, *runner, *flags, str(script)], cwd=tmp_path, env=environ,
                          capture_output=True, text=True, timeout=300)


RACE = '''
x = np.arange(64, dtype=np.float32)
out = np.zeros(64, np.float32)
forgot_pid[(4,)](x, out, 64, BLOCK=64)
print("out[0] =", out[0])
'''


def test_a_race_is_reported_by_default(tmp_path):
    done = _run(tmp_path, RACE)
    assert done.returncode == 1 and "out[0]" not in done.stdout
    assert "SanitizerError: tl.store races with program (0,): both write `out_ptr` (script.py:" in done.stderr


@pytest.mark.parametrize("how", ["--no-sanitize", "MINITRITON_SANITIZE=0", "set_options", "plain python"])
def test_told_not_to_it_does_not_sanitize(tmp_path, how):
    body = "import minitriton\nminitriton.set_options(sanitize=False)\n" + RACE if how == "set_options" else RACE
    flags = ("--no-sanitize",) if how == "--no-sanitize" else ()
    env = {"MINITRITON_SANITIZE": "0"} if how.startswith("MINITRITON") else None
    if how == "plain python":   # the library alone: its default stays off
        done = _run(tmp_path, body, env=env, runner=())
    else:
        done = _run(tmp_path, body, *flags, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "out[0] = 3.0\n"          # the last program's value won, as on a GPU by chance


@pytest.mark.parametrize("made,alloc", [("np.empty", "np.empty(64, np.float32)"),
                                        ("np.empty_like", "np.empty_like(out)")])
def test_loads_of_numpy_empty_memory_name_the_constructor(tmp_path, made, alloc):
    done = _run(tmp_path, f'''
        out = np.zeros(64, np.float32)
        x = {alloc}
        x[:10] = 1.0                     # the host wrote these: they hold a value
        copy[(2,)](x, out, 10, 64, BLOCK=32)
        print("masked loads are fine")
        copy[(2,)](x, out, 64, 64, BLOCK=32)
    ''')
    assert done.stdout == "masked loads are fine\n"
    assert ("SanitizerError: tl.load reads `x_ptr` elements that were never written (script.py:" in done.stderr
            and "program (0,))" in done.stderr)
    assert (f"offsets 10…31 of `x_ptr` hold no value yet (the array was made by {made}, which leaves it "
            f"uninitialised)") in done.stderr
    assert done.returncode == 1


@pytest.mark.torch
@pytest.mark.parametrize("made,alloc", [("torch.empty", "torch.empty(64)"),
                                        ("torch.empty_like", "torch.empty_like(out)"),
                                        ("Tensor.new_empty", "out.new_empty((64,))")])
def test_loads_of_torch_empty_memory_name_the_constructor(tmp_path, made, alloc):
    pytest.importorskip("torch")
    done = _run(tmp_path, f'''
        import torch
        out = torch.zeros(64)
        x = {alloc}
        copy[(2,)](x, out, 64, 64, BLOCK=32)
    ''')
    assert done.returncode == 1
    assert (f"offsets 0…31 of `x_ptr` hold no value yet (the array was made by {made}, which leaves it "
            f"uninitialised)") in done.stderr


@pytest.mark.torch
def test_an_output_left_partly_unwritten_is_reported_after_the_launch(tmp_path):
    pytest.importorskip("torch")
    done = _run(tmp_path, '''
        import torch
        x = torch.arange(100, dtype=torch.float32)
        out = torch.empty_like(x)
        copy[(4,)](x, out, 100, 90, BLOCK=32)        # stores only offs < 90
        print(out[88:].tolist())
        full = torch.empty(100)
        copy[(4,)](x, full, 100, 100, BLOCK=32)      # every element: nothing to say
    ''')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[88.0, 89.0" + ", nan" * 10 + "]\n"    # the fill: never a plausible value
    assert done.stderr.count("UnwrittenOutputWarning") == 1
    assert ("script.py:21: UnwrittenOutputWarning: kernel `copy` left elements 90…99 of `out_ptr` (made by "
            "torch.empty_like) unwritten: the store masks of programs 2, 3 excluded them") in done.stderr


def test_a_numpy_script_does_not_import_torch(tmp_path):
    done = _run(tmp_path, '''
        import sys
        out = np.empty(64, np.float32)
        copy[(2,)](np.ones(64, np.float32), out, 64, 64, BLOCK=32)
        print("torch" in sys.modules, float(out.sum()))
    ''')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False 64.0\n" and done.stderr == ""


LOCKED = '''
@triton.jit
def row_sums(X, Partial, Locks, Count, N, SLOTS: tl.constexpr, LOCKED: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols, mask=cols < N, other=0.0)
    slot = row % SLOTS
    if LOCKED:
        while tl.atomic_cas(Locks + slot, 0, 1) == 1:
            pass
    if tl.load(Count + slot) == 0:
        tl.atomic_xchg(Count + slot, 1)
    else:
        x += tl.load(Partial + slot * N + cols, mask=cols < N)
    tl.store(Partial + slot * N + cols, x, mask=cols < N)
    if LOCKED:
        tl.atomic_xchg(Locks + slot, 0)


x = np.arange(200, dtype=np.float32).reshape(10, 20)
partial = np.empty((4, 20), np.float32)
locks, count = np.zeros(4, np.int32), np.zeros(4, np.int32)
row_sums[(10,)](x, partial, locks, count, 20, SLOTS=4, LOCKED=LOCKED, BLOCK=32)
print(bool(np.array_equal(partial, np.stack([x[s::4].sum(0) for s in range(4)]))))
'''


def test_a_lock_protected_accumulation_passes_and_its_unlocked_twin_is_reported(tmp_path):
    done = _run(tmp_path, "LOCKED = True\n" + LOCKED)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")
    done = _run(tmp_path, "LOCKED = False\n" + LOCKED)
    assert done.returncode == 1
    assert "SanitizerError: tl.load reads `Partial` elements that program (0,) writes in the same launch" in \
        done.stderr


@pytest.mark.torch
def test_an_atomic_add_into_torch_empty_is_an_uninitialised_read(tmp_path):
    """The classic: a sum accumulated with tl.atomic_add into torch.empty (torch.zeros was meant)."""
    pytest.importorskip("torch")
    body = '''
        import torch

        @triton.jit
        def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))

        out = torch.ALLOC(1)
        total[(4,)](torch.ones(100), out, 100, BLOCK=32)
        print(out.item())
    '''
    done = _run(tmp_path, body.replace("ALLOC", "empty"))
    assert done.returncode == 1
    assert "SanitizerError: tl.atomic_add reads `out_ptr` elements that were never written (script.py:" in done.stderr
    assert "(the array was made by torch.empty, which leaves it uninitialised)" in done.stderr
    done = _run(tmp_path, body.replace("ALLOC", "zeros"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "100.0\n", "")
