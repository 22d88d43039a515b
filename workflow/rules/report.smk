# Stage 6: tables and figures. These rules read only the small Parquet files under results/, so
# `snakemake --cores 1 tables` renders everything on a fresh clone without training anything.

from ehi.report.report_files import check_table_names

# a name whose tables are another committed dataset's (synthetic_ablation_significance is synthetic's
# ablation significance table) is refused before any job: they would be overwritten
with exit_on_user_error("snakemake"):
    check_table_names(DS)


import hashlib
from pathlib import Path

localrules:
    tables,
    claims,


# rule tables' inputs of each setting, {variant: its files}: the rule hands the report each file beside
# the variant it is of, and a report-only run goes without a file not cached (cached() gives [])
TABLE_SUMMARIES = {v: cached(f"{RES}/{v}/summary.parquet") for v in VARIANTS + REPLICAS}
TABLE_SIGNIFICANCE = cached(f"{RES}/significance.parquet")  # here: what is missing is told in this order
TABLE_TRAIN_LOGS = {v: [p for p in map(cached, outputs_of(v)[1:]) if p] for v in VARIANTS}
# the leaves of every variant that searches its trained tree index (the registry says which kinds do)
TABLE_LEAVES = {v: cached(f"{RES}/{v}/leaves.parquet") for v in VARIANTS
                if any(ann_kind(s.split("+")[1]).from_index for s in variant_systems(v))}


rule tables:
    input:
        dev_grid=GRID_TABLE,  # rendered first, so `tables` re-renders every committed table
        summaries=list(TABLE_SUMMARIES.values()),
        significance=TABLE_SIGNIFICANCE,
        train_logs=[p for ps in TABLE_TRAIN_LOGS.values() for p in ps],
        leaves=list(TABLE_LEAVES.values()),
        # each ablation variant tested against the main setting (rule ablation_significance); a
        # report-only run whose cached tests are missing, or miss a variant with results, has the
        # rule make them from the cached per-query tables (evaluate.smk)
        ablation_significance=ablation_tests_input(),
    # update(): Snakemake neither deletes these before the job nor keeps a failed job's: it backs
    # them up and restores them if the job fails (ehi.report.tables.build_report also renders the
    # whole set in temporary folders first), so a result that cannot be read costs no table; the
    # job's marker (ehi/core/unfinished.py) has the next run render again
    output:
        # the report shows each table as HTML (git-ignored: a view of the .md/.csv beside it); it
        # shows Markdown and CSV as a download only
        kmr=update(f"results/tables/{DS}_kmr.md"),
        kmr_html=update(report(f"results/tables/{DS}_kmr.html", category="Tables", caption="../report/kmr_table.rst")),
        significance=update(f"results/tables/{DS}_significance.md"),
        significance_html=update(report(f"results/tables/{DS}_significance.html", category="Tables",
                                       caption="../report/significance.rst")),
        ablations=update(f"results/tables/{DS}_ablations.md"),
        ablations_html=update(report(f"results/tables/{DS}_ablations.html", category="Tables",
                                    caption="../report/ablations.rst")),
        ablation_significance=update(f"results/tables/{DS}_ablation_significance.md"),
        ablation_significance_html=update(report(f"results/tables/{DS}_ablation_significance.html", category="Tables",
                                                caption="../report/ablations.rst")),
        leaf_balance=update(f"results/tables/{DS}_leaf_balance.md"),
        timings=update(f"results/tables/{DS}_timings.md"),
        figures=update(report(directory(f"results/figures/{DS}"), patterns=["{name}.png"], category="Figures",
                              caption="../report/figures.rst")),
    params:
        dataset=DS,
        variants=VARIANTS,
        # the variant of each summary, train log and leaves input, in their order
        summary_variants=[v for v, p in TABLE_SUMMARIES.items() if p],
        train_log_variants=[v for v, ps in TABLE_TRAIN_LOGS.items() for _ in ps],
        leaves_variants=[v for v, p in TABLE_LEAVES.items() if p],
        seed_replicas=SEED_REPLICAS if len(SEEDS) > 1 else {},
        ablations=ABLATIONS,
        ablation_rows=ABLATION_ROWS,  # their settings, which the figures name the variants by
        results_dir=lambda w, input: os.path.dirname(input.significance),
        metrics=config["evaluation"]["metrics"],
        targets=config["evaluation"]["targets"],
        alpha=config["evaluation"]["alpha"],  # the ablation tests' (rule ablation_significance), in their caption
        variant_systems=VARIANT_SYSTEM_PATHS,
        ablation_systems=config["ablation_systems"],
        systems=config["search"]["systems"],  # rows of any other system cached are left out, with a note
        **REPORT_OPTIONS,
        version=VERSIONS["report"],
    log:
        f"logs/{DS}/tables.log",
    conda:
        ENV
    script:
        "../scripts/tables.py"


if GRID_TABLE:

    # every point of every grid chosen on dev, and which one each setting reports (rule dev_grid)
    rule dev_grid_table:
        input:
            [cached(p) for p in GRID_CHOICES],
        output:
            md=GRID_TABLE[0],
            csv=f"results/tables/{DS}_dev_grid.csv",
        params:
            grids=[(v, m) for m, vs in GRIDDED.items() for v in vs if f"{RES}/{v}/dev_grid/{m}.parquet" in GRID_CHOICES],
        log:
            f"logs/{DS}/dev_grid_table.log",
        conda:
            ENV
        script:
            "../scripts/dev_grid_table.py"

# The claims enter rule claims by their content: an input's path is a rerun trigger, and the
# checkout's place must not be one (the script reads the file beside it, workflow/scripts/claims.py)
CLAIMS_DIGEST = hashlib.sha256(Path(workflow.basedir, "ehi", "report", "claims.yaml").read_bytes()).hexdigest()[:16]


rule claims:
    """The paper's claims (ehi/report/claims.yaml) checked against the cached significance table."""
    input:
        significance=cached(f"{RES}/significance.parquet"),
    output:  # kept through a failed job, as the tables are
        md=update(f"results/tables/{DS}_claims.md"),
        csv=update(f"results/tables/{DS}_claims.csv"),
        html=update(report(f"results/tables/{DS}_claims.html", category="Claims", caption="../report/claims.rst")),
    params:
        claims=CLAIMS_DIGEST,
        **{key: value for key, value in REPORT_OPTIONS.items() if key == "noise_notes"},
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


if (config.get("compare_check") or {}).get("run"):
    _CHECK = config["compare_check"]
    _CHECKED = [v for replicas in SEED_REPLICAS.values() for v in replicas]

    rule compare_check:
        """`ehi compare` on this study's own vectors (one seed, copied under compare_check.run) beside
        the study's seed means on the work axis: each cell within max(3 sd, 0.005) or not."""
        input:
            summaries=[cached(f"{RES}/{v}/summary.parquet") for v in _CHECKED],
            run=[os.path.join(_CHECK["run"], name) for name in ("kmr.csv", "run.json")],
        output:
            md=f"results/tables/{DS}_compare_check.md",
            csv=f"results/tables/{DS}_compare_check.csv",
        params:
            dataset=DS,
            run=_CHECK["run"],
            summary_variants=_CHECKED,
            seed_replicas=SEED_REPLICAS,
            variant_systems=VARIANT_SYSTEM_PATHS,
            check={key: _CHECK[key] for key in ("systems", "metric", "targets")},
        log:
            f"logs/{DS}/compare_check.log",
        conda:
            ENV
        script:
            "../scripts/compare_check.py"
