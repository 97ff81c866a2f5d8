"""Tests of evalvalidity.io.convert: every accepted object gives the table its TREC file gives."""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Any

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io.convert import MAX_SHOWN, as_qrels, as_run, as_table
from evalvalidity.io.ingest import read_qrels, read_run, read_units
from evalvalidity.io.scoring import score_run
from evalvalidity.io.tables import QRELS_SCHEMA, RUN_SCHEMA

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # numba's warnings while ranx compiles
    import ranx

# qids 1, 2, 10: numbers that sort differently as text; an integer score; a tie
RUN_TEXT = (
    b"1 Q0 d3 1 2.5 bm25\n"
    b"1 Q0 d1 2 2 bm25\n"
    b"1 Q0 d2 3 0.25 bm25\n"
    b"2 Q0 d1 1 1.5 bm25\n"
    b"2 Q0 d4 2 1.5 bm25\n"
    b"10 Q0 d9 1 -3.0 bm25\n"
)
QRELS_TEXT = b"1 0 d1 2\n1 0 d2 0\n2 0 d4 1\n10 0 d9 3\n10 0 d8 1\n"
ROWS = [
    ("1", "d3", 2.5, 1),
    ("1", "d1", 2.0, 2),
    ("1", "d2", 0.25, 3),
    ("2", "d1", 1.5, 1),
    ("2", "d4", 1.5, 2),
    ("10", "d9", -3.0, 1),
]
JUDGED = [("1", "d1", 2), ("1", "d2", 0), ("2", "d4", 1), ("10", "d9", 3), ("10", "d8", 1)]
RUN_DICT = {
    "1": {"d3": 2.5, "d1": 2.0, "d2": 0.25},
    "2": {"d1": 1.5, "d4": 1.5},
    "10": {"d9": -3.0},
}
QRELS_DICT = {"1": {"d1": 2, "d2": 0}, "2": {"d4": 1}, "10": {"d9": 3, "d8": 1}}


@pytest.fixture(scope="module")
def file_run() -> pa.Table:
    return read_run(RUN_TEXT)


@pytest.fixture(scope="module")
def file_qrels() -> pa.Table:
    return read_qrels(QRELS_TEXT)


def same_run(table: pa.Table, file_table: pa.Table, *, ranks: bool = False) -> None:
    """The converted run equals the file's in every column the object carries."""
    assert table.schema == RUN_SCHEMA
    keep = ["qid", "docid", "score", "rank"] if ranks else ["qid", "docid", "score"]
    assert table.select(keep).equals(file_table.select(keep))
    if not ranks:
        assert table.column("rank").null_count == table.num_rows
    assert table.column("line").null_count == table.num_rows


def same_qrels(table: pa.Table, file_table: pa.Table) -> None:
    assert table.schema == QRELS_SCHEMA
    keep = ["qid", "docid", "rel"]
    assert table.select(keep).equals(file_table.select(keep))
    assert table.column("line").null_count == table.num_rows


def by_key(table: pa.Table) -> pa.Table:
    return table.sort_by([("qid", "ascending"), ("docid", "ascending")])


