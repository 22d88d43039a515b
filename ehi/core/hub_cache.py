"""The Hugging Face cache, read without a request: below every stage, so that the parse-time
checks (ehi.core.config_values) and the encoder loader (ehi.model.hub) see the same folders."""

from __future__ import annotations


def cached_snapshot(repo_id: str) -> str | None:
    """The local folder of ``repo_id`` in the Hugging Face cache, or None; never a request."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return snapshot_download(repo_id, local_files_only=True)
    except (LocalEntryNotFoundError, HFValidationError, OSError):
        return None
