# parity fuzz: distinct mismatch 5 on cuda (division_guard_minus_one_dropped); shrunk to a 11-line kernel
# out20 (fp32, exact): 512 of 1024 differ: at (0, 0, 2): minitriton np.float64(95.0) vs triton np.float64(1.0); at (0, 0, 3): minitriton np.float64(95.0) vs triton np.float64(1.0); at (0, 0, 6): minitriton np.float64(95.0) vs triton np.float64(1.0); at (0, 0, 7): minitriton np.float64(95.0) vs triton np.float64(1.0)
# out20 at (0, 0, 2): minitriton 95.0, triton 1.0
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in1, f0_in3, f0_out19, f0_out20, f0_s5, f0_s16):
    pid = tl.program_id(0)
    f0_x2 = tl.load(f0_in1 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    f0_x4 = tl.load(f0_in3 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    if f0_s5 > 2:
        f0_v8 = tl.minimum(tl.maximum(tl.full((16, 32), 0.0, tl.float16), -128.0), 127.0)
    else:
        f0_v8 = f0_x4.to(tl.float32)
    tl.store(f0_out19 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.where(f0_x4 ^ f0_x2, f0_x4, f0_v8))
    tl.store(f0_out20 + pid * 512 + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.where(tl.full((16, 32), 92, tl.int64) // tl.where((f0_x4 == 0) | (f0_x4 == -1), 3, f0_x4) - tl.full((16, 32), 54, tl.int16) > pid, f0_x2 * f0_x2 ^ tl.full((16, 32), 95, tl.int16) >> (f0_x2 & 31), tl.minimum(tl.maximum(tl.full((16, 32), 0.5, tl.float16), -65504.0), 65504.0).to(tl.int32) >> (f0_s16 & 31) ^ tl.where(f0_x2 != f0_x2, f0_x4, f0_x4)))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in1 = np.full((2, 16, 32), 0, dtype=np.int32)
f0_in3 = np.full((2, 16, 32), 1, dtype=np.int16)
f0_out19 = np.full((2, 16, 32), 0.0, dtype=np.float32)
f0_out20 = np.full((2, 16, 32), 0.0, dtype=np.float32)
f0_s5 = 0
f0_s16 = 0
ARGS = [f0_in1, f0_in3, f0_out19, f0_out20, f0_s5, f0_s16]
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
