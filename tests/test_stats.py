"""Tests of evalvalidity.core.stats against scipy.stats, hand-computed examples and simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from evalvalidity.core.stats import (
    EffectSize,
    Interval,
    RunComparison,
    _benjamini_hochberg,
    _holm,
    compare_runs,
    effect_sizes,
    mean_interval,
    min_detectable_difference,
    paired_randomization_test,
    ratio_interval,
    topic_set_size,
    z_against_floor,
)
from evalvalidity.errors import EvalValidityWarning, InputDataError, ParameterError


def random_rr_at_10(pool_sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """RR@10 of one gold item placed uniformly at random in pools of the given sizes."""
    ranks = rng.integers(1, pool_sizes + 1)
    return np.where(ranks <= 10, 1.0 / ranks, 0.0)


def rr_floor(pool_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact E and Var of RR@10 for G = 1 (docs/math.md, Floors), computed from the rank distribution."""
    expected = np.empty(pool_sizes.size)
    variance = np.empty(pool_sizes.size)
    for i, n in enumerate(pool_sizes):
        ranks = np.arange(1, min(10, n) + 1)
        expected[i] = np.sum(1.0 / ranks) / n
        variance[i] = np.sum(1.0 / ranks**2) / n - expected[i] ** 2
    return expected, variance


# ------------------------------------------------------------------------------------ intervals


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99])
def test_t_interval_matches_scipy(confidence: float) -> None:
    values = np.random.default_rng(1).exponential(size=25)
    expected = sps.ttest_1samp(values, 0.0).confidence_interval(confidence)
    interval = mean_interval(values, method="t", confidence=confidence)
    assert interval.method == "t"
    assert interval.estimate == pytest.approx(values.mean(), rel=1e-14)
    assert interval.low == pytest.approx(expected.low, rel=1e-12)
    assert interval.high == pytest.approx(expected.high, rel=1e-12)


@pytest.mark.parametrize("kind", ["bca", "percentile"])
def test_bootstrap_interval_agrees_with_scipy_bootstrap(kind: str) -> None:
    values = np.random.default_rng(2).exponential(size=30) ** 2
    reference = sps.bootstrap(
        (values,),
        np.mean,
        confidence_level=0.9,
        n_resamples=40_000,
        method="BCa" if kind == "bca" else "percentile",
        rng=np.random.default_rng(3),
    ).confidence_interval
    interval = mean_interval(
        values,
        confidence=0.9,
        bootstrap_method=kind,
        n_resamples=40_000,
        rng=np.random.default_rng(4),
    )
    width = reference.high - reference.low
    assert interval.method == kind
    assert interval.estimate == pytest.approx(values.mean())
    assert abs(interval.low - reference.low) < 0.04 * width
    assert abs(interval.high - reference.high) < 0.04 * width


def test_bca_differs_from_percentile_on_skewed_data() -> None:
    # BCa shifts both bounds right for right-skewed data: the correction is really applied.
    values = np.random.default_rng(5).exponential(size=20) ** 3
    bca = mean_interval(values, bootstrap_method="bca", n_resamples=20_000, rng=6)
    percentile = mean_interval(values, bootstrap_method="percentile", n_resamples=20_000, rng=6)
    assert bca.low > percentile.low
    assert bca.high > percentile.high


def test_bootstrap_is_reproducible_and_depends_on_the_seed() -> None:
    values = np.random.default_rng(7).normal(size=15)
    first = mean_interval(values, n_resamples=2_000, rng=np.random.default_rng(11))
    again = mean_interval(values, n_resamples=2_000, rng=11)
    other = mean_interval(values, n_resamples=2_000, rng=12)
    assert first == again
    assert first != other


def test_bootstrap_blocks_do_not_change_the_distribution() -> None:
    # 5,000 queries x 2,000 resamples span several blocks of resamples.
    values = np.random.default_rng(8).normal(loc=1.0, size=5_000)
    interval = mean_interval(values, bootstrap_method="percentile", n_resamples=2_000, rng=9)
    t = mean_interval(values, method="t")
    assert interval.low == pytest.approx(t.low, abs=0.1 * t.width)
    assert interval.high == pytest.approx(t.high, abs=0.1 * t.width)


def test_bootstrap_coverage_is_near_nominal() -> None:
    rng = np.random.default_rng(10)
    covered = 0
    repetitions = 200
    for _ in range(repetitions):
        values = rng.normal(loc=0.3, scale=1.0, size=40)
        interval = mean_interval(values, n_resamples=1_000, rng=rng)
        covered += interval.contains(0.3)
    assert 0.88 <= covered / repetitions <= 0.99


