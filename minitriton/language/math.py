"""`triton.language.math`: the math functions under their `tl.math.*` names."""
from ..ops_math import (abs, ceil, cdiv, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sigmoid,  # noqa: F401
                        sin, softmax, sqrt, sqrt_rn, umulhi)
from ..ops_basic import clamp, maximum, minimum  # noqa: F401
