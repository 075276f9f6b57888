"""Smoke tests for the speed benchmark (bench/): data, references, and one quick minitriton run.

No timing is asserted anywhere: speed is what ``python -m bench`` reports, not what tests check.
"""

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _import_for_data(module_name):
    """`module_name` (a bench module) for its data and reference functions; its kernels are never launched here.

    The bench modules import `triton` at top. If this session has no `triton` yet, a throwaway stub stands in
    during the import and everything the import added is removed again, so this test neither loads real
    Triton (which would make a later `minitriton.install()` refuse) nor leaves minitriton installed.
    """
    if "triton" in sys.modules:
        return importlib.import_module(module_name)
    stub = types.ModuleType("triton")
    stub.jit = lambda fn=None, **kwargs: fn if fn is not None else (lambda f: f)
    stub.language = types.ModuleType("triton.language")
    before = set(sys.modules)
    sys.modules["triton"], sys.modules["triton.language"] = stub, stub.language
    try:
        module = importlib.import_module(module_name)
    finally:
        for name in set(sys.modules) - before:
            if name.startswith(("triton", "bench.")):
                del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def wl():
    return _import_for_data("bench.workloads")


@pytest.fixture(scope="module")
def shapes():
    return _import_for_data("bench.shapes")


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


# ---- the shapes suite (bench/shapes.py)

def test_shape_references_satisfy_simple_identities(shapes):
    d = shapes.make_shape_data()
    persistent = shapes.SHAPES[0].reference(d)["y"]
    np.testing.assert_allclose(persistent.sum(axis=1), 1.0, rtol=1e-12)
    row = shapes.BY_NAME["softmax_row_1m"].reference(d)["y"]
    assert row.shape == (1_000_000,)
    np.testing.assert_allclose(row.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.log(row[1] / row[0]), float(d["row_x"][1]) - float(d["row_x"][0]), rtol=1e-9)
    for n in (128, 256):
        c16 = shapes.BY_NAME[f"matmul_fp16_{n}"].reference(d)["c"]
        a, b = d[f"mm{n}_a16"].astype(np.float64), d[f"mm{n}_b16"].astype(np.float64)
        np.testing.assert_allclose(c16[7, 3], np.dot(a[7], b[:, 3]), rtol=1e-12)
        c32 = shapes.BY_NAME[f"matmul_fp32_{n}"].reference(d)["c"]
        assert 0 < np.abs(c16 - c32).max() < 0.5           # the fp16 inputs are the fp32 ones, rounded
    for t in (128, 512):
        ref = shapes.BY_NAME[f"flash_fp16_{t}"].reference(d)
        q, k, v = (d[f"fa{t}_{n}"].astype(np.float64) for n in "qkv")
        p = np.exp(q @ k.transpose(0, 2, 1) / 8.0 - ref["lse"][..., None])   # lse normalises every row
        np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(ref["o"], p @ v, rtol=1e-10, atol=1e-12)


def test_shape_table_matches_the_settings(shapes):
    from bench import settings

    assert [w.name for w in shapes.SHAPES] == settings.SHAPE_NAMES
    assert {w.name: w.programs for w in shapes.SHAPES} == {n: settings.PROGRAMS[n] for n in settings.SHAPE_NAMES}
    assert {w.name: w.tol for w in shapes.SHAPES} == {n: settings.TOLERANCE[n] for n in settings.SHAPE_NAMES}
    assert set(shapes.FLOORS) == set(settings.SUITES["all"]) == set(shapes.BY_NAME)
    assert {"softmax_persistent": 64, "softmax_row_1m": 1, "matmul_fp32_128": 4, "matmul_fp32_256": 16,
            "flash_fp16_128": 8, "flash_fp16_512": 32}.items() <= settings.PROGRAMS.items()


# Every shape launched once on minitriton (full size: the suite is small) and its floor run once, both checked
# against the float64 references, in a child process (minitriton.install() aliases `triton` for good).
_SHAPES_ON_MINITRITON = """
import json
import minitriton
minitriton.install()
from bench import floors, shapes, workloads
data, arrays, out = shapes.make_data(), workloads.NumpyArrays(), {}
for w in shapes.SHAPES:
    prepared = w.setup(data, arrays)
    prepared.launch()
    err, per_output = workloads.max_abs_error(prepared, w.reference(data), arrays)
    floor = floors.measure(w, shapes.FLOORS[w.name], data, lambda run: [0.0])
    out[w.name] = {"error": err, "per_output": per_output, "floor_error": floor["max_abs_error"]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def shapes_on_minitriton():
    if _MT_ERROR is not None:
        pytest.skip(f"minitriton cannot be imported yet ({_MT_ERROR})")
    env = dict(os.environ, TRITON_F32_DEFAULT="ieee", PYTHONPATH=str(REPO))
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, "-c", _SHAPES_ON_MINITRITON], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["softmax_persistent", "softmax_row_1m", "matmul_fp32_128", "matmul_fp32_256",
                                  "matmul_fp16_128", "matmul_fp16_256", "flash_fp16_128", "flash_fp16_512"])
def test_shape_kernel_and_floor_match_the_float64_reference(shapes_on_minitriton, name):
    from bench.settings import TOLERANCE

    got = shapes_on_minitriton[name]
    assert got["error"] <= TOLERANCE[name], got
    assert got["floor_error"] <= TOLERANCE[name], got
