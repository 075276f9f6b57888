"""FlashAttention, forward and backward: attention without ever writing the T x T score matrix to memory.

What it teaches:
* **Online softmax.** A program owns BLOCK_M query rows and streams the keys and values past them in blocks
  of BLOCK_N. It keeps, per row, the running maximum m and the running sum l of exponentials, and an
  unnormalised output; when a new block raises the maximum, the old sum and output are rescaled by
  exp(m_old - m_new). Scores are pre-multiplied by log2(e), so every exponential is a cheap `exp2`.
* **A fixed reference, the online softmax as its fallback (bf16 inputs).** The maximum only keeps exp() in
  range; any reference gives the same softmax. So for bf16 inputs each row's reference is its maximum over
  key block 0 and stays fixed: later blocks need neither a row maximum nor a rescale of the output (128
  fewer multiplies per thread and block at D = 128), and P may exceed 1. That is exact until a later score
  outruns the reference by ~64 in log2 units; then some row's sum passes 2**64 (or a row of the output
  overflows, for values of V beyond ~2**64) and the program redoes its rows with the online softmax (the
  traffic counters show K and V read twice). Other inputs keep the online softmax throughout: fp16 P
  enters the second dot as fp16, whose largest value is 65504 (P = 2**16 would already be inf), and with P
  far above 1 the rounding of the exponent's argument grows with it, which fp32 outputs would show and
  bf16 ones (P rounded to 2^-9) do not. What this gained on a GPU: `docs/findings.md` §3.
* **Causal block skipping.** With a causal mask, key blocks right of the diagonal contribute nothing: the
  loop bound is a runtime value per program, so later query blocks do more work and early ones stop
  early. Key blocks fully left of the diagonal need no mask at all; only the blocks on the diagonal and the
  sequence tail (T not a multiple of the block) pay for `tl.where`. Any T works.
* **Logsumexp for the backward.** The forward stores L = logsumexp of each score row (natural log). The
  backward recomputes P = exp(S - L) block by block instead of storing it: memory stays O(T), not O(T^2).
* **Backward in three kernels.** delta = rowsum(dO * O) (a small preprocess); dK and dV, one program per key
  block looping over query blocks; dQ, one program per query block looping over key blocks. Each output
  has a single writer, so the result is deterministic (no atomics).

Inputs are (B, H, T, D) arrays (NumPy, minitriton.Buffer or torch) of float32, float16 or bfloat16, with the
head dimension D in {16, 32, 64, 128} (`tl.arange` needs a power of two; pad other head dims with zeros up
to the next one, since zero columns change neither the scores nor the kept part of the output). Scores
and softmax statistics are fp32; fp32 inputs use the GPU's default TF32 dot. Offsets are int32, which is
enough while B*H*T*D < 2**31.

Tolerances (`kernels.tolerances`, atol as a fraction of the largest |expected|): three entries exist for
kernels built on `tl.dot` ("float16_dot", for fp16 attention, is measured on the H200 against the GPU). "tf32" (2^-8, 2^-8) is for float32 inputs through the default TF32 dot: each
operand keeps 11 significant bits (truncated, so up to 2^-10 relative per operand), which moves scores,
P and every product by ~1e-3; measured under minitriton over T in {64, 100, 257}, D in {16, 64, 128},
causal or not: at most 9.7e-4 of the scale beyond rtol 2^-8, a 4x margin. "bfloat16_dot" (2^-7, 2^-6) is
for bf16 attention, where P and dS are rounded to bf16 (2^-9 relative) before they enter a dot, so errors
scale with the whole row, not with the element: measured at most 2.4e-3 of the scale beyond rtol 2^-6
(3x margin). The logsumexp L is fp32 and, for bf16 inputs, within the "float32" tolerance.

Run on a CUDA GPU with real Triton, `python -m kernels.flash_attention` checks the kernels against torch's
scaled_dot_product_attention (values and gradients) and prints timings next to it.

On Hopper at D = 128 the forward reads Q, K, V and writes O through tensor descriptors
(`flash_fwd_tma_kernel`, TMA copies; the same source runs on minitriton). Speed on a GPU: the attention rows
of the benchmark of record, `parity/results/cuda-bench-2026-11-30-rmsnorm-bwd.md`, next to torch's SDPA and
the lesson's kernel; what was tried for D = 128: `docs/findings.md` §3.
"""
import math

import numpy as np
import triton
import triton.language as tl

from . import _host

HEAD_DIMS = (16, 32, 64, 128)
LOG2E = 1.4426950408889634
_DTYPES = ("float32", "float16", "bfloat16")
_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


# ---------------------------------------------------------------------------------------------- forward

