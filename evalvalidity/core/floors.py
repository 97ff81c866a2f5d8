r"""Exact noise floors: what a uniformly random order of the pool scores, per query.

A query's pool holds ``N`` items (in the unit the scorer ranks), ``G`` of them gold (relevant at
the metric's threshold); the query has ``R >= G`` judged relevant items in all, some possibly
outside the pool. A random ranker puts the pool in a uniformly random order (ties broken
uniformly), and the metric is computed with trec_eval's semantics. :func:`noise_floor` returns,
per query, the exact expected value and variance of the metric under that order, and the
ceiling: the best value any order of the pool can reach.

Every family has a closed form or an exact short sum; nothing is sampled:

=============  ==============================================================================
``rr@k``       the negative-hypergeometric position of the first gold item; E and E[RR²] by a
               three-term recurrence in G (O(G) per distinct (N, G)), or by the direct sum over
               the first min(k, N−G+1) positions where that is shorter
``hit@k``      1 − C(N−K, G)/C(N, G)
``p@k``,       the hypergeometric number of gold items in the top K = min(k, N) (R-precision:
``r@k``,       the top min(R, N)), divided by k, R and R
``rprec``
``ap``,        E and E[(R·AP)²] as linear combinations of the joint inclusion probabilities
``ap@k``       G^(m)/N^(m), m = 1..4, whose coefficients are closed forms in K, H_K and H2_K
``ndcg@k``,    DCG is a linear permutation statistic Σ_i d_i g_π(i): its mean and variance are
``ndcg_exp@k`` closed forms in the discount sums and the gains' first two moments
=============  ==============================================================================

:func:`infer_pool_size` and :func:`infer_benchmark_pool_size` run the other way: from a measured
noise score to the pool size whose exact floor equals it, by root-finding on the exact formula
(never the G·H_k/N approximation, which is exact only for G = 1).

The mathematics and its sources are in docs/math.md (Floors, Inversion); every formula is checked against
the enumeration of every permutation for N <= 7, Monte Carlo for larger N, and a table of
exact values computed in rational and 60-digit decimal arithmetic (``tests/reference``).

Cost: RR and Hit work once per distinct (N, G) pair, in O(min(G, k)) vectorised steps; every
other family is O(1) per query. A million queries with N up to 10^7 and G up to 50 take well
under a second (``bench/floors.py``).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from evalvalidity.core._special import digamma, ndtri
from evalvalidity.core._validate import _brief, _show, _weighted_bincount
from evalvalidity.core.metrics import FAMILY_SPECS, Metric, parse_metric
from evalvalidity.core.types import BoolArray, FloatArray, IndexArray, IntArray
from evalvalidity.errors import EvalValidityWarning, ParameterError

_ArrayT = TypeVar("_ArrayT", FloatArray, IntArray)

__all__ = [
    "INVERTIBLE_FAMILIES",
    "Floor",
    "InferredPoolSize",
    "infer_benchmark_pool_size",
    "infer_pool_size",
    "noise_floor",
]

#: Families whose floor depends only on (N, G, R, k), so the pool size can be inferred
#: (``FamilySpec.invertible`` in the metric registry).
INVERTIBLE_FAMILIES: tuple[str, ...] = tuple(f for f, s in FAMILY_SPECS.items() if s.invertible)

# Harmonic numbers and discount sums up to this index come from tables built with compensated
# summation; beyond it from digamma, an asymptotic series, or Euler–Maclaurin with quadrature,
# all accurate to a few units in the last place.
_TABLE_SIZE = 4096
# The largest pool size the root-finder looks for; a smaller measured value gives inf.
_LARGEST_POOL = 1e300


@dataclass(frozen=True)
class Floor:
    """Per-query floor statistics of one metric under a uniformly random order of the pool.

    Attributes
    ----------
    metric : Metric
    expected : numpy.ndarray
        E[metric], float64, one value per query.
    variance : numpy.ndarray
        Var[metric] per query.
    ceiling : numpy.ndarray
        The best value achievable per query given which gold items are in the pool.
    """

    metric: Metric
    expected: FloatArray
    variance: FloatArray
    ceiling: FloatArray

    @property
    def std(self) -> FloatArray:
        """Standard deviation per query."""
        return np.sqrt(self.variance)

    @property
    def headroom(self) -> FloatArray:
        """Headroom per query: ceiling minus expected."""
        return self.ceiling - self.expected


@dataclass(frozen=True)
class InferredPoolSize:
    """Pool sizes whose exact floor equals a measured noise score.

    Attributes
    ----------
    metric : Metric
    estimate : numpy.ndarray
        The pool size N (a real number: the floor is extended continuously between integers)
        with E(N) equal to the measured value; one value per query, or a single value for a
        benchmark. ``inf`` where the measured value is <= 0 (only an infinite pool scores 0).
    low, high : numpy.ndarray
        The pool sizes whose floors equal the upper and the lower end of the measured value's
        normal interval (``measured ± z·std_error``); equal to ``estimate`` without a standard
        error. ``high`` is ``inf`` where the lower end is <= 0.
    saturated : numpy.ndarray
        True where the measured value reaches the floor of the smallest pool that holds the gold
        items (its largest possible floor): the pool size is then not identified, and
        ``estimate`` is the largest pool whose floor still equals that maximum (``G`` for RR and
        AP, ``k + G − 1`` for Hit@k, ``max(k, G)`` for P@k and R@k, ``R`` for R-precision), an
        upper bound rather than an estimate. ``low`` follows the same rule.
    confidence : float
        The coverage of the interval ``[low, high]``.
    """

    metric: Metric
    estimate: FloatArray
    low: FloatArray
    high: FloatArray
    saturated: BoolArray
    confidence: float


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _counts(value: ArrayLike, name: str, func: str, minimum: int) -> tuple[IntArray, bool]:
    """Return ``value`` as a 1-D int64 array (and whether it was a scalar), or raise.

    Whole numbers given as floats (``8.0``) are accepted; fractions, NaN, infinities, booleans
    and text are not.
    """
    try:
        array = np.atleast_1d(np.asarray(value))
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ParameterError(
            f"The {name!r} parameter of {func} must be a scalar or a 1-D sequence with one value"
            f" per query. Got {_brief(value)} instead."
        ) from exc
    if array.ndim != 1:
        raise ParameterError(
            f"The {name!r} parameter of {func} must be a scalar or a 1-D sequence with one value"
            f" per query. Got an array of shape {array.shape} instead."
        )
    scalar = np.ndim(value) == 0
    where = "" if scalar else " for every query"
    message = f"The {name!r} parameter of {func} must be an int >= {minimum}{where}."
    kind = array.dtype.kind
    if kind in "iu":
        bad = array < minimum
    elif kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(array) | (array != np.floor(array)) | (array < minimum)
    else:
        bad = np.ones(array.shape, dtype=bool)
    if bad.any():
        index = int(np.argmax(bad))
        got = _show(array[index]) if scalar else f"{_show(array[index])} at index {index}"
        raise ParameterError(f"{message} Got {got} instead.")
    return array.astype(np.int64), scalar


def _broadcast(func: str, arrays: Mapping[str, tuple[FloatArray | IntArray, bool]]) -> int:
    """Return the number of queries Q shared by the non-scalar arguments, or raise."""
    lengths = {name: len(a) for name, (a, scalar) in arrays.items() if not scalar}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ParameterError(
            f"The per-query parameters of {func} must be scalars or sequences of one common"
            f" length (one value per query). Got lengths {detail} instead."
        )
    return next(iter(lengths.values())) if lengths else 1


def _spread(array: _ArrayT, q: int) -> _ArrayT:
    return np.broadcast_to(array, (q,)) if len(array) == 1 and q != 1 else array


def _where(index: int, scalar: bool) -> str:
    return "" if scalar else f" at index {index}"


def _check_gold(func: str, n: IntArray, g: IntArray, scalar: bool) -> None:
    bad = g > n
    if bad.any():
        i = int(np.argmax(bad))
        raise ParameterError(
            f"The 'gold' parameter of {func} counts relevant items inside the pool, so it must"
            f" be <= pool_size. Got gold={g[i]} > pool_size={n[i]}{_where(i, scalar)} instead."
        )


def _check_judged(func: str, g: IntArray, r: IntArray, scalar: bool) -> None:
    bad = r < g
    if bad.any():
        i = int(np.argmax(bad))
        raise ParameterError(
            f"The 'judged' parameter of {func} counts every judged relevant item of the query,"
            f" so it must be >= gold. Got judged={r[i]} < gold={g[i]}{_where(i, scalar)}"
            " instead."
        )


@dataclass(frozen=True)
class _Ragged:
    """Per-query lists of grades, concatenated; query q holds ``lengths[q]`` of them."""

    values: FloatArray
    lengths: IntArray
    scalar: bool  # one list given for every query

    def spread(self, q: int) -> _Ragged:
        if not self.scalar or q == 1:
            return self
        return _Ragged(np.tile(self.values, q), np.full(q, len(self.values)), False)

    @property
    def query(self) -> IndexArray:
        return np.repeat(np.arange(len(self.lengths)), self.lengths)


def _grades(value: object, name: str, func: str) -> _Ragged:
    """Read per-query grade lists (or one flat list for every query) as a :class:`_Ragged`."""

    def shape_error() -> ParameterError:
        return ParameterError(
            f"The {name!r} parameter of {func} must be a sequence with one list of grades per"
            f" query (or a single list used for every query). Got {_brief(value)} instead."
        )

    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise shape_error()
    items = list(value)
    # one flat list of grades when its first entry is a number (a mixture fails below)
    scalar = not items or not isinstance(items[0], Iterable)
    per_query: list[Any] = [items] if scalar else items
    try:
        lengths = np.fromiter(map(len, per_query), dtype=np.int64, count=len(per_query))
        values = np.fromiter(
            itertools.chain.from_iterable(per_query), dtype=np.float64, count=int(lengths.sum())
        )
    except (TypeError, ValueError) as exc:
        raise shape_error() from exc
    bad = ~np.isfinite(values) | (values != np.floor(values)) | (values < 1)
    if bad.any():
        position = int(np.argmax(bad))
        query = int(np.searchsorted(np.cumsum(lengths), position, side="right"))
        where = "" if scalar else f" for the query at index {query}"
        raise ParameterError(
            f"The {name!r} parameter of {func} must hold the grades (ints >= 1) of judged"
            f" relevant items. Got {_show(values[position])}{where} instead."
        )
    return _Ragged(values, lengths, scalar)


def _zero_gold_warning(g: IntArray, func: str) -> None:
    missing = int(np.count_nonzero(g == 0))
    if missing:
        warnings.warn(
            f"{missing} of {len(g)} queries have no gold item in the pool (gold = 0): {func}"
            " returns 0 for their floor, variance and ceiling.",
            EvalValidityWarning,
            stacklevel=3,
        )


# --------------------------------------------------------------------------------------------
# Harmonic numbers and discount sums
# --------------------------------------------------------------------------------------------


def _compensated_prefix_sums(terms: Sequence[float]) -> FloatArray:
    """Prefix sums ``[0, t1, t1 + t2, ...]`` by Neumaier summation (error ~1 ulp)."""
    out = [0.0]
    total = 0.0
    carry = 0.0
    for term in terms:
        new = total + term
        if abs(total) >= abs(term):
            carry += (total - new) + term
        else:
            carry += (term - new) + total
        total = new
        out.append(total + carry)
    return np.array(out)


@functools.cache
def _tables() -> dict[str, FloatArray]:
    """H_n, H2_n, D_n = Σ 1/log2(i+1), D2_n = Σ 1/log2(i+1)² for n = 0..4096, read-only."""
    i = np.arange(1, _TABLE_SIZE + 1, dtype=np.float64)
    discount = 1.0 / np.log2(i + 1.0)
    tables = {
        "H": _compensated_prefix_sums((1.0 / i).tolist()),
        "H2": _compensated_prefix_sums((1.0 / (i * i)).tolist()),
        "D": _compensated_prefix_sums(discount.tolist()),
        "D2": _compensated_prefix_sums((discount * discount).tolist()),
        "discount": np.concatenate([[0.0], discount]),
    }
    for table in tables.values():
        table.flags.writeable = False
    return tables


def _harmonic(n: FloatArray | IntArray) -> FloatArray:
    """H_n for real n >= 0 (exact table for integers <= 4096, digamma otherwise)."""
    n = np.asarray(n, dtype=np.float64)
    table = _tables()["H"]
    small = (n <= _TABLE_SIZE) & (n == np.floor(n))
    out = np.empty_like(n)
    out[small] = table[n[small].astype(np.int64)]
    out[~small] = digamma(n[~small] + 1.0) + np.euler_gamma
    return out


def _harmonic2(n: FloatArray | IntArray) -> FloatArray:
    r"""H2_n = Σ_{i<=n} 1/i² for integers n >= 0.

    Beyond the table, :math:`H2_n = \pi^2/6 - \psi_1(n+1)` with the asymptotic series
    :math:`\psi_1(x) = 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7) - 1/(30x^9)`, whose
    truncation error at x > 4096 is below 1e-40.
    """
    n = np.asarray(n, dtype=np.float64)
    table = _tables()["H2"]
    small = n <= _TABLE_SIZE
    out = np.empty_like(n)
    out[small] = table[n[small].astype(np.int64)]
    x = n[~small] + 1.0
    u = 1.0 / x
    u2 = u * u
    trigamma = u + u2 * (0.5 + u * (1 / 6 + u2 * (-1 / 30 + u2 * (1 / 42 - u2 / 30))))
    out[~small] = np.pi**2 / 6 - trigamma
    return out


@functools.cache
def _gauss_rule() -> tuple[FloatArray, FloatArray]:
    """The 20-point Gauss–Legendre nodes and weights on [-1, 1] (numpy.polynomial: on first use)."""
    return np.polynomial.legendre.leggauss(20)


@functools.cache
def _discount_panels(power: int, panels: int) -> FloatArray:
    r"""∫ (ln 2/ln t)^power dt from t = 4097 to 4097·2^j, for j = 0..panels (cumulative)."""
    lower = np.log(_TABLE_SIZE + 1.0) + np.log(2.0) * np.arange(panels)
    pieces = _log_scale_integral(lower, lower + np.log(2.0), power)
    out = np.concatenate([[0.0], np.cumsum(pieces)])
    out.flags.writeable = False
    return out


def _log_scale_integral(low: FloatArray, high: FloatArray, power: int) -> FloatArray:
    r"""∫ (ln 2/u)^power e^u du over [low, high] (t = e^u), by 20-point Gauss–Legendre.

    Intervals are at most ln 2 long, where e^u is a polynomial of degree 39 to far below
    rounding, so the rule is exact to float precision; the integrand is positive (no
    cancellation).
    """
    half = (high - low) / 2
    middle = low + half
    out = np.empty(len(low))
    nodes, weights = _gauss_rule()
    block = 1 << 14  # rows at a time: the (block, 20) temporaries stay in cache
    for first in range(0, len(low), block):
        rows = slice(first, first + block)
        u = np.multiply.outer(half[rows], nodes)
        u += middle[rows, None]
        values = np.log(2.0) / u
        if power == 2:
            values *= values
        values *= np.exp(u, out=u)
        out[rows] = half[rows] * (values @ weights)
    return out


def _discount_sums(n: FloatArray | IntArray) -> tuple[FloatArray, FloatArray]:
    r"""D_n = Σ_{i<=n} 1/log2(i+1) and D2_n = Σ_{i<=n} 1/log2(i+1)² for integers n >= 0.

    Beyond the table, Euler–Maclaurin from a = 4096 with f(x) = (ln 2/ln(x+1))^p:

    .. math::

        \sum_{i=a}^{b} f(i) = \int_a^b f + \frac{f(a) + f(b)}{2} + \frac{f'(b) - f'(a)}{12}
            - \frac{f^{(3)}(b) - f^{(3)}(a)}{720} + R, \qquad |R| < 10^{-18},

    the integral taken on u = ln(x+1) over doubling panels (cumulative, shared) and a last
    partial panel, each by 20-point Gauss–Legendre: positive terms only, unlike li(t) − t/ln t.
    """
    n = np.asarray(n, dtype=np.float64)
    tables = _tables()
    small = n <= _TABLE_SIZE
    d = np.empty_like(n)
    d2 = np.empty_like(n)
    index = n[small].astype(np.int64)
    d[small] = tables["D"][index]
    d2[small] = tables["D2"][index]
    if small.all():
        return d, d2
    big, inverse = np.unique(n[~small], return_inverse=True)
    a = float(_TABLE_SIZE)
    ln2 = np.log(2.0)
    start = np.log(a + 1.0)
    top = np.log(big + 1.0)
    panel = np.floor((top - start) / ln2).astype(np.int64)
    panel_start = start + ln2 * panel

    def euler_maclaurin(power: int) -> FloatArray:
        def f(x: FloatArray | float) -> FloatArray | float:
            value: FloatArray | float = (ln2 / np.log(np.add(x, 1.0))) ** power
            return value

        def f1(x: FloatArray | float) -> FloatArray | float:  # first derivative
            t = np.add(x, 1.0)
            value: FloatArray | float = -power * ln2**power / (np.log(t) ** (power + 1) * t)
            return value

        def f3(x: FloatArray | float) -> FloatArray | float:  # third derivative
            t = np.add(x, 1.0)
            inv = 1.0 / np.log(t)
            if power == 1:
                poly = 6 * inv**4 + 6 * inv**3 + 2 * inv**2
            else:
                poly = 24 * inv**5 + 18 * inv**4 + 4 * inv**3
            value: FloatArray | float = -(ln2**power) * poly / t**3
            return value

        whole = _discount_panels(power, int(panel.max()) + 1)[panel]
        integral = whole + _log_scale_integral(panel_start, top, power)
        sums: FloatArray = (
            integral + (f(a) + f(big)) / 2 + (f1(big) - f1(a)) / 12 - (f3(big) - f3(a)) / 720
        )
        return sums

    # Σ_{i <= a-1} from the table, then Σ_{i=a}^{n} by Euler–Maclaurin
    d[~small] = (tables["D"][_TABLE_SIZE - 1] + euler_maclaurin(1))[inverse]
    d2[~small] = (tables["D2"][_TABLE_SIZE - 1] + euler_maclaurin(2))[inverse]
    return d, d2


# --------------------------------------------------------------------------------------------
# Kernels: vectorised, no validation; all arrays float64 with G >= 1
# --------------------------------------------------------------------------------------------


def _unique_pairs(a: IntArray, b: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Distinct (a, b) pairs of non-negative ints and the inverse index into them."""
    if len(a) == 0:
        return a, b, np.zeros(0, dtype=np.int64)
    width = int(b.max()) + 1
    if int(a.max()) < (2**62) // width:
        key = a * width + b
        order = np.argsort(key)
        sorted_key = key[order]
        first = np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]])
        unique_key = sorted_key[first]
        inverse = np.empty(len(a), dtype=np.int64)
        inverse[order] = np.cumsum(first) - 1
        return unique_key // width, unique_key % width, inverse
    pairs, inverse = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    return pairs[:, 0], pairs[:, 1], inverse.reshape(-1)


