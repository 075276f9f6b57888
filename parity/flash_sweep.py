"""FlashAttention forward sweep on one GPU: which kernel variant / config reaches >= 0.80 of torch SDPA at D=128.

    python3 parity/flash_sweep.py [--budget-s 330]        # from the repo root; results in $OUT (default /tmp)
    python3 parity/flash_sweep.py --summarize FILE.json     # reprint the tables from a saved run (no GPU)
    TRITON_INTERPRET=1 python parity/flash_sweep.py --smoke # tiny CPU run of every code path (times mean nothing)

A GPU-only tool (minitriton runs its pointer variants, not the descriptor ones). Shapes: bf16, B=4 H=16
D=128, T in {1024, 4096, 8192}, causal and full. Results of the H200 run: parity/results/flash-d128-sweep-*.
Every (variant, config) is launched bare (precomputed grid and arguments, no wrapper, no autotuner) and timed
with triton.testing.do_bench(warmup=25, rep=100, return_mode='median'); FLOP/s = 4*B*H*T*T*D (halved if
causal) / time; ratio = SDPA's time / ours, SDPA (torch's default backend) measured in the same run. Before
timing, each launch is checked against a float32 reference: max|O - O_ref| / max|O_ref| < 2e-2 and
max|LSE - LSE_ref| < 1e-2 (LSE = natural-log logsumexp of the scaled scores, as the backward needs).

Robustness: the script runs as a supervisor that starts the sweep in a worker process. The worker saves all
results to $OUT/flash_sweep.json after every (variant, config); if a kernel breaks the CUDA context (illegal
address) or hangs (no progress for --hang-s), the supervisor kills that worker and starts another one that
resumes where it stopped without that variant. Kernels compile ahead of the timing, in the order they will
be timed, in background processes (nice 10; JITFunction.warmup fills Triton's on-disk cache, which the worker
then loads); a compiler crash there only breaks that pool, and the worker then compiles one kernel at a
time itself (--no-pool: stage by stage in threads with triton.AsyncCompileMode, never while timing).
Everything the worker prints (Triton/MLIR diagnostics included) goes to $OUT/flash_sweep.log; stdout carries
only the supervisor's lines and the final tables (< 10 kB).

Checked without a GPU (2026, Triton 3.9 + torch 2.13 CPU): every variant matches the fp32 reference under
TRITON_INTERPRET=1 (T=256 and, pointer variants, T=200; causal and full; 4 configs); the pointer variants
also run unmodified on minitriton (python -m minitriton run); every kernel compiles for sm_90 with Triton 3.9
(triton.compile with GPUTarget("cuda", 90, 64)), where warp specialization is applied only with
num_warps=4 and only with TMA descriptors in the loop (pointer loads + warp_specialize and host descriptors
+ warp_specialize fail to compile there, as the tutorial's choice of device descriptors for Hopper suggests).

New variants need T % BLOCK_M == 0 (true for the sweep's shapes); `ours` is the repo's kernel, any T.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
for _p in (REPO, HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

OUT = os.environ.get("OUT") or "/tmp"
STATE_NAME = "flash_sweep.json"
LOG_NAME = "flash_sweep.log"
TARGET = 0.80
TOL_O = 2e-2     # max|O - O_ref| / max|O_ref|
TOL_LSE = 1e-2   # max|LSE - LSE_ref| (natural log)
LOG2E = 1.4426950408889634

# =============================================================================================== variants
# name -> what it changes. "features": what beyond plain tl.load/tl.store/tl.dot pointer code it uses;
# "emulator": whether minitriton runs it today (pointer code; tl.range hints such as warp_specialize are
# accepted there and ignored) or what it would need.
VARIANTS = {
    "ours": dict(
        features="pointer", emulator="yes (it is kernels/flash_attention.py)",
        desc="the repo kernel flash_fwd_kernel as is, every config of the grid timed on its own"),
    "tma": dict(
        features="TMA host descriptors", emulator="needs TensorDescriptor args + desc.load/store",
        desc="tutorial 06 (v3.6) Hopper path without warp specialization: host TensorDescriptor for Q,K,V,O "
             "(2-D [B*H*T, D] views), desc.load(K).T, off-band/on-band loops, tl.multiple_of"),
    "tma_ws": dict(
        features="TMA device descriptors + warp_specialize", emulator="needs tl.make_tensor_descriptor (+allocator)",
        desc="tutorial 06 (v3.6) Hopper non-causal recipe: tl.make_tensor_descriptor in the kernel "
             "(triton.set_allocator) and tl.range(..., warp_specialize=True) (producer/consumer warps); causal "
             "as one loop masking every block (a warp-specialized loop followed by another fails to compile)"),
    "swp": dict(
        features="pointer", emulator="yes",
        desc="ours + manual software pipelining of the off-band loop: QK^T of block j+1 is issued before the "
             "softmax of block j (FA3's intra-warpgroup overlap, written in plain Triton)"),
    "tut_ptr": dict(
        features="pointer", emulator="yes",
        desc="ours with the tutorial's loop details in pointer code: K loaded already transposed (D x BLOCK_N), "
             "tl.range loops, start_n = tl.multiple_of(start_n, BLOCK_N)"),
    "persist": dict(
        features="pointer", emulator="yes",
        desc="persistent: grid = #SMs, each program loops over (bh, m-block) tiles (m fastest, causal "
             "longest-first); removes launch waves, tests whether tail/launch overhead matters at T=1024"),
    "bh_major": dict(
        features="pointer", emulator="yes",
        desc="ours with the grid transposed (bh fastest): quantifies the L2 reuse of K/V that ours' "
             "m-fastest order gives"),
    "tma_dev": dict(
        features="TMA device descriptors", emulator="needs tl.make_tensor_descriptor (+allocator)",
        desc="as tma but descriptors made in the kernel (tl.make_tensor_descriptor): cost of device descriptors"),
    "ws_ptr": dict(
        features="warp_specialize (hint)", emulator="yes (the hint is ignored)",
        desc="ours + tl.range(..., warp_specialize=True) with pointer loads (may not compile on Hopper)"),
    "tma_host_ws": dict(
        features="TMA host descriptors + warp_specialize", emulator="needs TensorDescriptor args",
        desc="host descriptors + warp_specialize (the tutorial avoids this combination on Hopper)"),
}
WS_VARIANTS = ("tma_ws", "ws_ptr", "tma_host_ws")   # tl.range(..., warp_specialize=True)


try:  # the supervisor and --summarize need neither triton nor torch, but the kernels live at module level
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

if triton is not None:

    # ------------------------------------------------------------------ pointer variants (copy of ours + knobs)
    @triton.jit
    def _step(acc, l_i, m_i, q, k_ptr, v_ptr, start_n, offs_m, offs_d, T, stride_t, qk_scale,
              BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, MASKED: tl.constexpr, KT: tl.constexpr):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv = offs_n[:, None] * stride_t + offs_d[None, :]
        if KT:  # K^T tile (D, BLOCK_N) loaded directly, as the tutorial's block pointer / desc.load(...).T
            kt_offs = offs_n[None, :] * stride_t + offs_d[:, None]
            if MASKED:
                kt = tl.load(k_ptr + kt_offs, mask=offs_n[None, :] < T, other=0.0)
            else:
                kt = tl.load(k_ptr + kt_offs)
            qk = tl.dot(q, kt)
        else:
            if MASKED:
                k = tl.load(k_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
            else:
                k = tl.load(k_ptr + kv)
            qk = tl.dot(q, tl.trans(k))
        if MASKED:
            v = tl.load(v_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
            keep = offs_n[None, :] < T
            if CAUSAL:
                keep = keep & (offs_n[None, :] <= offs_m[:, None])
            qk = tl.where(keep, qk, float("-inf"))
        else:
            v = tl.load(v_ptr + kv)
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        return acc, l_i, m_new

    @triton.jit
    def base_kernel(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, T, qk_scale, stride_bh, stride_t,
                    D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                    KT: tl.constexpr, HINTS: tl.constexpr, WS: tl.constexpr, BH_MAJOR: tl.constexpr):
        if BH_MAJOR:
            pid_m = tl.program_id(1)
            n_m = tl.num_programs(1)
            bh = tl.program_id(0)
        else:
            pid_m = tl.program_id(0)
            n_m = tl.num_programs(0)
            bh = tl.program_id(1)
        if CAUSAL:
            pid_m = n_m - 1 - pid_m
        m0 = pid_m * BLOCK_M
        offs_m = m0 + tl.arange(0, BLOCK_M)
        offs_d = tl.arange(0, D)
        base = bh * stride_bh
        row_ok = offs_m < T
        q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=row_ok[:, None], other=0.0)
        m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        if CAUSAL:
            unmasked_end = m0
            end = min(m0 + BLOCK_M, T)
        else:
            unmasked_end = (T // BLOCK_N) * BLOCK_N
            end = T
        for start_n in tl.range(0, unmasked_end, BLOCK_N, warp_specialize=WS):
            if HINTS:
                start_n = tl.multiple_of(start_n, BLOCK_N)
            acc, l_i, m_i = _step(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, start_n, offs_m, offs_d, T,
                                  stride_t, qk_scale, BLOCK_N, CAUSAL, False, KT)
        for start_n in tl.range(unmasked_end, end, BLOCK_N, warp_specialize=WS):
            if HINTS:
                start_n = tl.multiple_of(start_n, BLOCK_N)
            acc, l_i, m_i = _step(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, start_n, offs_m, offs_d, T,
                                  stride_t, qk_scale, BLOCK_N, CAUSAL, True, KT)
        o = acc * (1.0 / l_i)[:, None]
        tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
                 mask=row_ok[:, None])
        tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i), mask=row_ok)

    # ------------------------------------------------------------------ swp: QK^T of the next block issued early
    @triton.jit
    def _softmax_pv(acc, l_i, m_i, qk, v_ptr, start_n, offs_d, stride_t, qk_scale, BLOCK_N: tl.constexpr):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        v = tl.load(v_ptr + offs_n[:, None] * stride_t + offs_d[None, :])
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        return acc, l_i, m_new

    @triton.jit
    def swp_kernel(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, T, qk_scale, stride_bh, stride_t,
                   D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
        if CAUSAL:
            pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
        else:
            pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        m0 = pid_m * BLOCK_M
        offs_m = m0 + tl.arange(0, BLOCK_M)
        offs_d = tl.arange(0, D)
        base = bh * stride_bh
        k_rows = k_ptr + base
        v_rows = v_ptr + base
        row_ok = offs_m < T
        q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=row_ok[:, None], other=0.0)
        m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        if CAUSAL:
            unmasked_end = m0
            end = min(m0 + BLOCK_M, T)
        else:
            unmasked_end = (T // BLOCK_N) * BLOCK_N
            end = T
        if unmasked_end > 0:
            offs_n0 = tl.arange(0, BLOCK_N)
            k = tl.load(k_rows + offs_n0[:, None] * stride_t + offs_d[None, :])
            qk = tl.dot(q, tl.trans(k))
            for start_n in range(BLOCK_N, unmasked_end, BLOCK_N):
                offs_n = start_n + tl.arange(0, BLOCK_N)
                k_nx = tl.load(k_rows + offs_n[:, None] * stride_t + offs_d[None, :])
                qk_next = tl.dot(q, tl.trans(k_nx))       # independent of the softmax below: may overlap it
                acc, l_i, m_i = _softmax_pv(acc, l_i, m_i, qk, v_rows, start_n - BLOCK_N, offs_d, stride_t,
                                            qk_scale, BLOCK_N)
                qk = qk_next
            acc, l_i, m_i = _softmax_pv(acc, l_i, m_i, qk, v_rows, unmasked_end - BLOCK_N, offs_d, stride_t,
                                        qk_scale, BLOCK_N)
        for start_n in range(unmasked_end, end, BLOCK_N):
            acc, l_i, m_i = _step(acc, l_i, m_i, q, k_rows, v_rows, start_n, offs_m, offs_d, T, stride_t, qk_scale,
                                  BLOCK_N, CAUSAL, True, False)
        o = acc * (1.0 / l_i)[:, None]
        tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
                 mask=row_ok[:, None])
        tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i), mask=row_ok)

    # ------------------------------------------------------------------ persistent (pointer)
    @triton.jit
    def persist_kernel(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, T, qk_scale, stride_bh, stride_t, n_bh,
                       D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
        n_m = tl.cdiv(T, BLOCK_M)
        n_tiles = n_m * n_bh
        offs_d = tl.arange(0, D)
        for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
            bh = tile // n_m
            pid_m = tile % n_m
            if CAUSAL:
                pid_m = n_m - 1 - pid_m
            m0 = pid_m * BLOCK_M
            offs_m = m0 + tl.arange(0, BLOCK_M)
            base = bh * stride_bh
            row_ok = offs_m < T
            q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=row_ok[:, None],
                        other=0.0)
            m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
            l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
            acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
            if CAUSAL:
                unmasked_end = m0
                end = min(m0 + BLOCK_M, T)
            else:
                unmasked_end = (T // BLOCK_N) * BLOCK_N
                end = T
            for start_n in range(0, unmasked_end, BLOCK_N):
                acc, l_i, m_i = _step(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, start_n, offs_m, offs_d, T,
                                      stride_t, qk_scale, BLOCK_N, CAUSAL, False, False)
            for start_n in range(unmasked_end, end, BLOCK_N):
                acc, l_i, m_i = _step(acc, l_i, m_i, q, k_ptr + base, v_ptr + base, start_n, offs_m, offs_d, T,
                                      stride_t, qk_scale, BLOCK_N, CAUSAL, True, False)
            o = acc * (1.0 / l_i)[:, None]
            tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
                     mask=row_ok[:, None])
            tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i), mask=row_ok)

    # ------------------------------------------------------------------ TMA (tensor descriptors)
    @triton.jit
    def _tma_loop(acc, l_i, m_i, q, desc_k, desc_v, row0, lo, hi, offs_m, qk_scale,
                  BLOCK_N: tl.constexpr, ON_BAND: tl.constexpr, WS: tl.constexpr):
        row = row0 + lo
        for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WS):
            start_n = tl.multiple_of(start_n, BLOCK_N)
            k = desc_k.load([row, 0]).T
            qk = tl.dot(q, k)
            if ON_BAND:
                offs_n = start_n + tl.arange(0, BLOCK_N)
                qk = tl.where(offs_n[None, :] <= offs_m[:, None], qk, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.exp2(qk * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_ij = tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = desc_v.load([row, 0])
            acc = tl.dot(p.to(v.dtype), v, acc)
            l_i = l_i * alpha + l_ij
            m_i = m_new
            row += BLOCK_N
        return acc, l_i, m_i

    @triton.jit
    def tma_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale, n_rows,
                   D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                   WS: tl.constexpr, DEV_DESC: tl.constexpr):
        # Q, K, V, O are 2-D (B*H*T, D) row-major; needs T % BLOCK_M == 0 and BLOCK_M % BLOCK_N == 0.
        if DEV_DESC:  # pointers in, descriptors made here (needs triton.set_allocator)
            desc_q = tl.make_tensor_descriptor(desc_q, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_M, D])
            desc_k = tl.make_tensor_descriptor(desc_k, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_N, D])
            desc_v = tl.make_tensor_descriptor(desc_v, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_N, D])
            desc_o = tl.make_tensor_descriptor(desc_o, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_M, D])
        if CAUSAL:
            pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
        else:
            pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        m0 = pid_m * BLOCK_M
        row0 = bh * T
        offs_m = m0 + tl.arange(0, BLOCK_M)
        q = desc_q.load([row0 + m0, 0])
        m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        if CAUSAL and WS:
            # one loop, the causal mask applied in every iteration: with a warp-specialized loop followed by
            # another loop, sm_90 compiles fail (NVGPUWarpSpecialization assertion; Triton 3.9, checked locally)
            acc, l_i, m_i = _tma_loop(acc, l_i, m_i, q, desc_k, desc_v, row0, 0, m0 + BLOCK_M, offs_m, qk_scale,
                                      BLOCK_N, True, WS)
        elif CAUSAL:
            acc, l_i, m_i = _tma_loop(acc, l_i, m_i, q, desc_k, desc_v, row0, 0, m0, offs_m, qk_scale,
                                      BLOCK_N, False, WS)
            acc, l_i, m_i = _tma_loop(acc, l_i, m_i, q, desc_k, desc_v, row0, m0, m0 + BLOCK_M, offs_m, qk_scale,
                                      BLOCK_N, True, WS)
        else:
            acc, l_i, m_i = _tma_loop(acc, l_i, m_i, q, desc_k, desc_v, row0, 0, T, offs_m, qk_scale,
                                      BLOCK_N, False, WS)
        o = acc / l_i[:, None]
        desc_o.store([row0 + m0, 0], o.to(q.dtype))
        tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i))


def _kernels():
    """The kernels of the module imported as `flash_sweep`: Triton's cache key includes the module name, so the
    worker (run as __main__) and the compile processes (__mp_main__) must use the same module's kernels."""
    import flash_sweep as m
    return dict(base=m.base_kernel, swp=m.swp_kernel, persist=m.persist_kernel, tma=m.tma_kernel)


