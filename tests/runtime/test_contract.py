"""The runtime's contract (values/running.py, memory/events.py's Observer; docs/architecture.md): the group an op
finds running, the launch its observers are given and the observers themselves provide every member their
protocol declares, in a real launch with both observers attached."""
from __future__ import annotations

import numpy as np

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.memory.events import Observer
from minitriton.values import programs
from minitriton.values.running import LaunchMemory, RunningGroup, RunningLaunch


@triton.jit
def scaled_copy(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


def _members(protocol) -> set:
    return {name for cls in protocol.__mro__ if cls.__module__ == protocol.__module__
            for name in list(vars(cls).get("__annotations__", {})) + [k for k, v in vars(cls).items() if callable(v)]}


def test_a_running_group_its_launch_and_its_observers_keep_the_contract(monkeypatch):
    seen = []
    set_current = programs.set_current

    def spy(group):
        if group is not None:
            seen.append(group)
        set_current(group)

    monkeypatch.setattr(programs, "set_current", spy)
    x = np.arange(40, dtype=np.float32)
    out = np.zeros_like(x)
    with minitriton.set_options(sanitize=True), minitriton.record():
        scaled_copy[(3,)](x, out, 40, SCALE=2, BLOCK=16)
    np.testing.assert_array_equal(out, 2 * x)
    assert seen
    group = seen[0]
    missing = {name for name in _members(RunningGroup) if not hasattr(group, name)}
    assert not missing and isinstance(group, RunningGroup) and isinstance(group, LaunchMemory)
    # what the ops read is the launch's own state, not a copy
    assert group.grid == (3, 1, 1) and group.constexprs == {"SCALE": 2, "BLOCK": 16}
    assert group.allocations is group.launch.allocations and group.timed_out is group.launch.timed_out
    assert group.pid_tuple(2) == (2,)
    launch = group.launch
    assert not {name for name in _members(RunningLaunch) if not hasattr(launch, name)}
    assert isinstance(launch, RunningLaunch)
    assert len(group.observers) == 2
    for observer in group.observers:
        assert isinstance(observer, Observer)


def test_the_protocols_name_what_they_declare():
    """The members the architecture test holds code to are those the protocols carry at run time."""
    assert {"pids", "program_ids", "grid", "debug", "meter", "journal", "emit", "before_store", "allocations",
            "add_allocation", "kernel_cache", "branch_types", "timed_out"} <= _members(RunningGroup)
    assert "launch" not in _members(RunningGroup)
    assert {"on_event", "commit", "discard", "reset"} <= _members(Observer)