def _cutoff_value(k: int | None) -> float:
    """Return the cutoff as a float, infinite for a metric over the whole ranking."""
    return np.inf if k is None else float(k)


def _cutoff(k: int | None, n: IntArray) -> FloatArray:
    """K = min(k, N): a cutoff beyond the pool sees the whole pool."""
    return n.astype(np.float64) if k is None else np.minimum(n, k).astype(np.float64)


def _order_descending(values: FloatArray | IntArray) -> IndexArray:
    """A stable order of ``values`` (non-negative, integral) from largest to smallest.

    Small ranges (gold counts, supports) go through numpy's O(n) radix sort on int16.
    """
    if len(values) and values.max() < 2**15:
        return np.argsort((-values).astype(np.int16), kind="stable")
    return np.argsort(-values, kind="stable")


def _active_counts(sorted_desc: FloatArray | IntArray, steps: int) -> IndexArray:
    """For a descending array s, how many entries exceed t, for t = 0..steps."""
    return np.searchsorted(-sorted_desc, -np.arange(steps + 1), side="left")


def _rr_moments(n: IntArray, g: IntArray, k: int | None) -> tuple[FloatArray, FloatArray]:
    r"""E[RR@k] and Var[RR@k] for pool sizes ``n`` and gold counts ``g >= 1`` (one per pair).

    The first gold item is at position r with probability
    :math:`p_r = \binom{N-r}{G-1} / \binom{N}{G}`. With :math:`E_G = \sum_{r \le K} p_r / r`,
    :math:`F_G = \sum_{r \le K} p_r / r^2` and :math:`h_G = 1 - \binom{N-K}{G}/\binom{N}{G}`
    (Hit@K), the identities :math:`(j+1)\binom{m}{j+1} = (m-j)\binom{m}{j}` and
    :math:`\sum_{r=1}^{K} \binom{N-r}{j} = \binom{N}{j+1} - \binom{N-K}{j+1}` give

    .. math::

        E_{G+1} = \frac{G+1}{G(N-G)}\left[(N-G+1) E_G - h_G\right], \qquad
        F_{G+1} = \frac{G+1}{G(N-G)}\left[(N-G+1) F_G - E_G\right],

    from :math:`E_1 = H_K/N`, :math:`F_1 = H2_K/N`. Against 60-digit references (N up to
    10^7, G up to 50) E is within 5e-15 and Var within 5e-14, relative. Where the support
    :math:`L = \min(K, N-G+1)` is no longer than G (nearly all of the pool is gold, where
    :math:`F - E^2` would cancel) the sum over r is taken directly, with a weighted Welford
    update for the variance.
    """
    K = _cutoff(k, n)
    nf = n.astype(np.float64)
    gf = g.astype(np.float64)
    support = np.minimum(K, nf - gf + 1.0)
    direct = support <= gf
    expected = np.empty(len(n))
    variance = np.empty(len(n))
    if direct.any():
        e, v = _rr_direct(nf[direct], gf[direct], support[direct].astype(np.int64))
        expected[direct] = e
        variance[direct] = v
    rec = ~direct
    if rec.any():
        e, v = _rr_recurrence(nf[rec], gf[rec].astype(np.int64), K[rec])
        expected[rec] = e
        variance[rec] = v
    return expected, variance


