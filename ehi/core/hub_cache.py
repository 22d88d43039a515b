"""The Hugging Face cache, read without a request: below every stage, so that the parse-time
checks (ehi.core.config_values) and the encoder loader (ehi.model.hub) see the same folders."""

from __future__ import annotations

from ehi.core.errors import ConfigError


def cached_snapshot(repo_id: str) -> str | None:
    """The local folder of ``repo_id`` in the Hugging Face cache, or None; never a request."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return snapshot_download(repo_id, local_files_only=True)
    except (LocalEntryNotFoundError, HFValidationError, OSError):
        return None


def hub_offline() -> bool:
    """True where ``HF_HUB_OFFLINE`` forbids downloads (read when huggingface_hub is imported)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def not_cached_offline(repo_id: str, where: str = "encoder.name") -> ConfigError:
    """The refusal of a hub model that is not in the cache while downloads are forbidden: the same
    at ``snakemake -n`` (ehi.core.config_values) as in the job (ehi.model.hub)."""
    return ConfigError(
        f"config {where}: {repo_id!r} is not in the Hugging Face cache and HF_HUB_OFFLINE=1 forbids a "
        f"download; unset HF_HUB_OFFLINE on a machine with a network (the first job fills the cache), run "
        f"`hf download {repo_id}` where there is one and copy the cache, or give a local model folder")
