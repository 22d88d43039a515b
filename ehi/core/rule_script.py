"""The start of every rule script (``workflow/scripts/*.py``): the CPU kernels pinned, logging to
the rule's log file, and bad input (:class:`ehi.core.errors.UserError`) reported as one line in that
log and on stderr, without a traceback (a bug keeps its traceback, also in the log; EHI_DEBUG=1
shows it for bad input too).

A script imports this module before anything that imports torch: importing it pins the kernels. It
reads the ``snakemake`` object a script is given and imports nothing of Snakemake.
"""

import logging
import os
import sys

from ehi.core.errors import report_uncaught
from ehi.core.kernels import pin_kernels

pin_kernels()  # before the script imports torch (the Snakefile has set them for its jobs already)


def setup(snakemake) -> logging.Logger:
    """Logging and error reporting for the job ``snakemake`` describes; returns the rule's logger."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    handlers = [logging.StreamHandler(sys.stderr)]
    if snakemake.log:
        handlers.append(logging.FileHandler(snakemake.log[0], mode="w"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", handlers=handlers, force=True)
    if "torch" in sys.modules:  # keep torch within the threads Snakemake gave this job
        sys.modules["torch"].set_num_threads(max(1, int(snakemake.threads)))
    log = logging.getLogger(snakemake.rule)
    report_uncaught(log)
    return log
