"""The host wrappers' launch plans: for torch tensors a wrapper validates and plans a launch once per key
(types, shapes, dtypes, strides, options) and a repeat call reuses it. A call that differs in anything the
plan depends on must get a plan of its own (and the same checks and errors as ever); NumPy arrays and
minitriton.Buffers are never planned ahead and never import torch."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import numpy as np
import pytest

import minitriton

minitriton.install()  # before the kernels import `triton` (idempotent; conftest does it too)

from kernels import _host  # noqa: E402
from kernels import flash_attention as fa  # noqa: E402
from kernels import matmul as mm  # noqa: E402
from kernels import rmsnorm as rn  # noqa: E402
from kernels import softmax as sm  # noqa: E402
from kernels import vector_add as va  # noqa: E402
from kernels.tolerances import assert_close  # noqa: E402

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def _t(shape, seed, dtype=None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    return x if dtype is None else x.to(dtype)


def _builds(monkeypatch, module, name):
    """Count the calls of module.<name> (a plan builder)."""
    calls = []
    real = getattr(module, name)

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, counting)
    return calls


def _c_contiguous(t):
    return tuple(t.stride()) == _host.c_strides(t.shape)


def test_c_strides_are_torchs():
    for shape in [(), (7,), (3, 4), (0, 5), (5, 0), (2, 1, 3), (3, 0, 4)]:
        assert _host.c_strides(shape) == tuple(torch.empty(shape).stride()), shape


# ----------------------------------------------------------------------------- softmax

def _softmax_inputs():
    base = _t((8, 66), 1)
    return [
        ("8x33 fp32", _t((8, 33), 2)),
        ("4x33 fp32", _t((4, 33), 11)),                      # the strides of 8x33: the shape tells them apart
        ("8x65 fp32", _t((8, 65), 3)),
        ("8x33 bf16", _t((8, 33), 4, torch.bfloat16)),
        ("columns strided", base[:, ::2]),                    # column stride 2: copied
        ("rows strided", _t((16, 33), 5)[::2]),              # row stride 66: used as it is
        ("transposed", _t((33, 8), 6).t()),
        ("3-D", _t((2, 3, 33), 7)),
        ("one row, odd stride", _t((1, 33), 8).as_strided((1, 33), (999, 1))),
        ("size-1 dim, odd stride", _t((4, 33), 9).as_strided((4, 1, 33), (33, 5, 1))),
        ("long rows (online)", _t((3, 40_000), 10)),
    ]


def test_softmax_plans_follow_shape_dtype_and_strides(monkeypatch):
    builds = _builds(monkeypatch, sm, "_forward_plan")
    inputs = _softmax_inputs()
    for npass in range(2):                            # every input twice, interleaved with the others
        for name, x in inputs:
            for _ in range(2):
                y = sm.softmax(x)
                assert y.dtype == x.dtype and tuple(y.shape) == tuple(x.shape) and _c_contiguous(y), name
                tol = "bfloat16" if x.dtype == torch.bfloat16 else "float32"
                assert_close(_host.to_float64(y), sm.reference_softmax(x), tol, f"softmax {name}")
        # one plan per input (plus one not kept, if this is the session's first torch tensor), then none
        assert len(builds) <= len(inputs) + 1 if npass == 0 else len(builds) == first
        first = len(builds)


def test_softmax_backward_plans_follow_both_arrays(monkeypatch):
    builds = _builds(monkeypatch, sm, "_backward_plan")
    y = sm.softmax(_t((8, 33), 11))
    cases = [(y, _t((8, 33), 12)), (y, _t((33, 8), 13).t()), (y.to(torch.bfloat16), _t((8, 33), 14)),
             (y, _t((8, 33), 15, torch.bfloat16)), (y[:4], _t((4, 33), 16))]
    for y_, dy in cases * 2:
        for _ in range(2):
            dx = sm.softmax_backward(y_, dy)
            assert dx.dtype == dy.dtype and tuple(dx.shape) == tuple(dy.shape) and _c_contiguous(dx)
            tol = "bfloat16" if torch.bfloat16 in (y_.dtype, dy.dtype) else "float32"
            assert_close(_host.to_float64(dx), sm.reference_softmax_backward(y_, dy), tol, "softmax backward")
    assert len(builds) <= len(cases) + 1
    with pytest.raises(ValueError, match=r"softmax_backward: y is \(8, 33\) but dy is \(8, 32\)"):
        sm.softmax_backward(y, _t((8, 32), 17))


def test_softmax_checks_still_run_for_a_planned_shape(monkeypatch):
    x = _t((8, 33), 20)
    sm.softmax(x)
    sm.softmax(x)
    with pytest.raises(TypeError, match="softmax: x must be float32, float16 or bfloat16, got int32"):
        sm.softmax(torch.zeros((8, 33), dtype=torch.int32))
    sm.softmax(x, max_block=64)
    builds = _builds(monkeypatch, sm, "_forward_plan")
    sm.softmax(x, max_block=64)
    assert builds == []
    sm.softmax(x, max_block=64.0)         # 64.0 == 64, but the key holds the option's type: checked afresh
    assert builds == [1]
    with pytest.raises(ValueError, match="max_block must be a power of two, got 48"):
        sm.softmax(x, max_block=48)
    with pytest.raises(TypeError, match="unhashable"):
        sm.softmax(x, max_block=[64])


def test_softmax_max_block_is_part_of_the_plan():
    x = _t((5, 300), 21)
    with minitriton.record() as rec:
        for max_block in (None, 128, None, 128):
            assert_close(_host.to_float64(sm.softmax(x, max_block=max_block)), sm.reference_softmax(x), "float32")
    assert [r["kernel"] for r in rec.launches] == ["softmax_fwd_kernel", "softmax_fwd_online_kernel"] * 2


def test_plans_keep_no_arrays_alive():
    x = _t((8, 33), 22)
    sm.softmax(x)
    y = sm.softmax(x)
    q = k = v = _t((1, 2, 32, 16), 23)
    fa.flash_attention(q, k, v, block_m=16, block_n=16)
    fa.flash_attention(q, k, v, block_m=16, block_n=16)
    refs = [weakref.ref(a) for a in (x, y, q)]
    del x, y, q, k, v
    gc.collect()
    assert all(r() is None for r in refs)


def test_plan_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(_host, "MAX_PLANS", 3)
    monkeypatch.setattr(sm, "_FWD_PLANS", {})
    for n in range(1, 8):
        x = _t((2, n), n)
        sm.softmax(x)
        sm.softmax(x)
        assert 1 <= len(sm._FWD_PLANS) <= 3


# ----------------------------------------------------------------------------- vector_add

def test_vector_add_plans_follow_every_argument(monkeypatch):
    builds = _builds(monkeypatch, va, "_plan")
    x, y = _t((3000,), 30), _t((3000,), 31)
    out = torch.empty(3000)
    for _ in range(3):
        assert va.add(x, y, out) is out
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    assert len(builds) <= 2
    with minitriton.record() as rec:
        got = va.add(x, y, BLOCK_SIZE=256)
        got2 = va.add(x, y, BLOCK_SIZE=256)
    assert [r["num_programs"] for r in rec.launches] == [12, 12]
    torch.testing.assert_close(got, x + y, rtol=0, atol=0)
    assert got2 is not got
    xs = _t((6000,), 32)[::2]                          # strided: copied first
    for _ in range(2):
        torch.testing.assert_close(va.add(xs, y), xs + y, rtol=0, atol=0)
    with pytest.raises(ValueError, match="add: out must be C-contiguous"):
        va.add(x, y, torch.empty(6000)[::2])
    with pytest.raises(ValueError, match=r"add: out must be \(3000,\) float32, got \(3000,\) bfloat16"):
        va.add(x, y, torch.empty(3000, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="add: dtypes differ: float32 and bfloat16"):
        va.add(x, y.to(torch.bfloat16), out)
    with pytest.raises(ValueError, match=r"add: shapes differ: \(3000,\) and \(2999,\)"):
        va.add(x, y[:2999], out)
    b16 = va.add(x.to(torch.bfloat16), y.to(torch.bfloat16))
    assert b16.dtype == torch.bfloat16


# ----------------------------------------------------------------------------- rmsnorm

def test_rmsnorm_plans_follow_shapes_dtypes_and_strides(monkeypatch):
    fwd = _builds(monkeypatch, rn, "_forward_plan")
    bwd = _builds(monkeypatch, rn, "_backward_plan")
    cases = [(_t((6, 40), 40), _t((40,), 41)), (_t((6, 24), 42), _t((24,), 43)),
             (_t((6, 40), 44, torch.bfloat16), _t((40,), 45)), (_t((12, 40), 46)[::2], _t((40,), 47)),
             (_t((6, 40), 40), _t((80,), 49)[::2]), (_t((2, 3, 40), 48), _t((80,), 49)[::2])]
    for x, w in cases * 2:
        dy = _t(tuple(x.shape), 50, x.dtype)
        for _ in range(2):
            y, rstd = rn.rmsnorm_forward(x, w)
            assert y.dtype == x.dtype and _c_contiguous(y) and tuple(rstd.shape) == (x.numel() // x.shape[-1],)
            tol = "bfloat16" if x.dtype == torch.bfloat16 else "float32"
            assert_close(_host.to_float64(y), rn.reference_rmsnorm(x, w), tol, "y")
            assert_close(_host.to_float64(rn.rmsnorm(x, w, 1e-2)), rn.reference_rmsnorm(x, w, 1e-2), tol, "eps")
            dx, dw = rn.rmsnorm_backward(x, w, rstd, dy)
            ref_dx, ref_dw = rn.reference_rmsnorm_backward(x, w, dy)
            assert_close(_host.to_float64(dx), ref_dx, tol, "dx")
            assert_close(_host.to_float64(dw), ref_dw, "float32" if tol == "float32" else tol, "dw")
    assert len(fwd) <= len(cases) + 1 and len(bwd) <= len(cases) + 1
    x, w = cases[0]
    with pytest.raises(ValueError, match=r"rmsnorm: w must have shape \(x.shape\[-1\],\) = \(40,\), got \(24,\)"):
        rn.rmsnorm(x, w[:24])
    y, rstd = rn.rmsnorm_forward(x, w)
    with pytest.raises(ValueError, match=r"rstd must hold one value per row \(6\), got 5"):
        rn.rmsnorm_backward(x, w, rstd[:5], torch.ones_like(x))
    with pytest.raises(ValueError, match=r"rmsnorm_backward: x is \(6, 40\) but dy is \(6, 39\)"):
        rn.rmsnorm_backward(x, w, rstd, torch.ones(6, 39))


def test_rmsnorm_backward_programs_is_part_of_the_plan():
    x, w = _t((40, 1024), 51), _t((1024,), 52)     # 2 rows per step: 20 partial rows by default, 3 asked
    dy = _t((40, 1024), 53)
    _, rstd = rn.rmsnorm_forward(x, w)
    with minitriton.record() as rec:
        for programs in (None, 3, None, 3):
            rn.rmsnorm_backward(x, w, rstd, dy, programs=programs)
    grids = [r["num_programs"] for r in rec.launches if r["kernel"] == "rmsnorm_bwd_kernel"]
    assert grids[0] == grids[2] and grids[1] == grids[3] == 3 and grids[0] != 3


# ----------------------------------------------------------------------------- matmul

def test_matmul_plans_follow_strides_activation_and_config():
    small = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}
    a, b = _t((37, 29), 60), _t((29, 53), 61)
    bt = _t((53, 29), 62).t()                         # same shape as b, transposed strides
    ref = mm.reference_matmul
    for _ in range(2):
        for bb in (b, bt):
            for act in (None, "relu"):
                c = mm.matmul(a, bb, activation=act, config=small)
                assert c.dtype == torch.float32 and _c_contiguous(c)
                assert_close(_host.to_float64(c), ref(a, bb, act, tf32=True), "tf32", f"matmul {act}")
    with minitriton.record() as rec:
        mm.matmul(a, b, config=small)
        mm.matmul(a, b, config=dict(small, BLOCK_K=32))
        mm.matmul(a, b, config=minitriton.Config(dict(small, BLOCK_M=16), num_warps=2))
        mm.matmul(a, b, config=minitriton.Config(dict(small, BLOCK_M=16), num_warps=2))
    assert [r["constexprs"]["BLOCK_K"] for r in rec.launches] == [16, 32, 16, 16]
    assert [r["constexprs"]["BLOCK_M"] for r in rec.launches] == [32, 32, 16, 16]
    with pytest.raises(TypeError, match="A and B must have one dtype, got float32 and bfloat16"):
        mm.matmul(a, b.to(torch.bfloat16), config=small)
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        mm.matmul(a, b, activation="tanh", config=small)
    with pytest.raises(ValueError, match="inner dimensions differ: A is 37x29, B is 28x53"):
        mm.matmul(a, b[:28], config=small)


def test_matmul_autotuned_choice_is_planned_after_the_first_call(monkeypatch):
    monkeypatch.setattr(mm, "_PLANS", {})
    a, b = _t((48, 40), 63, torch.bfloat16), _t((40, 56), 64, torch.bfloat16)
    with minitriton.record() as rec:
        c = [mm.matmul(a, b) for _ in range(4)]
    assert all(torch.equal(c[0], ci) for ci in c[1:])
    assert len({tuple(sorted(r["constexprs"].items())) for r in rec.launches}) == 1
    assert len(mm._PLANS) == 1


# ----------------------------------------------------------------------------- flash attention

def test_flash_plans_follow_causal_blocks_strides_and_take_scale_per_call():
    B, H, T, D = 1, 2, 40, 16
    q, k, v, do = (_t((B, H, T, D), 70 + i) for i in range(4))
    q_bthd = _t((B, T, H, D), 75).transpose(1, 2)     # a (B, H, T, D) view of a (B, T, H, D) tensor
    blocks = {"block_m": 32, "block_n": 16}
    bw = {"blocks_dkdv": [16, 32], "blocks_dq": (32, 16)}   # a list: no plan kept, still accepted
    for _ in range(2):
        for qq in (q, q_bthd):
            for causal in (True, False):
                for scale in (None, 0.3):
                    o, lse = fa.flash_attention(qq, k, v, causal=causal, scale=scale, **blocks)
                    ref_o, ref_lse = fa.reference_attention(qq, k, v, causal, scale)
                    assert_close(_host.to_float64(o), ref_o, "tf32", "O")
                    assert_close(_host.to_float64(lse), ref_lse, "tf32", "L")
                    grads = fa.flash_attention_backward(qq, k, v, o, lse, do, causal=causal, scale=scale, **bw)
                    for name, g, want in zip(("dq", "dk", "dv"), grads,
                                             fa.reference_attention_backward(qq, k, v, do, causal, scale)):
                        assert _c_contiguous(g)
                        assert_close(_host.to_float64(g), want, "tf32", name)
    with pytest.raises(ValueError, match=r"k has shape \(1, 2, 39, 16\), but q has \(1, 2, 40, 16\)"):
        fa.flash_attention(q, k[:, :, :39], v, **blocks)
    with pytest.raises(TypeError, match="k is bfloat16, but q is float32"):
        fa.flash_attention(q, k.to(torch.bfloat16), v, **blocks)
    with pytest.raises(ValueError, match=r"block_m \(16\) must be a multiple of block_n \(32\)"):
        fa.flash_attention(q, k, v, block_m=16, block_n=32)
    with pytest.raises(ValueError, match=r"lse must have shape \(1, 2, 40\)"):
        fa.flash_attention_backward(q, k, v, o, lse[:, :, :39], do, **bw)


# ----------------------------------------------------------------------------- NumPy and minitriton.Buffer

def test_numpy_and_buffer_inputs_keep_no_plans():
    caches = [sm._FWD_PLANS, sm._BWD_PLANS, va._PLANS, rn._FWD_PLANS, rn._BWD_PLANS, mm._PLANS, fa._FWD_PLANS,
              fa._BWD_PLANS]
    sizes = [len(c) for c in caches]
    x = np.random.default_rng(0).standard_normal((6, 40)).astype(np.float32)
    xb = minitriton.Buffer.from_float(x, minitriton.language.bfloat16)
    w = np.random.default_rng(1).standard_normal(40).astype(np.float32)
    wb = minitriton.Buffer.from_float(w, minitriton.language.bfloat16)
    bt = np.ascontiguousarray(x.T)
    btb = minitriton.Buffer.from_float(bt, minitriton.language.bfloat16)
    for a, b, m in ((x, w, bt), (xb, wb, btb)):
        for _ in range(2):
            y = sm.softmax(a)
            sm.softmax_backward(y, a)
            va.add(a, a)
            y, rstd = rn.rmsnorm_forward(a, b)
            rn.rmsnorm_backward(a, b, rstd, a)
            mm.matmul(a, m, config={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16})
    q = np.random.default_rng(1).standard_normal((1, 1, 20, 16)).astype(np.float32)
    for _ in range(2):
        o, lse = fa.flash_attention(q, q, q, block_m=16, block_n=16)
        fa.flash_attention_backward(q, q, q, o, lse, q, blocks_dkdv=(16, 16), blocks_dq=(16, 16))
    assert [len(c) for c in caches] == sizes


def test_numpy_inputs_never_import_torch():
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import minitriton
        minitriton.install()
        import minitriton.language as tl
        from kernels import flash_attention, matmul, rmsnorm, softmax, vector_add
        rng = np.random.default_rng(0)
        x = rng.standard_normal((6, 40)).astype(np.float32)
        w = rng.standard_normal(40).astype(np.float32)
        xb = minitriton.Buffer.from_float(x, tl.bfloat16)
        wb = minitriton.Buffer.from_float(w, tl.bfloat16)
        for a, b in ((x, w), (xb, wb)):
            y = softmax.softmax(a)
            softmax.softmax_backward(y, a)
            vector_add.add(a, a)
            y, rstd = rmsnorm.rmsnorm_forward(a, b)
            rmsnorm.rmsnorm_backward(a, b, rstd, a)
        matmul.matmul(x, x.T.copy())
        matmul.matmul(xb, minitriton.Buffer(np.ascontiguousarray(xb.array.T), tl.bfloat16))
        q = rng.standard_normal((1, 1, 20, 16)).astype(np.float32)
        o, lse = flash_attention.flash_attention(q, q, q)
        flash_attention.flash_attention_backward(q, q, q, o, lse, q)
        assert "torch" not in sys.modules, sorted(m for m in sys.modules if m.startswith("torch"))
        print("ok")
    """)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]


