"""Config values that pass the schema but cannot work, refused while the Snakefile is parsed (so at
``snakemake -n``) instead of in a job: the encoder name, ``search.pq_m`` against the encoder's
dimension, IVF/ScaNN list counts against the corpus, and ``dataset.query_split`` fractions.

Each needs a fact the schema cannot see: what an encoder name resolves to (a built-in alias, a
local folder, a hub id; ehi.model.encoder.load_encoder), the encoder's dimension (known for the
aliases, a local folder and a hub model already in the cache, read from its ``config.json``), and
the corpus size (ehi.config_checks.known_corpus_size). Where a fact is not known yet the
check is left to the job. Kept light: no torch, no transformers, no network.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterable

from ehi.core.errors import ConfigError
from ehi.core.pretrained import MINILM_ALIASES, minilm_path

TINY_RANDOM = ("tiny-random", 32)  # ehi.model.encoder._tiny_random_model's hidden size
SUM_TOLERANCE = 1e-6  # as ehi.data.query_split, which refuses the same sums at preparation
LIST_KEYS = ("ivf_nlist", "scann_leaves")  # search keys that partition the corpus into lists


def _config_dim(config_json: Path) -> int | None:
    try:
        config = json.loads(config_json.read_text())
    except (OSError, ValueError):
        return None  # the job's strict encoder check names a broken config.json
    dim = config.get("hidden_size", config.get("dim", config.get("d_model"))) if isinstance(config, dict) else None
    return dim if isinstance(dim, int) and dim > 0 else None


def encoder_dim(name: str, where: str = "encoder.name") -> int | None:
    """The embedding dimension of encoder ``name`` where known without loading it (None where not);
    a name that is neither an alias, an existing folder nor a hub id is a ConfigError naming ``where``."""
    key = str(name).lower()
    if key == TINY_RANDOM[0]:
        return TINY_RANDOM[1]
    if key in MINILM_ALIASES:
        return _config_dim(minilm_path() / "config.json")
    path = Path(name)
    if (path / "tower.json").is_file() or (path / "doc_ids.txt").is_file():
        return None  # a vector tower (ehi.model.tower): its width is its vectors', checked when loaded
    if path.exists():  # as load_encoder: an existing path is a local folder
        if not (path / "config.json").is_file():
            raise ConfigError(f"config {where}: {name!r} is a local path without a config.json; "
                              "give a Hugging Face model folder (as Encoder.save writes it)")
        return _config_dim(path / "config.json")
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(str(name))
    except HFValidationError:
        looks_like = "no such folder" if "/" in str(name) or str(name).startswith((".", "~")) else "not a known name"
        raise ConfigError(f"config {where}: {name!r}: {looks_like}; expected a built-in alias "
                          f"(all-MiniLM-L6-v2, tiny-random), an existing local model folder, or a Hugging Face "
                          "hub id (name or owner/name, letters, digits, '-', '_' and '.')") from None
    from ehi.core.hub_cache import cached_snapshot, hub_offline, not_cached_offline  # no request: the cache only

    folder = cached_snapshot(str(name))
    if folder is None and hub_offline():  # the job could not fetch it: refused before any job runs
        raise not_cached_offline(str(name), where)
    return _config_dim(Path(folder) / "config.json") if folder else None


def check_pq_m(search: dict, uses_pq: bool, dim: int | None, name: str) -> None:
    m = search.get("pq_m")
    if not uses_pq or not m or dim is None or dim % m == 0:
        return
    divisors = [d for d in range(1, dim + 1) if dim % d == 0 and d <= 2 * m]
    raise ConfigError(f"config search.pq_m: {m} does not divide the dimension {dim} of encoder {name!r}; "
                      f"PQ cuts each embedding into pq_m equal parts (divisors near it: {divisors[-4:]})")


def check_list_sizes(search: dict, systems: Iterable[str], reads: Callable[[str], Iterable[str]], n_docs: int | None) -> None:
    """IVF lists and ScaNN leaves are at most the corpus's documents (the build would cap them)."""
    if n_docs is None:
        return
    for key in LIST_KEYS:
        users = [s for s in systems if key in reads(s)]
        too_many = sorted(v for v in search.get(key) or [] if v > n_docs)
        if users and too_many:
            raise ConfigError(f"config search.{key}: {too_many} exceed the corpus's {n_docs} documents "
                              f"({', '.join(users)} would build fewer lists than asked); use at most {n_docs}")


def check_query_split(dataset: dict) -> None:
    split = dataset.get("query_split")
    if not split:
        return
    fractions = split.get("fractions", [])
    if abs(sum(fractions) - 1.0) > SUM_TOLERANCE:
        raise ConfigError(f"config dataset.query_split.fractions: {fractions} sum to {sum(fractions):g}, not 1 "
                          "(train, dev and test shares of the judged queries)")


def check_values(config: dict, reads: Callable[[str], Iterable[str]], n_docs: int | None,
                 produced: Iterable[str] = ()) -> int | None:
    """Every check above. ``reads(system)``: the search keys a system's search reads
    (ehi.search.registry.rule_settings, passed in: this module sits below the search stage);
    ``produced``: the folders rules of this DAG write (ehi.data.produced.produced_folders, passed in
    for the same reason). Returns the encoder's dimension where known (None where not)."""
    check_query_split(config["dataset"])
    systems = [*config["search"]["systems"], *(config["ablation_systems"] if config["ablations"] else [])]
    name = config["encoder"]["name"]
    # vectors or a tower a rule of this DAG writes: their width is known once written
    dim = None if os.path.normpath(str(name)) in set(produced) else encoder_dim(name)
    check_pq_m(config["search"], any("pq_m" in reads(s) for s in systems), dim, name)
    check_list_sizes(config["search"], systems, reads, n_docs)
    return dim
