"""GPU probe for per-op semantics (Triton on an NVIDIA GPU). Writes $OUT/probe.json."""
import importlib, json, math, os, sys, tempfile, traceback
import numpy as np
import torch
import triton
import triton.language as tl

N = 64
DEV = os.environ.get("PROBE_DEVICE", "cuda")
TYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "fp16", "bf16", "fp32", "fp64"]
TL = {"int1": "tl.int1", "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64",
      "uint8": "tl.uint8", "uint16": "tl.uint16", "uint32": "tl.uint32", "uint64": "tl.uint64",
      "fp16": "tl.float16", "bf16": "tl.bfloat16", "fp32": "tl.float32", "fp64": "tl.float64"}
WIDTH = {"int1": 8, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "fp16": 16, "bf16": 16,
         "int32": 32, "uint32": 32, "fp32": 32, "int64": 64, "uint64": 64, "fp64": 64}
SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
NPT = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
       "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "fp16": np.float16, "fp32": np.float32,
       "fp64": np.float64}

def bf16_bits(vals):
    f = np.asarray(vals, np.float64).astype(np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    r[nan] = 0x7FC0
    return r

def to_bits(ty, vals, fill):
    vals = list(vals) + [fill] * (N - len(vals))
    if ty == "int1":
        a = np.array([1 if v else 0 for v in vals], np.int8)
    elif ty == "bf16":
        a = bf16_bits(vals)
    elif ty.startswith(("int", "uint")):
        bits = WIDTH[ty]
        a = np.array([int(v) % (1 << bits) for v in vals], np.uint64).astype(getattr(np, f"uint{bits}"))
    else:
        a = np.array(vals, np.float64).astype(NPT[ty])
    return torch.from_numpy(np.ascontiguousarray(a).view(SIGNED[WIDTH[ty]]).copy()).to(DEV)

HEADER = '''
import triton
import triton.language as tl

@triton.jit
def _ld(P, o, TY: tl.constexpr):
    v = tl.load(P + o)
    if TY == tl.int1:
        r = v != 0
    else:
        r = v.to(TY, bitcast=True)
    return r

@triton.jit
def _st(ZF, ZI, T, o, z):
    if z.dtype.is_floating():
        tl.store(ZF + o, z.to(tl.float64))
        tl.store(T + 1, 1)
    else:
        tl.store(ZI + o, z.to(tl.int64))
        tl.store(T + 1, 0)
    if z.dtype.is_int_signed():
        tl.store(T + 2, 1)
    if z.dtype.is_bf16():
        tl.store(T + 3, 1)
    tl.store(T + 0, z.dtype.primitive_bitwidth)
'''
TEMPLATE = '''
@triton.jit
def {name}(X, Y, ZF, ZI, T, XTY: tl.constexpr, YTY: tl.constexpr, ZTY: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = _ld(X, o, XTY)
    y = _ld(Y, o, YTY)
    z = {expr}
    _st(ZF, ZI, T, o, z)
'''

CASES = []
def case(expr, xt, xs, yt="int32", ys=(), zt="int32", fill_x=0, fill_y=1, tag=""):
    CASES.append(dict(expr=expr, xt=xt, xs=list(xs), yt=yt, ys=list(ys), zt=zt, fill_x=fill_x, fill_y=fill_y, tag=tag))

nan, inf = float("nan"), float("inf")
# A: float -> int casts
FV = [nan, inf, -inf, 300.7, -300.7, 70000.5, -70000.5, 3e9, -3e9, 1e19, -1e19, 1e30, -0.5, -1.5, 2.7, 128.0,
      -129.0, 255.5, 256.0, 65535.9, 65536.0, -32769.0, 2147483520.0, 4294967040.0, 9.2e18, 1.8e19, -2.7, 127.9]
for src in ["fp32", "fp64"]:
    for dst in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        case("x.to(ZTY)", src, FV, zt=dst, tag="f2i")
HV = [nan, inf, -inf, 300.5, -300.5, 65504.0, -65504.0, 255.5, 256.0, -129.0, -0.5, 2.5, 1000.0, -1000.0, 127.9, -2.7]
for dst in ["int8", "uint8", "int16", "uint16", "int32", "uint32"]:
    case("x.to(ZTY)", "fp16", HV, zt=dst, tag="f2i")
BV = [nan, inf, -inf, 3e38, -3e38, 300.0, -300.0, 3e9, -3e9, 1e19, -1e19, 2.5, -2.5, 65536.0, 128.0, -129.0]
for dst in ["int8", "uint8", "int32", "uint32", "int64", "uint64"]:
    case("x.to(ZTY)", "bf16", BV, zt=dst, tag="f2i")
case("x.to(ZTY)", "fp32", [nan, 0.0, -0.0, 1e-45, inf, -inf, 0.5], zt="int1", tag="f2b")
# B: integer division by zero and MIN // -1
for ty in ["int8", "int16", "int32", "int64"]:
    b = int(ty[3:]); mn, mx = -(1 << (b - 1)), (1 << (b - 1)) - 1
    xs = [7, -7, 0, 1, mn, mx, mn, mn + 1, -7, 7]
    ys = [0, 0, 0, 0, 0, 0, -1, -1, -1, -1]
    for e in ["x // y", "x % y"]:
        case(e, ty, xs, ty, ys, zt=ty, tag="divzero")
for ty in ["uint8", "uint16", "uint32", "uint64"]:
    b = int(ty[4:]); mx = (1 << b) - 1
    xs = [7, mx - 5, 0, 1, mx, mx, 5]
    ys = [0, 0, 0, 0, 0, 1, 3]
    for e in ["x // y", "x % y"]:
        case(e, ty, xs, ty, ys, zt=ty, tag="divzero")
# C: bool arithmetic
for e in ["x + y", "x - y", "x * y", "-x", "x ^ y", "~x", "x < y", "x + 1", "x * 3"]:
    case(e, "int1", [0, 0, 1, 1], "int1", [0, 1, 0, 1], zt="int1", tag="bool")
# D: int -> bf16 / fp16 / fp32
I32 = [16842753, -16842753, 16842752, 33685505, 33685503, 257, 65793, 2147483647, -2147483648, 16777217, 16777219]
case("x.to(ZTY)", "int32", I32, zt="bf16", tag="i2f")
case("x.to(ZTY)", "uint32", [16842753, 4294967295, 33685505, 2147483649], zt="bf16", tag="i2f")
I64 = [2**62 + 2**54 + 1, 2**62 + 2**54, 16842753, 2**40 + 2**32 + 1, -(2**62 + 2**54 + 1), 2**62 + 2**38 + 1,
       -(2**63), 2**63 - 1, 2**53 + 1, 2**53 + 3]
case("x.to(ZTY)", "int64", I64, zt="bf16", tag="i2f")
case("x.to(ZTY)", "int64", I64, zt="fp32", tag="i2f")
case("x.to(ZTY)", "int64", I64 + [65519, 65520, 2049, 2051], zt="fp16", tag="i2f")
U64 = [2**63 + 2**55 + 1, 2**64 - 1, 2**63 + 2**39 + 1, 16842753, 2**63]
case("x.to(ZTY)", "uint64", U64, zt="bf16", tag="i2f")
case("x.to(ZTY)", "uint64", U64, zt="fp32", tag="i2f")
case("x.to(ZTY)", "uint64", U64 + [65519, 65520], zt="fp16", tag="i2f")
case("x.to(ZTY)", "int32", [65519, 65520, 2049, 2051, 4097, 100000, -65520, 16842753], zt="fp16", tag="i2f")
case("x.to(ZTY)", "int16", [257, 259, 32767, -32768, 511, 513, -259], zt="bf16", tag="i2f")
case("x.to(ZTY)", "uint16", [65535, 257, 259, 511], zt="bf16", tag="i2f")
case("x.to(ZTY)", "int1", [0, 1], zt="bf16", tag="i2f")
# E: float -> narrower float, default and rtz
D = [1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-8, 1 + 2**-7 + 2**-8, 1e39, -1e39, inf, nan, 1e-39,
     1 + 2**-11 + 2**-40, 1 + 2**-11, 65519.99, 65520.0, 1e-8, 2**-25 + 2**-60, 3.4e38, 1 + 2**-30, -(1 + 2**-30)]
for dst in ["bf16", "fp16", "fp32"]:
    case("x.to(ZTY)", "fp64", D, zt=dst, tag="f2f")
    case("x.to(ZTY, fp_downcast_rounding='rtz')", "fp64", D, zt=dst, tag="f2f")
F = [1e6, -1e6, inf, -inf, nan, 65519.0, 65520.0, 1 + 2**-11 + 2**-20, 1e-8, 3.4e38, -3.4e38, 1.99999988, 1e-39,
     1.00390625, 1.01171875]
for dst in ["bf16", "fp16"]:
    case("x.to(ZTY, fp_downcast_rounding='rtz')", "fp32", F, zt=dst, tag="f2f")
    case("x.to(ZTY)", "fp32", F, zt=dst, tag="f2f")
case("x.to(ZTY)", "bf16", [99840.0, 1.0078125, 3e-8, -3e-8, 65536.0, 65280.0, 1e-5, nan, inf], zt="fp16", tag="f2f")
case("x.to(ZTY)", "fp16", [1 + 2**-10, 65504.0, 6e-8, 1 + 2**-8 + 2**-10, 1 + 2**-8, nan, -inf], zt="bf16", tag="f2f")
# F: umulhi
case("tl.umulhi(x, y)", "int32", [-1, -3, -2**31, 123456789, 7, 2**31 - 1, -1], "int32",
     [2, 5, -2**31, -987654321, 9, 2**31 - 1, -1], zt="int32", tag="umulhi")
case("tl.umulhi(x, y)", "uint32", [2**32 - 1, 2**32 - 3, 2**31, 123456789, 7], "uint32",
     [2, 5, 2**31, 2**32 - 987654321, 9], zt="uint32", tag="umulhi")
case("tl.umulhi(x, y)", "int64", [-1, -3, -2**63, 2**62 + 5, 7, -1], "int64",
     [2, 5, -2**63, -(2**61 + 3), 9, -1], zt="int64", tag="umulhi")
case("tl.umulhi(x, y)", "uint64", [2**64 - 1, 2**64 - 3, 2**63, 2**62 + 5], "uint64",
     [2, 5, 2**63, 2**64 - 2**61 - 3], zt="uint64", tag="umulhi")
# G: clamp / max / min NaN and zero signs
XC = [nan, 0.5, -3.0, 5.0, nan, 0.5, -0.0, 0.0]
YC = [0.0, 0.0, 0.0, 0.0, nan, nan, 0.0, -0.0]
for e in ["tl.clamp(x, y, y + 1.0)", "tl.clamp(x, y, y + 1.0, propagate_nan=tl.PropagateNan.ALL)",
          "tl.maximum(x, y)", "tl.minimum(x, y)", "tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)",
          "tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)"]:
    case(e, "fp32", XC, "fp32", YC, zt="fp32", tag="minmax")
# H: shifts by >= width
for ty, w in [("int8", 8), ("uint8", 8), ("int32", 32), ("uint32", 32), ("int64", 64)]:
    xs = [1, -8, 7, -1, 1, -8, 5, -3] if ty.startswith("int") else [1, 200 if w == 8 else 4000000000, 7, 1, 1, 9, 5, 3]
    ys = [w, w + 1, w + 8, -1 if ty.startswith("int") else (1 << w) - 1, w - 1, 0, 2 * w, 100]
    for e in ["x << y", "x >> y"]:
        case(e, ty, xs, ty, ys, zt=ty, tag="shift")
# I: abs / neg of MIN
for ty in ["int8", "int16", "int32", "int64"]:
    b = int(ty[3:])
    for e in ["tl.abs(x)", "-x"]:
        case(e, ty, [-(1 << (b - 1)), -5, (1 << (b - 1)) - 1, 0], zt=ty, tag="abs")
# O: float % (frem) accuracy
rng = np.random.default_rng(0)
XM = [5.1, 1e30, 7.5, -7.5, 1e10, 100.3, 3.0, 0.3, 1e-40, -0.0, inf, 5.0, 1e38, 16777217.0, -1e20, 0.7]
YM = [0.1, 3.0, 2.0, 2.0, 0.7, 7.0, 0.0, 0.1, 3e-41, 1.0, 2.0, inf, 1e-38, 3.0, 0.3, nan]
XR = list(rng.uniform(-1000, 1000, 48))
YR = list(rng.uniform(0.01, 10, 48))
for ty in ["fp32", "fp64"]:
    case("x % y", ty, XM + XR, ty, YM + YR, zt=ty, tag="fmod")
# S: bf16 / fp16 arithmetic with random values, scalar literals
BX = list(rng.standard_normal(32) * 10) + [2.5, -5.0, 1.0, 3.0, 1e38, 3e38, 1e-38, -1e-39]
BY = list(rng.standard_normal(32) * 10) + [2.0, -2.0, 1.0, -3.0, 10.0, 3e38, 1e-2, 1e-3]
for e in ["x + y", "x * y", "x - y", "x / y", "x * y + x"]:
    case(e, "bf16", BX, "bf16", BY, zt="bf16", tag="bf16")
for e in ["x + y", "x * y", "x / y"]:
    case(e, "fp16", [v / 4 for v in BX[:32]] + [65504.0, 1e-7, 1000.0], "fp16",
         [v / 4 for v in BY[:32]] + [2.0, 1e-3, 1000.0], zt="fp16", tag="fp16")
case("x + 0.1", "fp16", [0.0, 1.0, -1.0], zt="fp16", tag="scalar")
case("x + 0.1", "bf16", [0.0, 1.0, -1.0], zt="bf16", tag="scalar")
case("x + 0.1", "int8", [0, 1, -1], zt="fp32", tag="scalar")
case("x * 3", "int8", [100, -100, 1], zt="int8", tag="scalar")
case("x + 1.0", "bf16", [256.0, 257.0], zt="bf16", tag="scalar")
case("x + y", "bf16", [256.0, 1.0], "int32", [1, 2048], zt="fp32", tag="promo")
case("x + y", "fp16", [1.0, 2048.0], "int8", [2, 1], zt="fp16", tag="promo")
case("x.to(ZTY)", "int32", [300, -1, 255, 256, -129, 128], zt="int8", tag="i2i")
case("x.to(ZTY)", "int64", [2**40 + 5, -1, 2**31, -(2**31) - 1], zt="uint32", tag="i2i")
case("tl.cdiv(x, y)", "int32", [-7, 7, -8, 8, 0], "int32", [2, 2, 2, -2, 3], zt="int32", tag="cdiv")


def main():
    src = HEADER
    for i, c in enumerate(CASES):
        c["name"] = f"k{i}"
        src += TEMPLATE.format(name=c["name"], expr=c["expr"])
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "probe_kernels.py"), "w") as f:
        f.write(src)
    sys.path.insert(0, d)
    mod = importlib.import_module("probe_kernels")
    results = []
    for c in CASES:
        kern = getattr(mod, c["name"])
        X = to_bits(c["xt"], c["xs"], c["fill_x"])
        Y = to_bits(c["yt"], c["ys"] or [c["fill_y"]], c["fill_y"])
        ZF = torch.zeros(N, dtype=torch.float64, device=DEV)
        ZI = torch.zeros(N, dtype=torch.int64, device=DEV)
        T = torch.zeros(4, dtype=torch.int32, device=DEV)
        r = {k: c[k] for k in ("expr", "xt", "yt", "zt", "tag")}
        r["xs"] = [repr(v) if isinstance(v, float) else int(v) for v in c["xs"]]
        r["ys"] = [repr(v) if isinstance(v, float) else int(v) for v in c["ys"]]
        n = max(len(c["xs"]), len(c["ys"]), 1)
        try:
            kern[(1,)](X, Y, ZF, ZI, T, XTY=eval(TL[c["xt"]]), YTY=eval(TL[c["yt"]]), ZTY=eval(TL[c["zt"]]), N=N)
            (torch.cuda.synchronize() if DEV == "cuda" else None)
            t = T.cpu().tolist()
            r["out_dtype"] = dict(bits=t[0], floating=t[1], signed=t[2], bf16=t[3])
            if t[1]:
                r["out"] = [float(v).hex() for v in ZF.cpu().numpy()[:n]]
            else:
                r["out"] = [int(v) for v in ZI.cpu().numpy()[:n]]
        except Exception as e:
            r["error"] = f"{type(e).__name__}: {e}"[-1500:]
        results.append(r)
        print(r["tag"], r["expr"], r["xt"], r["zt"], "ERR" if "error" in r else "ok", flush=True)
    meta = dict(triton=triton.__version__, torch=torch.__version__, gpu=(torch.cuda.get_device_name(0) if DEV == "cuda" else "cpu-interpreter"),
                numpy=np.__version__)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "probe.json"), "w") as f:
        json.dump(dict(meta=meta, results=results), f, indent=1)
    print(meta)


if __name__ == "__main__":
    main()
