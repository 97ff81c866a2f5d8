"""Check 1: is the harness's arithmetic right? Random scores against the exact floor.

Built in (:func:`builtin_check1`): seeded random rankings of each query's declared pool are
scored by this package's own scorer (importance-sampled at large pools, see
:mod:`evalvalidity.core.simulate`). On the team's harness (:func:`harness_check1`): its
per-query output on the seeded random runs of :func:`random_runs`. Either way the measured mean
``M`` is compared with the exact mean floor ``E`` as the ratio ``M / E`` with a 95 % interval
from the standard error of ``M`` (:func:`seed_mean_std_error`, :func:`per_query_std_error`,
:func:`ratio_to_floor`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import (
    Benchmark,
    build_benchmark,
    compute_floor,
    simulation_layout,
    strings,
)
from evalvalidity.analysis.results import HarnessCheck, Interval
from evalvalidity.core import _special as special
from evalvalidity.core import simulate
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.core.types import Progress
from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io._arrow import from_numpy, select, to_numpy
from evalvalidity.io._arrow import strings as arrow_strings
from evalvalidity.io._compute import pc
from evalvalidity.io._memory import release_freed_memory
from evalvalidity.io.scoring import score_run
from evalvalidity.io.tables import conform

__all__ = [
    "DEFAULT_DEPTH",
    "Z95",
    "depth_floor",
    "null_ratio_interval",
    "per_query_std_error",
    "random_runs",
    "ratio_to_floor",
    "seed_mean_std_error",
    "truncated_metric",
    "value_resolution",
]


#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054


def seed_mean_std_error(
    weighted: np.ndarray, query: np.ndarray, n_queries: int, n_seeds: int
) -> float:
    r"""Standard error of the mean over queries of per-query means of ``n_seeds`` draws.

    With the (importance-weighted) draws :math:`x_{q,s}` of query :math:`q`, :math:`S` draws
    per query and :math:`Q` queries, the per-query mean and unbiased variance are

    .. math::

        m_q = \frac{1}{S}\sum_s x_{q,s}, \qquad
        s_q^2 = \frac{S}{S-1}\Big(\frac{1}{S}\sum_s x_{q,s}^2 - m_q^2\Big)

    (clipped at 0 against rounding), and the benchmark mean :math:`M = \frac{1}{Q}\sum_q m_q`
    has the standard error :math:`\mathrm{SE} = \frac{1}{Q}\sqrt{\sum_q s_q^2 / S}`.

    Parameters
    ----------
    weighted : numpy.ndarray
        One value per draw (value × importance weight).
    query : numpy.ndarray of int
        The query index (``0 .. n_queries - 1``) of each draw.
    n_queries, n_seeds : int
        :math:`Q` and :math:`S`.

    Examples
    --------
    >>> seed_mean_std_error(np.array([0.0, 1.0, 0.0, 1.0]), np.array([0, 0, 1, 1]), 2, 2)
    0.3535533905932738
    """
    sums = np.bincount(query, weights=weighted, minlength=n_queries)
    squares = np.bincount(query, weights=weighted * weighted, minlength=n_queries)
    means = sums / n_seeds
    var = np.maximum(squares / n_seeds - means * means, 0.0) * n_seeds / max(n_seeds - 1, 1)
    return float(np.sqrt(np.sum(var / n_seeds))) / n_queries


def per_query_std_error(
    counts: np.ndarray,
    sums: np.ndarray,
    squares: np.ndarray,
    floor_variance: np.ndarray,
) -> float:
    r"""Standard error of the mean over queries of per-query means of unequal numbers of values.

    Query :math:`q` has :math:`c_q` values summing to :math:`\Sigma_q` with squares summing to
    :math:`\Sigma^{(2)}_q`; its mean is :math:`m_q = \Sigma_q / c_q`. When every
    :math:`c_q \ge 2` the per-query variance is the sample's,
    :math:`s_q^2 = \frac{c_q}{c_q - 1}\big(\Sigma^{(2)}_q / c_q - m_q^2\big)` (clipped at
    0); otherwise the exact variance of a random ranking's score, :math:`\sigma_q^2`
    (``floor_variance``), stands in for it. Over :math:`Q` queries,
    :math:`\mathrm{SE} = \frac{1}{Q}\sqrt{\sum_q s_q^2 / c_q}`.

    Examples
    --------
    >>> per_query_std_error(
    ...     np.array([2, 4]), np.array([1.0, 2.0]), np.array([1.0, 2.0]), np.array([0.1, 0.1])
    ... )
    0.28867513459481287
    >>> per_query_std_error(np.array([1]), np.array([1.0]), np.array([1.0]), np.array([0.04]))
    0.2
    """
    counts = np.asarray(counts)
    q = len(counts)
    if np.all(counts >= 2):
        means = sums / counts
        var = np.maximum(squares / counts - means**2, 0) * counts / (counts - 1)
        return float(np.sqrt(np.sum(var / counts))) / q
    return float(np.sqrt(np.sum(floor_variance / counts))) / q


def ratio_to_floor(measured: float, std_error: float, floor: float, z: float = Z95) -> Interval:
    r"""The ratio of a measured mean to the exact floor, with its normal interval.

    .. math::

        R = \frac{M}{E}, \qquad
        \Big[\frac{M - z\,\mathrm{SE}}{E},\ \frac{M + z\,\mathrm{SE}}{E}\Big]

    The floor :math:`E` is exact, so only :math:`M`'s standard error enters. Check 1 passes
    when the interval covers 1.

    Examples
    --------
    >>> ratio_to_floor(0.11, 0.005, 0.1).format(3)
    '1.100 [1.002, 1.198]'
    """
    return Interval(
        measured / floor, (measured - z * std_error) / floor, (measured + z * std_error) / floor
    )


#: ln(2 / 0.05): the constant of Bernstein's inequality at the two-sided 5 % level.
_BERNSTEIN_L = math.log(40.0)


def value_resolution(values: np.ndarray) -> float:
    """Half a unit in the last decimal the values are printed to (0 when they are not rounded).

    trec_eval prints 4 decimals, so a mean of its values may be off by up to 5e-5. Values
    that need at most 2 decimals (P@10's 0.1, 0.2, Hit's 0 and 1) are taken as exact.

    Examples
    --------
    >>> value_resolution(np.array([0.25, 0.3333, 0.0]))
    5e-05
    >>> value_resolution(np.array([0.1, 0.2, 0.0])), value_resolution(np.array([1 / 3]))
    (0.0, 0.0)
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return 0.0
    for digits in range(0, 10):
        scaled = values * 10.0**digits
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 + 1e-15 * np.abs(scaled)):
            return 0.5 * 10.0**-digits if digits > 2 else 0.0
    return 0.0


