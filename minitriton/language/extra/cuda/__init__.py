"""`triton.language.extra.cuda`: libdevice, and the grid dependency control of programmatic dependent launch.

With `launch_pdl=True` a GPU may start a kernel while the previous one on its stream still runs:
`gdc_wait()` waits until every program of that previous kernel has finished and its writes are visible, and
`gdc_launch_dependents()` lets the next such kernel start before this one ends. minitriton runs launches one
after another on its one stream, so the previous kernel has always finished: both order nothing more, as on
a GPU launched without PDL (where both are also allowed).
"""
from minitriton.language.extra.cuda import libdevice  # noqa: F401


def gdc_wait():
    """Wait for the previous kernel of the stream (already finished here)."""


def gdc_launch_dependents():
    """Allow the next kernel of the stream to start (it starts after this one here)."""
