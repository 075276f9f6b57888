"""`triton.tools.mxfp`: host tensors of the OCP microscaling (MX) formats, as Triton's helpers give them (torch).

`MXFP4Tensor`: fp4 e2m1 codes, one per uint8 (bit 3 the sign, bits 2-1 the exponent with bias 1, bit 0 the
mantissa; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6; no inf or NaN). `MXScaleTensor`: e8m0 scales (2**(e - 127),
255 is NaN). Tutorial 10 draws its operands with these, packs two fp4 codes per byte (`to_packed_tensor`,
low nibble first) and builds its float32 reference with `.to(torch.float32)`.
"""
from __future__ import annotations

import math

_FP4 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)   # the magnitude of codes 0-7


class _MXCodes:
    """An MX tensor's codes: made from float data (`_from_float`) or sized for `random()`."""

    def __init__(self, data=None, size=None, device=None):
        self.device = device
        if data is not None:
            self.device = data.device
            self.data = self._from_float(data)
        elif size is not None:
            self.size = size if isinstance(size, tuple) else (size,)
        else:
            raise ValueError("Either parameter data or size must be provided")


class MXFP4Tensor(_MXCodes):
    """fp4 e2m1 values: `MXFP4Tensor(data=float32 tensor)` (rounded to nearest, ties to even; beyond 6 and inf
    or NaN clamp to +-6) or `MXFP4Tensor(size=..., device=...).random()`; `.data` holds the codes."""

    def random(self):
        """Uniform codes: sign, exponent and mantissa drawn in turn, as Triton's helper draws them."""
        import torch
        sign, exponent, mantissa = (torch.randint(0, k, size=self.size, dtype=torch.uint8, device=self.device)
                                    for k in (2, 4, 2))
        self.data = (sign << 3) | (exponent << 1) | mantissa
        return self

    def to(self, dtype):
        import torch
        assert dtype == torch.float32, "Currently only float32 is supported for fp4e2m1 to float conversion"
        magnitude = torch.tensor(_FP4, dtype=torch.float32, device=self.data.device)[(self.data & 7).long()]
        return torch.where((self.data & 8) != 0, -magnitude, magnitude)

    def _from_float(self, values):
        import torch
        table = torch.tensor(_FP4, dtype=torch.float32, device=values.device)
        magnitude = values.abs().nan_to_num(nan=6.0, posinf=6.0).clamp(max=6.0)
        distance = (magnitude.unsqueeze(-1) - table).abs()
        nearest = distance.min(dim=-1, keepdim=True).values
        odd = torch.arange(8, device=values.device) % 2   # ties go to the even code (mantissa 0)
        code = torch.where(distance == nearest, odd, 2).argmin(dim=-1).to(torch.uint8)
        return code | (torch.signbit(values).to(torch.uint8) << 3)

    def to_packed_tensor(self, dim):
        """Two codes per byte along `dim` (element 2i in the low nibble, 2i+1 in the high; an odd length is
        padded with a zero code)."""
        import torch
        data = self.data
        if data.size(dim) % 2:
            pad = [0] * (2 * data.ndim)
            pad[(data.ndim - dim - 1) * 2 + 1] = 1
            data = torch.nn.functional.pad(data, pad)
        pairs = data.reshape(*data.shape[:dim], data.size(dim) // 2, 2, *data.shape[dim + 1:])
        return (pairs.select(dim + 1, 1) << 4) | pairs.select(dim + 1, 0)

    def unpack_packed_tensor(self, packed_tensor, dim, original_shape):
        """The codes of `to_packed_tensor`'s bytes, one per uint8, in `original_shape`."""
        import torch
        both = torch.stack((packed_tensor & 0xF, (packed_tensor >> 4) & 0xF), dim=dim + 1)
        data = both.reshape(*both.shape[:dim], -1, *both.shape[dim + 2:])
        return data.narrow(dim, 0, original_shape[dim]).to(torch.uint8)


def fp8e8m0_to_float32(scale):
    """e8m0 bytes as float32: 2**(e - 127) (e = 0 gives 2**-127, a subnormal), 255 NaN."""
    import torch
    bits = (scale.view(torch.uint8).to(torch.int32) << 23).clamp_min(0x00400000)
    return bits.masked_fill(scale.view(torch.uint8) == 255, 0x7FC00000).view(torch.float32)


class MXScaleTensor(_MXCodes):
    """e8m0 scales: `MXScaleTensor(data=float32 tensor)` (2**floor(log2 x); x <= 0, inf and NaN become NaN)
    or `MXScaleTensor(size=...).random(low, high)`; `.data` holds the bytes."""

    def random(self, low=None, high=None):
        import torch
        lowest = 0 if low is None else max(0, int(math.log2(low)) + 127)
        highest = 254 if high is None else min(254, max(0, int(math.log2(high)) + 127))
        assert lowest <= highest, "Low must be less than or equal to high"
        self.data = torch.randint(lowest, highest + 1, size=self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        import torch
        assert dtype == torch.float32, "Currently only float32 is supported for f8e8m0 to float conversion"
        return fp8e8m0_to_float32(self.data)

    def _from_float(self, values):
        import torch
        invalid = ~torch.isfinite(values) | (values <= 0)
        exponent = torch.floor(torch.log2(torch.where(invalid, 1.0, values))).to(torch.int32) + 127
        return torch.where(invalid, 255, exponent.clamp(0, 254)).to(torch.uint8)
