"""Second FlashAttention forward probe on one GPU (D = 128, bf16): new ideas for the full-attention T = 1024 case.

`flash_sweep.py` timed ten variants; none reached 0.80 of SDPA at full T = 1024. This probe times the repo's
TMA kernel next to variants it did not try:

- `split`: each program's query block is kept as two halves with their own softmax state, so one half's
  QK^T (an asynchronous wgmma on Hopper) can run while the other half's softmax is computed (FA3's
  intra-warpgroup overlap, written as two independent chains in plain Triton).
- `repo` at BLOCK_M = 256 with 8 warps (one 128-row half per warpgroup).
- `repo` with `maxnreg` (register cap, so two programs fit on one SM).
- `flat`: persistent, full attention only: each program runs its query tiles' key blocks as one flat loop,
  so the next tile's first K/V loads are pipelined behind the current tile's last ones.
- `repo` at 64x128 (BLOCK_N > BLOCK_M: right for full attention only; causal needs BLOCK_M % BLOCK_N == 0).
- `poly-all` / `poly-half`: exp2 of P on the FMA units (exponent bits times a polynomial), for all of P or for
  half the key block, the other half on the special-function unit (FA4's trick; full attention only).

Rounds alternate SDPA and every candidate so drift hits all alike; the ratio is SDPA's median time over the
candidate's median. It prints each compiled kernel's registers, spills and shared memory too.

Usage (GPU only): python3 parity/flash_fwd_probe.py [--rounds 5] [--only REGEX] [--cases F1024,C4096] [--out F.json]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernels import flash_attention as fa  # noqa: E402

LOG2E = 1.4426950408889634


@triton.jit
def _half_step(acc, l_i, m_i, qk, v, qk_scale):
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def split_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale,
                 D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """The repo's TMA forward with the query block as two halves (needs T % BLOCK_M == 0)."""
    HALF: tl.constexpr = BLOCK_M // 2
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_a = m0 + tl.arange(0, HALF)
    offs_b = offs_a + HALF
    q_a = desc_q.load([bh, m0, 0]).reshape(HALF, D)
    q_b = desc_q.load([bh, m0 + HALF, 0]).reshape(HALF, D)
    m_a = tl.full((HALF,), float("-inf"), dtype=tl.float32)
    m_b = tl.full((HALF,), float("-inf"), dtype=tl.float32)
    l_a = tl.zeros((HALF,), dtype=tl.float32)
    l_b = tl.zeros((HALF,), dtype=tl.float32)
    acc_a = tl.zeros((HALF, D), dtype=tl.float32)
    acc_b = tl.zeros((HALF, D), dtype=tl.float32)
    end_free = m0 if CAUSAL else T
    for start_n in range(0, end_free, BLOCK_N):
        k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        qk_a = tl.dot(q_a, tl.trans(k))
        qk_b = tl.dot(q_b, tl.trans(k))
        v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        acc_a, l_a, m_a = _half_step(acc_a, l_a, m_a, qk_a, v, qk_scale)
        acc_b, l_b, m_b = _half_step(acc_b, l_b, m_b, qk_b, v, qk_scale)
    if CAUSAL:
        for start_n in range(m0, m0 + BLOCK_M, BLOCK_N):
            k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk_a = tl.dot(q_a, tl.trans(k))
            qk_b = tl.dot(q_b, tl.trans(k))
            qk_a = tl.where(offs_n[None, :] <= offs_a[:, None], qk_a, float("-inf"))
            qk_b = tl.where(offs_n[None, :] <= offs_b[:, None], qk_b, float("-inf"))
            v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
            acc_a, l_a, m_a = _half_step(acc_a, l_a, m_a, qk_a, v, qk_scale)
            acc_b, l_b, m_b = _half_step(acc_b, l_b, m_b, qk_b, v, qk_scale)
    desc_o.store([bh, m0, 0], (acc_a * (1.0 / l_a)[:, None]).to(q_a.dtype).reshape(1, HALF, D))
    desc_o.store([bh, m0 + HALF, 0], (acc_b * (1.0 / l_b)[:, None]).to(q_a.dtype).reshape(1, HALF, D))
    tl.store(l_ptr + bh * T + offs_a, m_a * 0.6931471805599453 + tl.log(l_a))
    tl.store(l_ptr + bh * T + offs_b, m_b * 0.6931471805599453 + tl.log(l_b))


