# The trained indexes of one dataset at equal quality (`trained_benchmark:`; benchmarks/trained.py):
# QPS and latency of EHI's trees against HNSW, IVF and ScaNN, each peer tuned on dev as the search
# rule tunes it, matched at equal nDCG@10, Recall@10 and k-NN recall@10 (ann-benchmarks' measure of an
# index: the exact top-10 as truth). Its inputs are the dataset's own trained indexes, so
# `snakemake results/benchmarks/trained_<dataset>/trained.md` trains what it times. Included by
# ../multi.smk and by the Snakefile of one dataset, each giving TB_DATASETS (its datasets), TB_ROWS
# (the benchmark dataset's ablation rows, by which trees are named, as variant systems are) and
# TB_LISTS (one dataset: its search's list counts, over which the peers are tuned as its search
# rule tunes them). Every path is the catalog's (ehi/core/catalog.py).

from ehi.config_checks import check_tree_names
from ehi.core.catalog import dataset_resources, dataset_results, trained_benchmark_folder, trained_index, trained_matched
from ehi.core.multi_config import check_trained_benchmark

TRAINED_BENCH = config.get("trained_benchmark") or {}

if TRAINED_BENCH.get("dataset"):
    _TB_DS = TRAINED_BENCH["dataset"]
    _TB_OUT = trained_benchmark_folder(_TB_DS)
    with exit_on_user_error("snakemake"):
        _TB_TREES = check_trained_benchmark(TRAINED_BENCH, TB_DATASETS, TB_ROWS)
        check_tree_names(_TB_TREES)
    # the peers' list counts: the leaf-count rule's grid when the dataset's peers are tuned over it
    _TB_GRID = bool(TRAINED_BENCH.get("lists_from_leaf_count"))

    rule trained_benchmark:
        """One dataset's trained trees and tuned peers, swept on test, timed in interleaved rounds."""
        input:
            indexes=[trained_index(_TB_DS, v) for v in dict.fromkeys(_TB_TREES.values())],
            data=f"{dataset_resources(_TB_DS)}/data/manifest.json",
            leaf_count=[f"{dataset_results(_TB_DS)}/dev_leaf_count.json"] if _TB_GRID else [],
        output:
            # committed: update() outputs, kept through a failed job (ehi/core/unfinished.py)
            md=update(f"{_TB_OUT}/trained.md"),
            curves=update(f"{_TB_OUT}/trained_curves.parquet"),
            matched=update(trained_matched(_TB_DS)),
            figure=update(f"{_TB_OUT}/trained_pareto.png"),
        params:
            dataset=_TB_DS,
            trees=_TB_TREES,
            lists=None if _TB_GRID else TB_LISTS,
            settings={k: TRAINED_BENCH.get(k) for k in ("systems", "hnsw_m", "max_frac", "rounds", "threads",
                                                          "budget_cost", "every_build", "note")},
            version=3,
        log:
            f"logs/trained_benchmark_{_TB_DS}.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/trained_benchmark.py"
