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
from evalvalidity.io.tables import conform

__all__ = ["aligned", "noise_check", "tied_queries"]


def aligned(result: Any, metric: Metric, qids: np.ndarray) -> np.ndarray:
    """A scored run's per-query values in the order of ``qids`` (0 where it has none)."""
    lookup = dict(zip(result.qids.tolist(), result.values[metric.name].tolist(), strict=True))
    return np.array([lookup.get(q, 0.0) for q in qids.tolist()], dtype=np.float64)


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
) -> NoiseCheck:
    """Check 2 on per-query values of a noise run (and of the model, when there is one)."""
    expected = floor.expected
    floor_mean = float(np.mean(expected))
    noise_mean = float(np.mean(noise))
    z = quietly(stats.z_against_floor, noise_mean, expected, floor.variance)
    # Under the null hypothesis (the noise run is a random ranking) the per-query variance is
    # known exactly; the sample variance of a skewed metric like RR understates it.
    noise_over_floor = (
        Interval.from_stats(
            quietly(
                stats.ratio_interval,
                noise,
                denominator_exact=expected,
                numerator_variance=floor.variance,
                method="delta",
            ),
            positive=True,
        )
        if floor_mean > 0 and len(noise) >= 2
        else Interval(math.nan, math.nan, math.nan)
    )
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
    hi = thresholds.ratio_band[1]
    leak = bool(z.z >= thresholds.leak_z and noise_over_floor.low > hi)
    return NoiseCheck(
        source=source,
        model=model_mean,
        noise=noise_mean,
        floor=floor_mean,
        model_over_noise=model_over_noise,
        noise_over_floor=noise_over_floor,
        model_over_floor=model_over_floor,
        noise_z=float(z.z),
        leak=leak,
        per_query_noise=noise,
        tied_queries=tied,
        tie_aware_noise=tie_aware,
        components_off=components_off,
    )
