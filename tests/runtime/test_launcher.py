"""The launch surface: grids, argument binding and specialisation, autotune/heuristics, torch and strided
arguments, `minitriton.install()` and `triton.testing`.

References: Triton's launcher rules (ints equal to 1 are constexpr, ints that fit are i32 else i64, floats
fp32; grid callables get the bound arguments and meta-parameters), Triton's autotune API, and NumPy.
"""
import importlib
import sys
import types

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton import AutotuneMismatchError, CompilationError


def cdiv(a, b):
    return -(-a // b)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _inputs(n=1000):
    rng = np.random.default_rng(n)
    x, y = rng.random((2, n), dtype=np.float32)
    return x, y, np.zeros(n, np.float32)


# ------------------------------------------------------------------------------------------------ grids

@pytest.mark.parametrize("grid", [(16,), 16, [16], (np.int64(16),), (16, 1), (16, 1, 1)])
def test_grid_forms(grid):
    x, y, out = _inputs()
    add_kernel[grid](x, y, out, 1000, BLOCK=64)
    np.testing.assert_array_equal(out, x + y)


def test_grid_callable_sees_arguments_and_constexprs():
    x, y, out = _inputs()
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)
    add_kernel[grid](x, y, out, 1000, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    assert seen["n"] == 1000 and seen["BLOCK"] == 128
    assert seen["x_ptr"] is x and seen["out_ptr"] is out


@triton.jit
def ids_kernel(out_ptr, num_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    lin = (x * tl.num_programs(1) + y) * tl.num_programs(2) + z
    tl.store(out_ptr + lin, x * 100 + y * 10 + z)
    tl.store(num_ptr + tl.arange(0, 4), tl.where(tl.arange(0, 4) == 0, tl.num_programs(0),
                                                 tl.where(tl.arange(0, 4) == 1, tl.num_programs(1),
                                                          tl.where(tl.arange(0, 4) == 2, tl.num_programs(2), 0))))


@pytest.mark.parametrize("grid", [(5,), (2, 3), (2, 3, 4), (1, 1, 7), (3, 1, 2)])
def test_one_to_three_axes(grid):
    full = tuple(grid) + (1,) * (3 - len(grid))
    out = np.full(int(np.prod(full)), -1, np.int32)
    num = np.full(4, -1, np.int32)
    ids_kernel[grid](out, num)
    expected = [x * 100 + y * 10 + z for x in range(full[0]) for y in range(full[1]) for z in range(full[2])]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(num, list(full) + [0])


def test_scheduling_options_are_accepted():
    x, y, out = _inputs()
    add_kernel[(16,)](x, y, out, 1000, BLOCK=64, num_warps=8, num_stages=2, num_ctas=1, maxnreg=128,
                      enable_fp_fusion=False)
    np.testing.assert_array_equal(out, x + y)


# ------------------------------------------------------------------------------------------------ arguments

@triton.jit
def defaults_kernel(out_ptr, a, b=5, SCALE: tl.constexpr = 3, BLOCK: tl.constexpr = 4):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (a + b) * SCALE + offs)


def test_kwargs_and_defaults():
    out = np.zeros(8, np.int32)
    defaults_kernel[(1,)](out, 2)
    np.testing.assert_array_equal(out, [21, 22, 23, 24, 0, 0, 0, 0])
    defaults_kernel[(1,)](out_ptr=out, a=1, b=2, BLOCK=8)
    np.testing.assert_array_equal(out, 9 + np.arange(8))
    defaults_kernel[(1,)](out, 1, SCALE=10, b=0)
    np.testing.assert_array_equal(out[:4], 10 + np.arange(4))


@triton.jit
def spec_kernel(out_ptr, n, EXPECT_CONSTEXPR: tl.constexpr):
    if EXPECT_CONSTEXPR:
        tl.static_assert(n == 1, "n is a Python int")
    tl.store(out_ptr, n + 41)


spec_kernel_nospec = triton.jit(spec_kernel.fn, do_not_specialize=["n"])


def test_int_equal_to_one_is_constexpr():
    out = np.zeros(1, np.int64)
    spec_kernel[(1,)](out, 1, EXPECT_CONSTEXPR=True)
    assert out[0] == 42
    with pytest.raises(CompilationError, match="could not be determined at compile-time"):
        spec_kernel[(1,)](out, 2, EXPECT_CONSTEXPR=True)  # 2 is a run-time int32
    with pytest.raises(CompilationError, match="could not be determined at compile-time"):
        spec_kernel_nospec[(1,)](out, 1, EXPECT_CONSTEXPR=True)
    spec_kernel_nospec[(1,)](out, 1, EXPECT_CONSTEXPR=False)
    assert out[0] == 42


@triton.jit
def int_arg_kernel(out_ptr, bits_ptr, n):
    tl.store(out_ptr, n + 1)
    tl.store(bits_ptr, n.dtype.primitive_bitwidth)


@pytest.mark.parametrize("n, result, bits", [
    (2**31 - 1, -2**31, 32),          # fits in int32: specialised to i32, so n + 1 wraps as on the GPU
    (-2**31, -2**31 + 1, 32),
    (7, 8, 32),
    (2**31, 2**31 + 1, 64),           # too large for i32: i64, no wrap
    (2**31 + 5, 2**31 + 6, 64),
    (-2**31 - 1, -2**31, 64),
    (2**40, 2**40 + 1, 64),
])
def test_int_argument_types(n, result, bits):
    out = np.zeros(1, np.int64)
    nbits = np.zeros(1, np.int32)
    int_arg_kernel[(1,)](out, nbits, n)
    assert int(out[0]) == result
    assert nbits[0] == bits


@triton.jit
def float_arg_kernel(out_ptr, x):
    tl.static_assert(x.dtype == tl.float32)
    tl.store(out_ptr, x * 3)


def test_float_arguments_are_fp32():
    out = np.zeros(1, np.float64)
    float_arg_kernel[(1,)](out, 0.1)
    assert out[0] == float(np.float32(np.float32(0.1) * np.float32(3)))
    assert out[0] != 0.1 * 3
    float_arg_kernel[(1,)](out, np.float64(2.5))
    assert out[0] == 7.5


# ------------------------------------------------------------------------------------------------ autotune

@pytest.fixture
def autotune_mode(monkeypatch):
    def set_mode(mode):
        if mode is None:
            monkeypatch.delenv("MINITRITON_AUTOTUNE", raising=False)
        else:
            monkeypatch.setenv("MINITRITON_AUTOTUNE", mode)
    set_mode(None)
    return set_mode


def _block_probe():
    @triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128}, num_warps=8)],
                     key=["n"])
    @triton.jit
    def kernel(x_ptr, out_ptr, block_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)
        tl.store(block_ptr, BLOCK)
    return kernel


