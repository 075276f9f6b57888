"""kernels.matmul under minitriton: values against float64 NumPy, exact traffic, activations, errors."""
from __future__ import annotations

import numpy as np
import pytest

import minitriton

minitriton.install()  # before the kernels import `triton` (idempotent; conftest does it too)

import minitriton.language as tl  # noqa: E402
from kernels import _host  # noqa: E402
from kernels import matmul as mm  # noqa: E402
from kernels.tolerances import assert_close  # noqa: E402

SMALL = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2}
# (M, N, K): none a multiple of any block; a K below BLOCK_K; single rows and columns
AWKWARD = [(37, 53, 29), (100, 3, 70), (1, 17, 33), (65, 66, 7), (70, 90, 48)]


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _as(values, dtype):
    """values (float32) stored as `dtype`: NumPy for fp32/fp16, a minitriton.Buffer for bf16."""
    if dtype == "bfloat16":
        return minitriton.Buffer.from_float(values, tl.bfloat16)
    return values.astype(dtype)


def _tf32(x):
    """Independent TF32 truncation: clear the low 13 of fp32's 23 mantissa bits (what the H200 does)."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("M,N,K", AWKWARD)
def test_fp32_awkward_sizes_use_tf32(M, N, K):
    a, b = _rand((M, K), 1), _rand((K, N), 2)
    c = mm.matmul(a, b, config=SMALL)
    assert c.dtype == np.float32 and c.shape == (M, N)
    expected = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    assert_close(c, expected, "float32", "fp32 matmul vs float64 of TF32 inputs")
    assert_close(c, mm.reference_matmul(a, b, tf32=True), "float32")
    if K >= 16:  # the default dot is really TF32: exact fp32 products would be ~1e-3 away
        with pytest.raises(AssertionError, match="elements differ"):
            assert_close(c, a.astype(np.float64) @ b.astype(np.float64), "float32")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("M,N,K", AWKWARD[:3])
def test_half_precision_inputs(M, N, K, dtype):
    a, b = _as(_rand((M, K), 3), dtype), _as(_rand((K, N), 4), dtype)
    c = mm.matmul(a, b, config={"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32})
    assert _host.dtype_name(c) == dtype and tuple(c.shape) == (M, N)
    # products of 16-bit values are exact in fp32; only the accumulation order and the final rounding differ
    expected = _host.to_float64(a) @ _host.to_float64(b)
    assert_close(_host.to_float64(c), expected, dtype)


def test_lesson_shape_bf16_default_config():
    """The lesson's 1000x700x900 (no block divides it) through the autotuned path (minitriton: first config)."""
    a = _as(_rand((1000, 700), 5), "bfloat16")
    b = _as(_rand((700, 900), 6), "bfloat16")
    c = mm.matmul(a, b)
    assert mm.matmul_kernel_tuned.best_config is mm.CONFIGS[0]
    assert_close(_host.to_float64(c), mm.reference_matmul(a, b), "bfloat16", "1000x700x900 bf16")


@pytest.mark.parametrize("activation", ["relu", "leaky_relu", "gelu"])
def test_fused_activations(activation):
    a, b = _rand((45, 30), 7), _rand((30, 50), 8)
    c = mm.matmul(a, b, activation=activation, config=SMALL)
    assert_close(c, mm.reference_matmul(a, b, activation, tf32=True), "float32", activation)
    # an independent spelling of each activation on the same pre-activation values
    x = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    spelled = {"relu": np.where(x > 0, x, 0.0), "leaky_relu": np.where(x < 0, 0.01 * x, x),
               "gelu": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))}[activation]
    assert_close(c, spelled, "float32", activation)
    assert not np.allclose(c, x, atol=1e-3)  # the activation really ran


def test_gelu_bf16_applied_before_the_cast():
    a, b = _as(_rand((33, 40), 9), "bfloat16"), _as(_rand((40, 31), 10), "bfloat16")
    c = mm.matmul(a, b, activation="gelu", config=SMALL)
    assert_close(_host.to_float64(c), mm.reference_matmul(a, b, "gelu"), "bfloat16")


