"""Exact noise floors, tested four ways: enumeration of every permutation (N <= 7), Monte Carlo
(N = 50, 218, 1000), a table of exact values written by tests/reference/make_floor_reference.py,
and invariants (hypothesis); then the inversion from a measured score to a pool size."""

from __future__ import annotations

import ast
import itertools
import json
import math
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from brute import (
    brute_ceiling,
    brute_floor,
    brute_metric,
    monte_carlo_values,
    random_rankings,
    ranking_values,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from evalvalidity.core.floors import (
    Floor,
    InferredPoolSize,
    infer_benchmark_pool_size,
    infer_pool_size,
    noise_floor,
)
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import EvalValidityWarning, ParameterError

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference" / "floors_reference.json"
FAMILIES = ("rr", "hit", "p", "r", "rprec", "ap", "ndcg", "ndcg_exp")
INVERTIBLE = ("rr", "hit", "p", "r", "rprec", "ap")

# (mean, variance, ceiling) of a metric for a pool (grades of its items, 0 = not relevant) and
# the grades of every judged item of the query
FloorFunction = Callable[[str, Sequence[int], Sequence[int]], tuple[float, float, float]]


def harmonic(n: int, power: int = 1) -> float:
    return math.fsum(1 / i**power for i in range(1, n + 1))


def metric_names(family: str, cutoffs: Sequence[int | None]) -> list[str]:
    """The spellings of a family at the cutoffs it accepts."""
    if family == "rprec":
        return ["rprec"]
    names = []
    for k in cutoffs:
        if k is None and family in ("hit", "p", "r"):
            continue
        names.append(family if k is None else f"{family}@{k}")
    return names


def formula_floor(
    metric: str, pool_grades: Sequence[int], judged_grades: Sequence[int]
) -> tuple[float, float, float]:
    """noise_floor for one query described by its grades, as the enumerator sees it."""
    m = parse_metric(metric)
    n = len(pool_grades)
    gold = sum(1 for grade in pool_grades if grade >= m.rel)
    judged = sum(1 for grade in judged_grades if grade >= m.rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)  # G = 0 is part of the grid
        if m.family in ("ndcg", "ndcg_exp"):
            floor = noise_floor(
                m,
                n,
                gold,
                gains=[[x for x in pool_grades if x > 0]],
                judged_gains=[[x for x in judged_grades if x > 0]],
            )
        else:
            floor = noise_floor(m, n, gold, judged=judged)
    return float(floor.expected[0]), float(floor.variance[0]), float(floor.ceiling[0])


def enumerated_floor(
    metric: str, pool_grades: Sequence[int], judged_grades: Sequence[int]
) -> tuple[float, float, float]:
    mean, variance = brute_floor(metric, pool_grades, judged_grades)
    return mean, variance, brute_ceiling(metric, pool_grades, judged_grades)


BOTH = pytest.mark.parametrize(
    "floor_fn", [formula_floor, enumerated_floor], ids=["formula", "enumeration"]
)


# --------------------------------------------------------------------------------------------
# Checks shared by the formula and the enumerator
# --------------------------------------------------------------------------------------------


def check_bounds(
    floor_fn: FloorFunction, metric: str, pool: Sequence[int], judged: Sequence[int]
) -> None:
    """0 <= E <= ceiling <= 1, 0 <= Var <= E (ceiling − E) (Bhatia–Davis: values in [0, max])."""
    mean, variance, ceiling = floor_fn(metric, pool, judged)
    tol = 1e-12
    assert -tol <= mean <= ceiling + tol, (metric, pool, judged)
    assert ceiling <= 1 + tol
    assert variance >= 0
    assert variance <= mean * (ceiling - mean) + tol


def check_single_gold(floor_fn: FloorFunction, n: int, k: int) -> None:
    """G = 1: RR@k = H_K/N with variance H2_K/N − (H_K/N)², Hit@k = K/N, AP@k = H_K/N."""
    depth = min(k, n)
    pool = [1] + [0] * (n - 1)
    mean, variance, _ = floor_fn(f"rr@{k}", pool, [1])
    assert mean == pytest.approx(harmonic(depth) / n, rel=1e-12)
    assert variance == pytest.approx(
        harmonic(depth, 2) / n - (harmonic(depth) / n) ** 2, rel=1e-12, abs=1e-15
    )
    assert floor_fn(f"hit@{k}", pool, [1])[0] == pytest.approx(depth / n, rel=1e-12)
    assert floor_fn(f"ap@{k}", pool, [1])[0] == pytest.approx(harmonic(depth) / n, rel=1e-12)
    assert floor_fn(f"p@{k}", pool, [1])[0] == pytest.approx(depth / (n * k), rel=1e-12)


def check_monotone_in_gold(floor_fn: FloorFunction, metric: str, n: int, judged: int) -> None:
    """One more gold item in the pool never lowers the floor (R fixed)."""
    means = [
        floor_fn(metric, [1] * g + [0] * (n - g), [1] * judged)[0]
        for g in range(min(n, judged) + 1)
    ]
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(means)), (metric, means)


def check_reference_values(floor_fn: FloorFunction) -> None:
    """docs/math.md, Floors (k = 10) for the pool of 8."""
    pool8 = [1] + [0] * 7
    assert floor_fn("rr@10", pool8, [1])[0] == pytest.approx(0.3397, abs=5e-5)
    assert floor_fn("hit@10", pool8, [1])[0] == 1.0
    assert floor_fn("ndcg@10", pool8, [1])[0] == pytest.approx(0.4942, abs=5e-5)
    for g, value in ((1, 0.340), (3, 0.609), (5, 0.793), (6, 0.869)):
        assert floor_fn("mrr@10", [1] * g + [0] * (8 - g), [1] * g)[0] == pytest.approx(
            value, abs=5e-4
        )


