r"""The other nulls, on the check's string-keyed tables: ids to integer codes, then the core.

The uniform-random floor is one null. A benchmark can pass it and still reward something that
is not retrieval, or be scored on ids that silently do not match. :func:`other_nulls` runs, on
a check's judgements, pool and (deduplicated) model ranking:

- **query-independent rankers**: the query-shuffle null
  (:func:`~evalvalidity.core.nulls.query_shuffle_null`, exact) and the leave-one-out popularity
  ranker (:func:`~evalvalidity.core.nulls.popularity_ranker`, exact), with the hub documents
  (:func:`~evalvalidity.core.nulls.hub_documents`);
- **self-hits and id collisions** (:mod:`evalvalidity.analysis.selfhits`);
- **segment ids** (:func:`~evalvalidity.io.units_rule.segment_ids`);
- **judgement holes** (:func:`~evalvalidity.core.holes.hole_bounds`);
- **harness-output invariants** (:mod:`evalvalidity.analysis.harness_invariants`);
- the model's **tie sensitivity** (:func:`~evalvalidity.core.tiebounds.tie_bounds`).

The ranking is :func:`~evalvalidity.io.scoring.rank_run`'s (chunks deduplicated to documents
with units), cut at the metric's depth; query ids index the judged queries
(``Benchmark.qids``), document ids are coded by :func:`pyarrow.compute.index_in` over the
union of the ids the run, the judgements and the candidates use.

The query-shuffle null joins every ranked item with every query it is gold for; when that join
exceeds :data:`SHUFFLE_MAX_HITS` rows the null is skipped with a note (the popularity ranker,
which it mostly measures, is still computed).

Examples
--------
>>> import pyarrow as pa
>>> from evalvalidity.analysis.plan import PoolSpec
>>> from evalvalidity.analysis.pools import build_benchmark, compute_floor
>>> from evalvalidity.core.metrics import parse_metric
>>> qrels = pa.table({"qid": ["a", "b", "c"], "docid": ["hub", "hub", "hub"], "rel": [1, 1, 1]})
>>> run = pa.table({"qid": ["a", "b", "c"], "docid": ["hub"] * 3, "score": [1.0] * 3})
>>> metric, pool = parse_metric("rr@10"), PoolSpec(corpus_size=1000)
>>> bench = build_benchmark(qrels, pool, metric)
>>> floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(0))
>>> found = other_nulls(bench, floor, metric, pool, qrels, run=run)
>>> found.query_independent.shuffle.estimate, found.query_independent.popularity.estimate
(1.0, 1.0)
>>> [(h.docid, h.count) for h in found.query_independent.hubs]
[('hub', 3)]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.analysis.check1 import Z95
from evalvalidity.analysis.harness_invariants import harness_invariants
from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import Benchmark
from evalvalidity.analysis.results import Interval
from evalvalidity.analysis.results_nulls import (
    HoleCheck,
    HubDocument,
    OtherNulls,
    QueryIndependent,
    SegmentCheck,
    TieSensitivity,
)
from evalvalidity.analysis.selfhits import self_hits
from evalvalidity.core.floors import Floor
from evalvalidity.core.holes import _lookup_grades, hole_bounds, judged_at_k, judged_mask
from evalvalidity.core.kernels import Judged, TiedHits
from evalvalidity.core.metrics import Metric
from evalvalidity.core.nulls import (
    hub_documents,
    popularity_ranker,
    query_blocks,
    query_shuffle_null,
)
from evalvalidity.core.tiebounds import tie_bounds
from evalvalidity.errors import ParameterError
from evalvalidity.io._arrow import from_numpy, strings, to_numpy
from evalvalidity.io._memory import release_freed_memory
from evalvalidity.io.units_rule import segment_ids, units_from_rule

__all__ = [
    "HOLES_K",
    "NULL_SHARE",
    "QUERY_BLOCK",
    "RANKING_MAX_ROWS",
    "SEGMENT_SAMPLE",
    "SHUFFLE_MAX_HITS",
    "Coded",
    "ranking_depth",
]

#: The query-shuffle null is skipped (with a note) when its join holds more (pair, hit) rows:
#: some 25 million rows take about two seconds and bounded memory (blocks of 2**20 rows).
SHUFFLE_MAX_HITS = 25_000_000

#: A query-independent ranker "scores far above the floor" when it takes at least this share
#: of the headroom, (null − floor)/(ceiling − floor), and its low end clears the floor by
#: ``Thresholds.leak_z`` standard deviations of the floor's mean.
NULL_SHARE = 0.1

#: judged@k is reported at the metric's cutoff, or at this depth for a metric without one.
HOLES_K = 10

#: The nulls that read the ranking (query shuffle, self-hits, holes, ties) read only its top
#: (the metric's cutoff and a slack) and have no cap; for a metric without a cutoff they read
#: every position, which sorts the whole run (n log n) and holds it: they are then skipped,
#: with a note, above this many run rows.
RANKING_MAX_ROWS = 1_000_000

#: Segment ids are recognised on the run's first rows (ids of one run share their form).
SEGMENT_SAMPLE = 200_000

#: The nulls that read the ranking row by row (judgement holes, tie bounds, self-hits) take
#: this many queries at a time: their working arrays grow with a block, not with Q.
QUERY_BLOCK = 1 << 16

#: Extra positions kept below the metric's depth (a self-hit removed moves the rest up).
_SLACK = 10


@dataclass(frozen=True)
class Coded:
    """A benchmark's tables as integer codes (see the module notes).

    ``run_*`` are the ranking's rows (judged queries only, cut at the metric's depth plus a
    slack); ``tie_*`` their tie group (start and size) when ranked with ties; ``self_row``
    marks the rows whose document id is the query's own id; ``gold_*`` every judgement.
    """

    qids: np.ndarray
    vocab: pa.Array
    run_query: np.ndarray
    run_doc: np.ndarray
    run_position: np.ndarray
    tie_start: np.ndarray | None
    tie_size: np.ndarray | None
    self_row: np.ndarray
    gold_query: np.ndarray
    gold_doc: np.ndarray
    gold_grade: np.ndarray

    @property
    def n_queries(self) -> int:
        """Q, the judged queries."""
        return len(self.qids)

    def docids(self, codes: np.ndarray) -> list[str]:
        """The document ids of ``codes``."""
        taken = self.vocab.take(from_numpy(np.asarray(codes, dtype=np.int64)))
        return [str(x) for x in taken.to_pylist()]


def _codes(column: Any, values: pa.Array) -> np.ndarray:
    """The index of each entry of ``column`` in ``values`` (-1 where absent)."""
    index = pc.index_in(column, value_set=values)
    known = to_numpy(pc.is_valid(index))  # Arrow's to_numpy (and a -1 scalar) import pandas
    codes = np.full(len(known), -1, dtype=np.int64)
    codes[known] = to_numpy(pc.drop_null(index))
    return codes


def _dictionary_key(dictionary: pa.Array) -> tuple[int, int, int]:
    """Which dictionary a chunk points at: chunks of one column share theirs (no copy)."""
    return (dictionary.buffers()[1].address, dictionary.offset, len(dictionary))


def _id_pieces(column: Any) -> list[pa.Array]:
    """The string arrays holding ``column``'s ids: a dictionary column's dictionaries (once)."""
    if not (isinstance(column, pa.ChunkedArray) and pa.types.is_dictionary(column.type)):
        return _chunks(column)
    seen: dict[tuple[int, int, int], pa.Array] = {}
    for chunk in column.chunks:
        seen.setdefault(_dictionary_key(chunk.dictionary), chunk.dictionary)
    return list(seen.values())


def _row_codes(column: Any, values: pa.Array) -> np.ndarray:
    """:func:`_codes` of a column, a dictionary column's codes found once per distinct id."""
    if not (isinstance(column, pa.ChunkedArray) and pa.types.is_dictionary(column.type)):
        return _narrow(_codes(column, values), len(values))
    parts = [_narrow(np.zeros(0, np.int64), len(values))]
    found: dict[tuple[int, int, int], np.ndarray] = {}
    for chunk in column.chunks:
        key = _dictionary_key(chunk.dictionary)
        if key not in found:
            found[key] = _narrow(_codes(chunk.dictionary, values), len(values))
        parts.append(found[key][to_numpy(chunk.indices)])  # a row's code, as narrow
    return np.concatenate(parts)


