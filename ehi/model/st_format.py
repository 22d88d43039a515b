"""An encoder folder that sentence-transformers loads as the pipeline's encoder.

A saved Hugging Face folder alone loads in ``SentenceTransformer(path)`` with its guesses: mean
pooling without the L2 normalisation, and the tokenizer's 512-token limit instead of the training
``max_length``, so its vectors differ from the pipeline's (norms far from 1, long texts cut
elsewhere). The files written here (the layout sentence-transformers itself saves) name the three
modules the pipeline applies: the transformer at ``max_seq_length``, masked mean pooling
(:func:`ehi.model.encoder.mean_pool`) and normalisation. ``transformers.AutoModel`` ignores them.

A folder read as an encoder is held to them (:func:`check_sentence_transformers_folder`): one that
sentence-transformers saved but without ``modules.json`` (its pooling unknown), or whose Pooling
module pools otherwise than by the masked mean (``cls``, ``max``, ...), is refused in one line
rather than embedded with mean pooling, vectors other than the model's. A plain Hugging Face folder
(no sentence-transformers file) is the pipeline's to pool.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]


ST_FILES = ("sentence_bert_config.json", "config_sentence_transformers.json")  # what only sentence-transformers writes
MEAN_POOLING = "pooling_mode_mean_tokens"  # the one pooling the pipeline implements


def check_sentence_transformers_folder(folder: str | os.PathLike, error: type[Exception]) -> None:
    """Refuse, in one line naming the file, a sentence-transformers folder without ``modules.json``
    or whose pooling is other than the masked mean of the tokens."""
    folder = Path(folder)
    modules_path = folder / "modules.json"
    if not modules_path.is_file():
        marks = [n for n in ST_FILES if (folder / n).is_file()] + sorted(p.name for p in folder.glob("*_Pooling"))
        if marks:
            raise error(f"{folder}: a sentence-transformers folder ({marks[0]}) without modules.json: its pooling "
                        "is unknown; put back the modules.json it was saved with")
        return
    try:
        modules = json.loads(modules_path.read_text())
        pooling = [m for m in modules if str(m.get("type", "")).endswith(".Pooling")]
    except (OSError, ValueError, TypeError, AttributeError):
        raise error(f"{modules_path}: not a JSON list of modules as sentence-transformers writes it") from None
    if not pooling:
        raise error(f"{modules_path}: no Pooling module; the pipeline pools by the masked mean of the tokens")
    config_path = folder / str(pooling[0].get("path", "")) / "config.json"
    try:
        config = json.loads(config_path.read_text())
        modes = sorted(k for k, v in config.items() if k.startswith("pooling_mode_") and v is True)
    except (OSError, ValueError, AttributeError):
        raise error(f"{config_path}: the Pooling module's config is missing or no JSON object") from None
    if isinstance(config.get("pooling_mode"), str):  # the name form sentence-transformers also reads
        modes = [f"pooling_mode_{config['pooling_mode']}"]
    if modes not in ([MEAN_POOLING], ["pooling_mode_mean"]):
        raise error(f"{config_path}: pooling {', '.join(m[len('pooling_mode_'):] for m in modes) or 'none'}, "
                    f"the pipeline implements mean pooling alone ({MEAN_POOLING}): its vectors would not be "
                    "this model's")


def _write(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_sentence_transformers_files(folder: str | os.PathLike, max_length: int, dim: int) -> None:
    """Add the sentence-transformers module files to a saved Hugging Face encoder ``folder``."""
    folder = Path(folder)
    _write(folder / "modules.json", MODULES)
    _write(folder / "sentence_bert_config.json", {"max_seq_length": int(max_length), "do_lower_case": False})
    _write(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": int(dim), "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False, "include_prompt": True})
    (folder / "2_Normalize").mkdir(exist_ok=True)
    _write(folder / "config_sentence_transformers.json", {"similarity_fn_name": "cosine", "prompts": {},
                                                          "default_prompt_name": None})
