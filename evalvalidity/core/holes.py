r"""Judgement holes: how much of each ranking is unjudged, and what that could do to the score.

A hole is a ranked document the judgements do not mention for that query. trec_eval scores it
as non-relevant; with shallow pools or model-made judgements it may well be relevant. Inputs
are integer-coded as in :mod:`evalvalidity.core.nulls` (queries 0..Q−1, document codes >= 0,
rankings deduplicated to documents); the judgements list every judged (query, document) with
its grade, non-relevant ones (grade <= 0) included.

Examples
--------
Query 0 ranks documents 4, 5, 6; only 5 is judged (relevant):

>>> mask = judged_mask([0, 0, 0], [4, 5, 6], [0], [5])
>>> mask.tolist()
[False, True, False]
>>> judged_at_k([0, 0, 0], [1, 2, 3], mask, k=2, n_queries=1).share.tolist()
[0.5]
>>> bounds = hole_bounds([0, 0, 0], [4, 5, 6], [1, 2, 3], [0], [5], [1],
...                      metric="rr@10", n_queries=1)
>>> bounds.low.tolist(), bounds.high.tolist()
([0.5], [1.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalvalidity.core._validate import _codes, _equal_lengths, _int_at_least, _queries
from evalvalidity.core.kernels import Hits, Judged, evaluate
from evalvalidity.core.metrics import Metric
from evalvalidity.core.nulls import _judgements, _run
from evalvalidity.core.tiebounds import _metric
from evalvalidity.errors import ParameterError

__all__ = ["HoleBounds", "JudgedAtK", "hole_bounds", "judged_at_k", "judged_mask"]


def _lookup_grades(
    run_query: np.ndarray, run_doc: np.ndarray, query: np.ndarray, doc: np.ndarray, grade: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each run row is judged, and its grade (0 where it is not)."""
    if len(query) == 0:
        return np.zeros(len(run_query), bool), np.zeros(len(run_query), np.int64)
    width = int(max(run_doc.max(initial=-1), doc.max(initial=-1))) + 1
    keys = query * width + doc
    order = np.argsort(keys)
    keys = keys[order]
    wanted = run_query * width + run_doc
    at = np.searchsorted(keys, wanted)
    np.minimum(at, len(keys) - 1, out=at)
    found = keys[at] == wanted
    del wanted, keys
    run_grade = np.asarray(grade, dtype=np.int64)[order][at]
    run_grade[~found] = 0
    return found, run_grade


def judged_mask(run_query: Any, run_doc: Any, judged_query: Any, judged_doc: Any) -> np.ndarray:
    """True for each run row whose (query, document) is judged, with any grade.

    Parameters
    ----------
    run_query, run_doc : array-like of int
        One row per ranked item.
    judged_query, judged_doc : array-like of int
        One row per judgement.

    Returns
    -------
    numpy.ndarray
        bool, one entry per run row.

    Examples
    --------
    >>> judged_mask([0, 1], [7, 7], [1], [7]).tolist()
    [False, True]
    """
    func = "judged_mask"
    rq = _codes(run_query, "run_query", func)
    rd = _codes(run_doc, "run_doc", func)
    jq = _codes(judged_query, "judged_query", func)
    jd = _codes(judged_doc, "judged_doc", func)
    _equal_lengths(func, run_query=rq, run_doc=rd)
    _equal_lengths(func, judged_query=jq, judged_doc=jd)
    for name, array in (
        ("run_doc", rd),
        ("judged_doc", jd),
        ("run_query", rq),
        ("judged_query", jq),
    ):
        if np.any(array < 0):
            raise ParameterError(f"The '{name}' parameter of {func} must hold codes >= 0.")
    return _lookup_grades(rq, rd, jq, jd, np.zeros(len(jq), np.int64))[0]


@dataclass(frozen=True)
class JudgedAtK:
    """The share of each ranking's top k that is judged.

    Attributes
    ----------
    k : int
    judged : numpy.ndarray
        int64, length Q: judged items at positions <= k.
    depth : numpy.ndarray
        int64, length Q: ranked items at positions <= k (k, or fewer for a short ranking).
    share : numpy.ndarray
        float64, length Q: ``judged / depth``; 1 for a query with nothing ranked in the top k
        (it has no hole).
    overall : float
        Σ judged / Σ depth over the benchmark (1 when nothing is ranked).
    """

    k: int
    judged: np.ndarray
    depth: np.ndarray
    share: np.ndarray
    overall: float


