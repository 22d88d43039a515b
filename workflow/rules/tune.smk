# Tuning on the dev split (never the test split): the tree shape, compared with the tree alone
# trained on the frozen pretrained embeddings. Not part of `all`: its table documents how the
# config's train.height/branching were chosen; run `snakemake dev_tree_shape` to redo it.


rule dev_tree_shape:
    input:
        data=DATA_FILES,
        corpus=f"{R}/main/pre/emb/corpus.npy",
        queries=f"{R}/main/pre/emb/queries.npy",
    output:
        table=update(f"{RES}/dev_tree_shape.parquet"),  # kept through the job, as evaluate.smk says
        md=f"results/tables/{DS}_dev_tree_shape.md",
    params:
        data_dir=data_dir,
        tuning=canonical(config["tuning"]),
    log:
        f"logs/{DS}/dev_tree_shape.log",
    threads: 1
    conda:
        ENV
    script:
        "../scripts/dev_tree_shape.py"


# train.branching: auto reads this: the leaf count chosen on the dev split (ehi.train.leaf_count),
# from IVF's nlist grid (search.ivf_nlist or around sqrt(N)), grown while its top wins.
rule dev_leaf_count:
    input:
        data=DATA_FILES,
        corpus=f"{R}/main/pre/emb/corpus.npy",
        queries=f"{R}/main/pre/emb/queries.npy",
    output:
        choice=LEAF_COUNT,
        table=update(f"{RES}/dev_leaf_count.parquet"),  # kept through the job, as evaluate.smk says
        md=f"results/tables/{DS}_dev_leaf_count.md",
    params:
        data_dir=data_dir,
        ivf_nlist=config["search"]["ivf_nlist"],
        # enters only when set, so runs that keep the default cost keep their params
        **({"cost": config["search"]["budget_cost"]} if config["search"]["budget_cost"] != "documents" else {}),
    log:
        f"logs/{DS}/dev_leaf_count.log",
    benchmark:
        f"{LOGS}/benchmarks/dev_leaf_count.tsv"
    threads: 1
    conda:
        ENV
    script:
        "../scripts/dev_leaf_count.py"
