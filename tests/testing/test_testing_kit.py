"""minitriton.testing as a kit: poisoned outputs, layouts, the mask-breaking strategies and check_kernel.

The kit's findings are checked against facts computed here independently: IEEE bit patterns written out
by hand, strides worked out from the layout's definition, the minimal failing sizes of simple predicates.
"""
from __future__ import annotations

import math
import re
import subprocess
import sys

import hypothesis
import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton import testing as mtt
from minitriton.testing import KernelCheckError, Layout, check_kernel, kernel_property
from minitriton.testing import strategies as mts

ROOT = __file__.rsplit("/tests/", 1)[0]




# ------------------------------------------------------------------------------------------ the module

def _python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_importing_the_kit_does_not_import_hypothesis():
    out = _python("import sys, minitriton, minitriton.testing as t\n"
                  "print('hypothesis' in sys.modules)\n"
                  "t.empty(3); t.assert_close(1.0, 1.0)\n"
                  "print('hypothesis' in sys.modules)\n"
                  "t.strategies\n"
                  "print('hypothesis' in sys.modules, callable(t.check_kernel), t.check_kernel.__module__)")
    assert out.splitlines() == ["False", "False", "True True minitriton.testing.check"]


def test_triton_testing_names_are_kept():
    for name in ("do_bench", "assert_close", "Benchmark", "Mark", "perf_report"):
        assert callable(getattr(mtt, name))
    with pytest.raises(AssertionError, match=r"1 of 3 elements differ \(atol=0.01, rtol=0.0\); first at index "
                                             r"\(2,\): 3.5 vs 3.0"):
        mtt.assert_close(np.array([1.0, 2.0, 3.5]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AttributeError, match="has no attribute 'nonsense'"):
        mtt.nonsense  # noqa: B018
    assert {"strategies", "check_kernel", "empty", "kernel_property"} <= set(dir(mtt))


def test_install_aliases_triton_testing_to_the_package():
    out = _python("import minitriton; minitriton.install()\n"
                  "import triton.testing, minitriton.testing\n"
                  "print(triton.testing is minitriton.testing, triton.testing.empty(2).dtype)")
    assert out == "True float32"


# ------------------------------------------------------------------------------------------ poison

# The patterns, written out from IEEE 754: sign 0, exponent all ones, quiet bit set, then a payload.
POISON = {np.float16: 0x7EAD, np.float32: 0x7FEDBEEF, np.float64: 0x7FFDBEEFDEADBEEF,
          np.int8: -83, np.uint8: 0xAD, np.int16: -16657, np.uint16: 0xBEEF,
          np.int32: -559038737, np.uint32: 0xDEADBEEF, np.int64: -2401053088876216593,
          np.uint64: 0xDEADBEEFDEADBEEF}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.mark.parametrize("dtype", list(POISON), ids=lambda d: np.dtype(d).name)
def test_empty_is_poisoned(dtype):
    a = mtt.empty((2, 3), dtype)
    assert a.shape == (2, 3) and a.dtype == dtype
    if np.dtype(dtype).kind == "f":
        assert np.isnan(a).all()
        bits = a.view(UINT[a.itemsize])
        assert (bits == POISON[dtype]).all()
        exponent_bits = {2: 5, 4: 8, 8: 11}[a.itemsize]
        mantissa = a.itemsize * 8 - 1 - exponent_bits
        assert (int(bits[0, 0]) >> (mantissa - 1)) & 1 == 1  # quiet NaN: arithmetic keeps it quiet
    else:
        assert (a == POISON[dtype]).all()
    assert mtt.unwritten(a).all()
    alt = mtt.empty(4, dtype, alternate=True)
    assert not mtt.unwritten(alt).any() and mtt.unwritten(alt, alternate=True).all()


def test_empty_bf16_and_bool():
    b = mtt.empty(5, "bf16")
    assert isinstance(b, minitriton.Buffer) and b.triton_dtype == tl.bfloat16
    assert (b.array == 0x7FED).all() and np.isnan(b.to_float32()).all()
    assert mtt.empty(2, tl.bfloat16).array.dtype == np.uint16
    with pytest.raises(TypeError, match="a bool array has no spare bit pattern to poison; allocate int8"):
        mtt.empty(3, bool)
    like = mtt.empty_like(np.zeros((4, 2), np.int16))
    assert like.shape == (4, 2) and like.dtype == np.int16 and (like == -16657).all()


@triton.jit
def k_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_assert_written_names_exactly_the_unwritten_elements():
    x = np.arange(300, dtype=np.float32)
    out = mtt.empty(300, np.float32)
    k_copy[(2,)](x, out, 300, BLOCK=128)  # grid too small: 256..299 never written
    expected = np.zeros(300, bool)
    expected[256:] = True
    np.testing.assert_array_equal(mtt.unwritten(out), expected)
    with pytest.raises(AssertionError) as info:
        mtt.assert_written(out, "out")
    assert str(info.value) == ("elements 256…299 of `out` were never written (44 of 300; flat indices in C order): "
                               "still the poison value minitriton.testing.empty filled the output with")
    k_copy[(3,)](x, out, 300, BLOCK=128)
    mtt.assert_written(out)
    np.testing.assert_array_equal(out, x)


def test_unwritten_message_2d_and_many_runs():
    bad = np.zeros((3, 4), bool)
    bad[0, 1] = bad[0, 3] = bad[1, 2] = bad[2, 0] = bad[2, 2] = True
    text = mtt.poison.unwritten_message(bad, "y")
    assert text.startswith("elements 1, 3, 6, 8, … (5 in all) of `y` were never written (5 of 12, first at index "
                           "(0, 1); flat indices in C order)")


def _strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def test_layout_places_views_as_defined():
    # offset 3, then a 2 x 5 array with row padding 2: rows 7 elements apart
    v, base = Layout(offset=3, tail=1, pad=(0, 2)).allocate((2, 5), np.dtype(np.float32), 0x7FEDBEEF)
    assert v.shape == (2, 5) and _strides(v) == (7, 1) and base.size == 3 + 2 * 7 + 1
    assert v.__array_interface__["data"][0] - base.__array_interface__["data"][0] == 3 * 4
    # transposed: the physical array is 5 x 2 (view axis 1 outermost), taking every 2nd element of its
    # 3-element physical rows: view axis 0 steps 2 elements, view axis 1 steps one physical row (3)
    v, base = Layout(order=(1, 0), steps=(1, 2)).allocate((2, 5), np.dtype(np.int32), 0xDEADBEEF)
    assert v.shape == (2, 5) and _strides(v) == (2, 3) and base.size == 5 * 3
    # reversed 1-D: negative stride, the first element is the last of the buffer
    v, base = Layout(flip=(True,), steps=(3,)).allocate(4, np.dtype(np.float64), 0x7FFDBEEFDEADBEEF)
    assert _strides(v) == (-3,) and base.size == 10
    v[...] = [1, 2, 3, 4]
    np.testing.assert_array_equal(base[[9, 6, 3, 0]], [1, 2, 3, 4])
    assert np.isnan(base[[1, 2, 4, 5, 7, 8]]).all()
    assert Layout().is_plain() and not Layout(offset=1).is_plain()
    with pytest.raises(ValueError, match=r"Layout.order \(0, 0\) is not a permutation of the 2 axes"):
        Layout(order=(0, 0)).allocate((2, 2), np.dtype(np.float32), 0)


def test_written_outside_finds_writes_into_padding():
    out = mtt.empty((2, 3), np.float32, layout=Layout(offset=1, pad=(0, 2)))
    base = out.base
    out[...] = 1.0
    assert mtt.poison.written_outside(out, base).size == 0
    base[1 + 3] = 5.0  # the padding after row 0
    np.testing.assert_array_equal(mtt.poison.written_outside(out, base), [4])


def test_describe_array():
    assert mtt.poison.describe_array(np.array([1.0, -0.0, np.nan], np.float32)) == "float32[3] = [1.0, -0.0, nan]"
    v = mtt.empty((2, 2), np.int32, layout=Layout(offset=2, pad=(0, 1)))
    v[...] = 7
    assert mtt.poison.describe_array(v) == ("int32[2, 2] (strides (3, 1), first element at offset 2 of a "
                                            "8-element buffer) = [[7, 7], [7, 7]]")
    assert mtt.poison.describe_array(np.zeros(40, np.int8)).startswith("int8[40] = [0, 0, 0, ..., 0, 0, 0]")


# ------------------------------------------------------------------------------------------ strategies

NO_EXPLAIN = [p for p in hypothesis.Phase if p is not hypothesis.Phase.explain]


def _first(strategy, predicate, max_examples=2000):
    """The simplest example satisfying `predicate`, as hypothesis' shrinker finds it."""
    return find(strategy, predicate, settings=settings(database=None, max_examples=max_examples, phases=NO_EXPLAIN))


def test_sizes_cover_the_block_boundaries_and_shrink_to_them():
    special = mts.boundary_sizes(128, 0, 16 * 128 + 1)
    assert {0, 1, 127, 128, 129, 255, 256, 257, 2049} <= set(special)
    assert any(s > 128 and all(s % p for p in range(2, s)) for s in special)  # a prime above the block
    for n in (0, 1, 127, 128, 129, 255, 256, 257, 2039, 2049):
        assert _first(mts.sizes(block=128), lambda v: v == n) == n
    # shrinking ends at the smallest failing size
    assert _first(mts.sizes(block=128), lambda n: n % 128 != 0) == 1
    assert _first(mts.sizes(block=128), lambda n: n > 128 and n % 128 != 0) == 129
    with pytest.raises(ValueError, match="block must be a power of two >= 1, got 100"):
        mts.sizes(block=100)


@settings(max_examples=100, deadline=None)
@given(n=mts.sizes(block=64, min_size=5, max_size=300), b=mts.blocks(4, 256), shape=mts.shapes(2, (16, 8)))
def test_sizes_blocks_and_shapes_stay_in_range(n, b, shape):
    assert 5 <= n <= 300
    assert 4 <= b <= 256 and b & (b - 1) == 0
    assert 0 <= shape[0] <= 65 and 0 <= shape[1] <= 33


def test_block_and_size_pairs():
    assert _first(mts.block_and_size(16, 64), lambda bs: bs[1] % bs[0] != 0) == (16, 1)
    assert _first(mts.block_and_size(16, 64), lambda bs: bs[0] > 16 and bs[1] > bs[0]) == (32, 33)


def _bits32(v):
    return int(np.array(v, np.float32).view(np.uint32))


def test_values_reach_every_special_float():
    s = mts.values(np.float32)
    assert _bits32(_first(s, lambda v: v == 0 and math.copysign(1, v) < 0)) == 0x80000000
    assert _first(s, math.isnan) != _first(s, math.isnan)
    assert _first(s, math.isinf) == math.inf
    assert _first(s, lambda v: v < 0 and math.isinf(v)) == -math.inf
    assert _first(s, lambda v: v == 2.0 ** -149) == 2.0 ** -149               # the smallest subnormal
    assert _first(s, lambda v: 1e38 < v < math.inf) == float(np.finfo(np.float32).max)
    half = mts.values(np.float16)
    assert _first(half, lambda v: v == 2.0 ** -24) == 2.0 ** -24
    assert _first(half, lambda v: 60000 < v < math.inf) == 65504.0


def test_values_respect_bounds_and_integer_ranges():
    s = mts.values(np.float32, min_value=-2.0, max_value=3.0)
    assert 2.5 < _first(s, lambda v: v > 2.5) <= 3.0
    with pytest.raises(hypothesis.errors.NoSuchExample):  # no NaN, no inf, nothing outside the bounds
        _first(s, lambda v: not -2.0 <= v <= 3.0, max_examples=300)
    assert _first(mts.values(np.int8), lambda v: v == -128) == -128
    assert _first(mts.values(np.uint16), lambda v: v == 65535) == 65535
    assert _first(mts.values(np.int64), lambda v: v == 2 ** 63 - 1) == 2 ** 63 - 1
    assert _first(mts.values(np.int64), lambda v: v < 0) == -1


@settings(max_examples=60, deadline=None)
@given(a=mts.arrays(mts.dtypes(bf16=True), mts.shapes(2, 4),
                    layout=mts.layouts(2, strided=True, transposed=True, reversed_=True)))
def test_arrays_are_views_in_a_poisoned_buffer(a):
    array = a.array if isinstance(a, minitriton.Buffer) else a
    base = array.base
    assert base is not None and base.ndim == 1
    start = base.__array_interface__["data"][0]
    inside = set()
    for index in np.ndindex(array.shape):
        address = array.__array_interface__["data"][0] + sum(i * s for i, s in zip(index, array.strides))
        inside.add((address - start) // array.itemsize)
    outside = np.array(sorted(set(range(base.size)) - inside), np.int64)
    poison = mtt.poison_bits(mtt.poison.triton_dtype(a.triton_dtype if isinstance(a, minitriton.Buffer)
                                                     else array.dtype))
    assert (base.view(UINT[array.itemsize])[outside] == poison).all()
    if array.dtype.kind == "f" or isinstance(a, minitriton.Buffer):  # no input value is the poison itself
        assert not (array.view(UINT[array.itemsize]) == poison).any()
    if isinstance(a, minitriton.Buffer):  # bf16 values: exactly representable, stored as their bits
        f = a.to_float32()
        finite = np.isfinite(f)
        assert (f[finite].view(np.uint32) & 0xFFFF == 0).all()


def test_layouts_reach_non_contiguous_and_offset_views():
    lay = mts.layouts(2, strided=True, transposed=True)
    found = _first(lay, lambda L: L.order == (1, 0))
    assert found == Layout(steps=(1, 1), pad=(0, 0), order=(1, 0))
    found = _first(mts.arrays(np.float32, (3, 3), layout=lay), lambda a: not a.flags.c_contiguous)
    assert found.shape == (3, 3)
    assert _first(mts.arrays(np.float32, 4), lambda a: a.base.size > 4).base.size == 5  # tail 1: an offset view
    assert _first(mts.layouts(1), lambda L: L.offset > 0) == Layout(offset=1)


def test_inputs_share_one_shape_and_dtype():
    s = mts.inputs("x", "y", shape=mts.sizes(block=8), dtype=mts.dtypes(floats=False), n=lambda d: d["x"].size,
                   eps=st.floats(1e-6, 1e-3))
    case = _first(s, lambda d: d["x"].size > 8 and d["x"].dtype == np.int16)
    assert set(case) == {"x", "y", "n", "eps"}
    assert case["x"].shape == case["y"].shape == (9,) and case["y"].dtype == np.int16 and case["n"] == 9


def test_dtypes():
    assert _first(mts.dtypes(), lambda d: True) == np.float32
    assert _first(mts.dtypes(floats=False), lambda d: True) == np.int32
    assert _first(mts.dtypes(bf16=True), lambda d: d == tl.bfloat16) == tl.bfloat16
    with pytest.raises(ValueError, match="nothing to choose from"):
        mts.dtypes(floats=False, ints=False)


# ------------------------------------------------------------------------------------------ check_kernel

def _copy(x, out):
    k_copy[(triton.cdiv(x.size, 32),)](x, out, x.size, BLOCK=32)


def test_check_kernel_passes_a_correct_kernel_in_every_grouping():
    calls = []

    def launch(x, out):
        calls.append(minitriton.options().group_size)
        _copy(x, out)
    check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32), dtype=mts.dtypes()),
                 group_sizes=(None, 1, 3), max_examples=30)
    assert {None, 1, 3} <= set(calls)
    assert minitriton.options().group_size is None


