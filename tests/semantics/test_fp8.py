"""fp8 types against references written here from the format definitions, and against the H200.

* Values: every byte of the five formats decoded here from sign/exponent/mantissa (exact Fractions), against
  minitriton's loads.
* Rounding: an exact-arithmetic nearest-value search over each format's values (ties to the even code,
  saturation to the largest finite value), against minitriton's conversions on edge values and hypothesis draws.
* The GPU: parity/results/cuda-fp8-2026-12-01.json holds, for every conversion with an fp8 side that Triton 3.6
  compiles on an H200, the SHA-256 of its output over exhaustive or tie-covering inputs (the inputs are defined
  there and rebuilt here), or the error the compile raised. Each is rerun through a minitriton kernel
  (load, `.to`, store) and must give the same bytes, or fail to compile the same way. docs/semantics.md S17.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitriton
import minitriton.language as tl
from minitriton.semantics import fp8

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "parity" / "results" / "cuda-fp8-2026-12-01.json"
GPU = json.loads(RESULTS.read_text())
# (exponent bits, mantissa bits, bias, NaN rule, has inf), from the format definitions (S17.1)
FORMATS = {"fp8e4nv": (4, 3, 7, "S.1111.111", False), "fp8e5": (5, 2, 15, "exponent 31, mantissa != 0", True),
           "fp8e4b15": (4, 3, 15, "none", False), "fp8e4b8": (4, 3, 8, "0x80", False),
           "fp8e5b16": (5, 2, 16, "0x80", False)}
TYPES = {"fp16": tl.float16, "bf16": tl.bfloat16, "fp32": tl.float32, "fp64": tl.float64,
         "fp8e4nv": tl.float8e4nv, "fp8e5": tl.float8e5, "fp8e4b15": tl.float8e4b15, "fp8e4b8": tl.float8e4b8,
         "fp8e5b16": tl.float8e5b16}
STORAGE = {"fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32, "fp64": np.uint64}


def reference_value(name: str, code: int):
    """The exact value of a byte (a Fraction), "nan", "inf" or "-inf", from the format's definition."""
    ebits, mbits, bias, nan_rule, has_inf = FORMATS[name]
    sign = -1 if code >> 7 else 1
    exponent = (code >> mbits) & ((1 << ebits) - 1)
    mantissa = code & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if (nan_rule == "S.1111.111" and code & 0x7F == 0x7F) or (nan_rule == "0x80" and code == 0x80):
        return "nan"
    if has_inf and exponent == top:
        return "nan" if mantissa else ("inf" if sign > 0 else "-inf")
    if exponent == 0:
        return sign * Fraction(mantissa, 1 << mbits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(mantissa, 1 << mbits)) * Fraction(2) ** (exponent - bias)


def reference_round(name: str, x: float) -> int:
    """x rounded to the format as an H200's `cvt.rn.satfinite` does (S17.2): the nearest value, ties to the even
    code, beyond the largest finite value (and ±inf) that value; NaN 0x7F."""
    if math.isnan(x):
        return 0x7F
    finite = [(reference_value(name, c), c) for c in range(128)]
    finite = [(v, c) for v, c in finite if not isinstance(v, str)]
    biggest = max(finite)
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        return biggest[1] | sign
    a = abs(Fraction(x))
    best = min(finite, key=lambda vc: (abs(vc[0] - a), vc[1] % 2))
    return best[1] | sign


def kernel_output(src: str, dst: str, bits: np.ndarray, rounding):
    """A minitriton kernel: load `src` values, `.to(dst)` (with `fp_downcast_rounding`), store; the bytes."""
    src_ty, dst_ty = TYPES[src], TYPES[dst]
    x = minitriton.reinterpret(bits.copy(), src_ty)
    out = np.zeros(bits.size, np.uint8 if dst_ty.is_fp8() else STORAGE[dst])
    _convert[(triton_cdiv(bits.size, 65536),)](x, minitriton.reinterpret(out, dst_ty), bits.size, DST=dst_ty,
                                               RTZ=rounding == "rtz", BLOCK=65536)
    return out


def triton_cdiv(a, b):
    return (a + b - 1) // b


@minitriton.jit
def _convert(X, Y, N, DST: tl.constexpr, RTZ: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N)
    if RTZ:
        y = x.to(DST, fp_downcast_rounding="rtz")
    else:
        y = x.to(DST)
    tl.store(Y + offs, y, mask=offs < N)


