"""The per-query benchmark: judgements and the pool declaration turned into arrays.

:func:`build_benchmark` reads the judgements and the declared pool into one
:class:`Benchmark` (pool size, gold and judged counts, gains and the ids a simulation needs, per
judged query in query-id order); :func:`compute_floor` gives its exact floor (or Monte Carlo,
for graded metrics over deduplicated chunks) and :func:`simulation_layout` the pool layout the
built-in Check 1 and :func:`~evalvalidity.analysis.check1.random_runs` draw from.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.core import dedup, floors, simulate
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import EvalValidityWarning, InputDataError
from evalvalidity.io._arrow import from_numpy, to_numpy
from evalvalidity.io._arrow import strings as arrow_strings
from evalvalidity.io.tables import conform

__all__ = [
    "Benchmark",
    "benchmark_floor",
    "build_benchmark",
    "csr_offsets",
    "fit_to_pool",
    "per_query",
    "simulation_layout",
    "sorted_unique",
]


@dataclass(frozen=True)
class Benchmark:
    """Per-query arrays of the judged queries: pool, gold and the ids needed to simulate.

    Per-query lists are held in CSR form: query ``q``'s entries of a flat array are
    ``flat[offsets[q]:offsets[q + 1]]``. ``pool_offsets`` indexes the judged (grade >= 1) items
    in the pool (``pool_gains``, ``pool_docs`` and, for a units map, ``gold_doc_index``),
    ``judged_offsets`` every judged (grade >= 1) item (``judged_grades``), and
    ``candidate_offsets`` the sorted candidate lists (``candidate_docs``).
    """

    qids: np.ndarray  # sorted; numpy's variable-width StringDType: no Python str per query
    pool_size: np.ndarray  # N in the analytic unit
    gold: np.ndarray  # relevant (at the metric's threshold) in the pool
    judged: np.ndarray  # relevant judged in all
    positive: np.ndarray  # judged with grade >= 1, in all
    pool_offsets: np.ndarray  # CSR offsets of the judged (grade >= 1) items in the pool
    pool_gains: np.ndarray  # their grades
    pool_docs: np.ndarray  # their docids (object array of str)
    judged_offsets: np.ndarray  # CSR offsets of every judged (grade >= 1) item
    judged_grades: np.ndarray  # their grades
    duplicated: np.ndarray  # duplicate judgement rows per query
    declared_pool: float | None
    declared_chunks: int | None
    declared_documents: int | None
    # units: documents and their chunk counts; gold as indices into them (by pool_offsets)
    doc_ids: np.ndarray | None = None
    chunk_counts: np.ndarray | None = None
    gold_doc_index: np.ndarray | None = None
    chunk_ids: np.ndarray | None = None
    chunk_doc: np.ndarray | None = None
    candidate_offsets: np.ndarray | None = None
    candidate_docs: np.ndarray | None = None
    candidate_gold: np.ndarray | None = None  # positions in the candidate list (by pool_offsets)

    @property
    def in_pool(self) -> np.ndarray:
        """Judged (grade >= 1) items in the pool, per query."""
        return np.diff(self.pool_offsets)

    @property
    def gains(self) -> list[np.ndarray]:
        """The grades of the judged items in the pool, one array per query."""
        return per_query(self.pool_gains, self.pool_offsets)

    @property
    def judged_gains(self) -> list[np.ndarray]:
        """The grades of every judged (grade >= 1) item, one array per query."""
        return per_query(self.judged_grades, self.judged_offsets)


def strings(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """The column as an object array of Python str (numpy's 'U' strings drop trailing NULs)."""
    return np.asarray(column.to_pylist(), dtype=object)


def _shared_strings(column: pa.Array) -> np.ndarray:
    """The column as an object array of str, one Python str per distinct id (not per row).

    Examples
    --------
    >>> ids = _shared_strings(pa.array(["d1", "d2", "d1"]))
    >>> ids.tolist(), ids[0] is ids[2]
    (['d1', 'd2', 'd1'], True)
    """
    encoded = pc.dictionary_encode(column)
    distinct = np.asarray(encoded.dictionary.to_pylist(), dtype=object)
    return distinct[np.asarray(to_numpy(encoded.indices), dtype=np.intp)]


#: Ids turned into Python str at once by :func:`id_array` (the rest are never made).
_ID_BLOCK = 1 << 16


def id_array(values: pa.Array) -> np.ndarray:
    r"""Arrow strings as a numpy array of ``StringDType``: 16 bytes an id, no Python object.

    numpy's variable-width strings keep every character (``'U'`` strings drop trailing NULs)
    and sort in code-point order, as Python's ``str`` does; an id of at most 15 bytes is held
    inline. Only ``_ID_BLOCK`` ids at a time exist as Python ``str`` while they are copied.

    Examples
    --------
    >>> ids = id_array(pa.array(["a", "a\x00", "é"]))
    >>> ids.tolist(), ids.dtype
    (['a', 'a\x00', 'é'], StringDType())
    """
    out = np.empty(len(values), dtype=np.dtypes.StringDType())
    for start in range(0, len(values), _ID_BLOCK):
        stop = min(start + _ID_BLOCK, len(values))
        out[start:stop] = values.slice(start, stop - start).to_pylist()
    return out


def _flat(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One string array (a large_string when its characters need 64-bit offsets)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def sorted_unique(column: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray]:
    r"""The distinct strings of ``column`` in code-point order, and each row's index into them.

    The order is Python's ``str`` order (UTF-8 bytes sort as code points), as ``np.unique`` on
    an object array would give, without turning every row into a Python ``str``.

    Examples
    --------
    >>> values, index = sorted_unique(pa.array(["b", "a", "b", "é", "a\x00"]))
    >>> values.to_pylist(), index.tolist()
    (['a', 'a\x00', 'b', 'é'], [2, 0, 2, 3, 1])
    """
    flat = _flat(column)
    distinct = pc.unique(flat)
    distinct = distinct.take(pc.sort_indices(distinct))
    index = to_numpy(pc.index_in(flat, value_set=distinct))
    return distinct, index.astype(np.int64)


def csr_offsets(query: np.ndarray, n_queries: int) -> np.ndarray:
    """CSR offsets of a flat array grouped by ``query`` (sorted): ``n_queries + 1`` entries.

    Examples
    --------
    >>> csr_offsets(np.array([0, 0, 2]), 4).tolist()
    [0, 2, 2, 3, 3]
    """
    counts = np.bincount(query, minlength=n_queries)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def per_query(flat: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """The CSR array ``(offsets, flat)`` as one array (a view) per query.

    Examples
    --------
    >>> [a.tolist() for a in per_query(np.array([5, 6, 7]), np.array([0, 2, 2, 3]))]
    [[5, 6], [], [7]]
    """
    return np.split(flat, offsets[1:-1]) if len(offsets) > 1 else []


def build_benchmark(qrels: pa.Table, pool: PoolSpec, metric: Metric) -> Benchmark:
    """The judged queries' arrays for ``pool`` at ``metric``'s relevance threshold.

    Duplicate judgement rows (same query and item) are kept once and counted per query. Ids
    are grouped by Arrow (no Python object per judgement row); per-query lists are CSR arrays.

    Examples
    --------
    >>> qrels = pa.table({"qid": ["q1", "q1", "q2"], "docid": ["a", "b", "a"], "rel": [1, 2, 0]})
    >>> bench = build_benchmark(qrels, PoolSpec(corpus_size=10), parse_metric("rr@10"))
    >>> bench.qids.tolist(), bench.gold.tolist(), bench.pool_size.tolist()
    (['q1', 'q2'], [2, 0], [10, 10])
    >>> bench.pool_offsets.tolist(), bench.pool_docs.tolist()
    ([0, 2, 2], ['b', 'a'])
    """
    qrels = conform(qrels, "qrels")
    if qrels.num_rows == 0:
        raise InputDataError("The judgements hold no rows.")
    if qrels.column("qid").null_count or qrels.column("docid").null_count:
        raise InputDataError("The judgements hold rows without a qid or a docid.")
    rel = to_numpy(qrels.column("rel")).astype(np.int64)
    # Ids are numpy's variable-width strings: 'U' strings drop trailing NULs, and an object
    # array holds a Python str (some 60 bytes) per query.
    qid_values, qindex = sorted_unique(qrels.column("qid"))
    qids = id_array(qid_values)
    n_queries = len(qids)
    docid_column = _flat(qrels.column("docid"))
    dindex = to_numpy(pc.dictionary_encode(docid_column).indices)
    # Duplicate judgement rows (same query and item): counted per query, kept once.
    pair_key = qindex * (int(dindex.max(initial=0)) + 1) + dindex
    _, first_index, pair_counts = np.unique(pair_key, return_index=True, return_counts=True)
    del pair_key, dindex
    duplicated = np.bincount(
        qindex[first_index], weights=pair_counts - 1, minlength=n_queries
    ).astype(np.int64)
    # The kept rows grouped by query, each query's rows in file order (a stable sort).
    first_index.sort()
    rows = first_index[np.argsort(qindex[first_index], kind="stable")]
    del first_index, pair_counts
    qindex, rel = qindex[rows], rel[rows]
    docid_rows = docid_column.take(from_numpy(rows))
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
        ps = pools.column("pool_size").to_numpy(zero_copy_only=False).astype(np.int64)
        pq_values, pq_index = sorted_unique(pools.column("qid"))
        at = pc.index_in(qid_values, value_set=pq_values)
        found = at.is_valid().to_numpy(zero_copy_only=False)
        if not found.all():
            missing = qids[~found].tolist()
            raise InputDataError(
                f"The pool sizes give no size for {len(missing):,} judged quer"
                f"{'y' if len(missing) == 1 else 'ies'} (first: {', '.join(missing[:5])})."
            )
        # A qid listed twice takes its last size (as a dict built from the rows would).
        last = np.full(len(pq_values), -1, dtype=np.int64)
        np.maximum.at(last, pq_index, np.arange(len(pq_index)))
        pool_size = ps[last[at.to_numpy(zero_copy_only=False).astype(np.int64)]]
        if np.any(pool_size < 1):
            raise InputDataError("Every pool size must be at least 1.")
        declared_pool = float(np.mean(pool_size))
    elif kind == "candidates":
        assert pool.candidates is not None
        cands = conform(pool.candidates, "candidates")
        cq = pc.index_in(_flat(cands.column("qid")), value_set=qid_values)
        cq_known = cq.is_valid().to_numpy(zero_copy_only=False)
        cq_index = cq.to_numpy(zero_copy_only=False)[cq_known].astype(np.int64)
        cand_doc = _flat(cands.column("docid")).filter(pa.array(cq_known))
        # One code space for the candidates' and the judgements' docids, in str order.
        doc_values, codes = sorted_unique(pa.chunked_array([cand_doc, docid_rows]))
        cand_code, judged_code = codes[: len(cand_doc)], codes[len(cand_doc) :]
        width = len(doc_values) + 1
        cand_key = np.unique(cq_index * width + cand_code)  # sorted: by query, then docid
        cand_query = cand_key // width
        pool_size = np.bincount(cand_query, minlength=n_queries).astype(np.int64)
        if np.any(pool_size == 0):
            missing = qids[pool_size == 0].tolist()
            raise InputDataError(
                f"The candidate lists hold no candidates for {len(missing):,} judged quer"
                f"{'y' if len(missing) == 1 else 'ies'} (first: {', '.join(missing[:5])})."
            )
        judged_key = qindex * width + judged_code
        in_pool = positive_mask & np.isin(judged_key, cand_key)
        extra["candidate_gold"] = np.searchsorted(cand_key, judged_key[in_pool]) - np.searchsorted(
            cand_query, qindex[in_pool]
        )
        extra["candidate_offsets"] = csr_offsets(cand_query, n_queries)
        extra["candidate_docs"] = _shared_strings(doc_values.take(pa.array(cand_key % width)))
        declared_pool = float(np.mean(pool_size))
    else:
        assert pool.units is not None
        units = conform(pool.units, "units")
        chunk_ids = strings(units.column("chunk_id"))
        doc_values, chunk_doc = sorted_unique(units.column("doc_id"))
        doc_ids = np.asarray(doc_values.to_pylist(), dtype=object)
        chunk_counts = np.bincount(chunk_doc, minlength=len(doc_ids)).astype(np.int64)
        declared_chunks = len(chunk_ids)
        declared_documents = len(doc_ids)
        pos = pc.index_in(docid_rows, value_set=doc_values)
        known = pos.is_valid().to_numpy(zero_copy_only=False)
        pos_index = pos.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        in_pool = positive_mask & known
        extra.update(
            doc_ids=doc_ids,
            chunk_counts=chunk_counts,
            chunk_ids=chunk_ids,
            chunk_doc=chunk_doc,
            gold_doc_index=pos_index[in_pool],
        )
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
    # The judged (grade >= 1) items in the pool, as rows of the grouped judgements.
    pool_rows = np.flatnonzero(in_pool)
    if kind in ("corpus", "pools"):
        # A pool smaller than the judged items holds the best-graded of them.
        pool_rows = fit_to_pool(pool_rows, qindex, rel, pool_size)
    pool_docs = _shared_strings(docid_rows.take(from_numpy(pool_rows)))
    return Benchmark(
        qids=qids,
        pool_size=pool_size,
        gold=gold,
        judged=judged,
        positive=positive,
        pool_offsets=csr_offsets(qindex[pool_rows], n_queries),
        pool_gains=rel[pool_rows],
        pool_docs=pool_docs,
        judged_offsets=csr_offsets(qindex[positive_mask], n_queries),
        judged_grades=rel[positive_mask],
        duplicated=duplicated,
        declared_pool=declared_pool,
        declared_chunks=declared_chunks,
        declared_documents=declared_documents,
        **extra,
    )


def fit_to_pool(
    rows: np.ndarray, query: np.ndarray, grades: np.ndarray, pool_size: np.ndarray
) -> np.ndarray:
    """The in-pool ``rows`` (grouped by query), each query's best grade first, cut to its pool.

    ``query`` and ``grades`` are indexed by row; ties keep the rows' order.

    Examples
    --------
    >>> fit_to_pool(
    ...     np.array([0, 1, 2, 3]), np.array([0, 0, 0, 1]), np.array([1, 3, 2, 1]), np.array([2, 5])
    ... ).tolist()
    [1, 2, 3]
    """
    q = query[rows]
    order = np.lexsort((np.arange(len(rows)), -grades[rows], q))
    rows, q = rows[order], q[order]
    offsets = csr_offsets(q, len(pool_size))
    rank = np.arange(len(rows)) - offsets[q]
    kept: np.ndarray = rows[rank < pool_size[q]]
    return kept


def split_by_query(values: np.ndarray, query: np.ndarray, n_queries: int) -> list[np.ndarray]:
    """Split ``values`` into one array per query (in query order)."""
    order = np.argsort(query, kind="stable")
    bounds = np.searchsorted(query[order], np.arange(n_queries + 1))
    ordered = values[order]
    return [ordered[bounds[i] : bounds[i + 1]] for i in range(n_queries)]


#: Held while a :func:`quietly` call runs: the warning filters are the process's, and two
#: threads that each save and restore them (``catch_warnings``) at once would leave the
#: first one's silencing in place for good.
_QUIET = threading.RLock()


def quietly(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func`` with its degenerate-case warnings silenced: the triage flags them.

    One thread at a time (the check runs some phases in a worker).
    """
    with _QUIET, warnings.catch_warnings():
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
                per_query(bench.gold_doc_index, bench.pool_offsets),
                judged=bench.judged,
            )
            return result, "exact (deduplicated chunk scores)"
        gold_index = per_query(bench.gold_doc_index, bench.pool_offsets)
        gains = bench.gains if graded else None
        if metric.binary:
            keep = bench.pool_gains >= metric.rel
            query = np.repeat(np.arange(len(bench.qids)), bench.in_pool)
            offsets = csr_offsets(query[keep], len(bench.qids))
            gold_index = per_query(bench.gold_doc_index[keep], offsets)
            if metric.rel > 1:  # the kept grades, which pass the threshold the sampler applies
                gains = per_query(bench.pool_gains[keep], offsets)
        mc = quietly(
            dedup.dedup_floor_mc,
            metric,
            bench.chunk_counts,
            gold_index,
            judged=bench.judged,
            gains=gains,
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
) -> tuple[simulate.PoolLayout, Callable[[np.ndarray, np.ndarray], pa.Array]]:
    """The simulation's pool per query and a function naming its drawn items.

    Everything is built columnar: the gold items are one CSR array (no per-query list) and
    the namer maps (query, item) index arrays to an Arrow string array of ids.

    Examples
    --------
    >>> qrels = pa.table({"qid": ["q1", "q1", "q2"], "docid": ["a", "b", "c"], "rel": [1, 1, 1]})
    >>> pool = PoolSpec(corpus_size=5)
    >>> layout, name = simulation_layout(build_benchmark(qrels, pool, parse_metric("rr")), pool)
    >>> layout.gold_offsets.tolist(), layout.gold_items.tolist()
    ([0, 2, 3], [0, 1, 0])
    >>> name(np.array([0, 0, 1]), np.array([1, 3, 0])).to_pylist()
    ['b', '~noise~3', 'c']
    """
    n = len(bench.qids)
    if pool.kind == "units":
        assert bench.chunk_doc is not None and bench.gold_doc_index is not None
        assert bench.chunk_ids is not None
        chunk_doc = bench.chunk_doc
        order = np.argsort(chunk_doc, kind="stable")
        per_doc = np.bincount(chunk_doc, minlength=chunk_doc.max() + 1)
        starts = np.concatenate(([0], np.cumsum(per_doc)))
        # Every chunk of every gold document, the documents in their query's order.
        docs = bench.gold_doc_index
        counts = per_doc[docs]
        ends = np.cumsum(counts)
        within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - counts, counts)
        gold_items = order[np.repeat(starts[docs], counts) + within].astype(np.int64)
        layout = simulate.PoolLayout(
            np.full(n, len(chunk_doc), dtype=np.int64),
            np.concatenate(([0], ends))[bench.pool_offsets],
            gold_items,
            chunk_doc=chunk_doc,
        )
        chunk_ids = pa.array(bench.chunk_ids, pa.string())

        def name_units(query: np.ndarray, items: np.ndarray) -> pa.Array:
            return chunk_ids.take(pa.array(items))

        return layout, name_units
    if pool.kind == "candidates":
        assert bench.candidate_offsets is not None and bench.candidate_docs is not None
        assert bench.candidate_gold is not None
        # Each query's gold items are their positions in its sorted candidate list, ascending.
        query = np.repeat(np.arange(n), bench.in_pool)
        positions = bench.candidate_gold[np.lexsort((bench.candidate_gold, query))]
        layout = simulate.PoolLayout(
            bench.pool_size.copy(), bench.pool_offsets.copy(), positions.astype(np.int64)
        )
        base = bench.candidate_offsets
        flat = pa.array(bench.candidate_docs, pa.string())

        def name_candidates(query: np.ndarray, items: np.ndarray) -> pa.Array:
            return flat.take(pa.array(base[query] + items))

        return layout, name_candidates
    # Sizes only: item i < G_in is the query's i-th gold item, the others are anonymous.
    counts = bench.in_pool
    in_pool = np.minimum(counts, bench.pool_size)
    rank = np.arange(len(bench.pool_docs)) - np.repeat(bench.pool_offsets[:-1], counts)
    flat_gold = arrow_strings(bench.pool_docs[rank < np.repeat(in_pool, counts)])
    gold_base = np.concatenate(([0], np.cumsum(in_pool)))
    layout = simulate.PoolLayout(
        bench.pool_size.copy(),
        gold_base,
        (np.arange(int(gold_base[-1])) - np.repeat(gold_base[:-1], in_pool)).astype(np.int64),
    )

    noise_prefix, empty = arrow_strings(["~noise~", ""])

    def name_sized(query: np.ndarray, items: np.ndarray) -> pa.Array:
        items = np.asarray(items, dtype=np.int64)
        is_gold = items < in_pool[query]
        noise = pc.binary_join_element_wise(
            noise_prefix, pc.cast(from_numpy(items), pa.string()), empty
        )  # Arrow scalars: a str would be converted through pa.scalar, which imports pandas
        gold_at = np.where(is_gold, gold_base[query] + items, 0).astype(np.int64)
        if len(flat_gold) == 0:
            return noise
        gold = pc.less(from_numpy(items), from_numpy(in_pool[query].astype(np.int64)))
        return pc.if_else(gold, flat_gold.take(from_numpy(gold_at)), noise)

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
