"""How ``ehi compare`` runs its pipeline: checked, owned to the end, and recorded only when done.

The command starts Snakemake as a child process. It refuses a core count Snakemake would wait on
forever (``--cores 0``), passes SIGTERM, SIGINT and SIGHUP on to the child (a wrapper that ends
alone leaves Snakemake writing), offers ``--unlock`` where a killed run left its lock (Snakemake's
own advice names that flag), and writes its record, ``resources/NAME/compare.yaml`` (the config of
the run), only once a run has finished: a refused or stopped call leaves the previous one. A call
holds ``OUT/compare.lock`` (an exclusive ``flock``, released by the system however the call ends,
``kill -9`` included) from before it writes anything in OUT, so a second call at the same OUT is
refused without touching the running call's pending config or its ``compare.log``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
from pathlib import Path
from typing import Iterator

from ehi.core.errors import ConfigError

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
LOCK = "compare.lock"  # in OUT: held by the running call, left in place (removing it would race a waiting call)


def check_cores(cores) -> int:
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise ConfigError(f"--cores must be a whole number of at least 1, got {cores!r}")
    return cores


@contextlib.contextmanager
def holding_out(workdir: Path) -> Iterator[None]:
    """``workdir``'s lock held for the block, or one :class:`ConfigError` line where another call
    holds it; the holder's process id is written in the lock file for that line."""
    workdir.mkdir(parents=True, exist_ok=True)
    handle = open(workdir / LOCK, "a+", encoding="utf-8")  # never truncated before the lock is ours
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise ConfigError(f"--out {workdir}: another ehi compare is running there"
                          f"{f' (process {holder})' if holder else ''}; wait for it to end, or give this one "
                          "another --out") from None
    try:
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock


def pending(record: Path) -> Path:
    """Where a run's config waits until the run finishes (then it becomes ``record``)."""
    return record.with_name(f"{record.stem}.pending{record.suffix}")


def finish_record(record: Path, finished: bool) -> None:
    """Move the pending config onto ``record`` where the run finished; drop it otherwise."""
    if finished:
        os.replace(pending(record), record)
    else:
        pending(record).unlink(missing_ok=True)


def run_owned(command: list[str], log_path: Path | None = None, show=None, append: bool = False) -> int:
    """Run ``command``, forwarding :data:`FORWARDED` signals to it, until it exits; its exit status
    (128 + the signal's number where a signal ended it, as a shell reports it). With ``log_path``
    its whole console goes there (after what it holds, with ``append``) and only the lines
    ``show(line)`` accepts reach ours."""
    log = open(log_path, "a" if append else "w", encoding="utf-8", buffering=1) if log_path else None
    piped = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) if log else {}
    child = subprocess.Popen(command, **piped)

    def forward(signum, _frame):
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        if log:
            for line in child.stdout:
                log.write(line)
                if show is None or show(line):
                    print(line, end="", flush=True)
        status = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if log:
            log.close()
    return 128 - status if status < 0 else status


def lock_advice(workdir: Path, argv_hint: str) -> str | None:
    """What to run where a killed run left Snakemake's lock in ``workdir`` (None where none is left)."""
    locks = workdir / ".snakemake" / "locks"
    if locks.is_dir() and any(locks.iterdir()):
        return (f"a run stopped before it finished left its lock in {locks}: once no other run is going, "
                f"`ehi compare {argv_hint} --unlock`, then run it again")
    return None
