"""`static_hint`: the mix-ups visible in a kernel's source alone (a mask on the wrong axis, one stride for both
axes of a tile, a vector broadcast along the wrong axis), for failures whose values are all a check has (the
sandbox's wrong-output tests). Each comes with an edit of the user's line, in the kernel's own names, and a
text in both languages. A compile error (blocks of incompatible shapes, an arange not a power of 2) gets the fix
of its line as a note beside Triton's own text, which stays word for word."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from fix_mistakes import HEADER, matmul

import minitriton
from minitriton.diagnostics.catalogue import SUGGESTIONS
from minitriton.diagnostics.render import render, text
from minitriton.frontend.fixes import static_hint

OUTER = '''
@triton.jit
def outer_kernel(x_ptr, y_ptr, b_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + offs_m, mask=offs_m < M)
    y = tl.load(y_ptr + offs_n, mask=offs_n < N)
    tile = x[None, :] * y[None, :]
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], tile,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def check():
    x, y = rng.random(32, dtype=np.float32), rng.random(32, dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    outer_kernel[(2, 2)](x, y, np.zeros(32, np.float32), out, 32, 32, BM=16, BN=16)
    return out, np.outer(x, y)
'''

WRONG_AXIS = '''
@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (offs_m[None, :] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)
    tl.store(out_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(tile),
             mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))


def check():
    x = rng.random((100, 20), dtype=np.float32)
    out = np.zeros((20, 100), np.float32)
    transpose_kernel[(4, 2)](x, out, 100, 20, BM=32, BN=16)
    return out, x.T
'''

CASES = {   # name -> (source, the suggestion's kind, the English text)
    "mask_wrong_axis": (WRONG_AXIS, "mask_axis",
                        "the mask tests offs_m along the other axis: it has offs_m[None, :], while in the pointer "
                        "offs_m numbers the rows (offs_m[:, None]); write offs_m[:, None]"),
    "matmul_same_stride": (matmul().replace("offs_n[None, :] * stride_bn", "offs_n[None, :] * stride_bk"),
                           "same_stride",
                           "the rows (offs_k) and the columns (offs_n) of the tile are both multiplied by stride_bk: "
                           "multiply offs_n by stride_bn"),
    "broadcast_swapped": (OUTER, "broadcast_axis",
                          "the vector x is loaded at offs_m, which numbers the rows of the tile (offs_m[:, None]), "
                          "but it is broadcast as x[None, :]: write x[:, None]"),
}


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(CASES))
def test_static_hint_fixes_the_mix_up(name, tmp_path):
    source, kind, english = CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + source)
    with pytest.raises((AssertionError, minitriton.MiniTritonError)):   # wrong values, or a compile error
        got, want = _load(path).check()
        np.testing.assert_allclose(got, want, rtol=1e-5)
    hint = static_hint(str(path))
    assert hint is not None and hint.kind == kind and hint.edit is not None
    assert text(SUGGESTIONS[kind], "en", hint.fields) == english
    assert text(SUGGESTIONS[kind], "ru", hint.fields) != english
    path.write_text(hint.edit.apply(path.read_text()))
    got, want = _load(path).check()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert static_hint(str(path)) is None


def test_no_hint_for_a_correct_kernel(tmp_path):
    path = tmp_path / "right.py"
    path.write_text(HEADER + matmul())
    assert static_hint(str(path)) is None


# ---------------------------------------------------------------- compile errors: the fix under Triton's text

def _compile_error(source, tmp_path, name="kernel"):
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + source)
    with pytest.raises(minitriton.CompilationError) as info:
        _load(path).check()
    return path, info.value


def test_a_shape_mismatch_gets_the_edit_of_the_mix_up_and_keeps_tritons_text(tmp_path):
    path, exc = _compile_error(WRONG_AXIS, tmp_path)
    record = exc.diagnostic
    assert record.kind == "broadcast" and record.suggestion.kind == "mask_axis"
    # Triton's words, its reason last (what a comparison with Triton's compiler reads), the fix beside them
    lines = [ln for ln in str(exc).splitlines() if not ln.startswith("  in kernel")]
    assert str(exc) == record.triton and "fix" not in str(exc)
    assert lines[-1] == "ValueError('Cannot make_shape_compatible: incompatible dimensions at index 1: 32 and 16')"
    assert exc.__notes__ == ["  fix: " + CASES["mask_wrong_axis"][2]]
    assert render(record, "en", "page").endswith("; write offs_m[:, None].")
    assert render(record, "ru", "page").endswith("пишите offs_m[:, None].")
    path.write_text(record.suggestion.edit.apply(path.read_text()))
    got, want = _load(path).check()
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_shape_mismatch_with_no_mix_up_in_its_line_has_no_fix(tmp_path):
    _, exc = _compile_error('''
@triton.jit
def k(x_ptr):
    offs = tl.arange(0, 16) + tl.arange(0, 32)
    tl.store(x_ptr + offs, offs)


def check():
    k[(1,)](np.zeros(32, np.int32))
''', tmp_path)
    assert exc.diagnostic.kind == "broadcast" and exc.diagnostic.suggestion is None
    assert not getattr(exc, "__notes__", None)


@pytest.mark.parametrize("end, block, fix", [
    ("100", "", "use a power-of-2 block, tl.arange(0, 128), and mask the extra lanes: offs < 100"),
    ("BLOCK", ", BLOCK=100", "use a power-of-2 block (128) and mask the extra lanes"),
])
def test_an_arange_not_a_power_of_2_gets_the_next_one_and_the_mask(end, block, fix, tmp_path):
    _, exc = _compile_error(f'''
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, {end})
    tl.store(x_ptr + offs, offs, mask=offs < n)


def check():
    k[(1,)](np.zeros(100, np.int32), 100{block or ", BLOCK=64"})
''', tmp_path)
    assert exc.diagnostic.kind == "arange_power_of_two"
    assert str(exc).splitlines()[-2] == "arange's range must be a power of 2"
    assert exc.__notes__ == [f"  fix: {fix}"]
    assert render(exc.diagnostic, "ru", "page").endswith("закройте лишние дорожки маской" + (": offs < 100." if block == "" else "."))