def code_tables(
    bench: Benchmark,
    qrels: pa.Table,
    ranking: pa.Table | None,
    depth: int | None,
    extra_docids: Sequence[Any] = (),
) -> Coded:
    """Integer-code the judgements and a ranking (``rank_run``'s columns) of ``bench``.

    Parameters
    ----------
    bench : Benchmark
        Fixes the query index: ``bench.qids``.
    qrels : pyarrow.Table
    ranking : pyarrow.Table or None
        ``qid, docid, position`` (+ ``tie_start, tie_size``); the ids strings or dictionary
        codes (the scorer's kept ranking), which are coded once per distinct id.
    depth : int or None
        Keep positions <= depth + a slack (and every row of a tie group starting <= depth);
        None keeps every position.
    extra_docids : sequence of arrays
        More document ids to give codes (e.g. candidate lists).
    """
    qids = strings(bench.qids)
    pieces = [*_chunks(qrels.column("docid"))]
    if ranking is not None:
        pieces.extend(_id_pieces(ranking.column("docid")))
    pieces.extend(c for p in extra_docids for c in _chunks(p))
    vocab = pa.chunked_array(pieces, pa.string()).unique()
    if isinstance(vocab, pa.ChunkedArray):  # pragma: no cover - unique returns an Array
        vocab = vocab.combine_chunks()
    gq = _codes(qrels.column("qid"), qids)
    gd = _codes(qrels.column("docid"), vocab)
    gg = np.asarray(to_numpy(qrels.column("rel")), dtype=np.int64)
    keep = gq >= 0
    gq, gd, gg = gq[keep], gd[keep], gg[keep]
    # One grade per (query, document): a judgement given twice keeps its largest grade.
    order = np.lexsort((-gg, gd, gq))
    gq, gd, gg = gq[order], gd[order], gg[order]
    first = np.ones(len(gq), bool)
    first[1:] = (gq[1:] != gq[:-1]) | (gd[1:] != gd[:-1])
    gold = (
        _narrow(gq[first], len(qids)),
        _narrow(gd[first], len(vocab)),
        _narrow(gg[first], int(np.abs(gg).max(initial=0)) + 1),
    )
    del gq, gd, gg, first, order
    empty = np.zeros(0, np.int64)
    if ranking is None:
        return Coded(bench.qids, vocab, empty, empty, empty, None, None, np.zeros(0, bool), *gold)
    rows = ranking
    names = rows.column_names

    def ints(name: str) -> np.ndarray:
        values = np.asarray(to_numpy(rows.column(name)))  # Arrow's imports pandas
        return values if values.dtype == np.int32 else values.astype(np.int64)  # the kept: int32

    rp = ints("position")
    rq = _row_codes(rows.column("qid"), qids)
    kept = rq >= 0  # judged queries only
    if depth is not None:
        near = rp <= depth + _SLACK
        if "tie_start" in names:
            near |= ints("tie_start") <= depth
        kept &= near
        del near
    every = bool(kept.all())  # nothing to drop: no copies
    if not every:
        rq, rp = rq[kept], rp[kept]
    # The rows by query, then position (the scorer keeps them unsorted): one order for all.
    row_order = None
    if len(rq) > 1 and not _sorted_by(rq, rp):
        row_order = np.lexsort((rp, rq))
        rq, rp = rq[row_order], rp[row_order]
    rq = _narrow(rq, len(qids))
    rp = _narrow(rp, int(rp.max(initial=0)) + 1)

    def column(values: np.ndarray) -> np.ndarray:
        values = values if every else values[kept]
        values = values if row_order is None else values[row_order]
        return _narrow(values, int(np.abs(values).max(initial=0)) + 1)

    rd = column(_row_codes(rows.column("docid"), vocab))
    # A row's document id is its query's own id when both have the same code in the vocabulary
    # (every ranked id has one; a query id that is no document's has none).
    query_as_doc = _narrow(_codes(qids, vocab), len(vocab))
    self_row = (query_as_doc[rq] == rd) & (rd >= 0)
    del query_as_doc
    tie_start = tie_size = None
    if "tie_start" in names:
        tie_start, tie_size = column(ints("tie_start")), column(ints("tie_size"))
    return Coded(bench.qids, vocab, rq, rd, rp, tie_start, tie_size, self_row, *gold)


