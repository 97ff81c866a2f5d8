"""File names whose bytes are not UTF-8 (Python holds them with lone surrogates) are read."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalvalidity.cli import main
from evalvalidity.io.ingest import load

RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\n"
QRELS = "q1 0 d2 1\nq2 0 d3 1\n"


def _undecodable(folder: Path, stem: bytes, suffix: str) -> Path:
    return Path(os.fsdecode(os.fsencode(folder) + b"/" + stem + b"\xff" + suffix.encode()))


@pytest.mark.parametrize("suffix", [".trec", ".parquet"])
def test_a_file_name_that_is_not_utf8_is_read(tmp_path: Path, suffix: str) -> None:
    path = _undecodable(tmp_path, b"run", suffix)
    assert "\udcff" in os.fspath(path)
    if suffix == ".parquet":
        table = pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [2.0, 1.0]})
        pq.write_table(table, tmp_path / "plain.parquet")
        os.rename(tmp_path / "plain.parquet", path)
    else:
        path.write_text(RUN)
    run = load(path, "run")
    assert run.num_rows == (2 if suffix == ".parquet" else 3)


def test_check_on_a_run_whose_file_name_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _undecodable(tmp_path, b"run", ".trec")
    path.write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    qrels = str(tmp_path / "qrels.txt")
    code = main(["check", "--run", os.fspath(path), "--qrels", qrels, "--pool-size", "100"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "Traceback" not in err
    assert "verdict:" in out
