# parity fuzz: distinct mismatch 3 on cuda (masked_16_bit_other_loses_its_sign); shrunk to a 5-line kernel
# out24 (fp16, exact): 256 of 512 differ: at (0, 0, 1): minitriton np.float64(0.0) vs triton np.float64(3.0); at (0, 0, 3): minitriton np.float64(0.0) vs triton np.float64(3.0); at (0, 0, 5): minitriton np.float64(0.0) vs triton np.float64(3.0); at (0, 0, 7): minitriton np.float64(0.0) vs triton np.float64(3.0)
# out24 at (0, 0, 1): minitriton 0.0, triton 3.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in15, f0_out24):
    pid = tl.program_id(0)
    f0_x16 = tl.load(f0_in15 + pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], mask=tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :] < 1, other=-1.5)
    tl.store(f0_out24 + pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], tl.minimum(tl.maximum(f0_x16 - f0_x16, -128.0), 127.0))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in15 = bf16_bits(np.full((2, 16, 16), 0, dtype=np.uint16))
f0_out24 = np.full((2, 16, 16), 0.0, dtype=np.float16)
ARGS = [f0_in15, f0_out24]
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