def _narrow(values: np.ndarray, bound: int) -> np.ndarray:
    """``values`` (integers in (-bound, bound)) as int32 when ``bound`` fits, else int64.

    The codes are held through every null (several per ranked row): int32 halves them. Every
    reader widens a block's codes to int64 before keying them ``query * width + doc``.

    Examples
    --------
    >>> _narrow(np.array([3, -1]), 4).dtype, _narrow(np.array([3]), 2**31).dtype
    (dtype('int32'), dtype('int64'))
    """
    dtype = np.int32 if bound <= np.iinfo(np.int32).max else np.int64
    return values.astype(dtype, copy=False)


def _sorted_by(query: np.ndarray, position: np.ndarray) -> bool:
    """Whether the rows are sorted by query, then position.

    Examples
    --------
    >>> _sorted_by(np.array([0, 0, 1]), np.array([1, 2, 1])), _sorted_by(np.array([1, 0]), np.array([1, 1]))
    (True, False)
    """
    dq = np.diff(query)
    return bool(np.all((dq > 0) | ((dq == 0) & (np.diff(position) > 0))))


def _chunks(column: Any) -> list[pa.Array]:
    if isinstance(column, pa.ChunkedArray):
        return [c.cast(pa.string()) for c in column.chunks]
    return [pa.array(column, pa.string())]


