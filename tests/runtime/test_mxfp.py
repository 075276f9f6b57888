"""`triton.tools.mxfp` (minitriton/tools/mxfp.py) against the OCP MX v1.0 formats: fp4 e2m1 codes (sign bit 3,
exponent bits 2-1 with bias 1, mantissa bit 0), round to nearest with ties to even, clamping to +-6; e8m0
scales 2**(e - 127) with 255 NaN; two fp4 codes per byte, the first in the low nibble."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
from minitriton.tools.mxfp import MXFP4Tensor, MXScaleTensor, fp8e8m0_to_float32  # noqa: E402

pytestmark = pytest.mark.torch


def _e2m1(code: int) -> float:
    """The value of an fp4 e2m1 code, from the spec's fields."""
    sign, exponent, mantissa = code >> 3, (code >> 1) & 3, code & 1
    magnitude = mantissa * 0.5 if exponent == 0 else (1 + mantissa * 0.5) * 2.0 ** (exponent - 1)
    return -magnitude if sign else magnitude


def test_every_code_decodes_to_its_e2m1_value_and_encodes_back():
    codes = torch.arange(16, dtype=torch.uint8)
    t = MXFP4Tensor(size=16)
    t.data = codes
    values = t.to(torch.float32)
    assert values.tolist() == [_e2m1(c) for c in range(16)]
    back = MXFP4Tensor(data=values).data
    assert back.tolist() == [c if c != 8 else 8 for c in range(16)]   # -0 keeps its sign bit


@pytest.mark.parametrize("value, expected", [
    (0.25, 0.0), (0.75, 1.0), (1.25, 1.0), (1.75, 2.0), (2.5, 2.0), (3.5, 4.0), (5.0, 4.0),   # ties to even
    (0.26, 0.5), (5.1, 6.0), (7.0, 6.0), (1e9, 6.0), (-2.6, -3.0), (math.inf, 6.0), (-math.inf, -6.0)])
def test_rounding_is_to_nearest_ties_to_even_and_clamps(value, expected):
    t = MXFP4Tensor(data=torch.tensor([value], dtype=torch.float32))
    assert t.to(torch.float32).item() == expected


def test_packing_puts_the_first_code_in_the_low_nibble_and_unpacks():
    t = MXFP4Tensor(size=(2, 3))
    t.data = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.uint8)
    packed = t.to_packed_tensor(dim=1)               # odd length: a zero code pads the end
    assert packed.tolist() == [[0x21, 0x03], [0x54, 0x06]]
    assert torch.equal(t.unpack_packed_tensor(packed, 1, (2, 3)), t.data)
    assert t.to_packed_tensor(dim=0).tolist() == [[0x41, 0x52, 0x63]]


def test_random_codes_cover_the_format_and_scales_follow_e8m0():
    torch.manual_seed(0)
    data = MXFP4Tensor(size=(64, 64), device="cpu").random().data
    assert data.dtype == torch.uint8 and set(data.unique().tolist()) == set(range(16))
    scales = MXScaleTensor(torch.tensor([1.0, 3.0, 0.375, 2.0 ** -127, 0.0, -1.0, math.nan, math.inf]))
    assert scales.data.tolist() == [127, 128, 125, 0, 255, 255, 255, 255]
    decoded = fp8e8m0_to_float32(scales.data)
    assert decoded[:4].tolist() == [1.0, 2.0, 0.25, 2.0 ** -127] and decoded[4:].isnan().all()
    drawn = MXScaleTensor(size=1000).random(low=0.25, high=4.0).data
    assert drawn.min().item() >= 125 and drawn.max().item() <= 129


def test_the_emulated_cublas_computes_a_times_b_transposed_rounded_once():
    """tools/cublas.py, what tutorial 09 imports as `triton._C.libtriton.nvidia`: c = a @ b.T. Small integers
    make every product and sum exact, so the result must equal the exact one."""
    from minitriton.tools.cublas import nvidia
    torch.manual_seed(0)
    a = torch.randint(-4, 5, (64, 32)).to(torch.float16)
    b = torch.randint(-4, 5, (48, 32)).to(torch.float16)
    c = torch.empty(64, 48, dtype=torch.float16)
    nvidia.cublas.CublasLt(torch.empty(8, dtype=torch.uint8)).matmul(a, b, c)
    assert torch.equal(c, (a.double() @ b.double().T).half())
    e4m3 = torch.empty(64, 48, dtype=torch.float8_e4m3fn)
    nvidia.cublas.CublasLt(None).matmul(a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn), e4m3)
    assert torch.equal(e4m3.float(), (a.double() @ b.double().T).to(torch.float8_e4m3fn).float())
