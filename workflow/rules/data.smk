# Stage 1: any dataset (synthetic, a local BEIR directory, a downloadable source) -> three Parquet
# tables in the schemas of ehi.core.schemas.


from ehi.data.manifest import staging_key

OPTIONAL_DATA_KEYS = ("query_split", "train_queries")
# query_split and train_queries join the params only when set: configs without them keep their jobs
# as they were
DATASET_PARAMS = canonical({k: v for k, v in config["dataset"].items() if k not in OPTIONAL_DATA_KEYS or v})
PREPARED = ["corpus", "queries", "qrels", "manifest"]
# one staging folder per dataset config: a failed config's job records its params on its own paths
STAGED = f"{R}/data_staged/{staging_key(DATASET_PARAMS, VERSIONS['data'])}"


# Prepared aside, then moved into place by publish_data: Snakemake deletes a job's outputs before
# it runs, so a config that fails here (a value only the data can refute) would otherwise delete
# the prepared dataset, and putting the config back would retrain everything after it.
rule prepare_data:
    input:
        # a folder the dataset names that a rule writes (workflow/rules/produced.smk)
        produced=produced_inputs(config),
    output:
        **{kind: temp(f"{STAGED}/{kind}.{'json' if kind == 'manifest' else 'parquet'}") for kind in PREPARED},
    params:
        dataset=DATASET_PARAMS,
        version=VERSIONS["data"],
    log:
        f"logs/{DS}/prepare_data.log",
    conda:
        ENV
    script:
        "../scripts/prepare_data.py"


rule publish_data:
    input:
        **{kind: rules.prepare_data.output[kind] for kind in PREPARED},
    output:
        corpus=f"{DATA_DIR}/corpus.parquet",
        queries=f"{DATA_DIR}/queries.parquet",
        qrels=f"{DATA_DIR}/qrels.parquet",
        manifest=f"{DATA_DIR}/manifest.json",
    params:
        dataset=DATASET_PARAMS,  # a changed dataset config reruns this job, and prepare_data before it
        version=VERSIONS["data"],
    log:
        f"logs/{DS}/publish_data.log",
    conda:
        ENV
    script:
        "../scripts/publish_data.py"


rule data_facts:
    """The dataset's sizes (and a world's knobs) beside its results (ehi/data/facts.py): what the
    report rules that compare datasets read of the data, on a fresh clone too."""
    input:
        manifest=DATA_MANIFEST,
        corpus=f"{DATA_DIR}/corpus.parquet",
    output:
        f"{RES}/data.json",
    params:
        source=config["dataset"].get("path") or "",
    log:
        f"logs/{DS}/data_facts.log",
    conda:
        ENV
    script:
        "../scripts/data_facts.py"