def _rr_direct(n: FloatArray, g: FloatArray, support: IntArray) -> tuple[FloatArray, FloatArray]:
    order = _order_descending(support)
    n, g, support = n[order], g[order], support[order]
    size = len(n)
    survive = np.ones(size)  # P(no gold in the first r - 1 positions)
    weight = np.zeros(size)
    mean = np.zeros(size)
    spread = np.zeros(size)
    active = _active_counts(support, int(support[0]))
    for r in range(1, int(support[0]) + 1):
        a = active[r - 1]
        sl = slice(0, a)
        p = survive[sl] * g[sl] / (n[sl] - r + 1)
        x = 1.0 / r
        weight_new = weight[sl] + p
        delta = x - mean[sl]
        mean[sl] += p * delta / weight_new
        spread[sl] += p * delta * (x - mean[sl])
        weight[sl] = weight_new
        survive[sl] *= (n[sl] - g[sl] - r + 1) / (n[sl] - r + 1)
    # Merge in the remaining mass (no gold in the top K, RR = 0) by the parallel-axis rule:
    # every term is positive, so a tiny floor keeps its relative precision.
    total = weight + survive
    expected = np.empty(size)
    variance = np.empty(size)
    expected[order] = weight * mean / total
    variance[order] = (spread + weight * survive / total * mean * mean) / total
    return expected, variance


def _rr_recurrence(n: FloatArray, g: IntArray, K: FloatArray) -> tuple[FloatArray, FloatArray]:
    order = _order_descending(g)
    n, g, K = n[order], g[order], K[order]
    e = _harmonic(K) / n
    f = _harmonic2(K) / n
    whole = bool((K >= n).all())  # no cutoff inside any pool: h_G = 1 throughout
    # log of C(N-K, j)/C(N, j) = Σ_{i<j} log(1 - K/(N-i)), here for j = 1
    with np.errstate(divide="ignore"):
        log_miss = np.log1p(-np.minimum(K / n, 1.0))
    active = _active_counts(g, int(g[0]))
    buffers = np.empty((3, active[1] if len(active) > 1 else 0))
    for step in range(1, int(g[0])):
        a = active[step]
        ns, es, fs = n[:a], e[:a], f[:a]
        rest, scale, work = buffers[0, :a], buffers[1, :a], buffers[2, :a]
        np.subtract(ns, step, out=rest)  # N - G
        np.multiply(rest, step, out=scale)
        np.divide(step + 1, scale, out=scale)  # (G + 1) / (G (N - G))
        if not whole:
            with np.errstate(divide="ignore"):
                np.expm1(log_miss[:a], out=work)  # -h_G
                np.divide(K[:a], rest, out=rest)
                np.minimum(rest, 1.0, out=rest)
                np.negative(rest, out=rest)
                log_miss[:a] += np.log1p(rest)
            np.subtract(ns, step - 1, out=rest)  # N - G + 1
        else:
            work.fill(-1.0)
            rest += 1.0
        # F first: it needs the old E
        np.multiply(rest, fs, out=fs)
        fs -= es
        fs *= scale
        np.multiply(rest, es, out=es)
        es += work
        es *= scale
    expected = np.empty(len(n))
    variance = np.empty(len(n))
    expected[order] = e
    variance[order] = np.maximum(f - e * e, 0.0)
    return expected, variance


