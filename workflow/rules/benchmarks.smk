# Performance benchmarks: EHI's search, index build, training overhead, hardware
# efficiency, scaling and memory against FAISS and ScaNN. The measurements live in `benchmarks/`
# (one module per family); every rule runs benchmarks/snake.py, which dispatches on the rule name.
# `--config quick=true` picks the small sizes (benchmarks.settings.QUICK) and writes under
# results/benchmarks/quick/. Outputs are committed under results/benchmarks/; cached embeddings go to resources/benchmarks/ (git-ignored).

QUICK = str(config["quick"]).lower() == "true"  # `--config quick=true` arrives as a string
# quick mode writes beside, never over, the committed full results
BENCH = "results/benchmarks/quick" if QUICK else "results/benchmarks"
BENCH_SETTINGS = __import__("benchmarks.settings", fromlist=["settings"]).settings(QUICK)
BENCH_VERSION = 1  # bump when benchmarks/ changes what it measures


rule bench_search:
    output:
        curves=f"{BENCH}/search_curves.parquet",
        matched=f"{BENCH}/search_matched.parquet",
    params:
        settings={**BENCH_SETTINGS["search"], "quick": QUICK, "version": BENCH_VERSION},
    log:
        "logs/benchmarks/search.log",
    benchmark:
        "logs/benchmarks/search.tsv"
    threads: workflow.cores
    conda:
        ENV
    script:
        "../../benchmarks/snake.py"


rule bench_build:
    output:
        builds=f"{BENCH}/build.parquet",
        beams=f"{BENCH}/beams.parquet",
    params:
        settings={**BENCH_SETTINGS["build"], "quick": QUICK, "version": BENCH_VERSION},
    log:
        "logs/benchmarks/build.log",
    benchmark:
        "logs/benchmarks/build.tsv"
    threads: workflow.cores
    conda:
        ENV
    script:
        "../../benchmarks/snake.py"


rule bench_training:
    output:
        steps=f"{BENCH}/training_steps.parquet",
        reindex=f"{BENCH}/reindex.parquet",
        efficiency=f"{BENCH}/efficiency.parquet",
    params:
        settings={**BENCH_SETTINGS["training"], "quick": QUICK, "version": BENCH_VERSION},
    log:
        "logs/benchmarks/training.log",
    benchmark:
        "logs/benchmarks/training.tsv"
    threads: workflow.cores
    conda:
        ENV
    script:
        "../../benchmarks/snake.py"


rule bench_stream:
    output:
        stream=f"{BENCH}/stream.parquet",
    params:
        settings={**BENCH_SETTINGS["stream"], "quick": QUICK, "version": BENCH_VERSION},
    log:
        "logs/benchmarks/stream.log",
    benchmark:
        "logs/benchmarks/stream.tsv"
    threads: 1
    conda:
        ENV
    script:
        "../../benchmarks/snake.py"


rule bench_export:
    # EHI through its exported FAISS index, and with PQ-coded leaves against ScaNN-AH / IVF-PQ
    output:
        curves=f"{BENCH}/export_curves.parquet",
        matched=f"{BENCH}/export_matched.parquet",
    params:
        settings={**BENCH_SETTINGS["export"], "quick": QUICK, "version": BENCH_VERSION},
    log:
        "logs/benchmarks/export.log",
    benchmark:
        "logs/benchmarks/export.tsv"
    threads: workflow.cores
    conda:
        ENV
    script:
        "../../benchmarks/snake.py"


rule bench_report:
    input:
        rules.bench_search.output,
        rules.bench_export.output,
        rules.bench_build.output,
        rules.bench_training.output,
        rules.bench_stream.output,
        notes="benchmarks/notes.md",
    output:
        summary=f"{BENCH}/summary.md",
    params:
        settings=lambda w, input: {"quick": QUICK, "notes": input.notes, "version": BENCH_VERSION},
    log:
        "logs/benchmarks/report.log",
    threads: 1
    conda:
        ENV
    script:
        "../../benchmarks/snake.py"


rule benchmarks:
    input:
        rules.bench_report.output,
