"""Record formats: Parquet files and ranx-style JSON documents ``{qid: {docid: value}}``.

Their ``line`` is the record number (1-based): the row of a Parquet file, the position of a
(qid, docid) pair in a JSON document.

A Parquet file's decoded columns count as its text for ``Limits.max_text_bytes`` and
``Limits.max_compression_ratio`` (a few kilobytes of run-length encoding can stand for
gigabytes). A JSON document is parsed in memory, so it is refused above
``Limits.max_json_bytes`` and when nested deeper than ``Limits.max_json_depth``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from evalvalidity.core.types import Progress
from evalvalidity.errors import FileFormatError
from evalvalidity.io.ingest._detect import Detected
from evalvalidity.io.ingest._limits import exceeds_depth, human_bytes
from evalvalidity.io.ingest._sink import Sink
from evalvalidity.io.ingest._source import BOM, Source
from evalvalidity.io.ingest._spec import DOCID, KIND_NOUNS, QID, REL, SCORE, Layout
from evalvalidity.io.ingest._validate import RejectLog, apply_row_checks, not_text, row_checks

BATCH_ROWS = 1 << 20


def _column_type(arrow_type: pa.DataType) -> str:
    if pa.types.is_integer(arrow_type):
        return "int"
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "float"
    return "string"


def _is_nested(arrow_type: pa.DataType) -> bool:
    if pa.types.is_dictionary(arrow_type):
        return _is_nested(arrow_type.value_type)
    return bool(pa.types.is_nested(arrow_type))


def _parquet_column(source: Source, batch: pa.RecordBatch, key: str, typed: str | None) -> pa.Array:
    """The column ``key`` as DuckDB's checks take it: numbers as they are, the rest as text."""
    column = batch.column(key)
    try:
        if typed == "float" and pa.types.is_decimal(column.type):
            return column.cast(pa.float64(), safe=False)  # DuckDB has no 256-bit decimals
        if typed is None and column.type != pa.string():
            return column.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise FileFormatError(
            source.name, None, f"the column {key!r} ({column.type}) cannot be read as text ({exc})"
        ) from exc
    return column


def read_parquet(
    source: Source,
    det: Detected,
    sink: Sink,
    log: RejectLog,
    con: duckdb.DuckDBPyConnection,
    progress: Progress | None,
) -> int:
    """Read a Parquet file batch by batch; columns as detected from the schema."""
    layout = det.layout
    kept = [(i, det.keys[i]) for i, spec in enumerate(layout.fields) if spec is not None]
    meter = source.meter("decodes")
    try:
        if source.compression is None and source.path is not None:
            parquet = pq.ParquetFile(pa.OSFile(os.fsencode(source.path)))
        else:
            parquet = pq.ParquetFile(pa.BufferReader(source.read_all()))
        schema = parquet.schema_arrow
        names = schema.names
        types: dict[int, str] = {}
        for i, key in kept:
            if key is None:
                continue
            if names.count(key) > 1:
                raise FileFormatError(
                    source.name, None, f"the column name {key!r} appears {names.count(key)} times"
                )
            arrow_type = schema.field(key).type
            if _is_nested(arrow_type):
                raise FileFormatError(
                    source.name,
                    None,
                    f"the column {key!r} holds {arrow_type} values; expected text or numbers",
                )
            kind = _column_type(arrow_type)
            spec = layout.fields[i]
            if kind == "float" and spec is not None and spec.type == "id":
                raise FileFormatError(
                    source.name,
                    None,
                    f"the {spec.label} column {key!r} holds {arrow_type} numbers: an id such as"
                    " 1.0 would become the text '1.0' and match no '1'; store ids as strings or"
                    " integers",
                )
            if kind != "string":
                types[i] = kind
        checks = row_checks(layout, types)
        total = max(parquet.metadata.num_rows, 1)
        number = 1
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=[k for _, k in kept]):
            n = batch.num_rows
            table: dict[str, pa.Array] = {
                "line": pa.array(np.arange(number, number + n, dtype=np.int64)),
                "l": pa.nulls(n, pa.string()),
                "err": pa.nulls(n, pa.string()),
                "n": pa.array(np.full(n, layout.n_fields, dtype=np.int64)),
            }
            for i, key in kept:
                table[f"c{i}"] = _parquet_column(source, batch, key or "", types.get(i))
            decoded = pa.table(table)
            meter.add(decoded.nbytes)  # dictionary columns counted spelled out
            rows, _ = apply_row_checks(con, checks, layout, decoded, log)
            sink.write(rows)
            number += n
            if progress is not None:
                progress(0.9 * (number - 1) / total, "reading")
    except (pa.ArrowException, OSError) as exc:
        raise FileFormatError(source.name, None, f"the file is not valid Parquet ({exc})") from exc
    return 0