# =============================================================================================== configs
def cfg_name(c):
    return f"{c[0]}x{c[1]}w{c[2]}s{c[3]}"


def smem_est(v, c, D=128):
    """Shared memory estimate (bf16): Q + num_stages buffers of K and V; swp keeps one more K tile; the
    warp-specialized TMA kernels one more stage (Triton 3.9 for sm_90, compiled locally: tma_ws 128x64w4s4
    197 KB, 128x128w4s3 263 KB; swp 128x64w8s3 144 KB, ours 128x64w8s3 128 KB)."""
    bm, bn, _, s = c
    extra = 1 if v in WS_VARIANTS else 0
    return 2 * (bm * D + (s + extra) * 2 * bn * D) + (2 * bn * D if v == "swp" else 0)


def grid_configs(stages):
    return [(bm, bn, w, s) for bm in (128, 64) for bn in (64, 128, 32) for w in (8, 4) for s in stages
            if bm % bn == 0]


def _prio(v, c):
    bm, bn, w, s = c
    want_w = 4 if v in WS_VARIANTS else 8   # warp specialization is only applied with num_warps=4 (3.9, sm_90)
    return (bm != 128, w != want_w, bn == 32, {3: 0, 2: 1, 4: 2, 5: 3}[s], bn != 64)


CORE = {   # in order of promise; the repo's autotuned set for D=128 on Hopper is the first four of "ours"
    "ours": [(128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 8, 4), (64, 64, 4, 3), (128, 64, 8, 2), (128, 128, 8, 2)],
    "tma": [(128, 128, 8, 2), (128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 4, 3), (128, 128, 4, 2)],
    "tma_ws": [(128, 128, 4, 2), (128, 64, 4, 3), (128, 64, 4, 2), (128, 64, 4, 4), (64, 64, 4, 3), (128, 128, 8, 2)],
    "swp": [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 8, 2), (64, 64, 4, 3)],
    "tut_ptr": [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 8, 2), (64, 64, 4, 3)],
    "persist": [(128, 64, 8, 3), (128, 128, 8, 2)],
    "bh_major": [(128, 64, 8, 3)],
    "tma_dev": [(128, 128, 8, 2), (128, 64, 8, 3)],
    "ws_ptr": [(128, 64, 4, 3), (128, 128, 4, 2), (128, 64, 8, 3)],
    "tma_host_ws": [(128, 128, 4, 2), (128, 64, 4, 3), (64, 64, 4, 3)],
}
MAIN = ("ours", "tma", "tma_ws", "swp", "tut_ptr")


