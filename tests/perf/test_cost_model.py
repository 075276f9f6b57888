"""The cost model of `minitriton.record()` against independent references: parity's formulas of each
kernel's traffic and waves (parity/cost_features.py, parity/cost_model.py), run on the same launches at small
sizes, and the roofline's two ends."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import minitriton
from minitriton.perf import devices
from parity import cost_model
from parity.cost_features import features as formula_features, reduced
from parity.cost_points import launcher, points

minitriton.install()  # before the kernels import `triton`

# an L2 of 4 KiB: every launch below misses it, so its DRAM bytes are the waves' distinct bytes; a wave of
# 3 SMs, so the reduced grids run in several waves
TINY = dataclasses.replace(devices.H100, name="TINY", sms=3, l2_bytes=4096, calibrated=None)


def _chosen():
    """A few points of every kernel family (flash attention without the causal mask: there parity's formula
    counts every key a wave's heads have, an upper bound of what the programs read)."""
    found, out = set(), []
    for p in points():
        c = p["config"]
        key = (p["kernel"], p["dtype"], c.get("GROUP_M"), c.get("BLOCK_M"), c.get("BLOCK_K"))
        if key in found or c.get("CAUSAL") or (p["kernel"] == "rmsnorm" and p["dtype"] != "float32"):
            continue
        found.add(key)
        out.append(reduced(p))
    return out[::3]


def _row(q):
    return {"id": q["id"], "kernel": q["kernel"], "dtype": q["dtype"], "shape": q["shape"], "config": q["config"],
            "features": formula_features(q)}


@pytest.fixture
def tiny(monkeypatch):
    import importlib
    settings = importlib.import_module("minitriton.options")   # (minitriton.options is the settings' reader)
    monkeypatch.setitem(devices.PROFILES, "TINY", TINY)
    monkeypatch.setattr(settings, "MODEL_DEVICES", settings.MODEL_DEVICES + ("TINY",))


@pytest.mark.parametrize("point", _chosen(), ids=lambda q: q["id"].split("[")[0] + q["id"][-60:])
@pytest.mark.parametrize("device", ["H100", "TINY"])
def test_record_models_what_parity_computes_from_formulas(point, device, tiny):
    with minitriton.set_options(model_device=device, sanitize=False), minitriton.record() as rec:
        launcher(point, "numpy")()
    got = rec.last["model"]
    want = cost_model.estimate(_row(point), devices.profile(device))
    assert got["dram_bytes"] == want["dram_bytes"]
    assert got["programs_per_sm"] == want["programs_per_sm"]
    assert got["parts_ms"] == pytest.approx(want["parts_ms"], rel=1e-9)
    assert got["ms"] == pytest.approx(want["ms"], rel=1e-9)
    assert got["bound"] == want["bound"]


def test_group_m_changes_the_waves_dram_bytes_as_the_formula_says(tiny):
    """GROUP_M = 8 reuses rows of A within a wave: fewer DRAM bytes than GROUP_M = 1 when the L2 is small."""
    got = {}
    for p in points():
        c = p["config"]
        if p["kernel"] == "matmul" and p["dtype"] == "float16" and (c["BLOCK_M"], c["BLOCK_N"]) == (32, 32):
            q = reduced(p)
            with minitriton.set_options(model_device="TINY", sanitize=False), minitriton.record() as rec:
                launcher(q, "numpy")()
            got[c["GROUP_M"]] = (rec.last["model"]["dram_bytes"], cost_model.estimate(_row(q), TINY)["dram_bytes"])
        if len(got) == 2:
            break
    assert got[1][0] == got[1][1] and got[8][0] == got[8][1]
    assert got[8][0] < got[1][0]


def test_roofline_vector_add_is_memory_bound_large_fp16_matmul_compute_bound():
    from kernels import matmul, vector_add
    x = np.ones(1 << 16, np.float32)
    with minitriton.record() as rec:
        vector_add.add(x, x)
    add = rec.last["model"]
    assert add["bound"] == "memory" and 0 < add["percent_of_peak"] <= 100
    a = np.ones((1024, 1024), np.float16)
    with minitriton.set_options(sanitize=False), minitriton.record() as rec:
        matmul.matmul(a, a)
    mm = rec.last["model"]
    assert mm["bound"] == "compute" and mm["parts_ms"]["dot"] > mm["parts_ms"]["dram"]
    assert mm["tflops"] == pytest.approx(2 * 1024 ** 3 / (mm["ms"] * 1e9))
