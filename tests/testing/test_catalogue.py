"""A catalogue of broken kernels, each with the exact diagnosis minitriton gives for it.

On a GPU these bugs give silently wrong numbers (or nothing at all). Each entry is a short kernel with one
classic mistake, launched the way its author would, and the test asserts what minitriton says: the
OutOfBoundsError text (program, lanes, offsets), the CompilationError text, or the shrunk counterexample
`minitriton.testing.check_kernel` reports for a wrong result, a never-written tail or a modified input.

check_kernel runs kernels with the sanitizers on (`minitriton.options().sanitize`), so races between
programs, order-dependent reads and loads of never-written memory are diagnosed as such, and unwritten
elements are attributed to the program whose store mask excluded them. The entries that launch kernels
directly run with the sanitizers off (their diagnosis is the bounds check or the compiler), except those
about the sanitizers' own findings, which turn them on.
"""
from __future__ import annotations

import os

import hypothesis
import numpy as np
import pytest
from hypothesis import strategies as st

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton import CompilationError, OutOfBoundsError
from minitriton.errors import SanitizerError
from minitriton import testing as mtt
from minitriton.testing import KernelCheckError, check_kernel
from minitriton.testing import strategies as mts

HERE = os.path.basename(__file__)
_SRC = open(__file__).read().splitlines()
CATALOGUE: list = []
# deterministic search and shrinking, so the reported counterexample is the same on every run
SEARCH = hypothesis.settings(derandomize=True, max_examples=100)


def entry(fn):
    """Register a catalogue test (the count is checked at the end)."""
    CATALOGUE.append(fn.__name__)
    return fn


def _line(marker):
    hits = [i + 1 for i, text in enumerate(_SRC) if text.rstrip().endswith("#: " + marker)]
    assert len(hits) == 1, marker
    return hits[0]


@pytest.fixture(autouse=True)
def _restore_options(monkeypatch):
    """Direct launches run without the sanitizers unless an entry turns them on (check_kernel does unless told
    otherwise)."""
    monkeypatch.delenv("MINITRITON_SANITIZE", raising=False)
    with minitriton.set_options(sanitize=None):
        yield


@pytest.fixture(params=[None, 1], ids=["grouped", "one-per-pass"])
def sanitized(request):
    """The sanitizers on, with the default grouping and with one program per pass (same findings)."""
    minitriton.set_options(sanitize=True)
    minitriton.set_options(group_size=request.param)
    yield


def _compile_text(kernel, marker, at, message):
    """Triton's layout, built here from this file: `at line:col:`, the kernel source up to the line, a caret
    under `at` (the start of the failing expression), the message, then where the line is."""
    line = _line(marker)
    def_line = next(i for i in range(line, 0, -1) if _SRC[i - 1].startswith(f"def {kernel.__name__}("))
    col = _SRC[line - 1].index(at)
    excerpt = "\n".join(_SRC[max(def_line - 1, line - 12):line])
    return (f"at {line - def_line + 1}:{col}:\n{excerpt}\n{' ' * col}^\n{message}\n"
            f"  in kernel `{kernel.__name__}` ({__file__}:{line})")


def _oob(op, verb, where, name, marker, program, count, lanes, first, offsets, size, fix, call):
    return (f"tl.{op} {verb} {where} `{name}` ({HERE}:{_line(marker)}, program {program})\n"
            f"  {count} of {lanes} lanes {'is' if count == 1 else 'are'} out of range (first: lane {first}): offsets {offsets} from `{name}`, "
            f"but `{name}` has {size} elements (valid offsets 0…{size - 1})\n  fix: {fix}\n{_shown(marker, call)}")


def _shown(marker, call):
    """The marked line of this file as a diagnostic shows it, a caret under `call`."""
    text = _SRC[_line(marker) - 1]
    indent = len(text) - len(text.lstrip())
    return f"    {text.strip()}\n    {' ' * (text.index(call) - indent)}{'^' * len(call)}"


