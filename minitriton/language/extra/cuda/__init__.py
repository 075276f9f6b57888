"""`triton.language.extra.cuda`."""
from minitriton.language.extra.cuda import libdevice  # noqa: F401
