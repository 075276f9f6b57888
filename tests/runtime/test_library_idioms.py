"""Idioms of real kernel libraries: branching on `triton.__version__`, dtype predicates and `element_ty` of pointer
arguments, variables living under a constexpr `if` across a loop, dtypes handed to `@jit` helpers. Each kernel
runs as a library writes it, against Triton 3.9.0's interpreter where it runs it, else against NumPy."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from tests.helpers.oracle import assert_same_as_interpreter, load_minitriton_module

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_triton_version_is_the_emulated_triton_and_minitriton_keeps_its_own():
    code = ("import minitriton; minitriton.install()\n"
            "import triton\n"
            "from packaging import version\n"
            "assert triton.__version__ >= '3.0' and version.parse(triton.__version__) >= version.parse('3.0')\n"
            "assert triton.jit is minitriton.jit and 'jit' in dir(triton)\n"
            "print(triton.__version__, minitriton.__version__)\n"
            "minitriton.uninstall()\n"
            "import sys; assert 'triton' not in sys.modules\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert out.split() == ["3.9.0", project]


def test_triton_backends_name_no_compiler_backend_and_the_target_type():
    """`triton.backends.backends` is empty after install() (minitriton compiles for no device), so Triton's test
    helpers' `get_current_target()` takes its no-GPU path; `GPUTarget` is the driver's target type."""
    code = ("import minitriton; minitriton.install()\n"
            "import triton\n"
            "from triton.backends import backends\n"
            "from triton.backends.compiler import GPUTarget\n"
            "assert backends == {} and triton.backends.backends is backends\n"
            "target = triton.runtime.driver.active.get_current_target()\n"
            "assert isinstance(target, GPUTarget) and target.backend == 'cuda'\n"
            "assert not any(b.driver.is_active() for b in backends.values())\n")
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)


PREDICATES = ("is_int1", "is_int8", "is_int16", "is_int32", "is_int64", "is_uint8", "is_uint16", "is_uint32",
              "is_uint64", "is_floating", "is_fp32", "is_int_signed", "is_int_unsigned", "is_bool", "is_const")

DTYPE_KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def predicates(x_ptr, out_ptr):
    t = x_ptr.dtype.element_ty
''' + "".join(f"    tl.store(out_ptr + {i}, t.{p}())\n" for i, p in enumerate(PREDICATES)) + f'''
    tl.store(out_ptr + {len(PREDICATES)}, tl.dtype.is_dtype(t.name) and not x_ptr.dtype.is_const())
    tl.store(out_ptr + {len(PREDICATES) + 1}, x_ptr.type.element_ty == t)
    tl.store(out_ptr + {len(PREDICATES) + 2}, x_ptr.type.element_ty.primitive_bitwidth)
    if x_ptr.dtype.element_ty.is_int64():
        tl.store(out_ptr + {len(PREDICATES) + 3}, tl.load(x_ptr) + 1)
'''


@pytest.mark.interpreter
def test_dtype_predicates_and_element_ty_of_pointer_arguments_match_the_interpreter():
    kinds = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.float16, np.float32, np.float64]
    cases = [("predicates", (1,), [np.full(2, 7, kind), np.zeros(len(PREDICATES) + 4, np.int64)], {})
             for kind in kinds]
    assert_same_as_interpreter(DTYPE_KERNELS, cases)
    flags = load_minitriton_module(DTYPE_KERNELS).predicates   # and the answers are the ones expected
    out = np.zeros(len(PREDICATES) + 4, np.int64)
    flags[(1,)](np.full(2, 7, np.int64), out)
    assert out.tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 64, 8]


def test_dtype_predicates_on_the_host():
    assert [t for t in (tl.int1, tl.int8, tl.uint16, tl.uint64, tl.float32) if t.is_uint16() or t.is_int1()] == \
        [tl.int1, tl.uint16]
    assert tl.dtype.is_dtype("fp8e5") and tl.dtype.is_dtype("void") and not tl.dtype.is_dtype("float32")
    assert not tl.float16.is_const() and tl.pointer_type(tl.float16, const=True).is_const()
    with pytest.raises(RuntimeError, match="Not implemented"):   # as Triton 3.9 answers
        tl.int32.is_void()


SCOPING_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def column_sums(x_ptr, out_ptr, n_rows, HAS_W: tl.constexpr, B: tl.constexpr):
    cols = tl.arange(0, B)
    if HAS_W:
        dw = tl.zeros([B], tl.float32)
    for r in range(n_rows):
        x = tl.load(x_ptr + r * B + cols)
        if HAS_W:
            dw += x
    if HAS_W:
        tl.store(out_ptr + cols, dw)
'''


@pytest.mark.interpreter
def test_a_variable_under_a_constexpr_if_lives_across_a_loop_as_in_the_interpreter():
    x = np.random.default_rng(0).random((5, 16), dtype=np.float32)
    cases = [("column_sums", (1,), [x, np.full(16, -1, np.float32), 5], {"HAS_W": w, "B": 16}) for w in (True, False)]
    assert_same_as_interpreter(SCOPING_KERNEL, cases)
    out = np.full(16, -1, np.float32)
    load_minitriton_module(SCOPING_KERNEL).column_sums[(1,)](x, out, 5, HAS_W=True, B=16)
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-6)


def test_a_runtime_if_still_scopes_a_variable_first_assigned_in_a_loop():
    @minitriton.jit
    def k(out_ptr, n, FLAG: tl.constexpr):
        for i in range(n):
            if tl.program_id(0) == 0:
                v = tl.full([2], 1.0, tl.float32)
        tl.store(out_ptr + tl.arange(0, 2), v)
    with pytest.raises(minitriton.CompilationError, match="v is not defined"):
        k[(1,)](np.zeros(2, np.float32), 3, FLAG=True)


@minitriton.jit
def _filled(x, dtype, B: tl.constexpr):
    if dtype == tl.float32:
        return x.to(dtype.value) + tl.zeros([B], dtype) + 0.5
    return x.to(dtype) + tl.zeros([B], dtype.value)


@minitriton.jit
def _helper_caller(out32, out16, B: tl.constexpr):
    tl.static_assert(tl.float16 == tl.constexpr(tl.float16))
    offs = tl.arange(0, B)
    tl.store(out32 + offs, _filled(offs, tl.float32, B))
    tl.store(out16 + offs, _filled(offs, tl.float16, B))


def test_a_dtype_passed_to_a_helper_is_a_constexpr_there():
    # compiled Triton wraps it in tl.constexpr (`.value` works); the interpreter passes it bare, so NumPy decides
    out32, out16 = np.zeros(8, np.float32), np.zeros(8, np.float16)
    _helper_caller[(1,)](out32, out16, B=8)
    np.testing.assert_array_equal(out32, np.arange(8) + 0.5)
    np.testing.assert_array_equal(out16, np.arange(8, dtype=np.float16))


SUBCLASSED_AUTOTUNER = '''
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner


class ResettingAutotuner(Autotuner):
    """As flash-linear-attention's CachedAutotuner: Triton's hook attributes, a pre_hook of its own."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs):
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs)
        if not self.user_defined_pre_hook and self.reset_to_zero:
            def _pre_hook(kwargs, reset_only=False):
                for name in self.reset_to_zero:
                    kwargs[name][0] = 0
            self.pre_hook = _pre_hook
        assert not self.user_defined_post_hook