def _runs(values):
    """Sorted ints as 'a…b' runs (up to 4, then a count), as the diagnoses print them."""
    values = sorted(set(int(v) for v in values))
    runs = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    parts = [f"{a}" if a == b else f"{a}…{b}" for a, b in runs[:4]]
    return ", ".join(parts + ([f"… ({len(values)} in all)"] if len(runs) > 4 else []))


def _vector(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


# =============================================================================== out-of-bounds accesses

@triton.jit
def add_no_mask(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  #: no-mask
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x + y)


@entry
@pytest.mark.parametrize("group_size", [None, 1])
def test_forgotten_mask(group_size):
    """The tail block reads past the end: 1000 elements, BLOCK 256, program 3 has 232 valid lanes."""
    minitriton.set_options(group_size=group_size)
    x, y, out = _vector(1000), _vector(1000, 1), mtt.empty(1000)
    with pytest.raises(OutOfBoundsError) as info:
        add_no_mask[(triton.cdiv(1000, 256),)](x, y, out, 1000, BLOCK=256)
    assert str(info.value) == _oob("load", "reads", "past the end of", "x_ptr", "no-mask", "(3,)", 24, 256, 232,
                                   "1000…1023", 1000, "mask the tail: tl.load(x_ptr + offs, mask=offs < n)",
                                   "tl.load(x_ptr + offs)")
    np.testing.assert_array_equal(out[:768], x[:768] + y[:768])   # programs 0-2 ran
    assert mtt.unwritten(out)[768:].all()                          # program 3 stopped at its first load


@triton.jit
def add_store_unmasked(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y)  #: store-unmasked


@entry
def test_mask_on_the_loads_but_not_the_store():
    x, y, out = _vector(1000), _vector(1000, 1), mtt.empty(1000)
    with pytest.raises(OutOfBoundsError) as info:
        add_store_unmasked[(4,)](x, y, out, 1000, BLOCK=256)
    assert str(info.value) == _oob("store", "writes", "past the end of", "out_ptr", "store-unmasked", "(3,)", 24,
                                   256, 232, "1000…1023", 1000,
                                   "mask the tail: tl.store(out_ptr + offs, x + y, mask=mask)",
                                   "tl.store(out_ptr + offs, x + y)")
    assert mtt.unwritten(out)[768:].all()  # the failing store wrote none of its lanes, not even the valid ones


@triton.jit
def add_off_by_one(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n
    x = tl.load(x_ptr + offs, mask=mask)  #: off-by-one
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@entry
def test_off_by_one_mask():
    x, y, out = _vector(1000), _vector(1000, 1), mtt.empty(1000)
    with pytest.raises(OutOfBoundsError) as info:
        add_off_by_one[(4,)](x, y, out, 1000, BLOCK=256)
    assert str(info.value) == _oob("load", "reads", "past the end of", "x_ptr", "off-by-one", "(3,)", 1, 256, 232,
                                   "1000", 1000, "the mask offs <= n lets one lane too many through: compare "
                                   "strictly, offs < n", "tl.load(x_ptr + offs, mask=mask)")


@triton.jit
def diff_left(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    left = tl.load(x_ptr + offs - 1, mask=mask)  #: stencil-left
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - left, mask=mask)


@entry
def test_stencil_left_neighbour_of_element_zero():
    x, out = _vector(300), mtt.empty(300)
    with pytest.raises(OutOfBoundsError) as info:
        diff_left[(3,)](x, out, 300, BLOCK=128)
    text = str(info.value)
    assert text == (f"tl.load reads before the start of `x_ptr` ({HERE}:{_line('stencil-left')}, program (0,))\n"
                    f"  1 of 128 lanes is out of range (first: lane 0): offsets -1 from `x_ptr`, but `x_ptr` has "
                    f"300 elements (valid offsets 0…299)\n"
                    f"  fix: the offset offs - 1 goes negative (down to -1) on these lanes; mask them: "
                    f"tl.load(x_ptr + offs - 1, mask=mask & ((offs - 1) >= 0))\n"
                    f"{_shown('stencil-left', 'tl.load(x_ptr + offs - 1, mask=mask)')}")


@triton.jit
def diff_right(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    right = tl.load(x_ptr + offs + 1, mask=mask)  #: stencil-right
    tl.store(out_ptr + offs, right - tl.load(x_ptr + offs, mask=mask), mask=mask)


@entry
def test_stencil_right_neighbour_of_the_last_element():
    x, out = _vector(300), mtt.empty(300)
    with pytest.raises(OutOfBoundsError) as info:
        diff_right[(3,)](x, out, 300, BLOCK=128)
    assert str(info.value) == _oob("load", "reads", "past the end of", "x_ptr", "stencil-right", "(2,)", 1, 128, 43,
                                   "300", 300, "the mask bounds offs, but the lanes access offs + 1: bound that "
                                   "too, tl.load(x_ptr + offs + 1, mask=mask & ((offs + 1) < n))",
                                   "tl.load(x_ptr + offs + 1, mask=mask)")


@triton.jit
def copy_tile_row_mask_only(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rm[:, None] * N + rn[None, :]
    mask = rm[:, None] < M                       # the column bound rn < N is missing
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)  #: tile-rows


@entry
def test_2d_tile_masked_on_rows_only():
    """Columns past N wrap into the next row (silently, on a GPU) until the last row runs off the end."""
    x = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    out = mtt.empty((5, 6))
    with pytest.raises(OutOfBoundsError) as info:
        copy_tile_row_mask_only[(2, 2)](x, out, 5, 6, BM=4, BN=4)
    # program (1, 1): rows 4..7 (only row 4 < M), columns 4..7: offsets 28, 29 valid, 30 and 31 past the end
    assert str(info.value) == (
        f"tl.load reads past the end of `x_ptr` ({HERE}:{_line('tile-rows')}, program (1, 1))\n"
        f"  2 of 16 lanes are out of range (first: lane (0, 2)): offsets 30…31 from `x_ptr`, but `x_ptr` has 30 "
        f"elements (valid offsets 0…29)\n"
        f"  fix: the tile is 2-D and the mask leaves an axis open; add rn[None, :] < N: "
        f"tl.load(x_ptr + offs, mask=mask & (rn[None, :] < N))\n"
        f"{_shown('tile-rows', 'tl.load(x_ptr + offs, mask=mask)')}")


@triton.jit
def copy_rows_int32(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + cols)  #: int32-overflow
    tl.store(out_ptr + row * BLOCK + cols, v)


@triton.jit
def copy_rows_int64(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * BLOCK + cols, tl.load(x_ptr + row * stride + cols))


@entry
@pytest.mark.skipif(np.dtype(np.intp).itemsize < 8, reason="needs a 2 GiB array, more than 32-bit NumPy (wasm32) holds")
def test_int32_offset_overflow_on_a_large_tensor():
    """row * stride in int32 wraps past 2**31 elements: 2049 rows 2**20 apart (2 GiB of int8, only the pages
    touched are ever allocated). On a GPU program 2048 reads 2 GiB before the tensor."""
    stride = 2 ** 20
    rows = 2049
    big = np.zeros(rows * stride, np.int8)
    x = big.reshape(rows, stride)[:, :16]
    x[-1] = np.arange(16)
    out = mtt.empty((rows, 16), np.int8)
    with pytest.raises(OutOfBoundsError) as info:
        copy_rows_int32[(rows,)](x, out, stride, BLOCK=16)
    span = 2048 * stride + 16
    assert str(info.value) == (
        f"tl.load reads before the start of `x_ptr` ({HERE}:{_line('int32-overflow')}, program (2048,))\n"
        f"  16 of 16 lanes are out of range (first: lane 0): offsets -2147483648…-2147483633 from `x_ptr`, but "
        f"`x_ptr` has {span} elements (valid offsets 0…{span - 1})\n"
        f"  fix: in int32, row * stride overflows (it reaches 2147483648); compute it in 64 bits: "
        f"row.to(tl.int64) * stride\n"
        f"{_shown('int32-overflow', 'tl.load(x_ptr + row * stride + cols)')}")
    copy_rows_int64[(rows,)](x, out, stride, BLOCK=16)  # the fix: 64-bit row offsets
    np.testing.assert_array_equal(out[-1], np.arange(16))
    assert (out[:-1] == 0).all()


@triton.jit
def count_unmasked_atomic(idx_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < n, other=n)   # masked lanes point one past the end
    tl.atomic_add(cnt_ptr + i, 1)  #: atomic-unmasked


@entry
def test_atomic_without_mask():
    idx = np.array([2, 0, 2, 1, 4], np.int32)
    cnt = np.zeros(5, np.int32)
    with pytest.raises(OutOfBoundsError) as info:
        count_unmasked_atomic[(1,)](idx, cnt, 5, BLOCK=8)
    assert str(info.value) == _oob("atomic_add", "updates", "past the end of", "cnt_ptr", "atomic-unmasked", "(0,)",
                                   3, 8, 5, "5", 5, "the lanes out of range are the ones the load of i masked off "
                                   "(offs < n); mask this access the same way: tl.atomic_add(cnt_ptr + i, 1, "
                                   "mask=offs < n)", "tl.atomic_add(cnt_ptr + i, 1)")
    assert (cnt == 0).all()


# =============================================================================== compile errors

@triton.jit
def copy_block_100(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  #: npow2
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@entry
def test_non_power_of_two_block():
    x, out = _vector(1000), mtt.empty(1000)
    with pytest.raises(CompilationError) as info:
        copy_block_100[(10,)](x, out, 1000, BLOCK=100)
    assert str(info.value) == _compile_text(copy_block_100, "npow2", "tl.arange",
                                            "arange's range must be a power of 2")
    assert mtt.unwritten(out).all()  # refused before any program ran


@triton.jit
def copy_runtime_block(x_ptr, out_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  #: runtime-block
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@entry
def test_block_size_not_a_constexpr():
    x, out = _vector(1000), mtt.empty(1000)
    with pytest.raises(CompilationError) as info:
        copy_runtime_block[(8,)](x, out, 1000, 128)
    assert str(info.value) == _compile_text(copy_runtime_block, "runtime-block", "tl.arange",
                                            "arange's arguments must be of type tl.constexpr")


@triton.jit
def load_other_without_mask(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, other=0.0))  #: other-no-mask


@entry
def test_other_without_mask():
    with pytest.raises(CompilationError) as info:
        load_other_without_mask[(1,)](_vector(16), mtt.empty(16), BLOCK=16)
    assert str(info.value) == _compile_text(load_other_without_mask, "other-no-mask", "tl.load(",
                                            "`other` cannot be provided without `mask`")


@triton.jit
def dot_k8(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))  #: dot-k8


@entry
def test_dot_with_k_below_16():
    a, b = np.ones((16, 8), np.float16), np.ones((8, 16), np.float16)
    with pytest.raises(CompilationError) as info:
        dot_k8[(1,)](a, b, mtt.empty((16, 16)), M=16, N=16, K=8)
    assert str(info.value) == _compile_text(dot_k8, "dot-k8", "tl.dot(",
                                            "Input shapes should have M >= 1, N >= 1 and K >= 16")


@triton.jit
def sum_defined_in_loop(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(out_ptr, acc)  #: loop-scoped


@entry
def test_accumulator_defined_only_inside_the_loop():
    out = mtt.empty(1)
    with pytest.raises(CompilationError) as info:
        sum_defined_in_loop[(1,)](_vector(100), out, 100, BLOCK=32)
    line = _line("loop-scoped")
    expected = _compile_text(sum_defined_in_loop, "loop-scoped", "acc)", "NameError('acc is not defined')")
    assert str(info.value) == (
        expected + f"\n  `acc` is first assigned inside the loop at line {line - 3} and used after it; Triton's "
                   f"compiler only keeps variables defined before a loop.\n"
                   f"  fix: give `acc` a value before the loop (e.g. acc = 0 or tl.zeros(...))")
    assert mtt.unwritten(out).all()


# =============================================================================== wrong results, shrunk by check_kernel

def _report(name, diagnosis, case_lines, out_line):
    return "\n".join([f"check_kernel({name}): {diagnosis}", "  falsifying case (shrunk):", *case_lines, out_line])


def _never_written(first, last, total, name="out"):
    """The unwritten-output diagnosis for the contiguous flat range first..last of a `total`-element output."""
    what = f"element {first} of `{name}` was" if first == last else f"elements {first}…{last} of `{name}` were"
    return (f"{what} never written ({last - first + 1} of {total}; flat indices in C order): still the poison "
            f"value minitriton.testing.empty filled the output with")


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@entry
def test_unwritten_tail_grid_rounded_down():
    def launch(x, out):
        copy_kernel[(x.size // 16,)](x, out, x.size, BLOCK=16)  # n // BLOCK programs: the tail has none
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=16)), settings=SEARCH)
    assert info.value.kind == "unwritten"
    assert str(info.value) == _report(
        "launch", "element 0 of `out` was never written (1 of 1; flat indices in C order): no program stored there "
                  "(check the grid size and the offsets)",
        ["    x = float32[1] = [0.0]"], "    out: float32[1] (output)")


@triton.jit
def copy_mask_n_minus_1(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n - 1
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@entry
def test_mask_one_short():
    def launch(x, out):
        copy_mask_n_minus_1[(triton.cdiv(x.size, 16),)](x, out, x.size, BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=16), dtype=np.int32),
                     settings=SEARCH)
    n = info.value.case["x"].size
    assert info.value.diagnosis == (f"element {n - 1} of `out` was never written (1 of {n}; flat indices in C "
                                    f"order): program {(n - 1) // 16}'s store mask excluded them")


def _race(marker, offsets, fix, call, name="out_ptr"):
    return (f"the launch raised SanitizerError: tl.store races with program (0,): both write `{name}` "
            f"({HERE}:{_line(marker)}, program (1,))\n"
            f"  offsets {offsets} of `{name}` are written by programs (0,) and (1,) in one launch without atomics; "
            f"the GPU runs programs in any order, so either value may win\n"
            f"  fix: {fix}\n{_shown(marker, call)}")


_COPY_STORE = "tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)"


@triton.jit
def copy_program_id_axis_1(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)   # axis 1 of a 1-D grid: always 0
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)  #: wrong-axis


@entry
def test_program_id_of_the_wrong_axis():
    """Every program copies block 0: a race on it (the rest of out is never written)."""
    def launch(x, out):
        copy_program_id_axis_1[(triton.cdiv(x.size, 16),)](x, out, x.size, BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=16)), settings=SEARCH)
    e = info.value
    assert e.kind == "error" and e.case["x"].size > 16 and isinstance(e.__cause__, SanitizerError)
    assert e.diagnosis == _race("wrong-axis", "0…15", f"on the grid ({triton.cdiv(e.case['x'].size, 16)}, 1), "
                                f"tl.program_id(1) is always 0: every program gets the same block; the programs are "
                                f"numbered along another axis, tl.program_id(0)", _COPY_STORE)
    with pytest.raises(KernelCheckError) as info:     # without the sanitizers: the unwritten elements
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=16)), sanitize=False,
                     settings=SEARCH)
    n = info.value.case["x"].size
    assert info.value.kind == "unwritten" and n > 16
    assert info.value.diagnosis == _never_written(16, n - 1, n)


