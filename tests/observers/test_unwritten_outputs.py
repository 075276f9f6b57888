"""Outputs left unwritten: after a launch that stored into an array made by `np.empty`, `torch.empty` & co.
(tracked under `python -m minitriton run`; here registered as `run` registers them), the elements nothing wrote
are an `UnwrittenOutputWarning` naming the programs whose store masks excluded them."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitriton
import minitriton as triton
import minitriton.language as tl
from minitriton.memory.initialization import registry
from minitriton.observers.sanitizer import UnwrittenOutputWarning
from minitriton.testing.poison import poison_bits


@pytest.fixture(params=[None, 1], ids=["grouped", "one-per-pass"])
def sanitize(request):
    with minitriton.set_options(sanitize=True, group_size=request.param):
        yield


def _empty(shape, made="np.empty"):
    """An array as `run` makes np.empty's: filled with the poison and tracked."""
    a = np.empty(shape, np.float32)
    bits = a.reshape(-1).view(np.uint32)
    bits[...] = poison_bits(np.float32)
    registry.register(bits, made=made, fill=poison_bits(np.float32), owner=a, watched=True)
    return a


@triton.jit
def copy_rows(x_ptr, out_ptr, n_cols, x_stride, out_stride, STORE_N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * out_stride + cols, v, mask=cols < STORE_N)


def _launch(out, store_n, n_cols=32):
    x = np.arange(out.shape[0] * n_cols, dtype=np.float32).reshape(out.shape[0], n_cols)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copy_rows[(out.shape[0],)](x, out, n_cols, n_cols, out.strides[0] // 4, store_n, BLOCK=32)
    return x, [w for w in caught if issubclass(w.category, UnwrittenOutputWarning)]


def test_a_mask_that_stops_short_is_reported_after_the_launch(sanitize):
    out = _empty((3, 32), made="torch.empty")
    _, found = _launch(out, 30)
    assert len(found) == 1
    w = found[0]
    assert str(w.message) == ("kernel `copy_rows` left elements 30…31, 62…63, 94…95 of `out_ptr` "
                              "(made by torch.empty) unwritten: the store masks of programs 0, 1, 2 excluded them")
    assert w.filename == __file__                     # the launch's line in the user's code
    record = w.message.diagnostic
    assert (record.kind, record.fields["tensor"], record.fields["made"]) == ("unwritten", "out_ptr", "torch.empty")
    assert record.fields["masked_by"] == [(0,), (1,), (2,)]


def test_a_complete_output_a_host_fill_and_a_strided_view_say_nothing(sanitize):
    x, found = _launch(_empty((3, 32)), 32)
    assert found == []
    out = _empty((3, 32))
    out[:, 30:] = 0.0                                 # the host writes what the kernel leaves out
    assert _launch(out, 30)[1] == []
    wide = _empty((3, 64))
    x, found = _launch(wide[:, :32], 32)              # the view's span holds columns 32..63 of rows 0, 1
    assert found == [] and np.array_equal(wide[:, :32], x)
    x, found = _launch(wide[:, 32:], 31)
    assert [str(w.message).split(" unwritten")[0] for w in found] == [
        "kernel `copy_rows` left elements 31, 95, 159 of `out_ptr` (made by np.empty)"]


def test_arrays_not_made_by_an_empty_constructor_are_not_reported(sanitize):
    out = np.zeros((3, 32), np.float32)
    assert _launch(out, 30)[1] == []
    with minitriton.set_options(sanitize=False):
        assert _launch(_empty((3, 32)), 30)[1] == []  # without the sanitizer nothing is tracked
