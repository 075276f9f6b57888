"""The sanitizers: races, order-dependent reads, reads of unwritten memory, unwritten outputs.

Each finding is asserted with its message, and with one program per pass as well as grouped, since the
findings must not depend on how programs are grouped.
"""
import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.observers import sanitizer
from minitriton.errors import SanitizerError


@pytest.fixture(params=[None, 1], ids=["grouped", "one-per-pass"])
def sanitize(request):
    with minitriton.set_options(sanitize=True, group_size=request.param):
        yield


@triton.jit
def forgot_pid(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # every program writes the same elements
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy(x_ptr, out_ptr, n, STORE_N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < STORE_N)


@triton.jit
def shift_left_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs + 1, mask=offs + 1 < n)
    tl.store(x_ptr + offs, v, mask=offs < n)


@triton.jit
def scale_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def count(counter_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(counter_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


def test_race_between_programs_names_both(sanitize):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    with pytest.raises(SanitizerError) as info:
        forgot_pid[(4,)](x, out, 100, BLOCK=32)
    text = str(info.value)
    assert text.startswith("tl.store races with program (0,): both write `out_ptr` (test_sanitizer.py:")
    assert "program (1,))" in text
    assert "offsets 0…31 of `out_ptr` are written by programs (0,) and (1,) in one launch without atomics" in text
    assert ("fix: the kernel never reads tl.program_id, so every program writes the same elements: start each "
            "program's block at its id, offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n") in text
    assert info.value.program == (1,)


def test_read_of_an_element_another_program_writes_is_order_dependent(sanitize):
    x = np.arange(100, dtype=np.float32)
    with pytest.raises(SanitizerError) as info:
        shift_left_in_place[(4,)](x, 100, BLOCK=32)
    text = str(info.value)
    assert text.startswith("tl.store writes `x_ptr` elements that program (0,) reads in the same launch")
    assert "program (1,))" in text and "offsets 32:" in text
    assert "the result depends on the order in which programs run" in text


def test_in_place_update_of_own_elements_is_fine(sanitize):
    x = np.arange(100, dtype=np.float32)
    scale_in_place[(4,)](x, 100, BLOCK=32)
    np.testing.assert_array_equal(x, np.arange(100, dtype=np.float32) * 2)


def test_atomics_from_many_programs_are_not_races(sanitize):
    x = np.ones(100, np.float32)
    counter = np.zeros(1, np.float32)
    count[(4,)](counter, x, 100, BLOCK=32)
    assert counter[0] == 100


def test_unwritten_tail_names_the_program_whose_mask_excluded_it(sanitize):
    x = np.arange(100, dtype=np.float32)
    out = np.empty(100, np.float32)
    sanitizer.registry.register(out)
    copy[(4,)](x, out, 100, 90, BLOCK=32)  # stores only offs < 90: elements 90..99 stay unwritten
    assert sanitizer.unwritten_report(out, "out", (4,)) == \
        "elements 90…99 of out were never written: the store masks of programs 2, 3 excluded them"
    x = np.arange(128, dtype=np.float32)
    out = np.empty(128, np.float32)
    sanitizer.registry.register(out)
    copy[(4,)](x, out, 128, 100, BLOCK=32)  # only program 3 covers 96..127
    assert sanitizer.unwritten_report(out, "out", (4,)) == \
        "elements 100…127 of out were never written: program 3's store mask excluded them"


def test_unwritten_without_any_store_says_so(sanitize):
    x = np.arange(100, dtype=np.float32)
    out = np.empty(128, np.float32)
    sanitizer.registry.register(out)
    copy[(3,)](x, out, 100, 96, BLOCK=32)  # 3 programs cover 0..95; 96..127 are never touched
    assert sanitizer.unwritten_report(out, "out", (3,)) == \
        "elements 96…127 of out were never written: no program stored there (check the grid size and the offsets)"


def test_fully_written_output_has_no_report(sanitize):
    x = np.arange(100, dtype=np.float32)
    out = np.empty(100, np.float32)
    sanitizer.registry.register(out)
    copy[(4,)](x, out, 100, 100, BLOCK=32)
    assert sanitizer.unwritten_report(out, "out", (4,)) is None


def test_load_of_never_written_memory(sanitize):
    x = np.empty(100, np.float32)
    sanitizer.registry.register(x)  # e.g. made by minitriton.testing.empty: no value yet
    out = np.zeros(100, np.float32)
    with pytest.raises(SanitizerError) as info:
        copy[(4,)](x, out, 100, 100, BLOCK=32)
    text = str(info.value)
    assert text.startswith("tl.load reads `x_ptr` elements that were never written")
    assert "program (0,))" in text and "offsets 0…31 of `x_ptr` hold no value yet" in text


def test_sanitizer_off_by_default_lets_races_through():
    assert minitriton.options().sanitize is False
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    forgot_pid[(4,)](x, out, 100, BLOCK=32)  # a GPU would not complain either
    np.testing.assert_array_equal(out[:32], x[:32])