def test_autotune_first_config_by_default(autotune_mode):
    kernel = _block_probe()
    x = np.arange(300, dtype=np.float32)
    out = np.zeros(300, np.float32)
    block = np.zeros(1, np.int32)
    kernel[lambda meta: (cdiv(300, meta["BLOCK"]),)](x, out, block, 300)
    assert block[0] == 32
    assert kernel.best_config.kwargs == {"BLOCK": 32}
    np.testing.assert_array_equal(out, 2 * x)


def test_autotune_conflicting_meta_parameter(autotune_mode):
    kernel = _block_probe()
    x = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        kernel[(1,)](x, x, np.zeros(1, np.int32), 8, BLOCK=8)


def test_autotune_caches_per_key_and_prunes(autotune_mode):
    calls = []

    def early_prune(configs, named_args, **kwargs):
        calls.append(named_args["n"])
        return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]

    @triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 64}),
                              triton.Config({"BLOCK": 16})],
                     key=["n"], prune_configs_by={"early_config_prune": early_prune})
    @triton.jit
    def kernel(x_ptr, out_ptr, block_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
        tl.store(block_ptr, BLOCK)

    block = np.zeros(1, np.int32)
    for n, expected in [(100, 64), (100, 64), (40, 16), (300, 256), (100, 64), (40, 16)]:
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        kernel[lambda meta: (cdiv(meta["n"], meta["BLOCK"]),)](x, out, block, n)
        assert block[0] == expected
        np.testing.assert_array_equal(out, x)
        assert kernel.best_config.kwargs["BLOCK"] == expected
    assert calls == [100, 40, 300]  # pruned (and chosen) once per key value
    assert len(kernel.cache) == 3


def test_autotune_prune_gets_keyword_arguments_as_triton_passes_them(autotune_mode):
    """Triton 3.9's Autotuner.prune_configs: `early_config_prune(configs, positional arguments by name,
    **keyword arguments)` (the launch's `grid` and `warmup` among them) and `perf_model(**positional,
    **keywords, **config)`; tutorial 06 reads its keyword `N_CTX` this way."""
    seen = {}

    def early_prune(configs, named_args, **kwargs):
        seen["named"], seen["kwargs"] = sorted(named_args), dict(kwargs)
        return [c for c in configs if c.kwargs["BLOCK"] <= kwargs["n"]]

    def perf_model(block_ptr, n, grid, warmup, BLOCK, num_warps, **rest):
        seen["model"] = (n, warmup)
        return -BLOCK

    @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (8, 16, 32, 64)], key=["n"],
                     prune_configs_by={"early_config_prune": early_prune, "perf_model": perf_model, "top_k": 1})
    @triton.jit
    def kernel(block_ptr, n, BLOCK: tl.constexpr):
        tl.store(block_ptr, BLOCK)

    block = np.zeros(1, np.int32)
    grid = (1,)
    kernel[grid](block, n=20)
    assert block[0] == 16   # 32 and 64 pruned by the keyword n; the model ranks the largest left first
    assert seen["named"] == ["block_ptr"]
    assert seen["kwargs"] == {"n": 20, "grid": grid, "warmup": False}
    assert seen["model"] == (20, False)


