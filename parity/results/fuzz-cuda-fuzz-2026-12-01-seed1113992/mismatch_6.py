# parity fuzz: distinct mismatch 6 on cuda (UNEXPLAINED); shrunk to a 9-line kernel
# out19 (fp32, exact): 512 of 1024 differ: at (0, 0, 2): minitriton np.float64(0.0) vs triton np.float64(1.0); at (0, 0, 3): minitriton np.float64(0.0) vs triton np.float64(1.0); at (0, 0, 6): minitriton np.float64(0.0) vs triton np.float64(1.0); at (0, 0, 7): minitriton np.float64(0.0) vs triton np.float64(1.0)
# out19 at (0, 0, 2): minitriton 0.0, triton 1.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in13, f0_in16, f0_out19, f0_out20, f0_out21):
    pid = tl.program_id(0)
    f0_x14 = tl.load(f0_in13 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    f0_v15 = (f0_x14 // tl.where((f0_x14 == 0) | (f0_x14 == -1), 3, f0_x14)).to(tl.float32)
    f0_x17 = tl.load(f0_in16 + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(f0_out19 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], f0_v15)
    tl.store(f0_out20 + pid * 1024 + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], f0_x17)
    tl.store(f0_out21 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.dot(f0_v15, f0_x17, input_precision='ieee'))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in13 = np.full((2, 16, 32), -1, dtype=np.int16)
f0_in16 = np.full((2, 32, 32), 0.0, dtype=np.float32)
f0_out19 = np.full((2, 16, 32), 0.0, dtype=np.float32)
f0_out20 = np.full((2, 32, 32), 0.0, dtype=np.float32)
f0_out21 = np.full((2, 16, 32), 0.0, dtype=np.float32)
ARGS = [f0_in13, f0_in16, f0_out19, f0_out20, f0_out21]
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
