r"""Turn the objects users already have into canonical tables, checked like files are.

:func:`as_run` and :func:`as_qrels` (and :func:`as_table` for every kind) accept

=================================  =========================================================
object                             columns or shape
=================================  =========================================================
``pyarrow.Table`` / ``RecordBatch``  any column order; canonical or usual names (below)
``pandas.DataFrame``               ir_measures (``query_id doc_id score`` / ``relevance``),
                                   PyTerrier (``qid docno score rank`` / ``label``), ranx
                                   (``q_id doc_id score``), BEIR (``query-id corpus-id``)
``{qid: {docid: value}}``          pytrec_eval and ranx dict runs and qrels
ranx ``Run`` / ``Qrels``           anything with a ``to_dict()`` giving the dict above
named tuples                       an iterable of ir_measures ``ScoredDoc`` / ``Qrel`` (or any
                                   named tuple whose fields have the usual names)
plain tuples                       an iterable of ``(qid, docid, score)`` (run) or
                                   ``(qid, docid, grade)`` (qrels) triples
=================================  =========================================================

Column names are matched case-insensitively, ignoring everything but letters and digits
(``Query-ID`` is ``queryid``). Document IDs: PyTerrier's ``docno`` wins over its internal
integer ``docid`` when a frame has both. A qrels grade may be called ``rel``, ``relevance``,
``label``, ``grade`` or, failing those, ``score`` (BEIR). Two columns that match the same
name at the same priority (``qid`` and ``query_id``) are an error, never a guess.

Conversions, all named here and nowhere silent:

- integer IDs become their decimal text (``7`` becomes ``'7'``); floating-point IDs are refused,
  since ``1.0`` and ``1`` would silently become different queries;
- integer scores become floats; grades, ranks and pool sizes must be integers (an integral
  float such as ``2.0`` is taken, as the file readers take it; ``1.5`` and booleans are not);
- a run given only by ranks (PyTerrier's ``qid docno rank``) is scored :math:`-\mathrm{rank}`,
  so that rank 1 scores highest and the order is the given one.

Each row is checked by the file readers' rules: IDs are non-empty, scores are finite numbers,
grades are integers. A (qid, docid) pair given twice is refused, for qrels too (a file reader
merges identical repeated judgements; an object has no channel to say it did). Every refusal is
an :class:`~evalvalidity.errors.InputDataError` that names the object, the row (its position,
or its DataFrame index label) and key, what it holds and what was expected, e.g. ``run: query
'3' document 'd7' has score nan; expected a finite number``; up to
:data:`~evalvalidity.io.ingest.MAX_SHOWN_REJECTED` bad rows are listed, all are counted.

The input is never modified. Rows keep the object's order. ``rank`` is null unless the object
had ranks (a column of nothing but nulls, as in a canonical table without ranks, counts as
none). ``line`` is null (the table was built in memory), except that a pyarrow table with an
integer ``line`` column keeps it: a table read from a file still names its lines.

Examples
--------
>>> run = as_run({"q1": {"d1": 2.5, "d2": 1.0}, "q2": {"d3": 0.5}})
>>> run.column("docid").to_pylist(), run.column("score").to_pylist()
(['d1', 'd2', 'd3'], [2.5, 1.0, 0.5])
>>> as_qrels({"q1": {"d1": 1.5}})
Traceback (most recent call last):
...
evalvalidity.errors.InputDataError: qrels: query 'q1' document 'd1' has relevance grade 1.5; expected an integer
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io.tables import KIND_SCHEMAS

__all__ = ["as_qrels", "as_run", "as_table"]

#: Bad rows described in a message; every one is counted.
MAX_SHOWN: Final = 20


@dataclass(frozen=True)
class _Field:
    """One column of a kind: its canonical name, value type and how it may be spelled.

    ``type`` is ``id`` (non-empty text; integers are converted), ``float`` (a finite number),
    ``int`` or ``posint`` (an integer >= 1). ``spellings`` are groups of normalised names in
    priority order: the first group with a match wins, two matches in one group are ambiguous.
    ``noun`` names the field in a row's key ("query '3'"); None when it is not a key.
    """

    name: str
    type: str
    label: str
    spellings: tuple[tuple[str, ...], ...]
    optional: bool = False
    noun: str | None = None


_QID = _Field(
    "qid", "id", "query ID", (("qid", "queryid"), ("topic", "topicid", "qno")), noun="query"
)
_DOCS = ("docid", "corpusid", "pid", "passageid", "documentid", "did")
_DOCID = _Field("docid", "id", "document ID", (("docno",), _DOCS), noun="document")
_SCORE = _Field("score", "float", "score", (("score",), ("sim", "similarity")))
_RANK = _Field("rank", "int", "rank", (("rank",),), optional=True)
_GRADES = ("rel", "relevance", "label", "grade", "judgement", "judgment", "gain")
_REL = _Field("rel", "int", "relevance grade", (_GRADES, ("score",)))

#: kind -> its fields (the schema's, less ``line``).
_FIELDS: Final[dict[str, tuple[_Field, ...]]] = {
    "run": (_QID, _DOCID, _SCORE, _RANK),
    "qrels": (_QID, _DOCID, _REL),
    "units": (
        _Field("chunk_id", "id", "chunk ID", (("chunkid", "chunk", "unitid"),), noun="chunk"),
        _Field(
            "doc_id",
            "id",
            "document ID",
            (("docid", "docno", "documentid", "parentid", "corpusid"),),
        ),
    ),
    "pools": (
        _QID,
        _Field("pool_size", "posint", "pool size", (("poolsize", "pool", "ncandidates", "size"),)),
    ),
    "candidates": (_QID, _DOCID),
    "harness": (
        _Field("seed", "int", "seed", (("seed",),), optional=True, noun="seed"),
        _QID,
        _Field("measure", "id", "measure name", (("measure", "metric"),), True, "measure"),
        _Field("value", "float", "value", (("value", "result"), ("score",))),
    ),
}

#: kind -> the fields a plain tuple holds, in order.
_TUPLE_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "run": ("qid", "docid", "score"),
    "qrels": ("qid", "docid", "rel"),
    "units": ("chunk_id", "doc_id"),
    "pools": ("qid", "pool_size"),
    "candidates": ("qid", "docid"),
    "harness": ("qid", "value"),
}

_EXPECTED = {
    "id": "a non-empty string",
    "float": "a finite number",
    "int": "an integer",
    "posint": "an integer >= 1",
}
_NON_ALNUM = re.compile(r"[^a-z0-9]")


def _normalise(name: str) -> str:
    return _NON_ALNUM.sub("", name.strip().lower())


# -- columns: what a source hands the checks ---------------------------------------------------
@dataclass
class _Column:
    """One field's values as given: an Arrow array, or Python objects (dicts, tuples)."""

    source_name: str  # the column's name in the object, or the field name
    arrow: pa.Array | pa.ChunkedArray | None = None
    items: list[Any] | None = None
    dtype: str | None = None  # how the user's library names the column's type, when not Arrow

    def raw(self, row: int) -> Any:
        """The value at ``row`` as the user gave it."""
        if self.items is not None:
            return self.items[row]
        return self.arrow[row].as_py() if self.arrow is not None else None

    def all_null(self) -> bool:
        """True when the column holds no value at all (a canonical table's unknown ranks)."""
        if self.arrow is not None:
            return bool(self.arrow.null_count == len(self.arrow))
        return all(v is None for v in self.items or ())