def test_autotune_perf_model_top_k(autotune_mode):
    @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128)], key=[],
                     prune_configs_by={"perf_model": lambda n, BLOCK, **kw: abs(BLOCK - 50), "top_k": 1})
    @triton.jit
    def kernel(block_ptr, n, BLOCK: tl.constexpr):
        tl.store(block_ptr, BLOCK + n)

    block = np.zeros(1, np.int32)
    kernel[(1,)](block, 1000)
    assert block[0] == 64 + 1000


@triton.jit
def sum_forgets_tail(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, n // BLOCK):  # the last n % BLOCK elements are never read
        acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def sum_masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, tl.cdiv(n, BLOCK)):
        offs = i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def _tuned(fn):
    return triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["n"])(fn)


def test_autotune_all_catches_block_dependent_results(autotune_mode):
    autotune_mode("all")
    x = np.ones(100, np.float32)
    out = np.zeros(1, np.float32)
    kernel = _tuned(sum_forgets_tail)
    with pytest.raises(AutotuneMismatchError, match=r"autotune configs disagree on `out_ptr`: \[BLOCK: 16.*\] and "
                                                    r"\[BLOCK: 64.*\] give different values at 1 elements"):
        kernel[(1,)](x, out, 100)
    assert out[0] == 0  # the trials ran on copies
    good = _tuned(sum_masked)
    good[(1,)](x, out, 100)
    assert out[0] == 100
    assert good.best_config.kwargs == {"BLOCK": 16}


def test_autotune_all_does_not_flag_equal_results(autotune_mode):
    autotune_mode("all")
    x = np.ones(128, np.float32)  # a multiple of both blocks: the buggy kernel happens to agree
    out = np.zeros(1, np.float32)
    _tuned(sum_forgets_tail)[(1,)](x, out, 128)
    assert out[0] == 128


