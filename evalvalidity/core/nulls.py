r"""Query-independent nulls: the query-shuffle null, the popularity ranker and hub documents.

The uniform floor (:func:`~evalvalidity.core.floors.noise_floor`) asks what a ranker that
ignores everything scores. These nulls ask what a ranker that ignores the *query* scores: a
benchmark where one of them scores far above the uniform floor rewards a prior over documents
(a few hub documents gold for most queries), not retrieval.

Inputs are integer-coded: queries are indices 0..Q−1 and documents are int codes >= 0 (the
analysis layer maps strings to codes). A run is one row per ranked item (query, document,
1-based position), **already deduplicated to documents** (chunks mapped to their documents and
each document kept at its first position, as the scorer does); a document may appear once per
query. Judgements are one row per (query, document) with a grade; rows with grade <= 0 are
judged non-relevant and are never gold. Scoring follows trec_eval
(:func:`~evalvalidity.core.kernels.evaluate`): R is the number of judged items with grade >= the
metric's threshold, a ranking without a relevant item scores 0.

Examples
--------
Three queries; document 7 is gold for queries 0 and 1, and every ranking puts it first:

>>> shuffle = query_shuffle_null(
...     run_query=[0, 1, 2], run_doc=[7, 7, 7], run_position=[1, 1, 1],
...     gold_query=[0, 1, 2], gold_doc=[7, 7, 5], gold_grade=[1, 1, 1],
...     metric="rr@10", n_queries=3)
>>> shuffle.expected.tolist(), shuffle.mean
([0.5, 0.5, 1.0], 0.6666666666666666)
>>> hub_documents(gold_query=[0, 1, 2], gold_doc=[7, 7, 5], n_queries=3).doc.tolist()
[7, 5]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalvalidity.core._validate import (
    _at_least,
    _codes,
    _distinct_pairs,
    _equal_lengths,
    _int_at_least,
    _queries,
)
from evalvalidity.core.kernels import Hits, Judged, TiedHits, evaluate
from evalvalidity.core.metrics import Metric
from evalvalidity.core.tiebounds import _metric, tie_bounds
from evalvalidity.errors import ParameterError

__all__ = [
    "HubDocuments",
    "PopularityNull",
    "ShuffleNull",
    "hub_documents",
    "popularity_ranker",
    "query_blocks",
    "query_shuffle_null",
]

# Hits materialised at once by the query-shuffle join (some 100 MB of working arrays).
_BLOCK_HITS = 1 << 20


# --------------------------------------------------------------------------- validation


def _narrow_codes(value: Any, name: str, func: str) -> np.ndarray:
    """:func:`_codes`, but an int32 array is kept as it is (no int64 copy).

    For a caller that widens to int64 whatever it keys (``query * width + doc``).

    Examples
    --------
    >>> _narrow_codes(np.array([1, 2], np.int32), "x", "f").dtype
    dtype('int32')
    >>> _narrow_codes([1, 2], "x", "f").dtype
    dtype('int64')
    """
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == np.int32:
        return value
    return _codes(value, name, func)


def _run(
    run_query: Any,
    run_doc: Any,
    run_position: Any,
    func: str,
    n_queries: int,
    *,
    narrow: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The run's validated codes: int64, or (``narrow``) int32 ones kept as they are."""
    codes = _narrow_codes if narrow else _codes
    query = codes(run_query, "run_query", func)
    doc = codes(run_doc, "run_doc", func)
    position = codes(run_position, "run_position", func)
    _equal_lengths(func, run_query=query, run_doc=doc, run_position=position)
    _queries(query, "run_query", func, n_queries)
    _at_least(doc, 0, "run_doc", func, "document codes")
    _at_least(position, 1, "run_position", func, "1-based positions")
    _distinct_pairs(
        query,
        position,
        f"Two rows of the run of {func} give query {{query}} position {{value}};"
        " positions must be distinct within a query.",
    )
    _distinct_pairs(
        query,
        doc,
        f"The run of {func} ranks document {{value}} twice for query {{query}};"
        " deduplicate the rankings to documents first.",
    )
    return query, doc, position


