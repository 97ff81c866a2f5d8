"""The canonical in-memory tables every reader produces and every consumer accepts.

Readers (``evalvalidity.io.ingest``) turn files of any supported format into these Arrow tables;
the scorer, the checks and the dashboard read only these. Column names and types are a
contract: :func:`conform` checks a table against its schema and raises a
:class:`~evalvalidity.errors.InputDataError` naming the missing or mistyped column.

``line`` is the 1-based line (or record) number in the source file, kept so that an error found
after parsing (a duplicate pair, a conflicting judgement) can still name its line. It is null
for tables built in memory.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa

from evalvalidity.errors import InputDataError

__all__ = [
    "CANDIDATES_SCHEMA",
    "HARNESS_SCHEMA",
    "KIND_SCHEMAS",
    "POOLS_SCHEMA",
    "QRELS_SCHEMA",
    "RUN_SCHEMA",
    "UNITS_SCHEMA",
    "conform",
]

#: A ranking: one row per (query, retrieved item). ``rank`` is the file's rank column (null when
#: the format has none); scoring ignores it unless the ``given`` tie policy is asked for.
RUN_SCHEMA: Final = pa.schema(
    [
        ("qid", pa.string()),
        ("docid", pa.string()),
        ("score", pa.float64()),
        ("rank", pa.int64()),
        ("line", pa.int64()),
    ]
)

#: Judgements: one row per (query, judged item). ``rel`` is the grade; rel <= 0 is not relevant.
QRELS_SCHEMA: Final = pa.schema(
    [
        ("qid", pa.string()),
        ("docid", pa.string()),
        ("rel", pa.int64()),
        ("line", pa.int64()),
    ]
)

#: What the scorer deduplicates to: every chunk (the run's unit) maps to one document (the
#: judgements' unit).
UNITS_SCHEMA: Final = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("line", pa.int64()),
    ]
)

#: Per-query pool sizes, in the unit the scorer ranks.
POOLS_SCHEMA: Final = pa.schema(
    [
        ("qid", pa.string()),
        ("pool_size", pa.int64()),
        ("line", pa.int64()),
    ]
)

#: Per-query candidate lists: the pool spelled out item by item.
CANDIDATES_SCHEMA: Final = pa.schema(
    [
        ("qid", pa.string()),
        ("docid", pa.string()),
        ("line", pa.int64()),
    ]
)

#: A scoring harness's per-query output on noise runs: ``seed`` is null when not given,
#: ``measure`` is the harness's own measure name (trec_eval ``-q`` lines) or null.
HARNESS_SCHEMA: Final = pa.schema(
    [
        ("seed", pa.int64()),
        ("qid", pa.string()),
        ("measure", pa.string()),
        ("value", pa.float64()),
        ("line", pa.int64()),
    ]
)

#: Dataset kind -> schema.
KIND_SCHEMAS: Final[dict[str, pa.Schema]] = {
    "run": RUN_SCHEMA,
    "qrels": QRELS_SCHEMA,
    "units": UNITS_SCHEMA,
    "pools": POOLS_SCHEMA,
    "candidates": CANDIDATES_SCHEMA,
    "harness": HARNESS_SCHEMA,
}


def conform(table: pa.Table, kind: str) -> pa.Table:
    """Return ``table`` with exactly the columns of ``kind``'s schema, in order.

    A missing ``line`` (or ``rank``/``seed``/``measure``, which may be unknown) column is added
    as nulls; any other missing column, or one that cannot be cast losslessly, is an error.

    Examples
    --------
    >>> t = pa.table({"qid": ["1"], "docid": ["d"], "rel": [2]})
    >>> conform(t, "qrels").column_names
    ['qid', 'docid', 'rel', 'line']
    >>> conform(pa.table({"qid": ["1"]}), "qrels")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.InputDataError: A qrels table needs the column 'docid' (expected columns: qid, docid, rel).
    """
    if kind not in KIND_SCHEMAS:
        raise InputDataError(
            f"Unknown dataset kind {kind!r}; expected one of {', '.join(KIND_SCHEMAS)}."
        )
    schema = KIND_SCHEMAS[kind]
    nullable = {"line", "rank", "seed", "measure"}
    required = [f.name for f in schema if f.name not in nullable]
    columns = []
    for field in schema:
        if field.name in table.column_names:
            column = table.column(field.name)
            if column.type != field.type:
                try:
                    column = column.cast(field.type, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise InputDataError(
                        f"The column {field.name!r} of a {kind} table must hold {field.type}"
                        f" values; found {column.type}."
                    ) from exc
            columns.append(column)
        elif field.name in nullable:
            columns.append(pa.nulls(table.num_rows, field.type))
        else:
            raise InputDataError(
                f"A {kind} table needs the column {field.name!r}"
                f" (expected columns: {', '.join(required)})."
            )
    return pa.Table.from_arrays(columns, schema=schema)
