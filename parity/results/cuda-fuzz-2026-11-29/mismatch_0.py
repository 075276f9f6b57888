# parity fuzz mismatch 0 (target cuda, shrunk by hypothesis)
# mismatch: only triton raised: CompilationError('def fuzz_kernel(f0_in1, f0_in3, f0_in5, f0_out11, f0_out12, f0_n8):\n pid = tl.program_id(0)\n f0_x2 = tl.load(f0_in1 + pid * 8 + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], mask=tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :] < 1, other=0)\n f0_x4 = tl.load(f0_in3 + pid * 4 + tl.arange(0, 4), mask=tl.arange(0, 4) < 1, other=0)\n f0_x6 = tl.load(f0_in5 + pid 
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in1, f0_in3, f0_in5, f0_out11, f0_out12, f0_n8):
    pid = tl.program_id(0)
    f0_x2 = tl.load(f0_in1 + pid * 8 + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], mask=tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :] < 1, other=0)
    f0_x4 = tl.load(f0_in3 + pid * 4 + tl.arange(0, 4), mask=tl.arange(0, 4) < 1, other=0)
    f0_x6 = tl.load(f0_in5 + pid * 2 + tl.arange(0, 2))
    f0_v7 = ((f0_x2 + f0_x2)).to(tl.bfloat16)
    for f0_i9 in range(0, f0_n8 + pid):
        f0_v7 = tl.maximum(f0_v7, ((f0_x2 + f0_x2)).to(tl.bfloat16))
    f0_v10 = tl.minimum(tl.maximum((f0_x2).to(tl.float32), -80.0), 80.0)
    tl.store(f0_out11 + pid * 8 + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], f0_v10)
    tl.store(f0_out12 + pid * 8 + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.exp(f0_v10))

import numpy as np


def bf16_bits(values):
    return np.array(values, dtype=np.uint16)


f0_in1 = np.array([[[7, 3, 0, -4], [-4, -9, -8, -9]], [[-6, 6, 3, 8], [0, 2, 9, 4]]], dtype=np.int8)
f0_in3 = np.array([[3, 1, 1, 8], [-4, 6, 3, -9]], dtype=np.int8)
f0_in5 = np.array([[-2, 7], [1, -9]], dtype=np.int8)
f0_out11 = np.array([[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]], dtype=np.float32)
f0_out12 = np.array([[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]], dtype=np.float32)
f0_n8 = 0
ARGS = [f0_in1, f0_in3, f0_in5, f0_out11, f0_out12, f0_n8]
GRID = (2,)
OUTPUTS = '{"f0_out11": {"minitriton": [[[7.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], [[-6.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]], "triton": null}, "f0_out12": {"minitriton": [[[1096.6331787109375, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]], [[0.002478752052411437, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]], "triton": null}}'  # JSON: per output, each side's values


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
