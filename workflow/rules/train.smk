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
    output:
        encoder=directory(f"{R}/{{variant}}/ehi/train/encoder"),
        indexer=f"{R}/{{variant}}/ehi/train/indexer.safetensors",
        log_table=f"{RES}/{{variant}}/train_log/ehi.parquet",
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "ehi"),
        encoder=config["encoder"]["name"],
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
    output:
        encoder=directory(f"{R}/{{variant}}/de/train/encoder"),
        log_table=f"{RES}/{{variant}}/train_log/de.parquet",
    params:
        data_dir=data_dir,
        train=lambda w: train_params(w.variant, "de"),
        encoder=config["encoder"]["name"],
        **ENCODER_ID,
        version=VERSIONS["train"],
        layer_cache=f"{R}/cache/layers",
    log:
        f"logs/{DS}/{{variant}}/train_de.log",
    benchmark:
        f"{LOGS}/{{variant}}/benchmarks/train_de.tsv"