@triton.jit
def copy_offsets_without_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) + tl.arange(0, BLOCK)          # forgot `* BLOCK`: the blocks overlap
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)  #: overlap


@entry
def test_block_start_forgot_to_multiply_by_block():
    """Blocks one element apart overlap: programs 0 and 1 both store elements 1…15."""
    def launch(x, out):
        copy_offsets_without_block[(triton.cdiv(x.size, 16),)](x, out, x.size, BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=16)), settings=SEARCH)
    assert info.value.kind == "error" and info.value.diagnosis == _race(
        "overlap", "1…15", "the programs' blocks overlap: tl.program_id(0) steps by 1, less than a block of 16 lanes; "
        "step by the block: tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", _COPY_STORE)
    with pytest.raises(KernelCheckError) as info:     # without the sanitizers: the elements left over
        check_kernel(launch, lambda x: x.copy(), mts.inputs("x", shape=mts.sizes(block=16)), sanitize=False,
                     settings=SEARCH)
    # cdiv(n, 16) programs starting one element apart cover offsets 0 … 16 + programs - 2; the rest is left over
    e = info.value
    n = e.case["x"].size
    covered = 16 + triton.cdiv(n, 16) - 1
    assert e.kind == "unwritten" and n > covered
    assert e.diagnosis == _never_written(covered, n - 1, n)


