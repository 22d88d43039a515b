# Stage 0: folders a dataset names that the DAG makes itself (ehi/data/produced.py): a collection
# built by its script, and a text collection encoded once into vectors that every study on it reads.
# Included once at the top of the workflow (never in a workflow/multi.smk instance), since several
# datasets may read one folder.
import re

from ehi.data.produced import PRODUCED_ROOTS, collection_of

COLLECTIONS = config.get("collections") or {}
ENCODINGS = config.get("encodings") or {}


def _names(entries):
    return "|".join(map(re.escape, entries)) or "(?!)"


if COLLECTIONS:

    rule build_collection:
        output:
            directory(f"{PRODUCED_ROOTS['collections']}/{{collection}}"),
        params:
            script=lambda w: COLLECTIONS[w.collection]["script"],
            args=lambda w: COLLECTIONS[w.collection].get("args", []),
        wildcard_constraints:
            collection=_names(COLLECTIONS),
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
            encoding=_names(ENCODINGS),
        log:
            "logs/encodings/{encoding}.log",
        threads: workflow.cores
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/encode_collection.py"
