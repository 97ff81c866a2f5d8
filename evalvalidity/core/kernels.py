"""Per-query metric kernels over the judged-relevant items of a ranking: pure numpy.

The scorer (:mod:`evalvalidity.io.scoring`) and the Monte Carlo code share these kernels. They see
only what a metric needs: where each judged-relevant item landed (:class:`Hits`, or
:class:`TiedHits` when the ranking has ties to average over) and every query's judged grades
(:class:`Judged`, for R and the ideal DCG). Non-relevant and unjudged items never reach numpy.

Semantics are trec_eval's (the measures ``recip_rank``, ``success_k``, ``P_k``, ``recall_k``,
``Rprec``, ``map``, ``map_cut_k``, ``ndcg``, ``ndcg_cut_k``), for a ranking of positions
1, 2, ... and a query with R judged-relevant items (grade >= the metric's threshold):

=============  ==========================================================================
``rr@k``       1 / (position of the first relevant item), 0 if none is at a position <= k
``hit@k``      1 if a relevant item is at a position <= k
``p@k``        (relevant items at positions <= k) / k, always divided by k
``r@k``        (relevant items at positions <= k) / R
``rprec``      (relevant items at positions <= R) / R
``ap@k``       (1/R) Σ over relevant items at positions p <= k of (relevant items up to p) / p
``ndcg@k``     DCG@k / IDCG@k, DCG@k = Σ_{p <= k} gain(p) / log2(p + 1), gain = grade (linear)
               or 2^grade − 1 (``ndcg_exp``); IDCG@k from the judged grades sorted descending
=============  ==========================================================================

A query with R = 0 (or IDCG = 0) scores 0, as in trec_eval.

:func:`evaluate_tied` returns the expected value of the same metrics over all orders of the
items inside each tie group, taken uniformly and independently per group (McSherry & Najork,
"Computing information retrieval performance measures efficiently in the presence of tied
scores", ECIR 2008). It is exact, not sampled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from evalvalidity.core._validate import _distinct_pairs, _weighted_bincount
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.core.types import (
    BoolArray,
    FloatArray,
    IndexArray,
    IntArray,
)
from evalvalidity.errors import ParameterError

__all__ = ["Hits", "Judged", "TiedHits", "evaluate", "evaluate_tied"]


def _int_array(value: object, owner: str, field: str) -> IntArray:
    """Return ``value`` as a read-only 1-D int64 view, or raise naming ``owner.field``."""
    array = np.asarray(value)
    if array.ndim != 1 or not (array.size == 0 or np.issubdtype(array.dtype, np.integer)):
        raise ParameterError(
            f"{owner}.{field} must be a 1-D integer array. Got shape {array.shape}"
            f" and dtype {array.dtype} instead."
        )
    array = array.astype(np.int64, copy=False).view()
    array.flags.writeable = False
    return array


def _same_length(owner: str, **arrays: IntArray) -> None:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ParameterError(f"The arrays of {owner} must have equal lengths. Got {shown}.")


@dataclass(frozen=True, eq=False)
class Judged:
    """The judged-relevant grades of Q queries, in CSR form.

    Attributes
    ----------
    offsets : numpy.ndarray
        int64, shape (Q + 1,): query q's grades are ``grades[offsets[q]:offsets[q + 1]]``.
    grades : numpy.ndarray
        int64 grades >= 1 of every judged-relevant item, sorted descending within each query.
        Items judged 0 or below are not listed: no metric needs them.

    Examples
    --------
    >>> judged = Judged.from_items(query=[0, 0, 2], grade=[1, 3, 2], n_queries=3)
    >>> judged.offsets.tolist(), judged.grades.tolist()
    ([0, 2, 2, 3], [3, 1, 2])
    >>> judged.relevant_count(2).tolist()
    [1, 0, 1]
    """

    offsets: IntArray
    grades: IntArray

    def __post_init__(self) -> None:
        offsets = _int_array(self.offsets, "Judged", "offsets")
        grades = _int_array(self.grades, "Judged", "grades")
        if (
            len(offsets) == 0
            or offsets[0] != 0
            or offsets[-1] != len(grades)
            or np.any(np.diff(offsets) < 0)
        ):
            raise ParameterError(
                "Judged.offsets must start at 0, never decrease and end at len(grades)."
            )
        if np.any(grades < 1):
            raise ParameterError("Judged.grades must hold grades >= 1 only.")
        # A rise between neighbours is allowed only where a query starts (checked on the rises,
        # not with a query index per item: two fewer int64 arrays of the items).
        rises = np.flatnonzero(grades[1:] > grades[:-1]) + 1
        if len(rises) and not np.all(np.isin(rises, offsets)):
            raise ParameterError("Judged.grades must be sorted descending within each query.")
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "grades", grades)

    @classmethod
    def from_items(cls, query: object, grade: object, n_queries: int) -> Judged:
        """Build from one (query index, grade) pair per judged item, in any order.

        Items with grade <= 0 are dropped; the grades of each query are sorted descending.
        """
        query_a = _int_array(query, "Judged.from_items", "query")
        grade_a = _int_array(grade, "Judged.from_items", "grade")
        _same_length("Judged.from_items", query=query_a, grade=grade_a)
        if (
            isinstance(n_queries, bool)
            or not isinstance(n_queries, int | np.integer)
            or (n_queries < 0)
        ):
            raise ParameterError(
                f"The 'n_queries' parameter of Judged.from_items must be an int >= 0."
                f" Got {n_queries!r} instead."
            )
        if np.any((query_a < 0) | (query_a >= n_queries)):
            raise ParameterError(
                f"Judged.from_items: every query index must lie in [0, {n_queries})."
            )
        keep = grade_a >= 1
        query_a, grade_a = query_a[keep], grade_a[keep]
        order = np.lexsort((-grade_a, query_a))
        counts = np.bincount(query_a, minlength=n_queries)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        return cls(offsets, grade_a[order])

    @property
    def n_queries(self) -> int:
        """Q, the number of queries."""
        return len(self.offsets) - 1

    @cached_property
    def _segment(self) -> IndexArray:
        """The query index of every entry of ``grades``."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.offsets))

    def relevant_count(self, rel: int = 1) -> IndexArray:
        """R per query: the number of judged items with grade >= ``rel`` (int64, length Q)."""
        return np.bincount(self._segment[self.grades >= rel], minlength=self.n_queries)

    def ideal_dcg(self, metric: Metric) -> FloatArray:
        """IDCG per query of an nDCG metric: its judged grades in descending order, cut at k."""
        rank = np.arange(len(self.grades)) - self.offsets[self._segment] + 1
        keep = rank <= (metric.k if metric.k is not None else len(self.grades))
        weights = _gain(metric, self.grades[keep]) / np.log2(rank[keep] + 1.0)
        return _weighted_bincount(self._segment[keep], weights, self.n_queries)


