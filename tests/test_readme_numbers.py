"""The README and the tables it sends a reader to are true: every cell is read back from the
committed result files (the README's table on real vectors; the claims' verdicts, the embedded
default's KMR table and the frozen-encoder table across three collections at the top of
docs/findings.md), and the job count the README gives for `all` is the dry run's."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
FINDINGS = (REPO / "docs" / "findings.md").read_text()
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


def readme_table(first_header: str, containing: str, text: str = README):
    return next((h, r) for h, r in md_tables(text) if h[0] == first_header and any(containing in c for c in h))


def system_of(label: str) -> str:
    """The system a row is about: its backticked name, or the words FROZEN_ROWS knows."""
    named = re.search(r"`([^`]+)`", label)
    return named.group(1) if named else next(s for words, s in FROZEN_ROWS.items() if label.startswith(words))


def verdicts(dataset: str) -> dict[str, str]:
    _, rows = md_tables((TABLES / f"{dataset}_claims.md").read_text())[0]
    return {row[0]: row[1] for row in rows}


def test_every_claim_verdict_is_the_committed_claims_files():
    header, rows = readme_table("claim", "SciFact", FINDINGS)
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
    header, rows = readme_table("", "≤ 5% scored", FINDINGS)
    committed = _cells(TABLES / "synthetic_kmr.md")
    for row in rows:
        for j, column in enumerate(header[1:], 1):
            key = (system_of(row[0]), BUDGET_COLUMNS[column])
            assert row[j] == committed[key], (row[0], column, row[j], committed[key])


def test_the_frozen_encoder_numbers_are_the_committed_table_across_collections():
    header, rows = readme_table("", "NFCorpus", FINDINGS)
    across = TABLES / "across_scifact_frozen+nfcorpus_frozen+cisi_frozen.md"
    at = {budget: _cells(across, f"ndcg@10 at <={budget}") for budget in ("5%", "10%")}
    for row in rows:
        system = system_of(row[0])
        for j, column in enumerate(header[1:], 1):
            dataset = FROZEN_COLUMNS[column]
            means = [at[budget][(system, dataset)].split(" ±")[0] for budget in ("5%", "10%")]
            assert row[j] == " / ".join(means), (row[0], column, row[j], means)


def test_the_readme_reads_in_five_minutes():
    """At most about 1,200 words (five minutes at 250 a minute), the lab notebook in docs/."""
    assert len(README.split()) <= 1200, len(README.split())
    assert "\n## Findings on real vectors\n" in README


def test_the_readmes_table_on_real_vectors_is_webster_by_work_and_its_exact_search():
    """The README's one table of results: webster's nDCG@10 at each fraction of work, seed means,
    from the committed table of every system by work; and the exact-search line under it."""
    section = README.split("## Findings on real vectors\n", 1)[1].split("\n## ", 1)[0]
    header, rows = readme_table("system", "10%", section)
    fractions, body = md_tables((TABLES / "scale_gain_systems.md").read_text())[0]
    committed = {(row[2], fractions[j]): row[j] for row in body if row[:2] == ["webster", "ndcg@10"]
                 for j in range(3, len(fractions))}
    for row in rows:
        for j, column in enumerate(header[1:], 1):
            fraction = f"{float(column.rstrip('%')) / 100:g}"
            assert row[j] == committed[(system_of(row[0]), fraction)], (row[0], column, row[j])
    exact = re.search(r"Exact search: (\d\.\d+) \(`pre\+exact`\)", section)
    assert exact and exact.group(1) == committed[("pre+exact", "1")]


def test_the_job_count_of_all_is_the_dry_runs(tmp_path):
    said = re.search(r"`all` on the embedded default is\s+(\d+) jobs", README)
    assert said, "the README's cost line names no job count"
    dry = subprocess.run([str(Path(sys.executable).with_name("snakemake")), "-n", "--snakefile", str(REPO / "Snakefile"),
                          "--directory", str(tmp_path), "all", "--configfile", str(REPO / "config" / "config.yaml")],
                         capture_output=True, text=True, timeout=600)
    total = re.search(r"^total\s+(\d+)$", dry.stdout, re.M)
    assert total, dry.stdout[-2000:] + dry.stderr[-2000:]
    assert int(said.group(1)) == int(total.group(1))


def test_the_readmes_answer_on_fine_tuned_vectors_is_webster_joints_kmr_table():
    """The README's answer on an encoder fine-tuned on the task (the paragraph that cites
    results/tables/webster_joint_kmr.md): each system's nDCG@10 at 1 / 2 / 5 / 10% of work is its
    seed mean in that committed table."""
    section = README.split("## Findings on real vectors\n", 1)[1].split("\n## ", 1)[0]
    paragraph = " ".join(next(p for p in section.split("\n\n") if "webster_joint_kmr.md" in p).split())
    said = re.findall(r"`([a-z0-9+-]+)`[^`]*?((?:\d\.\d{3}|–)(?: / (?:\d\.\d{3}|–)){3})(?: nDCG@10)? at 1 / 2 / 5 / 10%",
                      paragraph)
    assert len(said) >= 3, said
    committed = _cells(TABLES / "webster_joint_kmr.md")
    for system, values in said:
        expected = " / ".join(committed[(system, f)].split(" ±")[0] for f in ("1%", "2%", "5%", "10%"))
        assert values == expected, (system, values, expected)


def test_findings_gain_against_properties_reads_its_table():
    """docs/findings.md's paragraph on the gain against what is measured before training: each
    correlation, gain at 5% of work and QPS ratio it quotes is results/tables/scale_gain_properties*.csv's."""
    import pandas as pd

    section = FINDINGS.split("## The gain set against what can be measured before training")[1].split("\n## ")[0]
    table = pd.read_csv(TABLES / "scale_gain_properties.csv").set_index("dataset")
    correlation = pd.read_csv(TABLES / "scale_gain_properties_correlation.csv").set_index("property")
    quoted = re.findall(r"`([\w@]+)`: ρ = (-?\d\.\d\d)\s+over (\d+)( real)?", section)
    assert len(quoted) >= 3, quoted
    for name, rho, n, real in quoted:
        subset = "real" if real else "all"
        assert int(n) == correlation.loc[name, f"n_{subset}"], name
        assert float(rho) == round(correlation.loc[name, f"spearman_{subset}"], 2), name
    gains = re.findall(r"`(\w+)` ([+-]\d\.\d{3})", section)
    assert len(gains) == 3, gains
    for dataset, gain in gains:
        assert float(gain) == round(table.loc[dataset, "gain@5%"], 3), dataset
    ratios = re.findall(r"`(\w+)`\s+(\d\.\d\d)x", section)
    assert {d for d, _ in ratios} == set(table.qps_ratio.dropna().index)
    for dataset, ratio in ratios:
        assert float(ratio) == round(table.loc[dataset, "qps_ratio"], 2), dataset


@pytest.mark.parametrize("heading, dataset", [("### The decisive recipe on debian", "debian_joint"),
                                              ("### The answer on a fine-tuned encoder", "webster_joint")])
def test_findings_decisive_table_is_the_datasets_kmr_table(heading, dataset):
    """docs/findings.md's table of the decisive recipe on each real collection: each system's nDCG@10
    at 1 / 2 / 5 / 10% of work and exact is its seed mean in results/tables/<dataset>_kmr.md."""
    section = FINDINGS.split(heading, 1)[1].split("\n### ", 1)[0]
    header, rows = md_tables(section)[0]
    committed = _cells(TABLES / f"{dataset}_kmr.md")
    assert len(rows) >= 6, rows
    for row in rows:
        system = system_of(row[0])
        for column, cell in zip(header[1:], row[1:]):
            held = committed.get((system, "100%" if column == "exact" else column), "–").split(" ±")[0]
            assert cell == held, (system, column, cell, held)
