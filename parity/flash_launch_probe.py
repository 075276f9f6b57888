"""Host time of the TMA flash forward's launch on one GPU, and what a leaner launch path would save.

`flash_attention()` on Hopper at D = 128 builds four `TensorDescriptor`s per call and goes through
`JITFunction.run` (binder, cache key, launch metadata). The launcher then encodes each descriptor's
`cuTensorMap`. This probe times host microseconds per call (200 launches without a sync, the median of
5 rounds) for:

- `wrapper`: `flash_attention(q, k, v)` as users call it (it keeps the `CompiledKernel`);
- `run`: `flash_fwd_tma_kernel[grid](...)` with four new descriptors;
- `direct`: the `CompiledKernel` launched as `JITFunction.run` does internally, with four new descriptors;
- `direct+qkv`: the same, with q/k/v's descriptors built once (O's per call);
- `direct+all`: every descriptor and O built once (a lower bound).

Every variant's output is checked against the wrapper's. Prints one line per variant, with the kernel's
CUDA-graph replay time for scale (0 where a variant launches outside the capturing stream), and the wrapper's
result for a q 2 bytes off alignment (the pointer kernel's) against the TMA kernel's.

Usage (GPU only): python3 parity/flash_launch_probe.py [--T 1024] [--causal]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    import torch
    import triton
    from triton import knobs
    from triton.runtime import driver
    from triton.testing import do_bench_cudagraph
    from triton.tools.tensor_descriptor import TensorDescriptor

    from kernels import flash_attention as fa
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args()
    B, H, T, D, causal = 4, 16, a.T, 128, a.causal
    q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref, ref_lse = fa.flash_attention(q, k, v, causal=causal)
    cfg = fa.tma_config(T, causal)
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    grid = (triton.cdiv(T, bm), B * H)
    shape, strides = [B * H, T, D], [T * D, D, 1]
    qk_scale = fa.LOG2E / math.sqrt(D)
    consts = dict(D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal)

    def descs(o):
        return (TensorDescriptor(q, shape, strides, [1, bm, D]), TensorDescriptor(k, shape, strides, [1, bn, D]),
                TensorDescriptor(v, shape, strides, [1, bn, D]), TensorDescriptor(o, shape, strides, [1, bm, D]))

    o0, lse0 = torch.empty_like(q), torch.empty(B, H, T, device="cuda", dtype=torch.float32)
    ck = fa.flash_fwd_tma_kernel[grid](*descs(o0), lse0, T, qk_scale, **consts, num_warps=cfg["num_warps"],
                                       num_stages=cfg["num_stages"])
    device = driver.active.get_current_device()
    stream = driver.active.get_current_stream(device)

    def direct(d, lse):
        args = (*d, lse, T, qk_scale, D, bm, bn, causal)
        ck.run(grid[0], grid[1], 1, stream, ck.function, ck.packed_metadata, ck.launch_metadata(grid, stream, *args),
               knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *args)

    qkv = descs(o0)[:3]
    fixed_all = descs(o0)

    def v_wrapper():
        return fa.flash_attention(q, k, v, causal=causal)

    def v_run():
        o, lse = torch.empty_like(q), torch.empty(B, H, T, device="cuda", dtype=torch.float32)
        fa.flash_fwd_tma_kernel[grid](*descs(o), lse, T, qk_scale, **consts, num_warps=cfg["num_warps"],
                                      num_stages=cfg["num_stages"])
        return o, lse

    def v_direct():
        o, lse = torch.empty_like(q), torch.empty(B, H, T, device="cuda", dtype=torch.float32)
        direct(descs(o), lse)
        return o, lse

    def v_direct_qkv():
        o, lse = torch.empty_like(q), torch.empty(B, H, T, device="cuda", dtype=torch.float32)
        direct((*qkv, TensorDescriptor(o, shape, strides, [1, bm, D])), lse)
        return o, lse

    def v_direct_all():
        direct(fixed_all, lse0)
        return o0, lse0

    flat = torch.empty(q.numel() + 1, device="cuda", dtype=q.dtype)
    q_odd = flat[1:].view(q.shape)          # 2 bytes past an aligned address: no tensor descriptor can take it
    q_odd.copy_(q)
    o_odd, lse_odd = fa.flash_attention(q_odd, k, v, causal=causal)
    err = (o_odd.float() - ref.float()).abs().max().item()
    print(f"T={T} {'causal' if causal else 'full'} unaligned q (pointer kernel): max |O - O_tma| = {err:.3g}, "
          f"max |L - L_tma| = {(lse_odd - ref_lse).abs().max().item():.3g}", flush=True)

    for name, fn in (("wrapper", v_wrapper), ("run", v_run), ("direct", v_direct), ("direct+qkv", v_direct_qkv),
                     ("direct+all", v_direct_all)):
        try:
            o, lse = fn()
            torch.cuda.synchronize()
            same = torch.equal(o, ref) and torch.equal(lse.reshape(ref_lse.shape), ref_lse)
            rounds = []
            for _ in range(5):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(200):
                    fn()
                rounds.append((time.perf_counter() - t0) / 200 * 1e6)
            torch.cuda.synchronize()
            graph = do_bench_cudagraph(fn, rep=50, return_mode="median") * 1e3
            print(f"T={T} {'causal' if causal else 'full'} {name:11} host {statistics.median(rounds):6.1f} us/call"
                  f"  kernel {graph:6.1f} us  output {'identical' if same else 'DIFFERS'}", flush=True)
        except Exception as e:  # noqa: BLE001 - a variant that fails is data
            print(f"T={T} {name:11} failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)


if __name__ == "__main__":
    main()
