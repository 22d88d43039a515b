"""The package's shape: sub-packages import only downward, and no module imports mid-file.

Stages in pipeline order (docs/layout.md): a module may import from its own sub-package and from
those before it, never from a later one, at module level or inside a function. The modules at the
package root (``ehi/__init__.py``, ``ehi/config.py``) sit above every stage.
"""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ehi"
STAGES = ["core", "data", "model", "train", "search", "evaluate", "report", "serve"]
ROOT = len(STAGES)  # the package root's modules: above every stage


def layer_of_module(dotted: str) -> int | None:
    """The stage index of an ``ehi...`` module name; None for other packages and for ``ehi``
    itself (its ``__init__`` holds the version and nothing heavy: any stage may read it)."""
    parts = dotted.split(".")
    if parts[0] != "ehi" or len(parts) == 1:
        return None
    if parts[1] in STAGES:
        return STAGES.index(parts[1])
    return ROOT if (PACKAGE / f"{parts[1]}.py").exists() else None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(tree: ast.Module, name: str, is_package: bool):
    """(line, dotted module) of every import in the module, nested ones included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                yield node.lineno, ".".join(base + ([node.module] if node.module else []))
            elif node.module == "ehi":  # from ehi import config, __version__
                for alias in node.names:
                    yield node.lineno, f"ehi.{alias.name}"
            else:
                yield node.lineno, node.module


def mid_file_imports(tree: ast.Module) -> list[int]:
    """Lines of module-level imports that come after other module-level code."""
    seen_code, lines = False, []
    for i, node in enumerate(tree.body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if seen_code:
                lines.append(node.lineno)
        elif not docstring:
            seen_code = True
    return lines


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def upward_imports(path: Path, tree: ast.Module) -> list[str]:
    name = module_name(path)
    own = layer_of_module(name)
    own = ROOT if own is None else own  # ehi/__init__.py
    bad = []
    for line, target in imported_modules(tree, name, path.name == "__init__.py"):
        layer = layer_of_module(target)
        if layer is not None and layer > own:
            bad.append(f"{path.relative_to(REPO)}:{line} imports {target} ({STAGES[own] if own < ROOT else 'root'}"
                       f" -> {STAGES[layer] if layer < ROOT else 'root'})")
    return bad


def test_every_stage_is_a_sub_package():
    found = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert found == set(STAGES), found ^ set(STAGES)


def test_no_import_runs_from_a_lower_sub_package_to_a_higher_one():
    offenders = [msg for path, tree in modules() for msg in upward_imports(path, tree)]
    assert not offenders, "\n".join(offenders)


def test_no_module_imports_mid_file():
    offenders = [f"{path.relative_to(REPO)}:{line}" for path, tree in modules() for line in mid_file_imports(tree)]
    assert not offenders, offenders


def test_the_walk_sees_an_upward_import_and_a_mid_file_import():
    # the checks themselves, on a module that breaks both rules
    source = '"""doc."""\nimport os\nX = 1\nimport sys\n\ndef f():\n    from ehi.report import tables\n'
    tree = ast.parse(source)
    assert mid_file_imports(tree) == [4]
    bad = upward_imports(PACKAGE / "model" / "fake.py", tree)
    assert len(bad) == 1 and "model -> report" in bad[0]


def test_no_module_over_300_lines():
    long = {str(p.relative_to(REPO)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 300}
    assert not long, long


def test_each_stage_names_its_modules_in_its_init():
    """Each stage's ``__init__`` docstring is one paragraph naming every module of the stage."""
    for package in [PACKAGE / stage for stage in STAGES] + [PACKAGE / "train" / "losses"]:
        text = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        modules = sorted(p.stem if p.is_file() else p.name for p in package.iterdir()
                         if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file())
        unnamed = [m for m in modules if f"``{m}``" not in text]
        assert text and "\n\n" not in text.strip(), f"{package.relative_to(REPO)}/__init__.py: one paragraph"
        assert not unnamed, f"{package.relative_to(REPO)}/__init__.py does not name {unnamed}"


def test_no_module_climbs_back_to_the_front_door():
    """`ehi/__init__.py` is the public API over the package; a module inside imports what it needs
    from where it lives (``__version__`` from ehi.core), never from ``ehi`` itself."""
    climbing = [f"{path.relative_to(REPO)}:{node.lineno}" for path, tree in modules() if path.name != "__init__.py"
                or path.parent != PACKAGE for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "ehi" and not node.level]
    assert not climbing, f"imports from the package's front door: {climbing}"