def _log_miss(n: FloatArray, g: FloatArray, K: FloatArray) -> FloatArray:
    r"""Return log P(no gold in the top K) = log[C(N−G, K)/C(N, K)] = Σ_{i<K} log(1 − G/(N−i)).

    Summed over min(G, K) terms using the symmetry C(N−K, G)/C(N, G) = C(N−G, K)/C(N, K);
    ``-inf`` when N − G < K.
    """
    swap = g > K
    short = np.where(swap, K, g)  # number of factors
    long = np.where(swap, g, K)
    order = _order_descending(short)
    n_s, short_s, long_s = n[order], short[order], long[order]
    total = np.zeros(len(n))
    if len(n) == 0:
        return total
    active = _active_counts(short_s, int(short_s[0]))
    with np.errstate(divide="ignore"):
        for i in range(int(short_s[0])):
            sl = slice(0, active[i])
            total[sl] += np.log1p(-np.minimum(long_s[sl] / (n_s[sl] - i), 1.0))
    out = np.empty(len(n))
    out[order] = total
    return out


def _hypergeometric(
    n: FloatArray, g: FloatArray, depth: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Mean and variance of the number of gold items among the first ``depth`` positions."""
    p = g / n
    mean = depth * p
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(n > 1, depth * p * (1.0 - p) * (n - depth) / (n - 1.0), 0.0)
    return mean, np.maximum(variance, 0.0)


def _inclusion(n: FloatArray, g: FloatArray, m: int) -> FloatArray:
    """P(m given positions all hold gold) = G^(m)/N^(m) (falling factorials), 0 when G < m."""
    out = np.ones(len(n))
    for i in range(m):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = out * np.where(g > i, (g - i) / (n - i), 0.0)
    return out


def _ap_moments(
    n: IntArray, g: IntArray, r: IntArray, k: int | None
) -> tuple[FloatArray, FloatArray]:
    r"""E[AP@k] and Var[AP@k], trec_eval semantics (divided by R).

    With :math:`x_i` the indicator of gold at position i, :math:`R \cdot AP = Y =
    \sum_{j \le i \le K} x_i x_j / i`. Every product of indicators over m distinct positions
    has expectation :math:`p_m = G^{(m)}/N^{(m)}`, so :math:`E[Y] = H_K p_1 + (K - H_K) p_2`.
    The variance sums the covariances of the terms' products: a diagonal term (i = j, one
    position) or an off-diagonal one (j < i, two), whose union covers u distinct positions,
    has covariance :math:`\delta_{a b u} = p_u - p_a p_b`, and

    .. math::

        \mathrm{Var}[Y] = H2\,\delta_{111} + (H^2 - H2)\,\delta_{112}
            + 2 w_2 \delta_{122} + 2 (H(K - H) - w_2)\,\delta_{123}
            + (H - H2)\,\delta_{222} + w_3 \delta_{223} + w_4 \delta_{224},

    with :math:`H = H_K`, :math:`H2 = H2_K`, :math:`w_2 = H - H2 + (H^2 - H2)/2`,
    :math:`w_3 = 5K - 7H - 2H^2 + 4H2` and :math:`w_4 = (K - H)^2 - (H - H2) - w_3`. Each
    :math:`\delta` is a product with the factor B = N − G, for instance
    :math:`\delta_{224} = p_2 B (6(N + G - 1) - 4GN) / (N(N-1)(N-2)(N-3))`, so nothing
    cancels when nearly every item is gold (the plain :math:`E[Y^2] - E[Y]^2` loses every
    digit there: both are about :math:`K^2`, their difference about 1).
    """
    K = _cutoff(k, n)
    h = _harmonic(K)
    h2 = _harmonic2(K)
    nf = n.astype(np.float64)
    gf = g.astype(np.float64)
    b = nf - gf
    p1, p2 = _inclusion(nf, gf, 1), _inclusion(nf, gf, 2)
    first = h * p1 + (K - h) * p2
    with np.errstate(divide="ignore", invalid="ignore"):
        d111 = p1 * b / nf
        d112 = np.where(nf > 1, -gf * b / (nf * nf * (nf - 1.0)), -p1 * p1)
        d122 = p2 * b / nf
        d123 = np.where(gf >= 3, -2.0 * b * p2 / (nf * (nf - 2.0)), -p1 * p2)
        d222 = np.where(nf > 1, p2 * b * (nf + gf - 1.0) / (nf * (nf - 1.0)), 0.0)
        d223 = np.where(
            gf >= 3,
            p2 * b * ((gf - 2.0) * nf - 2.0 * gf + 2.0) / (nf * (nf - 1.0) * (nf - 2.0)),
            -p2 * p2,
        )
        d224 = np.where(
            gf >= 4,
            p2
            * b
            * (6.0 * (nf + gf - 1.0) - 4.0 * gf * nf)
            / (nf * (nf - 1.0) * (nf - 2.0) * (nf - 3.0)),
            -p2 * p2,
        )
    w2 = h - h2 + (h * h - h2) / 2
    w3 = 5 * K - 7 * h - 2 * h * h + 4 * h2
    w4 = (K - h) ** 2 - (h - h2) - w3
    variance = (
        h2 * d111
        + (h * h - h2) * d112
        + 2 * w2 * d122
        + 2 * (h * (K - h) - w2) * d123
        + (h - h2) * d222
        + w3 * d223
        + w4 * d224
    )
    rf = r.astype(np.float64)
    return first / rf, np.maximum(variance, 0.0) / (rf * rf)


def _dcg_moments(
    n: IntArray, sum_gain: FloatArray, sum_gain2: FloatArray, k: int | None
) -> tuple[FloatArray, FloatArray]:
    r"""Mean and variance of DCG@k = Σ_i d_i g_π(i) under a uniformly random permutation π.

    .. math::

        E = \bar g \sum_i d_i, \qquad
        \mathrm{Var} = \frac{1}{N-1} \sum_{i=1}^{N} (d_i - \bar d)^2 \sum_{j=1}^{N} (g_j - \bar g)^2

    over all N positions (:math:`d_i = 1/\log_2(i+1)` for i <= K, 0 beyond) and all N items
    (non-relevant ones with gain 0).
    """
    K = _cutoff(k, n)
    d, d2 = _discount_sums(K)
    nf = n.astype(np.float64)
    mean = sum_gain / nf * d
    with np.errstate(divide="ignore", invalid="ignore"):
        spread_d = np.maximum(d2 - d * d / nf, 0.0)
        spread_g = np.maximum(sum_gain2 - sum_gain * sum_gain / nf, 0.0)
        variance = np.where(nf > 1, spread_d * spread_g / (nf - 1.0), 0.0)
    return mean, variance


@dataclass(frozen=True)
class _SortedGrades:
    """A ragged grade list sorted by (query ascending, grade descending), with its runs."""

    grades: _Ragged
    order: IndexArray  # positions of the values in sorted order
    keys: IntArray  # sorted keys: query * width + (width - 1 - grade code)
    width: int

    @staticmethod
    def build(grades: _Ragged, codes: IntArray | IndexArray, width: int) -> _SortedGrades:
        keys = grades.query * width + (width - 1 - codes)
        order = np.argsort(keys)
        return _SortedGrades(grades, order, keys[order], width)

    def ideal_dcg(self, exponential: bool, k: int | None) -> FloatArray:
        """IDCG@k per query: the grades' gains sorted descending, discounted."""
        lengths = self.grades.lengths
        values = self.grades.values[self.order]
        gain = np.exp2(values) - 1.0 if exponential else values
        query = self.keys // self.width
        starts = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)[:-1]])
        rank = np.arange(len(gain)) - starts[query]  # 0-based rank within the query
        longest = int(lengths.max()) if len(lengths) else 0
        discount = _tables()["discount"]
        if longest > _TABLE_SIZE:
            discount = np.concatenate([[0.0], 1.0 / np.log2(np.arange(2, longest + 2.0))])
        weight = discount[rank + 1]
        if k is not None:
            weight = np.where(rank < k, weight, 0.0)
        return _weighted_bincount(query, gain * weight, len(lengths))

    def runs(self) -> tuple[IntArray, IndexArray]:
        """Distinct (query, grade) keys and how many items carry each."""
        if len(self.keys) == 0:
            return self.keys, np.zeros(0, np.int64)
        first = np.flatnonzero(np.concatenate([[True], self.keys[1:] != self.keys[:-1]]))
        return self.keys[first], np.diff(np.append(first, len(self.keys)))