def test_check_kernel_keeps_the_configured_grouping_by_default():
    seen = set()

    def launch(x, out):
        seen.add(minitriton.options().group_size)
        _copy(x, out)
    minitriton.set_options(group_size=2)
    check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32)), max_examples=5)
    assert seen == {2} and minitriton.options().group_size == 2


def test_check_kernel_reports_the_shrunk_unwritten_tail():
    def launch(x, out):  # floor instead of ceil: the tail block never runs
        k_copy[(x.size // 32,)](x, out, x.size, BLOCK=32)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32)), max_examples=50)
    e = info.value
    assert e.kind == "unwritten"
    assert e.diagnosis.startswith("element 0 of `out` was never written (1 of 1;")
    assert str(e) == (f"check_kernel(launch): {e.diagnosis}\n  falsifying case (shrunk):\n"
                      f"    x = float32[1] = [0.0]\n    out: float32[1] (output)")
    assert list(e.case) == ["x"] and e.case["x"].tolist() == [0.0]
    assert isinstance(e, AssertionError)


@triton.jit
def k_bad_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.where(x != x, 0.0, x), mask=offs < n)  # bug: NaN becomes 0


def test_check_kernel_reports_a_mismatch_with_the_inputs_at_the_index():
    def launch(x, out):
        k_bad_copy[(triton.cdiv(x.size, 32),)](x, out, x.size, BLOCK=32)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32)), seed=1)
    e = info.value
    assert e.kind == "mismatch"
    assert e.diagnosis == ("`out` differs from the reference at 1 of 1 elements (0); first at index 0: got 0.0, "
                           "expected nan (x[0] = nan)")


