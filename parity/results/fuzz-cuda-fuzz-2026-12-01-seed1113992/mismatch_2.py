# parity fuzz: distinct mismatch 2 on cuda (UNEXPLAINED); shrunk to a 6-line kernel
# out26 (fp16, exact): 8 of 8 differ: at (0, 0, 0): minitriton np.float64(-2.0) vs triton np.float64(2.0); at (0, 0, 1): minitriton np.float64(-2.0) vs triton np.float64(2.0); at (0, 1, 0): minitriton np.float64(-2.0) vs triton np.float64(2.0); at (0, 1, 1): minitriton np.float64(-2.0) vs triton np.float64(2.0)
# out26 at (0, 0, 0): minitriton -2.0, triton 2.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in20, f0_in22, f0_out26):
    pid = tl.program_id(0)
    f0_x21 = tl.load(f0_in20 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])
    f0_x23 = tl.load(f0_in22 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])
    tl.store(f0_out26 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], -f0_x21 % tl.where((tl.minimum(tl.maximum(f0_x23, -2147483648.0), 2147483520.0).to(tl.int32) == 0) | (tl.minimum(tl.maximum(f0_x23, -2147483648.0), 2147483520.0).to(tl.int32) == -1), 3, tl.minimum(tl.maximum(f0_x23, -2147483648.0), 2147483520.0).to(tl.int32)))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in20 = np.full((2, 2, 2), -32768, dtype=np.int16)
f0_in22 = np.full((2, 2, 2), 0.0, dtype=np.float32)
f0_out26 = np.full((2, 2, 2), 0.0, dtype=np.float16)
ARGS = [f0_in20, f0_in22, f0_out26]
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
