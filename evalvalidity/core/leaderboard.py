r"""A leaderboard over any number of runs: what the benchmark can and cannot tell apart.

:func:`leaderboard` ranks runs by their mean over the same queries and says, for each, how
sure that rank is:

- each run's mean with a t interval (a CR1 sandwich interval with G - 1 degrees of freedom
  when the queries are clustered), and optionally its chance-adjusted score
  :math:`(M - E[M]) / (\max - E[M])` from per-query floors and ceilings;
- a bootstrap interval of each run's rank: queries (or clusters) resampled jointly for all
  runs, every resample ranked;
- all pairs compared by the paired sign-flip randomization test (whole clusters flipped when
  clustered), with Holm or Benjamini–Hochberg adjustment, and the test's resolution;
- which adjacent ranks are separated, and per-query wins, ties and losses against a baseline.

References
----------
Hall & Miller, "Using the bootstrap to quantify the authority of an empirical ranking",
Ann. Statist. 37 (2009) (bootstrap rank intervals). Holm, Scand. J. Statist. 6 (1979).
Benjamini & Hochberg, JRSS B 57 (1995). Smucker, Allan & Carterette, CIKM 2007.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from scipy import stats as sps

from evalvalidity.core._validate import (
    _choice,
    _finite_values,
    _generator,
    _int_at_least,
    _open_unit,
    _shown,
)
from evalvalidity.core.clustered import (
    _cluster_bootstrap_means,
    _cluster_codes,
    _cluster_totals,
    _sandwich_variance,
)
from evalvalidity.core.stats import Interval, _benjamini_hochberg, _holm, _sign_flip_p_value
from evalvalidity.errors import EvalValidityWarning, ParameterError

__all__ = ["Leaderboard", "LeaderboardPair", "leaderboard"]

_CORRECTIONS: Final = ("holm", "bh")
# Per-query values closer than this count as a tie in wins/ties/losses.
_TIE_TOLERANCE: Final = 1e-12


@dataclass(frozen=True)
class LeaderboardPair:
    """One pair of runs; ``run_a`` ranks above ``run_b`` and differences are ``a - b``.

    Attributes
    ----------
    run_a, run_b : str
    difference : float
        Mean of the per-query differences.
    p_value : float
        Two-sided paired randomization p-value, unadjusted.
    adjusted_p_value : float
        After the leaderboard's correction over all pairs.
    significant : bool
        ``adjusted_p_value <= alpha``.
    at_resolution : bool
        True when ``p_value`` equals the test's resolution: the true p is that small or
        smaller, so show it as ``"≤ resolution"``.
    """

    run_a: str
    run_b: str
    difference: float
    p_value: float
    adjusted_p_value: float
    significant: bool
    at_resolution: bool


@dataclass(frozen=True)
class Leaderboard:
    r"""Runs ranked by their mean, with rank intervals and pairwise tests.

    Every per-run tuple is in leaderboard order (best mean first; ties keep the order given).

    Attributes
    ----------
    runs : tuple of str
    means : tuple of float
    intervals : tuple of Interval
        Of each mean: ``"t"``, or ``"sandwich"`` when clustered.
    adjusted_scores : tuple of float or None
        :math:`(\bar M - \bar E) / (\bar C - \bar E)` with the mean floor E and ceiling C;
        None when no floors were given.
    ranks : tuple of int
        Competition rank of each run on the data (1 is best; equal means share the best rank).
    rank_low, rank_high : tuple of int
        Bootstrap percentile interval of each run's rank.
    pairs : tuple of LeaderboardPair
        Every pair (i, j), i < j in leaderboard order.
    adjacent_separated : tuple of bool
        ``adjacent_separated[i]``: runs i and i + 1 differ significantly after correction.
    baseline : str
        The run that wins, ties and losses are counted against.
    wins, ties, losses : tuple of int
        Per query, how often each run beats, equals or trails the baseline.
    correction : str
        ``"holm"`` or ``"bh"``.
    alpha, confidence : float
    n_resamples : int
        Of the rank bootstrap and each randomization test.
    resolution : float
        Smallest p-value the randomization test can report: ``2 / 2**G`` when exact,
        ``1 / (n_resamples + 1)`` otherwise.
    exact : bool
        True when the randomization tests enumerated every sign vector.
    n_queries, n_clusters : int
        ``n_clusters == n_queries`` when unclustered.
    """

    runs: tuple[str, ...]
    means: tuple[float, ...]
    intervals: tuple[Interval, ...]
    adjusted_scores: tuple[float, ...] | None
    ranks: tuple[int, ...]
    rank_low: tuple[int, ...]
    rank_high: tuple[int, ...]
    pairs: tuple[LeaderboardPair, ...]
    adjacent_separated: tuple[bool, ...]
    baseline: str
    wins: tuple[int, ...]
    ties: tuple[int, ...]
    losses: tuple[int, ...]
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    resolution: float
    exact: bool
    n_queries: int
    n_clusters: int

    def pair(self, run_a: str, run_b: str) -> LeaderboardPair:
        """Find the pair of two runs, in either order (differences stay ``upper - lower``).

        Raises
        ------
        ParameterError
            When either name is not a run of the leaderboard.
        """
        for row in self.pairs:
            if {row.run_a, row.run_b} == {run_a, run_b} and run_a != run_b:
                return row
        raise ParameterError(
            f"No pair of {run_a!r} and {run_b!r} in the leaderboard; its runs are "
            f"{', '.join(repr(r) for r in self.runs)}."
        )

    def to_rows(self) -> list[dict[str, Any]]:
        """One plain dict per run, in leaderboard order, for tables and reports.

        Keys: ``rank``, ``run``, ``mean``, ``low``, ``high``, ``adjusted`` (None without
        floors), ``rank_low``, ``rank_high``, ``separated_from_next`` (None for the last run),
        ``wins``, ``ties``, ``losses``.
        """
        rows = []
        for index, run in enumerate(self.runs):
            rows.append(
                {
                    "rank": self.ranks[index],
                    "run": run,
                    "mean": self.means[index],
                    "low": self.intervals[index].low,
                    "high": self.intervals[index].high,
                    "adjusted": None
                    if self.adjusted_scores is None
                    else self.adjusted_scores[index],
                    "rank_low": self.rank_low[index],
                    "rank_high": self.rank_high[index],
                    "separated_from_next": self.adjacent_separated[index]
                    if index < len(self.adjacent_separated)
                    else None,
                    "wins": self.wins[index],
                    "ties": self.ties[index],
                    "losses": self.losses[index],
                }
            )
        return rows

    def pair_rows(self) -> list[dict[str, Any]]:
        """One plain dict per pair; ``p_text`` shows a p at the resolution as ``'≤ 0.0001'``."""
        return [
            {
                "run_a": row.run_a,
                "run_b": row.run_b,
                "difference": row.difference,
                "p_value": row.p_value,
                "adjusted_p_value": row.adjusted_p_value,
                "significant": row.significant,
                "p_text": f"≤ {self.resolution:.2g}" if row.at_resolution else f"{row.p_value:.4g}",
            }
            for row in self.pairs
        ]


def _run_matrix(values: Any, func: str) -> tuple[list[str], np.ndarray]:
    if not isinstance(values, Mapping):
        raise ParameterError(
            f"The 'values' parameter of {func} must be a mapping from run names to per-query "
            f"values. Got {type(values).__name__} instead."
        )
    if len(values) < 2:
        raise ParameterError(
            f"The 'values' parameter of {func} must hold at least two runs. "
            f"Got {len(values)} instead."
        )
    names: list[str] = []
    columns: list[np.ndarray] = []
    for name, column in values.items():
        if not isinstance(name, str):
            raise ParameterError(
                f"The run names given to {func} must be str. Got {_shown(name)} instead."
            )
        array = _finite_values(column, f"values[{name!r}]", func)
        if columns and array.size != columns[0].size:
            raise ParameterError(
                f"Every run given to {func} must hold one value per query for the same "
                f"queries. Got {columns[0].size} values for {names[0]!r} and {array.size} for "
                f"{name!r} instead."
            )
        names.append(name)
        columns.append(array)
    return names, np.stack(columns, axis=1)


def _competition_ranks(means: np.ndarray) -> np.ndarray:
    """Rank 1 for the largest mean along the last axis; equal means share the best rank."""
    return np.asarray(sps.rankdata(-means, method="min", axis=-1), dtype=np.int64)


def leaderboard(
    values: Mapping[str, Any],
    *,
    clusters: Any = None,
    floors: Any = None,
    ceilings: Any = None,
    baseline: str | None = None,
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> Leaderboard:
    r"""Rank runs over the same queries, with rank intervals and corrected pairwise tests.

    Runs are sorted by their mean :math:`\bar M_r` (best first). For each:

    - the interval of the mean, :math:`\bar M_r \pm t_{(1+c)/2,\,G-1} \sqrt{\hat V_r}` with the
      CR1 sandwich variance :math:`\hat V_r` over G clusters (:func:`cluster_mean_interval`;
      without clusters each query is its own and this is the Student t interval);
    - with ``floors`` E and ``ceilings`` C per query, the chance-adjusted score
      :math:`(\bar M_r - \bar E) / (\bar C - \bar E)` (0 is a random ranker, 1 the best
      achievable);
    - the rank interval: ``n_resamples`` resamples of the clusters with replacement, the same
      resample for every run; each resample's means are ranked (competition ranking, 1 best)
      and the :math:`(1-c)/2` and :math:`(1+c)/2` quantiles of a run's ranks form its
      interval (Hall & Miller 2009). A run whose interval is [1, 1] is first in at least
      :math:`(1+c)/2` of the resamples.

    Every pair is tested by the two-sided paired sign-flip randomization test of
    :func:`~evalvalidity.core.clustered.cluster_paired_test` (exact when
    :math:`2^G \le` ``n_resamples``), and the :math:`m = R(R-1)/2` p-values are adjusted
    together by Holm, :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m-j+1) p_{(j)})`, or
    Benjamini–Hochberg, :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m p_{(j)} / j)`.
    Adjacent runs are *separated* when their adjusted p is at most ``alpha``. The test's
    resolution bounds what it can show: Holm's smallest adjusted p is
    :math:`m \cdot \text{resolution}`, so with too few resamples nothing can be separated.

    Parameters
    ----------
    values : Mapping[str, array_like of float]
        Per-query values of each run (at least two), over the same queries in the same order.
    clusters : array_like of int or str, shape (n,), optional
        Cluster of each query (e.g. from
        :func:`~evalvalidity.core.clustered.clusters_from_shared_gold`); None treats the
        queries as independent.
    floors, ceilings : array_like of float, shape (n,), optional
        Per-query expected score of a random ranking and best achievable score, shared by the
        runs; give both or neither.
    baseline : str, optional
        Run to count wins, ties and losses against; defaults to the first run given.
    correction : {"holm", "bh"}
    alpha : float, default 0.05
    confidence : float, default 0.95
        Of the mean and rank intervals.
    n_resamples : int, default 10_000
    rng : numpy.random.Generator, int or None
        Source of the bootstrap and Monte Carlo tests; None draws fresh entropy.

    Returns
    -------
    Leaderboard

    Raises
    ------
    ParameterError
        On fewer than two runs, runs of different lengths, fewer than two clusters, an
        unknown baseline, only one of floors and ceilings, or a mean ceiling not above the
        mean floor.

    Warns
    -----
    EvalValidityWarning
        When the resolution is too coarse for any pair to be significant after correction.

    Examples
    --------
    >>> runs = {"bm25": [0.2, 0.3, 0.4, 0.3, 0.5, 0.2, 0.4, 0.3],
    ...         "dense": [0.6, 0.7, 0.9, 0.8, 0.7, 0.6, 0.9, 0.8],
    ...         "noise": [0.0, 0.1, 0.0, 0.1, 0.0, 0.0, 0.1, 0.0]}
    >>> board = leaderboard(runs, n_resamples=2000, rng=0)
    >>> board.runs, board.ranks
    (('dense', 'bm25', 'noise'), (1, 2, 3))
    >>> board.rank_low, board.rank_high
    ((1, 2, 3), (1, 2, 3))
    >>> board.exact, board.resolution, board.adjacent_separated
    (True, 0.0078125, (True, True))
    >>> board.to_rows()[0]["wins"], board.baseline
    (8, 'bm25')
    """
    func = "leaderboard"
    names, matrix = _run_matrix(values, func)
    n, n_runs = matrix.shape
    if clusters is None:
        codes, n_clusters = np.arange(n, dtype=np.int64), n
    else:
        codes, n_clusters = _cluster_codes(clusters, n, func)
        if n_clusters < 2:
            raise ParameterError(
                f"The 'clusters' parameter of {func} must hold at least 2 distinct clusters. "
                f"Got {n_clusters} instead."
            )
    if (floors is None) != (ceilings is None):
        raise ParameterError(
            f"The 'floors' and 'ceilings' parameters of {func} go together: give both or "
            f"neither. Got only {'floors' if ceilings is None else 'ceilings'}."
        )
    if baseline is None:
        baseline = names[0]
    elif baseline not in names:
        raise ParameterError(
            f"The 'baseline' parameter of {func} must name one of the runs. "
            f"Got {_shown(baseline)} instead."
        )
    correction = _choice(correction, _CORRECTIONS, "correction", func)
    alpha = _open_unit(alpha, "alpha", func)
    confidence = _open_unit(confidence, "confidence", func)
    n_resamples = _int_at_least(n_resamples, 1, "n_resamples", func)
    generator = _generator(rng, func)

    means = matrix.mean(axis=0)
    # A stable sort on -mean keeps runs with equal means in the order given.
    order = np.argsort(-means, kind="stable")
    matrix = matrix[:, order]
    runs = tuple(names[i] for i in order)
    means = means[order]

    variance = _sandwich_variance(matrix, codes, n_clusters)
    half = float(sps.t.ppf((1.0 + confidence) / 2.0, n_clusters - 1)) * np.sqrt(variance)
    kind = "t" if clusters is None else "sandwich"
    intervals = tuple(
        Interval(float(m), float(m - h), float(m + h), confidence, kind)
        for m, h in zip(means, half, strict=True)
    )

    adjusted_scores = None
    if floors is not None:
        floor_values = _finite_values(floors, "floors", func, min_size=1)
        ceiling_values = _finite_values(ceilings, "ceilings", func, min_size=1)
        if floor_values.size != n or ceiling_values.size != n:
            raise ParameterError(
                f"The 'floors' and 'ceilings' parameters of {func} must hold one value per "
                f"query ({n}). Got {floor_values.size} and {ceiling_values.size} instead."
            )
        floor, top = float(floor_values.mean()), float(ceiling_values.mean())
        if not top > floor:
            raise ParameterError(
                f"The mean ceiling given to {func} must exceed the mean floor. "
                f"Got {top:g} and {floor:g} instead."
            )
        adjusted_scores = tuple(float((m - floor) / (top - floor)) for m in means)

    totals = _cluster_totals(matrix, codes, n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    replicate_means = _cluster_bootstrap_means(totals, sizes, n_resamples, generator)
    replicate_ranks = _competition_ranks(replicate_means)
    tails = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
    bounds = np.quantile(replicate_ranks, tails, axis=0, method="inverted_cdf")

    pair_index = [(i, j) for i in range(n_runs) for j in range(i + 1, n_runs)]
    p_values = np.empty(len(pair_index))
    exact = False
    resamples = n_resamples
    for k, (i, j) in enumerate(pair_index):
        p_values[k], resamples, exact = _sign_flip_p_value(
            totals[:, i] - totals[:, j], n_resamples, generator
        )
    resolution = 2.0 / resamples if exact else 1.0 / (resamples + 1)
    adjusted = _holm(p_values) if correction == "holm" else _benjamini_hochberg(p_values)
    smallest = resolution * len(pair_index) if correction == "holm" else resolution
    if smallest > alpha:
        warnings.warn(
            f"{func}: the randomization test's resolution ({resolution:.3g}) is too coarse for "
            f"any of the {len(pair_index)} pairs to reach alpha = {alpha:g} after "
            f"{correction!r} correction; raise n_resamples or add clusters.",
            EvalValidityWarning,
            stacklevel=2,
        )
    pairs = tuple(
        LeaderboardPair(
            run_a=runs[i],
            run_b=runs[j],
            difference=float(means[i] - means[j]),
            p_value=float(p),
            adjusted_p_value=float(q),
            significant=bool(q <= alpha),
            at_resolution=bool(p <= resolution * (1.0 + 1e-12)),
        )
        for (i, j), p, q in zip(pair_index, p_values, adjusted, strict=True)
    )
    position = {pair: k for k, pair in enumerate(pair_index)}
    adjacent = tuple(pairs[position[(i, i + 1)]].significant for i in range(n_runs - 1))

    reference = matrix[:, runs.index(baseline)]
    gaps = matrix - reference[:, None]
    wins = tuple(int(w) for w in np.count_nonzero(gaps > _TIE_TOLERANCE, axis=0))
    losses = tuple(int(w) for w in np.count_nonzero(gaps < -_TIE_TOLERANCE, axis=0))
    ties = tuple(n - w - lost for w, lost in zip(wins, losses, strict=True))

    return Leaderboard(
        runs=runs,
        means=tuple(float(m) for m in means),
        intervals=intervals,
        adjusted_scores=adjusted_scores,
        ranks=tuple(int(r) for r in _competition_ranks(means)),
        rank_low=tuple(int(r) for r in bounds[0]),
        rank_high=tuple(int(r) for r in bounds[1]),
        pairs=pairs,
        adjacent_separated=adjacent,
        baseline=baseline,
        wins=wins,
        ties=ties,
        losses=losses,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        resolution=resolution,
        exact=exact,
        n_queries=n,
        n_clusters=n_clusters,
    )
