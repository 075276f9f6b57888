"""`triton.backends`: the compiler backends installed, by name (`backends`); and `triton.backends.compiler`'s
`GPUTarget`.

minitriton compiles for no device (kernels run in Python; the emulated GPU is `triton.runtime.driver`'s), so
`backends` is empty: code that looks for an active GPU backend (`any(b.driver.is_active() for b in
backends.values())`, as Triton's test helpers do) finds none and takes its path for a machine without one.
"""
from minitriton.runtime.driver import GPUTarget  # noqa: F401 - triton.backends.compiler.GPUTarget

backends: dict = {}
