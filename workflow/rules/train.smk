# Stage 2: train EHI (encoder + tree, jointly) and the dual-encoder baseline with one loop.
# Checkpoints live in train/checkpoint/, which is not a declared output: Snakemake never deletes
# it, so a killed job resumes from its last epoch when rerun. Nor is train/previous/: each finished
# training links its model there (ehi.train.checkpoint.keep_previous_model), so a retraining that
# fails after Snakemake deleted the outputs leaves the last good model loadable.
#
# A job asks for max(1, resources.gpus_per_train) GPUs (config; a profile may override with
# set-resources: train_ehi: gpu: N). With one, the script runs as one process; with N > 1 it runs
# under torchrun with N processes (ehi.train.distributed: data-parallel, same result as one process).
# The log file gets everything (stderr); stdout, left on the console, gets the start, epoch and
# end lines (ehi.train.progress).
#
# The results' training log is no update() output, unlike evaluate.smk's results: Snakemake would
# restore it after a failed retraining and record the job as made, and `train_all` asks for that
# log alone, so the failed training would pass for done. A shell rule has no script whose age
# would have the next run redo it (ehi/core/unfinished.py), so the log goes with the model.
import sys

from snakemake.settings.types import DeploymentMethod

# The job's interpreter (the conda environment's under --software-deployment-method conda) and the
# rule's script reach the command through the jobs' environment: Snakemake records a shell rule's
# command as written and reruns a job whose command changed, so neither the interpreter's path nor
# where the checkout lies may be written into it (a moved checkout reruns nothing).
os.environ["EHI_PYTHON"] = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable
os.environ["EHI_TRAIN_SCRIPT"] = os.path.join(workflow.basedir, "workflow", "scripts", "train.py")


envvars:  # declared: Snakemake passes them on to jobs it runs elsewhere (a cluster node)
    "EHI_PYTHON",
    "EHI_TRAIN_SCRIPT",


rule train_ehi:
    input:
        data=DATA_FILES,
        leaf_count=leaf_count_input,
        dev_choice=lambda w: dev_choice_input(w, "ehi"),
        start=start_encoder_input,
    output:
        encoder=directory(f"{R}/{{variant}}/ehi/train/encoder"),
        indexer=f"{R}/{{variant}}/ehi/train/indexer.safetensors",
        log_table=f"{RES}/{{variant}}/train_log/ehi.parquet",
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "ehi", dev_choice_input(w, "ehi")),
        encoder=lambda w: start_encoder(w.variant),
        **ENCODER_ID,
        version=VERSIONS["train"],
        layer_cache=f"{R}/cache/layers",  # one frozen-layer cache for every training of the dataset
    log:
        f"logs/{DS}/{{variant}}/train_ehi.log",
    benchmark:
        f"{LOGS}/{{variant}}/benchmarks/train_ehi.tsv"
    threads: config["resources"]["threads_per_job"]
    resources:
        gpu=max(1, config["resources"]["gpus_per_train"]),
    conda:
        ENV
    shell:
        "if [ {resources.gpu} -gt 1 ];"
        ' then set -- "$EHI_PYTHON" -m torch.distributed.run --standalone --nproc_per_node {resources.gpu};'
        ' else set -- "$EHI_PYTHON"; fi;'
        ' "$@" "$EHI_TRAIN_SCRIPT" --data-dir {params.data_dir:q} --encoder {params.encoder:q}'
        " --train {params.train:q} --out-dir $(dirname {output.encoder:q})"
        " --log-table {output.log_table:q} --threads {threads} --layer-cache-dir {params.layer_cache:q} 2> {log:q}"


use rule train_ehi as train_de with:
    input:
        data=DATA_FILES,
        dev_choice=lambda w: dev_choice_input(w, "de"),
    output:
        encoder=directory(f"{R}/{{variant}}/de/train/encoder"),
        log_table=f"{RES}/{{variant}}/train_log/de.parquet",
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "de", dev_choice_input(w, "de")),
        encoder=config["encoder"]["name"],
        **ENCODER_ID,
        version=VERSIONS["train"],
        layer_cache=f"{R}/cache/layers",
    log:
        f"logs/{DS}/{{variant}}/train_de.log",
    benchmark:
        f"{LOGS}/{{variant}}/benchmarks/train_de.tsv"


