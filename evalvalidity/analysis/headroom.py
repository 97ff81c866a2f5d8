"""Headroom, per-query triage and power: what room the benchmark leaves and what it can detect.

- :func:`headroom`: ceiling − floor, floor / ceiling, the chance-adjusted score
  (M − E) / (ceiling − E) and how many standard errors of the model's mean fit in the headroom.
- :func:`triage`: one row per query, flagged (``floor_high``, ``pool_smaller_than_k``,
  ``gold_ge_k``, ``gold_missing_from_pool``, ``no_gold``, ``duplicated_gold``,
  ``noise_above_floor``), in the order of each query's share of the mean floor.
- :func:`power`: the smallest detectable difference and the queries needed for
  ``Thresholds.delta``, from the paired differences with a second run when there is one.
"""

from __future__ import annotations

import math

import numpy as np

from evalvalidity.analysis.check1 import Z95
from evalvalidity.analysis.plan import Thresholds
from evalvalidity.analysis.pools import Benchmark, quietly
from evalvalidity.analysis.results import Headroom, Interval, Power, QueryTable
from evalvalidity.core import stats
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric

__all__ = ["power"]


def triage(
    bench: Benchmark,
    floor: Floor,
    metric: Metric,
    model: np.ndarray | None,
    noise: np.ndarray | None,
    thresholds: Thresholds,
) -> QueryTable:
    """The per-query triage rows of ``bench``, flagged by ``thresholds``."""
    n = len(bench.qids)
    expected = floor.expected
    std = floor.std
    total = float(np.sum(expected))
    share = expected / total if total > 0 else np.zeros(n)
    model_values = model if model is not None else np.full(n, np.nan)
    noise_values = noise if noise is not None else np.full(n, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(std > 0, (noise_values - expected) / std, np.nan)
        floor_ratio = np.where(floor.ceiling > 0, expected / floor.ceiling, np.nan)
    k = metric.k
    # One boolean column per flag, in the flags' order; each distinct combination becomes one
    # shared tuple (no per-query Python work).
    columns = [
        ("floor_high", floor_ratio >= thresholds.query_floor_share),
        ("pool_smaller_than_k", bench.pool_size < k if k is not None else None),
        ("gold_ge_k", bench.gold >= k if k is not None else None),
        (
            "gold_missing_from_pool",
            (bench.positive > bench.in_pool) | (bench.judged > bench.gold),
        ),
        ("no_gold", bench.gold == 0),
        ("duplicated_gold", bench.duplicated > 0),
        ("noise_above_floor", z >= thresholds.noise_z if noise is not None else None),
    ]
    present = [(name, mask) for name, mask in columns if mask is not None]
    code = np.zeros(n, dtype=np.int64)
    for bit, (_, mask) in enumerate(present):
        code |= mask.astype(np.int64) << bit
    combos, inverse = np.unique(code, return_inverse=True)
    shared = [
        tuple(name for bit, (name, _) in enumerate(present) if int(c) >> bit & 1) for c in combos
    ]
    # bench.qids is sorted, so its index is the query id's order.
    order = np.lexsort((np.arange(n), -share))
    return QueryTable(
        qid=bench.qids[order].astype(object),  # the report's rows: Python str, as readers expect
        pool_size=bench.pool_size[order],
        gold=bench.gold[order],
        judged=bench.judged[order],
        k=k,
        floor=expected[order],
        floor_std=std[order],
        ceiling=floor.ceiling[order],
        headroom=floor.headroom[order],
        model=model_values[order],
        noise=noise_values[order],
        z=z[order],
        floor_share=share[order],
        flags=tuple(map(shared.__getitem__, inverse[order].tolist())),
    )


def headroom(floor: Floor, model: np.ndarray | None, rng: np.random.Generator) -> Headroom:
    """Floor, ceiling and the model's mean with its bootstrap interval on one axis."""
    e = float(np.mean(floor.expected))
    c = float(np.mean(floor.ceiling))
    room = c - e
    share = e / c if c > 0 else None
    if model is None:
        return Headroom(e, c, room, share, None, None, None, None, False)
    m = float(np.mean(model))
    if len(model) >= 2 and np.ptp(model) > 0:
        mi = Interval.from_stats(quietly(stats.mean_interval, model, n_resamples=4000, rng=rng))
    else:
        mi = Interval(m, m, m)
    se = (mi.high - mi.low) / (2 * Z95)
    adjusted = None
    if room > 0:
        adjusted = Interval((m - e) / room, (mi.low - e) / room, (mi.high - e) / room)
    in_se = room / se if se > 0 else math.inf
    return Headroom(e, c, room, share, m, mi, adjusted, in_se, bool(mi.low <= e))


def power(
    model: np.ndarray,
    thresholds: Thresholds,
    other: np.ndarray | None = None,
    other_name: str | None = None,
) -> Power | None:
    r"""What ``model``'s number of queries can detect (None without a per-query variance).

    With a second run ``other`` over the same queries, the variance is that of the observed
    paired differences :math:`d_q = m_q - o_q`, :math:`s_d^2 = \sum_q (d_q - \bar d)^2/(n-1)`,
    which is what the paired t-test of a comparison divides by. Without one it is twice the
    run's own variance, :math:`2 s_m^2`: the differences of two systems with the same variance
    that are uncorrelated, an upper bound for real systems, which agree on easy and hard
    queries (positively correlated). :attr:`Power.assumption` says which.

    Examples
    --------
    >>> m = np.array([0.2, 0.5, 0.9, 0.4, 0.7, 0.1])
    >>> alone = power(m, Thresholds())
    >>> paired = power(m, Thresholds(), m - 0.05 + np.array([0.01, -0.01] * 3), "b")
    >>> alone.queries_needed > paired.queries_needed, paired.paired_with
    (True, 'b')
    """
    n = len(model)
    if n < 2:
        return None
    var = float(np.var(model, ddof=1))
    if other is not None:
        diff_var = float(np.var(model - other, ddof=1))
        assumption = (
            f"the observed per-query differences with {other_name or 'the second run'}"
            f" (variance {diff_var:.4g})"
        )
    else:
        # Two uncorrelated systems of this variance: an upper bound for positively
        # correlated ones.
        diff_var = 2.0 * var
        assumption = (
            "an assumption, as there is no second run: twice this run's per-query variance, "
            "as for an uncorrelated second system (an upper bound; pass another run for the "
            "paired estimate)"
        )
    if diff_var <= 0:
        return None
    mdd = stats.min_detectable_difference(diff_var, n)
    needed = stats.topic_set_size(thresholds.delta, diff_var)
    return Power(
        n,
        var,
        float(mdd),
        thresholds.delta,
        int(needed),
        difference_variance=diff_var,
        paired_with=other_name if other is not None else None,
        assumption=assumption,
    )