def null_ratio_interval(
    measured: float,
    expected: np.ndarray,
    variance: np.ndarray,
    counts: np.ndarray,
    ceiling: np.ndarray,
    *,
    resolution: float = 0.0,
    z: float = Z95,
) -> tuple[Interval, float]:
    r"""Check 1's ratio to the floor with the acceptance interval of H0 (the harness is right).

    Query :math:`q` has :math:`c_q` random rankings scored; under H0 each value has the exact
    floor's mean :math:`E_q` and variance :math:`V_q`, so the mean over the :math:`Q` queries of
    the per-query means, :math:`M = \frac1Q \sum_q \bar x_q`, has mean
    :math:`\bar E = \frac1Q\sum_q E_q` and the exact standard error

    .. math:: \mathrm{SE}_0 = \frac{1}{Q}\sqrt{\sum_q V_q / c_q}.

    A random score is skewed (mostly 0, now and then large), so the normal band
    :math:`z\,\mathrm{SE}_0` is widened, on each side, by Bernstein's term for the largest
    step one value can make away from its mean: up by :math:`b_+ = \max_q C_q / (Q c_q)`
    (:math:`C_q` the ceiling), down by :math:`b_- = \max_q E_q / (Q c_q)`, and by the
    rounding ``resolution`` :math:`\delta` of the printed values:

    .. math::

        t_\pm = z\,\mathrm{SE}_0 + \frac{\ln 40}{3}\, b_\pm + \delta, \qquad
        \text{H0 holds when } -t_- \le M - \bar E \le t_+ .

    The reported ratio :math:`R = M / \bar E` has the interval
    :math:`[R - t_+/\bar E,\ R + t_-/\bar E]`, clipped to the metric's range
    :math:`[0, \bar C / \bar E]`; it covers 1 exactly when H0 is kept. It cannot collapse:
    its width is at least :math:`2 z\,\mathrm{SE}_0/\bar E`, whatever the values.

    Parameters
    ----------
    measured : float
        :math:`M`.
    expected, variance, ceiling : numpy.ndarray
        :math:`E_q`, :math:`V_q` and :math:`C_q` of the compared queries.
    counts : numpy.ndarray of int
        :math:`c_q >= 1`, the values averaged per query.
    resolution : float, default 0
        :math:`\delta`, see :func:`value_resolution`.
    z : float
        The normal quantile (95 %: :data:`Z95`).

    Returns
    -------
    (Interval, float)
        The ratio with its interval, and :math:`\mathrm{SE}_0`.

    Examples
    --------
    One query, 5 seeds, P@10 on a pool of 3,000 with one gold item; every seed scored 0:

    >>> e, v = np.array([1 / 3000]), np.array([(10 / 3000) * (1 - 10 / 3000) / 100])
    >>> ratio, se = null_ratio_interval(0.0, e, v, np.array([5]), np.array([0.1]))
    >>> ratio.contains(1.0), round(se, 5), ratio.low
    (True, 0.00258, 0.0)
    """
    q = len(expected)
    counts = np.asarray(counts, dtype=np.float64)
    mean_floor = float(np.mean(expected))
    se = float(np.sqrt(np.sum(variance / counts))) / q
    up = float(np.max(ceiling / counts)) / q if q else 0.0
    down = float(np.max(expected / counts)) / q if q else 0.0
    t_up = z * se + _BERNSTEIN_L / 3 * up + resolution
    t_down = z * se + _BERNSTEIN_L / 3 * down + resolution
    ratio = measured / mean_floor
    top = float(np.mean(ceiling)) / mean_floor
    low = max(ratio - t_up / mean_floor, 0.0)
    high = min(ratio + t_down / mean_floor, max(top, 1.0))
    # keep the clipped interval's decision that of the test (1 lies in [0, top])
    return Interval(ratio, min(low, ratio), max(high, ratio)), se


