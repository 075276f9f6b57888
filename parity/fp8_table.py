"""python3 -m parity.fp8_table [--out DIR]: every fp8 conversion Triton compiles, run on a CUDA GPU, recorded.

For each (source, destination, rounding) pair with an fp8 side (fp16, bf16, fp32, fp64 <-> fp8e4nv, fp8e5,
fp8e4b15, fp8e4b8, fp8e5b16, and fp8 <-> fp8) one kernel loads the inputs, converts with `x.to(dst)` (or
`fp_downcast_rounding="rtz"`) and stores. The inputs are exhaustive for 8- and 16-bit sources; for fp32 every top
half with the low halves 0, 1, 0x7fff, 0x8000, 0x8001, 0xffff (ties and their neighbours for every fp8 rounding
position); for fp64 those values and their neighbours at 2**-30 relative (which shows whether fp64 rounds through
fp32). The results file keeps the SHA-256 of each output (the bytes, little-endian, in input order) or the error
the compile raised; tests/semantics/test_fp8.py recomputes the digests with minitriton. Also recorded: fp8
arithmetic, `tl.abs`, casts to and from int32, and fp8 constants, each compiled or not.

Needs triton and torch with a CUDA device (run it with the device tool; numpy only otherwise).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import pathlib

import numpy as np

from parity.report import results_json

FP8 = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16")
WIDE = ("fp16", "bf16", "fp32", "fp64")
_BITS = {"fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32, "fp64": np.uint64}
FP32_LOW_HALVES = (0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF)


def inputs(src: str) -> np.ndarray:
    """The input bit patterns of a source type (uint8/16/32/64)."""
    if src in FP8:
        return np.arange(256, dtype=np.uint8)
    if src in ("fp16", "bf16"):
        return np.arange(65536, dtype=np.uint32).astype(np.uint16)
    top = np.arange(65536, dtype=np.uint32) << np.uint32(16)
    f32 = (top[:, None] | np.array(FP32_LOW_HALVES, np.uint32)[None, :]).reshape(-1)
    if src == "fp32":
        return f32
    with np.errstate(invalid="ignore", over="ignore"):
        f64 = f32.view(np.float32).astype(np.float64)
        return np.concatenate([f64, f64 * (1 + 2.0 ** -30), f64 * (1 - 2.0 ** -30)]).view(np.uint64)


def conversions():
    """(source, destination, rounding) of every conversion recorded; rounding is None for widening ones."""
    out = []
    for src in WIDE:
        for dst in FP8:
            out += [(src, dst, "rtne"), (src, dst, "rtz")]
    for src in FP8:
        out += [(src, dst, None) for dst in WIDE]
        out += [(src, dst, "rtne") for dst in FP8 if dst != src]
    return out


def key(src, dst, rounding) -> str:
    return f"{src}->{dst}" + (f".{rounding}" if rounding else "")


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).view(np.uint8).tobytes()).hexdigest()


def _error(e: BaseException) -> str:
    """The exception's type and the last line of its message (Triton puts the reason last)."""
    lines = [s for s in str(e).strip().splitlines() if s.strip()]
    return f"{type(e).__name__}: {lines[-1] if lines else ''}"[:300]


def run_gpu() -> dict:  # pragma: no cover - needs a CUDA GPU
    import torch
    import triton
    import triton.language as tl

    types = {"fp16": tl.float16, "bf16": tl.bfloat16, "fp32": tl.float32, "fp64": tl.float64,
             "fp8e4nv": tl.float8e4nv, "fp8e5": tl.float8e5, "fp8e4b15": tl.float8e4b15,
             "fp8e4b8": tl.float8e4b8, "fp8e5b16": tl.float8e5b16}
    storage = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}

    @triton.jit
    def convert(X, Y, N, DST: tl.constexpr, RTZ: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < N)
        if RTZ:
            y = x.to(DST, fp_downcast_rounding="rtz")
        else:
            y = x.to(DST)
        tl.store(Y + offs, y, mask=offs < N)

    def device_array(bits, name):
        signed = bits.view({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[bits.itemsize])
        return triton.reinterpret(torch.from_numpy(signed.copy()).cuda(), types[name])

    record = {}
    for src, dst, rounding in conversions():
        bits = inputs(src)
        n = bits.size
        nbytes = 1 if dst in FP8 else np.dtype(_BITS[dst]).itemsize
        out = torch.zeros(n, dtype=storage[nbytes], device="cuda")
        try:
            convert[(triton.cdiv(n, 1024),)](device_array(bits, src), triton.reinterpret(out, types[dst]), n,
                                             DST=types[dst], RTZ=rounding == "rtz", BLOCK=1024)
            torch.cuda.synchronize()
            record[key(src, dst, rounding)] = {"sha256": digest(out.cpu().numpy())}
        except Exception as e:  # noqa: BLE001 - the compile's refusal is the measurement
            record[key(src, dst, rounding)] = {"error": _error(e)}

    @triton.jit
    def op_kernel(X, Y, Z, OP: tl.constexpr, N: tl.constexpr):
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

    @triton.jit
    def to_int32(X, Y, N: tl.constexpr):
        o = tl.arange(0, N)
        tl.store(Y + o, tl.load(X + o).to(tl.int32))   # the store converts whatever type `.to` returned

    for name in ("fp8e4nv", "fp8e5", "fp8e4b15"):
        x = device_array(inputs(name), name)
        y = device_array(inputs(name)[::-1].copy(), name)
        z = torch.zeros(256, dtype=torch.int32, device="cuda")
        try:
            to_int32[(1,)](x, z, N=256)
            torch.cuda.synchronize()
            record[f"{name}.to_int32"] = {"sha256": digest(z.cpu().numpy())}
        except Exception as e:  # noqa: BLE001
            record[f"{name}.to_int32"] = {"error": _error(e)}
        for op in ("abs", "add", "mul", "neg", "lt", "maximum", "where", "add_literal", "add_fp16", "sum", "full"):
            z = torch.zeros(256, dtype=torch.float32, device="cuda")
            try:
                op_kernel[(1,)](x, y, z, OP=op, N=256)
                torch.cuda.synchronize()
                record[f"{name}.{op}"] = {"sha256": digest(z.cpu().numpy())}
            except Exception as e:  # noqa: BLE001
                record[f"{name}.{op}"] = {"error": _error(e)}
    return {"triton": triton.__version__, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
            "results": record}


def write(result: dict, out: pathlib.Path) -> pathlib.Path:
    """The run of record: JSON (every digest and error) and a Markdown summary."""
    date = datetime.date.today().isoformat()
    result = dict(result, date=date, fp32_low_halves=list(FP32_LOW_HALVES))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"cuda-fp8-{date}.json"
    path.write_text(results_json(result, sort_keys=True))
    lines = [f"# fp8 conversions on {result['gpu']} (Triton {result['triton']}, torch {result['torch']}, {date})",
             "", "Written by `python3 -m parity.fp8_table`. `ok` = compiled and ran (its output digest is in the "
             "JSON); otherwise the compile's error.", "", "| conversion or op | result |", "|---|---|"]
    for name, value in result["results"].items():
        lines.append(f"| `{name}` | {'ok' if 'sha256' in value else value['error'].replace('|', '/')} |")
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return path


def main(argv=None):  # pragma: no cover - needs a CUDA GPU
    parser = argparse.ArgumentParser(prog="python3 -m parity.fp8_table", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent / "results"))
    args = parser.parse_args(argv)
    print(write(run_gpu(), pathlib.Path(args.out)))


if __name__ == "__main__":
    main()
