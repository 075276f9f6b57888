"""Command line: `python -m minitriton run SCRIPT [ARGS]` or `python -m minitriton run -m MODULE [ARGS]`.

Runs unmodified Triton code on minitriton: `import triton` resolves to the emulator and TRITON_INTERPRET=1
is set, so scripts that pick the CPU under Triton's interpreter do the same here.

Such scripts were written for Triton's interpreter, which computes fp32 `tl.dot` in full fp32 (their
tolerances assume it), so `run` sets TRITON_F32_DEFAULT=ieee unless it is already set; pass `--tf32` to get
the GPU's default (TF32 inputs) instead. Everything else follows the GPU (bf16 rounding, casts, ...).

Scripts see the emulated GPU (an H200, docs/device.md): `triton.runtime.driver.active` describes it, their
`DEVICE = triton.runtime.driver.active.get_active_torch_device()` is the CPU (where their tensors live), and
torch.cuda's device queries (`get_device_capability`, `get_device_properties`, `get_device_name`) answer for
it while `torch.cuda.is_available()` stays False; tensors asked for on "cuda" are CPU tensors (its memory). `--no-bench` skips `triton.testing.perf_report` benchmarks
(MINITRITON_BENCHMARKS=0). `--model H100` (or H200) makes `triton.testing.do_bench` return the modelled GPU
milliseconds of the launches it times (MINITRITON_BENCH=model, minitriton/perf), so benchmarks print modelled
GB/s and TFLOPS, marked as modelled.

`--picture[=PATH]` writes the memory picture of the script's launches (minitriton/picture: every program,
each load, store and atomic in order with its kernel line, values on hover) to one HTML file that opens
offline, by default minitriton-picture.html; also when the script fails (the launches until then). `--lang
ru` gives the page in Russian (default: the locale's language if Russian, else English).

An uncaught error's traceback shows the script's frames and the kernel's, without runpy's and minitriton's
own; `--traceback` (MINITRITON_DEBUG=1) shows them all.

`run` sanitizes (MINITRITON_SANITIZE=1 unless already set): races between programs, loads of never-written
memory (arrays made by `np.empty`, `torch.empty` and the like hold no value until written) and outputs a
launch left partly unwritten are reported. `--no-sanitize` (or MINITRITON_SANITIZE=0) runs without.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import runpy
import sys

import minitriton
from minitriton import picture
from minitriton.perf import devices
from minitriton.runtime import reporting, torch_cuda
from minitriton.testing import constructors


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitriton", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a Triton script (or -m module) on minitriton")
    run.add_argument("--tf32", action="store_true", help="fp32 tl.dot defaults to TF32, as on the GPU")
    run.add_argument("--no-bench", action="store_true", help="skip triton.testing.perf_report benchmarks")
    run.add_argument("--traceback", action="store_true", help="tracebacks show minitriton's own frames too")
    run.add_argument("--no-sanitize", action="store_true", help="do not report races and unwritten memory")
    run.add_argument("--picture", metavar="PATH", nargs="?", const=picture.DEFAULT_PATH,
                     help=f"write the memory picture of the launches to an HTML file: --picture=PATH "
                          f"(default {picture.DEFAULT_PATH})")
    run.add_argument("--model", metavar="GPU", help="do_bench returns modelled times on GPU (H100, H200)")
    run.add_argument("--lang", choices=picture.page.LANGS, help="the picture's language (default: the locale's)")
    run.add_argument("-m", dest="module", help="run a module, like python -m (e.g. -m pytest test_flash.py)")
    run.add_argument("target", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...] (or the module's ARGS with -m)")
    argv = list(sys.argv[1:] if argv is None else argv)
    flags = set()
    leading = ("--tf32", "--no-bench", "--traceback", "--no-sanitize")
    picture_path = lang = model = None
    while len(argv) > 1 and argv[0] == "run":
        option, _, value = argv[1].partition("=")
        if argv[1] in leading:
            flags.add(argv.pop(1))
        elif option == "--picture":   # never takes the next word: that is the script
            picture_path = value or picture.DEFAULT_PATH
            argv.pop(1)
        elif option == "--model" and (value or len(argv) > 2):
            model = value or argv.pop(2)
            argv.pop(1)
        elif option == "--lang" and (value or len(argv) > 2):
            lang = value or argv.pop(2)
            argv.pop(1)
        else:
            break
    if lang is not None and lang not in picture.page.LANGS:
        parser.error(f"--lang must be one of {', '.join(picture.page.LANGS)}, not {lang!r}")
    tf32, no_bench = "--tf32" in flags, "--no-bench" in flags
    no_sanitize = "--no-sanitize" in flags
    if len(argv) >= 3 and argv[0] == "run" and argv[1] == "-m":  # keep the module's own options intact
        args = argparse.Namespace(command="run", module=argv[2], target=argv[3:], tf32=tf32, no_bench=no_bench,
                                  no_sanitize=no_sanitize)
    else:
        args = parser.parse_args(argv)
    picture_path = picture_path or getattr(args, "picture", None)
    lang = lang or getattr(args, "lang", None)
    model = model or getattr(args, "model", None)
    if model is not None:
        if model.upper() not in devices.PROFILES:
            parser.error(f"--model must be one of {', '.join(devices.PROFILES)}, not {model!r}")
        os.environ["MINITRITON_BENCH"] = "model"
        os.environ["MINITRITON_MODEL_DEVICE"] = model.upper()

    os.environ["TRITON_INTERPRET"] = "1"
    if args.no_bench or no_bench:
        os.environ["MINITRITON_BENCHMARKS"] = "0"
    if getattr(args, "traceback", False) or "--traceback" in flags:
        os.environ["MINITRITON_DEBUG"] = "1"
    if not minitriton.options().internal_frames:
        sys.excepthook = _short_excepthook
    if args.no_sanitize or no_sanitize:
        os.environ["MINITRITON_SANITIZE"] = "0"
    if not os.environ.get("MINITRITON_SANITIZE"):
        os.environ["MINITRITON_SANITIZE"] = "1"
    if args.tf32 or tf32:
        os.environ["TRITON_F32_DEFAULT"] = "tf32"
    else:
        os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")
    minitriton.install()
    torch_cuda.emulate()
    if minitriton.options().sanitize:
        constructors.track()   # np.empty, torch.empty & co. start unwritten
    if args.module:
        sys.path.insert(0, os.getcwd())
        if not _module_exists(args.module):  # python -m's own words and status
            print(f"python -m minitriton run: No module named {args.module}", file=sys.stderr)
            return 1
        sys.argv = [args.module] + args.target
        return _drawn(picture_path, lang, args.module,
                      lambda: runpy.run_module(args.module, run_name="__main__", alter_sys=True))
    if not args.target:
        parser.error("run needs a SCRIPT (or -m MODULE)")
    script = args.target[0]
    if not os.path.exists(script):  # python's own words and status
        print(f"python -m minitriton run: can't open file {os.path.abspath(script)!r}: "
              f"[Errno 2] No such file or directory", file=sys.stderr)
        return 2
    sys.argv = list(args.target)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    return _drawn(picture_path, lang, os.path.basename(script), lambda: runpy.run_path(script, run_name="__main__"))


def _drawn(path, lang, title: str, execute) -> int:
    """Run the script; with a picture path, inside `picture.recording`, its path said last on stderr (after
    the traceback of an error, which ends the run with status 1 as Python's would)."""
    if path is None:
        execute()
        return 0
    drawn = picture.recording(path, lang=lang, title=title)
    try:
        with drawn:
            execute()
    except Exception as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        return 1
    finally:
        if drawn.path is not None:
            more = f" ({drawn.left_out} later launches not drawn)" if drawn.left_out else ""
            count = len(drawn.launches)
            print(f"minitriton: memory picture of {count} launch{'' if count == 1 else 'es'}{more}: {drawn.path}",
                  file=sys.stderr)
    return 0


def _short_excepthook(kind, exc, tb):
    """Python's report of an uncaught error, without runpy's and minitriton's frames (in chained errors too)."""
    seen = set()
    chained = exc
    while chained is not None and id(chained) not in seen:
        seen.add(id(chained))
        chained.__traceback__ = reporting.user_frames(chained.__traceback__)
        chained = chained.__cause__ or chained.__context__
    sys.__excepthook__(kind, exc, exc.__traceback__ if exc is not None else tb)


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package that does not exist
        return False


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as stop:   # Ctrl-C's status, 130, for a stop that says where the kernel was too
        sys.excepthook(type(stop), stop, stop.__traceback__)
        sys.exit(130)
