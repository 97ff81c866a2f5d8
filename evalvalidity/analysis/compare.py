r"""Deciding between runs: clustered statistics of a check, and a leaderboard over its runs.

- :func:`query_clusters`: the cluster of each query, from a groups mapping (``qid -> group``)
  or from shared gold documents (queries linked by a chain of shared gold are one cluster).
- :func:`clustered_stats`: the model's mean with a cluster-robust (CR1 sandwich) interval beside
  the naive one, the design effect, and the smallest detectable difference and queries needed
  with the effective number of queries :math:`n / \text{deff}` (docs/math.md, Intervals).
- :func:`check_scores`: per-query scores of a check's run and of the runs it compares, in the
  order of the check's triage table.
- :func:`run_leaderboard`: :func:`evalvalidity.core.leaderboard.leaderboard` over those runs,
  with the check's per-query floors and ceilings (the chance-adjusted score) and, optionally,
  the clusters.

Examples
--------
>>> import numpy as np
>>> qids = np.array(["a1", "a2", "b1", "b2"])
>>> found = query_clusters(qids, groups={"a1": "A", "a2": "A", "b1": "B"})
>>> found.labels[:3].tolist(), found.n_clusters, found.ungrouped
(['A', 'A', 'B'], 3, 1)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.analysis.check2 import aligned
from evalvalidity.analysis.plan import CheckInputs, CheckPlan, Thresholds
from evalvalidity.analysis.pools import strings
from evalvalidity.analysis.results import CheckResult
from evalvalidity.core.clustered import (
    cluster_mean_interval,
    clustered_min_detectable_difference,
    clustered_topic_set_size,
    clusters_from_shared_gold,
    design_effect,
)
from evalvalidity.core.leaderboard import Leaderboard, leaderboard
from evalvalidity.core.metrics import parse_metric
from evalvalidity.core.stats import min_detectable_difference, topic_set_size
from evalvalidity.errors import EvalValidityWarning, ParameterError
from evalvalidity.io.scoring import score_run
from evalvalidity.io.tables import conform

__all__ = [
    "ClusteredStats",
    "QueryClusters",
    "check_scores",
    "clustered_stats",
    "query_clusters",
    "run_leaderboard",
]

#: Prefix of the label of a query the groups leave out: it forms a cluster of its own, and no
#: user's group name starts with a NUL character.
_SINGLETON = "\x00"


@dataclass(frozen=True)
class QueryClusters:
    """The cluster of each query of a check.

    Attributes
    ----------
    labels : ndarray of str, shape (n,)
        One label per query, in the order of the qids given.
    source : {"groups", "shared-gold"}
    n_clusters : int
    ungrouped : int
        Queries the groups left out; each is a cluster of its own.
    unknown : int
        Query ids of the groups that the check does not hold (ignored).
    """

    labels: np.ndarray
    source: str
    n_clusters: int
    ungrouped: int = 0
    unknown: int = 0


def query_clusters(
    qids: Any, *, groups: Mapping[str, str] | None = None, qrels: pa.Table | None = None
) -> QueryClusters:
    """The clusters of ``qids``: from ``groups`` if given, else from shared gold in ``qrels``.

    Parameters
    ----------
    qids : array_like of str
        The check's query ids (e.g. ``result.queries.qid``).
    groups : mapping of str to str, optional
        Group of each query (a groups file, :func:`evalvalidity.io.groups.read_groups`).
        A query it leaves out is a cluster of its own.
    qrels : pyarrow.Table, optional
        The judgements: queries sharing a gold document (rel > 0), directly or through other
        queries, form one cluster.

    Raises
    ------
    ParameterError
        With neither ``groups`` nor ``qrels``, or with groups naming none of the queries.

    Examples
    --------
    >>> qrels = pa.table({"qid": ["1", "2", "3"], "docid": ["d", "d", "e"], "rel": [1, 2, 1]})
    >>> found = query_clusters(np.array(["1", "2", "3"]), qrels=qrels)
    >>> found.labels.tolist(), found.n_clusters, found.source
    (['0', '0', '1'], 2, 'shared-gold')
    """
    ids = np.asarray(qids).astype(str)
    if groups is not None:
        labels = np.array([groups.get(q, _SINGLETON + q) for q in ids.tolist()], dtype=object)
        ungrouped = int(sum(1 for q in ids.tolist() if q not in groups))
        if ids.size and ungrouped == ids.size:
            raise ParameterError(
                f"The groups name none of the check's {ids.size:,} queries; are the query ids "
                "the judgements' ids?"
            )
        known = set(ids.tolist())
        unknown = sum(1 for q in groups if q not in known)
        labels = labels.astype(str)
        return QueryClusters(labels, "groups", int(np.unique(labels).size), ungrouped, unknown)
    if qrels is None:
        raise ParameterError("query_clusters needs 'groups' or 'qrels'.")
    table = conform(qrels, "qrels")
    positive = table.filter(pc.greater(table.column("rel"), 0))
    index = {q: i for i, q in enumerate(ids.tolist())}
    qid_column = strings(positive.column("qid"))
    doc_column = strings(positive.column("docid"))
    keep = np.array([q in index for q in qid_column.tolist()], dtype=bool)
    rows = np.array([index[q] for q in qid_column[keep].tolist()], dtype=np.int64)
    _, doc_codes = np.unique(doc_column[keep], return_inverse=True)
    pairs = np.stack([rows, doc_codes.astype(np.int64).ravel()], axis=1)
    codes = clusters_from_shared_gold(pairs, n_queries=max(ids.size, 1))[: ids.size]
    labels = codes.astype(str)
    return QueryClusters(labels, "shared-gold", int(np.unique(codes).size))


@dataclass(frozen=True)
class ClusteredStats:
    r"""The model's mean, power and queries-needed when the queries are clustered.

    Attributes
    ----------
    source : str
        Where the clusters came from (``groups`` or ``shared-gold``).
    n_queries, n_clusters, ungrouped : int
    mean : float
    low, high : float
        The 95 % CR1 sandwich interval of the mean (t with G - 1 degrees of freedom).
    naive_low, naive_high : float
        The Student t interval that treats the queries as independent.
    standard_error, naive_standard_error : float
    design_effect : float
        Clustered over naive variance of the mean.
    icc : float
        Intra-cluster correlation (one-way ANOVA estimator); NaN with singleton clusters only.
    effective_n : float
        :math:`n / \text{deff}`.
    min_detectable_difference, naive_min_detectable_difference : float
        Of a paired difference with variance :math:`2 s^2`, with :math:`n / \text{deff}` and
        with n queries (two-sided α = 0.05, power 0.8).
    delta : float
    queries_needed, naive_queries_needed : int
        Queries to detect ``delta``, clustered like these and independent.
    """

    source: str
    n_queries: int
    n_clusters: int
    ungrouped: int
    mean: float
    low: float
    high: float
    naive_low: float
    naive_high: float
    standard_error: float
    naive_standard_error: float
    design_effect: float
    icc: float
    effective_n: float
    min_detectable_difference: float
    naive_min_detectable_difference: float
    delta: float
    queries_needed: int
    naive_queries_needed: int


def clustered_stats(
    result: CheckResult, clusters: QueryClusters, thresholds: Thresholds | None = None
) -> ClusteredStats | None:
    r"""Cluster-robust statistics of a check's model scores.

    With per-query scores :math:`x_i` in G clusters, the mean's CR1 sandwich interval is
    :math:`\bar x \pm t_{0.975, G-1} \sqrt{\hat V}`, :math:`\hat V = \frac{G}{G-1}
    \sum_g (\sum_{i \in g} (x_i - \bar x))^2 / n^2`, and the design effect is
    :math:`\text{deff} = \hat V / (s^2 / n)`. The power analysis plans a paired difference of
    two systems with variance :math:`2 s^2` (as the check's own power does) over
    :math:`n / \text{deff}` independent queries.

    Returns None when the check has no model run, fewer than two clusters or constant scores.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import check_tables
    >>> from evalvalidity.analysis.plan import PoolSpec
    >>> qrels = pa.table({"qid": [f"q{i}" for i in range(8)], "docid": ["d"] * 8, "rel": [1] * 8})
    >>> run = pa.table({"qid": [f"q{i}" for i in range(8)], "docid": ["d"] * 4 + ["x"] * 4,
    ...                 "rank": [1] * 8, "score": [1.0] * 8})
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=4)
    >>> groups = {f"q{i}": "A" if i < 4 else "B" for i in range(8)}
    >>> found = clustered_stats(result, query_clusters(result.queries.qid, groups=groups))
    >>> found.n_clusters, round(found.design_effect, 2), found.high - found.low > 1.0
    (2, 7.0, True)
    """
    thresholds = thresholds or (result.plan.thresholds if result.plan else Thresholds())
    model = result.queries.model
    if result.run_name is None or model.size < 2 or not np.all(np.isfinite(model)):
        return None
    if clusters.labels.size != model.size:
        raise ParameterError(
            f"The clusters hold {clusters.labels.size:,} labels for the check's "
            f"{model.size:,} queries."
        )
    if clusters.n_clusters < 2 or float(np.ptp(model)) == 0.0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        robust = cluster_mean_interval(model, clusters.labels)
        effect = design_effect(model, clusters.labels)
    n = int(model.size)
    naive_se = robust.naive_standard_error
    from scipy import stats as sps

    t_naive = float(sps.t.ppf(0.975, n - 1))
    mean = float(np.mean(model))
    deff = float(robust.design_effect)
    variance = 2.0 * float(np.var(model, ddof=1))
    naive_mdd = float(min_detectable_difference(variance, n))
    naive_needed = int(topic_set_size(thresholds.delta, variance))
    if math.isfinite(deff) and deff > 0 and n / deff >= 2.0:
        mdd = float(clustered_min_detectable_difference(variance, n, deff))
        needed = int(clustered_topic_set_size(thresholds.delta, variance, deff))
    else:
        mdd, needed = math.inf, 0
    return ClusteredStats(
        source=clusters.source,
        n_queries=n,
        n_clusters=clusters.n_clusters,
        ungrouped=clusters.ungrouped,
        mean=mean,
        low=float(robust.interval.low),
        high=float(robust.interval.high),
        naive_low=mean - t_naive * naive_se,
        naive_high=mean + t_naive * naive_se,
        standard_error=float(robust.standard_error),
        naive_standard_error=float(naive_se),
        design_effect=deff,
        icc=float(effect.icc),
        effective_n=float(n / deff) if deff > 0 else math.nan,
        min_detectable_difference=mdd,
        naive_min_detectable_difference=naive_mdd,
        delta=float(thresholds.delta),
        queries_needed=needed,
        naive_queries_needed=naive_needed,
    )


def per_query_scores(
    runs: Mapping[str, pa.Table],
    qrels: pa.Table,
    qids: Any,
    *,
    metric: str,
    units: pa.Table | None = None,
    ties: str = "trec_eval",
) -> dict[str, np.ndarray]:
    """Score each run and align its per-query values to ``qids`` (0 for an unranked query)."""
    parsed = parse_metric(metric)
    order = np.asarray(qids)
    out: dict[str, np.ndarray] = {}
    for name, run in runs.items():
        scored = score_run(run, qrels, [parsed], units=units, ties=ties, run_name=name)
        out[name] = aligned(scored, parsed, order)
    return out


def check_scores(
    plan: CheckPlan, inputs: CheckInputs, result: CheckResult
) -> dict[str, np.ndarray]:
    """Per-query scores of the plan's run and of the runs it compares, in triage order.

    The run's own values are the check's (``result.queries.model``); the others are scored
    with the plan's metric, tie policy and units map.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import check_benchmark, plan_for_tables
    >>> from evalvalidity.analysis.plan import PoolSpec
    >>> qids = [f"q{i}" for i in range(6)]
    >>> qrels = pa.table({"qid": qids, "docid": [f"{q}-gold" for q in qids], "rel": [1] * 6})
    >>> docids = [f"{q}-{d}" for q in qids for d in ("gold", "a", "b")]
    >>> run = pa.table({"qid": [q for q in qids for _ in range(3)], "docid": docids,
    ...                 "score": [3.0, 2.0, 1.0] * 6})
    >>> other = run.set_column(2, "score", pa.array([1.0, 2.0, 3.0] * 6))
    >>> pool = PoolSpec(corpus_size=8)
    >>> plan = plan_for_tables(pool, seeds=20, other_runs={"other": other})
    >>> inputs = CheckInputs(pool=pool, run=run, qrels=qrels, compare={"other": other})
    >>> values = check_scores(plan, inputs, check_benchmark(plan, inputs))
    >>> {name: v.round(3).tolist() for name, v in values.items()}
    {'run': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 'other': [0.333, 0.333, 0.333, 0.333, 0.333, 0.333]}
    """
    if inputs.run is None or result.run_name is None:
        raise ParameterError("The check has no model run to compare.")
    values = {plan.run_name: np.asarray(result.queries.model, dtype=np.float64)}
    units = inputs.pool.units if inputs.pool.kind == "units" else None
    values.update(
        per_query_scores(
            dict(inputs.compare),
            inputs.qrels,
            result.queries.qid,
            metric=plan.metric,
            units=units,
            ties=plan.ties,
        )
    )
    return values


def run_leaderboard(
    result: CheckResult,
    values: Mapping[str, Any],
    *,
    clusters: QueryClusters | None = None,
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[Leaderboard, list[str]]:
    r"""The leaderboard of ``values`` (per-query scores in triage order) and its notes.

    The check's per-query floors and ceilings give each run its chance-adjusted score; the
    first run of ``values`` is the baseline of wins, ties and losses. A warning that the
    randomization test is too coarse to separate any pair becomes a note.

    The chance-adjusted score of a run of mean :math:`\bar M` is
    :math:`(\bar M - E) / (C - E)`, E the mean floor and C the mean ceiling (docs/math.md,
    Floors).

    Examples
    --------
    The runs of :func:`check_scores`'s example: the model ranks gold first, ``other`` third.

    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import check_benchmark, plan_for_tables
    >>> from evalvalidity.analysis.plan import PoolSpec
    >>> qids = [f"q{i}" for i in range(6)]
    >>> qrels = pa.table({"qid": qids, "docid": [f"{q}-gold" for q in qids], "rel": [1] * 6})
    >>> docids = [f"{q}-{d}" for q in qids for d in ("gold", "a", "b")]
    >>> run = pa.table({"qid": [q for q in qids for _ in range(3)], "docid": docids,
    ...                 "score": [3.0, 2.0, 1.0] * 6})
    >>> other = run.set_column(2, "score", pa.array([1.0, 2.0, 3.0] * 6))
    >>> pool = PoolSpec(corpus_size=8)
    >>> plan = plan_for_tables(pool, seeds=20, other_runs={"other": other})
    >>> inputs = CheckInputs(pool=pool, run=run, qrels=qrels, compare={"other": other})
    >>> result = check_benchmark(plan, inputs)
    >>> board, notes = run_leaderboard(result, check_scores(plan, inputs, result), n_resamples=200)
    >>> board.runs, board.ranks, [round(s, 3) for s in board.adjusted_scores], notes
    (('run', 'other'), (1, 2), [1.0, -0.01], [])
    >>> board.pairs[0].p_value, board.pairs[0].significant
    (0.03125, True)
    """
    floors = result.queries.floor
    ceilings = result.queries.ceiling
    with_floors = float(np.mean(ceilings)) > float(np.mean(floors))
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EvalValidityWarning)
        board = leaderboard(
            dict(values),
            clusters=None if clusters is None else clusters.labels,
            floors=floors if with_floors else None,
            ceilings=ceilings if with_floors else None,
            baseline=next(iter(values)),
            correction=correction,
            alpha=alpha,
            n_resamples=n_resamples,
            rng=seed,
        )
    notes.extend(str(w.message) for w in caught if issubclass(w.category, EvalValidityWarning))
    return board, notes
