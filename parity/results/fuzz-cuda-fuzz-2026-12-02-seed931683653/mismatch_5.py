# parity fuzz: distinct mismatch 5 on cuda (fma_contraction); shrunk to a 5-line kernel
# out5 (fp32, exact): 8 of 8 differ: at (0, 0, 0): minitriton np.float64(-2.4847521781921387) vs triton np.float64(-2.4847519397735596); at (0, 0, 1): minitriton np.float64(-2.4847521781921387) vs triton np.float64(-2.4847519397735596); at (0, 1, 0): minitriton np.float64(-2.4847521781921387) vs triton np.float64(-2.4847519397735596); at (0, 1, 1): minitriton np.float64(-2.4847521781921387) vs triton np.float64(-2.4847519397735596)
# out5 at (0, 0, 0): minitriton -2.4847521781921387, triton -2.4847519397735596
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in3, f0_out5):
    pid = tl.program_id(0)
    f0_x4 = tl.load(f0_in3 + pid * 2 + tl.arange(0, 2))
    tl.store(f0_out5 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], f0_x4[None, :] * tl.full((2, 2), 79, tl.int8) - 1.0)

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in3 = np.full((2, 2), -0.018794329836964607, dtype=np.float32)
f0_out5 = np.full((2, 2, 2), 0.0, dtype=np.float32)
ARGS = [f0_in3, f0_out5]
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