def _sorted_grades(pool: _Ragged, judged: _Ragged) -> tuple[_SortedGrades, _SortedGrades]:
    """Sort both grade lists with one shared code per grade."""
    values = np.concatenate([pool.values, judged.values])
    top = int(values.max()) if len(values) else 0
    if top < 2**20 and (len(pool.lengths) + 1) * (top + 1) < 2**62:
        codes = values.astype(np.int64)  # the grades themselves
        width = top + 1
    else:
        distinct, codes = np.unique(values, return_inverse=True)
        width = len(distinct) + 1
    split = len(pool.values)
    return (
        _SortedGrades.build(pool, codes[:split], width),
        _SortedGrades.build(judged, codes[split:], width),
    )


def _check_sub_multiset(pool: _SortedGrades, judged: _SortedGrades, func: str) -> None:
    """Every query's in-pool grades must be among its judged grades (as a multiset)."""
    pool_unique, pool_count = pool.runs()
    judged_unique, judged_count = judged.runs()
    if len(judged_unique):
        position = np.minimum(np.searchsorted(judged_unique, pool_unique), len(judged_unique) - 1)
        matched = judged_unique[position] == pool_unique
        found = np.where(matched, judged_count[position], 0)
    else:
        found = np.zeros(len(pool_unique), np.int64)
    bad = found < pool_count
    if bad.any():
        query = int(pool_unique[np.argmax(bad)] // pool.width)

        def listed(grades: _Ragged) -> list[int]:
            starts = np.concatenate([[0], np.cumsum(grades.lengths)])
            return sorted(int(x) for x in grades.values[starts[query] : starts[query + 1]])

        raise ParameterError(
            f"The 'gains' parameter of {func} must list grades found among the query's"
            " 'judged_gains' (the gold items in the pool are judged items). Got gains"
            f" {listed(pool.grades)} and judged_gains {listed(judged.grades)} at index"
            f" {query} instead."
        )


# --------------------------------------------------------------------------------------------
# noise_floor
# --------------------------------------------------------------------------------------------


def noise_floor(
    metric: Metric | str,
    pool_size: ArrayLike,
    gold: ArrayLike,
    *,
    judged: ArrayLike | None = None,
    gains: Sequence[ArrayLike] | None = None,
    judged_gains: Sequence[ArrayLike] | None = None,
) -> Floor:
    r"""Exact expected value, variance and ceiling of a metric under a random order of the pool.

    Parameters
    ----------
    metric : Metric or str
        Any metric of :mod:`evalvalidity.core.metrics`, e.g. ``"mrr@10"``, ``"ap"``, ``"ndcg@10"``.
    pool_size : int or array-like of int
        N >= 1 per query: the items a random ranker orders, in the unit the scorer ranks.
    gold : int or array-like of int
        G per query, 0 <= G <= N: the items of the pool that are relevant at the metric's
        threshold.
    judged : int or array-like of int, optional
        R >= G per query: every judged relevant item of the query, inside the pool or not. It
        divides recall, AP and R-precision and sets R-precision's depth. Default: G.
    gains : sequence of sequences of int, optional
        nDCG only: per query, the grades (>= 1) of the G gold items in the pool; the metric's
        gain function (grade, or 2^grade − 1 for ``ndcg_exp``) is applied here. A single flat
        list is used for every query. Default: every gold item has grade 1.
    judged_gains : sequence of sequences of int, optional
        nDCG only: per query, the grades of every judged relevant item, for the ideal DCG.
        Default: ``gains`` (with ``gains`` omitted: ``judged`` items of grade 1).

    Returns
    -------
    Floor
        ``expected``, ``variance`` and ``ceiling``, float64 arrays with one value per query
        (length 1 when every argument is a scalar).

    Raises
    ------
    ParameterError
        When a count is not a whole number in its range (N < 1, G < 0, G > N, R < G, NaN, 2.5),
        the per-query arguments differ in length, or ``gains`` do not match ``gold``.

    Warns
    -----
    EvalValidityWarning
        Once, when some queries have G = 0: their expected value, variance and ceiling are 0.

    Notes
    -----
    Assumptions: the pool is put in a uniformly random order (each of the N! orders equally
    likely, ties broken uniformly) and scored with trec_eval's semantics; a cutoff larger
    than the pool sees the whole pool, :math:`K = \min(k, N)` (``K = N`` without a cutoff).
    With :math:`H_n = \sum_{i \le n} 1/i` and :math:`h = 1 - \binom{N-K}{G}/\binom{N}{G}`:

    .. math::

        E[\mathrm{RR@}k] = \sum_{r=1}^{\min(K, N-G+1)}
            \frac{\binom{N-r}{G-1}}{\binom{N}{G}} \frac{1}{r}
            \quad (G = 1: H_K/N), \qquad
        E[\mathrm{Hit@}k] = h, \quad \mathrm{Var} = h(1-h),

        E[\mathrm{P@}k] = \frac{GK}{Nk}, \quad E[\mathrm{R@}k] = \frac{GK}{NR}, \quad
        E[\mathrm{Rprec}] = \frac{G \min(R, N)}{NR}, \quad
        \mathrm{Var}[X] = K \frac{G}{N}\frac{N-G}{N}\frac{N-K}{N-1} \;
        \text{(the gold count } X \text{ in the top } K\text{)},

        E[\mathrm{AP@}k] = \frac{G}{RN}\left[H_K + \frac{G-1}{N-1}(K - H_K)\right]
            \quad \text{(Bestgen 2015)}, \qquad
        E[\mathrm{nDCG@}k] = \frac{\sum_j g_j}{N}
            \sum_{i=1}^{K} \frac{1}{\log_2(i+1)} \Big/ \mathrm{IDCG@}k.

    The variances are exact too: RR by a recurrence in G, AP through the joint inclusion
    probabilities :math:`G^{(m)}/N^{(m)}`, m <= 4, nDCG as a linear permutation statistic (see
    the private kernels). Ceilings, the best order's value: 1 for RR and Hit;
    :math:`\min(k, G)/k` for P@k; :math:`\min(k, G)/R` for R@k and AP@k (G/R for AP and
    R-precision); for nDCG the ideal DCG@k of the in-pool gains over that of every judged
    gain; 0 when G = 0. Float rounding, measured against the exact reference table: E within
    1e-15 relative; Var within 5e-14 relative, also where the metric is nearly deterministic
    (AP with all items but one gold, N up to 10^8: 3e-16 relative, against exact rational
    arithmetic); a pool that is all gold has variance exactly 0.

    Work is done once per distinct (N, G) pair for RR and Hit (O(min(G, K)) vector steps) and
    in O(1) per query otherwise.

    Examples
    --------
    A pool of 8 with one gold item, MRR@10: :math:`H_8/8`.

    >>> floor = noise_floor("mrr@10", 8, 1)
    >>> floor.expected, floor.ceiling
    (array([0.33973214]), array([1.]))

    Several queries at once; P@5 of a pool of 10 with 2 gold items is 2·5/(10·5) = 0.2, with
    variance 5·(2/10)·(8/10)·(5/9)/5² = 4/225:

    >>> floor = noise_floor("p@5", [10, 10], [2, 5])
    >>> floor.expected, floor.variance * 225
    (array([0.2, 0.5]), array([4.  , 6.25]))

    Recall divides by every judged relevant item, including those outside the pool:

    >>> noise_floor("r@5", 10, 2, judged=4).ceiling
    array([0.5])
    """
    func = "noise_floor"
    metric = parse_metric(metric)
    args = {
        "pool_size": _counts(pool_size, "pool_size", func, 1),
        "gold": _counts(gold, "gold", func, 0),
    }
    if judged is not None:
        args["judged"] = _counts(judged, "judged", func, 0)
    graded = metric.spec.graded
    pool_grades = judged_grades = None
    if not graded:
        for name, value in (("gains", gains), ("judged_gains", judged_gains)):
            if value is not None:
                raise ParameterError(
                    f"The {name!r} parameter of {func} applies only to ndcg and ndcg_exp;"
                    f" {metric.name} counts gold items. Got {name}={_brief(value)} instead."
                )
    else:
        if gains is None and judged_gains is not None:
            raise ParameterError(
                f"The 'judged_gains' parameter of {func} needs 'gains', the grades of the gold"
                " items in the pool."
            )
        if gains is not None:
            pool_grades = _grades(gains, "gains", func)
            if not pool_grades.scalar:
                args["gains"] = (pool_grades.lengths, False)
            if judged_gains is not None:
                judged_grades = _grades(judged_gains, "judged_gains", func)
                if not judged_grades.scalar:
                    args["judged_gains"] = (judged_grades.lengths, False)
    q = _broadcast(func, args)
    scalar = q == 1 and all(s for _, s in args.values())
    n = _spread(args["pool_size"][0], q)
    g = _spread(args["gold"][0], q)
    _check_gold(func, n, g, scalar)
    r = _spread(args["judged"][0], q) if "judged" in args else g
    _check_judged(func, g, r, scalar)

    if graded:
        expected, variance, ceiling = _ndcg_floor(
            metric, n, g, r, judged is not None, pool_grades, judged_grades, q, scalar
        )
    else:
        expected, variance, ceiling = _binary_floor(metric, n, g, r)
    _zero_gold_warning(g, func)
    return Floor(metric, expected, variance, ceiling)


def _binary_floor(
    metric: Metric, n: IntArray, g: IntArray, r: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    size = len(n)
    expected = np.zeros(size)
    variance = np.zeros(size)
    ceiling = np.zeros(size)
    some = g > 0
    if not some.any():
        return expected, variance, ceiling
    n, g, r = n[some], g[some], r[some]
    k = metric.k
    family = metric.family
    nf, gf, rf = n.astype(np.float64), g.astype(np.float64), r.astype(np.float64)
    if family in ("rr", "hit"):
        un, ug, inverse = _unique_pairs(n, g)
        if family == "rr":
            e, v = _rr_moments(un, ug, k)
        else:
            log_miss = _log_miss(un.astype(np.float64), ug.astype(np.float64), _cutoff(k, un))
            e = -np.expm1(log_miss)
            v = e * np.exp(log_miss)
        exp, var, ceil = e[inverse], v[inverse], np.ones(len(n))
    elif family in ("p", "r", "rprec"):
        if family == "rprec":
            depth = np.minimum(rf, nf)
        else:
            depth = _cutoff(k, n)
        mean, spread = _hypergeometric(nf, gf, depth)
        divisor = rf if family in ("r", "rprec") else np.full(len(n), _cutoff_value(k))
        exp, var = mean / divisor, spread / (divisor * divisor)
        ceil = (gf if family == "rprec" else np.minimum(gf, _cutoff_value(k))) / divisor
    else:  # ap
        exp, var = _ap_moments(n, g, r, k)
        ceil = (gf if k is None else np.minimum(gf, float(k))) / rf
    # with every item gold all orders score alike: the variance is 0, not a rounding residue
    var = np.where(g == n, 0.0, var)
    expected[some], variance[some], ceiling[some] = exp, var, ceil
    return expected, variance, ceiling


def _ndcg_floor(
    metric: Metric,
    n: IntArray,
    g: IntArray,
    r: IntArray,
    judged_given: bool,
    pool_grades: _Ragged | None,
    judged_grades: _Ragged | None,
    q: int,
    scalar: bool,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    func = "noise_floor"
    k = metric.k
    gf = g.astype(np.float64)
    sum_gain: FloatArray
    sum_gain2: FloatArray
    if pool_grades is None:  # binary grades: G gold items and R judged items of grade 1
        sum_gain = sum_gain2 = gf
        ideal_all = _discount_sums(np.minimum(r, _cutoff_value(k)))[0]
        ideal_pool = _discount_sums(np.minimum(g, _cutoff_value(k)))[0]
    else:
        pool_grades = pool_grades.spread(q)
        bad = pool_grades.lengths != g
        if bad.any():
            i = int(np.argmax(bad))
            raise ParameterError(
                f"The 'gains' parameter of {func} must hold one grade per gold item in the"
                f" pool. Got {pool_grades.lengths[i]} grades for gold={g[i]}"
                f"{_where(i, scalar)} instead."
            )
        if judged_grades is None:
            if judged_given and (r != g).any():
                i = int(np.argmax(r != g))
                raise ParameterError(
                    f"With graded 'gains', {func} needs the grades of the judged items outside"
                    " the pool: pass 'judged_gains' (every judged grade of the query) instead of"
                    f" 'judged'. Got judged={r[i]} > gold={g[i]}{_where(i, scalar)}."
                )
            judged_grades = pool_grades
        else:
            judged_grades = judged_grades.spread(q)
            if judged_given and (judged_grades.lengths != r).any():
                i = int(np.argmax(judged_grades.lengths != r))
                raise ParameterError(
                    f"The 'judged' parameter of {func} must equal the number of judged_gains."
                    f" Got judged={r[i]} and {judged_grades.lengths[i]} judged_gains"
                    f"{_where(i, scalar)} instead."
                )
        sorted_pool, sorted_judged = _sorted_grades(pool_grades, judged_grades)
        if judged_grades is not pool_grades:
            _check_sub_multiset(sorted_pool, sorted_judged, func)
        exponential = metric.spec.gain == "exponential"
        if (
            exponential
            and max(pool_grades.values.max(initial=0), judged_grades.values.max(initial=0)) > 100
        ):
            raise ParameterError(
                f"The grades of {metric.name} must be <= 100 (its gain 2^grade − 1 must stay a"
                " finite float)."
            )
        gain = np.exp2(pool_grades.values) - 1.0 if exponential else pool_grades.values
        sum_gain = _weighted_bincount(pool_grades.query, gain, q)
        sum_gain2 = _weighted_bincount(pool_grades.query, gain * gain, q)
        ideal_pool = sorted_pool.ideal_dcg(exponential, k)
        ideal_all = (
            ideal_pool if judged_grades is pool_grades else sorted_judged.ideal_dcg(exponential, k)
        )
    size = len(n)
    expected = np.zeros(size)
    variance = np.zeros(size)
    ceiling = np.zeros(size)
    some = g > 0
    if some.any():
        mean, spread = _dcg_moments(n[some], sum_gain[some], sum_gain2[some], k)
        ideal = ideal_all[some]
        expected[some] = mean / ideal
        variance[some] = spread / (ideal * ideal)
        ceiling[some] = ideal_pool[some] / ideal
    return expected, variance, ceiling


# --------------------------------------------------------------------------------------------
# Inversion
# --------------------------------------------------------------------------------------------


def _expected_continuous(
    family: str, k: int | None, x: FloatArray, g: IntArray, r: IntArray
) -> FloatArray:
    r"""E(x) for real pool sizes x >= G: equal to the exact floor at every integer x.

    RR: :math:`\frac{G}{x-G+1}(\psi(x+1) - \psi(G))` (the untruncated closed form, exact for
    integers x <= k + G − 1, where no gold can fall below k), and beyond k + G − 1 the product
    form with real x, evaluated by the recurrence of :func:`_rr_moments`. Hit: 1 up to
    k + G − 1, then :math:`1 - \prod_{i<G} (1 - k/(x-i))`. P, R, Rprec and AP: their closed
    forms with :math:`H_x = \psi(x+1) + \gamma`.
    """
    x = np.asarray(x, dtype=np.float64)
    gf = g.astype(np.float64)
    rf = r.astype(np.float64)
    kf = _cutoff_value(k)  # p, r and hit always have a cutoff
    if family == "p":
        return gf * np.minimum(kf, x) / (x * kf)
    if family == "r":
        return gf * np.minimum(kf, x) / (x * rf)
    if family == "rprec":
        return gf * np.minimum(rf, x) / (x * rf)
    if family == "ap":
        depth = x if k is None else np.minimum(k, x)
        h = _harmonic(depth)
        with np.errstate(divide="ignore", invalid="ignore"):
            pair = np.where(gf > 1, (gf - 1) / (x - 1) * (depth - h), 0.0)
        return gf / (rf * x) * (h + pair)
    out = np.empty(len(x))
    full = x <= kf + gf - 1
    rest = ~full
    if family == "hit":
        out[full] = 1.0
        if rest.any():
            out[rest] = -np.expm1(_log_miss(x[rest], gf[rest], np.full(rest.sum(), kf)))
        return out
    # rr
    out[full] = gf[full] / (x[full] - gf[full] + 1) * (digamma(x[full] + 1) - digamma(gf[full]))
    if rest.any():
        out[rest] = _rr_recurrence(x[rest], g[rest].astype(np.int64), np.full(rest.sum(), kf))[0]
    return out


def _flat_end(family: str, k: int | None, g: IntArray, r: IntArray) -> FloatArray:
    """Return the largest pool size at which E still equals its maximum E(G)."""
    gf = g.astype(np.float64)
    if family == "hit":
        return gf + _cutoff_value(k) - 1.0
    if family in ("p", "r"):
        return np.maximum(gf, _cutoff_value(k))
    if family == "rprec":
        return np.maximum(r.astype(np.float64), gf)
    return gf


def _largest_floor(family: str, k: int | None, g: IntArray, r: IntArray) -> FloatArray:
    """E at the smallest pool, N = G (every item gold): the ceiling, exactly."""
    gf = g.astype(np.float64)
    kf = _cutoff_value(k)
    if family in ("rr", "hit"):
        return np.ones(len(g))
    if family == "p":
        return np.minimum(gf, kf) / kf
    if family in ("r", "ap"):
        return np.minimum(gf, kf) / r
    return gf / r  # rprec


def _solve_decreasing(
    evaluate: Callable[[FloatArray, IndexArray], FloatArray],
    target: FloatArray,
    start: FloatArray,
) -> FloatArray:
    r"""Solve E(x) = target for x > start, E strictly decreasing there with E(start) > target > 0.

    Works on :math:`\phi(y) = \log E(e^y) - \log(\text{target})`, nearly linear in y (E ~ c/x
    for large x): brackets by steps of ×16, then the Illinois variant of regula falsi with a
    bisection step whenever the bracket fails to halve, to a relative width of 1e-14.
    ``evaluate(x, idx)`` returns E at x for the problems ``idx``.
    """
    size = len(target)
    log_target = np.log(target)

    def phi(y: FloatArray, idx: IndexArray) -> FloatArray:
        with np.errstate(divide="ignore"):  # a floor that underflows to 0 gives -inf
            return np.log(evaluate(np.exp(y), idx)) - log_target[idx]

    idx_all = np.arange(size)
    a = np.log(start)
    fa = phi(a, idx_all)
    b = a + np.log(2.0)
    fb = phi(b, idx_all)
    outside = fb > 0
    while outside.any():
        idx = np.nonzero(outside)[0]
        a[idx], fa[idx] = b[idx], fb[idx]
        b[idx] = b[idx] + np.log(16.0)
        too_far = b[idx] > np.log(_LARGEST_POOL)
        b[idx[too_far]] = np.inf
        keep = idx[~too_far]
        fb[keep] = phi(b[keep], keep)
        outside[idx[too_far]] = False
        outside[keep] = fb[keep] > 0
    root: FloatArray = b.copy()  # right for fb == 0, and inf where no bracket was found
    root[fa <= 0] = a[fa <= 0]  # rounding put the start at or below the target
    live = np.nonzero(np.isfinite(b) & (fb < 0) & (fa > 0))[0]
    side = np.zeros(size, dtype=np.int8)  # which end was kept last: -1 a, +1 b
    width = 4 * (b - a)  # the previous bracket's width, for the bisection safeguard
    for _ in range(200):
        if len(live) == 0:
            break
        al, bl, fal, fbl = a[live], b[live], fa[live], fb[live]
        secant = bl - fbl * (bl - al) / (fbl - fal)
        halve = ~((secant > al) & (secant < bl)) | (bl - al > 0.5 * width[live])
        width[live] = bl - al
        c = np.where(halve, 0.5 * (al + bl), secant)
        fc = phi(c, live)
        move_a = fc > 0
        move_b = fc < 0
        # Illinois: when the same end is kept twice, halve its function value
        kept_a = move_b & (side[live] == -1)
        kept_b = move_a & (side[live] == 1)
        fa[live] = np.where(move_a, fc, np.where(kept_a, fal / 2, fal))
        a[live] = np.where(move_a, c, al)
        fb[live] = np.where(move_b, fc, np.where(kept_b, fbl / 2, fbl))
        b[live] = np.where(move_b, c, bl)
        side[live] = np.where(move_a, 1, np.where(move_b, -1, 0))
        exact = fc == 0
        root[live[exact]] = c[exact]
        done = exact | (b[live] - a[live] <= 1e-14 * np.maximum(1.0, np.abs(b[live])))
        finished = live[done & ~exact]
        root[finished] = 0.5 * (a[finished] + b[finished])
        live = live[~done]
    root[live] = 0.5 * (a[live] + b[live])
    return np.exp(root)


def _validated_inversion_args(
    func: str,
    metric: Metric | str,
    measured: ArrayLike,
    std_error: ArrayLike | None,
    confidence: float,
) -> tuple[Metric, tuple[FloatArray, bool], tuple[FloatArray, bool] | None, float]:
    metric = parse_metric(metric)
    if not metric.spec.invertible:
        raise ParameterError(
            f"{func} does not support {metric.name}: an nDCG floor depends on the grades of the"
            " gold items, not only on how many there are. Use a binary metric (rr, hit, p, r,"
            " rprec, ap)."
        )
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float | np.floating)
        or not 0 < confidence < 1
    ):
        raise ParameterError(
            f"The 'confidence' parameter of {func} must be a float in (0, 1). Got"
            f" {_show(confidence)} instead."
        )
    values = _reals(
        measured,
        "measured",
        func,
        "a finite number <= 1 (a metric value, not a percentage)",
        lambda v: np.isfinite(v) & (v <= 1),
    )
    errors = None
    if std_error is not None:
        errors = _reals(
            std_error,
            "std_error",
            func,
            "a finite number >= 0",
            lambda v: np.isfinite(v) & (v >= 0),
        )
    return metric, values, errors, float(confidence)


def _reals(
    value: ArrayLike, name: str, func: str, what: str, ok: Callable[[FloatArray], BoolArray]
) -> tuple[FloatArray, bool]:
    scalar = np.ndim(value) == 0
    try:
        array = np.atleast_1d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"The {name!r} parameter of {func} must be {what}. Got {_brief(value)} instead."
        ) from exc
    if array.ndim != 1:
        raise ParameterError(
            f"The {name!r} parameter of {func} must be a scalar or a 1-D sequence with one value"
            f" per query. Got an array of shape {np.shape(value)} instead."
        )
    if isinstance(value, bool) or np.asarray(value).dtype == bool:
        bad = np.ones(len(array), dtype=bool)
    else:
        bad = ~ok(array)
    if bad.any():
        i = int(np.argmax(bad))
        shown = _show(np.atleast_1d(np.asarray(value))[i])
        got = shown if scalar else f"{shown} at index {i}"
        every = "" if scalar else " for every query"
        raise ParameterError(
            f"The {name!r} parameter of {func} must be {what}{every}. Got {got} instead."
        )
    return array, scalar


