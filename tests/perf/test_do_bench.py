"""`triton.testing.do_bench` under `bench="model"`: the modelled time record() gives the launches, marked as
modelled on stderr and in perf_report's table."""
from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import minitriton
from minitriton import testing
from minitriton.perf import devices

minitriton.install()  # before the kernels import `triton`

from kernels import vector_add  # noqa: E402


@pytest.fixture
def fresh_note(monkeypatch):
    monkeypatch.setattr(testing, "_noted", set())


def test_do_bench_returns_the_modelled_time_of_the_launches(fresh_note, capsys):
    x = np.arange(1 << 14, dtype=np.float32)
    with minitriton.record() as rec:
        vector_add.add(x, x)
        vector_add.add(x, x)
    want = rec[0]["model"]["ms"] + rec[1]["model"]["ms"]
    with minitriton.set_options(bench="model"):
        got = testing.do_bench(lambda: (vector_add.add(x, x), vector_add.add(x, x)))
        low, high = testing.do_bench(lambda: vector_add.add(x, x), quantiles=[0.2, 0.8])
        again = testing.do_bench(lambda: vector_add.add(x, x), return_mode="all")
    assert got == pytest.approx(want, rel=1e-12)
    assert low == high == pytest.approx(want / 2, rel=1e-12) and again == [low]
    note = capsys.readouterr().err.splitlines()
    assert len(note) == 1 and "modelled H100 times" in note[0] and devices.H100.error in note[0]


def test_the_h200_profile_is_said_to_be_uncalibrated(fresh_note, capsys):
    x = np.arange(1 << 22, dtype=np.float32)   # 48 MiB moved: memory-bound, so HBM3e shows
    with minitriton.set_options(bench="model", model_device="H100"):
        h100 = testing.do_bench(lambda: vector_add.add(x, x))
    with minitriton.set_options(bench="model", model_device="H200"):
        h200 = testing.do_bench(lambda: vector_add.add(x, x))
    assert h200 < h100
    assert "uncalibrated" in capsys.readouterr().err.splitlines()[1]


def test_a_call_that_launches_no_kernel_has_no_model(fresh_note):
    with minitriton.set_options(bench="model"):
        assert math.isnan(testing.do_bench(lambda: np.ones(8) + 1))


def test_perf_report_prints_modelled_bandwidth_marked(fresh_note, capsys):
    @testing.perf_report(testing.Benchmark(x_names=["n"], x_vals=[1 << 12, 1 << 16], line_arg="p", line_vals=["t"],
                                           line_names=["Triton"], plot_name="add", args={}))
    def bench(n, p):
        x = np.ones(n, np.float32)
        return 3 * x.nbytes / testing.do_bench(lambda: vector_add.add(x, x)) * 1e-6

    with minitriton.set_options(bench="model"):
        bench.run(print_data=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "add (modelled H100 times):"
    small, large = (float(line.split()[1]) for line in out[2:4])
    assert 0 < small < large < devices.H100.dram_gbs * 1.05   # launch overhead dominates the small one


def test_run_model_prints_modelled_figures_marked(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text("import numpy as np\nimport triton\nfrom kernels import vector_add\n"
                      "x = np.ones(1 << 12, np.float32)\n"
                      "print(triton.testing.do_bench(lambda: vector_add.add(x, x)))\n")
    root = str(pathlib.Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-m", "minitriton", "run", "--model", "h200", str(script)], cwd=root,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    with minitriton.set_options(bench="model", model_device="H200"):
        x = np.ones(1 << 12, np.float32)
        want = testing.modelled_ms(lambda: vector_add.add(x, x))
    assert float(done.stdout.split()[-1]) == pytest.approx(want)
    assert "modelled H200 times" in done.stderr and "uncalibrated" in done.stderr


def test_the_model_device_setting_names_a_profile():
    """Each name the setting accepts has a profile, and a name without one is refused when it is set."""
    import pytest
    from minitriton.options import MODEL_DEVICES
    from minitriton.perf import devices
    assert set(MODEL_DEVICES) == set(devices.PROFILES)
    with pytest.raises(ValueError, match="MINITRITON_MODEL_DEVICE"):
        with minitriton.set_options(model_device="A100"):
            pass
