r"""Statistics for correlated queries: clusters, cluster-robust intervals and tests, design effects.

Queries that share gold documents, or that a user groups (variants of one question, one
sub-forum, one source dataset), are not independent draws: an interval that treats them as
independent is too narrow. The functions here take a cluster label per query and treat the
clusters, not the queries, as the independent units:

=========================================  =========================================================
:func:`clusters_from_shared_gold`          connected components of queries that share a gold doc
:func:`cluster_mean_interval`              interval of a mean: CR1 sandwich (t with G-1 df) or
                                           cluster bootstrap
:func:`design_effect`                      clustered over naive variance of the mean, and the ICC
:func:`cluster_paired_test`                sign-flip randomization test of a paired difference,
                                           flipping whole clusters, with its resolution
:func:`clustered_min_detectable_difference`  smallest detectable difference with n / deff queries
:func:`clustered_topic_set_size`           queries needed, about deff times the independent count
=========================================  =========================================================

With :math:`m` queries per cluster and intra-cluster correlation :math:`\rho`, the variance of
a mean is :math:`1 + (m - 1)\rho` times the naive :math:`\sigma^2 / n` (Kish 1965): 20 variants
of each question with :math:`\rho = 0.1` make a standard error 1.7 times the naive one.
Miller, "Adding error bars to evals" (2024), found clustered standard errors 2-3 times the
naive ones on language-model benchmarks.

References
----------
Kish, *Survey Sampling* (1965), §5.4 (the design effect). Cameron & Miller, "A practitioner's
guide to cluster-robust inference", J. Human Resources 50 (2015) (CR1, G - 1 degrees of
freedom, the cluster bootstrap). Donner & Koval, "The estimation of intraclass correlation in
the analysis of family data", Biometrics 36 (1980) (the one-way ANOVA estimator).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from scipy import sparse
from scipy import stats as sps
from scipy.sparse import csgraph

from evalvalidity.core._validate import (
    _choice,
    _finite_values,
    _generator,
    _int_at_least,
    _open_unit,
    _positive,
    _same_length,
    _shown,
)
from evalvalidity.core.stats import (
    _BLOCK_ELEMENTS,
    Interval,
    _min_detectable_difference,
    _paired_t_power,
    _power_target,
    _sign_flip_p_value,
    _smallest_sufficient,
    _topic_set_size,
)
from evalvalidity.errors import EvalValidityWarning, ParameterError

__all__ = [
    "ClusterRandomizationTest",
    "ClusteredInterval",
    "DesignEffect",
    "cluster_mean_interval",
    "cluster_paired_test",
    "clustered_min_detectable_difference",
    "clustered_topic_set_size",
    "clusters_from_shared_gold",
    "design_effect",
]

_CLUSTER_METHODS: Final = ("sandwich", "bootstrap")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusteredInterval:
    """A cluster-robust interval of a mean, beside the naive standard error.

    Attributes
    ----------
    interval : Interval
        ``method`` is ``"sandwich"`` or ``"cluster-bootstrap"``.
    standard_error : float
        Cluster-robust standard error of the mean: the CR1 sandwich, or the standard deviation
        of the cluster-bootstrap replicates.
    naive_standard_error : float
        ``std(values, ddof=1) / sqrt(n)``, the standard error if the queries were independent.
    n_queries, n_clusters : int
    """

    interval: Interval
    standard_error: float
    naive_standard_error: float
    n_queries: int
    n_clusters: int

    @property
    def design_effect(self) -> float:
        """``(standard_error / naive_standard_error) ** 2``; NaN when the naive one is 0."""
        if self.naive_standard_error == 0.0:
            return math.nan
        return (self.standard_error / self.naive_standard_error) ** 2


@dataclass(frozen=True)
class DesignEffect:
    r"""How much clustering inflates the variance of a mean.

    Attributes
    ----------
    design_effect : float
        Clustered (CR1 sandwich) over naive variance of the mean.
    icc : float
        Intra-cluster correlation by the one-way ANOVA estimator; NaN when every cluster has
        one query.
    icc_design_effect : float
        The model's design effect :math:`1 + (\bar m_w - 1)\,\rho` with the size-weighted
        mean cluster size :math:`\bar m_w = \sum_g m_g^2 / n`.
    effective_n : float
        ``n_queries / design_effect``: the number of independent queries worth as much.
    n_queries, n_clusters : int
    mean_cluster_size : float
        ``n_queries / n_clusters``.
    """

    design_effect: float
    icc: float
    icc_design_effect: float
    effective_n: float
    n_queries: int
    n_clusters: int
    mean_cluster_size: float


@dataclass(frozen=True)
class ClusterRandomizationTest:
    """Result of a cluster sign-flip randomization test.

    Attributes
    ----------
    difference : float
        Observed mean of ``a - b`` over the queries.
    p_value : float
        Two-sided p-value.
    n_resamples : int
        Sign vectors evaluated: ``2**G`` when exact, else the Monte Carlo count.
    exact : bool
        True when every sign vector was enumerated.
    n_clusters : int
    resolution : float
        Smallest p-value the test can report: ``2 / 2**G`` when exact (a sign vector and its
        opposite give the same statistic), ``1 / (n_resamples + 1)`` by Monte Carlo. A p-value
        equal to it means "this small or smaller".
    """

    difference: float
    p_value: float
    n_resamples: int
    exact: bool
    n_clusters: int
    resolution: float


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _cluster_codes(clusters: Any, n: int, func: str) -> tuple[np.ndarray, int]:
    """Codes 0..G-1 of the cluster labels (one per query, ints or strings), and G."""
    raw = np.asarray(clusters)
    if raw.dtype.kind == "O" and all(isinstance(label, str) for label in raw.ravel()):
        raw = raw.astype(str)
    if raw.dtype.kind not in "iuUS":
        raise ParameterError(
            f"The 'clusters' parameter of {func} must be a 1-D array of int or str labels. "
            f"Got dtype {raw.dtype} instead."
        )
    if raw.ndim != 1 or raw.size != n:
        raise ParameterError(
            f"The 'clusters' parameter of {func} must hold one label per query ({n}). "
            f"Got shape {raw.shape} instead."
        )
    _, codes = np.unique(raw, return_inverse=True)
    codes = codes.astype(np.int64).ravel()
    return codes, int(codes.max()) + 1


def _at_least_two_clusters(n_clusters: int, func: str) -> None:
    if n_clusters < 2:
        raise ParameterError(
            f"The 'clusters' parameter of {func} must hold at least 2 distinct clusters. "
            f"Got {n_clusters} instead."
        )


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


def _cluster_totals(values: np.ndarray, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """Sums of ``values`` (shape (n,) or (n, r)) within each cluster: shape (G,) or (G, r)."""
    if values.ndim == 1:
        return np.bincount(codes, weights=values, minlength=n_clusters)
    return np.stack(
        [np.bincount(codes, weights=column, minlength=n_clusters) for column in values.T], axis=1
    )


def _sandwich_variance(values: np.ndarray, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """CR1 variance of the mean of each column: G/(G-1) Σ_g (Σ_{i∈g} e_i)² / n²."""
    n = values.shape[0]
    residual_sums = _cluster_totals(values - values.mean(axis=0), codes, n_clusters)
    scale = n_clusters / (n_clusters - 1) / n**2
    return np.asarray(scale * np.sum(residual_sums**2, axis=0))


def _cluster_bootstrap_means(
    totals: np.ndarray, sizes: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Means over ``n_resamples`` resamples of the clusters with replacement: shape (B,) + r.

    A resample's multiplicities are Multinomial(G, 1/G each); its mean is the resampled total
    over the resampled number of queries.
    """
    n_clusters = sizes.size
    columns = 1 if totals.ndim == 1 else totals.shape[1]
    block = max(1, _BLOCK_ELEMENTS // (n_clusters * columns))
    out = np.empty((n_resamples, *totals.shape[1:]))
    uniform = np.full(n_clusters, 1.0 / n_clusters)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        weights = rng.multinomial(n_clusters, uniform, size=stop - start).astype(np.float64)
        counts = weights @ sizes
        sums = weights @ totals
        out[start:stop] = sums / (counts if totals.ndim == 1 else counts[:, None])
    return out


def _anova_icc(values: np.ndarray, codes: np.ndarray, n_clusters: int) -> float:
    """One-way ANOVA estimator (MSB - MSW) / (MSB + (m0 - 1) MSW); NaN if no cluster has 2."""
    n = values.size
    if n == n_clusters:
        return math.nan
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    means = _cluster_totals(values, codes, n_clusters) / sizes
    grand = values.mean()
    between = float(np.sum(sizes * (means - grand) ** 2)) / (n_clusters - 1)
    within = float(np.sum((values - means[codes]) ** 2)) / (n - n_clusters)
    m0 = (n - float(np.sum(sizes**2)) / n) / (n_clusters - 1)
    denominator = between + (m0 - 1.0) * within
    if denominator == 0.0:
        return math.nan
    return (between - within) / denominator


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def clusters_from_shared_gold(gold: Any, *, n_queries: int | None = None) -> np.ndarray:
    """Cluster queries that share gold documents, directly or through other queries.

    Queries and documents are the nodes of a bipartite graph with an edge from each query to
    each of its gold documents; the clusters are the graph's connected components
    (``scipy.sparse.csgraph.connected_components``), so two queries are in one cluster when a
    chain of shared gold documents links them. A query without gold is a cluster of its own.

    Parameters
    ----------
    gold : sequence of array_like of int, or ndarray of int, shape (m, 2)
        Either a list (or tuple) with one array of gold document codes per query, or a 2-D
        integer array of ``(query_index, doc_code)`` pairs. A 2-D array is always read as
        pairs.
    n_queries : int, optional
        Number of queries, for pairs only: defaults to the largest query index + 1; pass it
        when the last queries have no gold.

    Returns
    -------
    ndarray of int64, shape (n_queries,)
        Cluster labels 0, 1, 2, ... numbered in order of each cluster's first query.

    Raises
    ------
    ParameterError
        On codes that are not integers, negative or too large query indices, or ``n_queries``
        given with per-query arrays.

    Examples
    --------
    Queries 0 and 2 share document 7; query 3 shares document 9 with query 2; query 1 stands
    alone, and so does query 4, which has no gold:

    >>> clusters_from_shared_gold([[7, 8], [5], [7, 9], [9], []]).tolist()
    [0, 1, 0, 0, 2]
    >>> pairs = [[0, 7], [0, 8], [1, 5], [2, 7], [2, 9], [3, 9]]
    >>> clusters_from_shared_gold(np.array(pairs), n_queries=5).tolist()
    [0, 1, 0, 0, 2]
    """
    func = "clusters_from_shared_gold"
    if isinstance(gold, np.ndarray) and gold.ndim == 2:
        if gold.dtype.kind not in "iu" or gold.shape[1] != 2:
            raise ParameterError(
                f"The 'gold' parameter of {func} given as a 2-D array must hold int "
                f"(query_index, doc_code) pairs, shape (m, 2). Got dtype {gold.dtype} and "
                f"shape {gold.shape} instead."
            )
        query_index = gold[:, 0].astype(np.int64)
        doc_codes = gold[:, 1].astype(np.int64)
        if query_index.size and query_index.min() < 0:
            raise ParameterError(
                f"The query indices given to {func} must be >= 0. "
                f"Got {int(query_index.min())} instead."
            )
        largest = int(query_index.max()) + 1 if query_index.size else 0
        if n_queries is None:
            n = largest
        else:
            n = _int_at_least(n_queries, 1, "n_queries", func)
            if n < largest:
                raise ParameterError(
                    f"The 'n_queries' parameter of {func} must exceed every query index. "
                    f"Got {n} with a query index of {largest - 1} instead."
                )
    elif isinstance(gold, Sequence) and not isinstance(gold, str):
        if n_queries is not None:
            raise ParameterError(
                f"The 'n_queries' parameter of {func} is for (query_index, doc_code) pairs; "
                f"with one array per query the count is len(gold). Got {_shown(n_queries)}."
            )
        n = len(gold)
        arrays = []
        for position, docs in enumerate(gold):
            codes = np.asarray(docs)
            if codes.size and (codes.ndim != 1 or codes.dtype.kind not in "iu"):
                raise ParameterError(
                    f"The gold of query {position} given to {func} must be a 1-D array of int "
                    f"document codes. Got dtype {codes.dtype} and shape {codes.shape} instead."
                )
            arrays.append(codes.astype(np.int64).ravel())
        sizes = [codes.size for codes in arrays]
        query_index = np.repeat(np.arange(n, dtype=np.int64), sizes)
        doc_codes = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.int64)
    else:
        raise ParameterError(
            f"The 'gold' parameter of {func} must be a list of per-query arrays of document "
            f"codes or a 2-D int array of (query_index, doc_code) pairs. "
            f"Got {type(gold).__name__} instead."
        )
    if n == 0:
        return np.empty(0, dtype=np.int64)
    docs, doc_nodes = np.unique(doc_codes, return_inverse=True)
    size = n + docs.size
    graph = sparse.coo_matrix(
        (np.ones(query_index.size, dtype=np.int8), (query_index, n + doc_nodes.ravel())),
        shape=(size, size),
    )
    _, labels = csgraph.connected_components(graph, directed=False)
    labels = labels[:n]
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    renumber = np.empty(first.size, dtype=np.int64)
    renumber[np.argsort(first, kind="stable")] = np.arange(first.size)
    return renumber[inverse.ravel()]