def _ideal_dcg(grades: np.ndarray, k: int | None, exponential: bool) -> float:
    """The ideal DCG@k of a query's judged grades (k None: all of them)."""
    gains = np.sort(np.asarray(grades, dtype=np.float64))[::-1]
    if exponential:
        gains = np.exp2(gains) - 1.0
    if k is not None:
        gains = gains[:k]
    return float(np.sum(gains / np.log2(np.arange(2, len(gains) + 2))))


def truncated_metric(metric: Metric, depth: int) -> tuple[Metric, str]:
    """What ``metric`` computes on a ranking of only ``depth`` items, and how it is rescaled.

    The second value says how the floor of the returned metric becomes the truncated one:
    ``"same"`` (it is the metric itself: the cutoff is within the depth), ``"cut"`` (the metric
    at cutoff ``depth``: RR, Hit, recall, AP, all dividing by what they did), ``"precision"``
    (P@k still divides by k: P@depth × depth / k), ``"ndcg"`` (DCG@depth over the ideal DCG of
    the original cutoff) or ``"rprec"`` (per query, R-precision reads the top R: recall@depth
    where R > depth).

    Examples
    --------
    >>> truncated_metric(parse_metric("map"), 1000)
    (Metric(family='ap', k=1000, rel=1), 'cut')
    >>> truncated_metric(parse_metric("p@10"), 5)
    (Metric(family='p', k=5, rel=1), 'precision')
    >>> truncated_metric(parse_metric("rr@10"), 1000)[1]
    'same'
    """
    if metric.k is not None and metric.k <= depth:
        return metric, "same"
    family = metric.family
    if family in ("rr", "hit", "r", "ap"):
        return Metric(family, depth, metric.rel), "cut"
    if family == "p":
        return Metric("p", depth, metric.rel), "precision"
    if family == "rprec":
        return Metric("r", depth, metric.rel), "rprec"
    return Metric(family, depth, metric.rel), "ndcg"


def depth_floor(
    bench: Benchmark, metric: Metric, pool: PoolSpec, depth: int, rng: np.random.Generator
) -> Floor:
    r"""The exact floor of ``metric`` on random rankings that hold only the top ``depth`` items.

    A run ranks ``depth`` items of a uniformly random order of the pool; a metric that reads
    deeper sees nothing below them. trec_eval's ``map`` over such a run is ``map_cut_depth``,
    ``recip_rank`` is RR@depth, ``P_k`` is :math:`\frac{\mathrm{depth}}{k}\mathrm{P@depth}`,
    ``Rprec`` is recall@depth where :math:`R > \mathrm{depth}`, and nDCG is
    :math:`\mathrm{nDCG@depth}\cdot \mathrm{IDCG@depth} / \mathrm{IDCG@}k` (the ideal DCG of
    the judged grades): see :func:`truncated_metric`. Expected values, variances and ceilings
    are scaled alike (variances by the square).

    Examples
    --------
    >>> qrels = pa.table({"qid": ["q1"], "docid": ["a"], "rel": [1]})
    >>> ap = parse_metric("ap")
    >>> bench = build_benchmark(qrels, PoolSpec(corpus_size=5000), ap)
    >>> rng = np.random.default_rng(0)
    >>> whole = depth_floor(bench, ap, PoolSpec(corpus_size=5000), 5000, rng).expected
    >>> top = depth_floor(bench, ap, PoolSpec(corpus_size=5000), 1000, rng).expected
    >>> round(float(top[0] / whole[0]), 3)
    0.823
    """
    if depth >= int(np.max(bench.pool_size)):
        return compute_floor(bench, metric, pool, rng)[0]
    cut, how = truncated_metric(metric, depth)
    if how == "same":
        return compute_floor(bench, metric, pool, rng)[0]
    floor = compute_floor(bench, cut, pool, rng)[0]
    if how == "cut":
        return Floor(metric, floor.expected, floor.variance, floor.ceiling)
    if how == "precision":
        assert metric.k is not None
        scale = np.full(len(floor.expected), depth / metric.k)
    elif how == "rprec":
        whole = compute_floor(bench, metric, pool, rng)[0]
        deep = bench.judged > depth
        return Floor(
            metric,
            np.where(deep, floor.expected, whole.expected),
            np.where(deep, floor.variance, whole.variance),
            np.where(deep, floor.ceiling, whole.ceiling),
        )
    else:
        exponential = metric.spec.gain == "exponential"
        scale = np.ones(len(floor.expected))
        for i, grades in enumerate(bench.judged_gains):
            full = _ideal_dcg(grades, metric.k, exponential)
            if full > 0:
                scale[i] = _ideal_dcg(grades, depth, exponential) / full
    return Floor(metric, floor.expected * scale, floor.variance * scale**2, floor.ceiling * scale)


