# Stage 1: any dataset (synthetic, a local BEIR directory, a downloadable source) -> three Parquet
# tables in the schemas of ehi.core.schemas.


OPTIONAL_DATA_KEYS = ("query_split", "train_queries")


rule prepare_data:
    input:
        # a folder the dataset names that a rule writes (workflow/rules/produced.smk)
        produced=produced_inputs(config),
    output:
        corpus=f"{DATA_DIR}/corpus.parquet",
        queries=f"{DATA_DIR}/queries.parquet",
        qrels=f"{DATA_DIR}/qrels.parquet",
        manifest=f"{DATA_DIR}/manifest.json",
    params:
        # query_split and train_queries join the params only when set: configs without them keep
        # their jobs as they were
        dataset=canonical({k: v for k, v in config["dataset"].items() if k not in OPTIONAL_DATA_KEYS or v}),
        version=VERSIONS["data"],
    log:
        f"logs/{DS}/prepare_data.log",
    conda:
        ENV
    script:
        "../scripts/prepare_data.py"


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
