r"""The regression gate: a new run against a recorded check, with an allowed drop.

A recorded check is the JSON of ``evalvalidity check --format json``
(:func:`evalvalidity.report.records.to_dict`): :func:`baseline_from_record` reads its metric,
run, mean and per-query scores. :func:`regression_gate` pairs the new check's per-query scores
with the baseline's over the queries both hold, :math:`d_i = \text{new}_i - \text{old}_i`, and
tests

.. math:: H_0: \delta \ge -\text{allowed\_drop} \quad\text{against}\quad
          H_1: \delta < -\text{allowed\_drop}

by the one-sided t test of the mean difference with a CR1 sandwich standard error over G
clusters (G = n without groups, where it is the paired t test):
:math:`T = (\bar d + \text{allowed\_drop}) / \widehat{SE}`, :math:`p = F_{t, G-1}(T)`. The gate
fails when :math:`p \le \alpha`: a change that loses no more than the allowed drop fails it
with probability at most α; with ``sequential=True`` the decision is the anytime-valid
:func:`evalvalidity.core.sequential.sequential_gate` over the differences in evaluation order
(cluster means in order of each cluster's first query when clustered), which may be read after
every query ("evaluate until decided").

Examples
--------
>>> record = {"schema_version": 1, "metric": "rr@10", "run": "old", "model_score": 0.5,
...           "queries": [{"qid": "q1", "model": 0.5}, {"qid": "q2", "model": 1.0}]}
>>> base = baseline_from_record(record, "old.json")
>>> base.run, base.mean, base.scores
('old', 0.5, {'q1': 0.5, 'q2': 1.0})
>>> parse_allowed_drop(["rr@10=2%", "ndcg@10=0.01"], "rr@10", 0.5)
0.01
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from evalvalidity.analysis.compare import QueryClusters
from evalvalidity.analysis.results import CheckResult
from evalvalidity.core._validate import _choice
from evalvalidity.core.clustered import _cluster_codes, _sandwich_variance
from evalvalidity.core.metrics import parse_metric
from evalvalidity.core.sequential import GateDecision, sequential_gate
from evalvalidity.errors import ParameterError

__all__ = [
    "Baseline",
    "GateResult",
    "QueryChange",
    "baseline_from_record",
    "parse_allowed_drop",
    "regression_gate",
]


@dataclass(frozen=True)
class Baseline:
    """A recorded check, as far as the gate needs it.

    Attributes
    ----------
    name : str
        Where it came from (a file name), for messages.
    metric : str
    run : str or None
    mean : float or None
        The recorded model score.
    verdict : str or None
    scores : dict of str to float
        The model's per-query scores, by query id.
    """

    name: str
    metric: str
    run: str | None
    mean: float | None
    verdict: str | None
    scores: dict[str, float]


def baseline_from_record(record: Any, name: str = "the baseline") -> Baseline:
    """Read a recorded check (the ``check --format json`` contract) as a :class:`Baseline`.

    Raises
    ------
    ParameterError
        When ``record`` is not a check record of schema version 1, or holds no per-query
        model scores (a check without a run).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import check_tables
    >>> from evalvalidity.analysis.plan import PoolSpec
    >>> from evalvalidity.report.records import to_dict
    >>> qids = [f"q{i}" for i in range(8)]
    >>> qrels = pa.table({"qid": qids, "docid": [f"{q}-gold" for q in qids], "rel": [1] * 8})
    >>> def run(gold_first):
    ...     order = ("gold", "x") if gold_first else ("x", "gold")
    ...     return pa.table({"qid": [q for q in qids for _ in order],
    ...                      "docid": [f"{q}-{d}" for q in qids for d in order],
    ...                      "score": [2.0, 1.0] * len(qids)})
    >>> old = check_tables(run(True), qrels, pool=PoolSpec(corpus_size=100), seeds=8)
    >>> baseline = baseline_from_record(to_dict(old), "previous.json")
    >>> baseline.metric, baseline.mean, len(baseline.scores)
    ('rr@10', 1.0, 8)
    """
    if not isinstance(record, Mapping) or "queries" not in record or "metric" not in record:
        raise ParameterError(
            f"{name} is not a check record (the JSON of 'evalvalidity check --format json')."
        )
    version = record.get("schema_version")
    if version != 1:
        raise ParameterError(
            f"{name} is a check record of schema version {version!r}; this version of "
            "evalvalidity reads schema version 1."
        )
    rows = record["queries"]
    if not isinstance(rows, list):
        raise ParameterError(f"The 'queries' of {name} must be a list. Got {type(rows).__name__}.")
    scores: dict[str, float] = {}
    for position, row in enumerate(rows):
        if not isinstance(row, Mapping) or "qid" not in row or "model" not in row:
            raise ParameterError(f"Query row {position} of {name} lacks 'qid' or 'model'.")
        value = row["model"]
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParameterError(
                f"The model score of query {row['qid']!r} in {name} must be a number. "
                f"Got {value!r} instead."
            )
        scores[str(row["qid"])] = float(value)
    if not scores:
        raise ParameterError(f"{name} holds no per-query model scores: was it checked with a run?")
    mean = record.get("model_score")
    return Baseline(
        name=name,
        metric=str(record["metric"]),
        run=record.get("run"),
        mean=float(mean) if isinstance(mean, int | float) else None,
        verdict=record.get("verdict"),
        scores=scores,
    )


def parse_allowed_drop(specs: Sequence[str] | None, metric: str, baseline_mean: float) -> float:
    """The allowed drop for ``metric`` from ``--allowed-drop`` values.

    Each value is ``DROP`` (any metric) or ``METRIC=DROP``; a DROP ending in ``%`` is relative
    to the baseline's mean. A value naming the metric wins over a bare one; none gives 0.

    Raises
    ------
    ParameterError
        On a value that is not a number >= 0 (or a percentage), or an unknown metric.

    Examples
    --------
    >>> parse_allowed_drop(["0.02"], "rr@10", 0.4), parse_allowed_drop(["5%"], "rr@10", 0.4)
    (0.02, 0.02)
    >>> parse_allowed_drop(None, "rr@10", 0.4)
    0.0
    """
    name = parse_metric(metric).name
    general: float | None = None
    specific: float | None = None
    for spec in specs or ():
        target, _, amount = spec.rpartition("=")
        text = amount.strip()
        relative = text.endswith("%")
        try:
            value = float(text[:-1] if relative else text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise ParameterError(
                f"--allowed-drop must be a number >= 0 or a percentage, optionally after "
                f"METRIC=. Got {spec!r} instead."
            )
        drop = value * baseline_mean / 100.0 if relative else value
        if target:
            if parse_metric(target.strip()).name == name:
                specific = drop
        else:
            general = drop
    if specific is not None:
        return specific
    return general if general is not None else 0.0


@dataclass(frozen=True)
class QueryChange:
    """One query's score before and after."""

    qid: str
    baseline: float
    new: float
    difference: float