# --------------------------------------------------------------------------- query-independent


def _floor_numbers(floor: Floor) -> tuple[float, float, float]:
    n = len(floor.expected)
    mean = float(np.mean(floor.expected)) if n else 0.0
    std = float(math.sqrt(float(np.sum(floor.variance))) / n) if n else 0.0
    return mean, std, float(np.mean(floor.ceiling)) if n else 0.0


def _popularity(
    coded: Coded, metric: Metric, pool: PoolSpec, bench: Benchmark
) -> tuple[Interval | None, np.ndarray | None, str | None]:
    relevant = coded.gold_grade >= 1
    args: dict[str, Any] = {}
    if pool.kind == "corpus":
        args["corpus_size"] = pool.corpus_size
    elif pool.kind == "units" and pool.analytic_unit == "documents" and bench.declared_documents:
        args["corpus_size"] = bench.declared_documents
    elif pool.kind == "candidates" and pool.candidates is not None:
        cand = pool.candidates
        cq = _codes(cand.column("qid"), pa.array(coded.qids.astype(object), pa.string()))
        cd = _codes(cand.column("docid"), coded.vocab)
        keep = (cq >= 0) & (cd >= 0)
        pairs = np.unique(np.stack([cq[keep], cd[keep]]), axis=1)
        args["candidate_query"], args["candidate_doc"] = pairs[0], pairs[1]
    else:
        return (
            None,
            None,
            (
                "The popularity ranker needs the corpus or the candidate lists; a pool of "
                f"{pool.kind} ({pool.analytic_unit}) gives neither."
            ),
        )
    gold = (coded.gold_query, coded.gold_doc, coded.gold_grade)
    if not relevant.all():
        gold = (gold[0][relevant], gold[1][relevant], gold[2][relevant])
    del relevant
    try:
        null = popularity_ranker(
            *gold,
            metric=metric,
            n_queries=coded.n_queries,
            **args,
        )
    except ParameterError as exc:
        return None, None, f"The popularity ranker was not computed: {exc}"
    return Interval(null.mean, null.mean_worst, null.mean_best), null.average, None


