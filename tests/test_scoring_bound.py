"""Metrics that all stop at a cutoff are scored from the rows at or above each query's bound.

The bound is the cutoff-th largest score of the query; the same metric scored beside one
that reads the whole ranking (``ap``, which keeps every row) must give the very same values,
with ties, with queries shorter than the cutoff, and with the kept ranking.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalvalidity.io.scoring import decode_ranking, score_run


def _tables(seed: int, n_queries: int = 60, distinct_scores: int = 4):
    rng = np.random.default_rng(seed)
    qid, docid, score, rank = [], [], [], []
    qrels_q, qrels_d, qrels_r = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(1, 40))  # some queries rank fewer items than the cutoff
        docs = rng.permutation(60)[:n]
        values = rng.integers(0, distinct_scores, n).astype(float)  # many ties
        for position, (d, s) in enumerate(zip(docs, values, strict=True)):
            qid.append(f"q{q}")
            docid.append(f"d{d}")
            score.append(s)
            rank.append(position + 1)
        for d in rng.permutation(60)[: int(rng.integers(1, 6))]:
            qrels_q.append(f"q{q}")
            qrels_d.append(f"d{d}")
            qrels_r.append(int(rng.integers(0, 3)))
    run = pa.table({"qid": qid, "docid": docid, "score": score, "rank": rank})
    qrels = pa.table({"qid": qrels_q, "docid": qrels_d, "rel": qrels_r})
    return run, qrels


@pytest.mark.parametrize("ties", ["trec_eval", "average"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bounded_metrics_match_the_whole_ranking(ties, seed):
    run, qrels = _tables(seed)
    metrics = ["rr@10", "ndcg@5", "p@3", "ap@10", "r@7", "hit@2"]
    bounded = score_run(run, qrels, metrics, ties=ties)
    whole = score_run(run, qrels, [*metrics, "ap"], ties=ties)
    for name in metrics:
        np.testing.assert_array_equal(bounded.values[name], whole.values[name])
        assert bounded.means[name] == whole.means[name]
    assert bounded.qids.tolist() == whole.qids.tolist()


@pytest.mark.parametrize("depth", [3, 10, 25])
def test_the_kept_ranking_is_the_same_with_the_bound(depth):
    run, qrels = _tables(4, distinct_scores=6)
    bounded = score_run(run, qrels, "rr@10", keep_ranking=True, ranking_depth=depth)
    whole = score_run(run, qrels, ["rr@10", "ap"], keep_ranking=True, ranking_depth=depth)
    assert bounded.ranking is not None and whole.ranking is not None
    order = [("qid", "ascending"), ("position", "ascending")]  # the kept rows come unordered
    kept, want = decode_ranking(bounded.ranking), decode_ranking(whole.ranking)
    assert kept.sort_by(order).equals(want.sort_by(order))
    np.testing.assert_array_equal(bounded.values["rr@10"], whole.values["rr@10"])


def test_a_nan_score_is_still_refused():
    run, qrels = _tables(5)
    scores = run.column("score").to_pylist()
    scores[7] = float("nan")
    run = run.set_column(2, "score", pa.array(scores))
    with pytest.raises(Exception, match="no usable score"):
        score_run(run, qrels, "rr@10")


@pytest.mark.parametrize("depth", [1, 3, 10, 25])
@pytest.mark.parametrize("seed", [6, 7])
def test_the_bars_found_in_numpy_are_duckdbs(depth, seed):
    # a run whose rows come query by query: each query's count and depth-th largest score
    # (null under depth rows), and the rows at or above it, as DuckDB's two passes find them
    import duckdb

    from evalvalidity.io import scoring

    run, _ = _tables(seed, n_queries=80, distinct_scores=3)
    scores = run.column("score").to_pylist()
    scores[0] = scores[5] = float("-inf")  # an infinite score is a score
    run = run.set_column(2, "score", pa.array(scores))
    bars = scoring._query_bars(run, depth)
    assert bars is not None
    con = duckdb.connect()
    con.register("run", run)
    want = con.sql(
        f"SELECT qid, count(*) AS n, {scoring._bar_sql(depth)} AS bar FROM run GROUP BY qid"
    ).to_arrow_table()
    key = [("qid", "ascending")]
    assert bars.counts.sort_by(key).equals(want.sort_by(key))
    con.register("b", want)
    near = con.sql(
        "SELECT r.qid, r.docid, r.score, r.rank FROM run r LEFT JOIN b USING (qid)"
        " WHERE b.bar IS NULL OR r.score >= b.bar"
    ).to_arrow_table()
    rows = [("qid", "ascending"), ("docid", "ascending")]
    assert bars.near(run).sort_by(rows).equals(near.sort_by(rows))


def test_a_run_whose_queries_are_apart_is_bounded_by_duckdb_to_the_same_scores(monkeypatch):
    from evalvalidity.io import scoring

    run, qrels = _tables(8, distinct_scores=5)
    apart = run.take(pa.array(np.random.default_rng(0).permutation(run.num_rows)))
    assert scoring._query_bars(run, 10) is not None
    assert scoring._query_bars(apart, 10) is None  # its rows interleave
    found = []
    original = scoring._query_bars
    monkeypatch.setattr(scoring, "_query_bars", lambda *a: found.append(original(*a)) or found[-1])
    together = score_run(run, qrels, "rr@10", keep_ranking=True, ranking_depth=10)
    interleaved = score_run(apart, qrels, "rr@10", keep_ranking=True, ranking_depth=10)
    assert found[0] is not None and found[1] is None  # numpy, then DuckDB
    np.testing.assert_array_equal(together.values["rr@10"], interleaved.values["rr@10"])
    order = [("qid", "ascending"), ("position", "ascending")]
    kept = decode_ranking(together.ranking).sort_by(order)
    assert kept.equals(decode_ranking(interleaved.ranking).sort_by(order))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.text(alphabet="ab\x00é", max_size=3), unique=True, max_size=8), max_size=4)
)
def test_the_kept_rankings_document_codes_are_each_ids_place_among_the_sorted_distinct_ids(
    parts,
):
    # each batch's dictionary holds distinct ids; together they may repeat
    from evalvalidity.io import scoring

    arrays = [pa.array(part, pa.string()) for part in parts]
    vocabulary, codes = scoring._sorted_codes(arrays)
    distinct = sorted({s.encode() for part in parts for s in part})
    assert [s.encode() for s in vocabulary.to_pylist()] == distinct
    flat = [s for part in parts for s in part]
    assert codes.dtype == np.int32
    assert [distinct[c] for c in codes.tolist()] == [s.encode() for s in flat]