def test_check_kernel_reports_a_kernel_error_with_its_text():
    def launch(x, out):  # one element too many per program
        k_copy[(triton.cdiv(x.size, 32),)](x, out, x.size + 1, BLOCK=32)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32)), seed=1)
    e = info.value
    assert e.kind == "error" and isinstance(e.__cause__, minitriton.OutOfBoundsError)
    assert re.fullmatch(r"the launch raised OutOfBoundsError: tl\.load reads past the end of `x_ptr` "
                        r"\(test_testing_kit\.py:\d+, program \(0,\)\)\n  1 of 32 lanes are out of range "
                        r"\(first: lane 1\): offsets 1 from `x_ptr`, but `x_ptr` has 1 elements "
                        r"\(valid offsets 0…0\)\n  fix: the mask offs < n lets offsets up to 1 through, but `x_ptr` has 1 "
                        r"element \(no automatic fix: n is an argument, and the launch passed 2: check the launch\)\n.*", e.diagnosis,
                        re.S), e.diagnosis
    assert e.case["x"].tolist() == [0.0]  # size 0 launches no program: the smallest failing size is 1


@triton.jit
def k_scale_inplace(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * 2, mask=mask)  # bug: the result goes into the input
    tl.store(out_ptr + offs, x * 2, mask=mask)


