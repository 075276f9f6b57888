# parity fuzz: distinct mismatch 4 on cuda (narrow_float_of_low_16_bits); shrunk to a 5-line kernel
# out21 (bf16, exact): 512 of 512 differ: at (0, 0, 0): minitriton np.float64(4294967296.0) vs triton np.float64(65536.0); at (0, 0, 1): minitriton np.float64(4294967296.0) vs triton np.float64(65536.0); at (0, 0, 2): minitriton np.float64(4294967296.0) vs triton np.float64(65536.0); at (0, 0, 3): minitriton np.float64(4294967296.0) vs triton np.float64(65536.0)
# out21 at (0, 0, 0): minitriton 4294967296.0, triton 65536.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in14, f0_out21, f0_s16):
    pid = tl.program_id(0)
    f0_x15 = tl.load(f0_in14 + pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(f0_out21 + pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], tl.minimum(tl.maximum(tl.full((16, 16), 0, tl.uint32), 0.0), 65504.0).to(tl.uint32) | tl.minimum(tl.maximum(tl.where(f0_x15 == pid, f0_s16, f0_x15), -128.0), 127.0).to(tl.int8))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in14 = np.full((2, 16, 16), -2.0625, dtype=np.float16)
f0_out21 = bf16_bits(np.full((2, 16, 16), 0, dtype=np.uint16))
f0_s16 = 0
ARGS = [f0_in14, f0_out21, f0_s16]
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
