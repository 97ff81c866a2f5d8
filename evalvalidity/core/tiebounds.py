r"""How much a score depends on the order of tied items: exact worst, best and average.

A ranking with tied scores does not fix the order inside each tie group. Every metric of
:mod:`evalvalidity.core.metrics` improves when a relevant item moves ahead of a non-relevant one
(and, for nDCG, when a higher grade moves ahead of a lower one), and tie groups do not overlap,
so the extreme orders are found group by group:

- worst: inside each group the relevant items take the group's last slots, lowest grade first
  (the highest grade ends the group);
- best: they take the group's first slots, highest grade first.

For a binary metric "relevant" means grade >= the metric's threshold; items below it are
placed like non-relevant ones. The tie-averaged value is :func:`~evalvalidity.core.kernels.
evaluate_tied`'s exact expectation over uniformly random orders of every group.

Examples
--------
>>> from evalvalidity.core.kernels import Judged, TiedHits
>>> judged = Judged.from_items(query=[0], grade=[1], n_queries=1)
>>> tied = TiedHits([0], [1], [3], item_group=[0], item_grade=[1])
>>> bounds = tie_bounds("rr", tied, judged)
>>> bounds.worst.tolist(), bounds.best.tolist(), bounds.average.round(4).tolist()
([0.3333333333333333], [1.0], [0.6111])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalvalidity.core._validate import _is_real, _show
from evalvalidity.core.kernels import Hits, Judged, TiedHits, evaluate, evaluate_tied
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import ParameterError

__all__ = ["TieBounds", "extreme_orders", "tie_bounds"]


@dataclass(frozen=True)
class TieBounds:
    """Per-query range of a metric over the orders of each tie group.

    Attributes
    ----------
    metric : Metric
    worst, best : numpy.ndarray
        float64, length Q: the value of the worst and of the best order of every tie group.
    average : numpy.ndarray
        float64, length Q: the expected value over uniformly random orders of every group.

    Examples
    --------
    >>> b = TieBounds(parse_metric("p@1"), np.array([0.0, 1.0]), np.array([1.0, 1.0]),
    ...               np.array([0.5, 1.0]))
    >>> b.spread.tolist(), b.mean_worst, b.mean_best, b.moved(0.25).tolist()
    ([1.0, 0.0], 0.5, 1.0, [0])
    """

    metric: Metric
    worst: np.ndarray
    best: np.ndarray
    average: np.ndarray

    @property
    def spread(self) -> np.ndarray:
        """Best − worst per query."""
        return np.asarray(self.best - self.worst)

    @property
    def mean_worst(self) -> float:
        """The benchmark's value (mean over queries) when every tie is broken worst."""
        return float(np.mean(self.worst))

    @property
    def mean_best(self) -> float:
        """The benchmark's value when every tie is broken best."""
        return float(np.mean(self.best))

    @property
    def mean_average(self) -> float:
        """The benchmark's tie-averaged value."""
        return float(np.mean(self.average))

    def moved(self, threshold: float) -> np.ndarray:
        """Indices of the queries whose value moves by more than ``threshold`` (best − worst).

        ``threshold`` is typically the smallest detectable difference of the benchmark.
        """
        if not _is_real(threshold) or not np.isfinite(threshold) or threshold < 0:
            raise ParameterError(
                "The 'threshold' parameter of TieBounds.moved must be a finite number >= 0."
                f" Got {_show(threshold)} instead."
            )
        return np.flatnonzero(self.spread > threshold)


def extreme_orders(metric: Metric | str, tied: TiedHits) -> tuple[Hits, Hits]:
    """The positions of the judged items in the worst and in the best order of every tie group.

    Parameters
    ----------
    metric : Metric or str
        Sets what "relevant" means: grade >= the threshold (binary metrics) or the grade itself
        as a gain (nDCG).
    tied : TiedHits

    Returns
    -------
    (Hits, Hits)
        The worst and the best order, one hit per item of ``tied`` (in its order).

    Examples
    --------
    Two items of grades 1 and 2 in a group of four slots starting at position 3:

    >>> tied = TiedHits([0], [3], [4], item_group=[0, 0], item_grade=[1, 2])
    >>> worst, best = extreme_orders("ndcg", tied)
    >>> worst.position.tolist(), best.position.tolist()
    ([5, 6], [4, 3])
    >>> worst, best = extreme_orders("p@5[rel>=2]", tied)   # grade 1 counts as non-relevant
    >>> worst.position.tolist(), best.position.tolist()
    ([5, 6], [4, 3])
    """
    metric = _metric(metric, "extreme_orders")
    if not isinstance(tied, TiedHits):
        raise ParameterError(
            "The 'tied' parameter of extreme_orders must be TiedHits."
            f" Got {type(tied).__name__} instead."
        )
    return _extreme_orders(metric, tied)


