"""Fuzzing every reader: malformed input gives a canonical table or an EvalValidityError.

Valid seed files of every kind in every format (and their gzip) are mutated by hypothesis: bit
flips, truncation, inserted control characters and random bytes, huge fields, deep nesting,
NaN/inf, mixed delimiters, duplicated and deleted slices, and the gzip stream itself corrupted.
Two more families are built from scratch: Parquet files with odd column types and JSON of
arbitrary shape. The property, for :func:`evalvalidity.io.ingest.read`: it returns a table that
conforms to the kind's schema with valid values, or raises an
:class:`~evalvalidity.errors.EvalValidityError`; nothing else escapes (no pyarrow, DuckDB,
Unicode, recursion or memory error) and nothing is printed as an unraisable exception (pytest
turns those into errors). For :meth:`Workspace.add`: a failing input leaves every byte of the
workspace as it was.

The normal suite runs a few hundred derandomized examples; ``-m slow`` runs more than 10,000.
The faults these tests found are pinned as regression examples at the end.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evalvalidity.errors import EvalValidityError
from evalvalidity.io.ingest import KINDS, Limits, read
from evalvalidity.io.ingest._spec import SCHEMAS
from evalvalidity.io.workspace import Workspace


def _parquet(columns: dict[str, list[object]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def _jsonl(records: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


#: (kind, format) -> a small valid file.
SEEDS: dict[tuple[str, str], bytes] = {
    ("run", "trec"): b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 0.5 bm25\n",
    ("run", "csv"): b"qid,docid,rank,score\nq1,d1,1,2.5\nq1,d2,2,1.5\nq2,d1,1,0.5\n",
    ("run", "tsv"): b"query_id\tdoc_id\tscore\nq1\td1\t2.5\nq1\td2\t1.5\n",
    ("run", "jsonl"): _jsonl(
        [
            {"qid": "q1", "docid": "d1", "score": 2.5, "rank": 1},
            {"qid": "q1", "docid": "d2", "score": 1.5, "rank": 2},
        ]
    ),
    ("run", "json"): b'{"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d1": 0.5}}',
    ("run", "parquet"): _parquet(
        {"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [2.5, 1.5], "rank": [1, 2]}
    ),
    ("qrels", "trec"): b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n",
    ("qrels", "csv"): b"qid,docid,relevance\nq1,d1,1\nq1,d2,0\n",
    ("qrels", "tsv"): b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n",
    ("qrels", "jsonl"): _jsonl([{"query_id": "q1", "doc_id": "d1", "rel": 1}]),
    ("qrels", "json"): b'{"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}',
    ("qrels", "parquet"): _parquet({"qid": ["q1", "q2"], "docid": ["d1", "d3"], "rel": [1, 2]}),
    ("pools", "trec"): b"q1 100\nq2 50\n",
    ("pools", "csv"): b"qid,pool_size\nq1,100\nq2,50\n",
    ("pools", "tsv"): b"qid\tpool_size\nq1\t100\n",
    ("pools", "jsonl"): _jsonl([{"qid": "q1", "pool_size": 100}, {"qid": "q2", "pool_size": 5}]),
    ("pools", "parquet"): _parquet({"qid": ["q1"], "pool_size": [100]}),
    ("candidates", "trec"): b"q1 d1\nq1 d2\nq2 d1\n",
    ("candidates", "csv"): b"qid,docid\nq1,d1\nq1,d2\n",
    ("candidates", "tsv"): b"qid\tdocid\nq1\td1\n",
    ("candidates", "jsonl"): _jsonl([{"qid": "q1", "docid": "d1"}, {"qid": "q1", "docid": "d2"}]),
    ("candidates", "parquet"): _parquet({"qid": ["q1", "q1"], "docid": ["d1", "d2"]}),
    ("units", "trec"): b"d1#0 d1\nd1#1 d1\nd2#0 d2\n",
    ("units", "csv"): b"chunk_id,doc_id\nd1#0,d1\nd1#1,d1\n",
    ("units", "tsv"): b"chunk_id\tdoc_id\nd1#0\td1\n",
    ("units", "jsonl"): _jsonl([{"chunk_id": "d1#0", "doc_id": "d1"}]),
    ("units", "parquet"): _parquet({"chunk_id": ["d1#0", "d1#1"], "doc_id": ["d1", "d1"]}),
    ("corpus-size", "trec"): b"1400\n",
    ("corpus-size", "csv"): b"corpus_size,note\n1400,x\n",
    ("corpus-size", "jsonl"): _jsonl([{"corpus_size": 1400}]),
    ("corpus-size", "parquet"): _parquet({"corpus_size": [1400]}),
    ("harness", "trec_eval"): b"P_10\tq1\t0.2000\nP_10\tq2\t0.1000\nP_10\tall\t0.1500\n",
    ("harness", "csv"): b"seed,qid,value\n1,q1,0.5\n1,q2,0.25\n2,q1,0.75\n",
    ("harness", "tsv"): b"qid\tvalue\nq1\t0.5\nq2\t0.25\n",
    ("harness", "jsonl"): _jsonl([{"seed": 1, "qid": "q1", "measure": "P_10", "value": 0.2}]),
    ("harness", "parquet"): _parquet({"qid": ["q1", "q2"], "value": [0.5, 0.25]}),
}

TOKENS = [
    b",",
    b"\t",
    b" ",
    b'"',
    b"\n",
    b"\r",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\\",
    b"nan",
    b"NaN",
    b"inf",
    b"-Infinity",
    b"1e309",
    b"-0",
    b"0x10",
    b"1_000",
    b"9" * 5000,
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"all",
    b"Q0",
    b'"\\u0000"',
    b"null",
    b"true",
    b'{"qid": {"d": 1}}',
    b"'; DROP TABLE t; --",
    b"<script>alert(1)</script>",
    b"{bad}",
    b"{0!r:>{1}}",
    b"%s%n",
    b"PAR1",
    b"\x1f\x8b",
    b"#",  # trec_eval's comment lines
    b"\n# a comment\n",
    b" extra field",  # fields after a run's tag
    b"1.5",  # a rank that is no integer
]
CONTROL = [bytes([c]) for c in (*range(32), 127)]

#: Small limits, so that every limit is hit by small inputs too.
TIGHT = Limits(
    max_file_bytes=1 << 20,
    max_text_bytes=1 << 18,
    max_compression_ratio=4.0,
    ratio_grace_bytes=4096,
    max_line_bytes=512,
    max_json_bytes=4096,
    max_json_depth=4,
    memory_limit="256MB",
)

position = st.floats(0, 1)
mutation = st.one_of(
    st.tuples(st.just("flip"), position, st.integers(0, 7)),
    st.tuples(st.just("truncate"), position),
    st.tuples(st.just("insert"), position, st.sampled_from(CONTROL)),
    st.tuples(st.just("insert"), position, st.binary(min_size=1, max_size=48)),
    st.tuples(st.just("insert"), position, st.sampled_from(TOKENS)),
    st.tuples(
        st.just("huge"),
        position,
        st.sampled_from([b"x", b"9", b" ", b","]),
        st.sampled_from([600, 5000, 70_000, (1 << 20) + 10]),
    ),
    st.tuples(
        st.just("nest"),
        position,
        st.sampled_from([b"[", b'{"a":', b"{"]),
        st.sampled_from([5, 70, 1500, 100_000]),
    ),
    st.tuples(
        st.just("huge"),  # blank lines, beyond what detection samples
        position,
        st.sampled_from([b"\n", b"\r\n", b" \n", b"\r"]),
        st.sampled_from([1000, 300_000]),
    ),
    st.tuples(st.just("repeat"), position, st.floats(0, 0.5), st.integers(2, 50)),
    st.tuples(st.just("delete"), position, st.floats(0, 0.5)),
    st.tuples(
        st.just("swap"),
        st.sampled_from([b",", b"\t", b" ", b"\n"]),
        st.sampled_from([b",", b"\t", b" ", b";", b"\r", b"  "]),
        st.integers(1, 3),
    ),
)


MAX_MUTATED_BYTES = 3 << 20


def _at(data: bytes | bytearray, where: float) -> int:
    return min(int(where * (len(data) + 1)), len(data))


def mutate(data: bytes, ops: list[tuple]) -> bytes:
    """Apply the mutations in order."""
    out = bytearray(data)
    for op in ops:
        name = op[0]
        if name == "flip" and out:
            i = min(_at(out, op[1]), len(out) - 1)
            out[i] ^= 1 << op[2]
        elif name == "truncate":
            del out[_at(out, op[1]) :]
        elif name == "insert":
            i = _at(out, op[1])
            out[i:i] = op[2]
        elif name == "huge":
            i = _at(out, op[1])
            out[i:i] = op[2] * op[3]
        elif name == "nest":
            i = _at(out, op[1])
            out[i:i] = op[2] * op[3]
        elif name == "repeat":
            i = _at(out, op[1])
            j = min(len(out), i + int(op[2] * len(out)) + 1)
            out[i:j] = bytes(out[i:j]) * op[3]
        elif name == "delete":
            i = _at(out, op[1])
            del out[i : i + int(op[2] * len(out)) + 1]
        elif name == "swap":
            old, new, every = op[1], op[2], op[3]
            pieces = bytes(out).split(old)
            joined = pieces[0]
            for k, piece in enumerate(pieces[1:]):
                joined += (new if k % every == 0 else old) + piece
            out = bytearray(joined)
        del out[MAX_MUTATED_BYTES:]  # repeated repeats would grow without bound
    return bytes(out)


@st.composite
def mutated_files(draw: st.DrawFn) -> tuple[bytes, str | None, str | None, bool, Limits | None]:
    """A seed file, maybe gzipped, mutated; the kind and format maybe given."""
    seed_kind, seed_format = draw(st.sampled_from(sorted(SEEDS)))
    data = SEEDS[(seed_kind, seed_format)]
    ops = draw(st.lists(mutation, min_size=1, max_size=4))
    how = draw(st.sampled_from(["plain", "plain", "gzip-after", "gzip-before", "gzip-both"]))
    if how == "plain":
        data = mutate(data, ops)
    elif how == "gzip-after":  # a valid gzip of a mutated file
        data = gzip.compress(mutate(data, ops), mtime=0)
    elif how == "gzip-before":  # a corrupted gzip stream
        data = mutate(gzip.compress(data, mtime=0), ops)
    else:
        data = mutate(gzip.compress(mutate(data, ops[:1]), mtime=0), ops[1:])
    kind = draw(st.one_of(st.none(), st.just(seed_kind), st.sampled_from(KINDS)))
    fmt = draw(
        st.one_of(
            st.none(),
            st.none(),
            st.just(seed_format),
            st.sampled_from(["trec", "trec_eval", "csv", "tsv", "jsonl", "json", "parquet"]),
        )
    )
    return data, kind, fmt, draw(st.booleans()), draw(st.sampled_from([None, None, TIGHT]))


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["", "all", "\x00", "\u2028", "'; --", "{x}"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=25,
)
record_keys = st.sampled_from(
    [
        "qid",
        "query_id",
        "docid",
        "doc_id",
        "score",
        "rank",
        "rel",
        "pool_size",
        "chunk_id",
        "corpus_size",
        "seed",
        "measure",
        "value",
        "x",
    ]
)


@st.composite
def json_files(draw: st.DrawFn) -> tuple[bytes, str | None, str | None, bool, Limits | None]:
    """JSON of any shape: a document {qid: {docid: value}} or JSON Lines records."""
    if draw(st.booleans()):
        document = draw(
            st.dictionaries(
                st.text(max_size=6),
                st.one_of(
                    st.dictionaries(st.text(max_size=6), json_values, max_size=5), json_values
                ),
                min_size=1,
                max_size=5,
            )
        )
        text = json.dumps(document)  # NaN and Infinity as JavaScript spells them
        fmt = draw(st.sampled_from([None, "json"]))
    else:
        records = draw(
            st.lists(
                st.one_of(
                    st.dictionaries(record_keys, json_values, min_size=1, max_size=5), json_values
                ),
                min_size=1,
                max_size=6,
            )
        )
        text = "\n".join(json.dumps(r) for r in records)
        fmt = draw(st.sampled_from([None, "jsonl"]))
    kind = draw(st.one_of(st.none(), st.sampled_from(KINDS)))
    return text.encode(), kind, fmt, draw(st.booleans()), draw(st.sampled_from([None, TIGHT]))


ARROW_TYPES = [
    pa.int8(),
    pa.uint64(),
    pa.int64(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.large_string(),
    pa.binary(),
    pa.bool_(),
    pa.decimal128(20, 3),
    pa.decimal256(50, 2),
    pa.timestamp("ms"),
    pa.null(),
    pa.list_(pa.int64()),
    pa.struct([("a", pa.int64())]),
    pa.dictionary(pa.int32(), pa.string()),
]
COLUMN_NAMES = [
    "qid",
    "docid",
    "score",
    "rank",
    "rel",
    "pool_size",
    "chunk_id",
    "doc_id",
    "corpus_size",
    "value",
    "seed",
    "measure",
    "query-id",
    "corpus-id",
    "x",
]


def _column(arrow_type: pa.DataType, values: list[object]) -> pa.Array:
    n = len(values)
    if pa.types.is_null(arrow_type):
        return pa.nulls(n)
    if pa.types.is_integer(arrow_type):
        bits = arrow_type.bit_width
        lo, hi = (
            (0, 2**bits - 1)
            if pa.types.is_unsigned_integer(arrow_type)
            else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        )
        return pa.array(
            [
                None if v is None else lo + zlib.crc32(str(v).encode()) % (hi - lo + 1)
                for v in values
            ],
            arrow_type,
        )
    if pa.types.is_floating(arrow_type):
        return pa.array([v if isinstance(v, float) else None for v in values], arrow_type)
    if pa.types.is_decimal(arrow_type):
        from decimal import Decimal

        return pa.array([None if v is None else Decimal(len(str(v))) for v in values], arrow_type)
    if pa.types.is_binary(arrow_type):
        return pa.array(
            [None if v is None else str(v).encode() + b"\xff" * (len(str(v)) % 2) for v in values],
            arrow_type,
        )
    if pa.types.is_boolean(arrow_type):
        return pa.array([None if v is None else bool(len(str(v)) % 2) for v in values])
    if pa.types.is_timestamp(arrow_type):
        return pa.array([None if v is None else len(str(v)) for v in values], pa.int64()).cast(
            arrow_type
        )
    if pa.types.is_list(arrow_type):
        return pa.array([None if v is None else [len(str(v))] for v in values], arrow_type)
    if pa.types.is_struct(arrow_type):
        return pa.array([None if v is None else {"a": len(str(v))} for v in values], arrow_type)
    if pa.types.is_dictionary(arrow_type):
        return pa.array(
            [None if v is None else str(v) for v in values], pa.string()
        ).dictionary_encode()
    return pa.array([None if v is None else str(v) for v in values], arrow_type)


@st.composite
def parquet_files(draw: st.DrawFn) -> tuple[bytes, str | None, str | None, bool, Limits | None]:
    """Parquet files whose columns have usual names but any type (repeated names too)."""
    n_rows = draw(st.integers(0, 6))
    names = draw(st.lists(st.sampled_from(COLUMN_NAMES), min_size=1, max_size=5))
    values = st.one_of(st.none(), st.floats(), st.text(max_size=6), st.integers(-5, 5))
    arrays = [
        _column(
            draw(st.sampled_from(ARROW_TYPES)),
            draw(st.lists(values, min_size=n_rows, max_size=n_rows)),
        )
        for _ in names
    ]
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names=names), sink)
    data = sink.getvalue()
    if draw(st.booleans()):
        data = gzip.compress(data, mtime=0)
    kind = draw(st.one_of(st.none(), st.sampled_from(KINDS)))
    return data, kind, draw(st.sampled_from([None, "parquet"])), draw(st.booleans()), None


any_bytes = st.tuples(
    st.binary(max_size=400),
    st.one_of(st.none(), st.sampled_from(KINDS)),
    st.none(),
    st.booleans(),
    st.none(),
)

_REQUIRED = {"line", "rank", "seed", "measure"}


def check_read(case: tuple[bytes, str | None, str | None, bool, Limits | None]) -> str:
    """The property: a conforming table with valid values, or an EvalValidityError."""
    data, kind, fmt, drop, limits = case
    try:
        result = read(
            data,
            kind=kind,
            format=fmt,
            display_name="fuzz.input",
            drop_bad_rows=drop,
            limits=limits,
        )
    except EvalValidityError as exc:
        assert (
            str(exc).startswith("fuzz.input") or "parameter" in str(exc) or "Unknown" in str(exc)
        ), str(exc)
        return type(exc).__name__
    table = result.table
    assert table.schema == SCHEMAS[result.kind]
    assert table.num_rows >= 1
    for field in table.schema:
        column = table.column(field.name)
        if field.name not in _REQUIRED:
            assert column.null_count == 0, field.name
        values = column.to_pylist()
        if pa.types.is_string(field.type) and field.name not in _REQUIRED:
            assert all(values), f"empty {field.name}"
        if pa.types.is_floating(field.type):
            assert all(v is None or math.isfinite(v) for v in values), field.name
        if field.name in ("pool_size", "corpus_size"):
            assert all(v >= 1 for v in values)
    lines = table.column("line").to_pylist()
    assert all(line >= 1 for line in lines) and len(set(lines)) == len(lines)
    if not drop:
        assert result.n_rejected == 0
    return "ok"


COMMON = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


@pytest.mark.parametrize(("kind", "fmt"), sorted(SEEDS))
def test_every_seed_is_a_valid_file(kind, fmt):
    for payload in (SEEDS[(kind, fmt)], gzip.compress(SEEDS[(kind, fmt)])):
        result = read(payload, kind=kind)
        assert (result.kind, result.format, result.n_rejected) == (kind, fmt, 0)
        assert check_read((payload, kind, None, False, None)) == "ok"


def _read_test(strategy: st.SearchStrategy, n: int, derandomize: bool):  # type: ignore[type-arg]
    @settings(max_examples=n, derandomize=derandomize, **COMMON)
    @given(case=strategy)
    def test(case):
        check_read(case)

    return test


test_read_mutated_files = _read_test(mutated_files(), 120, True)
test_read_any_json = _read_test(json_files(), 40, True)
test_read_any_parquet = _read_test(parquet_files(), 30, True)
test_read_random_bytes = _read_test(any_bytes, 30, True)


def _slow(test):  # type: ignore[no-untyped-def]
    return pytest.mark.slow(test)  # deselected by default: run with -m slow


test_read_mutated_files_slow = _slow(_read_test(mutated_files(), 8000, False))
test_read_any_json_slow = _slow(_read_test(json_files(), 1500, False))
test_read_any_parquet_slow = _slow(_read_test(parquet_files(), 1000, False))
test_read_random_bytes_slow = _slow(_read_test(any_bytes, 1000, False))


# -- the workspace: a failing add changes nothing ----------------------------------------------
def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-ws")
    ws = Workspace(root)
    ws.add(SEEDS[("qrels", "trec")], name="kept-qrels")
    ws.add(SEEDS[("run", "trec")], name="kept-run")
    return ws


def check_add(
    ws: Workspace, case: tuple[bytes, str | None, str | None, bool, Limits | None]
) -> None:
    """A failing add leaves every byte as it was; a successful one is undone by delete."""
    data, kind, fmt, drop, limits = case
    before = tree(ws.path)
    try:
        info = ws.add(
            data,
            kind=kind,
            format=fmt,
            drop_bad_rows=drop,
            limits=limits,
            display_name="fuzz.input",
        )
    except EvalValidityError:
        assert tree(ws.path) == before
        return
    assert ws.table(info.name).schema == SCHEMAS[info.kind]
    ws.delete(info.name)
    assert tree(ws.path) == before  # the manifest is rewritten to the very same bytes


def _add_test(n: int, derandomize: bool):  # type: ignore[no-untyped-def]
    @settings(max_examples=n, derandomize=derandomize, **COMMON)
    @given(case=st.one_of(mutated_files(), json_files(), parquet_files()))
    def test(workspace, case):
        check_add(workspace, case)

    return test


test_workspace_add_mutated_files = _add_test(25, True)
test_workspace_add_mutated_files_slow = _slow(_add_test(600, False))


# -- faults found by the fuzzer, pinned -------------------------------------------------------
QRELS_700K = b"".join(b"q%d 0 d%d 1\n" % (i, i) for i in range(40000))
FOUND = [
    # RecursionError from json.loads while detecting the format
    (
        b"[" * 5000,
        None,
        None,
        "fuzz.input: the JSON is nested more than 64 levels deep, the limit"
        " (Limits.max_json_depth)",
    ),
    (b'{"a":' * 3000, None, "jsonl", "fuzz.input:1: expected a JSON object on each line (JSONL)"),
    # RecursionError from json.loads on a JSON Lines record
    (
        b'{"qid": "q1", "docid": "d1", "score": 1.0}\n{"qid": ' + b"[" * 3000 + b"\n",
        "run",
        None,
        "fuzz.input:2: the JSON is nested more than 64 levels deep, the limit"
        " (Limits.max_json_depth)",
    ),
    # OSError from zlib past the first 256 KiB (detection reads those): a bad checksum, a
    # truncated stream, bytes after the end
    (
        gzip.compress(QRELS_700K, mtime=0)[:-8] + b"\0" * 8,
        None,
        None,
        "fuzz.input: the file is not valid gzip (zlib inflate failed: incorrect data check)",
    ),
    (
        gzip.compress(QRELS_700K, mtime=0)[:-20],
        None,
        None,
        "fuzz.input: the file is not valid gzip (Truncated compressed stream)",
    ),
    (
        gzip.compress(QRELS_700K, mtime=0) + b"garbage",
        None,
        None,
        "fuzz.input: the file is not valid gzip (zlib inflate failed: incorrect header check)",
    ),
    # ... and in the first 256 KiB, from Python's gzip
    (
        gzip.compress(b"q1 0 d1 1\n", mtime=0)[:-8] + b"\0" * 8,
        None,
        None,
        "fuzz.input: the file is not valid gzip (CRC check failed 0x0 != 0xaf127676)",
    ),
    # ValueError from str.format: braces in a header are text
    (
        b"qid,docid,rank{x},score\nq1,d1,1,2.5\nq1,d2\n",
        "run",
        None,
        "fuzz.input:3: expected 4 fields (qid docid rank{x} score), got 2",
    ),
    # TypeError: a JSON array taken for a {qid: {docid: value}} object
    (
        b'[["q1", [["d1", 1.5]]]]',
        "run",
        "json",
        "fuzz.input: expected a JSON object {qid: {docid: value}} at the top level",
    ),
    (
        b'{"q1": [["d1", 1.5]]}',
        "run",
        "json",
        "fuzz.input: expected {qid: {docid: value}}; the value of query 'q1' is not an object",
    ),
    # ValueError: an integer of more than 4300 digits
    (
        b'{"q1": {"d1": ' + b"9" * 5000 + b"}}",
        "qrels",
        "json",
        "fuzz.input: invalid JSON (Exceeds the limit (4300 digits) for integer string conversion:"
        " value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit)",
    ),
    (
        b'{"qid": "q1", "docid": "d1", "rel": 1}\n{"qid": "q1", "docid": "d2", "rel": '
        + b"9" * 5000
        + b"}\n",
        "qrels",
        "jsonl",
        "fuzz.input:2: invalid JSON (Exceeds the limit (4300 digits) for integer string conversion:"
        " value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit)",
    ),
]


@pytest.mark.parametrize(("data", "kind", "fmt", "message"), FOUND)
def test_faults_found_by_fuzzing(data, kind, fmt, message):
    with pytest.raises(EvalValidityError) as info:
        read(data, kind=kind, format=fmt, display_name="fuzz.input")
    assert str(info.value) == message


def test_invalid_utf8_in_a_short_csv_row_is_a_row_error_not_an_unraisable():
    # pyarrow's invalid-row handler could not decode the row and printed "Exception ignored"
    data = b"qid,docid,score\nq1,d1,1.5\nq1,\xff\xfe\n"
    with pytest.raises(EvalValidityError) as info:
        read(data, display_name="fuzz.input")
    assert str(info.value) == (
        "fuzz.input:3: invalid UTF-8: the byte 0xff at byte offset 3 of the line is not valid"
        " UTF-8 text"
    )


def test_uint64_above_int64_is_rejected_not_kept_as_null():
    data = _parquet({"qid": ["q1", "q2"], "pool_size": pa.array([5, 2**64 - 1], pa.uint64())})
    with pytest.raises(EvalValidityError) as info:
        read(data, display_name="fuzz.input")
    assert str(info.value) == (
        "fuzz.input: record 2: expected an integer pool size, found '18446744073709551615'"
    )


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (
            {"qid": pa.array([[1]]), "pool_size": [3]},
            "fuzz.input: the column 'qid' holds list<element: int64> values; expected text or numbers",
        ),
        ({"qid": ["q"], "docid": ["d"], "score": pa.array([1], pa.decimal256(40, 1))}, None),
    ],
)
def test_parquet_column_types(columns, message):
    data = _parquet(columns)
    if message is None:
        assert read(data, kind="run").table.column("score").to_pylist() == [1.0]
        return
    with pytest.raises(EvalValidityError) as info:
        read(data, display_name="fuzz.input")
    assert str(info.value) == message


@example(b"q1 Q0 d1 1 1.0 t\n")
@given(st.binary(max_size=64))
@settings(max_examples=10, database=None, derandomize=True, deadline=None)
def test_workspace_add_of_random_bytes_changes_nothing_or_adds_one(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("ws")
    ws = Workspace(root)
    ws.add(b"1400\n", name="size")
    check_add(ws, (data, None, None, False, None))


def test_unit_separator_in_a_quoted_csv_field_is_kept_on_the_exact_path():
    # quoted fields used to be joined with U+001F and split again: one field became two
    data = b'qid,docid,score\n"q\x1fx",d1,1.5\nq2,d2\n'
    result = read(data, drop_bad_rows=True, display_name="fuzz.input")
    assert result.table.column("qid").to_pylist() == ["q\x1fx"]
    assert [(r.line, r.reason) for r in result.rejected] == [
        (3, "expected 3 fields (qid docid score), got 2")
    ]


@pytest.mark.parametrize(
    "data",
    [b"\nq1 d1\nq1 d2\n", b"q1 d1\n\nq1 d2\n", b"q1 d1\r\rq1 d2\r", b"q1 d1\r\n\r\nq1 d2\r\n"],
)
def test_a_blank_line_is_not_a_row_of_empty_ids(data):
    # The fast path read a blank line of a two-text-column file as the row ('', '')
    result = read(data, kind="candidates")
    assert result.table.column("qid").to_pylist() == ["q1", "q1"]
    assert result.table.column("docid").to_pylist() == ["d1", "d2"]


def test_a_trailing_delimiter_at_the_end_of_the_file_is_an_empty_field():
    # The fast path read the last line "q1 " (no newline) as the row ('q1', '')
    with pytest.raises(EvalValidityError) as info:
        read(b"q1 d1\nq1 ", kind="candidates", display_name="fuzz.input")
    assert str(info.value) == "fuzz.input:2: expected 2 fields (qid docid), got 1"


def test_a_long_run_of_digits_is_read_in_linear_time():
    # "[0-9]+\.?[0-9]*" backtracked quadratically: 64 KB of digits took a minute to detect
    # (bench/ingest.py times it; a regression makes this test take minutes)
    with pytest.raises(EvalValidityError) as info:
        read(b"9" * 200_000 + b"x\n", display_name="fuzz.input")
    assert str(info.value).startswith(
        "fuzz.input: the lines hold 1 whitespace-separated field and no header;"
    )


# -- the workspace: an owner's view never depends on another owner's private names -----------
workspace_op = st.tuples(
    st.sampled_from(["add", "add-named", "rename", "delete", "share", "find"]),
    st.sampled_from(["x", "x-2", "y", "run"]),
    st.sampled_from(["x", "x-2", "y"]),
)


def _view(ws: Workspace, owner: str | None, ops: list[tuple[str, str, str]]) -> list[str]:
    """What ``owner`` is told, op by op, and what it then lists (names and sources)."""
    told = []
    for op, name, other in ops:
        try:
            if op == "add":
                result = ws.add(b"q1 0 d1 1\n", display_name=f"{name}.trec", owner=owner).name
            elif op == "add-named":
                result = ws.add(b"q1 0 d1 1\n", name=name, owner=owner).name
            elif op == "rename":
                result = ws.rename(name, other, owner=owner).name
            elif op == "delete":
                ws.delete(name, owner=owner)
                result = "deleted"
            elif op == "share":
                result = str(ws.set_owner(name, None, owner=owner).owner)
            else:
                found = ws.find(name, owner=owner)
                result = "none" if found is None else f"{found.name} {found.owner}"
        except EvalValidityError as exc:
            result = str(exc).replace(str(ws.path), "W")
        told.append(result)
    told.append(repr([(d.name, d.owner, d.source_name) for d in ws.list(owner)]))
    return told


@settings(max_examples=12, derandomize=True, **COMMON)
@given(
    mine=st.lists(workspace_op, min_size=1, max_size=6),
    theirs=st.lists(workspace_op, max_size=6),
    owner=st.sampled_from(["alice", None]),
)
def test_another_owners_private_names_change_nothing_one_sees(
    tmp_path_factory, mine, theirs, owner
):
    alone = Workspace(tmp_path_factory.mktemp("alone"))
    shared = Workspace(tmp_path_factory.mktemp("shared"))
    # bob's private work (his shares excepted: shared names are public) comes first
    _view(shared, "bob", [op for op in theirs if op[0] != "share"])
    assert _view(alone, owner, mine) == _view(shared, owner, mine)


# -- hostile IDs through ingest, check and report (chart export in a child process) -------------
#: The classes of characters that broke something: C0 controls (NUL, ESC, form feed...), DEL,
#: the noncharacters U+FFFE and U+FFFF, bidirectional overrides and isolates, line and
#: paragraph separators, NEL, lone surrogates; and IDs of up to 10,000 characters.
HOSTILE_CHARS = [
    *(chr(c) for c in range(0x20)),
    "\x7f",
    "\x85",
    "\ufffe",
    "\uffff",
    "\u2028",
    "\u2029",
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
    "\ud800",
    "\udfff",
]
XML_FORBIDDEN = {chr(c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)} | {
    "\ufffe",
    "\uffff",
    "\ud800",
}
hostile_id = st.one_of(
    st.text(st.sampled_from(HOSTILE_CHARS) | st.sampled_from("qd0"), min_size=1, max_size=12),
    st.builds(
        lambda c, n: "q" + c * n, st.sampled_from([*HOSTILE_CHARS, "L"]), st.integers(1, 10_000)
    ),
)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


@st.composite
def hostile_benchmarks(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    qids = draw(st.lists(hostile_id, min_size=1, max_size=5, unique=True))
    docids = draw(st.lists(hostile_id, min_size=2, max_size=4, unique=True))
    return ["ok0", "ok1", *qids], ["d-ok", *docids]


def hostile_pipeline(n: int, exports: list[str]) -> int:
    """Run ``n`` derandomized hostile benchmarks through ingest → check → report; return n.

    Chart export (vl-convert) happens here, so the caller runs this in a child process.
    """
    from evalvalidity.analysis.check import check_tables
    from evalvalidity.analysis.plan import PoolSpec
    from evalvalidity.report import records
    from evalvalidity.report.charts import result_charts
    from evalvalidity.report.html import chart_png, render_html

    done = [0]

    @settings(max_examples=n, derandomize=True, **COMMON)
    @given(case=hostile_benchmarks())
    def run(case: tuple[list[str], list[str]]) -> None:
        qids, docids = case
        run_rows = [
            {"qid": q, "docid": d, "score": float(len(docids) - i)}
            for q in qids
            for i, d in enumerate(docids)
        ]
        qrels_rows = [{"qid": q, "docid": docids[-1], "rel": 1} for q in qids]
        run = read(_jsonl(run_rows), kind="run", drop_bad_rows=True)
        kept = [q for q in qids if not _has_surrogate(q)]
        good_docs = [d for d in docids if not _has_surrogate(d)]
        # exactly the rows with a lone surrogate are rejected; every other ID is kept as it is
        assert set(run.table.column("qid").to_pylist()) == (set(kept) if good_docs else set())
        assert run.n_rejected == len(run_rows) - len(kept) * len(good_docs)
        if _has_surrogate(docids[-1]):  # every judgement names it: all rejected
            with pytest.raises(EvalValidityError, match="every row was rejected"):
                read(_jsonl(qrels_rows), kind="qrels", drop_bad_rows=True)
            return
        qrels = read(_jsonl(qrels_rows), kind="qrels", drop_bad_rows=True)
        assert set(qrels.table.column("qid").to_pylist()) == set(kept)
        result = check_tables(
            run.table, qrels.table, pool=PoolSpec(corpus_size=1000), seeds=2, run_name=kept[-1]
        )
        assert result.verdict in ("healthy", "warning", "broken")
        assert {r["qid"] for r in json.loads(records.to_json(result))["queries"]} == set(kept)
        records.to_markdown(result)
        records.to_text(result)
        page = render_html(result, title="hostile " + "".join(qids))  # every chart as SVG
        assert not XML_FORBIDDEN & set(page)
        chart = next(iter(result_charts(result).values()))
        assert chart_png(chart, scale=1.0)[:4] == b"\x89PNG"
        exports.append(kept[-1])
        done[0] += 1

    run()
    return done[0]


HOSTILE_CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
import test_fuzz
exports = []
test_fuzz.hostile_pipeline(int(sys.argv[2]), exports)
print(len(exports))
"""


@pytest.mark.parametrize("n", [3, pytest.param(25, marks=pytest.mark.slow)])
def test_hostile_ids_go_through_ingest_check_and_report(n):
    import subprocess
    import sys

    tests = Path(__file__).parent
    done = subprocess.run(
        [sys.executable, "-c", HOSTILE_CHILD, str(tests), str(n)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tests.parent), "PATH": "/usr/bin:/bin"},
        timeout=3600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # an abort is -6 (SIGABRT)
    assert int(done.stdout.split()[-1]) >= n // 2  # most examples got as far as the charts
