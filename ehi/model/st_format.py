"""An encoder folder that sentence-transformers loads as the pipeline's encoder.

A saved Hugging Face folder alone loads in ``SentenceTransformer(path)`` with its guesses: mean
pooling without the L2 normalisation, and the tokenizer's 512-token limit instead of the training
``max_length``, so its vectors differ from the pipeline's (norms far from 1, long texts cut
elsewhere). The files written here (the layout sentence-transformers itself saves) name the three
modules the pipeline applies: the transformer at ``max_seq_length``, masked mean pooling
(:func:`ehi.model.encoder.mean_pool`) and normalisation. ``transformers.AutoModel`` ignores them.
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
