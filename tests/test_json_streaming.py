"""``check --format json`` streams its text; atomic writes take pieces; the scorer's id order."""

import io
import json
import sys

import pyarrow as pa
import pytest
from conftest import TOY

from evalvalidity.cli import main
from evalvalidity.io.atomic import atomic_write
from evalvalidity.io.scoring import score_run
from evalvalidity.report import records


def _toy_argv(tmp_path, *extra):
    return [
        "check", "--run", str(TOY / "model.trec"), "--qrels", str(TOY / "qrels.txt"),
        "--pool-size", "100", "--seeds", "8", "--format", "json",
        "--workspace", str(tmp_path / "ws"), *extra,
    ]  # fmt: skip


@pytest.fixture
def streaming_probe(monkeypatch):
    """Wrap iter_json: before its last piece, record what stdout already holds."""
    original = records.iter_json
    seen = {}

    def probe(result, extra=None):
        pieces = list(original(result, extra))
        yield from pieces[:-1]
        seen["written_before_last"] = sys.stdout.getvalue()
        seen["all"] = "".join(pieces)
        yield pieces[-1]

    monkeypatch.setattr(records, "iter_json", probe)
    return seen


def _run(monkeypatch, argv):
    """Run the command line with a StringIO as stdout (set in the test: capture resets it)."""
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    main(argv)
    return out


def test_check_json_reaches_stdout_before_the_text_is_complete(
    tmp_path, monkeypatch, streaming_probe
):
    seen = streaming_probe
    out = _run(monkeypatch, _toy_argv(tmp_path))
    text = out.getvalue()
    assert text == seen["all"] + "\n"
    # The rows were on stdout while the last piece was still to come: never joined whole.
    assert seen["written_before_last"]
    assert text.startswith(seen["written_before_last"])
    assert json.loads(text)["n_queries"] > 0


def test_check_json_output_file_and_stdout_are_the_same_text(
    tmp_path, monkeypatch, streaming_probe
):
    seen = streaming_probe
    target = tmp_path / "check.json"
    out = _run(monkeypatch, _toy_argv(tmp_path, "--output", str(target)))
    assert target.read_text(encoding="utf-8") == out.getvalue() == seen["all"] + "\n"
    # The file is written (atomically) first: nothing reaches stdout before it is complete.
    assert seen["written_before_last"] == ""


def test_atomic_write_takes_pieces_and_keeps_the_old_file_when_they_fail(tmp_path):
    path = tmp_path / "rows.txt"
    atomic_write(path, (f"{i}é\n" for i in range(3)))
    assert path.read_text(encoding="utf-8") == "0é\n1é\n2é\n"
    atomic_write(path, [b"a", "b", b"c"])
    assert path.read_bytes() == b"abc"

    def failing():
        yield "partial"
        raise RuntimeError("the producer failed")

    with pytest.raises(RuntimeError, match="the producer failed"):
        atomic_write(path, failing())
    assert path.read_bytes() == b"abc"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.txt"]


def test_score_run_orders_ids_by_bytes_and_reports_both_sides():
    qrels = pa.table(
        {"qid": ["b", "a\x00", "é", "a", "z"], "docid": ["x"] * 5, "rel": [1, 1, 1, 1, 1]}
    )
    run = pa.table(
        {
            "qid": ["a\x00", "é", "a", "b", "u2", "u1"],
            "docid": ["x", "y", "x", "x", "x", "x"],
            "score": [1.0] * 6,
        }
    )
    result = score_run(run, qrels, "rr@10")
    assert result.qids.tolist() == ["a", "a\x00", "b", "z", "é"]
    assert result.qids.dtype == object
    assert result.values["rr@10"].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert result.unranked_qids == ("z",)
    assert result.unjudged_qids == ("u1", "u2")
    assert result.n_ranked_rows == 4
    skipped = score_run(run, qrels, "rr@10", unranked="skip")
    assert skipped.qids.tolist() == ["a", "a\x00", "b", "é"]
