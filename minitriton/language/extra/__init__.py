"""`triton.language.extra`: vendor libraries (`libdevice`)."""
from minitriton.language.extra import cuda, libdevice  # noqa: F401
