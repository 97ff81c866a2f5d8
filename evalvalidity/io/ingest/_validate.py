"""Row checks (one batch at a time, in DuckDB) and table checks (duplicates, conflicts).

Row checks turn the raw fields of a batch into typed columns and give every row a code: 0 kept,
-1 skipped (a trec_eval summary line), > 0 rejected with a reason. Reasons are formatted in
Python only for the rows that are kept for display, so a file with millions of bad rows costs
no more than one with a few.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from evalvalidity.io._arrow import int64
from evalvalidity.io._compute import pc
from evalvalidity.io.ingest._result import MAX_KEPT_REJECTED, RejectedRow
from evalvalidity.io.ingest._spec import Layout

if TYPE_CHECKING:
    import duckdb

_TYPE_SQL = {"id": "VARCHAR", "float": "DOUBLE", "int": "BIGINT", "posint": "BIGINT"}


@dataclass
class RejectLog:
    """Counts rejected rows and keeps the first :data:`MAX_KEPT_REJECTED` of them."""

    count: int = 0
    rows: list[RejectedRow] = field(default_factory=list)

    @property
    def room(self) -> int:
        """How many more rows are kept for display."""
        return MAX_KEPT_REJECTED - len(self.rows)

    def add(self, row: RejectedRow) -> None:
        """Record one rejected row."""
        self.count += 1
        if self.room > 0:
            self.rows.append(row)

    def extend(self, count: int, rows: Iterable[RejectedRow]) -> None:
        """Record ``count`` rejected rows, of which ``rows`` are the first ones."""
        self.count += count
        for row in rows:
            if self.room <= 0:
                break
            self.rows.append(row)

    def sorted_rows(self) -> tuple[RejectedRow, ...]:
        """The kept rows in line order."""
        return tuple(sorted(self.rows, key=lambda r: (r.line is None, r.line or 0)))


@dataclass(frozen=True)
class RowChecks:
    """The SQL that checks and converts one batch, and how to word each code."""

    sql: str
    messages: tuple[str, ...]  # index = code; "{bad}" and "{n}" are filled in
    output: tuple[str, ...]


def not_text(value: str) -> str | None:
    r"""Why a string from a JSON file is not text (it escapes a lone surrogate), or None.

    >>> not_text("q1") is None
    True
    >>> import json
    >>> print(not_text(json.loads('"d\\ud800"')))
    the string "d\ud800" escapes a lone surrogate (U+D800), which is not a character
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        import json  # a JSON reader's error only: json is not loaded at start

        return (
            f"the string {json.dumps(value)[:40]} escapes a lone surrogate"
            f" (U+{ord(value[exc.start]):04X}), which is not a character"
        )
    return None


#: The longest value a message quotes whole.
MAX_EXCERPT = 80


class Excerpt:
    """A value as a message quotes it (``{bad!r}``): at most :data:`MAX_EXCERPT` characters.

    A longer value shows its start, an ellipsis and its length.

    >>> repr(Excerpt("abc"))
    "'abc'"
    >>> print(repr(Excerpt("1234567890" * 500)))  # doctest: +ELLIPSIS
    '12345678901234567890...1234567890'... (5,000 characters)
    """

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        value = self.value
        if isinstance(value, str) and len(value) > MAX_EXCERPT:
            return f"{value[:MAX_EXCERPT]!r}... ({len(value):,} characters)"
        return repr(value)


#: The largest relevance grade, in magnitude: sums of grades over a query then fit 64 bits
#: (a grade of 2**63 - 1 was read, then overflowed while scoring).
MAX_GRADE = 2**31 - 1


