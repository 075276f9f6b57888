# parity fuzz: distinct mismatch 1 on cuda (narrow_float_of_low_16_bits); shrunk to a 5-line kernel
# out16 (fp16, exact): 512 of 512 differ: at (0, 0, 0): minitriton np.float64(inf) vs triton np.float64(64384.0); at (0, 0, 1): minitriton np.float64(inf) vs triton np.float64(64384.0); at (0, 0, 2): minitriton np.float64(inf) vs triton np.float64(64384.0); at (0, 0, 3): minitriton np.float64(inf) vs triton np.float64(64384.0)
# out16 at (0, 0, 0): minitriton inf, triton 64384.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in8, f0_out16):
    pid = tl.program_id(0)
    f0_x9 = tl.load(f0_in8 + pid * 256 + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(f0_out16 + pid * 256 + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :], (f0_x9 << (f0_x9 & 15)).to(tl.uint32))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in8 = np.full((2, 8, 32), -9, dtype=np.int16)
f0_out16 = np.full((2, 8, 32), 0.0, dtype=np.float16)
ARGS = [f0_in8, f0_out16]
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
