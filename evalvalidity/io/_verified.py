"""Tables this process's readers have checked, so that the scorer need not check them again.

The reader (:func:`evalvalidity.io.ingest.read`) rejects a run that ranks a document twice for
a query; the scorer checks the same on whatever table it is given, which for 7 million rows
costs about two seconds of sorting. An Arrow table cannot change once made, so a table the
reader returned keeps that property for its whole life: the reader marks it here, the scorer
asks. Only the very object is marked (by identity, held weakly); any table derived from it
(filtered, concatenated, cast) is a new object and is checked again. A
:class:`pyarrow.dataset.Dataset` may be marked too, when the reader wrote its file where
nothing else writes (the command line's temporary Parquet file of a large run).

Examples
--------
>>> import pyarrow as pa
>>> table = pa.table({"qid": ["1"], "docid": ["a"]})
>>> mark_unique_pairs(table)
>>> has_unique_pairs(table), has_unique_pairs(pa.concat_tables([table, table]))
(True, False)
"""

from __future__ import annotations

import weakref

import pyarrow as pa

__all__ = ["has_unique_pairs", "mark_unique_pairs"]

_MARKED: dict[int, weakref.ref[object]] = {}


def mark_unique_pairs(table: pa.Table | object) -> None:
    """Record that no (qid, docid) pair repeats in ``table`` and that neither is null."""
    key = id(table)
    _MARKED[key] = weakref.ref(table, lambda _: _MARKED.pop(key, None))


def has_unique_pairs(table: object) -> bool:
    """Whether ``table`` itself was marked by :func:`mark_unique_pairs`."""
    ref = _MARKED.get(id(table))
    return ref is not None and ref() is table
