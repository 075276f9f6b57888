"""parity: the same kernel sources through minitriton and through real Triton, and proof that they agree.

    python -m parity --target interpreter      # Triton's interpreter on the CPU (CI)
    python -m parity --target cuda --jobs 14   # real Triton on a CUDA GPU

Every comparison runs the two sides in separate child processes (`parity.oracle`): minitriton on NumPy
arrays in one, real Triton on torch tensors (CPU under `TRITON_INTERPRET=1`, or CUDA) in the other.
Sections: `kernels` (the host wrappers in kernels/), `probes` (one small kernel per rule of
docs/semantics.md), `fuzz` (hypothesis-generated random kernels) and `bench`.
This package imports NumPy only; torch and triton are imported in the children that need them.
See parity/README.md.
"""
