"""A saved encoder loads in sentence-transformers and gives the pipeline's embeddings."""

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from ehi.model.encoder import load_encoder

TEXTS = ["what causes fever", "a much longer document about rivers and castles " * 12, "x", "Ünïcode tëxt, too"]


@pytest.mark.parametrize("name, max_length", [("tiny-random", 16), ("all-MiniLM-L6-v2", 24)])
def test_sentence_transformers_reproduces_the_pipeline_embeddings(tmp_path, name, max_length):
    encoder = load_encoder(name, max_length=max_length, device="cpu")
    encoder.save(tmp_path / "encoder")
    model = SentenceTransformer(str(tmp_path / "encoder"), device="cpu")
    assert model.max_seq_length == max_length  # the training cut, not the tokenizer's 512
    theirs = model.encode(TEXTS, batch_size=2, convert_to_numpy=True)
    np.testing.assert_allclose(theirs, encoder.encode(TEXTS, batch_size=3), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(theirs, axis=1), 1.0, atol=1e-5)
    # the folder still loads as the pipeline's own encoder
    again = load_encoder(str(tmp_path / "encoder"), max_length=max_length, device="cpu")
    np.testing.assert_allclose(again.encode(TEXTS), encoder.encode(TEXTS), atol=1e-6)


@pytest.mark.parametrize("fault, says", [
    ("no modules.json", "a sentence-transformers folder (sentence_bert_config.json) without modules.json"),
    ("cls", "1_Pooling/config.json: pooling cls_token, the pipeline implements mean pooling alone"),
    ("max", "1_Pooling/config.json: pooling max_tokens, the pipeline implements mean pooling alone"),
])
def test_a_folder_pooled_otherwise_or_of_unknown_pooling_is_refused_in_one_line(tmp_path, fault, says):
    # loaded with mean pooling, its vectors would not be the ones sentence-transformers gives
    import json

    from ehi.core.errors import WeightsError

    load_encoder("tiny-random", max_length=16, device="cpu").save(tmp_path / "encoder")
    if fault == "no modules.json":
        (tmp_path / "encoder" / "modules.json").unlink()
    else:
        config_path = tmp_path / "encoder" / "1_Pooling" / "config.json"
        config = json.loads(config_path.read_text())
        config.update({"pooling_mode_mean_tokens": False, {"cls": "pooling_mode_cls_token",
                                                           "max": "pooling_mode_max_tokens"}[fault]: True})
        config_path.write_text(json.dumps(config))
    with pytest.raises(WeightsError) as err:
        load_encoder(str(tmp_path / "encoder"), device="cpu")
    assert says in str(err.value) and "\n" not in str(err.value)
