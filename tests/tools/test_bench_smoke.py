"""Smoke tests for the speed benchmark (bench/): data, references, and one quick minitriton run.

No timing is asserted anywhere: speed is what ``python -m bench`` reports, not what tests check.
"""

import importlib
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wl():
    """bench.workloads for its data and reference functions; its kernels are never launched here.

    The module imports `triton` at top. If this session has no `triton` yet, a throwaway stub stands in
    during the import and everything the import added is removed again, so this test neither loads real
    Triton (which would make a later `minitriton.install()` refuse) nor leaves minitriton installed.
    """
    if "triton" in sys.modules:
        return importlib.import_module("bench.workloads")
    stub = types.ModuleType("triton")
    stub.jit = lambda fn=None, **kwargs: fn if fn is not None else (lambda f: f)
    stub.language = types.ModuleType("triton.language")
    before = set(sys.modules)
    sys.modules["triton"], sys.modules["triton.language"] = stub, stub.language
    try:
        module = importlib.import_module("bench.workloads")
    finally:
        for name in set(sys.modules) - before:
            if name.startswith("triton") or name == "bench.workloads":
                del sys.modules[name]
    return module


def test_data_follows_the_baseline_draw_order(wl):
    d = wl.make_data()
    rng = np.random.default_rng(0)
    expected_order = [
        ("add_x", lambda: rng.random(98432, dtype=np.float32)),
        ("add_y", lambda: rng.random(98432, dtype=np.float32)),
        ("softmax_x", lambda: rng.standard_normal((1823, 781), dtype=np.float32)),
        ("rms_x", lambda: rng.standard_normal((512, 896), dtype=np.float32)),
        ("rms_w", lambda: rng.standard_normal(896, dtype=np.float32)),
        ("mm_a", lambda: rng.standard_normal((512, 512), dtype=np.float32)),
        ("mm_b", lambda: rng.standard_normal((512, 512), dtype=np.float32)),
        ("q", lambda: rng.standard_normal((6, 257, 64), dtype=np.float32)),
        ("k", lambda: rng.standard_normal((6, 257, 64), dtype=np.float32)),
        ("v", lambda: rng.standard_normal((6, 257, 64), dtype=np.float32)),
    ]
    assert list(d) == [name for name, _ in expected_order]
    for name, draw in expected_order:
        np.testing.assert_array_equal(d[name], draw(), err_msg=name)
        assert d[name].dtype == np.float32 and d[name].flags.c_contiguous


def test_workload_table_matches_the_baseline(wl):
    programs = {w.name: w.programs for w in wl.WORKLOADS}
    assert programs == {"vector_add": 97, "softmax_fwd": 1823, "rmsnorm": 512, "matmul_fp32": 64,
                        "matmul_bf16": 64, "flash_fwd_full": 30, "flash_fwd_causal": 30}
    tols = {w.name: w.tol for w in wl.WORKLOADS}
    assert tols == {"vector_add": 0.0, "softmax_fwd": 1e-6, "rmsnorm": 1e-4, "matmul_fp32": 1e-3,
                    "matmul_bf16": 0.5, "flash_fwd_full": 1e-4, "flash_fwd_causal": 1e-4}
    assert [w.name for w in wl.WORKLOADS if not w.in_geomean] == ["matmul_bf16"]


def test_round_to_bf16_properties(wl):
    x = wl.make_data()["mm_a"]
    r = wl.round_to_bf16(x)
    assert r.dtype == np.float32
    assert not (r.view(np.uint32) & 0xFFFF).any()                       # only the top 16 bits are left
    np.testing.assert_array_equal(wl.round_to_bf16(r), r)                 # idempotent
    assert np.all(np.abs(r - x) <= np.abs(x) * 2.0 ** -8)                 # within half a bf16 ulp
    # ties go to even: 1 + 2^-8 sits halfway between 1 and 1 + 2^-7
    ties = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8)], dtype=np.float32)
    np.testing.assert_array_equal(wl.round_to_bf16(ties), np.array([1.0, 1 + 2 ** -6, -1.0], np.float32))


def test_round_to_bf16_matches_torch(wl):
    torch = pytest.importorskip("torch")
    x = wl.make_data()["mm_b"]
    via_torch = torch.from_numpy(x).to(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(wl.round_to_bf16(x), via_torch)


def test_references_satisfy_simple_identities(wl):
    d = wl.make_data()

    out = wl.ref_vector_add(d)["out"]
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.astype(np.float32), d["add_x"] + d["add_y"])

    sm = wl.ref_softmax(d)["y"]
    np.testing.assert_allclose(sm.sum(axis=1), 1.0, rtol=1e-12)
    assert (sm > 0).all()
    # softmax is invariant to a per-row shift and follows the order of its inputs
    row = d["softmax_x"][0].astype(np.float64)
    np.testing.assert_array_equal(np.argsort(sm[0], kind="stable"), np.argsort(row, kind="stable"))

    y = wl.ref_rmsnorm(d)["y"]
    x, w = d["rms_x"].astype(np.float64), d["rms_w"].astype(np.float64)
    ms = np.mean((y / w) ** 2, axis=1)                  # mean((x/rms)^2) = ms/(ms + eps)
    x_ms = np.mean(x * x, axis=1)
    np.testing.assert_allclose(ms, x_ms / (x_ms + wl.RMS_EPS), rtol=1e-12)

    c = wl.ref_matmul_fp32(d)["c"]
    a, b = d["mm_a"].astype(np.float64), d["mm_b"].astype(np.float64)
    np.testing.assert_allclose(c[3, 5], np.dot(a[3], b[:, 5]), rtol=1e-12)
    ones = np.ones(512)
    np.testing.assert_allclose(c @ ones, a @ (b @ ones), rtol=1e-9, atol=1e-9)

    cb = wl.ref_matmul_bf16(d)["c"]
    assert 0 < np.abs(cb - c).max() < 1.0                # rounding the inputs moves the result, a little

    for causal in (False, True):
        ref = wl._ref_attention(d, causal)
        q, k, v = (d[n].astype(np.float64) for n in ("q", "k", "v"))
        s = q @ k.transpose(0, 2, 1) / 8.0
        if causal:
            s = np.where(np.triu(np.ones((257, 257), bool), 1), -np.inf, s)
        p = np.exp(s - ref["lse"][..., None])             # lse normalises every row
        np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(ref["o"], p @ v, rtol=1e-10, atol=1e-12)
    causal = wl.ref_flash_causal(d)
    np.testing.assert_allclose(causal["o"][:, 0], d["v"][:, 0], rtol=1e-12)   # row 0 sees only key 0
    np.testing.assert_allclose(causal["lse"][:, 0], (d["q"][:, 0].astype(np.float64)
                                                     * d["k"][:, 0]).sum(-1) / 8.0, rtol=1e-12)


def _minitriton_import_error():
    try:
        import minitriton
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    if not callable(getattr(minitriton, "install", None)):
        return "minitriton.install() does not exist yet"
    return None


_MT_ERROR = _minitriton_import_error()


@pytest.mark.skipif(_MT_ERROR is not None, reason=f"minitriton cannot be imported yet ({_MT_ERROR})")
def test_minitriton_backend_quick_run():
    """One quick launch of three workloads through the real harness; correctness only, no timing."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--backend", "minitriton", "--no-save",
         "--only", "vector_add,matmul_fp32,flash_fwd_causal", "--timeout", "300"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