def judged_at_k(
    run_query: Any, run_position: Any, run_judged_mask: Any, k: int, n_queries: int
) -> JudgedAtK:
    r"""judged@k: the share of the top k of each ranking that has a judgement.

    Parameters
    ----------
    run_query, run_position : array-like of int
        One row per ranked item: query index in [0, Q) and 1-based position.
    run_judged_mask : array-like of bool
        True where the row is judged (see :func:`judged_mask`).
    k : int
        The depth, >= 1.
    n_queries : int
        Q >= 1.

    Returns
    -------
    JudgedAtK

    Notes
    -----
    .. math::

        \mathrm{judged@}k_q = \frac{|\{p \le k : \text{item at } p \text{ judged}\}|}
        {|\{p \le k : \text{an item is ranked at } p\}|}, \qquad
        \mathrm{overall} = \frac{\sum_q \text{numerator}_q}{\sum_q \text{denominator}_q}.

    The denominator is the number of items ranked in the top k, so a ranking shorter than k
    that is fully judged has judged@k = 1.

    Examples
    --------
    >>> result = judged_at_k([0, 0, 1], [1, 2, 1], [True, False, False], k=10, n_queries=3)
    >>> result.share.tolist(), result.depth.tolist(), result.overall
    ([0.5, 0.0, 1.0], [2, 1, 0], 0.3333333333333333)
    """
    func = "judged_at_k"
    n_queries = _int_at_least(n_queries, 1, "n_queries", func)
    k = _int_at_least(k, 1, "k", func)
    query = _codes(run_query, "run_query", func)
    position = _codes(run_position, "run_position", func)
    mask = np.asarray(run_judged_mask)
    if mask.ndim != 1 or not (mask.size == 0 or mask.dtype == np.bool_):
        raise ParameterError(
            f"The 'run_judged_mask' parameter of {func} must be a 1-D array of booleans."
            f" Got shape {mask.shape} and dtype {mask.dtype} instead."
        )
    _equal_lengths(func, run_query=query, run_position=position, run_judged_mask=mask)
    _queries(query, "run_query", func, n_queries)
    if np.any(position < 1):
        raise ParameterError(f"The 'run_position' parameter of {func} must hold positions >= 1.")
    top = position <= k
    depth = np.bincount(query[top], minlength=n_queries)
    judged = np.bincount(query[top & mask.astype(bool)], minlength=n_queries)
    share = np.ones(n_queries)
    np.divide(judged, depth, out=share, where=depth > 0)
    total = int(depth.sum())
    overall = float(judged.sum() / total) if total else 1.0
    return JudgedAtK(k, judged, depth, share, overall)


@dataclass(frozen=True)
class HoleBounds:
    """A metric with the holes scored non-relevant (as trec_eval does) and all relevant.

    Attributes
    ----------
    metric : Metric
    scored : numpy.ndarray
        float64, length Q: holes non-relevant, the value trec_eval reports.
    filled : numpy.ndarray
        Holes at positions <= the metric's cutoff (every position without one) relevant with
        grade ``hole_grade``, and added to the query's judged items (R and the ideal DCG).
    low, high : numpy.ndarray
        ``minimum(scored, filled)`` and ``maximum(scored, filled)``.
    holes : numpy.ndarray
        int64, length Q: the holes at positions <= the cutoff.
    hole_grade : int
        The grade given to a filled hole.
    """

    metric: Metric
    scored: np.ndarray
    filled: np.ndarray
    low: np.ndarray
    high: np.ndarray
    holes: np.ndarray
    hole_grade: int

    @property
    def mean_low(self) -> float:
        """The benchmark's score at the low end."""
        return float(np.mean(self.low))

    @property
    def mean_high(self) -> float:
        """The benchmark's score at the high end."""
        return float(np.mean(self.high))

    @property
    def depends_on_holes(self) -> np.ndarray:
        """True for the queries whose value changes when their holes are filled."""
        return np.asarray(np.abs(self.filled - self.scored) > 1e-12)


