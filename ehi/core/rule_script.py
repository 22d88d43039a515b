"""The start of every rule script (``workflow/scripts/*.py``): the CPU kernels pinned, logging to
the rule's log file, and bad input (:class:`ehi.core.errors.UserError`) reported as one line in that
log and on stderr, without a traceback (a bug keeps its traceback, also in the log; EHI_DEBUG=1
shows it for bad input too).

A script imports this module before anything that imports torch: importing it pins the kernels. It
reads the ``snakemake`` object a script is given and imports nothing of Snakemake.

The console is Snakemake's: a job's own stderr (FAISS's "please provide at least N training points"
and ScaNN's absl lines, written by C++ straight to file descriptor 2, Python warnings, progress
bars, INFO lines) goes to the job's log file; the console gets its warnings and errors only, and
stdout (a command's printed result, such as the claims' verdicts). Its console lines carry the job's
label (``[synthetic seed~1 floor]``, ehi.core.console): several jobs share the console.
"""

import logging
import os
import sys

from ehi.core.console import job_label
from ehi.core.errors import report_uncaught
from ehi.core.kernels import pin_kernels

pin_kernels()  # before the script imports torch (the Snakefile has set them for its jobs already)


def stderr_to_log(path: str):
    """Point file descriptor 2 (C libraries write there directly) and ``sys.stderr`` at ``path``,
    opened for appending; return a stream on the console's stderr."""
    sys.stderr.flush()
    console = os.fdopen(os.dup(2), "w", buffering=1)
    log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    return console


def setup(snakemake) -> logging.Logger:
    """Logging and error reporting for the job ``snakemake`` describes; returns the rule's logger."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    line = "%(asctime)s %(name)s %(levelname)s %(message)s"
    console = logging.StreamHandler(sys.stderr)
    handlers = [console]
    if snakemake.log:
        open(snakemake.log[0], "w").close()  # a fresh log; every writer below appends to it
        console = logging.StreamHandler(stderr_to_log(snakemake.log[0]))
        console.setLevel(logging.WARNING)
        handlers = [console, logging.FileHandler(snakemake.log[0], mode="a")]
    logging.basicConfig(level=logging.INFO, format=line, handlers=handlers, force=True)
    console.setFormatter(logging.Formatter(line.replace("%(name)s", f"{job_label(snakemake)} %(name)s".lstrip())))
    if "torch" in sys.modules:  # keep torch within the threads Snakemake gave this job
        sys.modules["torch"].set_num_threads(max(1, int(snakemake.threads)))
    log = logging.getLogger(snakemake.rule)
    report_uncaught(log)
    from ehi.core import __version__
    from ehi.core.provenance import git_commit

    # the provenance the result files leave out (ehi.core.provenance): in the job's log
    log.info("ehi %s, code at git commit %s", __version__, git_commit())
    return log
