"""A launch that fails at a kernel error is recorded up to the failure (`minitriton.record`).

References: the counters of the programs before the failing one equal those of the same kernel launched with
the grid cut just before it (which runs without error); the failing program's own counts, its lanes inside
and outside the tensor and the programs of its trace come from the kernel's index arithmetic in NumPy.
"""
import inspect

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl

N, BLOCK = 98_432, 1024      # 96 whole blocks and 128 elements: program 96's lanes 128…1023 run past the end


@triton.jit
def copy_unmasked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)


@triton.jit
def copy_store_unmasked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x)


@triton.jit
def shifted_rows(x_ptr, out_ptr, R, C, SHIFT, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.program_id(1) * BC + tl.arange(0, BC)
    inside = (rows[:, None] < R) & (cols[None, :] < C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=inside)
    tl.store(out_ptr + rows[:, None] * C + cols[None, :] - SHIFT, x, mask=inside)


def line_of(kernel, text: str) -> int:
    """The file line of the first kernel line containing `text`."""
    lines, first = inspect.getsourcelines(kernel.fn if hasattr(kernel, "fn") else kernel)
    return first + next(i for i, line in enumerate(lines) if text in line)


def failed_record(kernel, grid, *args, **kwargs):
    """The record of a launch that raises OutOfBoundsError, every program traced with its accesses."""
    programs = list(np.ndindex(*(tuple(grid) + (1,) * (3 - len(grid)))))
    with pytest.raises(minitriton.OutOfBoundsError) as raised:
        with minitriton.record(trace_programs=programs, accesses=True) as rec:
            kernel[grid](*args, **kwargs)
    assert len(rec.launches) == 1
    return rec.last, raised.value


def reference_counters(kernel, programs: int, n_programs: int, *args, **kwargs) -> dict:
    """Per tensor, per field: the per-program counts of `kernel` launched on its first `programs` programs
    alone (no error there), padded with zeros to `n_programs`."""
    with minitriton.record() as rec:
        kernel[(programs,)](*args, **kwargs)
    return {name: {field: per + [0] * (n_programs - programs) for field, per in t["per_program"].items()}
            for name, t in rec.last["tensors"].items()}


def test_the_failed_launch_is_recorded_up_to_the_failing_program():
    x = np.arange(N, dtype=np.float32)
    out = np.zeros_like(x)
    grid = (99,)                          # programs 97 and 98 would fail too: they never run
    record, error = failed_record(copy_unmasked, grid, x, out, N, BLOCK=BLOCK)
    assert error.diagnostic.program == (96,)
    assert record["error"] == {"type": "OutOfBoundsError", "kind": "out_of_bounds", "program": [96],
                               "line": line_of(copy_unmasked, "tl.load(")}
    assert record["num_programs"] == 99
    reference = reference_counters(copy_unmasked, 96, 99, np.arange(N, dtype=np.float32), np.zeros(N, np.float32),
                                   N, BLOCK=BLOCK)
    for name, fields in reference.items():
        assert record["tensors"][name]["per_program"] == fields, name
        assert record["tensors"][name]["totals"]["loaded_bytes"] == sum(fields["loaded_bytes"])
    assert record["tensors"]["x_ptr"]["totals"]["loaded_bytes"] == 96 * BLOCK * 4
    assert [t["program"] for t in record["trace"]] == [[p] for p in range(97)]
    offs = 96 * BLOCK + np.arange(BLOCK)
    failing = record["trace"][-1]["tensors"]
    assert failing["x_ptr"]["outside"] == offs[offs >= N].tolist()          # 896 lanes past the end
    assert failing["x_ptr"]["loaded"] == offs[offs < N].tolist()
    assert failing["out_ptr"] == {"loaded": [], "stored": [], "atomic": []}
    assert "outside" not in record["trace"][95]["tensors"]["x_ptr"]
    last = [a for a in record["accesses"] if a["program"] == [96]]
    assert last == [{"program": [96], "kind": "load", "tensor": "x_ptr", "line": record["error"]["line"],
                     "offsets": offs[offs < N].tolist(), "masked": [], "outside": offs[offs >= N].tolist()}]
    assert all("outside" not in a for a in record["accesses"] if a["program"] != [96])


def test_the_failing_programs_accesses_before_its_error_count():
    x = np.arange(N, dtype=np.float32)
    out = np.zeros_like(x)
    record, _ = failed_record(copy_store_unmasked, (97,), x, out, N, BLOCK=BLOCK)
    assert record["error"]["program"] == [96]
    assert record["error"]["line"] == line_of(copy_store_unmasked, "tl.store(")
    reference = reference_counters(copy_store_unmasked, 96, 97, np.arange(N, dtype=np.float32),
                                   np.zeros(N, np.float32), N, BLOCK=BLOCK)
    offs = 96 * BLOCK + np.arange(BLOCK)
    inside = int((offs < N).sum())
    # program 96 loaded its 128 elements (896 lanes masked off), then its store raised: nothing stored
    reference["x_ptr"]["loaded_elements"][96] = inside
    reference["x_ptr"]["loaded_bytes"][96] = inside * 4
    reference["x_ptr"]["unique_loaded_bytes"][96] = inside * 4
    reference["x_ptr"]["masked_load_lanes"][96] = BLOCK - inside
    for name, fields in reference.items():
        assert record["tensors"][name]["per_program"] == fields, name
    steps = [a for a in record["accesses"] if a["program"] == [96]]
    assert [(a["kind"], a["tensor"]) for a in steps] == [("load", "x_ptr"), ("store", "out_ptr")]
    assert steps[0]["masked"] == offs[offs >= N].tolist() and "outside" not in steps[0]
    assert steps[1]["offsets"] == offs[offs < N].tolist()
    assert steps[1]["outside"] == offs[offs >= N].tolist()
    assert record["trace"][-1]["tensors"]["out_ptr"]["outside"] == offs[offs >= N].tolist()


def test_a_2d_failure_keeps_the_lanes_before_the_start():
    R, C, BR, BC, SHIFT = 10, 12, 4, 8, 3
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    out = np.zeros_like(x)
    record, error = failed_record(shifted_rows, (3, 2), x, out, R, C, SHIFT, BR=BR, BC=BC)
    assert record["error"]["program"] == [0, 0]           # the first program's lanes 0…2 point before out
    rows, cols = np.arange(BR)[:, None], np.arange(BC)[None, :]
    target = (rows * C + cols - SHIFT)[(rows < R) & (cols < C)]
    assert record["trace"][0]["tensors"]["out_ptr"]["outside"] == sorted(target[target < 0].tolist())
    assert record["trace"][0]["tensors"]["out_ptr"]["stored"] == sorted(target[target >= 0].tolist())
    assert [t["program"] for t in record["trace"]] == [[0, 0]]
    assert record["tensors"]["out_ptr"]["totals"]["stored_bytes"] == 0
    assert record["tensors"]["x_ptr"]["per_program"]["loaded_elements"][0] == BR * BC
    assert error.diagnostic.fields["offsets"].count == (target < 0).sum()


def test_a_launch_without_error_has_no_error_nor_outside_lanes():
    x = np.arange(N, dtype=np.float32)
    with minitriton.record(trace_programs=[(95,), (96,)], accesses=True) as rec:
        copy_store_unmasked[(96,)](x, np.zeros_like(x), N, BLOCK=BLOCK)
    assert "error" not in rec.last
    assert all(set(t["tensors"]["x_ptr"]) == {"loaded", "stored", "atomic"} for t in rec.last["trace"])
    assert all("outside" not in a for a in rec.last["accesses"])


def test_a_failure_outside_a_recording_records_nothing_and_a_compile_error_no_launch():
    x = np.arange(N, dtype=np.float32)
    with pytest.raises(minitriton.OutOfBoundsError):
        copy_unmasked[(97,)](x, np.zeros_like(x), N, BLOCK=BLOCK)

    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)) + undefined_name)  # noqa: F821

    with pytest.raises(minitriton.CompilationError), minitriton.record() as rec:
        broken[(1,)](x, BLOCK=16)
    assert len(rec.launches) == 0        # it did not run: no record says it did


@triton.jit
def assert_small(x_ptr, out_ptr, LIMIT, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)
    tl.device_assert(x < LIMIT, "x too large")


def test_a_failed_device_assert_is_recorded_after_the_programs_accesses():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.raises(minitriton.DeviceAssertionError):
        with minitriton.record(trace_programs=range(8), accesses=True) as rec:
            assert_small[(8,)](x, out, 27.0, BLOCK=8, debug=True)     # program 3 holds 27
    record = rec.last
    assert record["error"] == {"type": "DeviceAssertionError", "kind": record["error"]["kind"], "program": [3],
                               "line": line_of(assert_small, "tl.device_assert(")}
    assert [t["program"] for t in record["trace"]] == [[0], [1], [2], [3]]
    assert record["trace"][3]["tensors"]["out_ptr"] == {"loaded": [], "stored": list(range(24, 32)), "atomic": []}
    assert record["tensors"]["x_ptr"]["per_program"]["loaded_elements"] == [8] * 4 + [0] * 4
    assert record["tensors"]["out_ptr"]["per_program"]["stored_bytes"] == [32] * 4 + [0] * 4
    assert out[:32].tolist() == x[:32].tolist()
