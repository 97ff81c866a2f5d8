"""The nulls that read the ranking row by row work on blocks of queries: same results, any block.

Judgement holes, tie bounds and self-hits are per-query values (or their means), so taking the
queries a block at a time (``block=``) must give exactly what one block of all the queries
gives: the same floats, bit for bit, whatever the block size.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pyarrow as pa
import pytest

from evalvalidity.analysis import nulls
from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import build_benchmark, compute_floor
from evalvalidity.analysis.selfhits import self_hits
from evalvalidity.core.metrics import parse_metric
from evalvalidity.core.nulls import query_blocks
from evalvalidity.errors import ParameterError

METRICS = ["rr@10", "ap", "ndcg@5", "p@3[rel>=2]", "hit@2", "rprec", "r@4"]


def _benchmark(seed: int, n_queries: int = 40) -> tuple[pa.Table, pa.Table]:
    """Graded judgements (zeros included, some queries judging themselves) and a tied run."""
    rng = np.random.default_rng(seed)
    qid, docid, rel = [], [], []
    run_q, run_d, run_s = [], [], []
    for q in range(n_queries):
        name = f"q{q:03d}"
        docs = [f"d{d}" for d in rng.choice(30, size=int(rng.integers(1, 6)), replace=False)]
        if q % 7 == 0:
            docs.append(name)  # the query judges its own id
        qid += [name] * len(docs)
        docidx = docs
        docid += docidx
        rel += rng.integers(0, 3, size=len(docs)).tolist()
        if q % 5 == 4:
            continue  # a judged query without a ranking
        ranked = [f"d{d}" for d in rng.choice(40, size=int(rng.integers(1, 15)), replace=False)]
        if q % 3 == 0:
            ranked.insert(int(rng.integers(0, len(ranked))), name)  # a self-hit
        run_q += [name] * len(ranked)
        run_d += ranked
        run_s += np.round(rng.random(len(ranked)) * 3).tolist()  # few distinct scores: ties
    qrels = pa.table({"qid": qid, "docid": docid, "rel": rel})
    run = pa.table({"qid": run_q, "docid": run_d, "score": run_s})
    return qrels, run


def _coded(seed: int, metric_name: str):
    qrels, run = _benchmark(seed)
    metric, pool = parse_metric(metric_name), PoolSpec(corpus_size=100)
    bench = build_benchmark(qrels, pool, metric)
    ranking = nulls.top_ranking(run, None, metric.k)
    coded = nulls.code_tables(bench, qrels, ranking, metric.k)
    floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(0))
    return coded, metric, floor, pool, qrels


def _same(a: object, b: object) -> None:
    """Equal dataclasses, arrays compared bit for bit."""
    assert type(a) is type(b)
    for field in dataclasses.fields(a):  # type: ignore[arg-type]
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), field.name
        elif dataclasses.is_dataclass(x):
            _same(x, y)
        elif isinstance(x, float) and math.isnan(x):
            assert math.isnan(y), field.name
        else:
            assert x == y, field.name


@pytest.mark.parametrize("metric_name", METRICS)
@pytest.mark.parametrize("seed", [0, 1])
def test_holes_ties_and_self_hits_do_not_depend_on_the_block(metric_name, seed):
    coded, metric, floor, pool, qrels = _coded(seed, metric_name)
    assert coded.tie_start is not None and np.any(coded.tie_size > 1)
    assert coded.self_row.any()
    whole = coded.n_queries
    holes = nulls.judgement_holes(coded, metric, block=whole)
    ties = nulls.tie_sensitivity(coded, metric, 0.01, 0.5, block=whole)
    selfs = self_hits(coded, metric, floor, pool, qrels, block=whole)
    assert holes.holes > 0 and ties is not None and ties.tied_queries > 0
    assert selfs.ranked_self > 0 and selfs.judged_self > 0
    for block in (1, 7, whole - 1, 10 * whole):
        _same(nulls.judgement_holes(coded, metric, block=block), holes)
        _same(nulls.tie_sensitivity(coded, metric, 0.01, 0.5, block=block), ties)
        _same(self_hits(coded, metric, floor, pool, qrels, block=block), selfs)


def test_holes_do_not_depend_on_the_row_order():
    coded, metric, *_ = _coded(3, "ndcg@5")
    # the queries in a random order, each query's rows in theirs (a sum's order is kept)
    rank = np.random.default_rng(0).permutation(coded.n_queries)
    order = np.argsort(rank[coded.run_query], kind="stable")
    gold = np.argsort(rank[coded.gold_query], kind="stable")
    assert np.any(np.diff(coded.run_query[order]) < 0)
    shuffled = dataclasses.replace(
        coded,
        **{
            name: getattr(coded, name)[order]
            for name in ("run_query", "run_doc", "run_position", "tie_start", "tie_size")
        },
        self_row=coded.self_row[order],
        gold_query=coded.gold_query[gold],
        gold_doc=coded.gold_doc[gold],
        gold_grade=coded.gold_grade[gold],
    )
    assert nulls.by_query(coded) is coded  # code_tables sorts by query: nothing is copied
    again = nulls.by_query(shuffled)
    assert np.all(np.diff(again.run_query) >= 0) and np.all(np.diff(again.gold_query) >= 0)
    _same(nulls.judgement_holes(shuffled, metric, block=3), nulls.judgement_holes(coded, metric))


def test_query_blocks_slices_sorted_rows():
    run = np.array([0, 0, 1, 4, 4, 4])
    gold = np.array([1, 2, 3])
    blocks = query_blocks(5, 2, run, gold)
    assert [(q0, q1) for q0, q1, _ in blocks] == [(0, 2), (2, 4), (4, 5)]
    for q0, q1, (rows, golds) in blocks:
        assert np.all((run[rows] >= q0) & (run[rows] < q1))
        assert np.all((gold[golds] >= q0) & (gold[golds] < q1))
    covered = np.concatenate([np.arange(len(run))[r] for _, _, (r, _) in blocks])
    assert covered.tolist() == list(range(len(run)))
    assert query_blocks(0, 3, np.zeros(0, np.int64)) == []
    assert len(query_blocks(3, 1, run[:3])) == 3
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The 'block' parameter of query_blocks must be an int >= 1. Got 0 instead."
        ),
    ):
        query_blocks(5, 0, run)


def test_check1_reads_each_blocks_judgements_from_one_index(monkeypatch):
    from evalvalidity.analysis import check1
    from evalvalidity.analysis.pools import simulation_layout
    from evalvalidity.core import simulate

    qrels, _ = _benchmark(5)
    # a judgement of a query the benchmark does not hold (its rows are never replicated)
    extra = pa.table({"qid": ["zzz"], "docid": ["d1"], "rel": [1]})
    everything = pa.concat_tables([qrels, extra])
    metric, pool = parse_metric("rr@10"), PoolSpec(corpus_size=100)
    bench = build_benchmark(qrels, pool, metric)
    rows = check1._JudgedRows.of(everything, bench)
    query = rows.row_query
    assert query[-1] == -1 and np.all(query[:-1] >= 0)
    assert isinstance(rows.by_query, np.ndarray) and isinstance(rows.offsets, np.ndarray)
    assert rows.offsets.tolist() == [0, *np.cumsum(np.bincount(query[:-1])).tolist()]
    for q0, q1 in [(0, 1), (3, 9), (0, len(bench.qids)), (5, 5)]:
        wanted = np.flatnonzero((query >= q0) & (query < q1))
        assert rows.rows_of(q0, q1).tolist() == wanted.tolist()  # file order
    layout, namer = simulation_layout(bench, pool)
    sample = simulate.sample_prefixes(layout, 3, depth=10, rng=np.random.default_rng(0))
    whole = check1._score_samples(sample, namer, everything, bench, metric, None, "trec_eval")
    monkeypatch.setattr(check1, "_SCORE_BLOCK", 7)  # blocks that split queries' samples
    again = check1._score_samples(sample, namer, rows, bench, metric, None, "trec_eval")
    assert whole.tobytes() == again.tobytes() and whole.any()


def _widened(coded: nulls.Coded) -> nulls.Coded:
    """``coded`` with every code array int64 (as code_tables made them before int32 codes)."""
    names = ("run_query", "run_doc", "run_position", "tie_start", "tie_size")
    names += ("gold_query", "gold_doc", "gold_grade")
    return dataclasses.replace(
        coded, **{name: getattr(coded, name).astype(np.int64) for name in names}
    )


@pytest.mark.parametrize("metric_name", METRICS)
def test_the_nulls_give_the_same_numbers_from_int32_codes(metric_name):
    coded, metric, floor, pool, qrels = _coded(2, metric_name)
    assert coded.run_query.dtype == np.int32 and coded.gold_doc.dtype == np.int32
    wide = _widened(coded)
    _same(
        nulls.query_independent(coded, metric, floor, pool, None, with_run=True),
        nulls.query_independent(wide, metric, floor, pool, None, with_run=True),
    )
    _same(nulls.judgement_holes(coded, metric), nulls.judgement_holes(wide, metric))
    _same(
        nulls.tie_sensitivity(coded, metric, 0.01, 0.5),
        nulls.tie_sensitivity(wide, metric, 0.01, 0.5),
    )
    _same(self_hits(coded, metric, floor, pool, qrels), self_hits(wide, metric, floor, pool, qrels))


def test_the_shuffle_null_keys_int32_codes_without_overflow():
    """Codes whose keys ``i * Q + j`` pass 2**31 give the int64 codes' numbers exactly."""
    from evalvalidity.core.nulls import query_shuffle_null

    rng = np.random.default_rng(0)
    n = 60_000  # i * n + j reaches 3.6e9 > 2**31
    query = np.repeat(np.arange(n), 2)
    doc = rng.integers(0, 15_000, size=2 * n) * 2 + np.tile([0, 1], n)  # distinct per query
    position = np.tile([1, 2], n)
    gold_query = np.arange(n)
    gold_doc = rng.integers(0, 30_000, size=n)  # a few queries' gold each: few hits
    grade = np.ones(n, np.int64)
    wide = query_shuffle_null(
        query, doc, position, gold_query, gold_doc, grade, metric="rr@10", n_queries=n
    )
    narrow = query_shuffle_null(
        *(a.astype(np.int32) for a in (query, doc, position, gold_query, gold_doc)),
        grade.astype(np.int32),
        metric="rr@10",
        n_queries=n,
    )
    assert wide.n_pairs_hit > 0
    _same(narrow, wide)