@triton.jit
def flat_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale, n_tiles,
                D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Persistent, full attention only: program p takes query tiles p, p + #programs, ... and runs all their
    key blocks as ONE flat loop, so the loads of the next tile's first key blocks are pipelined behind the
    current tile's last ones (needs T % BLOCK_M == 0 and T % BLOCK_N == 0)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    n_kv = T // BLOCK_N
    m_tiles = T // BLOCK_M
    mine = (n_tiles - pid + nprog - 1) // nprog
    bh = pid // m_tiles
    m0 = (pid % m_tiles) * BLOCK_M
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for it in range(0, mine * n_kv):
        kv = it % n_kv
        tile = pid + (it // n_kv) * nprog
        bh = tile // m_tiles
        m0 = (tile % m_tiles) * BLOCK_M
        if kv == 0:
            q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
            m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        k = desc_k.load([bh, kv * BLOCK_N, 0]).reshape(BLOCK_N, D)
        qk = tl.dot(q, tl.trans(k))
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)          # 0 on a tile's first block: acc and l_i restart there
        l_i = l_i * alpha + tl.sum(p, 1)
        v = desc_v.load([bh, kv * BLOCK_N, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
        if kv == n_kv - 1:
            desc_o.store([bh, m0, 0], (acc * (1.0 / l_i)[:, None]).to(q.dtype).reshape(1, BLOCK_M, D))
            offs_m = m0 + tl.arange(0, BLOCK_M)
            tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i))


@triton.jit
def _exp2_poly(x):
    """2**x for x <= 0 on the FMA units (no MUFU): 2**floor(x) from the exponent bits times a degree-3
    polynomial for 2**frac (relative error < 7.5e-5); x below -126 gives 2**-126."""
    x = tl.maximum(x, -126.0)
    j = tl.floor(x)
    f = x - j
    p = 0.9999251255464416 + f * (0.6958339921071541 + f * (0.22606707273037618 + f * 0.07802403102608088))
    bits = p.to(tl.int32, bitcast=True) + (j.to(tl.int32) << 23)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def poly_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale,
                D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                MODE: tl.constexpr):
    """Full attention only (T % BLOCK_N == 0). MODE 1: every exp2 of P on the FMA units; MODE 2: the key block
    as two halves (K/V descriptors of BLOCK_N // 2 rows), the first half's exp2 on the MUFU, the second's
    on the FMA units, so both units work (FA4's trick)."""
    HALF: tl.constexpr = BLOCK_N // 2
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for start_n in range(0, T, BLOCK_N):
        if MODE == 1:
            k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
            qk = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = _exp2_poly(qk * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        else:
            k_a = desc_k.load([bh, start_n, 0]).reshape(HALF, D)
            k_b = desc_k.load([bh, start_n + HALF, 0]).reshape(HALF, D)
            qk_a = tl.dot(q, tl.trans(k_a))
            qk_b = tl.dot(q, tl.trans(k_b))
            m_new = tl.maximum(m_i, tl.maximum(tl.max(qk_a, 1), tl.max(qk_b, 1)) * qk_scale)
            p_a = tl.exp2(qk_a * qk_scale - m_new[:, None])
            p_b = _exp2_poly(qk_b * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p_a, 1) + tl.sum(p_b, 1)
            v_a = desc_v.load([bh, start_n, 0]).reshape(HALF, D)
            v_b = desc_v.load([bh, start_n + HALF, 0]).reshape(HALF, D)
            acc = tl.dot(p_a.to(v_a.dtype), v_a, acc * alpha[:, None])
            acc = tl.dot(p_b.to(v_b.dtype), v_b, acc)
        m_i = m_new
    desc_o.store([bh, m0, 0], (acc * (1.0 / l_i)[:, None]).to(q.dtype).reshape(1, BLOCK_M, D))
    tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i))


@triton.jit
def _lazy_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
               D: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, MASKED: tl.constexpr,
               THRESH: tl.constexpr):
    """The repo's step with FA4's conditional rescaling: the running maximum (and with it acc and l_i) is only
    moved when some row's maximum grew by more than THRESH (log2 units); otherwise P is taken against the
    stale maximum (entries up to 2**THRESH), which is exact math since L and O use the same reference."""
    k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
    qk = tl.dot(q, tl.trans(k))
    if MASKED:
        offs_n = start_n + tl.arange(0, BLOCK_N)
        keep = offs_n[None, :] < T
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    if tl.max(m_new - m_i, 0) > THRESH:
        alpha = tl.exp2(m_i - m_new)
        acc = acc * alpha[:, None]
        l_i = l_i * alpha
        m_i = m_new
    p = tl.exp2(qk * qk_scale - m_i[:, None])
    l_i = l_i + tl.sum(p, 1)
    v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_i