def test_check_kernel_reports_a_modified_input_unless_allowed():
    def launch(x, out):
        k_scale_inplace[(triton.cdiv(x.size, 8),)](x, out, x.size, BLOCK=8)
    inputs = mts.inputs("x", shape=mts.sizes(block=8), dtype=np.int32)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x * 2, inputs, seed=1)
    assert info.value.kind == "input modified"
    assert info.value.diagnosis == ("the kernel wrote into its input `x`: elements 0 changed (flat indices); pass it "
                                    "in `modifies` if it is meant to be updated in place")
    assert info.value.case["x"].tolist() == [1]
    check_kernel(launch, lambda x: x * 2, inputs, modifies=("x",), max_examples=20)


@triton.jit
def k_copy_rows(x_ptr, out_ptr, cols, x_stride, out_stride, out_col_stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * x_stride + c, mask=c < cols)
    tl.store(out_ptr + r * out_stride + c * out_col_stride, v, mask=c < cols)


def _stride(a, axis):
    return a.strides[axis] // a.itemsize


def test_check_kernel_reports_writes_into_the_padding_of_an_output_view():
    def launch(x, out):  # bug: the output row stride is taken to be the number of columns
        k_copy_rows[(x.shape[0],)](x, out, x.shape[1], _stride(x, 0), x.shape[1], _stride(out, 1), BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.shapes(2, max_side=9), layout=Layout()),
                     out_layout=mts.layouts(2, strided=True), seed=2)
    e = info.value
    # the smallest case: 2 rows of 1 column, the output rows padded by one element
    assert e.kind == "outside"
    assert str(e) == (
        "check_kernel(launch): the kernel wrote 1 element(s) outside `out`, into the padding of the buffer it is a "
        "view of (buffer offsets 1); check the strides used to build the output offsets\n"
        "  falsifying case (shrunk):\n"
        "    x = float32[2, 1] = [[0.0], [0.0]]\n"
        "    out: float32[2, 1] (output, placed by Layout(offset=0, tail=0, steps=(1, 1), pad=(0, 1), order=None, "
        "flip=None))")
    # and the correct launch passes on every drawn layout
    check_kernel(lambda x, out: k_copy_rows[(x.shape[0],)](x, out, x.shape[1], _stride(x, 0), _stride(out, 0),
                                                           _stride(out, 1), BLOCK=16),
                 lambda x: x.copy(), mts.inputs("x", shape=mts.shapes(2, max_side=9)),
                 out_layout=mts.layouts(2, strided=True, transposed=True), max_examples=30)


