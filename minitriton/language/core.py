"""`triton.language.core`: in Triton the module that defines what `triton.language` exports. Libraries reach
names through it, e.g. `tl.core.CONSTEXPR_0` as a default argument (flash-linear-attention's argsort)."""
from minitriton.language import *  # noqa: F401,F403 - the same objects as tl's
from minitriton.semantics.constexpr import constexpr

CONSTEXPR_0 = constexpr(0)
