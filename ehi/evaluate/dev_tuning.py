"""Every setting tried on the dev split, in one table: how the recipe was chosen.

Three stages, each read from what it left behind (the test split is never read):

1. ``tree alone``: the cheap screen of the tree's own settings on frozen pretrained embeddings
   against k-means IVF with as many lists (:mod:`ehi.evaluate.tree_recipe`, its CSV).
2. ``joint epochs``: every epoch of every training run (DE and EHI, main setting and ablation
   variants) with its dev figures, from the training logs, the selected epoch marked.
3. ``selected``: each run's final (selected) encoder on dev: exact search, FAISS-IVF with the
   tree's number of lists and, for EHI, its own tree, all on that encoder's embeddings, at the
   largest budget scoring at most 5% and 10% of the documents. This is the comparison the
   k-means floor is judged by: the stabilised tree against IVF on the same embeddings.

``python -m ehi.evaluate.dev_tuning RESULTS RESOURCES --configfile C.yaml [C2.yaml ...] --screen T.csv --out
results/tables/<ds>_dev_tuning`` (RESULTS = results/<ds>, RESOURCES = resources/<ds>, which holds the
runs' embeddings and indexes). The runs are the trainings of the settings the config files (layered
as ``snakemake --configfile`` lays them) declare: main, ablation rows, grid points and seed replicas
(:func:`ehi.evaluate.variant_systems.config_settings`), each named by its setting, never by the folder its log is in.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.catalog import setting_train_log
from ehi.evaluate.variant_systems import config_settings
from ehi.core.config_files import read_config_file
from ehi.core.io import read_table
from ehi.core.multi_config import merged
from ehi.data.dataset import Dataset
from ehi.evaluate.tree_recipe import ivf_rows, split_arrays, tree_row
from ehi.search.tree_index import EHIIndex
from ehi.train.dev_eval import ranking_metrics, top_rows
from ehi.train.dev_curve import AUC_BUDGETS
from ehi.train.selection import best_epoch, log_selection_key

MODELS = ("de", "ehi")  # the trained models of a setting (``pre`` is untrained: it leaves no log)

# the tree at the dev budget, its curve's area over 1-10% scored (select_metric: kmr_auc), the
# k-means tree of the same encoder (floor: kmeans) and the leaf balance, where the log has them
EPOCH_COLUMNS = ["dev_ndcg@10", "dev_recall@100", "dev_tree_ndcg@10", "dev_tree_recall@100", "dev_tree_frac",
                 "dev_tree_auc", "dev_kmeans_auc", "dev_floor_auc", "dev_floor_kmeans",
                 "dev_tree_leaf_max_over_mean", "dev_tree_leaf_empty", "dev_kmeans_leaf_max_over_mean",
                 "leaf_max_over_mean", "leaf_empty"]


def selected_epoch(log: pd.DataFrame) -> int:
    """The epoch ``select: dev`` kept (:func:`ehi.train.selection.best_epoch` on the log's selection
    column: the tree's for EHI); the last epoch when nothing was judged (``select: last``)."""
    key = log_selection_key(log.columns)
    best = best_epoch(log.to_dict("records"), key)
    return int(log.epoch.max()) if best is None else int(best)


def training_logs(results: Path, settings) -> dict[str, Path]:
    """{run: its training log} of every training of ``settings`` (the variant paths a config declares,
    :func:`ehi.evaluate.variant_systems.config_settings`) that left a log under ``results`` (results/<dataset>):
    a run is named ``<variant>/<model>`` (``main/ehi``, ``indexer_init~kmeans/de``), in path order."""
    logs = {f"{variant}/{model}": Path(setting_train_log(str(results), variant, model))
            for variant in settings for model in MODELS}
    return dict(sorted(((run, path) for run, path in logs.items() if path.exists()), key=lambda item: str(item[1])))


def joint_epochs(logs: dict[str, Path]) -> pd.DataFrame:
    """Every training run's epochs with their dev figures (stage 2): ``logs`` is {run: its training
    log} (:func:`training_logs`)."""
    rows = []
    for run, path in logs.items():
        log = read_table(path)
        chosen = selected_epoch(log)
        keep = ["epoch", *[c for c in EPOCH_COLUMNS if c in log], *[c for c in ("seconds",) if c in log]]
        for row in log[keep].to_dict("records"):
            rows.append({"run": run, **row, "selected": "yes" if row["epoch"] == chosen else ""})
    return pd.DataFrame(rows)


def selected_models(dataset: Dataset, resources: Path, runs: list[str], nlist: int) -> pd.DataFrame:
    """Each run's final encoder on dev: exact, FAISS-IVF (``nlist``) and, for EHI, the tree (stage 3)."""
    rows = []
    for run in runs:
        emb = resources / run / "emb"
        if not (emb / "corpus.npy").exists():
            continue
        doc_emb = np.load(emb / "corpus.npy").astype(np.float32)
        dev_q, dev_rel, _, _ = split_arrays(dataset, np.load(emb / "queries.npy").astype(np.float32), "dev")
        exact = ranking_metrics(top_rows(dev_q @ doc_emb.T), dev_rel)
        base = {"run": run, "exact ndcg@10": exact["ndcg@10"], "exact recall@100": exact["recall@100"]}
        rows += [{**base, **row} for row in ivf_rows(doc_emb, dev_q, dev_rel, nlist, AUC_BUDGETS)]
        index_dir = resources / run / "index"
        if (index_dir / "index.json").exists():
            index = EHIIndex.load(index_dir)
            rows.append({**base, "system": f"ehi tree ({index.indexer.n_leaves} leaves)",
                         **tree_row(index.indexer, doc_emb, dev_q, dev_rel, AUC_BUDGETS)})
    return pd.DataFrame(rows)


def write_markdown(stages: dict[str, pd.DataFrame], out: Path, title: str) -> None:
    parts = [f"# {title}\n"]
    for name, table in stages.items():
        parts += [f"## {name}\n", table.to_markdown(index=False, floatfmt=".3f") if len(table) else "(none)", ""]
    out.with_suffix(".md").write_text("\n".join(parts) + "\n")
    pd.concat([t.assign(stage=name) for name, t in stages.items()], ignore_index=True).to_csv(out.with_suffix(".csv"), index=False)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="results/<dataset> (training logs)")
    parser.add_argument("resources", type=Path, help="resources/<dataset> (prepared data, embeddings, indexes)")
    parser.add_argument("--configfile", type=Path, nargs="+", required=True,
                        help="the config file(s) the runs were made with, layered as snakemake's --configfile: "
                             "the settings whose training logs are read")
    parser.add_argument("--screen", type=Path, nargs="*", default=[],
                        help="CSVs of tree-alone screens (ehi.evaluate.tree_recipe), each row tagged with its file's name")
    parser.add_argument("--schema", type=Path, default=Path("workflow/schemas/config.schema.yaml"),
                        help="the config schema whose defaults fill what the config files leave out (the "
                             "checkout's, run from its root)")
    parser.add_argument("--nlist", type=int, default=64, help="IVF lists: the tree's number of leaves")
    parser.add_argument("--out", type=Path, required=True, help="table path without suffix (.md and .csv)")
    args = parser.parse_args(argv)
    import faiss

    faiss.omp_set_num_threads(1)
    dataset = Dataset.read(args.resources / "data")
    config = {}
    for path in args.configfile:
        config = merged(config, read_config_file(path))
    epochs = joint_epochs(training_logs(args.results, config_settings(config, args.schema)))
    runs = sorted(set(epochs.run)) + ["main/pre"]  # the untrained encoder: IVF's own starting point
    stages = {
        "1. tree alone on frozen pretrained embeddings (dev)": pd.concat(
            [pd.read_csv(path).assign(screen=path.stem) for path in args.screen], ignore_index=True) if args.screen else pd.DataFrame(),
        "2. joint training, every epoch (dev; 'selected' = the epoch kept)": epochs,
        "3. each run's selected encoder on dev: exact, k-means IVF and EHI's tree on the same embeddings": (
            selected_models(dataset, args.resources, runs, args.nlist)),
    }
    write_markdown(stages, args.out, f"{args.results.name}: the dev split's record of every setting tried")
    print(stages[list(stages)[2]].to_string())


if __name__ == "__main__":
    main()