def _metric(metric: Metric | str, func: str) -> Metric:
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        return parse_metric(metric)
    raise ParameterError(
        f"The 'metric' parameter of {func} must be a Metric or its spelling."
        f" Got {type(metric).__name__} instead."
    )


def _extreme_orders(metric: Metric, tied: TiedHits) -> tuple[Hits, Hits]:
    group = tied.item_group
    grade = tied.item_grade
    # The weight that decides the order: relevance at the threshold for binary metrics, the
    # grade (gains increase with it) for nDCG; the grade breaks ties so the order is total.
    weight = (grade >= metric.rel).astype(np.int64) if metric.binary else grade
    n_items = len(group)
    start = tied.group_start[group]
    size = tied.group_size[group]
    listed = np.bincount(group, minlength=len(tied.group_query))[group]
    query = tied.group_query[group]

    best_order = np.lexsort((-grade, -weight, group))
    best_rank = _rank_within(group[best_order])
    best = np.empty(n_items, np.int64)
    best[best_order] = start[best_order] + best_rank

    worst_order = np.lexsort((grade, weight, group))
    worst_rank = _rank_within(group[worst_order])
    worst = np.empty(n_items, np.int64)
    worst[worst_order] = (start + size - listed)[worst_order] + worst_rank
    return Hits(query, worst, grade), Hits(query, best, grade)


def _rank_within(sorted_group: np.ndarray) -> np.ndarray:
    """0-based rank of each entry among the entries of its group (input sorted by group)."""
    return np.arange(len(sorted_group)) - np.searchsorted(sorted_group, sorted_group, "left")


def tie_bounds(metric: Metric | str, tied: TiedHits, judged: Judged) -> TieBounds:
    r"""Worst, best and tie-averaged value of a metric per query.

    Parameters
    ----------
    metric : Metric or str
    tied : TiedHits
        The tie groups of each query's ranking that hold judged-relevant items.
    judged : Judged
        Every query's judged grades; fixes Q (>= 1).

    Returns
    -------
    TieBounds

    Notes
    -----
    With :math:`\Pi` the set of orders that permute items only inside tie groups, and
    :math:`m(\pi)` the metric of order :math:`\pi` (trec_eval semantics, as
    :func:`~evalvalidity.core.kernels.evaluate`):

    .. math::

        \mathrm{worst} = \min_{\pi \in \Pi} m(\pi), \quad
        \mathrm{best} = \max_{\pi \in \Pi} m(\pi), \quad
        \mathrm{average} = \frac{1}{|\Pi|} \sum_{\pi \in \Pi} m(\pi).

    The minimum and maximum are attained by the orders of :func:`extreme_orders`, since every
    metric is monotone under moving a relevant item (or a higher gain) ahead inside a group.

    Raises
    ------
    ParameterError
        For Q = 0, or items inconsistent with ``judged``.

    Examples
    --------
    Query 0 ties its first four items, two of them relevant; query 1 has no ties:

    >>> judged = Judged.from_items(query=[0, 0, 1], grade=[1, 1, 1], n_queries=2)
    >>> tied = TiedHits(group_query=[0, 1], group_start=[1, 2], group_size=[4, 1],
    ...                 item_group=[0, 0, 1], item_grade=[1, 1, 1])
    >>> bounds = tie_bounds("ap", tied, judged)
    >>> bounds.worst.round(4).tolist(), bounds.best.tolist()    # (1/3 + 2/4)/2, 1
    ([0.4167, 0.5], [1.0, 0.5])
    >>> bounds.average.round(4).tolist(), bounds.mean_worst, bounds.moved(0.1).tolist()
    ([0.6806, 0.5], 0.4583333333333333, [0])
    """
    func = "tie_bounds"
    metric = _metric(metric, func)
    if not isinstance(tied, TiedHits):
        raise ParameterError(
            f"The 'tied' parameter of {func} must be TiedHits. Got {type(tied).__name__} instead."
        )
    if not isinstance(judged, Judged):
        raise ParameterError(
            f"The 'judged' parameter of {func} must be Judged. Got {type(judged).__name__} instead."
        )
    if judged.n_queries < 1:
        raise ParameterError(f"The 'judged' parameter of {func} must hold at least one query.")
    average = evaluate_tied(metric, tied, judged)
    worst_hits, best_hits = _extreme_orders(metric, tied)
    worst = evaluate(metric, worst_hits, judged)
    best = evaluate(metric, best_hits, judged)
    # The average lies between the extremes; float rounding may put it an ulp outside.
    average = np.clip(average, worst, best)
    return TieBounds(metric, worst, best, average)