@dataclass(frozen=True)
class GateResult:
    r"""The regression gate's decision and the numbers it rests on.

    Attributes
    ----------
    metric : str
    baseline_name, baseline_run, run : str or None
    baseline_mean, new_mean : float
        Means over the common queries.
    difference : float
        :math:`\bar d`, new minus baseline.
    low, high : float
        Two-sided (1 - 2α) interval of δ, so ``high`` is the one-sided upper bound the test
        compares with ``-allowed_drop``.
    standard_error : float
        CR1 sandwich standard error of :math:`\bar d`.
    p_value : float
        One-sided p of :math:`H_0: \delta \ge -\text{allowed\_drop}`.
    allowed_drop, alpha : float
    regressed : bool
        ``p_value <= alpha`` (or the sequential decision is ``regressed``).
    n_common, only_baseline, only_new, n_clusters : int
    worst : tuple of QueryChange
        The most regressed queries, largest fall first.
    sequential : GateDecision or None
    undecided : {"pass", "fail"}
        What a sequential decision of ``"undecided"`` (the queries ran out first) does to the
        gate.
    """

    metric: str
    baseline_name: str
    baseline_run: str | None
    run: str | None
    baseline_mean: float
    new_mean: float
    difference: float
    low: float
    high: float
    standard_error: float
    p_value: float
    allowed_drop: float
    alpha: float
    regressed: bool
    n_common: int
    only_baseline: int
    only_new: int
    n_clusters: int
    worst: tuple[QueryChange, ...]
    sequential: GateDecision | None = None
    undecided: str = "pass"

    @property
    def is_undecided(self) -> bool:
        """The sequential gate ran out of queries before it decided."""
        return self.sequential is not None and self.sequential.decision == "undecided"

    @property
    def passed(self) -> bool:
        """Not regressed, and not undecided when ``undecided="fail"``."""
        return not self.regressed and not (self.is_undecided and self.undecided == "fail")


