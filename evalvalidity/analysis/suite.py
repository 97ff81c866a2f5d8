r"""Suites: several benchmarks, declared in one TOML file, checked and compared together.

A suite file names the benchmarks and, for each, its judgements, runs and pool::

    name = "retrieval suite"      # optional
    metric = "rr@10"              # default of every benchmark (default rr@10)
    seeds = 16                    # Check 1 seeds, "auto" by default
    seed = 0

    [[benchmark]]
    name = "toy"
    qrels = "toy/qrels.txt"       # paths are relative to the suite file
    runs = { bm25 = "toy/bm25.trec", dense = "toy/dense.trec" }   # or a list of paths
    pool_size = 50                # or pools / candidates / units = "file" (+ analytic_unit)
    noise_run = "toy/noise.trec"  # optional: Check 2
    groups = "toy/groups.tsv"     # optional: query groups (qid, group)
    metric = "ndcg@10"            # optional: this benchmark's metric

A path that names no file is read as a dataset of the workspace. :func:`run_suite` checks each
benchmark (:func:`~evalvalidity.analysis.check.check_benchmark`), ranks its runs
(:func:`~evalvalidity.analysis.compare.run_leaderboard`) and flags the benchmarks that cannot
separate any two of the suite's runs. For a run in every benchmark, the suite mean weighs the
B benchmarks equally, with the stratified interval (docs/math.md, Intervals)

.. math:: \bar M = \frac1B \sum_b \bar M_b, \qquad
          \widehat{SE}(\bar M) = \frac1B \sqrt{\sum_b \hat V_b}, \qquad
          \bar M \pm z_{0.975}\, \widehat{SE},

:math:`\hat V_b` the variance of benchmark b's mean (the CR1 sandwich over its query groups,
or :math:`s_b^2 / n_b`): the benchmarks are independent strata.

Examples
--------
>>> suite = parse_suite('''
... [[benchmark]]
... name = "toy"
... qrels = "q.txt"
... runs = ["a.trec", "b.trec"]
... pool_size = 50
... ''', "suite.toml")
>>> [(b.name, b.plan.run_name, [n for n, _ in b.plan.compare]) for b in suite.benchmarks]
[('toy', 'a.trec', ['b.trec'])]
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

from evalvalidity.analysis.check import check_benchmark, load_inputs
from evalvalidity.analysis.compare import (
    ClusteredStats,
    QueryClusters,
    check_scores,
    clustered_stats,
    query_clusters,
    run_leaderboard,
)
from evalvalidity.analysis.plan import CheckPlan, DatasetRef, PoolDeclaration
from evalvalidity.analysis.results import CheckResult
from evalvalidity.core.clustered import _cluster_codes, _sandwich_variance
from evalvalidity.core.leaderboard import Leaderboard
from evalvalidity.core.metrics import parse_metric
from evalvalidity.core.types import Progress
from evalvalidity.errors import EvalValidityError, ParameterError
from evalvalidity.io.groups import read_groups

__all__ = [
    "BenchmarkOutcome",
    "Suite",
    "SuiteBenchmark",
    "SuiteMean",
    "SuiteResult",
    "load_suite",
    "parse_suite",
    "run_suite",
]

_SUITE_KEYS = {"name", "metric", "seeds", "seed", "benchmark"}
_BENCH_KEYS = {
    "name",
    "qrels",
    "runs",
    "pool_size",
    "pools",
    "candidates",
    "units",
    "analytic_unit",
    "noise_run",
    "groups",
    "metric",
}


@dataclass(frozen=True)
class SuiteBenchmark:
    """One benchmark of a suite: its check plan and, optionally, its groups file."""

    name: str
    plan: CheckPlan
    groups: str | None = None


@dataclass(frozen=True)
class Suite:
    """A parsed suite file."""

    name: str
    benchmarks: tuple[SuiteBenchmark, ...]
    source: str


def _ref(value: Any, base: Path, where: str) -> DatasetRef:
    if not isinstance(value, str) or not value:
        raise ParameterError(f"{where} must be a file path or a dataset name. Got {value!r}.")
    path = base / value
    return DatasetRef.file(str(path)) if path.is_file() else DatasetRef.dataset(value)


def _runs(value: Any, base: Path, where: str) -> list[tuple[str, DatasetRef]]:
    if isinstance(value, list):
        pairs = [(os.path.basename(str(v)) or str(v), _ref(v, base, where)) for v in value]
    elif isinstance(value, Mapping):
        pairs = [(str(k), _ref(v, base, f"{where}.{k}")) for k, v in value.items()]
    else:
        raise ParameterError(
            f"{where} must be a list of run paths or a table name = path. Got {value!r}."
        )
    if not pairs:
        raise ParameterError(f"{where} names no run.")
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ParameterError(f"{where} names two runs alike: {names}; give them names.")
    return pairs


def parse_suite(text: str, source: str, base: str | os.PathLike[str] | None = None) -> Suite:
    r"""Parse a suite file's text; paths are relative to ``base`` (default: ``source``'s folder).

    Raises
    ------
    ParameterError
        On invalid TOML, unknown keys, a benchmark without qrels, runs or a pool, or two
        benchmarks of one name; the message names the file and the benchmark.

    Examples
    --------
    Runs given as a table are named by its keys:

    >>> suite = parse_suite(
    ...     'name = "s"\n[[benchmark]]\nname = "toy"\nqrels = "q.txt"\n'
    ...     'runs = { bm25 = "a.trec" }\npool_size = 50\n',
    ...     "suite.toml",
    ... )
    >>> suite.name, suite.benchmarks[0].plan.run_name
    ('s', 'bm25')
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{source}: not valid TOML: {exc}.") from exc
    folder = Path(base) if base is not None else Path(source).parent
    unknown = sorted(set(data) - _SUITE_KEYS)
    if unknown:
        raise ParameterError(
            f"{source}: unknown key(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(sorted(_SUITE_KEYS))}."
        )
    metric = data.get("metric", "rr@10")
    seeds = data.get("seeds", "auto")
    seed = data.get("seed", 0)
    items = data.get("benchmark")
    if not isinstance(items, list) or not items:
        raise ParameterError(f"{source}: declare at least one [[benchmark]].")
    benchmarks: list[SuiteBenchmark] = []
    for position, item in enumerate(items, start=1):
        where = f"{source}: benchmark {position}"
        if not isinstance(item, Mapping):
            raise ParameterError(f"{where} must be a table.")
        name = item.get("name", f"benchmark {position}")
        if not isinstance(name, str) or not name:
            raise ParameterError(f"{where}: 'name' must be a non-empty string.")
        where = f"{source}: benchmark {name!r}"
        bad = sorted(set(item) - _BENCH_KEYS)
        if bad:
            raise ParameterError(
                f"{where}: unknown key(s) {', '.join(bad)}; expected some of "
                f"{', '.join(sorted(_BENCH_KEYS))}."
            )
        for key in ("qrels", "runs"):
            if key not in item:
                raise ParameterError(f"{where} lacks {key!r}.")
        runs = _runs(item["runs"], folder, f"{where}: runs")
        pool_keys = [k for k in ("pool_size", "pools", "candidates", "units") if k in item]
        if len(pool_keys) != 1:
            raise ParameterError(
                f"{where}: declare the pool one way: pool_size, pools, candidates or units. "
                f"Got {', '.join(pool_keys) or 'none'}."
            )
        try:
            if "pool_size" in item:
                pool = PoolDeclaration(corpus_size=item["pool_size"])
            else:
                key = pool_keys[0]
                declared: dict[str, Any] = {
                    key: _ref(item[key], folder, f"{where}: {key}"),
                    "analytic_unit": item.get("analytic_unit", "documents"),
                }
                pool = PoolDeclaration(**declared)
            plan = CheckPlan(
                run=runs[0][1],
                run_name=runs[0][0],
                compare=tuple(runs[1:]),
                qrels=_ref(item["qrels"], folder, f"{where}: qrels"),
                pool=pool,
                noise_run=_ref(item["noise_run"], folder, f"{where}: noise_run")
                if "noise_run" in item
                else None,
                metric=parse_metric(item.get("metric", metric)).name,
                seeds=seeds,
                seed=seed,
            )
        except ParameterError as exc:
            raise ParameterError(f"{where}: {exc}") from exc
        groups = item.get("groups")
        if groups is not None:
            if not isinstance(groups, str):
                raise ParameterError(f"{where}: 'groups' must be a file path.")
            groups = str(folder / groups)
        if any(b.name == name for b in benchmarks):
            raise ParameterError(f"{source}: two benchmarks are named {name!r}.")
        benchmarks.append(SuiteBenchmark(name, plan, groups))
    title = data.get("name", Path(source).stem)
    return Suite(str(title), tuple(benchmarks), source)