def _shuffle(
    coded: Coded, metric: Metric, max_hits: int
) -> tuple[Interval | None, str | None, np.ndarray | None, int | None, str | None]:
    if coded.n_queries < 2:
        return None, None, None, None, "The query-shuffle null needs at least two queries."
    relevant = coded.gold_grade >= metric.rel if metric.binary else coded.gold_grade >= 1
    gold_per_doc = np.bincount(coded.gold_doc[relevant], minlength=len(coded.vocab))
    depth = metric.k
    run = (coded.run_query, coded.run_doc, coded.run_position)
    if depth is not None and int(coded.run_position.max(initial=0)) > depth:
        cut = coded.run_position <= depth  # no copies when nothing is cut
        run = (run[0][cut], run[1][cut], run[2][cut])
        del cut
    hits = int(gold_per_doc[run[1]].sum())
    if hits > max_hits:
        return (
            None,
            None,
            None,
            None,
            (
                f"The query-shuffle null was skipped: its join would hold {hits:,} (pair, hit) "
                f"rows, above the cap of {max_hits:,}."
            ),
        )
    null = query_shuffle_null(
        *run,
        coded.gold_query,
        coded.gold_doc,
        coded.gold_grade,
        metric=metric,
        n_queries=coded.n_queries,
    )
    variance, source = null.variance_of_mean, "derangement"
    if variance <= 0:
        variance, source = null.variance_of_mean_independent, "independent"
    half = Z95 * math.sqrt(variance)
    interval = Interval(null.mean, null.mean - half, null.mean + half)
    return interval, source, null.expected, null.n_pairs_hit, None


def query_independent(
    coded: Coded,
    metric: Metric,
    floor: Floor,
    pool: PoolSpec,
    bench: Benchmark,
    *,
    with_run: bool,
    max_hits: int = SHUFFLE_MAX_HITS,
    top: int = 5,
) -> QueryIndependent:
    """The query-shuffle null (with a run), the popularity ranker and the hub documents."""
    mean, std, ceiling = _floor_numbers(floor)
    shuffle: tuple[Any, ...] = (None, None, None, None, None)
    if with_run:
        shuffle = _shuffle(coded, metric, max_hits)
    popularity, per_query, skipped = _popularity(coded, metric, pool, bench)
    relevant = coded.gold_grade >= 1
    hubs: tuple[HubDocument, ...] = ()
    if relevant.any():
        found = hub_documents(
            coded.gold_query[relevant], coded.gold_doc[relevant], coded.n_queries, top
        )
        names = coded.docids(found.doc)
        hubs = tuple(
            HubDocument(name, int(c), float(s))
            for name, c, s in zip(names, found.count, found.share, strict=True)
            if c > 1
        )
    return QueryIndependent(
        floor=mean,
        floor_std=std,
        ceiling=ceiling,
        shuffle=shuffle[0],
        shuffle_variance=shuffle[1],
        shuffle_per_query=shuffle[2],
        shuffle_pairs_hit=shuffle[3],
        shuffle_skipped=shuffle[4],
        popularity=popularity,
        popularity_per_query=per_query,
        popularity_skipped=skipped,
        hubs=hubs,
    )


# --------------------------------------------------------------------------- holes and ties


_RUN_FIELDS = ("run_query", "run_doc", "run_position", "tie_start", "tie_size", "self_row")
_GOLD_FIELDS = ("gold_query", "gold_doc", "gold_grade")


def by_query(coded: Coded) -> Coded:
    """``coded`` with its ranked rows and its judgements each sorted by query (stably).

    :func:`code_tables` leaves them so (then ``coded`` itself is returned, nothing copied).

    Examples
    --------
    >>> c = Coded(np.array(["a", "b"], object), pa.array(["x"]), np.array([1, 0]),
    ...           np.array([0, 0]), np.array([1, 1]), None, None, np.zeros(2, bool),
    ...           np.array([1, 0]), np.array([0, 0]), np.array([1, 1]))
    >>> by_query(c).run_query.tolist(), by_query(c).gold_query.tolist()
    ([0, 1], [0, 1])
    """
    changes: dict[str, np.ndarray] = {}
    for fields in (_RUN_FIELDS, _GOLD_FIELDS):
        query = getattr(coded, fields[0])
        if len(query) > 1 and not bool(np.all(query[1:] >= query[:-1])):
            order = np.argsort(query, kind="stable")
            for name in fields:
                values = getattr(coded, name)
                if values is not None:
                    changes[name] = values[order]
    return dataclasses.replace(coded, **changes) if changes else coded


def _int64(values: np.ndarray) -> np.ndarray:
    """``values`` as int64 (a block's codes are keyed ``query * width + doc``: no overflow)."""
    return values.astype(np.int64, copy=False)


