"""Facts about searches come from the registry: no search-kind name (``tree``, ``faiss-ivf``, ...) and
no system name built on one (``de+exact``) is written as a string constant in ehi/report or
ehi/evaluate. A module asks :mod:`ehi.evaluate.roles` what a system is, or names a built-in kind by
the registry's constant (``ehi.search.registry.IVF_KIND``); a name tuple would pass a grep for
``== "tree"``, not this walk over every constant."""

import ast
from pathlib import Path

import pytest

from ehi.evaluate.roles import ROLE_BASELINE, ROLE_EXACT, ROLE_TREE, is_graph, is_tree_lists, routes_over_lists
from ehi.search.registry import ENCODERS, searches

PACKAGE = Path(__file__).resolve().parents[2] / "ehi"
# the role labels (significance families, the tables' tree and exact columns), defined once there;
# two of them are spelt as kinds are, which is why they live in one place
ROLE_LABELS = {("evaluate/roles.py", label) for label in (ROLE_TREE, ROLE_EXACT, ROLE_BASELINE)}


def _docstrings(tree: ast.AST) -> set[int]:
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, owners) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def kind_names_written(source: str, kinds) -> list[tuple[int, str]]:
    """(line, constant) of every string constant of ``source`` (docstrings aside) that is a kind
    name or an ``<encoder>+<kind>`` system name."""
    systems = {f"{encoder}+{kind}" for encoder in ENCODERS for kind in kinds}
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and (node.value in kinds or node.value in systems)]


def test_the_walk_finds_a_name_tuple_and_a_system_name():
    source = '"""tree in a docstring is prose."""\nPARTS = ("faiss-ivf", "scann")\nX = f"{a}_tree"\nY = "de+exact"\n'
    assert sorted(kind_names_written(source, set(searches()))) == [(2, "faiss-ivf"), (2, "scann"), (4, "de+exact")]


@pytest.mark.parametrize("package", ["report", "evaluate"])
def test_no_search_kind_is_named_in_report_or_evaluate(package):
    kinds = set(searches())
    found = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        found += [f"{where}:{line}: {value!r}" for line, value in kind_names_written(path.read_text(), kinds)
                  if (where, value) not in ROLE_LABELS]
    assert not found, "ask ehi.evaluate.roles or use the registry's constants instead:\n" + "\n".join(found)


def test_partitions_and_graphs_are_read_from_the_registry():
    """Every kind that routes over lists, HNSW as the one graph, the tree's IVF control as its own kind."""
    partitions = {k for k in searches() if routes_over_lists(f"ehi+{k}")}
    assert {"tree", "tree-pq", "faiss-ivf", "scann", "scann-ah", "faiss-ivfpq", "ivf-lists", "ivf-lists-pq"} <= partitions
    assert "exact" not in partitions and "faiss-hnsw" not in partitions
    assert [k for k in ("tree", "exact", "faiss-ivf", "faiss-hnsw", "scann", "ivf-lists") if is_graph(f"de+{k}")] == ["faiss-hnsw"]
    assert [k for k in searches() if is_tree_lists(f"pre+{k}")] == ["ivf-lists", "ivf-lists-pq"]