@BOTH
def test_shared_checks_on_small_pools(floor_fn: FloorFunction) -> None:
    for n in (1, 2, 4, 7):
        for k in (1, 3, 10):
            check_single_gold(floor_fn, n, k)
        for family in FAMILIES:
            for metric in metric_names(family, (1, 3, None)):
                check_monotone_in_gold(floor_fn, metric, n, judged=n)
                for g in range(n + 1):
                    check_bounds(floor_fn, metric, [1] * g + [0] * (n - g), [1] * (g + 1))


@BOTH
def test_reference_values_of_math_md_pool_of_8(floor_fn: FloorFunction) -> None:
    check_reference_values(floor_fn)


def test_reference_values_of_math_md_larger_pools() -> None:
    def at(metric: str, n: int, g: int) -> float:
        return float(noise_floor(metric, n, g).expected[0])

    assert at("rr@10", 20, 4) == pytest.approx(0.4116, abs=5e-5)
    assert at("hit@10", 20, 4) == pytest.approx(0.9567, abs=5e-5)
    assert at("p@10", 20, 4) == pytest.approx(0.200, abs=5e-4)
    assert at("rr@10", 218, 1) == pytest.approx(harmonic(10) / 218, rel=1e-14)
    assert at("rr@10", 218, 1) == pytest.approx(0.013436, abs=5e-7)
    assert at("hit@10", 218, 1) == pytest.approx(0.0459, abs=5e-5)
    assert at("rr@10", 218, 3) == pytest.approx(0.03942, abs=5e-6)
    # G·H_k/N is 2.3 % high at N = 218, G = 3 and 80 % high at N = 8, G = 3
    assert 3 * harmonic(10) / 218 / at("rr@10", 218, 3) == pytest.approx(1.023, abs=1e-3)
    assert 3 * harmonic(10) / 8 / at("rr@10", 8, 3) == pytest.approx(1.80, abs=5e-3)


# --------------------------------------------------------------------------------------------
# Enumeration of every permutation, N <= 7
# --------------------------------------------------------------------------------------------


def assert_same_floor(metric: str, pool: Sequence[int], judged: Sequence[int]) -> None:
    mean, variance, ceiling = formula_floor(metric, pool, judged)
    brute_mean, brute_variance, brute_best = enumerated_floor(metric, pool, judged)
    context = (metric, list(pool), list(judged))
    assert abs(mean - brute_mean) <= 1e-12, context
    assert abs(variance - brute_variance) <= 1e-12, context
    assert abs(ceiling - brute_best) <= 1e-12, context


@pytest.mark.parametrize("n", range(1, 8))
def test_every_binary_metric_equals_enumeration(n: int) -> None:
    cutoffs = (1, 2, 3, 5, n, n + 2, None)
    for g in range(n + 1):
        pool = [1] * g + [0] * (n - g)
        for extra in (0, 2):  # R = G, and R > G: relevant items outside the pool
            judged = [1] * (g + extra)
            for family in FAMILIES:
                for metric in metric_names(family, [*sorted(set(cutoffs) - {None}), None]):
                    assert_same_floor(metric, pool, judged)


GRADED_POOLS = [
    # (pool grades, every judged grade)
    ([3, 1, 0, 0, 0], [3, 1]),
    ([2, 2, 1, 0, 0, 0, 0], [3, 2, 2, 1, 1]),
    ([1, 0, 0], [2, 1]),
    ([3, 0], [3, 3, 3]),
    ([4, 3, 2, 1, 0, 0], [4, 3, 2, 1]),
    ([2, 1, 1, 1, 1, 1, 0], [2, 2, 1, 1, 1, 1, 1]),
]


@pytest.mark.parametrize(("pool", "judged"), GRADED_POOLS)
def test_graded_metrics_equal_enumeration(pool: list[int], judged: list[int]) -> None:
    for metric in (
        "ndcg",
        "ndcg@1",
        "ndcg@2",
        "ndcg@3",
        "ndcg@10",
        "ndcg_exp",
        "ndcg_exp@2",
        "ndcg_exp@4",
        "rr@2[rel>=2]",
        "hit@2[rel>=2]",
        "ap[rel>=2]",
        "ap@3[rel>=3]",
        "rprec[rel>=2]",
        "r@2[rel>=2]",
    ):
        assert_same_floor(metric, pool, judged)


def test_enumerator_scores_like_trec_eval_by_hand() -> None:
    # ranking: relevant at ranks 2 and 4; 3 judged relevant
    ranking = [0, 1, 0, 1, 0]
    assert brute_metric("rr@10", ranking, [1, 1, 1]) == 0.5
    assert brute_metric("rr@1", ranking, [1, 1, 1]) == 0.0
    assert brute_metric("p@10", ranking, [1, 1, 1]) == 0.2  # divides by k, not 5
    assert brute_metric("r@2", ranking, [1, 1, 1]) == pytest.approx(1 / 3)
    assert brute_metric("rprec", ranking, [1, 1, 1]) == pytest.approx(1 / 3)
    assert brute_metric("ap", ranking, [1, 1, 1]) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert brute_metric("ap@3", ranking, [1, 1, 1]) == pytest.approx((1 / 2) / 3)
    ideal = 2 + 1 / math.log2(3)
    assert brute_metric("ndcg", [0, 2, 1], [2, 1]) == pytest.approx(
        (2 / math.log2(3) + 1 / 2) / ideal
    )
    assert brute_metric("ndcg_exp@1", [2, 0], [2, 1]) == 1.0
    assert brute_metric("ap", [0, 0], []) == 0.0