def load_suite(path: str | os.PathLike[str]) -> Suite:
    r"""Read and parse a suite file (see :func:`parse_suite`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "suite.toml"
    ...     _ = path.write_text(
    ...         '[[benchmark]]\nname = "toy"\nqrels = "q.txt"\nruns = ["a.trec"]\npool_size = 50\n'
    ...     )
    ...     suite = load_suite(path)
    >>> [(b.name, b.plan.run_name, b.plan.pool.corpus_size) for b in suite.benchmarks]
    [('toy', 'a.trec', 50)]
    """
    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise ParameterError(f"Cannot read the suite file {name!r}: {exc.strerror}.") from exc
    return parse_suite(text, name)


@dataclass(frozen=True)
class BenchmarkOutcome:
    """What one benchmark of a suite showed.

    Attributes
    ----------
    name : str
    result : CheckResult or None
        None when the benchmark could not be checked (``error`` says why).
    board : Leaderboard or None
        With two runs or more.
    clustered : ClusteredStats or None
        With a groups file.
    values : dict of str to ndarray
        Per-query scores of each run.
    variances : dict of str to float
        Variance of each run's mean (CR1 over the groups, or s² / n).
    separable : bool or None
        Some pair of runs differs significantly after correction (None with one run).
    notes : tuple of str
    error : str or None
    """

    name: str
    result: CheckResult | None
    board: Leaderboard | None
    clustered: ClusteredStats | None
    values: dict[str, np.ndarray]
    variances: dict[str, float]
    separable: bool | None
    notes: tuple[str, ...] = ()
    error: str | None = None

    @property
    def flagged(self) -> bool:
        """The benchmark cannot separate the suite's runs (or could not be checked)."""
        return self.error is not None or self.separable is False