@triton.jit
def block_max_default_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)      # masked lanes read 0, which wins for negative rows
    tl.store(out_ptr, tl.max(x, axis=0))


@entry
def test_wrong_other_for_a_max_reduction():
    def launch(x, out):
        block_max_default_other[(1,)](x, out, x.size, BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: np.array(x.max(), np.float32),
                     mts.inputs("x", shape=mts.sizes(block=16, min_size=1, max_size=16),   # log-probabilities
                                elements=mts.values(np.float32, min_value=-100, max_value=0)), settings=SEARCH)
    e = info.value
    x = e.case["x"]
    assert e.kind == "mismatch" and x.max() < 0 and x.size < 16   # all negative, and a masked lane exists
    assert e.diagnosis == (f"`out` differs from the reference at 1 of 1 elements (0); first at index (): "
                           f"got 0.0, expected {float(x.max())!r}")


@triton.jit
def softmax_other_zero(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)   # should be -inf: exp(0 - max) joins the sum
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + offs, e / tl.sum(e, axis=0), mask=offs < n)


@entry
def test_softmax_padded_with_zero_instead_of_minus_inf():
    def launch(x, out):
        softmax_other_zero[(1,)](x, out, x.size, BLOCK=16)

    def reference(x):
        e = np.exp(x.astype(np.float64) - x.max())
        return (e / e.sum()).astype(np.float32)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, reference, mts.inputs("x", shape=mts.sizes(block=16, min_size=1, max_size=16),
                                                   elements=mts.values(np.float32, min_value=-20, max_value=20)),
                     rtol=1e-5, atol=1e-6, settings=SEARCH)
    # the kernel's numbers, modelled: each of the 16 - n masked lanes adds exp(0 - max) to the denominator
    e = info.value
    x = e.case["x"].astype(np.float64)
    top = max(x.max(), 0.0)
    got = np.exp(x - top) / (np.exp(x - top).sum() + (16 - x.size) * np.exp(-top))
    want = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-5, atol=1e-6))
    i = int(bad[0])
    assert x.size < 16 and e.diagnosis == (
        f"`out` differs from the reference beyond atol=1e-06, rtol=1e-05 at {bad.size} of {x.size} elements "
        f"({_runs(bad)}); first at index {i}: got {float(np.float32(got[i]))!r}, expected "
        f"{float(np.float32(want[i]))!r} (x[{i}] = {float(x[i])!r})")


