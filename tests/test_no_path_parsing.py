"""One catalog between names and paths (ehi/core/catalog.py): a name goes in, its path comes out,
and nothing reads a name back out of a result path. These tests walk the library, the rule files
and scripts and the benchmarks for the ways a path is taken apart into a name, and the shipped
configs for a path where a name belongs.

Every hit must be on :data:`NOT_NAMES` (the line takes a path apart, but what it gets is no name:
the repository's root, a safety check, an id that is no path) or on :data:`LEFT` (it does read a
name back out of a path, and is still to be converted to a question to the catalog). An entry that
no longer matches anything fails too, so both lists only shrink.
"""

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]  # the repository root: the walk's start
WALKED = ["ehi", "benchmarks", "workflow", "Snakefile"]
# ways a path is taken apart: an ancestor by index, a component by index or by where another one
# is (``parts[parts.index("resources") + 1]``), a key~value or seed~S part split or matched, a last
# component cut off by hand, a grandparent folder
PARSING = re.compile(r"""\.parents?\[|\.parts\)*\[|parts\)*\.index\(|split\(\s*["']~|startswith\(\s*\(?["'][a-z_]*~|rsplit\(\s*["']/"""
                     r"""|\.parent\.name|\.parent\.parent|seed~\(""")

# (file, text on the line) -> why it is no name read back out of a path
NOT_NAMES = {
    ("ehi/serve/compare_config.py", "REPO = Path(__file__).resolve().parents[2]"): "the repository root from this file",
    ("ehi/core/provenance.py", "cwd=Path(__file__).resolve().parents[2]"): "the repository root from this file",
    ("ehi/schema_file.py", "PATH = Path(__file__).resolve().parents[1]"): "the repository root from this file",
    ("benchmarks/kernel_modes.py", "REPO = Path(__file__).resolve().parents[1]"): "the repository root from this file",
    ("benchmarks/build.py", "ROOT = Path(__file__).resolve().parents[1]"): "the repository root from this file",
    ("workflow/scripts/claims.py", "Path(snakemake.scriptdir).resolve().parents[1]"): "the repository root from the "
                                                                                       "scripts' folder",
    ("ehi/serve/compare.py", "workdir.relative_to(REPO).parts[0] in"): "a safety check: no run folder inside the "
                                                                       "checkout's results/ or resources/",
    ("ehi/data/download.py", '":" in path.parts[0]'): "a safety check on an archive member's path",
    ("ehi/data/irds.py", 'last = dataset_id.rsplit("/", 1)[-1]'): "an ir_datasets id, not a path",
    ("ehi/data/irds.py", "dataset_id.rsplit('/', 1)[0]"): "an ir_datasets id, not a path, in a message",
    ("workflow/scripts/across_datasets.py", "Path(snakemake.input.significance[0]).parent.parent"): "the folder all "
        "datasets' results share, from one of its files (a folder, not a name)",
    ("ehi/evaluate/variant_systems.py", 'VariantSystem(name, *target.rsplit("/", 1))'): "a config's "
        "'<variant>/<system>' target (named_rows joins it for rule params), not a result path",
    ("ehi/report/gain_inputs.py", 'tuple(spec.rsplit("/", 1))'): "the same '<variant>/<system>' target",
}

# (file, text on the line) -> the name it still reads back out of a path: issue 68 point 3, to convert
LEFT: dict[tuple[str, str], str] = {}


def walked_files():
    for top in WALKED:
        path = REPO / top
        yield from [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in (".py", ".smk"))


def hits():
    """(file, line number, line) of every line that takes a path apart."""
    for path in walked_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if PARSING.search(line):
                yield path.relative_to(REPO).as_posix(), number, line.strip()


def listed(file: str, line: str) -> bool:
    return any(f == file and text in line for f, text in (*NOT_NAMES, *LEFT))


def test_no_line_takes_a_result_path_apart_into_a_name():
    unlisted = [f"{file}:{number}: {line}" for file, number, line in hits() if not listed(file, line)]
    assert not unlisted, "ask ehi.core.catalog for the path, or hand the name in beside it:\n" + "\n".join(unlisted)


@pytest.mark.parametrize("line", ['dataset, *variant = parts[parts.index("resources") + 1: -2]',
                                  'if len(parts) - parts.index("resources") < 5:', "name = Path(p).parts[2]",
                                  "name = list(Path(p).relative_to(root).parts)[1]", "p.parents[1].name"])
def test_the_walk_sees_a_component_taken_by_index(line):
    """A folder's component found by index, or by where another one is, is caught (the old
    ehi.train.progress.job_label read its dataset and variant so)."""
    assert PARSING.search(line)


def test_every_listed_site_is_still_there():
    """A converted site leaves its entry behind: the entry goes too, so the lists only shrink."""
    found = list(hits())
    stale = [entry for entry in (*NOT_NAMES, *LEFT) if not any(f == entry[0] and entry[1] in line for f, _, line in found)]
    assert not stale, stale


def test_the_benchmark_finds_no_tree_by_a_folders_prefix():
    """benchmarks.trained_builds finds a tree by the variant it is asked for, not by ``floor~``."""
    assert not [line for file, _, line in hits() if file.startswith("benchmarks/")
                and not listed(file, line)]
    assert "floor~" not in (REPO / "benchmarks" / "trained_builds.py").read_text()


# producers' folders (ehi.core.catalog.PRODUCED_ROOTS): a config names their entries instead
PRODUCED_PATH = re.compile(r"^resources/(sources|vectors|worlds|towers)/")
# config -> the value kept, and why
HAND_MADE = {("config/scifact_testonly.yaml", "resources/sources/scifact_testonly"):
             "a folder made by hand (docs/datasets.md), which no rule of the DAG writes: no entry names it"}


def values(node, where=""):
    """(key path, value) of every string in a loaded config, comments aside."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield from values(child, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from values(child, f"{where}[{i}]")
    elif isinstance(node, str):
        yield where, node


SHIPPED = sorted((REPO / "config").rglob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.relative_to(REPO).as_posix() for p in SHIPPED])
def test_a_shipped_config_names_by_name_never_by_a_result_path(path):
    """No ``key~value`` variant path (an ablation row is named ``floor``, ``two_stage[0]``) and no
    producer's folder (a collection, encoding, world or tower is named by its entry) in any value."""
    rel = path.relative_to(REPO).as_posix()
    bad = [f"{key}: {value}" for key, value in values(yaml.safe_load(path.read_text()))
           if (re.search(r"(^|/)[a-z_]+~", value) or PRODUCED_PATH.match(value)) and (rel, value) not in HAND_MADE]
    assert not bad, bad
