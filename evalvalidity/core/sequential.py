r"""Anytime-valid confidence sequences: evaluate query by query until the answer is clear.

A fixed-n interval is valid only at the n chosen in advance; looking after every query and
stopping when it looks decided inflates the error rate far above alpha. A *confidence
sequence* :math:`(C_t)_{t \ge 1}` holds the true mean at every time at once,

.. math:: P(\forall t \ge 1 : \mu \in C_t) \ge 1 - \alpha,

so one may stop at any time, chosen in any way from the data seen, and the interval then is
still valid. :func:`confidence_sequence` builds one for the mean of values in known bounds
(a metric in [0, 1], a paired difference in [-1, 1]); :func:`sequential_gate` uses it to decide
whether a change regressed by more than an allowed drop.

Both constructions are from Waudby-Smith & Ramdas (2023): the hedged capital ("betting")
sequence, the tighter one, and the predictable plug-in empirical-Bernstein sequence, which
has a closed form. Both assume the values are independent with a common mean (queries in an
exchangeable, e.g. shuffled, order); neither assumes a distribution.

References
----------
Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting", JRSS B 86
(2024; online 2023), Theorems 2 and 3 and Remark 3 (the running intersection). Howard,
Ramdas, McAuliffe & Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Ann. Statist. 49 (2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from evalvalidity.core._validate import _choice, _finite_values, _is_real, _open_unit, _shown
from evalvalidity.errors import ParameterError

__all__ = ["ConfidenceSequence", "GateDecision", "confidence_sequence", "sequential_gate"]

_METHODS: Final = ("betting", "bernstein")
# Bets are capped at this fraction of the largest safe bet, so wealth never falls by more
# than half in one step (Waudby-Smith & Ramdas use 1/2 or 3/4).
_BET_CAP: Final = 0.5
# Candidate means of the betting sequence, on [0, 1].
_GRID_SIZE: Final = 1000
# Times per step of the (time x grid) wealth computation; the grid is narrowed between steps.
_TIME_BLOCK: Final = 32


@dataclass(frozen=True)
class ConfidenceSequence:
    """Anytime-valid bounds of a mean after each of the first t values.

    Attributes
    ----------
    lower, upper : ndarray of float, shape (n,)
        ``lower[t - 1] <= mean <= upper[t - 1]`` for all t at once with probability at least
        ``1 - alpha``. Running intersections: ``lower`` never falls, ``upper`` never rises;
        should the intersection become empty (only after a miss) they stay at the last
        non-empty interval.
    running_mean : ndarray of float, shape (n,)
        Mean of the first t values.
    alpha : float
    bounds : tuple of float
        The known range of a value.
    method : str
        ``"betting"`` or ``"bernstein"``.
    """

    lower: np.ndarray
    upper: np.ndarray
    running_mean: np.ndarray
    alpha: float
    bounds: tuple[float, float]
    method: str

    def __post_init__(self) -> None:
        for array in (self.lower, self.upper, self.running_mean):
            array.flags.writeable = False


@dataclass(frozen=True)
class GateDecision:
    """Outcome of :func:`sequential_gate`.

    Attributes
    ----------
    decision : str
        ``"regressed"`` (the mean difference is below ``-allowed_drop``), ``"not regressed"``
        (above it) or ``"undecided"`` (the values ran out first).
    decided_at : int or None
        Number of queries seen when the sequence decided; None when undecided.
    lower, upper : float
        Bounds of the mean difference at ``decided_at`` (or after every query when undecided).
    allowed_drop : float
    alpha : float
    n_queries : int
        Queries available.
    sequence : ConfidenceSequence
        The whole sequence, e.g. to plot.
    """

    decision: str
    decided_at: int | None
    lower: float
    upper: float
    allowed_drop: float
    alpha: float
    n_queries: int
    sequence: ConfidenceSequence


def _bounds(value: Any, func: str) -> tuple[float, float]:
    if (
        not isinstance(value, tuple | list)
        or len(value) != 2
        or not all(_is_real(v) and math.isfinite(float(v)) for v in value)
        or not float(value[0]) < float(value[1])
    ):
        raise ParameterError(
            f"The 'bounds' parameter of {func} must be a pair (low, high) of finite floats "
            f"with low < high. Got {_shown(value)} instead."
        )
    return float(value[0]), float(value[1])


def _plug_in_bets(unit: np.ndarray, alpha: float) -> np.ndarray:
    """Predictable bets sqrt(2 log(2/α) / (σ̂²_{t-1} t log(1 + t))) before the cap.

    σ̂²_t = (1/4 + Σ_{i<=t} (x_i - μ̂_i)²) / (t + 1) with μ̂_t = (1/2 + Σ_{i<=t} x_i) / (t + 1);
    the bet at time t uses only the first t - 1 values.
    """
    t = np.arange(1, unit.size + 1, dtype=np.float64)
    mean = (0.5 + np.cumsum(unit)) / (t + 1.0)
    variance = (0.25 + np.cumsum((unit - mean) ** 2)) / (t + 1.0)
    previous = np.concatenate(([0.25], variance[:-1]))
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (previous * t * np.log1p(t)))


def _bernstein_sequence(unit: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Predictable plug-in empirical-Bernstein sequence on [0, 1] (WSR 2023, Theorem 2)."""
    t = np.arange(1, unit.size + 1, dtype=np.float64)
    bets = np.minimum(_plug_in_bets(unit, alpha), _BET_CAP)
    mean = (0.5 + np.cumsum(unit)) / (t + 1.0)
    previous_mean = np.concatenate(([0.5], mean[:-1]))
    penalty = 4.0 * (unit - previous_mean) ** 2 * (-np.log1p(-bets) - bets) / 4.0
    total_bet = np.cumsum(bets)
    centre = np.cumsum(bets * unit) / total_bet
    half = (math.log(2.0 / alpha) + np.cumsum(penalty)) / total_bet
    return centre - half, centre + half


