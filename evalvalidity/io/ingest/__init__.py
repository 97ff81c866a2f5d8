r"""Readers for every format a team exports, checked down to the line.

:func:`read` recognises the format and the kind of dataset from the content (never from the
file name) and returns a table conforming to :mod:`evalvalidity.io.tables`:

=============  ===============================================================================
kind           formats
=============  ===============================================================================
run            TREC ``qid Q0 docid rank score tag`` (any spaces/tabs); CSV/TSV with a header
               (``qid``/``query_id``/``query-id``, ``docid``/``doc_id``/``corpus-id``/``pid``,
               ``score``, optional ``rank``); JSONL, one object per ranked item; ranx-style
               JSON ``{qid: {docid: score}}``; Parquet
qrels          TREC qrels ``qid iter docid rel``; BEIR TSV ``query-id corpus-id score``;
               CSV/TSV/JSONL/Parquet with a grade column; ranx-style JSON
pools          per-query pool sizes ``qid pool_size``
candidates     per-query candidate lists ``qid docid``
units          a units map ``chunk_id doc_id`` (every chunk to its document)
corpus-size    a single integer
harness        ``trec_eval -q`` lines ``measure qid value`` (the ``all`` summary lines are
               skipped and counted), or CSV ``[seed,] qid, value``
=============  ===============================================================================

Each may be gzip-compressed (recognised by its magic bytes). A UTF-8 byte-order mark and CRLF
line endings are accepted. When the content fits several kinds the reader raises and asks for
``kind=`` rather than guessing.

Reading is bounded: :class:`Limits` caps the file's size, what it decompresses to (checked while
it streams, so a gzip bomb costs megabytes), the longest line, a JSON document's size and
nesting, and DuckDB's memory; each refusal names the file and the limit.

Every bad row is counted and the first ones kept with their line number and reason. By default
a read with bad rows raises :class:`RejectedRowsError`; with ``drop_bad_rows=True`` it keeps the
good rows and records what it dropped. Repeated keys are checked on the whole table: a
duplicate (qid, docid) in a run is rejected (its first occurrence stays), identical repeated
judgements are merged and counted, conflicting ones are all rejected.

Examples
--------
>>> from evalvalidity.io.ingest import read
>>> result = read(b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n", display_name="run.trec")
>>> result.kind, result.format, result.table.column("docid").to_pylist()
('run', 'trec', ['d1', 'd2'])
>>> read(b"q1 0 d1 1\n", kind="run", display_name="qrels.txt")
Traceback (most recent call last):
...
evalvalidity.errors.FileFormatError: qrels.txt: this looks like TREC qrels (4 fields: qid iter docid rel), not a run
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalvalidity.io.ingest._crosscheck import CrossCheck, cross_check
    from evalvalidity.io.ingest._detect import mapped_header
    from evalvalidity.io.ingest._limits import DEFAULT_LIMITS, Limits
    from evalvalidity.io.ingest._load import load
    from evalvalidity.io.ingest._read import read
    from evalvalidity.io.ingest._result import (
        MAX_KEPT_REJECTED,
        MAX_SHOWN_REJECTED,
        Ingested,
        RejectedRow,
        RejectedRowsError,
    )
    from evalvalidity.io.ingest._spec import CORPUS_SIZE_SCHEMA, FORMATS, KINDS
    from evalvalidity.io.ingest._typed import (
        read_candidates,
        read_corpus_size,
        read_harness,
        read_pools,
        read_qrels,
        read_run,
        read_units,
    )

#: Each public name and the module it is imported from on first use (PEP 562): a command that
#: only reads a run loads neither the cross-checks nor the typed readers it does not call.
_SOURCES: dict[str, str] = {
    "CORPUS_SIZE_SCHEMA": "evalvalidity.io.ingest._spec",
    "CrossCheck": "evalvalidity.io.ingest._crosscheck",
    "DEFAULT_LIMITS": "evalvalidity.io.ingest._limits",
    "FORMATS": "evalvalidity.io.ingest._spec",
    "Ingested": "evalvalidity.io.ingest._result",
    "KINDS": "evalvalidity.io.ingest._spec",
    "Limits": "evalvalidity.io.ingest._limits",
    "MAX_KEPT_REJECTED": "evalvalidity.io.ingest._result",
    "MAX_SHOWN_REJECTED": "evalvalidity.io.ingest._result",
    "RejectedRow": "evalvalidity.io.ingest._result",
    "RejectedRowsError": "evalvalidity.io.ingest._result",
    "cross_check": "evalvalidity.io.ingest._crosscheck",
    "load": "evalvalidity.io.ingest._load",
    "mapped_header": "evalvalidity.io.ingest._detect",
    "read": "evalvalidity.io.ingest._read",
    "read_candidates": "evalvalidity.io.ingest._typed",
    "read_corpus_size": "evalvalidity.io.ingest._typed",
    "read_harness": "evalvalidity.io.ingest._typed",
    "read_pools": "evalvalidity.io.ingest._typed",
    "read_qrels": "evalvalidity.io.ingest._typed",
    "read_run": "evalvalidity.io.ingest._typed",
    "read_units": "evalvalidity.io.ingest._typed",
}

__all__ = [
    "CORPUS_SIZE_SCHEMA",
    "DEFAULT_LIMITS",
    "FORMATS",
    "KINDS",
    "MAX_KEPT_REJECTED",
    "MAX_SHOWN_REJECTED",
    "CrossCheck",
    "Ingested",
    "Limits",
    "RejectedRow",
    "RejectedRowsError",
    "cross_check",
    "load",
    "mapped_header",
    "read",
    "read_candidates",
    "read_corpus_size",
    "read_harness",
    "read_pools",
    "read_qrels",
    "read_run",
    "read_units",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use, then keep it here.

    Raises
    ------
    AttributeError
        For a name that is not part of the public surface (nor a submodule).
    """
    import importlib

    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'evalvalidity.io.ingest' has no attribute {name!r}")
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Every public name, loaded or not."""
    return list(__all__)