def implied_depth(
    bench: Benchmark,
    metric: Metric,
    pool: PoolSpec,
    measured: float,
    present: np.ndarray,
    rng: np.random.Generator,
) -> int | None:
    """The ranking depth whose floor equals ``measured`` (None when no depth does).

    The floors of RR, Hit, recall, AP, precision and nDCG grow with the depth, so a bisection
    over ``1 .. max pool`` finds it.
    """
    top = int(np.max(bench.pool_size[present]))
    if metric.k is not None:
        top = min(top, metric.k)

    def at(d: int) -> float:
        return float(np.mean(depth_floor(bench, metric, pool, d, rng).expected[present]))

    if top < 1 or not at(1) <= measured <= at(top):
        return None
    lo, hi = 1, top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid) < measured:
            lo = mid
        else:
            hi = mid
    return hi if abs(at(hi) - measured) <= abs(at(lo) - measured) else lo


def metric_depth(metric: Metric, bench: Benchmark) -> int | None:
    """How deep a ranking the metric reads; None for the whole list."""
    if metric.family == "rprec":
        return int(max(1, bench.judged.max()))
    return metric.k


#: Samples scored in one call of the scorer (bounds the simulated run's size in memory).
_SCORE_BLOCK = 1 << 17

#: Queries drawn at once by the built-in Check 1 (bounds the sampler's arrays in memory).
_DRAW_BLOCK = 1 << 16


@dataclasses.dataclass(frozen=True)
class _JudgedRows:
    """The judgements of the judged queries, found once for every block of samples.

    ``qrels`` is conformed; ``row_query`` is the query index of every row of ``qrels`` (-1
    for a query that is not judged); ``by_query`` the rows of the judged queries, sorted by
    query (then file order), and ``offsets`` their CSR offsets per query.
    """

    qrels: pa.Table
    row_query: np.ndarray
    by_query: np.ndarray
    offsets: np.ndarray

    @classmethod
    def of(cls, qrels: pa.Table, bench: Benchmark) -> _JudgedRows:
        """Index ``qrels`` by ``bench``'s queries.

        Examples
        --------
        >>> qrels = pa.table({"qid": ["b", "x", "a", "b"], "docid": ["1", "2", "3", "4"],
        ...                   "rel": [1, 1, 1, 0]})
        >>> judged = pa.table({"qid": ["a", "b"], "docid": ["3", "1"], "rel": [1, 1]})
        >>> bench = build_benchmark(judged, PoolSpec(corpus_size=10), parse_metric("rr"))
        >>> rows = _JudgedRows.of(qrels, bench)  # query "x" is not one of the benchmark's
        >>> rows.row_query.tolist(), rows.by_query.tolist(), rows.offsets.tolist()
        ([1, -1, 0, 1], [2, 0, 3], [0, 1, 3])
        """
        qrels = conform(qrels, "qrels")
        n_queries = len(bench.qids)
        qq = pc.index_in(qrels.column("qid"), value_set=arrow_strings(bench.qids))
        known = to_numpy(pc.is_valid(qq))
        row_query = np.full(len(known), -1, dtype=np.int64)
        row_query[known] = to_numpy(select(qq, known))
        rows = np.flatnonzero(known)
        by_query = rows[np.argsort(row_query[rows], kind="stable")]
        offsets = np.concatenate(
            ([0], np.cumsum(np.bincount(row_query[rows], minlength=n_queries)))
        )
        return cls(qrels, row_query, by_query, offsets)

    def rows_of(self, q0: int, q1: int) -> np.ndarray:
        """The rows of the queries ``q0 <= q < q1``, in file order."""
        return np.sort(self.by_query[self.offsets[q0] : self.offsets[q1]])


