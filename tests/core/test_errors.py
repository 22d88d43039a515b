"""The one error path: a user error is one line and exit status 1, a bug keeps its traceback."""

import subprocess
import sys
import textwrap

import pytest

from ehi.core import errors
from ehi.core.errors import ConfigError, DataError, SearchIndexError, UserError, WeightsError, exit_on_user_error


def test_the_error_classes_are_one_family_importable_where_they_were():
    from ehi.core.weights import WeightsError as weights_error
    from ehi.data.validate import DataError as data_error
    from ehi.serve.api import SearchIndexError as index_error

    assert (data_error, weights_error, index_error) == (DataError, WeightsError, SearchIndexError)
    for kind in (DataError, ConfigError, SearchIndexError, WeightsError):
        assert issubclass(kind, UserError) and issubclass(kind, ValueError)  # old `except ValueError` still catches


def test_exit_on_user_error_is_one_line_and_exit_status_1(monkeypatch):
    monkeypatch.delenv(errors.DEBUG_ENV, raising=False)
    with pytest.raises(SystemExit) as exc:
        with exit_on_user_error("ehi info"):
            raise DataError("queries.txt, line 3:\n  not UTF-8")
    assert exc.value.code == "ehi info: error: queries.txt, line 3: not UTF-8"  # Python prints it, exits 1
    with pytest.raises(KeyError):  # not a user error: a bug, raised unchanged
        with exit_on_user_error("ehi info"):
            raise KeyError("x")
    with pytest.raises(FileNotFoundError):  # OSError only where the caller asks for it
        with exit_on_user_error("ehi info"):
            raise FileNotFoundError("nope")
    with pytest.raises(SystemExit):
        with exit_on_user_error("ehi info", also=(OSError,)):
            raise FileNotFoundError("nope")


@pytest.mark.parametrize("debug, verbose", [("1", False), ("", True)])
def test_debug_or_verbose_keeps_the_traceback(monkeypatch, debug, verbose):
    monkeypatch.setenv(errors.DEBUG_ENV, debug)
    with pytest.raises(ConfigError):
        with exit_on_user_error("x", verbose=verbose):
            raise ConfigError("config train.height: 0")


SCRIPT = textwrap.dedent("""
    import logging, sys
    from ehi.core.errors import DataError, report_uncaught
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s",
                        handlers=[logging.StreamHandler(sys.stderr), logging.FileHandler(sys.argv[2], mode="w")])
    report_uncaught(logging.getLogger("rule"))
    if sys.argv[1] == "data":
        raise DataError("corpus.jsonl, line 3: malformed JSON")
    raise RuntimeError("a bug")
""")


@pytest.mark.parametrize("kind", ["data", "bug"])
def test_a_rule_script_reports_bad_input_as_one_line_in_its_log_and_bugs_with_a_traceback(tmp_path, kind):
    log = tmp_path / "rule.log"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, kind, str(log)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    if kind == "data":
        assert proc.stderr.strip().splitlines() == ["ERROR corpus.jsonl, line 3: malformed JSON"]
        assert log.read_text().strip() == "ERROR corpus.jsonl, line 3: malformed JSON"
    else:
        assert "Traceback (most recent call last)" in proc.stderr and "RuntimeError: a bug" in proc.stderr
        assert "Traceback (most recent call last)" in log.read_text()  # the log Snakemake points at says why
