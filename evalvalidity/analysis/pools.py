"""The per-query benchmark: judgements and the pool declaration turned into arrays.

:func:`build_benchmark` reads the judgements and the declared pool into one
:class:`Benchmark` (pool size, gold and judged counts, gains and the ids a simulation needs, per
judged query in query-id order); :func:`compute_floor` gives its exact floor (or Monte Carlo,
for graded metrics over deduplicated chunks) and :func:`simulation_layout` the pool layout the
built-in Check 1 and :func:`~evalvalidity.analysis.check1.random_runs` draw from.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.core import dedup, floors, simulate
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import EvalValidityWarning, InputDataError
from evalvalidity.io.tables import conform

__all__ = [
    "Benchmark",
    "benchmark_floor",
    "build_benchmark",
    "compute_floor",
    "quietly",
    "simulation_layout",
    "split_by_query",
    "strings",
]


@dataclass(frozen=True)
class Benchmark:
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


def strings(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """The column as an object array of Python str (numpy's 'U' strings drop trailing NULs)."""
    return np.asarray(column.to_pylist(), dtype=object)


def build_benchmark(qrels: pa.Table, pool: PoolSpec, metric: Metric) -> Benchmark:
    """The judged queries' arrays for ``pool`` at ``metric``'s relevance threshold.

    Duplicate judgement rows (same query and item) are kept once and counted per query.

    Examples
    --------
    >>> qrels = pa.table({"qid": ["q1", "q1", "q2"], "docid": ["a", "b", "a"], "rel": [1, 2, 0]})
    >>> bench = build_benchmark(qrels, PoolSpec(corpus_size=10), parse_metric("rr@10"))
    >>> bench.qids.tolist(), bench.gold.tolist(), bench.pool_size.tolist()
    (['q1', 'q2'], [2, 0], [10, 10])
    """
    qrels = conform(qrels, "qrels")
    qid = strings(qrels.column("qid"))
    docid = strings(qrels.column("docid"))
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
        pq = strings(pools.column("qid"))
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
        cq = strings(cands.column("qid"))
        cd = strings(cands.column("docid"))
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
        chunk_ids = strings(units.column("chunk_id"))
        chunk_doc_ids = strings(units.column("doc_id"))
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
        extra["gold_doc_index"] = split_by_query(pos_clipped[in_pool], qindex[in_pool], n_queries)
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
    gains = split_by_query(rel[in_pool], qindex[in_pool], n_queries)
    judged_gains = split_by_query(rel[positive_mask], qindex[positive_mask], n_queries)
    gold_docs = split_by_query(docid[in_pool], qindex[in_pool], n_queries)
    if kind in ("corpus", "pools"):
        # A pool smaller than the judged items holds the best-graded of them.
        gains, gold_docs = fit_to_pool(gains, gold_docs, pool_size)
    return Benchmark(
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


def fit_to_pool(
    gains: list[np.ndarray], docs: list[np.ndarray], pool_size: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each query's in-pool grades and ids, best grade first, cut to its pool size.

    Examples
    --------
    >>> gains, docs = fit_to_pool([np.array([1, 3, 2])], [np.array(["a", "b", "c"])], np.array([2]))
    >>> gains[0].tolist(), docs[0].tolist()
    ([3, 2], ['b', 'c'])
    """
    fitted_gains, fitted_docs = [], []
    for grades, ids, size in zip(gains, docs, pool_size.tolist(), strict=True):
        order = np.argsort(-grades, kind="stable")[:size]
        fitted_gains.append(grades[order])
        fitted_docs.append(ids[order])
    return fitted_gains, fitted_docs


def split_by_query(values: np.ndarray, query: np.ndarray, n_queries: int) -> list[np.ndarray]:
    """Split ``values`` into one array per query (in query order)."""
    order = np.argsort(query, kind="stable")
    bounds = np.searchsorted(query[order], np.arange(n_queries + 1))
    ordered = values[order]
    return [ordered[bounds[i] : bounds[i + 1]] for i in range(n_queries)]


def quietly(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func`` with its degenerate-case warnings silenced: the triage flags them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        return func(*args, **kwargs)


def compute_floor(
    bench: Benchmark, metric: Metric, pool: PoolSpec, rng: np.random.Generator
) -> tuple[Floor, str]:
    """The per-query floor of ``bench`` and how it was computed (``exact`` or Monte Carlo)."""
    graded = not metric.spec.binary
    if pool.kind == "units" and pool.analytic_unit == "documents":
        assert bench.chunk_counts is not None and bench.gold_doc_index is not None
        if metric.spec.exact_under_dedup:
            result = quietly(
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
        mc = quietly(
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
    result = quietly(
        floors.noise_floor,
        metric,
        bench.pool_size,
        bench.gold,
        judged=bench.judged,
        gains=gains,
        judged_gains=judged_gains,
    )
    return result, "exact"


def simulation_layout(
    bench: Benchmark, pool: PoolSpec
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
    bench = build_benchmark(qrels, pool, metric)
    floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(seed))
    return floor
