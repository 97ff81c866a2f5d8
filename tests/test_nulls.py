"""Tests of evalvalidity.core.nulls: brute force over every reassignment and every tie order."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from brute import brute_metric

from evalvalidity.core.floors import noise_floor
from evalvalidity.core.metrics import parse_metric
from evalvalidity.core.nulls import (
    _derangement_probabilities,
    hub_documents,
    popularity_ranker,
    query_shuffle_null,
)
from evalvalidity.errors import ParameterError

METRICS = [
    parse_metric(s)
    for s in (
        "rr",
        "rr@2",
        "rr@3[rel>=2]",
        "hit@1",
        "hit@3",
        "p@2",
        "p@4[rel>=2]",
        "r@2",
        "r@5",
        "rprec",
        "rprec[rel>=2]",
        "ap",
        "ap@2",
        "ap[rel>=2]",
        "ndcg",
        "ndcg@2",
        "ndcg_exp",
        "ndcg_exp@3",
    )
]


def random_benchmark(rng: np.random.Generator, n_queries: int, n_docs: int, hubs: int = 0):
    """A small benchmark: shuffled contiguous rankings and graded judgements with zeros."""
    run_q, run_d, run_p = [], [], []
    for q in range(n_queries):
        length = int(rng.integers(0, n_docs + 1))
        docs = rng.choice(n_docs, size=length, replace=False)
        run_q += [q] * length
        run_d += docs.tolist()
        run_p += (np.arange(length) + 1).tolist()
    order = rng.permutation(len(run_q))
    run = tuple(np.asarray(a, np.int64)[order] for a in (run_q, run_d, run_p))
    gold_q, gold_d, gold_g = [], [], []
    for q in range(n_queries):
        size = int(rng.integers(0, 4))
        docs = rng.choice(n_docs, size=size, replace=False).tolist()
        docs += [d for d in range(hubs) if rng.random() < 0.8 and d not in docs]
        gold_q += [q] * len(docs)
        gold_d += docs
        gold_g += rng.integers(0, 4, size=len(docs)).tolist()
    gold = tuple(np.asarray(a, np.int64) for a in (gold_q, gold_d, gold_g))
    return run, gold


def brute_matrix(metric, run, gold, n_queries):
    """v[i, j]: ranking i scored against the judgements of j, in plain Python."""
    rankings = {q: [] for q in range(n_queries)}
    for q, d, _p in sorted(zip(*run, strict=True), key=lambda row: (row[0], row[2])):
        rankings[int(q)].append(int(d))
    grades = {q: {} for q in range(n_queries)}
    for q, d, g in zip(*gold, strict=True):
        grades[int(q)][int(d)] = int(g)
    v = np.zeros((n_queries, n_queries))
    for i in range(n_queries):
        for j in range(n_queries):
            ranking = [max(grades[j].get(d, 0), 0) for d in rankings[i]]
            v[i, j] = brute_metric(metric, ranking, list(grades[j].values()))
    return v


def derangements(n):
    return [p for p in itertools.permutations(range(n)) if all(p[i] != i for i in range(n))]


@pytest.mark.parametrize("metric", METRICS, ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_shuffle_equals_brute_force(metric, seed):
    rng = np.random.default_rng(seed)
    n_queries = 2 + seed * 2  # 2, 4, 6
    run, gold = random_benchmark(rng, n_queries, n_docs=6, hubs=2)
    null = query_shuffle_null(*run, *gold, metric=metric, n_queries=n_queries)
    v = brute_matrix(metric, run, gold, n_queries)
    off = ~np.eye(n_queries, dtype=bool)
    others = v[off].reshape(n_queries, n_queries - 1)
    np.testing.assert_allclose(null.expected, others.mean(axis=1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(null.variance, others.var(axis=1), rtol=1e-9, atol=1e-14)
    scores = [np.mean([v[i, s[i]] for i in range(n_queries)]) for s in derangements(n_queries)]
    assert null.mean == pytest.approx(np.mean(scores), rel=1e-12, abs=1e-15)
    assert null.variance_of_mean == pytest.approx(np.var(scores), rel=1e-9, abs=1e-14)
    assert null.variance_of_mean_independent == pytest.approx(
        others.var(axis=1).sum() / n_queries**2, rel=1e-12, abs=1e-15
    )
    assert null.n_pairs_hit <= int(np.count_nonzero(off)) and null.n_pairs_hit >= int(
        np.count_nonzero(v[off])
    )


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_derangement_probabilities_count_exactly(n):
    perms = derangements(n)
    p1, pa, pb, pd = _derangement_probabilities(n)
    assert p1 == pytest.approx(sum(p[0] == 1 for p in perms) / len(perms), rel=1e-13)
    assert pa == pytest.approx(sum(p[0] == 1 and p[1] == 0 for p in perms) / len(perms))
    if n >= 3:
        assert pb == pytest.approx(sum(p[0] == 1 and p[1] == 2 for p in perms) / len(perms))
    if n >= 4:
        assert pd == pytest.approx(sum(p[0] == 2 and p[1] == 3 for p in perms) / len(perms))


@pytest.mark.parametrize("metric", ["rr@10", "ap", "ndcg@5", "r@3"])
def test_shuffle_blocks_do_not_change_the_result(metric):
    rng = np.random.default_rng(11)
    run, gold = random_benchmark(rng, 23, n_docs=8, hubs=3)
    whole = query_shuffle_null(*run, *gold, metric=metric, n_queries=23)
    tiled = query_shuffle_null(*run, *gold, metric=metric, n_queries=23, block_hits=3)
    np.testing.assert_allclose(tiled.expected, whole.expected, rtol=1e-13)
    np.testing.assert_allclose(tiled.variance, whole.variance, rtol=1e-10, atol=1e-16)
    assert tiled.variance_of_mean == pytest.approx(whole.variance_of_mean, rel=1e-10)
    assert tiled.n_pairs_hit == whole.n_pairs_hit
    # A large benchmark's variance stays accurate: compare with the dense formula's terms.
    v = brute_matrix(parse_metric(metric), run, gold, 23)
    assert whole.mean == pytest.approx(v[~np.eye(23, dtype=bool)].mean(), rel=1e-12)


def test_shuffle_with_positions_gaps_and_candidate_pools():
    # Query 0 ranks documents 5 and 6 at positions 3 and 7 (chunks removed by dedup before);
    # query 1's gold (5, 8) is half outside query 0's candidates and cannot be hit.
    null = query_shuffle_null(
        [0, 0, 1], [5, 6, 8], [3, 7, 1], [1, 1, 0], [5, 8, 6], [1, 1, 1],
        metric="ap", n_queries=2,
    )  # fmt: skip
    assert null.expected.tolist() == [pytest.approx(1 / 3 / 2), 0.0]


def test_shuffle_messages():
    args = ([0], [1], [1], [0], [1], [1])
    with pytest.raises(ParameterError, match=re.escape(
        "The 'n_queries' parameter of query_shuffle_null must be an int >= 2. Got 1 instead."
    )):  # fmt: skip
        query_shuffle_null(*args, metric="ap", n_queries=1)
    with pytest.raises(ParameterError, match=re.escape(
        "The run of query_shuffle_null ranks document 1 twice for query 0; deduplicate the"
        " rankings to documents first."
    )):  # fmt: skip
        query_shuffle_null([0, 0], [1, 1], [1, 2], [0], [1], [1], metric="ap", n_queries=2)
    with pytest.raises(ParameterError, match=re.escape(
        "Two rows of the run of query_shuffle_null give query 0 position 1; positions must be"
        " distinct within a query."
    )):  # fmt: skip
        query_shuffle_null([0, 0], [1, 2], [1, 1], [0], [1], [1], metric="ap", n_queries=2)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'gold_query' parameter of query_shuffle_null must hold query indices in [0, 2)."
        " Got 2 instead, at row 0."
    )):  # fmt: skip
        query_shuffle_null([0], [1], [1], [2], [1], [1], metric="ap", n_queries=2)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'run_doc' parameter of query_shuffle_null must be a 1-D array of integers."
        " Got shape (1,) and dtype float64 instead."
    )):  # fmt: skip
        query_shuffle_null([0], [1.5], [1], [0], [1], [1], metric="ap", n_queries=2)
    with pytest.raises(ParameterError, match=re.escape(
        "The arrays gold_query, gold_doc, gold_grade of query_shuffle_null must have equal"
        " lengths. Got gold_query=1, gold_doc=2, gold_grade=1 instead."
    )):  # fmt: skip
        query_shuffle_null([0], [1], [1], [0], [1, 2], [1], metric="ap", n_queries=2)
    with pytest.raises(ParameterError, match=re.escape(
        "The judgements of query_shuffle_null judge document 1 twice for query 0; keep one"
        " grade per (query, document)."
    )):  # fmt: skip
        query_shuffle_null([0], [1], [1], [0, 0], [1, 1], [1, 0], metric="ap", n_queries=2)


# --------------------------------------------------------------------------- popularity


def brute_popularity(metric, gold, n_queries, pools):
    """Average, worst and best over every order of the equal-count groups, in plain Python.

    Each distinct grade sequence of a group is equally likely (as in brute.distinct_orders).
    """
    gold_of = {q: {} for q in range(n_queries)}
    for q, d, g in zip(*gold, strict=True):
        if g >= 1:
            gold_of[int(q)][int(d)] = int(g)
    count: dict[int, int] = {}
    for q in gold_of:
        for d in gold_of[q]:
            count[d] = count.get(d, 0) + 1
    out = []
    for q in range(n_queries):
        loo = {d: count.get(d, 0) - (d in gold_of[q]) for d in pools[q]}
        levels = sorted(set(loo.values()), reverse=True)
        groups = [[gold_of[q].get(d, 0) for d in pools[q] if loo[d] == v] for v in levels]
        values = [
            brute_metric(metric, [g for part in orders for g in part], list(gold_of[q].values()))
            for orders in itertools.product(*(set(itertools.permutations(g)) for g in groups))
        ]
        out.append((np.mean(values), min(values), max(values)))
    return np.array(out).T


def test_popularity_on_a_hand_computed_toy():
    # Gold: q0 {A}, q1 {A, B}, q2 {A, C}, q3 {B} with A=0, B=1, C=2 and a corpus of 5.
    # Counts c: A 3, B 2, C 1. Leave-one-out ranking of q3: A (3) first, then B (1) and C (1)
    # tied, then D, E (0): its gold B is at position 2 or 3, so RR = (1/2 + 1/3)/2 = 5/12.
    # q0: A drops to 2 and ties with B (2): RR = (1 + 1/2)/2 = 3/4.
    # q1: A 2, then B 1 tied with C 1: first relevant at 1 -> RR = 1.
    # q2: A 2, B 2 tied at the top (A gold): 3/4.
    gold = ([0, 1, 1, 2, 2, 3], [0, 0, 1, 0, 2, 1], [1, 1, 1, 1, 1, 1])
    null = popularity_ranker(*gold, metric="rr", n_queries=4, corpus_size=5)
    np.testing.assert_allclose(null.average, [3 / 4, 1.0, 3 / 4, 5 / 12])
    np.testing.assert_allclose(null.worst, [1 / 2, 1.0, 1 / 2, 1 / 3])
    np.testing.assert_allclose(null.best, [1.0, 1.0, 1.0, 1 / 2])
    assert null.mean == pytest.approx((3 / 4 + 1 + 3 / 4 + 5 / 12) / 4)
    # Through candidate pools: q3's pool without A puts B first (tied with C).
    cands = popularity_ranker(
        *gold, metric="rr", n_queries=4, candidate_query=[3, 3, 3], candidate_doc=[1, 2, 4]
    )
    np.testing.assert_allclose(cands.average, [0, 0, 0, 3 / 4])


@pytest.mark.parametrize("metric", METRICS, ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_popularity_equals_brute_force(metric, seed):
    rng = np.random.default_rng(100 + seed)
    n_queries, n_docs = 5, 6
    _, gold = random_benchmark(rng, n_queries, n_docs=n_docs, hubs=2)
    corpus = popularity_ranker(*gold, metric=metric, n_queries=n_queries, corpus_size=n_docs + 1)
    expected = brute_popularity(metric, gold, n_queries, {q: range(n_docs + 1) for q in range(5)})
    np.testing.assert_allclose(corpus.average, expected[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(corpus.worst, expected[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(corpus.best, expected[2], rtol=1e-12, atol=1e-15)
    pools = {q: sorted(rng.choice(n_docs, size=4, replace=False).tolist()) for q in range(5)}
    cq = [q for q in pools for _ in pools[q]]
    cd = [d for q in pools for d in pools[q]]
    cands = popularity_ranker(
        *gold, metric=metric, n_queries=n_queries, candidate_query=cq, candidate_doc=cd
    )
    expected = brute_popularity(metric, gold, n_queries, pools)
    np.testing.assert_allclose(cands.average, expected[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cands.worst, expected[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cands.best, expected[2], rtol=1e-12, atol=1e-15)


def test_popularity_messages():
    gold = ([0, 1], [3, 4], [1, 1])
    with pytest.raises(ParameterError, match=re.escape(
        "popularity_ranker needs either the candidate pools (candidate_query and candidate_doc)"
        " or corpus_size, not both."
    )):  # fmt: skip
        popularity_ranker(*gold, metric="ap", n_queries=2)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'corpus_size' parameter of popularity_ranker must be at least the 2 gold"
        " documents. Got 1 instead."
    )):  # fmt: skip
        popularity_ranker(*gold, metric="ap", n_queries=2, corpus_size=1)
    with pytest.raises(ParameterError, match=re.escape(
        "The candidates of popularity_ranker list document 3 twice for query 0."
    )):  # fmt: skip
        popularity_ranker(
            *gold, metric="ap", n_queries=2, candidate_query=[0, 0], candidate_doc=[3, 3]
        )


# --------------------------------------------------------------------------- hubs


def hub_benchmark(n_queries=200, corpus=10_000, seed=5):
    """Three hub documents gold for ~80% of queries, plus one own gold document per query."""
    rng = np.random.default_rng(seed)
    gq, gd = [], []
    for q in range(n_queries):
        gq.append(q)
        gd.append(100 + q)
        for hub in range(3):
            if rng.random() < 0.8:
                gq.append(q)
                gd.append(hub)
    # A model that ranks the hubs first and then noise: it does not retrieve the own document.
    rq, rdoc, rp = [], [], []
    for q in range(n_queries):
        docs = [0, 1, 2, *rng.choice(np.arange(1000, corpus), size=7, replace=False).tolist()]
        rq += [q] * 10
        rdoc += docs
        rp += list(range(1, 11))
    return (rq, rdoc, rp), (gq, gd, [1] * len(gq))


def test_hub_benchmark_is_flagged_by_both_nulls():
    run, gold = hub_benchmark()
    n_queries, corpus = 200, 10_000
    hubs = hub_documents(gold[0], gold[1], n_queries, top=3)
    assert sorted(hubs.doc.tolist()) == [0, 1, 2]
    assert np.all(hubs.share > 0.7) and np.all(hubs.share < 0.9)
    g = np.bincount(gold[0], minlength=n_queries)
    floor = noise_floor("rr@10", corpus, g).expected.mean()
    popularity = popularity_ranker(*gold, metric="rr@10", n_queries=n_queries, corpus_size=corpus)
    shuffle = query_shuffle_null(*run, *gold, metric="rr@10", n_queries=n_queries)
    assert floor < 0.002
    assert popularity.mean > 0.9 and popularity.mean_worst > 0.5
    assert shuffle.mean > 0.8
    # Every ranking is the same, so v_ij depends on j alone and a derangement's total is fixed.
    assert shuffle.variance_of_mean < 1e-15
    assert shuffle.mean - floor > 50 * math.sqrt(shuffle.variance_of_mean_independent)


def test_benchmark_without_hubs_stays_near_the_floor():
    rng = np.random.default_rng(3)
    n_queries, corpus = 100, 5000
    gq = np.repeat(np.arange(n_queries), 2)
    gd = rng.choice(corpus, size=2 * n_queries, replace=False)
    popularity = popularity_ranker(
        gq, gd, np.ones_like(gq), metric="rr@10", n_queries=n_queries, corpus_size=corpus
    )
    floor = noise_floor("rr@10", corpus, 2).expected[0]
    # Every document counts 1 except a query's own (0): its gold sits in the bottom group.
    assert popularity.mean < floor
    assert hub_documents(gq, gd, n_queries).share.max() == pytest.approx(0.01)


def test_hub_documents_order_and_messages():
    hubs = hub_documents([0, 1, 1, 2], [5, 5, 3, 3], n_queries=3, gold_grade=[1, 1, 2, 0])
    assert hubs.doc.tolist() == [5, 3] and hubs.count.tolist() == [2, 1]
    with pytest.raises(ParameterError, match=re.escape(
        "The 'top' parameter of hub_documents must be an int >= 1. Got 0 instead."
    )):  # fmt: skip
        hub_documents([0], [1], n_queries=1, top=0)


# --------------------------------------------------------------------------- the kept ranking


def _tied_run(rng: np.random.Generator, n_queries: int, n_docs: int = 120):
    """A run with many tied scores (few distinct values) and its ranks, over n_docs ids."""
    import pyarrow as pa

    rows = []
    for q in range(n_queries):
        n = int(rng.integers(1, 50))
        docs = rng.choice(n_docs, n, replace=False)
        scores = rng.integers(0, int(rng.integers(1, 6)), n).astype(float)
        rows += [
            (f"q{q}", f"d{d}", s, i + 1) for i, (d, s) in enumerate(zip(docs, scores, strict=True))
        ]
    columns = list(zip(*rows, strict=True))
    return pa.table(
        {"qid": columns[0], "docid": columns[1], "score": columns[2], "rank": columns[3]}
    )


@pytest.mark.parametrize("ties", ["trec_eval", "average", "given"])
@pytest.mark.parametrize("with_units", [False, True])
@pytest.mark.parametrize("one_pass", [True, False])
def test_the_scorers_kept_ranking_is_the_top_of_the_whole_ranking(
    ties, with_units, one_pass, monkeypatch
):
    """Bounded by each query's depth-th score, it is the exact top of the sorted ranking.

    With many queries the bounds are made in a second pass, for the long queries only.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalvalidity.io import scoring
    from evalvalidity.io.scoring import decode_ranking, rank_run, score_run

    if not one_pass:
        monkeypatch.setattr(scoring, "_ONE_PASS_BOUND_QUERIES", 0)

    rng = np.random.default_rng(7)
    units = (
        pa.table(
            {
                "chunk_id": [f"d{i}" for i in range(120)],
                "doc_id": [f"D{i // 3}" for i in range(120)],
            }
        )
        if with_units
        else None
    )
    for _ in range(6):
        run = _tied_run(rng, int(rng.integers(2, 12)))
        n = len(set(run.column("qid").to_pylist()))
        judged = [f"q{q}" for q in range(n) if q % 3]  # the others are unjudged
        qrels = pa.table({"qid": judged, "docid": ["d1"] * len(judged), "rel": [1] * len(judged)})
        full = rank_run(run, units=units, ties="average")
        full = full.filter(pc.is_in(full["qid"], pa.array(judged)))
        for depth in (1, 3, 12, None):
            kept = score_run(
                run, qrels, "rr@10", units=units, ties=ties, keep_ranking=True, ranking_depth=depth
            ).ranking
            # Its rows come in no particular order (the positions give it), its ids as codes.
            kept = decode_ranking(kept).sort_by([("qid", "ascending"), ("position", "ascending")])
            want = full
            if depth is not None:
                near = pc.or_(
                    pc.less_equal(full["position"], depth), pc.less_equal(full["tie_start"], depth)
                )
                want = full.filter(near)
            want = want.select(["qid", "docid", "position", "tie_start", "tie_size"])
            assert kept.equals(want), (ties, depth)