@dataclass(frozen=True)
class SuiteMean:
    """A run's mean over the suite's benchmarks (equal weights) with its stratified interval."""

    run: str
    mean: float
    low: float
    high: float
    standard_error: float
    n_benchmarks: int


@dataclass(frozen=True)
class SuiteResult:
    """Every benchmark's outcome and the suite means of the runs they all hold."""

    name: str
    outcomes: tuple[BenchmarkOutcome, ...]
    means: tuple[SuiteMean, ...]

    @property
    def flagged(self) -> tuple[str, ...]:
        """Names of the benchmarks that cannot separate the suite's runs."""
        return tuple(o.name for o in self.outcomes if o.flagged)


def _variances(
    values: Mapping[str, np.ndarray], clusters: QueryClusters | None
) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, column in values.items():
        n = column.size
        if clusters is not None and clusters.n_clusters >= 2:
            codes, g = _cluster_codes(clusters.labels, n, "run_suite")
            out[name] = float(_sandwich_variance(column[:, None], codes, g)[0])
        else:
            out[name] = float(np.var(column, ddof=1) / n) if n >= 2 else math.nan
    return out


def _outcome(
    bench: SuiteBenchmark, workspace: Any, owner: str | None, n_resamples: int
) -> BenchmarkOutcome:
    plan = bench.plan
    inputs = load_inputs(plan, workspace, owner)
    result = check_benchmark(plan, inputs)
    values = check_scores(plan, inputs, result)
    clusters = None
    clustered = None
    if bench.groups is not None:
        clusters = query_clusters(result.queries.qid, groups=read_groups(bench.groups))
        clustered = clustered_stats(result, clusters)
    board = None
    notes: list[str] = []
    separable = None
    if len(values) >= 2:
        board, notes = run_leaderboard(
            result, values, clusters=clusters, n_resamples=n_resamples, seed=plan.seed
        )
        separable = any(p.significant for p in board.pairs)
    return BenchmarkOutcome(
        name=bench.name,
        result=result,
        board=board,
        clustered=clustered,
        values=values,
        variances=_variances(values, clusters),
        separable=separable,
        notes=tuple(notes),
    )


