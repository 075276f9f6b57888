# parity fuzz: distinct mismatch 1 on cuda (UNEXPLAINED); shrunk to a 5-line kernel
# only triton raised: WorkerError: the cuda child died on this case
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in3, f0_out9):
    pid = tl.program_id(0)
    f0_x4 = tl.load(f0_in3 + pid * 2 + tl.arange(0, 2))
    tl.store(f0_out9 + pid * 2 + tl.arange(0, 2), (f0_x4.to(tl.float16) % tl.full((2,), 0, tl.uint32)).to(tl.bfloat16))

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in3 = np.full((2, 2), 0, dtype=np.int32)
f0_out9 = np.full((2, 2), 0.0, dtype=np.float32)
ARGS = [f0_in3, f0_out9]
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