def plan(smem_limit, smoke):
    """Stages in order of promise: [(stage, serial_compile, [(variant, cfg, causal flags)])]."""
    both, full, causal = (False, True), (False,), (True,)
    if smoke:
        c = (64, 32, 4, 2)
        return [("smoke", False, [(v, c, both) for v in VARIANTS])]
    fits = lambda v, c: smem_est(v, c) <= smem_limit  # noqa: E731
    core = {v: [c for c in CORE[v] if fits(v, c)] for v in VARIANTS}
    rest = {}
    for v in VARIANTS:
        g = grid_configs((2, 3, 4, 5) if v == "ours" else (2, 3, 4))
        rest[v] = sorted([c for c in g if fits(v, c) and c not in CORE[v]], key=lambda c: _prio(v, c))
    return [
        # the tutorial enables warp specialization on Hopper for the non-causal forward only: causal comes later
        ("1-core", False, [(v, c, full if v == "tma_ws" else both) for v in MAIN for c in core[v]]),
        ("2a-ws-causal+grid-top", False, [("tma_ws", c, causal) for c in core["tma_ws"]]
         + [(v, c, both) for v in MAIN for c in rest[v][:8]]),
        ("2b-more-variants", False, [(v, c, both) for v in ("persist", "bh_major", "tma_dev") for c in core[v]]),
        # pointer loads or host descriptors with warp specialization: compile failures there (Triton 3.9,
        # sm_90) may be aborts in 3.6, so these compile one at a time
        ("3-ws-experimental", True, [(v, c, full) for v in ("ws_ptr", "tma_host_ws") for c in core[v]]),
        ("4-grid-rest", False, [(v, c, both) for v in MAIN for c in rest[v][8:]]),
    ]


