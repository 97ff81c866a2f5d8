"""Record formats: Parquet files and ranx-style JSON documents ``{qid: {docid: value}}``.

Their ``line`` is the record number (1-based): the row of a Parquet file, the position of a
(qid, docid) pair in a JSON document.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from evalvalidity.errors import FileFormatError
from evalvalidity.ingest._detect import Detected
from evalvalidity.ingest._sink import Sink
from evalvalidity.ingest._source import BOM, Source
from evalvalidity.ingest._spec import DOCID, KIND_NOUNS, QID, REL, SCORE, Layout
from evalvalidity.ingest._validate import RejectLog, apply_row_checks, row_checks

Progress = Callable[[float, str], None]
BATCH_ROWS = 1 << 20


def _column_type(arrow_type: pa.DataType) -> str:
    if pa.types.is_integer(arrow_type):
        return "int"
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "float"
    return "string"


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
    try:
        if source.compression is None and source.path is not None:
            parquet = pq.ParquetFile(source.path)
        else:
            parquet = pq.ParquetFile(pa.BufferReader(source.read_all()))
        schema = parquet.schema_arrow
        types: dict[int, str] = {}
        for i, key in kept:
            kind = _column_type(schema.field(key).type)
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
                column = batch.column(key)
                if i not in types and column.type != pa.string():
                    column = column.cast(pa.string())
                table[f"c{i}"] = column
            rows, _ = apply_row_checks(con, checks, layout, pa.table(table), log)
            sink.write(rows)
            number += n
            if progress is not None:
                progress(0.9 * (number - 1) / total, "reading")
    except (pa.ArrowInvalid, OSError) as exc:
        raise FileFormatError(source.name, None, f"the file is not valid Parquet ({exc})") from exc
    return 0


def _decode_document(source: Source) -> str:
    data = source.read_all()
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
        document = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    except json.JSONDecodeError as exc:
        raise FileFormatError(
            source.name, exc.lineno, f"invalid JSON ({exc.msg} at column {exc.colno})"
        ) from exc
    if not isinstance(document, list):
        raise FileFormatError(
            source.name, None, "expected a JSON object {qid: {docid: value}} at the top level"
        )
    qids: list[str] = []
    docids: list[str] = []
    values: list[str | None] = []
    errors: list[str | None] = []
    any_float = False
    for qid, ranking in document:
        if not isinstance(ranking, list):
            raise FileFormatError(
                source.name,
                None,
                f"expected {{qid: {{docid: value}}}}; the value of query {qid!r} is not an object",
            )
        for docid, value in ranking:
            qids.append(qid)
            docids.append(docid)
            error = None
            if isinstance(value, bool) or not isinstance(value, int | float | str):
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
    rows, _ = apply_row_checks(con, row_checks(layout), layout, table, log)
    sink.write(rows)
    return kind, sink
