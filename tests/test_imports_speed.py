"""What a command costs on a small file: the modules it imports and the databases it opens.

``evalvalidity score`` on the write-up's toy run should cost little more than importing
DuckDB: each of the guards below stands for tens of milliseconds at every start.
"""

import os
import re
import subprocess
import sys

import duckdb
import pyarrow as pa
import pytest
from conftest import ROOT, WRITEUP

from evalvalidity.cli import main
from evalvalidity.io import _database
from evalvalidity.io._compute import pc
from evalvalidity.io.ingest import DEFAULT_LIMITS

TOY = WRITEUP / "toy"
SCORE = ["score", "--run", str(TOY / "model.trec"), "--qrels", str(TOY / "qrels.txt")]
#: Libraries a toy score has no use for, each costing from 30 ms to seconds to import.
NEEDLESS = {
    "scipy",
    "pandas",
    "altair",
    "streamlit",
    "pyarrow.compute",  # its Python wrappers of ~290 functions (evalvalidity.io._compute)
    "pyarrow.dataset",
    "pyarrow.parquet",
    "jsonschema",
    "http.client",
}


def _imported_by_command(*argv: str) -> set[str]:
    """Every module ``python -X importtime -m evalvalidity ARGV`` imports, by its own report."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evalvalidity", *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    )
    assert "rr@10" in done.stdout  # it did score
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", done.stderr, re.M)
    assert "duckdb" in names and "numpy" in names  # the report was read
    return set(names)


def test_a_toy_score_imports_nothing_it_does_not_use():
    modules = _imported_by_command(*SCORE, "-m", "rr@10", "--skip-unranked")
    assert not modules & NEEDLESS
    assert not {m for m in modules if m.split(".")[0] in NEEDLESS}
    ours = {m for m in modules if m.startswith("evalvalidity.")}
    # no other command's module, no layer above io
    assert {m for m in ours if m.startswith("evalvalidity.cli.")} <= {
        "evalvalidity.cli._common",
        "evalvalidity.cli.score",
    }
    assert not {m for m in ours if m.startswith(("evalvalidity.analysis", "evalvalidity.report"))}


def test_reading_and_scoring_open_one_database(monkeypatch, capsys):
    opened = []
    real_connect = duckdb.connect

    def counting_connect(*args, **kwargs):
        opened.append(args)
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(_database, "_DATABASES", {})
    monkeypatch.setattr(duckdb, "connect", counting_connect)
    assert main([*SCORE, "-m", "rr@10,ndcg@10"]) == 0
    assert "rr@10" in capsys.readouterr().out
    assert len(opened) == 1  # the run's read, the judgements' read and the scorer share it
    assert main([*SCORE, "-m", "ap"]) == 0
    assert len(opened) == 1


def test_a_shared_database_keeps_each_connection_apart():
    first = _database.connection()
    second = _database.connection()
    try:
        first.register("only_here", pa.table({"x": [1]}))
        assert first.sql("SELECT x FROM only_here").fetchall() == [(1,)]
        with pytest.raises(duckdb.CatalogException):
            second.sql("SELECT x FROM only_here").fetchall()
    finally:
        first.close()
        second.close()
    limited = _database.connection("1GB")
    try:
        (limit,) = limited.sql("SELECT current_setting('memory_limit')").fetchall()[0]
        assert limit in ("953.6 MiB", "1.0 GiB", "1000.0 MiB")
    finally:
        limited.close()


def test_the_scorers_database_is_the_readers():
    assert _database.DEFAULT_MEMORY_LIMIT == DEFAULT_LIMITS.memory_limit


def test_the_compute_shim_calls_arrow_as_pyarrow_compute_does():
    values = pa.array(["b", "a", None])
    assert pc.is_in(values, value_set=pa.array(["a"])).to_pylist() == [False, True, False]
    assert pc.sum(pc.is_valid(values)).as_py() == 2
    assert pc.match_substring(pa.array(["xay", "b"]), "a").to_pylist() == [True, False]
    assert pc.cast(pa.array(["3"]), pa.int64()).to_pylist() == [3]
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(pa.array(["99999999999999999999"]), pa.int64())
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        pc.invert()
    with pytest.raises(AttributeError, match="no compute function 'nonesuch'"):
        pc.nonesuch  # noqa: B018


def test_the_compute_shim_has_every_function_the_readers_call():
    import pyarrow.compute

    readers = ROOT / "evalvalidity" / "io" / "ingest"
    names = set()
    for path in readers.glob("*.py"):
        names |= set(re.findall(r"\bpc\.([a-z0-9_]+)\(", path.read_text(encoding="utf-8")))
    assert {"is_in", "and_", "cast"} <= names
    left = pa.array([True, False, None])
    for name in sorted(names):
        assert callable(getattr(pc, name)), name
        assert name == "cast" or hasattr(pyarrow.compute, name), name
    assert pc.and_(left, left).to_pylist() == pyarrow.compute.and_(left, left).to_pylist()