def query_block_rows(coded: Coded, block: int) -> Iterator[tuple[int, int, slice, slice]]:
    """``(q0, q1, rows, golds)`` of each block of queries of a :func:`by_query`-sorted ``coded``.

    ``rows`` and ``golds`` slice the ranked rows and the judgements of the queries
    ``q0 <= q < q1``.

    Examples
    --------
    >>> c = Coded(np.array(["a", "b", "c"], object), pa.array(["x"]), np.array([0, 2, 2]),
    ...           np.array([0, 0, 0]), np.array([1, 1, 2]), None, None, np.zeros(3, bool),
    ...           np.array([1]), np.array([0]), np.array([1]))
    >>> [(q0, q1, r.start, r.stop, g.start, g.stop) for q0, q1, r, g in query_block_rows(c, 2)]
    [(0, 2, 0, 1, 0, 1), (2, 3, 1, 3, 1, 1)]
    """
    for q0, q1, (rows, golds) in query_blocks(
        coded.n_queries, block, coded.run_query, coded.gold_query
    ):
        yield q0, q1, rows, golds


def judgement_holes(coded: Coded, metric: Metric, *, block: int = QUERY_BLOCK) -> HoleCheck:
    """judged@k per query and overall, and the score's range with the holes filled.

    Every value is per query, so the queries are taken ``block`` at a time
    (:data:`QUERY_BLOCK`): the same numbers, with working arrays of a block's size.
    """
    k = metric.k if metric.k is not None else HOLES_K
    depth = metric.k
    coded = by_query(coded)
    # the grade of a filled hole: hole_bounds' default, over all the judgements
    hole_grade = max(int(coded.gold_grade.max(initial=1)), 1, metric.rel)
    n = coded.n_queries
    share, scored, low, high = np.ones(n), np.zeros(n), np.zeros(n), np.zeros(n)
    judged_total = depth_total = holes = depends = 0
    for q0, q1, rows, golds in query_block_rows(coded, block):
        rq, rd, rp = coded.run_query[rows] - q0, coded.run_doc[rows], coded.run_position[rows]
        if depth is not None and rp.max(initial=0) > depth:  # no copies when nothing is cut
            cut = rp <= depth
            rq, rd, rp = rq[cut], rd[cut], rp[cut]
        gq = coded.gold_query[golds] - q0
        gd, gg = coded.gold_doc[golds], coded.gold_grade[golds]
        at_k = judged_at_k(rq, rp, judged_mask(rq, rd, gq, gd), k, q1 - q0)
        share[q0:q1] = at_k.share
        judged_total += int(at_k.judged.sum())
        depth_total += int(at_k.depth.sum())
        bounds = hole_bounds(
            rq, rd, rp, gq, gd, gg, metric=metric, n_queries=q1 - q0, hole_grade=hole_grade
        )
        scored[q0:q1], low[q0:q1], high[q0:q1] = bounds.scored, bounds.low, bounds.high
        holes += int(bounds.holes.sum())
        depends += int(bounds.depends_on_holes.sum())
        del at_k, bounds
    # as judged_at_k's overall and HoleBounds' means, over all the queries
    overall = judged_total / depth_total if depth_total else 1.0
    score = float(np.mean(scored))
    return HoleCheck(
        k=k,
        applicable=bool(np.any(coded.gold_grade <= 0)),
        overall_judged=overall,
        per_query_judged=share,
        holes=holes,
        score=score,
        interval=Interval(score, float(np.mean(low)), float(np.mean(high))),
        per_query_low=low,
        per_query_high=high,
        depends=depends,
    )