# --------------------------------------------------------------------------------------------
# Monte Carlo for larger pools
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "draws"), [(50, 40_000), (218, 20_000), (1000, 8_000)])
def test_monte_carlo_agrees_within_four_standard_errors(n: int, draws: int) -> None:
    rng = np.random.default_rng(20261130 + n)
    shapes = [
        ([1] + [0] * (n - 1), [1]),
        ([1] * 3 + [0] * (n - 3), [1] * 5),
        ([1] * 10 + [0] * (n - 10), [1] * 10),
        ([3, 2, 2, 1] + [0] * (n - 4), [3, 3, 2, 2, 1]),
    ]
    metrics = [
        "rr@10",
        "rr",
        "hit@10",
        "p@10",
        "r@100",
        "rprec",
        "ap@10",
        "ap",
        "ndcg@10",
        "ndcg",
        "ndcg_exp@10",
        "rr@10[rel>=2]",
    ]
    for pool, judged in shapes:
        rankings = random_rankings(pool, draws, rng)  # one set of draws for every metric
        for metric in metrics:
            values = ranking_values(metric, rankings, judged)
            mean, variance, _ = formula_floor(metric, pool, judged)
            sample_mean = values.mean()
            sample_var = values.var()
            se_mean = math.sqrt(sample_var / draws)
            fourth = ((values - sample_mean) ** 4).mean()
            se_var = math.sqrt(max(fourth - sample_var**2, 0.0) / draws)
            context = (metric, n, pool[:5], judged)
            assert abs(sample_mean - mean) <= 4 * se_mean + 1e-12, context
            assert abs(sample_var - variance) <= 4 * se_var + 1e-12, context


def test_monte_carlo_values_match_the_plain_definitions() -> None:
    rng = np.random.default_rng(7)
    pool = [2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    judged = [2, 2, 1, 1]
    rankings = random_rankings(pool, 30, rng)
    for metric in (
        "rr@5",
        "hit@3",
        "p@4",
        "r@6",
        "rprec",
        "ap",
        "ap@5",
        "ndcg@5",
        "ndcg_exp",
        "rr[rel>=2]",
    ):
        fast = ranking_values(metric, rankings, judged)
        slow = [brute_metric(metric, list(row), judged) for row in rankings]
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-15)
    again = monte_carlo_values("rr@5", pool, judged, 30, np.random.default_rng(7))
    np.testing.assert_array_equal(again, ranking_values("rr@5", rankings, judged))


# --------------------------------------------------------------------------------------------
# The exact reference table
# --------------------------------------------------------------------------------------------


def test_reference_table_is_matched() -> None:
    document = json.loads(REFERENCE.read_text(encoding="utf-8"))
    cases = document["cases"]
    assert len(cases) > 600
    assert document["generated_by"] == "tests/reference/make_floor_reference.py"
    for case in cases:
        if case["gains"] is None:
            floor = noise_floor(
                case["metric"], case["pool_size"], case["gold"], judged=case["judged"]
            )
        else:
            floor = noise_floor(
                case["metric"],
                case["pool_size"],
                case["gold"],
                gains=[case["gains"]],
                judged_gains=[case["judged_gains"]],
            )
        context = {key: case[key] for key in ("metric", "pool_size", "gold", "judged")}
        expected = float(case["expected"])
        assert floor.expected[0] == pytest.approx(expected, rel=1e-14, abs=1e-300), context
        # variances of nearly deterministic metrics (AP with 99 of 100 items gold) lose relative
        # precision to E[Y²] − E[Y]²: their error is a few ulps of E², not of Var
        assert floor.variance[0] == pytest.approx(
            float(case["variance"]), rel=1e-13, abs=1e-15 * expected**2
        ), context
        assert floor.ceiling[0] == pytest.approx(float(case["ceiling"]), rel=1e-14), context


def test_reference_table_covers_every_family_and_large_pools() -> None:
    cases = json.loads(REFERENCE.read_text(encoding="utf-8"))["cases"]
    families = {parse_metric(case["metric"]).family for case in cases}
    assert families == set(FAMILIES)
    assert max(case["pool_size"] for case in cases) == 10_000_000
    assert max(case["gold"] for case in cases) >= 50
    # beyond the 4096-entry tables (asymptotic H2 and Euler–Maclaurin discount sums)
    assert any(case["metric"] == "ndcg" and case["pool_size"] == 100_000 for case in cases)
    assert any(case["metric"] == "rr" and case["pool_size"] == 10_000 for case in cases)


# --------------------------------------------------------------------------------------------
# Invariants
# --------------------------------------------------------------------------------------------


@st.composite
def query_shapes(draw: st.DrawFn) -> tuple[str, int, int, int]:
    family = draw(st.sampled_from(FAMILIES))
    k = draw(st.one_of(st.none(), st.integers(1, 2000)))
    if family in ("hit", "p", "r") and k is None:
        k = 10
    metric = family if family == "rprec" or k is None else f"{family}@{k}"
    n = draw(st.one_of(st.integers(1, 60), st.integers(61, 10**7)))
    g = draw(st.integers(0, min(n, 60)))
    r = g + draw(st.integers(0, 5))
    return metric, n, g, r


