"""`triton.language.extra.cuda.libdevice`: the same functions as `triton.language.extra.libdevice`."""
from minitriton.language.extra.libdevice import *  # noqa: F401,F403
