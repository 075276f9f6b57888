# parity fuzz: distinct mismatch 6 on cuda (UNEXPLAINED); shrunk to a 5-line kernel
# out24 (bf16, exact): 512 of 512 differ: at (0, 0, 0): minitriton np.float64(-1.0) vs triton np.float64(1.0); at (0, 0, 1): minitriton np.float64(-1.0) vs triton np.float64(1.0); at (0, 0, 2): minitriton np.float64(-1.0) vs triton np.float64(1.0); at (0, 0, 3): minitriton np.float64(-1.0) vs triton np.float64(1.0)
# out24 at (0, 0, 0): minitriton -1.0, triton 1.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in20, f0_out24):
    pid = tl.program_id(0)
    f0_x21 = tl.load(f0_in20 + pid * 256 + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(f0_out24 + pid * 256 + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.minimum(tl.maximum(tl.full((8, 32), -1.5, tl.bfloat16), -32768.0), 32640.0).to(tl.int16) // tl.where((tl.minimum(tl.maximum(f0_x21, 0.0), 255.0).to(tl.uint8).to(tl.int16) == 0) | (tl.minimum(tl.maximum(f0_x21, 0.0), 255.0).to(tl.uint8).to(tl.int16) == -1), 3, tl.minimum(tl.maximum(f0_x21, 0.0), 255.0).to(tl.uint8).to(tl.int16)) // tl.where((tl.minimum(tl.maximum(f0_x21, 0.0), 255.0).to(tl.uint8).to(tl.int16) == 0) | (tl.minimum(tl.maximum(f0_x21, 0.0), 255.0).to(tl.uint8).to(tl.int16) == -1), 3, tl.minimum(tl.maximum(f0_x21, 0.0), 255.0).to(tl.uint8).to(tl.int16)))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in20 = np.full((2, 8, 32), 1.0, dtype=np.float64)
f0_out24 = bf16_bits(np.full((2, 8, 32), 0, dtype=np.uint16))
ARGS = [f0_in20, f0_out24]
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