@triton.jit
def histogram_unmasked_atomic(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bins = tl.load(x_ptr + offs, mask=offs < n)           # masked lanes read 0 ...
    tl.atomic_add(hist_ptr + bins, 1)                     # ... and count in bin 0: the mask is missing here


@entry
def test_histogram_counts_masked_lanes_in_bin_zero():
    def launch(x, hist):
        histogram_unmasked_atomic[(triton.cdiv(x.size, 16),)](x, hist, x.size, BLOCK=16)

    def launch_zeroed(x, hist):
        hist[...] = 0
        launch(x, hist)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch_zeroed, lambda x: np.bincount(x, minlength=4).astype(np.int32),
                     mts.inputs("x", shape=mts.sizes(block=16), dtype=np.int32,
                                elements=st.integers(0, 3)), outputs="hist", settings=SEARCH)
    e = info.value
    x = e.case["x"]
    lost = triton.cdiv(x.size, 16) * 16 - x.size                   # masked-off lanes of the last program
    assert lost > 0 and e.diagnosis == (f"`hist` differs from the reference at 1 of 4 elements (0); first at "
                                        f"index 0: got {int((x == 0).sum()) + lost}, expected {int((x == 0).sum())}")


@triton.jit
def block_sums_plain_store(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0), axis=0)
    tl.store(out_ptr, partial)  #: partial-sums


