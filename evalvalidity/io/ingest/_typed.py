"""One reader per kind: :func:`read` with the kind fixed, returning the table."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from evalvalidity.core.types import Progress
from evalvalidity.io.ingest._limits import Limits
from evalvalidity.io.ingest._read import read
from evalvalidity.io.ingest._source import SourceLike


def _reader(kind: str) -> Callable[..., pa.Table]:
    def reader(
        source: SourceLike,
        *,
        format: str | None = None,
        display_name: str | None = None,
        drop_bad_rows: bool = False,
        progress: Progress | None = None,
        limits: Limits | None = None,
    ) -> pa.Table:
        return read(
            source,
            kind=kind,
            format=format,
            display_name=display_name,
            drop_bad_rows=drop_bad_rows,
            progress=progress,
            limits=limits,
        ).table

    reader.__name__ = f"read_{kind.replace('-', '_')}"
    reader.__doc__ = (
        f"Read {kind} data from a path or bytes; ``read(source, kind={kind!r}, ...).table``."
    )
    return reader


def read_run(source: SourceLike, **options: object) -> pa.Table:
    r"""Read a run (see :func:`evalvalidity.io.ingest.read`); returns the RUN table.

    >>> read_run(b"q1 Q0 d1 1 2.5 x\n").column_names
    ['qid', 'docid', 'score', 'rank', 'line']
    """
    return _reader("run")(source, **options)


def read_qrels(source: SourceLike, **options: object) -> pa.Table:
    r"""Read judgements; returns the QRELS table.

    >>> read_qrels(b"q1 0 d1 2\n").column("rel").to_pylist()
    [2]
    """
    return _reader("qrels")(source, **options)


def read_units(source: SourceLike, **options: object) -> pa.Table:
    r"""Read a units map (chunk_id, doc_id); returns the UNITS table.

    >>> read_units(b"chunk_id\tdoc_id\n1#0\t1\n").column("doc_id").to_pylist()
    ['1']
    """
    return _reader("units")(source, **options)


def read_pools(source: SourceLike, **options: object) -> pa.Table:
    r"""Read per-query pool sizes; returns the POOLS table.

    >>> read_pools(b"qid,pool_size\nq1,100\n").column("pool_size").to_pylist()
    [100]
    """
    return _reader("pools")(source, **options)


def read_candidates(source: SourceLike, **options: object) -> pa.Table:
    r"""Read per-query candidate lists; returns the CANDIDATES table.

    >>> read_candidates(b"qid,docid\nq1,d1\nq1,d2\n").num_rows
    2
    """
    return _reader("candidates")(source, **options)


def read_harness(source: SourceLike, **options: object) -> pa.Table:
    r"""Read a harness's per-query output; returns the HARNESS table.

    >>> read_harness(b"P_10\tq1\t0.2000\nP_10\tall\t0.2000\n").column("value").to_pylist()
    [0.2]
    """
    return _reader("harness")(source, **options)


def read_corpus_size(source: SourceLike, **options: object) -> int:
    r"""Read a corpus size: a file holding one integer.

    >>> read_corpus_size(b"1400\n")
    1400
    """
    table = _reader("corpus-size")(source, **options)
    return int(table.column("corpus_size")[0].as_py())
