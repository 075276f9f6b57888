"""Pointers a kernel loads from memory (a table of `data_ptr()` / `ctypes.data` values, as Triton's tutorial 08
passes): they resolve to the array they address, reads and writes land there, and every lane is still
bounds-checked against that array (memory/host.py)."""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.memory import host

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def watching():
    """Record taken addresses for the test, as `minitriton.install()` does."""
    already = bool(host._originals)
    host.watch()
    yield
    if not already:
        host.unwatch()


@triton.jit
def scale_each(ptrs, sizes, n_arrays, factor, BLOCK: tl.constexpr):
    """Multiply every array of the table by `factor` in place, one program per array."""
    g = tl.program_id(0)
    if g < n_arrays:
        base = tl.load(ptrs + g).to(tl.pointer_type(tl.float32))
        n = tl.load(sizes + g)
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(base + offs, tl.load(base + offs, mask=mask) * factor, mask=mask)


@triton.jit
def read_past(ptrs, out, n, BLOCK: tl.constexpr):
    base = tl.load(ptrs).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(base + offs, mask=offs < n))


@pytest.mark.torch
def test_a_table_of_torch_data_ptrs_reaches_each_tensor():
    torch = pytest.importorskip("torch")
    arrays = [torch.arange(n, dtype=torch.float32) for n in (5, 64, 130)]
    expected = [a * 3 for a in arrays]
    ptrs = torch.tensor([a.data_ptr() for a in arrays])   # int64, like tutorial 08's
    sizes = torch.tensor([a.numel() for a in arrays], dtype=torch.int32)
    scale_each[(4,)](ptrs, sizes, 3, 3.0, BLOCK=32)
    for a, e in zip(arrays, expected):
        assert torch.equal(a, e)


def test_numpy_ctypes_data_addresses_work_too():
    arrays = [np.arange(n, dtype=np.float32) for n in (3, 40)]
    ptrs = np.array([a.ctypes.data for a in arrays], np.int64)
    sizes = np.array([a.size for a in arrays], np.int32)
    scale_each[(2,)](ptrs, sizes, 2, -1.0, BLOCK=16)
    np.testing.assert_array_equal(arrays[1], -np.arange(40, dtype=np.float32))


def test_a_loaded_pointer_is_bounds_checked_against_its_array():
    victim = np.arange(10, dtype=np.float32)
    ptrs = np.array([victim.ctypes.data], np.int64)
    out = np.zeros(16, np.float32)
    read_past[(1,)](ptrs, out, 10, BLOCK=16)   # masked: fine
    np.testing.assert_array_equal(out[:10], victim)
    with pytest.raises(triton.OutOfBoundsError, match=r"reads past the end of `tensor at 0x[0-9a-f]+`") as e:
        read_past[(1,)](ptrs, out, 12, BLOCK=16)
    assert "has 10 elements" in str(e.value) and "offsets 10…11" in str(e.value)


def test_an_address_in_no_known_array_is_refused():
    out = np.zeros(16, np.float32)
    with pytest.raises(triton.OutOfBoundsError, match="point into no tensor argument"):
        read_past[(1,)](np.array([0x1000], np.int64), out, 4, BLOCK=16)


def test_an_address_not_on_an_element_boundary_is_refused():
    victim = np.arange(10, dtype=np.float32)
    ptrs = np.array([victim.ctypes.data + 2], np.int64)
    with pytest.raises(triton.OutOfBoundsError, match="misaligned address"):
        read_past[(1,)](ptrs, np.zeros(16, np.float32), 4, BLOCK=16)


def test_a_recorded_array_is_forgotten_with_its_last_reference():
    victim = np.arange(10, dtype=np.float32)
    address = victim.ctypes.data
    assert host.recorded.holding(address, address + 3) is not None
    del victim
    gc.collect()
    assert host.recorded.holding(address, address + 3) is None


def test_traffic_counters_count_the_loaded_array():
    victim = np.arange(16, dtype=np.float32)
    ptrs = np.array([victim.ctypes.data], np.int64)
    with triton.record() as rec:
        read_past[(1,)](ptrs, np.zeros(16, np.float32), 16, BLOCK=16)
    loaded = {name: t["totals"]["loaded_bytes"] for name, t in rec.last["tensors"].items()}
    assert loaded[f"tensor at {victim.ctypes.data:#x}"] == 64


@pytest.mark.torch
def test_install_records_tensors_of_torch_imported_after_it():
    pytest.importorskip("torch")
    code = ("import minitriton; minitriton.install()\nimport sys; assert 'torch' not in sys.modules\n"
            "import torch\nfrom minitriton.memory import host\nt = torch.zeros(4)\na = t.data_ptr()\n"
            "print(host.recorded.holding(a, a + 15) is not None)\nminitriton.uninstall()\n"
            "u = torch.zeros(4)\nb = u.data_ptr()\nprint(host.recorded.holding(b, b + 15) is not None)\n")
    done = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
