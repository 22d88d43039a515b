"""`ehi export-faiss` and ehi.export_faiss: the file FAISS users load returns what `ehi search` returns."""

import json

import faiss
import numpy as np
import pandas as pd
import pytest
import torch

import ehi
from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer
from ehi.search.tree_index import EHIIndex
from ehi.serve.api import SearchIndexError, load_index, save_search_index
from ehi.serve.cli import main

QUERIES = ["river castle", "violin engine harbor", "garden forest", "mountain"]


@pytest.fixture(scope="module")
def search_dir(tmp_path_factory):
    rng = np.random.default_rng(0)
    words = ["river", "mountain", "castle", "garden", "engine", "violin", "harbor", "forest"]
    corpus = pd.DataFrame({"doc_id": [f"d{i:02d}" for i in range(60)], "title": [f"T{i}" for i in range(60)],
                           "text": [" ".join(rng.choice(words, 3, replace=False)) for _ in range(60)]})
    encoder = load_encoder("tiny-random", max_length=16, device="cpu")
    emb = encoder.encode((corpus.title + " " + corpus.text).tolist(), batch_size=16)
    torch.manual_seed(0)
    index = EHIIndex.build(emb, TreeIndexer(encoder.dim, height=1, branching=6).standardize_(emb))
    return save_search_index(tmp_path_factory.mktemp("idx") / "search", index, encoder, corpus, {"height": 1})


def test_cli_export_is_read_by_faiss_and_matches_ehi_search(search_dir, tmp_path, capsys):
    out = tmp_path / "ehi.faiss"
    assert main(["export-faiss", "--index", str(search_dir), "--out", str(out)]) == 0
    assert "IndexIVFFlat" in capsys.readouterr().out
    index, meta = faiss.read_index(str(out)), json.loads((tmp_path / "ehi.faiss.json").read_text())
    served = load_index(search_dir, device="cpu")
    q = served.encoder.encode(QUERIES, batch_size=4)
    for beam in (1, 3, 6):
        faiss.extract_index_ivf(index).nprobe = beam
        scores, rows = index.search(q, 5)  # the query embeddings as the encoder gives them
        hits = served.search(QUERIES, beam=beam, k=5)
        for q_rows, q_hits in zip(rows, hits):
            assert [meta["doc_ids"][r] for r in q_rows if r >= 0] == [h.doc_id for h in q_hits]


def test_api_export_with_pq_and_a_bad_source(search_dir, tmp_path, capsys):
    exported = ehi.export_faiss(search_dir, tmp_path / "pq.faiss", pq_m=8, rerank=60)
    assert exported.meta["pq"] == {"m": 8, "sub_quantizers": 9, "nbits": 4}
    written = faiss.read_index(str(tmp_path / "pq.faiss"))  # the query pre-transform over the re-ranking index
    assert isinstance(written, faiss.IndexPreTransform) and isinstance(faiss.downcast_index(written.index),
                                                                        faiss.IndexRefine)
    with pytest.raises(SystemExit, match=f"export-faiss: error: {tmp_path}: neither a search index"):
        main(["export-faiss", "--index", str(tmp_path), "--out", str(tmp_path / "x.faiss")])
    with pytest.raises(SystemExit, match="M must divide the embedding dimension"):
        main(["export-faiss", "--index", str(search_dir), "--out", str(tmp_path / "x.faiss"), "--pq", "7"])


def test_a_bare_index_directory_exports_real_ids_or_is_refused(search_dir, tmp_path, capsys):
    """An EHI index directory (what an ablation variant has) holds no document ids: the export takes
    them from the prepared corpus, writes row numbers only when asked, and otherwise refuses."""
    bare = search_dir / "index"  # the EHIIndex inside the search index: index.json, no docs.parquet
    assert (bare / "index.json").exists()
    corpus = tmp_path / "corpus.parquet"
    pd.read_parquet(search_dir / "docs.parquet").to_parquet(corpus)
    with pytest.raises(SystemExit, match="holds no document ids.*--doc-ids") as refused:
        main(["export-faiss", "--index", str(bare), "--out", str(tmp_path / "none.faiss")])
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "none.faiss").exists()
    assert main(["export-faiss", "--index", str(bare), "--out", str(tmp_path / "ids.faiss"), "--doc-ids", str(corpus)]) == 0
    ids = json.loads((tmp_path / "ids.faiss.json").read_text())["doc_ids"]
    assert ids == pd.read_parquet(corpus).doc_id.tolist()
    assert main(["export-faiss", "--index", str(bare), "--out", str(tmp_path / "rows.faiss"), "--row-ids"]) == 0
    assert json.loads((tmp_path / "rows.faiss.json").read_text())["doc_ids"][:2] == ["0", "1"]
    with pytest.raises(SearchIndexError, match="holds no document ids") as refused:  # from Python: its arguments
        ehi.export_faiss(bare, tmp_path / "none.faiss")
    assert "row_ids=True" in str(refused.value) and "doc_ids=" in str(refused.value) and "--" not in str(refused.value)
    with pytest.raises(SystemExit, match="not a prepared corpus"):
        main(["export-faiss", "--index", str(bare), "--out", str(tmp_path / "short.faiss"), "--doc-ids", str(tmp_path / "nope.parquet")])


def test_the_export_opens_at_the_beam_the_index_chose_on_dev(search_dir, tmp_path, capsys):
    """A search index records the beam that meets its dev budget; FAISS's file opens at it, and its
    sidecar says it as a number (and in words apart)."""
    from ehi.search.budget_beam import dev_beam

    served = load_index(search_dir, device="cpu")
    queries = pd.DataFrame({"query_id": [f"q{i}" for i in range(8)], "split": ["dev"] * 6 + ["test"] * 2})
    q_emb = served.encoder.encode(QUERIES * 2, batch_size=4)
    chosen = dev_beam(served.index, queries, q_emb, {"dev_budget": 0.5})
    sizes = served.index.leaf_sizes
    for beam in (chosen["beam"], chosen["beam"] + 1):  # the largest beam within the budget on those queries
        leaves = served.index.indexer.beam_search(torch.from_numpy(q_emb[:6]), beam)[0].numpy()
        within = sizes[leaves].sum(1).mean() / served.index.n_docs <= 0.5
        assert within == (beam == chosen["beam"])
    assert chosen["beam"] > 1 and chosen["queries"] == 6
    recorded = save_search_index(tmp_path / "chosen", served.index, search_dir / "encoder",
                                 pd.read_parquet(search_dir / "docs.parquet").assign(text=""), {"height": 1},
                                 beam=chosen)
    out = tmp_path / "chosen.faiss"
    assert main(["export-faiss", "--index", str(recorded), "--out", str(out)]) == 0
    assert f"nprobe {chosen['beam']})" in capsys.readouterr().out
    meta = json.loads((tmp_path / "chosen.faiss.json").read_text())
    assert faiss.extract_index_ivf(faiss.read_index(str(out))).nprobe == meta["nprobe"] == chosen["beam"]
    assert "dev budget of 50%" in meta["nprobe_source"]
    # an index that records no beam opens at `ehi search`'s default; one asked for is taken as asked
    assert main(["export-faiss", "--index", str(search_dir), "--out", str(tmp_path / "d.faiss")]) == 0
    assert faiss.extract_index_ivf(faiss.read_index(str(tmp_path / "d.faiss"))).nprobe == served.check_beam(None)
    assert main(["export-faiss", "--index", str(search_dir), "--out", str(tmp_path / "b.faiss"), "--beam", "5"]) == 0
    assert json.loads((tmp_path / "b.faiss.json").read_text())["nprobe"] == 5
