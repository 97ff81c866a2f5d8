"""Check 2: does the score come from the vectors? A model run against a noise run.

:func:`noise_check` compares the noise run's mean with the exact floor (a z score under the
floor's exact variance, and the ratio noise / floor with its delta-method interval) and the
model with the noise run; a noise run far above its floor (``Thresholds.leak_z`` and outside
``Thresholds.ratio_band``) is a leak: something other than the vectors carries the score.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from evalvalidity.analysis.plan import Thresholds
from evalvalidity.analysis.pools import Benchmark, quietly, strings
from evalvalidity.analysis.results import Interval, NoiseCheck
from evalvalidity.core import stats
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric
from evalvalidity.io._arrow import select, to_numpy
from evalvalidity.io._arrow import strings as arrow_strings
from evalvalidity.io._compute import pc
from evalvalidity.io.tables import conform

__all__ = ["fully_tied"]


def aligned(result: Any, metric: Metric, qids: np.ndarray) -> np.ndarray:
    """A scored run's per-query values in the order of ``qids`` (0 where it has none).

    The ids are matched by Arrow's hash of their bytes: no Python dict or float per query.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from evalvalidity.core.metrics import parse_metric
    >>> scored = SimpleNamespace(qids=np.array(["a", "c"], dtype=object),
    ...                          values={"rr@10": np.array([0.5, 1.0])})
    >>> aligned(scored, parse_metric("rr@10"), np.array(["c", "b", "a"], dtype=object)).tolist()
    [1.0, 0.0, 0.5]
    """
    values = np.asarray(result.values[metric.name], dtype=np.float64)
    out = np.zeros(len(qids), dtype=np.float64)
    if len(qids) == 0 or len(values) == 0:
        return out
    at = pc.index_in(arrow_strings(qids), value_set=arrow_strings(result.qids))
    found = to_numpy(pc.is_valid(at))
    out[found] = values[to_numpy(select(at, found))]
    return out


def tied_queries(run: pa.Table) -> tuple[int, bool]:
    """Queries whose run holds tied scores, and whether any query's scores are all equal."""
    run = conform(run, "run")
    qid = strings(run.column("qid"))
    score = run.column("score").to_numpy(zero_copy_only=False)
    key_q, qinv = np.unique(qid, return_inverse=True)
    pairs = np.unique(np.stack([qinv.astype(np.float64), score]), axis=1)
    distinct = np.bincount(pairs[0].astype(np.int64), minlength=len(key_q))
    rows = np.bincount(qinv, minlength=len(key_q))
    return int(np.sum(distinct < rows)), bool(np.any((distinct == 1) & (rows > 1)))


def fully_tied(run: pa.Table) -> bool:
    """Whether every query of ``run`` with more than one row gives all its rows one score.

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["a", "b", "a", "b"],
    ...                 "score": [0.5, 0.5, 0.2, 0.2]})
    >>> fully_tied(run)
    True
    """
    run = conform(run, "run")
    qid = strings(run.column("qid"))
    score = run.column("score").to_numpy(zero_copy_only=False)
    key_q, qinv = np.unique(qid, return_inverse=True)
    pairs = np.unique(np.stack([qinv.astype(np.float64), score]), axis=1)
    distinct = np.bincount(pairs[0].astype(np.int64), minlength=len(key_q))
    rows = np.bincount(qinv, minlength=len(key_q))
    several = rows > 1
    return bool(several.any() and np.all(distinct[several] == 1))


def _leak_test(
    values: np.ndarray, floor: Floor, thresholds: Thresholds
) -> tuple[float, Interval, bool]:
    """The z score against the floor, the ratio to it and whether ``values`` are a leak."""
    expected = floor.expected
    z = quietly(stats.z_against_floor, float(np.mean(values)), expected, floor.variance)
    # Under the null hypothesis (the noise run is a random ranking) the per-query variance is
    # known exactly; the sample variance of a skewed metric like RR understates it.
    ratio = (
        Interval.from_stats(
            quietly(
                stats.ratio_interval,
                values,
                denominator_exact=expected,
                numerator_variance=floor.variance,
                method="delta",
            ),
            positive=True,
        )
        if float(np.mean(expected)) > 0 and len(values) >= 2
        else Interval(math.nan, math.nan, math.nan)
    )
    leak = bool(z.z >= thresholds.leak_z and ratio.low > thresholds.ratio_band[1])
    return float(z.z), ratio, leak


def noise_check(
    bench: Benchmark,
    floor: Floor,
    metric: Metric,
    model: np.ndarray | None,
    noise: np.ndarray,
    source: str,
    thresholds: Thresholds,
    rng: np.random.Generator,
    tied: int = 0,
    tie_aware: float | None = None,
    components_off: tuple[str, ...] | None = None,
    all_tied: bool = False,
    file_order: np.ndarray | None = None,
) -> NoiseCheck:
    """Check 2 on per-query values of a noise run (and of the model, when there is one).

    ``file_order`` holds the noise run's per-query values in the file's own order when the
    check averages over ties: a leak there is reported even if the averaged values are not.
    """
    expected = floor.expected
    floor_mean = float(np.mean(expected))
    noise_mean = float(np.mean(noise))
    noise_z, noise_over_floor, leak = _leak_test(noise, floor, thresholds)
    file_order_leak = False
    if file_order is not None:
        file_order_leak = _leak_test(file_order, floor, thresholds)[2]
    model_over_noise = None
    model_over_floor = None
    model_mean = None
    if model is not None:
        model_mean = float(np.mean(model))
        if noise_mean > 0 and len(model) >= 2:
            model_over_noise = Interval.from_stats(
                quietly(stats.ratio_interval, model, noise, method="delta"), positive=True
            )
        if floor_mean > 0 and len(model) >= 2:
            model_over_floor = Interval.from_stats(
                quietly(stats.ratio_interval, model, denominator_exact=expected, method="delta")
            )
    return NoiseCheck(
        source=source,
        model=model_mean,
        noise=noise_mean,
        floor=floor_mean,
        model_over_noise=model_over_noise,
        noise_over_floor=noise_over_floor,
        model_over_floor=model_over_floor,
        noise_z=noise_z,
        leak=leak,
        per_query_noise=noise,
        tied_queries=tied,
        tie_aware_noise=tie_aware,
        components_off=components_off,
        all_tied=all_tied,
        file_order_noise=float(np.mean(file_order)) if file_order is not None else None,
        file_order_leak=file_order_leak,
    )