@triton.jit
def _softmax_pv(acc, l_i, m_i, qk, v, start_n, qk_scale, FIXED: tl.constexpr):
    """Adds one block's exp(scores - reference) @ V to acc and its row sums to l_i; returns (acc, l_i, m_i).

    FIXED: the first key block sets each row's reference m_i (its maximum there), and every later block
    reuses it as it is: no row maximum and no rescale of acc (P may exceed 1 then; see the module docstring).
    Otherwise the online softmax: m_i is the running maximum and a larger one rescales what was summed."""
    if FIXED:
        if start_n == 0:
            m_i = tl.max(qk, 1) * qk_scale
        p = tl.exp2(qk * qk_scale - m_i[:, None])
        l_i += tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc)
        return acc, l_i, m_i
    # scores in log2 units, s = (q.k) * scale * log2(e): scale only the row maxima, then one FMA per score
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.exp2(m_i - m_new)  # rescales what was summed under the old maximum
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _fwd_step(acc, l_i, m_i, q, k_ptr, v_ptr, start_n, offs_m, T, stride_t, qk_scale,
              D: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, MASKED: tl.constexpr,
              FIXED: tl.constexpr):
    """One key/value block; MASKED blocks are the diagonal and the tail past T."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    kv = offs_n[:, None] * stride_t + tl.arange(0, D)[None, :]
    if MASKED:
        k = tl.load(k_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
        v = tl.load(v_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
    else:
        k = tl.load(k_ptr + kv)
        v = tl.load(v_ptr + kv)
    qk = tl.dot(q, tl.trans(k))
    if MASKED:
        keep = offs_n[None, :] < T
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
    return _softmax_pv(acc, l_i, m_i, qk, v, start_n, qk_scale, FIXED)


@triton.jit
def _needs_online(l_i, acc):
    """Whether a fixed-reference pass must be redone online: some row's sum passed 2**64 (a later score
    outran the first block's maximum by 64 in log2 units) or is NaN, or its output overflowed (P up to 2**64
    times a value of V beyond ~2**64; the row sum of acc is then inf or NaN, or merely overflows, which only
    costs a needless rerun)."""
    rows = tl.sum(acc, 1)
    bad = (l_i > 18446744073709551616.0) | (l_i != l_i) | (rows != rows) | (tl.abs(rows) == float("inf"))
    return tl.max(bad.to(tl.int32), 0) != 0


@triton.jit
def _key_blocks(m0, T, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """(unmasked_end, end): the query block at m0 reads keys [0, unmasked_end) without a mask and
    [unmasked_end, end) with one (the diagonal when causal, else the tail past the last whole block)."""
    if CAUSAL:
        unmasked_end = m0                      # key blocks wholly left of the diagonal
        end = min(m0 + BLOCK_M, T)             # blocks right of the diagonal are skipped
    else:
        unmasked_end = (T // BLOCK_N) * BLOCK_N
        end = T
    return unmasked_end, end


@triton.jit
def _fwd_pass(q, k_ptr, v_ptr, m0, offs_m, T, stride_t, qk_scale,
              D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
              FIXED: tl.constexpr):
    """Every key block one query block needs: (acc, l_i, m_i), with acc unnormalised and m_i each row's
    reference (FIXED) or running maximum (the online softmax), in log2 units."""
    unmasked_end, end = _key_blocks(m0, T, BLOCK_M, BLOCK_N, CAUSAL)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)                 # sum of exponentials
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)               # unnormalised output
    for start_n in range(0, unmasked_end, BLOCK_N):
        acc, l_i, m_i = _fwd_step(acc, l_i, m_i, q, k_ptr, v_ptr, start_n, offs_m, T, stride_t, qk_scale,
                                  D, BLOCK_N, CAUSAL, False, FIXED)
    for start_n in range(unmasked_end, end, BLOCK_N):
        acc, l_i, m_i = _fwd_step(acc, l_i, m_i, q, k_ptr, v_ptr, start_n, offs_m, T, stride_t, qk_scale,
                                  D, BLOCK_N, CAUSAL, True, FIXED)
    return acc, l_i, m_i


@triton.jit
def flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, T, qk_scale, stride_bh, stride_t,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # BLOCK_M is a multiple of BLOCK_N, so a query block's diagonal starts on a key-block boundary.
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)  # the longest rows first: better load balance
    else:
        pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh
    row_ok = offs_m < T
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=row_ok[:, None], other=0.0)

    fixed: tl.constexpr = q.dtype == tl.bfloat16   # a fixed reference for bf16 inputs (module docstring)
    acc, l_i, m_i = _fwd_pass(q, k_ptr + base, v_ptr + base, m0, offs_m, T, stride_t, qk_scale,
                              D, BLOCK_M, BLOCK_N, CAUSAL, fixed)
    if fixed:
        if _needs_online(l_i, acc):   # rare: redo this block of rows with the online softmax
            acc, l_i, m_i = _fwd_pass(q, k_ptr + base, v_ptr + base, m0, offs_m, T, stride_t, qk_scale,
                                      D, BLOCK_M, BLOCK_N, CAUSAL, False)

    o = acc * (1.0 / l_i)[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=row_ok[:, None])
    lse = m_i * 0.6931471805599453 + tl.log(l_i)  # natural-log logsumexp of the scaled scores
    tl.store(l_ptr + bh * T + offs_m, lse, mask=row_ok)


@triton.jit
def _fwd_tma_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                  D: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, MASKED: tl.constexpr,
                  FIXED: tl.constexpr):
    """`_fwd_step` with K and V read through tensor descriptors (TMA on Hopper): rows past T read as 0."""
    k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
    qk = tl.dot(q, tl.trans(k))
    if MASKED:
        offs_n = start_n + tl.arange(0, BLOCK_N)
        keep = offs_n[None, :] < T
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
    v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
    return _softmax_pv(acc, l_i, m_i, qk, v, start_n, qk_scale, FIXED)


@triton.jit
def _fwd_tma_pass(q, desc_k, desc_v, bh, m0, offs_m, T, qk_scale,
                  D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                  FIXED: tl.constexpr):
    """`_fwd_pass` through tensor descriptors."""
    unmasked_end, end = _key_blocks(m0, T, BLOCK_M, BLOCK_N, CAUSAL)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for start_n in range(0, unmasked_end, BLOCK_N):
        acc, l_i, m_i = _fwd_tma_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                      D, BLOCK_N, CAUSAL, False, FIXED)
    for start_n in range(unmasked_end, end, BLOCK_N):
        acc, l_i, m_i = _fwd_tma_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                      D, BLOCK_N, CAUSAL, True, FIXED)
    return acc, l_i, m_i


@triton.jit
def flash_fwd_tma_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale,
                         D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """`flash_fwd_kernel` with Q, K, V and O as (B*H, T, D) tensor descriptors (blocks of (1, rows, D)).

    The hardware's copy engine (TMA) moves whole tiles, and zero-fills rows past T, which the masked steps
    then drop like the pointer kernel does. Used for D = 128 on Hopper, where it is faster than the pointer
    kernel (`docs/findings.md` §3)."""
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    fixed: tl.constexpr = q.dtype == tl.bfloat16
    acc, l_i, m_i = _fwd_tma_pass(q, desc_k, desc_v, bh, m0, offs_m, T, qk_scale, D, BLOCK_M, BLOCK_N, CAUSAL, fixed)
    if fixed:
        if _needs_online(l_i, acc):
            acc, l_i, m_i = _fwd_tma_pass(q, desc_k, desc_v, bh, m0, offs_m, T, qk_scale, D, BLOCK_M, BLOCK_N,
                                          CAUSAL, False)
    o = acc * (1.0 / l_i)[:, None]
    desc_o.store([bh, m0, 0], o.to(q.dtype).reshape(1, BLOCK_M, D))   # rows past T are not written
    lse = m_i * 0.6931471805599453 + tl.log(l_i)
    tl.store(l_ptr + bh * T + offs_m, lse, mask=offs_m < T)


# --------------------------------------------------------------------------------------------- backward

@triton.jit
def flash_bwd_preprocess_kernel(o_ptr, do_ptr, delta_ptr, T, stride_bh, stride_t,
                                D: tl.constexpr, BLOCK_M: tl.constexpr):
    """delta_i = sum_d dO[i, d] * O[i, d] (= rowsum(P * dP)), the softmax backward's correction term."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = bh * stride_bh + offs_m[:, None] * stride_t + tl.arange(0, D)[None, :]
    row_ok = offs_m < T
    o = tl.load(o_ptr + offs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * T + offs_m, tl.sum(o * do, 1), mask=row_ok)