def _judgements(
    gold_query: Any, gold_doc: Any, gold_grade: Any, func: str, n_queries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    query = _codes(gold_query, "gold_query", func)
    doc = _codes(gold_doc, "gold_doc", func)
    grade = _codes(gold_grade, "gold_grade", func)
    _equal_lengths(func, gold_query=query, gold_doc=doc, gold_grade=grade)
    _queries(query, "gold_query", func, n_queries)
    _at_least(doc, 0, "gold_doc", func, "document codes")
    _distinct_pairs(
        query,
        doc,
        f"The judgements of {func} judge document {{value}} twice for query"
        " {query}; keep one grade per (query, document).",
    )
    return query, doc, grade


def _relevant(
    query: np.ndarray, doc: np.ndarray, grade: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = grade >= 1
    if keep.all():  # nothing to drop: no copies
        return query, doc, grade
    return query[keep], doc[keep], grade[keep]


def query_blocks(
    n_queries: int, block: int, *sorted_query: Any
) -> list[tuple[int, int, list[slice]]]:
    """Consecutive blocks of at most ``block`` queries, with the rows of each array they hold.

    A computation that is one value per query (a metric, a count, a bound) can run block by
    block on rows sorted by query: its working arrays then grow with ``block``, not with Q.

    Parameters
    ----------
    n_queries : int
        Q >= 0; the blocks cover the queries 0..Q−1 (none when Q is 0).
    block : int
        Queries per block, >= 1.
    *sorted_query : array-like of int
        Each the query index of an array's rows, sorted ascending.

    Returns
    -------
    list of (int, int, list of slice)
        ``(q0, q1, rows)``: the block holds queries ``q0 <= q < q1`` and ``rows[i]`` are the
        rows of ``sorted_query[i]`` in it.

    Raises
    ------
    ParameterError
        For ``block`` < 1 or ``n_queries`` < 0.

    Examples
    --------
    >>> query_blocks(5, 2, np.array([0, 0, 3, 4]), np.array([1, 2]))  # doctest: +NORMALIZE_WHITESPACE
    [(0, 2, [slice(0, 2, None), slice(0, 1, None)]),
     (2, 4, [slice(2, 3, None), slice(1, 2, None)]),
     (4, 5, [slice(3, 4, None), slice(2, 2, None)])]
    """
    func = "query_blocks"
    n_queries = _int_at_least(n_queries, 0, "n_queries", func)
    block = _int_at_least(block, 1, "block", func)
    edges = np.append(np.arange(0, n_queries, block, dtype=np.int64), n_queries)
    bounds = [np.searchsorted(np.asarray(q), edges, side="left").tolist() for q in sorted_query]
    return [
        (int(edges[b]), int(edges[b + 1]), [slice(at[b], at[b + 1]) for at in bounds])
        for b in range(len(edges) - 1)
    ]


# --------------------------------------------------------------------------- query shuffle


@dataclass(frozen=True)
class ShuffleNull:
    r"""The query-shuffle null of one metric: ranking i scored against the gold of j ≠ i.

    Attributes
    ----------
    metric : Metric
    expected : numpy.ndarray
        float64, length Q: :math:`\frac{1}{Q-1} \sum_{j \ne i} v_{ij}`, the mean over a
        uniformly random other query j.
    variance : numpy.ndarray
        float64, length Q: the variance of :math:`v_{ij}` over that j.
    mean : float
        The benchmark's expected score :math:`\frac{1}{Q} \sum_i \mathrm{expected}_i` (the same
        under a random derangement and under independent draws).
    variance_of_mean : float
        The exact variance of the benchmark's score :math:`\frac{1}{Q} \sum_i v_{i\sigma(i)}`
        when σ is a uniformly random derangement (a reassignment of the queries' gold sets that
        leaves no query with its own).
    variance_of_mean_independent : float
        Its variance when every query draws its j ≠ i independently:
        :math:`\frac{1}{Q^2} \sum_i \mathrm{variance}_i`.
    n_pairs_hit : int
        The number of pairs (i, j ≠ i) whose ranking i retrieves a gold item of j.
    """

    metric: Metric
    expected: np.ndarray
    variance: np.ndarray
    mean: float
    variance_of_mean: float
    variance_of_mean_independent: float
    n_pairs_hit: int

    @property
    def std_of_mean(self) -> float:
        """Standard deviation of the benchmark's score under a random derangement."""
        return math.sqrt(self.variance_of_mean)


def _derangement_probabilities(n: int) -> tuple[float, float, float, float]:
    """Joint assignment probabilities of a uniformly random derangement of n >= 2 points.

    Returns (p1, pA, pB, pD): P(σ(i) = j) for j ≠ i; and, for i ≠ k, P(σ(i) = k, σ(k) = i),
    P(σ(i) = k, σ(k) = l) for l ∉ {i, k}, and P(σ(i) = j, σ(k) = l) for four distinct points.
    With D_m the number of derangements of m points and ρ_m = D_{m−1}/D_m
    (ρ_2 = 0, ρ_m = 1/((m − 1)(1 + ρ_{m−1}))): pA = ρ_n ρ_{n−1}, pB = ρ_n/(n − 2) and
    1 = pA + 2(n − 2) pB + (n − 2)(n − 3) pD.
    """
    rho_previous, rho = 0.0, 0.0  # ρ_1 is never used (pA has D_0 / D_2 = 1 at n = 2)
    for m in range(3, n + 1):
        rho_previous, rho = rho, 1.0 / ((m - 1) * (1.0 + rho))
    p1 = 1.0 / (n - 1)
    if n == 2:
        return p1, 1.0, 0.0, 0.0
    p_a = rho * rho_previous
    p_b = rho / (n - 2)
    p_d = (1.0 - p_a - 2.0 * rho) / ((n - 2) * (n - 3)) if n >= 4 else 0.0
    return p1, p_a, p_b, p_d


def _derangement_variance(
    n: int, s1: float, rows: np.ndarray, cols: np.ndarray, transposed: float
) -> float:
    r"""Var[Σ_i M_{iσ(i)}] for a uniformly random derangement σ, from the sums of M.

    ``s1`` = Σ M_ij², ``rows``/``cols`` the row and column sums, ``transposed`` = Σ M_ij M_ji.
    E[S²] = p1 S1 + pA A + 2 pB B + pD (T − A − 2B), with A = ``transposed``,
    B = Σ_k c_k r_k − A and T = (Σ r)² − Σ r² − Σ c² + S1 the sum over all pairs of entries in
    distinct rows and columns. The R² terms cancel against E[S]² = R²/(n − 1)², so they are
    combined first: pD − p1² = [3n − 5 − (n − 1)²(pA + 2ρ_n)] / ((n − 1)²(n − 2)(n − 3)).
    """
    p1, p_a, p_b, p_d = _derangement_probabilities(n)
    total = math.fsum(rows.tolist())
    cross = math.fsum((rows * cols).tolist())
    a = transposed
    b = cross - transposed
    if n < 4:  # no four distinct points: the direct form has no cancellation to avoid
        second = p1 * s1 + p_a * a + 2.0 * p_b * b
        return max(second - (total * p1) ** 2, 0.0)
    rho_n = p_b * (n - 2)
    delta = (3 * n - 5 - (n - 1) ** 2 * (p_a + 2.0 * rho_n)) / ((n - 1) ** 2 * (n - 2) * (n - 3))
    squares = math.fsum((rows * rows).tolist()) + math.fsum((cols * cols).tolist())
    variance = math.fsum(
        [
            p1 * s1,
            (p_a - p_d) * a,
            2.0 * (p_b - p_d) * b,
            p_d * (s1 - squares),
            delta * total * total,
        ]
    )
    return max(variance, 0.0)


def _grade_table(
    query: np.ndarray, grade: np.ndarray, n_queries: int
) -> tuple[np.ndarray, np.ndarray]:
    """CSR of every query's relevant grades, sorted descending: (offsets, grades)."""
    order = np.lexsort((-grade, query))
    offsets = np.concatenate(([0], np.cumsum(np.bincount(query, minlength=n_queries))))
    return offsets, grade[order]


def _pair_values(
    metric: Metric,
    run: tuple[np.ndarray, np.ndarray, np.ndarray],
    gold: tuple[np.ndarray, np.ndarray, np.ndarray],
    table: tuple[np.ndarray, np.ndarray],
    n_queries: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Metric of ranking i against the gold of j, for every pair i ≠ j with a hit.

    ``run`` and ``gold`` hold the rows of one block each, the gold sorted by document. Each
    pair becomes a synthetic query of :func:`~evalvalidity.core.kernels.evaluate` whose hits
    are the join on document and whose judged grades are those of j.
    """
    run_query, run_doc, run_position = run
    gold_query, gold_doc, gold_grade = gold
    low = np.searchsorted(gold_doc, run_doc, "left")
    count = np.searchsorted(gold_doc, run_doc, "right") - low
    row = np.repeat(np.arange(len(run_doc)), count)
    match = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    match += low[row]
    i, j = run_query[row].astype(np.int64), gold_query[match]  # keyed i * Q + j: int64
    other = i != j
    i, j, row, match = i[other], j[other], row[other], match[other]
    if len(i) == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0)
    pairs, pair_of_hit = np.unique(i * n_queries + j, return_inverse=True)
    pair_i, pair_j = pairs // n_queries, pairs % n_queries
    offsets, grades = table
    size = offsets[pair_j + 1] - offsets[pair_j]
    pair_offsets = np.concatenate(([0], np.cumsum(size)))
    within = np.arange(int(pair_offsets[-1])) - np.repeat(pair_offsets[:-1], size)
    judged = Judged(pair_offsets, grades[np.repeat(offsets[pair_j], size) + within])
    hits = Hits(pair_of_hit.ravel(), run_position[row], gold_grade[match])
    return pair_i, pair_j, evaluate(metric, hits, judged)


def query_shuffle_null(
    run_query: Any,
    run_doc: Any,
    run_position: Any,
    gold_query: Any,
    gold_doc: Any,
    gold_grade: Any,
    *,
    metric: Metric | str,
    n_queries: int,
    block_hits: int = _BLOCK_HITS,
) -> ShuffleNull:
    r"""Exact score of each ranking against the gold of the other queries.

    Parameters
    ----------
    run_query, run_doc, run_position : array-like of int
        One row per ranked item: query index in [0, Q), document code >= 0, 1-based position.
        Deduplicated to documents (a document once per query; positions distinct per query).
        With candidate pools, a gold item of j outside ranking i simply cannot be hit.
    gold_query, gold_doc, gold_grade : array-like of int
        One row per judgement; grade >= 1 is relevant, rows with grade <= 0 are ignored.
    metric : Metric or str
    n_queries : int
        Q >= 2.
    block_hits : int, default 2**20
        About how many (pair, hit) rows the join holds in memory at once.

    Returns
    -------
    ShuffleNull

    Notes
    -----
    With :math:`v_{ij}` the metric of ranking i scored against the judgements of query j
    (R and the ideal DCG those of j), the null draws for each i a uniformly random
    :math:`j \ne i`:

    .. math::

        \mathrm{expected}_i = \frac{1}{Q - 1} \sum_{j \ne i} v_{ij}, \qquad
        \mathrm{variance}_i = \frac{1}{Q - 1} \sum_{j \ne i} v_{ij}^2 - \mathrm{expected}_i^2.

    :math:`v_{ij}` is computed exactly, not sampled: the run is joined with the judgements on
    the document, every (i, position, document) meeting every j for which the document is gold,
    and only pairs with at least one hit are scored (a ranking without a relevant item scores 0
    for every metric). The benchmark's score under a uniformly random derangement σ has mean
    :math:`\frac{1}{Q}\sum_i \mathrm{expected}_i` and the exact variance
    :math:`\mathrm{Var}[\frac{1}{Q}\sum_i v_{i\sigma(i)}]` from the joint law of
    (σ(i), σ(k)) (see ``_derangement_variance``); under independent draws the variance is
    :math:`\frac{1}{Q^2}\sum_i \mathrm{variance}_i`. Memory is bounded by tiling the (i, j)
    square into blocks of about ``block_hits`` hits.

    Raises
    ------
    ParameterError
        When an array is not 1-D integer, lengths differ, an index is out of range, a position
        or (query, document) repeats, or Q < 2.

    Examples
    --------
    Two rankings, each putting the other query's gold document first:

    >>> null = query_shuffle_null([0, 0, 1, 1], [11, 10, 10, 11], [1, 2, 1, 2],
    ...                           [0, 1], [10, 11], [1, 1], metric="ap", n_queries=2)
    >>> null.expected.tolist(), null.variance.tolist(), null.variance_of_mean
    ([1.0, 1.0], [0.0, 0.0], 0.0)
    """
    func = "query_shuffle_null"
    metric = _metric(metric, func)
    n_queries = _int_at_least(n_queries, 2, "n_queries", func)
    block_hits = _int_at_least(block_hits, 1, "block_hits", func)
    # int32 codes stay int32 (the ranked rows are the largest arrays); _pair_values widens.
    run = _run(run_query, run_doc, run_position, func, n_queries, narrow=True)
    gold = _relevant(*_judgements(gold_query, gold_doc, gold_grade, func, n_queries))
    table = _grade_table(gold[0], gold[2], n_queries)

    # Hits per ranking row: how many queries have its document gold (an upper bound, with i).
    docs, frequency = np.unique(gold[1], return_counts=True)
    at = np.clip(np.searchsorted(docs, run[1]), 0, max(len(docs) - 1, 0))
    found = (docs[at] == run[1]) if len(docs) else np.zeros(len(run[1]), bool)
    total_hits = int(frequency[at][found].sum()) if len(docs) else 0
    del at, found
    n_blocks = int(min(n_queries, max(1, math.ceil(math.sqrt(total_hits / block_hits)))))
    edges = np.linspace(0, n_queries, n_blocks + 1).round().astype(np.int64)
    run_sorted = run
    if len(run[0]) > 1 and not bool(np.all(run[0][1:] >= run[0][:-1])):
        run_order = np.argsort(run[0], kind="stable")  # no copies when already by query
        run_sorted = (run[0][run_order], run[1][run_order], run[2][run_order])
        del run_order
    run_edges = np.searchsorted(run_sorted[0], edges)
    gold_block = np.searchsorted(edges, gold[0], "right") - 1
    gold_order = np.lexsort((gold[1], gold_block))
    gold_sorted = tuple(a[gold_order] for a in gold)
    gold_edges = np.searchsorted(gold_block[gold_order], np.arange(n_blocks + 1))

    def tile(a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r = slice(run_edges[a], run_edges[a + 1])
        g = slice(gold_edges[b], gold_edges[b + 1])
        return _pair_values(
            metric,
            (run_sorted[0][r], run_sorted[1][r], run_sorted[2][r]),
            (gold_sorted[0][g], gold_sorted[1][g], gold_sorted[2][g]),
            table,
            n_queries,
        )

    rows = np.zeros(n_queries)
    row_squares = np.zeros(n_queries)
    cols = np.zeros(n_queries)
    squares: list[float] = []
    transposed: list[float] = []
    n_pairs = 0
    for a in range(n_blocks):
        for b in range(a, n_blocks):
            forward = tile(a, b)
            backward = tile(b, a) if b != a else forward
            for i, j, v in (forward, backward) if b != a else (forward,):
                rows += np.bincount(i, weights=v, minlength=n_queries)
                row_squares += np.bincount(i, weights=v * v, minlength=n_queries)
                cols += np.bincount(j, weights=v, minlength=n_queries)
                squares.append(math.fsum((v * v).tolist()))
                n_pairs += len(v)
            # Σ v_ij v_ji over this tile and its mirror image: match (i, j) with (j, i).
            _, at_f, at_b = np.intersect1d(
                forward[0] * n_queries + forward[1],
                backward[1] * n_queries + backward[0],
                assume_unique=True,
                return_indices=True,
            )
            products = math.fsum((forward[2][at_f] * backward[2][at_b]).tolist())
            transposed.append(products if b == a else 2.0 * products)

    expected = rows / (n_queries - 1)
    variance = np.clip(row_squares / (n_queries - 1) - expected * expected, 0.0, None)
    total_variance = _derangement_variance(
        n_queries, math.fsum(squares), rows, cols, math.fsum(transposed)
    )
    return ShuffleNull(
        metric=metric,
        expected=expected,
        variance=variance,
        mean=float(np.mean(expected)),
        variance_of_mean=total_variance / n_queries**2,
        variance_of_mean_independent=float(variance.sum()) / n_queries**2,
        n_pairs_hit=n_pairs,
    )


# --------------------------------------------------------------------------- popularity


@dataclass(frozen=True)
class PopularityNull:
    """The popularity ranker's exact score: each pool ordered by leave-one-out gold counts.

    Attributes
    ----------
    metric : Metric
    average : numpy.ndarray
        float64, length Q: the value averaged over the orders inside each group of equal counts.
    worst, best : numpy.ndarray
        The value when every group of equal counts is ordered worst and best.
    """

    metric: Metric
    average: np.ndarray
    worst: np.ndarray
    best: np.ndarray

    @property
    def mean(self) -> float:
        """The benchmark's tie-averaged score."""
        return float(np.mean(self.average))

    @property
    def mean_worst(self) -> float:
        """The benchmark's score with every tie broken worst."""
        return float(np.mean(self.worst))

    @property
    def mean_best(self) -> float:
        """The benchmark's score with every tie broken best."""
        return float(np.mean(self.best))


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at ``wanted`` in sorted unique ``keys``, 0 where a key is absent."""
    if len(keys) == 0:
        return np.zeros(len(wanted), np.int64)
    at = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], 0)


def popularity_ranker(
    gold_query: Any,
    gold_doc: Any,
    gold_grade: Any,
    *,
    metric: Metric | str,
    n_queries: int,
    candidate_query: Any = None,
    candidate_doc: Any = None,
    corpus_size: int | None = None,
) -> PopularityNull:
    r"""Score the ranker that orders each query's pool by how often a document is gold elsewhere.

    Parameters
    ----------
    gold_query, gold_doc, gold_grade : array-like of int
        One row per judgement; grade >= 1 is gold.
    metric : Metric or str
    n_queries : int
        Q >= 1.
    candidate_query, candidate_doc : array-like of int, optional
        Each query's candidate pool, one row per (query, document). Give these or
        ``corpus_size``, not both.
    corpus_size : int, optional
        N: the pool of every query is the whole corpus of N documents (at least every gold
        document); documents never gold have count 0 and need not be listed.

    Returns
    -------
    PopularityNull

    Notes
    -----
    With :math:`c(d)` the number of queries for which d is gold, query i's pool is ordered by
    the leave-one-out count :math:`c_{-i}(d) = c(d) - [d \in \mathrm{gold}_i]`, descending;
    documents of equal count form a tie group, scored by
    :func:`~evalvalidity.core.tiebounds.tie_bounds` (average, worst and best order). Over the
    corpus, the group of count v in query i starts at
    :math:`1 + N_{>v} - |\{d \in \mathrm{gold}_i : c(d) = v + 1\}|` and holds
    :math:`n_v - |\{d \in \mathrm{gold}_i : c(d) = v\}| + |\{d \in \mathrm{gold}_i : c(d) = v+1\}|`
    documents, with :math:`N_{>v}` and :math:`n_v` the documents of count above and equal to v
    (:math:`n_0 = N - N_{>0}`), so the corpus is never materialised.

    Raises
    ------
    ParameterError
        For inconsistent arrays, neither or both pool arguments, or N below the number of gold
        documents.

    Examples
    --------
    Document 1 is gold for queries 0 and 1, document 2 for query 2, in a corpus of 4. For
    queries 0 and 1 documents 1 and 2 both count 1 and tie at the top; query 2 ranks document 1
    first (count 2) and ties its gold document with the two others at count 0 below it:

    >>> null = popularity_ranker([0, 1, 2], [1, 1, 2], [1, 1, 1],
    ...                          metric="rr", n_queries=3, corpus_size=4)
    >>> null.average.round(4).tolist()            # (1 + 1/2)/2 and (1/2 + 1/3 + 1/4)/3
    [0.75, 0.75, 0.3611]
    >>> null.worst.tolist(), null.best.tolist()
    ([0.5, 0.5, 0.25], [1.0, 1.0, 0.5])
    """
    func = "popularity_ranker"
    metric = _metric(metric, func)
    n_queries = _int_at_least(n_queries, 1, "n_queries", func)
    query, doc, grade = _relevant(*_judgements(gold_query, gold_doc, gold_grade, func, n_queries))
    judged = Judged.from_items(query, grade, n_queries)
    docs, count = np.unique(doc, return_counts=True)
    own = count[np.searchsorted(docs, doc)] if len(doc) else np.zeros(0, np.int64)
    has_candidates = candidate_query is not None or candidate_doc is not None
    if has_candidates == (corpus_size is not None):
        raise ParameterError(
            f"{func} needs either the candidate pools (candidate_query and candidate_doc) or"
            " corpus_size, not both."
        )
    if has_candidates:
        tied = _candidate_groups(
            query, doc, grade, docs, count, candidate_query, candidate_doc, func, n_queries
        )
    else:
        size = _int_at_least(corpus_size, 1, "corpus_size", func)
        if size < len(docs):
            raise ParameterError(
                f"The 'corpus_size' parameter of {func} must be at least the {len(docs)} gold"
                f" documents. Got {size} instead."
            )
        tied = _corpus_groups(query, own, grade, count, size, n_queries)
    del query, doc, grade, own  # the tie groups hold what the bounds read
    bounds = tie_bounds(metric, tied, judged)
    return PopularityNull(metric, bounds.average, bounds.worst, bounds.best)


def _corpus_groups(
    query: np.ndarray,
    own: np.ndarray,
    grade: np.ndarray,
    count: np.ndarray,
    corpus_size: int,
    n_queries: int,
) -> TiedHits:
    """Tie groups over the whole corpus, from the counts alone (see popularity_ranker)."""
    value = own - 1  # each gold item of i loses i's own vote
    # N_{>v}: documents whose count exceeds v, from the sorted counts.
    sorted_counts = np.sort(count)
    right = np.searchsorted(sorted_counts, value, "right")
    above = len(sorted_counts) - right
    equal = right - np.searchsorted(sorted_counts, value, "left")
    del right
    equal = np.where(value == 0, corpus_size - len(sorted_counts), equal)
    del value
    # |{d in gold_i : c(d) = x}| for x = v and v + 1, by (query, count) keys.
    width = int(own.max(initial=0)) + 2
    key = query * width + own
    keys, per_key = np.unique(key, return_counts=True)
    key -= 1  # query * width + v
    same = _lookup(keys, per_key, key)
    next_up = _lookup(keys, per_key, key + 1)
    del keys, per_key
    start = 1 + above - next_up
    del above
    size = equal - same + next_up
    del equal, same, next_up
    groups, item_group = np.unique(key, return_inverse=True)
    del key
    first = np.zeros(len(groups), np.int64)
    first[item_group] = np.arange(len(query))
    return TiedHits(groups // width, start[first], size[first], item_group.ravel(), grade)


def _candidate_groups(
    query: np.ndarray,
    doc: np.ndarray,
    grade: np.ndarray,
    docs: np.ndarray,
    count: np.ndarray,
    candidate_query: Any,
    candidate_doc: Any,
    func: str,
    n_queries: int,
) -> TiedHits:
    """Tie groups of each candidate pool ordered by leave-one-out counts."""
    pool_query = _codes(candidate_query, "candidate_query", func)
    pool_doc = _codes(candidate_doc, "candidate_doc", func)
    _equal_lengths(func, candidate_query=pool_query, candidate_doc=pool_doc)
    _queries(pool_query, "candidate_query", func, n_queries)
    _at_least(pool_doc, 0, "candidate_doc", func, "document codes")
    _distinct_pairs(
        pool_query,
        pool_doc,
        f"The candidates of {func} list document {{value}} twice for query {{query}}.",
    )
    width = int(max(doc.max(initial=-1), pool_doc.max(initial=-1))) + 1
    gold_keys = query * width + doc
    gold_order = np.argsort(gold_keys)
    pool_keys = pool_query * width + pool_doc
    at = np.clip(np.searchsorted(gold_keys[gold_order], pool_keys), 0, max(len(doc) - 1, 0))
    is_gold = np.zeros(len(pool_keys), bool)
    if len(doc):
        is_gold = gold_keys[gold_order][at] == pool_keys
    pool_grade = np.where(is_gold, grade[gold_order][at] if len(doc) else 0, 0)
    value = _lookup(docs, count, pool_doc) - is_gold
    order = np.lexsort((-value, pool_query))
    q, v = pool_query[order], value[order]
    new = np.ones(len(q), bool)
    new[1:] = (q[1:] != q[:-1]) | (v[1:] != v[:-1])
    group_of_row = np.cumsum(new) - 1
    first_row = np.flatnonzero(new)
    group_size = np.diff(np.append(first_row, len(q)))
    group_start = first_row - np.searchsorted(q, q[first_row], "left") + 1
    item = is_gold[order]
    return TiedHits(
        q[first_row], group_start, group_size, group_of_row[item], pool_grade[order][item]
    )


# --------------------------------------------------------------------------- hub documents


@dataclass(frozen=True)
class HubDocuments:
    """The documents gold for the most queries.

    Attributes
    ----------
    doc : numpy.ndarray
        int64 document codes, most queries first (ties by code).
    count : numpy.ndarray
        int64: the number of queries for which each is gold.
    share : numpy.ndarray
        float64: ``count / Q``.
    n_queries : int
    """

    doc: np.ndarray
    count: np.ndarray
    share: np.ndarray
    n_queries: int


def hub_documents(
    gold_query: Any, gold_doc: Any, n_queries: int, top: int = 10, *, gold_grade: Any = None
) -> HubDocuments:
    r"""The ``top`` documents gold for the most queries, with counts and shares.

    Parameters
    ----------
    gold_query, gold_doc : array-like of int
        One row per judgement.
    n_queries : int
        Q >= 1.
    top : int, default 10
        How many documents to return (fewer when fewer are gold).
    gold_grade : array-like of int, optional
        Grades; rows with grade <= 0 are not gold. Default: every row is gold.

    Returns
    -------
    HubDocuments

    Notes
    -----
    :math:`c(d) = |\{q : d \in \mathrm{gold}_q\}|` and share :math:`c(d)/Q`; a document with a
    large share is a prior that a query-independent ranker can exploit.

    Examples
    --------
    >>> hubs = hub_documents([0, 1, 2, 3, 3], [9, 9, 9, 4, 9], n_queries=4, top=1)
    >>> hubs.doc.tolist(), hubs.count.tolist(), hubs.share.tolist()
    ([9], [4], [1.0])
    """
    func = "hub_documents"
    n_queries = _int_at_least(n_queries, 1, "n_queries", func)
    top = _int_at_least(top, 1, "top", func)
    query = _codes(gold_query, "gold_query", func)
    doc = _codes(gold_doc, "gold_doc", func)
    grade = np.ones(len(query), np.int64) if gold_grade is None else gold_grade
    query, doc, grade = _relevant(*_judgements(query, doc, grade, func, n_queries))
    docs, count = np.unique(doc, return_counts=True)
    order = np.lexsort((docs, -count))[:top]
    return HubDocuments(docs[order], count[order], count[order] / n_queries, n_queries)
