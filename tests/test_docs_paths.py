"""Every path, config key, Snakemake target, `ehi` subcommand and Python name that README.md and
docs/*.md name exists, so a moved file or a renamed rule cannot leave a stale reference behind.

Read from the Markdown alone (no import of the package, no Snakemake run): backticked spans and
code blocks give paths, dotted config keys, `ehi.*` names and command lines; links and images give
relative files and heading anchors. Placeholders (`<dataset>`, `{a,b}`, `*`) must match at least
one file. Paths under `resources/` and `logs/` are made by a run and git-ignored, so they are not
checked; the few generated files under `results/` that no run here has committed are listed in
GENERATED.
"""

from __future__ import annotations

import glob
import re
import shlex
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SOURCE_ROOTS = ("config/", "docs/", "ehi/", "tests/", "workflow/", "benchmarks/", "results/", ".ci/")
TOP_FILES = {"Snakefile", "pyproject.toml", "environment.yml", "README.md"}
# written on demand, never by `all` on a dataset that has committed results here
GENERATED = {
    "results/report.html",  # snakemake --report
    "results/reproduction.md",  # written by every `snakemake all` (ehi.report.reproduction), git-ignored
    "results/benchmarks/quick/",  # snakemake benchmarks --config quick=true
    "results/tables/across_<names>.md",  # tables of a `datasets:` config
    "results/tables/across_tiny+tiny_testonly.{md,tex,csv}",
    "results/tables/across_<name>+<name>....{md,tex,csv}",
    "results/figures/across_<...>.png",
    "results/tables/<dataset>_dev_leaf_count.md",  # train.branching: auto
    # a compare run kept by benchmarks/record_compare.py, and rule compare_check's table of it
    "results/webster_compare", "results/webster_compare/run.json", "results/webster_compare}",
    "results/tables/webster_joint_compare_check.md",
    "results/tables/<ds>_dev_tuning",  # an --out stem, suffixes added
    # timings: written by every run, git-ignored (they change every run)
    "results/<ds>/<variant>/qps/<system>.parquet",
    "results/<ds>/<variant>/timings/<stage>.parquet",
    "results/tables/*_timings.*",
    # the step log of a training with train.diag_every, none of them committed yet (docs/ablations.md)
    "results/<ds>/<variant>/train_steps/ehi.parquet",
    "results/<ds>/<variant>/train_steps/ehi.png",
    # an ablation row's results, written by its rule on demand (docs/ablations.md)
    "results/<dataset>/height~1/branching~64/",
}
# named on purpose though they are no config key or module
NOT_CONFIG_KEYS = {"train.heigth"}  # the typo inside a quoted error message
NOT_MODULES = {"ehi.plugins", "ehi.provenance"}  # an entry-point group; the Parquet metadata key
SNAKEMAKE_VALUE_OPTIONS = {"--cores", "-c", "--profile", "--report", "--directory", "-d", "--jobs", "-j", "--snakefile",
                           "-s"}
CHECKOUT = "$EHI/"  # the checkout, where a command run from another folder names its files
SNAKEMAKE_LIST_OPTIONS = {"--configfile", "--configfiles", "--config", "-C", "--set-resources", "--set-threads",
                          "--quiet", "-q"}
EXTENSIONS = (".py", ".yaml", ".yml", ".md", ".json", ".smk", ".png", ".parquet", ".tsv", ".csv", ".tex",
              ".npy", ".jsonl", ".txt", ".html", ".log", ".faiss", ".safetensors", ".trec", ".toml", ".gz", ".zip")


