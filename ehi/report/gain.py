"""The tree's gain over k-means IVF at equal work, over seeds: the table and figure of the scale study.

At each budget, a fraction of work ((documents + centroids or router rows scored) / N,
:mod:`ehi.core.work`), every system is read at its largest measured point not above it, seed by
seed, as the KMR tables read fractions of documents. The gain of a tree over an IVF is the
difference of those values, seed by seed (an IVF built with fixed seeds has one value, the same in
every seed), given as mean and sd over seeds; the p-value is the paired randomization test over
queries of the seed-averaged per-query values (:func:`ehi.evaluate.seeds.per_query_over_seeds`),
Holm-adjusted over every comparison of one dataset.

A dataset run without routing counts (search.budget_cost documents, as the committed real
collections) gets its fraction of work derived here, and the table says so: a one-level tree, IVF
and ScaNN with L lists score L centroids a query, exact search and HNSW none, so
frac_work = frac_visited + L / N, with L the leaf count rule dev_leaf_count chose (IVF and ScaNN
tuned over the same grid chose the same count on these collections, docs/findings.md).

N, the training queries and a world's asymmetry are read from each dataset's data facts
(``results/<dataset>/data.json``, :mod:`ehi.data.facts`). Rule ``gain_table`` (workflow/rules/gain.smk)
renders the table over a config's ``gain:`` datasets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.io import read_table
from ehi.core.work import fraction_of_work
from ehi.data.facts import read_data_facts
from ehi.evaluate.metrics import kmr_table, summarize
from ehi.evaluate.roles import ROLE_TREE, routes_over_lists
from ehi.evaluate.seeds import per_query_over_seeds, seed_column
from ehi.evaluate.stats import holm, paired_tests
from ehi.report.figures import render_table, save_figure
from ehi.report.gain_inputs import report_names

# the study's budgets (0.1-10% of work) and two above, where the small real collections have their points
BUDGETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
METRICS = ("ndcg@10", "recall@100")


@dataclass(frozen=True)
class GainSystems:
    """The systems a gain table compares (config ``gain.trees`` and ``gain.controls``): each tree
    against each control, or in a dataset of ``gain.dataset_pairs`` each of its trees against its own
    controls. A tree's first control is its own (k-means IVF with as many lists, on its vectors),
    drawn solid; the others (IVF tuned on its own) dashed."""

    trees: tuple[str, ...]
    controls: tuple[str, ...]
    # {dataset: ((tree, its controls), ...)}: in place of trees x controls for that dataset
    dataset_pairs: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.trees or not self.controls:
            raise ValueError(f"gain: no trees ({self.trees!r}) or no controls ({self.controls!r}) to compare")

    @classmethod
    def from_config(cls, gain: dict) -> "GainSystems":
        """From a rule's params: the config's ``gain.trees``, ``gain.controls`` and ``gain.dataset_pairs``."""
        pairs = {d: tuple((t, tuple(c)) for t, c in trees.items()) for d, trees in (gain.get("dataset_pairs") or {}).items()}
        return cls(tuple(gain["trees"]), tuple(gain["controls"]), pairs)

    def pairs(self, dataset: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The (tree, its controls) pairs read for ``dataset``, each tree's own k-means lists first."""
        return self.dataset_pairs.get(dataset) or tuple((t, self.controls) for t in self.trees)

    def is_own_control(self, dataset: str, tree: str, control: str) -> bool:
        """Whether ``control`` is ``tree``'s own (k-means lists as many as its leaves) in ``dataset``."""
        return any(t == tree and c[0] == control for t, c in self.pairs(dataset))

    @property
    def fallback(self) -> str:
        """The control read where a dataset lacks the first (the second; the first if there is one)."""
        return self.controls[1] if len(self.controls) > 1 else self.controls[0]