def message(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    return str(excinfo.value)


# --------------------------------------------------------------------------- round trips: runs


def test_arrow_table_canonical_names_any_order(file_run: pa.Table) -> None:
    table = pa.table(
        {
            "score": [r[2] for r in ROWS],
            "docid": [r[1] for r in ROWS],
            "qid": [r[0] for r in ROWS],
            "rank": [r[3] for r in ROWS],
        }
    )
    same_run(as_run(table), file_run, ranks=True)
    same_run(as_run(table.to_batches()[0]), file_run, ranks=True)


def test_a_canonical_table_converts_to_itself(file_run: pa.Table, file_qrels: pa.Table) -> None:
    assert as_run(file_run).equals(file_run)  # its line numbers kept
    assert as_qrels(file_qrels).equals(file_qrels)
    unranked = as_run(RUN_DICT)  # rank all null: unknown, not missing values
    assert as_run(unranked).equals(unranked)


def test_arrow_table_alternative_names_and_integer_ids(file_run: pa.Table) -> None:
    table = pa.table(
        {
            "Query-ID": pa.array([int(r[0]) for r in ROWS], pa.int32()),
            "corpus-id": pa.array([r[1] for r in ROWS]).dictionary_encode(),
            "score": pa.array([r[2] for r in ROWS], pa.float32()).cast(pa.float64()),
        }
    )
    same_run(as_run(table), file_run)


def test_pandas_ir_measures_names(file_run: pa.Table) -> None:
    frame = pd.DataFrame(ROWS, columns=["query_id", "doc_id", "score", "rank"])
    same_run(as_run(frame.drop(columns="rank")), file_run)
    same_run(as_run(frame), file_run, ranks=True)


def test_pandas_pyterrier_frame_prefers_docno_over_internal_docid(file_run: pa.Table) -> None:
    frame = pd.DataFrame(
        {
            "qid": [int(r[0]) for r in ROWS],  # numeric qids: converted to their decimal text
            "docid": np.arange(len(ROWS)),  # PyTerrier's internal integer ids
            "docno": [r[1] for r in ROWS],
            "rank": [r[3] for r in ROWS],
            "score": [r[2] for r in ROWS],
            "query": "some text",
        }
    )
    same_run(as_run(frame), file_run, ranks=True)


def test_pandas_ranks_only_scored_by_minus_rank(file_run: pa.Table) -> None:
    frame = pd.DataFrame(
        {"qid": [r[0] for r in ROWS], "docno": [r[1] for r in ROWS], "rank": [r[3] for r in ROWS]}
    )
    run = as_run(frame)
    assert run.column("score").to_pylist() == [-1.0, -2.0, -3.0, -1.0, -2.0, -1.0]
    assert run.column("rank").equals(file_run.column("rank"))
    ndcg = score_run(run, read_qrels(QRELS_TEXT), "ndcg@10", ties="given")
    expected = score_run(file_run, read_qrels(QRELS_TEXT), "ndcg@10", ties="given")
    np.testing.assert_array_equal(ndcg.values["ndcg@10"], expected.values["ndcg@10"])


def test_dict_of_dict(file_run: pa.Table) -> None:
    same_run(as_run(RUN_DICT), file_run)
    # integer keys and numpy scalars, as numpy-built dicts have them
    integer_scores: dict[object, dict[str, object]] = {
        "1": {"d3": 2.5, "d1": 2, "d2": 0.25},
        2: {"d1": 1.5, "d4": np.float32(1.5)},
        10: {"d9": np.int64(-3)},
    }
    same_run(as_run(integer_scores), file_run)


@dataclass(frozen=True)
class RanxCase:
    """A random run and its judgements, as ranx objects and as TREC files (built once: the
    first ranx objects of a process cost seconds of numba compilation)."""

    run: Any
    qrels: Any
    run_text: bytes
    qrels_text: bytes


@pytest.fixture(scope="module")
def ranx_case() -> RanxCase:
    rng = np.random.default_rng(7)
    run_dict: dict[str, dict[str, float]] = {}
    qrels_dict: dict[str, dict[str, int]] = {}
    lines, judged = [], []
    for q in range(30):
        qid = str(q)
        docs = rng.choice(200, size=40, replace=False)
        scores = np.round(rng.normal(size=40), 1)  # rounding makes ties
        run_dict[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        lines += [f"{qid} Q0 {d} {i + 1} {s!r} x" for i, (d, s) in enumerate(run_dict[qid].items())]
        for d in rng.choice(200, size=8, replace=False):
            grade = int(rng.integers(0, 3))
            qrels_dict.setdefault(qid, {})[f"d{d}"] = grade
            judged.append(f"{qid} 0 d{d} {grade}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings inside ranx
        run, qrels = ranx.Run(run_dict, name="bm25"), ranx.Qrels(qrels_dict)
    return RanxCase(run, qrels, "\n".join(lines).encode(), "\n".join(judged).encode())


def test_ranx_run_and_qrels(ranx_case: RanxCase) -> None:
    keep = ["qid", "docid", "score"]
    run = as_run(ranx_case.run)
    assert run.schema == RUN_SCHEMA
    assert by_key(run).select(keep).equals(by_key(read_run(ranx_case.run_text)).select(keep))
    keep = ["qid", "docid", "rel"]
    qrels = as_qrels(ranx_case.qrels)
    assert qrels.schema == QRELS_SCHEMA
    assert by_key(qrels).select(keep).equals(by_key(read_qrels(ranx_case.qrels_text)).select(keep))


@pytest.mark.parametrize("ties", ["trec_eval", "average"])
def test_scores_of_a_converted_ranx_run_equal_the_files(ranx_case: RanxCase, ties: str) -> None:
    metrics = "ndcg@10, rr@10, ap, p@5"
    from_file = score_run(
        read_run(ranx_case.run_text), read_qrels(ranx_case.qrels_text), metrics, ties=ties
    )
    assert max(from_file.means.values()) > 0  # the case has hits: the comparison can fail
    converted = score_run(as_run(ranx_case.run), as_qrels(ranx_case.qrels), metrics, ties=ties)
    assert converted.qids.tolist() == from_file.qids.tolist()
    for metric, values in from_file.values.items():
        np.testing.assert_array_equal(converted.values[metric], values, err_msg=metric)


def test_ir_measures_scored_docs(file_run: pa.Table) -> None:
    docs = [ir_measures.ScoredDoc(q, d, s) for q, d, s, _ in ROWS]
    same_run(as_run(docs), file_run)
    same_run(as_run(iter(docs)), file_run)  # a generator is read once


def test_plain_triples(file_run: pa.Table) -> None:
    same_run(as_run([(q, d, s) for q, d, s, _ in ROWS]), file_run)


# --------------------------------------------------------------------------- round trips: qrels


def test_qrels_every_type(file_qrels: pa.Table) -> None:
    same_qrels(as_qrels(QRELS_DICT), file_qrels)
    same_qrels(as_qrels(pa.table({"qid": [j[0] for j in JUDGED], "docid": [j[1] for j in JUDGED],
                                  "rel": [j[2] for j in JUDGED]})), file_qrels)  # fmt: skip
    same_qrels(
        as_qrels(pd.DataFrame(JUDGED, columns=["query_id", "doc_id", "relevance"])), file_qrels
    )
    same_qrels(as_qrels(pd.DataFrame(JUDGED, columns=["qid", "docno", "label"])), file_qrels)
    # BEIR calls the grade "score"
    same_qrels(
        as_qrels(pd.DataFrame(JUDGED, columns=["query-id", "corpus-id", "score"])), file_qrels
    )
    same_qrels(as_qrels([ir_measures.Qrel(q, d, r) for q, d, r in JUDGED]), file_qrels)
    same_qrels(as_qrels(JUDGED), file_qrels)
    # integral float grades are taken, as the Parquet and JSON readers take them
    floats = pd.DataFrame([(q, d, float(r)) for q, d, r in JUDGED], columns=["qid", "docid", "rel"])
    same_qrels(as_qrels(floats), file_qrels)


def test_other_kinds() -> None:
    units = as_table({"a#0": "a", "a#1": "a", "b#0": "b"}, "units")
    expected = read_units(b"chunk_id\tdoc_id\na#0\ta\na#1\ta\nb#0\tb\n")
    assert units.select([0, 1]).equals(expected.select([0, 1]))
    pools = as_table(pd.DataFrame({"qid": [1, 2], "pool_size": [10, 20.0]}), "pools")
    assert pools.column("qid").to_pylist() == ["1", "2"]
    assert pools.column("pool_size").to_pylist() == [10, 20]
    candidates = as_table([("q1", "d1"), ("q1", "d2")], "candidates")
    assert candidates.column("docid").to_pylist() == ["d1", "d2"]
    harness = as_table(
        pd.DataFrame({"seed": [0, 0, 1], "qid": ["1", "2", "1"], "value": [0.5, 1, 0.25]}),
        "harness",
    )
    assert harness.column("value").to_pylist() == [0.5, 1.0, 0.25]
    assert harness.column("measure").null_count == 3


# --------------------------------------------------------------------------- never mutated


def test_inputs_are_not_mutated() -> None:
    frame = pd.DataFrame(
        {"qid": [1, 2], "docid": [7, 8], "docno": ["a", "b"], "rank": [0, 0], "score": [1, 2]}
    )
    before = frame.copy(deep=True)
    as_run(frame)
    pd.testing.assert_frame_equal(frame, before)
    nested = {1: {"d": 1}, "2": {"e": 2.5}}
    snapshot = copy.deepcopy(nested)
    as_run(nested)
    assert nested == snapshot
    assert list(nested) == [1, "2"] and type(next(iter(nested))) is int


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"3": {"d7": float("nan")}},
            "run: query '3' document 'd7' has score nan; expected a finite number",
        ),
        (
            {"3": {"d7": "1.5"}},
            "run: query '3' document 'd7' has score '1.5'; expected a finite number",
        ),
        (
            {"3": {"d7": True}},
            "run: query '3' document 'd7' has score True; expected a finite number",
        ),
        (
            {"3": {"": 1.0}},
            "run: query '3' document '' has document ID ''; expected a non-empty string",
        ),
        (
            {1.0: {"d1": 1.0}},
            "run: query 1.0 document 'd1' has query ID 1.0; expected a string or an integer",
        ),
        (
            {"3": [("d1", 1.0)]},
            "run: the value of query '3' is list; expected a mapping {docid: score}",
        ),
        (
            {1: {"d1": 1.0}, "1": {"d1": 2.0}},
            "run: query 1 document 'd1' appears 2 times; expected each (query ID, document ID)"
            " pair once",
        ),
        (
            {"3": {"d1": 1.5, "d7": True}},  # Arrow would read True as 1.0 after a float
            "run: query '3' document 'd7' has score True; expected a finite number",
        ),
        ({}, "run: the mapping holds no rows"),
        (
            pa.table({"qid": ["1"], "docid": ["a"], "rank": pa.nulls(1, pa.int64())}),
            "run: no score column, and the 'rank' column holds no ranks either",
        ),
        (
            pa.table(
                {"qid": ["1", "1"], "docid": ["a", "b"], "score": [1.0, 2.0], "rank": [1, None]}
            ),
            "run: row 1 (query '1' document 'b') has rank None; expected an integer",
        ),
        ([], "run: the iterable holds no rows"),
        (
            pd.DataFrame({"qid": ["1", "2"], "docid": ["a", "b"], "score": [1.0, np.inf]}),
            "run: row 1 (query '2' document 'b') has score inf; expected a finite number",
        ),
        (
            pd.DataFrame(
                {"qid": ["1", None], "docid": ["a", "b"], "score": [1.0, 2.0]}, index=[5, 9]
            ),
            "run: row 9 (query None document 'b') has query ID None; expected a non-empty string",
        ),
        (
            pd.DataFrame({"qid": [1.0, 2.0], "docid": ["a", "b"], "score": [1.0, 2.0]}),
            "run: the column 'qid' holds float64 values (e.g. 1.0); expected text or integer"
            " query IDs (floating-point IDs are ambiguous: 1.0 is not '1'); convert the column"
            " first",
        ),
        (
            pa.table({"qid": ["1"], "docid": ["a"], "score": ["2.5"]}),
            "run: the column 'score' holds string values (e.g. '2.5'); expected numbers (scores)",
        ),
        (
            pa.table({"qid": ["1"], "query_id": ["1"], "docid": ["a"], "score": [1.0]}),
            "run: the columns 'qid', 'query_id' could each be the query ID column; keep one or"
            " rename the others",
        ),
        (
            pa.table({"qid": ["1"], "docid": ["a"]}),
            "run: no score column: expected one named 'score', 'sim', 'similarity' (after"
            " lower-casing and dropping everything but letters and digits); found 'qid', 'docid'",
        ),
        (
            pa.table(
                {"qid": ["1", "1", "2", "1"], "docid": ["a", "b", "c", "a"], "score": [1.0] * 4}
            ),
            "run: query '1' document 'a' appears 2 times (row 0, row 3); expected each"
            " (query ID, document ID) pair once",
        ),
        (
            [ir_measures.ScoredDoc("q", "d", 1.0), ("q", "e", 2.0)],
            "run: item 1 is tuple; expected ScoredDoc named tuples like item 0",
        ),
        (
            [("q", "d", 1.0, "x")],
            "run: item 0 has 4 values; expected (qid, docid, score) tuples, or named tuples",
        ),
        (
            [("q", "d", 1.0), ("q", "e")],
            "run: item 1 has 2 values; expected 3 like item 0",
        ),
        (["q d 1.0"], "run: item 0 is str; expected a tuple or a named tuple"),
    ],
)
def test_run_refusals(obj: object, expected: str) -> None:
    with pytest.raises(InputDataError) as excinfo:
        as_run(obj)
    assert message(excinfo) == expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"q1": {"d1": 1.5}},
            "qrels: query 'q1' document 'd1' has relevance grade 1.5; expected an integer",
        ),
        (
            [ir_measures.Qrel("q", "d", 1), ir_measures.Qrel("q", "e", True)],
            "qrels: item 1 (query 'q' document 'e') has relevance grade True; expected an integer",
        ),
        (
            pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "a"], "label": [1, 1]}, index=[10, 20]),
            "qrels: query '1' document 'a' appears 2 times (row 10, row 20); expected each"
            " (query ID, document ID) pair once",
        ),
        (
            pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [np.nan]}),
            "qrels: row 0 (query '1' document 'a') has relevance grade nan; expected an integer",
        ),
        (
            pa.table({"qid": ["1"], "docid": ["a"], "rel": [True]}),
            "qrels: the column 'rel' holds bool values (e.g. True); expected integer relevance"
            " grades",
        ),
    ],
)
def test_qrels_refusals(obj: object, expected: str) -> None:
    with pytest.raises(InputDataError) as excinfo:
        as_qrels(obj)
    assert message(excinfo) == expected


