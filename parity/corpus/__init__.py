"""A corpus of real Triton kernels from open-source projects, run on minitriton, on Triton's interpreter and on
a GPU: `python -m parity.corpus` (see parity/README.md, "Real libraries")."""
