"""A trec_eval-compatible scorer over the canonical run and qrels tables.

:func:`score_run` ranks a run in DuckDB, joins it to the judgements, brings back to numpy only
the judged-relevant items it retrieved (and per-query counts), and computes every metric with
the kernels of :mod:`evalvalidity.core.kernels`. :func:`rank_run` returns the ranking itself, for
drill-down.

Semantics (trec_eval's unless said otherwise):

- The run's rank column is ignored: each query's items are ordered by score descending, then
  by docid descending (byte-wise string comparison, as trec_eval's ``strcmp``).
- A (qid, docid) pair may appear once per run; a second occurrence is an error.
- Queries in the run without any judgement are ignored and reported (``unjudged_qids``).
- A judged query absent from the run scores 0 (``unranked="zero"``, the default, as
  ``trec_eval -c``) or is left out (``unranked="skip"``, trec_eval's default); either way it is
  reported (``unranked_qids``). A judged query is one with any qrels line, relevant or not; one
  with no relevant item scores 0 on every metric.
- Identical duplicate judgements are merged; conflicting ones are an error.

Tie policies
------------
``trec_eval``
    Score descending, then docid descending.
``given``
    The file's rank column, ascending (positions are 1, 2, ... in that order, whatever the rank
    values). Every rank must be present and distinct within a query.
``average``
    The expected value over all orders of the items that share a score (McSherry & Najork,
    ECIR 2008), computed exactly by :func:`evalvalidity.core.kernels.evaluate_tied`.

Chunks and documents
--------------------
With a ``units`` table (chunk_id → doc_id), the run ranks chunks and the qrels judge documents:
the chunks are ranked by the tie policy, each is mapped to its document, and each document
keeps its FIRST occurrence; positions then count documents. A run chunk missing from
``units`` is an error.

Large runs
----------
``run`` may also be a :class:`pyarrow.dataset.Dataset` (e.g. the Parquet file a workspace
keeps): DuckDB then scans it in a stream instead of holding it in memory, and with
``memory_limit`` it spills sorts and joins to disk, so a run larger than memory can be scored.
A plain dataset of local Parquet files is read by DuckDB's own Parquet reader, whose buffers
count towards that limit (Arrow's scanner, used for any other dataset, reads ahead outside it).

Small runs
----------
A run table and judgements of at most :data:`~evalvalidity.io._small_scoring.SMALL_ROWS` rows
in all, without units and without ``keep_ranking``, have their hits found in Python
(:mod:`evalvalidity.io._small_scoring`): the same semantics and values, without importing DuckDB
or opening its database (0.25 s, most of a toy run's score). Anything the checks below would
refuse goes through the SQL, which names the line.

Under ``average`` with ``units``, a document's score is the best score of its chunks (what
its first occurrence carries under any order of ties) and the expectation is taken over the
orders of *documents* sharing a best score, each order equally likely. This is the tie-aware
value of the deduplicated document ranking. It is deliberately not the expectation over
random orders of tied *chunks* followed by deduplication: that would make a document with
more chunks at the tied score more likely to come first (a Plackett–Luce order weighted by
chunk counts, see docs/math.md, Floors under deduplication), which has no closed form per group and would give a document
credit for being split into more chunks.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeGuard

import numpy as np
import pyarrow as pa

from evalvalidity.core.kernels import Hits, Judged, TiedHits, evaluate, evaluate_tied
from evalvalidity.core.metrics import Metric, parse_metrics
from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io._arrow import from_numpy, int64_range, run_starts, select, to_numpy
from evalvalidity.io._compute import pc
from evalvalidity.io._database import DEFAULT_MEMORY_LIMIT
from evalvalidity.io._database import connection as shared_connection
from evalvalidity.io._memory import release_freed_memory
from evalvalidity.io._small_scoring import small_hits
from evalvalidity.io._verified import has_unique_pairs
from evalvalidity.io.tables import RUN_SCHEMA, conform

if TYPE_CHECKING:
    import duckdb

    # pyarrow.dataset imports pandas (about a second): only a caller who made a dataset has it
    import pyarrow.dataset as pads

__all__ = [
    "TIE_POLICIES",
    "UNRANKED_POLICIES",
    "ScoreResult",
    "decode_ranking",
    "rank_run",
    "retrieves_relevant",
    "score_run",
]

#: The tie policies :func:`score_run` and :func:`rank_run` accept.
TIE_POLICIES: Final = ("trec_eval", "given", "average")
#: What :func:`score_run` does with a judged query that has no ranking.
UNRANKED_POLICIES: Final = ("zero", "skip")

# Orders of the ranking, by policy. Fixed text: nothing from the user reaches SQL. Under
# 'average' positions (shown by rank_run) follow trec_eval's order; scoring uses the groups.
_DOCUMENT_ORDER: Final = {
    "trec_eval": "score DESC, docid DESC",
    "given": "rank ASC",
    "average": "score DESC, docid DESC",
}
_CHUNK_ORDER: Final = {
    "trec_eval": "r.score DESC, r.docid DESC",
    "given": "r.rank ASC",
    "average": "r.score DESC, r.docid DESC",
}
_EXAMPLES: Final = 3
# Rank by counting (see _counting_sql) while (relevant item, item of its query) pairs number
# at most this many per run row; sort the whole run otherwise.
_COUNTING_LIMIT = 4.0


@dataclass(frozen=True, eq=False)
class ScoreResult:
    """Per-query and mean values of several metrics for one run.

    Attributes
    ----------
    metrics : tuple of Metric
        The metrics, in the order asked for.
    qids : numpy.ndarray
        The scored query ids (str), sorted byte-wise as trec_eval sorts them.
    values : Mapping[str, numpy.ndarray]
        Canonical metric name -> float64 per-query values aligned with ``qids`` (read-only).
    means : Mapping[str, float]
        Canonical metric name -> mean over ``qids``.
    unranked_qids : tuple of str
        Judged queries with no ranking: scored 0 (``unranked="zero"``) or left out
        (``unranked="skip"``).
    unjudged_qids : tuple of str
        Queries of the run without any judgement: ignored.
    ties : str
        The tie policy used.
    unranked : str
        The unranked policy used.
    n_ranked_rows : int
        Rows of the run (chunks when units are used) that belong to scored queries.
    n_dedup_dropped : int
        Of those, chunk rows dropped as later occurrences of a document (0 without units).
    ranking : pyarrow.Table or None
        With ``keep_ranking``: the top of every scored query's deduplicated ranking in
        trec_eval's order, ``qid, docid, position, tie_start, tie_size`` (see
        :func:`top_ranking_sql`), its rows in no particular order (positions give the order:
        sorting them all would double the memory of a million-query ranking); None otherwise.
        The ids are dictionary codes (``dictionary<int32, string>``): ``qid``'s dictionary is
        the scored queries (``qids``), ``docid``'s the ranking's distinct documents in byte
        order; the positions are int32. :func:`decode_ranking` gives strings and int64.
    """

    metrics: tuple[Metric, ...]
    qids: np.ndarray
    values: Mapping[str, np.ndarray]
    means: Mapping[str, float]
    unranked_qids: tuple[str, ...]
    unjudged_qids: tuple[str, ...]
    ties: str
    unranked: str
    n_ranked_rows: int
    n_dedup_dropped: int
    ranking: pa.Table | None = None

    @property
    def n_queries(self) -> int:
        """The number of scored queries."""
        return len(self.qids)


# --------------------------------------------------------------------------- validation


def _check_choice(value: object, name: str, caller: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        shown = ", ".join(repr(c) for c in choices)
        raise ParameterError(
            f"The {name!r} parameter of {caller} must be one of {shown}. Got {value!r} instead."
        )
    return value


def _check_name(value: object, name: str, caller: str) -> str:
    if not isinstance(value, str) or not value:
        raise ParameterError(
            f"The {name!r} parameter of {caller} must be a non-empty str. Got {value!r} instead."
        )
    return value


def _check_table(value: object, name: str, caller: str, kind: str) -> pa.Table:
    if not isinstance(value, pa.Table):
        raise ParameterError(
            f"The {name!r} parameter of {caller} must be a pyarrow Table. Got"
            f" {type(value).__name__} instead."
        )
    return conform(value, kind)


def _is_dataset(value: object) -> TypeGuard[pads.Dataset]:
    """Whether ``value`` is a :class:`pyarrow.dataset.Dataset`, without importing the module.

    A dataset exists only once ``pyarrow._dataset`` (where the class lives) is imported.
    """
    module = sys.modules.get("pyarrow._dataset")
    return module is not None and isinstance(value, module.Dataset)


def _check_run_source(value: object, caller: str) -> pa.Table | pads.Dataset:
    """A run table (conformed), or a dataset whose schema already is the run schema."""
    if _is_dataset(value):
        have = {f.name: f.type for f in value.schema}
        missing = [f"{f.name} ({f.type})" for f in RUN_SCHEMA if have.get(f.name) != f.type]
        if missing:
            raise ParameterError(
                f"The 'run' dataset of {caller} must have the run schema; missing or mistyped:"
                f" {', '.join(missing)}."
            )
        return value
    return _check_table(value, "run", caller, "run")


def _where(line: Any, row: int) -> str:
    """Locate a row for a message: its source line when known, else its 1-based row."""
    return f"line {line}" if line is not None else f"row {row}"


def _numbered(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table | pads.Dataset) -> None:
    """Register ``table`` with a 1-based ``_row`` column (only on error paths: it costs a copy)."""
    if _is_dataset(table):
        # Row numbers follow the dataset's order only while DuckDB preserves insertion order.
        con.execute("SET preserve_insertion_order = true")
        con.register(f"{name}_source", table)
        con.execute(
            f"CREATE TEMP VIEW {name} AS SELECT *, row_number() OVER () AS _row FROM {name}_source"
        )
        return
    rows = int64_range(1, table.num_rows + 1)
    con.register(name, table.append_column("_row", rows))


def _first_row(con: duckdb.DuckDBPyConnection, condition: str, table: str) -> str:
    line, row = con.sql(
        f"SELECT line, _row FROM {table} WHERE {condition} ORDER BY _row LIMIT 1"
    ).fetchall()[0]
    return _where(line, row)


def _check_qrels(con: duckdb.DuckDBPyConnection, qrels: pa.Table, qrels_name: str) -> None:
    null_ids = "qid IS NULL OR docid IS NULL OR rel IS NULL"
    ((n_null, n_conflicts),) = con.sql(
        f"""SELECT (SELECT coalesce(count_if({null_ids}), 0) FROM qrels),
                   (SELECT count(*) FROM (SELECT 1 FROM qrels GROUP BY qid, docid
                                          HAVING count(DISTINCT rel) > 1))"""
    ).fetchall()
    if n_null == 0 and n_conflicts == 0:
        return
    _numbered(con, "qrels_rows", qrels)
    if n_null:
        raise InputDataError(
            f"{qrels_name}: {n_null} rows have no qid, docid or grade, the first at"
            f" {_first_row(con, null_ids, 'qrels_rows')}."
        )
    qid, docid, first, second = con.sql(
        """WITH numbered AS (
               SELECT qid, docid, rel, line, _row,
                      min(rel) OVER (PARTITION BY qid, docid ORDER BY _row
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS lo,
                      max(rel) OVER (PARTITION BY qid, docid ORDER BY _row
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS hi,
                      first_value(struct_pack(rel, line, _row)) OVER (
                          PARTITION BY qid, docid ORDER BY _row) AS head
               FROM qrels_rows)
           SELECT qid, docid, head, struct_pack(rel, line, _row) FROM numbered
           WHERE lo < hi ORDER BY _row LIMIT 1"""
    ).fetchall()[0]
    raise InputDataError(
        f"{qrels_name}: query {qid!r} judges the document {docid!r} twice with different"
        f" grades ({first['rel']} at {_where(first['line'], first['_row'])},"
        f" {second['rel']} at {_where(second['line'], second['_row'])})."
    )


def _check_run(
    con: duckdb.DuckDBPyConnection,
    run: pa.Table | pads.Dataset,
    ties: str,
    run_name: str,
    *,
    unique_pairs: bool = False,
) -> None:
    """Refuse null ids, unusable scores or ranks, and repeated (qid, docid) pairs.

    With ``unique_pairs`` the pairs are known not to repeat (a table the reader returned) and
    are not searched again.
    """
    null_ids = "qid IS NULL OR docid IS NULL"
    bad_scores = "score IS NULL OR isnan(score)"
    null_ranks = "rank IS NULL"
    # Duplicates are screened with 64-bit hashes; a suspected duplicate (or a hash collision,
    # about 1e-6 likely for 7e6 rows) is then confirmed exactly.
    if _clean_columns(run):
        n_null = n_bad = n_no_rank = 0  # Arrow's null counts are known without a pass
    else:
        n_null, n_bad, n_no_rank = con.sql(
            f"""SELECT coalesce(count_if({null_ids}), 0), coalesce(count_if({bad_scores}), 0),
                       coalesce(count_if({null_ranks}), 0)
                FROM run"""
        ).fetchall()[0]
    # Sorting the hashes is cheaper than a hash table of distinct values (measured: 1.0 s
    # against 1.5 s of CPU for 7e6 rows).
    hashed = [] if unique_pairs else ["SELECT hash(qid, docid) AS h FROM run"]
    if ties == "given":
        hashed.append("SELECT hash(qid, rank, 'rank') AS h FROM run")
    n_repeats = 0
    if hashed:
        n_repeats = con.sql(
            f"""SELECT count(*) FROM (SELECT h = lag(h) OVER (ORDER BY h) AS repeated
                                      FROM ({" UNION ALL ".join(hashed)})) WHERE repeated"""
        ).fetchall()[0][0]
    needs_score = ties != "given"
    if not (n_null or (needs_score and n_bad) or (not needs_score and n_no_rank) or n_repeats):
        return
    _numbered(con, "run_rows", run)
    if n_null:
        raise InputDataError(
            f"{run_name}: {n_null} rows have no qid or docid, the first at"
            f" {_first_row(con, null_ids, 'run_rows')}."
        )
    if needs_score and n_bad:
        raise InputDataError(
            f"{run_name}: {n_bad} rows have no usable score (null or NaN), the first at"
            f" {_first_row(con, bad_scores, 'run_rows')}; to rank by the rank column, use"
            " ties='given'."
        )
    if not needs_score and n_no_rank:
        raise InputDataError(
            f"{run_name}: the tie policy 'given' orders by the rank column, but {n_no_rank}"
            f" rows have no rank, the first at {_first_row(con, null_ranks, 'run_rows')}."
        )
    if n_repeats:
        found = _second_occurrences(con, "qid, docid")
        if found:
            (qid, docid, first, second), n_dup = found
            more = f" ({n_dup} duplicated pairs in all)" if n_dup > 1 else ""
            raise InputDataError(
                f"{run_name}: query {qid!r} ranks the document {docid!r} twice"
                f" ({_where(*first)} and {_where(*second)}); a run must rank a document at"
                f" most once per query{more}."
            )
    if n_repeats and ties == "given":
        found = _second_occurrences(con, "qid, rank")
        if found:
            (qid, rank, first, second), _ = found
            raise InputDataError(
                f"{run_name}: query {qid!r} has two documents at rank {rank} ({_where(*first)}"
                f" and {_where(*second)}); the tie policy 'given' needs distinct ranks within a"
                " query."
            )


def _clean_columns(run: pa.Table | pads.Dataset) -> bool:
    """Whether ``run`` is a table without a null id, score or rank and without a NaN score.

    >>> _clean_columns(pa.table({"qid": ["1"], "docid": ["a"], "score": [1.0], "rank": [1]}))
    True
    >>> _clean_columns(pa.table({"qid": ["1"], "docid": ["a"], "score": [float("nan")],
    ...                          "rank": [1]}))
    False
    """
    if not isinstance(run, pa.Table):
        return False
    columns = {name: run.column(name) for name in ("qid", "docid", "score", "rank")}
    if any(column.null_count for column in columns.values()):
        return False
    score = columns["score"]
    return pa.types.is_floating(score.type) and not (
        len(score) and pc.any(pc.is_nan(score)).as_py()
    )


def _second_occurrences(
    con: duckdb.DuckDBPyConnection, key: str
) -> tuple[tuple[Any, Any, tuple[Any, int], tuple[Any, int]], int] | None:
    """Find the earliest row repeating ``key``, the row it repeats and the number of repeats."""
    rows = con.sql(
        f"""WITH numbered AS (
                SELECT {key}, line, _row,
                       row_number() OVER (PARTITION BY {key} ORDER BY _row) AS k,
                       lag(struct_pack(line, _row)) OVER (PARTITION BY {key} ORDER BY _row)
                           AS previous
                FROM run_rows)
            SELECT {key}, previous, line, _row, count(*) OVER () FROM numbered
            WHERE k = 2 ORDER BY _row LIMIT 1"""
    ).fetchall()
    if not rows:
        return None
    a, b, previous, line, row, n_repeats = rows[0]
    return (a, b, (previous["line"], previous["_row"]), (line, row)), n_repeats


def _check_units(
    con: duckdb.DuckDBPyConnection,
    units: pa.Table,
    run: pa.Table | pads.Dataset,
    run_name: str,
    units_name: str,
) -> None:
    null_ids = "chunk_id IS NULL OR doc_id IS NULL"
    ((n_null, n_conflicts, n_missing),) = con.sql(
        f"""SELECT (SELECT coalesce(count_if({null_ids}), 0) FROM units),
                   (SELECT count(*) FROM (SELECT 1 FROM units GROUP BY chunk_id
                                          HAVING count(DISTINCT doc_id) > 1)),
                   (SELECT count(DISTINCT docid) FROM run ANTI JOIN units
                    ON run.docid = units.chunk_id)"""
    ).fetchall()
    if n_null or n_conflicts:
        _numbered(con, "units_rows", units)
    if n_null:
        raise InputDataError(
            f"{units_name}: {n_null} rows have no chunk_id or doc_id, the first at"
            f" {_first_row(con, null_ids, 'units_rows')}."
        )
    if n_conflicts:
        chunk, first, second = con.sql(
            """WITH numbered AS (
                   SELECT chunk_id, doc_id, line, _row,
                          first_value(struct_pack(doc_id, line, _row)) OVER (
                              PARTITION BY chunk_id ORDER BY _row) AS head
                   FROM units_rows)
               SELECT chunk_id, head, struct_pack(doc_id, line, _row) FROM numbered
               WHERE doc_id <> head.doc_id ORDER BY _row LIMIT 1"""
        ).fetchall()[0]
        raise InputDataError(
            f"{units_name}: the chunk {chunk!r} maps to two documents"
            f" ({first['doc_id']!r} at {_where(first['line'], first['_row'])},"
            f" {second['doc_id']!r} at {_where(second['line'], second['_row'])})."
        )
    if n_missing:
        _numbered(con, "run_rows", run)
        examples = con.sql(
            f"""SELECT docid, arg_min(line, _row), min(_row) AS first FROM run_rows
                ANTI JOIN units ON run_rows.docid = units.chunk_id
                GROUP BY docid ORDER BY first LIMIT {_EXAMPLES}"""
        ).fetchall()
        shown = ", ".join(f"{chunk!r} ({_where(line, row)})" for chunk, line, row in examples)
        raise InputDataError(
            f"{run_name}: {n_missing} ranked chunk ids are missing from {units_name}, first"
            f" {shown}; every ranked chunk must map to a document."
        )


# --------------------------------------------------------------------------- ranking SQL


def _ranking_sql(
    ties: str, with_units: bool, restrict: bool, *, positions: bool, groups: bool
) -> str:
    """Return the SQL of the deduplicated ranking.

    Columns: qid, docid, score, then ``position`` (when asked), ``tie_start, tie_size``
    (when asked) and, with units, ``chunk_id, n_chunks`` (the document's first chunk and its
    number of chunks). ``restrict`` keeps only the queries of the ``scored`` table.
    """
    windows = []
    if positions:
        order = _DOCUMENT_ORDER[ties] if not with_units else "first_chunk ASC"
        windows.append(f"row_number() OVER (PARTITION BY qid ORDER BY {order}) AS position")
    if groups:
        windows.append("rank() OVER (PARTITION BY qid ORDER BY score DESC) AS tie_start")
        windows.append("count(*) OVER (PARTITION BY qid, score) AS tie_size")
    extra = "".join(", " + w for w in windows)
    if not with_units:
        where = " WHERE qid IN (SELECT qid FROM scored)" if restrict else ""
        return f"SELECT qid, docid, score{extra} FROM run{where}"
    where = " WHERE r.qid IN (SELECT qid FROM scored)" if restrict else ""
    # Rank the chunks, map each to its document and keep the document's first chunk. Under
    # 'average' the first chunk in trec_eval order is a best-scoring one, so each document
    # carries its best chunk score into the tie groups.
    return f"""
        WITH chunks AS (
            SELECT r.qid, u.doc_id AS docid, r.docid AS chunk_id, r.score,
                   row_number() OVER (PARTITION BY r.qid ORDER BY {_CHUNK_ORDER[ties]})
                       AS chunk_position
            FROM run r JOIN units_distinct u ON r.docid = u.chunk_id{where}
        ), documents AS (
            SELECT qid, docid, arg_min(chunk_id, chunk_position) AS chunk_id,
                   arg_min(score, chunk_position) AS score,
                   min(chunk_position) AS first_chunk, count(*) AS n_chunks
            FROM chunks GROUP BY qid, docid
        )
        SELECT qid, docid, score{extra}, chunk_id, n_chunks FROM documents"""


def top_ranking_sql(
    with_units: bool,
    restrict: bool,
    depth: int | None,
    *,
    ranked: str = "",
    bars: str = "",
    scores: bool = True,
    rows: str = "run",
    ordered: bool = True,
) -> str:
    """SQL of the top of each query's ranking, in trec_eval's order, with its tie groups.

    Columns ``qid, docid, position, tie_start, tie_size``: the rows at positions <= ``depth``
    and every row of a tie group that starts there (``depth`` None: every row). Positions follow
    score descending, then docid descending (documents: their first chunk's position); a tie
    group is the items sharing a score, ``tie_start`` its first position.

    Without units nothing is sorted but these rows: the ``depth``-th largest score of each
    query (a grouped top-``depth`` aggregate, one pass) bounds the rows that can be above it,
    and every row at or above a score it holds is among them, so positions and groups counted
    within them are those of the whole ranking. ``ranked`` names a table already holding the
    ranking of :func:`_ranking_sql` with positions and groups (the scorer's, with units);
    ``bars`` a table of ``qid, bar`` (the scorer's bounds; a query it does not list has no
    bound: all its rows are kept).
    ``scores`` says every score is present (not null), which bounding by a score needs.
    ``rows`` names the run, or a table of its rows at or above a bound as deep as ``bars``'.
    ``ordered`` sorts the rows by query and position; without it they come in no particular
    order (a sort of every row, with its ids, costs DuckDB about 50 bytes a row).
    """
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise ParameterError(f"The ranking depth must be an int >= 1. Got {depth!r} instead.")
    cut = "" if depth is None else f" WHERE position <= {depth} OR tie_start <= {depth}"
    columns = "qid, docid, position, tie_start, tie_size"
    order = " ORDER BY qid, position" if ordered else ""
    if with_units or depth is None or not scores:
        source = ranked or (
            f"({_ranking_sql('average', with_units, restrict, positions=True, groups=True)})"
        )
        return f"SELECT {columns} FROM {source}{cut}{order}"
    where = " WHERE qid IN (SELECT qid FROM scored)" if restrict else ""
    bound = bars or f"(SELECT qid, {_bar_sql(depth)} AS bar FROM run{where} GROUP BY qid)"
    scored = " AND r.qid IN (SELECT qid FROM scored)" if restrict else ""
    return f"""
        WITH near AS (SELECT r.qid, r.docid, r.score FROM {rows} r LEFT JOIN {bound} b USING (qid)
                 WHERE (b.bar IS NULL OR r.score >= b.bar){scored}),
        ranked AS (
            SELECT qid, docid,
                   row_number() OVER (PARTITION BY qid ORDER BY score DESC, docid DESC)
                       AS position,
                   rank() OVER (PARTITION BY qid ORDER BY score DESC) AS tie_start,
                   count(*) OVER (PARTITION BY qid, score) AS tie_size
            FROM near)
        SELECT {columns} FROM ranked{cut}{order}"""


#: Up to this many judged queries, the kept ranking's bounds come with the counts in one pass
#: (their aggregate states then take at most ~25 MB); above, a second pass bounds only the
#: queries longer than the depth (a million queries of 5 rows: 0.4 GB less).
_ONE_PASS_BOUND_QUERIES = 65_536


#: Up to this many rows, :func:`_query_bars` finds the run's bars in numpy (its temporaries
#: take about 25 bytes a row); a larger run is grouped by DuckDB, which can spill.
_QUERY_BARS_MAX_ROWS = 1 << 24
#: Scores partially sorted at a time by :func:`_query_bars`.
_QUERY_BARS_BLOCK_ROWS = 1 << 20


@dataclass(frozen=True)
class _QueryBars:
    """Each query's row count and bar of an in-memory run whose rows come query by query."""

    counts: pa.Table  # qid, n, bar (the depth-th largest score; null under depth rows)
    bar: np.ndarray  # each query's bar, -inf under depth rows
    lengths: np.ndarray  # each query's rows, in the run's order
    score: np.ndarray  # each row's score

    def near(self, run: pa.Table) -> pa.Table:
        """The rows at or above their query's bar (``near_rows``), in the run's order."""
        keep = self.score >= np.repeat(self.bar, self.lengths)
        rows = np.flatnonzero(keep).astype(np.int64)
        del keep
        return run.select(["qid", "docid", "score", "rank"]).take(from_numpy(rows))


def _query_bars(run: pa.Table, depth: int) -> _QueryBars | None:
    """What ``run_counts`` holds, found in numpy when each query's rows are together.

    The bar is SQL's ``max(score, depth)[depth]`` (:func:`_bar_sql`): the ``depth``-th largest
    score, counted with repeats. A run's rows nearly always come query by query: its queries
    are then the runs of equal ids (one comparison of neighbouring ids, no hashing of every
    row's id), and each query's bar one partial sort of its scores, taken at once for the
    queries of one length. Over the 7M-line run this and the rows it keeps take 0.28 s, where
    DuckDB's two passes (group by id, then join on it) take 0.43 s alone and 0.7 s in a check.
    None (DuckDB then groups the rows) for a query whose rows are apart, an empty run, a null
    score or a run of more than :data:`_QUERY_BARS_MAX_ROWS` rows.

    Examples
    --------
    >>> run = pa.table({"qid": ["a", "a", "a", "b"], "docid": ["x", "y", "z", "x"],
    ...                 "score": [1.0, 3.0, 2.0, 5.0], "rank": [1, 2, 3, 1]})
    >>> bars = _query_bars(run, 2)
    >>> bars.counts.to_pydict()
    {'qid': ['a', 'b'], 'n': [3, 1], 'bar': [2.0, None]}
    >>> bars.near(run).column("docid").to_pylist()
    ['y', 'z', 'x']
    >>> _query_bars(pa.table({"qid": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]}), 2) is None
    True
    """
    n_rows = run.num_rows
    score_column = run.column("score")
    if n_rows == 0 or n_rows > _QUERY_BARS_MAX_ROWS or score_column.null_count:
        return None
    qid = run.column("qid")
    heads = np.flatnonzero(run_starts(qid))
    ids = pc.take(qid, from_numpy(heads.astype(np.int64)))
    ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    if len(pc.unique(ids)) != len(ids):
        return None  # some query's rows are apart
    lengths = np.diff(np.append(heads, n_rows))
    score = to_numpy(score_column)
    bar = np.full(len(heads), -np.inf)
    for length in np.unique(lengths[lengths >= depth]).tolist():
        of_length = np.flatnonzero(lengths == length)
        step = max(1, _QUERY_BARS_BLOCK_ROWS // length)
        for first in range(0, len(of_length), step):
            which = of_length[first : first + step]
            rows = heads[which, None] + np.arange(length)  # these queries' rows, one a line
            bar[which] = np.partition(score[rows], length - depth, axis=1)[:, length - depth]
            del rows
    long = lengths >= depth
    valid = pa.py_buffer(np.packbits(long, bitorder="little"))  # null: under depth rows
    bars = pa.Array.from_buffers(
        pa.float64(), len(bar), [valid, pa.py_buffer(bar.copy())], null_count=int((~long).sum())
    )
    counts = pa.table({"qid": ids, "n": from_numpy(lengths.astype(np.int64)), "bar": bars})
    return _QueryBars(counts, bar, lengths, score)


def _bar_sql(depth: int) -> str:
    """The ``depth``-th largest score of a group (NULL when it has fewer rows), as SQL."""
    return f"max(score, {int(depth)})[{int(depth)}]"


def _parquet_files(dataset: pads.Dataset) -> list[str] | None:
    """The local Parquet files that hold exactly ``dataset``'s rows, or None.

    None unless the dataset is plain: files of the local file system in the Parquet format,
    with no partition values, no filter, and the run's columns stored with the run schema's
    types (a dataset that casts or fills columns is scanned through Arrow). A file name that
    DuckDB would read as a pattern (``*``, ``?``, ``[``) is scanned through Arrow as well.
    """
    module = sys.modules["pyarrow._dataset"]
    if not (
        isinstance(dataset, module.FileSystemDataset)
        and dataset.format.default_extname == "parquet"
        and dataset.filesystem.type_name == "local"
        and getattr(dataset, "_scan_options", None) == {}
        and str(dataset.partition_expression) == "true"
    ):
        return None
    files = list(dataset.files)
    if not files or any(c in f for f in files for c in "*?["):
        return None
    for fragment in dataset.get_fragments():
        if str(fragment.partition_expression) != "true":
            return None
        stored = fragment.physical_schema
        for field in RUN_SCHEMA:
            at = stored.get_field_index(field.name)
            if at < 0 or stored.field(at).type != field.type:
                return None
    return files


def _connect(
    run: pa.Table | pads.Dataset,
    qrels: pa.Table | None,
    units: pa.Table | None,
    memory_limit: str | None = None,
) -> duckdb.DuckDBPyConnection:
    if memory_limit is None:  # the process's database: opening one costs about 50 ms
        con = shared_connection(DEFAULT_MEMORY_LIMIT)  # its progress bar is off
    else:
        import duckdb

        con = duckdb.connect()
        # DuckDB would otherwise draw its own progress bar on the terminal on long queries.
        con.execute("SET enable_progress_bar = false")
        con.execute("SET memory_limit = ?", [memory_limit])
        # Spill into the system's temporary folder, never the working directory, and never
        # more than it can take.
        con.execute("SET temp_directory = ?", [tempfile.gettempdir()])
        con.execute("SET preserve_insertion_order = false")
    files = _parquet_files(run) if _is_dataset(run) else None
    if files is not None:
        # DuckDB's own Parquet reader, under its memory limit: through the Arrow dataset
        # scanner, batches read ahead and converted outside the limit made a 35M-line run
        # peak at 2.9 GB under a 2 GB limit, against 1.1 GB this way (and 2.4x less CPU).
        # Never the folder names' values (DuckDB's SQL reader takes qid=... folders for columns).
        source = con.read_parquet(files, hive_partitioning=False)
        con.register("run", source.select(", ".join(RUN_SCHEMA.names)))
    else:
        con.register("run", run)
    if qrels is not None:
        con.register("qrels", qrels)
    if units is not None:
        con.register("units", units)
        con.execute(
            "CREATE TEMP VIEW units_distinct AS SELECT DISTINCT chunk_id, doc_id FROM units"
        )
    return con


# --------------------------------------------------------------------------- public API


def rank_run(
    run: pa.Table,
    *,
    units: pa.Table | None = None,
    ties: str = "trec_eval",
    run_name: str = "run",
    units_name: str = "units",
) -> pa.Table:
    """Return the ordered, deduplicated ranking of every query, for drill-down.

    Parameters
    ----------
    run : pyarrow.Table
        A run (:data:`~evalvalidity.io.tables.RUN_SCHEMA`).
    units : pyarrow.Table, optional
        chunk_id → doc_id (:data:`~evalvalidity.io.tables.UNITS_SCHEMA`): rank chunks, keep each
        document's first chunk.
    ties : {'trec_eval', 'given', 'average'}
        Under ``average`` the positions follow trec_eval's order and the columns ``tie_start``
        (first position of the item's tie group) and ``tie_size`` say which items share a score.
    run_name, units_name : str
        Names used in error messages.

    Returns
    -------
    pyarrow.Table
        ``qid, docid, position, score`` (+ ``chunk_id`` of the document's first chunk with
        units) (+ ``tie_start, tie_size`` under ``average``), sorted by qid then position.

    Raises
    ------
    InputDataError
        On the same malformed inputs as :func:`score_run`.

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1", "1"], "docid": ["a", "c", "b"],
    ...                 "score": [2.0, 1.0, 1.0]})
    >>> rank_run(run).select(["docid", "position"]).to_pydict()
    {'docid': ['a', 'c', 'b'], 'position': [1, 2, 3]}
    >>> rank_run(run, ties="average").column("tie_start").to_pylist()
    [1, 2, 2]
    """
    ties = _check_choice(ties, "ties", "rank_run", TIE_POLICIES)
    run_name = _check_name(run_name, "run_name", "rank_run")
    units_name = _check_name(units_name, "units_name", "rank_run")
    unique_pairs = has_unique_pairs(run)
    run = _check_table(run, "run", "rank_run", "run")
    units_t = None if units is None else _check_table(units, "units", "rank_run", "units")
    con = _connect(run, None, units_t)
    try:
        _check_run(con, run, ties, run_name, unique_pairs=unique_pairs)
        if units_t is not None:
            _check_units(con, units_t, run, run_name, units_name)
        grouped = ties == "average"
        sql = _ranking_sql(ties, units_t is not None, False, positions=True, groups=grouped)
        columns = ["qid", "docid", "position", "score"]
        if units_t is not None:
            columns.append("chunk_id")
        if grouped:
            columns.extend(["tie_start", "tie_size"])
        table = con.sql(
            f"SELECT {', '.join(columns)} FROM ({sql}) ORDER BY qid, position"
        ).to_arrow_table()
    finally:
        con.close()
    return table


def retrieves_relevant(run: pa.Table, qrels: pa.Table, units: pa.Table | None = None) -> bool:
    """Whether ``run`` ranks any item (its document, with ``units``) judged relevant (grade > 0).

    One DuckDB probe that stops at the first match, on the tables as they are (``qid, docid``;
    ``rel``; ``chunk_id, doc_id``): no validation, no ranking.

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 1.0]})
    >>> retrieves_relevant(run, pa.table({"qid": ["1"], "docid": ["b"], "rel": [1]}))
    True
    >>> retrieves_relevant(run, pa.table({"qid": ["1"], "docid": ["b"], "rel": [0]}))
    False
    """
    con = shared_connection(DEFAULT_MEMORY_LIMIT)  # a database of its own costs ~50 ms
    try:
        con.register("run", run.select(["qid", "docid"]))
        con.register("qrels", qrels.select(["qid", "docid", "rel"]))
        ranked = "SELECT qid, docid FROM run"
        if units is not None:
            con.register("units", units.select(["chunk_id", "doc_id"]))
            ranked = (
                "SELECT r.qid, u.doc_id AS docid FROM run r JOIN units u ON r.docid = u.chunk_id"
            )
        found = con.sql(
            f"""SELECT 1 FROM ({ranked}) r JOIN (SELECT qid, docid FROM qrels WHERE rel > 0) j
                ON r.qid = j.qid AND r.docid = j.docid LIMIT 1"""
        ).fetchall()
    finally:
        con.close()
    return bool(found)


def score_run(
    run: pa.Table | pads.Dataset,
    qrels: pa.Table,
    metrics: str | Metric | Sequence[str | Metric],
    *,
    units: pa.Table | None = None,
    ties: str = "trec_eval",
    unranked: str = "zero",
    run_name: str = "run",
    qrels_name: str = "qrels",
    units_name: str = "units",
    memory_limit: str | None = None,
    keep_ranking: bool = False,
    ranking_depth: int | None = None,
) -> ScoreResult:
    r"""Score a run against judgements, per query, with trec_eval semantics.

    Parameters
    ----------
    run : pyarrow.Table or pyarrow.dataset.Dataset
        A run (:data:`~evalvalidity.io.tables.RUN_SCHEMA`; ``rank`` and ``line`` may be absent
        from a table), or a dataset with exactly that schema, scanned in a stream.
    qrels : pyarrow.Table
        Judgements (:data:`~evalvalidity.io.tables.QRELS_SCHEMA`): grade >= 1 is relevant.
    metrics : str, Metric or sequence of them
        E.g. ``"rr@10, ndcg@10"`` (any spelling :func:`~evalvalidity.core.metrics.parse_metrics`
        reads).
    units : pyarrow.Table, optional
        chunk_id → doc_id: the run ranks chunks, the qrels judge documents. Each document
        keeps its first chunk's position (see the module notes for ``average``).
    ties : {'trec_eval', 'given', 'average'}
        How to order items that share a score (module notes).
    unranked : {'zero', 'skip'}
        A judged query without ranking scores 0 (``zero``) or is left out (``skip``).
    run_name, qrels_name, units_name : str
        Names used in error messages (e.g. the file names).
    memory_limit : str, optional
        DuckDB's memory limit for this call (e.g. ``"2GB"``); past it, sorts and joins spill
        to disk. With ``run`` a :class:`pyarrow.dataset.Dataset`, this bounds the memory of
        scoring a run larger than memory.
    keep_ranking : bool
        Also return the top of each scored query's ranking (``ScoreResult.ranking``), for the
        checks that read the ranking itself: positions always in trec_eval's order with its tie
        groups, whatever ``ties`` (the rows unsorted); with units, the scorer's own
        deduplicated ranking.
    ranking_depth : int, optional
        The kept ranking's depth: positions <= ``ranking_depth`` and every row of a tie group
        starting there (None: every row, which sorts the whole run).

    Returns
    -------
    ScoreResult

    Raises
    ------
    ParameterError
        On a bad argument (an unknown metric, policy or table type).
    InputDataError
        On malformed data: a missing column, a null id, a null or NaN score, a document ranked
        twice for a query, conflicting judgements, a chunk missing from ``units``, nothing to
        score.

    Notes
    -----
    For each query, with positions 1, 2, ... of the (deduplicated) ranking, see
    :func:`evalvalidity.core.kernels.evaluate` for the formulas, e.g.

    .. math::

        RR@k = 1 / \min\{p \le k : rel_p \ge 1\}, \qquad
        P@k = \frac{1}{k} \sum_{p \le k} [rel_p \ge 1].

    Examples
    --------
    Query 1 ranks its relevant document second; query 2 is judged but not ranked:

    >>> run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["b", "x"], "rel": [1, 1]})
    >>> result = score_run(run, qrels, "rr@10, p@1")
    >>> result.qids.tolist(), result.values["rr@10"].tolist(), result.means["rr@10"]
    (['1', '2'], [0.5, 0.0], 0.25)
    >>> result.unranked_qids
    ('2',)
    >>> score_run(run, qrels, "rr@10", unranked="skip").means["rr@10"]
    0.5
    """
    if not isinstance(metrics, str | Metric | Sequence):
        raise ParameterError(
            "The 'metrics' parameter of score_run must be a metric spelling, a Metric or a"
            f" sequence of them. Got {type(metrics).__name__} instead."
        )
    metric_list = parse_metrics(metrics if isinstance(metrics, str | Metric) else list(metrics))
    ties = _check_choice(ties, "ties", "score_run", TIE_POLICIES)
    unranked = _check_choice(unranked, "unranked", "score_run", UNRANKED_POLICIES)
    run_name = _check_name(run_name, "run_name", "score_run")
    qrels_name = _check_name(qrels_name, "qrels_name", "score_run")
    units_name = _check_name(units_name, "units_name", "score_run")
    if ranking_depth is not None and (
        isinstance(ranking_depth, bool) or not isinstance(ranking_depth, int) or ranking_depth < 1
    ):
        raise ParameterError(
            "The 'ranking_depth' parameter of score_run must be an int >= 1 or None. Got"
            f" {ranking_depth!r} instead."
        )
    if memory_limit is not None and not (isinstance(memory_limit, str) and memory_limit):
        raise ParameterError(
            "The 'memory_limit' parameter of score_run must be a size such as '2GB'. Got"
            f" {memory_limit!r} instead."
        )
    unique_pairs = has_unique_pairs(run)
    run = _check_run_source(run, "score_run")
    qrels = _check_table(qrels, "qrels", "score_run", "qrels")
    units_t = None if units is None else _check_table(units, "units", "score_run", "units")
    if units_t is None and not keep_ranking and isinstance(run, pa.Table):
        small = small_hits(run, qrels, ties, unranked, unique_pairs=unique_pairs)
        if small is not None:  # a small, clean run: the same hits without a DuckDB statement
            return _result(
                metric_list,
                small.qids,
                Judged.from_items(small.judged_query, small.judged_grade, len(small.qids)),
                small.query,
                small.grade,
                position=small.position,
                tie_start=small.tie_start,
                tie_size=small.tie_size,
                unranked_qids=tuple(small.unranked_qids),
                unjudged_qids=tuple(small.unjudged_qids),
                ties=ties,
                unranked=unranked,
                n_ranked_rows=small.n_ranked_rows,
            )
    con = _connect(run, qrels, units_t, memory_limit)
    try:
        _check_qrels(con, qrels, qrels_name)
        _check_run(con, run, ties, run_name, unique_pairs=unique_pairs)
        if units_t is not None:
            _check_units(con, units_t, run, run_name, units_name)
        keep = (ranking_depth,) if keep_ranking else None
        in_memory = run if isinstance(run, pa.Table) and units_t is None else None
        if keep is not None:
            release_freed_memory()  # the checks' working memory, before the kept ranking's
        return _score(
            con,
            metric_list,
            units_t is not None,
            ties,
            unranked,
            run_name,
            qrels_name,
            keep,
            in_memory,
        )
    finally:
        con.close()


def _score(
    con: duckdb.DuckDBPyConnection,
    metrics: tuple[Metric, ...],
    with_units: bool,
    ties: str,
    unranked: str,
    run_name: str,
    qrels_name: str,
    keep: tuple[int | None] | None = None,
    run: pa.Table | None = None,
) -> ScoreResult:
    """Score on an open connection; ``keep`` = (depth,) also keeps the top of the ranking.

    ``run`` is the run when it is an in-memory table of items (no units): its kept ranking is
    then ranked in numpy (:func:`_ranked_in_memory`) rather than by a window sort in DuckDB,
    unless a bound has already cut each query to its top rows (those DuckDB ranks).
    """
    # The query ids stay Arrow strings (one buffer, no Python str per query) until the result.
    judged_qids = _sorted_ids(con.sql("SELECT DISTINCT qid FROM qrels").to_arrow_table())
    bars = ""
    in_order: _QueryBars | None = None  # run_counts found in numpy (see _query_bars)
    # Metrics that all stop at a cutoff read no hit below the cutoff-th largest score of its
    # query (a hit there is at a position, or in a tie group starting, past the cutoff).
    cutoff = None if any(m.k is None for m in metrics) else max(int(m.k or 0) for m in metrics)
    bounded = cutoff is not None and not with_units and ties != "given"
    kept_depth = keep[0] if keep is not None and not with_units and ties != "given" else None
    if kept_depth is not None or bounded:
        # The bounds of the kept ranking's rows (see _ONE_PASS_BOUND_QUERIES), and of the
        # hits: one bound deep enough for both.
        depth = int(max(kept_depth or 0, cutoff or 0) if bounded else kept_depth or 1)
        if run is not None and len(judged_qids) <= _ONE_PASS_BOUND_QUERIES:
            in_order = _query_bars(run, depth)
        if in_order is not None:
            con.register("run_counts", in_order.counts)
            bars = "run_counts"
        elif len(judged_qids) <= _ONE_PASS_BOUND_QUERIES:
            con.execute(
                "CREATE TEMP TABLE run_counts AS SELECT qid, count(*) AS n,"
                f" {_bar_sql(depth)} AS bar FROM run GROUP BY qid"
            )
            bars = "run_counts"
        else:
            # A top-depth aggregate state costs ~400 bytes a query, a count ~40: with many
            # queries, only those with more rows than the depth get a bound (a second pass).
            con.execute(
                "CREATE TEMP TABLE run_counts AS SELECT qid, count(*) AS n FROM run GROUP BY qid"
            )
            con.execute(
                f"CREATE TEMP TABLE run_bars AS SELECT qid, {_bar_sql(depth)} AS bar FROM run"
                f" SEMI JOIN (SELECT qid FROM run_counts WHERE n > {depth}) USING (qid)"
                " GROUP BY qid"
            )
            bars = "run_bars"
        counts = con.sql("SELECT qid, n FROM run_counts").to_arrow_table()
    else:
        counts = con.sql("SELECT qid, count(*) AS n FROM run GROUP BY qid").to_arrow_table()
    counted = _flat_ids(counts.column("qid"))
    count_of = to_numpy(counts.column("n"))
    del counts
    if len(judged_qids) == 0:
        raise InputDataError(f"{qrels_name} judges no query: nothing to score.")
    ranked = _isin(judged_qids, counted)
    counted_judged = _isin(counted, judged_qids)
    unranked_qids = select(judged_qids, ~ranked)
    unjudged_qids = _sorted_ids(select(counted, ~counted_judged))
    qids = judged_qids if unranked == "zero" else select(judged_qids, ranked)
    del judged_qids, ranked
    if len(qids) == 0:
        raise InputDataError(f"No query of {run_name} is judged in {qrels_name}: nothing to score.")
    n_queries = len(qids)
    con.register("scored", pa.table({"qid": qids, "qi": int64_range(0, n_queries)}))
    n_ranked_rows = int(count_of[counted_judged].sum())
    relevant = "(SELECT DISTINCT qid, docid, rel FROM qrels WHERE rel >= 1)"
    judged_items = con.sql(
        f"SELECT s.qi, j.rel FROM {relevant} j JOIN scored s USING (qid)"
    ).fetchnumpy()
    judged = Judged.from_items(judged_items["qi"], judged_items["rel"], n_queries)

    grouped = ties == "average"
    ranking = _ranking_sql(
        ties, with_units, len(unjudged_qids) > 0, positions=not grouped, groups=grouped
    )
    found = "r.tie_start, r.tie_size" if grouped else "r.position"
    rows = "run"
    hits_sql = f"""
        SELECT s.qi, {found}, j.rel, 0 AS n_documents FROM ({ranking}) r
        JOIN {relevant} j USING (qid, docid) JOIN scored s USING (qid)"""
    if not with_units:
        # Positions by counting, for each judged-relevant retrieved item, the items ranked
        # before it: no sort, one comparison per (relevant item, item of its query) pair. A
        # window sort of the whole run wins once those pairs outnumber the rows a few times.
        rows_of = np.zeros(n_queries, dtype=np.float64)
        at = pc.index_in(counted, value_set=qids)
        known = to_numpy(pc.is_valid(at))
        rows_of[to_numpy(select(at, known))] = count_of[known]
        pairs = float(np.dot(judged.relevant_count(1).astype(np.float64), rows_of))
        if pairs <= _COUNTING_LIMIT * max(n_ranked_rows, 1):
            # The retrieved relevant items are few: materialised first, they are what the join
            # builds its hash table on (a streamed dataset's size is unknown to the planner).
            # Each numbered, so that the count groups by one integer, not by four columns.
            if bounded and int(count_of.max(initial=0)) > int(cutoff or 0):
                # Only the rows at or above their query's bound can be, or be counted, above a
                # hit that the metrics read: one pass keeps them (about ten per query at
                # rr@10), and the hits and their counts come from them alone. (No query
                # ranking more rows than the cutoff: every row is kept, the pass is skipped.)
                if in_order is not None and run is not None:
                    con.register("near_rows", in_order.near(run))
                else:
                    con.execute(
                        f"""CREATE TEMP TABLE near_rows AS
                            SELECT r.qid, r.docid, r.score, r.rank FROM run r
                            LEFT JOIN {bars} b USING (qid) WHERE b.bar IS NULL OR r.score >= b.bar"""
                    )
                rows = "near_rows"
            con.execute(
                f"""CREATE TEMP TABLE hit_items AS
                    SELECT row_number() OVER () AS hit, s.qi, r.qid, r.docid, r.score, r.rank,
                           j.rel
                    FROM {rows} r JOIN {relevant} j USING (qid, docid) JOIN scored s USING (qid)"""
            )
            hits_sql = _counting_sql(ties, rows)
    else:
        # The ranking is computed once and also counted, for the number of dropped chunks.
        restrict = len(unjudged_qids) > 0
        if keep is not None and ties != "given":
            # Kept for the later checks: the same ranking, with positions and tie groups both.
            con.execute(
                "CREATE TEMP TABLE ranked_documents AS "
                + _ranking_sql(ties, True, restrict, positions=True, groups=True)
            )
            ranking = "SELECT * FROM ranked_documents"
        hits_sql = f"""
            WITH ranking AS MATERIALIZED ({ranking})
            SELECT s.qi, {found}, j.rel, 0 AS n_documents FROM ranking r
            JOIN {relevant} j USING (qid, docid) JOIN scored s USING (qid)
            UNION ALL
            SELECT -1, {"NULL, NULL" if grouped else "NULL"}, NULL, count(*) FROM ranking"""
    hit_rows = con.sql(hits_sql).fetchnumpy()
    top = None
    # In numpy when every row of the run is to be ranked. When a bound cut each query to its top
    # rows (``near_rows``), DuckDB ranks those few, and numpy would sort the ids of every row
    # (7M distinct ids of the 7M-line run: 10 s).
    in_numpy = rows == "run" and run is not None and run.column("score").null_count == 0
    if keep is not None and in_numpy:
        for table in ("hit_items", "near_rows", "run_bars", "run_counts"):
            con.unregister(table)  # the hits are out: free them first (a table or a view)
            con.execute(f"DROP TABLE IF EXISTS {table}")
        release_freed_memory()
        top = _ranked_in_memory(run, qids, keep[0])
        release_freed_memory()  # its sort's working arrays, before the result is built
    elif keep is not None:
        reuse = "ranked_documents" if with_units and ties != "given" else ""
        sql = top_ranking_sql(
            with_units,
            len(unjudged_qids) > 0,
            keep[0],
            ranked=reuse,
            bars=bars,
            scores=ties != "given",
            rows=rows,
            ordered=False,
        )
        top = _coded_ranking(con, sql, qids)
    n_dedup_dropped = 0
    if with_units:
        tail = np.asarray(hit_rows["qi"]) < 0
        n_dedup_dropped = n_ranked_rows - int(np.asarray(hit_rows["n_documents"])[tail].sum())
        hit_rows = {name: np.asarray(column)[~tail] for name, column in hit_rows.items()}

    def column(name: str) -> np.ndarray | None:
        return np.asarray(hit_rows[name], dtype=np.int64) if name in hit_rows else None

    scored_qids = _object_ids(qids)
    del qids
    return _result(
        metrics,
        scored_qids,
        judged,
        np.asarray(hit_rows["qi"], dtype=np.int64),
        np.asarray(hit_rows["rel"], dtype=np.int64),
        position=None if grouped else column("position"),
        tie_start=column("tie_start") if grouped else None,
        tie_size=column("tie_size") if grouped else None,
        unranked_qids=tuple(unranked_qids.to_pylist()),
        unjudged_qids=tuple(unjudged_qids.to_pylist()),
        ties=ties,
        unranked=unranked,
        n_ranked_rows=n_ranked_rows,
        n_dedup_dropped=n_dedup_dropped,
        ranking=top,
    )


#: Rows of the kept ranking converted at a time (their strings are the only copy made).
_RANKING_BATCH_ROWS = 1 << 20


def _coded_ranking(con: duckdb.DuckDBPyConnection, sql: str, qids: pa.Array) -> pa.Table:
    """The rows of ``sql`` (``top_ranking_sql``'s columns) with their ids as dictionary codes.

    ``qid`` indexes ``qids`` (the scored queries, joined in DuckDB: one integer leaves it per
    row), ``docid`` the sorted distinct documents of the rows, and the positions are int32:
    20 bytes a row, where the ids' strings took 20 to 40 more. The rows leave DuckDB in batches,
    each copied out and coded before the next is read (a batch's columns share its memory), so
    no table of every row's strings is ever held; the columns stay in those chunks.
    """
    coded = con.sql(
        "SELECT s.qi::INTEGER AS qi, t.docid, t.position::INTEGER AS position,"
        " t.tie_start::INTEGER AS tie_start, t.tie_size::INTEGER AS tie_size"
        f" FROM ({sql}) t JOIN scored s USING (qid)"
    )
    names = ("qi", "position", "tie_start", "tie_size")
    ints: dict[str, list[pa.Array]] = {name: [] for name in names}
    doc_index: list[pa.Array] = []
    doc_values: list[pa.Array] = []
    for batch in coded.to_arrow_reader(_RANKING_BATCH_ROWS):
        for name in names:
            ints[name].append(pa.concat_arrays([batch.column(name)]))  # a copy of its own
        encoded = pc.dictionary_encode(_flat_ids(batch.column("docid")))
        doc_index.append(encoded.indices)
        doc_values.append(encoded.dictionary)
        del batch, encoded
    del coded
    # One dictionary for every batch: the distinct ids in byte order (two rankings of the same
    # rows are then equal tables), each batch's codes mapped onto it.
    vocabulary, code_of = _sorted_codes(doc_values)
    doc_codes = []
    first = 0
    for values, index in zip(doc_values, doc_index, strict=True):
        doc_codes.append(from_numpy(code_of[first + to_numpy(index)]))
        first += len(values)
    del doc_values, doc_index, code_of
    code = pa.dictionary(pa.int32(), pa.string())
    return pa.table(
        {
            "qid": pa.chunked_array(
                [pa.DictionaryArray.from_arrays(q, qids) for q in ints.pop("qi")], code
            ),
            "docid": pa.chunked_array(
                [pa.DictionaryArray.from_arrays(d, vocabulary) for d in doc_codes], code
            ),
            **{name: pa.chunked_array(parts, pa.int32()) for name, parts in ints.items()},
        }
    )


def _sorted_codes(parts: Sequence[pa.Array]) -> tuple[pa.Array, np.ndarray]:
    """The distinct ids of ``parts`` in byte order, and each id's index among them (int32).

    One sort of every id (each part's are distinct, as a batch's dictionary is): equal ids
    are then neighbours, so the distinct ones and every id's code follow without a hash of
    each id (a unique, then a lookup of every id in it, cost 0.17 s for the 7M-line run's
    140,000 kept rows; this costs half that).

    Examples
    --------
    >>> vocabulary, codes = _sorted_codes([pa.array(["b", "a"]), pa.array(["c", "b"])])
    >>> vocabulary.to_pylist(), codes.tolist()
    (['a', 'b', 'c'], [1, 0, 2, 1])
    """
    values = pa.concat_arrays(list(parts)) if parts else pa.array([], pa.string())
    n = len(values)
    order = to_numpy(pc.array_sort_indices(values).cast(pa.int64()))
    ordered = pc.take(values, from_numpy(order))
    new = run_starts(ordered)
    codes = np.empty(n, dtype=np.int32)
    codes[order] = np.cumsum(new, dtype=np.int32) - 1
    return select(ordered, new), codes


def _ranked_in_memory(run: pa.Table, qids: pa.Array, depth: int | None) -> pa.Table:
    """:func:`_coded_ranking`'s table of an in-memory run of items, ranked in numpy.

    The rows of the scored queries (``qids``) are sorted by query, score descending, then
    docid descending (its rank among the run's distinct ids in byte order, as DuckDB and
    trec_eval compare them), as :func:`top_ranking_sql` orders them; positions count within a
    query, a tie group is a run of equal scores. One sort of integer and float keys, and
    about 40 bytes a row while it lasts: DuckDB's window sort of the rows with their ids took
    over 100; a run already in that order within each query's rows together is not sorted.
    Every score must be present.

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1", "1", "2"], "docid": ["a", "c", "b", "a"],
    ...                 "score": [2.0, 1.0, 1.0, 0.5]})
    >>> kept = _ranked_in_memory(run, pa.array(["1"]), 2)
    >>> decode_ranking(kept).to_pydict()  # doctest: +NORMALIZE_WHITESPACE
    {'qid': ['1', '1', '1'], 'docid': ['a', 'c', 'b'], 'position': [1, 2, 3],
     'tie_start': [1, 2, 2], 'tie_size': [1, 2, 2]}
    """
    at = pc.index_in(run.column("qid"), value_set=qids)
    known = to_numpy(pc.is_valid(at))
    query = np.asarray(to_numpy(pc.drop_null(at)), dtype=np.int32)
    del at
    ids = _sorted_ids(run.column("docid"))
    doc = np.asarray(to_numpy(pc.index_in(run.column("docid"), value_set=ids)), dtype=np.int32)
    score = np.asarray(to_numpy(run.column("score")), dtype=np.float64)
    if not known.all():
        doc, score = doc[known], score[known]
    del known
    n = len(query)
    starts = np.ones(n, dtype=bool)
    starts[1:] = query[1:] != query[:-1]
    # A run written query by query in rank order (as a TREC run usually is) needs no sort:
    # each query's rows are together, and in order within it.
    in_order = bool(np.bincount(query[starts], minlength=len(qids)).max(initial=0) <= 1) and bool(
        np.all(
            starts[1:]
            | (score[:-1] > score[1:])
            | ((score[:-1] == score[1:]) & (doc[:-1] > doc[1:]))
        )
    )
    if not in_order:
        order = np.lexsort((-doc, -score, query))
        query, score, doc = query[order], score[order], doc[order]
        del order
        starts[1:] = query[1:] != query[:-1]
    # Each step writes into an array it already made (out=, in place), not into a temporary.
    row: np.ndarray = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    first = np.where(starts, row, 0)
    np.maximum.accumulate(first, out=first)  # the query's first row
    position: np.ndarray = row - first
    position += 1
    starts[1:] |= score[1:] != score[:-1]
    del score
    group_first = np.where(starts, row, 0)
    np.maximum.accumulate(group_first, out=group_first)
    tie_start: np.ndarray = np.subtract(group_first, first, out=first)
    tie_start += 1
    del first
    # A group ends where the next one starts: the first start after each row (n after the
    # last), found in the rows' own integer type (no int64 array of every group's bounds).
    tie_size: np.ndarray = np.where(starts, row, n)
    del row, starts
    np.minimum.accumulate(tie_size[::-1], out=tie_size[::-1])
    if n:
        tie_size[:-1] = tie_size[1:].copy()
        tie_size[-1] = n
    tie_size -= group_first
    del group_first
    if depth is not None:
        near = (position <= depth) | (tie_start <= depth)
        if not near.all():  # every row kept (no query ranks past the depth): no copies
            query, doc, position = query[near], doc[near], position[near]
            tie_start, tie_size = tie_start[near], tie_size[near]
        del near
    present = np.zeros(len(ids), dtype=bool)
    present[doc] = True
    used = np.flatnonzero(present)  # the kept rows' ids, in byte order
    del present
    recode = np.zeros(len(ids), dtype=np.int32)
    recode[used] = np.arange(len(used), dtype=np.int32)
    codes = recode[doc]
    del recode, doc
    vocabulary = pc.take(ids, from_numpy(used.astype(np.int64)))

    def int32(values: np.ndarray) -> pa.Array:
        # Arrow points at the numpy array (no copy): nothing writes to it any more.
        data = np.ascontiguousarray(values, dtype=np.int32)
        return pa.Array.from_buffers(pa.int32(), len(data), [None, pa.py_buffer(data)])

    return pa.table(
        {
            "qid": pa.DictionaryArray.from_arrays(int32(query), qids),
            "docid": pa.DictionaryArray.from_arrays(int32(codes), vocabulary),
            "position": int32(position),
            "tie_start": int32(tie_start),
            "tie_size": int32(tie_size),
        }
    )


def decode_ranking(ranking: pa.Table) -> pa.Table:
    """A kept ranking (``ScoreResult.ranking``) with string ids and int64 positions.

    The form :func:`rank_run` and :func:`top_ranking_sql` give, for display and comparison;
    the kept ranking itself holds codes (see :class:`ScoreResult`).

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1", "2"], "docid": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["b", "a"], "rel": [1, 1]})
    >>> kept = score_run(run, qrels, "rr@10", keep_ranking=True).ranking
    >>> kept.schema.field("docid").type
    DictionaryType(dictionary<values=string, indices=int32, ordered=0>)
    >>> decoded = decode_ranking(kept).sort_by([("qid", "ascending"), ("position", "ascending")])
    >>> decoded.to_pydict()  # doctest: +NORMALIZE_WHITESPACE
    {'qid': ['1', '1', '2'], 'docid': ['a', 'b', 'a'], 'position': [1, 2, 1],
     'tie_start': [1, 2, 1], 'tie_size': [1, 1, 1]}
    """
    columns = {}
    for name in ranking.column_names:
        column = ranking.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        elif pa.types.is_integer(column.type):
            column = column.cast(pa.int64())
        columns[name] = column
    return pa.table(columns)


#: Ids made Python str at a time (a list of every id would add 8 bytes an id to the result's).
_ID_BLOCK = 1 << 16


def _object_ids(ids: pa.Array) -> np.ndarray:
    """Arrow strings as a numpy object array of str, filled ``_ID_BLOCK`` ids at a time.

    Examples
    --------
    >>> _object_ids(pa.array(["b", "a"])).tolist()
    ['b', 'a']
    """
    out = np.empty(len(ids), dtype=object)  # Array.to_numpy of strings imports pandas
    for start in range(0, len(ids), _ID_BLOCK):
        stop = min(start + _ID_BLOCK, len(ids))
        out[start:stop] = ids.slice(start, stop - start).to_pylist()
    return out


def _result(
    metrics: tuple[Metric, ...],
    qids: Sequence[str] | np.ndarray,
    judged: Judged,
    query: np.ndarray,
    grade: np.ndarray,
    *,
    position: np.ndarray | None,
    tie_start: np.ndarray | None,
    tie_size: np.ndarray | None,
    unranked_qids: tuple[str, ...],
    unjudged_qids: tuple[str, ...],
    ties: str,
    unranked: str,
    n_ranked_rows: int,
    n_dedup_dropped: int = 0,
    ranking: pa.Table | None = None,
) -> ScoreResult:
    """The metrics' values from the hits (positions, or tie groups under 'average')."""
    values: dict[str, np.ndarray] = {}
    if ties == "average":
        assert tie_start is not None and tie_size is not None
        tied = _tied_hits(query, tie_start, tie_size, grade)
        for metric in metrics:
            values[metric.name] = evaluate_tied(metric, tied, judged)
    else:
        assert position is not None
        hits = Hits(query, position, grade)
        for metric in metrics:
            values[metric.name] = evaluate(metric, hits, judged)
    for array in values.values():
        array.flags.writeable = False
    if isinstance(qids, np.ndarray) and qids.dtype == object:
        qids_out = qids
    else:
        qids_out = np.empty(len(qids), dtype=object)  # Array.to_numpy of strings imports pandas
        qids_out[:] = qids
    qids_out.flags.writeable = False
    return ScoreResult(
        metrics=metrics,
        qids=qids_out,
        values=MappingProxyType(values),
        means=MappingProxyType({name: float(np.mean(v)) for name, v in values.items()}),
        unranked_qids=unranked_qids,
        unjudged_qids=unjudged_qids,
        ties=ties,
        unranked=unranked,
        n_ranked_rows=n_ranked_rows,
        n_dedup_dropped=n_dedup_dropped,
        ranking=ranking,
    )


def _counting_sql(ties: str, rows: str = "run") -> str:
    """SQL of the hits' positions (or tie groups) by counting the items ranked before them.

    ``rows`` names the table of the items counted: the run, or every row of it at or above
    a bound that every hit is at or above.
    """
    if ties == "trec_eval":
        found = (
            "1 + count_if(o.score > h.score OR (o.score = h.score AND o.docid > h.docid))"
            " AS position"
        )
    elif ties == "given":
        found = "1 + count_if(o.rank < h.rank) AS position"
    else:
        found = (
            "1 + count_if(o.score > h.score) AS tie_start, count_if(o.score = h.score) AS tie_size"
        )
    return f"""
        SELECT any_value(h.qi) AS qi, {found}, any_value(h.rel) AS rel, 0 AS n_documents
        FROM hit_items h JOIN {rows} o USING (qid) GROUP BY h.hit"""


def _isin(values: pa.Array, members: pa.Array) -> np.ndarray:
    """Whether each of ``values`` is one of ``members`` (Arrow hashes the strings' bytes)."""
    return to_numpy(pc.is_in(values, value_set=members))


def _flat_ids(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One ``string`` array of ids (DuckDB may return chunks, or another string type)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column if column.type == pa.string() else pc.cast(column, pa.string())


def _sorted_ids(table_or_ids: pa.Table | pa.Array) -> pa.Array:
    r"""The distinct ids in byte order (= code-point order = trec_eval's ``strcmp``).

    Arrow sorts strings by their UTF-8 bytes, NULs included (numpy's fixed-width 'U' strings
    would drop trailing NULs), and holds them in one buffer rather than one Python str each.

    Examples
    --------
    >>> _sorted_ids(pa.array(["b", "a\x00", "a", "b"])).to_pylist()
    ['a', 'a\x00', 'b']
    """
    ids = _flat_ids(table_or_ids.column(0) if isinstance(table_or_ids, pa.Table) else table_or_ids)
    ids = pc.unique(ids)
    return pc.take(ids, pc.array_sort_indices(ids))


def _tied_hits(
    query: np.ndarray, start: np.ndarray, size: np.ndarray, grade: np.ndarray
) -> TiedHits:
    """Group the hits by (query, tie group start)."""
    key = np.stack([query, start], axis=1)
    unique, group_of_item = np.unique(key, axis=0, return_inverse=True)
    first_item = np.zeros(len(unique), dtype=np.int64)
    first_item[group_of_item] = np.arange(len(query))
    return TiedHits(unique[:, 0], unique[:, 1], size[first_item], group_of_item.ravel(), grade)