@triton.jit
def _dkdv_step(dk, dv, k, v, q_ptr, do_ptr, l_ptr, delta_ptr, start_m, offs_n, T, stride_t, qk_scale,
               D: tl.constexpr, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr, MASKED: tl.constexpr):
    """One query block's contribution to a key block's dK and dV, in transposed (key-major) form."""
    offs_m = start_m + tl.arange(0, BLOCK_M)
    qo = offs_m[:, None] * stride_t + tl.arange(0, D)[None, :]
    if MASKED:
        row_ok = offs_m < T
        q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
        lse = tl.load(l_ptr + offs_m, mask=row_ok, other=0.0)
        delta = tl.load(delta_ptr + offs_m, mask=row_ok, other=0.0)
    else:
        q = tl.load(q_ptr + qo)
        do = tl.load(do_ptr + qo)
        lse = tl.load(l_ptr + offs_m)
        delta = tl.load(delta_ptr + offs_m)
    s_t = tl.dot(k, tl.trans(q)) * qk_scale                     # S^T in log2 units, (BLOCK_N, BLOCK_M)
    p_t = tl.exp2(s_t - (lse * 1.4426950408889634)[None, :])    # P^T = exp(S - L), recomputed
    if MASKED:
        keep = row_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[None, :] >= offs_n[:, None])
        p_t = tl.where(keep, p_t, 0.0)
    dv = tl.dot(p_t.to(do.dtype), do, dv)                       # dV += P^T dO
    dp_t = tl.dot(v, tl.trans(do))                              # dP^T = V dO^T
    ds_t = p_t * (dp_t - delta[None, :])                        # dS^T = P^T * (dP^T - delta)
    dk = tl.dot(ds_t.to(q.dtype), q, dk)                        # dK += dS^T Q (scaled at the end)
    return dk, dv


@triton.jit
def flash_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, l_ptr, delta_ptr, dk_ptr, dv_ptr, T, qk_scale, scale,
                          stride_bh, stride_t, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          CAUSAL: tl.constexpr):
    # BLOCK_N is a multiple of BLOCK_M: the diagonal of a key block is a whole number of query blocks.
    pid_n = tl.program_id(0)
    bh = tl.program_id(1)
    n0 = pid_n * BLOCK_N
    offs_n = n0 + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh
    kv = base + offs_n[:, None] * stride_t + offs_d[None, :]
    key_ok = offs_n[:, None] < T
    k = tl.load(k_ptr + kv, mask=key_ok, other=0.0)
    v = tl.load(v_ptr + kv, mask=key_ok, other=0.0)
    dk = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    q_rows = q_ptr + base
    do_rows = do_ptr + base
    l_rows = l_ptr + bh * T
    delta_rows = delta_ptr + bh * T
    full_end = (T // BLOCK_M) * BLOCK_M
    if CAUSAL:
        # queries above this key block never see it; those on its diagonal see part of it
        for start_m in range(n0, min(n0 + BLOCK_N, T), BLOCK_M):
            dk, dv = _dkdv_step(dk, dv, k, v, q_rows, do_rows, l_rows, delta_rows, start_m, offs_n, T, stride_t,
                                qk_scale, D, BLOCK_M, CAUSAL, True)
        lo = n0 + BLOCK_N
    else:
        lo = 0
    for start_m in range(lo, full_end, BLOCK_M):
        dk, dv = _dkdv_step(dk, dv, k, v, q_rows, do_rows, l_rows, delta_rows, start_m, offs_n, T, stride_t,
                            qk_scale, D, BLOCK_M, CAUSAL, False)
    for start_m in range(max(lo, full_end), T, BLOCK_M):
        dk, dv = _dkdv_step(dk, dv, k, v, q_rows, do_rows, l_rows, delta_rows, start_m, offs_n, T, stride_t,
                            qk_scale, D, BLOCK_M, CAUSAL, True)
    tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=key_ok)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=key_ok)


