# parity fuzz: distinct mismatch 0 on cuda (abs_of_int_min); shrunk to a 5-line kernel
# out7 (fp32, exact): 8 of 8 differ: at (0, 0, 0): minitriton np.float64(-32768.0) vs triton np.float64(32768.0); at (0, 0, 1): minitriton np.float64(-32768.0) vs triton np.float64(32768.0); at (0, 1, 0): minitriton np.float64(-32768.0) vs triton np.float64(32768.0); at (0, 1, 1): minitriton np.float64(-32768.0) vs triton np.float64(32768.0)
# out7 at (0, 0, 0): minitriton -32768.0, triton 32768.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in1, f0_out7, f0_s5):
    pid = tl.program_id(0)
    f0_x2 = tl.load(f0_in1 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])
    tl.store(f0_out7 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], f0_s5 & tl.abs(f0_x2))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in1 = np.full((2, 2, 2), -32768, dtype=np.int16)
f0_out7 = np.full((2, 2, 2), 0.0, dtype=np.float32)
f0_s5 = -1
ARGS = [f0_in1, f0_out7, f0_s5]
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