class _Compiled:
    """What real Triton's `JITFunction.run` returns: a CompiledKernel, launched as `compiled[grid](*all_args)`."""
    packed_metadata = object()

    def __init__(self, calls):
        self.calls = calls

    def __getitem__(self, grid):
        return lambda *args: self.calls.append(("direct", grid, args))


class _Kernel:
    """A kernel whose `run` records its calls: `compiled_launcher` only decides which way each launch goes."""

    def __init__(self, returns_compiled=True):
        import inspect

        def fn(x_ptr, out_ptr, n, BLOCK: "constexpr", FLAG: "constexpr" = 7):
            pass
        self.signature = inspect.signature(fn)
        self.__name__ = "k"
        self.calls = []
        self.returns_compiled = returns_compiled

    def run(self, *args, grid, warmup, **options):
        self.calls.append(("run", grid, args, options))
        return _Compiled(self.calls) if self.returns_compiled else None


def test_compiled_launcher_keeps_the_compiled_kernel_for_aligned_calls(monkeypatch):
    """After the first aligned launch the kept CompiledKernel is called with every argument positionally (bound
    constexprs and defaults appended); a call with an array off 16-byte alignment, which Triton specialises
    differently, goes through `run`; each device keeps its own kernel."""
    device = [0]
    monkeypatch.setattr(_host, "_current_device", lambda: device[0])
    kernel = _Kernel()
    launch = _host.compiled_launcher(kernel, (5,), (0, 1), BLOCK=64, num_warps=4)
    buf = np.zeros(64, np.float32)
    aligned, odd = buf[:32], buf[1:33]
    assert _host.address(aligned) % 16 == 0 and _host.address(odd) % 16
    launch(aligned, aligned, 32)
    launch(aligned, aligned, 32)
    launch(odd, aligned, 32)
    device[0] = 1
    launch(aligned, aligned, 32)
    launch(aligned, aligned, 32)
    assert [c[0] for c in kernel.calls] == ["run", "direct", "run", "run", "direct"]
    assert kernel.calls[0] == ("run", (5,), (aligned, aligned, 32), {"BLOCK": 64, "num_warps": 4})
    assert kernel.calls[1][1] == (5, 1, 1) and kernel.calls[1][2][2:] == (32, 64, 7)


def test_compiled_launcher_without_a_compiled_kernel_always_runs(monkeypatch):
    monkeypatch.setattr(_host, "_current_device", lambda: 0)
    kernel = _Kernel(returns_compiled=False)
    launch = _host.compiled_launcher(kernel, (2, 3), (0,), BLOCK=16)
    a = np.zeros(8, np.float32)
    for _ in range(3):
        launch(a, a, 8)
    assert [c[0] for c in kernel.calls] == ["run"] * 3
