# Stage 5: per-query metrics of every run (ranx), the KMR summary of a variant, significance.
# Their committed Parquet results are update() outputs: Snakemake leaves them in place while
# the job runs, so a rerun whose values and stage versions are a file's keeps its bytes
# (ehi.core.io.replace_parquet) and git lists no change; a failed job's are restored and its
# marker has the next run do it again (ehi/core/unfinished.py).


rule evaluate:
    input:
        run=f"{R}/{{variant}}/runs/{{system}}.parquet",
        data=DATA_FILES,
    output:
        update(f"{RES}/{{variant}}/per_query/{{system}}.parquet"),
    params:
        data_dir=data_dir,
        dataset=DS,
        evaluation=evaluation_settings("split", "metrics", "propensity"),
        version=VERSIONS["evaluate"],
    log:
        f"logs/{DS}/{{variant}}/evaluate_{{system}}.log",
    conda:
        ENV
    script:
        "../scripts/evaluate.py"


rule summarize:
    input:
        per_query=lambda w: expand(f"{RES}/{w.variant}/per_query/{{system}}.parquet", system=variant_systems(w.variant)),
        qrels=split_qrels(),  # each per-query table holds every judged query of its split
    output:
        update(f"{RES}/{{variant}}/summary.parquet"),
    params:
        version=VERSIONS["evaluate"],
    log:
        f"logs/{DS}/{{variant}}/summarize.log",
    conda:
        ENV
    script:
        "../scripts/summarize.py"


rule significance:
    input:
        per_query=[f"{RES}/{v}/per_query/{s}.parquet" for v in SEED_REPLICAS["main"] for s in variant_systems(v)],
        variant_per_query=[f"{RES}/{r}/per_query/{s.system}.parquet" for s in VARIANT_SYSTEMS for r in SEED_REPLICAS[s.variant]],
        qrels=split_qrels(),
    output:
        update(f"{RES}/significance.parquet"),
    params:
        evaluation=canonical({**evaluation_settings("metrics", "targets", "n_permutations", "seed", "alpha", *REPORT_OPTIONS),
                              **({"variant_systems": VARIANT_SYSTEM_PATHS} if VARIANT_SYSTEMS else {}),
                              # only where set: a config without it keeps its params and its results stay made
                              **({"pre_baselines": True} if config["evaluation"]["pre_baselines"] else {})}),
        seeds={"seeds": SEEDS, "main_seed": config["train"]["seed"]} if len(SEEDS) > 1 else {},
        version=VERSIONS["evaluate"],
    log:
        f"logs/{DS}/significance.log",
    conda:
        ENV
    script:
        "../scripts/significance.py"


# the per-query tables of the ablation systems, main setting's and every ablation variant's
ABLATION_PER_QUERY = [f"{RES}/{v}/per_query/{s}.parquet" for v in VARIANTS for s in config["ablation_systems"]
                      if ABLATIONS and s in variant_systems(v)]
ABLATION_SIGNIFICANCE = f"{RES}/ablation_significance.parquet"


if ABLATIONS:

    rule ablation_significance:
        """Each ablation variant against the main setting, paired over queries, at the ablation
        systems' budgets (ehi/evaluate/ablation_tests.py): the tests the ablation tables show."""
        input:
            # cached(): a report-only run that lacks this table makes it from the committed per-query tables
            per_query=[cached(p) for p in ABLATION_PER_QUERY],
            qrels=split_qrels(),
        output:
            update(ABLATION_SIGNIFICANCE),
        params:
            ablations=ABLATIONS,
            ablation_systems=config["ablation_systems"],
            evaluation=evaluation_settings("metrics", "n_permutations", "seed", "alpha", *REPORT_OPTIONS),
            version=VERSIONS["evaluate"],
        log:
            f"logs/{DS}/ablation_significance.log",
        conda:
            ENV
        script:
            "../scripts/ablation_significance.py"


rule geometry:
    """Facts of the dataset's vectors (the untrained encoder, the test queries) that the world is
    held to: ehi.report.world_fit.geometry. Asked for by the world_fit table, never by `all`."""
    input:
        data=DATA_FILES,
        corpus=f"{R}/main/pre/emb/corpus.npy",
        queries=f"{R}/main/pre/emb/queries.npy",
    output:
        f"{RES}/geometry.json",
    log:
        f"logs/{DS}/geometry.log",
    conda:
        ENV
    script:
        "../scripts/geometry.py"


rule collection_properties:
    """What a user can measure of the dataset before training: facts of its pretrained vectors on
    the dev queries, beside k-means lists as many as the tree's leaves
    (ehi.report.collection_properties). Asked for by the gain's properties table, never by `all`."""
    input:
        data=DATA_FILES,
        corpus=f"{R}/main/pre/emb/corpus.npy",
        queries=f"{R}/main/pre/emb/queries.npy",
        # the leaf count chosen on dev, where it is chosen there (branching: auto)
        leaf_count=[f"{RES}/dev_leaf_count.json"] if config["train"].get("branching") == "auto" else [],
    output:
        dataset_properties(DS),
    params:
        branching=config["train"].get("branching"),
    log:
        f"logs/{DS}/collection_properties.log",
    conda:
        ENV
    script:
        "../scripts/collection_properties.py"
