# parity fuzz: distinct mismatch 5 on cuda (UNEXPLAINED); shrunk to a 5-line kernel
# out16 (int8, exact): 2048 of 2048 differ: at (0, 0, 0): minitriton np.float64(-128.0) vs triton np.float64(127.0); at (0, 0, 1): minitriton np.float64(-128.0) vs triton np.float64(127.0); at (0, 0, 2): minitriton np.float64(-128.0) vs triton np.float64(127.0); at (0, 0, 3): minitriton np.float64(-128.0) vs triton np.float64(127.0)
# out16 at (0, 0, 0): minitriton -128.0, triton 127.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in10, f0_out16, f0_s12, f0_s13):
    pid = tl.program_id(0)
    f0_x11 = tl.load(f0_in10 + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(f0_out16 + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.minimum(tl.maximum(tl.where(tl.min(f0_x11, axis=0, keep_dims=True).to(tl.int16) % tl.where((f0_x11 ^ f0_x11 == 0) | (f0_x11 ^ f0_x11 == -1), 3, f0_x11 ^ f0_x11) <= ~pid, tl.where(f0_s12 // tl.where((tl.full((32, 32), 49, tl.int16) == 0) | (tl.full((32, 32), 49, tl.int16) == -1), 3, tl.full((32, 32), 49, tl.int16)) < f0_x11 * f0_s13, tl.maximum(tl.full((32, 32), -76, tl.int32), f0_x11), tl.abs(f0_x11)), tl.maximum(tl.full((32, 32), -3, tl.int32), tl.full((32, 32), -2.0, tl.bfloat16))), -128.0), 127.0))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in10 = np.full((2, 32, 32), -32768, dtype=np.int16)
f0_out16 = np.full((2, 32, 32), 0, dtype=np.int8)
f0_s12 = 0
f0_s13 = 0.0
ARGS = [f0_in10, f0_out16, f0_s12, f0_s13]
GRID = (2,)


if __name__ == '__main__':
    import os
    import torch
    dev = 'cpu' if os.environ.get('TRITON_INTERPRET') == '1' else 'cuda'
    targs = [(torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == np.uint16
              else torch.from_numpy(a)).to(dev) if isinstance(a, np.ndarray) else a for a in ARGS]
    fuzz_kernel[GRID](*targs)
    for a in targs:
        if hasattr(a, 'cpu'):
            print(a.float().cpu().numpy() if a.dtype == torch.bfloat16 else a.cpu().numpy())
