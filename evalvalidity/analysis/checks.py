"""Benchmark health: the checks, the triage table and the verdict.

:func:`check_benchmark` takes the canonical tables (a model run, the judgements, the declared
pool, and optionally a noise run, a harness's output on noise runs and more runs to compare)
and returns one :class:`CheckResult`, which feeds the command line, the dashboard and the
report alike. What it computes:

- **Floors** per query: the exact expected score of a uniformly random order of the declared
  pool (:mod:`evalvalidity.core.floors`), or of random chunk scores deduplicated to documents
  (:mod:`evalvalidity.core.dedup`) when a units map is declared.
- **Headroom**: ceiling − floor, floor / ceiling, the chance-adjusted score
  (M − E) / (ceiling − E) and how many standard errors of the model's mean fit in the headroom.
- **Check 1** (is the harness's arithmetic right?): random scores pushed through a scorer and
  compared with the exact floor. Built in (seeded random rankings through this package's own
  scorer, importance-sampled at large pools, see :mod:`evalvalidity.core.simulate`) or on the team's
  own harness (its per-query output on noise runs).
- **Inferred N**: the pool size that the measured random score implies, by exact inversion, with
  a diagnosis when it does not match the declared pool.
- **Check 2** (does the score come from the vectors?): a model run against a noise run.
- **Triage** per query, **power** (interval of the mean, the smallest detectable difference, the
  queries needed) and paired **comparisons** of several runs.

The thresholds of the verdict are in :class:`Thresholds`, each documented.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.core import dedup, floors, simulate, stats
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import EvalValidityWarning, InputDataError, ParameterError
from evalvalidity.io.scoring import score_run
from evalvalidity.io.tables import conform

__all__ = [
    "SCHEMA_VERSION",
    "CheckResult",
    "HarnessCheck",
    "Headroom",
    "InferredN",
    "NoiseCheck",
    "PoolSpec",
    "Power",
    "QueryTable",
    "Reason",
    "Thresholds",
    "benchmark_floor",
    "check_benchmark",
    "noise_runs",
]

#: Version of the JSON the ``check`` command prints; bumped on any incompatible change.
SCHEMA_VERSION = 1

Progress = Callable[[float, str], None]

_Z95 = 1.959963984540054


# ------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class PoolSpec:
    """What each query's ranking was drawn from: give exactly one way of sizing the pool.

    Attributes
    ----------
    corpus_size : int, optional
        Every query ranks the whole corpus of this many items (in the run's unit).
    pools : pyarrow.Table, optional
        Per-query pool sizes (``POOLS_SCHEMA``).
    candidates : pyarrow.Table, optional
        Per-query candidate lists (``CANDIDATES_SCHEMA``).
    units : pyarrow.Table, optional
        A units map (``UNITS_SCHEMA``): the run ranks chunks of the whole map, which the scorer
        deduplicates to documents by first occurrence.
    analytic_unit : str
        With a units map: ``"documents"`` (default) computes the exact floor of deduplicated
        random chunk scores; ``"chunks"`` computes it as if the scorer ranked chunks without
        deduplication — the analytic a harness with the units bug compares with.
    """

    corpus_size: int | None = None
    pools: pa.Table | None = None
    candidates: pa.Table | None = None
    units: pa.Table | None = None
    analytic_unit: str = "documents"

    def __post_init__(self) -> None:
        given = [
            name
            for name in ("corpus_size", "pools", "candidates", "units")
            if getattr(self, name) is not None
        ]
        if len(given) != 1:
            raise ParameterError(
                "Declare the pool in exactly one way: a corpus size, per-query pool sizes, "
                "per-query candidate lists or a units map. Got "
                + (", ".join(given) if given else "none")
                + "."
            )
        if self.corpus_size is not None and (
            isinstance(self.corpus_size, bool)
            or not isinstance(self.corpus_size, int)
            or self.corpus_size < 1
        ):
            raise ParameterError(
                f"The corpus size must be an int >= 1. Got {self.corpus_size!r} instead."
            )
        if self.analytic_unit not in ("documents", "chunks"):
            raise ParameterError(
                "The 'analytic_unit' parameter of PoolSpec must be 'documents' or 'chunks'. "
                f"Got {self.analytic_unit!r} instead."
            )
        if self.analytic_unit == "chunks" and self.units is None:
            raise ParameterError("analytic_unit='chunks' needs a units map.")

    @property
    def kind(self) -> str:
        """``corpus``, ``pools``, ``candidates`` or ``units``."""
        for name, kind in (
            ("corpus_size", "corpus"),
            ("pools", "pools"),
            ("candidates", "candidates"),
            ("units", "units"),
        ):
            if getattr(self, name) is not None:
                return kind
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Thresholds:
    """Where the verdict draws its lines; every rule is stated in the reasons it produces.

    Attributes
    ----------
    floor_share_broken : float
        Mean floor / mean ceiling at or above this: no headroom, ``broken`` (a pool of 8 with
        5 gold: 0.79).
    floor_share_warning : float
        ... at or above this: ``warning``.
    ratio_band : tuple of float
        Check 1 or the noise run: a ratio to the floor whose 95 % interval excludes 1 is a
        ``warning`` inside this band and ``broken`` outside it.
    leak_z : float
        A noise run this many standard errors (of the exact floor distribution) above its
        floor, and outside ``ratio_band``: something other than the vectors carries the score.
    min_headroom_se : float
        Fewer standard errors of the model's mean than this fit in the headroom: ``warning``
        (only gross differences are detectable).
    query_floor_share : float
        Per query: floor / ceiling at or above this is flagged ``floor_high``.
    delta : float
        The difference between two systems the power analysis plans for.
    precision : float
        Target relative standard error of Check 1's ratio when choosing seeds.
    """

    floor_share_broken: float = 0.5
    floor_share_warning: float = 0.25
    ratio_band: tuple[float, float] = (0.8, 1.25)
    leak_z: float = 4.0
    min_headroom_se: float = 4.0
    query_floor_share: float = 0.5
    delta: float = 0.05
    precision: float = 0.02


# ------------------------------------------------------------------------------ results


@dataclass(frozen=True)
class Reason:
    """One finding behind the verdict, with the numbers it rests on."""

    severity: str  # "broken", "warning" or "info"
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


@dataclass(frozen=True)
class NoiseCheck:
    """Check 2: a model run against a noise run (or a live noise test)."""

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


@dataclass(frozen=True)
class GoldClass:
    """Inferred N for the queries sharing one gold count."""

    gold: int
    n_queries: int
    measured: float
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class InferredN:
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
    """What the benchmark can detect."""

    n_queries: int
    per_query_variance: float
    min_detectable_difference: float
    delta: float
    queries_needed: int
    alpha: float = 0.05
    power: float = 0.8


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
    verdict: str
    reasons: tuple[Reason, ...]
    run_name: str | None
    n_queries: int
    pool_kind: str
    declared_pool: float | None
    declared_chunks: int | None
    declared_documents: int | None
    floor_method: str
    floor: Floor
    headroom: Headroom
    harness: HarnessCheck | None
    noise: NoiseCheck | None
    live: NoiseCheck | None
    inferred_n: InferredN | None
    power: Power | None
    comparison: Comparison | None
    queries: QueryTable
    flat_mean: float | None
    adjusted_mean: float | None
    multi_gold_floor_share: float
    notes: tuple[str, ...]

    @property
    def model_score(self) -> float | None:
        """The model's mean score."""
        return self.headroom.model


# ---------------------------------------------------------------------- the benchmark


@dataclass(frozen=True)
class _Benchmark:
    """Per-query arrays of the judged queries: pool, gold and the ids needed to simulate."""

    qids: np.ndarray
    pool_size: np.ndarray  # N in the analytic unit
    gold: np.ndarray  # relevant (at the metric's threshold) in the pool
    judged: np.ndarray  # relevant judged in all
    positive: np.ndarray  # judged with grade >= 1, in all
    gains: list[np.ndarray]  # grades (>= 1) of judged items in the pool
    judged_gains: list[np.ndarray]
    gold_docs: list[np.ndarray]  # docids of judged (grade >= 1) items in the pool
    duplicated: np.ndarray  # duplicate judgement rows per query
    declared_pool: float | None
    declared_chunks: int | None
    declared_documents: int | None
    # units: documents and their chunk counts; gold as indices into them
    doc_ids: np.ndarray | None = None
    chunk_counts: np.ndarray | None = None
    gold_doc_index: list[np.ndarray] | None = None
    chunk_ids: np.ndarray | None = None
    chunk_doc: np.ndarray | None = None
    candidate_lists: list[np.ndarray] | None = None


def _strings(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(column.to_pylist(), dtype=object)


def _build_benchmark(qrels: pa.Table, pool: PoolSpec, metric: Metric) -> _Benchmark:
    qrels = conform(qrels, "qrels")
    qid = _strings(qrels.column("qid"))
    docid = _strings(qrels.column("docid"))
    rel = qrels.column("rel").to_numpy(zero_copy_only=False).astype(np.int64)
    if len(qid) == 0:
        raise InputDataError("The judgements hold no rows.")
    if any(q is None for q in qid) or any(d is None for d in docid):
        raise InputDataError("The judgements hold rows without a qid or a docid.")
    # Ids stay Python str in object arrays: numpy's fixed-width 'U' strings drop trailing NULs.
    qids, qindex = np.unique(qid, return_inverse=True)
    n_queries = len(qids)
    # Duplicate judgement rows (same query and item): counted per query, kept once.
    _, dindex = np.unique(docid, return_inverse=True)
    pair_key = qindex.astype(np.int64) * (int(dindex.max(initial=0)) + 1) + dindex
    _, first_index, pair_counts = np.unique(pair_key, return_index=True, return_counts=True)
    duplicated = np.bincount(
        qindex[first_index], weights=pair_counts - 1, minlength=n_queries
    ).astype(np.int64)
    keep = np.zeros(len(qid), dtype=bool)
    keep[first_index] = True
    qindex, docid, rel = qindex[keep], docid[keep], rel[keep]
    positive_mask = rel >= 1

    declared_pool: float | None = None
    declared_chunks: int | None = None
    declared_documents: int | None = None
    in_pool = positive_mask.copy()
    extra: dict[str, Any] = {}
    kind = pool.kind
    if kind == "corpus":
        assert pool.corpus_size is not None
        pool_size = np.full(n_queries, pool.corpus_size, dtype=np.int64)
        declared_pool = float(pool.corpus_size)
    elif kind == "pools":
        assert pool.pools is not None
        pools = conform(pool.pools, "pools")
        pq = _strings(pools.column("qid"))
        ps = pools.column("pool_size").to_numpy(zero_copy_only=False).astype(np.int64)
        lookup = dict(zip(pq.tolist(), ps.tolist(), strict=True))
        missing = [q for q in qids.tolist() if q not in lookup]
        if missing:
            raise InputDataError(
                f"The pool sizes give no size for {len(missing):,} judged quer"
                f"{'y' if len(missing) == 1 else 'ies'} (first: {', '.join(missing[:5])})."
            )
        pool_size = np.array([lookup[q] for q in qids.tolist()], dtype=np.int64)
        if np.any(pool_size < 1):
            raise InputDataError("Every pool size must be at least 1.")
        declared_pool = float(np.mean(pool_size))
    elif kind == "candidates":
        assert pool.candidates is not None
        cands = conform(pool.candidates, "candidates")
        cq = _strings(cands.column("qid"))
        cd = _strings(cands.column("docid"))
        lists: dict[str, set[str]] = {}
        for q, d in zip(cq.tolist(), cd.tolist(), strict=True):
            lists.setdefault(q, set()).add(d)
        missing = [q for q in qids.tolist() if q not in lists]
        if missing:
            raise InputDataError(
                f"The candidate lists hold no candidates for {len(missing):,} judged quer"
                f"{'y' if len(missing) == 1 else 'ies'} (first: {', '.join(missing[:5])})."
            )
        pool_size = np.array([len(lists[q]) for q in qids.tolist()], dtype=np.int64)
        in_pool = positive_mask & np.array(
            [d in lists[qids[i]] for i, d in zip(qindex.tolist(), docid.tolist(), strict=True)],
            dtype=bool,
        )
        extra["candidate_lists"] = [np.array(sorted(lists[q]), dtype=object) for q in qids.tolist()]
        declared_pool = float(np.mean(pool_size))
    else:
        assert pool.units is not None
        units = conform(pool.units, "units")
        chunk_ids = _strings(units.column("chunk_id"))
        chunk_doc_ids = _strings(units.column("doc_id"))
        doc_ids, chunk_doc = np.unique(chunk_doc_ids, return_inverse=True)
        chunk_counts = np.bincount(chunk_doc, minlength=len(doc_ids)).astype(np.int64)
        declared_chunks = len(chunk_ids)
        declared_documents = len(doc_ids)
        pos = np.searchsorted(doc_ids, docid)
        pos_clipped = np.minimum(pos, len(doc_ids) - 1)
        known = doc_ids[pos_clipped] == docid
        in_pool = positive_mask & known
        extra.update(
            doc_ids=doc_ids,
            chunk_counts=chunk_counts,
            chunk_ids=chunk_ids,
            chunk_doc=chunk_doc.astype(np.int64),
        )
        extra["gold_doc_index"] = _split(pos_clipped[in_pool], qindex[in_pool], n_queries)
        if pool.analytic_unit == "chunks":
            pool_size = np.full(n_queries, declared_chunks, dtype=np.int64)
            declared_pool = float(declared_chunks)
        else:
            pool_size = np.full(n_queries, declared_documents, dtype=np.int64)
            declared_pool = float(declared_documents)

    relevant = rel >= metric.rel
    judged = np.bincount(qindex[relevant], minlength=n_queries).astype(np.int64)
    gold = np.bincount(qindex[relevant & in_pool], minlength=n_queries).astype(np.int64)
    positive = np.bincount(qindex[positive_mask], minlength=n_queries).astype(np.int64)
    if kind in ("corpus", "pools"):
        # Only sizes are declared: every judged item is taken to be in the pool.
        gold = np.minimum(gold, pool_size)
    gains = _split(rel[in_pool], qindex[in_pool], n_queries)
    judged_gains = _split(rel[positive_mask], qindex[positive_mask], n_queries)
    gold_docs = _split(docid[in_pool], qindex[in_pool], n_queries)
    return _Benchmark(
        qids=qids.astype(object),
        pool_size=pool_size,
        gold=gold,
        judged=judged,
        positive=positive,
        gains=gains,
        judged_gains=judged_gains,
        gold_docs=gold_docs,
        duplicated=duplicated,
        declared_pool=declared_pool,
        declared_chunks=declared_chunks,
        declared_documents=declared_documents,
        **extra,
    )


def _split(values: np.ndarray, query: np.ndarray, n_queries: int) -> list[np.ndarray]:
    """Split ``values`` into one array per query (in query order)."""
    order = np.argsort(query, kind="stable")
    bounds = np.searchsorted(query[order], np.arange(n_queries + 1))
    ordered = values[order]
    return [ordered[bounds[i] : bounds[i + 1]] for i in range(n_queries)]


# --------------------------------------------------------------------------- floors


def _quietly(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func`` with its degenerate-case warnings silenced: the triage flags them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        return func(*args, **kwargs)


def _floor(
    bench: _Benchmark, metric: Metric, pool: PoolSpec, rng: np.random.Generator
) -> tuple[Floor, str]:
    graded = metric.family in ("ndcg", "ndcg_exp")
    if pool.kind == "units" and pool.analytic_unit == "documents":
        assert bench.chunk_counts is not None and bench.gold_doc_index is not None
        if metric.family in ("rr", "hit"):
            result = _quietly(
                dedup.dedup_floor,
                metric,
                bench.chunk_counts,
                bench.gold_doc_index,
                judged=bench.judged,
            )
            return result, "exact (deduplicated chunk scores)"
        gold_index = bench.gold_doc_index
        if metric.binary:
            gold_index = [
                idx[g >= metric.rel]
                for idx, g in zip(bench.gold_doc_index, bench.gains, strict=True)
            ]
        mc = _quietly(
            dedup.dedup_floor_mc,
            metric,
            bench.chunk_counts,
            gold_index,
            judged=bench.judged,
            gains=bench.gains if graded else None,
            n_draws=5_000,
            rng=rng,
        )
        return mc.floor, f"Monte Carlo ({mc.n_draws:,} samples, deduplicated chunk scores)"
    gains = bench.gains if graded else None
    judged_gains = bench.judged_gains if graded else None
    result = _quietly(
        floors.noise_floor,
        metric,
        bench.pool_size,
        bench.gold,
        judged=bench.judged,
        gains=gains,
        judged_gains=judged_gains,
    )
    return result, "exact"


# ----------------------------------------------------------------------- Check 1


def _metric_depth(metric: Metric, bench: _Benchmark) -> int | None:
    """How deep a ranking the metric reads; None for the whole list."""
    if metric.family == "rprec":
        return int(max(1, bench.judged.max()))
    return metric.k


def _layout(
    bench: _Benchmark, pool: PoolSpec
) -> tuple[simulate.PoolLayout, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """The simulation's pool per query and a function naming its drawn items."""
    n = len(bench.qids)
    if pool.kind == "units":
        assert bench.chunk_doc is not None and bench.gold_doc_index is not None
        assert bench.chunk_ids is not None
        chunk_doc = bench.chunk_doc
        order = np.argsort(chunk_doc, kind="stable")
        starts = np.concatenate(
            ([0], np.cumsum(np.bincount(chunk_doc, minlength=chunk_doc.max() + 1)))
        )
        gold_items = [
            np.concatenate([order[starts[d] : starts[d + 1]] for d in docs])
            if len(docs)
            else np.zeros(0, dtype=np.int64)
            for docs in bench.gold_doc_index
        ]
        sizes = np.full(n, len(chunk_doc), dtype=np.int64)
        layout = simulate.PoolLayout(
            sizes,
            np.concatenate(([0], np.cumsum([len(g) for g in gold_items]))),
            np.concatenate(gold_items).astype(np.int64) if gold_items else np.zeros(0, np.int64),
            chunk_doc=chunk_doc,
        )
        chunk_ids = bench.chunk_ids

        def name_units(query: np.ndarray, items: np.ndarray) -> np.ndarray:
            return chunk_ids[items]

        return layout, name_units
    if pool.kind == "candidates":
        assert bench.candidate_lists is not None
        lists = bench.candidate_lists
        gold_items = []
        for cands, docs in zip(lists, bench.gold_docs, strict=True):
            wanted = set(docs.tolist())
            gold_items.append(np.flatnonzero([c in wanted for c in cands.tolist()]))
        layout = simulate.PoolLayout(
            bench.pool_size.copy(),
            np.concatenate(([0], np.cumsum([len(g) for g in gold_items]))),
            np.concatenate(gold_items).astype(np.int64),
        )
        flat = np.concatenate(lists)
        base = np.concatenate(([0], np.cumsum([len(c) for c in lists])))

        def name_candidates(query: np.ndarray, items: np.ndarray) -> np.ndarray:
            return flat[base[query] + items]

        return layout, name_candidates
    # Sizes only: item i < G_in is the query's i-th gold item, the others are anonymous.
    in_pool = np.minimum(np.array([len(d) for d in bench.gold_docs]), bench.pool_size)
    gold_names = [d[:m] for d, m in zip(bench.gold_docs, in_pool.tolist(), strict=True)]
    layout = simulate.PoolLayout(
        bench.pool_size.copy(),
        np.concatenate(([0], np.cumsum(in_pool))),
        np.concatenate([np.arange(m) for m in in_pool.tolist()]).astype(np.int64),
    )
    flat_gold = np.concatenate(gold_names) if gold_names else np.zeros(0, dtype=object)
    gold_base = np.concatenate(([0], np.cumsum(in_pool)))

    def name_sized(query: np.ndarray, items: np.ndarray) -> np.ndarray:
        is_gold = items < in_pool[query]
        names = np.char.add("~noise~", items.astype(str)).astype(object)
        names[is_gold] = flat_gold[gold_base[query[is_gold]] + items[is_gold]]
        return names

    return layout, name_sized


def _score_samples(
    sample: simulate.PrefixSample,
    namer: Callable[[np.ndarray, np.ndarray], np.ndarray],
    qrels: pa.Table,
    bench: _Benchmark,
    metric: Metric,
    units: pa.Table | None,
    ties: str,
) -> np.ndarray:
    """Score every sampled prefix with the package's own scorer; one value per sample."""
    lengths = np.diff(sample.offsets)
    sample_of_row = np.repeat(np.arange(sample.n_draws), lengths)
    position = np.arange(len(sample.items)) - np.repeat(sample.offsets[:-1], lengths)
    names = namer(sample.query[sample_of_row], sample.items)
    sample_qid = np.char.add("s", np.arange(sample.n_draws).astype(str)).astype(object)
    run = pa.table(
        {
            "qid": pa.array(sample_qid[sample_of_row], pa.string()),
            "docid": pa.array(names, pa.string()),
            "score": pa.array((lengths.max() - position).astype(np.float64)),
            "rank": pa.array(position + 1, pa.int64()),
            "line": pa.nulls(len(names), pa.int64()),
        }
    )
    qrels = conform(qrels, "qrels")
    qq = _strings(qrels.column("qid"))
    qindex = np.searchsorted(bench.qids, qq)
    qindex = np.minimum(qindex, len(bench.qids) - 1)
    qrels_known = bench.qids[qindex] == qq
    # Replicate each query's judgements for each of its samples.
    samples_by_query = _split(np.arange(sample.n_draws), sample.query, len(bench.qids))
    rows = np.flatnonzero(qrels_known)
    per_row = np.array([len(samples_by_query[qindex[r]]) for r in rows], dtype=np.int64)
    row_rep = np.repeat(rows, per_row)
    sample_rep = (
        np.concatenate([samples_by_query[qindex[r]] for r in rows])
        if len(rows)
        else np.zeros(0, dtype=np.int64)
    )
    replicated = pa.table(
        {
            "qid": pa.array(sample_qid[sample_rep], pa.string()),
            "docid": qrels.column("docid").take(pa.array(row_rep)),
            "rel": qrels.column("rel").take(pa.array(row_rep)),
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
    values = np.zeros(sample.n_draws)
    index = np.array([int(q[1:]) for q in scored.qids.tolist()], dtype=np.int64)
    values[index] = scored.values[metric.name]
    return values


def _builtin_check1(
    bench: _Benchmark,
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
    depth = _metric_depth(metric, bench)
    layout, namer = _layout(bench, pool)
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

    def draw(n_seeds: int, first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sample = simulate.sample_prefixes(
            layout,
            n_seeds,
            depth=depth,
            doc_depth=doc_depth,
            gold_weight=weights,
            rng=rng,
            first_draw=first,
        )
        values = _score_samples(sample, namer, qrels, bench, metric, units, ties)
        return values, sample.weight, sample.query

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
            se = _weighted_se(values * w, query, q, pilot)
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
    if n_seeds >= 2:
        se = _weighted_se(weighted, query, q, n_seeds)
    else:
        se = float(np.sqrt(np.sum(floor.variance))) / q
    ratio = _ratio_from(measured, se, mean_floor)
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


def _weighted_se(weighted: np.ndarray, query: np.ndarray, n_queries: int, n_seeds: int) -> float:
    """Standard error of the mean over queries of per-query means of ``n_seeds`` draws."""
    sums = np.bincount(query, weights=weighted, minlength=n_queries)
    squares = np.bincount(query, weights=weighted * weighted, minlength=n_queries)
    means = sums / n_seeds
    var = np.maximum(squares / n_seeds - means * means, 0.0) * n_seeds / max(n_seeds - 1, 1)
    return float(np.sqrt(np.sum(var / n_seeds))) / n_queries


def _ratio_from(measured: float, se: float, analytic: float) -> Interval:
    return Interval(
        measured / analytic, (measured - _Z95 * se) / analytic, (measured + _Z95 * se) / analytic
    )


def _harness_check1(
    bench: _Benchmark, floor: Floor, metric: Metric, harness: pa.Table, notes: list[str]
) -> HarnessCheck:
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
    qid = _strings(harness.column("qid"))
    value = harness.column("value").to_numpy(zero_copy_only=False).astype(np.float64)
    if not np.all(np.isfinite(value)):
        raise InputDataError("The harness output holds values that are NaN or infinite.")
    judged = set(bench.qids.tolist())
    known = np.fromiter((q in judged for q in qid.tolist()), dtype=bool, count=len(qid))
    ignored = len(np.unique(qid[~known]))
    qid, value = qid[known], value[known]
    if len(qid) == 0:
        raise InputDataError("None of the harness output's query ids occur in the judgements.")
    qindex = np.searchsorted(bench.qids, qid)
    n = len(bench.qids)
    counts = np.bincount(qindex, minlength=n)
    present = counts > 0
    sums = np.bincount(qindex, weights=value, minlength=n)
    squares = np.bincount(qindex, weights=value * value, minlength=n)
    per_query = np.full(n, np.nan)
    per_query[present] = sums[present] / counts[present]
    measured = float(np.mean(per_query[present]))
    analytic = float(np.mean(floor.expected[present]))
    q = int(present.sum())
    if np.all(counts[present] >= 2):
        c = counts[present]
        var = np.maximum(squares[present] / c - per_query[present] ** 2, 0) * c / (c - 1)
        se = float(np.sqrt(np.sum(var / c))) / q
    else:
        se = float(np.sqrt(np.sum(floor.variance[present] / counts[present]))) / q
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
    ratio = _ratio_from(measured, se, analytic)
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
        passed=ratio.contains(1.0),
        per_query_measured=per_query,
        sample_values=value,
        sample_weights=np.ones(len(value)),
        missing_queries=missing,
        ignored_queries=ignored,
        measure=chosen_measure,
    )


# --------------------------------------------------------------------- inferred N


def _infer(
    bench: _Benchmark, metric: Metric, source: str, per_query: np.ndarray, se: float, pool: PoolSpec
) -> InferredN | None:
    if metric.family not in floors.INVERTIBLE_FAMILIES:
        return None
    present = np.isfinite(per_query) & (bench.gold > 0)
    if not present.any():
        return None
    measured = float(np.mean(per_query[present]))
    gold = bench.gold[present]
    judged = bench.judged[present]
    whole = _quietly(
        floors.infer_benchmark_pool_size,
        metric,
        measured,
        gold,
        std_error=se if np.isfinite(se) and se > 0 else None,
        judged=judged,
    )
    classes = []
    for g in np.unique(gold).tolist():
        members = gold == g
        values = per_query[present][members]
        class_mean = float(np.mean(values))
        class_se = (
            float(np.std(values, ddof=1) / np.sqrt(len(values)))
            if len(values) > 1 and np.isfinite(se)
            else None
        )
        inferred = _quietly(
            floors.infer_benchmark_pool_size,
            metric,
            class_mean,
            gold[members],
            std_error=class_se,
            judged=judged[members],
        )
        classes.append(
            GoldClass(
                int(g),
                int(members.sum()),
                class_mean,
                float(np.asarray(inferred.estimate).ravel()[0]),
                float(np.asarray(inferred.low).ravel()[0]),
                float(np.asarray(inferred.high).ravel()[0]),
            )
        )
    estimate = float(np.asarray(whole.estimate).ravel()[0])
    low = float(np.asarray(whole.low).ravel()[0])
    high = float(np.asarray(whole.high).ravel()[0])
    saturated = bool(np.asarray(whole.saturated).ravel()[0])
    result = InferredN(
        source=source,
        measured=measured,
        estimate=estimate,
        low=low,
        high=high,
        saturated=saturated,
        declared_pool=bench.declared_pool,
        declared_chunks=bench.declared_chunks,
        declared_documents=bench.declared_documents,
        by_gold=tuple(classes),
        diagnosis=None,
    )
    return result


def _diagnose(inferred: InferredN, pool: PoolSpec, check_passed: bool) -> str | None:
    """Name the likely cause of an inferred N that does not match the declared pool."""
    n, low, high = inferred.estimate, inferred.low, inferred.high
    chunks, docs, declared = (
        inferred.declared_chunks,
        inferred.declared_documents,
        inferred.declared_pool,
    )
    if check_passed or declared is None:
        return None
    if math.isinf(n):
        return (
            "The measured random score is 0: the harness found no gold at all. Check that "
            "its IDs match the judgements' IDs (chunk vs document IDs, prefixes)."
        )
    if chunks is not None and docs is not None:
        if pool.analytic_unit == "chunks" and n < chunks / 2:
            text = (
                f"Your harness counts documents (≈ {docs:,}), not chunks ({chunks:,}): "
                f"the measured random score implies a pool of ≈ {n:,.0f}. Declare the "
                "units map so that the analytic deduplicates too."
            )
            if high < docs:
                text += (
                    " Inferred N is below the document count: gold documents have more "
                    "chunks than average (size-biased gold under max pooling)."
                )
            return text
        if high < docs / 3:
            return (
                f"Inferred N (≈ {n:,.0f}) is far below both the chunk count ({chunks:,}) "
                f"and the document count ({docs:,}): the scorer may be double-counting, "
                "or the gold leaks into the ranking."
            )
    if high < declared / 1.5:
        return (
            f"The measured random score implies a pool of ≈ {n:,.0f} [{low:,.0f}, "
            f"{high:,.0f}], far below the declared {declared:,.0f}: your harness may rank a "
            "coarser unit than the pool counts (e.g. documents after deduplicating chunks — "
            "declare a units map), double-count hits, or the gold leaks into the ranking."
        )
    if low > declared * 1.5:
        return (
            f"The measured random score implies a pool of ≈ {n:,.0f}, above the declared "
            f"{declared:,.0f}: the harness may miss gold (IDs that do not match the "
            "judgements), drop judged queries, or the pool is larger than declared."
        )
    return None


# ------------------------------------------------------------------------ Check 2


def _aligned(result: Any, metric: Metric, qids: np.ndarray) -> np.ndarray:
    lookup = dict(zip(result.qids.tolist(), result.values[metric.name].tolist(), strict=True))
    return np.array([lookup.get(q, 0.0) for q in qids.tolist()], dtype=np.float64)


def _tied_queries(run: pa.Table) -> tuple[int, bool]:
    """Queries whose run holds tied scores, and whether any query's scores are all equal."""
    run = conform(run, "run")
    qid = _strings(run.column("qid"))
    score = run.column("score").to_numpy(zero_copy_only=False)
    key_q, qinv = np.unique(qid, return_inverse=True)
    pairs = np.unique(np.stack([qinv.astype(np.float64), score]), axis=1)
    distinct = np.bincount(pairs[0].astype(np.int64), minlength=len(key_q))
    rows = np.bincount(qinv, minlength=len(key_q))
    return int(np.sum(distinct < rows)), bool(np.any((distinct == 1) & (rows > 1)))


def _noise_check(
    bench: _Benchmark,
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
    expected = floor.expected
    floor_mean = float(np.mean(expected))
    noise_mean = float(np.mean(noise))
    z = _quietly(stats.z_against_floor, noise_mean, expected, floor.variance)
    # Under the null hypothesis (the noise run is a random ranking) the per-query variance is
    # known exactly; the sample variance of a skewed metric like RR understates it.
    noise_over_floor = (
        _interval(
            _quietly(
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
            model_over_noise = _interval(
                _quietly(stats.ratio_interval, model, noise, method="delta"), positive=True
            )
        if floor_mean > 0 and len(model) >= 2:
            model_over_floor = _interval(
                _quietly(stats.ratio_interval, model, denominator_exact=expected, method="delta")
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


def _interval(value: stats.Interval, *, positive: bool = False) -> Interval:
    low = max(float(value.low), 0.0) if positive else float(value.low)
    return Interval(float(value.estimate), low, float(value.high))


# ------------------------------------------------------------------------ verdict


def _triage(
    bench: _Benchmark,
    floor: Floor,
    metric: Metric,
    model: np.ndarray | None,
    noise: np.ndarray | None,
    thresholds: Thresholds,
) -> QueryTable:
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
    flags: list[tuple[str, ...]] = []
    for i in range(n):
        row: list[str] = []
        if floor_ratio[i] >= thresholds.query_floor_share:
            row.append("floor_high")
        if k is not None and bench.pool_size[i] < k:
            row.append("pool_smaller_than_k")
        if k is not None and bench.gold[i] >= k:
            row.append("gold_ge_k")
        if bench.positive[i] > len(bench.gold_docs[i]) or bench.judged[i] > bench.gold[i]:
            row.append("gold_missing_from_pool")
        if bench.gold[i] == 0:
            row.append("no_gold")
        if bench.duplicated[i] > 0:
            row.append("duplicated_gold")
        if noise is not None and z[i] >= 3:
            row.append("noise_above_floor")
        flags.append(tuple(row))
    # bench.qids is sorted, so its index is the query id's order.
    order = np.lexsort((np.arange(n), -share))
    return QueryTable(
        qid=bench.qids[order],
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
        flags=tuple(flags[i] for i in order),
    )


def _headroom(floor: Floor, model: np.ndarray | None, rng: np.random.Generator) -> Headroom:
    e = float(np.mean(floor.expected))
    c = float(np.mean(floor.ceiling))
    room = c - e
    share = e / c if c > 0 else None
    if model is None:
        return Headroom(e, c, room, share, None, None, None, None, False)
    m = float(np.mean(model))
    if len(model) >= 2 and np.ptp(model) > 0:
        mi = _interval(_quietly(stats.mean_interval, model, n_resamples=4000, rng=rng))
    else:
        mi = Interval(m, m, m)
    se = (mi.high - mi.low) / (2 * _Z95)
    adjusted = None
    if room > 0:
        adjusted = Interval((m - e) / room, (mi.low - e) / room, (mi.high - e) / room)
    in_se = room / se if se > 0 else math.inf
    return Headroom(e, c, room, share, m, mi, adjusted, in_se, bool(mi.low <= e))


def _power(model: np.ndarray, thresholds: Thresholds) -> Power | None:
    n = len(model)
    var = float(np.var(model, ddof=1)) if n >= 2 else 0.0
    if n < 2 or var <= 0:
        return None
    # A difference between two systems has about twice the per-query variance of one system
    # when the two are uncorrelated (an upper bound for real, positively correlated systems).
    diff_var = 2.0 * var
    mdd = stats.min_detectable_difference(diff_var, n)
    needed = stats.topic_set_size(thresholds.delta, diff_var)
    return Power(n, var, float(mdd), thresholds.delta, int(needed))


def _verdict(
    result_parts: dict[str, Any], thresholds: Thresholds, metric: Metric, n_queries: int
) -> tuple[str, tuple[Reason, ...]]:
    reasons: list[Reason] = []
    head: Headroom = result_parts["headroom"]
    harness: HarnessCheck | None = result_parts["harness"]
    noise: NoiseCheck | None = result_parts["noise"]
    live: NoiseCheck | None = result_parts["live"]
    inferred: InferredN | None = result_parts["inferred_n"]
    table: QueryTable = result_parts["queries"]
    lo, hi = thresholds.ratio_band

    share = head.floor_over_ceiling
    if share is not None:
        numbers = {
            "floor": head.floor,
            "ceiling": head.ceiling,
            "headroom": head.headroom,
            "floor_over_ceiling": share,
        }
        if share >= thresholds.floor_share_broken:
            reasons.append(
                Reason(
                    "broken",
                    "no_headroom",
                    f"A random ranker scores {100 * share:.0f} % of a perfect one "
                    f"({metric.name} floor {head.floor:.3f}, ceiling {head.ceiling:.3f}): every "
                    f"model lands in a {head.headroom:.2f}-wide sliver.",
                    numbers,
                )
            )
        elif share >= thresholds.floor_share_warning:
            reasons.append(
                Reason(
                    "warning",
                    "low_headroom",
                    f"A random ranker scores {100 * share:.0f} % of a perfect one (floor "
                    f"{head.floor:.3f}, ceiling {head.ceiling:.3f}).",
                    numbers,
                )
            )
    if harness is not None:
        r = harness.ratio
        numbers = {
            "ratio": r.estimate,
            "low": r.low,
            "high": r.high,
            "measured": harness.measured,
            "analytic": harness.analytic,
            "n_draws": harness.n_draws,
        }
        where = (
            "the package's scorer on seeded random rankings"
            if harness.source == "builtin"
            else "your harness on noise runs"
        )
        if not harness.passed:
            severity = "broken" if (r.low > hi or r.high < lo) else "warning"
            text = (
                f"Check 1 fails: {where} measured {harness.measured:.4g} against an exact "
                f"floor of {harness.analytic:.4g} (ratio {r.format()})."
            )
            if inferred is not None and inferred.diagnosis:
                text += " " + inferred.diagnosis
            reasons.append(Reason(severity, "check1_ratio", text, numbers))
        else:
            reasons.append(
                Reason(
                    "info",
                    "check1_passed",
                    f"Check 1 passes: {where} measured {r.format()} × the exact floor.",
                    numbers,
                )
            )
    for check, label in ((noise, "noise run"), (live, "live noise test")):
        if check is None:
            continue
        nf = check.noise_over_floor
        numbers = {
            "noise": check.noise,
            "floor": check.floor,
            "z": check.noise_z,
            "noise_over_floor": nf.estimate,
            "low": nf.low,
            "high": nf.high,
        }
        if check.leak:
            cause = (
                "it states that BM25 and rerankers were off, so look at tie-breaking and the gold"
                if check.components_off
                else "BM25 or a reranker left on in a hybrid pipeline, or ties broken by an "
                "ID order that favours gold; the run's metadata does not say which "
                "components were off"
            )
            reasons.append(
                Reason(
                    "broken",
                    "noise_leak",
                    f"The {label} scores {check.noise:.4g}, {nf.estimate:.1f}× its floor "
                    f"({check.floor:.4g}; z = {check.noise_z:.1f}): something other than the "
                    f"vectors carries the score — {cause}.",
                    numbers,
                )
            )
        elif check.noise_z >= 3 and nf.low > 1:
            reasons.append(
                Reason(
                    "warning",
                    "noise_above_floor",
                    f"The {label} sits above its floor ({nf.format()} × the floor, z = "
                    f"{check.noise_z:.1f}).",
                    numbers,
                )
            )
        if check.tied_queries:
            plural = "y" if check.tied_queries == 1 else "ies"
            aware = check.tie_aware_noise
            tie_numbers: dict[str, Any] = {
                "tied_queries": check.tied_queries,
                "tie_aware_noise": aware,
                "noise": check.noise,
            }
            # Ties matter when averaging over the orders of each tied group moves the value by
            # more than a standard error of the noise mean (or 5 % of it).
            se = (nf.high - nf.low) / (2 * _Z95) * check.floor if check.floor > 0 else 0.0
            if aware is not None and abs(aware - check.noise) > max(se, 0.05 * check.noise):
                reasons.append(
                    Reason(
                        "warning",
                        "noise_ties",
                        f"The {label} has tied scores in {check.tied_queries:,} quer{plural}: its "
                        f"value ({check.noise:.4g}) depends on tie-breaking; averaged over the "
                        f"orders of each tied group it is {aware:.4g}.",
                        tie_numbers,
                    )
                )
            else:
                reasons.append(
                    Reason(
                        "info",
                        "noise_ties",
                        f"The {label} has tied scores in {check.tied_queries:,} quer{plural}; "
                        "averaging over the orders of each tied group does not change its value"
                        + (f" ({aware:.4g})." if aware is not None else "."),
                        tie_numbers,
                    )
                )
        if check.model_over_noise is not None:
            reasons.append(
                Reason(
                    "info",
                    "model_over_noise",
                    f"Check 2: the model scores {check.model_over_noise.format(1)} × the {label}.",
                    {"ratio": check.model_over_noise.estimate},
                )
            )
    if head.model is not None:
        if head.at_or_below_floor:
            reasons.append(
                Reason(
                    "warning",
                    "model_at_floor",
                    f"The model ({head.model:.4g}) is not distinguishable from its floor "
                    f"({head.floor:.4g}): check that the run's IDs match the judgements.",
                    {"model": head.model, "floor": head.floor},
                )
            )
        if head.headroom_in_se is not None and head.headroom_in_se < thresholds.min_headroom_se:
            reasons.append(
                Reason(
                    "warning",
                    "few_standard_errors",
                    f"Only {head.headroom_in_se:.1f} standard errors of the model's mean fit in the "
                    f"headroom with {n_queries:,} queries: only gross differences are detectable.",
                    {"headroom_in_se": head.headroom_in_se, "n_queries": n_queries},
                )
            )
    no_gold = sum("no_gold" in f for f in table.flags)
    if no_gold:
        reasons.append(
            Reason(
                "warning",
                "no_gold",
                f"{no_gold:,} quer{'y has' if no_gold == 1 else 'ies have'} no gold item in the "
                "pool: they score 0 for every system.",
                {"queries": no_gold},
            )
        )
    missing = sum("gold_missing_from_pool" in f for f in table.flags)
    if missing:
        reasons.append(
            Reason(
                "warning",
                "gold_missing",
                f"{missing:,} quer{'y has' if missing == 1 else 'ies have'} judged gold outside "
                "the declared pool.",
                {"queries": missing},
            )
        )
    small = sum("pool_smaller_than_k" in f for f in table.flags)
    if small:
        reasons.append(
            Reason(
                "warning",
                "pool_smaller_than_k",
                f"{small:,} quer{'y has' if small == 1 else 'ies have'} a pool smaller than k.",
                {"queries": small},
            )
        )
    severities = {r.severity for r in reasons}
    verdict = (
        "broken" if "broken" in severities else "warning" if "warning" in severities else "healthy"
    )
    return verdict, tuple(reasons)


# ---------------------------------------------------------------------- the entry


def check_benchmark(
    run: pa.Table | None,
    qrels: pa.Table,
    *,
    pool: PoolSpec,
    metric: str | Metric = "rr@10",
    noise_run: pa.Table | None = None,
    harness_output: pa.Table | None = None,
    other_runs: Mapping[str, pa.Table] | None = None,
    run_name: str = "run",
    seeds: int | str = "auto",
    ties: str = "trec_eval",
    noise_components_off: Sequence[str] | None = None,
    noise_source: str = "noise-run",
    thresholds: Thresholds | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> CheckResult:
    """Run every check on a benchmark and return the verdict with its reasons.

    Parameters
    ----------
    run : pyarrow.Table or None
        The model's ranking (``RUN_SCHEMA``); None checks the benchmark alone.
    qrels : pyarrow.Table
        The judgements (``QRELS_SCHEMA``).
    pool : PoolSpec
        The declared pool.
    metric : str or Metric
        Default ``rr@10`` (MRR@10).
    noise_run : pyarrow.Table, optional
        The same pipeline with every vector replaced by noise (Check 2).
    harness_output : pyarrow.Table, optional
        The team's harness's per-query values on noise runs (``HARNESS_SCHEMA``); Check 1 then
        runs on it instead of the built-in simulation.
    other_runs : mapping, optional
        More runs to compare with ``run`` (paired randomization tests, Holm correction).
    seeds : int or "auto"
        Seeds of the built-in Check 1; "auto" picks them for ``thresholds.precision``.
    ties : str
        The scorer's tie policy: ``trec_eval``, ``given`` or ``average``.
    noise_components_off : sequence of str, optional
        What the noise run's pipeline had switched off (e.g. ``["bm25", "reranker"]``).
    noise_source : str
        ``"noise-run"`` (a file) or ``"live"`` (made by :func:`evalvalidity.analysis.live.noise_test`):
        where Check 2's result is filed.
    seed : int
        Seed of every random draw: the same inputs and seed give the same result.
    progress : callable, optional
        Called with (fraction done, message) as the work goes on.

    Returns
    -------
    CheckResult
    """
    metric = parse_metric(metric)
    thresholds = thresholds or Thresholds()
    if seeds != "auto" and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise ParameterError(
            f"The 'seeds' parameter of check_benchmark must be 'auto' or an int >= 1. Got "
            f"{seeds!r} instead."
        )
    if noise_source not in ("noise-run", "live"):
        raise ParameterError(
            "The 'noise_source' parameter of check_benchmark must be 'noise-run' or 'live'. "
            f"Got {noise_source!r} instead."
        )
    rng = np.random.default_rng(seed)
    notes: list[str] = []
    if progress:
        progress(0.0, "Reading the judgements and the pool")
    bench = _build_benchmark(qrels, pool, metric)
    n = len(bench.qids)
    floor, floor_method = _floor(bench, metric, pool, rng)
    units = pool.units if pool.kind == "units" else None

    model = None
    if run is not None:
        if progress:
            progress(0.1, "Scoring the run")
        scored = score_run(run, qrels, [metric], units=units, ties=ties, run_name=run_name)
        model = _aligned(scored, metric, bench.qids)
        if scored.unranked_qids:
            notes.append(
                f"{len(scored.unranked_qids):,} judged queries have no ranking in "
                f"{run_name} and score 0."
            )
        if scored.unjudged_qids:
            notes.append(
                f"{len(scored.unjudged_qids):,} queries of {run_name} have no "
                "judgements and were ignored."
            )

    noise_check = None
    noise_values = None
    if noise_run is not None:
        if progress:
            progress(0.2, "Scoring the noise run")
        scored_noise = score_run(
            noise_run, qrels, [metric], units=units, ties=ties, run_name="noise run"
        )
        noise_values = _aligned(scored_noise, metric, bench.qids)
        tied, _ = _tied_queries(noise_run)
        tie_aware = None
        if tied and ties != "average":
            averaged = score_run(
                noise_run, qrels, [metric], units=units, ties="average", run_name="noise run"
            )
            tie_aware = float(np.mean(_aligned(averaged, metric, bench.qids)))
        noise_check = _noise_check(
            bench,
            floor,
            metric,
            model,
            noise_values,
            noise_source,
            thresholds,
            rng,
            tied,
            tie_aware,
            tuple(noise_components_off) if noise_components_off else None,
        )

    if progress:
        progress(0.3, "Check 1")
    harness: HarnessCheck | None
    if harness_output is not None:
        harness = _harness_check1(bench, floor, metric, harness_output, notes)
    else:
        harness = _builtin_check1(
            bench,
            floor,
            metric,
            pool,
            qrels,
            seeds,
            ties,
            thresholds.precision,
            rng,
            progress,
            notes,
        )
    inferred = None
    if harness is not None:
        inferred = _infer(
            bench, metric, harness.source, harness.per_query_measured, harness.std_error, pool
        )
    elif noise_values is not None:
        se = float(np.std(noise_values, ddof=1) / np.sqrt(n)) if n > 1 else None
        inferred = _infer(bench, metric, "noise-run", noise_values, se or 0.0, pool)
    if inferred is not None:
        passed = harness.passed if harness is not None else True
        inferred = InferredN(
            **{**inferred.__dict__, "diagnosis": _diagnose(inferred, pool, passed)}
        )

    if progress:
        progress(0.85, "Headroom, triage and power")
    head = _headroom(floor, model, rng)
    table = _triage(bench, floor, metric, model, noise_values, thresholds)
    power = _power(model, thresholds) if model is not None else None
    comparison = None
    if other_runs and model is not None:
        values = {run_name: model}
        for name, other in other_runs.items():
            scored_other = score_run(other, qrels, [metric], units=units, ties=ties, run_name=name)
            values[name] = _aligned(scored_other, metric, bench.qids)
        table_cmp = _quietly(stats.compare_runs, values, n_resamples=10_000, rng=rng)
        comparison = Comparison(
            tuple(values), tuple(float(np.mean(v)) for v in values.values()), table_cmp
        )
    flat_mean = float(np.mean(model)) if model is not None else None
    adjusted_mean = None
    if model is not None:
        room = floor.ceiling - floor.expected
        ok = room > 0
        if ok.any():
            adjusted_mean = float(np.mean((model[ok] - floor.expected[ok]) / room[ok]))
    total_floor = float(np.sum(floor.expected))
    multi = float(np.sum(floor.expected[bench.gold > 1]) / total_floor) if total_floor > 0 else 0.0
    live_check = noise_check if noise_source == "live" else None
    if live_check is not None:
        noise_check = None
    parts = {
        "headroom": head,
        "harness": harness,
        "noise": noise_check,
        "live": live_check,
        "inferred_n": inferred,
        "queries": table,
    }
    verdict, reasons = _verdict(parts, thresholds, metric, n)
    if progress:
        progress(1.0, "Done")
    return CheckResult(
        schema_version=SCHEMA_VERSION,
        metric=metric,
        verdict=verdict,
        reasons=reasons,
        run_name=run_name if run is not None else None,
        n_queries=n,
        pool_kind=pool.kind,
        declared_pool=bench.declared_pool,
        declared_chunks=bench.declared_chunks,
        declared_documents=bench.declared_documents,
        floor_method=floor_method,
        floor=floor,
        headroom=head,
        harness=harness,
        noise=noise_check,
        live=live_check,
        inferred_n=inferred,
        power=power,
        comparison=comparison,
        queries=table,
        flat_mean=flat_mean,
        adjusted_mean=adjusted_mean,
        multi_gold_floor_share=multi,
        notes=tuple(notes),
    )


def benchmark_floor(
    qrels: pa.Table, pool: PoolSpec, metric: str | Metric, *, seed: int = 0
) -> Floor:
    """The exact per-query floor of every judged query (sorted by query id) for a pool.

    Examples
    --------
    >>> qrels = pa.table({"qid": ["q1", "q2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> benchmark_floor(qrels, PoolSpec(corpus_size=218), "mrr@10").expected.round(6).tolist()
    [0.013436, 0.013436]
    """
    metric = parse_metric(metric)
    bench = _build_benchmark(qrels, pool, metric)
    floor, _ = _floor(bench, metric, pool, np.random.default_rng(seed))
    return floor


def noise_runs(
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
    >>> [(s, t.num_rows) for s, t in noise_runs(qrels, PoolSpec(corpus_size=5), 2, depth=3)]
    [(0, 3), (1, 3)]
    """
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 1:
        raise ParameterError(
            f"The 'n_seeds' parameter of noise_runs must be an int >= 1. Got {n_seeds!r} instead."
        )
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ParameterError(
            f"The 'depth' parameter of noise_runs must be an int >= 1. Got {depth!r} instead."
        )
    bench = _build_benchmark(qrels, pool, parse_metric("rr"))
    layout, namer = _layout(bench, pool)
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