def test_the_other_nulls_hand_freed_memory_back_between_their_parts(monkeypatch):
    """The coding's freed ranking and each part's working arrays are given back in between."""
    qrels, run = _benchmark(5)
    metric, pool = parse_metric("rr@10"), PoolSpec(corpus_size=100)
    bench = build_benchmark(qrels, pool, metric)
    floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(0))
    calls: list[str] = []

    def recorded(name, function):
        def call(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(nulls, "release_freed_memory", lambda: calls.append("release"))
    for name in ("code_tables", "query_independent", "judgement_holes", "tie_sensitivity"):
        monkeypatch.setattr(nulls, name, recorded(name, getattr(nulls, name)))
    monkeypatch.setattr(nulls, "self_hits", recorded("self_hits", nulls.self_hits))
    found = nulls.other_nulls(bench, floor, metric, pool, qrels, run=run)
    assert calls == [
        "code_tables",
        "release",
        "query_independent",
        "release",
        "judgement_holes",
        "release",
        "tie_sensitivity",
        "release",
        "self_hits",
    ]
    assert found.holes is not None and found.self_hits is not None


def test_the_scorer_hands_freed_memory_back_around_the_ranking_it_keeps(monkeypatch):
    """Before the kept ranking is made in numpy and after: DuckDB's and its sort's memory."""
    from evalvalidity.io import scoring

    qrels, run = _benchmark(6)
    calls: list[str] = []
    real = scoring._ranked_in_memory

    def ranked(*args, **kwargs):
        calls.append("rank")
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring, "release_freed_memory", lambda: calls.append("release"))
    monkeypatch.setattr(scoring, "_ranked_in_memory", ranked)
    kept = scoring.score_run(run, qrels, "ap", keep_ranking=True)  # every row ranked: numpy
    assert calls[-3:] == ["release", "rank", "release"]
    plain = scoring.score_run(run, qrels, "ap")
    assert kept.qids.dtype == object and kept.qids.tolist() == plain.qids.tolist()
    assert kept.values["ap"].tolist() == plain.values["ap"].tolist()
