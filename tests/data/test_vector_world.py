import numpy as np
import pytest

from ehi.data.embeddings import load_arrays, load_embeddings
from ehi.data.vector_world import WorldConfig, generate_world

SMALL = dict(n_docs=600, dim=16, n_topics=4, subtopics_per_topic=3, n_train=50, n_dev=10, n_test=40)


def _world(tmp_path, name="w", **knobs):
    generate_world(tmp_path / name, WorldConfig(**{**SMALL, **knobs}))
    return tmp_path / name


def test_same_seed_same_bytes_other_seed_other_world(tmp_path):
    a, b, c = _world(tmp_path, "a"), _world(tmp_path, "b"), _world(tmp_path, "c", seed=1)
    for name in ("docs.npy", "queries.npy", "qrels/test.tsv"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert (a / "docs.npy").read_bytes() != (c / "docs.npy").read_bytes()


def test_the_corpus_does_not_depend_on_the_queries_asked(tmp_path):
    a, b = _world(tmp_path, "a"), _world(tmp_path, "b", n_train=500, asymmetry=2.0)
    assert (a / "docs.npy").read_bytes() == (b / "docs.npy").read_bytes()
    assert (a / "queries.npy").read_bytes() != (b / "queries.npy").read_bytes()


def test_a_valid_layout_with_several_relevant_documents_a_query(tmp_path):
    ds = load_embeddings(_world(tmp_path, mean_relevant=4.0))
    docs, queries = load_arrays(tmp_path / "w")
    assert docs.shape == (600, 16) and queries.shape == (100, 16)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    assert ds.queries.split.value_counts().to_dict() == {"train": 50, "test": 40, "dev": 10}
    assert ds.qrels.groupby("query_id").size().mean() > 2


def test_a_query_is_nearer_its_relevant_documents_than_the_rest(tmp_path):
    # exact search from the query ranks its facet's documents above a random document's rank
    ds = load_embeddings(_world(tmp_path))
    docs, queries = load_arrays(tmp_path / "w")
    row = {d: i for i, d in enumerate(ds.corpus.doc_id)}
    qrow = {q: i for i, q in enumerate(ds.queries.query_id)}
    ranks = []
    for q, d in zip(ds.qrels.query_id, ds.qrels.doc_id):
        scores = docs @ queries[int(ds.queries.text[qrow[q]][2:])]
        ranks.append(int((scores > scores[row[d]]).sum()))
    assert np.median(ranks) < len(docs) / 20


def test_asymmetry_moves_queries_off_their_documents(tmp_path):
    def mean_relevant_cosine(path):
        ds = load_embeddings(path)
        docs, queries = load_arrays(path)
        row = dict(zip(ds.corpus.doc_id, range(len(docs))))
        qrow = dict(zip(ds.queries.query_id, ds.queries.text.str[2:].astype(int)))
        return float(np.mean([queries[qrow[q]] @ docs[row[d]] for q, d in zip(ds.qrels.query_id, ds.qrels.doc_id)]))

    assert mean_relevant_cosine(_world(tmp_path, "on", asymmetry=2.0)) < mean_relevant_cosine(_world(tmp_path, "off"))


def test_unknown_knob_is_one_line():
    with pytest.raises(Exception, match="unknown vector world key"):
        WorldConfig.from_dict({"n_doc": 5})


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_failing_regeneration_leaves_the_previous_world_as_it_was(tmp_path, monkeypatch):
    import ehi.data.vector_world as vector_world

    before = _files(_world(tmp_path))
    calls = []

    def fail_on_the_second_block(*args):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("killed")
        return unit(*args)

    unit = vector_world._unit
    monkeypatch.setattr(vector_world, "BLOCK_FACETS", 16)  # several blocks in a tiny world
    monkeypatch.setattr(vector_world, "_unit", fail_on_the_second_block)
    with pytest.raises(RuntimeError, match="killed"):
        generate_world(tmp_path / "w", WorldConfig(**{**SMALL, "seed": 1}))
    assert _files(tmp_path / "w") == before
    assert [p.name for p in tmp_path.iterdir()] == ["w"]  # nothing left beside it


@pytest.mark.slow  # a kill loop
def test_a_world_killed_at_a_random_moment_is_the_old_one_or_the_new_one_whole(tmp_path):
    # kill -9 the command-line generator while it regenerates a world with another seed
    import os
    import signal
    import subprocess
    import sys
    import time

    knobs = ["n_docs=400000", "dim=48", "n_train=200", "n_dev=0", "n_test=200"]
    command = [sys.executable, "-m", "ehi.data.vector_world", str(tmp_path / "w"), *(f"--set={k}" for k in knobs)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(command, check=True, capture_output=True, env=env)
    old = _files(tmp_path / "w")
    delay = np.random.default_rng(int(time.time())).uniform(0.2, 3.0)
    job = subprocess.Popen([*command, "--set=seed=1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(delay)
    job.send_signal(signal.SIGKILL)
    job.wait()
    now = _files(tmp_path / "w")
    if now != old:  # it finished before the kill: the new world, whole
        assert '"seed": 1' in now["embeddings.json"].decode() and load_embeddings(tmp_path / "w").qrels.size
    subprocess.run([*command, "--set=seed=1"], check=True, capture_output=True, env=env)
    assert [p.name for p in tmp_path.iterdir()] == ["w"], f"killed after {delay:.2f} s"
    again = tmp_path / "again"
    subprocess.run([*command[:3], str(again), *command[4:], "--set=seed=1"], check=True, capture_output=True, env=env)
    assert {k: v for k, v in _files(tmp_path / "w").items() if k != "embeddings.json"} == \
        {k: v for k, v in _files(again).items() if k != "embeddings.json"}


@pytest.mark.parametrize("knob, value, says", [
    ("n_docs", 0, "n_docs: 0 is below 1"), ("dim", 0, "dim: 0 is below 1"), ("n_docs", 1e6, "not an integer"),
    ("seed", -1, "seed: -1 is below 0"), ("doc_noise", float("nan"), "doc_noise"), ("asymmetry", -1.0, "asymmetry"),
    ("mean_relevant", 0.5, "mean_relevant"), ("dtype", "int8", "dtype"), ("n_docs", 10 ** 13, "of memory"),
    ("asymmetry", 1e308, "is above 1e"),  # every query was written as the zero vector
    ("mean_relevant", 10 ** 6, "above n_docs"),  # one facet: every document relevant to every query
    ("dim", 1, "dim: 1 gives 2 distinct vectors at most"),  # a unit vector in one dimension is +1 or -1
])
def test_a_knob_out_of_range_is_refused_in_one_line_before_anything_is_written(tmp_path, knob, value, says):
    from ehi.core.errors import ConfigError

    with pytest.raises(ConfigError, match=says):
        generate_world(tmp_path / "w", WorldConfig(**{**SMALL, knob: value}))
    assert not (tmp_path / "w").exists()


def test_all_zero_parts_are_refused():
    from ehi.core.errors import ConfigError
    from ehi.data.world_checks import PARTS, check_world

    with pytest.raises(ConfigError, match="zero vector"):
        check_world(WorldConfig(**{**SMALL, **dict.fromkeys(PARTS, 0.0)}))


def test_only_the_mean_direction_is_refused():
    from ehi.core.errors import ConfigError
    from ehi.data.world_checks import PARTS, check_world

    with pytest.raises(ConfigError, match="shared mean direction"):
        check_world(WorldConfig(**{**SMALL, **dict.fromkeys(PARTS[1:], 0.0)}))


@pytest.mark.parametrize("decay, dtype", [("1000", "float32"), ("30.0", "float32"), ("12.0", "float16")])
def test_a_spectrum_too_steep_for_the_dtype_is_refused_before_the_world_is_written(tmp_path, decay, dtype):
    # the map keeps one direction the dtype resolves: every document +u or -u, 2 distinct vectors
    from ehi.data.vector_world import main

    knobs = [f"--set={key}={value}" for key, value in SMALL.items()]
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "w"), *knobs, f"--set=spectrum_decay={decay}", f"--set=dtype={dtype}"])
    said = str(exit_.value)
    assert "spectrum_decay" in said and "distinct vectors where 600 were drawn" in said and "\n" not in said
    assert not (tmp_path / "w").exists()


def test_a_steep_spectrum_the_dtype_still_resolves_is_generated(tmp_path):
    docs, _ = load_arrays(_world(tmp_path, spectrum_decay=4))  # an int decay as `--set` gives it
    assert len(np.unique(np.asarray(docs), axis=0)) == 600


@pytest.mark.parametrize("pair, says", [("n_doc=5", "KEY one of"), ("dim", "KEY=VALUE"), ("dim=abc", "not a JSON value"),
                                        ("dim=0", "dim: 0 is below 1")])
def test_the_command_line_refuses_a_bad_set_in_one_line(tmp_path, capsys, pair, says):
    from ehi.data.vector_world import main

    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "w"), "--set", pair])
    assert says in str(exit_.value) and "\n" not in str(exit_.value)