@dataclass(frozen=True)
class GainDataset:
    """One dataset of the gain table: its results folder (``results/<name>``, with its ``data.json``),
    its tree's leaf count, its report names (evaluation.variant_systems), its main seed, the
    per-query tables it reads (rule gain_table's inputs: :mod:`ehi.report.gain_inputs`) and, trained
    with several seeds, its seed replicas ({variant: {path: seed}}, :func:`ehi.evaluate.seeds.replicas`)."""

    results: Path
    leaves: int
    variant_systems: dict
    main_seed: int = 0
    per_query: tuple[Path, ...] = ()
    seed_replicas: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.results.name


def leaf_count(results: Path, branching) -> int:
    """The tree's leaf count: rule dev_leaf_count's choice (``branching: auto``), else the branching fixed."""
    if branching == "auto":
        return int(json.loads((Path(results) / "dev_leaf_count.json").read_text())["branching"])
    if not isinstance(branching, int):
        raise ValueError(f"{results}: train.branching {branching!r} is neither auto nor a leaf count")
    return branching


def load_per_query(entry: "GainDataset") -> pd.DataFrame:
    """The dataset's per-query tables (its declared ones, :mod:`ehi.report.gain_inputs`) with ``seed``
    and the report's system names; rows of a system the gain does not read are left out."""
    names = report_names(entry.variant_systems)
    frames = [read_table(p, "per_query") for p in sorted(entry.per_query, key=lambda p: Path(p).resolve())]
    if not frames:
        raise ValueError(f"{entry.results}: no per_query tables; run the dataset first")
    rows = seed_column(pd.concat(frames, ignore_index=True), entry.seed_replicas, entry.main_seed)
    named = [names.get((v, s), s if v == "main" else None) for v, s in zip(rows.variant, rows.system)]
    return rows.assign(system=named).dropna(subset=["system"]).assign(variant="main")


def work_axis(per_query: pd.DataFrame, leaves: int, n_docs: int) -> tuple[pd.DataFrame, bool]:
    """``per_query`` with frac_visited set to the fraction of work (derived where not counted)."""
    work = per_query.frac_work.to_numpy(dtype=np.float64)
    # derived: some system has no counts at all; a query that reached only empty leaves has no
    # count either (nothing scored), and gets the same routing-only value
    derived = bool(per_query.frac_work.isna().groupby(per_query.system).all().any())
    if np.isnan(work).any():
        # the searches that route over L lists, as the registry says (ehi.evaluate.roles)
        routes = per_query.system.map({s: routes_over_lists(s) for s in per_query.system.unique()}).to_numpy(dtype=bool)
        derived_work = fraction_of_work(per_query.frac_visited, np.where(routes, leaves, 0), n_docs, scored_is_fraction=True)
        work = np.where(np.isnan(work), derived_work, work)
    return per_query.assign(frac_visited=work).drop(columns="frac_work"), derived


def _per_seed(per_query: pd.DataFrame, metric: str, budgets) -> pd.DataFrame:
    """Each seed's KMR table of ``metric``."""
    return pd.concat([kmr_table(summarize(rows.drop(columns="seed")), budgets, metric).assign(seed=seed)
                      for seed, rows in per_query[per_query.metric == metric].groupby("seed")], ignore_index=True)


def _in_every_seed(per_seed: pd.DataFrame) -> pd.DataFrame:
    """``per_seed`` with each system searched once (nothing trained, so no seed replicas: the IVF
    control pre+ivf-lists) given that one value in every seed, so a tree's gain over it is taken
    seed by seed as over any IVF built with fixed seeds."""
    seeds = sorted(per_seed.seed.unique())
    once = per_seed.system.map(per_seed.groupby("system").seed.nunique() == 1).astype(bool)
    if len(seeds) < 2 or not once.any():
        return per_seed
    kept = per_seed[once].drop(columns="seed")
    return pd.concat([per_seed[~once], *(kept.assign(seed=s) for s in seeds)], ignore_index=True)