@triton.jit
def lazy_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale,
                D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                THRESH: tl.constexpr):
    """The repo's TMA forward with `_lazy_step` (conditional rescaling)."""
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
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
        acc, l_i, m_i = _lazy_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                   D, BLOCK_N, CAUSAL, False, THRESH)
    for start_n in range(unmasked_end, end, BLOCK_N):
        acc, l_i, m_i = _lazy_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                   D, BLOCK_N, CAUSAL, True, THRESH)
    o = acc * (1.0 / l_i)[:, None]
    desc_o.store([bh, m0, 0], o.to(q.dtype).reshape(1, BLOCK_M, D))
    lse = m_i * 0.6931471805599453 + tl.log(l_i)
    tl.store(l_ptr + bh * T + offs_m, lse, mask=offs_m < T)


@triton.jit
def lean_kernel(desc_q, desc_k, desc_v, desc_o, o_ptr, l_ptr, T, qk_scale,
                D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                PTR_STORE: tl.constexpr, SLEEP_NS: tl.constexpr, SLOTS: tl.constexpr):
    """Full attention only, T % BLOCK_M == 0: the repo's step in ONE loop (no masked loop), O stored through a
    pointer store when PTR_STORE (the program need not wait for a TMA store), and, when SLEEP_NS > 0, the
    first wave's second-slot programs (linear id in [SLOTS, 2 * SLOTS)) sleep that long first, so the two
    programs sharing an SM start out of phase (a diagnostic of lockstep, not a kernel to ship)."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    if SLEEP_NS > 0:
        lin = pid_m + bh * tl.num_programs(0)
        if (lin >= SLOTS) & (lin < 2 * SLOTS):
            tl.inline_asm_elementwise("nanosleep.u32 $1;\n mov.u32 $0, $1;", "=r,r",
                                      [tl.full((1,), SLEEP_NS, tl.int32)], dtype=tl.int32, is_pure=False, pack=1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for start_n in range(0, T, BLOCK_N):
        acc, l_i, m_i = fa._fwd_tma_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                         D, BLOCK_N, CAUSAL, False, False)
    o = (acc * (1.0 / l_i)[:, None]).to(q.dtype)
    if PTR_STORE:
        offs_d = tl.arange(0, D)
        tl.store(o_ptr + (bh * T + offs_m[:, None]) * D + offs_d[None, :], o)
    else:
        desc_o.store([bh, m0, 0], o.reshape(1, BLOCK_M, D))
    tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i))


@triton.jit
def pers_kernel(desc_q, desc_k, desc_v, desc_o, o_ptr, l_ptr, T, qk_scale, n_tiles,
                D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                FLATTEN: tl.constexpr):
    """Persistent, full attention only (T % BLOCK_M == 0): program p takes query tiles p, p + #programs, ...
    (a head's tiles next to each other) with the repo's loop nested inside; FLATTEN asks Triton to flatten
    and pipeline the nest as one loop (tl.range(..., flatten=True): Triton 3.6 fails in its TMA lowering).
    O leaves through a pointer store: a TMA store would need its own 32 KB of shared memory here."""
    m_tiles = T // BLOCK_M
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0), flatten=FLATTEN):
        bh = tile // m_tiles
        m0 = (tile % m_tiles) * BLOCK_M
        offs_m = m0 + tl.arange(0, BLOCK_M)
        q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
        m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        for start_n in tl.range(0, T, BLOCK_N):
            acc, l_i, m_i = fa._fwd_tma_step(acc, l_i, m_i, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                             D, BLOCK_N, CAUSAL, False, False)
        o = (acc * (1.0 / l_i)[:, None]).to(q.dtype)
        tl.store(o_ptr + (bh * T + offs_m[:, None]) * D + tl.arange(0, D)[None, :], o)
        tl.store(l_ptr + bh * T + offs_m, m_i * 0.6931471805599453 + tl.log(l_i))


@triton.jit
def bound_kernel(desc_q, desc_k, desc_v, desc_o, kmax_ptr, l_ptr, T, qk_scale,
                 D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                 FALLBACK: tl.constexpr):
    """Full attention only (T % BLOCK_N == 0). No running maximum: every score of row i is at most
    |q_i| * max_j |k_j| (Cauchy-Schwarz), so with that bound as the softmax reference every P <= 1 and neither a
    row maximum nor a rescale of acc is needed. kmax_ptr holds max_j |k_j| per (batch, head). P only underflows
    when the bound is far (> ~100 in log2 units) above the true maximum; FALLBACK then redoes the tile with
    the online softmax (any row with l_i < 2**-100)."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    qf = q.to(tl.float32)
    b = tl.sqrt(tl.sum(qf * qf, 1)) * (tl.load(kmax_ptr + bh) * qk_scale * 1.0001) + 1.0
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for start_n in range(0, T, BLOCK_N):
        k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - b[:, None])
        l_i += tl.sum(p, 1)
        v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc)
    if FALLBACK:
        if tl.min(l_i, 0) < 7.888609052210118e-31:   # 2**-100
            b = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
            l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
            acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
            for start_n in range(0, T, BLOCK_N):
                acc, l_i, b = fa._fwd_tma_step(acc, l_i, b, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                               D, BLOCK_N, CAUSAL, False, False)
    desc_o.store([bh, m0, 0], (acc * (1.0 / l_i)[:, None]).to(q.dtype).reshape(1, BLOCK_M, D))
    tl.store(l_ptr + bh * T + offs_m, (b + tl.log2(l_i)) * 0.6931471805599453)


