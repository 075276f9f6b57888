"""`triton.language.extra.cuda`."""
from . import libdevice  # noqa: F401
