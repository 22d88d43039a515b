# Stage 3: embed corpus and queries once per trained encoder (cached as .npy) and build EHI's
# index (documents sorted by leaf). The ANNS baselines are built inside the search rules, where
# their build parameters are tuned on the tune split.



rule embed:
    input:
        data=DATA_FILES,
        encoder=encoder_input,
    output:
        corpus=f"{R}/{{variant}}/{{model}}/emb/corpus.npy",
        queries=f"{R}/{{variant}}/{{model}}/emb/queries.npy",
        timing=f"{RES}/{{variant}}/timings/embed_{{model}}.parquet",
    params:
        data_dir=data_dir,
        dataset=DS,
        encoder=lambda w, input: input.encoder or config["encoder"]["name"],
        **ENCODER_ID,  # a rerun trigger where the callable above is none: a folder encoder and its digest
        max_length=config["encoder"]["max_length"],
        batch_size=config["encoder"]["batch_size"],
        version=VERSIONS["embed"],
        # embeddings of identical weights (a frozen encoder, a DE kept at epoch 0) are computed once
        cache_dir=f"{R}/cache/embeddings",
    log:
        f"logs/{DS}/{{variant}}/embed_{{model}}.log",
    benchmark:
        f"{LOGS}/{{variant}}/benchmarks/embed_{{model}}.tsv"
    threads: config["resources"]["threads_per_job"]
    resources:
        gpu=1,
    conda:
        ENV
    script:
        "../scripts/embed.py"


rule ehi_index:
    input:
        corpus=f"{R}/{{variant}}/ehi/emb/corpus.npy",
        indexer=f"{R}/{{variant}}/ehi/train/indexer.safetensors",
    output:
        index=directory(f"{R}/{{variant}}/ehi/index"),
        leaves=update(f"{RES}/{{variant}}/leaves.parquet"),  # kept through the job, as evaluate.smk says
    params:
        dataset=DS,
        version=VERSIONS["index"],
    log:
        f"logs/{DS}/{{variant}}/ehi_index.log",
    benchmark:
        f"{LOGS}/{{variant}}/benchmarks/ehi_index.tsv"
    threads: 1
    conda:
        ENV
    script:
        "../scripts/ehi_index.py"


rule search_index:
    # What `ehi search --index DIR` and `ehi.load_index(DIR)` read: the tree index, the trained
    # encoder, document ids and titles, the training config, and the beam that meets the dev
    # budget on the dev queries (ehi.search.budget_beam: what `ehi export-faiss` opens at).
    input:
        data=DATA_FILES,
        index=f"{R}/{{variant}}/ehi/index",
        encoder=f"{R}/{{variant}}/ehi/train/encoder",
        queries=f"{R}/{{variant}}/ehi/emb/queries.npy",
    output:
        directory(f"{R}/{{variant}}/ehi/search_index"),
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "ehi"),
        version=VERSIONS["index"],
    log:
        f"logs/{DS}/{{variant}}/search_index.log",
    conda:
        ENV
    script:
        "../scripts/search_index.py"
