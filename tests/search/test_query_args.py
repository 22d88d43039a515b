"""One search surface: the index ``ehi.fit_tree`` returns and the one ``ehi.load_index`` opens
refuse the same bad query rows, k and beam with the same one line (ehi.search.query_args)."""

import numpy as np
import pytest

import ehi
from ehi.core.errors import SearchIndexError

DIM, N_DOCS = 8, 200


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory):
    """(the index fit_tree returns, the same index saved and opened by load_index, a good query)."""
    rng = np.random.default_rng(0)
    fitted = ehi.fit_tree(rng.normal(size=(N_DOCS, DIM)).astype(np.float32), height=1, branching=4, init="kmeans")
    loaded = ehi.load_index(fitted.save(tmp_path_factory.mktemp("tree") / "index"))
    searches = {"fit_tree": fitted.search, "load_index": loaded.search_arrays}
    return searches, rng.normal(size=(3, DIM)).astype(np.float32)


def _refusals(searches, queries, beam, k) -> set[str]:
    said = set()
    for search in searches.values():
        with pytest.raises(SearchIndexError) as err:
            search(queries, beam=beam, k=k)
        said.add(str(err.value))
    return said


@pytest.mark.parametrize("row, says", [
    (np.nan, "query vector row 1 holds NaN or infinite values: nothing to rank by"),
    (np.inf, "query vector row 1 holds NaN or infinite values: nothing to rank by"),
    (0.0, "query vector row 1 is all zeros: nothing to rank by"),
    (3e38, "query vector row 1 has norm 8.49e+38, above 1.84e+19: its scores would overflow float32"),
])
def test_both_surfaces_refuse_a_row_they_cannot_rank_in_the_same_line(surfaces, row, says):
    searches, good = surfaces
    queries = good.copy()
    queries[1] = row
    said = _refusals(searches, queries, beam=2, k=3)
    assert len(said) == 1 and says in said.pop()


@pytest.mark.parametrize("queries, says", [
    (np.ones((2, DIM), dtype=np.int64), f"query vectors must be a float (n, {DIM}) array, got int64 (2, {DIM})"),
    (np.ones((2, DIM - 1), dtype=np.float32), f"query vectors must be a float (n, {DIM}) array, got float32 (2, {DIM - 1})"),
    (np.ones(DIM, dtype=np.float32), f"query vectors must be a float (n, {DIM}) array, got float32 ({DIM},)"),
])
def test_both_surfaces_refuse_integer_rows_and_a_wrong_shape_in_the_same_line(surfaces, queries, says):
    assert _refusals(surfaces[0], queries, beam=2, k=3) == {says}


@pytest.mark.parametrize("beam, k, says", [
    (2.5, 3, "beam must be an integer, got 2.5"), (True, 3, "beam must be an integer, got True"),
    (0, 3, "beam must be between 1 and the number of leaves (4), got 0"),
    (2, 0, "k must be at least 1, got 0"), (2, -1, "k must be at least 1, got -1"),
    (2, 2.5, "k must be an integer, got 2.5"), (2, True, "k must be an integer, got True"),
])
def test_both_surfaces_refuse_a_beam_or_k_that_is_no_integer_in_range(surfaces, beam, k, says):
    searches, good = surfaces
    assert _refusals(searches, good, beam=beam, k=k) == {says}


def test_both_surfaces_cap_a_huge_k_at_the_corpus_size_with_a_warning(surfaces):
    searches, good = surfaces
    for search in searches.values():
        with pytest.warns(UserWarning, match=f"k 1000000000 is above the {N_DOCS} documents of the index: capped at {N_DOCS}"):
            rows, scores, _ = search(good, beam=4, k=10**9)
        assert rows.shape == scores.shape == (3, N_DOCS)  # every document, once, at the full beam
        assert (np.sort(rows, axis=1) == np.arange(N_DOCS)).all()


def test_both_surfaces_rank_float64_queries_as_their_float32_values(surfaces):
    searches, good = surfaces
    for search in searches.values():
        assert (search(good.astype(np.float64), beam=2, k=5)[0] == search(good, beam=2, k=5)[0]).all()
