"""`triton.runtime.driver`: the device as Triton's CUDA driver describes it, for the emulated GPU.

Scripts written for a GPU ask the driver what they run on before they size their launches:

    DEVICE = triton.runtime.driver.active.get_active_torch_device()   # torch.device("cpu") here
    props = triton.runtime.driver.active.utils.get_device_properties(DEVICE.index)
    props["multiprocessor_count"], props["max_shared_mem"], ...       # the H200's (runtime/device.py)
    triton.runtime.driver.active.get_current_target()                 # GPUTarget("cuda", 90, 32)

The device is the profile of runtime/device.py; its tensors are torch CPU tensors (or NumPy arrays), so
`get_active_torch_device()` is the CPU. As in Triton, this module is the driver configuration: `active`,
`default`, `set_active(driver)`, `reset_active()`.
"""
from __future__ import annotations

from dataclasses import dataclass

from minitriton.runtime import device as _device


@dataclass(frozen=True)
class GPUTarget:
    """`triton.backends.compiler.GPUTarget`: backend name, architecture, warp size."""

    backend: str
    arch: int | str
    warp_size: int


class DeviceUtils:
    """`driver.active.utils`."""

    def get_device_properties(self, device=None) -> dict:
        """Triton's property dict of `device` (an index; None, 0 and "cuda" mean the one emulated GPU)."""
        _device.check_index(device)
        return _device.current().properties()


class EmulatedDriver:
    """`driver.active`: the emulated GPU (one device, index 0)."""

    def __init__(self):
        self.utils = DeviceUtils()

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        profile = _device.current()
        return GPUTarget(profile.backend, profile.arch, profile.warp_size)

    def get_active_torch_device(self):
        """The torch device the emulator's tensors live on: the CPU."""
        import torch
        return torch.device("cpu")

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        _device.check_index(device)

    def get_current_stream(self, device=None) -> int:
        """Launches run synchronously, in order: there is one stream, 0."""
        _device.check_index(device)
        return 0

    def get_device_capability(self, device=None) -> tuple:
        _device.check_index(device)
        return _device.current().capability


default = EmulatedDriver()
active = default


def set_active(driver) -> None:
    """`triton.runtime.driver.set_active(driver)`: answer with another driver object from now on."""
    global active
    active = driver


def reset_active() -> None:
    """`triton.runtime.driver.reset_active()`: back to the emulated GPU."""
    global active
    active = default
