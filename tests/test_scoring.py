"""Tests of evalvalidity.io.scoring: differential against pytrec_eval, ir_measures and ranx,
tie policies against enumeration, chunk deduplication, error messages word for word."""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest
import pytrec_eval
from brute import brute_floor

from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io.scoring import ScoreResult, rank_run, score_run

CUTOFFS = (1, 3, 5, 10, 20)
# canonical metric -> pytrec_eval measure
TREC_METRICS: dict[str, str] = {"rr": "recip_rank", "rprec": "Rprec", "ap": "map", "ndcg": "ndcg"}
for _k in CUTOFFS:
    TREC_METRICS.update(
        {
            f"p@{_k}": f"P_{_k}",
            f"r@{_k}": f"recall_{_k}",
            f"hit@{_k}": f"success_{_k}",
            f"ap@{_k}": f"map_cut_{_k}",
            f"ndcg@{_k}": f"ndcg_cut_{_k}",
        }
    )
TREC_REQUEST = {"recip_rank", "Rprec", "map", "ndcg"} | {
    f"{m}.{','.join(map(str, CUTOFFS))}" for m in ("P", "recall", "success", "map_cut", "ndcg_cut")
}
ALL_METRICS = [
    parse_metric(s)
    for s in (
        "rr",
        "rr@1",
        "rr@3",
        "rr@10",
        "hit@1",
        "hit@3",
        "p@1",
        "p@3",
        "p@10",
        "r@3",
        "r@10",
        "rprec",
        "ap",
        "ap@3",
        "ap@10",
        "ndcg",
        "ndcg@3",
        "ndcg@10",
        "ndcg_exp@5",
        "hit@5[rel>=2]",
        "ap[rel>=2]",
    )
]


