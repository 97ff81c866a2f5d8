"""Tests of the exports of other tools read as runs: TREC RAG rerank requests, MTEB predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalvalidity.errors import FileFormatError
from evalvalidity.io.ingest import RejectedRowsError, read
from evalvalidity.io.ingest._detect import detect, header_mapping
from evalvalidity.io.ingest._source import Source

# The layout of Anserini's -outputRerankerRequests, the TREC RAG 2024 rerank requests.
RAG_LINES = [
    {
        "query": {"qid": "2024-145979", "text": "what is the wing's lift coefficient"},
        "candidates": [
            {
                "docid": "msmarco_v2.1_doc_15_390497775#3_733737735",
                "score": 14.3364,
                "doc": {"segment": "Lift ...", "title": "Wings", "url": "https://x.org/a"},
            },
            {"docid": "msmarco_v2.1_doc_42_560302062#12_1088743034", "score": 14.2271, "doc": {}},
        ],
    },
    {
        "query": {"qid": 2000138, "text": "integer qids, as in Anserini's output"},
        "candidates": [{"docid": "d9", "score": 3, "doc": {"segment": "..."}}],
    },
    {"query": "q3", "candidates": [{"docid": "d1", "score": -0.5}]},
]


def write_lines(path: Path, objects: list[object]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def test_rerank_requests_are_read_as_a_run(tmp_path: Path) -> None:
    result = read(write_lines(tmp_path / "retrieve_results_rag24.jsonl", RAG_LINES))
    assert (result.kind, result.format) == ("run", "trec_rag")
    rows = result.table.select(["qid", "docid", "score", "line"]).to_pylist()
    assert rows == [
        {
            "qid": "2024-145979",
            "docid": "msmarco_v2.1_doc_15_390497775#3_733737735",
            "score": 14.3364,
            "line": 1,
        },
        {
            "qid": "2024-145979",
            "docid": "msmarco_v2.1_doc_42_560302062#12_1088743034",
            "score": 14.2271,
            "line": 1,
        },
        {"qid": "2000138", "docid": "d9", "score": 3.0, "line": 2},
        {"qid": "q3", "docid": "d1", "score": -0.5, "line": 3},
    ]


def test_a_rerank_request_longer_than_the_detection_sample_is_recognised(tmp_path: Path) -> None:
    big = {
        "query": {"qid": "q1", "text": "t"},
        "candidates": [
            {"docid": f"d{i}", "score": 100.0 - i, "doc": {"segment": "x" * 3000}}
            for i in range(100)
        ],
    }
    result = read(write_lines(tmp_path / "big.jsonl", [big]))
    assert (result.format, result.n_rows) == ("trec_rag", 100)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ({"query": {"text": "no qid"}, "candidates": []}, "the 'query' object has no 'qid'"),
        (
            {"query": {"qid": 1.5}, "candidates": []},
            "expected 'query' to be a qid (a string) or an object with a string or integer "
            "'qid', found 1.5",
        ),
        ({"query": "q", "candidates": {"d1": 1}}, "expected 'candidates' to be a list"),
        ({"query": "q", "candidates": [{"score": 1.0}]}, "candidate 1 has no 'docid'"),
        ({"query": "q", "candidates": [{"docid": "d", "score": "high"}]}, "candidate 1: "),
        ({"query": "q", "candidates": [{"docid": "d"}]}, "candidate 1 has no 'score'"),
        ({"query": "q", "candidates": ["d1"]}, 'candidate 1 is not an object: "d1"'),
    ],
)
def test_a_bad_request_is_refused_with_its_line(tmp_path: Path, line: object, reason: str) -> None:
    path = write_lines(tmp_path / "rag.jsonl", [RAG_LINES[0], line])
    with pytest.raises(RejectedRowsError) as info:
        read(path)
    rejected = info.value.rejected[0]
    assert info.value.n_rejected == 1
    assert rejected.line == 2
    assert reason in rejected.reason
    assert str(info.value).startswith(f"{path}:2: {reason}")


def test_invalid_json_in_the_requests_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "rag.jsonl"
    path.write_text(json.dumps(RAG_LINES[0]) + "\n" + '{"query": "q", "candidates": [\n')
    with pytest.raises(RejectedRowsError) as info:
        read(path)
    assert info.value.rejected[0].line == 2
    assert info.value.rejected[0].reason.startswith("invalid JSON (")


def test_requests_given_as_qrels_are_refused(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "rag.jsonl", RAG_LINES)
    with pytest.raises(FileFormatError) as info:
        read(path, kind="qrels")
    assert str(info.value) == (
        f"{path}: this looks like TREC RAG rerank requests (query, candidates), not qrels"
    )


def test_a_query_repeated_on_a_later_line_is_rejected_there(tmp_path: Path) -> None:
    again = {"query": {"qid": "2024-145979"}, "candidates": [{"docid": "dx", "score": 1.0}]}
    path = write_lines(tmp_path / "rag.jsonl", [*RAG_LINES, again])
    with pytest.raises(RejectedRowsError) as info:
        read(path)
    assert str(info.value).startswith(
        f"{path}:4: the query '2024-145979' already has its candidates on line 1"
    )
    kept = read(path, drop_bad_rows=True)
    assert (kept.n_rows, kept.n_rejected) == (4, 1)


def test_a_repeated_candidate_is_rejected_as_in_any_run(tmp_path: Path) -> None:
    line = {
        "query": "q",
        "candidates": [{"docid": "d", "score": 2.0}, {"docid": "d", "score": 1.0}],
    }
    path = write_lines(tmp_path / "rag.jsonl", [line])
    with pytest.raises(RejectedRowsError) as info:
        read(path)
    assert str(info.value).startswith(
        f"{path}:1: candidate 2: duplicate docid 'd', already candidate 1"
    )
    kept = read(path, drop_bad_rows=True)
    assert kept.table.select(["docid", "score"]).to_pylist() == [{"docid": "d", "score": 2.0}]


# -- MTEB ------------------------------------------------------------------------------------
PREDICTIONS = {"q1": {"d1": 0.83, "d2": 0.41}, "q2": {"d3": 0.5}}


@pytest.mark.parametrize("indent", [None, 2])
def test_mteb_predictions_under_subset_and_split(tmp_path: Path, indent: int | None) -> None:
    document = {
        "mteb_model_meta": {"name": "sentence-transformers/all-MiniLM-L6-v2", "revision": "r"},
        "default": {"test": PREDICTIONS},
    }
    path = tmp_path / "SciFact_default_predictions.json"
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    result = read(path)
    assert (result.kind, result.format) == ("run", "mteb")
    assert result.table.select(["qid", "docid", "score"]).to_pylist() == [
        {"qid": "q1", "docid": "d1", "score": 0.83},
        {"qid": "q1", "docid": "d2", "score": 0.41},
        {"qid": "q2", "docid": "d3", "score": 0.5},
    ]


def test_mteb_predictions_with_integer_scores_are_a_run(tmp_path: Path) -> None:
    document = {"mteb_model_meta": {}, "default": {"test": {"q1": {"d1": 3, "d2": 2}}}}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert read(path).kind == "run"


def test_mteb_predictions_nested_without_the_metadata(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"default": {"test": PREDICTIONS}}), encoding="utf-8")
    result = read(path)
    assert (result.kind, result.n_rows) == ("run", 3)


def test_older_mteb_predictions_are_ranx_json(tmp_path: Path) -> None:
    path = tmp_path / "NFCorpus_default_predictions.json"
    path.write_text(json.dumps(PREDICTIONS), encoding="utf-8")
    result = read(path)
    assert (result.kind, result.format, result.n_rows) == ("run", "json", 3)


def test_mteb_predictions_with_several_splits_are_refused(tmp_path: Path) -> None:
    document = {"mteb_model_meta": {}, "default": {"dev": PREDICTIONS, "test": PREDICTIONS}}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read(path)
    assert str(info.value) == (
        f"{path}: this MTEB predictions file holds 2 runs (default/dev, default/test); cannot "
        "tell which one to read: save one subset and split per file"
    )


def test_mteb_metadata_alone_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"mteb_model_meta": {"name": "m"}}), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read(path)
    assert "holds no {qid: {docid: score}} under a subset and a split" in str(info.value)


def test_mteb_predictions_given_as_qrels_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"mteb_model_meta": {}, "default": {"test": PREDICTIONS}}))
    with pytest.raises(FileFormatError) as info:
        read(path, kind="qrels")
    assert "this looks like MTEB saved predictions" in str(info.value)


# -- the header mapping of the preview --------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            b"query_id,doc_id,Score\nq1,d1,0.5\n",
            "qid \u2190 query_id, docid \u2190 doc_id, score \u2190 Score",
        ),
        (
            b"query-id\tcorpus-id\tscore\nq1\td1\t1\n",
            "qid \u2190 query-id, docid \u2190 corpus-id, rel \u2190 score",
        ),
        (
            b"topic,pid,rank,sim,run\nq1,d1,1,0.5,x\n",
            "qid \u2190 topic, docid \u2190 pid, rank \u2190 rank, score \u2190 sim (ignored: run)",
        ),
        (b"q1 Q0 d1 1 2.5 bm25\n", None),
    ],
)
def test_the_header_mapping_says_which_column_became_which(
    text: bytes, expected: str | None
) -> None:
    assert header_mapping(detect(Source(text, "f"))) == expected
