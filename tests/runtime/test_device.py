"""The emulated device as scripts see it: `triton.runtime.driver`, `kernel.warmup()` and its compiled kernel,
parameters named like launch options, and what `python -m minitriton run` makes torch.cuda answer
(docs/device.md)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.runtime import device, driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_driver_describes_the_h200_with_tritons_keys():
    props = driver.active.utils.get_device_properties(None)
    # measured with Triton 3.6's driver on the H200 (docs/device.md)
    assert props == {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132, "warpSize": 32,
                     "sm_clock_rate": 1980000, "mem_clock_rate": 3201000, "mem_bus_width": 6016}
    assert driver.active.utils.get_device_properties(0) == props
    target = driver.active.get_current_target()
    assert (target.backend, target.arch, target.warp_size) == ("cuda", 90, 32)
    assert driver.active.get_current_device() == 0 and driver.active.get_current_stream() == 0
    with pytest.raises(ValueError, match="one GPU"):
        driver.active.utils.get_device_properties(1)


@pytest.mark.torch
def test_active_torch_device_is_the_cpu_and_the_runtime_is_importable_as_triton_runtime():
    torch = pytest.importorskip("torch")
    assert driver.active.get_active_torch_device() == torch.device("cpu")
    assert triton.runtime.driver is driver
    assert driver.active.utils.get_device_properties(torch.device("cpu").index)["multiprocessor_count"] == 132


def test_set_active_and_reset_active():
    other = object()
    driver.set_active(other)
    try:
        assert driver.active is other
    finally:
        driver.reset_active()
    assert driver.active is driver.default


@triton.jit
def rows_kernel(out_ptr, n_rows, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=num_stages):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + row * BLOCK + offs, offs * 0 + row * 10 + num_stages)


def test_a_parameter_named_like_a_launch_option_binds_by_keyword():
    out = np.zeros((5, 4), np.int32)
    rows_kernel[(2,)](out, 5, BLOCK=4, num_stages=3, num_warps=8)
    np.testing.assert_array_equal(out, np.arange(5)[:, None] * 10 + 3 + np.zeros((1, 4), np.int32))


def test_warmup_returns_a_compiled_kernel_with_the_emulated_resources():
    out = np.zeros((5, 4), np.int32)
    k = rows_kernel.warmup(out, 5, BLOCK=4, num_stages=2, num_warps=8, grid=(1,))
    assert not out.any()  # nothing ran
    k._init_handles()
    assert (k.n_regs, k.n_spills, k.n_max_threads) == (device.COMPILED_REGS, device.COMPILED_SPILLS, 1024)
    assert (k.metadata.shared, k.metadata.num_warps, k.metadata.num_stages) == (device.COMPILED_SHARED, 8, 2)
    assert k.name == k.metadata.name == "rows_kernel" and k.metadata.target.arch == 90
    assert rows_kernel.run(out, 5, BLOCK=4, num_stages=2, grid=(1,), warmup=True).hash == \
        rows_kernel.warmup(out, 5, BLOCK=4, num_stages=2, grid=(1,)).hash


def test_a_compiled_kernel_launches_with_every_parameter_positionally_and_keeps_its_constexprs():
    out = np.zeros((5, 4), np.int32)
    k = rows_kernel.warmup(out, 5, BLOCK=4, num_stages=2, num_warps=8, grid=(1,))
    k[(3, 1, 1)](out, 5, 4, 7)   # as Triton's launcher, the compiled constexprs win over the values given
    np.testing.assert_array_equal(out[:, 0], np.arange(5) * 10 + 2)
    with pytest.raises(TypeError, match="all 4 parameters positionally"):
        k[(1,)](out, 5)


def test_occupancy_arithmetic_of_tutorial_02_gives_the_h200s_answer():
    props = driver.active.utils.get_device_properties(None)
    k = rows_kernel.warmup(np.zeros(4, np.int32), 1, BLOCK=4, num_stages=4, num_warps=8, grid=(1,))
    k._init_handles()
    occupancy = min(props["max_num_regs"] // (k.n_regs * props["warpSize"] * 8),
                    props["max_shared_mem"] // k.metadata.shared)
    assert props["multiprocessor_count"] * occupancy == 1056   # 132 SMs x 8 programs, as on the H200


def test_warmup_raises_the_compile_error_of_a_refused_construct():
    @triton.jit
    def refused(x_ptr):
        for i in range(4):
            if i == 2:
                break
        tl.store(x_ptr, 1)

    with pytest.raises(triton.CompilationError, match="break"):
        refused.warmup(np.zeros(1, np.int32), grid=(1,))


SCRIPT = """
    import torch, triton
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    p = torch.cuda.get_device_properties("cuda")
    print(DEVICE, torch.cuda.get_device_capability(), p.multi_processor_count, p.name, torch.cuda.is_available())
    getattr(torch, DEVICE.type).set_stream(getattr(torch, DEVICE.type).Stream())   # tutorial 02's benchmark

    @triton.testing.perf_report(triton.testing.Benchmark(x_names=["n"], x_vals=[1], line_arg="p", line_vals=["a"],
                                                         line_names=["A"], plot_name="bench", args={}))
    def bench(n, p):
        print("benchmark ran")
        return 1.0

    bench.run(print_data=True)