def gain_rows(per_query: pd.DataFrame, metric: str, systems: GainSystems, budgets=BUDGETS, dataset: str = "") -> pd.DataFrame:
    """One row per (tree, IVF, budget) of ``systems``' pairs for ``dataset`` present: both systems'
    mean over seeds, the gain's mean and sd, p (``per_query``: :func:`work_axis`'s, its frac_visited
    the fraction of work)."""
    per_seed = _in_every_seed(_per_seed(per_query, metric, budgets))
    value = per_seed.pivot_table(index=["target", "seed"], columns="system", values="value", dropna=False)
    averaged = per_query_over_seeds(per_query, budgets, [metric])
    out = []
    for tree, controls in [(t, c) for t, c in systems.pairs(dataset) if t in value.columns]:
        for ivf in [i for i in controls if i in value.columns]:
            for target in budgets:
                seeds = value.loc[target, [tree, ivf]] if target in value.index.get_level_values(0) else None
                gain = None if seeds is None else (seeds[tree] - seeds[ivf]).dropna()
                a = averaged[(averaged.system == tree) & (averaged.budget_value == target)].set_index("query_id").value
                b = averaged[(averaged.system == ivf) & (averaged.budget_value == target)].set_index("query_id").value
                both = a.index.intersection(b.index)
                test = paired_tests(a[both].to_numpy(), b[both].to_numpy()) if len(both) > 1 else {}
                out.append({ROLE_TREE: tree, "ivf": ivf, "metric": metric, "budget": target,
                            "tree_value": seeds[tree].mean() if seeds is not None else np.nan,
                            "ivf_value": seeds[ivf].mean() if seeds is not None else np.nan,
                            "gain": gain.mean() if gain is not None and len(gain) else np.nan,
                            "gain_sd": gain.std(ddof=1) if gain is not None and len(gain) > 1 else np.nan,
                            "n_seeds": 0 if gain is None else len(gain),
                            "p": test.get("p_randomization", np.nan), "n_queries": len(both)})
    return pd.DataFrame(out)


def systems_at_work(per_query: pd.DataFrame, metric: str, budgets=BUDGETS) -> pd.DataFrame:
    """Every system's ``metric`` at each budget of work: mean and sd over seeds (``work_axis``'s frame)."""
    per_seed = _per_seed(per_query, metric, budgets)
    return (per_seed.groupby(["system", "target"]).value.agg(["mean", "std", "count"]).reset_index()
            .rename(columns={"target": "budget", "std": "sd", "count": "n_seeds"}).assign(metric=metric))


def dataset_gains(entry: GainDataset, systems: GainSystems) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gain rows and every system's values at each budget of one dataset."""
    facts = read_data_facts(entry.results / "data.json")
    n_docs, n_train, leaves = int(facts["documents"]), int(facts["queries_per_split"]["train"]), entry.leaves
    asymmetry = float(facts["world"].get("asymmetry", 0.0)) if "world" in facts else np.nan
    dataset = entry.name
    per_query, derived = work_axis(load_per_query(entry), leaves, n_docs)
    table = pd.concat([gain_rows(per_query, m, systems, dataset=dataset) for m in METRICS], ignore_index=True)
    systems = pd.concat([systems_at_work(per_query, m, (*BUDGETS, 1.0)) for m in METRICS], ignore_index=True).assign(dataset=dataset)
    tested = table.p.notna()
    table["p_holm"] = np.nan
    table.loc[tested, "p_holm"] = holm(table.p[tested].to_numpy())
    return table.assign(dataset=dataset, n_docs=n_docs, leaves=leaves, train_queries_per_leaf=n_train / leaves,
                        asymmetry=asymmetry,
                        work="derived" if derived else "counted"), systems


PANEL_COLUMNS = 4


