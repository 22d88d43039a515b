# Stage 1: any dataset (synthetic, a local BEIR directory, a downloadable source) -> three Parquet
# tables in the schemas of ehi.core.schemas.


rule prepare_data:
    output:
        corpus=f"{DATA_DIR}/corpus.parquet",
        queries=f"{DATA_DIR}/queries.parquet",
        qrels=f"{DATA_DIR}/qrels.parquet",
        manifest=f"{DATA_DIR}/manifest.json",
    params:
        # query_split joins the params only when set: configs without it keep their jobs as they were
        dataset=canonical({k: v for k, v in config["dataset"].items() if k != "query_split" or v}),
        version=VERSIONS["data"],
    log:
        f"logs/{DS}/prepare_data.log",
    conda:
        ENV
    script:
        "../scripts/prepare_data.py"
