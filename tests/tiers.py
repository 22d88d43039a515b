"""The three test tiers (pyproject.toml's markers), read from what each test does, so that a test
file names its tier only where this reading cannot see it (a mark by hand).

- the default set (``pytest``): in process, no Snakemake subprocess, no install, no kill loop;
- ``integration``: end-to-end runs: the tests that start Snakemake, themselves or through a fixture
  (the shared run of the test config, the other fixture runs, the runs from scratch, the dry runs
  and lints), read here; by hand, those that start it inside ehi/ (``ehi compare``) and the
  benchmark families run in process;
- ``slow``: marked by hand: install, distributed training, kill loops, trainings and encoders in
  fresh interpreters, a real encoder (MiniLM), every config's header dry run, pdflatex over every
  committed table, the committed re-renders under Snakemake; a slow test is in no other tier.

A function starts Snakemake when it names ``snakemake`` as a command word (a constant, or a global
list such as ``SNAKEMAKE = [sys.executable, "-m", "snakemake", ...]``) where it calls
``subprocess``, or calls a function of tests/ that does; a test does when its own function or one
of its fixtures does. In the default set a Snakemake process is refused when it starts
(``refuse_snakemake``), so a test this reading misses fails loudly instead of slowing the set."""

from __future__ import annotations

import contextlib
import subprocess
import types
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TIERS_MARKED = ("integration", "slow")
COMMAND = "snakemake"
TIERS = pytest.StashKey[dict]()  # every collected test's tier, before -m deselects (tests/test_tiers.py)


def _codes(code: types.CodeType):
    """``code`` and the code of every function, lambda and comprehension written inside it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _constants(code: types.CodeType):
    for const in code.co_consts:
        yield from _constants_in(const)


def _constants_in(const):
    if isinstance(const, (tuple, frozenset)):  # a literal list of constants is compiled to a tuple
        for c in const:
            yield from _constants_in(c)
    else:
        yield const


def _of_tests(value) -> bool:
    where = getattr(getattr(value, "__code__", None), "co_filename", None) or getattr(value, "__file__", None)
    return where is not None and Path(where).resolve().is_relative_to(TESTS)


def starts_snakemake(func, known: dict) -> bool:
    """Whether calling ``func`` (a function of tests/) starts a Snakemake process; ``known`` caches
    the answers (and breaks cycles: a function being read counts as not starting one)."""
    if func in known:
        return known[func]
    known[func] = False
    codes = list(_codes(func.__code__))
    names = [name for code in codes for name in code.co_names]
    scopes = [func.__globals__, *(vars(m) for m in map(func.__globals__.get, names)  # tests' modules: runs.f
                                  if isinstance(m, types.ModuleType) and _of_tests(m))]
    values = [next((scope[name] for scope in scopes if name in scope), None) for name in names]
    command = any(c == COMMAND for code in codes for c in _constants(code)) or any(
        isinstance(v, (list, tuple)) and COMMAND in v for v in values)
    calls_subprocess = "subprocess" in names or any(
        v is subprocess or getattr(v, "__module__", None) == "subprocess" for v in values)
    callees = [v for v in values if isinstance(v, types.FunctionType) and _of_tests(v)]
    known[func] = (command and calls_subprocess) or any(starts_snakemake(f, known) for f in callees)
    return known[func]


def tier_of(item: pytest.Item, known: dict) -> str | None:
    """``slow`` or ``integration`` when marked so, ``integration`` when the test or a fixture of it
    starts Snakemake, else None (the default set)."""
    if item.get_closest_marker("slow"):
        return "slow"  # and no other tier
    if item.get_closest_marker("integration"):  # marked by hand: Snakemake started inside ehi/ (ehi compare)
        return "integration"
    funcs = [getattr(item, "function", None)]
    for name in getattr(item, "fixturenames", ()):
        funcs += [d.func for d in item._fixtureinfo.name2fixturedefs.get(name, ())]
    funcs = [f for f in funcs if isinstance(f, types.FunctionType) and _of_tests(f)]
    return "integration" if any(starts_snakemake(f, known) for f in funcs) else None


def mark_tiers(items: list[pytest.Item]) -> dict[str, str | None]:
    """Mark each item with its tier; the tier of each node id, for tests/test_tiers.py."""
    known, tiers = {}, {}
    for item in items:
        tiers[item.nodeid] = tier_of(item, known)
        if tiers[item.nodeid] == "integration" and not item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.integration)
    return tiers


def is_snakemake(args) -> bool:
    """Whether a subprocess's command line starts Snakemake (``snakemake ...``, ``python -m snakemake``)."""
    argv = [str(a) for a in args] if isinstance(args, (list, tuple)) else str(args).split()
    return any(Path(word).name == COMMAND for word in argv[:3])


def in_default_set(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(tier) for tier in TIERS_MARKED)


_start = subprocess.Popen.__init__
_refusing = {"now": False}


def _start_unless_snakemake(self, args, *rest, **kwargs):
    if _refusing["now"] and is_snakemake(args):
        said = " ".join(map(str, args))[:120] if isinstance(args, (list, tuple)) else str(args)[:120]
        raise RuntimeError(f"a test of the default set started Snakemake ({said}): mark it integration (tests/tiers.py)")
    _start(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _start_unless_snakemake


@contextlib.contextmanager
def refuse_snakemake(refuse: bool):
    """While a test of the default set runs (its fixtures' setup and teardown included), starting
    Snakemake raises."""
    _refusing["now"] = refuse
    try:
        yield
    finally:
        _refusing["now"] = False