def gpu_inputs(src: str) -> np.ndarray:
    """The input bit patterns of the GPU run, as its JSON defines them."""
    if src.startswith("fp8"):
        return np.arange(256, dtype=np.uint8)
    if src in ("fp16", "bf16"):
        return np.arange(65536, dtype=np.uint32).astype(np.uint16)
    top = np.arange(65536, dtype=np.uint32) << np.uint32(16)
    f32 = (top[:, None] | np.array(GPU["fp32_low_halves"], np.uint32)[None, :]).reshape(-1)
    if src == "fp32":
        return f32
    with np.errstate(invalid="ignore", over="ignore"):
        f64 = f32.view(np.float32).astype(np.float64)
        return np.concatenate([f64, f64 * (1 + 2.0 ** -30), f64 * (1 - 2.0 ** -30)]).view(np.uint64)


def _conversion(key: str):
    src, rest = key.split("->")
    dst, _, rounding = rest.partition(".")
    return src, dst, rounding or None


CONVERSIONS = sorted(k for k in GPU["results"] if "->" in k)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_byte_decodes_to_its_defined_value(name):
    """S17.1: loads read every byte as the format defines it (signed zeros, subnormals, inf, NaN)."""
    bits = np.arange(256, dtype=np.uint8)
    values = fp8.decode(bits, TYPES[name]).astype(np.float64)
    for code in range(256):
        want = reference_value(name, code)
        got = values[code]
        if want == "nan":
            assert math.isnan(got), hex(code)
        elif isinstance(want, str):
            assert got == float(want), hex(code)
        else:
            assert Fraction(float(got)) == want and math.copysign(1, got) == (-1 if code >> 7 else 1), hex(code)


EDGES = [0.0, -0.0, 1.0, 1.0625, 1.125 + 1 / 32, 240.0, 448.0, 464.0, 480.0, 1e30, -1e30, float("inf"),
         -float("inf"), 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11, 2.0 ** -6 - 2.0 ** -10, 57344.0, 61440.0, 65504.0,
         2.0 ** -16, 3 * 2.0 ** -18, 2.0 ** -14 * 1.5, 0.1, -0.3, 1e-45]


