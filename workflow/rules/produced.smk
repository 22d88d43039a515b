# Stage 0: folders a dataset names that the DAG makes itself (ehi/data/produced.py): a collection
# built by its script, a text collection encoded once into vectors that every study on it reads, a
# synthetic vector world from its knobs, and a tower over vectors at its start.
# Included once at the top of the workflow (never in a workflow/multi.smk instance), since several
# datasets may read one folder.
import re

from ehi.core.errors import exit_on_user_error
from ehi.data.produced import name_pattern, PRODUCED_FILES, PRODUCED_ROOTS, check_worlds, collection_of, tower_vectors, world_knobs

COLLECTIONS = config.get("collections") or {}
ENCODINGS = config.get("encodings") or {}
WORLDS = config.get("worlds") or {}
TOWERS = config.get("towers") or {}
with exit_on_user_error("snakemake"):
    check_worlds(WORLDS)




if COLLECTIONS:

    rule build_collection:
        output:
            directory(f"{PRODUCED_ROOTS['collections']}/{{collection}}"),
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
            directory(f"{PRODUCED_ROOTS['encodings']}/{{encoding}}"),
        params:
            source=lambda w: ENCODINGS[w.encoding].get("source", "beir"),
            encoder=lambda w: ENCODINGS[w.encoding].get("encoder", "all-MiniLM-L6-v2"),
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
            directory(f"{PRODUCED_ROOTS['worlds']}/{{world}}"),
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
            f"{PRODUCED_ROOTS['towers']}/{{tower}}/{PRODUCED_FILES['towers']}",
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