def row_checks(layout: Layout, types: dict[int, str] | None = None) -> RowChecks:
    """Build the checks of ``layout``; ``types`` gives typed (non-string) input columns.

    The input relation ``batch`` has ``line``, ``l`` (the raw line, may be null), ``err`` (a
    structural error, or null), ``n`` (how many fields the line had) and ``c{i}`` for every
    kept field ``i``. ``types[i]`` is ``'int'`` or ``'float'`` when column ``c{i}`` already
    holds numbers (Parquet).
    """
    types = types or {}
    # the description may come from the file's header: its braces are text, not fields
    description = layout.description.replace("{", "{{").replace("}", "}}")
    messages = ["", "{err}", f"expected {{k}} field{{s}} ({description}), got {{n}}"]
    wrong_count = f"n {'<' if layout.extra_fields else '<>'} {layout.n_fields}"
    arms = ["WHEN err IS NOT NULL THEN 1", f"WHEN {wrong_count} THEN 2"]
    bads = ["WHEN err IS NOT NULL THEN NULL", f"WHEN {wrong_count} THEN NULL"]
    outputs: list[str] = []
    names: list[str] = []
    if layout.skip_all_rows:
        qid = next(i for i, f in enumerate(layout.fields) if f is not None and f.name == "qid")
        arms.append(f"WHEN c{qid} = 'all' THEN -1")
        bads.append(f"WHEN c{qid} = 'all' THEN NULL")
    for i, spec in enumerate(layout.fields):
        if spec is None:
            continue
        column = f"c{i}"
        typed = types.get(i)
        text = f"CAST({column} AS VARCHAR)"
        label = spec.label

        def arm(condition: str, message: str, column: str = column, text: str = text) -> None:
            messages.append(message)
            arms.append(f"WHEN {condition} THEN {len(messages) - 1}")
            bads.append(f"WHEN {condition} THEN {text}")

        article = "an" if label[0] in "aeiou" else "a"
        if spec.type == "id":
            arm(
                f"{column} IS NULL OR {text} = ''",
                f"expected {article} {label}, found an empty field",
            )
            value = text
        elif spec.type == "float":
            if typed in ("int", "float"):
                arm(f"{column} IS NULL", f"expected a numeric {label}, found an empty field")
                value = f"TRY_CAST({column} AS DOUBLE)"
            else:
                arm(
                    f"{column} IS NULL OR {column} = ''",
                    f"expected a numeric {label}, found an empty field",
                )
                # DuckDB's cast also takes '1_000' and surrounding spaces; FLOAT_PATTERN does
                # not, so those are ruled out by hand (a regex over every row costs seconds).
                arm(
                    f"TRY_CAST({column} AS DOUBLE) IS NULL OR contains({column}, '_')"
                    f" OR contains({column}, ' ')",
                    f"expected a numeric {label}, found {{bad!r}}",
                )
                value = f"TRY_CAST({column} AS DOUBLE)"
            arm(f"NOT isfinite({value})", f"expected a finite {label}, found {{bad!r}}")
            value = f"CASE WHEN __code = 0 THEN {value} END"
        else:
            if typed == "int":
                arm(f"{column} IS NULL", f"expected an integer {label}, found an empty field")
                # an unsigned 64-bit value above 2**63 - 1 does not fit
                arm(
                    f"TRY_CAST({column} AS BIGINT) IS NULL",
                    f"expected an integer {label}, found {{bad!r}}",
                )
                value = f"TRY_CAST({column} AS BIGINT)"
            elif typed == "float":
                arm(
                    f"{column} IS NULL OR NOT isfinite({column}) OR {column} <> trunc({column})"
                    f" OR abs({column}) > 9e18",
                    f"expected an integer {label}, found {{bad!r}}",
                )
                value = f"TRY_CAST({column} AS BIGINT)"
            elif spec.name == "rank":
                # trec_eval never reads the rank column: any text is accepted, and a rank that
                # is not a decimal integer is stored as null (ties='given' then refuses it)
                integer = (
                    f"TRY_CAST({column} AS BIGINT) IS NOT NULL"
                    f" AND TRY_CAST({column} AS DOUBLE) = TRY_CAST({column} AS BIGINT)"
                    f" AND NOT contains({column}, '_') AND NOT contains({column}, 'e')"
                    f" AND NOT contains({column}, 'E')"
                )
                value = f"CASE WHEN {integer} THEN TRY_CAST({column} AS BIGINT) END"
            else:
                arm(
                    f"{column} IS NULL OR {column} = ''",
                    f"expected an integer {label}, found an empty field",
                )
                # DuckDB's cast to BIGINT rounds '1.5' and takes '0x10', '1e3' and '1_000';
                # INT_PATTERN takes none of them: compare with the DOUBLE cast instead.
                arm(
                    f"TRY_CAST({column} AS BIGINT) IS NULL"
                    f" OR TRY_CAST({column} AS DOUBLE) IS DISTINCT FROM TRY_CAST({column} AS BIGINT)"
                    f" OR contains({column}, '_') OR contains({column}, 'e') OR contains({column}, 'E')",
                    f"expected an integer {label}, found {{bad!r}}",
                )
                value = f"TRY_CAST({column} AS BIGINT)"
            if spec.type == "posint":
                arm(f"{value} < 1", f"expected a positive integer {label}, found {{bad!r}}")
            if spec.name == "rel":
                arm(
                    f"{value} < -{MAX_GRADE} OR {value} > {MAX_GRADE}",
                    f"expected a {label} between -{MAX_GRADE} and {MAX_GRADE}, found {{bad!r}}",
                )
            value = f"CASE WHEN __code = 0 THEN {value} END"
        outputs.append(f"{value} AS {spec.name}")
        names.append(spec.name)
    code = "CASE " + " ".join(arms) + " ELSE 0 END"
    bad = "CASE " + " ".join(bads) + " END"
    sql = (
        f"SELECT line, {', '.join(outputs)}, __code, __bad, n,"
        " CASE WHEN __code > 0 THEN l END AS raw, err"
        f" FROM (SELECT *, {code} AS __code, {bad} AS __bad FROM batch)"
    )
    return RowChecks(sql, tuple(messages), tuple(names))


