"""Read one file, whatever its format, into a checked canonical table."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from evalvalidity.core.types import Progress
from evalvalidity.errors import FileFormatError
from evalvalidity.io._database import RETURN_FREED_MEMORY, deferred_connection
from evalvalidity.io._verified import mark_unique_pairs
from evalvalidity.io.atomic import is_disk_full
from evalvalidity.io.ingest._detect import Detected, detect, sample_lines
from evalvalidity.io.ingest._limits import Limits
from evalvalidity.io.ingest._result import Ingested, RejectedRowsError
from evalvalidity.io.ingest._sink import MemorySink, ParquetSink, Sink
from evalvalidity.io.ingest._source import PARQUET_MAGIC, Source, SourceLike
from evalvalidity.io.ingest._text import read_exact, read_fast, read_jsonl
from evalvalidity.io.ingest._validate import RejectLog, repeated_keys, table_checks

if TYPE_CHECKING:
    import duckdb


def connect(
    memory_limit: str | None = None, temp_directory: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory DuckDB connection (one per read: connections are not thread-safe)."""
    import duckdb

    config: dict[str, str | bool | int | float | list[str]] = dict(RETURN_FREED_MEMORY)
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    if temp_directory is not None:
        config["temp_directory"] = temp_directory
    con = duckdb.connect(":memory:", config=config)
    con.execute("SET enable_progress_bar = false")
    return con


def _monotonic(progress: Progress) -> Progress:
    """Never report less done than before (the exact path re-reads after the fast one)."""
    best = [0.0]

    def report(fraction: float, what: str) -> None:
        best[0] = max(best[0], fraction)
        progress(best[0], what)

    return report


def ingest(
    source: Source,
    make_sink: Callable[[str], Sink],
    *,
    kind: str | None,
    fmt: str | None,
    drop_bad_rows: bool,
    progress: Progress | None,
    con: duckdb.DuckDBPyConnection,
    sha256: str | None = None,
) -> tuple[Ingested, Sink]:
    """Read ``source`` into a sink made by ``make_sink(kind)``; see :func:`read`.

    Running out of memory (Python's, or DuckDB's ``Limits.memory_limit``) is reported as a
    :class:`FileFormatError` naming the file.
    """
    try:
        return _ingest(
            source,
            make_sink,
            kind=kind,
            fmt=fmt,
            drop_bad_rows=drop_bad_rows,
            progress=progress,
            con=con,
            sha256=sha256,
        )
    except MemoryError as exc:  # pyarrow's ArrowMemoryError too
        raise FileFormatError(
            source.name, None, "reading the file needs more memory than this machine has left"
        ) from exc
    except Exception as exc:
        loaded = sys.modules.get("duckdb")  # only a statement that ran can have raised it
        if loaded is None or not isinstance(exc, loaded.OutOfMemoryException):
            raise
        if is_disk_full(exc):  # it could not spill: the caller reports a full disk
            raise
        raise FileFormatError(
            source.name,
            None,
            f"checking the file needs more memory than the {source.limits.memory_limit} DuckDB"
            " may use (Limits.memory_limit)",
        ) from exc


