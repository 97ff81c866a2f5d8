"""Tests of evalvalidity.core.tiebounds: brute force over every order inside the tie groups."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from brute import brute_metric

from evalvalidity.core.kernels import Judged, TiedHits
from evalvalidity.core.metrics import parse_metric
from evalvalidity.core.tiebounds import TieBounds, extreme_orders, tie_bounds
from evalvalidity.errors import ParameterError

METRICS = [
    parse_metric(s)
    for s in (
        "rr",
        "rr@2",
        "hit@1",
        "hit@3[rel>=2]",
        "p@2",
        "p@4",
        "r@3",
        "r@2[rel>=2]",
        "rprec",
        "ap",
        "ap@3",
        "ap[rel>=3]",
        "ndcg",
        "ndcg@2",
        "ndcg_exp",
        "ndcg_exp@3",
    )
]


def heavy_ties(rng, n_queries=3):
    """Rankings of up to 7 items split into consecutive tie groups; grades 0..3 per item."""
    layout = []
    for _ in range(n_queries):
        length = int(rng.integers(1, 8))
        grades = rng.integers(0, 4, size=length).tolist()
        cuts = (
            sorted(rng.choice(np.arange(1, length), size=min(length - 1, 2), replace=False))
            if length > 1
            else []
        )
        bounds = [0, *[int(c) for c in cuts], length]
        groups = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
        unranked = rng.integers(0, 3, size=int(rng.integers(0, 2))).tolist()  # judged, not ranked
        layout.append((grades, groups, [g for g in unranked if g > 0]))
    gq, gs, gz, ig, igr, jq, jg = [], [], [], [], [], [], []
    for q, (grades, groups, unranked) in enumerate(layout):
        for a, b in groups:
            if any(g > 0 for g in grades[a:b]):
                for g in grades[a:b]:
                    if g > 0:
                        ig.append(len(gq))
                        igr.append(g)
                gq.append(q)
                gs.append(a + 1)
                gz.append(b - a)
        for g in [g for g in grades if g > 0] + unranked:
            jq.append(q)
            jg.append(g)
    tied = TiedHits(gq, gs, gz, ig, igr)
    return tied, Judged.from_items(jq, jg, n_queries), layout


def brute_tie_values(metric, grades, groups, unranked):
    judged = [g for g in grades if g > 0] + unranked
    parts = [sorted(set(itertools.permutations(grades[a:b]))) for a, b in groups]
    return [
        brute_metric(metric, [g for part in orders for g in part], judged)
        for orders in itertools.product(*parts)
    ]


@pytest.mark.parametrize("metric", METRICS, ids=str)
@pytest.mark.parametrize("seed", range(6))
def test_tie_bounds_equal_brute_force(metric, seed):
    tied, judged, layout = heavy_ties(np.random.default_rng(seed))
    bounds = tie_bounds(metric, tied, judged)
    for q, (grades, groups, unranked) in enumerate(layout):
        values = brute_tie_values(metric, grades, groups, unranked)
        assert bounds.worst[q] == pytest.approx(min(values), abs=1e-12)
        assert bounds.best[q] == pytest.approx(max(values), abs=1e-12)
        assert bounds.average[q] == pytest.approx(np.mean(values), abs=1e-12)
    assert bounds.mean_worst <= bounds.mean_average <= bounds.mean_best


def test_heavily_tied_run_lists_the_moved_queries():
    # Query 0: all 6 items tied, one relevant; query 1: no ties.
    tied = TiedHits([0, 1], [1, 1], [6, 1], item_group=[0, 1], item_grade=[1, 1])
    judged = Judged.from_items([0, 1], [1, 1], n_queries=2)
    bounds = tie_bounds("rr@10", tied, judged)
    assert bounds.worst.tolist() == [pytest.approx(1 / 6), 1.0]
    assert bounds.spread.tolist() == [pytest.approx(5 / 6), 0.0]
    assert bounds.moved(0.05).tolist() == [0]
    assert bounds.moved(0.9).tolist() == []


def test_extreme_orders_place_grades():
    tied = TiedHits([0], [2], [5], item_group=[0, 0, 0], item_grade=[1, 3, 2])
    worst, best = extreme_orders("ndcg", tied)
    assert worst.position.tolist() == [4, 6, 5] and best.position.tolist() == [4, 2, 3]


def test_tie_bounds_messages():
    judged = Judged.from_items([0], [1], n_queries=1)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'tied' parameter of tie_bounds must be TiedHits. Got list instead."
    )):  # fmt: skip
        tie_bounds("ap", [], judged)
    with pytest.raises(ParameterError, match=re.escape(
        "The 'judged' parameter of tie_bounds must hold at least one query."
    )):  # fmt: skip
        tie_bounds("ap", TiedHits([], [], [], [], []), Judged.from_items([], [], n_queries=0))
    b = TieBounds(parse_metric("ap"), np.zeros(1), np.ones(1), np.full(1, 0.5))
    with pytest.raises(ParameterError, match=re.escape(
        "The 'threshold' parameter of TieBounds.moved must be a finite number >= 0."
        " Got -1 instead."
    )):  # fmt: skip
        b.moved(-1)
