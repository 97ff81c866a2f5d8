"""Every format (and its gzip) reads back the table it was written from."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import CRANFIELD
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalvalidity.io.ingest import (
    CORPUS_SIZE_SCHEMA,
    _text,
    read,
    read_candidates,
    read_corpus_size,
    read_harness,
    read_pools,
    read_qrels,
    read_run,
    read_units,
)
from evalvalidity.io.tables import QRELS_SCHEMA, RUN_SCHEMA

ids = st.text(alphabet='abcXYZ019#-_.:,"é', min_size=1, max_size=8)
# a text line that starts with "#" is a comment, as for trec_eval: a qid (a line's first
# field) cannot start with it; "#" inside ids and in other fields is still generated
qids = ids.filter(lambda text: not text.startswith("#"))
scores = st.floats(allow_nan=False, allow_infinity=False, width=64)
run_rows = st.lists(
    st.tuples(qids, ids, scores), min_size=1, max_size=30, unique_by=lambda r: (r[0], r[1])
)
qrels_rows = st.lists(
    st.tuples(qids, ids, st.integers(-2, 4)),
    min_size=1,
    max_size=30,
    unique_by=lambda r: (r[0], r[1]),
)


def _csv(rows, header, delimiter=","):
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def write_run(rows, fmt):
    ranked = [(q, d, s, r) for r, (q, d, s) in enumerate(rows, start=1)]
    if fmt == "trec":
        return "".join(f"{q} Q0 {d} {r} {s!r} tag\n" for q, d, s, r in ranked).encode()
    if fmt == "trec-tabs":
        return "".join(f"{q}\tQ0\t{d}\t{r}\t{s!r}\ttag\n" for q, d, s, r in ranked).encode()
    if fmt == "trec-ragged":
        return "\r\n".join(f"  {q} \tQ0  {d}\t{r}   {s!r} tag " for q, d, s, r in ranked).encode()
    if fmt == "csv":
        return _csv(
            [(q, d, r, repr(s)) for q, d, s, r in ranked], ["query_id", "doc_id", "rank", "score"]
        )
    if fmt == "tsv":
        body = "".join(f"{q}\t{d}\t{r}\t{s!r}\n" for q, d, s, r in ranked)
        return ("qid\tdocid\trank\tscore\n" + body).encode()
    if fmt == "jsonl":
        return "".join(
            json.dumps({"qid": q, "docid": d, "score": s, "rank": r}) + "\n"
            for q, d, s, r in ranked
        ).encode()
    if fmt == "json":
        document: dict[str, dict[str, float]] = {}
        for q, d, s, _ in ranked:
            document.setdefault(q, {})[d] = s
        return json.dumps(document).encode()
    if fmt == "parquet":
        sink = io.BytesIO()
        table = pa.table(
            {
                "qid": [q for q, *_ in ranked],
                "docid": [d for _, d, *_ in ranked],
                "score": [s for *_, s, _ in ranked],
                "rank": [r for *_, r in ranked],
            }
        )
        pq.write_table(table, sink)
        return sink.getvalue()
    raise AssertionError(fmt)


RUN_FORMATS = ["trec", "trec-tabs", "trec-ragged", "csv", "tsv", "jsonl", "json", "parquet"]


def _run_records(table, with_rank=True):
    rows = zip(
        table.column("qid").to_pylist(),
        table.column("docid").to_pylist(),
        table.column("score").to_pylist(),
        table.column("rank").to_pylist(),
        strict=True,
    )
    return sorted((q, d, s, r if with_rank else None) for q, d, s, r in rows)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("fmt", RUN_FORMATS)
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=run_rows)
def test_run_round_trip(fmt, compress, rows):
    data = write_run(rows, fmt)
    if compress:
        data = gzip.compress(data)
    kind = "run" if fmt == "json" else None
    result = read(data, kind=kind, display_name=f"run.{fmt}")
    assert result.kind == "run"
    assert result.compression == ("gzip" if compress else None)
    assert result.table.schema == RUN_SCHEMA
    with_rank = fmt != "json"
    expected = sorted((q, d, s, r if with_rank else None) for r, (q, d, s) in enumerate(rows, 1))
    assert _run_records(result.table, with_rank) == expected
    if fmt.startswith("trec") or fmt in ("csv", "tsv", "jsonl"):
        header = 1 if fmt in ("csv", "tsv") else 0
        assert result.table.column("line").to_pylist() == list(
            range(1 + header, len(rows) + 1 + header)
        )


@pytest.mark.parametrize("fmt", ["trec", "trec-tabs", "csv", "tsv"])
@settings(max_examples=10, deadline=None)
@given(rows=run_rows)
def test_fast_and_exact_paths_agree(fmt, rows):
    data = write_run(rows, fmt)
    fast = read(data)
    try:
        _text.FAST_PATH = False
        exact = read(data)
    finally:
        _text.FAST_PATH = True
    assert fast.table.equals(exact.table)


@settings(max_examples=30, deadline=None)
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["1", "q2"]),
            st.sampled_from(["d1", "d2", "d3", "d", ""]),
            st.sampled_from(["1", "2", "+1", "1.0", "1.5", "x", "007", "1e3", ""]),
            st.sampled_from(["0.5", "1e5", "nan", "-inf", "1_0", ".5", "5.", "+2", "abc", "1e500"]),
            st.sampled_from(["", " ", "\t", "  "]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_fast_and_exact_paths_agree_on_bad_lines(lines):
    text = "".join(f"{q} Q0 {d}{sep}{r} {s} tag\n" for q, d, r, s, sep in lines)
    data = ("1 Q0 first 1 1.0 tag\n" + text).encode()

    def outcome():
        try:
            result = read(data, kind="run", drop_bad_rows=True)
        except Exception as exc:  # the same error either way
            return type(exc).__name__, str(exc)
        return result.table, result.rejected

    fast = outcome()
    try:
        _text.FAST_PATH = False
        exact = outcome()
    finally:
        _text.FAST_PATH = True
    if isinstance(fast[0], pa.Table):
        assert fast[0].equals(exact[0])
        assert fast[1] == exact[1]
    else:
        assert fast == exact


def write_qrels(rows, fmt):
    if fmt == "trec":
        return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()
    if fmt == "beir":
        return (
            "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows)
        ).encode()
    if fmt == "csv":
        return _csv(rows, ["qid", "docid", "relevance"])
    if fmt == "jsonl":
        return "".join(
            json.dumps({"query_id": q, "doc_id": d, "rel": g}) + "\n" for q, d, g in rows
        ).encode()
    if fmt == "parquet":
        sink = io.BytesIO()
        pq.write_table(
            pa.table(
                {
                    "qid": [r[0] for r in rows],
                    "docid": [r[1] for r in rows],
                    "rel": [r[2] for r in rows],
                }
            ),
            sink,
        )
        return sink.getvalue()
    if fmt == "json":
        document: dict[str, dict[str, int]] = {}
        for q, d, g in rows:
            document.setdefault(q, {})[d] = g
        return json.dumps(document).encode()
    raise AssertionError(fmt)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("fmt", ["trec", "beir", "csv", "jsonl", "parquet", "json"])
@settings(max_examples=6, deadline=None)
@given(rows=qrels_rows)
def test_qrels_round_trip(fmt, compress, rows):
    data = write_qrels(rows, fmt)
    if compress:
        data = gzip.compress(data)
    table = read_qrels(data)
    assert table.schema == QRELS_SCHEMA
    got = sorted(
        zip(
            table.column("qid").to_pylist(),
            table.column("docid").to_pylist(),
            table.column("rel").to_pylist(),
            strict=True,
        )
    )
    assert got == sorted(rows)


def test_other_kinds():
    assert read_pools(b"qid\tpool_size\nq1\t10\nq2\t20\n").column("pool_size").to_pylist() == [
        10,
        20,
    ]
    assert read_pools(b"q1 10\n", format="trec").column("qid").to_pylist() == ["q1"]
    assert (
        read_candidates(b'{"qid": "q1", "docid": "d1"}\n{"qid": "q1", "docid": "d2"}\n').num_rows
        == 2
    )
    assert read_units(b"chunk_id,doc_id\nd1#0,d1\nd1#1,d1\n").column("doc_id").to_pylist() == [
        "d1",
        "d1",
    ]
    assert read_corpus_size(b"\xef\xbb\xbf1400\r\n") == 1400
    size = read(b"1400\n")
    assert (size.kind, size.table.schema) == ("corpus-size", CORPUS_SIZE_SCHEMA)
    harness = read_harness(b"1,q1,0.5\n1,q2,0.25\n2,q1,0.75\n")
    assert harness.column("seed").to_pylist() == [1, 1, 2]
    assert harness.column("value").to_pylist() == [0.5, 0.25, 0.75]
    assert read_harness(b"q1,0.5\nq2,0.25\n").column("seed").null_count == 2


def test_blank_lines_and_header_keep_exact_line_numbers():
    data = b"\n\nqid,docid,score\n\nq1,d1,0.5\n\n\nq1,d2,0.25\n"
    assert read_run(data).column("line").to_pylist() == [5, 8]


def test_progress_is_reported():
    calls = []
    read(
        CRANFIELD / "run_bm25.trec", progress=lambda fraction, what: calls.append((fraction, what))
    )
    assert calls[0] == (0.0, "detecting the format")
    assert calls[-1] == (1.0, "done")
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions)


def test_cranfield_files():
    qrels = read(CRANFIELD / "qrels.txt")
    assert (qrels.kind, qrels.format, qrels.n_rows) == ("qrels", "trec", 1612)
    assert qrels.table.column("qid").to_pylist()[:2] == ["1", "1"]
    units = read(CRANFIELD / "chunks.tsv")
    assert (units.kind, units.format, units.n_rows) == ("units", "tsv", 6181)
    assert units.table.column("line").to_pylist()[0] == 2
    for name in ("run_bm25", "run_dense", "run_noise", "run_hybrid_noise"):
        run = read(CRANFIELD / f"{name}.trec")
        assert (run.kind, run.n_rows, run.n_rejected) == ("run", 22500, 0)
    from evalvalidity.io.ingest import cross_check

    run = read_run(CRANFIELD / "run_bm25.trec")
    check = cross_check(run, qrels.table)
    assert check.chunk_suffix == "#N"
    assert check.problems[0].startswith("0 of ")
    assert "upload a units map" in check.problems[0]
    assert cross_check(run, qrels.table, units.table).ok
