"""Tests of evalvalidity.core.clustered: hand examples, brute force and simulations of known ICC."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from evalvalidity.core.clustered import (
    ClusteredInterval,
    cluster_mean_interval,
    cluster_paired_test,
    clustered_min_detectable_difference,
    clustered_topic_set_size,
    clusters_from_shared_gold,
    design_effect,
)
from evalvalidity.core.stats import (
    _paired_t_power,
    mean_interval,
    min_detectable_difference,
    paired_randomization_test,
    topic_set_size,
)
from evalvalidity.errors import EvalValidityWarning, ParameterError

REPS = 400
# Three binomial standard errors of a 95 % coverage estimated from REPS replications.
BAND = 3.0 * math.sqrt(0.95 * 0.05 / REPS)


def clustered_normal(
    n_clusters: int, size: int, icc: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Values u_g + e_i with Var u = icc, Var e = 1 - icc: ICC exactly ``icc``, mean 0."""
    shared = rng.normal(0.0, math.sqrt(icc), size=n_clusters)
    noise = rng.normal(0.0, math.sqrt(1.0 - icc), size=(n_clusters, size))
    codes = np.repeat(np.arange(n_clusters), size)
    return (shared[:, None] + noise).ravel(), codes


def clustered_bernoulli(
    n_clusters: int, size: int, mean: float, icc: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Beta-binomial clusters: p_g ~ Beta(a, b) with a + b = 1/icc - 1, so the ICC is ``icc``."""
    total = 1.0 / icc - 1.0
    p = rng.beta(mean * total, (1.0 - mean) * total, size=n_clusters)
    values = (rng.random((n_clusters, size)) < p[:, None]).astype(np.float64)
    return values.ravel(), np.repeat(np.arange(n_clusters), size)


# ---------------------------------------------------------------------------- shared gold


def test_clusters_from_shared_gold_hand_example() -> None:
    # 0-2 share doc 7, 2-3 share doc 9 (so 0, 2, 3 by a chain), 5-6 share 11, 1 and 4 alone.
    gold = [[7, 8], [5], [7, 9], [9], [], [11, 12], [11]]
    assert clusters_from_shared_gold(gold).tolist() == [0, 1, 0, 0, 2, 3, 3]


def test_clusters_from_shared_gold_pairs_agree_with_lists() -> None:
    rng = np.random.default_rng(3)
    gold = [rng.choice(60, size=rng.integers(0, 4), replace=False) for _ in range(50)]
    pairs = np.array([(q, d) for q, docs in enumerate(gold) for d in docs], dtype=np.int64)
    from_lists = clusters_from_shared_gold(gold)
    from_pairs = clusters_from_shared_gold(pairs, n_queries=50)
    np.testing.assert_array_equal(from_lists, from_pairs)
    # Brute force: two queries are together iff linked by a chain of shared documents.
    together = np.array([[bool(set(a) & set(b)) for b in gold] for a in gold]) | np.eye(
        50, dtype=bool
    )
    for _ in range(50):
        together = (together.astype(int) @ together.astype(int)) > 0
    np.testing.assert_array_equal(together, from_lists[:, None] == from_lists[None, :])
    # Labels are numbered by first appearance.
    _, first = np.unique(from_lists, return_index=True)
    assert np.all(np.diff(first) > 0)


def test_clusters_from_shared_gold_trailing_queries_without_gold() -> None:
    pairs = np.array([[0, 1], [1, 1]])
    assert clusters_from_shared_gold(pairs).tolist() == [0, 0]
    assert clusters_from_shared_gold(pairs, n_queries=4).tolist() == [0, 0, 1, 2]


def test_clusters_from_shared_gold_errors() -> None:
    func = "clusters_from_shared_gold"
    with pytest.raises(ParameterError, match=f"The 'n_queries' parameter of {func} must exceed"):
        clusters_from_shared_gold(np.array([[3, 1]]), n_queries=2)
    with pytest.raises(ParameterError, match=r"The query indices given to .* must be >= 0. Got -1"):
        clusters_from_shared_gold(np.array([[-1, 1]]))
    with pytest.raises(ParameterError, match=r"must hold int \(query_index, doc_code\) pairs"):
        clusters_from_shared_gold(np.array([[0.0, 1.0]]))
    with pytest.raises(ParameterError, match="The gold of query 1 given to"):
        clusters_from_shared_gold([[1], ["a"]])
    with pytest.raises(ParameterError, match="is for \\(query_index, doc_code\\) pairs"):
        clusters_from_shared_gold([[1], [2]], n_queries=2)
    with pytest.raises(ParameterError, match="Got str instead"):
        clusters_from_shared_gold("abc")


# ---------------------------------------------------------------------------- intervals


def test_sandwich_with_singleton_clusters_is_the_t_interval() -> None:
    values = np.random.default_rng(1).exponential(size=30)
    result = cluster_mean_interval(values, np.arange(30))
    expected = sps.ttest_1samp(values, 0.0).confidence_interval(0.95)
    assert result.interval.low == pytest.approx(expected.low, rel=1e-12)
    assert result.interval.high == pytest.approx(expected.high, rel=1e-12)
    assert result.design_effect == pytest.approx(1.0, rel=1e-12)


def test_sandwich_matches_hand_cr1() -> None:
    values = np.array([0.1, 0.4, 0.5, 0.9, 0.2, 0.3, 0.8])
    labels = np.array(["x", "x", "y", "y", "y", "z", "z"])
    result = cluster_mean_interval(values, labels, confidence=0.9)
    mean = values.mean()
    sums = [np.sum(values[labels == g] - mean) for g in "xyz"]
    se = math.sqrt(3 / 2 * sum(s * s for s in sums) / 49)
    half = sps.t.ppf(0.95, 2) * se
    assert result.standard_error == pytest.approx(se, rel=1e-12)
    assert result.interval.low == pytest.approx(mean - half, rel=1e-12)
    assert result.interval.high == pytest.approx(mean + half, rel=1e-12)
    assert (result.n_queries, result.n_clusters) == (7, 3)


def test_cluster_bootstrap_is_reproducible_and_brackets_the_mean() -> None:
    values, codes = clustered_normal(30, 4, 0.3, np.random.default_rng(5))
    first = cluster_mean_interval(values, codes, method="bootstrap", n_resamples=2000, rng=7)
    second = cluster_mean_interval(values, codes, method="bootstrap", n_resamples=2000, rng=7)
    assert first == second
    assert first.interval.method == "cluster-bootstrap"
    assert first.interval.low < values.mean() < first.interval.high
    sandwich = cluster_mean_interval(values, codes)
    assert first.standard_error == pytest.approx(sandwich.standard_error, rel=0.15)


@pytest.mark.parametrize("method", ["sandwich", "bootstrap"])
def test_clustered_normal_coverage_nominal_and_naive_undercovers(method: str) -> None:
    # 40 clusters of 5 with ICC 0.3: design effect 1 + 4 * 0.3 = 2.2, so the naive t interval
    # is sqrt(2.2) = 1.48 times too narrow and covers about 81 %.
    rng = np.random.default_rng(2024)
    clustered = naive = 0
    for _ in range(REPS):
        values, codes = clustered_normal(40, 5, 0.3, rng)
        result = cluster_mean_interval(values, codes, method=method, n_resamples=1000, rng=rng)
        clustered += result.interval.contains(0.0)
        naive += mean_interval(values, method="t").contains(0.0)
    assert abs(clustered / REPS - 0.95) <= BAND
    assert naive / REPS < 0.95 - BAND
    assert naive / REPS < 0.88


@pytest.mark.parametrize("method", ["sandwich", "bootstrap"])
def test_clustered_bernoulli_coverage_nominal_and_naive_undercovers(method: str) -> None:
    # Hit@k-like 0/1 values: 50 clusters of 8 variants, mean 0.3, ICC 0.25 (deff 2.75).
    rng = np.random.default_rng(7)
    clustered = naive = 0
    for _ in range(REPS):
        values, codes = clustered_bernoulli(50, 8, 0.3, 0.25, rng)
        result = cluster_mean_interval(values, codes, method=method, n_resamples=1000, rng=rng)
        clustered += result.interval.contains(0.3)
        naive += mean_interval(values, method="t").contains(0.3)
    assert abs(clustered / REPS - 0.95) <= BAND
    assert naive / REPS < 0.85


def test_independent_queries_in_arbitrary_clusters_still_cover() -> None:
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(REPS):
        values = rng.normal(size=120)
        covered += cluster_mean_interval(values, rng.integers(0, 30, size=120)).interval.contains(0)
    assert abs(covered / REPS - 0.95) <= BAND


def test_constant_values_warn_and_give_a_point() -> None:
    with pytest.warns(EvalValidityWarning, match="cluster_mean_interval: the values are all equal"):
        result = cluster_mean_interval([0.5] * 4, [0, 0, 1, 1])
    assert isinstance(result, ClusteredInterval)
    assert (result.interval.low, result.interval.high) == (0.5, 0.5)
    assert math.isnan(result.design_effect)


def test_cluster_mean_interval_errors() -> None:
    func = "cluster_mean_interval"
    with pytest.raises(
        ParameterError,
        match=f"The 'clusters' parameter of {func} must hold one label per query \\(3\\). Got shape \\(2,\\) instead.",
    ):
        cluster_mean_interval([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(
        ParameterError, match="must hold at least 2 distinct clusters. Got 1 instead."
    ):
        cluster_mean_interval([1.0, 2.0, 3.0], [4, 4, 4])
    with pytest.raises(
        ParameterError, match="must be a 1-D array of int or str labels. Got dtype float64"
    ):
        cluster_mean_interval([1.0, 2.0], [0.5, 1.5])
    with pytest.raises(
        ParameterError,
        match="The 'method' parameter of cluster_mean_interval must be one of 'sandwich', 'bootstrap'. Got 't' instead.",
    ):
        cluster_mean_interval([1.0, 2.0], [0, 1], method="t")
    with pytest.raises(ParameterError, match="The 'confidence' parameter"):
        cluster_mean_interval([1.0, 2.0], [0, 1], confidence=1.0)


# ---------------------------------------------------------------------------- design effect


@pytest.mark.parametrize(("size", "icc"), [(5, 0.3), (10, 0.1), (3, 0.0)])
def test_design_effect_matches_kish(size: int, icc: float) -> None:
    values, codes = clustered_normal(4000, size, icc, np.random.default_rng(size))
    result = design_effect(values, codes)
    expected = 1.0 + (size - 1) * icc
    assert result.icc == pytest.approx(icc, abs=0.03)
    assert result.design_effect == pytest.approx(expected, rel=0.12)
    assert result.icc_design_effect == pytest.approx(expected, rel=0.12)
    assert result.effective_n == pytest.approx(result.n_queries / result.design_effect)
    assert result.mean_cluster_size == size


def test_design_effect_unequal_sizes_uses_size_weighted_mean() -> None:
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 12, size=3000)
    codes = np.repeat(np.arange(sizes.size), sizes)
    values = rng.normal(0, math.sqrt(0.2), sizes.size)[codes] + rng.normal(
        0, math.sqrt(0.8), codes.size
    )
    result = design_effect(values, codes)
    weighted = np.sum(sizes**2) / sizes.sum()
    assert result.icc == pytest.approx(0.2, abs=0.03)
    assert result.design_effect == pytest.approx(1 + (weighted - 1) * 0.2, rel=0.12)


def test_design_effect_singletons_warn_nan_icc() -> None:
    with pytest.warns(EvalValidityWarning, match="every cluster holds one query"):
        result = design_effect([0.1, 0.5, 0.2], [0, 1, 2])
    assert math.isnan(result.icc)
    assert result.design_effect == pytest.approx(1.0)


def test_design_effect_constant_values_raise() -> None:
    with pytest.raises(
        ParameterError, match="The 'values' parameter of design_effect must not be all equal"
    ):
        design_effect([1.0, 1.0, 1.0, 1.0], [0, 0, 1, 1])


# ---------------------------------------------------------------------------- tests


def test_cluster_test_exact_equals_brute_force() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.random(14), rng.random(14)
    codes = np.array([0, 0, 1, 2, 2, 2, 3, 4, 4, 5, 5, 6, 6, 6])
    sums = np.array([np.sum((a - b)[codes == g]) for g in range(7)])
    observed = abs(sums.sum())
    hits = sum(
        abs(np.dot(signs, sums)) >= observed - 1e-12
        for signs in itertools.product([-1, 1], repeat=7)
    )
    result = cluster_paired_test(a, b, codes)
    assert result.exact and result.n_resamples == 128 and result.n_clusters == 7
    assert result.p_value == hits / 128
    assert result.resolution == 2 / 128


def test_cluster_test_with_singletons_is_the_paired_test() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.random(10), rng.random(10)
    assert (
        cluster_paired_test(a, b, np.arange(10)).p_value == paired_randomization_test(a, b).p_value
    )
    monte_carlo = cluster_paired_test(
        rng.random(40), rng.random(40), np.arange(40), n_resamples=999, rng=1
    )
    assert not monte_carlo.exact
    assert monte_carlo.resolution == 1 / 1000


def test_cluster_test_resolution_floors_the_p_value() -> None:
    # Five clusters: even a huge difference cannot go below 2 / 32.
    result = cluster_paired_test(np.ones(10), np.zeros(10), np.repeat(np.arange(5), 2))
    assert result.p_value == result.resolution == 0.0625


def test_cluster_test_null_rate_nominal_naive_test_too_liberal() -> None:
    # Differences share a cluster effect (ICC 0.4, clusters of 6): flipping whole clusters keeps
    # the level; flipping queries one by one rejects far too often.
    rng = np.random.default_rng(10)
    clustered = naive = 0
    for _ in range(REPS):
        differences, codes = clustered_normal(30, 6, 0.4, rng)
        zeros = np.zeros_like(differences)
        clustered += (
            cluster_paired_test(differences, zeros, codes, n_resamples=499, rng=rng).p_value <= 0.05
        )
        naive += (
            paired_randomization_test(differences, zeros, n_resamples=499, rng=rng).p_value <= 0.05
        )
    band = 3.0 * math.sqrt(0.05 * 0.95 / REPS)
    assert abs(clustered / REPS - 0.05) <= band
    assert naive / REPS > 0.15


def test_cluster_test_catches_a_real_difference() -> None:
    rng = np.random.default_rng(12)
    differences, codes = clustered_normal(40, 5, 0.3, rng)
    result = cluster_paired_test(differences + 0.6, np.zeros(200), codes, n_resamples=2000, rng=1)
    assert result.p_value == result.resolution


# ---------------------------------------------------------------------------- planning


def test_clustered_mdd_reduces_to_independent_and_grows_with_deff() -> None:
    assert clustered_min_detectable_difference(0.04, 100, 1.0) == pytest.approx(
        min_detectable_difference(0.04, 100), rel=1e-10
    )
    values = [clustered_min_detectable_difference(0.04, 300, d) for d in (1.0, 1.5, 2.2, 3.0)]
    assert np.all(np.diff(values) > 0)
    # Large n: about sqrt(deff) times the independent answer.
    ratio = clustered_min_detectable_difference(1.0, 20_000, 2.2) / min_detectable_difference(
        1.0, 20_000
    )
    assert ratio == pytest.approx(math.sqrt(2.2), rel=1e-3)


@pytest.mark.parametrize(("delta", "deff"), [(0.5, 1.0), (0.3, 1.7), (0.1, 2.2), (0.8, 0.8)])
def test_clustered_topic_set_size_is_the_smallest_sufficient(delta: float, deff: float) -> None:
    n = clustered_topic_set_size(delta, 1.0, deff)
    if deff == 1.0:
        assert n == topic_set_size(delta, 1.0)
    assert n <= math.ceil(deff * topic_set_size(delta, 1.0))
    assert float(_paired_t_power(delta, np.array(n / deff), 0.05)) >= 0.8
    if n - 1 > deff:
        assert float(_paired_t_power(delta, np.array((n - 1) / deff), 0.05)) < 0.8


def test_planning_errors() -> None:
    with pytest.raises(ParameterError, match="must leave at least 2 effective queries"):
        clustered_min_detectable_difference(1.0, 10, 6.0)
    with pytest.raises(
        ParameterError,
        match="The 'design_effect' parameter of clustered_topic_set_size must be a finite float > 0. Got 0 instead.",
    ):
        clustered_topic_set_size(0.1, 1.0, 0)