"""


@pytest.mark.torch
def test_run_answers_torch_cuda_for_the_emulated_gpu_and_no_bench_skips_benchmarks(tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("MINITRITON_BENCHMARKS", None)
    for flags, ran in (((), True), (("--no-bench",), False)):
        done = subprocess.run([sys.executable, "-m", "minitriton", "run", *flags, str(path)], text=True,
                              capture_output=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "cpu (9, 0) 132 NVIDIA H200 False" in done.stdout
        assert ("benchmark ran" in done.stdout) is ran
        assert ("benchmark skipped" in done.stdout) is not ran


@pytest.mark.torch
def test_install_alone_leaves_torch_cuda_as_it_is():
    torch = pytest.importorskip("torch")
    code = ("import minitriton, torch; minitriton.install()\n"
            "try:\n    torch.cuda.get_device_capability(); print('answered')\n"
            "except Exception as e:\n    print(type(e).__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0 and "answered" not in done.stdout, done.stdout + done.stderr
    assert torch.cuda.is_available() is False


PDL_SCRIPT = """
    import torch, triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, USE_GDC: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if USE_GDC:
            tl.extra.cuda.gdc_wait()
        x = tl.load(x_ptr + offs, mask=offs < n)
        if USE_GDC:
            tl.extra.cuda.gdc_launch_dependents()
        tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=offs < n), mask=offs < n)

    x = torch.rand(1000, device="cuda")          # tutorial 11 names the device
    y = torch.ones(1000, device=torch.device("cuda:0")).cuda().to("cuda")
    out = torch.empty_like(x, device=0)
    add_kernel[(8,)](x, y, out, 1000, BLOCK=128, USE_GDC=True, launch_pdl=True)
    add_kernel[(8,)](out, y, out, 1000, BLOCK=128, USE_GDC=True, launch_pdl=True, clc=False)   # sees the first
    print(x.device, y.device, out.device, x.is_cuda, torch.cuda.is_available(), bool(torch.equal(out, x + 2)))
"""


@pytest.mark.torch
def test_run_makes_cuda_tensors_on_the_host_and_pdl_launches_in_order(tmp_path):
    """Under `run`, "cuda" is the emulated GPU, whose memory is the host's: device="cuda", .cuda() and
    .to("cuda") give CPU tensors (is_cuda stays False); PDL's gdc_wait/gdc_launch_dependents and
    launch_pdl=True are accepted, and the second launch sees the first one's stores (one stream, in order)."""
    pytest.importorskip("torch")
    path = tmp_path / "pdl.py"
    path.write_text(textwrap.dedent(PDL_SCRIPT))
    done = subprocess.run([sys.executable, "-m", "minitriton", "run", str(path)], text=True, capture_output=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cpu", "cpu", "cpu", "False", "False", "True"]