def tie_sensitivity(
    coded: Coded,
    metric: Metric,
    threshold: float | None,
    score: float | None,
    *,
    block: int = QUERY_BLOCK,
) -> TieSensitivity | None:
    """The model's [worst, best] over the orders of each tied group, and the tie average.

    The ranked rows' grades are looked up ``block`` queries at a time (:data:`QUERY_BLOCK`);
    only the rows that hit a relevant judgement are kept for the bounds.
    """
    if coded.tie_start is None or coded.tie_size is None:
        return None
    coded = by_query(coded)
    assert coded.tie_start is not None and coded.tie_size is not None
    gq, gd, gg = coded.gold_query, coded.gold_doc, coded.gold_grade
    relevant = gg >= 1
    tied_queries = 0
    empty = np.zeros(0, np.int64)
    parts: list[tuple[np.ndarray, ...]] = [(empty, empty, empty, empty)]
    for _, _, rows, golds in query_block_rows(coded, block):
        rq, rd = _int64(coded.run_query[rows]), _int64(coded.run_doc[rows])
        start, size = _int64(coded.tie_start[rows]), _int64(coded.tie_size[rows])
        tied_rows = size > 1
        if metric.k is not None:
            tied_rows &= start <= metric.k
        tied_queries += len(np.unique(rq[tied_rows]))
        del tied_rows
        keep = relevant[golds]
        grade = _lookup_grades(
            rq, rd, _int64(gq[golds][keep]), _int64(gd[golds][keep]), gg[golds][keep]
        )[1]
        hit = grade >= 1
        parts.append((rq[hit], start[hit], size[hit], grade[hit]))
        del grade, hit
    hit_query, hit_start, hit_size, hit_grade = (
        np.concatenate([p[i] for p in parts]) for i in range(4)
    )
    del parts
    group_key = hit_query * (int(coded.tie_start.max(initial=0)) + 1) + hit_start
    groups, item_group = np.unique(group_key, return_inverse=True)
    first = np.zeros(len(groups), np.int64)
    first[item_group.ravel()] = np.arange(len(hit_query))
    tied = TiedHits(
        hit_query[first],
        hit_start[first],
        hit_size[first],
        item_group.ravel(),
        hit_grade,
    )
    judged = Judged.from_items(gq[relevant], gg[relevant], coded.n_queries)
    bounds = tie_bounds(metric, tied, judged)
    moved: tuple[str, ...] = ()
    if threshold is not None:
        moved = tuple(str(q) for q in coded.qids[bounds.moved(threshold)])
    return TieSensitivity(
        tied_queries=tied_queries,
        interval=Interval(bounds.mean_average, bounds.mean_worst, bounds.mean_best),
        score=score,
        threshold=threshold,
        moved=moved,
        per_query_worst=bounds.worst,
        per_query_best=bounds.best,
    )


# --------------------------------------------------------------------------- all of them


def top_ranking(run: pa.Table, units: pa.Table | None, depth: int | None) -> pa.Table:
    """The deduplicated ranking in trec_eval's order with its tie groups, cut at ``depth``.

    As :func:`~evalvalidity.io.scoring.rank_run` with ties ``average`` (the run is already
    validated by the scorer), but only the rows at positions <= depth + a slack, or in a tie
    group starting <= depth, leave DuckDB (:func:`~evalvalidity.io.scoring.top_ranking_sql`:
    without units, only those rows are sorted). The check takes the scorer's instead
    (``score_run(..., keep_ranking=True)``); this is for a run scored elsewhere.
    """
    from evalvalidity.io.scoring import _connect, top_ranking_sql

    con = _connect(run, None, units)
    try:
        deep = None if depth is None else int(depth) + _SLACK
        scores = run.column("score").null_count == 0
        sql = top_ranking_sql(units is not None, False, deep, scores=scores)
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


def ranking_depth(metric: Metric) -> int | None:
    """The depth of the ranking the nulls read: the metric's cutoff and a slack (None: all)."""
    return None if metric.k is None else metric.k + _SLACK


def rule_units(inputs: Any, rule: str) -> pa.Table:
    """The units a rule gives for every id of the inputs' runs (model, noise, compared)."""
    runs = [inputs.run, inputs.noise_run, *inputs.compare.values()]
    ids = [c for r in runs if r is not None for c in _chunks(r.column("docid"))]
    return units_from_rule(pa.table({"docid": pa.chunked_array(ids, pa.string())}), rule)