@dataclass(frozen=True, eq=False)
class Hits:
    """Where the judged-relevant items landed in each query's ranking.

    Attributes
    ----------
    query : numpy.ndarray
        int64 query index 0..Q−1 of each hit (any order).
    position : numpy.ndarray
        int64 1-based position in the query's (deduplicated) ranking; distinct within a query.
    grade : numpy.ndarray
        int64 judged grade >= 1.

    Examples
    --------
    >>> hits = Hits(query=[1, 0, 0], position=[2, 3, 1], grade=[1, 1, 2])
    >>> hits.position.tolist()
    [2, 3, 1]
    """

    query: IntArray
    position: IntArray
    grade: IntArray

    def __post_init__(self) -> None:
        query = _int_array(self.query, "Hits", "query")
        position = _int_array(self.position, "Hits", "position")
        grade = _int_array(self.grade, "Hits", "grade")
        _same_length("Hits", query=query, position=position, grade=grade)
        if np.any(query < 0):
            raise ParameterError("Hits.query must hold query indices >= 0.")
        if np.any(position < 1):
            raise ParameterError("Hits.position must hold 1-based positions >= 1.")
        if np.any(grade < 1):
            raise ParameterError("Hits.grade must hold grades >= 1 only.")
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "position", position)
        object.__setattr__(self, "grade", grade)

    @cached_property
    def _order(self) -> IndexArray:
        """Indices that sort the hits by (query, position); checks positions are distinct."""
        return _distinct_pairs(
            self.query,
            self.position,
            "Two hits of query {query} share position {value};"
            " positions must be distinct within a query.",
        )


