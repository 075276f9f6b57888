"""What `torch.cuda` answers under `python -m minitriton run`: the emulated GPU's identity, not "no GPU".

Scripts written for a GPU choose configurations from the device they run on, often by asking torch rather
than Triton's driver (tutorial 06: `torch.cuda.get_device_capability()[0] >= 9` picks the TMA kernels;
tutorial 08: `torch.cuda.get_device_properties("cuda").multi_processor_count` sizes its persistent grid).
Under `python -m minitriton run` these questions get the emulated device's answers (runtime/device.py:
capability (9, 0), 132 SMs, ...), and `torch.cpu.set_stream` exists (a no-op: the CPU is the scripts' `DEVICE`
and has one stream). The emulated GPU's memory is the host's, so a tensor a script asks for on "cuda"
(`device="cuda"`, `.cuda()`, `.to("cuda")`; tutorials 09-11 name the device so) is a CPU tensor, the kind
`DEVICE` (`triton.runtime.driver.active.get_active_torch_device()`) gives: `torch.cuda.is_available()` stays
False and `x.is_cuda` is False, so torch never takes a CUDA-only path. Only `run` does this, never
`minitriton.install()`, so a program that imports minitriton sees torch as it is. docs/device.md lists the
answers.
"""
from __future__ import annotations

from types import SimpleNamespace

from minitriton.memory.host import after_import
from minitriton.runtime import device


def device_properties(index=None) -> SimpleNamespace:
    """The fields of torch's `_CudaDeviceProperties` that describe the emulated GPU."""
    device.check_index(index)
    p = device.current()
    return SimpleNamespace(
        name=p.name, gcnArchName=p.name, major=p.capability[0], minor=p.capability[1],
        multi_processor_count=p.multiprocessor_count, total_memory=p.total_memory, L2_cache_size=p.l2_cache_size,
        warp_size=p.warp_size, max_threads_per_block=p.max_threads_per_block,
        max_threads_per_multi_processor=p.max_threads_per_sm, regs_per_multiprocessor=p.max_num_regs,
        shared_memory_per_block=p.shared_mem_per_block, shared_memory_per_block_optin=p.max_shared_mem,
        shared_memory_per_multiprocessor=p.shared_mem_per_sm, clock_rate=p.sm_clock_rate,
        memory_clock_rate=p.mem_clock_rate, memory_bus_width=p.mem_bus_width, is_integrated=0,
        is_multi_gpu_board=0)


def device_capability(index=None) -> tuple:
    device.check_index(index)
    return device.current().capability


def device_name(index=None) -> str:
    return device_properties(index).name


def set_stream(stream) -> None:
    """`torch.cpu.set_stream(stream)`, which torch's CPU module lacks: scripts select a stream of their
    `DEVICE` (`getattr(torch, DEVICE.type).set_stream(...)`, tutorial 02's benchmark); the emulator has one,
    and launches run in order, so there is nothing to select."""


def _is_cuda(device) -> bool:
    """A CUDA device as torch takes one: "cuda", "cuda:0", torch.device("cuda"), or an index (device=0)."""
    if isinstance(device, int) and not isinstance(device, bool):
        return True
    return (device.split(":")[0] if isinstance(device, str) else getattr(device, "type", None)) == "cuda"


def _host_memory(torch):
    """A torch function mode under which the device "cuda" is the CPU (the emulated GPU's memory)."""
    class HostMemory(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:
                return args[0]
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to:
                args = tuple("cpu" if _is_cuda(a) else a for a in args)
            return func(*args, **kwargs)
    return HostMemory()


class DeviceContext:
    """`torch.cuda.device(index)`: GPU libraries enter it around launches with their tensors' device index
    (None for the CPU tensors the emulator uses); there is one emulated GPU to select, so it selects nothing."""

    def __init__(self, index):
        device.check_index(index)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _answer(torch) -> None:
    torch.cuda.device = DeviceContext
    torch.cuda.get_device_properties = device_properties
    torch.cuda.get_device_capability = device_capability
    torch.cuda.get_device_name = device_name
    if not hasattr(torch.cpu, "set_stream"):
        torch.cpu.set_stream = set_stream
    _host_memory(torch).__enter__()   # for the rest of the run


def emulate() -> None:
    """Make torch.cuda's device queries answer for the emulated GPU (now, or when torch is imported)."""
    after_import("torch", _answer)
