"""Statistics over per-query metric values: intervals, paired tests, effect sizes and power.

Every function takes per-query values (one number per query, the same queries in the same order
for every system) and returns a frozen dataclass or a number:

===================================  ===============================================================
:func:`mean_interval`                interval of a mean: BCa or percentile bootstrap, or Student t
:func:`ratio_interval`               interval of a ratio of means, e.g. measured noise score / exact
                                     floor, by the delta method (with exact variances when known)
                                     or the bootstrap: "measured/analytic = 0.98 [0.93, 1.04]"
:func:`z_against_floor`              z of a measured mean against an exact floor and its variance
:func:`paired_randomization_test`    two-sided sign-flip test of a mean difference
:func:`effect_sizes`                 mean difference with its t interval, and Cohen's d_z
:func:`compare_runs`                 every pair of systems, p-values adjusted by Holm or BH
:func:`min_detectable_difference`    smallest difference a paired t-test detects with n queries
:func:`topic_set_size`               queries needed to detect a difference (Sakai 2016)
===================================  ===============================================================

Queries are the unit of resampling: intervals and tests treat the per-query values (or the
per-query differences of two systems) as independent draws. Randomness comes only from the
``rng`` argument: a :class:`numpy.random.Generator`, an int seed, or None for fresh entropy
from the operating system (a result that differs from call to call). Bootstrap and
randomization resamples are drawn in blocks of a few million numbers, so memory stays bounded
whatever the number of queries and resamples.

References
----------
Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13-14 (percentile and BCa).
Smucker, Allan & Carterette, "A comparison of statistical significance tests for information
retrieval evaluation", CIKM 2007. Holm, "A simple sequentially rejective multiple test
procedure", Scand. J. Statist. 6 (1979). Benjamini & Hochberg, JRSS B 57 (1995).
Sakai, "Topic set size design", Information Retrieval Journal 19 (2016).
Phipson & Smyth, "Permutation p-values should never be zero", SAGMB 9 (2010).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from evalvalidity.core import _special as special
from evalvalidity.core._validate import (
    _choice,
    _finite_values,
    _generator,
    _int_at_least,
    _is_real,
    _open_unit,
    _per_query,
    _positive,
    _same_length,
    _shown,
)
from evalvalidity.core.types import (
    FloatArray,
    IndexArray,
)
from evalvalidity.errors import EvalValidityWarning, InputDataError, ParameterError

__all__ = [
    "EffectSize",
    "FloorZ",
    "Interval",
    "PairComparison",
    "RandomizationTest",
    "RunComparison",
    "compare_runs",
    "effect_sizes",
    "mean_interval",
    "min_detectable_difference",
    "paired_randomization_test",
    "ratio_interval",
    "topic_set_size",
    "z_against_floor",
]

# Resamples are drawn in blocks of at most this many numbers (32 MB of int64 indices).
_BLOCK_ELEMENTS: Final = 1 << 22

_MEAN_METHODS: Final = ("bootstrap", "t")
_RATIO_METHODS: Final = ("delta", "bootstrap")
_BOOTSTRAP_METHODS: Final = ("bca", "percentile")
_TESTS: Final = ("randomization", "t")
_CORRECTIONS: Final = ("holm", "bh", "none")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    Attributes
    ----------
    estimate : float
        The statistic on the data as given (a mean, a ratio of means, a difference).
    low, high : float
        The interval's bounds.
    confidence : float
        The nominal coverage, e.g. 0.95.
    method : str
        How the interval was computed: ``"t"``, ``"bca"``, ``"percentile"`` or ``"delta"``.

    Examples
    --------
    >>> ratio = Interval(0.98, 0.93, 1.04, 0.95, "delta")
    >>> ratio.format(2)
    '0.98 [0.93, 1.04]'
    >>> ratio.contains(1.0), round(ratio.width, 2)
    (True, 0.11)
    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: str

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low

    def contains(self, value: float) -> bool:
        """Tell whether ``low <= value <= high``."""
        return self.low <= value <= self.high

    def format(self, digits: int = 2) -> str:
        """Format as ``'0.98 [0.93, 1.04]'``, with ``digits`` decimals."""
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def __str__(self) -> str:
        return self.format(3)


@dataclass(frozen=True)
class FloorZ:
    """A measured mean against an exact floor, in standard errors.

    Attributes
    ----------
    measured_mean : float
    expected_mean : float
        Mean of the per-query exact expectations.
    standard_error : float
        Standard error of the measured mean under the floor's distribution.
    z : float
        ``(measured_mean - expected_mean) / standard_error``.
    p_value : float
        Two-sided normal p-value of ``z``.
    """

    measured_mean: float
    expected_mean: float
    standard_error: float
    z: float
    p_value: float


@dataclass(frozen=True)
class RandomizationTest:
    """Result of a paired (sign-flip) randomization test.

    Attributes
    ----------
    difference : float
        Observed mean of ``a - b``.
    p_value : float
        Two-sided p-value.
    n_resamples : int
        Sign vectors evaluated: ``2**n`` when exact, else the Monte Carlo count.
    exact : bool
        True when every sign vector was enumerated.
    """

    difference: float
    p_value: float
    n_resamples: int
    exact: bool


@dataclass(frozen=True)
class EffectSize:
    """The size of a paired difference.

    Attributes
    ----------
    mean_difference : float
        Mean of ``a - b``.
    interval : Interval
        Student t interval of the mean difference.
    cohens_dz : float
        ``mean(a - b) / std(a - b, ddof=1)``: Cohen's d for paired data.
    n_queries : int
    """

    mean_difference: float
    interval: Interval
    cohens_dz: float
    n_queries: int


@dataclass(frozen=True)
class PairComparison:
    """One pair of systems in :class:`RunComparison`; differences are ``system_a - system_b``.

    Attributes
    ----------
    system_a, system_b : str
    difference : float
        Mean of the per-query differences.
    low, high : float
        Student t interval of the mean difference at the comparison's confidence.
    p_value : float
        Two-sided p-value of the pair's test, unadjusted.
    adjusted_p_value : float
        After the comparison's multiple-testing correction.
    cohens_dz : float
        Cohen's d for paired data.
    significant : bool
        ``adjusted_p_value <= alpha``.
    """

    system_a: str
    system_b: str
    difference: float
    low: float
    high: float
    p_value: float
    adjusted_p_value: float
    cohens_dz: float
    significant: bool


@dataclass(frozen=True)
class RunComparison:
    """Every pair of systems compared over the same queries.

    Attributes
    ----------
    rows : tuple of PairComparison
        One row per pair ``(i, j)``, ``i < j`` in the order the systems were given.
    test : str
        ``"randomization"`` or ``"t"``.
    correction : str
        ``"holm"``, ``"bh"`` or ``"none"``.
    alpha : float
    confidence : float
    n_queries : int
    """

    rows: tuple[PairComparison, ...]
    test: str
    correction: str
    alpha: float
    confidence: float
    n_queries: int

    def pair(self, system_a: str, system_b: str) -> PairComparison:
        """Find the row comparing two systems, in the order they were given.

        Raises
        ------
        ParameterError
            When no row compares these two systems in this order.
        """
        for row in self.rows:
            if row.system_a == system_a and row.system_b == system_b:
                return row
        raise ParameterError(
            f"No comparison of {system_a!r} with {system_b!r}; pairs are listed in the order "
            f"the systems were given."
        )


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _warn_constant(what: str, func: str) -> None:
    warnings.warn(
        f"{func}: {what} are all equal, so the interval has zero width.",
        EvalValidityWarning,
        stacklevel=3,
    )


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


#: From this many rows on, resampling goes through the distinct values (rows or pairs) when
#: there are at most a quarter as many of them as rows: per-query scores of a cutoff metric
#: take a handful of values, so a million queries cost what a handful do.
_GROUPED_MIN_ROWS: Final = 5_000


def _distinct_rows(
    columns: tuple[FloatArray, ...],
) -> tuple[FloatArray, npt.NDArray[np.int64]] | None:
    """The distinct rows of ``columns`` and how often each occurs, when grouping pays."""
    n = columns[0].size
    if n < _GROUPED_MIN_ROWS:
        return None
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for column in columns:
        if not np.isfinite(column).all():
            return None
        values, codes = np.unique(column, return_inverse=True)
        span *= values.size
        if 4 * values.size > n or span >= 2**62:  # a key per row must fit in an int64
            return None
        key = key * values.size + codes
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    if 4 * first.size > n:
        return None
    return np.column_stack([column[first] for column in columns]), counts.astype(np.int64)


def _bootstrap_means(
    columns: tuple[FloatArray, ...], n_resamples: int, rng: np.random.Generator
) -> tuple[FloatArray, ...]:
    """Means of every column over the same ``n_resamples`` resamples of the rows.

    A resample of ``n`` rows drawn with replacement holds each distinct row a
    Multinomial(n, c/n) number of times (``c`` its count), so when the rows take few distinct
    values the means are drawn from those counts: the same distribution, in O(distinct) per
    resample instead of O(n).
    """
    n = columns[0].size
    grouped = _distinct_rows(columns)
    if grouped is not None:
        distinct, counts = grouped
        outs = tuple(np.empty(n_resamples) for _ in columns)
        block = max(1, _BLOCK_ELEMENTS // distinct.shape[0])
        shares = counts / n
        for start in range(0, n_resamples, block):
            stop = min(start + block, n_resamples)
            draws = rng.multinomial(n, shares, size=stop - start).astype(np.float64)
            for j, out in enumerate(outs):
                out[start:stop] = draws @ distinct[:, j] / n
        return outs
    block = max(1, _BLOCK_ELEMENTS // n)
    outs = tuple(np.empty(n_resamples) for _ in columns)

    def means(rows: IndexArray, start: int, stop: int) -> None:
        for column, out in zip(columns, outs, strict=True):
            out[start:stop] = column[rows].mean(axis=1)

    blocks = [(start, min(start + block, n_resamples)) for start in range(0, n_resamples, block)]
    # Past _BLOCK_ELEMENTS rows a block is one resample, and a second one held beside it
    # (with its gathered values) would add 16 bytes a row to the peak for little gain.
    if len(blocks) < 4 or n > _BLOCK_ELEMENTS:
        for start, stop in blocks:
            means(rng.integers(0, n, size=(stop - start, n)), start, stop)
        return outs
    # The rows of one block are drawn here while the means of the previous one are taken in a
    # worker: numpy lets go of the interpreter in both, the generator is drawn from here
    # alone in the same order, and two blocks of rows are held at a time.
    with ThreadPoolExecutor(1, thread_name_prefix="evalvalidity-bootstrap") as worker:
        pending: Future[None] | None = None
        for start, stop in blocks:
            rows = rng.integers(0, n, size=(stop - start, n))
            if pending is not None:
                pending.result()
            pending = worker.submit(means, rows, start, stop)
            del rows
        if pending is not None:
            pending.result()
    return outs


def _bootstrap_bounds(
    replicates: FloatArray,
    estimate: float,
    jackknife: FloatArray | None,
    confidence: float,
) -> tuple[float, float]:
    """Percentile bounds (``jackknife`` None) or BCa bounds (Efron & Tibshirani, 14.3)."""
    tails = np.array([(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    if jackknife is not None:
        size = replicates.size
        # Ties with the estimate count half (as in scipy.stats.bootstrap); the clip keeps z0
        # finite when every replicate lies on one side of the estimate.
        below = (
            np.count_nonzero(replicates < estimate) + np.count_nonzero(replicates <= estimate)
        ) / (2.0 * size)
        bias = special.ndtri(np.clip(below, 0.5 / size, 1.0 - 0.5 / size))
        spread = jackknife.mean() - jackknife
        scale = 6.0 * np.sum(spread**2) ** 1.5
        acceleration = float(np.sum(spread**3) / scale) if scale > 0 else 0.0
        z = special.ndtri(tails)
        tails = special.ndtr(bias + (bias + z) / (1.0 - acceleration * (bias + z)))
    low, high = np.quantile(replicates, tails)
    return float(low), float(high)


# Student t and noncentral t by the special functions scipy.stats evaluates for them
# (identical values, NaN for df <= 0): importing scipy.stats costs about 1.4 s of CPU.


def _t_ppf(q: float, df: FloatArray | float) -> FloatArray:
    return np.where(np.asarray(df) > 0, special.stdtrit(df, q), np.nan)[()]


def _t_isf(q: float, df: FloatArray | float) -> FloatArray:
    return np.where(np.asarray(df) > 0, -special.stdtrit(df, q), np.nan)[()]


def _t_sf(x: float, df: FloatArray | float) -> FloatArray:
    return np.where(np.asarray(df) > 0, special.stdtr(df, -x), np.nan)[()]


def _nct_cdf(x: FloatArray, df: FloatArray, shift: FloatArray) -> FloatArray:
    return np.where(np.asarray(df) > 0, special.nctdtr(df, shift, x), np.nan)[()]


def _nct_sf(x: FloatArray, df: FloatArray, shift: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):  # scipy.stats.nct.sf is this ufunc, clipped
        value = np.clip(special.nct_sf(x, df, shift), 0, 1)
    return np.where(np.asarray(df) > 0, value, np.nan)[()]


def _t_interval(values: FloatArray, confidence: float) -> tuple[float, float, float]:
    n = values.size
    estimate = float(values.mean())
    half = float(_t_ppf((1.0 + confidence) / 2.0, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return estimate, estimate - half, estimate + half


def _mean_interval(
    values: FloatArray,
    confidence: float,
    method: str,
    bootstrap_method: str,
    n_resamples: int,
    rng: np.random.Generator,
) -> Interval:
    if method == "t":
        estimate, low, high = _t_interval(values, confidence)
        return Interval(estimate, low, high, confidence, "t")
    estimate = float(values.mean())
    (replicates,) = _bootstrap_means((values,), n_resamples, rng)
    jackknife = None
    if bootstrap_method == "bca":
        jackknife = (values.sum() - values) / (values.size - 1)
    low, high = _bootstrap_bounds(replicates, estimate, jackknife, confidence)
    return Interval(estimate, low, high, confidence, bootstrap_method)


def _sign_flip_p_value(
    differences: FloatArray, n_resamples: int, rng: np.random.Generator
) -> tuple[float, int, bool]:
    """Two-sided sign-flip p-value of the mean of ``differences``: (p, resamples, exact)."""
    n = differences.size
    observed = abs(float(differences.sum()))
    # Sums of the same numbers in another order differ in the last bits; without a tolerance
    # a flip that reproduces the observed value exactly could be missed.
    tolerance = 100.0 * np.finfo(np.float64).eps * float(np.abs(differences).sum())
    threshold = observed - tolerance
    block = max(1, _BLOCK_ELEMENTS // n)
    count = 0
    if n < 62 and 2**n <= n_resamples:
        total = 2**n
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, block):
            codes = np.arange(start, min(start + block, total), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            count += int(np.count_nonzero(np.abs(signs @ differences) >= threshold))
        return count / total, total, True
    grouped = _distinct_rows((np.abs(differences),))
    if grouped is not None:
        # Of the c differences of magnitude m, a Binomial(c, 1/2) number flip: the sum is
        # sum_m m (c - 2 flipped), the same distribution as flipping each row.
        distinct, counts = grouped
        magnitudes = distinct[:, 0]
        block = max(1, _BLOCK_ELEMENTS // magnitudes.size)
        for start in range(0, n_resamples, block):
            size = min(block, n_resamples - start)
            flipped = rng.binomial(counts, 0.5, size=(size, magnitudes.size))
            sums = (counts - 2 * flipped).astype(np.float64) @ magnitudes
            count += int(np.count_nonzero(np.abs(sums) >= threshold))
        return (count + 1) / (n_resamples + 1), n_resamples, False
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, n))
        count += int(np.count_nonzero(np.abs(signs @ differences) >= threshold))
    return (count + 1) / (n_resamples + 1), n_resamples, False


def _t_test_p_value(differences: FloatArray) -> float:
    n = differences.size
    mean = float(differences.mean())
    std = float(differences.std(ddof=1))
    if std == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / (std / math.sqrt(n))
    return float(2.0 * _t_sf(abs(t), n - 1))


def _cohens_dz(differences: FloatArray) -> float:
    mean = float(differences.mean())
    std = float(differences.std(ddof=1))
    if std == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / std


def _holm(p_values: FloatArray) -> FloatArray:
    m = p_values.size
    order = np.argsort(p_values, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p_values[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def _benjamini_hochberg(p_values: FloatArray) -> FloatArray:
    m = p_values.size
    order = np.argsort(p_values, kind="stable")
    scaled = p_values[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def _paired_t_power(effect: float, n: FloatArray | float, alpha: float) -> FloatArray:
    """Two-sided paired t power with ``n`` queries and standardised difference ``effect``.

    ``n`` may be fractional: an effective number of queries (n / design effect).
    """
    n = np.asarray(n, dtype=np.float64)
    df = n - 1.0
    critical = _t_isf(alpha / 2.0, df)
    shift = effect * np.sqrt(n)
    lower = np.asarray(_nct_cdf(-critical, df, shift))
    # scipy returns NaN for this lower tail once the shift passes about 7.6; it is then below
    # P(T' < 0) = Φ(-shift) < 2e-14, so 0 is exact to double precision for a power.
    lower = np.where(np.isnan(lower) & (shift > 7.0), 0.0, lower)
    return np.asarray(_nct_sf(critical, df, shift) + lower)


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def mean_interval(
    values: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    method: str = "bootstrap",
    bootstrap_method: str = "bca",
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> Interval:
    r"""Confidence interval of the mean of per-query values.

    With ``method="t"``:

    .. math:: \bar x \pm t_{(1+c)/2,\,n-1}\; s / \sqrt{n}

    With ``method="bootstrap"``, ``n_resamples`` resamples of the queries with replacement give
    replicates :math:`\bar x^*_b`. The percentile interval takes their :math:`(1-c)/2` and
    :math:`(1+c)/2` quantiles; BCa (the default) takes the quantiles
    :math:`\Phi\big(z_0 + (z_0 + z_\alpha) / (1 - a (z_0 + z_\alpha))\big)` with bias
    :math:`z_0 = \Phi^{-1}(\#\{\bar x^*_b < \bar x\} / B)` (ties count half) and acceleration
    :math:`a = \sum_i (\bar\theta - \theta_{(i)})^3 / (6 [\sum_i (\bar\theta - \theta_{(i)})^2]^{3/2})`
    from the jackknife means :math:`\theta_{(i)}` (Efron & Tibshirani 1993, §14.3).

    Parameters
    ----------
    values : array_like of float, shape (n,)
        One finite value per query, n >= 2.
    confidence : float, default 0.95
        Nominal coverage, in (0, 1).
    method : {"bootstrap", "t"}
        The t interval assumes the mean is close to normal; the bootstrap assumes only that the
        queries are exchangeable draws.
    bootstrap_method : {"bca", "percentile"}
        Used when ``method="bootstrap"``.
    n_resamples : int, default 10_000
        Bootstrap resamples, drawn in vectorised blocks.
    rng : numpy.random.Generator, int or None
        Source of the resamples; None draws fresh entropy (not reproducible).

    Returns
    -------
    Interval
        ``method`` is ``"t"``, ``"bca"`` or ``"percentile"``.

    Raises
    ------
    ParameterError
        On fewer than two values, a non-finite value or an argument outside its domain.

    Warns
    -----
    EvalValidityWarning
        When all values are equal: the interval is the point ``[v, v]``.

    Examples
    --------
    >>> interval = mean_interval([0.2, 0.4, 0.6], method="t")
    >>> interval.format(4)
    '0.4000 [-0.0968, 0.8968]'
    >>> boot = mean_interval([0.0, 0.5, 1.0, 1.0], method="bootstrap", bootstrap_method="percentile", rng=0)
    >>> boot.estimate, boot.low >= 0.0, boot.high <= 1.0
    (0.625, True, True)
    """
    func = "mean_interval"
    values = _finite_values(values, "values", func)
    confidence = _open_unit(confidence, "confidence", func)
    method = _choice(method, _MEAN_METHODS, "method", func)
    bootstrap_method = _choice(bootstrap_method, _BOOTSTRAP_METHODS, "bootstrap_method", func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)
    kind = "t" if method == "t" else bootstrap_method
    if np.ptp(values) == 0.0:
        _warn_constant("the values", func)
        value = float(values[0])
        return Interval(value, value, value, confidence, kind)
    return _mean_interval(values, confidence, method, bootstrap_method, n_resamples, generator)


def ratio_interval(
    numerator_values: npt.ArrayLike,
    denominator_values: npt.ArrayLike | None = None,
    *,
    denominator_exact: npt.ArrayLike | None = None,
    numerator_variance: npt.ArrayLike | None = None,
    confidence: float = 0.95,
    method: str = "delta",
    bootstrap_method: str = "bca",
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> Interval:
    r"""Confidence interval of a ratio of means, :math:`R = \bar x / \bar y`.

    The typical use: ``x`` holds a noise run's per-query scores, ``y`` the exact floor
    :math:`E_q` of each query (``denominator_exact``), and ``numerator_variance`` the exact
    variance :math:`V_q` of each query's score under a random ranking. Then the ratio is linear
    in :math:`\bar x` and, by the central limit theorem over queries,

    .. math:: R = \frac{\bar x}{\bar E}, \qquad
              \operatorname{se}(R) = \frac{\sqrt{\sum_q V_q}}{n\,\bar E}, \qquad
              R \pm z_{(1+c)/2}\,\operatorname{se}(R).

    Without ``numerator_variance`` the standard error comes from the sample,
    :math:`s_x / (\sqrt n\,\bar E)`, with a Student t quantile on :math:`n-1` degrees of
    freedom (this also counts the spread of the per-query floors, so it is wider when the
    numerator's queries have different expectations; but for a skewed metric such as RR over
    a few hundred queries it under-covers, so pass the exact variances when they are known).
    With a sampled, paired denominator
    (``denominator_values``, e.g. another system over the same queries) the delta method gives

    .. math:: \operatorname{se}(R) = \frac{s_r}{\sqrt n\,\bar y}, \qquad r_q = x_q - R\,y_q,

    again with a t quantile. ``method="bootstrap"`` resamples the queries (numerator and
    denominator together) and takes BCa or percentile bounds of :math:`\bar x^* / \bar y^*`.

    Parameters
    ----------
    numerator_values : array_like of float, shape (n,)
        One finite value per query, n >= 2.
    denominator_values : array_like of float, shape (n,), optional
        Sampled per-query values over the same queries. Give this or ``denominator_exact``.
    denominator_exact : float or array_like of float, shape (n,), optional
        Exact (not sampled) per-query expectations, or their common value.
    numerator_variance : float or array_like of float, shape (n,), optional
        Exact variance of each numerator value, e.g. ``Floor.variance`` for a noise run scored
        once (divide by the number of seeds averaged per query). Only with ``denominator_exact``
        and ``method="delta"``.
    confidence : float, default 0.95
    method : {"delta", "bootstrap"}
    bootstrap_method : {"bca", "percentile"}
    n_resamples : int, default 10_000
    rng : numpy.random.Generator, int or None
        Used by the bootstrap; None draws fresh entropy.

    Returns
    -------
    Interval
        ``method`` is ``"delta"``, ``"bca"`` or ``"percentile"``.

    Raises
    ------
    ParameterError
        On a missing or doubled denominator, mismatched lengths, a denominator whose mean is
        not > 0, a negative variance, ``numerator_variance`` where it cannot be used.
    InputDataError
        When a bootstrap resample (or, for BCa, a jackknife sample) has a zero denominator.

    Warns
    -----
    EvalValidityWarning
        When the estimated standard error is 0 (all numerator values equal, or the sampled
        ratio is the same on every query): the interval is the point ``[R, R]``.

    Examples
    --------
    A noise run over four queries whose exact floor is 0.25 each, with exact variance 0.01:

    >>> r = ratio_interval([0.2, 0.3, 0.2, 0.3], denominator_exact=0.25, numerator_variance=0.01)
    >>> r.format(4)
    '1.0000 [0.6080, 1.3920]'

    (se = sqrt(4 * 0.01) / (4 * 0.25) = 0.2 and 1.959964 * 0.2 = 0.3920.)
    """
    func = "ratio_interval"
    numerator = _finite_values(numerator_values, "numerator_values", func)
    n = numerator.size
    if (denominator_values is None) == (denominator_exact is None):
        raise ParameterError(
            "ratio_interval needs exactly one of 'denominator_values' (sampled per-query values) "
            "and 'denominator_exact' (exact per-query expectations)."
        )
    confidence = _open_unit(confidence, "confidence", func)
    method = _choice(method, _RATIO_METHODS, "method", func)
    bootstrap_method = _choice(bootstrap_method, _BOOTSTRAP_METHODS, "bootstrap_method", func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)
    if denominator_values is not None:
        denominator = _finite_values(denominator_values, "denominator_values", func)
        _same_length(numerator, denominator, ("numerator_values", "denominator_values"), func)
    else:
        denominator = _per_query(denominator_exact, n, "denominator_exact", func)
    if not denominator.mean() > 0.0:
        raise ParameterError(
            f"The denominator of ratio_interval must have a mean > 0. "
            f"Got {_shown(float(denominator.mean()))} instead."
        )
    variance = None
    if numerator_variance is not None:
        if denominator_exact is None or method != "delta":
            raise ParameterError(
                "The 'numerator_variance' parameter of ratio_interval is used only with "
                "'denominator_exact' and method='delta'."
            )
        variance = _per_query(numerator_variance, n, "numerator_variance", func)
        if (variance < 0.0).any():
            raise ParameterError(
                "The 'numerator_variance' parameter of ratio_interval must hold variances >= 0. "
                f"Got {_shown(float(variance.min()))} instead."
            )
    kind = "delta" if method == "delta" else bootstrap_method
    if method == "delta":
        estimate, low, high, degenerate = _ratio_delta(numerator, denominator, variance, confidence)
    else:
        ratios = numerator / np.where(denominator == 0.0, 1.0, denominator)
        degenerate = bool(np.ptp(ratios) == 0.0 and (denominator != 0.0).all())
        estimate = low = high = float(numerator.mean() / denominator.mean())
        if not degenerate:
            estimate, low, high = _ratio_bootstrap(
                numerator, denominator, confidence, bootstrap_method, n_resamples, generator
            )
    if degenerate:
        _warn_constant("the per-query ratios (or their variances)", func)
    return Interval(estimate, low, high, confidence, kind)


def _ratio_delta(
    numerator: FloatArray,
    denominator: FloatArray,
    variance: FloatArray | None,
    confidence: float,
) -> tuple[float, float, float, bool]:
    n = numerator.size
    estimate = float(numerator.mean() / denominator.mean())
    if variance is not None:
        standard_error = math.sqrt(float(variance.sum())) / (n * float(denominator.mean()))
        quantile = float(special.ndtri((1.0 + confidence) / 2.0))
    else:
        residuals = numerator - estimate * denominator
        standard_error = float(residuals.std(ddof=1)) / (math.sqrt(n) * float(denominator.mean()))
        quantile = float(_t_ppf((1.0 + confidence) / 2.0, n - 1))
    half = quantile * standard_error
    return estimate, estimate - half, estimate + half, standard_error == 0.0


def _ratio_bootstrap(
    numerator: FloatArray,
    denominator: FloatArray,
    confidence: float,
    bootstrap_method: str,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    estimate = float(numerator.mean() / denominator.mean())
    jackknife = None
    if bootstrap_method == "bca":
        left_out = denominator.sum() - denominator
        if (left_out == 0.0).any():
            raise InputDataError(
                "ratio_interval: leaving one query out leaves a denominator mean of 0, so BCa's "
                "jackknife is undefined; use bootstrap_method='percentile'."
            )
        jackknife = (numerator.sum() - numerator) / left_out
    top, bottom = _bootstrap_means((numerator, denominator), n_resamples, rng)
    zero = int(np.count_nonzero(bottom == 0.0))
    if zero:
        raise InputDataError(
            f"ratio_interval: {zero} of {n_resamples} bootstrap resamples have a denominator "
            "mean of 0, so their ratio is undefined; use method='delta' or more queries."
        )
    replicates = top / bottom
    low, high = _bootstrap_bounds(replicates, estimate, jackknife, confidence)
    return estimate, low, high


def z_against_floor(
    measured_mean: float,
    expected: npt.ArrayLike,
    variance_per_query: npt.ArrayLike,
    *,
    n_draws: int = 1,
) -> FloorZ:
    r"""How many standard errors a measured mean lies from an exact floor.

    The measured mean averages one score per query and draw for n queries and s draws (random rankings), each
    score an independent draw from the query's floor distribution (expectation :math:`E_q`,
    variance :math:`V_q`) under the null hypothesis that the run ranks at random:

    .. math:: z = \frac{m - \bar E}{\sqrt{\sum_q V_q} / (n \sqrt{s})}, \qquad
              p = 2\,\Phi(-|z|).

    The normal approximation needs enough queries × draws: the floor of RR is very skewed
    (see docs/math.md, Check 1).

    Parameters
    ----------
    measured_mean : float
        The mean score of the run (over queries and draws).
    expected : float or array_like of float, shape (n,)
        Exact expectation per query (``Floor.expected``), or their common value.
    variance_per_query : array_like of float, shape (n,)
        Exact variance per query (``Floor.variance``); it fixes n.
    n_draws : int, default 1
        Independent random rankings scored per query.

    Returns
    -------
    FloorZ

    Raises
    ------
    ParameterError
        On non-finite input, negative variances or mismatched lengths.

    Warns
    -----
    EvalValidityWarning
        When every variance is 0: z is 0 if the means agree, else ±inf, and p is 1 or 0.

    Examples
    --------
    Four queries with floor 0.25 and variance 0.04 each, one draw: se = sqrt(0.16) / 4 = 0.1.

    >>> result = z_against_floor(0.45, 0.25, [0.04, 0.04, 0.04, 0.04])
    >>> round(result.standard_error, 12), round(result.z, 12), round(result.p_value, 4)
    (0.1, 2.0, 0.0455)
    """
    func = "z_against_floor"
    if not _is_real(measured_mean) or not math.isfinite(float(measured_mean)):
        raise ParameterError(
            f"The 'measured_mean' parameter of {func} must be a finite float. "
            f"Got {_shown(measured_mean)} instead."
        )
    variance = _finite_values(variance_per_query, "variance_per_query", func, min_size=1)
    if (variance < 0.0).any():
        raise ParameterError(
            f"The 'variance_per_query' parameter of {func} must hold variances >= 0. "
            f"Got {_shown(float(variance.min()))} instead."
        )
    expectation = _per_query(expected, variance.size, "expected", func)
    n_draws = _int_at_least(n_draws, 1, "n_draws", func)
    measured = float(measured_mean)
    expected_mean = float(expectation.mean())
    standard_error = math.sqrt(float(variance.sum())) / (variance.size * math.sqrt(n_draws))
    difference = measured - expected_mean
    if standard_error == 0.0:
        warnings.warn(
            f"{func}: every per-query variance is 0, so z is 0 or infinite.",
            EvalValidityWarning,
            stacklevel=2,
        )
        z = 0.0 if difference == 0.0 else math.copysign(math.inf, difference)
    else:
        z = difference / standard_error
    p_value = float(2.0 * special.ndtr(-abs(z)))
    return FloorZ(measured, expected_mean, standard_error, z, p_value)


def paired_randomization_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> RandomizationTest:
    r"""Two-sided paired randomization (sign-flip) test of the mean difference.

    Under the null hypothesis the two systems are exchangeable on every query, so each
    difference :math:`d_q = a_q - b_q` is as likely to have the opposite sign. With
    :math:`T(\epsilon) = |\sum_q \epsilon_q d_q|` over sign vectors
    :math:`\epsilon \in \{-1, 1\}^n`:

    .. math:: p = \frac{\#\{\epsilon : T(\epsilon) \ge T(\mathbf 1)\}}{2^n}
              \quad\text{(exact)}, \qquad
              p = \frac{1 + \#\{b : T(\epsilon_b) \ge T(\mathbf 1)\}}{1 + B}
              \quad\text{(Monte Carlo)}.

    All :math:`2^n` sign vectors are enumerated when :math:`2^n \le` ``n_resamples``;
    otherwise B = ``n_resamples`` random sign vectors are drawn and the observed one counted
    once (Phipson & Smyth 2010), so p is never 0. The exact p equals
    ``scipy.stats.permutation_test(..., permutation_type="samples")`` with an exact null.
    Smucker et al. (CIKM 2007) recommend this test for IR evaluation.

    Parameters
    ----------
    a, b : array_like of float, shape (n,)
        Per-query values of two systems over the same queries, n >= 2.
    n_resamples : int, default 10_000
    rng : numpy.random.Generator, int or None
        Used only by the Monte Carlo test; None draws fresh entropy.

    Returns
    -------
    RandomizationTest

    Raises
    ------
    ParameterError
        On mismatched lengths, fewer than two queries, non-finite values.

    Examples
    --------
    Differences 1, 2, 3: the eight signed sums are ±6, ±4, ±2, 0, 0 and two reach |6|.

    >>> test = paired_randomization_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    >>> test.difference, test.p_value, test.n_resamples, test.exact
    (2.0, 0.25, 8, True)
    """
    func = "paired_randomization_test"
    first = _finite_values(a, "a", func)
    second = _finite_values(b, "b", func)
    _same_length(first, second, ("a", "b"), func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)
    differences = first - second
    p_value, resamples, exact = _sign_flip_p_value(differences, n_resamples, generator)
    return RandomizationTest(float(differences.mean()), p_value, resamples, exact)


def effect_sizes(a: npt.ArrayLike, b: npt.ArrayLike, *, confidence: float = 0.95) -> EffectSize:
    r"""Mean paired difference with its t interval, and Cohen's :math:`d_z`.

    .. math:: \bar d = \frac1n \sum_q (a_q - b_q), \qquad
              d_z = \bar d / s_d, \qquad
              \bar d \pm t_{(1+c)/2,\,n-1}\, s_d / \sqrt n,

    with :math:`s_d` the sample standard deviation (ddof = 1) of the differences: the
    interval is that of ``scipy.stats.ttest_rel``. With thousands of queries tiny differences
    become significant, so report the size too (Ihemelandu & Ekstrand, SIGIR 2023).

    Parameters
    ----------
    a, b : array_like of float, shape (n,)
        Per-query values of two systems over the same queries, n >= 2.
    confidence : float, default 0.95

    Returns
    -------
    EffectSize

    Raises
    ------
    ParameterError
        On mismatched lengths, fewer than two queries, non-finite values.

    Warns
    -----
    EvalValidityWarning
        When all differences are equal: d_z is 0 (differences all 0) or ±inf, and the interval
        is the point ``[d, d]``.

    Examples
    --------
    >>> size = effect_sizes([0.5, 0.7, 0.9], [0.4, 0.5, 0.6])
    >>> round(size.mean_difference, 12), round(size.cohens_dz, 12)
    (0.2, 2.0)
    >>> size.interval.format(4)
    '0.2000 [-0.0484, 0.4484]'
    """
    func = "effect_sizes"
    first = _finite_values(a, "a", func)
    second = _finite_values(b, "b", func)
    _same_length(first, second, ("a", "b"), func)
    confidence = _open_unit(confidence, "confidence", func)
    differences = first - second
    if np.ptp(differences) == 0.0:
        _warn_constant("the differences", func)
    return _effect_size(differences, confidence)


def _effect_size(differences: FloatArray, confidence: float) -> EffectSize:
    if np.ptp(differences) == 0.0:
        value = float(differences[0])
        interval = Interval(value, value, value, confidence, "t")
    else:
        interval = Interval(*_t_interval(differences, confidence), confidence, "t")
    return EffectSize(interval.estimate, interval, _cohens_dz(differences), differences.size)


def compare_runs(
    values: Mapping[str, npt.ArrayLike],
    *,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> RunComparison:
    r"""Compare every pair of systems over the same queries.

    For each pair (i, j), i < j in the order given: the mean difference
    :math:`\bar d = \overline{a_i - a_j}` with its Student t interval, Cohen's :math:`d_z`, and a
    two-sided p-value from the paired randomization test (:func:`paired_randomization_test`) or
    the paired t-test. The m = k(k-1)/2 p-values are then adjusted together:

    - Holm (1979), controlling the family-wise error rate: with the p-values sorted,
      :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1)\,p_{(j)})`;
    - Benjamini–Hochberg (1995), controlling the false discovery rate:
      :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m\,p_{(j)} / j)`;
    - ``"none"``: :math:`\tilde p = p`.

    A pair is significant when :math:`\tilde p \le \alpha`.

    Parameters
    ----------
    values : Mapping[str, array_like of float]
        Per-query values of each system (at least two systems), all over the same queries in
        the same order.
    test : {"randomization", "t"}
    correction : {"holm", "bh", "none"}
    alpha : float, default 0.05
    confidence : float, default 0.95
        Of the intervals of the differences.
    n_resamples : int, default 10_000
        Of each randomization test.
    rng : numpy.random.Generator, int or None
        Shared by the randomization tests, in pair order; None draws fresh entropy.

    Returns
    -------
    RunComparison

    Raises
    ------
    ParameterError
        On fewer than two systems, names that are not strings, systems of different lengths.

    Warns
    -----
    EvalValidityWarning
        Once per pair whose differences are all equal (e.g. a system compared with itself).

    Examples
    --------
    >>> runs = {"bm25": [0.2, 0.3, 0.4], "dense": [0.5, 0.7, 0.9], "noise": [0.0, 0.1, 0.1]}
    >>> result = compare_runs(runs, test="t")
    >>> [(r.system_a, r.system_b, round(r.difference, 4)) for r in result.rows]
    [('bm25', 'dense', -0.4), ('bm25', 'noise', 0.2333), ('dense', 'noise', 0.6333)]
    >>> round(result.pair("bm25", "dense").cohens_dz, 12)
    -4.0
    """
    func = "compare_runs"
    if not isinstance(values, Mapping):
        raise ParameterError(
            f"The 'values' parameter of {func} must be a mapping from system names to per-query "
            f"values. Got {type(values).__name__} instead."
        )
    if len(values) < 2:
        raise ParameterError(
            f"The 'values' parameter of {func} must hold at least two systems. "
            f"Got {len(values)} instead."
        )
    names: list[str] = []
    arrays: list[FloatArray] = []
    for name, column in values.items():
        if not isinstance(name, str):
            raise ParameterError(
                f"The system names given to {func} must be str. Got {_shown(name)} instead."
            )
        names.append(name)
        arrays.append(_finite_values(column, f"values[{name!r}]", func))
    for name, array in zip(names[1:], arrays[1:], strict=True):
        if array.size != arrays[0].size:
            raise ParameterError(
                f"Every system given to {func} must hold one value per query for the same "
                f"queries. Got {arrays[0].size} values for {names[0]!r} and {array.size} for "
                f"{name!r} instead."
            )
    test = _choice(test, _TESTS, "test", func)
    correction = _choice(correction, _CORRECTIONS, "correction", func)
    alpha = _open_unit(alpha, "alpha", func)
    confidence = _open_unit(confidence, "confidence", func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)

    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    sizes: list[EffectSize] = []
    p_values = np.empty(len(pairs))
    for index, (i, j) in enumerate(pairs):
        differences = arrays[i] - arrays[j]
        if np.ptp(differences) == 0.0:
            warnings.warn(
                f"{func}: the differences between {names[i]!r} and {names[j]!r} are all equal; "
                "their interval has zero width.",
                EvalValidityWarning,
                stacklevel=2,
            )
        sizes.append(_effect_size(differences, confidence))
        if test == "randomization":
            p_values[index] = _sign_flip_p_value(differences, n_resamples, generator)[0]
        else:
            p_values[index] = _t_test_p_value(differences)
    if correction == "holm":
        adjusted = _holm(p_values)
    elif correction == "bh":
        adjusted = _benjamini_hochberg(p_values)
    else:
        adjusted = p_values.copy()
    rows = tuple(
        PairComparison(
            system_a=names[i],
            system_b=names[j],
            difference=size.mean_difference,
            low=size.interval.low,
            high=size.interval.high,
            p_value=float(p),
            adjusted_p_value=float(q),
            cohens_dz=size.cohens_dz,
            significant=bool(q <= alpha),
        )
        for (i, j), size, p, q in zip(pairs, sizes, p_values, adjusted, strict=True)
    )
    return RunComparison(rows, test, correction, alpha, confidence, arrays[0].size)


def min_detectable_difference(
    variance: float,
    n_queries: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    r"""Smallest true mean difference a two-sided paired t-test detects with the given power.

    With n queries, per-query variance :math:`\sigma^2` of the differences and
    :math:`t_c = t_{1-\alpha/2,\,n-1}`, the power at a true difference :math:`\delta` is

    .. math:: 1 - \beta(\delta) = P(T' > t_c) + P(T' < -t_c), \qquad
              T' \sim t'_{n-1}(\lambda),\ \lambda = \delta \sqrt n / \sigma,

    a noncentral t (``scipy.stats.nct``). The function solves :math:`1 - \beta(\delta) =`
    ``power`` for :math:`\delta` (Brent's method on λ). The normal approximation
    :math:`\sigma (z_{1-\alpha/2} + z_{\text{power}}) / \sqrt n` is smaller, noticeably so for
    few queries. Assumes the per-query differences are roughly normal and independent.

    Parameters
    ----------
    variance : float
        Per-query variance of the paired differences (pass ``std ** 2`` for a standard
        deviation), > 0. Estimate it from a pilot comparison (e.g. the variance of ``a - b``)
        or, for a noise run against its floor, from ``Floor.variance``.
    n_queries : int
        Number of queries, >= 2.
    alpha : float, default 0.05
        Two-sided significance level, in (0, 1).
    power : float, default 0.8
        Target power, in (alpha, 1).

    Returns
    -------
    float
        The minimum detectable difference, in the metric's units.

    Raises
    ------
    ParameterError
        When an argument is outside its domain.

    Examples
    --------
    A paired t-test on 34 queries detects a difference of half a standard deviation with
    power 0.8 (G*Power gives n = 34 for d_z = 0.5):

    >>> round(min_detectable_difference(1.0, 34), 4)
    0.495
    >>> round(min_detectable_difference(0.04, 100, alpha=0.05, power=0.8), 4)
    0.0566
    """
    func = "min_detectable_difference"
    variance = _positive(variance, "variance", func)
    n_queries = _int_at_least(n_queries, 2, "n_queries", func)
    alpha = _open_unit(alpha, "alpha", func)
    power = _power_target(power, alpha, func)
    return _min_detectable_difference(math.sqrt(variance), n_queries, alpha, power)


def _power_target(power: object, alpha: float, func: str) -> float:
    if not _is_real(power) or not alpha < float(power) < 1.0:
        raise ParameterError(
            f"The 'power' parameter of {func} must be a float in (alpha, 1) = ({alpha:g}, 1). "
            f"Got {_shown(power)} instead."
        )
    return float(power)


def _min_detectable_difference(std: float, n: float, alpha: float, power: float) -> float:
    """The difference, in units of ``std``, detected with ``power`` by ``n`` (effective) queries."""

    def shortfall(effect: float) -> float:
        return float(_paired_t_power(effect, n, alpha)) - power

    # Power is α at effect 0 and rises monotonically towards 1; widen until it passes.
    high = (float(special.ndtri(1.0 - alpha / 2.0)) + float(special.ndtri(power))) / math.sqrt(n)
    high = 2.0 * high + 1.0
    while shortfall(high) < 0.0:
        high *= 2.0
    effect = _brentq(shortfall, 0.0, high, xtol=1e-14, rtol=1e-12)
    return float(effect) * std


def _brentq(f: Callable[[float], float], a: float, b: float, *, xtol: float, rtol: float) -> float:
    """:func:`scipy.optimize.brentq`'s root of ``f`` in [a, b], without scipy.optimize's import.

    Importing :mod:`scipy.optimize` loads its linear programming, global optimisers and
    sparse linear algebra (0.4 to 0.7 s of CPU, most of a check's statistics); its root
    finder is the compiled module ``scipy.optimize._zeros``, loaded here on its own: the very
    code ``brentq`` runs, so the very same root. Where scipy lays its files out otherwise,
    ``brentq`` itself.

    Examples
    --------
    >>> round(_brentq(lambda x: x * x - 2.0, 0.0, 2.0, xtol=1e-14, rtol=1e-12), 12)
    1.414213562373
    """

    def checked(x: float) -> float:  # as brentq does: a NaN stops the search
        value = f(x)
        if math.isnan(value):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return value

    zeros = _zeros_module()
    if zeros is None:
        from scipy import optimize

        return float(optimize.brentq(f, a, b, xtol=xtol, rtol=rtol))
    # brentq's defaults: 100 iterations, no extra arguments, a RuntimeError if unconverged
    return float(zeros._brentq(checked, a, b, xtol, rtol, 100, (), False, True))


def _zeros_module() -> Any:
    """The compiled root finders of scipy (``scipy.optimize._zeros``), or None if not found."""
    import sys

    loaded = sys.modules.get("scipy.optimize._zeros")
    if loaded is not None:
        return loaded
    import importlib.util

    path = special.compiled_file("optimize", "_zeros")
    if path is None:
        return None
    try:
        spec = importlib.util.spec_from_file_location("scipy.optimize._zeros", path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return module if hasattr(module, "_brentq") else None


def topic_set_size(
    delta: float,
    variance: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    r"""Count the queries a paired t-test needs to detect a difference (Sakai 2016).

    The smallest :math:`n \ge 2` with

    .. math:: P(|T'| > t_{1-\alpha/2,\,n-1}) \ge \text{power}, \qquad
              T' \sim t'_{n-1}(\delta \sqrt n / \sigma),

    the exact noncentral-t power of :func:`min_detectable_difference`. Sakai's design starts
    from the normal approximation :math:`n_0 = \lceil (z_{1-\alpha/2} + z_{\text{power}})^2
    \sigma^2 / \delta^2 \rceil` and iterates with the noncentral t; here the power, which
    grows with n, is bracketed from :math:`n_0` and the smallest sufficient n found by
    bisection. The answer is :math:`n_0`, or a few queries more.

    Parameters
    ----------
    delta : float
        Smallest true mean difference worth detecting, > 0, in the metric's units.
    variance : float
        Per-query variance of the paired differences, > 0.
    alpha : float, default 0.05
        Two-sided significance level.
    power : float, default 0.8
        Target power, in (alpha, 1).

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        When an argument is outside its domain, or more than 10**12 queries would be needed.

    Examples
    --------
    G*Power's paired-t sample sizes for d_z = 0.5 and 0.8 (α = 0.05, power 0.8) are 34 and 15:

    >>> topic_set_size(0.5, 1.0), topic_set_size(0.8, 1.0)
    (34, 15)
    >>> topic_set_size(0.05, 0.04)
    128
    """
    func = "topic_set_size"
    delta = _positive(delta, "delta", func)
    variance = _positive(variance, "variance", func)
    alpha = _open_unit(alpha, "alpha", func)
    power = _power_target(power, alpha, func)
    return _topic_set_size(delta / math.sqrt(variance), alpha, power)


_MAX_TOPICS: Final = 10**12


def _topic_set_size(effect: float, alpha: float, power: float) -> int:
    normal = (float(special.ndtri(1.0 - alpha / 2.0)) + float(special.ndtri(power))) / effect
    high = max(2, math.ceil(normal**2))
    low = 1  # power is undefined at n = 1: treat it as insufficient
    while high > _MAX_TOPICS or float(_paired_t_power(effect, high, alpha)) < power:
        if high > _MAX_TOPICS:
            raise ParameterError(
                f"topic_set_size: detecting a difference of {effect:g} standard deviations "
                f"needs more than {_MAX_TOPICS:g} queries."
            )
        low = high
        high *= 2
    return _smallest_sufficient(
        low, high, lambda n: float(_paired_t_power(effect, n, alpha)) >= power
    )


def _smallest_sufficient(low: int, high: int, enough: Callable[[int], bool]) -> int:
    """The smallest n in (low, high] with ``enough(n)``, by bisection (``enough`` rises with n).

    Needs ``enough(high)`` and not ``enough(low)`` (or ``low = 1``); n = 1 never suffices.

    Examples
    --------
    >>> _smallest_sufficient(1, 64, lambda n: n * n >= 40)
    7
    """
    while high - low > 1:
        middle = (low + high) // 2
        if middle >= 2 and enough(middle):
            high = middle
        else:
            low = middle
    return high