def gain_figure(table: pd.DataFrame, path: Path, systems: GainSystems) -> Path:
    """The gain against the fraction of work (percent ticks, log), one panel a (metric, dataset), one
    line a (tree, IVF) pair: the tree's registry colour, dashed against IVF tuned on its own; sd
    bars, filled markers where the Holm-adjusted p is below 0.05."""
    import matplotlib.pyplot as plt

    from ehi.report.styles import label, note_beyond, percent_axis, style

    datasets = list(dict.fromkeys(table.dataset))
    rows_a_metric = -(-len(datasets) // PANEL_COLUMNS)
    columns = min(PANEL_COLUMNS, len(datasets))
    fig, axes = plt.subplots(rows_a_metric * len(METRICS), columns, figsize=(3.4 * columns, 2.6 * rows_a_metric * len(METRICS)),
                             squeeze=False, sharex=True)
    shown = {}
    for m, metric in enumerate(METRICS):
        panels = axes[m * rows_a_metric:(m + 1) * rows_a_metric].ravel()
        for ax in panels[1:]:
            ax.sharey(panels[0])
        for ax in panels[len(datasets):]:
            ax.set_axis_off()
        for ax, dataset in zip(panels, datasets):
            rows = table[(table.metric == metric) & (table.dataset == dataset) & table.gain.notna()]
            for (tree, ivf), line in rows.groupby([ROLE_TREE, "ivf"], sort=False):
                look, name = style(tree), f"{label(tree)} − {label(ivf)}"
                ax.errorbar(100 * line.budget, line.gain, yerr=line.gain_sd.fillna(0), color=look["color"],
                            marker=look["marker"], mfc="none", linestyle="-" if systems.is_own_control(dataset, tree, ivf) else "--", capsize=2,
                            label=name)
                sig = line[line.p_holm < 0.05]
                ax.plot(100 * sig.budget, sig.gain, linestyle="none", marker=look["marker"], color=look["color"])
                shown[name] = (tree, ivf)
            ax.axhline(0, color="k", lw=0.8)
            percent_axis(ax, "work per query (% of N, log scale)" if ax in axes[-1] else "")
            ax.set_title(f"{dataset}: {metric}", fontsize=9)
            ax.set_ylabel(f"gain in {metric}", fontsize=8)
            ax.grid(alpha=0.3)
    handles = {h.get_label(): h for ax in axes.ravel() for h in ax.get_legend_handles_labels()[0]}
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=2, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.02 - 0.02 * (len(handles) // 2)))
    note_beyond(fig, [s for pair in shown.values() for s in pair])
    fig.suptitle("The tree's gain over k-means IVF at equal work: mean ± sd over seeds (filled: Holm p < 0.05)",
                 fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def build_gain(datasets: list[GainDataset], out: Path, figure: Path, systems: GainSystems) -> pd.DataFrame:
    """The gain table (``out``.md/.tex/.csv), every system at each budget of work (``out``_systems)
    and the gain figure, over ``datasets`` in their order; returns the gain table."""
    out = Path(out)
    tables = [dataset_gains(entry, systems) for entry in datasets]
    at_budgets = pd.concat([t[1] for t in tables], ignore_index=True)
    table = pd.concat([t[0] for t in tables], ignore_index=True)
    cols = ["dataset", "n_docs", "leaves", "train_queries_per_leaf", "asymmetry", "work", "metric", ROLE_TREE, "ivf", "budget",
            "tree_value", "ivf_value", "gain", "gain_sd", "n_seeds", "p", "p_holm", "n_queries"]
    table = table.loc[table.tree_value.notna() | table.ivf_value.notna(), cols]  # budgets neither reaches: left out
    out.parent.mkdir(parents=True, exist_ok=True)
    render_table(table, out, caption="The tree's gain over k-means IVF at equal fractions of work "
                 "(ehi/report/gain.py): mean and sd over seeds, paired randomization test over queries, Holm per dataset.",
                 floatfmt=".4f")
    gain_figure(table, figure, systems)
    wide = at_budgets.dropna(subset=["mean"]).pivot_table(index=["dataset", "metric", "system"], columns="budget",
                                                       values="mean").reset_index()
    wide.columns = [c if isinstance(c, str) else f"{c:g}" for c in wide.columns]
    render_table(wide, out.with_name(out.name + "_systems"),
                 caption="Every system at each fraction of work (columns), mean over seeds; – where it has no point that cheap.",
                 floatfmt=".3f")
    return table