@dataclass
class _Source:
    """What :func:`as_table` reads: columns by field name and how to locate a row."""

    what: str  # "the DataFrame", "the dict", ... for the empty-object message
    n_rows: int
    columns: dict[str, _Column]
    locate: Callable[[int], str | None]  # "row 3", None for dicts (the key says it all)
    line: pa.ChunkedArray | None = None  # a canonical table's own line numbers, kept


def _invalid(name: str, message: str) -> InputDataError:
    return InputDataError(f"{name}: {message}")


def _resolve(names: list[str], fields: tuple[_Field, ...], name: str) -> dict[str, str]:
    """Map each field to the one column name that spells it (missing optional ones left out)."""
    normalised = [_normalise(n) for n in names]
    found: dict[str, str] = {}
    for field in fields:
        for group in field.spellings:
            hits = [n for n, key in zip(names, normalised, strict=True) if key in group]
            if len(hits) > 1:
                shown = ", ".join(repr(h) for h in hits)
                raise _invalid(
                    name,
                    f"the columns {shown} could each be the {field.label} column; keep one"
                    " or rename the others",
                )
            if hits:
                found[field.name] = hits[0]
                break
    return found


def _missing(
    found: dict[str, str], fields: tuple[_Field, ...], names: list[str], name: str
) -> None:
    for field in fields:
        if field.name in found or field.optional:
            continue
        if field.name == "score" and "rank" in found:
            continue  # scored by -rank
        spelled = ", ".join(repr(s) for group in field.spellings for s in group)
        have = ", ".join(repr(n) for n in names) or "none"
        raise _invalid(
            name,
            f"no {field.label} column: expected one named {spelled} (after lower-casing and"
            f" dropping everything but letters and digits); found {have}",
        )