@triton.jit
def scaled_copy(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.sum(tl.load(w_ptr + tl.arange(0, 16)), axis=0)  # every program reads all of w: 64 bytes
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


@pytest.mark.parametrize("mode, expected", [(None, 32), ("first", 32), ("cheapest", 128)])
def test_autotune_cheapest_moves_fewest_bytes(autotune_mode, mode, expected):
    autotune_mode(mode)
    kernel = triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 16, 128, 64)], key=["n"])(
        scaled_copy)
    n = 1000
    x = np.arange(n, dtype=np.float32)
    w = np.full(16, 0.5, np.float32)
    out = np.zeros(n, np.float32)
    with minitriton.record() as rec:
        kernel[lambda meta: (cdiv(n, meta["BLOCK"]),)](x, w, out, n)
    assert kernel.best_config.kwargs == {"BLOCK": expected}
    np.testing.assert_array_equal(out, 8 * x)
    assert rec.last["constexprs"] == {"BLOCK": expected}  # the real launch (trials are not recorded here)
    assert rec.last["num_programs"] == cdiv(n, expected)


@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0), axis=0))


@pytest.mark.parametrize("mode", [None, "all", "cheapest"])
def test_autotune_reset_to_zero_and_hooks(autotune_mode, mode):
    autotune_mode(mode)
    config_hook, user_hook = [], []
    configs = [triton.Config({"BLOCK": 32}, pre_hook=lambda nargs: config_hook.append(dict(nargs))),
               triton.Config({"BLOCK": 64}, pre_hook=lambda nargs: config_hook.append(dict(nargs)))]

    def pre_hook(nargs, reset_only=False):
        user_hook.append(int(np.asarray(nargs["out_ptr"])[0]))  # already reset when the hook runs

    kernel = triton.autotune(configs=configs, key=["n"], reset_to_zero=["out_ptr"], pre_hook=pre_hook)(accumulate)
    n = 200
    x = np.arange(n, dtype=np.int32)
    out = np.full(1, 12345, np.int32)
    kernel[lambda meta: (cdiv(n, meta["BLOCK"]),)](x, out, n)
    assert out[0] == n * (n - 1) // 2
    assert config_hook and config_hook[-1]["BLOCK"] == kernel.best_config.kwargs["BLOCK"]
    assert config_hook[-1]["n"] == n and config_hook[-1]["out_ptr"] is out
    assert user_hook and set(user_hook) == {0}
    out[0] = 777  # a second launch with the same key: still reset (and the cached config is reused)
    kernel[lambda meta: (cdiv(n, meta["BLOCK"]),)](x, out, n)
    assert out[0] == n * (n - 1) // 2


def test_heuristics_compute_meta_parameters(autotune_mode):
    @triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"]),
                        "EVEN": lambda args: args["n"] == triton.next_power_of_2(args["n"])})
    @triton.jit
    def kernel(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if EVEN:
            x = tl.load(x_ptr + offs)
        else:
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + offs, x + 1, mask=offs < n)
        tl.store(flag_ptr, BLOCK * 10 + EVEN)

    flag = np.zeros(1, np.int32)
    for n, expected in [(100, 1280), (64, 641), (1, 11), (3, 40)]:
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        kernel[(1,)](x, out, flag, n)
        assert flag[0] == expected
        np.testing.assert_array_equal(out, x + 1)