@settings(max_examples=300, deadline=None)
@given(query_shapes())
def test_floor_invariants(shape: tuple[str, int, int, int]) -> None:
    metric, n, g, r = shape
    # the query itself, one more gold item (same R + 1), and a pool one larger
    pools = np.array([n, n + 1, n + 1])
    golds = np.array([g, min(g + 1, n + 1), g])
    judged = np.array([r + 1, r + 1, r + 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        floor = noise_floor(metric, pools, golds, judged=judged)
    tol = 1e-12
    assert np.all(floor.expected >= 0)
    assert np.all(floor.expected <= floor.ceiling + tol)
    assert np.all(floor.ceiling <= 1 + tol)
    assert np.all(floor.variance >= 0)
    assert np.all(floor.variance <= floor.expected * (floor.ceiling - floor.expected) + tol)
    # monotone: more gold raises the floor, a larger pool lowers it
    assert floor.expected[1] >= floor.expected[2] - tol
    assert floor.expected[2] <= floor.expected[0] + tol


def test_floor_is_exactly_zero_without_gold_and_warns_once() -> None:
    message = (
        r"^2 of 3 queries have no gold item in the pool \(gold = 0\): noise_floor returns"
        r" 0 for their floor, variance and ceiling\.$"
    )
    with pytest.warns(EvalValidityWarning, match=message) as record:
        floor = noise_floor("ap", [5, 5, 5], [0, 2, 0], judged=[3, 2, 0])
    assert len(record) == 1
    assert floor.expected[[0, 2]].tolist() == [0.0, 0.0]
    assert floor.variance[[0, 2]].tolist() == [0.0, 0.0]
    assert floor.ceiling[[0, 2]].tolist() == [0.0, 0.0]
    assert floor.expected[1] > 0


def test_no_warning_when_every_query_has_gold() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        noise_floor("rr@10", [5, 6], [1, 2])


def test_an_all_gold_pool_has_exactly_zero_variance() -> None:
    for metric in ("rr@10", "rr", "hit@3", "p@5", "r@5", "rprec", "ap@3", "ap", "ndcg@5"):
        floor = noise_floor(metric, [1, 3, 7, 100, 5000], [1, 3, 7, 100, 5000])
        assert floor.variance.tolist() == [0.0] * 5, metric
        np.testing.assert_allclose(floor.expected, floor.ceiling, rtol=1e-14)


def test_a_cutoff_beyond_the_pool_sees_the_whole_pool() -> None:
    for family in ("rr", "hit", "p", "r", "ap", "ndcg"):
        small = noise_floor(f"{family}@7", 7, 2, judged=3)
        large = noise_floor(f"{family}@1000", 7, 2, judged=3)
        if family == "p":  # P@k still divides by k
            np.testing.assert_allclose(large.expected * 1000, small.expected * 7, rtol=1e-14)
        else:
            np.testing.assert_allclose(large.expected, small.expected, rtol=1e-14)
            np.testing.assert_allclose(large.variance, small.variance, rtol=1e-12)
    np.testing.assert_allclose(
        noise_floor("rr@1000", 7, 2).expected, noise_floor("rr", 7, 2).expected, rtol=1e-14
    )


def test_vectorised_call_equals_one_query_at_a_time() -> None:
    rng = np.random.default_rng(3)
    n = rng.integers(1, 300, 200)
    g = np.minimum(rng.integers(0, 8, 200), n)
    r = g + rng.integers(0, 3, 200)
    for metric in (
        "rr@10",
        "rr",
        "hit@5",
        "p@10",
        "r@20",
        "rprec",
        "ap@10",
        "ap",
        "ndcg@10",
        "ndcg_exp",
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalValidityWarning)
            together = noise_floor(metric, n, g, judged=r)
            one_by_one = [
                noise_floor(metric, int(a), int(b), judged=int(c))
                for a, b, c in zip(n, g, r, strict=True)
            ]
        for name in ("expected", "variance", "ceiling"):
            np.testing.assert_allclose(
                getattr(together, name),
                [getattr(f, name)[0] for f in one_by_one],
                rtol=1e-13,
                atol=1e-300,
            )


def test_scalars_broadcast_and_results_are_frozen_float_arrays() -> None:
    floor = noise_floor("rr@10", 218, [1, 3])
    assert isinstance(floor, Floor)
    assert floor.metric == Metric("rr", 10)
    assert floor.expected.shape == floor.variance.shape == floor.ceiling.shape == (2,)
    assert floor.expected.dtype == np.float64
    np.testing.assert_allclose(floor.std, np.sqrt(floor.variance))
    np.testing.assert_allclose(floor.headroom, floor.ceiling - floor.expected)
    with pytest.raises(AttributeError):
        floor.expected = np.zeros(2)  # type: ignore[misc]
    single = noise_floor("rr@10", 8, 1)
    assert single.expected.shape == (1,)
    assert noise_floor("rr@10", [], []).expected.shape == (0,)


def test_whole_numbers_given_as_floats_are_accepted() -> None:
    np.testing.assert_array_equal(noise_floor("p@5", 10.0, np.array([2.0])).expected, [0.2])


def test_arguments_are_not_mutated() -> None:
    n = np.array([10, 20, 30])
    g = np.array([1, 2, 3])
    r = np.array([2, 2, 4])
    gains = [[2], [1, 3], [1, 1, 2]]
    judged_gains = [[2, 1], [3, 1], [2, 1, 1]]
    copies = (n.copy(), g.copy(), r.copy())
    for metric in ("rr@10", "hit@3", "ap", "rprec"):
        noise_floor(metric, n, g, judged=r)
    noise_floor("ndcg@5", n, g, gains=gains, judged_gains=judged_gains)
    for before, after in zip(copies, (n, g, r), strict=True):
        np.testing.assert_array_equal(before, after)
    assert gains == [[2], [1, 3], [1, 1, 2]]
    assert judged_gains == [[2, 1], [3, 1], [2, 1, 1]]


def test_ndcg_gains_default_to_binary_and_judged_gains_to_gains() -> None:
    binary = noise_floor("ndcg@10", [20, 20], [2, 2], judged=[2, 5])
    explicit = noise_floor(
        "ndcg@10", [20, 20], [2, 2], gains=[[1, 1], [1, 1]], judged_gains=[[1, 1], [1, 1, 1, 1, 1]]
    )
    np.testing.assert_allclose(binary.expected, explicit.expected, rtol=1e-14)
    np.testing.assert_allclose(binary.variance, explicit.variance, rtol=1e-14)
    np.testing.assert_allclose(binary.ceiling, explicit.ceiling, rtol=1e-14)
    one_list = noise_floor("ndcg_exp@3", [8, 9], 2, gains=[3, 1])
    per_query = noise_floor("ndcg_exp@3", [8, 9], 2, gains=[[3, 1], [1, 3]])
    np.testing.assert_allclose(one_list.expected, per_query.expected, rtol=1e-14)
    assert one_list.ceiling.tolist() == [1.0, 1.0]


def test_ndcg_of_the_pool_of_8_by_hand() -> None:
    discounts = [1 / math.log2(i + 1) for i in range(1, 9)]
    floor = noise_floor("ndcg@10", 8, 1)
    assert floor.expected[0] == pytest.approx(sum(discounts) / 8, rel=1e-15)
    mean_d = sum(discounts) / 8
    spread = sum((d - mean_d) ** 2 for d in discounts)
    assert floor.variance[0] == pytest.approx(spread * (1 - 1 / 8) / 7, rel=1e-13)


def test_discount_sums_beyond_the_table() -> None:
    from evalvalidity.core.floors import _discount_sums, _harmonic, _harmonic2

    for n in (4096, 4097, 5000, 123_457, 1_000_000):
        i = np.arange(1, n + 1, dtype=np.float64)
        d = 1 / np.log2(i + 1)
        got_d, got_d2 = _discount_sums(np.array([float(n)]))
        assert got_d[0] == pytest.approx(math.fsum(d), rel=2e-15)
        assert got_d2[0] == pytest.approx(math.fsum(d * d), rel=2e-15)
        assert _harmonic(np.array([n]))[0] == pytest.approx(math.fsum(1 / i), rel=2e-15)
        assert _harmonic2(np.array([n]))[0] == pytest.approx(math.fsum(1 / i**2), rel=2e-15)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"pool_size": 0, "gold": 0},
            "The 'pool_size' parameter of noise_floor must be an int >= 1. Got 0 instead.",
        ),
        (
            {"pool_size": [5, 0], "gold": 0},
            "The 'pool_size' parameter of noise_floor must be an int >= 1 for every query."
            " Got 0 at index 1 instead.",
        ),
        (
            {"pool_size": 5, "gold": -1},
            "The 'gold' parameter of noise_floor must be an int >= 0. Got -1 instead.",
        ),
        (
            {"pool_size": 5, "gold": 2.5},
            "The 'gold' parameter of noise_floor must be an int >= 0. Got 2.5 instead.",
        ),
        (
            {"pool_size": [5, float("nan")], "gold": 1},
            "The 'pool_size' parameter of noise_floor must be an int >= 1 for every query."
            " Got nan at index 1 instead.",
        ),
        (
            {"pool_size": 5, "gold": True},
            "The 'gold' parameter of noise_floor must be an int >= 0. Got True instead.",
        ),
        (
            {"pool_size": "8", "gold": 1},
            "The 'pool_size' parameter of noise_floor must be an int >= 1. Got '8' instead.",
        ),
        (
            {"pool_size": 5, "gold": 6},
            "The 'gold' parameter of noise_floor counts relevant items inside the pool, so it"
            " must be <= pool_size. Got gold=6 > pool_size=5 instead.",
        ),
        (
            {"pool_size": [5, 5], "gold": [1, 6]},
            "The 'gold' parameter of noise_floor counts relevant items inside the pool, so it"
            " must be <= pool_size. Got gold=6 > pool_size=5 at index 1 instead.",
        ),
        (
            {"pool_size": 5, "gold": 3, "judged": 2},
            "The 'judged' parameter of noise_floor counts every judged relevant item of the"
            " query, so it must be >= gold. Got judged=2 < gold=3 instead.",
        ),
        (
            {"pool_size": [5, 5, 5], "gold": [1, 2]},
            "The per-query parameters of noise_floor must be scalars or sequences of one common"
            " length (one value per query). Got lengths pool_size=3, gold=2 instead.",
        ),
        (
            {"pool_size": [[5, 5]], "gold": 1},
            "The 'pool_size' parameter of noise_floor must be a scalar or a 1-D sequence with one"
            " value per query. Got an array of shape (1, 2) instead.",
        ),
    ],
)
def test_invalid_counts_are_rejected_with_exact_messages(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError, match=f"^{_escape(message)}$"):
        noise_floor("rr@10", **kwargs)  # type: ignore[arg-type]