@triton.jit
def kmax_kernel(k_ptr, out_ptr, T, D: tl.constexpr, BLOCK: tl.constexpr):
    """max |k_j| over the rows j of one block of BLOCK keys of one (batch, head): out[bh, block]."""
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    k = tl.load(k_ptr + (bh * T + offs[:, None]) * D + tl.arange(0, D)[None, :], mask=offs[:, None] < T,
                other=0.0).to(tl.float32)
    tl.store(out_ptr + bh * tl.num_programs(0) + pid, tl.sqrt(tl.max(tl.sum(k * k, 1), 0)))


@triton.jit
def bound2_kernel(desc_q, desc_k, desc_v, desc_o, kmax_ptr, l_ptr, T, qk_scale, NB,
                  D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                  NB_P2: tl.constexpr):
    """bound_kernel with FALLBACK, reading max |k_j| as kmax_kernel's NB per-block maxima."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    qf = q.to(tl.float32)
    nb = tl.arange(0, NB_P2)
    kmax = tl.max(tl.load(kmax_ptr + bh * NB + nb, mask=nb < NB, other=0.0), 0)
    b = tl.sqrt(tl.sum(qf * qf, 1)) * (kmax * qk_scale * 1.0001) + 1.0
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for start_n in range(0, T, BLOCK_N):
        k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - b[:, None])
        l_i += tl.sum(p, 1)
        v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc)
    if tl.min(l_i, 0) < 7.888609052210118e-31:   # 2**-100
        b = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        for start_n in range(0, T, BLOCK_N):
            acc, l_i, b = fa._fwd_tma_step(acc, l_i, b, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                           D, BLOCK_N, CAUSAL, False, False)
    desc_o.store([bh, m0, 0], (acc * (1.0 / l_i)[:, None]).to(q.dtype).reshape(1, BLOCK_M, D))
    tl.store(l_ptr + bh * T + offs_m, (b + tl.log2(l_i)) * 0.6931471805599453)


@triton.jit
def frozen_kernel(desc_q, desc_k, desc_v, desc_o, l_ptr, T, qk_scale,
                  D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                  FALLBACK: tl.constexpr, FIRST: tl.constexpr):
    """Full attention only (T % BLOCK_N == 0). The softmax reference of row i is frozen at the maximum of its
    first key block: later blocks reuse it, with neither a row maximum nor a rescale of acc. P may exceed 1
    then; the result stays exact unless a later score exceeds the reference by ~100 (log2 units), which
    shows as l_i > 2**100 (or NaN) and makes FALLBACK redo the tile with the online softmax.
    FIRST: how the first block sets the reference: 0 peeled before the loop (its K/V tiles take shared memory
    of their own), 1 `if start_n == 0` in the loop, 2 `tl.where` on every block (a row maximum each time)."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    q = desc_q.load([bh, m0, 0]).reshape(BLOCK_M, D)
    if FIRST == 0:
        k = desc_k.load([bh, 0, 0]).reshape(BLOCK_N, D)
        qk = tl.dot(q, tl.trans(k))
        b = tl.max(qk, 1) * qk_scale
        p = tl.exp2(qk * qk_scale - b[:, None])
        l_i = tl.sum(p, 1)
        v = desc_v.load([bh, 0, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v)
        lo = BLOCK_N
    else:
        b = tl.zeros((BLOCK_M,), dtype=tl.float32)
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        lo = 0
    for start_n in range(lo, T, BLOCK_N):
        k = desc_k.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        qk = tl.dot(q, tl.trans(k))
        if FIRST == 1:
            if start_n == 0:
                b = tl.max(qk, 1) * qk_scale
        elif FIRST == 2:
            b = tl.where(start_n == 0, tl.max(qk, 1) * qk_scale, b)
        p = tl.exp2(qk * qk_scale - b[:, None])
        l_i += tl.sum(p, 1)
        v = desc_v.load([bh, start_n, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc)
    if FALLBACK:
        if tl.max(((l_i > 1.2676506002282294e30) | (l_i != l_i)).to(tl.int32), 0) > 0:   # 2**100
            b = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
            l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
            acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
            for start_n in range(0, T, BLOCK_N):
                acc, l_i, b = fa._fwd_tma_step(acc, l_i, b, q, desc_k, desc_v, bh, start_n, offs_m, T, qk_scale,
                                               D, BLOCK_N, CAUSAL, False, False)
    desc_o.store([bh, m0, 0], (acc * (1.0 / l_i)[:, None]).to(q.dtype).reshape(1, BLOCK_M, D))
    tl.store(l_ptr + bh * T + offs_m, (b + tl.log2(l_i)) * 0.6931471805599453)


def candidates():
    """[(name, kernel, Q/O descriptor block rows, BLOCK_M, BLOCK_N, warps, stages, extra launch options)]: every
    candidate of the 2026-11-29 runs (results/flash-d128-probe-2026-11-29.md)."""
    out = []
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 64, 4, 3), (128, 128, 4, 2), (64, 64, 4, 3), (64, 128, 4, 2),
                         (64, 128, 4, 3), (64, 128, 8, 2), (64, 128, 8, 3), (128, 128, 8, 3), (256, 64, 8, 2), (128, 64, 8, 2),
                         (128, 32, 4, 3), (128, 32, 4, 4), (128, 32, 4, 2),
                         (256, 64, 8, 3), (256, 128, 8, 2)):
        out.append((f"repo {bm}x{bn}w{w}s{s}", fa.flash_fwd_tma_kernel, bm, bm, bn, w, s, {}))
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 64, 4, 3), (128, 128, 4, 2), (256, 64, 8, 2),
                         (256, 64, 4, 2), (256, 128, 8, 2)):
        out.append((f"split {bm}x{bn}w{w}s{s}", split_kernel, bm // 2, bm, bn, w, s, {}))
    for bm, bn, w, s, r in ((128, 64, 4, 2, 232), (128, 64, 4, 3, 232), (128, 128, 8, 2, 128), (128, 64, 8, 2, 128),
                            (128, 64, 8, 2, 120), (64, 64, 4, 2, 168), (64, 32, 4, 2, 168), (64, 64, 4, 1, 168),
                            (256, 64, 16, 2, 128), (256, 64, 16, 3, 128), (128, 64, 8, 3, 128)):
        out.append((f"repo {bm}x{bn}w{w}s{s} maxnreg{r}", fa.flash_fwd_tma_kernel, bm, bm, bn, w, s,
                    {"maxnreg": r}))
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 64, 4, 3), (64, 64, 4, 3), (64, 128, 4, 2), (64, 64, 4, 2)):
        for per_sm in (1, 2):
            out.append((f"flat {bm}x{bn}w{w}s{s} x{per_sm}", flat_kernel, bm, bm, bn, w, s, {"per_sm": per_sm}))
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 128, 4, 2), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3)):
        out.append((f"poly-all {bm}x{bn}w{w}s{s}", poly_kernel, bm, bm, bn, w, s, {"MODE": 1, "full_only": True}))
        out.append((f"poly-half {bm}x{bn}w{w}s{s}", poly_kernel, bm, bm, bn, w, s,
                    {"MODE": 2, "full_only": True, "kv_rows": bn // 2}))
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 64, 4, 3), (128, 128, 4, 2), (128, 64, 8, 3), (128, 128, 8, 3),
                         (64, 64, 4, 3), (64, 64, 4, 2), (256, 64, 8, 2)):
        for th in (8.0, 0.0):
            out.append((f"lazy{th:g} {bm}x{bn}w{w}s{s}", lazy_kernel, bm, bm, bn, w, s, {"THRESH": th}))
    for bm, bn, w, s in ((128, 64, 4, 2), (64, 64, 4, 3), (128, 64, 8, 2)):
        for fl in (False,):
            for per_sm in ((1, 2) if w == 4 else (1,)):
                out.append((f"pers{'-flat' if fl else ''} {bm}x{bn}w{w}s{s} x{per_sm}", pers_kernel, bm, bm, bn, w, s,
                            {"per_sm": per_sm, "FLATTEN": fl, "full_only": True, "o_ptr": True}))
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 64, 4, 3), (128, 128, 8, 2), (128, 128, 8, 3), (64, 64, 4, 3),
                         (128, 64, 8, 2), (128, 64, 8, 3), (128, 128, 4, 2)):
        for fb in (False, True):
            out.append((f"bound{'-fb' if fb else ''} {bm}x{bn}w{w}s{s}", bound_kernel, bm, bm, bn, w, s,
                        {"FALLBACK": fb, "full_only": True, "kmax": True}))
    for bm, bn, w, s in ((128, 64, 4, 2), (128, 64, 4, 3), (64, 64, 4, 3), (128, 128, 8, 3), (128, 64, 8, 3),
                         (64, 64, 4, 2)):
        for first in (0, 1, 2):
            out.append((f"frozen{first} {bm}x{bn}w{w}s{s}", frozen_kernel, bm, bm, bn, w, s,
                        {"FALLBACK": True, "FIRST": first, "full_only": True}))
    for bm, bn, w, s in ((128, 64, 4, 2), (64, 64, 4, 3)):
        for pre in (64, 128, 256):
            for pw in (4, 8):
                out.append((f"bound2-pre{pre}w{pw} {bm}x{bn}w{w}s{s}", bound2_kernel, bm, bm, bn, w, s,
                            {"full_only": True, "prepass": (pre, pw)}))
    for ptr in (False, True):
        for ns in (0, 500, 1000, 2000, 5000, 10000, 20000):
            if ptr and ns:
                continue
            out.append((f"lean{'-ptr' if ptr else ''}{f'-sleep{ns}' if ns else ''} 128x64w4s2", lean_kernel, 128, 128,
                        64, 4, 2, {"PTR_STORE": ptr, "SLEEP_NS": ns, "SLOTS": 264, "full_only": True, "o_ptr": True}))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cases", default="F1024,F4096,C1024,C4096", help="F = full, C = causal, then T")
    ap.add_argument("--warm", action="store_true",
                    help="time 50 back-to-back launches between two events, without do_bench's L2 flush")
    ap.add_argument("--batch", type=int, default=4, help="B (H = 16, D = 128)")
    ap.add_argument("--only", default="", help="regular expression: time only the candidates it finds")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from triton.tools.tensor_descriptor import TensorDescriptor
    from triton.testing import do_bench

    B, H, D = a.batch, 16, 128
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(f"{props.name} triton {triton.__version__} torch {torch.__version__} | B={B} H={H} D={D} bf16",
          flush=True)
    cases = [(c[0] == "C", int(c[1:])) for c in a.cases.split(",")]
    result = {"device": props.name, "triton": triton.__version__, "torch": torch.__version__,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cases": {}, "meta": {}}
    torch.manual_seed(0)
    for causal, T in cases:
        key = f"{'causal' if causal else 'full'}-T{T}"
        q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        shape, strides = [B * H, T, D], [T * D, D, 1]
        qk_scale = LOG2E / math.sqrt(D)
        runs = {"sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)}
        for name, kern, qrows, bm, bn, w, s, extra in candidates():
            if a.only and not re.search(a.only, name):
                continue
            extra = dict(extra)
            per_sm = extra.pop("per_sm", None)
            full_only = extra.pop("full_only", False)
            kv_rows = extra.pop("kv_rows", bn)
            o_arg = extra.pop("o_ptr", False)
            kmax_arg = extra.pop("kmax", False)
            prepass = extra.pop("prepass", None)
            if T % bm or T % bn or ((per_sm or full_only) and causal):
                continue
            o = torch.empty_like(q)
            lse = torch.empty(B * H, T, device=dev, dtype=torch.float32)
            args = (TensorDescriptor(q, shape, strides, [1, qrows, D]), TensorDescriptor(k, shape, strides, [1, kv_rows, D]),
                    TensorDescriptor(v, shape, strides, [1, kv_rows, D]), TensorDescriptor(o, shape, strides, [1, qrows, D]),
                    lse, T, qk_scale)
            if o_arg:
                args = args[:4] + (o,) + args[4:]
            if kmax_arg:   # max_j |k_j| per (batch, head), computed outside the timing
                args = args[:4] + (k.float().norm(dim=-1).amax(dim=-1).reshape(-1).contiguous(),) + args[4:]
            kw = dict(D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=w, num_stages=s, **extra)
            grid = (T // bm, B * H)
            if per_sm:
                n_tiles = T // bm * B * H
                grid = (min(n_tiles, per_sm * props.multi_processor_count),)
                args = args + (n_tiles,)
            if prepass:   # kmax_kernel runs inside the timing, before the main kernel
                pre_block, pre_warps = prepass
                nb = triton.cdiv(T, pre_block)
                kmax_buf = torch.empty(B * H, nb, device=dev, dtype=torch.float32)
                args = args[:4] + (kmax_buf,) + args[4:] + (nb,)
                kw["NB_P2"] = triton.next_power_of_2(nb)

                def run_both(kern=kern, grid=grid, args=args, kw=kw, nb=nb, pre_block=pre_block, pw=pre_warps,
                             kmax_buf=kmax_buf):
                    kmax_kernel[(nb, B * H)](k, kmax_buf, T, D=D, BLOCK=pre_block, num_warps=pw)
                    return kern[grid](*args, **kw)
                launch = run_both
            else:
                launch = (lambda kern=kern, grid=grid, args=args, kw=kw: kern[grid](*args, **kw))
            try:
                ck = launch()
                torch.cuda.synchronize()
                err = ((o.float() - ref).abs().max() / ref.abs().max()).item()
                meta = f"regs {ck.n_regs} spills {ck.n_spills} smem {ck.metadata.shared}"
                result["meta"][name] = meta
                if not err < 2e-2:
                    print(f"  {key} {name}: WRONG (rel err {err:.3g})", flush=True)
                    continue
            except Exception as e:  # noqa: BLE001 - a failed compile is data
                print(f"  {key} {name}: failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
                continue
            runs[name] = launch
        def warm_bench(fn, n=50):
            for _ in range(5):
                fn()
            ts = []
            for _ in range(5):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(n):
                    fn()
                end.record()
                torch.cuda.synchronize()
                ts.append(start.elapsed_time(end) / n)
            return statistics.median(ts)

        times = {n: [] for n in runs}
        for _ in range(a.rounds):
            for n, fn in runs.items():
                times[n].append(warm_bench(fn) if a.warm else do_bench(fn, warmup=25, rep=100, return_mode="median"))
        flops = 4 * B * H * T * T * D * (0.5 if causal else 1.0)
        sd = statistics.median(times["sdpa"])
        rows = []
        for n, ts in times.items():
            med = statistics.median(ts)
            rows.append({"name": n, "ms": ts, "ratio": sd / med, "tflops": flops / (med * 1e-3) / 1e12,
                         "ratio_min": min(sd / t for t in ts), "ratio_max": max(sd / t for t in ts)})
        rows.sort(key=lambda r: -r["ratio"])
        result["cases"][key] = rows
        print(f"{key}: SDPA {flops / (sd * 1e-3) / 1e12:.0f} TFLOP/s (spread {max(times['sdpa']) / min(times['sdpa']) - 1:.1%})",
              flush=True)
        for r in rows:
            print(f"  {r['name']:<34} {r['ratio']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f})"
                  f"  {r['tflops']:.0f} TF  {result['meta'].get(r['name'], '')}", flush=True)
        if a.out:
            with open(a.out, "w") as f:
                json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
