"""What a command costs on a small file: the modules it imports and the databases it opens.

``evalvalidity score`` on the write-up's toy run should cost little more than importing
DuckDB: each of the guards below stands for tens of milliseconds at every start. A toy run is
read and scored without DuckDB at all (importing it and opening its database cost 0.25 s).
"""

import os
import re
import subprocess
import sys

import duckdb
import duckdb._seam as duckdb_seam
import pyarrow as pa
import pytest
from conftest import BAD, ROOT, WRITEUP

from evalvalidity.cli import main
from evalvalidity.errors import EvalValidityError
from evalvalidity.io import _database
from evalvalidity.io._compute import pc
from evalvalidity.io._small_scoring import SMALL_ROWS
from evalvalidity.io.ingest import DEFAULT_LIMITS, _detect, _validate, read
from evalvalidity.io.ingest._source import Source

TOY = WRITEUP / "toy"
SCORE = ["score", "--run", str(TOY / "model.trec"), "--qrels", str(TOY / "qrels.txt")]
#: Libraries a toy score has no use for, each costing from 30 ms to seconds to import.
NEEDLESS = {
    "duckdb",  # a small, clean file is read and scored without a statement
    "scipy",
    "pandas",
    "altair",
    "streamlit",
    "pyarrow.compute",  # its Python wrappers of ~290 functions (evalvalidity.io._compute)
    "pyarrow.dataset",
    "pyarrow.parquet",
    "jsonschema",
    "http.client",
    # each under 10 ms, but a text file's read has no use for them either: the JSON readers
    # and the gzip stream import them when a file needs them
    "json",
    "gzip",
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
    assert "numpy" in names and "pyarrow" in names  # the report was read
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


def test_reading_and_scoring_open_one_database_or_none(monkeypatch, capsys, tmp_path):
    opened = []
    real_connect = duckdb.connect

    def counting_connect(*args, **kwargs):
        opened.append(args)
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(_database, "_DATABASES", {})
    monkeypatch.setattr(duckdb, "connect", counting_connect)
    assert main([*SCORE, "-m", "rr@10,ndcg@10"]) == 0
    assert "rr@10" in capsys.readouterr().out
    assert opened == []  # a toy run: read and scored without a statement
    # past the small path's size, the run's read, the judgements' read and the scorer share one
    large, qrels = tmp_path / "large.trec", tmp_path / "qrels.txt"
    large.write_text(
        "".join(f"q{i % 50} Q0 d{i} 1 {1 / (i + 1):.9f} t\n" for i in range(SMALL_ROWS + 1))
    )
    qrels.write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(50)))
    for metric in ("rr@10", "ap"):
        assert main(["score", "--run", str(large), "--qrels", str(qrels), "-m", metric]) == 0
        assert metric in capsys.readouterr().out
        assert len(opened) == 1


def test_a_deferred_connection_connects_on_its_first_use_only(monkeypatch):
    opened = []
    real_connection = _database.connection
    monkeypatch.setattr(_database, "connection", lambda *a: opened.append(a) or real_connection(*a))
    with _database.deferred_connection("1GB") as con:
        pass
    assert opened == []
    with pytest.raises(duckdb.ConnectionException):
        con.sql("SELECT 1")  # closed unused: never opened afterwards either
    assert opened == []
    with _database.deferred_connection("1GB") as con:
        assert con.sql("SELECT 42").fetchall() == [(42,)]
        con.register("t", pa.table({"x": [1, 2]}))
        assert con.sql("SELECT sum(x) FROM t").fetchall() == [(3,)]
    assert opened == [("1GB",)]  # one connection for every statement
    with pytest.raises(duckdb.ConnectionException):
        con.sql("SELECT 1")  # closed on leaving the block


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
    fresh = _database.connection()  # DuckDB's progress bar stays off, without a SET
    try:
        (shown,) = fresh.sql("SELECT current_setting('enable_progress_bar')").fetchall()[0]
        assert shown is False
    finally:
        fresh.close()
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


def _every_sample_line(source: Source) -> list[tuple[int, str]]:
    """:func:`_detect.sample_lines` as it was: every line of the sample split, then filtered."""
    head = source.head(_detect.SAMPLE_BYTES)
    lines = _detect._LINE_BREAK.split(head.decode("utf-8", errors="replace"))
    if len(head) == _detect.SAMPLE_BYTES and len(lines) > 1:
        lines = lines[:-1]
    numbered = [
        (i + 1, text)
        for i, text in enumerate(lines)
        if text.strip() and not text.lstrip().startswith("#")
    ]
    return numbered[: _detect.SAMPLE_LINES]


