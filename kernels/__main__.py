"""`python -m kernels [NAME ...]`: each kernel checked on minitriton against its float64 reference (kernels.check)."""
import sys

from kernels.check import main

sys.exit(main())
