"""Tests of evalvalidity.core.holes: judged@k and hole bounds against every hole assignment."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from brute import brute_metric

from evalvalidity.core.holes import hole_bounds, judged_at_k, judged_mask
from evalvalidity.core.metrics import parse_metric
from evalvalidity.errors import ParameterError

METRICS = [
    parse_metric(s)
    for s in (
        "rr",
        "rr@3",
        "hit@2",
        "hit@4[rel>=2]",
        "p@3",
        "p@5[rel>=2]",
        "r@3",
        "r@6",
        "rprec",
        "ap",
        "ap@3",
        "ndcg",
        "ndcg@3",
        "ndcg_exp@4",
    )
]
MONOTONE = {"rr", "hit", "p", "r"}


def shallow_benchmark(rng, n_queries=4, n_docs=9, length=6):
    """Rankings of ``length`` documents; judgements cover a random part of each ranking."""
    rq, rd, rp, jq, jd, jg = [], [], [], [], [], []
    for q in range(n_queries):
        docs = rng.choice(n_docs, size=length, replace=False).tolist()
        rq += [q] * length
        rd += docs
        rp += list(range(1, length + 1))
        for d in rng.choice(n_docs, size=int(rng.integers(0, 6)), replace=False).tolist():
            jq.append(q)
            jd.append(d)
            jg.append(int(rng.integers(0, 4)))
    return (rq, rd, rp), (jq, jd, jg)


def brute_assignments(metric, run, judgements, q, hole_grade):
    """The metric of query q under every relevant / non-relevant assignment of its holes."""
    grades = {d: g for jq, d, g in zip(*judgements, strict=True) if jq == q}
    ranking = [d for rq, d, _ in sorted(zip(*run, strict=True), key=lambda r: r[2]) if rq == q]
    depth = metric.k if metric.k is not None else len(ranking)
    holes = [p for p, d in enumerate(ranking) if d not in grades and p < depth]
    values = {}
    for chosen in itertools.product((False, True), repeat=len(holes)):
        labels = [max(grades.get(d, 0), 0) for d in ranking]
        extra = []
        for p, fill in zip(holes, chosen, strict=True):
            if fill:
                labels[p] = hole_grade
                extra.append(hole_grade)
        values[chosen] = brute_metric(metric, labels, list(grades.values()) + extra)
    return values, len(holes)


@pytest.mark.parametrize("metric", METRICS, ids=str)
@pytest.mark.parametrize("seed", range(4))
def test_hole_bounds_against_every_assignment(metric, seed):
    rng = np.random.default_rng(seed)
    run, judgements = shallow_benchmark(rng)
    bounds = hole_bounds(*run, *judgements, metric=metric, n_queries=4)
    expected_grade = max(max(judgements[2], default=1), 1, metric.rel)
    assert bounds.hole_grade == expected_grade
    for q in range(4):
        values, n_holes = brute_assignments(metric, run, judgements, q, expected_grade)
        assert bounds.holes[q] == n_holes
        assert bounds.scored[q] == pytest.approx(values[(False,) * n_holes], abs=1e-12)
        assert bounds.filled[q] == pytest.approx(values[(True,) * n_holes], abs=1e-12)
        if metric.family in MONOTONE:
            assert bounds.low[q] == pytest.approx(min(values.values()), abs=1e-12)
            assert bounds.high[q] == pytest.approx(max(values.values()), abs=1e-12)
    assert bounds.mean_low <= bounds.scored.mean() + 1e-15 <= bounds.mean_high + 2e-15


def test_ap_can_fall_when_a_hole_is_filled():
    # Documented: for AP the filled scenario lies below the scored one here.
    b = hole_bounds([0, 0], [1, 2], [1, 5], [0], [1], [1], metric="ap", n_queries=1)
    assert b.filled[0] == pytest.approx((1 + 2 / 5) / 2) and b.scored[0] == 1.0
    assert b.low[0] == b.filled[0] and b.high[0] == 1.0


def test_llm_judged_benchmark_is_flagged_and_a_fully_judged_one_is_not():
    rng = np.random.default_rng(9)
    n_queries = 30
    rq = np.repeat(np.arange(n_queries), 10)
    rd = np.concatenate([rng.choice(1000, 10, replace=False) for _ in range(n_queries)])
    rp = np.tile(np.arange(1, 11), n_queries)
    # Shallow judgements: only the top 2 of each ranking, the first one relevant.
    top2 = rp <= 2
    jq, jd, jg = rq[top2], rd[top2], np.where(rp[top2] == 1, 1, 0)
    mask = judged_mask(rq, rd, jq, jd)
    at10 = judged_at_k(rq, rp, mask, 10, n_queries)
    assert at10.overall == pytest.approx(0.2) and np.all(at10.share == 0.2)
    b = hole_bounds(rq, rd, rp, jq, jd, jg, metric="p@10", n_queries=n_queries)
    assert b.mean_low == pytest.approx(0.1) and b.mean_high == pytest.approx(0.9)
    assert b.depends_on_holes.all()
    full = hole_bounds(
        rq, rd, rp, rq, rd, (rp == 1).astype(int), metric="p@10", n_queries=n_queries
    )
    assert not full.depends_on_holes.any() and full.mean_low == full.mean_high == pytest.approx(0.1)


def test_judged_at_k_short_rankings_and_empty_queries():
    r = judged_at_k([0, 0, 0, 1], [1, 2, 5, 3], [True, False, True, True], k=3, n_queries=3)
    assert r.judged.tolist() == [1, 1, 0] and r.depth.tolist() == [2, 1, 0]
    assert r.share.tolist() == [0.5, 1.0, 1.0] and r.overall == pytest.approx(2 / 3)


def test_holes_messages():
    with pytest.raises(ParameterError, match=re.escape(
        "The 'k' parameter of judged_at_k must be an int >= 1. Got 0 instead."
    )):  # fmt: skip
        judged_at_k([0], [1], [True], k=0, n_queries=1)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'run_judged_mask' parameter of judged_at_k must be a 1-D array of booleans."
        " Got shape (1,) and dtype int64 instead."
    )):  # fmt: skip
        judged_at_k([0], [1], np.array([1]), k=1, n_queries=1)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'hole_grade' parameter of hole_bounds must be an int >= 2. Got 1 instead."
    )):  # fmt: skip
        hole_bounds([0], [1], [1], [0], [1], [1], metric="p@5[rel>=2]", n_queries=1, hole_grade=1)
    with pytest.raises(ParameterError, match=re.escape(
        "The arrays run_query, run_doc of judged_mask must have equal lengths."
        " Got run_query=2, run_doc=1 instead."
    )):  # fmt: skip
        judged_mask([0, 1], [1], [0], [1])
