# parity fuzz: distinct mismatch 5 on cuda (UNEXPLAINED); shrunk to a 5-line kernel
# out21 (int8, exact): 512 of 2048 differ: at (0, 0, 6): minitriton np.float64(5.0) vs triton np.float64(-15.0); at (0, 0, 7): minitriton np.float64(5.0) vs triton np.float64(-15.0); at (0, 0, 14): minitriton np.float64(5.0) vs triton np.float64(-15.0); at (0, 0, 15): minitriton np.float64(5.0) vs triton np.float64(-15.0)
# out21 at (0, 0, 6): minitriton 5.0, triton -15.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in15, f0_out21):
    pid = tl.program_id(0)
    f0_x16 = tl.load(f0_in15 + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(f0_out21 + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.full((32, 32), 15, tl.int8) // tl.where((f0_x16 == 0) | (f0_x16 == -1), 3, f0_x16))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in15 = np.full((2, 32, 32), -1, dtype=np.int16)
f0_out21 = np.full((2, 32, 32), 0, dtype=np.int8)
ARGS = [f0_in15, f0_out21]
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