@pytest.mark.parametrize("M,N,K,config", [
    (37, 53, 29, SMALL),                                                    # K tail masked
    (70, 90, 48, SMALL),                                                    # EVEN_K: no K mask
    (64, 96, 48, SMALL),                                                    # EVEN_K and EVEN_MN: no masks
    (100, 3, 70, {"BLOCK_M": 64, "BLOCK_N": 16, "BLOCK_K": 32, "GROUP_M": 8}),
    (129, 65, 64, {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 64, "GROUP_M": 1}),
])
def test_traffic_counters_equal_the_tiled_model(M, N, K, config):
    a, b = _as(_rand((M, K), 11), "bfloat16"), _as(_rand((K, N), 12), "bfloat16")
    with minitriton.record() as rec:
        c = mm.matmul(a, b, config=config)
    assert_close(_host.to_float64(c), mm.reference_matmul(a, b), "bfloat16")
    t = rec.last["tensors"]
    assert rec.last["constexprs"]["EVEN_K"] == (K % config["BLOCK_K"] == 0)
    BM, BN, BK = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    model = mm.traffic(M, N, K, "bfloat16", block_m=BM, block_n=BN)
    # A is re-read once per column of tiles, B once per row of tiles: exactly, masked lanes excluded
    assert model["tile_loaded_elements"] == M * K * -(-N // BN) + K * N * -(-M // BM)
    loaded = t["a_ptr"]["totals"]["loaded_elements"] + t["b_ptr"]["totals"]["loaded_elements"]
    assert loaded == model["tile_loaded_elements"]
    assert t["c_ptr"]["totals"]["stored_elements"] == M * N
    # every byte of A and B is read at least once and C written once: the ideal kernel's bytes
    touched = (t["a_ptr"]["totals"]["unique_loaded_bytes"] + t["b_ptr"]["totals"]["unique_loaded_bytes"]
               + t["c_ptr"]["totals"]["unique_stored_bytes"])
    assert touched == model["bytes"] == (M * K + K * N + M * N) * 2
    tiles = -(-M // BM) * -(-N // BN)
    assert rec.last["num_programs"] == tiles
    assert rec.last["dot_flops"]["total"] == 2 * BM * BN * BK * -(-K // BK) * tiles  # padded tiles
    assert model["flops"] == 2 * M * N * K


def test_traffic_and_values_do_not_depend_on_grouping(group_size_one):
    a, b = _rand((37, 29), 13), _rand((29, 53), 14)
    with minitriton.record() as rec:
        c1 = mm.matmul(a, b, config=SMALL)
    minitriton.set_options(group_size=None)
    c2 = mm.matmul(a, b, config=SMALL)
    assert np.array_equal(c1, c2)
    t = rec.last["tensors"]
    assert t["a_ptr"]["totals"]["loaded_elements"] + t["b_ptr"]["totals"]["loaded_elements"] == \
        mm.traffic(37, 53, 29, "float32", 32, 32)["tile_loaded_elements"]


@pytest.mark.parametrize("group_m", [1, 3, 8])
def test_group_m_changes_the_order_not_the_result(group_m):
    a, b = _rand((130, 40), 15), _rand((40, 170), 16)
    base = mm.matmul(a, b, config=dict(SMALL, GROUP_M=1))
    c = mm.matmul(a, b, config=dict(SMALL, GROUP_M=group_m))
    assert np.array_equal(c, base)  # the same tiles, summed in the same K order


def _grouped_order(tiles_m, tiles_n, group_m):
    """(tile_m, tile_n) for each program id: bands of group_m tile rows, column by column inside a band."""
    order = []
    for first in range(0, tiles_m, group_m):
        rows = min(group_m, tiles_m - first)
        order += [(first + r, n) for n in range(tiles_n) for r in range(rows)]
    return order


@pytest.mark.parametrize("group_m", [1, 2, 3])
def test_group_m_order_of_tiles(group_m):
    """Which tile each program computes, read off the counters: only the last tile row masks rows of A and
    only the last tile column masks columns of B (K = BLOCK_K, so no K tail)."""
    M, N, K = 32 * 4 + 5, 32 * 2 + 7, 16
    a, b = _rand((M, K), 17), _rand((K, N), 18)
    with minitriton.record() as rec:
        mm.matmul(a, b, config={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": group_m})
    t = rec.last["tensors"]
    last_row = [n > 0 for n in t["a_ptr"]["per_program"]["masked_load_lanes"]]
    last_col = [n > 0 for n in t["b_ptr"]["per_program"]["masked_load_lanes"]]
    order = _grouped_order(5, 3, group_m)
    assert last_row == [m == 4 for m, _ in order]
    assert last_col == [n == 2 for _, n in order]
    if group_m > 1:  # not the row-major order
        assert last_col != [n == 2 for _, n in _grouped_order(5, 3, 1)]


def test_strided_inputs():
    a_t = _rand((29, 37), 19)          # A given as the transpose of a (K, M) array: stride_ak != 1
    b = _rand((58, 53), 20)[::2]       # every other row: stride_bk = 2 * N
    c = mm.matmul(a_t.T, b, config=SMALL)
    assert_close(c, _tf32(a_t.T).astype(np.float64) @ _tf32(b).astype(np.float64), "float32")


def test_autotune_configs_agree(monkeypatch):
    """MINITRITON_AUTOTUNE=all runs every config that fits and fails if any result differs."""
    monkeypatch.setenv("MINITRITON_AUTOTUNE", "all")
    a, b = _as(_rand((41, 23), 21), "bfloat16"), _as(_rand((23, 67), 22), "bfloat16")
    c = mm.matmul(a, b)
    assert_close(_host.to_float64(c), mm.reference_matmul(a, b), "bfloat16")


def test_configs_cover_hopper_and_ada():
    def has(bm, bn, bk, warps):
        return any(c.kwargs["BLOCK_M"] == bm and c.kwargs["BLOCK_N"] == bn and c.kwargs["BLOCK_K"] == bk
                   and c.num_warps == warps and c.kwargs["GROUP_M"] == 8 for c in mm.CONFIGS)
    assert has(128, 256, 64, 8) and has(128, 128, 64, 8)      # Hopper: wgmma-sized tiles, two warpgroups
    assert has(128, 128, 32, 4) and has(64, 128, 32, 4)       # Ada: 99 KiB of shared memory
    first = mm.CONFIGS[0]
    assert (first.kwargs["BLOCK_M"], first.kwargs["BLOCK_N"], first.kwargs["BLOCK_K"]) == (128, 256, 64)
    # fp32 inputs double the pipelined tiles' size: configs over the H200's 227 KiB are pruned
    kept = mm._prune_configs(mm.CONFIGS, {"a_ptr": np.zeros((1, 1), np.float32)})
    assert first not in kept and all(
        c.num_stages * (c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * c.kwargs["BLOCK_K"] * 4 <= 232448 for c in kept)


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(50, 40, generator=g).to(torch.bfloat16)
    b = torch.randn(40, 30, generator=g).to(torch.bfloat16)
    c = mm.matmul(a, b, activation="relu", config=SMALL)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.bfloat16 and c.shape == (50, 30)
    expected = torch.relu(a.double() @ b.double()).numpy()
    assert_close(_host.to_float64(c), expected, "bfloat16", "torch bf16")


def test_empty_output():
    c = mm.matmul(np.zeros((0, 5), np.float32), np.zeros((5, 4), np.float32))
    assert c.shape == (0, 4)


def test_errors():
    a = np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"inner dimensions differ: A is 4x5, B is 6x3"):
        mm.matmul(a, np.zeros((6, 3), np.float32))
    with pytest.raises(TypeError, match="A and B must have one dtype, got float32 and float16"):
        mm.matmul(a, np.zeros((5, 3), np.float16))
    with pytest.raises(TypeError, match="supports float32, float16 and bfloat16, got int32"):
        mm.matmul(a.astype(np.int32), np.zeros((5, 3), np.int32))
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        mm.matmul(a, np.zeros((5, 3), np.float32), activation="tanh")
    with pytest.raises(ValueError, match=r"matmul takes 2-D arrays, got shapes \(4, 5, 1\)"):
        mm.matmul(a[..., None], a)


def test_second_call_launches_the_chosen_config_directly():
    """After the first (autotuned) call for a size, the wrapper launches the chosen config itself."""
    a, b = _as(_rand((48, 40), 23), "bfloat16"), _as(_rand((40, 56), 24), "bfloat16")
    with minitriton.record() as rec:
        c1 = mm.matmul(a, b)
        c2 = mm.matmul(a, b)
    assert np.array_equal(c1.array, c2.array)
    first, second = rec.launches
    assert first["constexprs"] == second["constexprs"]
    assert second["constexprs"]["BLOCK_N"] == mm.CONFIGS[0].kwargs["BLOCK_N"]
    assert mm._CHOSEN[(48, 56, 40, "bfloat16")]["BLOCK_M"] == mm.CONFIGS[0].kwargs["BLOCK_M"]


def test_launch_config_names_the_autotuners_choice(monkeypatch):
    monkeypatch.setattr(mm, "_CHOSEN", {})
    a, b = _as(_rand((24, 40), 25), "bfloat16"), _as(_rand((40, 16), 26), "bfloat16")
    assert mm.launch_config(24, 16, 40, "bfloat16") is None
    mm.matmul(a, b)
    c = mm.CONFIGS[0]   # minitriton's autotuner takes the first config
    assert mm.launch_config(24, 16, 40, "bfloat16") == (
        f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']}x{c.kwargs['BLOCK_K']} w{c.num_warps} s{c.num_stages}")
    assert mm.launch_config(24, 16, 40, "float32") is None      # a choice is per size and dtype
