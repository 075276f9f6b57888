"""`triton.language.math`: the math functions under their `tl.math.*` names."""
from minitriton.semantics.math import (  # noqa: F401
    abs, ceil, cdiv, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sigmoid, sin, softmax, sqrt,
    sqrt_rn, umulhi)
from minitriton.semantics.elementwise import clamp, maximum, minimum  # noqa: F401
