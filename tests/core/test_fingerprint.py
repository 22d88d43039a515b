"""ehi.core.fingerprint: an encoder as a rule param (its name, and a local folder's files as a
digest), and the name a rule script reads back from it."""

from ehi.core.fingerprint import encoder_identity, identity_name


def test_a_local_encoders_files_enter_its_identity_and_its_name_reads_back(tmp_path):
    folder = tmp_path / "my@encoder"  # an '@' in the folder's own name is kept
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights one")
    before = encoder_identity(str(folder))
    (folder / "model.safetensors").write_bytes(b"weights two")  # replaced under the same name
    after = encoder_identity(str(folder))
    assert before != after and before.startswith(f"{folder}@")
    assert identity_name(before) == identity_name(after) == str(folder)


def test_an_alias_or_hub_id_is_its_own_identity_unchanged():
    for name in ("all-MiniLM-L6-v2", "owner/model", "tiny-random"):
        assert encoder_identity(name) == name and identity_name(name) == name