def cluster_mean_interval(
    values: Any,
    clusters: Any,
    *,
    method: str = "sandwich",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> ClusteredInterval:
    r"""Cluster-robust confidence interval of the mean of per-query values.

    With G clusters, residuals :math:`e_i = x_i - \bar x` and cluster sums
    :math:`E_g = \sum_{i \in g} e_i`, the CR1 sandwich variance of the mean and its interval are

    .. math:: \hat V = \frac{G}{G-1} \frac{\sum_g E_g^2}{n^2}, \qquad
              \bar x \pm t_{(1+c)/2,\,G-1} \sqrt{\hat V}

    (Cameron & Miller 2015). With one query per cluster this is exactly the Student t interval.
    ``method="bootstrap"`` resamples G clusters with replacement ``n_resamples`` times, takes
    each resample's mean over its queries (total over count) and the percentile interval.
    Both assume the clusters are independent of one another; neither assumes anything about
    the correlation inside a cluster. With few clusters (G < 20 or so) both undercover.

    Parameters
    ----------
    values : array_like of float, shape (n,)
        One finite value per query, n >= 2.
    clusters : array_like of int or str, shape (n,)
        The cluster of each query, at least two distinct labels.
    method : {"sandwich", "bootstrap"}
    confidence : float, default 0.95
    n_resamples : int, default 10_000
        Of the cluster bootstrap.
    rng : numpy.random.Generator, int or None
        Source of the bootstrap resamples; None draws fresh entropy.

    Returns
    -------
    ClusteredInterval
        Its ``design_effect`` compares the clustered and naive variances.

    Raises
    ------
    ParameterError
        On fewer than two values or clusters, labels of another length, or arguments outside
        their domain.

    Warns
    -----
    EvalValidityWarning
        When all values are equal: the interval is the point ``[v, v]``.

    Examples
    --------
    Two clusters of identical values: the four queries carry the information of two.

    >>> result = cluster_mean_interval([0.2, 0.2, 0.6, 0.6], [0, 0, 1, 1])
    >>> result.interval.format(4), result.n_clusters
    ('0.4000 [-2.1412, 2.9412]', 2)
    >>> round(result.standard_error, 4), round(result.naive_standard_error, 4)
    (0.2, 0.1155)
    >>> round(result.design_effect, 4)
    3.0
    """
    func = "cluster_mean_interval"
    values = _finite_values(values, "values", func)
    codes, n_clusters = _cluster_codes(clusters, values.size, func)
    _at_least_two_clusters(n_clusters, func)
    method = _choice(method, _CLUSTER_METHODS, "method", func)
    confidence = _open_unit(confidence, "confidence", func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)
    n = values.size
    estimate = float(values.mean())
    naive = float(values.std(ddof=1)) / math.sqrt(n)
    if np.ptp(values) == 0.0:
        warnings.warn(
            f"{func}: the values are all equal, so the interval has zero width.",
            EvalValidityWarning,
            stacklevel=2,
        )
        label = "sandwich" if method == "sandwich" else "cluster-bootstrap"
        point = Interval(estimate, estimate, estimate, confidence, label)
        return ClusteredInterval(point, 0.0, 0.0, n, n_clusters)
    if method == "sandwich":
        standard_error = math.sqrt(float(_sandwich_variance(values, codes, n_clusters)))
        half = float(sps.t.ppf((1.0 + confidence) / 2.0, n_clusters - 1)) * standard_error
        interval = Interval(estimate, estimate - half, estimate + half, confidence, "sandwich")
    else:
        totals = _cluster_totals(values, codes, n_clusters)
        sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
        replicates = _cluster_bootstrap_means(totals, sizes, n_resamples, generator)
        tails = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
        low, high = np.quantile(replicates, tails)
        standard_error = float(replicates.std(ddof=1)) if n_resamples > 1 else 0.0
        interval = Interval(estimate, float(low), float(high), confidence, "cluster-bootstrap")
    return ClusteredInterval(interval, standard_error, naive, n, n_clusters)


def design_effect(values: Any, clusters: Any) -> DesignEffect:
    r"""Design effect of clustering on a mean, and the intra-cluster correlation.

    The design effect is the CR1 sandwich variance of the mean (:func:`cluster_mean_interval`)
    over the naive one, :math:`\text{deff} = \hat V / (s^2 / n)`. Under independence it is
    close to 1 (exactly unbiased for equal cluster sizes). The intra-cluster correlation is
    the one-way ANOVA estimator

    .. math:: \hat\rho = \frac{MSB - MSW}{MSB + (m_0 - 1)\,MSW}, \qquad
              m_0 = \frac{n - \sum_g m_g^2 / n}{G - 1},

    with :math:`MSB = \sum_g m_g (\bar x_g - \bar x)^2 / (G - 1)` and
    :math:`MSW = \sum_g \sum_{i \in g} (x_i - \bar x_g)^2 / (n - G)`; it can be negative. The
    exchangeable model predicts :math:`\text{deff} = 1 + (\bar m_w - 1)\rho` with
    :math:`\bar m_w = \sum_g m_g^2 / n` (Kish 1965), reported as ``icc_design_effect``.

    Parameters
    ----------
    values : array_like of float, shape (n,)
        One finite value per query (or per-query paired differences), n >= 2, not all equal.
    clusters : array_like of int or str, shape (n,)
        At least two distinct labels.

    Returns
    -------
    DesignEffect

    Raises
    ------
    ParameterError
        On fewer than two values or clusters, labels of another length, or values all equal
        (no variance to inflate).

    Warns
    -----
    EvalValidityWarning
        When every cluster has one query: the ICC is NaN (not estimable).

    Examples
    --------
    >>> result = design_effect([0.0, 0.0, 1.0, 1.0, 0.0, 1.0], [0, 0, 1, 1, 2, 2])
    >>> round(result.design_effect, 4), round(result.icc, 4), round(result.icc_design_effect, 4)
    (1.6667, 0.5, 1.5)
    >>> result.n_clusters, round(result.effective_n, 4)
    (3, 3.6)
    """
    func = "design_effect"
    values = _finite_values(values, "values", func)
    codes, n_clusters = _cluster_codes(clusters, values.size, func)
    _at_least_two_clusters(n_clusters, func)
    if np.ptp(values) == 0.0:
        raise ParameterError(
            f"The 'values' parameter of {func} must not be all equal: a design effect is a "
            f"ratio of variances. Got {values.size} copies of {float(values[0])!r} instead."
        )
    n = values.size
    naive = float(values.var(ddof=1)) / n
    deff = float(_sandwich_variance(values, codes, n_clusters)) / naive
    if n == n_clusters:
        warnings.warn(
            f"{func}: every cluster holds one query, so the intra-cluster correlation is not "
            "estimable; it is NaN.",
            EvalValidityWarning,
            stacklevel=2,
        )
    icc = _anova_icc(values, codes, n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    weighted_size = float(np.sum(sizes**2)) / n
    return DesignEffect(
        design_effect=deff,
        icc=icc,
        icc_design_effect=1.0 + (weighted_size - 1.0) * icc,
        effective_n=n / deff,
        n_queries=n,
        n_clusters=n_clusters,
        mean_cluster_size=n / n_clusters,
    )


def cluster_paired_test(
    a: Any,
    b: Any,
    clusters: Any,
    *,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> ClusterRandomizationTest:
    r"""Two-sided paired randomization test that flips the sign of whole clusters.

    Under the null hypothesis that the two systems are exchangeable within each cluster, the
    cluster sums :math:`D_g = \sum_{i \in g} (a_i - b_i)` are symmetric about 0 and
    independent, so every sign vector :math:`s \in \{\pm 1\}^G` is equally likely:

    .. math:: p = \frac{\#\{s : |\sum_g s_g D_g| \ge |\sum_g D_g|\}}{2^G}

    enumerated exactly when :math:`2^G \le` ``n_resamples``, else estimated from
    ``n_resamples`` random sign vectors as :math:`(\#\{\ldots\} + 1) / (B + 1)` (Phipson &
    Smyth 2010). With one query per cluster it is
    :func:`~evalvalidity.core.stats.paired_randomization_test`. Its resolution, the smallest
    p it can report, is :math:`2 / 2^G` exact and :math:`1 / (B + 1)` by Monte Carlo: with 5
    clusters no difference, however large, reaches p < 0.0625.

    Parameters
    ----------
    a, b : array_like of float, shape (n,)
        Per-query values of two systems over the same queries, n >= 2.
    clusters : array_like of int or str, shape (n,)
        At least two distinct labels.
    n_resamples : int, default 10_000
    rng : numpy.random.Generator, int or None
        Used only by the Monte Carlo test.

    Returns
    -------
    ClusterRandomizationTest

    Raises
    ------
    ParameterError
        On mismatched lengths, fewer than two clusters, non-finite values.

    Examples
    --------
    Three clusters with difference sums 1, 2 and 3: the eight signed sums are ±6, ±4, ±2, 0, 0.

    >>> test = cluster_paired_test([0.5, 0.5, 1.0, 1.0, 1.0, 1.0], [0.0] * 6, [0, 0, 1, 1, 2, 2])
    >>> round(test.difference, 4), test.p_value, test.exact, test.resolution
    (0.8333, 0.25, True, 0.25)
    """
    func = "cluster_paired_test"
    first = _finite_values(a, "a", func)
    second = _finite_values(b, "b", func)
    _same_length(first, second, ("a", "b"), func)
    codes, n_clusters = _cluster_codes(clusters, first.size, func)
    _at_least_two_clusters(n_clusters, func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)
    differences = first - second
    sums = _cluster_totals(differences, codes, n_clusters)
    p_value, resamples, exact = _sign_flip_p_value(sums, n_resamples, generator)
    resolution = 2.0 / resamples if exact else 1.0 / (resamples + 1)
    return ClusterRandomizationTest(
        float(differences.mean()), p_value, resamples, exact, n_clusters, resolution
    )


def _design_effect_argument(value: Any, func: str) -> float:
    return _positive(value, "design_effect", func)


def clustered_min_detectable_difference(
    variance: float,
    n_queries: int,
    design_effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    r"""Smallest detectable difference when the queries are clustered.

    :func:`~evalvalidity.core.stats.min_detectable_difference` with the effective number of
    queries :math:`n_\text{eff} = n / \text{deff}` in place of n: the noncentral-t power
    :math:`P(|T'| > t_{1-\alpha/2,\,n_\text{eff}-1})`,
    :math:`T' \sim t'_{n_\text{eff}-1}(\delta \sqrt{n_\text{eff}} / \sigma)`, solved for
    :math:`\delta`. For large n this is about :math:`\sqrt{\text{deff}}` times the
    independent answer. Take ``design_effect`` from :func:`design_effect` on pilot paired
    differences.

    Parameters
    ----------
    variance : float
        Per-query variance of the paired differences, > 0.
    n_queries : int
        Number of queries, >= 2.
    design_effect : float
        Variance inflation of the mean, > 0, with ``n_queries / design_effect >= 2``.
    alpha : float, default 0.05
    power : float, default 0.8
        In (alpha, 1).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        When an argument is outside its domain.

    Examples
    --------
    With a design effect of 1 it is the independent answer (G*Power: n = 34 for d_z = 0.5);
    200 queries in clusters that double the variance are worth 100:

    >>> round(clustered_min_detectable_difference(1.0, 34, 1.0), 4)
    0.495
    >>> from evalvalidity.core.stats import min_detectable_difference
    >>> clustered_min_detectable_difference(1.0, 200, 2.0) == min_detectable_difference(1.0, 100)
    True
    """
    func = "clustered_min_detectable_difference"
    variance = _positive(variance, "variance", func)
    n_queries = _int_at_least(n_queries, 2, "n_queries", func)
    deff = _design_effect_argument(design_effect, func)
    alpha = _open_unit(alpha, "alpha", func)
    power = _power_target(power, alpha, func)
    effective = n_queries / deff
    if effective < 2.0:
        raise ParameterError(
            f"The 'design_effect' parameter of {func} must leave at least 2 effective queries "
            f"(n_queries / design_effect >= 2). Got {n_queries} / {deff:g} = {effective:g} "
            f"instead."
        )
    return _min_detectable_difference(math.sqrt(variance), effective, alpha, power)


def clustered_topic_set_size(
    delta: float,
    variance: float,
    design_effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    r"""Count the queries needed to detect a difference when the queries are clustered.

    The smallest n whose effective count :math:`n / \text{deff}` reaches the power of
    :func:`~evalvalidity.core.stats.topic_set_size`:

    .. math:: \min\{n : P(|T'| > t_{1-\alpha/2,\,n/\text{deff}-1}) \ge \text{power}\},
              \qquad T' \sim t'_{n/\text{deff}-1}(\delta \sqrt{n / \text{deff}} / \sigma),

    which is at most :math:`\lceil \text{deff} \cdot n_\text{indep} \rceil`. It assumes the
    new queries come in clusters like the pilot's (the same sizes and correlation), so that
    the design effect stays put: adding variants of the same questions does not help.

    Parameters
    ----------
    delta : float
        Smallest true mean difference worth detecting, > 0.
    variance : float
        Per-query variance of the paired differences, > 0.
    design_effect : float
        Variance inflation of the mean, > 0.
    alpha : float, default 0.05
    power : float, default 0.8

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        When an argument is outside its domain.

    Examples
    --------
    >>> clustered_topic_set_size(0.5, 1.0, 1.0), clustered_topic_set_size(0.5, 1.0, 2.5)
    (34, 84)
    """
    func = "clustered_topic_set_size"
    delta = _positive(delta, "delta", func)
    variance = _positive(variance, "variance", func)
    deff = _design_effect_argument(design_effect, func)
    alpha = _open_unit(alpha, "alpha", func)
    power = _power_target(power, alpha, func)
    effect = delta / math.sqrt(variance)
    independent = _topic_set_size(effect, alpha, power)

    def enough(n: int) -> bool:
        effective = n / deff
        return effective > 1.0 and (
            float(_paired_t_power(effect, np.array(effective), alpha)) >= power
        )

    high = max(2, math.ceil(deff * independent))
    while not enough(high):  # rounding can leave ceil(deff * n) a hair short
        high += 1
    return _smallest_sufficient(1, high, enough)