@dataclass(frozen=True, eq=False)
class TiedHits:
    """The tie groups of each query's ranking that hold judged-relevant items.

    A tie group is a run of consecutive positions whose items share one score: every order of
    its items is equally likely. Groups without a judged-relevant item are not listed (they
    only shift positions, which ``group_start`` already accounts for).

    Attributes
    ----------
    group_query : numpy.ndarray
        int64 query index of each group.
    group_start : numpy.ndarray
        int64 1-based position of the group's first slot.
    group_size : numpy.ndarray
        int64 number of ranked items in the group, relevant or not (>= 1). The groups of a
        query must not overlap.
    item_group : numpy.ndarray
        int64, one entry per judged-relevant ranked item: the index of its group.
    item_grade : numpy.ndarray
        int64 grade >= 1 of each such item.

    Examples
    --------
    One query whose first three positions are tied and hold one relevant item:

    >>> tied = TiedHits(group_query=[0], group_start=[1], group_size=[3],
    ...                 item_group=[0], item_grade=[1])
    >>> tied.group_size.tolist()
    [3]
    """

    group_query: IntArray
    group_start: IntArray
    group_size: IntArray
    item_group: IntArray
    item_grade: IntArray

    def __post_init__(self) -> None:
        group_query = _int_array(self.group_query, "TiedHits", "group_query")
        group_start = _int_array(self.group_start, "TiedHits", "group_start")
        group_size = _int_array(self.group_size, "TiedHits", "group_size")
        item_group = _int_array(self.item_group, "TiedHits", "item_group")
        item_grade = _int_array(self.item_grade, "TiedHits", "item_grade")
        _same_length(
            "TiedHits (groups)",
            group_query=group_query,
            group_start=group_start,
            group_size=group_size,
        )
        _same_length("TiedHits (items)", item_group=item_group, item_grade=item_grade)
        if np.any(group_query < 0):
            raise ParameterError("TiedHits.group_query must hold query indices >= 0.")
        if np.any(group_start < 1):
            raise ParameterError("TiedHits.group_start must hold 1-based positions >= 1.")
        if np.any(group_size < 1):
            raise ParameterError("TiedHits.group_size must hold sizes >= 1.")
        if np.any((item_group < 0) | (item_group >= len(group_query))):
            raise ParameterError(
                f"TiedHits.item_group must hold group indices in [0, {len(group_query)})."
            )
        if np.any(item_grade < 1):
            raise ParameterError("TiedHits.item_grade must hold grades >= 1 only.")
        if np.any(np.bincount(item_group, minlength=len(group_query)) > group_size):
            raise ParameterError("A tie group of TiedHits holds more items than its size.")
        order = np.lexsort((group_start, group_query))
        query_s, start_s = group_query[order], group_start[order]
        end_s = start_s + group_size[order] - 1
        if np.any((query_s[1:] == query_s[:-1]) & (start_s[1:] <= end_s[:-1])):
            raise ParameterError("The tie groups of a query in TiedHits must not overlap.")
        for name, value in (
            ("group_query", group_query),
            ("group_start", group_start),
            ("group_size", group_size),
            ("item_group", item_group),
            ("item_grade", item_grade),
        ):
            object.__setattr__(self, name, value)

    @cached_property
    def _order(self) -> IndexArray:
        """Indices that sort the groups by (query, start)."""
        return np.lexsort((self.group_start, self.group_query))

    @classmethod
    def from_hits(cls, hits: Hits) -> TiedHits:
        """Give the tie structure of a ranking without ties: every hit alone in its group.

        Examples
        --------
        >>> TiedHits.from_hits(Hits([0, 0], [4, 2], [1, 3])).group_start.tolist()
        [4, 2]
        """
        if not isinstance(hits, Hits):
            raise ParameterError(f"TiedHits.from_hits needs Hits. Got {type(hits).__name__}.")
        n = len(hits.query)
        return cls(
            hits.query,
            hits.position,
            np.ones(n, np.int64),
            np.arange(n, dtype=np.int64),
            hits.grade,
        )