def test_check_kernel_confirms_unwritten_8_bit_values_by_a_second_fill():
    """-83 is the int8 poison; a kernel that really stores -83 must not be reported as leaving it unwritten."""
    check_kernel(_copy, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32), dtype=np.int8,
                                                        elements=st.just(-83)), max_examples=10)

    def launch(x, out):
        k_copy[(max(0, triton.cdiv(x.size, 32) - 1),)](x, out, x.size, BLOCK=32)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32), dtype=np.int8,
                                                            elements=st.just(-83)), seed=0)
    assert info.value.diagnosis.startswith("element 0 of `out` was never written (1 of 1;")


@triton.jit
def k_positive(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) > 0, mask=offs < n - 1)  # bug: n - 1


def test_check_kernel_bool_outputs():
    def launch(x, out):
        k_positive[(triton.cdiv(x.size, 16),)](x, out, x.size, BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x > 0, mts.inputs("x", shape=mts.sizes(block=16), dtype=np.int32), seed=0)
    assert info.value.kind == "unwritten"
    assert info.value.diagnosis.startswith("element 0 of `out` was never written (1 of 1;")


@triton.jit
def k_sum_and_max(x_ptr, s_ptr, m_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(s_ptr, tl.sum(x, axis=0))
    tl.store(m_ptr, tl.max(tl.where(offs < n, x, -float("inf")), axis=0))


def test_check_kernel_several_outputs_with_tolerance():
    def launch(x, s, m):
        k_sum_and_max[(1,)](x, s, m, x.size, BLOCK=64)

    def reference(x):
        return {"s": np.array(x.astype(np.float64).sum(), np.float32), "m": np.array(x.max(), np.float32)}

    def draw(d):
        n = d(st.integers(1, 64))
        return {"x": d(mts.arrays(np.float32, n, elements=mts.values(np.float32, min_value=-100, max_value=100)))}
    check_kernel(launch, reference, draw, outputs=("s", "m"), atol=1e-3, rtol=1e-5, max_examples=30)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: (np.array(x.sum() + 1, np.float32), np.array(x.max(), np.float32)),
                     {"x": mts.arrays(np.float32, 3, elements=st.just(1.0))}, outputs=("s", "m"), atol=1e-3)
    assert info.value.diagnosis == ("`s` differs from the reference beyond atol=0.001, rtol=0.0 at 1 of 1 elements "
                                    "(0); first at index (): got 3.0, expected 4.0")
    with pytest.raises(TypeError, match=r"the reference returned 1 values for the 2 outputs \('s', 'm'\)"):
        check_kernel(launch, lambda x: (x,), {"x": mts.arrays(np.float32, 3)}, outputs=("s", "m"))


