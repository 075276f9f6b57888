"""The seven benchmark workloads: kernels, input data and float64 references.

The workloads re-create the CPU baseline measured for Triton's interpreter (bench/README.md) exactly: same seed, same
draw order, shapes, grids, strides, block sizes and tolerances. The kernels are plain Triton source; which
Triton runs them is decided by the process before this module is imported (``TRITON_INTERPRET=1`` for
Triton's interpreter, ``minitriton.install()`` for minitriton).

Kernel arguments never come from ``tensor.stride()``: strides are computed from the shapes (every array
is contiguous), so the same launch code works for torch tensors and NumPy arrays. The backend-specific
part (how arrays are made and read back) is an ``Arrays`` object, see ``TorchArrays`` and
``NumpyArrays``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import triton
import triton.language as tl


# --------------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    # Program i handles elements [i*BLOCK_SIZE, (i+1)*BLOCK_SIZE); the last block is cut by the mask.
    block_start = tl.program_id(0) * BLOCK_SIZE
    idx = block_start + tl.arange(0, BLOCK_SIZE)
    inside = idx < n
    lhs = tl.load(x_ptr + idx, mask=inside)
    rhs = tl.load(y_ptr + idx, mask=inside)
    tl.store(out_ptr + idx, lhs + rhs, mask=inside)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    # One program per row. Padding lanes read -inf, so they add exp(-inf) = 0 to the sum.
    row_start = tl.program_id(0) * row_stride
    col = tl.arange(0, BLOCK_SIZE)
    valid = col < n_cols
    row = tl.load(x_ptr + row_start + col, mask=valid, other=-float("inf")).to(tl.float32)
    row = row - tl.max(row, axis=0)
    numer = tl.exp(row)
    denom = tl.sum(numer, axis=0)
    tl.store(y_ptr + row_start + col, (numer / denom).to(y_ptr.dtype.element_ty), mask=valid)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, row_stride, eps, BLOCK_SIZE: tl.constexpr):
    # One program per row: y = x / sqrt(mean(x^2) + eps) * w, computed in fp32.
    row_start = tl.program_id(0) * row_stride
    col = tl.arange(0, BLOCK_SIZE)
    valid = col < n_cols
    xs = tl.load(x_ptr + row_start + col, mask=valid, other=0.0).to(tl.float32)
    ws = tl.load(w_ptr + col, mask=valid, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(xs * xs, axis=0) / n_cols + eps)
    tl.store(y_ptr + row_start + col, (xs / rms * ws).to(y_ptr.dtype.element_ty), mask=valid)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    # Map the 1-D program id onto a (tile row, tile column) pair, GROUP_M tile rows at a time.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    group_first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - group_first_m, GROUP_M)
    tile_m = group_first_m + (pid % per_group) % group_rows
    tile_n = (pid % per_group) // group_rows

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn

    # March along K one BLOCK_K slab at a time; both loads are masked on both dimensions.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_remaining = K - k * BLOCK_K
        a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < k_remaining), other=0.0)
        b = tl.load(b_tile, mask=(ks[:, None] < k_remaining) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, T, scale, stride_bh, stride_t,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr):
    # Program (pid_m, bh) owns BLOCK_M query rows of one (batch, head) slice.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    head = bh * stride_bh
    q_rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head + q_rows[:, None] * stride_t + dims[None, :],
                mask=q_rows[:, None] < T, other=0.0)

    # Online softmax state: running row max, running sum of exponentials, unnormalised output.
    run_max = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    run_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)

    if CAUSAL:
        hi = tl.minimum((pid_m + 1) * BLOCK_M, T)   # a runtime tensor: key blocks past the diagonal are skipped
    else:
        hi = T
    for start_n in range(0, hi, BLOCK_N):
        kv_rows = start_n + tl.arange(0, BLOCK_N)
        kv_ptrs = head + kv_rows[:, None] * stride_t + dims[None, :]
        k = tl.load(k_ptr + kv_ptrs, mask=kv_rows[:, None] < T, other=0.0)
        v = tl.load(v_ptr + kv_ptrs, mask=kv_rows[:, None] < T, other=0.0)
        scores = tl.dot(q, tl.trans(k)) * scale
        keep = kv_rows[None, :] < T
        if CAUSAL:
            keep = keep & (kv_rows[None, :] <= q_rows[:, None])
        scores = tl.where(keep, scores, -float("inf"))

        new_max = tl.maximum(run_max, tl.max(scores, axis=1))
        probs = tl.exp(scores - new_max[:, None])
        rescale = tl.exp(run_max - new_max)
        run_sum = run_sum * rescale + tl.sum(probs, axis=1)
        acc = acc * rescale[:, None] + tl.dot(probs.to(v.dtype), v)
        run_max = new_max

    out = acc / run_sum[:, None]
    tl.store(o_ptr + head + q_rows[:, None] * stride_t + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=q_rows[:, None] < T)
    tl.store(lse_ptr + bh * T + q_rows, run_max + tl.log(run_sum), mask=q_rows < T)


# --------------------------------------------------------------------------------------------------
# Data (one generator, drawn in the order of the baseline's table) and float64 references
# --------------------------------------------------------------------------------------------------

N_ADD = 98432
SOFTMAX_SHAPE = (1823, 781)
RMS_SHAPE = (512, 896)
RMS_EPS = 1e-6
MM = 512
FLASH_BH, FLASH_T, FLASH_D = 6, 257, 64


def make_data() -> dict[str, np.ndarray]:
    """All inputs, from one ``np.random.default_rng(0)`` drawn in the baseline's order (float32)."""
    rng = np.random.default_rng(0)
    data = {}
    data["add_x"] = rng.random(N_ADD, dtype=np.float32)
    data["add_y"] = rng.random(N_ADD, dtype=np.float32)
    data["softmax_x"] = rng.standard_normal(SOFTMAX_SHAPE, dtype=np.float32)
    data["rms_x"] = rng.standard_normal(RMS_SHAPE, dtype=np.float32)
    data["rms_w"] = rng.standard_normal(RMS_SHAPE[1], dtype=np.float32)
    data["mm_a"] = rng.standard_normal((MM, MM), dtype=np.float32)
    data["mm_b"] = rng.standard_normal((MM, MM), dtype=np.float32)
    data["q"] = rng.standard_normal((FLASH_BH, FLASH_T, FLASH_D), dtype=np.float32)
    data["k"] = rng.standard_normal((FLASH_BH, FLASH_T, FLASH_D), dtype=np.float32)
    data["v"] = rng.standard_normal((FLASH_BH, FLASH_T, FLASH_D), dtype=np.float32)
    return data


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> nearest bfloat16 value (round to nearest, ties to even), returned as float32.

    Finite inputs only (the benchmark data has no NaN). Matches ``torch.Tensor.to(torch.bfloat16)``.
    """
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def ref_vector_add(d):
    # The baseline's check is exact equality with x + y, so the reference is the float32 sum itself
    # (rounded once, like the kernel's fp32 add), held in float64.
    return {"out": (d["add_x"] + d["add_y"]).astype(np.float64)}


def ref_softmax(d):
    x = d["softmax_x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


def ref_rmsnorm(d):
    x = d["rms_x"].astype(np.float64)
    w = d["rms_w"].astype(np.float64)
    return {"y": x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + RMS_EPS) * w}


def ref_matmul_fp32(d):
    return {"c": d["mm_a"].astype(np.float64) @ d["mm_b"].astype(np.float64)}


def ref_matmul_bf16(d):
    a = round_to_bf16(d["mm_a"]).astype(np.float64)
    b = round_to_bf16(d["mm_b"]).astype(np.float64)
    return {"c": a @ b}


def _ref_attention(d, causal):
    q, k, v = (d[n].astype(np.float64) for n in ("q", "k", "v"))
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(FLASH_D)
    if causal:
        future = np.triu(np.ones((FLASH_T, FLASH_T), dtype=bool), k=1)
        scores = np.where(future, -np.inf, scores)
    row_max = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    return {"o": (e / total) @ v, "lse": (row_max + np.log(total))[..., 0]}


def ref_flash_full(d):
    return _ref_attention(d, causal=False)


def ref_flash_causal(d):
    return _ref_attention(d, causal=True)


# --------------------------------------------------------------------------------------------------
# Backend array factories
# --------------------------------------------------------------------------------------------------


class TorchArrays:
    """torch CPU tensors (what Triton's interpreter takes)."""

    name = "torch"
    bf16_note = "torch.bfloat16 CPU tensors"

    def __init__(self):
        import torch

        self.torch = torch

    def input(self, a):
        return self.torch.from_numpy(a)

    def output(self, shape):
        return self.torch.full(shape, float("nan"), dtype=self.torch.float32)

    def input_bf16(self, a):
        return self.torch.from_numpy(a).to(self.torch.bfloat16)

    def output_bf16(self, shape):
        return self.torch.full(shape, float("nan"), dtype=self.torch.bfloat16)

    def to_f64(self, t):
        return t.to(self.torch.float64).numpy()

    def nbytes(self, t):
        return t.element_size() * t.numel()


class NumpyArrays:
    """NumPy arrays (what minitriton takes). NumPy has no bfloat16 of its own: see ``bf16``."""

    name = "numpy"

    def __init__(self):
        self._bf16 = None

    @property
    def bf16(self):
        """bf16 support: ``(make_input, make_output, to_f64, note, nbytes)``, the first that works of:

        1. ``minitriton.Buffer`` (NumPy uint16 storage tagged bf16), when minitriton is loaded and has it;
        2. NumPy arrays of ``ml_dtypes.bfloat16`` (minitriton accepts them), if ml_dtypes is installed;
        3. torch bf16 CPU tensors, which minitriton must accept (shared with it, never copied).
        """
        if self._bf16 is None:
            minitriton = sys.modules.get("minitriton")
            buffer = getattr(minitriton, "Buffer", None)
            if buffer is not None and hasattr(buffer, "from_float"):
                bf16_type = minitriton.language.bfloat16
                self._bf16 = (lambda a: buffer.from_float(a, bf16_type),           # RTNE
                              lambda shape: buffer.from_float(np.full(shape, np.nan, np.float32), bf16_type),
                              lambda t: t.to_float32().astype(np.float64),
                              "minitriton.Buffer (NumPy uint16 storage, bf16)",
                              lambda t: t.array.nbytes)
                return self._bf16
            try:
                import ml_dtypes

                bf16 = np.dtype(ml_dtypes.bfloat16)
                self._bf16 = (lambda a: a.astype(bf16),                       # RTNE, like torch
                              lambda shape: np.full(shape, np.nan, dtype=bf16),
                              lambda t: t.astype(np.float64),
                              "NumPy ml_dtypes.bfloat16 arrays",
                              lambda t: t.nbytes)
            except ImportError:
                torch_arrays = TorchArrays()
                self._bf16 = (torch_arrays.input_bf16, torch_arrays.output_bf16, torch_arrays.to_f64,
                              torch_arrays.bf16_note, torch_arrays.nbytes)
        return self._bf16

    @property
    def bf16_note(self):
        return self.bf16[3]

    def input(self, a):
        return a

    def output(self, shape):
        return np.full(shape, np.nan, dtype=np.float32)

    def input_bf16(self, a):
        return self.bf16[0](a)

    def output_bf16(self, shape):
        return self.bf16[1](shape)

    def to_f64(self, t):
        if isinstance(t, np.ndarray) and t.dtype.name != "bfloat16":
            return t.astype(np.float64)
        return self.bf16[2](t)

    def nbytes(self, t):
        if isinstance(t, np.ndarray):
            return t.nbytes
        return self.bf16[4](t)


# --------------------------------------------------------------------------------------------------
# Workloads: setup(data, arrays) -> Prepared
# --------------------------------------------------------------------------------------------------


def _cdiv(a, b):
    return -(-a // b)


@dataclass
class Prepared:
    launch: Callable[[], None]   # one kernel launch; the only thing timed
    outputs: dict                # output name -> backend array, compared against the reference
    arrays: list                 # every array the launch touches (inputs and outputs), for the memory ratio


def setup_vector_add(d, ar):
    x, y = ar.input(d["add_x"]), ar.input(d["add_y"])
    out = ar.output((N_ADD,))
    grid = (_cdiv(N_ADD, 1024),)

    def launch():
        add_kernel[grid](x, y, out, N_ADD, BLOCK_SIZE=1024)

    return Prepared(launch, {"out": out}, [x, y, out])


def setup_softmax(d, ar):
    rows, cols = SOFTMAX_SHAPE
    x = ar.input(d["softmax_x"])
    y = ar.output(SOFTMAX_SHAPE)

    def launch():
        softmax_kernel[(rows,)](x, y, cols, cols, BLOCK_SIZE=1024)

    return Prepared(launch, {"y": y}, [x, y])


def setup_rmsnorm(d, ar):
    rows, cols = RMS_SHAPE
    x, w = ar.input(d["rms_x"]), ar.input(d["rms_w"])
    y = ar.output(RMS_SHAPE)

    def launch():
        rmsnorm_kernel[(rows,)](x, w, y, cols, cols, RMS_EPS, BLOCK_SIZE=1024)

    return Prepared(launch, {"y": y}, [x, w, y])


def _setup_matmul(a, b, c):
    grid = (_cdiv(MM, 64) * _cdiv(MM, 64),)

    def launch():
        matmul_kernel[grid](a, b, c, MM, MM, MM, MM, 1, MM, 1, MM, 1,
                            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)

    return Prepared(launch, {"c": c}, [a, b, c])


def setup_matmul_fp32(d, ar):
    return _setup_matmul(ar.input(d["mm_a"]), ar.input(d["mm_b"]), ar.output((MM, MM)))


def setup_matmul_bf16(d, ar):
    return _setup_matmul(ar.input_bf16(d["mm_a"]), ar.input_bf16(d["mm_b"]), ar.output_bf16((MM, MM)))


def _setup_flash(d, ar, causal):
    q, k, v = (ar.input(d[n]) for n in ("q", "k", "v"))
    o = ar.output((FLASH_BH, FLASH_T, FLASH_D))
    lse = ar.output((FLASH_BH, FLASH_T))
    grid = (_cdiv(FLASH_T, 64), FLASH_BH)
    scale = 1.0 / math.sqrt(FLASH_D)

    def launch():
        flash_fwd_kernel[grid](q, k, v, o, lse, FLASH_T, scale, FLASH_T * FLASH_D, FLASH_D,
                               D=FLASH_D, BLOCK_M=64, BLOCK_N=64, CAUSAL=causal)

    return Prepared(launch, {"o": o, "lse": lse}, [q, k, v, o, lse])


def setup_flash_full(d, ar):
    return _setup_flash(d, ar, causal=False)


def setup_flash_causal(d, ar):
    return _setup_flash(d, ar, causal=True)


@dataclass(frozen=True)
class Workload:
    name: str
    programs: int
    tol: float
    setup: Callable
    reference: Callable
    in_geomean: bool = True   # matmul_bf16 is left out: the interpreter computes it wrongly


WORKLOADS = [
    Workload("vector_add", _cdiv(N_ADD, 1024), 0.0, setup_vector_add, ref_vector_add),
    Workload("softmax_fwd", SOFTMAX_SHAPE[0], 1e-6, setup_softmax, ref_softmax),
    Workload("rmsnorm", RMS_SHAPE[0], 1e-4, setup_rmsnorm, ref_rmsnorm),
    Workload("matmul_fp32", _cdiv(MM, 64) ** 2, 1e-3, setup_matmul_fp32, ref_matmul_fp32),
    Workload("matmul_bf16", _cdiv(MM, 64) ** 2, 0.5, setup_matmul_bf16, ref_matmul_bf16, in_geomean=False),
    Workload("flash_fwd_full", _cdiv(FLASH_T, 64) * FLASH_BH, 1e-4, setup_flash_full, ref_flash_full),
    Workload("flash_fwd_causal", _cdiv(FLASH_T, 64) * FLASH_BH, 1e-4, setup_flash_causal, ref_flash_causal),
]
BY_NAME = {w.name: w for w in WORKLOADS}


def max_abs_error(prepared: Prepared, reference: dict, ar) -> tuple[float, dict]:
    """Largest |output - reference| over all outputs, and the figure per output.

    A NaN anywhere (e.g. an element never written, outputs start as NaN) gives an error of inf.
    """
    per_output = {}
    for name, ref in reference.items():
        got = ar.to_f64(prepared.outputs[name])
        if got.shape != ref.shape:
            raise ValueError(f"output {name!r} has shape {got.shape}, expected {ref.shape}")
        diff = np.abs(got - ref)
        per_output[name] = float(np.inf) if np.isnan(diff).any() else float(diff.max())
    return max(per_output.values()), per_output
