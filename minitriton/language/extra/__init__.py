"""`triton.language.extra`: vendor libraries (`libdevice`)."""
from . import cuda, libdevice  # noqa: F401