def test_check_kernel_reports_results_that_depend_on_grouping():
    def launch(x, out):  # a stand-in for an emulator bug: the result depends on the group size
        _copy(x, out)
        if minitriton.options().group_size == 1 and x.size:
            out[0] += 1
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=32), dtype=np.int32),
                     group_sizes=(None, 1), seed=0)
    # the group_size=1 run is compared with the reference first
    assert info.value.kind == "mismatch" and "with minitriton.set_options(group_size=1)" in str(info.value)


def test_kernel_property_makes_a_pytest_test():
    @kernel_property(reference=lambda x: x.copy(), inputs=mts.inputs("x", shape=mts.sizes(block=32)),
                     max_examples=10)
    def test_copy(x, out):
        """copies"""
        _copy(x, out)
    assert test_copy.__name__ == "test_copy" and test_copy.__doc__ == "copies"
    import inspect
    assert list(inspect.signature(test_copy).parameters) == []
    test_copy()

    @kernel_property(reference=lambda x: x + 1, inputs=mts.inputs("x", shape=mts.sizes(block=32), dtype=np.int32))
    def test_wrong(x, out):
        _copy(x, out)
    with pytest.raises(KernelCheckError, match=r"got 0, expected 1 \(x\[0\] = 0\)"):
        test_wrong()


def test_inputs_argument_forms():
    with pytest.raises(TypeError, match="inputs must be a hypothesis strategy of dicts"):
        check_kernel(_copy, lambda x: x, 3)
    check_kernel(_copy, lambda x: x.copy(), {"x": mts.arrays(np.float64, mts.sizes(32, max_size=70))},
                 max_examples=10)


