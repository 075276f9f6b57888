"""`triton.tools` for minitriton: host-side helpers (`tensor_descriptor`)."""
