# parity fuzz: distinct mismatch 5 on cuda (compiler_assertion); shrunk to a 5-line kernel
# only triton raised: WorkerError: the cuda child died on this case
# Run: python this_file.py (real Triton + torch on CUDA, or TRITON_INTERPRET=1), or after minitriton.install().
import triton
import triton.language as tl

@triton.jit
def fuzz_kernel(f0_in18, f0_out24):
    pid = tl.program_id(0)
    f0_x19 = tl.load(f0_in18 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :])
    tl.store(f0_out24 + pid * 4 + tl.arange(0, 2)[:, None] * 2 + tl.arange(0, 2)[None, :], f0_x19 % f0_x19)

import numpy as np


def bf16_bits(values):
    return np.asarray(values, dtype=np.uint16)


f0_in18 = bf16_bits(np.full((2, 2, 2), 0, dtype=np.uint16))
f0_out24 = np.full((2, 2, 2), 0.0, dtype=np.float16)
ARGS = [f0_in18, f0_out24]
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