def test_readme_example_reports_what_the_readme_shows():
    """docs/testing.md's example, run after the README's (which defines add_kernel): it raises the
    KernelCheckError whose text the document prints."""
    import pathlib
    text = pathlib.Path(ROOT, "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    section = pathlib.Path(ROOT, "docs", "testing.md").read_text()
    example, shown = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    scope = {}
    exec(_compiled(blocks[0], "README.md example"), scope)
    with pytest.raises(KernelCheckError) as info:
        exec(compile(example, "docs/testing.md", "exec"), scope)
    assert f"KernelCheckError: {info.value}".splitlines() == shown.strip().splitlines()


# ------------------------------------------------------------------------------------------ with the sanitizers

@triton.jit
def k_accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)


@pytest.fixture
def sanitizing():
    saved = minitriton.options().sanitize
    minitriton.set_options(sanitize=True)
    yield
    minitriton.set_options(sanitize=saved)


def test_empty_outputs_are_tracked_by_the_sanitizer(sanitizing):
    x = np.arange(40, dtype=np.float32)
    out = mtt.empty(40)
    with pytest.raises(minitriton.errors.SanitizerError, match=r"tl\.load reads `out_ptr` elements that were never "
                                                                r"written .*\n  offsets 0…31 of `out_ptr` hold no value"):
        k_accumulate[(2,)](x, out, 40, BLOCK=32)
    out[...] = 1.0                     # filled by the host: its bits are no longer the poison, loads are fine
    k_accumulate[(2,)](x, out, 40, BLOCK=32)
    np.testing.assert_array_equal(out, x + 1)
    offset_view = mtt.empty(40, layout=Layout(offset=3))   # a view inside a poisoned buffer is tracked too
    with pytest.raises(minitriton.errors.SanitizerError, match="never written"):
        k_accumulate[(2,)](x, offset_view, 40, BLOCK=32)
    offset_view[...] = 0.0
    k_accumulate[(2,)](x, offset_view, 40, BLOCK=32)
    np.testing.assert_array_equal(offset_view, x)


def test_mark_written_covers_host_values_equal_to_the_poison(sanitizing):
    x = np.arange(40, dtype=np.float32)
    out = mtt.empty(40)
    out[...] = mtt.empty(40)           # the host copies poison bits: nothing tells them from unwritten ones
    with pytest.raises(minitriton.errors.SanitizerError, match="never written"):
        k_accumulate[(2,)](x, out, 40, BLOCK=32)
    mtt.mark_written(out)
    k_accumulate[(2,)](x, out, 40, BLOCK=32)
    assert np.isnan(out).all()


def test_assert_written_names_the_excluding_programs_only_when_sanitized(sanitizing):
    x = np.arange(100, dtype=np.float32)
    out = mtt.empty(100)
    k_copy[(4,)](x, out, 90, BLOCK=32)        # programs 2 and 3 mask out 90..99
    with pytest.raises(AssertionError) as info:
        mtt.assert_written(out, "out")
    assert str(info.value) == ("elements 90…99 of `out` were never written (10 of 100; flat indices in C order): "
                               "the store masks of programs 2, 3 excluded them")
    minitriton.set_options(sanitize=False)
    with pytest.raises(AssertionError, match="still the poison value"):
        mtt.assert_written(out, "out")


def test_check_kernel_sanitizes_unless_told_not_to(monkeypatch):
    def no_fill(x, out):               # accumulates into an output nothing wrote
        k_accumulate[(triton.cdiv(x.size, 32),)](x, out, x.size, BLOCK=32)
    inputs = mts.inputs("x", shape=mts.sizes(block=32, min_size=1))

    def finding(**kwargs):
        with pytest.raises(KernelCheckError) as info:
            check_kernel(no_fill, lambda x: x.copy(), inputs, seed=0, max_examples=10, **kwargs)
        return info.value.kind, type(info.value.__cause__).__name__

    assert finding() == ("error", "SanitizerError")
    minitriton.set_options(sanitize=False)
    assert finding() == ("unwritten", "NoneType")            # unsanitized: found after the launch, by value
    assert finding(sanitize=True) == ("error", "SanitizerError")
    assert minitriton.options().sanitize is False           # restored
    minitriton.set_options(sanitize=None)
    assert finding(sanitize=False) == ("unwritten", "NoneType")
    monkeypatch.setenv("MINITRITON_SANITIZE", "0")
    assert finding() == ("unwritten", "NoneType")


def _compiled(source: str, name: str):
    """`source` compiled as the file `<name>`, its text registered with linecache (kernels read their source)."""
    import linecache
    filename = f"<{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return compile(source, filename, "exec")
