"""A deterministic synthetic retrieval corpus with a latent topic hierarchy.

Why synthetic: the offline default and the tests need a corpus that a pretrained encoder can read
(real words, not token ids), that has the structure a tree index can find (topics within topics),
and whose difficulty is a parameter. Real datasets need a network here.

How it is made, all from one seed:

- words are whole words from the encoder tokenizer's vocabulary (so MiniLM sees real English);
- a two-level hierarchy: ``n_topics`` topics, each with ``n_subtopics`` subtopics, each owning a
  small set of topic/subtopic words and a pool of ``key_pool`` "key" words;
- documents belong to a subtopic and come in *groups* of 1-3 documents that share a core of key
  words (several relevant documents per query for some queries); each document adds its own keys,
  subtopic and topic words and general noise words;
- each query describes one group with ``query_keys`` of its core keys, a subtopic word and noise;
  every document of that group is relevant (grade 1). Other documents of the same subtopic draw
  from the same key pool, so they are the natural hard negatives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ehi.core.config import SEED_MAX, Section, bounded
from ehi.data.dataset import Dataset

_WORD = re.compile(r"^[a-z]{4,12}$")


@dataclass(frozen=True)
class SyntheticConfig(Section):
    """``dataset.synthetic``: the generator's knobs, a section nested in ``dataset``."""

    section = "synthetic dataset"

    n_docs: int = bounded(3000, minimum=10)
    n_queries: int = bounded(800, minimum=3)
    split_fractions: tuple[float, float, float] = bounded((0.6, 0.2, 0.2), minimum=0)  # train, dev, test
    n_topics: int = bounded(8, minimum=1)
    n_subtopics: int = bounded(8, minimum=1)
    key_pool: int = bounded(40, minimum=8)  # key words per subtopic; smaller = more overlap = harder
    group_sizes: tuple[float, float, float] = bounded((0.6, 0.25, 0.15), minimum=0)  # P(1, 2, 3 relevant docs)
    core_keys: int = bounded(4, minimum=1)  # key words shared by a group's documents
    own_keys: int = bounded(3, minimum=0)  # key words of each document alone
    query_keys: int = bounded(3, minimum=1)  # core keys a query names; fewer = harder
    noise_words: int = bounded(10, minimum=0)  # general words per document
    query_noise: int = bounded(2, minimum=0)  # general words per query
    seed: int = bounded(13, minimum=0, maximum=SEED_MAX)

    @classmethod
    def from_dict(cls, values: dict | None) -> "SyntheticConfig":
        # YAML has no tuples: the fractions arrive as lists, and a frozen config keeps them hashable
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in (values or {}).items()}
        return super().from_dict(values)


def vocabulary_words() -> list[str]:
    """Whole lowercase words of 4-12 letters from the MiniLM (BERT uncased) vocabulary, in file order."""
    from ehi.core.pretrained import minilm_path

    vocab = (minilm_path() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    return [w for w in vocab if _WORD.match(w)]


def _take(pool: np.ndarray, start: int, n: int) -> tuple[np.ndarray, int]:
    if start + n > len(pool):
        raise ValueError(f"synthetic config needs more than the {len(pool)} vocabulary words available")
    return pool[start : start + n], start + n


def generate(cfg: SyntheticConfig = SyntheticConfig(), words: list[str] | None = None) -> Dataset:
    """Generate the dataset described in the module docstring (deterministic in ``cfg.seed``)."""
    rng = np.random.default_rng(cfg.seed)
    pool = np.array(words if words is not None else vocabulary_words())
    pool = pool[rng.permutation(len(pool))]
    n_sub = cfg.n_topics * cfg.n_subtopics
    noise, at = _take(pool, 0, 400)
    topic_words, at = _take(pool, at, cfg.n_topics * 12)
    sub_words, at = _take(pool, at, n_sub * 8)
    key_words, at = _take(pool, at, n_sub * cfg.key_pool)
    topic_words = topic_words.reshape(cfg.n_topics, 12)
    sub_words = sub_words.reshape(n_sub, 8)
    key_words = key_words.reshape(n_sub, cfg.key_pool)

    groups = _make_groups(cfg, rng, n_sub)
    docs = []
    for g, (sub, size) in enumerate(groups):
        core = rng.choice(cfg.key_pool, cfg.core_keys, replace=False)
        for _ in range(size):
            docs.append(_document(cfg, rng, len(docs), g, sub, core, topic_words, sub_words, key_words, noise))
    corpus = pd.DataFrame(docs, columns=["doc_id", "title", "text", "group", "core"])

    chosen = rng.choice(len(groups), min(cfg.n_queries, len(groups)), replace=False)
    queries, qrels = [], []
    for i, g in enumerate(sorted(chosen)):
        members = corpus[corpus.group == g]
        sub = groups[g][0]
        core = members.core.iloc[0]
        keys = key_words[sub, rng.choice(core, cfg.query_keys, replace=False)]
        parts = [*keys, rng.choice(sub_words[sub]), *rng.choice(noise, cfg.query_noise)]
        queries.append((f"q{i}", " ".join(rng.permutation(parts))))
        qrels.extend((f"q{i}", d, 1) for d in members.doc_id)
    queries = pd.DataFrame(queries, columns=["query_id", "text"])
    queries["split"] = _splits(cfg, rng, len(queries))
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    qrels = qrels.merge(queries[["query_id", "split"]], on="query_id")
    return Dataset("synthetic", corpus[["doc_id", "title", "text"]], queries, qrels)


def _make_groups(cfg: SyntheticConfig, rng: np.random.Generator, n_sub: int) -> list[tuple[int, int]]:
    """(subtopic, size) for each group of documents, until ``n_docs`` documents are placed."""
    groups, placed = [], 0
    while placed < cfg.n_docs:
        size = min(int(rng.choice([1, 2, 3], p=cfg.group_sizes)), cfg.n_docs - placed)
        groups.append((int(rng.integers(n_sub)), size))
        placed += size
    return groups


def _document(cfg, rng, i, group, sub, core, topic_words, sub_words, key_words, noise):
    own = rng.choice(np.setdiff1d(np.arange(cfg.key_pool), core), cfg.own_keys, replace=False)
    topic = sub // cfg.n_subtopics
    keys = key_words[sub, np.concatenate([core, own])]
    body = [
        *keys,
        *rng.choice(sub_words[sub], 3, replace=False),
        *rng.choice(topic_words[topic], 3, replace=False),
        *rng.choice(noise, cfg.noise_words),
    ]
    title = " ".join([sub_words[sub][0], *rng.choice(keys, 2, replace=False)])
    return f"d{i}", title, " ".join(rng.permutation(body)), group, core


def _splits(cfg: SyntheticConfig, rng: np.random.Generator, n: int) -> np.ndarray:
    fractions = np.asarray(cfg.split_fractions, dtype=float)
    counts = np.floor(fractions / fractions.sum() * n).astype(int)
    counts[0] += n - counts.sum()
    labels = np.repeat(np.array(["train", "dev", "test"]), counts)
    return labels[rng.permutation(n)]