def _escape(text: str) -> str:
    import re

    return re.escape(text)


@pytest.mark.parametrize(
    ("metric", "kwargs", "message"),
    [
        (
            "rr@10",
            {"gains": [[1]]},
            "The 'gains' parameter of noise_floor applies only to ndcg and ndcg_exp; rr@10 counts"
            " gold items. Got gains=[[1]] instead.",
        ),
        (
            "ndcg@10",
            {"judged_gains": [[1]]},
            "The 'judged_gains' parameter of noise_floor needs 'gains', the grades of the gold"
            " items in the pool.",
        ),
        (
            "ndcg@10",
            {"gains": [[2, 1]]},
            "The 'gains' parameter of noise_floor must hold one grade per gold item in the pool."
            " Got 2 grades for gold=1 at index 0 instead.",
        ),
        (
            "ndcg@10",
            {"gains": [[0]]},
            "The 'gains' parameter of noise_floor must hold the grades (ints >= 1) of judged"
            " relevant items. Got 0.0 for the query at index 0 instead.",
        ),
        (
            "ndcg@10",
            {"gains": [1.5]},
            "The 'gains' parameter of noise_floor must hold the grades (ints >= 1) of judged"
            " relevant items. Got 1.5 instead.",
        ),
        (
            "ndcg@10",
            {"gains": 3},
            "The 'gains' parameter of noise_floor must be a sequence with one list of grades per"
            " query (or a single list used for every query). Got 3 instead.",
        ),
        (
            "ndcg@10",
            {"gains": [[3]], "judged_gains": [[2, 1]]},
            "The 'gains' parameter of noise_floor must list grades found among the query's"
            " 'judged_gains' (the gold items in the pool are judged items). Got gains [3] and"
            " judged_gains [1, 2] at index 0 instead.",
        ),
        (
            "ndcg@10",
            {"gains": [[3]], "judged": 2},
            "With graded 'gains', noise_floor needs the grades of the judged items outside the"
            " pool: pass 'judged_gains' (every judged grade of the query) instead of 'judged'."
            " Got judged=2 > gold=1 at index 0.",
        ),
        (
            "ndcg@10",
            {"gains": [[3]], "judged_gains": [[3, 1]], "judged": 3},
            "The 'judged' parameter of noise_floor must equal the number of judged_gains. Got"
            " judged=3 and 2 judged_gains at index 0 instead.",
        ),
        (
            "ndcg_exp@10",
            {"gains": [[101]]},
            "The grades of ndcg_exp@10 must be <= 100 (its gain 2^grade − 1 must stay a finite"
            " float).",
        ),
    ],
)
def test_invalid_gains_are_rejected_with_exact_messages(
    metric: str, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError, match=f"^{_escape(message)}$"):
        noise_floor(metric, 8, 1, **kwargs)  # type: ignore[arg-type]