# A setting with a grid chosen on dev (train: {key: {choose: [...]}}, ehi/train/grid.py): every point
# is trained as a variant of its own (its path names its settings), rule dev_grid reads their dev
# values and names the best, and the setting's model is that point's, copied (its other seeds are
# trained at the choice by the rules above). Only the setting is searched: test is read once.
rule dev_grid:
    input:
        lambda w: [f"{RES}/{p}/train_log/{w.model}.parquet" for p in grid_points_of(w.variant, w.model)],
    output:
        table=f"{RES}/{{variant}}/dev_grid/{{model}}.parquet",
        choice=f"{RES}/{{variant}}/dev_grid/{{model}}.json",
    params:
        points=lambda w: grid_points_of(w.variant, w.model),
    wildcard_constraints:
        model="de|ehi",
    log:
        f"logs/{DS}/{{variant}}/dev_grid_{{model}}.log",
    conda:
        ENV
    script:
        "../scripts/dev_grid.py"


rule chosen_ehi:
    input:
        choice=f"{RES}/{{variant}}/dev_grid/ehi.json",
        points=lambda w: [f"{R}/{p}/ehi/train/indexer.safetensors" for p in grid_points_of(w.variant, "ehi")],
    output:
        encoder=directory(f"{R}/{{variant}}/ehi/train/encoder"),
        indexer=f"{R}/{{variant}}/ehi/train/indexer.safetensors",
        log_table=f"{RES}/{{variant}}/train_log/ehi.parquet",
    params:
        runs=lambda w: {p: f"{R}/{p}/ehi/train" for p in grid_points_of(w.variant, "ehi")},
        logs=lambda w: {p: f"{RES}/{p}/train_log/ehi.parquet" for p in grid_points_of(w.variant, "ehi")},
    wildcard_constraints:
        variant=exact_names(GRIDDED["ehi"]),
    log:
        f"logs/{DS}/{{variant}}/chosen_ehi.log",
    conda:
        ENV
    script:
        "../scripts/chosen_model.py"


use rule chosen_ehi as chosen_de with:
    input:
        choice=f"{RES}/{{variant}}/dev_grid/de.json",
        points=lambda w: [f"{R}/{p}/de/train/encoder" for p in grid_points_of(w.variant, "de")],
    output:
        encoder=directory(f"{R}/{{variant}}/de/train/encoder"),
        log_table=f"{RES}/{{variant}}/train_log/de.parquet",
    params:
        runs=lambda w: {p: f"{R}/{p}/de/train" for p in grid_points_of(w.variant, "de")},
        logs=lambda w: {p: f"{RES}/{p}/train_log/de.parquet" for p in grid_points_of(w.variant, "de")},
    wildcard_constraints:
        variant=exact_names(GRIDDED["de"]),
    log:
        f"logs/{DS}/{{variant}}/chosen_de.log",


ruleorder: chosen_ehi > train_ehi
ruleorder: chosen_de > train_de


# The step log of an EHI training with train.diag_every (ehi.train.step_log): written into the run
# folder by train_ehi beside the model (not a declared output of it, so that trainings without the
# log keep their outputs and never rerun for it), copied here into results and drawn. Requested by
# `all`, `train_all` and `step_logs` only for the settings whose EHI training sets diag_every.
localrules:
    train_steps,
    train_steps_figure,


rule train_steps:
    input:
        indexer=f"{R}/{{variant}}/ehi/train/indexer.safetensors",  # the step log is written with it
    output:
        f"{RES}/{{variant}}/train_steps/ehi.parquet",
    params:
        run_log=lambda w: f"{R}/{w.variant}/ehi/train/step_log.parquet",
    log:
        f"logs/{DS}/{{variant}}/train_steps.log",
    conda:
        ENV
    script:
        "../scripts/train_steps.py"


rule train_steps_figure:
    input:
        f"{RES}/{{variant}}/train_steps/ehi.parquet",
    output:
        f"{RES}/{{variant}}/train_steps/ehi.png",
    params:
        title=lambda w: f"{DS} ({w.variant}): EHI's training, step by step",
        version=VERSIONS["report"],
    log:
        f"logs/{DS}/{{variant}}/train_steps_figure.log",
    conda:
        ENV
    script:
        "../scripts/train_steps_figure.py"