def _invert(
    evaluate: Callable[[FloatArray, IndexArray], FloatArray],
    flat_end: FloatArray,
    maximum: FloatArray,
    measured: FloatArray,
    std_error: FloatArray | None,
    confidence: float,
) -> tuple[FloatArray, FloatArray, FloatArray, BoolArray]:
    """Estimate, low and high pool sizes, and the saturation flag, for each problem."""
    if std_error is None:
        targets = [measured]
    else:
        z = float(ndtri(0.5 + confidence / 2))
        targets = [measured, measured + z * std_error, measured - z * std_error]
    size = len(measured)
    target = np.concatenate(targets)
    problem = np.tile(np.arange(size), len(targets))
    start = flat_end[problem]
    top = maximum[problem]
    out = np.empty(len(target))
    at_top = target >= top
    out[at_top] = start[at_top]
    out[target <= 0] = np.inf
    solve = np.nonzero((target > 0) & ~at_top)[0]
    if len(solve):
        out[solve] = _solve_decreasing(
            lambda x, idx: evaluate(x, problem[solve[idx]]), target[solve], start[solve]
        )
    estimate = out[:size]
    if std_error is None:
        low = high = estimate
    else:
        low, high = out[size : 2 * size], out[2 * size :]
    return estimate, low.copy(), high.copy(), measured >= maximum


