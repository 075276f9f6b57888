"""The probe set: one small kernel per rule of docs/semantics.md, by section (the modules below; imported in
this order, which is the order of the table and of the shared random inputs).

Each `Probe` names its doc row, the kernel source, its arguments and how each output is compared
(default: exact; `check`, or `check_cuda` / `check_interp` per target). `expect` holds values the doc gives
(measured on the H200, or fixed by a rule): minitriton must produce them on every target, and on the GPU
real Triton must too (else the doc, or the pinned version, changed). `interp` marks an expected divergence
of Triton's interpreter from the GPU, with the reason; `interp_value` the interpreter's documented wrong
value, checked so the list cannot rot silently. `error` is a compile error both sides raise (regex);
`gpu_error` one the GPU raises while the interpreter runs; `interp_error` one the interpreter raises while
the GPU runs (with `interp` saying why; minitriton is then held to `expect`). `known_gap`: minitriton does not yet do what the
GPU does (an explained, listed mismatch). `skip` keeps a probe in the table with a reason but runs nothing.
"""
from __future__ import annotations

from parity.probes import integers_and_casts, dots, memory_and_math, promotion_and_rules, triton36_rules  # noqa: F401
from parity.probes.base import PROBES, Probe

__all__ = ["PROBES", "Probe"]
