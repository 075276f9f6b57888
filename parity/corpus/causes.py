"""Why a corpus case does not pass on a backend: every non-passing outcome names its cause here.

`CAUSES[(case name, backend)]` is a `Cause`: a short key (what the report's table shows), its explanation
(listed once under the table) and the text the error or failure must contain, so a cause cannot outlive the
behaviour it explains: a case that fails otherwise is `UNEXPLAINED` and fails the run.
"""
from __future__ import annotations

from typing import NamedTuple


class Cause(NamedTuple):
    key: str
    text: str
    must_contain: str


NO_DRIVER = Cause("no-driver", "GPU-only host API: the library asks `triton.runtime.driver.active` (the current target, the "
             "device's properties) when it launches; Triton's interpreter on a machine without a GPU has no "
             "active driver", "0 active drivers")
FLOAT_ARGUMENT = Cause("float-argument", "interpreter divergence (docs/semantics.md S15.10): a float kernel argument is a Python float "
                  "there, so the kernel's `scale.to(tl.float32)` fails; the GPU and minitriton pass an fp32 scalar",
                  "'float' object has no attribute 'to'")
LIBDEVICE = Cause("libdevice-none", "Triton's interpreter: `tl.extra.libdevice.tanh` gives None without a GPU (libdevice calls are "
             "dispatched to the active GPU backend)", "NoneType")
CUDA_DEVICE = Cause("torch.cuda.device", "GPU-only host code: the library enters `torch.cuda.device(x.device.index)` around its launches, "
               "which CPU torch refuses for a CPU tensor (index None); under minitriton `torch.cuda.device` "
               "selects the one emulated GPU", "'<' not supported between instances of 'NoneType' and 'int'")
SM_COUNT = Cause("sm-count", "GPU-only host code (library): `liger_dyt_bwd` sets its grid's SM count only for cuda, xpu and npu "
            "devices (`infer_device()` is torch's, which says cpu), so NUM_SMS is unset for CPU tensors",
            "NUM_SMS")

OLD_TRITON = Cause("triton<3.7.1", "the library refuses it: Triton 3.4 to 3.7.0 miscompile its gated chunk_bwd_dqkwg kernel on Hopper "
              "(fla's issue #640), and the GPU machine has Triton 3.6.0; minitriton reports Triton 3.9.0",
              "Triton >= 3.4.0 and < 3.7.1")

_FLA = ("layer_norm residual fwd+bwd", "rms_norm fwd+bwd", "group_norm fwd+bwd", "l2norm fwd+bwd",
        "rms_norm_gated fwd+bwd", "swiglu fwd+bwd", "logsigmoid fwd+bwd", "chunk_local_cumsum", "logsumexp",
        "solve_tril 64", "mean_pooling fwd+bwd", "chunk_simple_gla fwd+bwd", "fused_recurrent_simple_gla fwd+bwd",
        "chunk_gla fwd+bwd", "chunk_delta_rule bf16 fwd+bwd", "chunk_hgrn fwd+bwd", "fused_recurrent_hgrn fwd+bwd")
_LIGER_FLOAT = ("rms_norm fwd+bwd", "rms_norm gemma offset", "layer_norm fwd+bwd", "fused_add_rms_norm",
                "swiglu fwd+bwd", "kl_div fwd+bwd", "group_norm fwd+bwd", "poly_norm fwd+bwd", "tvd fwd+bwd")
_MAMBA = ("layer_norm residual fwd+bwd", "rms_norm fwd+bwd", "gated rmsnorm fwd+bwd", "swiglu fwd+bwd",
          "selective_state_update", "ssd chunk_state", "ssd state_passing", "ssd chunk_scan_combined fwd+bwd")

CAUSES: dict = {
    **{(f"fla {n}", "interpreter"): NO_DRIVER for n in _FLA},
    **{(f"liger {n}", "interpreter"): FLOAT_ARGUMENT for n in _LIGER_FLOAT},
    **{(f"mamba {n}", "interpreter"): CUDA_DEVICE for n in _MAMBA},
    ("liger geglu fwd+bwd", "interpreter"): LIBDEVICE,
    ("unsloth geglu approx fwd", "interpreter"): LIBDEVICE,
    ("unsloth geglu approx bwd", "interpreter"): LIBDEVICE,
    ("liger dyt fwd+bwd", "interpreter"): NO_DRIVER,
    ("liger dyt fwd+bwd", "minitriton"): SM_COUNT,
    ("fla chunk_simple_gla fwd+bwd", "cuda"): OLD_TRITON,
}


def cause_of(name: str, backend: str, got: dict):
    entry = CAUSES.get((name, backend))
    if entry is None:
        return None
    text = f"{got['outcome']}: {got.get('detail', '')}"
    return entry if entry.must_contain in text else None


BY_KEY = {c.key: c for c in {*CAUSES.values()}}