def apply_row_checks(
    con: duckdb.DuckDBPyConnection,
    checks: RowChecks,
    layout: Layout,
    batch: pa.Table,
    log: RejectLog,
    *,
    sql: str | None = None,
) -> tuple[pa.Table, int]:
    """Check one batch: returns the kept rows (typed, with ``line``) and how many were skipped.

    ``sql`` replaces ``checks.sql`` (the text reader wraps it around its field splitting).
    """
    con.register("batch", batch)
    try:
        result = con.sql(sql or checks.sql).to_arrow_table()
    finally:
        con.unregister("batch")
    code = result.column("__code")
    bad_mask = pc.greater(code, 0)
    n_bad = pc.sum(bad_mask).as_py() or 0
    n_skipped = pc.sum(pc.equal(code, -1)).as_py() or 0
    if n_bad:
        shown = result.filter(bad_mask).slice(0, max(log.room, 0))
        rows = []
        for rec in shown.select(["line", "__code", "__bad", "n", "raw", "err"]).to_pylist():
            message = checks.messages[rec["__code"]]
            reason = message.format(
                bad=Excerpt(rec["__bad"]),
                err=rec["err"],
                n=rec["n"],
                k=layout.n_fields,
                s="" if layout.n_fields == 1 else "s",
            )
            rows.append(RejectedRow(rec["line"], reason, rec["raw"]))
        log.extend(n_bad, rows)
    if n_bad or n_skipped:
        result = result.filter(pc.equal(code, 0))
    return result.select(["line", *checks.output]), n_skipped


# -- table checks ----------------------------------------------------------------------------
#: kind -> (key columns, value column or None, policy): "reject" rejects every repeat of a
#: key; "merge" keeps the first of identical repeats and rejects every row of a key whose
#: repeats disagree.
_TABLE_RULES: dict[str, tuple[tuple[str, ...], str | None, str]] = {
    "run": (("qid", "docid"), None, "reject"),
    "qrels": (("qid", "docid"), "rel", "merge"),
    "pools": (("qid",), "pool_size", "merge"),
    "units": (("chunk_id",), "doc_id", "merge"),
    "candidates": (("qid", "docid"), None, "merge"),
    "harness": (("seed", "measure", "qid"), "value", "merge"),
    "corpus-size": ((), None, "single"),
}

_WHAT = {
    "qrels": "judgements",
    "pools": "pool sizes",
    "units": "document IDs",
    "harness": "values",
}


@dataclass(frozen=True)
class TableCheckResult:
    """Lines to drop (merged duplicates and rejected rows), and what they were."""

    drop_lines: pa.Array
    n_duplicates: int


#: Up to this many rows, :func:`repeated_keys` compares keys in Python: a set of a few
#: thousand tuples costs less than a DuckDB statement (measured on the toy run's 2,000 lines:
#: 0.7 ms against 3 ms to register the table and hash it; even at 5,000 rows).
SMALL_TABLE_ROWS = 5_000


def repeated_keys(kind: str, rows: pa.Table) -> bool | None:
    """Whether a key of :func:`table_checks` repeats in ``rows``, compared in Python.

    None when ``rows`` has more than :data:`SMALL_TABLE_ROWS` rows, or for a kind whose rule
    is not about keys: :func:`table_checks` then asks DuckDB.

    >>> import pyarrow as pa
    >>> repeated_keys("run", pa.table({"qid": ["1", "1"], "docid": ["a", "b"]}))
    False
    >>> repeated_keys("qrels", pa.table({"qid": ["1", "1"], "docid": ["a", "a"]}))
    True
    """
    key, _, policy = _TABLE_RULES[kind]
    if policy == "single" or rows.num_rows > SMALL_TABLE_ROWS:
        return None
    keyed = zip(*(rows.column(name).to_pylist() for name in key), strict=True)
    return len(set(keyed)) < int(rows.num_rows)