# --------------------------------------------------------------------------- shared helpers


def _gain(metric: Metric, grade: IntArray) -> FloatArray:
    """trec_eval's linear gain (the grade), or 2^grade − 1 for ``ndcg_exp``."""
    if metric.spec.gain == "exponential":
        return np.exp2(grade.astype(np.float64)) - 1.0
    return grade.astype(np.float64)


def _ratio(numerator: FloatArray, denominator: FloatArray | IndexArray) -> FloatArray:
    """Divide, giving 0 where the denominator is 0 (R = 0, IDCG = 0)."""
    out = np.zeros(len(denominator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _check_metric(metric: Metric | str, caller: str) -> Metric:
    if isinstance(metric, str):
        return parse_metric(metric)
    if not isinstance(metric, Metric):
        raise ParameterError(
            f"The 'metric' parameter of {caller} must be a Metric or its spelling."
            f" Got {type(metric).__name__} instead."
        )
    return metric


def _check_judged(judged: Judged, caller: str) -> None:
    if not isinstance(judged, Judged):
        raise ParameterError(
            f"The 'judged' parameter of {caller} must be Judged. Got {type(judged).__name__}."
        )


def _check_consistent(query: IntArray, grade: IntArray, judged: Judged, what: str) -> None:
    """Every ranked relevant item must be one of its query's judged items."""
    n_queries = judged.n_queries
    if np.any(query >= n_queries):
        raise ParameterError(
            f"{what} names a query index >= {n_queries}, the number of queries in Judged."
        )
    # Count (query, grade) pairs on both sides: hits may not outnumber judged items of a grade.
    top = int(max(grade.max(initial=0), judged.grades.max(initial=0))) + 1
    hit_keys: IntArray
    judged_keys: IntArray
    hit_keys, hit_counts = np.unique(query * top + grade, return_counts=True)
    judged_keys, judged_counts = np.unique(
        judged._segment * top + judged.grades, return_counts=True
    )
    at = np.searchsorted(judged_keys, hit_keys)
    found = at < len(judged_keys)
    found[found] = judged_keys[at[found]] == hit_keys[found]
    available = np.zeros(len(hit_keys), dtype=np.int64)
    available[found] = judged_counts[at[found]]
    if np.any(hit_counts > available):
        raise ParameterError(
            f"{what} holds more items of some (query, grade) than Judged lists for that query."
        )


# --------------------------------------------------------------------------- untied kernels

_Kernel = Callable[[Metric, Hits, Judged], FloatArray]


def _k(metric: Metric) -> int:
    """Return the cutoff of a family that always has one (hit, p, r)."""
    if metric.k is None:
        raise ParameterError(f"The metric {metric.family} needs a cutoff, e.g. {metric.family}@10.")
    return metric.k


def _cutoff(metric: Metric, positions: IntArray) -> int:
    """Return the metric's k, or one past the deepest position when it has none."""
    return metric.k if metric.k is not None else int(positions.max(initial=0)) + 1


def _relevant_within(metric: Metric, hits: Hits, cut: IndexArray | int) -> BoolArray:
    return (hits.grade >= metric.rel) & (hits.position <= cut)


def _count_within(metric: Metric, hits: Hits, cut: IndexArray | int, n: int) -> FloatArray:
    keep = _relevant_within(metric, hits, cut)
    return np.bincount(hits.query[keep], minlength=n).astype(np.float64)


def _rr(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    keep = _relevant_within(metric, hits, _cutoff(metric, hits.position))
    first = np.full(judged.n_queries, np.inf)
    np.minimum.at(first, hits.query[keep], hits.position[keep].astype(np.float64))
    return 1.0 / first


def _hit(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    return (_count_within(metric, hits, _k(metric), judged.n_queries) > 0).astype(np.float64)


def _precision(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    return _count_within(metric, hits, _k(metric), judged.n_queries) / _k(metric)


def _recall(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    count = _count_within(metric, hits, _k(metric), judged.n_queries)
    return _ratio(count, judged.relevant_count(metric.rel))


def _rprec(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    r = judged.relevant_count(metric.rel)
    count = _count_within(metric, hits, r[hits.query], judged.n_queries)
    return _ratio(count, r)


def _ap(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    order = hits._order
    query, position, grade = hits.query[order], hits.position[order], hits.grade[order]
    keep = (grade >= metric.rel) & (position <= _cutoff(metric, position))
    query, position = query[keep], position[keep]
    # Sorted by (query, position): an item's rank among its query's relevant items is its
    # offset from the first entry of its query.
    rank = np.arange(len(query)) - np.searchsorted(query, query, side="left") + 1
    total = _weighted_bincount(query, rank / position, judged.n_queries)
    return _ratio(total, judged.relevant_count(metric.rel).astype(np.float64))


def _ndcg(metric: Metric, hits: Hits, judged: Judged) -> FloatArray:
    # Summed in rank order, as trec_eval sums: the hits come in any order (the scorer's SQL
    # returns them as its threads finish), and a float sum in their order could differ in its
    # last bit from one run to the next.
    order = hits._order
    query, position, grade = hits.query[order], hits.position[order], hits.grade[order]
    keep = position <= _cutoff(metric, position)
    weights = _gain(metric, grade[keep]) / np.log2(position[keep] + 1.0)
    dcg = _weighted_bincount(query[keep], weights, judged.n_queries)
    return _ratio(dcg, judged.ideal_dcg(metric))


_KERNELS: dict[str, _Kernel] = {
    "rr": _rr,
    "hit": _hit,
    "p": _precision,
    "r": _recall,
    "rprec": _rprec,
    "ap": _ap,
    "ndcg": _ndcg,
    "ndcg_exp": _ndcg,
}


def evaluate(metric: Metric | str, hits: Hits, judged: Judged) -> FloatArray:
    r"""Per-query values of one metric, with trec_eval semantics.

    Parameters
    ----------
    metric : Metric or str
        The metric (any spelling :func:`~evalvalidity.core.metrics.parse_metric` reads).
    hits : Hits
        Positions of the judged-relevant items that the rankings retrieved.
    judged : Judged
        Every query's judged grades (for R and the ideal DCG); fixes Q.

    Returns
    -------
    numpy.ndarray
        float64, length Q. A query with R = 0 (or IDCG = 0) scores 0.

    Notes
    -----
    With ``rel_p`` = 1 when the item at position p has grade >= the metric's threshold,
    R the number of such judged items and :math:`c_p = \sum_{i \le p} rel_i`:

    .. math::

        RR@k = \max_{p \le k,\ rel_p = 1} 1/p, \qquad
        AP@k = \frac{1}{R} \sum_{p \le k} rel_p \frac{c_p}{p}, \qquad
        nDCG@k = \frac{\sum_{p \le k} g_p / \log_2(p + 1)}{IDCG@k}

    P@k divides by k even when fewer than k items were retrieved; R@k and AP divide by R
    (trec_eval's ``map_cut_k``, not min(k, R)).

    Raises
    ------
    ParameterError
        When the hits are inconsistent with ``judged`` (a query index out of range, two hits
        at one position, more hits of a grade than judged items of that grade).

    Examples
    --------
    Query 0 judges two items (grades 2 and 1), found at positions 1 and 3; query 1 judges one,
    found at position 2:

    >>> judged = Judged.from_items(query=[0, 0, 1], grade=[2, 1, 1], n_queries=2)
    >>> hits = Hits(query=[0, 0, 1], position=[1, 3, 2], grade=[2, 1, 1])
    >>> evaluate("rr@10", hits, judged).tolist()
    [1.0, 0.5]
    >>> evaluate("ap", hits, judged).round(4).tolist()     # (1/1 + 2/3) / 2 and (1/2) / 1
    [0.8333, 0.5]
    >>> evaluate("p@2[rel>=2]", hits, judged).tolist()
    [0.5, 0.0]
    """
    metric = _check_metric(metric, "evaluate")
    if not isinstance(hits, Hits):
        raise ParameterError(
            f"The 'hits' parameter of evaluate must be Hits. Got {type(hits).__name__}."
        )
    _check_judged(judged, "evaluate")
    _check_consistent(hits.query, hits.grade, judged, "Hits")
    _ = hits._order  # checks that positions are distinct within each query
    return _KERNELS[metric.family](metric, hits, judged)


# --------------------------------------------------------------------------- tied kernels


@dataclass(frozen=True)
class _Groups:
    """Per-group quantities of one metric, groups sorted by (query, start)."""

    query: IntArray
    start: IntArray
    size: IntArray
    relevant: IndexArray  # items with grade >= the threshold
    gain: FloatArray  # summed gains of the group's judged items (nDCG)


def _groups(metric: Metric, tied: TiedHits) -> _Groups:
    order = tied._order
    n_groups = len(tied.group_query)
    binary = tied.item_grade >= metric.rel
    relevant = np.bincount(tied.item_group[binary], minlength=n_groups)
    gain = _weighted_bincount(tied.item_group, _gain(metric, tied.item_grade), n_groups)
    return _Groups(
        tied.group_query[order],
        tied.group_start[order],
        tied.group_size[order],
        relevant[order],
        gain[order],
    )


def _overlap(groups: _Groups, cut: IndexArray | int) -> tuple[IntArray, IntArray]:
    """Last position of each group inside the cutoff, and the number of slots inside it."""
    last = np.minimum(groups.start + groups.size - 1, cut)
    return last, np.clip(last - groups.start + 1, 0, None)


def _table(values: FloatArray) -> FloatArray:
    """Prefix sums with a leading 0: ``table[p] = Σ_{i <= p} values[i - 1]``."""
    return np.concatenate(([0.0], np.cumsum(values)))


def _tied_cutoff(metric: Metric, groups: _Groups) -> int:
    deepest = int((groups.start + groups.size - 1).max(initial=0))
    return metric.k if metric.k is not None else deepest + 1


def _tied_count(groups: _Groups, cut: IndexArray | int, n: int) -> FloatArray:
    """E[relevant items within the cutoff]: each slot holds a relevant item w.p. m/n."""
    _, inside = _overlap(groups, cut)
    expected = groups.relevant * inside / groups.size
    return _weighted_bincount(groups.query, expected, n)


def _first_relevant(groups: _Groups, cut: int) -> tuple[IntArray, IntArray, FloatArray]:
    """Distribution of the first relevant item's position, within the cutoff.

    In the first group holding a relevant item (start s, size n, m relevant), the first
    relevant item is at offset j (1-based) with hypergeometric probability
    C(n − j, m − 1) / C(n, m); its position is s + j − 1. Returns, flattened over the queries'
    first groups, the query, the position and the probability of every offset inside the cutoff.
    """
    holding = (groups.relevant > 0) & (groups.start <= cut)
    query, start = groups.query[holding], groups.start[holding]
    size, m = groups.size[holding], groups.relevant[holding]
    first = np.ones(len(query), dtype=bool)
    first[1:] = query[1:] != query[:-1]  # groups are sorted by (query, start)
    query, start, size, m = query[first], start[first], size[first], m[first]
    length = np.minimum(size - m + 1, cut - start + 1)
    seg_start = np.cumsum(length) - length
    seg = np.repeat(np.arange(len(query)), length)
    j = np.arange(int(length.sum())) - seg_start[seg] + 1
    n_s, m_s = size[seg], m[seg]
    # P(j) = (m/n) Π_{i<j} (n − i − m + 1)/(n − i): a per-group cumulative sum of log ratios.
    # Each group's first entry cancels the previous group's total, so the running sum stays
    # small and the per-group differences keep full precision.
    log_ratio = np.log((n_s - j - m_s + 2) / (n_s - j + 1.0))
    log_ratio[seg_start] = 0.0
    if len(seg_start) > 1:
        totals = np.add.reduceat(log_ratio, seg_start)
        log_ratio[seg_start[1:]] = -totals[:-1]
    running = np.cumsum(log_ratio)
    cumulative = running - running[seg_start][seg]
    probability = (m_s / n_s) * np.exp(cumulative)
    return query[seg], start[seg] + j - 1, probability


def _tied_rr(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    query, position, probability = _first_relevant(groups, _tied_cutoff(metric, groups))
    return _weighted_bincount(query, probability / position, judged.n_queries)


def _tied_hit(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    query, _, probability = _first_relevant(groups, _k(metric))
    out = np.minimum(_weighted_bincount(query, probability, judged.n_queries), 1.0)
    # When every possible first position lies inside the cutoff the hit is certain: say 1
    # exactly rather than a sum of probabilities that rounds to 1 − 1e-16.
    holding = groups.relevant > 0
    certain = groups.start[holding] + groups.size[holding] - groups.relevant[holding] <= _k(metric)
    out[groups.query[holding][certain]] = 1.0
    return out


def _tied_precision(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    return _tied_count(groups, _k(metric), judged.n_queries) / _k(metric)


def _tied_recall(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    count = _tied_count(groups, _k(metric), judged.n_queries)
    return _ratio(count, judged.relevant_count(metric.rel))


def _tied_rprec(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    r = judged.relevant_count(metric.rel)
    count = _tied_count(groups, r[groups.query], judged.n_queries)
    return _ratio(count, r)


def _tied_ap(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    # McSherry & Najork: slot p of a group (start s, size n, m relevant, B relevant before it)
    # holds a relevant item w.p. m/n, and then c_p = B + 1 + (p − s)(m − 1)/(n − 1) in
    # expectation, so E[Σ_p rel_p c_p / p] sums (m/n)(A + D(p − s))/p over the group's slots,
    # A = B + 1, D = (m − 1)/(n − 1): (m/n)[A ΔH + D(o − s ΔH)], ΔH = H_last − H_{s−1}.
    last, inside = _overlap(groups, _tied_cutoff(metric, groups))
    harmonic = _table(1.0 / np.arange(1, int(last.max(initial=0)) + 1))
    delta_h = harmonic[last] - harmonic[np.minimum(groups.start - 1, last)]
    cumulative = np.cumsum(groups.relevant)
    first_index = np.searchsorted(groups.query, groups.query, side="left")
    before = cumulative - groups.relevant - (cumulative[first_index] - groups.relevant[first_index])
    spread = _ratio((groups.relevant - 1).astype(np.float64), (groups.size - 1).astype(np.float64))
    per_group = (groups.relevant / groups.size) * (
        (before + 1) * delta_h + spread * (inside - groups.start * delta_h)
    )
    per_group[inside == 0] = 0.0
    total = _weighted_bincount(groups.query, per_group, judged.n_queries)
    return _ratio(total, judged.relevant_count(metric.rel).astype(np.float64))


def _tied_ndcg(metric: Metric, groups: _Groups, judged: Judged) -> FloatArray:
    # Each slot of a group holds each of its items with probability 1/n: E[DCG] adds the
    # group's summed gain times the mean discount of its slots inside the cutoff.
    last, _ = _overlap(groups, _tied_cutoff(metric, groups))
    discount = _table(1.0 / np.log2(np.arange(2, int(last.max(initial=0)) + 2)))
    slots = discount[last] - discount[np.minimum(groups.start - 1, last)]
    dcg = _weighted_bincount(groups.query, groups.gain * slots / groups.size, judged.n_queries)
    return _ratio(dcg, judged.ideal_dcg(metric))


_TIED_KERNELS: dict[str, Callable[[Metric, _Groups, Judged], FloatArray]] = {
    "rr": _tied_rr,
    "hit": _tied_hit,
    "p": _tied_precision,
    "r": _tied_recall,
    "rprec": _tied_rprec,
    "ap": _tied_ap,
    "ndcg": _tied_ndcg,
    "ndcg_exp": _tied_ndcg,
}


def evaluate_tied(metric: Metric | str, tied: TiedHits, judged: Judged) -> FloatArray:
    r"""Per-query expected value of a metric over all orders inside each tie group.

    Every tie group is ordered uniformly at random, independently of the others; the result is
    the exact expectation (McSherry & Najork, ECIR 2008), with :func:`evaluate`'s semantics.

    Parameters
    ----------
    metric : Metric or str
    tied : TiedHits
        The tie groups that hold judged-relevant items, and those items.
    judged : Judged
        Every query's judged grades; fixes Q.

    Returns
    -------
    numpy.ndarray
        float64, length Q.

    Notes
    -----
    For a group of n slots starting at position s with m relevant items, each slot holds a
    relevant item with probability m/n, so counts (P@k, R@k, R-precision) and DCG use
    fractional counts over the slots inside the cutoff. RR and Hit depend only on the first
    group holding a relevant item, where the first relevant offset j has the hypergeometric law

    .. math::

        P(J = j) = \binom{n - j}{m - 1} \Big/ \binom{n}{m}, \qquad
        E[RR@k] = \sum_{j:\ s + j - 1 \le k} \frac{P(J = j)}{s + j - 1}.

    AP follows McSherry & Najork's closed form: with B relevant items before the group,

    .. math::

        E[AP] = \frac{1}{R} \sum_{\text{groups}} \frac{m}{n} \sum_{p = s}^{\min(s + n - 1, k)}
        \frac{B + 1 + (p - s)\frac{m - 1}{n - 1}}{p}.

    Raises
    ------
    ParameterError
        When the items are inconsistent with ``judged``.

    Examples
    --------
    One relevant item among three tied items at positions 1–3: RR = (1 + 1/2 + 1/3)/3 = 11/18.

    >>> judged = Judged.from_items(query=[0], grade=[1], n_queries=1)
    >>> tied = TiedHits([0], [1], [3], item_group=[0], item_grade=[1])
    >>> evaluate_tied("rr", tied, judged).round(6).tolist()
    [0.611111]
    >>> evaluate_tied("p@2", tied, judged).round(6).tolist()      # 2 slots × 1/3, over k = 2
    [0.333333]
    """
    metric = _check_metric(metric, "evaluate_tied")
    if not isinstance(tied, TiedHits):
        raise ParameterError(
            f"The 'tied' parameter of evaluate_tied must be TiedHits. Got {type(tied).__name__}."
        )
    _check_judged(judged, "evaluate_tied")
    if np.any(tied.group_query >= judged.n_queries):
        raise ParameterError(
            f"TiedHits names a query index >= {judged.n_queries}, the number of queries in Judged."
        )
    _check_consistent(tied.group_query[tied.item_group], tied.item_grade, judged, "TiedHits")
    return _TIED_KERNELS[metric.family](metric, _groups(metric, tied), judged)