@entry
def test_race_plain_store_of_partial_sums():
    """Every program overwrites the total (tl.atomic_add was meant): a race, found even when the values agree;
    without the sanitizers, found by value (the last program's partial sum wins)."""
    def launch(x, out):
        out[...] = 0                    # the total of no elements (no program runs for n = 0) ...
        mtt.mark_written(out)           # ... written by the host: tell the sanitizer
        block_sums_plain_store[(triton.cdiv(x.size, 4),)](x, out, x.size, BLOCK=4)
    inputs = mts.inputs("x", shape=mts.sizes(block=4), dtype=np.int32, elements=st.integers(0, 9))
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: np.array(x.sum(), np.int32), inputs, settings=SEARCH)
    assert info.value.kind == "error" and info.value.diagnosis == _race(
        "partial-sums", "0", "every program stores its tl.sum into the same element, so only one survives: combine "
        "them atomically, tl.atomic_add(out_ptr, partial)", "tl.store(out_ptr, partial)")
    assert info.value.case["x"].size == 5
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: np.array(x.sum(), np.int32), inputs, sanitize=False, settings=SEARCH)
    e = info.value
    assert e.kind == "mismatch"
    x = e.case["x"]
    assert x.size == 5 and x[:4].sum() != 0           # two programs, and the first one's sum is lost
    assert e.diagnosis == (f"`out` differs from the reference at 1 of 1 elements (0); first at index (): "
                           f"got {x[4]}, expected {x.sum()}")


