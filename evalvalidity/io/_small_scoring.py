"""The scorer's hits for a small, clean run, found in Python: no DuckDB statement.

Importing DuckDB and opening its database cost about 0.25 s, many times what ranking a toy run
takes. For a run and judgements of at most :data:`SMALL_ROWS` rows in all, without units and
without anything the scorer would refuse, :func:`small_hits` finds what the scorer's SQL finds
(:mod:`evalvalidity.io.scoring`): the judged queries in byte order, the ranked and unjudged
ones, every judged-relevant grade, and the position (or tie group) of every judged-relevant
item the run retrieved, with the same semantics:

- ``trec_eval``: score descending, then docid descending (Python compares ``str`` by code
  point, which is the byte order of their UTF-8 that DuckDB compares);
- ``given``: the rank column ascending;
- ``average``: the tie group of each item (``1 +`` the items scored above it, and the items
  sharing its score).

Whatever the SQL path would refuse (a null id, score or rank, a NaN score, a document ranked
twice, two documents at one rank under ``given``, conflicting judgements) or report as nothing
to score makes :func:`small_hits` return None: the caller then takes the SQL path, which says
what is wrong, at which line. The metrics are computed from the hits by the same kernels on
either path; tests/test_small_scoring.py checks that both give the same values.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

__all__ = ["SMALL_ROWS", "SmallHits", "small_hits"]

#: A run and judgements of at most this many rows in all are scored without DuckDB (about
#: 30 ms of Python at this size, against about 0.25 s to import DuckDB and open its database).
SMALL_ROWS = 20_000


@dataclass(frozen=True, eq=False)
class SmallHits:
    """What the scorer's SQL returns, for a small run.

    Attributes
    ----------
    qids : list of str
        The scored queries, in byte order.
    unranked_qids, unjudged_qids : list of str
        Judged queries without a ranking, and ranked queries without judgements (byte order).
    judged_query, judged_grade : numpy.ndarray
        int64 (query index, grade) of every distinct judged-relevant item of a scored query.
    query, grade : numpy.ndarray
        int64 query index and grade of every judged-relevant item retrieved.
    position : numpy.ndarray
        int64 position of each (``trec_eval`` and ``given``).
    tie_start, tie_size : numpy.ndarray
        int64 tie group of each (``average``).
    n_ranked_rows : int
        Rows of the run that belong to scored queries.
    """

    qids: list[str]
    unranked_qids: list[str]
    unjudged_qids: list[str]
    judged_query: np.ndarray
    judged_grade: np.ndarray
    query: np.ndarray
    grade: np.ndarray
    position: np.ndarray
    tie_start: np.ndarray
    tie_size: np.ndarray
    n_ranked_rows: int


def _no_nulls(table: pa.Table, names: tuple[str, ...]) -> bool:
    return all(table.column(name).null_count == 0 for name in names)


def _relevant(qrels: pa.Table) -> tuple[set[str], dict[tuple[str, str], int]] | None:
    """The judged queries and the grade of each distinct relevant pair; None on a conflict."""
    grades: dict[tuple[str, str], int] = {}
    for qid, docid, rel in zip(
        qrels.column("qid").to_pylist(),
        qrels.column("docid").to_pylist(),
        qrels.column("rel").to_pylist(),
        strict=True,
    ):
        if grades.setdefault((qid, docid), rel) != rel:
            return None  # conflicting judgements: the SQL path names them
    judged = {qid for qid, _ in grades}
    return judged, {pair: rel for pair, rel in grades.items() if rel >= 1}


def small_hits(
    run: pa.Table, qrels: pa.Table, ties: str, unranked: str, *, unique_pairs: bool = False
) -> SmallHits | None:
    """The hits of ``run`` against ``qrels``, or None where the SQL path must decide.

    Parameters
    ----------
    run, qrels : pyarrow.Table
        Conformed run and qrels tables (:func:`evalvalidity.io.tables.conform`).
    ties : {'trec_eval', 'given', 'average'}
        The tie policy.
    unranked : {'zero', 'skip'}
        Whether a judged query without ranking is scored (0) or left out.
    unique_pairs : bool
        The run is known to rank no document twice for a query (a table the reader returned).

    Returns
    -------
    SmallHits or None
        None when the tables are larger than :data:`SMALL_ROWS` rows in all, or hold anything
        the scorer refuses or reports (see the module notes).

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1", "1"], "docid": ["a", "b", "c"],
    ...                 "score": [1.0, 1.0, 2.0], "rank": [1, 2, 3]})
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "x"], "rel": [1, 1]})
    >>> found = small_hits(run, qrels, "trec_eval", "zero")
    >>> found.qids, found.unranked_qids, found.position.tolist()
    (['1', '2'], ['2'], [3])
    >>> small_hits(run, qrels, "average", "zero").tie_start.tolist()
    [2]
    >>> small_hits(run, qrels, "given", "skip").position.tolist(), found.n_ranked_rows
    ([1], 3)
    >>> doubled = pa.concat_tables([run, run])
    >>> small_hits(doubled, qrels, "trec_eval", "zero") is None  # the SQL path says where
    True
    """
    if run.num_rows + qrels.num_rows > SMALL_ROWS:
        return None
    needed = ("qid", "docid", "rank") if ties == "given" else ("qid", "docid", "score")
    if not (_no_nulls(run, needed) and _no_nulls(qrels, ("qid", "docid", "rel"))):
        return None
    judgements = _relevant(qrels)
    if judgements is None or not judgements[0]:
        return None
    judged, relevant = judgements
    key = run.column("rank" if ties == "given" else "score").to_pylist()
    if ties != "given" and any(value != value for value in key):  # NaN
        return None
    by_query: dict[str, list[tuple[float | int, str]]] = {}
    for qid, docid, value in zip(
        run.column("qid").to_pylist(), run.column("docid").to_pylist(), key, strict=True
    ):
        by_query.setdefault(qid, []).append((value, docid))
    if not unique_pairs or ties == "given":
        for items in by_query.values():
            if len({docid for _, docid in items}) < len(items):
                return None  # a document ranked twice
            if ties == "given" and len({rank for rank, _ in items}) < len(items):
                return None  # two documents at one rank
    ordered = sorted(judged)
    qids = ordered if unranked == "zero" else [qid for qid in ordered if qid in by_query]
    if not qids:
        return None
    index = {qid: i for i, qid in enumerate(qids)}
    judged_items = [(index[qid], rel) for (qid, _), rel in relevant.items() if qid in index]
    hit_query: list[int] = []
    hit_grade: list[int] = []
    first: list[int] = []
    size: list[int] = []
    n_ranked_rows = 0
    for qid, items in by_query.items():
        at = index.get(qid)
        if at is None:
            continue
        n_ranked_rows += len(items)
        found = [
            (value, docid, relevant[qid, docid])
            for value, docid in items
            if (qid, docid) in relevant
        ]
        if not found:
            continue
        if ties == "average":
            scores = sorted(value for value, _ in items)
            for value, _, rel in found:
                above = len(scores) - bisect_right(scores, value)
                first.append(1 + above)
                size.append(len(scores) - above - bisect_left(scores, value))
                hit_query.append(at)
                hit_grade.append(rel)
            continue
        # trec_eval: score then docid, both descending; given: rank ascending
        order = sorted(items, reverse=ties != "given")
        position = {docid: p for p, (_, docid) in enumerate(order, start=1)}
        for _, docid, rel in found:
            first.append(position[docid])
            hit_query.append(at)
            hit_grade.append(rel)
    empty = np.zeros(0, dtype=np.int64)
    as_int = np.int64
    return SmallHits(
        qids=qids,
        unranked_qids=[qid for qid in ordered if qid not in by_query],
        unjudged_qids=sorted(qid for qid in by_query if qid not in judged),
        judged_query=np.array([q for q, _ in judged_items], dtype=as_int),
        judged_grade=np.array([g for _, g in judged_items], dtype=as_int),
        query=np.array(hit_query, dtype=as_int),
        grade=np.array(hit_grade, dtype=as_int),
        position=np.array(first, dtype=as_int) if ties != "average" else empty,
        tie_start=np.array(first, dtype=as_int) if ties == "average" else empty,
        tie_size=np.array(size, dtype=as_int) if ties == "average" else empty,
        n_ranked_rows=n_ranked_rows,
    )