def test_messages_quote_at_most_80_characters_of_a_huge_argument() -> None:
    with pytest.raises(ParameterError) as caught:
        noise_floor("rr@10", 5, 1, gains=[[1]] * 1000)
    quoted = str(caught.value).split("Got gains=")[1]
    assert (
        quoted
        == "[[1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], ... instead."
    )


def test_unknown_metric_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match=r"^Cannot read the metric 'mrr10'"):
        noise_floor("mrr10", 8, 1)


# --------------------------------------------------------------------------------------------
# Inversion
# --------------------------------------------------------------------------------------------


def _round_trip_cases() -> list[tuple[str, int, int, int]]:
    cases = []
    for family in INVERTIBLE:
        for k in (1, 10, 1000, None):
            if k is None and family in ("hit", "p", "r"):
                continue
            if k is not None and family == "rprec":
                continue
            metric = family if k is None else f"{family}@{k}"
            for g in (1, 2, 3, 7, 50):
                for n in (g, g + 1, 13, 218, 5000, 10**7):
                    cases.append((metric, n, g, g + (family in ("r", "ap", "rprec"))))
    return cases


def _beyond_flat(metric: str, n: int, g: int, r: int) -> bool:
    """True where the floor still decreases at N (the pool size is identifiable)."""
    m = parse_metric(metric)
    k = m.k or 0
    if m.family == "hit":
        return n > k + g - 1
    if m.family in ("p", "r"):
        return n > max(k, g)
    if m.family == "rprec":
        return n > r
    return n > g


def test_round_trip_pool_size_to_floor_to_pool_size() -> None:
    cases = [case for case in _round_trip_cases() if case[1] >= case[2]]
    assert len(cases) > 300
    by_metric: dict[str, list[tuple[int, int, int]]] = {}
    for metric, n, g, r in cases:
        by_metric.setdefault(metric, []).append((n, g, r))
    for metric, shapes in by_metric.items():
        n, g, r = (np.array(column) for column in zip(*shapes, strict=True))
        floor = noise_floor(metric, n, g, judged=r)
        inferred = infer_pool_size(metric, floor.expected, g, judged=r)
        identifiable = np.array([_beyond_flat(metric, *shape) for shape in shapes])
        np.testing.assert_allclose(
            inferred.estimate[identifiable], n[identifiable], rtol=1e-6, err_msg=metric
        )
        assert not inferred.saturated[identifiable & (floor.expected < floor.ceiling)].any()
        # inside the flat region the floor is at its maximum: saturated, the largest such pool
        flat = ~identifiable
        assert inferred.saturated[flat].all(), metric
        again = noise_floor(
            metric, np.round(inferred.estimate[flat]).astype(np.int64), g[flat], judged=r[flat]
        )
        np.testing.assert_allclose(again.expected, floor.expected[flat], rtol=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["rr@10", "rr@1000", "rr", "hit@10", "p@10", "r@100", "rprec", "ap@10", "ap"]),
    st.integers(1, 50),
    st.integers(1, 10**6),
    st.integers(0, 3),
)
def test_round_trip_property(metric: str, g: int, extra: int, surplus: int) -> None:
    r = g + surplus
    n = g + extra
    if not _beyond_flat(metric, n, g, r):
        return
    floor = noise_floor(metric, n, g, judged=r)
    inferred = infer_pool_size(metric, floor.expected, g, judged=r)
    assert inferred.estimate[0] == pytest.approx(n, rel=1e-6)


