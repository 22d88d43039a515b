"""Which CPU code paths torch's numbers come from, pinned so that two machines of different makes
pick the same ones.

torch chooses its CPU kernels at run time from what the processor offers: ATen's vectorised
kernels by instruction set (``ATEN_CPU_CAPABILITY``), MKL's BLAS by processor *and vendor* (an
Intel and an AMD chip with the same AVX-512 flags run different GEMM code), oneDNN by instruction
set. Each path rounds differently in the last bits, and a trained tree turns last bits into other
leaf assignments and other rankings. Three modes, chosen with ``EHI_KERNELS``:

* ``avx2`` (the default): ATen's AVX2 kernels (``ATEN_CPU_CAPABILITY=avx2``), MKL's AVX2 branch
  (``MKL_CBWR=AVX2``) and oneDNN capped at AVX2 (``ONEDNN_MAX_CPU_ISA=AVX2``). Every x86-64 chip
  of the last decade runs these paths, at native speed; MKL documents its AVX2 branch as
  reproducible across Intel processors with AVX2, not across vendors.
* ``compatible``: as ``avx2`` but ``MKL_CBWR=COMPATIBLE``, MKL's one branch documented to give the
  same results on Intel and non-Intel processors; it runs SSE2 GEMM, about twice the step time.
* ``native``: nothing set; the machine's own paths.

:func:`pin_kernels` sets the mode's variables unless the user set them (theirs win). The values
have to be in the environment before torch runs its first kernel, so the Snakefile, the rule
scripts, the ``ehi`` command and the tests call it first thing, and every job inherits it. What
each mode costs, and which artefacts differ between modes, is measured in docs/reproducibility.md
(``benchmarks/kernel_modes.py``).
"""

from __future__ import annotations

import logging
import os
import platform
import sys
from pathlib import Path
from typing import MutableMapping

log = logging.getLogger(__name__)

MODE_SWITCH = "EHI_KERNELS"
DEFAULT_MODE = "avx2"
MODES = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "compatible": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "native": {},
}
KERNEL_VARIABLES = tuple(MODES["compatible"])


def kernel_mode(environ: MutableMapping[str, str] = os.environ) -> str:
    """The mode ``EHI_KERNELS`` asks for (the default when unset); a typo is refused in one line."""
    mode = environ.get(MODE_SWITCH, DEFAULT_MODE).strip().lower()
    if mode not in MODES:
        raise SystemExit(f"error: {MODE_SWITCH}={environ[MODE_SWITCH]!r} is not a kernel mode; use one of "
                         f"{', '.join(MODES)}")
    return mode


def pin_kernels(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set the chosen mode's kernel variables the user did not set; returns those it set (none in
    ``native`` mode). Warns when torch has already run a kernel on another path."""
    chosen = {key: value for key, value in MODES[kernel_mode(environ)].items() if key not in environ}
    environ.update(chosen)
    torch = sys.modules.get("torch")
    if chosen and torch is not None and environ is os.environ:
        capability = torch.backends.cpu.get_cpu_capability().lower()
        if capability != environ["ATEN_CPU_CAPABILITY"].lower():
            log.warning("torch was imported before the kernels were pinned and runs %s kernels, not %s: "
                        "numbers may differ from other machines", capability, environ["ATEN_CPU_CAPABILITY"])
    return chosen


def kernel_settings() -> dict[str, str | None]:
    """The kernel variables in force (None where left to the machine), for result stamps; reads no
    torch, so stamping a result never imports it."""
    return {key: os.environ.get(key) for key in KERNEL_VARIABLES}


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; the architecture where the system gives none):
    two runs' kernels pick their paths by it, so result stamps and reports name it."""
    try:
        names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or platform.machine() or "unknown"


def kernel_environment() -> dict[str, str | None]:
    """The kernel settings in force and the CPU capability torch runs, for the golden's environment check."""
    import torch

    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), **kernel_settings()}
