# parity fuzz: distinct mismatch 2 on cuda (UNEXPLAINED); shrunk to a 6-line kernel
# out24 (fp16, exact): 1024 of 1024 differ: at (0, 0, 0): minitriton np.float64(inf) vs triton np.float64(65504.0); at (0, 0, 1): minitriton np.float64(inf) vs triton np.float64(65504.0); at (0, 0, 2): minitriton np.float64(inf) vs triton np.float64(65504.0); at (0, 0, 3): minitriton np.float64(inf) vs triton np.float64(65504.0)
# out24 at (0, 0, 0): minitriton inf, triton 65504.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in18, f0_in20, f0_out24):
    pid = tl.program_id(0)
    f0_x19 = tl.load(f0_in18 + pid * 512 + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :])
    f0_x21 = tl.load(f0_in20 + pid * 512 + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(f0_out24 + pid * 512 + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :], (f0_x19 ^ f0_x19) - tl.minimum(tl.maximum(f0_x21, -128.0), 127.0).to(tl.int8))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in18 = np.full((2, 32, 16), 0, dtype=np.uint32)
f0_in20 = bf16_bits(np.full((2, 32, 16), 16800, dtype=np.uint16))
f0_out24 = np.full((2, 32, 16), 0.0, dtype=np.float16)
ARGS = [f0_in18, f0_in20, f0_out24]
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
