"""Which CPU code paths torch's numbers come from, pinned so that two machines of different makes
pick the same ones.

torch chooses its CPU kernels at run time from what the processor offers: ATen's vectorised
kernels by instruction set (``ATEN_CPU_CAPABILITY``), MKL's BLAS by processor *and vendor* (an
Intel and an AMD chip with the same AVX-512 flags run different GEMM code), oneDNN by instruction
set. Each path rounds differently in the last bits, and a trained tree turns last bits into other
leaf assignments and other rankings. Pinned, every x86-64 machine with AVX2 runs the same paths:

* ``ATEN_CPU_CAPABILITY=avx2``: ATen's AVX2 kernels, which every x86-64 chip of the last decade
  runs (the AVX-512 ones only where the chip has AVX-512);
* ``MKL_CBWR=COMPATIBLE``: MKL's conditional numerical reproducibility on its one branch that is
  documented to give the same results on Intel and non-Intel processors;
* ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN capped at the same instruction set as ATen.

:func:`pin_kernels` sets them unless the user set them (theirs win) or asked for the machine's own
paths with ``EHI_NATIVE_KERNELS=1``. The values have to be in the environment before torch runs
its first kernel, so the Snakefile, the rule scripts, the ``ehi`` command and the tests call it
first thing, and every job inherits it. What it costs in training-step time is measured in the
docs/reproducibility.md.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import MutableMapping

log = logging.getLogger(__name__)

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"}
NATIVE_SWITCH = "EHI_NATIVE_KERNELS"


def pin_kernels(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set the pinned kernel variables the user did not set; returns those it set (none when
    ``EHI_NATIVE_KERNELS=1``). Warns when torch has already run a kernel on another path."""
    if environ.get(NATIVE_SWITCH) == "1":
        return {}
    chosen = {key: value for key, value in PINNED.items() if key not in environ}
    environ.update(chosen)
    torch = sys.modules.get("torch")
    if chosen and torch is not None and environ is os.environ:
        capability = torch.backends.cpu.get_cpu_capability().lower()
        if capability != environ["ATEN_CPU_CAPABILITY"].lower():
            log.warning("torch was imported before the kernels were pinned and runs %s kernels, not %s: "
                        "numbers may differ from other machines", capability, environ["ATEN_CPU_CAPABILITY"])
    return chosen


def kernel_environment() -> dict[str, str | None]:
    """The kernel settings in force, for result stamps and the golden's environment check."""
    import torch

    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(),
            **{key: os.environ.get(key) for key in PINNED}}