@pytest.mark.parametrize("n_lines", [150, 399, 400, 401, 800, 3_000, 30_000])
@pytest.mark.parametrize("blank_every", [0, 2, 3])
def test_the_sample_splits_only_the_lines_it_keeps_and_stays_the_same(
    tmp_path, n_lines, blank_every
):
    # blank and comment lines (every second or third) leave fewer than SAMPLE_LINES among
    # the first lines split off, so that the whole sample is split again; the 30,000 lines
    # fill SAMPLE_BYTES, whose last line is cut
    breaks = ["\n", "\r\n", "\r"]
    parts = []
    for i in range(n_lines):
        if blank_every and i % blank_every == 0:
            text = "# comment" if i % 4 else "  "
        else:
            text = f"q{i % 7} Q0 d{i} {i} {1 / (i + 1):.6f} tag"
        parts.append(text + breaks[i % 3 if i % 5 == 0 else 0])
    path = tmp_path / "run.trec"
    path.write_bytes("".join(parts).encode())
    source = Source(path)
    assert _detect.sample_lines(source) == _every_sample_line(source)


def _outcome(path):
    """What a lenient read of ``path`` keeps, rejects and merges, or the error it raises."""
    try:
        result = read(path, drop_bad_rows=True)
    except EvalValidityError as exc:
        return repr(exc)
    return result.table.to_pylist(), result.rejected, result.n_duplicates, result.warnings


def test_a_small_tables_keys_are_compared_without_a_query(monkeypatch):
    files = [
        BAD / "duplicate_pair.trec",
        BAD / "conflicting_judgements.qrels",
        BAD / "conflicting_units.tsv",
        TOY / "model.trec",
        TOY / "qrels.txt",
    ]
    statements = []
    real_submit = duckdb_seam.submit

    def counting_submit(con, sql, *args, **kwargs):
        statements.append(str(sql))
        return real_submit(con, sql, *args, **kwargs)

    monkeypatch.setattr(duckdb_seam, "submit", counting_submit)
    quick = [_outcome(path) for path in files]
    assert not [sql for sql in statements if "hash(" in sql]  # no first pass in DuckDB
    assert len(quick[0][1]) == 1 and quick[0][2] == 0  # the duplicate pair, rejected
    assert quick[1][1] and quick[2][1]  # the conflicts, rejected
    # the same rows, rejections, merges and messages as DuckDB's pass over hashes
    monkeypatch.setattr(_validate, "SMALL_TABLE_ROWS", -1)
    assert [_outcome(path) for path in files] == quick
    assert [sql for sql in statements if "hash(" in sql]


_COLLECTIONS = """
import gc, sys
from evalvalidity.cli import main
sys.argv = ["evalvalidity", *sys.argv[1:]]
code = main()
print(code, gc.isenabled(), gc.get_freeze_count() > 0, sum(s["collections"] for s in gc.get_stats()))
"""


def _collections(*argv: str) -> tuple[str, ...]:
    """Exit code, collector on, anything frozen, and collections of ``main()`` in a process."""
    done = subprocess.run(
        [sys.executable, "-c", _COLLECTIONS, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    return tuple(done.stdout.splitlines()[-1].split())  # the last line, after the output


def test_the_collector_is_off_while_a_command_imports_its_libraries():
    # the imports of DuckDB, numpy and pyarrow alone made the collector run ~80 times
    code, enabled, frozen, collections = _collections(*SCORE, "-m", "rr@10")
    assert (code, enabled, frozen) == ("0", "True", "True")
    assert int(collections) < 25
    # back on after a command that fails, and for a command that ends the window at parsing
    assert _collections(*SCORE[:2], "nonesuch.trec", *SCORE[3:])[:2] == ("2", "True")
    assert _collections("floor", "rr@10", "--pool-size", "10", "--gold", "1")[:3] == (
        "0",
        "True",
        "True",
    )


def test_a_command_called_in_process_leaves_the_collector_alone(capsys):
    import gc

    frozen = gc.get_freeze_count()
    assert main([*SCORE, "-m", "rr@10"]) == 0
    assert "rr@10" in capsys.readouterr().out
    assert gc.isenabled() and gc.get_freeze_count() == frozen