def infer_pool_size(
    metric: Metric | str,
    measured: ArrayLike,
    gold: ArrayLike,
    *,
    std_error: ArrayLike | None = None,
    judged: ArrayLike | None = None,
    confidence: float = 0.95,
) -> InferredPoolSize:
    r"""Find the pool size whose exact floor equals a measured noise score, per query.

    Solves :math:`E(N; G, R, k) = m` for N, where E is the exact floor of :func:`noise_floor`,
    extended to real N (see Notes). E decreases in N, so the root is unique; with a standard
    error, the interval is made of the roots for :math:`m \pm z\,\mathrm{se}`.

    Parameters
    ----------
    metric : Metric or str
        A binary metric: rr, hit, p, r, rprec or ap (nDCG's floor also depends on the grades).
    measured : float or array-like of float
        The measured mean score of a random ranker, per query (or per class of queries sharing
        G and R), at most 1.
    gold : int or array-like of int
        G >= 1 per query: gold items in the pool.
    std_error : float or array-like of float, optional
        The standard error of each measured value (e.g. its standard deviation over seeds
        divided by the square root of their number).
    judged : int or array-like of int, optional
        R >= G per query (default G): divides recall, AP and R-precision.
    confidence : float
        Coverage of the normal interval, default 0.95.

    Returns
    -------
    InferredPoolSize
        ``estimate``, ``low``, ``high`` (float arrays, one value per query) and ``saturated``.

    Raises
    ------
    ParameterError
        For nDCG, G < 1, R < G, a measured value above 1 or not finite, a negative standard
        error, a confidence outside (0, 1), or per-query arguments of different lengths.

    Notes
    -----
    The floor is extended between integers by its closed form with :math:`H_x = \psi(x+1) +
    \gamma`. For RR@k that is :math:`\frac{G}{x-G+1}(\psi(x+1) - \psi(G))` up to
    x = k + G − 1 (exact at integers there: the first gold item is always within the top k)
    and the product form with real x beyond; for Hit@k it is 1 up to k + G − 1 and
    :math:`1 - \prod_{i<G}(1 - k/(x - i))` beyond.

    Degenerate measurements, by convention:

    - ``measured <= 0`` gives ``inf``: only an infinitely large pool has a floor of 0 (so does
      a value so small that the pool would exceed 1e300).
    - ``measured`` at or above the largest floor, that of the smallest pool holding the gold
      items, sets ``saturated`` and returns the largest pool whose floor still equals that
      maximum (G for RR and AP, where E(G) = 1 or G/R; k + G − 1 for Hit@k; max(k, G) for
      P@k and R@k, whose floor is flat while the whole pool fits in the top k; R for Rprec).
    - Likewise ``low`` for an upper end at or above the maximum, and ``high = inf`` for a lower
      end <= 0.

    The G·H_k/N approximation is never used: it is exact only for G = 1 and is 80 % high at
    N = 8, G = 3.

    Examples
    --------
    A measured MRR@10 of H_10/218 with one gold item means a pool of 218; a 5 % standard
    error (so ±9.8 % at 95 %) spreads that over 218/1.098 to 218/0.902:

    >>> h10 = 7381 / 2520
    >>> inferred = infer_pool_size("mrr@10", h10 / 218, 1, std_error=0.05 * h10 / 218)
    >>> inferred.estimate.round(6), inferred.low.round(1), inferred.high.round(1)
    (array([218.]), array([198.5]), array([241.7]))

    A measured value of 1 with one gold item says the pool held nothing else:

    >>> infer_pool_size("rr@10", 1.0, 1).saturated
    array([ True])
    """
    func = "infer_pool_size"
    metric, (values, values_scalar), errors, confidence = _validated_inversion_args(
        func, metric, measured, std_error, confidence
    )
    gold_counts = _gold_for_inversion(gold, func)
    args: dict[str, tuple[FloatArray | IntArray, bool]] = {
        "measured": (values, values_scalar),
        "gold": gold_counts,
    }
    if errors is not None:
        args["std_error"] = errors
    judged_counts = None if judged is None else _counts(judged, "judged", func, 1)
    if judged_counts is not None:
        args["judged"] = judged_counts
    q = _broadcast(func, args)
    scalar = q == 1 and all(s for _, s in args.values())
    m = np.array(_spread(values, q), dtype=np.float64)
    g = _spread(gold_counts[0], q)
    r = _spread(judged_counts[0], q) if judged_counts is not None else g
    _check_judged(func, g, r, scalar)
    se = None if errors is None else np.array(_spread(errors[0], q), dtype=np.float64)
    family, k = metric.family, metric.k
    flat_end = _flat_end(family, k, g, r)
    maximum = _largest_floor(family, k, g, r)

    def evaluate(x: FloatArray, idx: IndexArray) -> FloatArray:
        return _expected_continuous(family, k, x, g[idx], r[idx])

    estimate, low, high, saturated = _invert(evaluate, flat_end, maximum, m, se, confidence)
    return InferredPoolSize(metric, estimate, low, high, saturated, confidence)