def suite_means(outcomes: tuple[BenchmarkOutcome, ...]) -> tuple[SuiteMean, ...]:
    """The stratified suite mean of every run that all checked benchmarks hold."""
    checked = [o for o in outcomes if o.result is not None]
    if not checked:
        return ()
    common = [r for r in checked[0].values if all(r in o.values for o in checked)]
    z = float(sps.norm.ppf(0.975))
    out = []
    b = len(checked)
    for run in common:
        means = np.array([float(np.mean(o.values[run])) for o in checked])
        variances = np.array([o.variances[run] for o in checked])
        se = float(math.sqrt(np.sum(variances))) / b
        mean = float(np.mean(means))
        out.append(SuiteMean(run, mean, mean - z * se, mean + z * se, se, b))
    return tuple(sorted(out, key=lambda m: -m.mean))


def run_suite(
    suite: Suite,
    *,
    workspace: Any = None,
    owner: str | None = None,
    progress: Progress | None = None,
    n_resamples: int = 10_000,
) -> SuiteResult:
    r"""Check every benchmark of ``suite`` and summarize them.

    A benchmark whose inputs cannot be read or checked is kept with its ``error`` (and
    flagged), so that one bad benchmark does not hide the others.

    Parameters
    ----------
    suite : Suite
    workspace : Workspace or path, optional
        Where a name that is not a file is looked up (default: the default workspace).
    owner : str, optional
        Whose datasets such a name means: the owner's private one, else the shared one.
        None sees shared datasets only; another owner's private dataset is reported exactly
        as a missing one.
    progress : callable, optional
    n_resamples : int, default 10000

    Examples
    --------
    The write-up's toy benchmark (a model run and a noise run), declared in TOML:

    >>> from evalvalidity.analysis.examples import data_root
    >>> toy = data_root() / "writeup" / "toy"
    >>> suite = parse_suite(
    ...     f'name = "demo"\n[[benchmark]]\nname = "toy"\nqrels = "{toy}/qrels.txt"\n'
    ...     f'runs = {{ model = "{toy}/model.trec", noise = "{toy}/noise.trec" }}\n'
    ...     "pool_size = 200\n",
    ...     "suite.toml",
    ... )
    >>> result = run_suite(suite, n_resamples=200)
    >>> [(o.name, o.result.verdict) for o in result.outcomes], result.flagged
    ([('toy', 'healthy')], ())
    """
    outcomes: list[BenchmarkOutcome] = []
    total = len(suite.benchmarks)
    for index, bench in enumerate(suite.benchmarks):
        if progress:
            progress(index / total, f"Checking {bench.name}")
        try:
            outcomes.append(_outcome(bench, workspace, owner, n_resamples))
        except EvalValidityError as exc:
            outcomes.append(
                BenchmarkOutcome(bench.name, None, None, None, {}, {}, None, (), str(exc))
            )
    if progress:
        progress(1.0, "Done")
    done = tuple(outcomes)
    return SuiteResult(suite.name, done, suite_means(done))