def test_the_check_reuses_the_scorers_ranking_and_runs_the_nulls_at_any_size(monkeypatch):
    """The nulls read the scorer's ranking (none is made again) and equal those made apart."""
    import pyarrow as pa

    from evalvalidity.analysis import check, nulls
    from evalvalidity.analysis.plan import PoolSpec

    rng = np.random.default_rng(3)
    run = _tied_run(rng, 30)
    qrels = pa.table(
        {
            "qid": [f"q{q}" for q in range(30)],
            "docid": [f"d{q}" for q in range(30)],
            "rel": [1] * 30,
        }
    )
    calls = []
    monkeypatch.setattr(nulls, "top_ranking", lambda *a: calls.append(a) or None)
    result = check.check_tables(run, qrels, pool=PoolSpec(corpus_size=200), seeds=8)
    assert calls == []  # nothing ranked again
    assert result.nulls.holes is not None and result.nulls.ties is not None
    assert not any("skipped" in note for note in result.notes)
    monkeypatch.undo()
    bench = check.build_benchmark(qrels, PoolSpec(corpus_size=200), result.metric)
    apart = nulls.other_nulls(
        bench,
        result.floor,
        result.metric,
        PoolSpec(corpus_size=200),
        qrels,
        run=run,
        min_detectable=result.nulls.min_detectable,
        model_score=result.flat_mean,
    )
    assert apart.holes.interval == result.nulls.holes.interval
    assert apart.ties.interval == result.nulls.ties.interval
    assert apart.query_independent.shuffle == result.nulls.query_independent.shuffle
    assert apart.self_hits == result.nulls.self_hits