def _betting_sequence(unit: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Hedged capital sequence on [0, 1] (WSR 2023, Theorem 3), on a grid of candidate means.

    The set {m : max(K⁺_t(m), K⁻_t(m)) / 2 < 1/α} is an interval (the wealth is quasi-convex
    in m); its grid ends are widened by one grid step so the bounds stay conservative. The
    bounds returned are already intersected over time, so a block of times only needs the
    grid points still inside the running interval: the work falls as the interval narrows.
    """
    step = 1.0 / _GRID_SIZE
    grid = (np.arange(_GRID_SIZE, dtype=np.float64) + 0.5) * step
    plug_in = _plug_in_bets(unit, alpha)
    threshold = math.log(2.0 / alpha)  # max(K⁺, K⁻) / 2 < 1/α
    log_up = np.zeros(_GRID_SIZE)
    log_down = np.zeros(_GRID_SIZE)
    lower = np.empty(unit.size)
    upper = np.empty(unit.size)
    first_kept, last_kept = 0, _GRID_SIZE - 1  # grid points inside the running interval
    running_low, running_high = 0.0, 1.0
    for start in range(0, unit.size, _TIME_BLOCK):
        stop = min(start + _TIME_BLOCK, unit.size)
        if first_kept > last_kept:  # the running interval is empty (a miss): nothing to track
            lower[start:stop], upper[start:stop] = running_low, running_high
            continue
        kept = slice(first_kept, last_kept + 1)
        m = grid[kept]
        x = unit[start:stop, None]
        bet = plug_in[start:stop, None]
        up = np.cumsum(np.log1p(np.minimum(bet, _BET_CAP / m) * (x - m)), axis=0)
        down = np.cumsum(np.log1p(-np.minimum(bet, _BET_CAP / (1.0 - m)) * (x - m)), axis=0)
        up += log_up[kept]
        down += log_down[kept]
        log_up[kept], log_down[kept] = up[-1], down[-1]
        inside = np.maximum(up, down) < threshold
        any_inside = inside.any(axis=1)
        first = first_kept + np.argmax(inside, axis=1)
        last = last_kept - np.argmax(inside[:, ::-1], axis=1)
        block_low = np.where(any_inside, np.maximum(grid[first] - step, 0.0), 1.0)
        block_high = np.where(any_inside, np.minimum(grid[last] + step, 1.0), 0.0)
        block_low = np.maximum.accumulate(np.maximum(block_low, running_low))
        block_high = np.minimum.accumulate(np.minimum(block_high, running_high))
        lower[start:stop], upper[start:stop] = block_low, block_high
        running_low, running_high = float(block_low[-1]), float(block_high[-1])
        # Grid points whose m lies within [running_low, running_high].
        first_kept = int(np.searchsorted(grid, running_low, side="left"))
        last_kept = int(np.searchsorted(grid, running_high, side="right")) - 1
    return lower, upper


def confidence_sequence(
    values: Any,
    *,
    alpha: float = 0.05,
    bounds: tuple[float, float] = (0.0, 1.0),
    method: str = "betting",
) -> ConfidenceSequence:
    r"""Anytime-valid confidence sequence for the mean of bounded values, one bound per time.

    Values are mapped to [0, 1] by :math:`x = (v - \text{low}) / (\text{high} - \text{low})`
    and the bounds mapped back. With :math:`\hat\mu_t = (1/2 + \sum_{i \le t} x_i)/(t+1)`,
    :math:`\hat\sigma^2_t = (1/4 + \sum_{i \le t} (x_i - \hat\mu_i)^2)/(t+1)` and the
    predictable bet :math:`\tilde\lambda_t = \sqrt{2 \log(2/\alpha) /
    (\hat\sigma^2_{t-1}\, t \log(1+t))}`:

    ``method="betting"`` (hedged capital, Waudby-Smith & Ramdas 2023, Theorem 3): for each
    candidate mean m, two gamblers bet :math:`\lambda^+_t(m) = \min(\tilde\lambda_t,
    \tfrac12 / m)` and :math:`\lambda^-_t(m) = \min(\tilde\lambda_t, \tfrac12 / (1-m))` that
    the mean is above, resp. below, m:

    .. math:: K^\pm_t(m) = \prod_{i \le t} \big(1 \pm \lambda^\pm_i(m)(x_i - m)\big), \qquad
              C_t = \{m : \max(\tfrac12 K^+_t(m), \tfrac12 K^-_t(m)) < 1/\alpha\},

    found on a grid of 1000 means and widened by one grid step. At the true mean
    :math:`\tfrac12 K^+ + \tfrac12 K^-` is a nonnegative martingale from 1, so by Ville's
    inequality it ever reaches :math:`1/\alpha` with probability at most :math:`\alpha`.

    ``method="bernstein"`` (predictable plug-in empirical Bernstein, Theorem 2): with
    :math:`\lambda_t = \min(\tilde\lambda_t, 1/2)`,
    :math:`\psi(\lambda) = (-\log(1-\lambda) - \lambda)/4` and
    :math:`v_t = 4 (x_t - \hat\mu_{t-1})^2`,

    .. math:: C_t = \frac{\sum_i \lambda_i x_i}{\sum_i \lambda_i} \pm
              \frac{\log(2/\alpha) + \sum_i v_i\, \psi(\lambda_i)}{\sum_i \lambda_i}.

    Both are then intersected over time (lower bound the running maximum, upper the running
    minimum) and clipped to the bounds, which keeps them valid.

    Parameters
    ----------
    values : array_like of float, shape (n,)
        The values in the order they were observed, all within ``bounds``, n >= 1.
    alpha : float, default 0.05
        The sequence misses the mean at some time with probability at most alpha.
    bounds : (float, float), default (0.0, 1.0)
        Known range of a value: (0, 1) for a metric, (-1, 1) for a paired difference of two.
    method : {"betting", "bernstein"}

    Returns
    -------
    ConfidenceSequence

    Raises
    ------
    ParameterError
        On values outside the bounds, non-finite values, or arguments outside their domain.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> hits = (rng.random(2000) < 0.3).astype(float)
    >>> cs = confidence_sequence(hits, alpha=0.05)
    >>> bool(cs.lower[-1] < 0.3 < cs.upper[-1]), bool(cs.upper[-1] - cs.lower[-1] < 0.1)
    (True, True)
    >>> bool(np.all(np.diff(cs.lower) >= 0) and np.all(np.diff(cs.upper) <= 0))
    True
    >>> eb = confidence_sequence(hits, method="bernstein")
    >>> bool(eb.upper[49] - eb.lower[49] > cs.upper[49] - cs.lower[49])
    True
    """
    return _confidence_sequence(values, alpha, bounds, method, "values", "confidence_sequence")


def _confidence_sequence(
    values: Any, alpha: Any, bounds: Any, method: Any, name: str, func: str
) -> ConfidenceSequence:
    values = _finite_values(values, name, func, min_size=1)
    alpha = _open_unit(alpha, "alpha", func)
    low, high = _bounds(bounds, func)
    method = _choice(method, _METHODS, "method", func)
    outside = np.flatnonzero((values < low) | (values > high))
    if outside.size:
        raise ParameterError(
            f"The '{name}' parameter of {func} must lie within bounds [{low:g}, {high:g}]. "
            f"Got {outside.size} value(s) outside, the first {values[outside[0]]:g} at "
            f"position {outside[0]}."
        )
    width = high - low
    unit = np.clip((values - low) / width, 0.0, 1.0)
    if method == "betting":
        lower, upper = _betting_sequence(unit, alpha)
    else:
        lower, upper = _bernstein_sequence(unit, alpha)
    lower = np.maximum.accumulate(np.clip(lower, 0.0, 1.0))
    upper = np.minimum.accumulate(np.clip(upper, 0.0, 1.0))
    # After a miss the intersection can become empty; the bounds then stay at the last
    # non-empty interval (a superset of the empty set, so the guarantee is unchanged).
    crossed = np.flatnonzero(lower > upper)
    if crossed.size:
        first = int(crossed[0])
        lower[first:] = lower[first - 1] if first else 0.0
        upper[first:] = upper[first - 1] if first else 1.0
    running = np.cumsum(values) / np.arange(1, values.size + 1)
    return ConfidenceSequence(
        low + width * lower, low + width * upper, running, alpha, (low, high), method
    )


def sequential_gate(
    differences: Any,
    *,
    allowed_drop: float,
    alpha: float = 0.05,
    bounds: tuple[float, float] = (-1.0, 1.0),
    method: str = "betting",
) -> GateDecision:
    r"""Decide, query by query, whether a change regressed by more than ``allowed_drop``.

    Given paired differences :math:`d_t = \text{new}_t - \text{old}_t` in the order the
    queries were evaluated, build the confidence sequence :math:`[L_t, U_t]` of their mean
    δ (:func:`confidence_sequence`) and stop at the first t with

    - :math:`U_t < -\text{allowed\_drop}`: **regressed** (δ is below the allowed drop), or
    - :math:`L_t > -\text{allowed\_drop}`: **not regressed** (δ is above it).

    Because the sequence holds δ at all times with probability :math:`1 - \alpha`, a change
    whose true δ is at least :math:`-\text{allowed\_drop}` (a null change, or an improvement)
    is called regressed with probability at most α, and a real regression is passed with
    probability at most α, whenever one stops, including "evaluate until decided". A
    difference exactly at the boundary is never decided.

    Parameters
    ----------
    differences : array_like of float, shape (n,)
        Per-query differences in evaluation order, within ``bounds``, n >= 1.
    allowed_drop : float
        Largest tolerated fall of the mean, >= 0, in the metric's units.
    alpha : float, default 0.05
    bounds : (float, float), default (-1.0, 1.0)
        Range of a difference of two metrics in [0, 1].
    method : {"betting", "bernstein"}

    Returns
    -------
    GateDecision

    Raises
    ------
    ParameterError
        When an argument is outside its domain.

    Examples
    --------
    A change that loses 0.2 on most queries is caught after a few dozen:

    >>> rng = np.random.default_rng(1)
    >>> worse = np.clip(rng.normal(-0.2, 0.2, size=500), -1, 1)
    >>> gate = sequential_gate(worse, allowed_drop=0.02)
    >>> gate.decision, gate.decided_at < 100, gate.upper < -0.02
    ('regressed', True, True)
    >>> same = np.clip(rng.normal(0.0, 0.1, size=3000), -1, 1)
    >>> sequential_gate(same, allowed_drop=0.02).decision
    'not regressed'
    """
    func = "sequential_gate"
    if (
        not _is_real(allowed_drop)
        or not math.isfinite(float(allowed_drop))
        or float(allowed_drop) < 0.0
    ):
        raise ParameterError(
            f"The 'allowed_drop' parameter of {func} must be a finite float >= 0. "
            f"Got {_shown(allowed_drop)} instead."
        )
    drop = float(allowed_drop)
    sequence = _confidence_sequence(differences, alpha, bounds, method, "differences", func)
    threshold = -drop
    regressed = np.flatnonzero(sequence.upper < threshold)
    passed = np.flatnonzero(sequence.lower > threshold)
    first_regressed = int(regressed[0]) if regressed.size else None
    first_passed = int(passed[0]) if passed.size else None
    n = sequence.lower.size
    # The bounds only tighten, so at most one of the two ever happens.
    decision: str
    at: int | None
    if first_regressed is not None:
        decision, at, index = "regressed", first_regressed + 1, first_regressed
    elif first_passed is not None:
        decision, at, index = "not regressed", first_passed + 1, first_passed
    else:
        decision, at, index = "undecided", None, n - 1
    return GateDecision(
        decision=decision,
        decided_at=at,
        lower=float(sequence.lower[index]),
        upper=float(sequence.upper[index]),
        allowed_drop=drop,
        alpha=sequence.alpha,
        n_queries=n,
        sequence=sequence,
    )