def test_many_bad_rows_are_counted_and_the_first_listed() -> None:
    n = MAX_SHOWN + 5
    run = {"q": {f"d{i}": float("nan") for i in range(n)} | {"ok": 1.0}}
    with pytest.raises(InputDataError) as excinfo:
        as_run(run, name="bm25.py")
    lines = message(excinfo).split("\n")
    assert lines[0] == f"bm25.py: {n} rows rejected (1 good); the first {MAX_SHOWN}:"
    assert lines[1] == "  query 'q' document 'd0' has score nan; expected a finite number"
    assert len(lines) == MAX_SHOWN + 2
    assert lines[-1] == "  ... and 5 more"


def test_each_row_names_its_first_bad_field() -> None:
    table = pa.table({"qid": ["", "1", "2"], "docid": ["a", "", "c"], "score": [None, 1.0, 2.0]})
    with pytest.raises(InputDataError) as excinfo:
        as_run(table)
    assert message(excinfo) == (
        "run: 2 rows rejected (1 good); the first 2:\n"
        "  row 0 (query '' document 'a') has query ID ''; expected a non-empty string\n"
        "  row 1 (query '1' document '') has document ID ''; expected a non-empty string"
    )


def test_parameter_errors() -> None:
    with pytest.raises(ParameterError) as excinfo:
        as_run(3)
    assert message(excinfo) == (
        "The 'obj' parameter of as_run must be a pyarrow Table, a pandas DataFrame, a mapping,"
        " a ranx object or an iterable of tuples. Got int instead."
    )
    with pytest.raises(ParameterError) as excinfo:
        as_table(RUN_DICT, "runs")
    assert message(excinfo) == (
        "The 'kind' parameter of as_table must be one of 'run', 'qrels', 'units', 'pools',"
        " 'candidates', 'harness'. Got 'runs' instead."
    )
    with pytest.raises(ParameterError) as excinfo:
        as_qrels(QRELS_DICT, name="")
    assert message(excinfo) == (
        "The 'name' parameter of as_qrels must be a non-empty str. Got '' instead."
    )
    with pytest.raises(ParameterError) as excinfo:
        as_table({"q": "d"}, "candidates")
    assert message(excinfo) == (
        "The 'obj' parameter of as_table cannot be a mapping for candidates; pass a table,"
        " a DataFrame or an iterable of tuples."
    )
