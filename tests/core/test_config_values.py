"""Config values the schema passes but no job could use, refused at parse time naming the key: an
encoder name that is nothing loadable (hub ids stay accepted), search.pq_m not dividing the
encoder's dimension, IVF lists or ScaNN leaves beyond the corpus, query_split fractions not
summing to 1."""

import json

import pytest

from ehi.core.config_values import (TINY_RANDOM, check_list_sizes, check_pq_m, check_query_split, check_values,
                                    encoder_dim)
from ehi.core.errors import ConfigError
from ehi.search.registry import rule_settings
from tests.test_config_checks import config


def reads(cfg):
    return lambda system: rule_settings(cfg["search"], system)


@pytest.mark.parametrize("name", ["foo bar", "../no/such/folder", "a/b/c", "~/model", "x" * 120, "bad--name"])
def test_an_encoder_name_that_is_nothing_loadable_is_refused(name):
    with pytest.raises(ConfigError, match=r"^config encoder.name: .*expected a built-in alias"):
        encoder_dim(name)


@pytest.mark.parametrize("name", ["sentence-transformers/msmarco-distilbert-cos-v5", "bert-base-uncased",
                                  "all-MiniLM-L6-v2x", "org.name/model_v1.5"])
def test_hub_ids_are_accepted_without_a_request_while_online(name, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")  # an empty cache: nothing is read, nothing fetched
    monkeypatch.setattr(constants, "HF_HUB_CACHE", "/nonexistent-hf-home/hub")
    assert encoder_dim(name) is None  # not cached: dimension unknown, the job fetches it


def test_a_hub_id_not_in_the_cache_while_offline_is_refused_at_parse_time(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ConfigError, match=r"^config encoder.name: 'no-such-model-xyz' is not in the Hugging Face "
                                          r"cache and HF_HUB_OFFLINE=1"):
        encoder_dim("no-such-model-xyz")


def test_known_dimensions(tmp_path):
    from ehi.model.encoder import load_encoder

    assert encoder_dim("all-MiniLM-L6-v2") == 384 and encoder_dim("MiniLM") == 384
    assert encoder_dim("tiny-random") == TINY_RANDOM[1] == load_encoder("tiny-random", device="cpu").dim
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 48}))
    assert encoder_dim(str(tmp_path)) == 48
    with pytest.raises(ConfigError, match="is a local path without a config.json"):
        encoder_dim(str(tmp_path / "config.json"))


def test_pq_m_must_divide_the_dimension_where_pq_is_searched():
    with pytest.raises(ConfigError, match=r"^config search.pq_m: 5 does not divide the dimension 32 of encoder"):
        check_pq_m({"pq_m": 5}, True, 32, "tiny-random")
    check_pq_m({"pq_m": 5}, False, 32, "tiny-random")  # no PQ system: unused
    check_pq_m({"pq_m": 5}, True, None, "some/hub-model")  # dimension unknown: left to the job
    check_pq_m({"pq_m": 8}, True, 32, "tiny-random")
    cfg = config({"search": {"pq_m": 6, "systems": ["ehi+tree-pq", "de+exact"]}})
    with pytest.raises(ConfigError, match="pq_m: 6 does not divide the dimension 32"):
        check_values(cfg, reads(cfg), 200)


@pytest.mark.parametrize("key, systems", [("ivf_nlist", ["de+faiss-ivf"]), ("ivf_nlist", ["ehi+faiss-ivfpq"]),
                                          ("scann_leaves", ["de+scann"]), ("scann_leaves", ["ehi+scann-ah"])])
def test_list_counts_beyond_the_corpus_are_refused_where_it_is_known(key, systems):
    cfg = config({"search": {key: [4, 300], "systems": systems}, "ablations": {}})
    with pytest.raises(ConfigError, match=rf"^config search.{key}: \[300\] exceed the corpus's 200 documents"):
        check_list_sizes(cfg["search"], systems, reads(cfg), 200)
    check_list_sizes(cfg["search"], systems, reads(cfg), None)  # corpus not prepared yet: the job caps
    check_list_sizes(cfg["search"], ["de+exact"], reads(cfg), 200)  # no system reads the key


def test_query_split_fractions_must_sum_to_one():
    with pytest.raises(ConfigError, match=r"^config dataset.query_split.fractions: \[0.5, 0.1, 0.1\] sum to 0.7, not 1"):
        check_query_split({"query_split": {"fractions": [0.5, 0.1, 0.1], "seed": 0}})
    check_query_split({"query_split": {"fractions": [0.5, 0.1, 0.4], "seed": 0}})
    check_query_split({"query_split": None})


@pytest.mark.parametrize("name", ["config.yaml", "test/test.yaml", "scifact.yaml", "dexml.yaml", "paper/scifact.yaml",
                                  "paper/nq320k.yaml"])
def test_every_shipped_config_passes(name, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # online, the paper's hub encoders are the job's to fetch
    cfg = config(base=name)
    check_values(cfg, reads(cfg), None)