@pytest.mark.parametrize("name", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("x", EDGES)
def test_rounding_matches_the_reference_on_edges(name, x):
    """S17.2: nearest, ties to even, saturation (overflow and ±inf to ±max), from fp32."""
    got = kernel_output("fp32", name, np.array([x], np.float32).view(np.uint32), None)[0]
    assert got == reference_round(name, float(np.float32(x))), (x, hex(got))


@pytest.mark.parametrize("name", ["fp8e4nv", "fp8e5"])
@given(st.floats(width=32, allow_nan=False, min_value=-70000, max_value=70000))
def test_rounding_matches_the_reference_on_draws(name, x):
    got = kernel_output("fp32", name, np.array([x], np.float32).view(np.uint32), None)[0]
    assert got == reference_round(name, x), (x, hex(got))


@pytest.mark.parametrize("key", CONVERSIONS)
def test_conversion_matches_the_h200(key):
    """S17: every conversion gives the H200's bytes (exhaustive or tie-covering inputs), or fails to compile
    where the H200's compile fails."""
    src, dst, rounding = _conversion(key)
    gpu = GPU["results"][key]
    bits = gpu_inputs(src)
    if "error" in gpu:
        with pytest.raises(minitriton.CompilationError):
            kernel_output(src, dst, bits, rounding)
        return
    out = kernel_output(src, dst, bits, rounding)
    assert hashlib.sha256(out.tobytes()).hexdigest() == gpu["sha256"], key


def test_abs_clears_the_sign_bit_of_every_byte():
    """S17.5: tl.abs of fp8 works on the H200 (NaN stays NaN); minitriton keeps the byte, sign cleared."""
    @minitriton.jit
    def k(X, Y):
        o = tl.arange(0, 256)
        tl.store(Y + o, tl.abs(tl.load(X + o)))

    for name in ("fp8e4nv", "fp8e5", "fp8e4b15"):
        x, y = np.arange(256, dtype=np.uint8), np.zeros(256, np.uint8)
        k[(1,)](minitriton.reinterpret(x, TYPES[name]), minitriton.reinterpret(y, TYPES[name]))
        assert (y == (x & 0x7F)).all(), name


def test_bitcast_and_copies_keep_every_byte():
    @minitriton.jit
    def k(X, Y, Z):
        o = tl.arange(0, 256)
        v = tl.load(X + o)
        tl.store(Y + o, v)
        tl.store(Z + o, v.to(tl.int8, bitcast=True))

    for name in ("fp8e4nv", "fp8e5", "fp8e4b15"):
        x, y, z = np.arange(256, dtype=np.uint8), np.zeros(256, np.uint8), np.zeros(256, np.int8)
        k[(1,)](minitriton.reinterpret(x, TYPES[name]), minitriton.reinterpret(y, TYPES[name]), z)
        assert (y == x).all() and (z.view(np.uint8) == x).all(), name


@pytest.mark.parametrize("expr, match", [
    ("x + x", "PassManager::run failed"), ("x * x", "PassManager::run failed"), ("-x", "PassManager::run failed"),
    ("x < x", "PassManager::run failed"), ("tl.maximum(x, x)", "PassManager::run failed"),
    ("x + 1.5", "has no attribute 'get_fp8e4nv'"), ("tl.full((8,), 1.5, tl.float8e4nv)", "get_fp8e4nv"),
    ("x.to(tl.int32)", "cannot cast"), ("x.to(tl.float64)", "PassManager::run failed"),
    ("x.to(tl.float8e5)", "PassManager::run failed"), ("x.to(tl.float8e4b8)", "not supported in this architecture"),
])
def test_what_the_h200_does_not_compile_fails_to_compile(expr, match, tmp_path):
    """S17.3: fp8 arithmetic, non-zero fp8 constants, fp8 <-> int and fp8 <-> fp64 casts and the fnuz types."""
    path = tmp_path / "k.py"
    path.write_text("import minitriton\nimport minitriton.language as tl\n\n\n@minitriton.jit\n"
                    f"def k(X, Y):\n    x = tl.load(X + tl.arange(0, 8))\n    y = {expr}\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    x = minitriton.reinterpret(np.zeros(8, np.uint8), tl.float8e4nv)
    with pytest.raises(minitriton.CompilationError, match=match):
        namespace["k"][(1,)](x, np.zeros(8, np.float32))


def test_fp8_with_fp16_computes_in_fp16():
    """S17.5: fp8 + fp16 converts the fp8 operand (exactly) and adds in fp16, as on the H200."""
    @minitriton.jit
    def k(X, Y, Z):
        o = tl.arange(0, 256)
        tl.store(Z + o, (tl.load(X + o) + tl.load(Y + o)).to(tl.float32))

    x = np.arange(256, dtype=np.uint8)
    y = np.arange(256, dtype=np.uint16).astype(np.float16) / 64
    z = np.zeros(256, np.float32)
    k[(1,)](minitriton.reinterpret(x, tl.float8e5), y, z)
    values = fp8.VALUES["fp8e5"]
    with np.errstate(invalid="ignore"):
        want = (values.astype(np.float16) + y).astype(np.float32)
    np.testing.assert_array_equal(z, want)


def test_dot_of_fp8_is_exact_products_accumulated_in_fp32():
    """S17.6: fp8 dot on the H200 agreed with exact products summed in fp32 (K = 32, 64)."""
    @minitriton.jit
    def k(A, B, C, K: tl.constexpr):
        r = tl.arange(0, 16)
        rk = tl.arange(0, K)
        a = tl.load(A + r[:, None] * K + rk[None, :])
        b = tl.load(B + rk[:, None] * 16 + r[None, :])
        tl.store(C + r[:, None] * 16 + r[None, :], tl.dot(a, b))

    rng = np.random.default_rng(0)
    a = (rng.integers(0, 256, (16, 32)) & 0xBF).astype(np.uint8)
    b = (rng.integers(0, 256, (32, 16)) & 0xBF).astype(np.uint8)
    c = np.zeros((16, 16), np.float32)
    k[(1,)](minitriton.reinterpret(a, tl.float8e4nv), minitriton.reinterpret(b, tl.float8e5), c, K=32)
    values = fp8.VALUES
    want = values["fp8e4nv"][a] @ values["fp8e5"][b]
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-6)


def test_torch_float8_tensors_are_fp8_pointers():
    torch = pytest.importorskip("torch")

    @minitriton.jit
    def k(X, Y):
        o = tl.arange(0, 4)
        tl.store(Y + o, tl.load(X + o).to(tl.float32))

    x = torch.tensor([1.5, -2.0, 448.0, 0.125]).to(torch.float8_e4m3fn)
    y = torch.zeros(4)
    k[(1,)](x, y)
    assert y.tolist() == [1.5, -2.0, 448.0, 0.125]


_INTERPRETER_SCRIPT = """
import json, numpy as np, torch, triton, triton.language as tl
@triton.jit
def conv(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Y + o, tl.load(X + o))
out = {}
for name in ("float8e4nv", "float8e5", "float8e4b15"):
    ty = getattr(tl, name)
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch.int8)
    wide = torch.zeros(256, dtype=torch.float32)
    conv[(1,)](triton.reinterpret(codes, ty), wide, N=256)
    back = torch.zeros(256, dtype=torch.int8)
    conv[(1,)](wide, triton.reinterpret(back, ty), N=256)
    out[name] = [wide.numpy().view(np.uint32).tolist(), back.view(torch.uint8).tolist()]
print(json.dumps(out))
"""


def test_interpreter_agrees_where_it_is_right():
    """Triton 3.9's interpreter decodes finite fp8 values exactly and encodes them back (its rounding is half up
    without saturation and it has no fp8 NaN or inf, so only the finite values are compared)."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", _INTERPRETER_SCRIPT], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        pytest.skip(f"Triton's interpreter is not available: {proc.stderr.strip().splitlines()[-1:]}")
    interpreted = json.loads(proc.stdout)
    for name, (wide, back) in interpreted.items():
        ty = TYPES[name.replace("float8", "fp8")]
        values = fp8.decode(np.arange(256, dtype=np.uint8), ty)
        finite = np.isfinite(values)
        assert (np.array(wide, np.uint32)[finite] == values.view(np.uint32)[finite]).all(), name
        assert (np.array(back, np.uint8)[finite] == np.arange(256)[finite]).all(), name


@minitriton.jit
def _op(X, Y, Z, OP: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    if OP == "add":
        z = x + y
    elif OP == "mul":
        z = x * y
    elif OP == "neg":
        z = -x
    elif OP == "lt":
        z = x < y
    elif OP == "maximum":
        z = tl.maximum(x, y)
    elif OP == "where":
        z = tl.where(x < y, x, y)
    elif OP == "add_literal":
        z = x + 1.5
    elif OP == "add_fp16":
        z = x + y.to(tl.float16)
    elif OP == "sum":
        z = tl.sum(x, 0) + tl.zeros_like(x)
    elif OP == "full":
        z = tl.full((N, ), 1.5, X.dtype.element_ty)
    else:  # "abs"
        z = tl.abs(x)
    tl.store(Z + o, z.to(tl.float32))


@minitriton.jit
def _to_int32(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Y + o, tl.load(X + o).to(tl.int32))


OPS = sorted(k for k in GPU["results"] if "->" not in k)


@pytest.mark.parametrize("key", OPS)
def test_op_matches_the_h200(key):
    """S17.3, S17.5: fp8 arithmetic, constants and casts to int32 compile where the H200 compiles them, with its
    bytes (parity.fp8_table's kernels: x is every byte, y the bytes reversed)."""
    name, op = key.split(".")
    x = np.arange(256, dtype=np.uint8)
    y = x[::-1].copy()
    out = np.zeros(256, np.int32 if op == "to_int32" else np.float32)
    X, Y = minitriton.reinterpret(x, TYPES[name]), minitriton.reinterpret(y, TYPES[name])

    def run():
        if op == "to_int32":
            _to_int32[(1,)](X, out, N=256)
        else:
            _op[(1,)](X, Y, out, OP=op, N=256)

    if "error" in GPU["results"][key]:
        with pytest.raises(minitriton.CompilationError):
            run()
        return
    with np.errstate(invalid="ignore"):
        run()
    if out.dtype == np.float32:
        # fp16 -> fp32 on the GPU makes every NaN 0x7FFFFFFF; minitriton's fp16 arithmetic keeps NumPy's payloads
        # (any NaN is a NaN: S12), so NaNs are compared as the GPU writes them
        out[np.isnan(out)] = np.uint32(0x7FFFFFFF).view(np.float32)
    assert hashlib.sha256(out.tobytes()).hexdigest() == GPU["results"][key]["sha256"], key