def hole_bounds(
    run_query: Any,
    run_doc: Any,
    run_position: Any,
    judged_query: Any,
    judged_doc: Any,
    judged_grade: Any,
    *,
    metric: Metric | str,
    n_queries: int,
    hole_grade: int | None = None,
) -> HoleBounds:
    r"""The range a score would take if the unjudged documents were all relevant or all not.

    Parameters
    ----------
    run_query, run_doc, run_position : array-like of int
        One row per ranked item, deduplicated to documents.
    judged_query, judged_doc, judged_grade : array-like of int
        Every judgement, non-relevant ones (grade <= 0) included: a document absent from them is
        a hole.
    metric : Metric or str
    n_queries : int
        Q >= 1.
    hole_grade : int, optional
        The grade of a filled hole, >= 1. Default: the largest judged grade (1 for binary
        judgements), and at least the metric's threshold so that a filled hole is relevant.

    Returns
    -------
    HoleBounds

    Notes
    -----
    With :math:`m(\cdot)` the metric (trec_eval semantics), :math:`H_q` the holes of query q
    at positions <= k (all positions without a cutoff) and h the hole grade:

    .. math::

        \mathrm{scored}_q = m(\text{holes non-relevant}), \qquad
        \mathrm{filled}_q = m(H_q \text{ relevant with grade } h;\ R_q \to R_q + |H_q|).

    For RR, Hit, P@k and R@k filling a hole never lowers the value, so [scored, filled] is the
    exact range over every relevant/non-relevant assignment of the holes. For AP, R-precision
    and nDCG a filled hole also raises R (or the ideal DCG) and can lower the value, so
    [low, high] spans the two extreme scenarios and not necessarily every assignment in between.

    Raises
    ------
    ParameterError
        For inconsistent arrays, or ``hole_grade`` < 1 or below the metric's threshold.

    Examples
    --------
    AP with a relevant document at position 1, a non-relevant one at 2 and a hole at 3:
    filling the hole raises R to 2 and gives (1 + 2/3)/2, below the scored value:

    >>> b = hole_bounds([0, 0, 0], [1, 2, 3], [1, 2, 3], [0, 0], [1, 2], [1, 0],
    ...                 metric="ap", n_queries=1)
    >>> b.scored.tolist(), b.filled.round(4).tolist(), b.holes.tolist()
    ([1.0], [0.8333], [1])
    >>> b.low.round(4).tolist(), b.high.tolist(), b.depends_on_holes.tolist()
    ([0.8333], [1.0], [True])
    """
    func = "hole_bounds"
    metric = _metric(metric, func)
    n_queries = _int_at_least(n_queries, 1, "n_queries", func)
    query, doc, position = _run(run_query, run_doc, run_position, func, n_queries)
    jq, jd, jg = _judgements(judged_query, judged_doc, judged_grade, func, n_queries)
    if hole_grade is None:
        grade = max(int(jg.max(initial=1)), 1, metric.rel)
    else:
        grade = _int_at_least(hole_grade, max(1, metric.rel), "hole_grade", func)
    found, run_grade = _lookup_grades(query, doc, jq, jd, jg)
    relevant = jg >= 1
    judged = Judged.from_items(jq[relevant], jg[relevant], n_queries)
    hit = run_grade >= 1
    scored = evaluate(metric, Hits(query[hit], position[hit], run_grade[hit]), judged)

    depth = metric.k if metric.k is not None else int(position.max(initial=0))
    hole = ~found & (position <= depth)
    filled_grade = np.where(hole, grade, run_grade)
    take = hit | hole
    filled_judged = Judged.from_items(
        np.concatenate((jq[relevant], query[hole])),
        np.concatenate((jg[relevant], np.full(int(hole.sum()), grade))),
        n_queries,
    )
    filled = evaluate(metric, Hits(query[take], position[take], filled_grade[take]), filled_judged)
    holes = np.bincount(query[hole], minlength=n_queries)
    return HoleBounds(
        metric,
        scored,
        filled,
        np.minimum(scored, filled),
        np.maximum(scored, filled),
        holes,
        grade,
    )