def test_heuristics_under_autotune_see_the_config(autotune_mode):
    @triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["n"])
    @triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
    @triton.jit
    def kernel(flag_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        tl.store(flag_ptr, BLOCK * 10 + EVEN)

    flag = np.zeros(1, np.int32)
    kernel[(1,)](flag, 48)
    assert flag[0] == 161
    kernel[(1,)](flag, 40)
    assert flag[0] == 160


# ------------------------------------------------------------------------------------------------ memory views

@triton.jit
def copy2d(x_ptr, out_ptr, R, C, sxr, sxc, sor, soc, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.arange(0, BR)
    c = tl.arange(0, BC)
    mask = (r[:, None] < R) & (c[None, :] < C)
    x = tl.load(x_ptr + r[:, None] * sxr + c[None, :] * sxc, mask=mask)
    tl.store(out_ptr + r[:, None] * sor + c[None, :] * soc, x * 2 + 1, mask=mask)


def _strides(a):
    return [s // a.itemsize for s in a.strides]


@pytest.mark.parametrize("view", ["cols", "transpose", "reversed", "rows_step", "both_reversed"])
def test_strided_numpy_views(view):
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    src = {"cols": base[:, ::2], "transpose": base.T, "reversed": base[::-1],
           "rows_step": base[::-2, 1:8:3], "both_reversed": base[::-1, ::-1]}[view]
    R, C = src.shape
    out = np.zeros((R, C), np.float32)
    copy2d[(1,)](src, out, R, C, *_strides(src), *_strides(out), BR=16, BC=16)
    np.testing.assert_array_equal(out, src * 2 + 1)
    # and write through the same strided view: only its elements change
    target = np.zeros((6, 10), np.float32)
    tv = {"cols": target[:, ::2], "transpose": target.T, "reversed": target[::-1],
          "rows_step": target[::-2, 1:8:3], "both_reversed": target[::-1, ::-1]}[view]
    copy2d[(1,)](src, tv, R, C, *_strides(src), *_strides(tv), BR=16, BC=16)
    expected = np.zeros((6, 10), np.float32)
    ev = {"cols": expected[:, ::2], "transpose": expected.T, "reversed": expected[::-1],
          "rows_step": expected[::-2, 1:8:3], "both_reversed": expected[::-1, ::-1]}[view]
    ev[...] = src * 2 + 1
    np.testing.assert_array_equal(target, expected)


@triton.jit
def inplace(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2 + 1, mask=mask)


def test_in_place_kernels():
    x = np.arange(100, dtype=np.int32)
    inplace[(4,)](x, 100, BLOCK=32)
    np.testing.assert_array_equal(x, np.arange(100) * 2 + 1)
    y = np.arange(100, dtype=np.float32)
    add_kernel[(4,)](y, y, y, 100, BLOCK=32)  # the same array as both inputs and the output
    np.testing.assert_array_equal(y, 2 * np.arange(100, dtype=np.float32))


def test_torch_float32_tensors_written_in_place():
    torch = pytest.importorskip("torch")
    x = torch.arange(1000, dtype=torch.float32)
    y = torch.full((1000,), 0.5)
    out = torch.zeros(1000)
    ptr = out.data_ptr()
    add_kernel[(cdiv(1000, 128),)](x, y, out, 1000, BLOCK=128)
    assert out.data_ptr() == ptr
    assert torch.equal(out, x + y)
    big = torch.zeros(100)
    window = big[10:60]  # a contiguous view with an offset into its storage
    add_kernel[(1,)](x, y, window, 50, BLOCK=64)
    assert torch.equal(big[10:60], x[:50] + 0.5)
    assert (big[:10] == 0).all() and (big[60:] == 0).all()


def test_torch_bfloat16_tensors():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(300, generator=g) * 100).to(torch.bfloat16)
    y = torch.randn(300, generator=g).to(torch.bfloat16)
    out = torch.zeros(300, dtype=torch.bfloat16)
    add_kernel[(3,)](x, y, out, 300, BLOCK=128)
    # bf16 + bf16 is computed in fp32 and rounded to nearest even, as torch does
    expected = (x.float() + y.float()).to(torch.bfloat16)
    assert torch.equal(out.view(torch.int16), expected.view(torch.int16))


def test_torch_non_contiguous_view():
    torch = pytest.importorskip("torch")
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    src = base[:, 1::3]
    assert not src.is_contiguous()
    out = torch.zeros(src.shape)
    R, C = src.shape
    copy2d[(1,)](src, out, R, C, src.stride(0), src.stride(1), out.stride(0), out.stride(1), BR=8, BC=8)
    assert torch.equal(out, src * 2 + 1)
    target = torch.zeros(6, 10)
    view = target.t()[::2]  # (5, 6) with strides (2, 10)
    s = base.t()[::2]
    copy2d[(1,)](s, view, 5, 6, s.stride(0), s.stride(1), view.stride(0), view.stride(1), BR=8, BC=8)
    expected = torch.zeros(6, 10)
    expected.t()[::2] = s * 2 + 1
    assert torch.equal(target, expected)


# ------------------------------------------------------------------------------------------------ install

@pytest.fixture
def clean_triton_modules():
    """Take every `triton*` module out of sys.modules for the test, then put them back as they were."""
    saved = {k: v for k, v in sys.modules.items() if k == "triton" or k.startswith("triton.")}
    for k in saved:
        del sys.modules[k]
    yield
    minitriton.uninstall()
    for k in [k for k in sys.modules if k == "triton" or k.startswith("triton.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_install_aliases_triton(clean_triton_modules):
    minitriton.install()
    import triton as t
    import triton.language as tl2
    import triton.testing
    from triton.language.extra import libdevice
    from triton.language.extra.cuda import libdevice as cuda_libdevice
    assert t.jit is minitriton.jit and t.language is minitriton.language
    assert tl2 is minitriton.language
    assert triton.testing is minitriton.testing
    assert libdevice is importlib.import_module("minitriton.language.extra.libdevice")
    assert cuda_libdevice is importlib.import_module("minitriton.language.extra.cuda.libdevice")
    minitriton.install()  # twice is harmless

    @t.jit
    def k(x_ptr, BLOCK: tl2.constexpr):
        offs = tl2.arange(0, BLOCK)
        tl2.store(x_ptr + offs, libdevice.pow(tl2.load(x_ptr + offs), 2.0))
    x = np.arange(4, dtype=np.float32)
    k[(1,)](x, BLOCK=4)
    np.testing.assert_array_equal(x, [0, 1, 4, 9])

    minitriton.uninstall()
    assert not [m for m in sys.modules if m == "triton" or m.startswith("triton.")]


def test_install_refuses_when_real_triton_is_loaded(clean_triton_modules):
    sys.modules["triton"] = types.ModuleType("triton")
    with pytest.raises(RuntimeError, match="real Triton is already imported in this process"):
        minitriton.install()
    assert "triton.language" not in sys.modules
    minitriton.uninstall()  # leaves a module that is not ours alone
    assert sys.modules["triton"].__name__ == "triton" and sys.modules["triton"] is not minitriton


# ------------------------------------------------------------------------------------------------ triton.testing

def test_do_bench_returns_milliseconds():
    calls = []
    ms = triton.testing.do_bench(lambda: calls.append(1), warmup=1, rep=2)
    assert isinstance(ms, float) and ms >= 0
    assert len(calls) >= 2
    qs = triton.testing.do_bench(lambda: None, warmup=1, rep=2, quantiles=[0.5, 0.2, 0.8])
    assert isinstance(qs, list) and len(qs) == 3 and all(isinstance(q, float) for q in qs)
    with pytest.raises(ValueError, match="return_mode must be one of"):
        triton.testing.do_bench(lambda: None, return_mode="avg")


def test_assert_close():
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    triton.testing.assert_close(a, a + 1e-3)
    b = a.copy()
    b[2] = 3.5
    with pytest.raises(AssertionError, match=r"1 of 4 elements differ \(atol=0\.01, rtol=0\.0\); first at index "
                                             r"\(2,\): 3\.0 vs 3\.5; max abs difference 0\.5"):
        triton.testing.assert_close(a, b)
    with pytest.raises(AssertionError, match=r"shape mismatch: \(4,\) vs \(2,\)"):
        triton.testing.assert_close(a, a[:2])
    triton.testing.assert_close(a, b, atol=0.6)