def _ingest(
    source: Source,
    make_sink: Callable[[str], Sink],
    *,
    kind: str | None,
    fmt: str | None,
    drop_bad_rows: bool,
    progress: Progress | None,
    con: duckdb.DuckDBPyConnection,
    sha256: str | None = None,
) -> tuple[Ingested, Sink]:
    if progress is not None:
        progress = _monotonic(progress)
    digest = source.sha256_in_background() if sha256 is None else None
    if progress is not None:
        progress(0.0, "detecting the format")
    det = detect(source, kind, fmt)
    log = RejectLog()
    n_skipped = 0
    unit = "line"
    sink: Sink
    # the JSON and Parquet readers import pyarrow.parquet: only when such a file is read
    if det.format in ("json", "mteb"):
        from evalvalidity.io.ingest._records import read_json_document

        resolved, sink = read_json_document(
            source, det, det.kind if det.format == "mteb" else kind, make_sink, log, con
        )
        det = Detected(det.format, resolved, det.layout)
        unit = "record"
    else:
        sink = make_sink(det.kind)
        if det.format == "parquet":
            from evalvalidity.io.ingest._records import read_parquet

            read_parquet(source, det, sink, log, con, progress)
            unit = "record"
        elif det.format == "jsonl":
            read_jsonl(source, det, sink, log, con, progress)
        elif det.format == "trec_rag":
            from evalvalidity.io.ingest._exports import read_rerank_requests

            read_rerank_requests(source, det, sink, log, con, progress)
        else:
            sample = [text for _, text in sample_lines(source)]
            if not read_fast(source, det, sample, sink, progress):
                n_skipped = read_exact(source, det, sink, log, con, progress)
    if det.kind == "harness" and det.format == "trec_eval" and isinstance(sink, MemorySink):
        _seeds_from_run_ids(source, sink)
    if progress is not None:
        progress(0.9, "checking for duplicates")
    in_memory = isinstance(sink, MemorySink)
    # a small table's keys are compared in Python: DuckDB sees it only when one repeats
    repeated = repeated_keys(det.kind, sink.table) if isinstance(sink, MemorySink) else None
    if repeated is not False:
        sink.expose(con, "t")
    checked = table_checks(con, det.kind, log, unit, in_memory=in_memory, repeated=repeated)
    if len(checked.drop_lines):
        sink.drop(con, checked.drop_lines)
    sink.close()
    n_kept = sink.n_rows
    if log.count and not drop_bad_rows:
        raise RejectedRowsError(source.name, log.count, log.sorted_rows(), n_kept=n_kept, unit=unit)
    if n_kept == 0:
        if log.count:
            raise FileFormatError(
                source.name, None, f"every row was rejected ({log.count:,}); nothing is left"
            )
        raise FileFormatError(source.name, None, "the file holds no data rows")
    warnings = []
    if log.count:
        warnings.append(f"dropped {log.count:,} bad row{'s' if log.count != 1 else ''}")
    if checked.n_duplicates:
        warnings.append(
            f"merged {checked.n_duplicates:,} identical repeated row"
            f"{'s' if checked.n_duplicates != 1 else ''} into their first occurrence"
        )
    if n_skipped:
        warnings.append(
            f"skipped {n_skipped:,} summary line{'s' if n_skipped != 1 else ''} (qid 'all')"
        )
    table = sink.table if isinstance(sink, MemorySink) else None
    result = Ingested(
        table=table if table is not None else sink.schema.empty_table(),
        kind=det.kind,
        format=det.format,
        compression=source.compression,
        n_rejected=log.count,
        rejected=log.sorted_rows(),
        n_duplicates=checked.n_duplicates,
        n_skipped=n_skipped,
        warnings=tuple(warnings),
        source_name=source.name,
        sha256=digest.result() if digest is not None else (sha256 or ""),
        line_unit=unit,
    )
    if progress is not None:
        progress(1.0, "done")
    return result, sink


# compiled on first use (re caches them): only concatenated trec_eval outputs need them
_RUN_ID = rb"(?m)^[ \t]*runid[ \t]+all[ \t]+(\S+)[ \t]*\r?$"
_TRAILING_NUMBER = rb"(\d+)$"


def _seeds_from_run_ids(source: Source, sink: MemorySink) -> None:
    """Give each value of concatenated ``trec_eval -q`` outputs the seed of its run.

    trec_eval prints every run's per-query lines, then its summary (``qid`` ``all``), which
    holds the line ``runid all <tag>``. With two runs or more, a value belongs to the run
    whose ``runid`` line comes next (or, when values follow the last ``runid`` line and none
    precede the first, the one before it). The seed is the number that ends every tag
    (``noise-3``: 3) when those numbers are distinct, else the run's position.
    """
    text = source.read_all()
    found = [(m.start(), m.group(1)) for m in re.finditer(_RUN_ID, text)]
    if len(found) < 2:
        return
    starts = [pos for pos, _ in found]
    lines = np.array(
        [text.count(b"\n", 0, pos) + 1 for pos in starts], dtype=np.int64
    )  # 1-based line numbers of the runid lines
    tags = [tag for _, tag in found]
    numbers = [re.search(_TRAILING_NUMBER, tag) for tag in tags]
    if all(numbers) and len({int(m.group(1)) for m in numbers if m}) == len(tags):
        seeds = np.array([int(m.group(1)) for m in numbers if m], dtype=np.int64)
    else:
        seeds = np.arange(len(tags), dtype=np.int64)
    table = sink.table
    row_lines = table.column("line").to_numpy(zero_copy_only=False)
    if len(row_lines) == 0:
        return
    if row_lines.min() < lines[0]:
        index = np.searchsorted(lines, row_lines, side="left")
        after_last = index >= len(lines)
        index = np.minimum(index, len(lines) - 1)
    else:
        index = np.searchsorted(lines, row_lines, side="right") - 1
        after_last = np.zeros(len(row_lines), dtype=bool)
    seed = pa.array(seeds[index], pa.int64(), mask=after_last)
    sink.replace(table.set_column(table.schema.get_field_index("seed"), "seed", seed))


