# parity fuzz: distinct mismatch 7 on cuda (narrow_float_of_low_16_bits); shrunk to a 5-line kernel
# out25 (fp16, exact): 512 of 512 differ: at (0, 0, 0): minitriton np.float64(inf) vs triton np.float64(65504.0); at (0, 0, 1): minitriton np.float64(inf) vs triton np.float64(65504.0); at (0, 0, 2): minitriton np.float64(inf) vs triton np.float64(65504.0); at (0, 0, 3): minitriton np.float64(inf) vs triton np.float64(65504.0)
# out25 at (0, 0, 0): minitriton inf, triton 65504.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in19, f0_out25):
    pid = tl.program_id(0)
    f0_x20 = tl.load(f0_in19 + pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(f0_out25 + pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], tl.where(f0_x20, f0_x20, tl.full((16, 16), 0, tl.uint32)))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in19 = np.full((2, 16, 16), -28, dtype=np.int8)
f0_out25 = np.full((2, 16, 16), 0.0, dtype=np.float16)
ARGS = [f0_in19, f0_out25]
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