def regression_gate(
    baseline: Baseline,
    result: CheckResult,
    *,
    allowed_drop: float = 0.0,
    alpha: float = 0.05,
    clusters: QueryClusters | None = None,
    sequential: bool = False,
    undecided: str = "pass",
    top: int = 10,
) -> GateResult:
    r"""Compare a new check's per-query scores with a recorded check's.

    Parameters
    ----------
    baseline : Baseline
        From :func:`baseline_from_record`.
    result : CheckResult
        The new check (with a run, on the same metric).
    allowed_drop : float, default 0.0
        The largest fall of the mean tolerated, in the metric's units.
    alpha : float, default 0.05
    clusters : QueryClusters, optional
        Clusters of ``result.queries.qid``; the test then treats clusters as independent.
    sequential : bool, default False
        Decide by the anytime-valid confidence sequence instead of the t test.
    undecided : {"pass", "fail"}, default "pass"
        With ``sequential``: whether the gate passes or fails when the queries run out before
        the sequence decides (``GateResult.passed``); "fail" asks for evidence of no
        regression, "pass" only refuses evidence of one.
    top : int, default 10
        How many of the most regressed queries to keep.

    Raises
    ------
    ParameterError
        On different metrics, a check without a run, or fewer than two common queries.

    Examples
    --------
    A run that moved every gold item from rank 1 to rank 2 (RR 1 → 0.5), against a recorded
    check of the first (``old``, ``run`` and ``qrels`` as in :func:`baseline_from_record`):

    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import check_tables
    >>> from evalvalidity.analysis.plan import PoolSpec
    >>> from evalvalidity.report.records import to_dict
    >>> qids = [f"q{i}" for i in range(8)]
    >>> qrels = pa.table({"qid": qids, "docid": [f"{q}-gold" for q in qids], "rel": [1] * 8})
    >>> def run(gold_first):
    ...     order = ("gold", "x") if gold_first else ("x", "gold")
    ...     return pa.table({"qid": [q for q in qids for _ in order],
    ...                      "docid": [f"{q}-{d}" for q in qids for d in order],
    ...                      "score": [2.0, 1.0] * len(qids)})
    >>> pool = PoolSpec(corpus_size=100)
    >>> old = check_tables(run(True), qrels, pool=pool, seeds=8)
    >>> new = check_tables(run(False), qrels, pool=pool, seeds=8)
    >>> gate = regression_gate(baseline_from_record(to_dict(old)), new, allowed_drop=0.1)
    >>> gate.regressed, gate.difference, gate.n_common
    (True, -0.5, 8)
    """
    func = "regression_gate"
    if result.run_name is None:
        raise ParameterError("The regression gate needs a check with a run (--run).")
    if parse_metric(baseline.metric).name != result.metric.name:
        raise ParameterError(
            f"{baseline.name} measured {baseline.metric} but this check measures "
            f"{result.metric.name}; compare like with like (--metric {baseline.metric})."
        )
    if isinstance(allowed_drop, bool) or not math.isfinite(allowed_drop) or allowed_drop < 0:
        raise ParameterError(
            f"The 'allowed_drop' parameter of {func} must be a finite float >= 0. "
            f"Got {allowed_drop!r} instead."
        )
    if not 0.0 < alpha < 1.0:
        raise ParameterError(
            f"The 'alpha' parameter of {func} must be a float in (0, 1). Got {alpha!r} instead."
        )
    undecided = _choice(undecided, ("pass", "fail"), "undecided", func)
    qids = [str(q) for q in result.queries.qid.tolist()]
    model = np.asarray(result.queries.model, dtype=np.float64)
    keep = np.array([q in baseline.scores for q in qids], dtype=bool)
    n_common = int(keep.sum())
    if n_common < 2:
        raise ParameterError(
            f"{baseline.name} and this check share {n_common} quer{'y' if n_common == 1 else 'ies'}; "
            "the gate needs at least 2 (are they the same benchmark?)."
        )
    common = [q for q, k in zip(qids, keep, strict=True) if k]
    old = np.array([baseline.scores[q] for q in common])
    new = model[keep]
    d = new - old
    if clusters is None:
        codes, n_clusters = np.arange(n_common, dtype=np.int64), n_common
    else:
        codes, n_clusters = _cluster_codes(clusters.labels[keep], n_common, func)
    if n_clusters < 2:
        raise ParameterError(
            f"The common queries of {func} fall in {n_clusters} cluster; the gate needs 2."
        )
    mean_d = float(np.mean(d))
    se = float(np.sqrt(_sandwich_variance(d[:, None], codes, n_clusters)[0]))
    df = n_clusters - 1
    t_crit = float(sps.t.ppf(1.0 - alpha, df))
    if se > 0:
        p = float(sps.t.cdf((mean_d + allowed_drop) / se, df))
    else:
        p = 0.0 if mean_d < -allowed_drop else 1.0
    decision = None
    regressed = p <= alpha
    if sequential:
        if clusters is None:
            ordered = d
        else:
            first = np.full(n_clusters, n_common, dtype=np.int64)
            np.minimum.at(first, codes, np.arange(n_common))
            sums = np.bincount(codes, weights=d, minlength=n_clusters)
            sizes = np.bincount(codes, minlength=n_clusters)
            ordered = (sums / sizes)[np.argsort(first, kind="stable")]
        if np.any(np.abs(ordered) > 1.0):
            raise ParameterError(
                f"--sequential needs differences within [-1, 1]; {result.metric.name} "
                "differences reach beyond it."
            )
        decision = sequential_gate(ordered, allowed_drop=allowed_drop, alpha=alpha)
        regressed = decision.decision == "regressed"
    order = np.argsort(d, kind="stable")[: max(top, 0)]
    worst = tuple(
        QueryChange(common[i], float(old[i]), float(new[i]), float(d[i])) for i in order if d[i] < 0
    )
    return GateResult(
        metric=result.metric.name,
        baseline_name=baseline.name,
        baseline_run=baseline.run,
        run=result.run_name,
        baseline_mean=float(np.mean(old)),
        new_mean=float(np.mean(new)),
        difference=mean_d,
        low=mean_d - t_crit * se,
        high=mean_d + t_crit * se,
        standard_error=se,
        p_value=p,
        allowed_drop=float(allowed_drop),
        alpha=float(alpha),
        regressed=bool(regressed),
        n_common=n_common,
        only_baseline=len(set(baseline.scores) - set(qids)),
        only_new=len(qids) - n_common,
        n_clusters=n_clusters,
        worst=worst,
        sequential=decision,
        undecided=undecided,
    )