@pytest.fixture(params=["counting", "sorting"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force either way of finding positions: counting items ahead, or a window sort."""
    import evalvalidity.io.scoring

    limit = math.inf if request.param == "counting" else -1.0
    monkeypatch.setattr(evalvalidity.io.scoring, "_COUNTING_LIMIT", limit)
    return str(request.param)


# --------------------------------------------------------------------------- generated data


def make_case(
    seed: int, *, ties: bool, n_queries: int = 30, max_docs: int = 40
) -> tuple[pa.Table, pa.Table, dict, dict]:
    """A random run and qrels, as Arrow tables and as pytrec_eval dicts.

    Queries q0..: most judged and ranked; a few only ranked (unjudged) or only judged
    (unranked). Docids d0..d79, so that string order differs from numeric order. Without
    ties every score is distinct; with ties scores take 3 values.
    """
    rng = np.random.default_rng(seed)
    run_rows: list[tuple[str, str, float]] = []
    qrel_rows: list[tuple[str, str, int]] = []
    for q in range(n_queries):
        qid = f"q{q}"
        kind = rng.choice(["both"] * 8 + ["run_only", "qrels_only"])
        pool = [f"d{d}" for d in rng.permutation(80)[: max_docs + 10]]
        if kind != "qrels_only":
            n = int(rng.integers(1, max_docs + 1))
            for docid in pool[:n]:
                run_rows.append((qid, docid, 0.0))
        if kind != "run_only":
            judged = rng.choice(pool, size=int(rng.integers(1, 12)), replace=False)
            for docid in judged:
                qrel_rows.append((qid, str(docid), int(rng.choice([0, 0, 1, 2, 3]))))
    order = rng.permutation(len(run_rows))
    if ties:
        scores = rng.integers(0, 3, len(run_rows)).astype(np.float64)
    else:
        scores = rng.permutation(len(run_rows)).astype(np.float64) / 7.0 - 20.0
    run_rows = [(run_rows[i][0], run_rows[i][1], float(scores[j])) for j, i in enumerate(order)]
    run = pa.table(
        {
            "qid": [r[0] for r in run_rows],
            "docid": [r[1] for r in run_rows],
            "score": [r[2] for r in run_rows],
        }
    )
    qrels = pa.table(
        {
            "qid": [r[0] for r in qrel_rows],
            "docid": [r[1] for r in qrel_rows],
            "rel": [r[2] for r in qrel_rows],
        }
    )
    run_dict: dict[str, dict[str, float]] = {}
    for qid, docid, score in run_rows:
        run_dict.setdefault(qid, {})[docid] = score
    qrels_dict: dict[str, dict[str, int]] = {}
    for qid, docid, rel in qrel_rows:
        qrels_dict.setdefault(qid, {})[docid] = rel
    return run, qrels, run_dict, qrels_dict


def trec(run_dict: dict, qrels_dict: dict, relevance_level: int = 1) -> dict:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels_dict, TREC_REQUEST, relevance_level=relevance_level
    )
    return evaluator.evaluate(run_dict)


def assert_matches_trec(
    result: ScoreResult, expected: dict, names: Sequence[str], rel: int = 1
) -> None:
    assert result.qids.tolist() == sorted(expected)
    for name in names:
        metric = parse_metric(name)
        if rel != 1:
            metric = Metric(metric.family, metric.k, rel)
        want = [expected[q][TREC_METRICS[name]] for q in result.qids]
        np.testing.assert_allclose(
            result.values[metric.name], want, rtol=1e-12, atol=1e-15, err_msg=name
        )


# --------------------------------------------------------------------------- trec_eval


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("ties", [False, True])
def test_matches_pytrec_eval(seed: int, ties: bool, path: str) -> None:
    run, qrels, run_dict, qrels_dict = make_case(seed, ties=ties)
    result = score_run(run, qrels, list(TREC_METRICS), unranked="skip")
    assert_matches_trec(result, trec(run_dict, qrels_dict), list(TREC_METRICS))


@pytest.mark.parametrize("seed", [5, 6])
def test_matches_pytrec_eval_at_a_relevance_threshold(seed: int, path: str) -> None:
    run, qrels, run_dict, qrels_dict = make_case(seed, ties=True)
    binary = [n for n in TREC_METRICS if not n.startswith("ndcg")]
    metrics = [Metric(parse_metric(n).family, parse_metric(n).k, 2) for n in binary]
    result = score_run(run, qrels, metrics, unranked="skip")
    assert_matches_trec(result, trec(run_dict, qrels_dict, relevance_level=2), binary, rel=2)


def test_matches_pytrec_eval_on_a_larger_run(path: str) -> None:
    rng = np.random.default_rng(42)
    n_q, n_d = 200, 400
    qid = np.repeat([f"{q:04d}" for q in range(n_q)], n_d)
    docid = np.array([f"D{d}" for d in rng.integers(0, 10**6, n_q * n_d)])
    # distinct docids within each query: append the row's offset
    docid = np.char.add(docid, np.char.add("-", (np.arange(n_q * n_d) % n_d).astype(str)))
    score = np.round(rng.normal(size=n_q * n_d), 2)  # rounded: plenty of ties
    pick = rng.random(n_q * n_d) < 0.01
    rel = rng.integers(1, 4, pick.sum())
    run = pa.table({"qid": qid, "docid": docid, "score": score})
    qrels = pa.table({"qid": qid[pick], "docid": docid[pick], "rel": rel})
    run_dict: dict = {}
    for q, d, s in zip(qid.tolist(), docid.tolist(), score.tolist(), strict=True):
        run_dict.setdefault(q, {})[d] = s
    qrels_dict: dict = {}
    for q, d, r in zip(qid[pick].tolist(), docid[pick].tolist(), rel.tolist(), strict=True):
        qrels_dict.setdefault(q, {})[d] = r
    result = score_run(run, qrels, list(TREC_METRICS), unranked="skip")
    assert_matches_trec(result, trec(run_dict, qrels_dict), list(TREC_METRICS))


def test_unranked_queries_score_zero_or_are_skipped(path: str) -> None:
    run, qrels, run_dict, qrels_dict = make_case(7, ties=False)
    expected = trec(run_dict, qrels_dict)
    zero = score_run(run, qrels, "ap, rr@10")
    skip = score_run(run, qrels, "ap, rr@10", unranked="skip")
    unranked = sorted(set(qrels_dict) - set(run_dict))
    unjudged = sorted(set(run_dict) - set(qrels_dict))
    assert unranked and unjudged
    assert zero.unranked_qids == skip.unranked_qids == tuple(unranked)
    assert zero.unjudged_qids == skip.unjudged_qids == tuple(unjudged)
    assert zero.qids.tolist() == sorted(qrels_dict)
    assert skip.qids.tolist() == sorted(expected)
    in_zero = np.isin(zero.qids, unranked)
    assert np.all(zero.values["ap"][in_zero] == 0.0)
    np.testing.assert_allclose(zero.values["ap"][~in_zero], skip.values["ap"], rtol=0)
    assert zero.means["ap"] == pytest.approx(
        sum(v["map"] for v in expected.values()) / len(qrels_dict), rel=1e-12
    )
    assert skip.means["ap"] == pytest.approx(
        np.mean([v["map"] for v in expected.values()]), rel=1e-12
    )
    assert (zero.unranked, skip.unranked, zero.ties) == ("zero", "skip", "trec_eval")
    judged_rows = int(
        np.isin(run.column("qid").to_numpy(zero_copy_only=False), sorted(qrels_dict)).sum()
    )
    assert zero.n_ranked_rows == judged_rows and zero.n_dedup_dropped == 0


# --------------------------------------------------------------------------- other tools


def to_ir_measures(run_dict: dict, qrels_dict: dict, names: Sequence[str]) -> dict:
    import ir_measures

    measures = {name: ir_measures.parse_measure(text) for name, text in names_ir(names).items()}
    by_measure = {m: name for name, m in measures.items()}
    out: dict = {}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels_dict, run_dict):
        out.setdefault(metric.query_id, {})[by_measure[metric.measure]] = metric.value
    return out


def names_ir(names: Sequence[str]) -> dict[str, str]:
    out = {}
    for name in names:
        m = parse_metric(name)
        base = {
            "rr": "RR",
            "hit": "Success",
            "p": "P",
            "r": "R",
            "rprec": "Rprec",
            "ap": "AP",
            "ndcg": "nDCG",
        }[m.family]
        out[name] = base if m.k is None else f"{base}@{m.k}"
    return out


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_matches_ir_measures_without_ties(seed: int) -> None:
    run, qrels, run_dict, qrels_dict = make_case(seed, ties=False)
    names = [
        "rr",
        "rr@3",
        "rr@10",
        "hit@1",
        "hit@5",
        "p@1",
        "p@5",
        "r@5",
        "r@20",
        "rprec",
        "ap",
        "ap@5",
        "ndcg",
        "ndcg@5",
        "ndcg@20",
    ]
    expected = to_ir_measures(run_dict, qrels_dict, names)
    result = score_run(run, qrels, names)  # some providers score unranked queries 0 too
    for name in names:
        got = dict(zip(result.qids.tolist(), result.values[name].tolist(), strict=True))
        # ir_measures leaves out queries with no relevant judgement for some measures
        common = sorted(q for q in expected if name in expected[q])
        assert common
        np.testing.assert_allclose(
            [got[q] for q in common],
            [expected[q][name] for q in common],
            rtol=1e-12,
            atol=1e-15,
            err_msg=name,
        )


@pytest.mark.parametrize("seed", [20, 21])
def test_matches_ranx_without_ties(seed: int) -> None:
    ranx = pytest.importorskip("ranx")
    run, qrels, run_dict, qrels_dict = make_case(seed, ties=False)
    # ranx scores only queries that are judged and ranked, with at least one relevant item
    both = sorted(
        q for q in set(run_dict) & set(qrels_dict) if any(r > 0 for r in qrels_dict[q].values())
    )
    names = {
        "rr": "mrr",
        "rr@5": "mrr@5",
        "hit@3": "hit_rate@3",
        "p@5": "precision@5",
        "r@5": "recall@5",
        "rprec": "r-precision",
        "ap": "map",
        "ap@5": "map@5",
        "ndcg": "ndcg",
        "ndcg@5": "ndcg@5",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings inside ranx
        expected = ranx.evaluate(
            ranx.Qrels({q: qrels_dict[q] for q in both}),
            ranx.Run({q: run_dict[q] for q in both}),
            list(names.values()),
            return_mean=False,
            make_comparable=True,
        )
    result = score_run(run, qrels, list(names), unranked="skip")
    rows = np.searchsorted(result.qids, both)
    assert result.qids[rows].tolist() == both
    for ours, theirs in names.items():
        np.testing.assert_allclose(
            result.values[ours][rows], expected[theirs], rtol=1e-12, atol=1e-15, err_msg=ours
        )


# --------------------------------------------------------------------------- ties


def test_trec_eval_issue_22_tie_broken_by_docid_descending(path: str) -> None:
    # usnistgov/trec_eval#22: two runs differing only in a non-relevant docid score 1.0 and
    # 0.6309 because ties go to the larger docid.
    qrels = pa.table({"qid": ["1", "1", "1"], "docid": ["a", "b", "c"], "rel": [0, 1, 0]})
    run1 = pa.table({"qid": ["1", "1"], "docid": ["b", "a"], "score": [1.0, 1.0]})
    run2 = pa.table({"qid": ["1", "1"], "docid": ["b", "c"], "score": [1.0, 1.0]})
    assert score_run(run1, qrels, "ndcg").means["ndcg"] == 1.0
    assert score_run(run2, qrels, "ndcg").means["ndcg"] == pytest.approx(1 / math.log2(3))
    # tie-aware: both runs are the same coin flip between positions 1 and 2
    average = (1 + 1 / math.log2(3)) / 2
    for run in (run1, run2):
        assert score_run(run, qrels, "ndcg", ties="average").means["ndcg"] == pytest.approx(
            average, rel=1e-14
        )


def test_pytrec_eval_issue_56_all_equal_scores(path: str) -> None:
    # cvangysel/pytrec_eval#56: all-equal scores give MAP = nDCG = 1.0 by docid order.
    qrels = pa.table({"qid": ["q1", "q2", "q2"], "docid": ["d3", "d2", "d3"], "rel": [1, 1, 1]})
    run = pa.table(
        {
            "qid": ["q1"] * 3 + ["q2"] * 2,
            "docid": ["d1", "d2", "d3", "d3", "d2"],
            "score": [1.0] * 5,
        }
    )
    trec_like = score_run(run, qrels, "ap, ndcg")
    assert trec_like.values["ap"].tolist() == [1.0, 1.0]
    assert trec_like.values["ndcg"].tolist() == [1.0, 1.0]
    fair = score_run(run, qrels, "ap, ndcg", ties="average")
    np.testing.assert_allclose(fair.values["ap"], [(1 + 1 / 2 + 1 / 3) / 3, 1.0], rtol=1e-14)
    np.testing.assert_allclose(
        fair.values["ndcg"], [(1 + 1 / math.log2(3) + 1 / 2) / 3, 1.0], rtol=1e-14
    )


def enumerate_tie_orders(run_rows: list[tuple[str, str, float]]) -> tuple[pa.Table, dict[str, str]]:
    """Every order inside every tie group, each as its own query ``qid#i`` with distinct scores.

    Returns the expanded run and the map from expanded to original query ids.
    """
    by_query: dict[str, list[tuple[str, float]]] = {}
    for qid, docid, score in run_rows:
        by_query.setdefault(qid, []).append((docid, score))
    rows: list[tuple[str, str, float]] = []
    origin: dict[str, str] = {}
    for qid, items in by_query.items():
        groups: dict[float, list[str]] = {}
        for docid, score in items:
            groups.setdefault(score, []).append(docid)
        ordered = [groups[s] for s in sorted(groups, reverse=True)]
        for i, combo in enumerate(itertools.product(*(itertools.permutations(g) for g in ordered))):
            flat = [d for block in combo for d in block]
            name = f"{qid}#{i}"
            origin[name] = qid
            rows.extend((name, d, float(len(flat) - p)) for p, d in enumerate(flat))
    return pa.table(
        {"qid": [r[0] for r in rows], "docid": [r[1] for r in rows], "score": [r[2] for r in rows]}
    ), origin


@pytest.mark.parametrize("seed", [30, 31, 32])
def test_average_ties_equal_enumeration_of_all_orders(seed: int, path: str) -> None:
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for q in range(4):
        n = int(rng.integers(1, 8))
        scores = rng.integers(0, 3, n)  # groups of up to ~4 tied items
        for d in range(n):
            run_rows.append((f"q{q}", f"d{d}", float(scores[d])))
        for d in rng.choice(n + 2, size=int(rng.integers(1, 4)), replace=False):
            qrel_rows.append((f"q{q}", f"d{d}", int(rng.integers(0, 4))))
    run = pa.table(
        {
            "qid": [r[0] for r in run_rows],
            "docid": [r[1] for r in run_rows],
            "score": [r[2] for r in run_rows],
        }
    )
    expanded, origin = enumerate_tie_orders(run_rows)
    expanded_qrels = pa.table(
        {
            "qid": [name for name, q in origin.items() for r in qrel_rows if r[0] == q],
            "docid": [r[1] for name, q in origin.items() for r in qrel_rows if r[0] == q],
            "rel": [r[2] for name, q in origin.items() for r in qrel_rows if r[0] == q],
        }
    )
    qrels = pa.table(
        {
            "qid": [r[0] for r in qrel_rows],
            "docid": [r[1] for r in qrel_rows],
            "rel": [r[2] for r in qrel_rows],
        }
    )
    fair = score_run(run, qrels, ALL_METRICS, ties="average")
    every = score_run(expanded, expanded_qrels, ALL_METRICS)
    owner = np.array([origin[q] for q in every.qids])
    for metric in ALL_METRICS:
        want = [every.values[metric.name][owner == q].mean() for q in fair.qids]
        np.testing.assert_allclose(
            fair.values[metric.name], want, rtol=1e-12, atol=1e-15, err_msg=metric.name
        )


def test_constant_score_run_trec_order_and_average_noise_floor(path: str) -> None:
    n, grades = 6, [2, 1]
    docids = [f"doc{i}" for i in range(n)]
    run = pa.table({"qid": ["q"] * n, "docid": docids, "score": [0.5] * n})
    qrels = pa.table({"qid": ["q", "q"], "docid": ["doc1", "doc4"], "rel": grades})
    ranking = rank_run(run)
    assert ranking.column("docid").to_pylist() == sorted(docids, reverse=True)
    trec_like = score_run(run, qrels, "rr")
    assert trec_like.means["rr"] == 1 / 2  # doc5, doc4 (relevant), ...
    fair = score_run(run, qrels, ALL_METRICS, ties="average")
    for metric in ALL_METRICS:
        want, _ = brute_floor(metric, [2, 1] + [0] * (n - 2), [2, 1])
        assert fair.means[metric.name] == pytest.approx(want, rel=1e-12, abs=1e-15), metric.name
    # and the closed forms of docs/math.md, Floors, for G = 2, N = 6
    assert fair.means["rr"] == pytest.approx(
        sum(math.comb(n - j, 1) / math.comb(n, 2) / j for j in range(1, n)), rel=1e-13
    )
    harmonic = sum(1 / i for i in range(1, n + 1))
    assert fair.means["ap"] == pytest.approx(
        (1 / n) * ((2 - 1) / (n - 1) * (n - harmonic) + harmonic), rel=1e-13
    )


def test_given_ties_follow_the_rank_column(path: str) -> None:
    run = pa.table(
        {"qid": ["1"] * 3, "docid": ["a", "b", "c"], "score": [1.0, 1.0, 1.0], "rank": [10, 2, 7]}
    )
    qrels = pa.table({"qid": ["1"], "docid": ["c"], "rel": [1]})
    assert score_run(run, qrels, "rr", ties="given").means["rr"] == 1 / 2
    assert score_run(run, qrels, "rr").means["rr"] == 1.0  # c sorts first
    assert rank_run(run, ties="given").column("docid").to_pylist() == ["b", "c", "a"]
    # the scores may be missing under 'given'
    no_scores = run.set_column(2, "score", pa.nulls(3, pa.float64()))
    assert score_run(no_scores, qrels, "rr", ties="given").means["rr"] == 1 / 2


def test_rank_run_average_reports_tie_groups() -> None:
    run = pa.table(
        {
            "qid": ["2", "1", "1", "1", "1"],
            "docid": ["z", "a", "b", "c", "d"],
            "score": [0.0, 3.0, 2.0, 2.0, 2.0],
        }
    )
    table = rank_run(run, ties="average")
    assert table.column_names == ["qid", "docid", "position", "score", "tie_start", "tie_size"]
    assert table.to_pydict() == {
        "qid": ["1", "1", "1", "1", "2"],
        "docid": ["a", "d", "c", "b", "z"],
        "position": [1, 2, 3, 4, 1],
        "score": [3.0, 2.0, 2.0, 2.0, 0.0],
        "tie_start": [1, 2, 2, 2, 1],
        "tie_size": [1, 3, 3, 3, 1],
    }
    assert rank_run(run).column_names == ["qid", "docid", "position", "score"]


def test_negative_zero_ties_with_zero(path: str) -> None:
    run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [0.0, -0.0]})
    qrels = pa.table({"qid": ["1"], "docid": ["a"], "rel": [1]})
    assert score_run(run, qrels, "rr").means["rr"] == 0.5  # b > a: tied, docid descending
    assert score_run(run, qrels, "rr", ties="average").means["rr"] == 0.75


# --------------------------------------------------------------------------- chunks


UNITS = pa.table(
    {
        "chunk_id": ["a#1", "a#2", "a#3", "b#1", "c#1", "c#2"],
        "doc_id": ["A", "A", "A", "B", "C", "C"],
    }
)


def test_dedup_hand_worked_example() -> None:
    # chunks ranked a#2 (0.9), c#1 (0.8), a#1 (0.7), b#1 (0.6), c#2 (0.5), a#3 (0.4)
    # documents: A (first at a#2), C, B; three later chunks dropped
    run = pa.table(
        {
            "qid": ["1"] * 6,
            "docid": ["a#1", "a#2", "a#3", "b#1", "c#1", "c#2"],
            "score": [0.7, 0.9, 0.4, 0.6, 0.8, 0.5],
        }
    )
    qrels = pa.table({"qid": ["1", "1"], "docid": ["B", "a#1"], "rel": [1, 1]})
    ranking = rank_run(run, units=UNITS)
    assert ranking.to_pydict() == {
        "qid": ["1"] * 3,
        "docid": ["A", "C", "B"],
        "position": [1, 2, 3],
        "score": [0.9, 0.8, 0.6],
        "chunk_id": ["a#2", "c#1", "b#1"],
    }
    result = score_run(run, qrels, "rr, p@3", units=UNITS)
    assert result.values["rr"].tolist() == [1 / 3]  # B is third; 'a#1' is not a document
    assert result.values["p@3"].tolist() == [1 / 3]
    assert (result.n_ranked_rows, result.n_dedup_dropped) == (6, 3)


def test_dedup_first_occurrence_wins_over_later_better_grades() -> None:
    # a document's position is that of its first chunk, whatever its other chunks do
    run = pa.table(
        {"qid": ["1"] * 4, "docid": ["b#1", "a#1", "c#1", "a#2"], "score": [4.0, 3.0, 2.0, 1.0]}
    )
    qrels = pa.table({"qid": ["1"], "docid": ["A"], "rel": [1]})
    assert score_run(run, qrels, "rr", units=UNITS).means["rr"] == 1 / 2
    under_given = run.append_column("rank", pa.array([4, 3, 1, 2]))
    # by rank: c#1, a#2, a#1, b#1 -> C, A, B
    assert score_run(under_given, qrels, "rr", units=UNITS, ties="given").means["rr"] == 1 / 2
    assert rank_run(under_given, units=UNITS, ties="given").column("chunk_id").to_pylist() == [
        "c#1",
        "a#2",
        "b#1",
    ]


def dedup_reference(
    run_rows: list[tuple[str, str, float]], units: dict[str, str]
) -> dict[str, dict[str, float]]:
    """Pure Python: trec_eval order of chunks, first chunk of each document, new scores that
    keep that order (decreasing integers)."""
    out: dict[str, dict[str, float]] = {}
    by_query: dict[str, list[tuple[str, float]]] = {}
    for qid, chunk, score in run_rows:
        by_query.setdefault(qid, []).append((chunk, score))
    for qid, chunks in by_query.items():
        ordered = sorted(chunks, key=lambda c: (c[1], c[0]), reverse=True)
        docs: list[str] = []
        for chunk, _ in ordered:
            if units[chunk] not in docs:
                docs.append(units[chunk])
        out[qid] = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
    return out


@pytest.mark.parametrize("seed", [40, 41, 42])
def test_dedup_matches_a_pure_python_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_docs = 25
    chunk_counts = rng.integers(1, 5, n_docs)
    units = {f"D{d}_c{c}": f"D{d}" for d in range(n_docs) for c in range(chunk_counts[d])}
    chunks = sorted(units)
    run_rows, qrels_dict = [], {}
    for q in range(15):
        picked = rng.choice(chunks, size=int(rng.integers(1, 30)), replace=False)
        scores = rng.integers(0, 6, len(picked)).astype(float)  # ties among chunks too
        run_rows.extend((f"q{q}", str(c), float(s)) for c, s in zip(picked, scores, strict=True))
        judged = rng.choice(n_docs, size=4, replace=False)
        qrels_dict[f"q{q}"] = {f"D{d}": int(rng.integers(0, 4)) for d in judged}
    del qrels_dict["q14"]  # a ranked query without judgements: ignored
    run = pa.table(
        {
            "qid": [r[0] for r in run_rows],
            "docid": [r[1] for r in run_rows],
            "score": [r[2] for r in run_rows],
        }
    )
    qrels = pa.table(
        {
            "qid": [q for q in qrels_dict for _ in qrels_dict[q]],
            "docid": [d for q in qrels_dict for d in qrels_dict[q]],
            "rel": [r for q in qrels_dict for r in qrels_dict[q].values()],
        }
    )
    units_t = pa.table({"chunk_id": list(units), "doc_id": list(units.values())})
    result = score_run(run, qrels, list(TREC_METRICS), units=units_t, unranked="skip")
    expected = trec(dedup_reference(run_rows, units), qrels_dict)
    assert_matches_trec(result, expected, list(TREC_METRICS))
    scored_rows = [r for r in run_rows if r[0] != "q14"]
    n_documents = sum(len(v) for v in dedup_reference(scored_rows, units).values())
    assert result.unjudged_qids == ("q14",)
    assert result.n_ranked_rows == len(scored_rows)
    assert result.n_dedup_dropped == len(scored_rows) - n_documents


def test_average_with_units_averages_over_documents_sharing_a_best_score() -> None:
    # A has chunks at 2.0 and 2.0, B one chunk at 2.0, C one at 1.0 (but a 2.0 chunk of C
    # would tie it). Documents tie at best score 2.0: A and B, each first with probability
    # 1/2 (not 2/3 as a random order of the three tied chunks would give A).
    run = pa.table(
        {"qid": ["1"] * 4, "docid": ["a#1", "a#2", "b#1", "c#1"], "score": [2.0, 2.0, 2.0, 1.0]}
    )
    qrels = pa.table({"qid": ["1"], "docid": ["A"], "rel": [1]})
    result = score_run(run, qrels, "rr, ap", units=UNITS, ties="average")
    assert result.values["rr"].tolist() == [0.75]
    assert result.values["ap"].tolist() == [0.75]
    table = rank_run(run, units=UNITS, ties="average")
    assert table.to_pydict() == {
        "qid": ["1"] * 3,
        "docid": ["B", "A", "C"],
        "position": [1, 2, 3],
        "score": [2.0, 2.0, 1.0],
        "chunk_id": ["b#1", "a#2", "c#1"],
        "tie_start": [1, 1, 3],
        "tie_size": [2, 2, 1],
    }


# --------------------------------------------------------------------------- results


def test_score_result_is_read_only() -> None:
    run, qrels, _, _ = make_case(50, ties=False)
    result = score_run(run, qrels, ["rr@10", "map"])
    assert [m.name for m in result.metrics] == ["rr@10", "ap"]
    assert list(result.values) == ["rr@10", "ap"] and list(result.means) == ["rr@10", "ap"]
    with pytest.raises(TypeError):
        result.values["ap"] = np.zeros(1)  # type: ignore[index]
    with pytest.raises(ValueError, match="read-only"):
        result.values["ap"][0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        result.qids[0] = "x"
    assert result.n_queries == len(result.qids)
    assert isinstance(result.means["ap"], float)


def test_inputs_are_not_mutated() -> None:
    run, qrels, _, _ = make_case(51, ties=True)
    before = (run.to_pydict(), qrels.to_pydict())
    score_run(run, qrels, "ap", ties="average")
    assert (run.to_pydict(), qrels.to_pydict()) == before


def test_qids_sort_bytewise_like_strcmp() -> None:
    qids = ["b", "B", "10", "9", "é", "a"]
    run = pa.table({"qid": qids, "docid": ["d"] * 6, "score": [1.0] * 6})
    qrels = pa.table({"qid": qids, "docid": ["d"] * 6, "rel": [1] * 6})
    assert score_run(run, qrels, "rr").qids.tolist() == ["10", "9", "B", "a", "b", "é"]


def test_identical_duplicate_judgements_are_merged() -> None:
    run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pa.table({"qid": ["1", "1", "1"], "docid": ["b", "b", "c"], "rel": [1, 1, 1]})
    assert score_run(run, qrels, "r@2").means["r@2"] == 0.5


# --------------------------------------------------------------------------- errors


RUN = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 1.0]})
QRELS = pa.table({"qid": ["1"], "docid": ["a"], "rel": [1]})


def raises(message: str) -> pytest.RaisesContext:  # type: ignore[type-arg]
    return pytest.raises(InputDataError, match="^" + re.escape(message) + "$")


def test_duplicate_documents_in_a_run() -> None:
    run = pa.table(
        {
            "qid": ["1", "1", "2", "1", "2"],
            "docid": ["a", "b", "x", "a", "x"],
            "score": [3.0, 2.0, 1.0, 0.5, 0.2],
            "line": [11, 12, 13, 14, 15],
        }
    )
    with raises(
        "run.trec: query '1' ranks the document 'a' twice (line 11 and line 14); a run"
        " must rank a document at most once per query (2 duplicated pairs in all)."
    ):
        score_run(run, QRELS, "rr", run_name="run.trec")
    no_lines = run.drop_columns(["line"]).slice(0, 4)
    with raises(
        "run: query '1' ranks the document 'a' twice (row 1 and row 4); a run must"
        " rank a document at most once per query."
    ):
        rank_run(no_lines)


def test_conflicting_judgements() -> None:
    qrels = pa.table(
        {"qid": ["1", "1", "1"], "docid": ["a", "a", "a"], "rel": [1, 1, 2], "line": [3, 4, 9]}
    )
    with raises(
        "qrels.txt: query '1' judges the document 'a' twice with different grades"
        " (1 at line 3, 2 at line 9)."
    ):
        score_run(RUN, qrels, "rr", qrels_name="qrels.txt")


def test_missing_chunks() -> None:
    run = pa.table(
        {
            "qid": ["1"] * 5,
            "docid": ["a#1", "zz", "yy", "zz2", "ww"],
            "score": [5.0, 4.0, 3.0, 2.0, 1.0],
            "line": [1, 2, 3, 4, 5],
        }
    )
    with raises(
        "run: 4 ranked chunk ids are missing from chunks.tsv, first 'zz' (line 2),"
        " 'yy' (line 3), 'zz2' (line 4); every ranked chunk must map to a document."
    ):
        score_run(run, QRELS, "rr", units=UNITS, units_name="chunks.tsv")


def test_conflicting_units() -> None:
    units = pa.table({"chunk_id": ["c1", "c2", "c1"], "doc_id": ["A", "B", "C"]})
    with raises("units: the chunk 'c1' maps to two documents ('A' at row 1, 'C' at row 3)."):
        score_run(RUN, QRELS, "rr", units=units)


def test_unusable_scores_and_ranks() -> None:
    run = pa.table(
        {
            "qid": ["1", "1", "1"],
            "docid": ["a", "b", "c"],
            "score": [1.0, float("nan"), None],
            "rank": [1, 2, 2],
        }
    )
    with raises(
        "run: 2 rows have no usable score (null or NaN), the first at row 2; to rank"
        " by the rank column, use ties='given'."
    ):
        score_run(run, QRELS, "rr")
    with raises(
        "run: query '1' has two documents at rank 2 (row 2 and row 3); the tie policy"
        " 'given' needs distinct ranks within a query."
    ):
        score_run(run, QRELS, "rr", ties="given")
    with raises(
        "run: the tie policy 'given' orders by the rank column, but 2 rows have no"
        " rank, the first at row 1."
    ):
        score_run(RUN, QRELS, "rr", ties="given")


def test_null_ids() -> None:
    run = pa.table({"qid": ["1", None], "docid": ["a", "b"], "score": [1.0, 2.0], "line": [7, 8]})
    with raises("run: 1 rows have no qid or docid, the first at line 8."):
        score_run(run, QRELS, "rr")
    qrels = pa.table({"qid": ["1"], "docid": ["a"], "rel": pa.array([None], pa.int64())})
    with raises("qrels: 1 rows have no qid, docid or grade, the first at row 1."):
        score_run(RUN, qrels, "rr")


def test_nothing_to_score() -> None:
    other = pa.table({"qid": ["9"], "docid": ["a"], "rel": [1]})
    with raises("No query of run is judged in qrels: nothing to score."):
        score_run(RUN, other, "rr", unranked="skip")
    assert score_run(RUN, other, "rr").values["rr"].tolist() == [0.0]
    empty = other.slice(0, 0)
    with raises("qrels judges no query: nothing to score."):
        score_run(RUN, empty, "rr")


def test_missing_columns() -> None:
    with raises("A run table needs the column 'score' (expected columns: qid, docid, score)."):
        score_run(RUN.drop_columns(["score"]), QRELS, "rr")


def test_parameter_errors() -> None:
    def bad(message: str) -> pytest.RaisesContext:  # type: ignore[type-arg]
        return pytest.raises(ParameterError, match="^" + re.escape(message) + "$")

    with bad(
        "The 'ties' parameter of score_run must be one of 'trec_eval', 'given', 'average'."
        " Got 'random' instead."
    ):
        score_run(RUN, QRELS, "rr", ties="random")
    with bad(
        "The 'unranked' parameter of score_run must be one of 'zero', 'skip'. Got 'drop' instead."
    ):
        score_run(RUN, QRELS, "rr", unranked="drop")
    with bad(
        "The 'ties' parameter of rank_run must be one of 'trec_eval', 'given', 'average'."
        " Got None instead."
    ):
        rank_run(RUN, ties=None)  # type: ignore[arg-type]
    with bad("The 'run' parameter of score_run must be a pyarrow Table. Got dict instead."):
        score_run({"qid": []}, QRELS, "rr")  # type: ignore[arg-type]
    with bad(
        "The 'metrics' parameter of score_run must be a metric spelling, a Metric or a"
        " sequence of them. Got int instead."
    ):
        score_run(RUN, QRELS, 5)  # type: ignore[arg-type]
    with bad("The 'run_name' parameter of score_run must be a non-empty str. Got '' instead."):
        score_run(RUN, QRELS, "rr", run_name="")
    with pytest.raises(ParameterError, match=re.escape("Unknown metric 'bogus'; expected")):
        score_run(RUN, QRELS, "bogus")


def test_average_without_any_retrieved_relevant_item() -> None:
    run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 2.0]})
    qrels = pa.table({"qid": ["1"], "docid": ["z"], "rel": [1]})
    result = score_run(run, qrels, "rr, ap, ndcg, hit@1", ties="average")
    assert dict(result.means) == {"rr": 0.0, "ap": 0.0, "ndcg": 0.0, "hit@1": 0.0}


@pytest.mark.slow
def test_seven_million_rows() -> None:
    # 7,000 queries x 1,000 documents, scores descending with the row, so positions are known:
    # the relevant documents' positions give RR@10 directly.
    rng = np.random.default_rng(7)
    n_q, n_d = 7_000, 1_000
    query = np.repeat(np.arange(n_q), n_d)
    position = np.tile(np.arange(1, n_d + 1), n_q)
    qid = pa.array(np.char.mod("q%d", np.arange(n_q))).take(pa.array(query))
    docid = pa.array(np.char.mod("d%d", np.arange(n_q * n_d)))
    run = pa.table({"qid": qid, "docid": docid, "score": (n_d - position).astype(np.float64)})
    picked = rng.choice(n_d, n_q) + np.arange(n_q) * n_d
    qrels = pa.table(
        {
            "qid": qid.take(pa.array(picked)),
            "docid": docid.take(pa.array(picked)),
            "rel": np.ones(n_q, dtype=np.int64),
        }
    )
    want = np.where(position[picked] <= 10, 1.0 / position[picked], 0.0)
    for ties in ("trec_eval", "average"):
        result = score_run(run, qrels, "rr@10", ties=ties)
        order = np.argsort(np.char.mod("q%d", np.arange(n_q)))
        np.testing.assert_allclose(result.values["rr@10"], want[order], rtol=1e-14)
        assert result.n_ranked_rows == n_q * n_d


def test_a_parquet_dataset_scores_like_the_table_with_a_memory_limit(tmp_path):
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    from evalvalidity.io.tables import conform

    rng = np.random.default_rng(3)
    n = 5_000
    run = conform(
        pa.table(
            {
                "qid": [f"q{i % 50}" for i in range(n)],
                "docid": [f"d{i}" for i in range(n)],
                "score": rng.random(n),
                "line": np.arange(1, n + 1),
            }
        ),
        "run",
    )
    qrels = pa.table(
        {
            "qid": [f"q{i}" for i in range(50)],
            "docid": [f"d{i * 7}" for i in range(50)],
            "rel": [1] * 50,
        }
    )
    path = tmp_path / "run.parquet"
    pq.write_table(run, path, row_group_size=1_000)
    lazy = score_run(pads.dataset(path), qrels, "rr@10, ap", memory_limit="200MB")
    eager = score_run(run, qrels, "rr@10, ap")
    assert lazy.qids.tolist() == eager.qids.tolist()
    for name in ("rr@10", "ap"):
        assert lazy.values[name].tolist() == eager.values[name].tolist()


def _dataset_case() -> tuple[pa.Table, pa.Table]:
    from evalvalidity.io.tables import conform

    rng = np.random.default_rng(5)
    n = 3_000
    run = conform(
        pa.table(
            {
                "qid": [f"q{i % 30}" for i in range(n)],
                "docid": [f"d{i}" for i in range(n)],
                "score": np.round(rng.random(n), 2),  # ties, broken by docid
                "line": np.arange(1, n + 1),
            }
        ),
        "run",
    )
    qrels = pa.table(
        {
            "qid": [f"q{i}" for i in range(30)] * 2,
            "docid": [f"d{i * 11}" for i in range(30)] + [f"d{i * 13 + 1}" for i in range(30)],
            "rel": [1] * 30 + [2] * 30,
        }
    )
    return run, qrels


def _same_scores(a: ScoreResult, b: ScoreResult) -> None:
    assert a.qids.tolist() == b.qids.tolist()
    for name in a.values:
        assert a.values[name].tolist() == b.values[name].tolist()
    assert a.n_ranked_rows == b.n_ranked_rows
    assert a.unjudged_qids == b.unjudged_qids


def test_a_plain_parquet_dataset_is_read_by_duckdb_itself(tmp_path):
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    from evalvalidity.io.scoring import _parquet_files

    run, qrels = _dataset_case()
    path = tmp_path / "run.parquet"
    pq.write_table(run, path, row_group_size=500)
    assert _parquet_files(pads.dataset(path)) == [str(path)]
    eager = score_run(run, qrels, "rr@10, ndcg@10, ap")
    for limit in (None, "200MB"):
        lazy = score_run(pads.dataset(path), qrels, "rr@10, ndcg@10, ap", memory_limit=limit)
        _same_scores(lazy, eager)
    # two files of one dataset: both are read
    half = run.num_rows // 2
    (tmp_path / "two").mkdir()
    pq.write_table(run.slice(0, half), tmp_path / "two" / "a.parquet")
    pq.write_table(run.slice(half), tmp_path / "two" / "b.parquet")
    two = pads.dataset(tmp_path / "two", format="parquet")
    assert len(_parquet_files(two) or []) == 2
    _same_scores(score_run(two, qrels, "rr@10, ndcg@10, ap", memory_limit="200MB"), eager)


def test_a_dataset_that_filters_casts_or_partitions_is_scanned_as_it_reads(tmp_path):
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    from evalvalidity.io._compute import pc
    from evalvalidity.io.scoring import _parquet_files

    run, qrels = _dataset_case()
    path = tmp_path / "run.parquet"
    pq.write_table(run, path)
    metrics = "rr@10, ndcg@10, ap"
    eager = score_run(run, qrels, metrics)
    # a filter: only its rows are scored
    kept = pc.not_equal(run.column("qid"), "q3")
    filtered = pads.dataset(path).filter(pads.field("qid") != "q3")
    assert _parquet_files(filtered) is None
    _same_scores(
        score_run(filtered, qrels, metrics, memory_limit="200MB"),
        score_run(run.filter(kept), qrels, metrics),
    )
    # a stored column of another type, cast by the dataset's schema
    narrow = run.set_column(2, "score", pc.cast(run.column("score"), pa.float32()))
    pq.write_table(narrow, tmp_path / "narrow.parquet")
    cast = pads.dataset(tmp_path / "narrow.parquet", schema=run.schema)
    assert _parquet_files(cast) is None
    wide = narrow.set_column(2, "score", pc.cast(narrow.column("score"), pa.float64()))
    _same_scores(
        score_run(cast, qrels, metrics, memory_limit="200MB"), score_run(wide, qrels, metrics)
    )
    # the qid held by the folder names (hive partitioning), not by the files
    pads.write_dataset(
        run, tmp_path / "parts", format="parquet", partitioning=["qid"], partitioning_flavor="hive"
    )
    parts = pads.dataset(tmp_path / "parts", format="parquet", partitioning="hive")
    assert _parquet_files(parts) is None
    _same_scores(score_run(parts, qrels, metrics, memory_limit="200MB"), eager)
    # a file in a folder whose name looks like a partition: the file's qids count
    (tmp_path / "qid=q0").mkdir()
    pq.write_table(run, tmp_path / "qid=q0" / "run.parquet")
    folder = pads.dataset(tmp_path / "qid=q0" / "run.parquet")
    assert _parquet_files(folder) == [str(tmp_path / "qid=q0" / "run.parquet")]
    _same_scores(score_run(folder, qrels, metrics, memory_limit="200MB"), eager)
    # a file name DuckDB would take for a pattern
    odd = tmp_path / "run[1].parquet"
    pq.write_table(run, odd)
    assert _parquet_files(pads.dataset(odd)) is None
    _same_scores(score_run(pads.dataset(odd), qrels, metrics), eager)


def test_a_dataset_with_a_duplicate_names_its_lines(tmp_path):
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    from evalvalidity.io.tables import conform

    run = conform(
        pa.table(
            {
                "qid": ["1", "1", "1"],
                "docid": ["a", "b", "a"],
                "score": [3.0, 2.0, 1.0],
                "line": [4, 5, 9],
            }
        ),
        "run",
    )
    pq.write_table(run, tmp_path / "run.parquet")
    qrels = pa.table({"qid": ["1"], "docid": ["a"], "rel": [1]})
    with pytest.raises(InputDataError, match=r"ranks the document 'a' twice \(line 4 and line 9\)"):
        score_run(pads.dataset(tmp_path / "run.parquet"), qrels, "rr@10", run_name="big.trec")
    with pytest.raises(ParameterError, match="must have the run schema; missing or mistyped"):
        score_run(
            pads.dataset(tmp_path / "run.parquet").replace_schema(
                pa.schema([("qid", pa.string())])
            ),
            qrels,
            "rr@10",
        )
    with pytest.raises(ParameterError, match="must be a size such as '2GB'. Got 5 instead."):
        score_run(run, qrels, "rr@10", memory_limit=5)