@triton.jit
def copy_rows_assumed_contiguous(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)   # the row stride is not n_cols
    tl.store(out_ptr + row * n_cols + cols, v, mask=cols < n_cols)


@entry
def test_strides_assumed_contiguous_for_a_strided_view():
    def launch(x, out):
        copy_rows_assumed_contiguous[(x.shape[0],)](x, out, x.shape[1], BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x.copy(),
                     mts.inputs("x", shape=mts.shapes(2, 16, max_side=16), layout=mts.layouts(2, strided=True)),
                     settings=SEARCH)
    # the kernel reads element r * cols + c of x's buffer (from x's first element): padding holds poison NaNs
    e = info.value
    x = e.case["x"]
    rows, cols = x.shape
    first = (x.__array_interface__["data"][0] - x.base.__array_interface__["data"][0]) // 4
    read = x.base[first + np.arange(rows)[:, None] * cols + np.arange(cols)[None, :]]
    bad = np.flatnonzero(~((read == x) | (np.isnan(read) & np.isnan(x))))
    i = tuple(int(v) for v in np.unravel_index(int(bad[0]), x.shape))
    assert not x.flags.c_contiguous
    assert str(e) == _report(
        "launch", f"`out` differs from the reference at {bad.size} of {x.size} elements ({_runs(bad)}); first at "
                  f"index {i}: got {float(read[i])!r}, expected {float(x[i])!r} (x[{i}] = {float(x[i])!r})",
        [f"    x = float32[{rows}, {cols}] (strides {tuple(v // 4 for v in x.strides)}, first element at offset "
         f"{first} of a {x.base.size}-element buffer) = {x.tolist()!r}"],
        f"    out: float32[{rows}, {cols}] (output)")


@triton.jit
def scale_args_swapped(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)  #: swapped


@entry
def test_launch_with_input_and_output_swapped():
    """The kernel reads the (never written) output and writes the input."""
    def launch(x, out):
        scale_args_swapped[(triton.cdiv(x.size, 16),)](out, x, x.size, BLOCK=16)
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x * 2, mts.inputs("x", shape=mts.sizes(block=16)), settings=SEARCH)
    n = info.value.case["x"].size
    assert info.value.diagnosis == (
        f"the launch raised SanitizerError: tl.load reads `x_ptr` elements that were never written "
        f"({HERE}:{_line('swapped')}, program (0,))\n"
        f"  offsets {'0' if n == 1 else f'0…{min(n, 16) - 1}'} of `x_ptr` hold no value yet (the array was made "
        f"by minitriton.testing.empty, which leaves it uninitialised)\n"
        f"  fix: mask the load or write these elements first\n"
        f"{_shown('swapped', 'tl.load(x_ptr + offs, mask=mask)')}")
    with pytest.raises(KernelCheckError) as info:
        check_kernel(launch, lambda x: x * 2, mts.inputs("x", shape=mts.sizes(block=16)), sanitize=False,
                     settings=SEARCH)
    assert info.value.kind == "input modified"
    assert info.value.diagnosis == ("the kernel wrote into its input `x`: elements 0 changed (flat indices); pass "
                                    "it in `modifies` if it is meant to be updated in place")


