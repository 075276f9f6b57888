# parity fuzz: distinct mismatch 4 on cuda (abs_of_int_min); shrunk to a 6-line kernel
# out8 (int64, exact): 4 of 4 differ: at (0, 0): minitriton np.float64(21.0) vs triton np.float64(12.0); at (0, 1): minitriton np.float64(21.0) vs triton np.float64(12.0); at (1, 0): minitriton np.float64(21.0) vs triton np.float64(12.0); at (1, 1): minitriton np.float64(21.0) vs triton np.float64(12.0)
# out8 at (0, 0): minitriton 21.0, triton 12.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in1, f0_out8, f0_s7):
    pid = tl.program_id(0)
    f0_x2 = tl.load(f0_in1 + pid * 2 + tl.arange(0, 2))
    f0_v3 = tl.where(tl.minimum(tl.maximum(pid * tl.full((2,), 0.25, tl.float64), 0.0), 255.0).to(tl.uint8) & f0_x2 < tl.where(f0_x2 // tl.where((f0_x2 == 0) | (f0_x2 == -1), 3, f0_x2) <= tl.abs(f0_x2), f0_x2, tl.full((2,), 100, tl.int64) - f0_x2), tl.full((2,), 21, tl.int8).to(tl.int16), tl.full((2,), 12, tl.uint32))
    tl.store(f0_out8 + pid * 2 + tl.arange(0, 2), tl.minimum(tl.maximum(tl.where(-tl.sum(f0_v3, axis=0, keep_dims=True).to(tl.float64) <= tl.minimum(f0_s7 % tl.where((tl.minimum(tl.maximum(f0_v3, -9.223372036854776e+18), 9.223371487098962e+18).to(tl.int64) == 0) | (tl.minimum(tl.maximum(f0_v3, -9.223372036854776e+18), 9.223371487098962e+18).to(tl.int64) == -1), 3, tl.minimum(tl.maximum(f0_v3, -9.223372036854776e+18), 9.223371487098962e+18).to(tl.int64)), pid & tl.minimum(tl.maximum(f0_v3, -9.223372036854776e+18), 9.223371487098962e+18).to(tl.int64)), tl.minimum(tl.maximum(f0_v3, -9.223372036854776e+18), 9.223371487098962e+18).to(tl.int64) & tl.minimum(tl.maximum(f0_v3, 0.0), 255.0).to(tl.uint8), f0_v3), -9.223372036854776e+18), 9.223371487098962e+18))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in1 = np.full((2, 2), -32768, dtype=np.int16)
f0_out8 = np.full((2, 2), 0, dtype=np.int64)
f0_s7 = 0
ARGS = [f0_in1, f0_out8, f0_s7]
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
