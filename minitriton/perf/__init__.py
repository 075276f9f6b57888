"""The GPU cost model: what a launch minitriton ran would cost on a real GPU, from its recorded traffic.

`model` holds the arithmetic (parts, roofline), `devices` the device profiles (H100 calibrated on measured
launches, H200 from spec sheets), `launch` a launch record's features. `minitriton.record()` gives every
launch record a "model"; `triton.testing.do_bench` returns it under `MINITRITON_BENCH=model`.
"""