def markdown(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def code_spans(text: str) -> list[str]:
    """Backticked spans and the lines of fenced code blocks."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return re.findall(r"`([^`\n]+)`", prose) + lines


def words(spans: list[str]) -> set[str]:
    out = set()
    for span in spans:
        for word in re.split(r"[\s\"'()=:;\[\]]+", span.split(" #")[0]):
            out.add(word.strip(".,").rstrip("`"))
    return out - {""}


def as_glob(path: str) -> list[str]:
    """A documented path with its placeholders as glob patterns; {a,b} expands."""
    alternatives = [path]
    while any(re.search(r"\{([^{}]*)\}", p) for p in alternatives):
        expanded = []
        for p in alternatives:
            m = re.search(r"\{([^{}]*)\}", p)
            if not m:
                expanded.append(p)
                continue
            for option in m.group(1).split(","):
                expanded.append(p[: m.start()] + option + p[m.end():])
        alternatives = expanded
    return [re.sub(r"<[^<>]*>|\.\.\.", "*", p) for p in alternatives]


def is_path(word: str) -> bool:
    return word in TOP_FILES or word.startswith(SOURCE_ROOTS)


def missing_paths(text: str) -> list[str]:
    missing = []
    for word in sorted(words(code_spans(text))):
        if not is_path(word) or word in GENERATED or "://" in word:
            continue
        patterns = as_glob(word.rstrip("/"))
        # a path, or an output stem whose writer adds the suffixes (`--out results/x` -> x.md)
        if not all(glob.glob(str(REPO / p)) or glob.glob(str(REPO / p) + ".*") for p in patterns):
            missing.append(word)
    return missing


def missing_links(path: Path) -> list[str]:
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown(path)):
        if "://" in target or target.startswith("mailto:"):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            missing.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            missing.append(target)
    return missing


def anchors(path: Path) -> set[str]:
    """GitHub's heading slugs: lower case, punctuation dropped, spaces as hyphens."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", markdown(path), flags=re.S | re.M), flags=re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return out


# --- config keys -------------------------------------------------------------------------------

SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


def schema_has(key: str) -> bool:
    node = SCHEMA
    for part in key.split("."):
        if part == "*":
            return True
        options = [node, *node.get("anyOf", []), *node.get("oneOf", []), *node.get("allOf", [])]
        nxt = next((o["properties"][part] for o in options if part in o.get("properties", {})), None)
        if nxt is None:
            return False
        node = nxt
    return True


def config_keys(text: str) -> set[str]:
    sections = "|".join(SCHEMA["properties"])
    keys = set()
    for span in code_spans(text):
        keys |= set(re.findall(rf"(?<![\w./-])((?:{sections})(?:\.[\w*]+)+)(?![\w/(-])", span))
    return {k for k in keys if not k.endswith(EXTENSIONS)} - NOT_CONFIG_KEYS


# --- Python names ------------------------------------------------------------------------------

def module_file(dotted: str) -> Path | None:
    base = REPO.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def python_name_resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        file = module_file(".".join(parts[:i]))
        if file is not None:
            if i == len(parts):
                return True
            return re.search(rf"\b{re.escape(parts[i])}\b", file.read_text()) is not None
    return False


def python_names(text: str) -> set[str]:
    names = set()
    for span in code_spans(text):
        names |= set(re.findall(r"(?<![\w./])((?:ehi|benchmarks)(?:\.\w+)+)", span))
    return {n for n in names if not n.endswith(EXTENSIONS)} - NOT_MODULES


# --- commands ----------------------------------------------------------------------------------

def command_lines(text: str, program: str) -> list[list[str]]:
    out = []
    for span in code_spans(text):
        line = span.split(" #")[0].strip()
        for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
            try:
                argv = shlex.split(part)
            except ValueError:
                continue
            for i, arg in enumerate(argv):
                if arg == program or arg.endswith("/" + program):
                    out.append(argv[i + 1:])
                    break
    return out


def rule_names() -> set[str]:
    text = (REPO / "Snakefile").read_text() + "".join(p.read_text() for p in (REPO / "workflow").rglob("*.smk"))
    return set(re.findall(r"^\s*rule (\w+):", text, flags=re.M)) | set(re.findall(r"\bas (\w+) with:", text))


def targets_and_configs(argv: list[str]) -> tuple[list[str], list[str]]:
    targets, configs, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg in SNAKEMAKE_VALUE_OPTIONS:
            i += 2
            continue
        if arg in SNAKEMAKE_LIST_OPTIONS:
            i += 1
            while i < len(argv) and not argv[i].startswith("-"):
                if arg in ("--configfile", "--configfiles"):
                    configs.append(argv[i].removeprefix(CHECKOUT))
                i += 1
            continue
        if not arg.startswith("-"):
            targets.append(arg)
        i += 1
    return targets, configs


def ablation_names(configs: list[str]) -> set[str]:
    merged: dict = {}
    for name in configs or ["config/config.yaml"]:
        merged.update((yaml.safe_load((REPO / name).read_text()) or {}).get("ablations") or {})
    return set(merged)


def datasets_of(configs: list[str]) -> set[str]:
    out = set()
    for name in configs:
        out |= set((yaml.safe_load((REPO / name).read_text()) or {}).get("datasets") or {})
    return out


def unknown_targets(text: str) -> list[str]:
    rules = rule_names()
    bad = []
    for argv in command_lines(text, "snakemake"):
        targets, configs = targets_and_configs(argv)
        for config in configs:
            if not (REPO / config).is_file() and not config.endswith(("my.yaml", "my_gpus.yaml", "<config>")):
                bad.append(f"{config} (config file)")
        configs = [c for c in configs if (REPO / c).is_file()]
        for target in targets:
            if target == "...":
                continue
            name = target.split("__", 1)[1] if "__" in target else target
            if "__" in target and target.split("__")[0] not in datasets_of(configs):
                bad.append(f"{target} (no such dataset in {configs})")
            elif name.startswith("ablation_") and name != "ablation_<name>":
                if name[len("ablation_"):] not in ablation_names(configs):
                    bad.append(f"{target} (no such ablation in {configs or ['config/config.yaml']})")
            elif not name.startswith("ablation_") and name not in rules:
                bad.append(f"{target} (no such rule)")
    return bad


def unknown_ehi_commands(text: str) -> list[str]:
    # the command's parser (ehi/serve/cli_parser.py), with the subcommand whose arguments live beside their code (ehi compare)
    cli = "".join((REPO / "ehi" / "serve" / name).read_text() for name in ("cli_parser.py", "compare.py"))
    subcommands = set(re.findall(r"add_parser\(\s*\"([\w-]+)\"", cli))
    bad = []
    for argv in command_lines(text, "ehi"):
        if not argv or argv[0] in ("...",):
            continue
        if argv[0] not in subcommands:
            bad.append(f"ehi {argv[0]}")
        bad += [f"ehi {argv[0]} {a}" for a in argv[1:] if a.startswith("--") and f'"{a}"' not in cli]
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_path_and_link_exists(doc):
    text = markdown(doc)
    assert not missing_paths(text), f"{doc.name} names paths that do not exist: {missing_paths(text)}"
    assert not missing_links(doc), f"{doc.name} links to missing files or headings: {missing_links(doc)}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_config_key_is_in_the_schema(doc):
    unknown = sorted(k for k in config_keys(markdown(doc)) if not schema_has(k))
    assert not unknown, f"{doc.name} names config keys the schema does not have: {unknown}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_python_name_exists(doc):
    unknown = sorted(n for n in python_names(markdown(doc)) if not python_name_resolves(n))
    assert not unknown, f"{doc.name} names modules or functions that do not exist: {unknown}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_snakemake_target_and_ehi_subcommand_exists(doc):
    text = markdown(doc)
    assert not unknown_targets(text), f"{doc.name}: {unknown_targets(text)}"
    assert not unknown_ehi_commands(text), f"{doc.name}: {unknown_ehi_commands(text)}"


def runnable_module(name: str) -> bool:
    """Whether ``python -m name`` runs something: a module with a ``__main__`` guard, or a package
    with a ``__main__.py``."""
    path = REPO.joinpath(*name.split("."))
    if (path / "__main__.py").is_file():
        return True
    module = path.with_suffix(".py")
    return module.is_file() and "__name__ == \"__main__\"" in module.read_text()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_python_m_command_names_a_runnable_module(doc):
    named = set(re.findall(r"python3? -m ((?:ehi|benchmarks)(?:\.\w+)+)", doc.read_text()))
    assert not [n for n in named if not runnable_module(n)], f"{doc.name}: python -m of no runnable module"


def test_the_checks_see_what_they_check():
    """The extractors find the README's main command, a config key, a module and a link."""
    readme = markdown(REPO / "README.md")
    assert ["--cores", "8", "all", "--quiet", "rules", "host"] in command_lines(readme, "snakemake")
    assert "train.seeds" in config_keys(readme) and not schema_has("train.no_such_key")
    assert "ehi.load_index" in python_names(readme) or "ehi.search.shards" in python_names(readme)
    assert missing_paths("`tests/test_no_such_file.py`") == ["tests/test_no_such_file.py"]
    assert unknown_targets("`snakemake --cores 1 no_such_target`") == ["no_such_target (no such rule)"]


# --- module docstrings -------------------------------------------------------------------------

MODULES = sorted(p for root in ("ehi", "benchmarks", "workflow/scripts") for p in (REPO / root).rglob("*.py"))


def docstring(path: Path) -> str:
    import ast

    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def docstring_problems(text: str) -> list[str]:
    """Paths, Markdown pages and ``ehi.*`` names a docstring names that do not exist."""
    spans = [text, *re.findall(r"``([^`]+)``", text)]
    paths = {w for w in words(spans) if is_path(w) and "/" in w and not w.startswith("results/")}
    problems = [p for p in sorted(paths) if missing_paths(f"`{p}`")]
    pages = set(re.findall(r"(?<![\w/.-])([A-Z][A-Z_]*\.md)\b", text))  # a top-level page (an output file is lower case)
    problems += sorted(p for p in pages if not (REPO / p).exists() and not (REPO / "docs" / p).exists())
    names = set(re.findall(r"(?<![\w./])((?:ehi|benchmarks)(?:\.\w+)+)", text)) - NOT_MODULES
    problems += sorted(n for n in names if not n.endswith(EXTENSIONS) and not python_name_resolves(n))
    return problems


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_docstring_names_what_exists(module):
    problems = docstring_problems(docstring(module))
    assert not problems, f"{module.relative_to(REPO)}'s docstring names what does not exist: {problems}"


def test_the_docstring_check_sees_what_it_checks():
    assert docstring_problems("see DESIGN.md section 4 and docs/no_such_page.md") == ["docs/no_such_page.md", "DESIGN.md"]
    assert docstring_problems("``ehi.search.registry.no_such_name``, :mod:`ehi.search.registry`") == \
        ["ehi.search.registry.no_such_name"]
    assert not docstring_problems("docs/layout.md, workflow/rules/common.smk and README.md")