# =============================================================================================== worker
class Worker:
    def __init__(self, a):
        self.a = a
        self.smoke = a.smoke
        self.deadline = a.deadline
        self.hb_path = a.hb
        self.state_path = os.path.join(OUT, STATE_NAME)
        self.state = self._load()

    @classmethod
    def for_compile(cls, smoke=False):
        """A worker that only builds launch arguments (in a compile process). smoke: CPU interpreter (tests)."""
        import torch
        import triton
        w = cls.__new__(cls)
        w.smoke, w.torch, w.triton = smoke, torch, triton
        dev, dtype = ("cpu", torch.float16) if smoke else ("cuda", torch.bfloat16)
        if not smoke:
            triton.runtime.driver.active.get_current_target()   # fails here, not per job, if the driver is unusable
        w.num_sms = 4 if smoke else torch.cuda.get_device_properties(0).multi_processor_count
        w.K = _kernels()
        from kernels import flash_attention as fa
        w.fa = fa
        w.B, w.H, w.D, w.Ts = (1, 2, 128, (128,)) if smoke else (4, 16, 128, (1024,))
        T = w.Ts[0]
        # torch.empty: no kernel runs here (this process must not share the GPU while the worker times)
        w.inputs = {T: [torch.empty(w.B, w.H, T, w.D, device=dev, dtype=dtype) for _ in range(3)]}
        w.outs = {(T, c): (torch.empty_like(w.inputs[T][0]),
                           torch.empty(w.B, w.H, T, device=dev, dtype=torch.float32)) for c in (False, True)}
        return w

    def start_pool(self, jobs):
        """Compile `jobs` [(variant, cfg, causal)] in background processes, in order; None if unavailable."""
        self.pool, self.futs = None, {}
        if (self.smoke and not os.environ.get("FLASH_SWEEP_TEST_POOL")) or self.a.no_pool or not jobs \
                or self.state.get("serial_compile"):
            return
        try:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor
            n = max(1, min(12, (os.cpu_count() or 4) - 3))
            self.pool = ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn"),
                                            initializer=_compile_child_init)
            for j in jobs:
                self.futs[gkey(*j)] = self.pool.submit(_compile_job, *j)
            self.log(f"background compile: {len(jobs)} kernels queued on {n} processes")
        except Exception as e:  # noqa: BLE001
            self.log(f"no background compile ({_short(e)}); compiling stage by stage in this process")
            self.pool = None

    def stop_pool(self):
        if getattr(self, "pool", None) is None:
            return
        procs = list(getattr(self.pool, "_processes", {}).values())
        try:
            self.pool.shutdown(wait=False, cancel_futures=True)
        except Exception:  # noqa: BLE001
            pass
        for pr in procs:   # the compile processes this worker started
            try:
                pr.kill()
            except Exception:  # noqa: BLE001
                pass
        self.pool = None

    def wait_compiled(self, gk):
        """The background compile's error for gk (None: compiled, or compile it here at the first launch)."""
        fut = self.futs.get(gk) if self.pool is not None else None
        if fut is None:
            return None
        t0 = time.time()
        from concurrent.futures import TimeoutError as FutTimeout
        while True:
            self.hb(f"wait compile {gk}")
            try:
                err, secs = fut.result(timeout=5)
                break
            except FutTimeout:
                if time.time() - t0 > 150:
                    return "compile timeout (background, 150 s)"
            except Exception as e:  # noqa: BLE001 - BrokenProcessPool: a compile process died
                # a kernel crashes the compiler: from now on compile one at a time in this worker, so that a
                # crash names its kernel (the supervisor then restarts without that variant)
                self.log(f"background compile broken ({_short(e, 120)}); compiling here, one at a time")
                self.state["errors"].append(f"background compile broken at {gk}: {_short(e, 160)}")
                self.state["serial_compile"] = True
                self.save()
                self.stop_pool()
                return None
        self.compile_s.append(secs)
        if err and err.startswith("POOL_UNAVAILABLE"):
            self.log(f"background compile unavailable ({err[:160]}); compiling in this process")
            self.state["errors"].append(err[:240])
            self.stop_pool()
            return None
        if err and not err.startswith(("CompilationError", "RuntimeError: PassManager", "OutOfResources")):
            self.state["errors"].append(f"background compile of {gk} failed ({err[:120]}): retried here")
            return None
        return err

    # ---------------------------------------------------------------- state
    def _load(self):
        if os.path.exists(self.state_path):
            with open(self.state_path) as f:
                s = json.load(f)
            s.setdefault("workers", 0)
            s["workers"] += 1
            return s
        return {"info": {}, "variants": VARIANTS, "sdpa": {}, "sdpa_backends": {}, "sdpa_err": {},
                "wrapper": {}, "results": [], "compile": {}, "skipped": [], "errors": [], "excluded": {},
                "stages": [], "workers": 1}

    def save(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f, default=lambda o: None if isinstance(o, float) and not math.isfinite(o)
                      else str(o))
        os.replace(tmp, self.state_path)

    def hb(self, what):
        if self.hb_path:
            with open(self.hb_path, "w") as f:
                f.write(json.dumps({"t": time.time(), "what": what}))

    def left(self):
        return self.deadline - time.time()

    def log(self, msg):
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        self.state.setdefault("progress", []).append(line)

    # ---------------------------------------------------------------- setup
    def setup(self):
        import torch
        import triton
        self.torch, self.triton = torch, triton
        self.dev = "cpu" if self.smoke else "cuda"
        try:
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        except Exception:  # noqa: BLE001
            pass
        if not self.smoke:
            def alloc_fn(size, alignment, stream):
                return torch.empty(size, dtype=torch.int8, device="cuda")
            triton.set_allocator(alloc_fn)  # scratch for tl.make_tensor_descriptor
            props = torch.cuda.get_device_properties(0)
            self.num_sms = props.multi_processor_count
            self.smem = int(getattr(props, "shared_memory_per_block_optin", 232448))
            name = torch.cuda.get_device_name(0)
        else:
            self.num_sms, self.smem, name = 4, 232448, "cpu (smoke)"
        info = self.state["info"]
        info.update({"device": name, "torch": torch.__version__, "triton": triton.__version__,
                     "cuda": torch.version.cuda, "num_sms": self.num_sms, "smem_optin": self.smem,
                     "smoke": self.smoke, "target": TARGET, "tol_o": TOL_O, "tol_lse": TOL_LSE,
                     "method": "do_bench(warmup=25, rep=100, return_mode='median'), bare launch; "
                               "ratio = SDPA ms / ours ms (SDPA: mean of the run's measurements)"})
        self.K = _kernels()
        from kernels import flash_attention as fa
        self.fa = fa
        B, H, D = (1, 2, 128) if self.smoke else (4, 16, 128)
        Ts = (128,) if self.smoke else (1024, 4096, 8192)
        info.update({"B": B, "H": H, "D": D, "Ts": list(Ts)})
        self.B, self.H, self.D = B, H, D
        gen = torch.Generator(device=self.dev).manual_seed(0)
        # Triton 3.9's CPU interpreter computes garbage from bf16 torch tensors (even for the repo kernel), so
        # the smoke run uses fp16; the GPU run is bf16.
        dtype = torch.float16 if self.smoke else torch.bfloat16
        info["dtype"] = str(dtype).replace("torch.", "")
        self.inputs = {}
        for T in Ts:
            self.inputs[T] = [torch.randn(B, H, T, D, device=self.dev, dtype=dtype, generator=gen)
                              for _ in range(3)]
        self.backup = {T: [x.clone() for x in xs] for T, xs in self.inputs.items()}   # see check_inputs
        self.cases = [(T, c) for c in (False, True) for T in Ts]
        self.ref, self.outs = {}, {}
        for T, causal in self.cases:
            q, k, v = self.inputs[T]
            self.ref[(T, causal)] = self.reference(q, k, v, causal)
            self.outs[(T, causal)] = (torch.empty_like(q), torch.empty(B, H, T, device=self.dev, dtype=torch.float32))
        if not self.smoke:   # clocks up before anything is timed
            w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
            t_end = time.monotonic() + 1.0
            while time.monotonic() < t_end:
                for _ in range(20):
                    w @ w
                torch.cuda.synchronize()
            del w

    def reference(self, q, k, v, causal):
        torch = self.torch
        B, H, T, D = q.shape
        BH = B * H
        qf, kf, vf = (x.reshape(BH, T, D) for x in (q, k, v))
        o = torch.empty(BH, T, D, device=q.device, dtype=torch.float32)
        lse = torch.empty(BH, T, device=q.device, dtype=torch.float32)
        chunk = max(1, (1 << 30) // (T * T * 4))
        mask = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1) if causal else None
        scale = 1.0 / math.sqrt(D)
        for i in range(0, BH, chunk):
            s = torch.bmm(qf[i:i + chunk].float(), kf[i:i + chunk].float().transpose(1, 2)) * scale
            if causal:
                s.masked_fill_(mask, float("-inf"))
            lv = torch.logsumexp(s, -1)
            s.sub_(lv[..., None]).exp_()
            o[i:i + chunk] = torch.bmm(s, vf[i:i + chunk].float())
            lse[i:i + chunk] = lv
            del s
        return o.reshape(B, H, T, D), lse.reshape(B, H, T)

    def errors(self, o, lse, case):
        o_ref, lse_ref = self.ref[case]
        e_o = ((o.float() - o_ref).abs().max() / o_ref.abs().max()).item()
        e_l = (lse - lse_ref).abs().max().item() if lse is not None else None
        return e_o, e_l

    def bench(self, fn):
        if self.smoke:
            fn()
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
        return float(self.triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))

    def flops(self, T, causal):
        return 4 * self.B * self.H * T * T * self.D * (0.5 if causal else 1.0)

    @staticmethod
    def case_key(T, causal):
        return f"{'causal' if causal else 'full'}-T{T}"

    # ---------------------------------------------------------------- SDPA and the repo wrapper
    def measure_sdpa(self, backends=False):
        import torch.nn.functional as F
        for T, causal in self.cases:
            key = self.case_key(T, causal)
            q, k, v = self.inputs[T]
            self.hb(f"sdpa {key}")
            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
            try:
                ms = self.bench(fn)
                self.state["sdpa"].setdefault(key, []).append(ms)
                if key not in self.state["sdpa_err"]:
                    self.state["sdpa_err"][key] = self.errors(fn(), None, (T, causal))[0]
            except Exception as e:  # noqa: BLE001
                self.state["errors"].append(f"sdpa {key}: {_short(e)}")
            if backends and key not in self.state["sdpa_backends"]:
                res = {}
                try:
                    from torch.nn.attention import SDPBackend, sdpa_kernel
                    for name in ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"):
                        be = getattr(SDPBackend, name, None)
                        if be is None:
                            continue
                        try:
                            with sdpa_kernel(be):
                                res[name.split("_")[0].lower()] = self.bench(fn)
                        except Exception as e:  # noqa: BLE001
                            res[name.split("_")[0].lower()] = f"n/a: {_short(e, 80)}"
                except Exception as e:  # noqa: BLE001
                    res["error"] = _short(e)
                self.state["sdpa_backends"][key] = res
        self.save()

    def measure_wrapper(self):
        fa = self.fa
        for T, causal in self.cases:
            key = self.case_key(T, causal)
            if key in self.state["wrapper"] or self.left() < 10 or self.state.get("skip_wrapper"):
                continue
            q, k, v = self.inputs[T]
            blocks = {"block_m": 64, "block_n": 32} if self.smoke else {}
            self.hb(f"wrapper {key}")
            rec = {}
            try:
                o, lse = fa.flash_attention(q, k, v, causal=causal, **blocks)   # autotunes on the first call
                rec["err_o"], rec["err_lse"] = self.errors(o, lse, (T, causal))
                rec["ms"] = self.bench(lambda: fa.flash_attention(q, k, v, causal=causal, **blocks))
                best = getattr(fa.flash_fwd_tuned, "best_config", None)
                if best is not None and not blocks:
                    rec["cfg"] = [best.kwargs.get("BLOCK_M"), best.kwargs.get("BLOCK_N"), best.num_warps,
                                  best.num_stages]
                    rec["config"] = str(best)
            except Exception as e:  # noqa: BLE001
                rec["error"] = _short(e)
            self.state["wrapper"][key] = rec
            self.save()

    # ---------------------------------------------------------------- launches
    def launch_spec(self, variant, cfg, T, causal):
        """(kernel, grid, args, kwargs) for one bare launch."""
        bm, bn, w, s = cfg
        q, k, v = self.inputs[T]
        o, lse = self.outs[(T, causal)]
        B, H, D = self.B, self.H, self.D
        BH = B * H
        qk_scale = LOG2E / math.sqrt(D)
        kw = dict(D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=bool(causal), num_warps=w, num_stages=s)
        ptr_args = (q, k, v, o, lse, T, qk_scale, T * D, D)
        if variant == "ours":
            return self.fa.flash_fwd_kernel, (triton_cdiv(T, bm), BH), ptr_args, kw
        if variant in ("tut_ptr", "ws_ptr", "bh_major"):
            kw.update(KT=variant == "tut_ptr", HINTS=variant == "tut_ptr", WS=variant == "ws_ptr",
                      BH_MAJOR=variant == "bh_major")
            grid = (BH, triton_cdiv(T, bm)) if variant == "bh_major" else (triton_cdiv(T, bm), BH)
            return self.K["base"], grid, ptr_args, kw
        if variant == "swp":
            return self.K["swp"], (triton_cdiv(T, bm), BH), ptr_args, kw
        if variant == "persist":
            n_tiles = triton_cdiv(T, bm) * BH
            return self.K["persist"], (min(self.num_sms, n_tiles),), ptr_args + (BH,), kw
        if variant in ("tma", "tma_ws", "tma_dev", "tma_host_ws"):
            if T % bm or bm % bn:
                raise ValueError("TMA variants need T % BLOCK_M == 0 and BLOCK_M % BLOCK_N == 0")
            rows = BH * T
            dev_desc = variant in ("tma_ws", "tma_dev")
            kw.update(WS=variant in ("tma_ws", "tma_host_ws"), DEV_DESC=dev_desc)
            q2, k2, v2, o2 = (x.view(rows, D) for x in (q, k, v, o))
            if dev_desc:
                descs = (q2, k2, v2, o2)
            else:
                from triton.tools.tensor_descriptor import TensorDescriptor
                descs = tuple(TensorDescriptor(x, shape=[rows, D], strides=[D, 1], block_shape=[b, D])
                              for x, b in ((q2, bm), (k2, bn), (v2, bn), (o2, bm)))
            return self.K["tma"], (T // bm, BH), descs + (lse, T, qk_scale, rows), kw
        raise KeyError(variant)

    def precompile(self, groups, serial=False):
        """Compile every (variant, cfg, causal) of a stage before anything of it is timed: in parallel threads
        (triton.AsyncCompileMode) or, for risky stages or after a crash, one at a time. {gkey: error}."""
        errs = {}
        if self.smoke or not groups:
            return errs
        serial = serial or self.state.get("serial_compile", False)
        AC = None
        if not serial:
            AC = getattr(self.triton, "AsyncCompileMode", None)
            if AC is None:
                try:
                    from triton.runtime._async_compile import AsyncCompileMode as AC
                except Exception:  # noqa: BLE001
                    AC = None
            if AC is None:
                self.log("no AsyncCompileMode: compiling one at a time")
        t0 = time.time()
        n = 0

        def spec(variant, cfg, causal):
            T = min(t for t, c in self.cases if c == causal)
            return self.launch_spec(variant, cfg, T, causal)

        if AC is None:
            for variant, cfg, causal in groups:
                gk = gkey(variant, cfg, causal)
                if self.left() < 5:
                    break
                self.hb(f"compile {gk}")
                try:
                    kern, grid, args, kw = spec(variant, cfg, causal)
                    kern.warmup(*args, grid=grid, **kw)
                    n += 1
                except Exception as e:  # noqa: BLE001
                    errs[gk] = _short(e)
        else:
            from concurrent.futures import ThreadPoolExecutor
            jobs = []
            self.hb("compile (parallel) " + ",".join(sorted({g[0] for g in groups})))
            try:
                with ThreadPoolExecutor(max_workers=max(2, min(32, os.cpu_count() or 8))) as pool:
                    with AC(pool):
                        for variant, cfg, causal in groups:
                            gk = gkey(variant, cfg, causal)
                            try:
                                kern, grid, args, kw = spec(variant, cfg, causal)
                                jobs.append((gk, kern.warmup(*args, grid=grid, **kw)))
                            except Exception as e:  # noqa: BLE001
                                errs[gk] = _short(e)
                        for gk, fut in jobs:
                            try:
                                if hasattr(fut, "result"):
                                    fut.result()
                                n += 1
                            except Exception as e:  # noqa: BLE001
                                errs[gk] = _short(e)
                            self.hb(f"compile (parallel) {gk}")
            except Exception as e:  # noqa: BLE001 - the context manager re-raising a failed compile
                self.state["errors"].append(f"precompile: {_short(e)}")
        self.log(f"compiled {n}/{len(groups)} kernels in {time.time() - t0:.1f} s ({len(errs)} failed)"
                 + (" [serial]" if AC is None else ""))
        return errs

    def check_inputs(self, what):
        """Inputs unchanged (a kernel writing out of bounds could corrupt them and every later check)."""
        for T, xs in self.inputs.items():
            for x, b in zip(xs, self.backup[T]):
                if not self.torch.equal(x, b):
                    x.copy_(b)
                    self.state["errors"].append(f"{what} modified the inputs (T={T}): out-of-bounds writes? restored")

    def context_ok(self):
        if self.smoke:
            return True
        try:
            torch = self.torch
            torch.cuda.synchronize()
            x = torch.ones(16, device="cuda")
            return float((x + 1).sum().item()) == 32.0
        except Exception:  # noqa: BLE001
            return False

    def run_group(self, variant, cfg, causal_flags):
        torch = self.torch
        n = 0
        for causal in causal_flags:
            for T, c in self.cases:
                if c != causal:
                    continue
                key = self.case_key(T, causal)
                if (variant, tuple(cfg), T, causal) in self.done:
                    continue
                rec = {"variant": variant, "cfg": list(cfg), "T": T, "causal": causal}
                self.hb(f"run {variant} {cfg_name(cfg)} {key}")
                if os.environ.get("FLASH_SWEEP_TEST_CRASH") == variant:   # tests of the supervisor only
                    os.abort()
                if os.environ.get("FLASH_SWEEP_TEST_HANG") == variant:
                    time.sleep(3600)
                try:
                    kern, grid, args, kw = self.launch_spec(variant, cfg, T, causal)
                    o, lse = self.outs[(T, causal)]
                    o.fill_(float("nan"))
                    lse.fill_(float("nan"))
                    kern[grid](*args, **kw)
                    if not self.smoke:
                        torch.cuda.synchronize()
                    e_o, e_l = self.errors(o, lse, (T, causal))
                    rec["err_o"], rec["err_lse"] = e_o, e_l
                    rec["ok"] = bool(e_o < TOL_O and e_l < TOL_LSE)   # NaN compares False
                    ms = self.bench(lambda: kern[grid](*args, **kw))
                    rec["ms"] = ms
                    rec["tflops"] = self.flops(T, causal) / (ms * 1e-3) / 1e12
                except Exception as e:  # noqa: BLE001
                    rec["error"] = _short(e)
                    self.state["results"].append(rec)
                    if not self.context_ok():
                        self.state["excluded"][variant] = f"broke the CUDA context at {cfg_name(cfg)} {key}: " \
                                                          f"{rec['error']}"
                        self.save()
                        self.log(f"CUDA context broken by {variant}; exiting for a restart without it")
                        sys.stdout.flush()
                        os._exit(3)
                    if "OutOfResources" in rec["error"] or "out of resource" in rec["error"].lower() \
                            or "CompilationError" in rec["error"]:
                        return n   # the same for every case of this config
                    continue
                self.state["results"].append(rec)
                n += 1
        return n

    # ---------------------------------------------------------------- main
    def main(self):
        t_start = time.time()
        self.hb("setup")
        self.setup()
        self.log(f"setup done in {time.time() - t_start:.1f} s; {self.left():.0f} s left")
        self.rates = dict(self.state.get("rates") or {"compile_s": 3.5, "case_s": 0.3})
        self.compile_s = []
        self.done = done = {(r["variant"], tuple(r["cfg"]), r["T"], r["causal"]) for r in self.state["results"]}
        stages = []
        for stage, serial, groups in plan(self.smem, self.smoke):
            groups = [(v, c, cf) for v, c, cf in groups
                      if v not in self.state["excluded"]
                      and not all((v, c, T, cc) in done for cc in cf for T, c2 in self.cases if c2 == cc)]
            if self.a.only:
                groups = [g for g in groups if g[0] in self.a.only.split(",")]
            if groups:
                stages.append((stage, serial, groups))
        # every kernel of every stage, in the order they will be timed, compiles in background processes
        self.start_pool([(v, c, x) for _, _, groups in stages for v, c, cf in groups for x in cf])
        self.measure_sdpa(backends=True)
        sdpa_mid = False
        n_cases = lambda cf: sum(1 for T, c in self.cases if c in cf)  # noqa: E731
        for stage, serial, groups in stages:
            groups = [g for g in groups if g[0] not in self.state["excluded"]]
            # fit the stage to what is left, with the compile and timing rates measured so far
            if self.compile_s:   # seconds per kernel in one compile process
                self.rates["compile_s"] = sum(self.compile_s) / len(self.compile_s)
            if self.pool is not None:
                c_rate = 0.0     # compiled in the background, ahead of the timing
            elif serial or self.state.get("serial_compile"):
                c_rate = self.rates["compile_s"]
            else:
                c_rate = self.rates["compile_s"] / 4
            kept, est = [], 5.0
            for g in groups:
                cost = self.rates["case_s"] * n_cases(g[2]) + c_rate * len(g[2])
                if est + cost < self.left() - 5 or self.smoke:
                    kept.append(g)
                    est += cost
                else:
                    self.state["skipped"].append(f"{stage} {g[0]} {cfg_name(g[1])} "
                                                 f"{'causal' if g[2] == (True,) else 'full' if g[2] == (False,) else 'both'} (budget)")
            if not kept:
                continue
            self.log(f"stage {stage}: {len(kept)} groups, {len(groups) - len(kept)} skipped for the budget")
            errs = {}
            if self.pool is None:
                flat = [(v, c, causal) for v, c, cf in kept for causal in cf]
                errs = self.precompile(flat, serial)
            for v, c, cf in kept:
                if v in self.state["excluded"]:
                    continue
                ok_cf = []
                for x in cf:
                    e = errs.get(gkey(v, c, x)) or self.wait_compiled(gkey(v, c, x))
                    if e:
                        self.state["compile"][gkey(v, c, x)] = {"error": e}
                    else:
                        ok_cf.append(x)
                if not ok_cf:
                    continue
                if self.left() < self.rates["case_s"] * n_cases(ok_cf) and not self.smoke:
                    self.state["skipped"].append(f"{stage} {v} {cfg_name(c)} (budget, at run time)")
                    continue
                t_g = time.time()
                n_done = self.run_group(v, c, tuple(ok_cf))
                self.check_inputs(f"{v} {cfg_name(c)}")
                if n_done and not self.smoke:   # running mean of the wall time per timed case
                    self.rates["case_s"] = 0.7 * self.rates["case_s"] + 0.3 * (time.time() - t_g) / n_done
                self.state["rates"] = dict(self.rates)
                self.save()
            self.state["stages"].append({"stage": stage, "t": round(time.time() - t_start, 1), "groups": len(kept)})
            if stage in ("1-core", "smoke"):
                self.measure_wrapper()
                self.check_inputs("the repo wrapper")
                if not sdpa_mid:
                    self.measure_sdpa()
                    sdpa_mid = True
            self.save()
        self.stop_pool()
        self.measure_sdpa()
        if self.compile_s:
            self.state["info"]["compile_s_per_kernel_background"] = round(sum(self.compile_s) / len(self.compile_s), 2)
        self.state["info"]["seconds_worker"] = round(time.time() - t_start, 1)
        self.state["finished"] = True
        self.save()
        self.log("worker finished")


# ---------------------------------------------------------------------------- background compile processes
_CHILD = {}


def _compile_child_init():
    try:
        os.nice(10)   # the timing thread of the worker keeps its core
    except OSError:
        pass


def _compile_job(variant, cfg, causal):
    """Run in a compile process: compile one kernel into Triton's on-disk cache through JITFunction.warmup with
    the same arguments the worker launches (T=1024 specializes like 4096 and 8192). (error or None, seconds)."""
    t0 = time.time()
    interp = os.environ.get("TRITON_INTERPRET") == "1"   # only in the tests of this machinery
    w = _CHILD.get("w")
    if w is None:
        try:
            w = Worker.for_compile(smoke=interp)
            _CHILD["w"] = w
        except Exception as e:  # noqa: BLE001
            return "POOL_UNAVAILABLE: " + _short(e), time.time() - t0
    if os.environ.get("FLASH_SWEEP_TEST_CHILD_CRASH") == variant:   # tests of this machinery only
        os.abort()
    try:
        kern, grid, args, kw = w.launch_spec(variant, cfg, w.Ts[0], causal)
        if interp:
            kern[grid](*args, **kw)
        else:
            kern.warmup(*args, grid=grid, **kw)
        return None, time.time() - t0
    except Exception as e:  # noqa: BLE001
        return _short(e), time.time() - t0


def triton_cdiv(a, b):
    return (a + b - 1) // b


def gkey(variant, cfg, causal):
    return f"{variant}/{cfg_name(cfg)}/{'causal' if causal else 'full'}"


def _short(e, n=240):
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg[:n]}"


