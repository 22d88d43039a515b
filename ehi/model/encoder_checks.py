"""Whether a saved encoder folder is whole: every tensor its config builds present with its shape,
no tensor the config has no place for, a tokenizer that runs.

transformers fills a missing tensor with random values and reports it only in a log line, so an
encoder saved for another config (a renamed tensor, an extra layer in ``config.json``) would
serve random embeddings without a word. :func:`check_encoder_folder` compares the safetensors
headers with the tensors of a weightless model built from the config (meta device: no memory, no
weights read), then reads each tensor once to require finite values (an encoder of NaNs embeds
every text as NaN, and search then finds nothing without failing), so ``ehi info``, ``ehi search``
and ``ehi export-faiss`` refuse such a folder alike; :func:`check_load_report` applies the same
rule to what ``from_pretrained`` reports, for sources that are no local folder (a hub id).
:func:`check_probe` runs one text through a loaded encoder: finite weights can still overflow.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError, safe_open

from ehi.core.errors import UserError, WeightsError
from ehi.core.weights import check_finite, shape_problems, summarise

# Mean pooling reads the last hidden state only, so BERT's pooler is never used: a folder saved
# without it (Encoder.save of a model built with add_pooling_layer=False) is whole.
UNUSED_PREFIXES = ("pooler.",)
PROBE_TEXT = "a probe query, 42 words long?"


def _used(names) -> set[str]:
    return {n for n in names if not n.startswith(UNUSED_PREFIXES)}


def _config(folder: Path, error: type[UserError]):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(str(folder))
    except (ValueError, OSError, KeyError, TypeError) as err:  # an unknown model_type is a ValueError
        raise error(f"{folder / 'config.json'}: not an encoder configuration transformers can build "
                    f"({' '.join(str(err).split())[:200]})") from None


def expected_shapes(folder: Path, error: type[UserError] = WeightsError) -> tuple[dict[str, tuple], set[str], str]:
    """Of the model ``folder``'s config.json builds: tensor name -> shape, the names of its buffers
    (recomputed, so a saved copy is harmless) and its base-model prefix."""
    from transformers import AutoModel

    config = _config(folder, error)
    try:
        with torch.device("meta"):  # shapes only: nothing allocated, nothing initialised
            model = AutoModel.from_config(config)
    except (ValueError, TypeError, KeyError, RuntimeError) as err:
        raise error(f"{folder / 'config.json'}: transformers cannot build this encoder ({err})") from None
    buffers = {name for name, _ in model.named_buffers()}
    return ({k: tuple(v.shape) for k, v in model.state_dict().items()}, buffers,
            str(model.base_model_prefix or ""))


def saved_shapes(paths: list[Path], error: type[UserError] = WeightsError) -> dict[str, tuple]:
    """Tensor name -> shape from the headers of the safetensors files ``paths``."""
    shapes = {}
    for path in paths:
        try:
            with safe_open(str(path), "pt") as tensors:  # the header covers the file: a truncated copy fails
                shapes.update({k: tuple(tensors.get_slice(k).get_shape()) for k in tensors.keys()})
        except (SafetensorError, OSError) as err:
            raise error(f"{path}: not a readable safetensors file (truncated or corrupted?): {err}") from None
    return shapes


def check_encoder_folder(folder: str | os.PathLike, error: type[UserError] = WeightsError, values: bool = True) -> None:
    """Refuse an encoder folder whose weights do not fill its config's model exactly, hold NaN or
    inf (with ``values``; a loader that checks the loaded tensors passes False rather than read the
    file twice), or whose tokenizer fails on a plain text; the message names the file and the tensors."""
    from ehi.model.st_format import check_sentence_transformers_folder

    folder = Path(folder)
    check_sentence_transformers_folder(folder, error)  # pooled as its modules say, or refused
    expected, buffers, prefix = expected_shapes(folder, error)
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        raise error(f"{folder}: no encoder weights (*.safetensors)")
    saved = saved_shapes(weights, error)
    if prefix and any(k.startswith(prefix + ".") for k in saved):  # a task model's file: its heads are not loaded
        saved = {k[len(prefix) + 1 :]: v for k, v in saved.items() if k.startswith(prefix + ".")}
    saved = {k: v for k, v in saved.items() if k in expected or k not in buffers}
    problems = shape_problems({k: v for k, v in expected.items() if k in _used(expected)},
                              {k: v for k, v in saved.items() if k in _used(saved)})
    if problems:
        files = ", ".join(p.name for p in weights)
        raise error(f"{folder}: {files} does not match config.json (the model would run with random "
                    f"tensors): {summarise(problems)}")
    for path in weights if values else ():
        with safe_open(str(path), "pt") as tensors:  # one tensor at a time: memory-mapped, never all at once
            for name in tensors.keys():
                check_finite({name: tensors.get_tensor(name)}, str(path), error)
    check_tokenizer(folder, error)


def check_probe(encoder, source: str) -> None:
    """A loaded ``encoder``'s weights are finite, and one forward pass of :data:`PROBE_TEXT` gives a
    finite, non-zero embedding: else every text would embed the same useless way (NaN weights,
    weights that overflow in a layer, a LayerNorm scaled to zero)."""
    check_finite(dict(encoder.model.state_dict()), f"encoder {source!r}")
    vector = encoder.encode([PROBE_TEXT])[0]
    if not np.isfinite(vector).all():
        raise WeightsError(f"encoder {source!r}: a probe text embeds to NaN or inf (its weights overflow)")
    if not np.any(vector):
        raise WeightsError(f"encoder {source!r}: a probe text embeds to the zero vector (its weights zero the output)")


def check_tokenizer(folder: Path, error: type[UserError] = WeightsError) -> None:
    """The tokenizer saved in ``folder`` loads and tokenizes a plain text (a vocabulary without its
    unknown token loads, then fails on the first word it lacks)."""
    from transformers import AutoTokenizer

    try:
        AutoTokenizer.from_pretrained(str(folder))(PROBE_TEXT)
    except Exception as err:  # the tokenizers library raises bare Exception
        raise error(f"{folder}: the saved tokenizer fails on a plain text: {' '.join(str(err).split())[:200]}") from None


def check_load_report(info: dict, source: str) -> None:
    """``from_pretrained(..., output_loading_info=True)``'s report: any tensor missing (randomly
    initialised) or mismatched is a :class:`WeightsError` naming them. Unexpected tensors are left
    to :func:`check_encoder_folder`: a hub checkpoint's task heads are unexpected and harmless."""
    problems = [f"{k}: missing from the checkpoint" for k in sorted(_used(info.get("missing_keys") or ()))]
    problems += [f"{k}: another shape" for k in sorted(str(m) for m in info.get("mismatched_keys") or ())]
    if problems:
        raise WeightsError(f"encoder {source!r} does not match its config (the model would run with random "
                           f"tensors): {summarise(problems)}")
