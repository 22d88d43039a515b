"""The paper's claims against our cached results: OK / OKish / FAIL with the numbers behind each.

The claims and their tolerances live in ``ehi/report/claims.yaml`` (its header explains the rules).
Every verdict is computed from ``results/<dataset>/significance.parquet`` alone, whose rows pair
two systems at the same target budget (each at its largest budget not above the target) with
both means and the paired test's adjusted p-value, so verdicts regenerate on a fresh clone.

    python -m ehi.report.claims results/scifact                 # prints the verdict table
    python -m ehi.report.claims results/scifact --out results/tables/scifact_claims
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import pandas as pd
import yaml

from ehi.core.io import read_table
from ehi.report.summary_checks import check_significance_values

# the paper's claims ship with the package (package data), so an installed ehi finds them too
DEFAULT_CLAIMS = Path(__file__).resolve().with_name("claims.yaml")
COLUMNS = ["claim", "verdict", "comparisons", "worst_delta", "worst_at", "mean_delta", "significant_for",
           "significant_against", "text"]


def load_claims(path: str | os.PathLike = DEFAULT_CLAIMS) -> dict:
    spec = yaml.safe_load(Path(path).read_text())
    for name, claim in spec.get("claims", {}).items():
        missing = {"text", "system", "versus", "metrics", "max_budget", "ok_within", "okish_within"} - set(claim)
        if missing:
            raise ValueError(f"{path}: claims.{name} lacks {sorted(missing)}")
    return spec


def comparisons(sig: pd.DataFrame, claim: dict, test: str) -> pd.DataFrame:
    """The significance rows a claim rests on: its system against each peer, at every target
    budget up to max_budget, on each metric; delta = system - peer."""
    rows = sig[(sig.test == test) & sig.metric.isin(claim["metrics"]) & (sig.budget <= claim["max_budget"] + 1e-12)]
    forward = rows[(rows.system_a == claim["system"]) & rows.system_b.isin(claim["versus"])]
    backward = rows[(rows.system_b == claim["system"]) & rows.system_a.isin(claim["versus"])]
    backward = backward.assign(system_a=backward.system_b, system_b=backward.system_a, mean_a=backward.mean_b,
                               mean_b=backward.mean_a, delta=-backward.delta)
    return pd.concat([forward, backward], ignore_index=True)


def verdict(rows: pd.DataFrame, claim: dict, alpha: float) -> dict:
    if rows.empty:
        return {"verdict": "n/a", "comparisons": 0, "worst_at": "no matching comparison in the results"}
    worst = rows.loc[rows.delta.idxmin()]
    d = float(worst.delta)
    label = "OK" if d >= -claim["ok_within"] else "OKish" if d >= -claim["okish_within"] else "FAIL"
    significant = rows.p_adjusted < alpha
    if "within_seed_spread" in rows:  # over training seeds: a difference inside the seed spread is no evidence
        significant &= ~rows.within_seed_spread.fillna(False).astype(bool)
    return {
        "verdict": label, "comparisons": int(len(rows)), "worst_delta": d,
        "worst_at": f"{worst.metric} at {worst.budget:.0%} vs {worst.system_b} ({worst.mean_a:.3f} vs {worst.mean_b:.3f})",
        "mean_delta": float(rows.delta.mean()),
        "significant_for": int((significant & (rows.delta > 0)).sum()),
        "significant_against": int((significant & (rows.delta < -claim["ok_within"])).sum()),
    }


def evaluate_claims(results_dir: str | os.PathLike, spec: dict | None = None) -> pd.DataFrame:
    """One row per claim, plus one "<claim> significance" row per claim (claim d of the issue)."""
    spec = spec or load_claims()
    sig = check_significance_values(read_table(Path(results_dir) / "significance.parquet"),
                                    Path(results_dir) / "significance.parquet")
    test = spec.get("test", "randomization")
    if test not in set(sig.test) and len(sig):  # none at all (a config without EHI): every claim n/a
        test = sorted(set(sig.test))[0]
    out = []
    for name, claim in spec["claims"].items():
        rows = comparisons(sig, claim, test)
        row = {"claim": name, "text": claim["text"], **verdict(rows, claim, spec.get("alpha", 0.05))}
        out.append(row)
        if row["comparisons"]:
            against = row["significant_against"]
            out.append({"claim": f"{name}: significance", "comparisons": row["comparisons"],
                        "significant_for": row["significant_for"], "significant_against": against,
                        "verdict": "FAIL" if against else "OK",
                        "text": f"paired {test} test of claim {name}, Holm-adjusted p < {spec.get('alpha', 0.05)}: "
                                "OK unless a comparison is significantly against the claim"})
    return pd.DataFrame(out).reindex(columns=COLUMNS)


CONSOLE_COLUMNS = ["claim", "verdict", "worst_delta", "worst_at"]


def to_markdown(table: pd.DataFrame) -> str:
    shown = table.copy()
    for col in {"worst_delta", "mean_delta"} & set(shown):
        shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:+.3f}")
    for col in {"significant_for", "significant_against"} & set(shown):
        shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else str(int(v)))
    return shown.fillna("").to_markdown(index=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ehi.report.claims", description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a dataset's results directory (holds significance.parquet)")
    parser.add_argument("--claims", default=str(DEFAULT_CLAIMS), help="claims YAML (default: the paper's, ehi/report/claims.yaml)")
    parser.add_argument("--out", help="also write OUT.md and OUT.csv")
    parser.add_argument("--noise-notes", action="store_true",
                        help="a line under the table (and a warning) for each verdict no significant comparison supports")
    args = parser.parse_args(argv)
    sig_path = Path(args.results) / "significance.parquet"
    if not sig_path.exists():
        print(f"error: {sig_path} not found: run the pipeline (or its significance rule) first", file=sys.stderr)
        return 2
    table = evaluate_claims(args.results, load_claims(args.claims))
    text = to_markdown(table)
    if args.noise_notes:
        from ehi.report.noise import claim_noise_notes

        notes = claim_noise_notes(table)
        for note in notes:
            logging.getLogger(__name__).warning(note.removeprefix("Warning: "))
        text = "\n\n".join([text, *notes])
    # the console gets the verdicts and their worst comparison, a width a terminal shows; the
    # file, every column (the claim's text, counts, mean difference)
    print(to_markdown(table[CONSOLE_COLUMNS]) + (f"\n(every column: {args.out}.md)" if args.out else ""))
    if args.out:
        from ehi.core.io import atomic_path

        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out.with_suffix(".md")) as tmp:
            tmp.write_text(text + "\n")
        with atomic_path(out.with_suffix(".csv")) as tmp:
            table.to_csv(tmp, index=False)
        from ehi.report.figures import html_table

        with atomic_path(out.with_suffix(".html")) as tmp:  # what snakemake --report shows
            tmp.write_text(html_table(table, "The paper's claims (ehi/report/claims.yaml) as verdicts", ".3f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