def read(
    source: SourceLike,
    *,
    kind: str | None = None,
    format: str | None = None,
    display_name: str | None = None,
    drop_bad_rows: bool = False,
    progress: Progress | None = None,
    limits: Limits | None = None,
    digest: bool = True,
) -> Ingested:
    """Read a run, qrels, pool metadata or harness output into a canonical table.

    See :mod:`evalvalidity.io.ingest` for the formats and the checks, and
    :class:`~evalvalidity.io.ingest.Limits` for what a read may cost (``limits``; default
    :data:`~evalvalidity.io.ingest.DEFAULT_LIMITS`). ``digest=False`` leaves
    ``Ingested.sha256`` empty instead of hashing the file (in a thread, 0.2 s of CPU for
    250 MB).
    """
    src = Source(source, display_name, limits)
    # a connection of the process's database with this memory limit, which spills into a
    # temporary folder of its own (never ./.tmp, wherever the caller is); opened by the first
    # statement (a small, clean file needs none: it is read without importing DuckDB)
    with deferred_connection(src.limits.memory_limit) as con:
        result, _ = ingest(
            src,
            MemorySink,
            kind=kind,
            fmt=format,
            drop_bad_rows=drop_bad_rows,
            progress=progress,
            con=con,
            sha256=None if digest else "",
        )
    if result.kind == "run":  # the table checks rejected every repeated (qid, docid)
        mark_unique_pairs(result.table)
    return result


#: Files whose text is larger than this are streamed to Parquet, never held in memory.
STREAM_THRESHOLD_BYTES = 1 << 30


def estimated_text_bytes(source: Source) -> int:
    """The decompressed size: exact for plain files, from the gzip trailer otherwise.

    For a Parquet file, the uncompressed size its metadata declares (the reader stops it at
    ``Limits.max_compression_ratio`` if it lies).
    """
    if source.compression != "gzip":
        if source.path is not None and source.head(4) == PARQUET_MAGIC:
            import pyarrow.parquet as pq

            try:
                metadata = pq.ParquetFile(pa.OSFile(os.fsencode(source.path))).metadata
                declared = sum(
                    metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups)
                )
            except Exception:  # a corrupt file: the reader will say what is wrong
                return source.size
            return max(source.size, int(declared))
        return source.size
    if source.path is not None and source.size >= 4:
        with open(source.path, "rb") as handle:
            handle.seek(-4, os.SEEK_END)
            trailer = int.from_bytes(handle.read(4), "little")  # size mod 2**32
        return max(trailer, source.size * 3)
    return source.size * 4


def ingest_to_parquet(
    source: Source,
    path: Path,
    *,
    kind: str | None,
    fmt: str | None,
    drop_bad_rows: bool,
    progress: Progress | None,
    spill_directory: Path,
) -> Ingested:
    """Read ``source`` into the Parquet file ``path``.

    A file up to :data:`STREAM_THRESHOLD_BYTES` is read into memory and written while its
    table checks run; a larger one is streamed in row groups and checked out of core by DuckDB
    under ``source.limits.memory_limit``, spilling to ``spill_directory``. The returned
    :class:`Ingested` has an empty ``table``: the rows are in the file.
    """
    stream = estimated_text_bytes(source) > STREAM_THRESHOLD_BYTES
    spill_directory.mkdir(exist_ok=True)
    made: list[Sink] = []

    def make_sink(kind_: str) -> Sink:
        sink = ParquetSink(kind_, path) if stream else MemorySink(kind_, path)
        made.append(sink)
        return sink

    with connect(source.limits.memory_limit, os.fspath(spill_directory)) as con:
        try:
            result, _ = ingest(
                source,
                make_sink,
                kind=kind,
                fmt=fmt,
                drop_bad_rows=drop_bad_rows,
                progress=progress,
                con=con,
            )
        except BaseException:
            for sink in made:
                sink.abort()
            raise
    return dataclasses.replace(result, table=result.table.schema.empty_table())
