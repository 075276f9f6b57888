"""`triton.tools.tensor_descriptor`: the host-side `TensorDescriptor` (minitriton.memory.host_descriptor)."""
from minitriton.memory.host_descriptor import TensorDescriptor

__all__ = ["TensorDescriptor"]
