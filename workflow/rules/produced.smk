# Stage 0: folders a dataset names that the DAG makes itself (ehi/data/produced.py): a collection
# built by its script, a text collection encoded once into vectors that every study on it reads, a
# synthetic vector world from its knobs, and a tower over vectors at its start.
# Included once at the top of the workflow (never in a workflow/multi.smk instance), since several
# datasets may read one folder.
import re

from ehi.core.errors import exit_on_user_error
from ehi.core.fingerprint import encoder_identity
from ehi.core.unfinished import outdate_unfinished
from ehi.data.collection_build import outdate_changed_builds
from ehi.core.catalog import PRODUCED_ROOTS, produced_output
from ehi.data.produced import DEFAULT_ENCODER, name_pattern, check_encodings, check_worlds, collection_of, tower_vectors, world_knobs

COLLECTIONS = config.get("collections") or {}
ENCODINGS = config.get("encodings") or {}
WORLDS = config.get("worlds") or {}
TOWERS = config.get("towers") or {}
with exit_on_user_error("snakemake"):
    check_worlds(WORLDS)
    check_encodings(ENCODINGS)

# Every output below is an update() one: Snakemake would otherwise delete the previous folder before
# the job, and a failing rebuild (a build script that fails, an encoder that cannot load) would cost
# a good collection or a 35-minute encoding. Each job writes aside and moves its result in whole
# (ehi.core.io.replace_dir); a failed job's marker has the next run do it again, and a job whose
# output already holds what it would write keeps it (ehi/core/unfinished.py)
for _producer in PRODUCED_ROOTS:
    outdate_unfinished(f"logs/{_producer}")
# a build script edited in place: its collection is dated back, so Snakemake rebuilds it
outdate_changed_builds(COLLECTIONS, PRODUCED_ROOTS["collections"])


if COLLECTIONS:

    rule build_collection:
        output:
            update(directory(produced_output("collections", "{collection}"))),
        params:
            script=lambda w: COLLECTIONS[w.collection]["script"],
            args=lambda w: COLLECTIONS[w.collection].get("args", []),
        wildcard_constraints:
            collection=name_pattern(COLLECTIONS),
        log:
            "logs/collections/{collection}.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/build_collection.py"


if ENCODINGS:

    rule encode_collection:
        input:
            collection=lambda w: collection_of(config, w.encoding),
        output:
            update(directory(produced_output("encodings", "{encoding}"))),
        params:
            source=lambda w: ENCODINGS[w.encoding].get("source", "beir"),
            # a local folder's files enter as a digest (a hub id or an alias is its name, as before)
            encoder=lambda w: encoder_identity(ENCODINGS[w.encoding].get("encoder", DEFAULT_ENCODER)),
            max_length=lambda w: ENCODINGS[w.encoding].get("max_length", 256),
            batch_size=lambda w: ENCODINGS[w.encoding].get("batch_size", 128),
        wildcard_constraints:
            encoding=name_pattern(ENCODINGS),
        log:
            "logs/encodings/{encoding}.log",
        threads: 8  # the encoder uses every core Snakemake gives it (capped at --cores)
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/encode_collection.py"


if WORLDS:

    rule vector_world:
        output:
            update(directory(produced_output("worlds", "{world}"))),
        params:
            # every knob, defaults filled: a changed default is a changed world
            knobs=lambda w: world_knobs(WORLDS[w.world]),
        wildcard_constraints:
            world=name_pattern(WORLDS),
        log:
            "logs/worlds/{world}.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/vector_world.py"


if TOWERS:

    rule write_tower:
        input:
            vectors=lambda w: tower_vectors(config, w.tower),
        output:
            update(produced_output("towers", "{tower}")),
        params:
            kind=lambda w: TOWERS[w.tower].get("kind", "linear"),
            shared=lambda w: TOWERS[w.tower].get("shared", True),
            hidden=lambda w: TOWERS[w.tower].get("hidden", 0),
        wildcard_constraints:
            tower=name_pattern(TOWERS),
        log:
            "logs/towers/{tower}.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/write_tower.py"
