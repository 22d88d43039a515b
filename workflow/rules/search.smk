# Stage 4: search every system at every budget of its sweep. Baselines tune their build parameters
# on the tune split (never on the evaluation split), then sweep their search parameter on it.
# The run and the QPS table are update() outputs: Snakemake would otherwise delete them when the job
# starts, and a search killed or failing then leaves neither, while the per-query table evaluated
# from the old run still reads as up to date and nothing asks for the QPS table again. Kept, the old
# files are restored and the marker beside the log has the next run search again (ehi/core/unfinished.py).



rule search:
    input:
        unpack(search_inputs),
    output:
        run=update(f"{R}/{{variant}}/runs/{{system}}.parquet"),
        qps=update(f"{RES}/{{variant}}/qps/{{system}}.parquet"),
    params:
        data_dir=data_dir,
        search=search_settings,
        split=config["evaluation"]["split"],
        version=VERSIONS["search"],
    log:
        f"logs/{DS}/{{variant}}/search_{{system}}.log",
    benchmark:
        f"{LOGS}/{{variant}}/benchmarks/search_{{system}}.tsv"
    threads: config["search"]["threads"]
    conda:
        ENV
    script:
        "../scripts/search.py"


rule trec_run:
    """One system's run as TREC run files, for trec_eval, ir_measures or ranx, with the qrels."""
    input:
        run=f"{R}/{{variant}}/runs/{{system}}.parquet",
        data=DATA_FILES,
    output:
        directory(f"{R}/{{variant}}/runs/trec/{{system}}"),
    params:
        data_dir=data_dir,
        split=config["evaluation"]["split"],
    log:
        f"logs/{DS}/{{variant}}/trec_run_{{system}}.log",
    conda:
        ENV
    script:
        "../scripts/trec_run.py"