def other_nulls(
    bench: Benchmark,
    floor: Floor,
    metric: Metric,
    pool: PoolSpec,
    qrels: pa.Table,
    *,
    run: pa.Table | None = None,
    units: pa.Table | None = None,
    ties: str = "trec_eval",
    units_rule: str | None = None,
    harness_output: pa.Table | None = None,
    harness_measure: str | None = None,
    min_detectable: float | None = None,
    model_score: float | None = None,
    query_texts: pa.Table | None = None,
    corpus_texts: pa.Table | None = None,
    max_hits: int = SHUFFLE_MAX_HITS,
    max_rows: int = RANKING_MAX_ROWS,
    ranking: pa.Table | None = None,
) -> OtherNulls:
    """Run every other null on one benchmark (see the module notes).

    Parameters
    ----------
    bench, floor, metric, pool, qrels
        The check's benchmark, uniform floor, metric, pool and judgements.
    run : pyarrow.Table, optional
        The model's run; without it only the popularity ranker and the hubs are computed.
    units : pyarrow.Table, optional
        Chunk → document, as the scorer used it (from the pool or from ``units_rule``).
    ties : str
        The scorer's tie policy (the ranking here is always in trec_eval's order).
    units_rule : str, optional
        The units rule applied (shown in the segment check; ``units`` without a rule means
        the pool's units file).
    harness_output : pyarrow.Table, optional
        The harness's per-query output (the invariants), read for ``harness_measure``.
    min_detectable : float, optional
        The smallest detectable difference: the threshold of the tie and hole checks.
    model_score : float, optional
        The model's mean as the check scored it.
    query_texts, corpus_texts : pyarrow.Table, optional
        ``id, text`` tables: (near-)identical texts count as self-hits.
    max_hits : int
        The query-shuffle null's cap (:data:`SHUFFLE_MAX_HITS`).
    max_rows : int
        The cap on the run's rows when ``metric`` has no cutoff (:data:`RANKING_MAX_ROWS`).
    ranking : pyarrow.Table, optional
        The top of the run's ranking as the scorer kept it (``score_run(...,
        keep_ranking=True, ranking_depth=ranking_depth(metric))``); without it the run is
        ranked here (:func:`top_ranking`).
    """
    notes: list[str] = []
    whole = run
    if run is not None and metric.k is None and len(run) > max_rows:
        notes.append(
            f"The query-shuffle null, self-hits, judgement holes and tie bounds were skipped:"
            f" {metric.name} has no cutoff, so they read every position of the run's"
            f" {len(run):,} rows (a sort of the whole run, held in memory), above the cap of"
            f" {max_rows:,}; a metric with a cutoff (e.g. {metric.family}@10) has no cap."
        )
        run = ranking = None
    if run is not None and ranking is None:
        ranking = top_ranking(run, units, metric.k)
    extra = []
    if pool.kind == "candidates" and pool.candidates is not None:
        extra.append(pool.candidates.column("docid"))
    coded = code_tables(bench, qrels, ranking, metric.k, extra)
    del ranking  # coded: the table of ids (a million queries' top: 0.2 GB) is not needed
    # What the coding freed (the ranking's Arrow buffers, its sort's numpy temporaries) is
    # handed back before the nulls allocate through the other allocators.
    release_freed_memory()
    independent = query_independent(
        coded, metric, floor, pool, bench, with_run=run is not None, max_hits=max_hits
    )
    for skipped in (independent.shuffle_skipped, independent.popularity_skipped):
        if skipped and run is not None:
            notes.append(skipped)
    segments = None
    if whole is not None:
        found = segment_ids(whole.slice(0, SEGMENT_SAMPLE), qrels)
        segments = SegmentCheck(
            found.separator,
            found.run_share,
            found.qrels_share,
            found.matched_share,
            found.example,
            found.segmented,
            found.suggested,
            units_rule if units_rule is not None else ("units" if units is not None else None),
        )
    holes = None
    tie = None
    selfhit = None
    if run is not None:
        release_freed_memory()
        holes = judgement_holes(coded, metric)
        release_freed_memory()
        tie = tie_sensitivity(coded, metric, min_detectable, model_score)
        release_freed_memory()
        selfhit = self_hits(coded, metric, floor, pool, qrels, query_texts, corpus_texts)
    invariants = None
    if harness_output is not None:
        invariants = harness_invariants(harness_output, metric, bench.qids, measure=harness_measure)
    return OtherNulls(
        query_independent=independent,
        self_hits=selfhit,
        segments=segments,
        holes=holes,
        harness=invariants,
        ties=tie,
        notes=tuple(notes),
        min_detectable=min_detectable,
    )