def test_higher_confidence_gives_a_wider_interval() -> None:
    values = [0.1, 0.5, 0.2, 0.9, 0.4, 0.3]
    widths = [mean_interval(values, method="t", confidence=c).width for c in (0.8, 0.9, 0.99)]
    assert widths[0] < widths[1] < widths[2]


def test_constant_values_warn_and_give_a_point() -> None:
    with pytest.warns(EvalValidityWarning, match="the values are all equal"):
        interval = mean_interval([0.5, 0.5, 0.5], method="t")
    assert (interval.estimate, interval.low, interval.high) == (0.5, 0.5, 0.5)


def test_arguments_are_not_mutated_and_read_only_input_works() -> None:
    values = np.array([0.3, 0.1, 0.7, 0.2])
    values.setflags(write=False)
    mean_interval(values, n_resamples=100, rng=0)
    ratio_interval(values, denominator_exact=0.5, method="bootstrap", n_resamples=100, rng=0)
    assert values.tolist() == [0.3, 0.1, 0.7, 0.2]


def test_interval_format() -> None:
    interval = Interval(0.981, 0.9349, 1.0351, 0.95, "delta")
    assert interval.format(2) == "0.98 [0.93, 1.04]"
    assert str(interval) == "0.981 [0.935, 1.035]"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"confidence": 2},
            "The 'confidence' parameter of mean_interval must be a float in (0, 1). Got 2 instead.",
        ),
        (
            {"confidence": True},
            "The 'confidence' parameter of mean_interval must be a float in (0, 1). Got True instead.",
        ),
        (
            {"method": "normal"},
            "The 'method' parameter of mean_interval must be one of 'bootstrap', 't'. Got 'normal' instead.",
        ),
        (
            {"bootstrap_method": "BCa"},
            "The 'bootstrap_method' parameter of mean_interval must be one of 'bca', 'percentile'. Got 'BCa' instead.",
        ),
        (
            {"n_resamples": 0},
            "The 'n_resamples' parameter of mean_interval must be an int >= 1. Got 0 instead.",
        ),
        (
            {"n_resamples": 10.0},
            "The 'n_resamples' parameter of mean_interval must be an int >= 1. Got 10.0 instead.",
        ),
        (
            {"rng": "seed"},
            "The 'rng' parameter of mean_interval must be a numpy.random.Generator, an int seed >= 0 or None. Got 'seed' instead.",
        ),
    ],
)
def test_mean_interval_parameter_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        mean_interval([0.1, 0.2, 0.3], **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            [0.1],
            "The 'values' parameter of mean_interval must be a 1-D array of at least 2 numbers. Got shape (1,) instead.",
        ),
        (
            [[0.1, 0.2]],
            "The 'values' parameter of mean_interval must be a 1-D array of at least 2 numbers. Got shape (1, 2) instead.",
        ),
        (
            ["0.1", "0.2"],
            "The 'values' parameter of mean_interval must be a 1-D array of numbers. Got dtype <U3 instead.",
        ),
        (
            [0.1, math.nan, 0.3, math.inf],
            "The 'values' parameter of mean_interval must hold finite numbers. Got 2 NaN or infinite value(s) instead, the first at position 1.",
        ),
    ],
)
def test_mean_interval_value_errors(values: object, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        mean_interval(values, method="t")
    assert str(info.value) == message


# ----------------------------------------------------------------------------------------- ratio


def test_ratio_delta_with_exact_variances_matches_the_formula() -> None:
    measured = np.array([0.0, 1.0, 0.5, 0.0, 0.2])
    expected = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    variance = np.array([0.05, 0.1, 0.08, 0.09, 0.04])
    interval = ratio_interval(
        measured, denominator_exact=expected, numerator_variance=variance, confidence=0.9
    )
    ratio = measured.mean() / expected.mean()
    se = math.sqrt(variance.sum()) / (5 * expected.mean())
    z = sps.norm.ppf(0.95)
    assert interval.method == "delta"
    assert interval.estimate == pytest.approx(ratio, rel=1e-14)
    assert interval.low == pytest.approx(ratio - z * se, rel=1e-12)
    assert interval.high == pytest.approx(ratio + z * se, rel=1e-12)


def test_ratio_delta_from_the_sample_with_exact_denominator() -> None:
    measured = np.array([0.0, 1.0, 0.5, 0.0, 0.2])
    interval = ratio_interval(measured, denominator_exact=0.25)
    reference = sps.ttest_1samp(measured / 0.25, 0.0).confidence_interval(0.95)
    assert interval.low == pytest.approx(reference.low, rel=1e-12)
    assert interval.high == pytest.approx(reference.high, rel=1e-12)


def test_ratio_delta_with_paired_sampled_denominator_matches_covariance_form() -> None:
    rng = np.random.default_rng(20)
    y = rng.uniform(0.2, 1.0, size=30)
    x = 0.8 * y + rng.normal(scale=0.1, size=30)
    interval = ratio_interval(x, y, confidence=0.95)
    ratio = x.mean() / y.mean()
    cov = np.cov(x, y, ddof=1)
    variance = (cov[0, 0] - 2 * ratio * cov[0, 1] + ratio**2 * cov[1, 1]) / (30 * y.mean() ** 2)
    half = sps.t.ppf(0.975, 29) * math.sqrt(variance)
    assert interval.estimate == pytest.approx(ratio, rel=1e-14)
    assert interval.low == pytest.approx(ratio - half, rel=1e-10)
    assert interval.high == pytest.approx(ratio + half, rel=1e-10)


@pytest.mark.parametrize("kind", ["bca", "percentile"])
def test_ratio_bootstrap_over_a_constant_is_the_mean_bootstrap_rescaled(kind: str) -> None:
    values = np.random.default_rng(21).exponential(size=12)
    ratio = ratio_interval(
        values,
        denominator_exact=2.0,
        method="bootstrap",
        bootstrap_method=kind,
        n_resamples=3_000,
        rng=5,
    )
    mean = mean_interval(values, bootstrap_method=kind, n_resamples=3_000, rng=5)
    assert ratio.method == kind
    assert ratio.estimate == pytest.approx(mean.estimate / 2.0, rel=1e-12)
    assert ratio.low == pytest.approx(mean.low / 2.0, rel=1e-9)
    assert ratio.high == pytest.approx(mean.high / 2.0, rel=1e-9)


def test_ratio_bootstrap_and_delta_agree_on_many_queries() -> None:
    rng = np.random.default_rng(22)
    y = rng.uniform(0.2, 1.0, size=2_000)
    x = 1.1 * y + rng.normal(scale=0.2, size=2_000)
    delta = ratio_interval(x, y)
    boot = ratio_interval(x, y, method="bootstrap", n_resamples=4_000, rng=23)
    assert boot.low == pytest.approx(delta.low, abs=0.1 * delta.width)
    assert boot.high == pytest.approx(delta.high, abs=0.1 * delta.width)


def test_ratio_delta_covers_one_for_random_rankings() -> None:
    # A noise run's RR@10 over queries with pools of 20 to 200 items: measured / analytic
    # should cover 1 about 95 % of the time, with exact variances and from the sample.
    rng = np.random.default_rng(24)
    pools = rng.integers(20, 200, size=150)
    expected, variance = rr_floor(pools)
    exact_hits = sample_hits = 0
    repetitions = 400
    for _ in range(repetitions):
        measured = random_rr_at_10(pools, rng)
        exact_hits += ratio_interval(
            measured, denominator_exact=expected, numerator_variance=variance
        ).contains(1.0)
        sample_hits += ratio_interval(measured, denominator_exact=expected).contains(1.0)
    assert 0.92 <= exact_hits / repetitions <= 0.98
    # From the sample the standard error of so skewed a metric runs low (coverage ~0.88 here):
    # the reason to pass exact variances.
    assert 0.82 <= sample_hits / repetitions < exact_hits / repetitions


def test_ratio_of_constant_values_warns() -> None:
    with pytest.warns(EvalValidityWarning, match="zero width"):
        interval = ratio_interval([0.5, 0.5, 0.5], denominator_exact=0.25)
    assert (interval.low, interval.estimate, interval.high) == (2.0, 2.0, 2.0)
    with pytest.warns(EvalValidityWarning, match="zero width"):
        interval = ratio_interval([0.2, 0.4, 0.6], [0.1, 0.2, 0.3], method="bootstrap", rng=0)
    assert (interval.low, interval.high) == (2.0, 2.0)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (
            ([0.1, 0.2],),
            {},
            ParameterError,
            "ratio_interval needs exactly one of 'denominator_values' (sampled per-query values) and 'denominator_exact' (exact per-query expectations).",
        ),
        (
            ([0.1, 0.2], [0.1, 0.2]),
            {"denominator_exact": 0.1},
            ParameterError,
            "ratio_interval needs exactly one of 'denominator_values' (sampled per-query values) and 'denominator_exact' (exact per-query expectations).",
        ),
        (
            ([0.1, 0.2], [0.1, 0.2, 0.3]),
            {},
            ParameterError,
            "The 'numerator_values' and 'denominator_values' parameters of ratio_interval must hold one value per query for the same queries. Got 2 and 3 values instead.",
        ),
        (
            ([0.1, 0.2],),
            {"denominator_exact": [0.1, 0.2, 0.3]},
            ParameterError,
            "The 'denominator_exact' parameter of ratio_interval must be a number or hold one value per query (2). Got 3 values instead.",
        ),
        (
            ([0.1, 0.2],),
            {"denominator_exact": math.nan},
            ParameterError,
            "The 'denominator_exact' parameter of ratio_interval must be finite. Got nan instead.",
        ),
        (
            ([0.1, 0.2],),
            {"denominator_exact": 0.0},
            ParameterError,
            "The denominator of ratio_interval must have a mean > 0. Got 0.0 instead.",
        ),
        (
            ([0.1, 0.2],),
            {"denominator_exact": 0.1, "numerator_variance": [0.1, -0.2]},
            ParameterError,
            "The 'numerator_variance' parameter of ratio_interval must hold variances >= 0. Got -0.2 instead.",
        ),
        (
            ([0.1, 0.2],),
            {"denominator_exact": 0.1, "numerator_variance": 0.1, "method": "bootstrap"},
            ParameterError,
            "The 'numerator_variance' parameter of ratio_interval is used only with 'denominator_exact' and method='delta'.",
        ),
        (
            ([0.1, 0.2], [0.1, 0.2]),
            {"numerator_variance": 0.1},
            ParameterError,
            "The 'numerator_variance' parameter of ratio_interval is used only with 'denominator_exact' and method='delta'.",
        ),
        (
            ([0.1, 0.2],),
            {"denominator_exact": 0.1, "method": "fieller"},
            ParameterError,
            "The 'method' parameter of ratio_interval must be one of 'delta', 'bootstrap'. Got 'fieller' instead.",
        ),
    ],
)
def test_ratio_interval_errors(
    args: tuple[object, ...], kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        ratio_interval(*args, **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_ratio_bootstrap_with_zero_denominators_is_an_input_error() -> None:
    numerator = [0.5, 0.1, 0.2, 0.4]
    denominator = [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(InputDataError, match=r"^ratio_interval: \d+ of 2000 bootstrap resamples"):
        ratio_interval(
            numerator,
            denominator,
            method="bootstrap",
            bootstrap_method="percentile",
            n_resamples=2_000,
            rng=1,
        )
    with pytest.raises(InputDataError, match="use bootstrap_method='percentile'"):
        # Leaving out the single nonzero denominator leaves a zero mean.
        ratio_interval(numerator, denominator, method="bootstrap", n_resamples=200, rng=1)


# --------------------------------------------------------------------------------- z vs a floor


def test_z_against_floor_hand_example_and_draws() -> None:
    one = z_against_floor(0.45, [0.2, 0.3, 0.25, 0.25], [0.04, 0.04, 0.04, 0.04])
    assert one.expected_mean == pytest.approx(0.25)
    assert one.standard_error == pytest.approx(0.1)
    assert one.z == pytest.approx(2.0)
    assert one.p_value == pytest.approx(2 * sps.norm.sf(2.0))
    four = z_against_floor(0.45, 0.25, [0.04] * 4, n_draws=4)
    assert four.z == pytest.approx(4.0)


def test_z_against_floor_is_standard_normal_for_random_rankings() -> None:
    rng = np.random.default_rng(30)
    pools = rng.integers(10, 100, size=200)
    expected, variance = rr_floor(pools)
    zs = np.array(
        [
            z_against_floor(float(random_rr_at_10(pools, rng).mean()), expected, variance).z
            for _ in range(500)
        ]
    )
    assert abs(zs.mean()) < 0.15
    assert 0.9 < zs.std() < 1.1


def test_z_against_floor_zero_variance_warns() -> None:
    with pytest.warns(EvalValidityWarning, match="every per-query variance is 0"):
        result = z_against_floor(0.5, 0.25, [0.0, 0.0])
    assert result.z == math.inf
    assert result.p_value == 0.0


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (
            (math.nan, 0.2, [0.1]),
            {},
            "The 'measured_mean' parameter of z_against_floor must be a finite float. Got nan instead.",
        ),
        (
            (0.3, 0.2, [0.1, -0.1]),
            {},
            "The 'variance_per_query' parameter of z_against_floor must hold variances >= 0. Got -0.1 instead.",
        ),
        (
            (0.3, [0.2, 0.1, 0.1], [0.1, 0.1]),
            {},
            "The 'expected' parameter of z_against_floor must be a number or hold one value per query (2). Got 3 values instead.",
        ),
        (
            (0.3, 0.2, [0.1]),
            {"n_draws": 0},
            "The 'n_draws' parameter of z_against_floor must be an int >= 1. Got 0 instead.",
        ),
    ],
)
def test_z_against_floor_errors(
    args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError) as info:
        z_against_floor(*args, **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message


# ------------------------------------------------------------------------- randomization test


def scipy_exact_p(a: np.ndarray, b: np.ndarray) -> float:
    def statistic(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(x - y, axis=axis)

    return float(
        sps.permutation_test(
            (a, b),
            statistic,
            permutation_type="samples",
            n_resamples=np.inf,
            alternative="two-sided",
        ).pvalue
    )


@pytest.mark.parametrize("seed", range(4))
def test_exact_randomization_matches_scipy_permutation_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.uniform(size=9)
    b = a - rng.normal(loc=0.15, scale=0.2, size=9)
    test = paired_randomization_test(a, b)
    assert test.exact
    assert test.n_resamples == 2**9
    assert test.difference == pytest.approx(np.mean(a - b), rel=1e-14)
    assert test.p_value == pytest.approx(scipy_exact_p(a, b), rel=1e-12)


def test_exact_randomization_with_ties_and_zero_differences() -> None:
    a = np.array([0.1, 0.2, 0.3, 0.6, 0.5, 0.5])
    b = np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.5])
    test = paired_randomization_test(a, b)
    assert test.p_value == pytest.approx(scipy_exact_p(a, b), rel=1e-12)
    # All-equal systems: every sign vector reaches the observed 0.
    assert paired_randomization_test(a, a).p_value == 1.0


def test_enumeration_by_hand() -> None:
    # Differences 1, 2, 3, 4: of the 16 signed sums only +-10 reach |10|.
    assert paired_randomization_test([1, 2, 3, 4], [0, 0, 0, 0]).p_value == 2 / 16
    # A zero difference doubles every count: +-6 twice each.
    assert paired_randomization_test([1, 2, 3, 0], [0, 0, 0, 0]).p_value == 4 / 16
    # Observed mean 0: every signed sum reaches it.
    assert paired_randomization_test([1, -1, 1, -1], [0, 0, 0, 0]).p_value == 1.0


def test_randomization_switches_from_exact_to_monte_carlo() -> None:
    a = np.arange(10, dtype=float)
    assert paired_randomization_test(a, a[::-1], n_resamples=1024).exact
    monte_carlo = paired_randomization_test(a, a[::-1], n_resamples=1023, rng=0)
    assert not monte_carlo.exact
    assert monte_carlo.n_resamples == 1023


def test_monte_carlo_p_value_is_close_to_the_exact_one() -> None:
    rng = np.random.default_rng(40)
    a = rng.uniform(size=15)
    b = a - rng.normal(loc=0.08, scale=0.3, size=15)
    exact = paired_randomization_test(a, b, n_resamples=2**15).p_value
    estimate = paired_randomization_test(a, b, n_resamples=20_000, rng=41).p_value
    assert abs(estimate - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_monte_carlo_p_value_is_never_zero() -> None:
    a = np.linspace(1.0, 2.0, 40)
    test = paired_randomization_test(a, np.zeros(40), n_resamples=999, rng=1)
    assert test.p_value == 1 / 1000


def test_randomization_p_values_are_uniform_under_the_null() -> None:
    rng = np.random.default_rng(42)
    p_values = np.array(
        [
            paired_randomization_test(
                rng.uniform(size=20), rng.uniform(size=20), n_resamples=499, rng=rng
            ).p_value
            for _ in range(300)
        ]
    )
    assert sps.kstest(p_values, "uniform").pvalue > 0.001
    assert 0.02 <= np.mean(p_values <= 0.05) <= 0.09


def test_randomization_detects_a_real_difference() -> None:
    rng = np.random.default_rng(43)
    b = rng.uniform(size=50)
    a = b + 0.1 + rng.normal(scale=0.1, size=50)
    assert paired_randomization_test(a, b, rng=44).p_value < 0.001


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (
            [0.1, 0.2],
            [0.1, 0.2, 0.3],
            "The 'a' and 'b' parameters of paired_randomization_test must hold one value per query for the same queries. Got 2 and 3 values instead.",
        ),
        (
            [0.1],
            [0.2],
            "The 'a' parameter of paired_randomization_test must be a 1-D array of at least 2 numbers. Got shape (1,) instead.",
        ),
        (
            [0.1, 0.2],
            [0.1, math.nan],
            "The 'b' parameter of paired_randomization_test must hold finite numbers. Got 1 NaN or infinite value(s) instead, the first at position 1.",
        ),
    ],
)
def test_randomization_errors(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        paired_randomization_test(a, b)
    assert str(info.value) == message


# ------------------------------------------------------------------------------- effect sizes


def test_effect_sizes_match_ttest_rel() -> None:
    rng = np.random.default_rng(50)
    a = rng.uniform(size=40)
    b = a - rng.normal(loc=0.05, scale=0.1, size=40)
    size = effect_sizes(a, b, confidence=0.9)
    reference = sps.ttest_rel(a, b).confidence_interval(0.9)
    d = a - b
    assert isinstance(size, EffectSize)
    assert size.n_queries == 40
    assert size.mean_difference == pytest.approx(d.mean(), rel=1e-14)
    assert size.cohens_dz == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert size.interval.low == pytest.approx(reference.low, rel=1e-12)
    assert size.interval.high == pytest.approx(reference.high, rel=1e-12)


def test_effect_sizes_of_constant_differences() -> None:
    with pytest.warns(EvalValidityWarning, match="the differences are all equal"):
        size = effect_sizes([0.5, 0.6], [0.4, 0.5])
    assert size.cohens_dz == math.inf
    with pytest.warns(EvalValidityWarning):
        assert effect_sizes([0.5, 0.6], [0.5, 0.6]).cohens_dz == 0.0


# ------------------------------------------------------------------------------- compare_runs


def naive_holm(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def test_holm_and_bh_known_examples() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert _holm(p).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert _holm(p).tolist() == pytest.approx(naive_holm(p.tolist()))
    assert _benjamini_hochberg(p).tolist() == pytest.approx(
        [0.04, 0.05333333333, 0.05333333333, 0.5]
    )
    random_p = np.random.default_rng(60).uniform(size=30) ** 3
    assert _benjamini_hochberg(random_p) == pytest.approx(sps.false_discovery_control(random_p))
    assert _holm(random_p) == pytest.approx(naive_holm(random_p.tolist()))


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_compare_runs_with_t_tests(correction: str) -> None:
    rng = np.random.default_rng(61)
    base = rng.uniform(size=30)
    runs = {
        "a": base,
        "b": base + rng.normal(loc=0.05, scale=0.1, size=30),
        "c": base + rng.normal(loc=0.0, scale=0.1, size=30),
        "d": base + rng.normal(loc=0.2, scale=0.1, size=30),
    }
    result = compare_runs(runs, test="t", correction=correction, alpha=0.05)
    assert isinstance(result, RunComparison)
    assert [(r.system_a, r.system_b) for r in result.rows] == list(
        itertools.combinations("abcd", 2)
    )
    raw = [sps.ttest_rel(runs[r.system_a], runs[r.system_b]).pvalue for r in result.rows]
    assert [r.p_value for r in result.rows] == pytest.approx(raw, rel=1e-10)
    expected_adjusted = {
        "holm": naive_holm(raw),
        "bh": sps.false_discovery_control(raw).tolist(),
        "none": raw,
    }[correction]
    assert [r.adjusted_p_value for r in result.rows] == pytest.approx(expected_adjusted, rel=1e-10)
    for row in result.rows:
        assert row.significant == (row.adjusted_p_value <= 0.05)
        size = effect_sizes(runs[row.system_a], runs[row.system_b])
        assert (row.difference, row.low, row.high, row.cohens_dz) == (
            size.mean_difference,
            size.interval.low,
            size.interval.high,
            size.cohens_dz,
        )
    assert result.pair("a", "d").significant
    assert result.n_queries == 30


def test_compare_runs_randomization_equals_the_pairwise_test() -> None:
    rng = np.random.default_rng(62)
    a, b = rng.uniform(size=25), rng.uniform(size=25)
    result = compare_runs({"x": a, "y": b}, n_resamples=2_000, rng=63)
    single = paired_randomization_test(a, b, n_resamples=2_000, rng=63)
    assert result.rows[0].p_value == single.p_value
    assert result.rows[0].adjusted_p_value == single.p_value  # one pair: Holm changes nothing


def test_compare_runs_warns_for_identical_systems() -> None:
    with pytest.warns(EvalValidityWarning, match="between 'x' and 'y' are all equal"):
        result = compare_runs({"x": [0.1, 0.2, 0.3], "y": [0.1, 0.2, 0.3]})
    assert result.rows[0].p_value == 1.0
    assert not result.rows[0].significant


def test_compare_runs_pair_lookup_error() -> None:
    result = compare_runs({"x": [0.1, 0.2, 0.4], "y": [0.3, 0.1, 0.2]}, test="t")
    with pytest.raises(ParameterError, match=r"No comparison of 'y' with 'x'"):
        result.pair("y", "x")


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        (
            [[0.1, 0.2]],
            {},
            "The 'values' parameter of compare_runs must be a mapping from system names to per-query values. Got list instead.",
        ),
        (
            {"x": [0.1, 0.2]},
            {},
            "The 'values' parameter of compare_runs must hold at least two systems. Got 1 instead.",
        ),
        (
            {"x": [0.1, 0.2], 3: [0.1, 0.3]},
            {},
            "The system names given to compare_runs must be str. Got 3 instead.",
        ),
        (
            {"x": [0.1, 0.2], "y": [0.1, 0.3, 0.4]},
            {},
            "Every system given to compare_runs must hold one value per query for the same queries. Got 2 values for 'x' and 3 for 'y' instead.",
        ),
        (
            {"x": [0.1, 0.2], "y": [0.1, 0.3]},
            {"correction": "bonferroni"},
            "The 'correction' parameter of compare_runs must be one of 'holm', 'bh', 'none'. Got 'bonferroni' instead.",
        ),
        (
            {"x": [0.1, 0.2], "y": [0.1, 0.3]},
            {"test": "wilcoxon"},
            "The 'test' parameter of compare_runs must be one of 'randomization', 't'. Got 'wilcoxon' instead.",
        ),
        (
            {"x": [0.1, 0.2], "y": [0.1, 0.3]},
            {"alpha": 0.0},
            "The 'alpha' parameter of compare_runs must be a float in (0, 1). Got 0.0 instead.",
        ),
        (
            {"x": [0.1, 0.2], "y": [0.1, "a"]},
            {},
            "The 'values['y']' parameter of compare_runs must be a 1-D array of numbers. Got dtype <U32 instead.",
        ),
    ],
)
def test_compare_runs_errors(values: object, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        compare_runs(values, **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message


# ------------------------------------------------------------------------------------- power


def nct_power(effect: float, n: int, alpha: float) -> float:
    """Two-sided paired t power, straight from scipy.stats.nct."""
    critical = sps.t.ppf(1 - alpha / 2, n - 1)
    dist = sps.nct(n - 1, effect * math.sqrt(n))
    return float(dist.sf(critical) + dist.cdf(-critical))


@pytest.mark.parametrize(
    ("variance", "n", "alpha", "power"),
    [(1.0, 34, 0.05, 0.8), (0.04, 100, 0.05, 0.8), (0.09, 10, 0.01, 0.9), (0.2, 3, 0.05, 0.5)],
)
def test_min_detectable_difference_reaches_the_target_power(
    variance: float, n: int, alpha: float, power: float
) -> None:
    delta = min_detectable_difference(variance, n, alpha=alpha, power=power)
    assert nct_power(delta / math.sqrt(variance), n, alpha) == pytest.approx(power, abs=1e-9)
    normal = (
        math.sqrt(variance) * (sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)) / math.sqrt(n)
    )
    assert delta > normal


def test_min_detectable_difference_tends_to_the_normal_approximation() -> None:
    n = 20_000
    normal = 0.3 * (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) / math.sqrt(n)
    assert min_detectable_difference(0.09, n) == pytest.approx(normal, rel=1e-3)
    values = [min_detectable_difference(0.09, n) for n in (5, 10, 50, 200)]
    assert values == sorted(values, reverse=True)


@pytest.mark.parametrize(
    ("delta", "variance", "alpha", "power"),
    [
        (0.5, 1.0, 0.05, 0.8),
        (0.05, 0.04, 0.05, 0.8),
        (0.02, 0.05, 0.05, 0.9),
        (0.1, 0.1, 0.01, 0.8),
        (2.0, 1.0, 0.05, 0.8),
        (0.01, 0.1, 0.05, 0.8),
    ],
)
def test_topic_set_size_is_the_smallest_sufficient_n(
    delta: float, variance: float, alpha: float, power: float
) -> None:
    n = topic_set_size(delta, variance, alpha=alpha, power=power)
    effect = delta / math.sqrt(variance)
    assert nct_power(effect, n, alpha) >= power
    if n > 2:
        assert nct_power(effect, n - 1, alpha) < power
    normal = math.ceil(((sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)) / effect) ** 2)
    assert normal <= n <= normal + 4


