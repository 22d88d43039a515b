"""Where an encoder that is neither a built-in alias nor a local folder comes from: the Hugging Face
hub, through its cache.

The cache is read first, with no request: a model fetched once loads offline ever after, and every
later job of a run uses the very weights the first one used (a hub revision pushed mid-run would
otherwise change the encoder between jobs). Only a model the cache lacks is downloaded, with
progress bars, unless the user set ``HF_HUB_OFFLINE=1``; then the error says how to fill the cache.
``HF_HUB_CACHE`` (or ``HF_HOME``) moves the cache, as for any Hugging Face tool.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ehi.core.errors import ConfigError
from ehi.core.hub_cache import cached_snapshot, hub_offline, not_cached_offline

log = logging.getLogger(__name__)

# The files a transformer and its tokenizer load from; top-level only, so the ONNX/OpenVINO
# exports and sentence-transformers' pooling folders (this project pools itself) stay remote.
WEIGHTS = ("*.safetensors", "pytorch_model.bin")
OTHER_FILES = ["*.json", "*.txt", "*.model"]
IGNORE = ["*/*"]


def _download(repo_id: str) -> str:
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was_disabled = are_progress_bars_disabled()
    enable_progress_bars()  # transformers' loader turns them off for its own messages
    try:
        log.info("encoder %s: not in the Hugging Face cache, downloading it from the hub", repo_id)
        folder = snapshot_download(repo_id, allow_patterns=[*OTHER_FILES, WEIGHTS[0]], ignore_patterns=IGNORE)
        if not any(Path(folder).glob("*.safetensors")):  # an older repo: .bin only
            folder = snapshot_download(repo_id, allow_patterns=[*OTHER_FILES, WEIGHTS[1]], ignore_patterns=IGNORE)
        return folder
    finally:
        if was_disabled:
            disable_progress_bars()


def hub_encoder(repo_id: str) -> str:
    """A local folder holding hub model ``repo_id``: the cached one, else a fresh download."""
    from huggingface_hub.errors import HFValidationError

    folder = cached_snapshot(repo_id)
    if folder is not None:
        return folder
    if hub_offline():
        raise not_cached_offline(repo_id)
    try:
        return _download(repo_id)
    except HFValidationError as err:
        raise ConfigError(f"config encoder.name: {repo_id!r} is neither a local folder, a built-in alias nor a "
                          f"hub id ({err})") from None
    except OSError as err:  # connection failures, unknown or gated repositories (HfHubHTTPError is one)
        raise ConfigError(
            f"config encoder.name: cannot download {repo_id!r} from the Hugging Face hub ({type(err).__name__}: "
            f"{str(err).splitlines()[0] if str(err) else 'no detail'}); check the id and the network, "
            f"or give a local model folder"
        ) from None