# =============================================================================================== summary
def summarize(state, out=sys.stdout, width_limit=9500):
    lines = []
    p = lines.append
    info = state.get("info", {})
    B, H, D = info.get("B"), info.get("H"), info.get("D")
    Ts = info.get("Ts", [])
    cases = [(T, c) for c in (False, True) for T in Ts]
    ck = lambda T, c: f"{'causal' if c else 'full'}-T{T}"  # noqa: E731
    sdpa = {k: (sum(v) / len(v)) for k, v in state.get("sdpa", {}).items() if v}
    fl = lambda T, c: 4 * B * H * T * T * D * (0.5 if c else 1.0)  # noqa: E731
    p(f"flash_sweep: {info.get('device')} triton {info.get('triton')} torch {info.get('torch')} cuda {info.get('cuda')}"
      f" | B={B} H={H} D={D} {info.get('dtype')} | worker(s) {state.get('workers')} | {info.get('seconds_total', '?')} s"
      + ("" if state.get("finished") else " | NOT FINISHED (partial results)"))
    p("ratio = SDPA time / ours (>= %.2f is the target); TFLOP/s = 4BHT^2D (/2 causal) / time; cfg = BMxBN w=warps "
      "s=stages; '!' = failed the accuracy check" % TARGET)
    hdr = " ".join(f"{ck(T, c):>13}" for T, c in cases)
    p(f"{'':24}{hdr}")
    p(f"{'SDPA TFLOP/s (default)':24}" + " ".join(
        f"{fl(T, c) / (sdpa[ck(T, c)] * 1e-3) / 1e12:>13.0f}" if ck(T, c) in sdpa else f"{'-':>13}" for T, c in cases))
    spread = []
    for T, c in cases:
        v = state.get("sdpa", {}).get(ck(T, c), [])
        spread.append(f"{(max(v) - min(v)) / min(v) * 100:>12.1f}%" if len(v) > 1 else f"{'-':>13}")
    p(f"{'SDPA drift over run':24}" + " ".join(spread))
    for be in ("flash", "cudnn", "efficient"):
        row = []
        for T, c in cases:
            x = state.get("sdpa_backends", {}).get(ck(T, c), {}).get(be)
            row.append(f"{fl(T, c) / (x * 1e-3) / 1e12:>13.0f}" if isinstance(x, (int, float)) else f"{'n/a':>13}")
        p(f"{'  SDPA backend ' + be:24}" + " ".join(row))
    row = []
    for T, c in cases:
        w = state.get("wrapper", {}).get(ck(T, c), {})
        if w.get("ms") and ck(T, c) in sdpa:
            row.append(f"{sdpa[ck(T, c)] / w['ms']:>5.2f} {fl(T, c) / (w['ms'] * 1e-3) / 1e12:>4.0f}TF"
                       + ("!" if w.get("err_o", 1) >= TOL_O else " "))
        else:
            row.append(f"{'err' if w.get('error') else '-':>13}")
    p(f"{'repo wrapper (autotuned)':24}" + " ".join(row))
    chose = [f"{cfg_name(w['cfg']):>13}" if w.get("cfg") else f"{'?':>13}"
             for w in (state.get("wrapper", {}).get(ck(T, c), {}) for T, c in cases)]
    p(f"{'  autotuner chose':24}" + " ".join(chose))

    # results -> ratio
    res = state.get("results", [])
    by = {}
    for r in res:
        if r.get("ms") and ck(r["T"], r["causal"]) in sdpa:
            r["ratio"] = sdpa[ck(r["T"], r["causal"])] / r["ms"]
        by.setdefault(r["variant"], {}).setdefault(tuple(r["cfg"]), {})[(r["T"], r["causal"])] = r
    variants = [v for v in VARIANTS if v in by] + [v for v in by if v not in VARIANTS]

    def cell(r, with_cfg=True):
        if r is None:
            return "-"
        if r.get("error"):
            return "ERR"
        s = f"{r.get('ratio', 0):.2f}" + ("!" if not r.get("ok") else "")
        return s

    p("")
    p("BEST CONFIG PER VARIANT AND CASE: ratio TFLOP/s cfg  (only configs passing the check)")
    for causal in (False, True):
        p(f"  {'causal' if causal else 'full':8} {'variant':12}" + "".join(f"{'T=' + str(T):>24}" for T in Ts))
        for v in variants:
            row = []
            any_ = False
            for T in Ts:
                cand = [r for r in (cc.get((T, causal)) for cc in by[v].values()) if r and r.get("ratio") and r.get("ok")]
                if cand:
                    b = max(cand, key=lambda r: r["ratio"])
                    any_ = True
                    row.append(f"{b['ratio']:.2f}{'*' if b['ratio'] >= TARGET else ' '} {b['tflops']:4.0f} "
                               f"{cfg_name(b['cfg']):>12}")
                else:
                    n_err = sum(1 for cc in by[v].values() if (T, causal) in cc)
                    row.append(("no passing run" if n_err else "not run"))
            if any_ or any((T, causal) in cc for cc in by[v].values() for T in Ts):
                p(f"  {'':8} {v:12}" + "".join(f"{x:>24}" for x in row))
    p("  (* = reaches the target)")

    p("")
    p("BEST SINGLE CONFIG PER VARIANT (highest minimum ratio over the cases it ran; all passing)")
    for v in variants:
        best = None
        for c, cc in by[v].items():
            rs = [r for r in cc.values()]
            if not rs or any(not r.get("ok") or not r.get("ratio") for r in rs):
                continue
            mn = min(r["ratio"] for r in rs)
            gm = math.exp(sum(math.log(r["ratio"]) for r in rs) / len(rs))
            if best is None or mn > best[1]:
                best = (c, mn, gm, len(rs))
        if best:
            p(f"  {v:12} {cfg_name(best[0]):>12}  min {best[1]:.2f}  geomean {best[2]:.2f}  over {best[3]} cases"
              + ("   REACHES TARGET" if best[1] >= TARGET else ""))
        else:
            p(f"  {v:12} (no config passed in all its cases)")

    head = lines[:]
    lines.clear()

    def per_config(n_other, n_ours):
        out = ["", "PER-CONFIG RATIOS, cases as above (ours: every config timed, best first; others: top "
               f"{n_other} by geomean)"]
        for v in variants:
            items = []
            for c, cc in by[v].items():
                rr = [r.get("ratio") for r in cc.values() if r.get("ratio")]
                if rr:
                    items.append((math.exp(sum(math.log(x) for x in rr) / len(rr)), c, cc))
            items.sort(key=lambda x: -x[0])
            items = items[:n_ours if v == "ours" else n_other]
            for gm, c, cc in items:
                out.append(f"  {v:11} {cfg_name(c):>12} " + " ".join(f"{cell(cc.get((T, ca))):>6}" for T, ca in cases)
                           + f"  gm {gm:.2f}")
        return out

    # errors, compile failures, skipped
    errs = {}
    for r in res:
        if r.get("error"):
            e = r["error"]
            if "out of resource" in e.lower():
                e = "OutOfResources (shared memory)"
            errs.setdefault((r["variant"], e[:90]), []).append(cfg_name(r["cfg"]) + ("c" if r["causal"] else "f"))
    for gk, e in state.get("compile", {}).items():
        if e.get("error"):
            v, cn, cs = gk.split("/")
            errs.setdefault((v, "compile: " + e["error"][:80]), []).append(cn + cs[0])
    fails = {}
    for r in res:
        if r.get("ms") and not r.get("ok"):
            fails.setdefault(r["variant"], []).append(
                f"{cfg_name(r['cfg'])}{'c' if r['causal'] else 'f'}T{r['T']} eo={r.get('err_o', float('nan')):.1e} "
                f"el={r.get('err_lse') if r.get('err_lse') is None else format(r['err_lse'], '.1e')}")
    tail = []
    if errs or fails or state.get("excluded") or state.get("errors"):
        tail += ["", "ERRORS / FAILED CHECKS (configs: BMxBNwWsS + f=full c=causal)"]
    for v, why in state.get("excluded", {}).items():
        tail.append(f"  EXCLUDED {v}: {why[:160]}")
    for e in state.get("errors", [])[:4]:
        tail.append(f"  run: {e[:160]}")
    for (v, e), where in list(errs.items())[:10]:
        uniq = sorted(set(where))
        tail.append(f"  {v}: {e} [{len(where)}x: {' '.join(uniq[:4])}{' ...' if len(uniq) > 4 else ''}]")
    if len(errs) > 10:
        tail.append(f"  ... {len(errs) - 10} more error kinds in the JSON")
    for v, f in list(fails.items())[:6]:
        tail.append(f"  accuracy {v}: {len(f)} runs failed, e.g. {'; '.join(f[:2])}")
    sk = state.get("skipped", [])
    if sk:
        cnt = {}
        for x in sk:
            parts = x.split()
            cnt[(parts[0], parts[1] if len(parts) > 1 else "?")] = cnt.get((parts[0], parts[1] if len(parts) > 1 else "?"), 0) + 1
        tail += ["", f"SKIPPED for the budget ({len(sk)} configs): "
                 + ", ".join(f"{st_} {v} x{n}" for (st_, v), n in cnt.items())]
    sdpa_err = state.get("sdpa_err", {})
    if sdpa_err:
        tail.append("SDPA's own err_o vs the fp32 reference: " + " ".join(f"{k}={v:.1e}" for k, v in sdpa_err.items()))
    ready = [v for v in VARIANTS if VARIANTS[v]["emulator"].startswith("yes")]
    need = [v for v in VARIANTS if not VARIANTS[v]["emulator"].startswith("yes")]
    tail += ["", f"emulator runs as is: {' '.join(ready)} | needs tensor-descriptor support: {' '.join(need)}",
             f"raw results: {os.path.join(OUT, STATE_NAME)} ; worker log: {os.path.join(OUT, LOG_NAME)}"]
    for n_other, n_ours in ((3, 99), (2, 99), (1, 99), (1, 24), (0, 16), (0, 0)):
        lines = head + per_config(n_other, n_ours) + tail
        if len("\n".join(lines)) <= width_limit:
            break
    print("\n".join(lines), file=out, flush=True)