def _table_source(table: pa.Table, fields: tuple[_Field, ...], name: str, what: str) -> _Source:
    names = list(table.column_names)
    found = _resolve(names, fields, name)
    _missing(found, fields, names, name)
    columns = {f: _Column(c, arrow=table.column(c)) for f, c in found.items()}
    line = None
    if names.count("line") == 1 and pa.types.is_integer(table.schema.field("line").type):
        line = table.column("line").cast(pa.int64())  # read from a file: keep its lines
    return _Source(what, table.num_rows, columns, lambda row: f"row {row}", line)


def _frame_source(frame: Any, fields: tuple[_Field, ...], name: str) -> _Source:
    names = [str(c) for c in frame.columns]
    found = _resolve(names, fields, name)
    _missing(found, fields, names, name)
    by_text = dict(zip(names, frame.columns, strict=True))
    columns = {}
    for field_name, column_name in found.items():
        series = frame[by_text[column_name]]
        try:
            # from_pandas=False keeps NaN as NaN, so that a NaN score is named as such
            array = pa.array(series, from_pandas=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            columns[field_name] = _Column(column_name, items=series.tolist())
        else:
            columns[field_name] = _Column(column_name, arrow=array, dtype=str(series.dtype))
    index = frame.index

    def locate(row: int) -> str:
        return f"row {index[row : row + 1].tolist()[0]!r}"

    return _Source("the DataFrame", len(frame), columns, locate)


def _nested_source(mapping: Mapping[Any, Any], kind: str, name: str) -> _Source:
    fields = _FIELDS[kind]
    value_field = fields[2]
    qids: list[Any] = []
    docids: list[Any] = []
    values: list[Any] = []
    for qid, ranking in mapping.items():
        if not isinstance(ranking, Mapping):
            raise _invalid(
                name,
                f"the value of query {qid!r} is {type(ranking).__name__}; expected a mapping"
                f" {{docid: {value_field.label}}}",
            )
        qids.extend([qid] * len(ranking))
        docids.extend(ranking.keys())
        values.extend(ranking.values())
    columns = {
        "qid": _Column("qid", items=qids),
        "docid": _Column("docid", items=docids),
        value_field.name: _Column(value_field.name, items=values),
    }
    return _Source("the mapping", len(qids), columns, lambda row: None)


def _flat_source(mapping: Mapping[Any, Any], kind: str, name: str) -> _Source:
    key, value = _FIELDS[kind]
    columns = {
        key.name: _Column(key.name, items=list(mapping.keys())),
        value.name: _Column(value.name, items=list(mapping.values())),
    }
    return _Source("the mapping", len(mapping), columns, lambda row: None)


def _values(n: int) -> str:
    return f"{n} value{'' if n == 1 else 's'}"


def _tuple_source(items: list[Any], kind: str, name: str) -> _Source:
    fields = _FIELDS[kind]
    first = items[0]
    kind_of = type(first)
    if not isinstance(first, tuple):
        raise _invalid(name, f"item 0 is {kind_of.__name__}; expected a tuple or a named tuple")
    field_names = getattr(first, "_fields", None)
    if field_names is not None:
        names = list(field_names)
        found = _resolve(names, fields, name)
        _missing(found, fields, names, name)
        positions = {f: names.index(c) for f, c in found.items()}
        shape = f"{kind_of.__name__} named tuples"
    else:
        layout = _TUPLE_FIELDS[kind]
        if len(first) != len(layout):
            raise _invalid(
                name,
                f"item 0 has {_values(len(first))}; expected ({', '.join(layout)}) tuples, or"
                " named tuples",
            )
        positions = {f: i for i, f in enumerate(layout)}
        found = {f: f for f in layout}
        shape = f"({', '.join(layout)}) tuples"
    width = len(first)
    for row, item in enumerate(items):
        if type(item) is not kind_of:
            raise _invalid(
                name, f"item {row} is {type(item).__name__}; expected {shape} like item 0"
            )
        if len(item) != width:
            raise _invalid(
                name, f"item {row} has {_values(len(item))}; expected {width} like item 0"
            )
    columns = {
        f: _Column(found[f], items=[item[i] for item in items]) for f, i in positions.items()
    }
    return _Source("the iterable", len(items), columns, lambda row: f"item {row}")


# -- checks ---------------------------------------------------------------------------------
def _example(array: pa.Array | pa.ChunkedArray) -> Any:
    valid = array.drop_null()
    return valid[0].as_py() if len(valid) else None


def _to_mask(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow result as a numpy mask, null counted as True (bad)."""
    return np.asarray(array.fill_null(True).to_numpy(zero_copy_only=False), dtype=bool)


def _arrow_checked(
    column: _Column, array: pa.Array | pa.ChunkedArray, field: _Field, name: str
) -> tuple[pa.Array | pa.ChunkedArray, np.ndarray]:
    """Convert an Arrow column to the field's type; returns it and the mask of bad rows.

    A column whose type cannot hold the field at all (text scores, float IDs) is refused
    whole, naming the column and one of its values.
    """
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    kind = array.type

    def refuse(expected: str) -> InputDataError:
        return _invalid(
            name,
            f"the column {column.source_name!r} holds {column.dtype or kind} values (e.g."
            f" {_example(array)!r}); expected {expected}",
        )

    if pa.types.is_null(kind):
        target = {"id": pa.string(), "float": pa.float64()}.get(field.type, pa.int64())
        return pa.nulls(len(array), target), np.ones(len(array), dtype=bool)
    if field.type == "id":
        if pa.types.is_integer(kind):
            array = array.cast(pa.string())  # 7 -> '7'
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            array = array.cast(pa.string())
        elif pa.types.is_floating(kind):
            raise refuse(
                f"text or integer {field.label}s (floating-point IDs are ambiguous: 1.0 is"
                " not '1'); convert the column first"
            )
        else:
            raise refuse(f"text or integer {field.label}s")
        bad = pc.or_kleene(pc.is_null(array), pc.equal(pc.binary_length(array), 0))
        return array, _to_mask(bad)
    if field.type == "float":
        if not (
            pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
        ):
            raise refuse(f"numbers ({field.label}s)")
        array = array.cast(pa.float64(), safe=False)
        return array, _to_mask(pc.invert(pc.is_finite(array)))
    # int / posint
    if pa.types.is_integer(kind):
        try:
            array = array.cast(pa.int64())
        except pa.ArrowInvalid as exc:
            raise refuse(f"integer {field.label}s that fit in 64 bits") from exc
        bad = pc.is_null(array)
    elif pa.types.is_floating(kind):
        values = array.cast(pa.float64())
        integral = pc.and_kleene(
            pc.is_finite(values),
            pc.and_kleene(pc.equal(values, pc.trunc(values)), pc.less_equal(pc.abs(values), 9e18)),
        )
        bad = pc.invert(integral)
        array = pc.if_else(integral, values, None).cast(pa.int64())
    else:
        raise refuse(f"integer {field.label}s")
    if field.type == "posint":
        bad = pc.or_kleene(bad, pc.less(array, 1))
    return array, _to_mask(bad)


def _python_value(value: Any, field_type: str) -> tuple[Any, bool]:
    """One Python value converted to the field's type, and whether it is acceptable."""
    if isinstance(value, bool | np.bool_):
        return None, False
    if field_type == "id":
        if isinstance(value, str):
            return value, value != ""
        if isinstance(value, numbers.Integral):
            return str(int(value)), True  # 7 -> '7'
        return None, False
    if field_type == "float":
        if isinstance(value, numbers.Real):
            number = float(value)
            return number, math.isfinite(number)
        return None, False
    if isinstance(value, numbers.Integral):
        number = int(value)
    elif isinstance(value, numbers.Real):
        real = float(value)
        if not (math.isfinite(real) and real == math.trunc(real) and abs(real) <= 9e18):
            return None, False
        number = int(real)
    else:
        return None, False
    ok = -(2**63) <= number < 2**63 and (field_type != "posint" or number >= 1)
    return (number if ok else None), ok


_ARROW_TYPES = {"id": pa.string(), "float": pa.float64(), "int": pa.int64(), "posint": pa.int64()}


def _python_checked(items: list[Any], field: _Field) -> tuple[pa.Array, np.ndarray]:
    pairs = [_python_value(v, field.type) for v in items]
    values = pa.array([v for v, _ in pairs], _ARROW_TYPES[field.type])
    bad = np.fromiter((not ok for _, ok in pairs), dtype=bool, count=len(pairs))
    return values, bad


#: Python types whose lists Arrow converts exactly as :func:`_python_value` would.
_INTEGERS: Final = frozenset({int, np.int64, np.int32})
_PLAIN_TYPES: Final[dict[str, tuple[tuple[frozenset[type], pa.DataType], ...]]] = {
    "id": ((frozenset({str}), pa.string()), (_INTEGERS, pa.int64())),
    "float": ((_INTEGERS | {float, np.float64, np.float32}, pa.float64()),),
    "int": ((_INTEGERS, pa.int64()),),
    "posint": ((_INTEGERS, pa.int64()),),
}


def _checked(column: _Column, field: _Field, name: str) -> tuple[pa.Array, np.ndarray]:
    arrow = column.arrow
    if arrow is None and column.items is not None:
        # one pass over the types, then Arrow's converter: a million values in milliseconds
        # instead of a Python test per value (bools are refused, so they must not slip in)
        types = set(map(type, column.items))
        for plain, arrow_type in _PLAIN_TYPES[field.type]:
            if types <= plain:
                arrow = pa.array(column.items, arrow_type, from_pandas=False)
                break
    if arrow is not None:
        array, bad = _arrow_checked(column, arrow, field, name)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        return array, bad
    return _python_checked(column.items or [], field)


def _key_text(source: _Source, fields: tuple[_Field, ...], row: int) -> str:
    parts = [
        f"{f.noun} {source.columns[f.name].raw(row)!r}"
        for f in fields
        if f.noun is not None and f.name in source.columns
    ]
    where = source.locate(row)
    key = " ".join(parts)
    if where is None:
        return key
    return f"{where} ({key})" if key else where


def _reason(source: _Source, fields: tuple[_Field, ...], field: _Field, row: int) -> str:
    value = source.columns[field.name].raw(row)
    expected = _EXPECTED[field.type]
    if field.type == "id" and value is not None and not isinstance(value, str):
        expected = "a string or an integer"
    return f"{_key_text(source, fields, row)} has {field.label} {value!r}; expected {expected}"


def _check_duplicates(
    source: _Source, fields: tuple[_Field, ...], arrays: dict[str, pa.Array], name: str
) -> None:
    keys = [f for f in fields if f.noun is not None and f.name in arrays]
    if not keys or source.n_rows < 2:
        return
    codes = np.zeros(source.n_rows, dtype=np.int64)
    for field in keys:
        encoded = pc.dictionary_encode(
            arrays[field.name].fill_null(-1) if field.type == "int" else arrays[field.name]
        )
        indices = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
        codes = codes * (len(encoded.dictionary) + 1) + indices + 1
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    repeat = ordered[1:] == ordered[:-1]
    if not repeat.any():
        return
    first_repeat = int(order[1:][repeat].min())
    rows = np.flatnonzero(codes == codes[first_repeat])
    n_keys = len(np.unique(ordered[1:][repeat]))
    labels = ", ".join(f.label for f in keys)
    where = [source.locate(int(r)) for r in rows[:MAX_SHOWN]]
    key = " ".join(f"{f.noun} {source.columns[f.name].raw(int(rows[0]))!r}" for f in keys)
    located = "" if where[0] is None else f" ({', '.join(str(w) for w in where)})"
    more = f"; {n_keys - 1:,} other pairs repeat too" if n_keys > 1 else ""
    pair = "pair" if len(keys) > 1 else "value"
    raise _invalid(
        name,
        f"{key} appears {len(rows)} times{located}; expected each ({labels}) {pair} once{more}",
    )


def _build(source: _Source, kind: str, name: str) -> pa.Table:
    fields = _FIELDS[kind]
    if source.n_rows == 0:
        raise _invalid(name, f"{source.what} holds no rows")
    arrays: dict[str, pa.Array] = {}
    first_bad = np.full(source.n_rows, -1, dtype=np.int64)  # index of the first bad field
    for position, field in enumerate(fields):
        if field.name not in source.columns:
            continue
        if field.optional and source.columns[field.name].all_null():
            continue  # unknown, as in a canonical table without ranks
        array, bad = _checked(source.columns[field.name], field, name)
        arrays[field.name] = array
        first_bad[(first_bad < 0) & bad] = position
    bad_rows = np.flatnonzero(first_bad >= 0)
    if len(bad_rows):
        reasons = [
            _reason(source, fields, fields[first_bad[row]], int(row))
            for row in bad_rows[:MAX_SHOWN]
        ]
        if len(bad_rows) == 1:
            raise _invalid(name, reasons[0])
        listing = "\n".join(f"  {r}" for r in reasons)
        more = len(bad_rows) - len(reasons)
        tail = f"\n  ... and {more:,} more" if more > 0 else ""
        raise _invalid(
            name,
            f"{len(bad_rows):,} rows rejected ({source.n_rows - len(bad_rows):,} good); the"
            f" first {len(reasons)}:\n{listing}{tail}",
        )
    if kind == "run" and "score" not in arrays and "rank" not in arrays:
        rank = source.columns["rank"].source_name
        raise _invalid(name, f"no score column, and the {rank!r} column holds no ranks either")
    _check_duplicates(source, fields, arrays, name)
    if kind == "run" and "score" not in arrays:
        arrays["score"] = pc.negate(arrays["rank"]).cast(pa.float64())  # rank 1 scores highest
    schema = KIND_SCHEMAS[kind]
    if source.line is not None:
        arrays["line"] = source.line.combine_chunks()
    columns = [
        arrays[f.name] if f.name in arrays else pa.nulls(source.n_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


# -- dispatch ---------------------------------------------------------------------------------
def _is_frame(obj: object) -> bool:
    return any(
        c.__name__ == "DataFrame" and c.__module__.startswith("pandas") for c in type(obj).__mro__
    )


def _source(obj: object, kind: str, name: str, caller: str) -> _Source:
    """Every accepted type, in one place."""
    fields = _FIELDS[kind]
    if isinstance(obj, pa.RecordBatch):
        return _table_source(pa.Table.from_batches([obj]), fields, name, "the record batch")
    if isinstance(obj, pa.Table):
        return _table_source(obj, fields, name, "the table")
    if _is_frame(obj):
        return _frame_source(obj, fields, name)
    if not isinstance(obj, Mapping) and callable(getattr(obj, "to_dict", None)):
        obj = obj.to_dict()  # type: ignore[attr-defined]  # ranx Run / Qrels
        if not isinstance(obj, Mapping):
            raise _invalid(name, f"to_dict() returned {type(obj).__name__}; expected a mapping")
    if isinstance(obj, Mapping):
        if kind in ("run", "qrels"):
            return _nested_source(obj, kind, name)
        if kind in ("units", "pools"):
            return _flat_source(obj, kind, name)
        raise ParameterError(
            f"The 'obj' parameter of {caller} cannot be a mapping for {kind}; pass a table,"
            " a DataFrame or an iterable of tuples."
        )
    if isinstance(obj, Iterable) and not isinstance(obj, str | bytes):
        items = list(obj)
        if not items:
            raise _invalid(name, "the iterable holds no rows")
        return _tuple_source(items, kind, name)
    raise ParameterError(
        f"The 'obj' parameter of {caller} must be a pyarrow Table, a pandas DataFrame, a"
        " mapping, a ranx object or an iterable of tuples. Got"
        f" {type(obj).__name__} instead."
    )


def as_table(obj: object, kind: str, *, name: str | None = None) -> pa.Table:
    """Convert ``obj`` to the canonical table of ``kind``, checked as a file of it would be.

    Parameters
    ----------
    obj : pyarrow.Table, pandas.DataFrame, mapping, ranx object or iterable of tuples
        See the module notes for the accepted shapes and column names. Mappings are
        ``{qid: {docid: value}}`` for runs and qrels, ``{qid: pool_size}`` for pools and
        ``{chunk_id: doc_id}`` for units.
    kind : {'run', 'qrels', 'units', 'pools', 'candidates', 'harness'}
        What ``obj`` holds.
    name : str, optional
        What messages call the object (default: ``kind``).

    Returns
    -------
    pyarrow.Table
        Conforming to :data:`evalvalidity.io.tables.KIND_SCHEMAS` ``[kind]``; ``line`` is null.

    Raises
    ------
    InputDataError
        A row breaks the kind's rules, a key repeats, a column is missing or ambiguous.
    ParameterError
        ``kind`` or ``name`` is not one of the accepted values, or ``obj`` has no accepted type.

    Examples
    --------
    >>> as_table({"q1": 100, "q2": 50}, "pools").column("pool_size").to_pylist()
    [100, 50]
    >>> as_table(pa.table({"chunk": ["a#0"], "parent_id": ["a"]}), "units").column_names
    ['chunk_id', 'doc_id', 'line']
    >>> as_table([("q1", 0)], "pools", name="pools.py")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.InputDataError: pools.py: item 0 (query 'q1') has pool size 0; expected an integer >= 1
    """
    return _convert(obj, kind, name, "as_table")


def _convert(obj: object, kind: object, name: object, caller: str) -> pa.Table:
    if not isinstance(kind, str) or kind not in _FIELDS:
        shown = ", ".join(repr(k) for k in _FIELDS)
        raise ParameterError(
            f"The 'kind' parameter of {caller} must be one of {shown}. Got {kind!r} instead."
        )
    if name is None:
        name = kind
    if not isinstance(name, str) or not name:
        raise ParameterError(
            f"The 'name' parameter of {caller} must be a non-empty str. Got {name!r} instead."
        )
    return _build(_source(obj, kind, name, caller), kind, name)


def as_run(obj: object, *, name: str = "run") -> pa.Table:
    """Convert a run held in memory to the canonical run table.

    Parameters
    ----------
    obj : pyarrow.Table, pandas.DataFrame, mapping, ranx ``Run`` or iterable of tuples
        ``{qid: {docid: score}}`` (pytrec_eval, ranx), a ranx ``Run``, ir_measures
        ``ScoredDoc`` tuples, ``(qid, docid, score)`` triples, or a table or DataFrame with
        query ID, document ID and score (or rank) columns (module notes).
    name : str
        What messages call the run.

    Returns
    -------
    pyarrow.Table
        :data:`~evalvalidity.io.tables.RUN_SCHEMA`: ``qid`` and ``docid`` text, ``score`` a
        finite float, ``rank`` the given rank or null, ``line`` null.

    Raises
    ------
    InputDataError
        An empty ID, a score that is not a finite number, a repeated (qid, docid) pair, a
        missing or ambiguous column; the message names the row and what was expected.
    ParameterError
        ``name`` is not a non-empty str, or ``obj`` has no accepted type.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"qid": [1, 1], "docno": ["d1", "d2"], "score": [2, 1]})
    >>> run = as_run(frame)
    >>> run.column("qid").to_pylist(), run.column("score").to_pylist()
    (['1', '1'], [2.0, 1.0])
    >>> as_run({"3": {"d7": float("nan")}})
    Traceback (most recent call last):
    ...
    evalvalidity.errors.InputDataError: run: query '3' document 'd7' has score nan; expected a finite number
    """
    return _convert(obj, "run", name, "as_run")


def as_qrels(obj: object, *, name: str = "qrels") -> pa.Table:
    """Convert judgements held in memory to the canonical qrels table.

    Parameters
    ----------
    obj : pyarrow.Table, pandas.DataFrame, mapping, ranx ``Qrels`` or iterable of tuples
        ``{qid: {docid: grade}}`` (pytrec_eval, ranx), a ranx ``Qrels``, ir_measures ``Qrel``
        tuples, ``(qid, docid, grade)`` triples, or a table or DataFrame with query ID,
        document ID and grade columns (module notes).
    name : str
        What messages call the judgements.

    Returns
    -------
    pyarrow.Table
        :data:`~evalvalidity.io.tables.QRELS_SCHEMA`: ``rel`` an integer grade (<= 0 is not
        relevant), ``line`` null.

    Raises
    ------
    InputDataError
        An empty ID, a grade that is not an integer, a repeated (qid, docid) pair, a missing
        or ambiguous column.
    ParameterError
        ``name`` is not a non-empty str, or ``obj`` has no accepted type.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"],
    ...                       "relevance": [2, 0]})
    >>> as_qrels(frame).column("rel").to_pylist()
    [2, 0]
    >>> as_qrels([("q1", "d1", 1), ("q1", "d1", 1)])
    Traceback (most recent call last):
    ...
    evalvalidity.errors.InputDataError: qrels: query 'q1' document 'd1' appears 2 times (item 0, item 1); expected each (query ID, document ID) pair once
    """
    return _convert(obj, "qrels", name, "as_qrels")
