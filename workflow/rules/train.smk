# Stage 2: train EHI (encoder + tree, jointly) and the dual-encoder baseline with one loop.
# Checkpoints live in train/checkpoint/, which is not a declared output: Snakemake never deletes
# it, so a killed job resumes from its last epoch when rerun.


rule train_ehi:
    input:
        data=DATA_FILES,
    output:
        encoder=directory(f"{R}/{{variant}}/ehi/train/encoder"),
        indexer=f"{R}/{{variant}}/ehi/train/indexer.safetensors",
        log_table=f"{RES}/{{variant}}/train_log/ehi.parquet",
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "ehi"),
        encoder=config["encoder"]["name"],
        version=VERSIONS["train"],
    log:
        f"logs/{DS}/{{variant}}/train_ehi.log",
    benchmark:
        f"{RES}/{{variant}}/benchmarks/train_ehi.tsv"
    threads: workflow.cores
    resources:
        gpu=1,
    conda:
        ENV
    script:
        "../scripts/train.py"


use rule train_ehi as train_de with:
    output:
        encoder=directory(f"{R}/{{variant}}/de/train/encoder"),
        log_table=f"{RES}/{{variant}}/train_log/de.parquet",
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "de"),
        encoder=config["encoder"]["name"],
        version=VERSIONS["train"],
    log:
        f"logs/{DS}/{{variant}}/train_de.log",
    benchmark:
        f"{RES}/{{variant}}/benchmarks/train_de.tsv"