def _describe_key(kind: str, key: tuple[str, ...], values: dict[str, object]) -> str:
    parts = [f"{name} {values[name]!r}" for name in key if values.get(name) is not None]
    return ", ".join(parts)


def table_checks(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    log: RejectLog,
    unit: str = "line",
    *,
    in_memory: bool = True,
    repeated: bool | None = None,
) -> TableCheckResult:
    """Find repeated keys in the relation ``t`` (``line`` plus the kind's columns).

    ``repeated`` is what :func:`repeated_keys` found (None: not looked at): False returns at
    once, without a query (``t`` need not exist); True goes straight to the exact pass.
    """
    key, value, policy = _TABLE_RULES[kind]
    empty = pa.nulls(0, pa.int64())
    if policy == "single":
        rows = con.execute("SELECT line FROM t ORDER BY line").fetchall()
        if len(rows) <= 1:
            return TableCheckResult(empty, 0)
        first = rows[0][0]
        extra = [r[0] for r in rows[1:]]
        log.extend(
            len(extra),
            (
                RejectedRow(
                    line, f"a corpus size is a single number; {unit} {first} already gave one"
                )
                for line in extra[: max(log.room, 0)]
            ),
        )
        return TableCheckResult(pa.array(extra, pa.int64()), 0)
    keys = ", ".join(key)
    # A cheap first pass over one 64-bit hash per row; the exact pass runs only when some hash
    # repeats (a repeated key, or rarely a collision that the exact pass then clears). In
    # memory, sorting the hashes with numpy beats DuckDB's hash aggregate over millions of
    # distinct keys (measured: 0.6 s against 2 s for 7M rows); out of core, DuckDB spills.
    if repeated is None and in_memory:
        hashes = con.sql(f"SELECT hash({keys}) AS h FROM t").fetchnumpy()["h"]
        hashes.sort()
        repeated = bool(np.any(hashes[1:] == hashes[:-1]))
        del hashes
    elif repeated is None:
        repeated = bool(
            con.execute(
                f"SELECT count(*) FROM (SELECT hash({keys}) AS h FROM t GROUP BY h"
                " HAVING count(*) > 1)"
            ).fetchall()[0][0]
        )
    if not repeated:
        return TableCheckResult(empty, 0)
    join = " AND ".join(f"t.{k} IS NOT DISTINCT FROM g.{k}" for k in key)
    value_sql = value if value is not None else "NULL"
    # the words of the listing are parameters, never spliced into the SQL text
    rows_sql = (
        f"WITH g AS (SELECT {keys}, min(line) AS first_line, count(*) AS n,"
        f" count(DISTINCT {value_sql}) AS n_values,"
        f" string_agg($value_word || CAST({value_sql} AS VARCHAR) || $unit_word || line, ', '"
        " ORDER BY line)"
        f" AS listing FROM t GROUP BY {keys} HAVING count(*) > 1)"
        f" SELECT t.line, {', '.join('t.' + k for k in key)}, g.first_line, g.n_values, g.listing"
        f" FROM t JOIN g ON {join} ORDER BY t.line"
    )
    words = {"value_word": f"{value} ", "unit_word": f" on {unit} "}
    result = con.sql(rows_sql, params=words).to_arrow_table()
    first = pc.equal(result.column("line"), result.column("first_line"))
    conflict = pc.greater(result.column("n_values"), int64(1))  # pa.scalar imports pandas
    if policy == "reject":
        rejected = result.filter(pc.invert(first))
        duplicates = result.slice(0, 0)
    else:
        rejected = result.filter(conflict)
        duplicates = result.filter(pc.and_(pc.invert(conflict), pc.invert(first)))
    shown = rejected.slice(0, max(log.room, 0)).to_pylist()
    reasons = []
    for rec in shown:
        where = _describe_key(kind, key, rec)
        if policy == "reject":
            reason = f"duplicate ({where}): already ranked on {unit} {rec['first_line']}"
        else:
            listing = rec["listing"]
            if len(listing) > 200:
                listing = listing[:200] + "..."
            reason = f"conflicting {_WHAT[kind]} for ({where}): {listing}"
        reasons.append(RejectedRow(rec["line"], reason))
    log.extend(rejected.num_rows, reasons)
    # combine_chunks of a column without chunks imports pandas: concatenate the chunks
    parts = rejected.column("line").chunks + duplicates.column("line").chunks
    drop = pa.concat_arrays(parts) if parts else pa.nulls(0, pa.int64())
    return TableCheckResult(drop, duplicates.num_rows)