def _score_samples(
    sample: simulate.PrefixSample,
    namer: Callable[[np.ndarray, np.ndarray], pa.Array],
    qrels: pa.Table | _JudgedRows,
    bench: Benchmark,
    metric: Metric,
    units: pa.Table | None,
    ties: str,
) -> np.ndarray:
    """Score every sampled prefix with the package's own scorer; one value per sample.

    Sample ``i`` is the query ``s<i>``, judged by its query's judgements; the samples are
    scored in blocks of ``_SCORE_BLOCK`` (each sample's score depends on its rows alone).
    ``qrels`` may be given indexed (:class:`_JudgedRows`, found once for many calls).
    """
    judged = qrels if isinstance(qrels, _JudgedRows) else _JudgedRows.of(qrels, bench)
    values = np.zeros(sample.n_draws)
    for start in range(0, sample.n_draws, _SCORE_BLOCK):
        stop = min(start + _SCORE_BLOCK, sample.n_draws)
        lo, hi = int(sample.offsets[start]), int(sample.offsets[stop])
        lengths = np.diff(sample.offsets[start : stop + 1])
        sample_of_row = np.repeat(np.arange(start, stop), lengths)
        position = np.arange(hi - lo) - np.repeat(sample.offsets[start:stop] - lo, lengths)
        names = namer(sample.query[sample_of_row], sample.items[lo:hi])
        run = pa.table(
            {
                "qid": _sample_names(sample_of_row),
                "docid": pa.array(names, pa.string()),
                "score": from_numpy((lengths.max() - position).astype(np.float64)),
                "rank": from_numpy((position + 1).astype(np.int64)),
                "line": pa.nulls(len(names), pa.int64()),
            }
        )
        # Replicate each query's judgements for each of its samples (rows in file order): only
        # the rows of the block's queries, q0 <= q < q1, are read.
        block_query = sample.query[start:stop]
        q0, q1 = int(block_query.min()), int(block_query.max()) + 1
        rows = judged.rows_of(q0, q1)
        row_query = judged.row_query[rows] - q0
        by_query = np.argsort(block_query, kind="stable")
        sample_offsets = np.concatenate(
            ([0], np.cumsum(np.bincount(block_query - q0, minlength=q1 - q0)))
        )
        per_row = np.diff(sample_offsets)[row_query]
        row_rep = np.repeat(rows, per_row)
        ends = np.cumsum(per_row)
        within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - per_row, per_row)
        sample_rep = start + by_query[np.repeat(sample_offsets[row_query], per_row) + within]
        take = from_numpy(row_rep.astype(np.int64))
        replicated = pa.table(
            {
                "qid": _sample_names(sample_rep),
                "docid": judged.qrels.column("docid").take(take),
                "rel": judged.qrels.column("rel").take(take),
                "line": pa.nulls(len(row_rep), pa.int64()),
            }
        )
        scored = score_run(
            run,
            replicated,
            [metric],
            units=units,
            ties=ties,
            unranked="zero",
            run_name="simulated noise run",
            qrels_name="judgements",
        )
        index = to_numpy(
            pc.cast(pc.utf8_slice_codeunits(arrow_strings(scored.qids), 1), pa.int64())
        )
        values[index] = scored.values[metric.name]
    return values


def _sample_names(index: np.ndarray) -> pa.Array:
    """The query ids ``s<i>`` of the samples ``index``."""
    prefix, empty = arrow_strings(["s", ""])  # a str would go through pa.scalar (pandas)
    return pc.binary_join_element_wise(
        prefix, pc.cast(from_numpy(np.asarray(index, dtype=np.int64)), pa.string()), empty
    )