def test_continuous_extension_is_decreasing_and_exact_at_integers() -> None:
    from evalvalidity.core.floors import _expected_continuous

    for family, k in (
        ("rr", 10),
        ("rr", None),
        ("rr", 3),
        ("hit", 10),
        ("ap", 10),
        ("ap", None),
        ("p", 10),
        ("r", 10),
        ("rprec", None),
    ):
        for g in (1, 2, 5, 20):
            x = np.linspace(g, g + 200, 8001)
            gs = np.full(len(x), g)
            values = _expected_continuous(family, k, x, gs, gs + 1)
            assert np.all(np.diff(values) <= 1e-15), (family, k, g)
            integers = np.arange(g, g + 201)
            exact = noise_floor(
                family if k is None else f"{family}@{k}", integers, g, judged=g + 1
            ).expected
            np.testing.assert_allclose(
                _expected_continuous(
                    family,
                    k,
                    integers.astype(float),
                    np.full(len(integers), g),
                    np.full(len(integers), g + 1),
                ),
                exact,
                rtol=1e-13,
                err_msg=f"{family}@{k} G={g}",
            )


def test_interval_inverts_the_ends_of_the_normal_interval() -> None:
    g = np.array([1, 3])
    measured = noise_floor("rr@10", 218, g).expected
    inferred = infer_pool_size("rr@10", measured, g, std_error=0.1 * measured, confidence=0.9)
    z = 1.6448536269514722  # the 95th percentile of the standard normal
    np.testing.assert_allclose(inferred.estimate, [218, 218], rtol=1e-9)
    assert np.all(inferred.low < inferred.estimate)
    assert np.all(inferred.estimate < inferred.high)
    # the ends map back to measured ± z·se through the exact (continuous) floor
    from evalvalidity.core.floors import _expected_continuous

    np.testing.assert_allclose(
        _expected_continuous("rr", 10, inferred.low, g, g), measured * (1 + 0.1 * z), rtol=1e-10
    )
    np.testing.assert_allclose(
        _expected_continuous("rr", 10, inferred.high, g, g), measured * (1 - 0.1 * z), rtol=1e-10
    )
    assert inferred.confidence == 0.9


def test_degenerate_measurements_follow_the_documented_conventions() -> None:
    inferred = infer_pool_size(
        "rr@10", [0.0, -0.1, 1.0, 1.0, 0.5], [1, 1, 3, 5, 1], std_error=[0.0, 0.0, 0.1, 0.0, 0.6]
    )
    assert isinstance(inferred, InferredPoolSize)
    assert inferred.estimate[0] == np.inf and inferred.estimate[1] == np.inf
    assert inferred.saturated.tolist() == [False, False, True, True, False]
    assert inferred.estimate[2] == 3 and inferred.estimate[3] == 5  # the smallest pool, N = G
    assert inferred.low[2] == 3
    assert inferred.high[4] == np.inf  # 0.5 − 1.96·0.6 < 0
    assert inferred.low[4] == 1  # 0.5 + 1.96·0.6 > 1
    assert np.isfinite(inferred.high[2])
    # flat floors: Hit@10 is 1 up to N = k + G − 1, P@10 is G/10 up to N = 10
    assert infer_pool_size("hit@10", 1.0, 2).estimate.tolist() == [11.0]
    assert infer_pool_size("p@10", 0.2, 2).estimate.tolist() == [10.0]
    assert infer_pool_size("rprec", 0.5, 2, judged=4).estimate.tolist() == [4.0]
    assert not np.isnan(inferred.estimate).any()
    # a floor so small that the pool would exceed 1e300 also reads as an infinite pool
    tiny = infer_pool_size("rr@10", [1e-200, 1e-305], 1)
    assert tiny.estimate[0] == pytest.approx(harmonic(10) / 1e-200, rel=1e-9)
    assert tiny.estimate[1] == np.inf


def test_benchmark_inversion_with_mixed_gold() -> None:
    gold = np.array([1] * 21 + [2, 2, 2, 3, 3, 2, 3])
    for metric in ("rr@10", "rr", "hit@10", "p@10", "r@50", "rprec", "ap@10", "ap"):
        for n in (5, 40, 218, 100_000):
            if n < 10 and metric in ("hit@10", "p@10", "r@50"):
                continue
            if metric in ("p@10", "r@50") and n <= int(metric.split("@")[1]):
                continue
            mean = noise_floor(metric, n, gold, judged=gold + 1).expected.mean()
            inferred = infer_benchmark_pool_size(metric, mean, gold, judged=gold + 1)
            assert inferred.estimate.shape == (1,)
            assert inferred.estimate[0] == pytest.approx(n, rel=1e-6), metric