# =============================================================================================== supervisor
def supervise(a, argv):
    t0 = time.time()
    deadline = t0 + a.budget_s
    os.makedirs(OUT, exist_ok=True)
    state_path = os.path.join(OUT, STATE_NAME)
    if os.path.exists(state_path) and not a.resume:
        os.remove(state_path)
    log_path = os.path.join(OUT, LOG_NAME)
    hb_fd, hb_path = tempfile.mkstemp(prefix="flash_sweep_hb_")
    os.close(hb_fd)
    print(f"flash_sweep: budget {a.budget_s:.0f} s, results -> {state_path}, log -> {log_path}", flush=True)
    with open(log_path, "a") as logf:
        for attempt in range(5):
            if time.time() > deadline - 20:
                break
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--deadline", str(deadline),
                   "--hb", hb_path] + (["--smoke"] if a.smoke else []) + (["--only", a.only] if a.only else []) \
                + (["--no-pool"] if a.no_pool else [])
            with open(hb_path, "w") as f:
                f.write(json.dumps({"t": time.time(), "what": "start"}))
            logf.write(f"\n===== worker {attempt} {time.strftime('%H:%M:%S')}: {' '.join(cmd)}\n")
            logf.flush()
            proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=REPO)
            why, what = None, "start"
            while True:
                try:
                    rc = proc.wait(timeout=2)
                    break
                except subprocess.TimeoutExpired:
                    pass
                try:
                    mtime = os.path.getmtime(hb_path)
                    with open(hb_path) as f:
                        what = json.loads(f.read() or "{}").get("what", "?")
                except Exception:  # noqa: BLE001
                    mtime = time.time()
                now = time.time()
                if now - mtime > a.hang_s:
                    why = f"no progress for {now - mtime:.0f} s during: {what}"
                elif now > deadline + a.grace_s:
                    why = f"past the budget (+{a.grace_s:.0f} s grace) during: {what}"
                if why:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)   # the worker and its children only
                    except ProcessLookupError:
                        pass
                    rc = proc.wait()
                    break
            print(f"  worker {attempt}: exit {rc}" + (f" (killed: {why})" if why else "") +
                  f" at {time.time() - t0:.0f} s, last step: {what if why else _last_step(hb_path)}", flush=True)
            if rc == 0 and not why:
                break
            if why and why.startswith("past the budget"):
                break
            if not why and rc == 1:   # a Python error in the worker: restarting would repeat it
                print("  worker failed; log tail:", flush=True)
                _tail(log_path, 2500)
                break
            if not os.path.exists(state_path):
                print("  the worker saved nothing; log tail:", flush=True)
                _tail(log_path, 2500)
                break
            # rc 3: the worker broke its CUDA context and excluded the variant itself. A hang (killed) or a
            # crash (signal, e.g. an abort inside the compiler): blame the step the heartbeat names.
            step = what if why else _last_step(hb_path)
            note = why or f"worker died with exit {rc}"
            try:
                with open(state_path) as f:
                    st = json.load(f)
                parts = step.split()
                if rc != 3:
                    if step.startswith("compile (parallel)"):
                        st["serial_compile"] = True      # find the culprit: compile one at a time from now on
                        print("  -> compiling one at a time from now on", flush=True)
                    elif parts and parts[0] in ("run", "compile") and len(parts) > 1:
                        v = parts[1].split("/")[0]
                        st.setdefault("excluded", {})[v] = note if why else f"{note} during: {step}"
                        print(f"  -> excluding {v}", flush=True)
                    elif parts and parts[0] == "wrapper":
                        st["skip_wrapper"] = True
                    else:
                        print(f"  cannot tell what to skip (last step: {step}); stopping", flush=True)
                        _tail(log_path, 1500)
                        break
                st.setdefault("errors", []).append(f"worker {attempt}: {note} (last step: {step})")
                with open(state_path + ".tmp", "w") as f:
                    json.dump(st, f)
                os.replace(state_path + ".tmp", state_path)
            except Exception as e:  # noqa: BLE001
                print(f"  could not update the state: {e}", flush=True)
                break
    try:
        os.remove(hb_path)
    except OSError:
        pass
    _trim_log(log_path)
    if not os.path.exists(state_path):
        print("no results", flush=True)
        return 1
    with open(state_path) as f:
        st = json.load(f)
    st.setdefault("info", {})["seconds_total"] = round(time.time() - t0, 1)
    with open(state_path, "w") as f:
        json.dump(st, f)
    summarize(st)
    return 0