def test_topic_set_size_known_values() -> None:
    # G*Power, "means: difference between two dependent means (matched pairs)", two-tailed.
    assert [topic_set_size(d, 1.0) for d in (0.2, 0.5, 0.8)] == [199, 34, 15]
    assert topic_set_size(100.0, 1.0) == 2
    # With 2 queries (1 degree of freedom) the t critical value is 12.7: even 10 sd fall short.
    assert topic_set_size(10.0, 1.0) == 3


def test_topic_set_size_power_holds_in_simulation() -> None:
    n = topic_set_size(0.5, 1.0)
    rng = np.random.default_rng(70)
    differences = rng.normal(loc=0.5, scale=1.0, size=(4_000, n))
    t = differences.mean(axis=1) / (differences.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = np.abs(t) > sps.t.ppf(0.975, n - 1)
    assert abs(rejected.mean() - nct_power(0.5, n, 0.05)) < 0.025
    assert rejected.mean() > 0.78


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: topic_set_size(0.0, 1.0),
            "The 'delta' parameter of topic_set_size must be a finite float > 0. Got 0.0 instead.",
        ),
        (
            lambda: topic_set_size(0.1, -1.0),
            "The 'variance' parameter of topic_set_size must be a finite float > 0. Got -1.0 instead.",
        ),
        (
            lambda: topic_set_size(0.1, 1.0, power=0.01),
            "The 'power' parameter of topic_set_size must be a float in (alpha, 1) = (0.05, 1). Got 0.01 instead.",
        ),
        (
            lambda: topic_set_size(1e-9, 1.0),
            "topic_set_size: detecting a difference of 1e-09 standard deviations needs more than 1e+12 queries.",
        ),
        (
            lambda: min_detectable_difference(0.1, 1),
            "The 'n_queries' parameter of min_detectable_difference must be an int >= 2. Got 1 instead.",
        ),
        (
            lambda: min_detectable_difference(0.1, 10, alpha=2),
            "The 'alpha' parameter of min_detectable_difference must be a float in (0, 1). Got 2 instead.",
        ),
        (
            lambda: min_detectable_difference(math.inf, 10),
            "The 'variance' parameter of min_detectable_difference must be a finite float > 0. Got inf instead.",
        ),
    ],
)
def test_power_errors(call: object, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        call()  # type: ignore[operator]
    assert str(info.value) == message


def test_grouped_resampling_draws_the_same_distribution_as_resampling_rows():
    # Per-query scores of a cutoff metric take few values: the bootstrap goes through the
    # counts of each value (a multinomial), the sign-flip test through binomials. Both must
    # give the row-by-row procedure's distribution (means and spreads within Monte Carlo error).
    from evalvalidity.core import stats as s

    rng = np.random.default_rng(7)
    n = 20_000
    values = rng.choice([0.0, 0.1, 0.25, 0.5, 1.0], size=n, p=[0.5, 0.1, 0.1, 0.1, 0.2])
    other = np.clip(values + rng.choice([0.0, 0.5, -0.5], size=n), 0.0, 1.0)
    assert s._distinct_rows((values, other)) is not None
    grouped = s._bootstrap_means((values, other), 4000, np.random.default_rng(1))
    rows = []
    for start in range(0, 1000, 50):
        picks = np.random.default_rng(start).integers(0, n, size=(50, n))
        rows.append(np.column_stack([values[picks].mean(axis=1), other[picks].mean(axis=1)]))
    plain = np.vstack(rows)
    for j in range(2):
        expected_sd = np.std([values, other][j]) / np.sqrt(n)
        assert abs(grouped[j].mean() - [values, other][j].mean()) < 5 * expected_sd / np.sqrt(4000)
        assert abs(grouped[j].std() / plain[:, j].std() - 1.0) < 0.08
    # the two columns keep their pairing (the correlation of their means)
    assert abs(np.corrcoef(grouped)[0, 1] - np.corrcoef(plain.T)[0, 1]) < 0.05

    differences = values - other + 0.002
    p_grouped, _, exact = s._sign_flip_p_value(differences, 4000, np.random.default_rng(2))
    assert not exact
    flips = 1.0 - 2.0 * np.random.default_rng(3).integers(0, 2, size=(1000, n))
    observed = abs(differences.sum())
    p_plain = (np.count_nonzero(np.abs(flips @ differences) >= observed) + 1) / 1001
    assert abs(p_grouped - p_plain) < 0.05


def test_a_benchmark_of_thousands_of_queries_is_resampled_through_its_distinct_values():
    # 6,980 queries' RR@10 (eleven values): 4,000 resamples are 4,000 multinomial draws over
    # those values, not 28 million row picks
    from evalvalidity.core import stats as s

    values = np.random.default_rng(5).choice([0.0, 0.1, 0.125, 0.2, 0.5, 1.0], size=6_980)
    grouped = s._distinct_rows((values,))
    assert grouped is not None
    assert grouped[0].shape == (6, 1) and int(grouped[1].sum()) == 6_980

    class NoRowPicks(np.random.Generator):
        def integers(self, *args, **kwargs):  # the row-by-row procedure's draws
            raise AssertionError("rows were picked one by one")

    interval = s.mean_interval(values, n_resamples=4000, rng=NoRowPicks(np.random.PCG64(1)))
    assert interval.low < values.mean() < interval.high


def test_resampling_goes_row_by_row_when_values_are_mostly_distinct_or_few():
    from evalvalidity.core import stats as s

    rng = np.random.default_rng(0)
    assert s._distinct_rows((rng.random(50_000),)) is None  # continuous scores
    assert s._distinct_rows((np.zeros(100),)) is None  # too few rows to be worth it