def test_benchmark_inversion_counts_queries_without_gold_in_the_mean() -> None:
    gold = np.array([1, 1, 0, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        mean = noise_floor("rr@10", 50, gold).expected.mean()
    assert infer_benchmark_pool_size("rr@10", mean, gold).estimate[0] == pytest.approx(50)


def test_write_up_example_exact_inversion_differs_from_the_approximation() -> None:
    """28 queries over 218 files: 21 with one gold file, 7 with two or three."""
    gold = np.array([1] * 21 + [2, 2, 2, 3, 3, 2, 3])
    measured = 0.0181  # the harness's mean MRR@10 on random scores, as a report prints it
    exact = infer_benchmark_pool_size("mrr@10", measured, gold).estimate[0]
    approximation = gold.mean() * harmonic(10) / measured  # G·H_k/N solved for N
    # the exact answer reproduces the measurement; the approximation's does not
    assert noise_floor("rr@10", 218, gold).expected.mean() == pytest.approx(0.018096, abs=1e-6)
    from evalvalidity.core.floors import _expected_continuous

    def mean_floor(x: float) -> float:
        return float(_expected_continuous("rr", 10, np.full(28, x), gold, gold).mean())

    assert mean_floor(exact) == pytest.approx(measured, rel=1e-12)
    assert exact == pytest.approx(217.95, abs=0.05)
    assert approximation - exact > 1.5
    assert abs(mean_floor(approximation) / measured - 1) > 0.006
    # per query class the approximation is further off for the multi-gold queries
    g3 = infer_pool_size("rr@10", noise_floor("rr@10", 218, 3).expected, 3).estimate[0]
    assert g3 == pytest.approx(218, rel=1e-9)
    assert 3 * harmonic(10) / noise_floor("rr@10", 218, 3).expected[0] > 222


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: infer_pool_size("ndcg@10", 0.1, 1),
            "infer_pool_size does not support ndcg@10: an nDCG floor depends on the grades of the"
            " gold items, not only on how many there are. Use a binary metric (rr, hit, p, r,"
            " rprec, ap).",
        ),
        (
            lambda: infer_pool_size("rr@10", 0.1, 0),
            "The 'gold' parameter of infer_pool_size must be an int >= 1. Got 0 instead. (A query"
            " with no gold item in the pool scores 0 whatever the pool size.)",
        ),
        (
            lambda: infer_pool_size("rr@10", 34.0, 1),
            "The 'measured' parameter of infer_pool_size must be a finite number <= 1 (a metric"
            " value, not a percentage). Got 34.0 instead.",
        ),
        (
            lambda: infer_pool_size("rr@10", [0.1, float("nan")], 1),
            "The 'measured' parameter of infer_pool_size must be a finite number <= 1 (a metric"
            " value, not a percentage) for every query. Got nan at index 1 instead.",
        ),
        (
            lambda: infer_pool_size("rr@10", 0.1, 1, std_error=-0.01),
            "The 'std_error' parameter of infer_pool_size must be a finite number >= 0. Got -0.01"
            " instead.",
        ),
        (
            lambda: infer_pool_size("rr@10", 0.1, 1, confidence=1.5),
            "The 'confidence' parameter of infer_pool_size must be a float in (0, 1). Got 1.5"
            " instead.",
        ),
        (
            lambda: infer_pool_size("ap", 0.1, 3, judged=2),
            "The 'judged' parameter of infer_pool_size counts every judged relevant item of the"
            " query, so it must be >= gold. Got judged=2 < gold=3 instead.",
        ),
        (
            lambda: infer_pool_size("rr@10", [0.1, 0.2, 0.3], [1, 2]),
            "The per-query parameters of infer_pool_size must be scalars or sequences of one"
            " common length (one value per query). Got lengths measured=3, gold=2 instead.",
        ),
        (
            lambda: infer_benchmark_pool_size("rr@10", [0.1, 0.2], [1, 2]),
            "The 'measured_mean' parameter of infer_benchmark_pool_size must be one number, the"
            " benchmark's mean. Got an array of shape (2,) instead.",
        ),
        (
            lambda: infer_benchmark_pool_size("rr@10", 0.1, [0, 0]),
            "infer_benchmark_pool_size needs at least one query with gold >= 1: every query has"
            " gold = 0, and such a query scores 0 whatever the pool size.",
        ),
    ],
)
def test_inversion_errors_have_exact_messages(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ParameterError, match=f"^{_escape(message)}$"):
        call()


# --------------------------------------------------------------------------------------------
# Layering
# --------------------------------------------------------------------------------------------


def test_floors_imports_only_numpy_scipy_and_the_core() -> None:
    source = (HERE.parent / "evalvalidity" / "core" / "floors.py").read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(
                node.module if node.module.startswith("evalvalidity") else node.module.split(".")[0]
            )
    assert imported <= {
        "__future__",
        "functools",
        "itertools",
        "warnings",
        "collections",
        "dataclasses",
        "typing",
        "numpy",
        "scipy",
        "evalvalidity.errors",
        "evalvalidity.core._special",  # scipy.special's compiled functions
        "evalvalidity.core._validate",
        "evalvalidity.core.metrics",
        "evalvalidity.core.types",
    }, imported
    code = (
        "import sys, evalvalidity.core.floors; "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'duckdb', 'streamlit', 'altair')"
        " if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
