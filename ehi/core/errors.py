"""One error path for bad input: the exceptions a user can fix, and how entry points report them.

A :class:`UserError` says what is wrong with something the user gave and names it (the file and
line, or the config key): a dataset (:class:`DataError`), a config (:class:`ConfigError`), a
search-index directory (:class:`SearchIndexError`) or a weights file (:class:`WeightsError`).
Every entry point (the rule scripts, the ``ehi`` command, the Snakefile's parse-time checks)
prints one as a single line and exits non-zero, with no traceback; any other exception is a bug
and keeps its traceback. ``EHI_DEBUG=1`` (or ``ehi --verbose``) shows the traceback of a user
error too.

The classes subclass ``ValueError``, which the older ``DataError`` / ``WeightsError`` /
``SearchIndexError`` were, so callers that catch ``ValueError`` keep working.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import Iterator

DEBUG_ENV = "EHI_DEBUG"


class UserError(ValueError):
    """Bad input the user can fix; the message names the file and line or the key."""


class DataError(UserError):
    """A dataset problem that would make results wrong; the message names the file and line or key."""


class ConfigError(UserError):
    """A config value that cannot work (alone or together with others); the message names the key."""


class SearchIndexError(UserError):
    """A search-index directory that is missing, incomplete, inconsistent or asked for the impossible."""


class WeightsError(UserError):
    """A weights file that is missing, unreadable or made for another architecture."""


def debugging() -> bool:
    """True when ``EHI_DEBUG`` asks for tracebacks of user errors as well."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line (a multi-line message would look like a traceback)."""
    return " ".join(str(err).split()) or type(err).__name__


class UserExit(SystemExit):
    """The exit :func:`exit_on_user_error` makes of a user error: ``prog: error: message``, with
    the parts kept, so that an enclosing :func:`within` can say where the error came from."""

    def __init__(self, prog: str, message: str):
        super().__init__(f"{prog}: error: {message}")
        self.prog, self.message = prog, message


@contextlib.contextmanager
def exit_on_user_error(prog: str, also: tuple[type[BaseException], ...] = (), verbose: bool = False) -> Iterator[None]:
    """Turn a :class:`UserError` (or one of ``also``) raised inside into ``prog: error: message``
    on stderr and exit status 1; with ``verbose`` or ``EHI_DEBUG=1`` it propagates unchanged."""
    try:
        yield
    except (UserError, *also) as err:
        if verbose or debugging():
            raise
        raise UserExit(prog, one_line(err)) from None


@contextlib.contextmanager
def within(context: str, prog: str = "snakemake") -> Iterator[None]:
    """Prefix every user error (or user exit) raised inside with ``context``: e.g. which entry of
    the config's ``datasets:`` a nested workflow's refusal is about."""
    try:
        yield
    except UserExit as exit_:
        raise UserExit(exit_.prog, f"{context}: {exit_.message}") from None
    except UserError as err:
        if debugging():
            raise
        raise UserExit(prog, f"{context}: {one_line(err)}") from None


def report_uncaught(log: logging.Logger) -> None:
    """Send this process's uncaught exceptions through ``log`` (a rule script's log file and stderr):
    a :class:`UserError` as one line, anything else (a bug) with its traceback. Python then exits
    with status 1 as usual."""

    def hook(kind, err, tb):
        if issubclass(kind, UserError) and not debugging():
            log.error("%s", one_line(err))
        else:
            log.critical("unexpected error (a bug, not bad input): %s", one_line(err), exc_info=(kind, err, tb))

    sys.excepthook = hook