def _gold_for_inversion(gold: ArrayLike, func: str) -> tuple[IntArray, bool]:
    try:
        return _counts(gold, "gold", func, 1)
    except ParameterError as exc:
        raise ParameterError(
            f"{exc} (A query with no gold item in the pool scores 0 whatever the pool size.)"
        ) from None


def infer_benchmark_pool_size(
    metric: Metric | str,
    measured_mean: float,
    gold: ArrayLike,
    *,
    std_error: float | None = None,
    judged: ArrayLike | None = None,
    confidence: float = 0.95,
) -> InferredPoolSize:
    r"""One pool size N shared by every query, from a benchmark's mean noise score.

    Solves :math:`\frac{1}{Q}\sum_q E(N; G_q, R_q, k) = m` for N >= max G_q: queries with
    several gold items have higher floors, so the mean of per-query floors (not the floor of
    the mean G) is what a random ranker's mean score estimates.

    Parameters
    ----------
    metric : Metric or str
        rr, hit, p, r, rprec or ap.
    measured_mean : float
        The mean score of a random ranker over the Q queries.
    gold : array-like of int
        G_q >= 0 per query (queries with G = 0 score 0 and still count in the mean; at least
        one query needs G >= 1).
    std_error : float, optional
        The standard error of ``measured_mean``.
    judged : int or array-like of int, optional
        R_q >= G_q per query, default G_q.
    confidence : float
        Coverage of the normal interval, default 0.95.

    Returns
    -------
    InferredPoolSize
        Arrays of length 1. Saturation and infinite sizes follow :func:`infer_pool_size`; the
        smallest pool is max G_q and the floor of the mean stays at its maximum up to the
        smallest flat end of the queries.

    Raises
    ------
    ParameterError
        As :func:`infer_pool_size`, or when no query has a gold item.

    Examples
    --------
    Three queries with one gold item and one with three, all in pools of 20: the mean MRR@10
    floor is (3·H_10/20 + E(20, 3))/4, and inverting it gives the pool back.

    >>> from evalvalidity.core.floors import noise_floor
    >>> mean = noise_floor("rr@10", 20, [1, 1, 1, 3]).expected.mean()
    >>> infer_benchmark_pool_size("rr@10", mean, [1, 1, 1, 3]).estimate.round(6)
    array([20.])
    """
    func = "infer_benchmark_pool_size"
    if np.ndim(measured_mean) != 0:
        raise ParameterError(
            f"The 'measured_mean' parameter of {func} must be one number, the benchmark's mean."
            f" Got an array of shape {np.shape(measured_mean)} instead."
        )
    if std_error is not None and np.ndim(std_error) != 0:
        raise ParameterError(
            f"The 'std_error' parameter of {func} must be one number, the standard error of the"
            f" mean. Got an array of shape {np.shape(std_error)} instead."
        )
    metric, (values, _), errors, confidence = _validated_inversion_args(
        func, metric, measured_mean, std_error, confidence
    )
    args = {"gold": _counts(gold, "gold", func, 0)}
    if judged is not None:
        args["judged"] = _counts(judged, "judged", func, 0)
    q = _broadcast(func, args)
    scalar = q == 1 and all(s for _, s in args.values())
    g = _spread(args["gold"][0], q)
    r = _spread(args["judged"][0], q) if judged is not None else g
    _check_judged(func, g, r, scalar)
    if not (g > 0).any():
        raise ParameterError(
            f"{func} needs at least one query with gold >= 1: every query has gold = 0, and"
            " such a query scores 0 whatever the pool size."
        )
    family, k = metric.family, metric.k
    classes, weights = np.unique(np.stack([g[g > 0], r[g > 0]], axis=1), axis=0, return_counts=True)
    cg, cr = classes[:, 0], classes[:, 1]
    share = weights / q  # queries with G = 0 add 0 to the mean
    smallest = float(cg.max())
    flat_end = np.array([max(smallest, float(_flat_end(family, k, cg, cr).min()))])

    def evaluate(x: FloatArray, idx: IndexArray) -> FloatArray:
        # Every (x, class) pair in one call (the recurrence loops over G once for all).
        m, c = len(x), len(cg)
        floors = _expected_continuous(
            family, k, np.repeat(np.asarray(x, np.float64), c), np.tile(cg, m), np.tile(cr, m)
        ).reshape(m, c)
        out = np.empty(m)
        for i in range(m):
            out[i] = float(np.dot(share, floors[i]))
        return out

    maximum = evaluate(flat_end, np.zeros(1, dtype=np.intp))
    se = None if errors is None else errors[0]
    estimate, low, high, saturated = _invert(evaluate, flat_end, maximum, values, se, confidence)
    return InferredPoolSize(metric, estimate, low, high, saturated, confidence)