@triton.jit
def copy_cols_masked_with_rows(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < M)         # the column bound should be N
    offs = rm[:, None] * N + rn[None, :]
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@entry
def test_column_mask_uses_the_row_count():
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = mtt.empty((3, 5))
    copy_cols_masked_with_rows[(1,)](x, out, 3, 5, BM=4, BN=8)
    with pytest.raises(AssertionError) as info:
        mtt.assert_written(out, "out")
    assert str(info.value) == ("elements 3…4, 8…9, 13…14 of `out` were never written (6 of 15, first at index (0, 3); "
                               "flat indices in C order): still the poison value minitriton.testing.empty filled the "
                               "output with")


# =============================================================================== the catalogue itself

def test_the_catalogue_has_at_least_twenty_entries():
    assert len(CATALOGUE) >= 20 and len(set(CATALOGUE)) == len(CATALOGUE)


# =============================================================================== the sanitizers' own findings

@triton.jit
def shift_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    prev = tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs < n))  #: shift-load
    tl.store(x_ptr + offs, prev, mask=(offs >= 1) & (offs < n))


@entry
def test_in_place_shift_reads_what_another_program_writes(sanitized):
    """Program 1 reads element 15, which program 0 writes: the result depends on which runs first."""
    x = np.arange(40, dtype=np.float32)
    with pytest.raises(SanitizerError) as info:
        shift_in_place[(3,)](x, 40, BLOCK=16)
    assert str(info.value) == (
        f"tl.load reads `x_ptr` elements that program (0,) writes in the same launch "
        f"({HERE}:{_line('shift-load')}, program (1,))\n"
        f"  offsets 15: the result depends on the order in which programs run, which the GPU does not fix\n"
        f"  fix: read and write different arrays, or split the work into two launches\n"
        f"{_shown('shift-load', 'tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs < n))')}")


@triton.jit
def scale_two_pass(x_ptr, tmp_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    full = (tl.program_id(0) + 1) * BLOCK <= n                # bug: only full blocks fill the scratch
    tl.store(tmp_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=(offs < n) & full)
    tl.store(out_ptr + offs, tl.load(tmp_ptr + offs, mask=offs < n), mask=offs < n)  #: scratch-load


@entry
def test_scratch_buffer_read_before_it_is_written(sanitized):
    x = np.arange(20, dtype=np.float32)
    tmp, out = mtt.empty(20), mtt.empty(20)
    with pytest.raises(SanitizerError) as info:
        scale_two_pass[(2,)](x, tmp, out, 20, BLOCK=16)
    assert str(info.value) == (
        f"tl.load reads `tmp_ptr` elements that were never written ({HERE}:{_line('scratch-load')}, program (1,))\n"
        f"  offsets 16…19 of `tmp_ptr` hold no value yet (the array was made by minitriton.testing.empty, which "
        f"leaves it uninitialised)\n"
        f"  fix: mask the load or write these elements first\n"
        f"{_shown('scratch-load', 'tl.load(tmp_ptr + offs, mask=offs < n)')}")
    np.testing.assert_array_equal(out[:16], 2 * x[:16])  # program 0 completed


@entry
def test_unwritten_element_is_attributed_to_the_program_whose_mask_excluded_it(sanitized):
    """The README's sizes: 98432 elements, BLOCK 1024; the mask `offs < n - 1` leaves the last one out."""
    n = 98_432
    x, out = _vector(n), mtt.empty(n)
    copy_mask_n_minus_1[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    with pytest.raises(AssertionError) as info:
        mtt.assert_written(out, "out")
    assert str(info.value) == ("element 98431 of `out` was never written (1 of 98432; flat indices in C order): "
                               "program 96's store mask excluded them")
