"""The frozen results of a benchmark check: what the report layer and the dashboard read.

:class:`CheckResult` holds everything :func:`~evalvalidity.analysis.check.check_benchmark`
found, with the :class:`~evalvalidity.analysis.plan.CheckPlan` it ran; the other classes are its
parts, one per check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalvalidity.analysis.plan import CheckPlan, PoolKind, Severity, Verdict
from evalvalidity.core import stats
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric

if TYPE_CHECKING:
    from evalvalidity.analysis.results_nulls import OtherNulls

__all__ = [
    "SCHEMA_VERSION",
    "CheckResult",
    "Comparison",
    "GoldClass",
    "HarnessCheck",
    "Headroom",
    "InferredPoolSizeCheck",
    "Interval",
    "NoiseCheck",
    "Power",
    "QueryTable",
    "Reason",
]

#: Version of the JSON the ``check`` command prints; bumped on any incompatible change.
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Reason:
    """One finding behind the verdict, with the numbers it rests on."""

    severity: Severity
    code: str
    message: str
    numbers: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Interval:
    """A ratio or mean with its 95 % interval."""

    estimate: float
    low: float
    high: float

    def contains(self, value: float) -> bool:
        """Tell whether the interval covers ``value``."""
        return self.low <= value <= self.high

    @classmethod
    def from_stats(cls, value: stats.Interval, *, positive: bool = False) -> Interval:
        """Convert a :class:`evalvalidity.core.stats.Interval`; ``positive`` clips the low end at 0.

        Examples
        --------
        >>> Interval.from_stats(stats.Interval(0.5, -0.1, 1.1, 0.95, "delta"), positive=True)
        Interval(estimate=0.5, low=0.0, high=1.1)
        """
        low = max(float(value.low), 0.0) if positive else float(value.low)
        return cls(float(value.estimate), low, float(value.high))

    def format(self, digits: int = 2) -> str:
        """Format as ``'0.98 [0.93, 1.04]'``."""
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


@dataclass(frozen=True)
class HarnessCheck:
    """Check 1: random scores through a scorer against the exact floor.

    ``sample_values`` and ``sample_weights`` are the per-(query, seed) metric values and their
    importance weights (all 1 for plain draws and harness output): the measured distribution.
    """

    source: str  # "builtin" or "harness-output"
    measured: float
    analytic: float
    ratio: Interval
    std_error: float
    n_queries: int
    n_seeds: int
    n_draws: int
    importance_sampled: bool
    passed: bool
    per_query_measured: np.ndarray
    sample_values: np.ndarray
    sample_weights: np.ndarray
    missing_queries: tuple[str, ...] = ()
    ignored_queries: int = 0
    measure: str | None = None
    depth: int | None = None  # items per query of the random runs (None: the whole pool)
    implied_depth: int | None = None  # the depth the harness's values match, when not depth
    missing_values: int = 0  # (query, seed) values the harness output lacks
    expected_values: int = 0  # queries x seeds
    zeros_left_out: bool = False  # the missing values were counted as 0


@dataclass(frozen=True)
class NoiseCheck:
    """Check 2: a model run against a noise run (or a live noise test).

    ``all_tied``: every query's scores are all equal, so the order is the tie-breaking's alone.
    ``file_order_noise`` and ``file_order_leak``: under ``ties="average"``, what the file's own
    order (its rank column) scores, and whether that would be a leak.
    """

    source: str  # "noise-run" or "live"
    model: float | None
    noise: float
    floor: float
    model_over_noise: Interval | None
    noise_over_floor: Interval
    model_over_floor: Interval | None
    noise_z: float
    leak: bool
    per_query_noise: np.ndarray
    tied_queries: int = 0
    tie_aware_noise: float | None = None
    components_off: tuple[str, ...] | None = None
    all_tied: bool = False
    file_order_noise: float | None = None
    file_order_leak: bool = False


@dataclass(frozen=True)
class GoldClass:
    """The inferred pool size for the queries sharing one gold count."""

    gold: int
    n_queries: int
    measured: float
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class InferredPoolSizeCheck:
    """The pool size a measured random score implies, against the declared pool."""

    source: str
    measured: float
    estimate: float
    low: float
    high: float
    saturated: bool
    declared_pool: float | None
    declared_chunks: int | None
    declared_documents: int | None
    by_gold: tuple[GoldClass, ...]
    diagnosis: str | None


@dataclass(frozen=True)
class Headroom:
    """Floor, ceiling and the model's score on one axis."""

    floor: float
    ceiling: float
    headroom: float
    floor_over_ceiling: float | None
    model: float | None
    model_interval: Interval | None
    adjusted: Interval | None
    headroom_in_se: float | None
    at_or_below_floor: bool


@dataclass(frozen=True)
class Power:
    """What the benchmark can detect.

    ``difference_variance`` is the per-query variance of the paired differences the figures
    rest on: observed against ``paired_with`` when a second run was given, else assumed;
    ``assumption`` says which, in words.
    """

    n_queries: int
    per_query_variance: float
    min_detectable_difference: float
    delta: float
    queries_needed: int
    alpha: float = 0.05
    power: float = 0.8
    difference_variance: float = float("nan")
    paired_with: str | None = None
    assumption: str = ""


@dataclass(frozen=True)
class QueryTable:
    """Per-query triage rows, in the order of each query's share of the mean floor."""

    qid: np.ndarray
    pool_size: np.ndarray
    gold: np.ndarray
    judged: np.ndarray
    k: int | None
    floor: np.ndarray
    floor_std: np.ndarray
    ceiling: np.ndarray
    headroom: np.ndarray
    model: np.ndarray
    noise: np.ndarray
    z: np.ndarray
    floor_share: np.ndarray
    flags: tuple[tuple[str, ...], ...]

    def __len__(self) -> int:
        return len(self.qid)


@dataclass(frozen=True)
class Comparison:
    """Several runs compared over the same queries."""

    runs: tuple[str, ...]
    means: tuple[float, ...]
    table: stats.RunComparison


@dataclass(frozen=True)
class CheckResult:
    """Everything :func:`check_benchmark` found; the report layer turns it into records."""

    schema_version: int
    metric: Metric
    verdict: Verdict
    reasons: tuple[Reason, ...]
    run_name: str | None
    n_queries: int
    pool_kind: PoolKind
    declared_pool: float | None
    declared_chunks: int | None
    declared_documents: int | None
    floor_method: str
    floor: Floor
    headroom: Headroom
    harness: HarnessCheck | None
    noise: NoiseCheck | None
    live: NoiseCheck | None
    inferred_n: InferredPoolSizeCheck | None
    power: Power | None
    comparison: Comparison | None
    queries: QueryTable
    flat_mean: float | None
    adjusted_mean: float | None
    multi_gold_floor_share: float
    notes: tuple[str, ...]
    plan: CheckPlan | None = None
    nulls: OtherNulls | None = None

    @property
    def model_score(self) -> float | None:
        """The model's mean score."""
        return self.headroom.model
