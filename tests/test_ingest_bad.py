"""The bad-input corpus (tests/data/bad/): every failure has its exact message."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import BAD

from evalvalidity.errors import FileFormatError
from evalvalidity.io.ingest import RejectedRowsError, cross_check, read, read_qrels, read_run

RUN_FIELDS = "expected 6 fields (qid Q0 docid rank score tag), got 5"

REJECTED = [
    ("wrong_field_count.trec", None, f"wrong_field_count.trec:17: {RUN_FIELDS}", 17),
    (
        "non_numeric_score.trec",
        None,
        "non_numeric_score.trec:3: expected a numeric score, found 'abc'",
        3,
    ),
    ("nan_score.trec", None, "nan_score.trec:4: expected a finite score, found 'NaN'", 4),
    (
        "infinite_score.trec",
        None,
        "infinite_score.trec:2: expected a finite score, found '-inf'",
        2,
    ),
    (
        "duplicate_pair.trec",
        None,
        "duplicate_pair.trec:5: duplicate (qid '1', docid 'd2'): already ranked on line 2",
        5,
    ),
    (
        "invalid_utf8.trec",
        None,
        "invalid_utf8.trec:2: invalid UTF-8: the byte 0xff at byte offset 6 of the line is not"
        " valid UTF-8 text",
        2,
    ),
    (
        "bad_json_line.jsonl",
        None,
        "bad_json_line.jsonl:2: invalid JSON (Expecting ',' delimiter at column 41)",
        2,
    ),
    ("missing_key.jsonl", None, "missing_key.jsonl:2: missing the key 'score'", 2),
    (
        "zero_pool_size.csv",
        None,
        "zero_pool_size.csv:3: expected a positive integer pool size, found '0'",
        3,
    ),
]


@pytest.mark.parametrize(("name", "kind", "message", "line"), REJECTED)
def test_one_bad_row_names_file_line_and_expectation(name, kind, message, line):
    with pytest.raises(RejectedRowsError) as info:
        read(BAD / name, kind=kind, display_name=name)
    assert str(info.value) == message
    assert info.value.line == line
    assert info.value.n_rejected == 1
    assert [r.line for r in info.value.rejected] == [line]


@pytest.mark.parametrize(("name", "kind", "message", "line"), REJECTED)
def test_drop_bad_rows_keeps_the_rest_and_records_what_it_dropped(name, kind, message, line):
    result = read(BAD / name, kind=kind, display_name=name, drop_bad_rows=True)
    assert result.n_rejected == 1
    assert [r.line for r in result.rejected] == [line]
    assert message.endswith(result.rejected[0].reason)
    assert line not in result.table.column("line").to_pylist()
    assert result.warnings[0] == "dropped 1 bad row"


WHOLE_FILE = [
    ("empty.trec", None, "empty.trec: the file is empty"),
    (
        "blank_lines_only.trec",
        None,
        "blank_lines_only.trec: the file holds only blank lines, no data",
    ),
    (
        "qrels_given_as_run.txt",
        "run",
        "qrels_given_as_run.txt: this looks like TREC qrels (4 fields: qid iter docid rel), not a run",
    ),
    (
        "run_given_as_qrels.trec",
        "qrels",
        "run_given_as_qrels.trec: this looks like a TREC run (6 fields: qid Q0 docid rank score"
        " tag), not qrels",
    ),
    (
        "two_columns_no_header.txt",
        None,
        "two_columns_no_header.txt: the lines hold 2 whitespace-separated fields and no header;"
        " cannot tell which kind of dataset this is without guessing: pass kind= (--kind) with one"
        " of run, qrels, pools, units, candidates, corpus-size, harness",
    ),
    (
        "ambiguous_header.csv",
        None,
        "ambiguous_header.csv: the header (qid docid score) fits both a run and qrels and the"
        " 'score' values are all integers; cannot tell which kind of dataset this is without"
        " guessing: pass kind= (--kind) with one of run, qrels, pools, units, candidates,"
        " corpus-size, harness",
    ),
    ("header_no_rows.tsv", "qrels", "header_no_rows.tsv: the file holds no data rows"),
]


@pytest.mark.parametrize(("name", "kind", "message"), WHOLE_FILE)
def test_whole_file_problems(name, kind, message):
    with pytest.raises(FileFormatError) as info:
        read(BAD / name, kind=kind, display_name=name)
    assert str(info.value) == message
    assert not isinstance(info.value, RejectedRowsError)


def test_conflicting_judgements_reject_every_row_of_the_pair():
    with pytest.raises(RejectedRowsError) as info:
        read(BAD / "conflicting_judgements.qrels", display_name="qrels")
    reason = "conflicting judgements for (qid '1', docid 'd1'): rel 1 on line 1, rel 2 on line 4"
    assert str(info.value) == (
        "qrels: 2 rows rejected (2 good); the first 2:\n"
        f"  line 1: {reason}\n  line 4: {reason}\n"
        "Fix the file, or pass drop_bad_rows=True (--drop-bad-rows) to keep only the good rows."
    )
    kept = read_qrels(BAD / "conflicting_judgements.qrels", drop_bad_rows=True)
    assert kept.column("line").to_pylist() == [2, 5]


def test_conflicting_units_are_rejected():
    with pytest.raises(
        RejectedRowsError,
        match=re.escape(
            "line 2: conflicting document IDs for (chunk_id '1#0'): doc_id 1 on line 2, doc_id 2 on line 4"
        ),
    ):
        read(BAD / "conflicting_units.tsv")


def test_identical_judgements_are_accepted_and_counted():
    result = read(BAD / "identical_judgements.qrels")
    assert result.n_duplicates == 1
    assert result.n_rejected == 0
    assert result.table.column("line").to_pylist() == [1, 2, 4]
    assert result.warnings == ("merged 1 identical repeated row into their first occurrence",)


def test_crlf_and_bom_are_accepted():
    table = read_run(BAD / "crlf_bom.trec")
    assert table.column("qid").to_pylist() == ["1", "1", "1"]
    assert table.column("docid").to_pylist() == ["d1", "d2", "d3"]
    assert table.column("line").to_pylist() == [1, 2, 3]


def test_mixed_whitespace_is_any_whitespace():
    table = read_run(BAD / "fields_mixed_whitespace.trec")
    assert table.column("docid").to_pylist() == ["d1", "d2"]
    assert table.column("score").to_pylist() == [9.9, 9.8]


def test_many_bad_rows_are_counted_and_the_first_20_shown():
    with pytest.raises(RejectedRowsError) as info:
        read(BAD / "many_bad_rows.trec", display_name="many.trec")
    error = info.value
    assert error.n_rejected == 25
    assert error.n_kept == 30
    assert len(error.rejected) == 25
    lines = str(error).splitlines()
    assert lines[0] == "many.trec: 25 rows rejected (30 good); the first 20:"
    assert lines[1] == f"  line 31: {RUN_FIELDS}"
    assert lines[20] == f"  line 50: {RUN_FIELDS}"
    assert lines[21] == "  ... and 5 more"
    result = read(BAD / "many_bad_rows.trec", drop_bad_rows=True)
    assert (result.n_rows, result.n_rejected) == (30, 25)
    assert result.warnings == ("dropped 25 bad rows",)


def test_trec_eval_all_lines_are_skipped_and_counted():
    result = read(BAD / "harness_trec_eval.txt")
    assert (result.kind, result.format, result.n_skipped) == ("harness", "trec_eval", 2)
    assert result.table.column("measure").to_pylist() == ["P_10", "P_10"]
    assert result.table.column("value").to_pylist() == [0.2, 0.1]
    assert result.warnings == ("skipped 2 summary lines (qid 'all')",)


def test_cross_check_recognises_chunk_ids():
    run = read_run(BAD / "chunk_ids.trec")
    qrels = read_qrels(BAD / "document_qrels.txt")
    check = cross_check(run, qrels)
    assert check.problems == (
        "0 of 5 run IDs occur in the qrels; they look like chunk IDs (e.g. '184#0', '29#3'):"
        " with the suffix #N stripped, 3 of 5 would match — upload a units map",
        "1 of 3 judged queries have no ranking in the run (e.g. '3')",
    )
    assert check.chunk_suffix == "#N"
    assert (check.n_run_ids, check.n_run_ids_judged, check.n_match_after_strip) == (5, 0, 3)


@pytest.mark.parametrize(
    ("ids", "suffix"),
    [
        (["doc_12_3", "doc_7_0"], "_N"),
        (["a-chunk-2", "b-chunk-10"], "-chunk-N"),
        (["A#1", "B#2"], "#N"),
    ],
)
def test_cross_check_chunk_suffixes(ids, suffix):
    bases = [re.sub(r"([-_]chunk)?[-_#][0-9]+$", "", i) for i in ids]
    run = pa.table({"qid": ["1"] * len(ids), "docid": ids})
    qrels = pa.table({"qid": ["1"] * len(ids), "docid": bases})
    check = cross_check(run, qrels)
    assert check.chunk_suffix == suffix
    assert check.n_match_after_strip == len(ids)
    assert not check.ok


def test_cross_check_with_units_map_and_query_coverage():
    run = pa.table({"qid": ["1", "1", "2"], "docid": ["a#0", "b#0", "z#9"]})
    qrels = pa.table({"qid": ["1", "3"], "docid": ["a", "c"]})
    units = pa.table({"chunk_id": ["a#0", "b#0"], "doc_id": ["a", "b"]})
    check = cross_check(run, qrels, units)
    assert check.n_run_ids_in_units == 2
    assert check.n_run_ids_judged == 1
    assert check.problems == (
        "1 of 3 run IDs are not in the units map (e.g. 'z#9')",
        "1 of 2 queries in the run have no judgements (e.g. '2')",
        "1 of 2 judged queries have no ranking in the run (e.g. '3')",
    )


def test_cross_check_different_id_spaces():
    run = pa.table({"qid": ["1"], "docid": ["x"]})
    qrels = pa.table({"qid": ["1"], "docid": ["y"]})
    assert cross_check(run, qrels).problems == (
        "0 of 1 run IDs occur in the qrels: the run and the qrels use different ID spaces"
        " (run: 'x'; qrels: 'y')",
    )


# -- values read silently as something else, and values that broke scoring later -----------------
@pytest.fixture(params=[True, False], ids=["fast-path", "exact-path"])
def both_paths(request, monkeypatch):
    from evalvalidity.io.ingest import _text

    monkeypatch.setattr(_text, "FAST_PATH", request.param)
    return request.param


INTEGERS_NOT_DECIMAL = ["0x1", "0X1F", "1e3", "1_000", "0b1", "0o7", "١"]  # "1.0" reads as 1


@pytest.mark.parametrize("grade", INTEGERS_NOT_DECIMAL)
@pytest.mark.parametrize(
    ("fmt", "header", "row"),
    [
        ("trec", "", "q1 0 {} {}\n"),
        ("tsv", "qid\tdocid\trel\n", "q1\t{}\t{}\n"),
        ("csv", "qid,docid,rel\n", "q1,{},{}\n"),
    ],
)
def test_an_integer_not_in_decimal_digits_is_refused_on_both_paths(
    both_paths, fmt, header, row, grade
):
    data = header + "".join(row.format(f"d{i}", 1) for i in range(3)) + row.format("dx", grade)
    line = data.count("\n")
    with pytest.raises(RejectedRowsError) as info:
        read(data.encode(), kind="qrels", display_name=f"g.{fmt}")
    assert (
        str(info.value) == f"g.{fmt}:{line}: expected an integer relevance grade, found {grade!r}"
    )


def _qrels_bytes(fmt: str, grade: int) -> bytes:
    if fmt == "trec":
        return f"q1 0 d0 1\nq1 0 d1 {grade}\n".encode()
    if fmt == "jsonl":
        return (
            '{"qid": "q1", "docid": "d0", "rel": 1}\n'
            f'{{"qid": "q1", "docid": "d1", "rel": {grade}}}\n'
        ).encode()
    if fmt == "json":
        return f'{{"q1": {{"d0": 1, "d1": {grade}}}}}'.encode()
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    table = pa.table({"qid": ["q1", "q1"], "docid": ["d0", "d1"], "rel": [1, grade]})
    pq.write_table(table, sink)
    return sink.getvalue()


@pytest.mark.parametrize("grade", [2**31, -(2**31), 2**63 - 1, -(2**63)])
@pytest.mark.parametrize("fmt", ["trec", "jsonl", "json", "parquet"])
def test_a_grade_out_of_range_is_refused_at_ingest(both_paths, fmt, grade):
    with pytest.raises(RejectedRowsError) as info:
        read(_qrels_bytes(fmt, grade), kind="qrels", display_name=f"g.{fmt}")
    where = {"json": "g.json: record 2", "parquet": "g.parquet: record 2"}.get(fmt, f"g.{fmt}:2")
    assert str(info.value) == (
        f"{where}: expected a relevance grade between -2147483647 and 2147483647, found '{grade}'"
    )
    for edge in (2**31 - 1, -(2**31) + 1):
        kept = read(_qrels_bytes(fmt, edge), kind="qrels", display_name=f"g.{fmt}")
        assert kept.table.column("rel").to_pylist() == [1, edge]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            '{"qid": "q\\ud800", "docid": "d1", "rel": 1}',
            'the string "q\\ud800" escapes a lone surrogate (U+D800), which is not a character',
        ),
        (
            '{"qid": "q1", "docid": "\\udfff", "rel": 1}',
            'the string "\\udfff" escapes a lone surrogate (U+DFFF), which is not a character',
        ),
        (
            '{"qid": "q1", "docid": "d1", "rel": 1, "rel": 2}',
            "the key 'rel' appears more than once in the object",
        ),
        (
            '{"qid": "q1", "qid": "q2", "docid": "d1", "rel": 1}',
            "the key 'qid' appears more than once in the object",
        ),
        (
            '{"qid": true, "docid": "d1", "rel": 1}',
            "expected a string or an integer query ID for 'qid', found true",
        ),
        (
            '{"qid": "q1", "docid": false, "rel": 1}',
            "expected a string or an integer document ID for 'docid', found false",
        ),
        (
            '{"qid": 1.0, "docid": "d1", "rel": 1}',
            "expected a string or an integer query ID for 'qid', found 1.0 (a float id matches no"
            " text id)",
        ),
    ],
)
def test_json_lines_refuse_what_json_would_read_silently(line, reason):
    data = ('{"qid": "q0", "docid": "d0", "rel": 1}\n' + line + "\n").encode()
    with pytest.raises(RejectedRowsError) as info:
        read(data, kind="qrels", display_name="j.jsonl")
    assert str(info.value) == f"j.jsonl:2: {reason}"


@pytest.mark.parametrize("key", ['"q\\ud800"', '"q1": {"\\udc00": 1}, "q2"'])
def test_a_json_document_refuses_a_lone_surrogate(key):
    data = ("{" + key + ': {"d1": 1}}').encode()
    with pytest.raises(RejectedRowsError) as info:
        read(data, kind="qrels", display_name="j.json")
    assert "escapes a lone surrogate" in str(info.value)
    assert str(info.value).startswith("j.json: record 1: the string ")


@pytest.mark.parametrize(
    ("header", "twins"),
    [
        ("qid,docid,score,score", "two score columns, 'score' (column 3) and 'score' (column 4)"),
        ("qid,docid,Score,score", "two score columns, 'Score' (column 3) and 'score' (column 4)"),
        ("qid,query_id,docid,score", "two qid columns, 'qid' (column 1) and 'query_id' (column 2)"),
    ],
)
def test_a_header_naming_one_column_twice_is_refused(header, twins):
    data = f"{header}\nq1,q1,d1,1.5\n".encode()
    with pytest.raises(FileFormatError) as info:
        read(data, kind="run", display_name="h.csv")
    assert str(info.value) == f"h.csv: the header names {twins}; rename or drop one"


@pytest.mark.parametrize("arrow_type", [pa.float64(), pa.float32(), pa.decimal128(5, 1)])
def test_parquet_ids_with_a_fraction_part_are_refused(arrow_type):
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    qids = pa.array([1, 2], pa.float64()).cast(arrow_type)
    pq.write_table(pa.table({"qid": qids, "docid": ["a", "b"], "rel": [1, 1]}), sink)
    with pytest.raises(FileFormatError) as info:
        read(sink.getvalue(), kind="qrels", display_name="f.parquet")
    assert str(info.value) == (
        f"f.parquet: the query ID column 'qid' holds {arrow_type} numbers: an id such as 1.0 "
        "would become the text '1.0' and match no '1'; store ids as strings or integers"
    )


# -- messages --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("column", "template"),
    [("score", "q1 Q0 d1 1 {} t\n"), ("rel", "q1 0 d1 {}\n")],
)
@pytest.mark.parametrize("length", [81, 5_000, 100_000])
def test_a_long_field_is_quoted_as_an_excerpt(column, template, length):
    # (the rank column is never checked: trec_eval does not read it)
    value = ("9" * (length - 1)) + "x"
    kind = "run" if column == "score" else "qrels"
    with pytest.raises(RejectedRowsError) as info:
        read(template.format(value).encode(), kind=kind, display_name="r.trec")
    message = str(info.value)
    noun = "a numeric score" if column == "score" else "an integer relevance grade"
    assert message == f"r.trec:1: expected {noun}, found {'9' * 80!r}... ({length:,} characters)"


def test_a_field_of_80_characters_is_quoted_whole():
    with pytest.raises(RejectedRowsError) as info:
        read(f"q1 Q0 d1 1 {'x' * 80} t\n".encode(), kind="run", display_name="r.trec")
    assert str(info.value) == f"r.trec:1: expected a numeric score, found {'x' * 80!r}"


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda tmp: tmp, "is a folder"),
        (lambda tmp: Path("/dev/zero"), "is a device"),
        (
            lambda tmp: (__import__("os").mkfifo(tmp / "fifo"), tmp / "fifo")[1],
            "is a named pipe (FIFO)",
        ),
    ],
    ids=["folder", "device", "fifo"],
)
def test_what_is_not_a_regular_file_is_named_as_what_it_is(tmp_path, make, what):
    from evalvalidity.errors import ParameterError
    from evalvalidity.io.ingest import load

    path = str(make(tmp_path))
    with pytest.raises(ParameterError) as info:
        read(path)
    assert str(info.value) == f"{path!r} {what}; give a regular file."
    with pytest.raises(ParameterError) as info:
        load(path, "run", workspace=tmp_path / "ws")
    assert str(info.value) == f"{path!r} {what}, not a file to read nor a dataset's name."


@pytest.mark.parametrize("n_bad", [1, 2])
def test_the_drop_bad_rows_hint_follows_its_error_and_fits_the_command(tmp_path, capsys, n_bad):
    from evalvalidity.cli import main

    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 1.5 t\n" + "q1 Q0 d2 1 abc t\n" * n_bad)
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n")
    assert main(["ingest", str(run), "--workspace", str(tmp_path / "ws")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"evalvalidity ingest: error: {run}")
    assert err[-1] == "Fix the file, or pass --drop-bad-rows to keep only the good rows."
    assert sum("drop-bad-rows" in line for line in err) == 1
    assert main(["score", "--run", str(run), "--qrels", str(qrels)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"evalvalidity score: error: {run}")
    assert err[-1] == (
        "Fix the file, or ingest it with `evalvalidity ingest --drop-bad-rows` and give the "
        "dataset's name instead of the file."
    )


@pytest.mark.parametrize(
    ("codec", "name"),
    [
        ("utf-16", "UTF-16 (little-endian)"),
        ("utf-16-le", "UTF-16 (little-endian)"),
        ("utf-16-be", "UTF-16 (big-endian)"),
        ("utf-32", "UTF-32 (little-endian)"),
        ("utf-32-be", "UTF-32 (big-endian)"),
    ],
)
@pytest.mark.parametrize("gzipped", [False, True])
def test_utf16_and_utf32_are_named(codec, name, gzipped):
    import gzip

    data = "q1 0 d1 1\nq1 0 d2 0\n".encode(codec)
    with pytest.raises(FileFormatError) as info:
        read(gzip.compress(data) if gzipped else data, display_name="q.txt")
    assert str(info.value) == f"q.txt: the file looks like {name} text; save it as UTF-8"


def test_zero_bytes_are_not_taken_for_utf16_or_utf32():
    from evalvalidity.io.ingest._detect import wide_encoding

    assert wide_encoding(b"\0" * 10_000) is None
    assert wide_encoding(b"q1 0 d1 1\n" + b"\0" * 100) is None


def test_a_non_integer_rank_is_read_as_trec_eval_reads_it_and_refused_only_by_given_ties(
    tmp_path, capsys
):
    from evalvalidity.cli import main

    # trec_eval never reads the rank column: the default tie policy does not either
    result = read(BAD / "non_integer_rank.trec", display_name="non_integer_rank.trec")
    assert result.n_rejected == 0
    assert result.table.column("rank").to_pylist() == [1, None, 3, 4]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d2 1\n")
    argv = ["score", "--run", str(BAD / "non_integer_rank.trec"), "--qrels", str(qrels)]
    assert main([*argv, "-m", "rr"]) == 0
    assert capsys.readouterr().out.split()[-3:] == ["non_integer_rank.trec", "rr", "0.5000"]
    # ties='given' orders by the rank column: there a rank that is no integer is an error
    assert main([*argv, "-m", "rr", "--ties", "given"]) == 2
    err = capsys.readouterr().err
    assert "non_integer_rank.trec" in err and "line 2" in err, err
    assert "orders by the rank column" in err, err


def test_trec_eval_comment_lines_and_fields_after_the_tag_are_accepted(both_paths):
    text = (
        b"# produced by bm25, k1=0.9\n"
        b"q1 Q0 d1 1 2.5 bm25 ignored field\n"
        b"   # an indented comment\n"
        b"q1 Q0 d2 one 1.5 bm25\n"
        b"q2 Q0 d1 1 0.5 bm25\n"
    )
    result = read(text)
    assert (result.kind, result.n_rejected) == ("run", 0)
    assert result.table.column("line").to_pylist() == [2, 4, 5]
    assert result.table.column("rank").to_pylist() == [1, None, 1]
    qrels = read(b"# judged by two assessors\nq1 0 d1 1\nq1 0 d2 0\n")
    assert (qrels.kind, qrels.table.column("line").to_pylist()) == ("qrels", [2, 3])
    # fewer than six fields is still an error, as it is for trec_eval
    with pytest.raises(RejectedRowsError, match=re.escape(f"<upload>:2: {RUN_FIELDS}")):
        read(b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5\n")


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_leading_blank_lines_beyond_the_sample_are_skipped(compressed, both_paths):
    import gzip

    text = b"\n" * (3 << 20) + b"\r\n \t\n" + b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"
    result = read(gzip.compress(text) if compressed else text)
    assert result.kind == "run"
    assert result.table.column("line").to_pylist() == [(3 << 20) + 3, (3 << 20) + 4]
    # a header after the blank lines is found where it is
    tsv = b"\r" * (1 << 19) + b"qid\tdocid\trel\nq1\td1\t1\n"
    table = read(tsv).table
    assert table.column("line").to_pylist() == [(1 << 19) + 2]
    with pytest.raises(FileFormatError, match="the file holds only blank lines, no data"):
        read(b" \n" * (1 << 18))
