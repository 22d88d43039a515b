"""The README is true: every cell of its result tables is read back from the committed result files
(the claims' verdicts, the embedded default's KMR table, the frozen-encoder table across three
collections), and the job count it gives for `all` is the dry run's."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
TABLES = REPO / "results" / "tables"
CLAIM_COLUMNS = {"SciFact": "scifact", "multi-label": "multilabel", "embedded default": "synthetic"}
BUDGET_COLUMNS = {"≤ 5% scored": "5%", "≤ 10% scored": "10%", "exact": "100%"}
FROZEN_COLUMNS = {"SciFact": "scifact_frozen", "NFCorpus": "nfcorpus_frozen", "CISI": "cisi_frozen"}
FROZEN_ROWS = {"k-means IVF": "ehi+faiss-ivf", "ScaNN": "ehi+scann"}  # rows named in words, not by system


def md_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of every pipe table in ``text``, cells stripped."""
    found, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]):
            rows = []
            for body in lines[i + 2:]:
                if not body.startswith("|"):
                    break
                rows.append([c.strip() for c in body.strip("|").split("|")])
            found.append(([c.strip() for c in line.strip("|").split("|")], rows))
    return found


def readme_table(first_header: str, containing: str):
    return next((h, r) for h, r in md_tables(README) if h[0] == first_header and any(containing in c for c in h))


def system_of(label: str) -> str:
    """The system a row is about: its backticked name, or the words FROZEN_ROWS knows."""
    named = re.search(r"`([^`]+)`", label)
    return named.group(1) if named else next(s for words, s in FROZEN_ROWS.items() if label.startswith(words))


def verdicts(dataset: str) -> dict[str, str]:
    _, rows = md_tables((TABLES / f"{dataset}_claims.md").read_text())[0]
    return {row[0]: row[1] for row in rows}


def test_every_claim_verdict_is_the_committed_claims_files():
    header, rows = readme_table("claim", "SciFact")
    columns = {j: next(ds for words, ds in CLAIM_COLUMNS.items() if h.startswith(words)) for j, h in enumerate(header) if j}
    wrong = []
    for row in rows:
        claim = re.match(r"\((\w)\)", row[0]).group(1)
        for j, dataset in columns.items():
            said = row[j].replace("*", "").split(" (")[0]
            committed = verdicts(dataset).get(claim, "n/a")
            if said != committed:
                wrong.append(f"claim ({claim}) on {dataset}: README says {said}, {dataset}_claims.md {committed}")
    assert not wrong, "\n".join(wrong)


def _cells(path: Path, heading: str | None = None) -> dict[tuple[str, str], str]:
    """{(system, column): cell} of the table in ``path`` (the one under ``heading`` when given)."""
    text = path.read_text()
    if heading:
        text = text.split(f"### {heading}\n", 1)[1].split("###", 1)[0]
    header, rows = md_tables(text)[0]
    metric = header.index("metric") if "metric" in header else None
    system = header.index("system")
    return {(row[system], header[j]): row[j] for row in rows if metric is None or row[metric] == "ndcg@10"
            for j in range(len(header))}


def test_the_embedded_defaults_numbers_are_its_committed_kmr_table():
    header, rows = readme_table("", "≤ 5% scored")
    committed = _cells(TABLES / "synthetic_kmr.md")
    for row in rows:
        for j, column in enumerate(header[1:], 1):
            key = (system_of(row[0]), BUDGET_COLUMNS[column])
            assert row[j] == committed[key], (row[0], column, row[j], committed[key])


def test_the_frozen_encoder_numbers_are_the_committed_table_across_collections():
    header, rows = readme_table("", "NFCorpus")
    across = TABLES / "across_scifact_frozen+nfcorpus_frozen+cisi_frozen.md"
    at = {budget: _cells(across, f"ndcg@10 at <={budget}") for budget in ("5%", "10%")}
    for row in rows:
        system = system_of(row[0])
        for j, column in enumerate(header[1:], 1):
            dataset = FROZEN_COLUMNS[column]
            means = [at[budget][(system, dataset)].split(" ±")[0] for budget in ("5%", "10%")]
            assert row[j] == " / ".join(means), (row[0], column, row[j], means)


@pytest.mark.slow
def test_the_job_count_of_all_is_the_dry_runs(tmp_path):
    said = re.search(r"`all` on the embedded default is\s+(\d+) jobs", README)
    assert said, "the README's cost line names no job count"
    dry = subprocess.run([str(Path(sys.executable).with_name("snakemake")), "-n", "--snakefile", str(REPO / "Snakefile"),
                          "--directory", str(tmp_path), "all", "--configfile", str(REPO / "config" / "config.yaml")],
                         capture_output=True, text=True, timeout=600)
    total = re.search(r"^total\s+(\d+)$", dry.stdout, re.M)
    assert total, dry.stdout[-2000:] + dry.stderr[-2000:]
    assert int(said.group(1)) == int(total.group(1))
