# Stage 6: tables and figures. These rules read only the small Parquet files under results/, so
# `snakemake --cores 1 tables` renders everything on a fresh clone without training anything.

localrules:
    tables,
    claims,


rule tables:
    input:
        summaries=[cached(f"{RES}/{v}/summary.parquet") for v in VARIANTS + REPLICAS],
        significance=cached(f"{RES}/significance.parquet"),
        train_logs=[cached(p) for v in VARIANTS for p in outputs_of(v)[1:]],
        leaves=[cached(f"{RES}/{v}/leaves.parquet") for v in VARIANTS if any(s.startswith("ehi+tree") for s in variant_systems(v))],
        # the ablation significance pairs EHI's searches of each variant with the main setting's
        ablation_per_query=[cached(f"{RES}/{v}/per_query/{s}.parquet") for v in VARIANTS
                            for s in ("ehi+tree", "ehi+exact") if ABLATIONS and s in variant_systems(v)],
    output:
        kmr=report(f"results/tables/{DS}_kmr.md", category="Tables", caption="../report/kmr_table.rst"),
        significance=report(f"results/tables/{DS}_significance.md", category="Tables", caption="../report/significance.rst"),
        ablations=report(f"results/tables/{DS}_ablations.md", category="Tables", caption="../report/ablations.rst"),
        ablation_significance=report(f"results/tables/{DS}_ablation_significance.md", category="Tables",
                                     caption="../report/ablations.rst"),
        leaf_balance=f"results/tables/{DS}_leaf_balance.md",
        timings=f"results/tables/{DS}_timings.md",
        figures=report(directory(f"results/figures/{DS}"), patterns=["{name}.png"], category="Figures", caption="../report/figures.rst"),
    params:
        dataset=DS,
        variants=VARIANTS,
        seed_replicas=SEED_REPLICAS if len(SEEDS) > 1 else {},
        main_seed=config["train"]["seed"],
        ablations=ABLATIONS,
        results_dir=lambda w, input: os.path.dirname(input.significance),
        metrics=config["evaluation"]["metrics"],
        targets=config["evaluation"]["targets"],
        n_permutations=config["evaluation"]["n_permutations"],  # of the ablation significance tests
        seed=config["evaluation"]["seed"],
        alpha=config["evaluation"]["alpha"],
        variant_systems=config["evaluation"]["variant_systems"],
        version=VERSIONS["report"],
    log:
        f"logs/{DS}/tables.log",
    conda:
        ENV
    script:
        "../scripts/tables.py"


rule claims:
    """The paper's claims (ehi/report/claims.yaml) checked against the cached significance table."""
    input:
        significance=cached(f"{RES}/significance.parquet"),
        claims=os.path.join(workflow.basedir, "ehi", "report", "claims.yaml"),
    output:
        md=report(f"results/tables/{DS}_claims.md", category="Claims", caption="../report/claims.rst"),
        csv=f"results/tables/{DS}_claims.csv",
    log:
        f"logs/{DS}/claims.log",
    conda:
        ENV
    script:
        "../scripts/claims.py"


if MISSING_CACHED:
    import sys

    from ehi.report.missing import describe_missing

    _configs = "".join(f" {c if os.path.relpath(c).startswith('..') else os.path.relpath(c)}"
                       for c in workflow.overwrite_configfiles or [])
    print(describe_missing(MISSING_CACHED, RES, ABLATIONS, f" --configfile{_configs}" if _configs else ""), file=sys.stderr)