def builtin_check1(
    bench: Benchmark,
    floor: Floor,
    metric: Metric,
    pool: PoolSpec,
    qrels: pa.Table,
    seeds: int | str,
    ties: str,
    precision: float,
    rng: np.random.Generator,
    progress: Progress | None,
    notes: list[str],
) -> HarnessCheck | None:
    """Check 1 built in: seeded random rankings through the package's scorer (None if skipped)."""
    depth = metric_depth(metric, bench)
    layout, namer = simulation_layout(bench, pool)
    sim_gold = layout.gold_count
    active = sim_gold > 0
    if not active.any():
        notes.append("Check 1 (built in) was skipped: no query has a gold item in its pool.")
        return None
    full_list = depth is None
    if full_list:
        biggest = int(layout.pool_size.max())
        if biggest > 5_000:
            notes.append(
                f"Check 1 (built in) was skipped: {metric.name} reads the whole ranking and the "
                f"pool holds {biggest:,} items; use a metric with a cutoff (e.g. "
                f"{metric.family}@10) to simulate lazily."
            )
            return None
        depth = biggest
    assert depth is not None
    units = pool.units if pool.kind == "units" else None
    doc_depth = depth if units is not None else None
    if full_list:
        weights = np.ones(layout.n_queries)
    else:
        weights = simulate.auto_gold_weight(layout.pool_size, sim_gold, depth)
    importance = bool(np.any(weights > 1))
    mean_floor = float(np.mean(floor.expected))
    if mean_floor <= 0:
        notes.append("Check 1 (built in) was skipped: the floor is 0.")
        return None

    judged = _JudgedRows.of(qrels, bench)  # once, for every block of samples

    def draw(n_seeds: int, first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # Blocks of queries, one after the other from the same generator: a benchmark of at
        # most _DRAW_BLOCK queries is drawn in one go.
        # Each block's samples are query-major: queries a..b-1 fill draws a*S .. b*S-1.
        total = layout.n_queries * n_seeds
        values = np.empty(total)
        weight = np.empty(total)
        query = np.empty(total, dtype=np.int32 if layout.n_queries < 2**31 else np.int64)
        for a in range(0, layout.n_queries, _DRAW_BLOCK):
            b = min(a + _DRAW_BLOCK, layout.n_queries)
            g0, g1 = int(layout.gold_offsets[a]), int(layout.gold_offsets[b])
            block = simulate.PoolLayout(
                layout.pool_size[a:b],
                layout.gold_offsets[a : b + 1] - g0,
                layout.gold_items[g0:g1],
                chunk_doc=layout.chunk_doc,
            )
            sample = simulate.sample_prefixes(
                block,
                n_seeds,
                depth=depth,
                doc_depth=doc_depth,
                gold_weight=weights[a:b],
                rng=rng,
                first_draw=first,
            )
            sample = dataclasses.replace(sample, query=sample.query + a)
            lo, hi = a * n_seeds, b * n_seeds
            values[lo:hi] = _score_samples(sample, namer, judged, bench, metric, units, ties)
            weight[lo:hi] = sample.weight
            query[lo:hi] = sample.query
            del sample
            # Each block's scoring frees what it built; handed back, it is not kept by three
            # allocators at once (a million queries' blocks added some 0.1 GB).
            release_freed_memory()
        return values, weight, query

    q = layout.n_queries
    if seeds == "auto":
        if not importance:
            # Plain draws: the exact variance says how many seeds reach the precision.
            needed = float(np.sum(floor.variance)) / (q * q * (precision * mean_floor) ** 2)
            n_seeds = int(min(max(math.ceil(needed), 8), 20_000))
            if progress:
                progress(0.3, f"Check 1: {n_seeds:,} seeds × {q:,} queries")
            values, w, query = draw(n_seeds, 0)
        else:
            # A pilot run estimates the weighted variance; large benchmarks need fewer seeds.
            pilot = int(min(16, max(4, math.ceil(20_000 / q))))
            if progress:
                progress(0.2, f"Check 1: pilot of {pilot} seeds × {q:,} queries")
            values, w, query = draw(pilot, 0)
            se = seed_mean_std_error(values * w, query, q, pilot)
            # The ratio's standard error is se / floor; aim at `precision` of the larger of the
            # two values, so that a ratio of 5 is not chased to ±2 % of 1.
            scale = max(mean_floor, float(np.mean(values * w)))
            needed = pilot * (se / (precision * scale)) ** 2
            budget = max(pilot, int(1_000_000 / max(q * depth, 1)))
            n_seeds = int(min(max(math.ceil(needed), pilot), budget))
            if n_seeds > pilot:
                if progress:
                    progress(0.4, f"Check 1: {n_seeds - pilot:,} more seeds × {q:,} queries")
                v2, w2, q2 = draw(n_seeds - pilot, pilot)
                values, w, query = (
                    np.concatenate([values, v2]),
                    np.concatenate([w, w2]),
                    np.concatenate([query, q2]),
                )
    else:
        n_seeds = int(seeds)
        if progress:
            progress(0.3, f"Check 1: {n_seeds:,} seeds × {q:,} queries")
        values, w, query = draw(n_seeds, 0)
    weighted = values * w
    per_query = np.bincount(query, weights=weighted, minlength=q) / n_seeds
    measured = float(per_query.mean())
    if not importance:
        # plain draws: the exact variance of the floor gives the interval under H0
        ratio, se = null_ratio_interval(
            measured, floor.expected, floor.variance, np.full(q, n_seeds), floor.ceiling
        )
    else:
        # importance weights change the variance, which must then be estimated: a Student
        # t band on n_seeds - 1 degrees of freedom, clipped to the metric's range; a sample
        # without spread (which would give a zero-width band) falls back on the plain-draw SE
        estimated = seed_mean_std_error(weighted, query, q, n_seeds) if n_seeds >= 2 else 0.0
        exact = float(np.sqrt(np.sum(floor.variance) / n_seeds)) / q
        se = estimated if estimated > 0 else exact
        t = float(special.stdtrit(max(n_seeds - 1, 1), 0.975))  # Student t's 97.5 % point
        ratio = ratio_to_floor(measured, se, mean_floor, z=t)
        top = max(float(np.mean(floor.ceiling)) / mean_floor, 1.0)
        ratio = Interval(
            ratio.estimate, max(ratio.low, 0.0), min(ratio.high, max(top, ratio.estimate))
        )
    return HarnessCheck(
        source="builtin",
        measured=measured,
        analytic=mean_floor,
        ratio=ratio,
        std_error=se,
        n_queries=q,
        n_seeds=n_seeds,
        n_draws=len(values),
        importance_sampled=importance,
        passed=ratio.contains(1.0),
        per_query_measured=per_query,
        sample_values=values,
        sample_weights=w,
    )


#: The depth ``random-runs`` writes by default, assumed when none is declared.
DEFAULT_DEPTH = 1000


def harness_check1(
    bench: Benchmark,
    floor: Floor,
    metric: Metric,
    harness: pa.Table,
    notes: list[str],
    *,
    pool: PoolSpec | None = None,
    rng: np.random.Generator | None = None,
    depth: int | None = None,
    seeds: int | None = None,
) -> HarnessCheck:
    """Check 1 on a harness's per-query output on random runs (one measure, the metric's).

    ``depth`` is the number of items per query the random runs hold (their manifest's
    ``depth``; None: :data:`DEFAULT_DEPTH`, random-runs' default) and ``seeds`` how many runs
    were scored (None: the most values any query has). The output is compared with the exact
    floor of rankings truncated at ``depth`` (:func:`depth_floor`; with ``pool`` None,
    ``floor`` as given) through :func:`null_ratio_interval`. Missing (query, seed) values are
    counted as 0 when the output holds no 0 at all (a harness that writes only non-zero
    values); otherwise the queries without values are left out.
    """
    harness = conform(harness, "harness")
    measures = harness.column("measure")
    chosen_measure: str | None = None
    if measures.null_count < len(harness):
        names = sorted({m for m in measures.to_pylist() if m is not None})
        wanted = {metric.name, metric.report_name}
        matching = []
        for name in names:
            try:
                if parse_metric(name) == metric:
                    matching.append(name)
                    continue
            except ParameterError:
                pass
            if name in wanted:
                matching.append(name)
        if len(matching) == 1:
            chosen_measure = matching[0]
        elif len(names) == 1:
            chosen_measure = names[0]
            notes.append(
                f"The harness output's only measure, {chosen_measure!r}, was taken to be "
                f"{metric.name}."
            )
        else:
            raise InputDataError(
                f"The harness output holds the measures {', '.join(names)}; none is "
                f"{metric.report_name}. Choose the metric that matches one of them."
            )
        harness = harness.filter(pc.equal(harness.column("measure"), chosen_measure))
    qid = strings(harness.column("qid"))
    value = harness.column("value").to_numpy(zero_copy_only=False).astype(np.float64)
    if not np.all(np.isfinite(value)):
        raise InputDataError("The harness output holds values that are NaN or infinite.")
    judged = set(bench.qids.tolist())
    known = np.fromiter((q in judged for q in qid.tolist()), dtype=bool, count=len(qid))
    ignored = len(np.unique(qid[~known]))
    qid, value = qid[known], value[known]
    seed_column = harness.column("seed").filter(pa.array(known))
    if len(qid) == 0:
        raise InputDataError("None of the harness output's query ids occur in the judgements.")
    declared_depth = depth
    if depth is None:
        depth = DEFAULT_DEPTH
        if int(np.max(bench.pool_size)) > depth:
            notes.append(
                f"No depth was declared for the random runs (no manifest): Check 1 takes "
                f"random-runs' default, {depth:,} items per query."
            )
    if pool is not None:
        rng = rng if rng is not None else np.random.default_rng(0)
        floor = depth_floor(bench, metric, pool, depth, rng)
        if pool.kind == "units" and depth < int(np.max(bench.pool_size)):
            notes.append(
                f"The random runs rank {depth:,} chunks per query; the deduplicated floor is "
                f"taken at {depth:,} documents, which a run of that many chunks may not reach."
            )
    qindex = np.searchsorted(bench.qids, qid)
    n = len(bench.qids)
    counts = np.bincount(qindex, minlength=n)
    if seed_column.null_count < len(seed_column):
        n_runs = len(set(seed_column.to_pylist()))
    else:
        n_runs = int(np.max(counts))
    if seeds is not None:
        n_runs = max(n_runs, seeds)
    expected_values = n_runs * n
    n_missing = int(np.sum(np.maximum(n_runs - counts, 0)))
    zeros_left_out = n_missing > 0 and not np.any(value == 0.0) and n_runs >= 1
    if zeros_left_out:
        # a harness that prints only non-zero values: the missing ones are the zeros
        counts = np.full(n, n_runs)
    present = counts > 0
    sums = np.bincount(qindex, weights=value, minlength=n)
    per_query = np.full(n, np.nan)
    per_query[present] = sums[present] / counts[present]
    measured = float(np.mean(per_query[present]))
    analytic = float(np.mean(floor.expected[present]))
    q = int(present.sum())
    missing = tuple(bench.qids[~present].tolist())
    if missing:
        notes.append(
            f"The harness output has no values for {len(missing):,} judged quer"
            f"{'y' if len(missing) == 1 else 'ies'}; Check 1 compares the other {q:,}."
        )
    if ignored:
        notes.append(
            f"The harness output names {ignored:,} quer{'y' if ignored == 1 else 'ies'} "
            "without judgements; they were ignored."
        )
    if analytic <= 0:
        raise InputDataError("The floor of the harness output's queries is 0: nothing to compare.")
    ratio, se = null_ratio_interval(
        measured,
        floor.expected[present],
        floor.variance[present],
        counts[present],
        floor.ceiling[present],
        resolution=value_resolution(value),
    )
    passed = ratio.contains(1.0)
    seen = None
    if not passed and pool is not None and rng is not None:
        seen = implied_depth(bench, metric, pool, measured, present, rng)
        if seen is not None:
            at_seen = depth_floor(bench, metric, pool, seen, rng)
            check, _ = null_ratio_interval(
                measured,
                at_seen.expected[present],
                at_seen.variance[present],
                counts[present],
                at_seen.ceiling[present],
                resolution=value_resolution(value),
            )
            reach = min(depth, int(np.max(bench.pool_size[present])))
            if not check.contains(1.0) or seen == reach:
                seen = None
    return HarnessCheck(
        source="harness-output",
        measured=measured,
        analytic=analytic,
        ratio=ratio,
        std_error=se,
        n_queries=q,
        n_seeds=int(np.max(counts)),
        n_draws=len(value),
        importance_sampled=False,
        passed=passed,
        per_query_measured=per_query,
        sample_values=value,
        sample_weights=np.ones(len(value)),
        missing_queries=missing,
        ignored_queries=ignored,
        measure=chosen_measure,
        depth=declared_depth if declared_depth is not None else depth,
        implied_depth=seen,
        missing_values=n_missing,
        expected_values=expected_values,
        zeros_left_out=zeros_left_out,
    )


def random_runs(
    qrels: pa.Table, pool: PoolSpec, n_seeds: int, *, depth: int = 1000, seed: int = 0
) -> Iterator[tuple[int, pa.Table]]:
    """Seeded uniformly random runs over each judged query's declared pool.

    Each run ranks the top ``depth`` items of a uniformly random order of the query's pool
    (drawn lazily: ``depth`` draws per query, whatever the pool's size), with distinct
    descending scores so that no tie-breaking rule can matter. Items of a sizes-only pool that
    are not judged get the ids ``~noise~<i>``; with candidate lists or a units map the real ids
    are used (chunks, for a units map). Yields ``(seed number, run table)``.

    Examples
    --------
    >>> qrels = pa.table({"qid": ["q1"], "docid": ["a"], "rel": [1]})
    >>> [(s, t.num_rows) for s, t in random_runs(qrels, PoolSpec(corpus_size=5), 2, depth=3)]
    [(0, 3), (1, 3)]
    """
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 1:
        raise ParameterError(
            f"The 'n_seeds' parameter of random_runs must be an int >= 1. Got {n_seeds!r} instead."
        )
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ParameterError(
            f"The 'depth' parameter of random_runs must be an int >= 1. Got {depth!r} instead."
        )
    bench = build_benchmark(qrels, pool, parse_metric("rr"))
    layout, namer = simulation_layout(bench, pool)
    rng = np.random.default_rng(seed)
    qids = bench.qids
    for s in range(n_seeds):
        items, query = [], []
        for q in range(layout.n_queries):
            size = int(layout.pool_size[q])
            take = min(depth, size)
            items.append(rng.choice(size, size=take, replace=False))
            query.append(np.full(take, q, dtype=np.int64))
        item = np.concatenate(items).astype(np.int64)
        qi = np.concatenate(query)
        position = np.concatenate([np.arange(len(x)) for x in items])
        yield (
            s,
            pa.table(
                {
                    "qid": pa.array(qids[qi], pa.string()),
                    "docid": pa.array(namer(qi, item), pa.string()),
                    "score": pa.array(1.0 - position / (position.max() + 1.0)),
                    "rank": pa.array(position + 1, pa.int64()),
                    "line": pa.nulls(len(item), pa.int64()),
                }
            ),
        )
