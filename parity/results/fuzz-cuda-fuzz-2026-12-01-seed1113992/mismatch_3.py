# parity fuzz: distinct mismatch 3 on cuda (UNEXPLAINED); shrunk to a 5-line kernel
# out22 (bf16, exact): 256 of 1024 differ: at (0, 0, 3): minitriton np.float64(inf) vs triton np.float64(-inf); at (0, 0, 7): minitriton np.float64(inf) vs triton np.float64(-inf); at (0, 0, 11): minitriton np.float64(inf) vs triton np.float64(-inf); at (0, 0, 15): minitriton np.float64(inf) vs triton np.float64(-inf)
# out22 at (0, 0, 3): minitriton inf, triton -inf
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in16, f0_out22):
    pid = tl.program_id(0)
    f0_x17 = tl.load(f0_in16 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], mask=tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :] < 3, other=-float('inf'))
    tl.store(f0_out22 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], f0_x17 * f0_x17)

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in16 = np.full((2, 16, 32), 0.0, dtype=np.float16)
f0_out22 = bf16_bits(np.full((2, 16, 32), 0, dtype=np.uint16))
ARGS = [f0_in16, f0_out22]
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