@triton.jit
def count(out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.atomic_add(out_ptr + offs * 0, 1, mask=offs < n)


counting = ResettingAutotuner(count, count.arg_names, [triton.Config({"B": 4})], ["n"], ["out_ptr"], None)


@triton.jit
def default_flag(out_ptr, descending: tl.constexpr = tl.core.CONSTEXPR_0):
    tl.store(out_ptr, descending + 5)
'''


@pytest.mark.interpreter
def test_a_subclass_of_the_autotuner_and_tl_core_as_libraries_use_them_match_the_interpreter():
    assert_same_as_interpreter(SUBCLASSED_AUTOTUNER, [("counting", (3,), [np.zeros(1, np.int32), 10], {}),
                                                      ("default_flag", (1,), [np.zeros(1, np.int32)], {})])
    module = load_minitriton_module(SUBCLASSED_AUTOTUNER)
    assert module.counting.user_defined_pre_hook is False and module.counting.pre_hook.__name__ == "_pre_hook"


@pytest.mark.torch
def test_torch_cuda_device_selects_the_emulated_gpu_under_run(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "device.py"
    script.write_text("import torch\n"
                      "x = torch.ones(3)\n"
                      "with torch.cuda.device(x.device.index), torch.cuda.device(0):\n"
                      "    print('inside', x.sum().item())\n"
                      "try:\n    torch.cuda.device(1)\nexcept ValueError:\n    print('device 1 refused')\n")
    done = subprocess.run([sys.executable, "-m", "minitriton", "run", str(script)], capture_output=True, text=True,
                          cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.stdout.split("\n")[:2] == ["inside 3.0", "device 1 refused"], done.stdout + done.stderr


LOOP_LOCAL_REUSED = '''
import triton
import triton.language as tl


@triton.jit
def reuse(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    acc = tl.zeros([B, B], tl.float32)
    for j in range(n):
        row = tl.load(x_ptr + j * B + offs)          # [B], local to this loop
        acc += row[:, None] * 0
    if n > 1:
        for j in range(n):
            row = tl.load(x_ptr + j * B + offs[:, None] + offs[None, :] * 0)   # [B, B]: a new variable
            acc += row
    tl.store(out_ptr + offs[:, None] * B + offs[None, :], acc)
'''


@pytest.mark.interpreter
def test_a_name_first_assigned_in_a_loop_is_a_new_variable_in_a_later_loop_as_in_fla():
    x = np.arange(12, dtype=np.float32)
    assert_same_as_interpreter(LOOP_LOCAL_REUSED, [("reuse", (1,), [x, np.zeros((4, 4), np.float32), 3, 4], {})])
