"""`triton.profiler` (minitriton/profiler): Proton's sessions and scopes, the hatchet file, the viewer.

The kernel nodes' traffic is checked against what a vector add must move (n fp32 loads from each of two
inputs, n stores) and a dot's flops against 2·M·N·K; times are the emulator's and only checked to be there,
under their own name (no `time (ns)`, which would read as GPU time).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import profiler as proton
from minitriton.profiler import viewer

N = 1000


def _metadata(grid, kernel, args):
    return {"name": f"{kernel.name} [n={args['n']}]", "flops32": 1.0 * args["n"], "bytes": 12 * args["n"],
            "grid_x": grid[0], "function": "ignored"}


@triton.jit(launch_metadata=_metadata)
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))


def _add():
    x, y = np.arange(N, dtype=np.float32), np.ones(N, np.float32)
    out = np.zeros(N, np.float32)
    add_kernel[(8,)](x, y, out, N, BLOCK=128)
    np.testing.assert_array_equal(out, x + 1)


def _children(node):
    return {c["frame"]["name"]: c for c in node["children"]}


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    proton.finalize()   # no session and no scope left behind (a mismatched exit_scope leaves its scope, as Proton)
    proton._scopes.__dict__.clear()


def test_launches_land_under_their_scopes_with_the_emulators_counts(in_tmp):
    session = proton.start("run")
    assert session == 0 and proton.profiling_on
    with proton.scope("outer", {"flops32": 5.0, "label": "not a number"}):
        _add()
        _add()
        a, b = np.ones((16, 32), np.float32), np.ones((32, 16), np.float32)
        c = np.zeros((16, 16), np.float32)
        dot_kernel[(1,)](a, b, c, 16, 16, 32)
    _add()
    proton.finalize()
    assert not proton.profiling_on
    root, devices = json.loads((in_tmp / "run.hatchet").read_text())
    assert devices == {} and root["frame"] == {"name": "ROOT", "type": "function"}
    outer = _children(root)["outer"]
    assert outer["metrics"] == {"flops32": 5.0}              # declared once per entry; strings are not metrics
    add = _children(outer)["add_kernel"]["metrics"]          # no hook: the kernel's own name, no metadata node
    assert add["count"] == 2
    assert add["loaded_bytes"] == 2 * 2 * N * 4 and add["stored_bytes"] == 2 * N * 4 and add["atomic_bytes"] == 0
    assert add["emulation_time (ns)"] > 0 and "time (ns)" not in add
    assert _children(outer)["dot_kernel"]["metrics"]["dot_flops"] == 2 * 16 * 16 * 32
    assert _children(root)["add_kernel"]["metrics"]["count"] == 1


def test_the_triton_hook_names_a_node_by_launch_metadata_and_keeps_its_numbers(in_tmp):
    proton.start("hooked", hook="triton")
    _add()
    _add()
    proton.finalize()
    root = json.loads((in_tmp / "hooked.hatchet").read_text())[0]
    op = _children(root)[f"add_kernel [n={N}]"]
    assert op["metrics"] == {"flops32": 2.0 * N, "bytes": 2 * 12 * N, "grid_x": 16}
    assert _children(op)["add_kernel"]["metrics"]["count"] == 2


def test_deactivate_activate_enter_exit_and_decorated_scopes(in_tmp):
    proton.start("sessions")
    proton.deactivate()
    _add()                                                    # not recorded
    proton.activate(0)

    @proton.scope("decorated", {"bytes": 10})
    def work():
        _add()

    work()
    work()
    assert proton.enter_scope("manual", metrics={"flops": 1}) is not None
    _add()
    proton.exit_scope("manual", metrics={"flops": 2})
    with proton.cpu_timed_scope("timed"):
        pass
    with pytest.raises(ValueError, match="reserved"):
        proton.cpu_timed_scope("bad", {"cpu_time": 1})
    proton.finalize(0)
    root = json.loads((in_tmp / "sessions.hatchet").read_text())[0]
    top = _children(root)
    assert set(top) == {"decorated", "manual", "timed"}
    assert top["decorated"]["metrics"] == {"bytes": 20}
    assert _children(top["decorated"])["add_kernel"]["metrics"]["count"] == 2
    assert top["manual"]["metrics"] == {"flops": 3}
    assert top["timed"]["metrics"]["cpu_time (ns)"] >= 0
    proton.start("mismatch")
    proton.enter_scope("a")
    with pytest.raises(ValueError, match="Scope name mismatch: b != a"):
        proton.exit_scope("b")
    proton.finalize()
    with proton.scope("after finalize"):                      # not profiling: nothing to record, no error
        _add()
    assert proton.enter_scope("x") is None


def test_what_cannot_be_measured_is_refused(in_tmp):
    for kwargs in ({"data": "trace"}, {"backend": "instrumentation"}, {"mode": "pcsampling"}, {"hook": "other"}):
        with pytest.raises(ValueError, match="minitriton's profiler supports"):
            proton.start("x", **kwargs)
    proton.start("y")
    with pytest.raises(ValueError, match="output_format"):
        proton.finalize(output_format="chrome_trace")


def test_viewer_sums_inclusively_and_labels_times_as_emulation(in_tmp, capsys):
    proton.start("view", hook="triton")
    with proton.scope("s"):
        _add()
        _add()
    proton.finalize()
    tree, columns = viewer.parse(["time/ms", "tflop32/s", "count", "loaded_bytes", "count/%"], "view.hatchet")
    names = [name for name, _ in columns]
    assert names == ["emulation_time/ms", "emulation tflop32/s", "count", "loaded_bytes", "count/%"]
    kernel = _children(_children(_children(tree)["s"])[f"add_kernel [n={N}]"])["add_kernel"]
    nanoseconds = kernel["metrics"]["emulation_time (ns)"]
    values = [fn(tree["inclusive"]) for _, fn in columns]
    assert values[0] == pytest.approx(nanoseconds / 1e6)
    assert values[1] == pytest.approx(2.0 * N / (nanoseconds * 1e-9) / 1e12)
    assert values[2:] == [2, 2 * 2 * N * 4, 100.0]
    with pytest.raises(RuntimeError, match="Metric flops16 is not found"):
        viewer.parse(["tflop16/s"], "view.hatchet")
    with pytest.raises(ValueError, match="no GPU time"):
        viewer.parse(["util"], "view.hatchet")
    viewer.print_tree(tree, columns)
    out = capsys.readouterr().out
    assert "not GPU time" in out and "└─ " in out and out.splitlines()[1].endswith(" ROOT")
    assert viewer.main(["--list", "view.hatchet"]) == 0
    assert "emulation_time (ns)" in capsys.readouterr().out.split("\n")