def _last_step(hb_path):
    try:
        with open(hb_path) as f:
            return json.loads(f.read() or "{}").get("what", "?")
    except Exception:  # noqa: BLE001
        return "?"


def _tail(path, n=3000):
    try:
        with open(path, errors="replace") as f:
            data = f.read()
        print(data[-n:], flush=True)
    except OSError:
        pass


def _trim_log(path, limit=2_000_000):
    try:
        if os.path.getsize(path) > limit:
            with open(path, "rb") as f:
                f.seek(-limit // 2, os.SEEK_END)
                data = f.read()
            with open(path, "wb") as f:
                f.write(b"[... log trimmed to its last 1 MB ...]\n" + data)
    except OSError:
        pass


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget-s", type=float, default=330.0, help="wall-clock budget of the whole sweep")
    ap.add_argument("--smoke", action="store_true", help="tiny CPU run (TRITON_INTERPRET=1): code paths only")
    ap.add_argument("--only", help="comma-separated variants to run (debugging)")
    ap.add_argument("--resume", action="store_true", help="keep an existing $OUT/flash_sweep.json and continue it")
    ap.add_argument("--hang-s", type=float, default=100.0, help="kill a worker that makes no progress this long")
    ap.add_argument("--grace-s", type=float, default=40.0)
    ap.add_argument("--no-pool", action="store_true",
                    help="compile stage by stage in the worker (threads) instead of in background processes")
    ap.add_argument("--summarize", metavar="JSON", help="print the tables of a saved run and exit")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--hb", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.summarize:
        with open(a.summarize) as f:
            summarize(json.load(f))
        return 0
    if a.smoke and os.environ.get("TRITON_INTERPRET") != "1":
        print("--smoke needs TRITON_INTERPRET=1 (CPU interpreter)", file=sys.stderr)
        return 2
    if a.worker:
        w = Worker(a)
        try:
            w.main()
        except Exception:  # noqa: BLE001
            w.state.setdefault("errors", []).append("worker: " + traceback.format_exc()[-1500:])
            w.save()
            traceback.print_exc()
            return 1
        return 0
    return supervise(a, argv)


if __name__ == "__main__":
    sys.exit(main())