def _decode_document(source: Source) -> str:
    limit = source.limits.max_json_bytes

    def too_large() -> FileFormatError:
        return FileFormatError(
            source.name,
            None,
            f"the JSON document is over {human_bytes(limit or 0)}, the limit for a document"
            " parsed in memory (Limits.max_json_bytes): convert it to JSON Lines (one object"
            " per line), which has no such limit, or raise the limit",
        )

    data = source.read_all(limit, too_large)
    if exceeds_depth(data, source.limits.max_json_depth):
        raise FileFormatError(
            source.name,
            None,
            f"the JSON is nested more than {source.limits.max_json_depth} levels deep, the"
            " limit (Limits.max_json_depth)",
        )
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        offset = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise FileFormatError(
            source.name,
            line,
            f"invalid UTF-8: the byte 0x{data[exc.start]:02x} at byte offset {offset}"
            " of the line is not valid UTF-8 text",
        ) from exc


def _encodable(value: str) -> str:
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


class _Object(list[tuple[str, object]]):
    """A JSON object's (key, value) pairs, in order, repeated keys kept (not a JSON array)."""


_DONE = ("", None)


def read_json_document(
    source: Source,
    det: Detected,
    kind: str | None,
    sink_factory: Callable[[str], Sink],
    log: RejectLog,
    con: duckdb.DuckDBPyConnection,
) -> tuple[str, Sink]:
    """Read ``{qid: {docid: value}}``; returns the kind (run when values are floats) and sink."""
    text = _decode_document(source)
    try:
        document = json.loads(text, object_pairs_hook=_Object)
    except json.JSONDecodeError as exc:
        raise FileFormatError(
            source.name, exc.lineno, f"invalid JSON ({exc.msg} at column {exc.colno})"
        ) from exc
    except RecursionError as exc:  # max_json_depth above Python's own limit
        raise FileFormatError(
            source.name, None, "the JSON is nested deeper than Python's parser allows"
        ) from exc
    except ValueError as exc:  # an integer of more than 4300 digits
        raise FileFormatError(source.name, None, f"invalid JSON ({exc})") from exc
    del text
    from evalvalidity.io.ingest._exports import predictions_of  # MTEB's nesting, if any

    document = predictions_of(document, source)
    if not isinstance(document, _Object):
        raise FileFormatError(
            source.name, None, "expected a JSON object {qid: {docid: value}} at the top level"
        )
    qids: list[str] = []
    docids: list[str] = []
    values: list[str | None] = []
    errors: list[str | None] = []
    any_float = False
    for position in range(len(document)):
        # each query's pairs are let go once copied, so the parsed document shrinks as the
        # columns grow (about a third less memory at the peak)
        qid, ranking = document[position]
        document[position] = _DONE
        if not isinstance(ranking, _Object):
            raise FileFormatError(
                source.name,
                None,
                f"expected {{qid: {{docid: value}}}}; the value of query {qid!r} is not an object",
            )
        qid_error = not_text(qid)
        for docid, value in ranking:
            error = qid_error or not_text(docid)
            if error is not None:  # rejected: keep an encodable stand-in in the columns
                qid, docid = _encodable(qid), _encodable(docid)
            qids.append(qid)
            docids.append(docid)
            if error is not None:
                value = None
            elif isinstance(value, bool) or not isinstance(value, int | float | str):
                error = (
                    f"expected a number for ({qid!r}, {docid!r}), found {json.dumps(value)[:50]}"
                )
                value = None
            elif isinstance(value, float):
                any_float = True
                value = repr(value)
            elif isinstance(value, int):
                value = str(value)
            values.append(value)
            errors.append(error)
    if kind is None:
        if any_float:
            kind = "run"
        else:
            raise FileFormatError(
                source.name,
                None,
                "every value of this {qid: {docid: value}} document is an integer: it could be"
                " a run or qrels; cannot tell which without guessing: pass kind= (--kind) run"
                " or qrels",
            )
    if kind not in ("run", "qrels"):
        raise FileFormatError(
            source.name,
            None,
            f"a JSON document {{qid: {{docid: value}}}} holds a run or qrels, not {KIND_NOUNS[kind]}",
        )
    value_field = REL if kind == "qrels" else SCORE
    layout = Layout(kind, (QID, DOCID, value_field), "qid docid " + value_field.name)
    sink = sink_factory(kind)
    n = len(qids)
    table = pa.table(
        {
            "line": pa.array(np.arange(1, n + 1, dtype=np.int64)),
            "l": pa.nulls(n, pa.string()),
            "err": pa.array(errors, pa.string()),
            "n": pa.array(np.full(n, 3, dtype=np.int64)),
            "c0": pa.array(qids, pa.string()),
            "c1": pa.array(docids, pa.string()),
            "c2": pa.array(values, pa.string()),
        }
    )
    del qids, docids, values, errors, document
    rows, _ = apply_row_checks(con, row_checks(layout), layout, table, log)
    sink.write(rows)
    return kind, sink