@triton.jit
def _dq_step(dq, q, do, lse2, delta, k_ptr, v_ptr, start_n, offs_m, T, stride_t, qk_scale,
             D: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, MASKED: tl.constexpr):
    """One key block's contribution to a query block's dQ."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    kv = offs_n[:, None] * stride_t + tl.arange(0, D)[None, :]
    if MASKED:
        k = tl.load(k_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
        v = tl.load(v_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
    else:
        k = tl.load(k_ptr + kv)
        v = tl.load(v_ptr + kv)
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse2[:, None])  # P = exp(S - L), recomputed
    if MASKED:
        keep = offs_n[None, :] < T
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        p = tl.where(keep, p, 0.0)
    dp = tl.dot(do, tl.trans(v))                                     # dP = dO V^T
    ds = p * (dp - delta[:, None])                                   # dS = P * (dP - delta)
    return tl.dot(ds.to(k.dtype), k, dq)                             # dQ += dS K (scaled at the end)


@triton.jit
def flash_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, l_ptr, delta_ptr, dq_ptr, T, qk_scale, scale,
                        stride_bh, stride_t, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        CAUSAL: tl.constexpr):
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh
    qo = base + offs_m[:, None] * stride_t + offs_d[None, :]
    row_ok = offs_m < T
    q = tl.load(q_ptr + qo, mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + qo, mask=row_ok[:, None], other=0.0)
    lse2 = tl.load(l_ptr + bh * T + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + bh * T + offs_m, mask=row_ok, other=0.0)
    dq = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    if CAUSAL:
        unmasked_end = m0
        end = min(m0 + BLOCK_M, T)
    else:
        unmasked_end = (T // BLOCK_N) * BLOCK_N
        end = T
    for start_n in range(0, unmasked_end, BLOCK_N):
        dq = _dq_step(dq, q, do, lse2, delta, k_ptr + base, v_ptr + base, start_n, offs_m, T, stride_t, qk_scale,
                      D, BLOCK_N, CAUSAL, False)
    for start_n in range(unmasked_end, end, BLOCK_N):
        dq = _dq_step(dq, q, do, lse2, delta, k_ptr + base, v_ptr + base, start_n, offs_m, T, stride_t, qk_scale,
                      D, BLOCK_N, CAUSAL, True)
    tl.store(dq_ptr + qo, (dq * scale).to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])


# ------------------------------------------------------------------------------------------- autotuning

def _config(bm, bn, warps, stages):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=warps, num_stages=stages)


FWD_CONFIGS = [  # measured on an H200 (bf16, T = 1024..16384): the first is the best or within ~3%
    _config(128, 64, 8, 3),   # first: H200, D = 64 and 128
    _config(128, 128, 8, 3),  # H200, D = 128 (causal)
    _config(128, 64, 8, 4),
    _config(128, 128, 8, 4),  # D <= 64 only: with D = 128 it needs 288 KiB of shared memory
    _config(128, 64, 4, 3),   # D <= 64 only: with D = 128 these run at ~55% of the 8-warp configs
    _config(128, 64, 4, 4),
    _config(64, 64, 4, 3),    # Ada-sized (99 KiB of shared memory), and short sequences
    _config(64, 32, 4, 4),
]
DKDV_CONFIGS = [  # BLOCK_M query rows stream past BLOCK_N keys
    _config(32, 128, 4, 3),
    _config(64, 128, 8, 3),
    _config(32, 64, 4, 3),
    _config(64, 64, 4, 3),
]
DQ_CONFIGS = [  # BLOCK_N keys stream past BLOCK_M query rows
    _config(128, 32, 4, 3),
    _config(128, 64, 8, 3),
    _config(64, 32, 4, 3),
    _config(64, 64, 4, 3),
]


def _rows_multiple_of_cols(configs, named_args, **kwargs):
    kept = [c for c in configs if c.kwargs["BLOCK_M"] % c.kwargs["BLOCK_N"] == 0]
    return kept or configs


def _smem_per_block(x):
    """Shared memory one program may use: 227 KiB on an H100/H200 (and under minitriton), 99 KiB on Ada."""
    if _host.is_torch(x) and x.device.type == "cuda":
        import torch
        return int(getattr(torch.cuda.get_device_properties(x.device), "shared_memory_per_block_optin", 232448))
    return 232448


def _prune_fwd(configs, named_args, **kwargs):
    """BLOCK_M a multiple of BLOCK_N; for D = 128 on Hopper the 8-warp configs that fit, plus (64, 64, 4 warps)
    which is the fastest for T = 1024 causal on an H200; the rest only add noise to the autotuner's choice
    (they were 20-45% slower there). Ada keeps every config."""
    configs = _rows_multiple_of_cols(configs, named_args)
    D = named_args.get("D", kwargs.get("D"))
    if D is not None and D > 64 and _smem_per_block(named_args.get("q_ptr")) >= 200 * 1024:
        kept = [c for c in configs if (c.num_warps == 8 and c.num_stages * c.kwargs["BLOCK_N"] <= 3 * 128)
                or c.kwargs["BLOCK_M"] == 64 and c.num_stages == 3]   # the small one wins for short T
        return kept or configs
    return configs


def _cols_multiple_of_rows(configs, named_args, **kwargs):
    kept = [c for c in configs if c.kwargs["BLOCK_N"] % c.kwargs["BLOCK_M"] == 0]
    return kept or configs


_KEY = ["T", "D", "CAUSAL"]
flash_fwd_tuned = triton.autotune(FWD_CONFIGS, key=_KEY, prune_configs_by={
    "early_config_prune": _prune_fwd})(flash_fwd_kernel)
flash_bwd_dkdv_tuned = triton.autotune(DKDV_CONFIGS, key=_KEY, prune_configs_by={
    "early_config_prune": _cols_multiple_of_rows})(flash_bwd_dkdv_kernel)
flash_bwd_dq_tuned = triton.autotune(DQ_CONFIGS, key=_KEY, prune_configs_by={
    "early_config_prune": _rows_multiple_of_cols})(flash_bwd_dq_kernel)


# ------------------------------------------------------------------------------------------------ host

def _check(name_arrays):
    shapes = {name: _host.shape(x) for name, x in name_arrays}
    first_name, first = name_arrays[0]
    shape = shapes[first_name]
    if len(shape) != 4:
        raise ValueError(f"{first_name} must be (B, H, T, D), got shape {shape}")
    for name, s in shapes.items():
        if s != shape:
            raise ValueError(f"{name} has shape {s}, but {first_name} has {shape}")
    dtype = _host.dtype_name(first)
    if dtype not in _DTYPES:
        raise TypeError(f"flash attention supports float32, float16 and bfloat16, got {dtype}")
    for name, x in name_arrays[1:]:
        if _host.dtype_name(x) != dtype:
            raise TypeError(f"{name} is {_host.dtype_name(x)}, but {first_name} is {dtype}")
    if shape[3] not in HEAD_DIMS:
        raise ValueError(f"head dim D = {shape[3]} is not supported: D must be one of {HEAD_DIMS} "
                         f"(pad the head dimension with zeros up to the next of them)")
    return shape


def _meta(block_m, block_n):
    if block_m is None and block_n is None:
        return None
    if block_m is None or block_n is None:
        raise ValueError("give both block_m and block_n, or neither (then the autotuner chooses)")
    return {"BLOCK_M": int(block_m), "BLOCK_N": int(block_n)}


_CHOSEN = {}  # (kernel, T, dtype, D, CAUSAL) -> the launch options the autotuner chose
FAST_LAUNCH = True   # False: no kept plans, every launch without explicit blocks goes through the autotuner
_FWD_PLANS = {}   # (type, shape, dtype, strides of q, k, v, causal, block_m, block_n) -> launch, torch only
_BWD_PLANS = {}   # (the same for q, k, v, o, lse, do, causal, blocks_dkdv, blocks_dq) -> launch
_TORCH = _host.TORCH_TYPES


def _launcher(kernel, tuned, meta, per, T, bh, dtype, constexprs):
    """(f(*args) that launches, whether f may be kept): `kernel` with the explicit blocks `meta`, or with the
    autotuner's choice for (T, dtype, D, CAUSAL) once it has made one; before that, `tuned` (the autotuner
    chooses and its choice is recorded) in an f that is not to be kept.

    The grid is (blocks of `per` rows along T, B*H): programs of one (batch, head) run side by side and
    share its K and V (or Q and dO) in the L2 cache. Launching the choice directly skips the autotuner's own
    per-call bookkeeping, which costs tens of microseconds of Python, as much as a whole small attention
    takes on an H200.
    """
    if meta is None:
        key = (kernel, T, dtype, constexprs["D"], constexprs["CAUSAL"])
        meta = _CHOSEN.get(key) if FAST_LAUNCH else None
        if meta is None:
            def tune(*args):
                tuned[lambda m: (triton.cdiv(T, m[per]), bh)](*args, **constexprs)
                best = tuned.best_config
                _CHOSEN[key] = dict(best.kwargs, num_warps=best.num_warps, num_stages=best.num_stages)
            return tune, False
    return _host.launcher(kernel, (triton.cdiv(T, meta[per]), bh), **constexprs, **meta), True


def flash_attention(q, k, v, causal=True, scale=None, block_m=None, block_n=None):
    """Attention softmax(q k^T * scale [+ causal mask]) v for (B, H, T, D) inputs; returns (O, L).

    O has q's kind and dtype, shape (B, H, T, D); L is the float32 logsumexp of each scaled score row,
    shape (B, H, T). `scale` defaults to 1/sqrt(D). `block_m`/`block_n` (block_m a multiple of block_n,
    both >= 16) skip the autotuner.
    """
    if FAST_LAUNCH and type(q) in _TORCH and type(k) in _TORCH and type(v) in _TORCH:
        key = (type(q), q.shape, q.dtype, q.stride(), type(k), k.shape, k.dtype, k.stride(), type(v), v.shape,
               v.dtype, v.stride(), causal, block_m, block_n)
        try:
            plan = _FWD_PLANS[key]
        except (KeyError, TypeError):   # a new key, or an option that cannot be hashed
            plan = None
        if plan is None:
            plan, keep = _forward_plan(q, k, v, causal, scale, block_m, block_n)
            if keep:
                _host.remember(_FWD_PLANS, key, plan)
        return plan(q, k, v, scale)
    return _forward_plan(q, k, v, causal, scale, block_m, block_n)[0](q, k, v, scale)


def _forward_plan(q, k, v, causal, scale, block_m, block_n):
    """Check the arguments; (launch(q, k, v, scale) -> (O, L) for arrays like these, whether it may be kept)."""
    B, H, T, D = _check([("q", q), ("k", k), ("v", v)])
    default_scale = 1.0 / math.sqrt(D)
    if scale is not None:
        float(scale)                                  # checked here, as before the blocks; used per call
    meta = _meta(block_m, block_n)
    if meta is not None and meta["BLOCK_M"] % meta["BLOCK_N"]:
        raise ValueError(f"block_m ({block_m}) must be a multiple of block_n ({block_n})")
    q_contiguous, k_contiguous, v_contiguous = (_host.contiguous_fn(x) for x in (q, k, v))
    alloc_o = _host.allocator((B, H, T, D), q)
    alloc_lse = _host.allocator((B, H, T), q, "float32")
    if B * H * T == 0:
        return (lambda q_, k_, v_, scale_: (alloc_o(q_), alloc_lse(q_))), True
    def prepare(q_, k_, v_, scale_):
        """(q, k, v as the kernel reads them, the score scale in log2 units) for one call."""
        if q_contiguous is not None:
            q_ = q_contiguous(q_)
        if k_contiguous is not None:
            k_ = k_contiguous(k_)
        if v_contiguous is not None:
            v_ = v_contiguous(v_)
        return q_, k_, v_, (default_scale if scale_ is None else float(scale_)) * LOG2E

    def pointer_plan():
        run, keep = _launcher(flash_fwd_kernel, flash_fwd_tuned, meta, "BLOCK_M", T, B * H, _host.dtype_name(q),
                              {"D": D, "CAUSAL": bool(causal)})

        def launch(q_, k_, v_, scale_):
            q_, k_, v_, qk_scale = prepare(q_, k_, v_, scale_)
            o, lse = alloc_o(q_), alloc_lse(q_)
            run(q_, k_, v_, o, lse, T, qk_scale, T * D, D)
            return o, lse
        return launch, keep

    if meta is None and _tma_suits(q, D):
        return _forward_tma_plan(B, H, T, D, bool(causal), prepare, alloc_o, alloc_lse, pointer_plan), True
    return pointer_plan()


USE_TMA = True   # False: the pointer kernel everywhere (tensor descriptors only pay off on Hopper, at D = 128)


def _tma_suits(q, D):
    """Whether the forward takes `flash_fwd_tma_kernel`: torch CUDA 16-bit inputs with D = 128 on a Hopper GPU."""
    if not (USE_TMA and D == 128 and _host.is_torch(q) and q.device.type == "cuda"
            and _host.dtype_name(q) in ("bfloat16", "float16")):
        return False
    import torch
    return torch.cuda.get_device_capability(q.device)[0] == 9


def launch_configs(q, causal: bool) -> dict:
    """What the wrappers launch for attention on arrays like `q` ((B, H, T, D), its kind and dtype):
    {"fwd", "dkdv", "dq"} -> text such as "128x64 w8 s3" (BLOCK_M x BLOCK_N, warps, stages), "TMA ..." for
    the tensor-descriptor forward, or None while the autotuner has not chosen (it does on the first call)."""
    T, D = (int(n) for n in _host.shape(q)[-2:])
    dtype = _host.dtype_name(q)

    def text(meta):
        return None if meta is None else \
            f"{meta['BLOCK_M']}x{meta['BLOCK_N']} w{meta['num_warps']} s{meta['num_stages']}"
    chosen = {name: text(_CHOSEN.get((kernel, T, dtype, D, bool(causal))))
              for name, kernel in (("fwd", flash_fwd_kernel), ("dkdv", flash_bwd_dkdv_kernel),
                                   ("dq", flash_bwd_dq_kernel))}
    if _tma_suits(q, D):
        chosen["fwd"] = "TMA " + text(tma_config(T, causal))
    return chosen


def tma_config(T: int, causal: bool) -> dict:
    """The TMA forward's blocks: (128, 64, 4 warps, 2 stages), except for causal T <= 2048, where (64, 64,
    4 warps, 3 stages) is faster (the fastest on an H200 with bf16 inputs, `docs/findings.md` §3)."""
    if causal and T <= 2048:
        return {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}


def _forward_tma_plan(B, H, T, D, causal, prepare, alloc_o, alloc_lse, pointer_plan):
    """launch(q, k, v, scale) through `flash_fwd_tma_kernel`, host-side descriptors made per call (`prepare`:
    the pointer plan's per-call preparation of q, k, v and the scale). Inputs whose data is not 16-byte aligned
    (a view at an odd offset), which a tensor descriptor cannot address, go to `pointer_plan()`'s launch.

    Every argument is specialised alike on each call (descriptors of one shape and block, L freshly allocated,
    T fixed by the plan), so the launch keeps the `CompiledKernel` (`_host.compiled_launcher`), which halves
    the call's host time and keeps small attention calls GPU-bound (`docs/findings.md` §4)."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    cfg = tma_config(T, causal)
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    run = _host.compiled_launcher(flash_fwd_tma_kernel, (triton.cdiv(T, bm), B * H), D=D, CAUSAL=causal, **cfg)
    shape, strides = [B * H, T, D], [T * D, D, 1]
    unaligned = []               # the pointer plan's launch, made on first need

    def launch(q_, k_, v_, scale_):
        q_, k_, v_, qk_scale = prepare(q_, k_, v_, scale_)
        if (_host.address(q_) | _host.address(k_) | _host.address(v_)) & 15:
            if not unaligned:
                unaligned.append(pointer_plan()[0])
            return unaligned[0](q_, k_, v_, scale_)
        o, lse = alloc_o(q_), alloc_lse(q_)
        run(TensorDescriptor(q_, shape, strides, [1, bm, D]), TensorDescriptor(k_, shape, strides, [1, bn, D]),
            TensorDescriptor(v_, shape, strides, [1, bn, D]), TensorDescriptor(o, shape, strides, [1, bm, D]),
            lse, T, qk_scale)
        return o, lse
    return launch


def flash_attention_backward(q, k, v, o, lse, do, causal=True, scale=None, blocks_dkdv=None, blocks_dq=None):
    """Gradients (dq, dk, dv) of sum(O * dO) for O = flash_attention(q, k, v, causal, scale)[0].

    `lse` is the L the forward returned. P is recomputed from it, never stored. `blocks_dkdv` and
    `blocks_dq` ((BLOCK_M, BLOCK_N) pairs) skip the autotuner: for dK/dV BLOCK_N (keys per program) is a
    multiple of BLOCK_M, for dQ BLOCK_M (queries per program) is a multiple of BLOCK_N.
    """
    if (FAST_LAUNCH and type(q) in _TORCH and type(k) in _TORCH and type(v) in _TORCH and type(o) in _TORCH
            and type(lse) in _TORCH and type(do) in _TORCH):
        key = (type(q), q.shape, q.dtype, q.stride(), type(k), k.shape, k.dtype, k.stride(), type(v), v.shape,
               v.dtype, v.stride(), type(o), o.shape, o.dtype, o.stride(), type(lse), lse.shape, lse.dtype,
               lse.stride(), type(do), do.shape, do.dtype, do.stride(), causal, blocks_dkdv, blocks_dq)
        try:
            plan = _BWD_PLANS[key]
        except (KeyError, TypeError):   # a new key, or an option that cannot be hashed (blocks as lists)
            plan = None
        if plan is None:
            plan, keep = _backward_plan(q, k, v, o, lse, do, causal, scale, blocks_dkdv, blocks_dq)
            if keep:
                _host.remember(_BWD_PLANS, key, plan)
        return plan(q, k, v, o, lse, do, scale)
    return _backward_plan(q, k, v, o, lse, do, causal, scale, blocks_dkdv, blocks_dq)[0](q, k, v, o, lse, do,
                                                                                         scale)


def _backward_plan(q, k, v, o, lse, do, causal, scale, blocks_dkdv, blocks_dq):
    """Check the arguments; (launch(q, k, v, o, lse, do, scale) -> (dq, dk, dv), whether it may be kept)."""
    B, H, T, D = _check([("q", q), ("k", k), ("v", v), ("o", o), ("do", do)])
    if tuple(_host.shape(lse)) != (B, H, T):
        raise ValueError(f"lse must have shape {(B, H, T)}, got {tuple(_host.shape(lse))}")
    default_scale = 1.0 / math.sqrt(D)
    if scale is not None:
        float(scale)                                  # checked here, as before the blocks; used per call
    meta_kv = _meta(*(blocks_dkdv or (None, None)))
    meta_q = _meta(*(blocks_dq or (None, None)))
    if meta_kv is not None and meta_kv["BLOCK_N"] % meta_kv["BLOCK_M"]:
        raise ValueError(f"blocks_dkdv {blocks_dkdv}: BLOCK_N must be a multiple of BLOCK_M")
    if meta_q is not None and meta_q["BLOCK_M"] % meta_q["BLOCK_N"]:
        raise ValueError(f"blocks_dq {blocks_dq}: BLOCK_M must be a multiple of BLOCK_N")
    contiguous = tuple(_host.contiguous_fn(x) for x in (q, k, v, o, lse, do))
    alloc = _host.allocator((B, H, T, D), q)
    if B * H * T == 0:
        def empty_grads(q_, k_, v_, o_, lse_, do_, scale_):
            q_ = q_ if contiguous[0] is None else contiguous[0](q_)
            return alloc(q_), alloc(q_), alloc(q_)
        return empty_grads, True
    alloc_delta = _host.allocator((B, H, T), q, "float32")
    block = 64 if D <= 64 else 32
    preprocess = _host.launcher(flash_bwd_preprocess_kernel, (triton.cdiv(T, block), B * H), D=D, BLOCK_M=block)
    const = {"D": D, "CAUSAL": bool(causal)}
    dtype = _host.dtype_name(q)
    run_dkdv, keep_dkdv = _launcher(flash_bwd_dkdv_kernel, flash_bwd_dkdv_tuned, meta_kv, "BLOCK_N", T, B * H,
                                    dtype, const)
    run_dq, keep_dq = _launcher(flash_bwd_dq_kernel, flash_bwd_dq_tuned, meta_q, "BLOCK_M", T, B * H, dtype, const)
    any_copy = any(c is not None for c in contiguous)

    def launch(q_, k_, v_, o_, lse_, do_, scale_):
        scale_ = default_scale if scale_ is None else float(scale_)
        if any_copy:
            q_, k_, v_, o_, lse_, do_ = (x if c is None else c(x)
                                         for x, c in zip((q_, k_, v_, o_, lse_, do_), contiguous))
        dq, dk, dv = alloc(q_), alloc(q_), alloc(q_)
        delta = alloc_delta(q_)
        preprocess(o_, do_, delta, T, T * D, D)
        run_dkdv(q_, k_, v_, do_, lse_, delta, dk, dv, T, scale_ * LOG2E, scale_, T * D, D)
        run_dq(q_, k_, v_, do_, lse_, delta, dq, T, scale_ * LOG2E, scale_, T * D, D)
        return dq, dk, dv
    return launch, keep_dkdv and keep_dq


_AUTOGRAD = None


def autograd_function():
    """A torch.autograd.Function running these kernels (torch is imported only here).

    `autograd_function().apply(q, k, v, causal, scale)` returns O; its backward calls
    `flash_attention_backward`. See also `attention`.
    """
    global _AUTOGRAD
    if _AUTOGRAD is None:
        import torch

        class FlashAttention(torch.autograd.Function):
            @staticmethod
            def forward(ctx, q, k, v, causal=True, scale=None):
                o, lse = flash_attention(q, k, v, causal=causal, scale=scale)
                ctx.save_for_backward(q, k, v, o, lse)
                ctx.causal, ctx.scale = causal, scale
                return o

            @staticmethod
            def backward(ctx, do):
                q, k, v, o, lse = ctx.saved_tensors
                dq, dk, dv = flash_attention_backward(q, k, v, o, lse, do, causal=ctx.causal, scale=ctx.scale)
                return dq, dk, dv, None, None

        _AUTOGRAD = FlashAttention
    return _AUTOGRAD


def attention(q, k, v, causal=True, scale=None):
    """Differentiable flash attention for torch tensors: returns O (gradients through the Triton backward)."""
    return autograd_function().apply(q, k, v, causal, scale)


# ---------------------------------------------------------------------------------- references, traffic

def _scores(q64, k64, causal, scale):
    T, D = q64.shape[-2], q64.shape[-1]
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    s = np.einsum("bhtd,bhsd->bhts", q64, k64) * scale
    if causal:
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    return s, scale


def reference_attention(q, k, v, causal=True, scale=None):
    """(O, L) in float64 NumPy: O = softmax(scale q k^T [causal]) v, L = logsumexp of the scaled scores."""
    q64, k64, v64 = (_host.to_float64(x) for x in (q, k, v))
    s, _ = _scores(q64, k64, causal, scale)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    return np.einsum("bhts,bhsd->bhtd", e / total, v64), (m + np.log(total))[..., 0]


def reference_attention_backward(q, k, v, do, causal=True, scale=None):
    """(dq, dk, dv) in float64 NumPy for the loss sum(O * dO)."""
    q64, k64, v64, do64 = (_host.to_float64(x) for x in (q, k, v, do))
    s, scale = _scores(q64, k64, causal, scale)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dv = np.einsum("bhts,bhtd->bhsd", p, do64)
    dp = np.einsum("bhtd,bhsd->bhts", do64, v64)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq = np.einsum("bhts,bhsd->bhtd", ds, k64) * scale
    dk = np.einsum("bhts,bhtd->bhsd", ds, q64) * scale
    return dq, dk, dv


def traffic(B, H, T, D, causal=True, dtype="bfloat16", backward=False):
    """The analytic cost of attention: {"bytes": what an ideal kernel moves, "flops": matmul FLOPs}.

    Forward: reads q, k, v once, writes O and the fp32 L; 4*D FLOPs per (query, key) pair that the mask
    keeps (T*T pairs, or T*(T+1)/2 causal). Backward: reads q, k, v, O, dO and L once, writes dq, dk, dv;
    10*D FLOPs per pair (S recomputed, dV, dP, dQ, dK).
    """
    size = _ITEMSIZE[dtype]
    pairs = T * (T + 1) // 2 if causal else T * T
    rows = B * H * T
    if backward:
        return {"bytes": 8 * rows * D * size + 4 * rows, "flops": 10 * B * H * D * pairs}
    return {"bytes": 4 * rows * D * size + 4 * rows, "flops": 4 * B * H * D * pairs}


# ------------------------------------------------------------------------------------------ GPU check

def _gpu_main():  # pragma: no cover - needs a CUDA GPU and real Triton
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    dev = "cuda"

    def check(B, H, T, D, causal, blocks=None):
        q, k, v, do = (torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16) for _ in range(4))
        qr, kr, vr = (x.detach().clone().requires_grad_() for x in (q, k, v))
        ref = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
        ref.backward(do)
        if blocks is None:  # the autotuned kernels, through the autograd wrapper
            qa, ka, va = (x.detach().clone().requires_grad_() for x in (q, k, v))
            out = attention(qa, ka, va, causal)
            out.backward(do)
            grads = (qa.grad, ka.grad, va.grad)
        else:
            out, lse = flash_attention(q, k, v, causal, block_m=blocks[0], block_n=blocks[1])
            grads = flash_attention_backward(q, k, v, out, lse, do, causal, blocks_dkdv=blocks[::-1],
                                             blocks_dq=blocks)
        errs = [(a.float() - b.float()).abs().max().item() / b.float().abs().max().item()
                for a, b in zip((out,) + tuple(grads), (ref, qr.grad, kr.grad, vr.grad))]
        print(f"check B={B} H={H} T={T} D={D} causal={causal} blocks={blocks}: max|err|/max|ref| "
              + " ".join(f"{n} {e:.2e}" for n, e in zip(("o", "dq", "dk", "dv"), errs)), flush=True)
        assert max(errs) < 2e-2, errs

    for T in (64, 100, 257):
        for D in (16, 64, 128):
            for causal in (False, True):
                check(2, 3, T, D, causal, blocks=(64, 32))
    for B, H, T, D in ((2, 16, 1024, 64), (4, 16, 4096, 64), (1, 16, 16384, 64), (4, 16, 4096, 128)):
        for causal in (False, True):
            q, k, v, do = (torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16) for _ in range(4))
            o, lse = flash_attention(q, k, v, causal)
            t_f = triton.testing.do_bench(lambda: flash_attention(q, k, v, causal), return_mode="median")
            t_sf = triton.testing.do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                           return_mode="median")
            flash_attention_backward(q, k, v, o, lse, do, causal)
            t_b = triton.testing.do_bench(lambda: flash_attention_backward(q, k, v, o, lse, do, causal),
                                          return_mode="median")
            qr, kr, vr = (x.detach().clone().requires_grad_() for x in (q, k, v))
            ref = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
            t_sb = triton.testing.do_bench(lambda: torch.autograd.grad(ref, (qr, kr, vr), do, retain_graph=True),
                                           return_mode="median")
            fl = traffic(B, H, T, D, causal)["flops"]
            tf = lambda ms, f: f / (ms * 1e-3) / 1e12  # noqa: E731
            print(f"B={B} H={H} T={T} D={D} causal={causal}: fwd {tf(t_f, fl):.0f} vs sdpa {tf(t_sf, fl):.0f} "
                  f"TFLOP/s ({t_sf / t_f:.2f} of sdpa's speed) [{flash_fwd_tuned.best_config}]; bwd {t_b:.3f} ms "
                  f"vs sdpa {t_sb:.3f} ms ({t_b / t_sb:.2f}x its time) [{flash_bwd_dkdv_tuned.best_config}] "
                  f"[{flash_bwd_dq_tuned.best_config}]", flush=True)
        check(2, 4, 1024, D, False)
        check(2, 4, 1000, D, True)


if __name__ == "__main__":  # pragma: no cover
    from kernels.check import main_for
    raise SystemExit(main_for("flash_attention", _gpu_main))
