"""Brute-force noise floors: every order of a small pool, scored by plain-Python metrics.

Independent of :mod:`evalvalidity.core.floors` and of the scorer, so that tests can check both
against it. The metric definitions follow trec_eval (``recip_rank``, ``success_k``, ``P_k``,
``recall_k``, ``Rprec``, ``map``, ``map_cut_k``, ``ndcg``, ``ndcg_cut_k``):

- a ranking is the list of grades of the pool's items in ranked order (0 = not relevant);
- ``judged_grades`` are the grades of every judged item of the query, in the pool or not;
  R = how many reach the metric's threshold;
- P@k divides by k even when fewer than k items are ranked; R@k, AP and R-precision divide
  by R; a query with R = 0 (or an ideal DCG of 0) scores 0;
- nDCG's gain is the grade (``ndcg``) or 2^grade − 1 (``ndcg_exp``), its discount
  1/log2(rank + 1), and its ideal DCG@k comes from all judged grades sorted descending.

:func:`brute_floor` enumerates every permutation of the pool (``itertools.permutations``),
:func:`monte_carlo_values` draws random permutations with numpy for larger pools.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from evalvalidity.core.metrics import Metric, parse_metric

__all__ = [
    "brute_ceiling",
    "brute_floor",
    "brute_metric",
    "distinct_orders",
    "monte_carlo_values",
    "random_rankings",
    "ranking_values",
]


def _gain(metric: Metric, grade: int) -> float:
    if grade <= 0:
        return 0.0
    return float(2**grade - 1) if metric.family == "ndcg_exp" else float(grade)


def _dcg(metric: Metric, grades: Sequence[int]) -> float:
    return math.fsum(
        _gain(metric, grade) / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1)
    )


def brute_metric(
    metric: Metric | str, ranking_grades: Sequence[int], judged_grades: Sequence[int]
) -> float:
    """Score one ranking (grades in ranked order) with trec_eval's semantics."""
    metric = parse_metric(metric)
    k = metric.k
    ranking = list(ranking_grades)
    top = ranking if k is None else ranking[:k]
    relevant = [grade >= metric.rel for grade in top]
    n_judged = sum(1 for grade in judged_grades if grade >= metric.rel)
    family = metric.family
    if family == "rr":
        for rank, is_relevant in enumerate(relevant, start=1):
            if is_relevant:
                return 1.0 / rank
        return 0.0
    if family == "hit":
        return 1.0 if any(relevant) else 0.0
    if family == "p":
        assert k is not None
        return sum(relevant) / k
    if family == "r":
        return sum(relevant) / n_judged if n_judged else 0.0
    if family == "rprec":
        if not n_judged:
            return 0.0
        return sum(1 for grade in ranking[:n_judged] if grade >= metric.rel) / n_judged
    if family == "ap":
        if not n_judged:
            return 0.0
        found = 0
        total = 0.0
        for rank, is_relevant in enumerate(relevant, start=1):
            if is_relevant:
                found += 1
                total += found / rank
        return total / n_judged
    # ndcg, ndcg_exp
    ideal_grades = sorted((grade for grade in judged_grades if grade > 0), reverse=True)
    ideal = _dcg(metric, ideal_grades if k is None else ideal_grades[:k])
    if ideal == 0:
        return 0.0
    return _dcg(metric, top) / ideal


@functools.cache
def distinct_orders(pool_grades: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every permutation of the pool, grouped by the grade sequence it produces.

    Returns (sequence, how many of the N! permutations produce it) pairs; the counts add up to
    N!. Each distinct sequence is equally likely, but the counts are kept so that the weights
    come straight from the enumeration.
    """
    counts = Counter(
        tuple(pool_grades[i] for i in order)
        for order in itertools.permutations(range(len(pool_grades)))
    )
    return tuple(sorted(counts.items()))


def brute_floor(
    metric: Metric | str, pool_grades: Sequence[int], judged_grades: Sequence[int]
) -> tuple[float, float]:
    """Mean and variance of the metric over every permutation of the pool."""
    orders = distinct_orders(tuple(pool_grades))
    total = sum(count for _, count in orders)
    values = [(brute_metric(metric, order, judged_grades), count) for order, count in orders]
    mean = math.fsum(value * count for value, count in values) / total
    variance = math.fsum(count * (value - mean) ** 2 for value, count in values) / total
    return mean, variance


def brute_ceiling(
    metric: Metric | str, pool_grades: Sequence[int], judged_grades: Sequence[int]
) -> float:
    """The best value of the metric over every permutation of the pool."""
    orders = distinct_orders(tuple(pool_grades))
    return max(brute_metric(metric, order, judged_grades) for order, _ in orders)


def random_rankings(pool_grades: Sequence[int], draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` uniformly random orders of the pool, one per row (grades in ranked order)."""
    return rng.permuted(np.tile(np.asarray(pool_grades, dtype=np.int64), (draws, 1)), axis=1)


def monte_carlo_values(
    metric: Metric | str,
    pool_grades: Sequence[int],
    judged_grades: Sequence[int],
    draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The metric on ``draws`` uniformly random orders of the pool."""
    return ranking_values(metric, random_rankings(pool_grades, draws, rng), judged_grades)


def ranking_values(
    metric: Metric | str, rankings: np.ndarray, judged_grades: Sequence[int]
) -> np.ndarray:
    """The metric of every row of ``rankings`` (grades in ranked order), vectorised numpy."""
    metric = parse_metric(metric)
    draws, n = rankings.shape
    k = metric.k
    depth = n if k is None else min(k, n)
    top = rankings[:, :depth]
    relevant = top >= metric.rel
    n_judged = sum(1 for grade in judged_grades if grade >= metric.rel)
    family = metric.family
    positions = np.arange(1, depth + 1, dtype=np.float64)
    if family == "rr":
        first = np.argmax(relevant, axis=1)
        return np.where(relevant.any(axis=1), 1.0 / (first + 1), 0.0)
    if family == "hit":
        return relevant.any(axis=1).astype(np.float64)
    if family == "p":
        assert k is not None
        return relevant.sum(axis=1) / k
    if family == "r":
        return relevant.sum(axis=1) / n_judged if n_judged else np.zeros(draws)
    if family == "rprec":
        if not n_judged:
            return np.zeros(draws)
        return (rankings[:, :n_judged] >= metric.rel).sum(axis=1) / n_judged
    if family == "ap":
        if not n_judged:
            return np.zeros(draws)
        found = np.cumsum(relevant, axis=1)
        return (relevant * found / positions).sum(axis=1) / n_judged
    gains = np.where(top > 0, 2.0**top - 1 if family == "ndcg_exp" else top, 0.0)
    dcg = (gains / np.log2(positions + 1)).sum(axis=1)
    ideal_grades = sorted((grade for grade in judged_grades if grade > 0), reverse=True)
    ideal = _dcg(metric, ideal_grades if k is None else ideal_grades[:k])
    return dcg / ideal if ideal > 0 else np.zeros(draws)
