"""Hostile text in IDs, tags and file names is stored verbatim and stays inert.

SQL, HTML/JavaScript, path separators, control characters and 10,000-character strings go
through every format that can carry them, :meth:`Workspace.add` / :meth:`Workspace.get`,
:func:`score_run`, :func:`check_benchmark` and every report form. They come back exactly as
they went in; no file is named after them; no SQL is built from them (checked on the source
too); the Markdown and HTML reports escape them.
"""

from __future__ import annotations

import ast
import csv
import gzip
import html
import io
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalvalidity.analysis.check import PoolSpec, check_tables
from evalvalidity.errors import EvalValidityError, ParameterError
from evalvalidity.io.ingest import _text, read
from evalvalidity.io.scoring import score_run
from evalvalidity.io.workspace import Workspace
from evalvalidity.report import records as report

PACKAGE = Path(__file__).parent.parent / "evalvalidity"

SQL = "'; DROP TABLE t; --"
SCRIPT = "<script>alert(1)</script>"
PATH = "../../etc/passwd"
LONG = "x" * 10_000
HOSTILE = [
    SQL,
    'Robert"); DELETE FROM run WHERE ("1"="1',
    SCRIPT,
    '<img src=x onerror="alert(1)">',
    PATH,
    "..\\..\\windows\\win.ini",
    "/etc/shadow",
    "ctl\x01\x02\x1b[31mred\x1b[0m\x7f",
    "nul\x00inside",
    "unit\x1fseparator",
    "a|b\\c",
    "{0}{bad!r}%s%n",
    "é中文🙂\u202eevil",
    LONG,
]
#: Characters a format's syntax takes for its own (a TREC field cannot hold a space).
FORBIDDEN = {
    "trec": (" ", "\t", "\n", "\r"),
    "tsv": ("\t", "\n", "\r"),
    "csv": ("\n", "\r"),
    "jsonl": (),
    "json": (),
    "parquet": (),
}


def ids_for(fmt: str) -> list[str]:
    """The hostile strings the format can carry (fields are trimmed of outer spaces)."""
    return [h for h in HOSTILE if not any(c in h for c in FORBIDDEN[fmt])]


def write_run(rows: list[tuple[str, str, float]], fmt: str) -> bytes:
    if fmt == "trec":
        return "".join(
            f"{q} Q0 {d} {r} {s!r} tag\n" for r, (q, d, s) in enumerate(rows, 1)
        ).encode()
    if fmt == "tsv":
        return ("qid\tdocid\tscore\n" + "".join(f"{q}\t{d}\t{s!r}\n" for q, d, s in rows)).encode()
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["qid", "docid", "score"])
        writer.writerows((q, d, repr(s)) for q, d, s in rows)
        return out.getvalue().encode()
    if fmt == "jsonl":
        return "".join(
            json.dumps({"qid": q, "docid": d, "score": s}) + "\n" for q, d, s in rows
        ).encode()
    if fmt == "json":
        document: dict[str, dict[str, float]] = {}
        for q, d, s in rows:
            document.setdefault(q, {})[d] = s
        return json.dumps(document).encode()
    sink = io.BytesIO()
    pq.write_table(
        pa.table(
            {
                "qid": [r[0] for r in rows],
                "docid": [r[1] for r in rows],
                "score": [r[2] for r in rows],
            }
        ),
        sink,
    )
    return sink.getvalue()


def hostile_run(fmt: str) -> list[tuple[str, str, float]]:
    ids = ids_for(fmt)
    return [
        (q, d, float(i * len(ids) + j) + 0.5) for i, q in enumerate(ids) for j, d in enumerate(ids)
    ]


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize(
    ("fmt", "fast"),
    [
        ("trec", True),
        ("trec", False),
        ("tsv", True),
        ("tsv", False),
        ("csv", True),
        ("csv", False),
        ("jsonl", True),
        ("json", True),
        ("parquet", True),
    ],
)
def test_ids_round_trip_verbatim_through_every_format(fmt, fast, gzipped):
    rows = hostile_run(fmt)
    data = write_run(rows, fmt)
    if gzipped:
        data = gzip.compress(data)
    _text.FAST_PATH = fast
    try:
        result = read(data, kind="run", display_name=SQL + SCRIPT + PATH)
    finally:
        _text.FAST_PATH = True
    got = sorted(
        zip(
            result.table.column("qid").to_pylist(),
            result.table.column("docid").to_pylist(),
            result.table.column("score").to_pylist(),
            strict=True,
        )
    )
    assert got == sorted(rows)
    assert result.source_name == SQL + SCRIPT + PATH


def test_hostile_text_in_messages_is_shown_not_interpreted():
    # a header cell with format braces, a bad value with SQL: the messages quote them
    with pytest.raises(EvalValidityError) as info:
        read(
            b"qid,docid,score,{0}{bad!r}\nq1,d1,'; DROP TABLE t; --,x\n",
            kind="run",
            display_name=PATH,
        )
    assert str(info.value) == (
        '../../etc/passwd:2: expected a numeric score, found "\'; DROP TABLE t; --"'
    )


# -- the workspace -----------------------------------------------------------------------------
def test_uploaded_names_never_become_paths_and_ids_come_back_verbatim(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root)
    rows = hostile_run("jsonl")
    data = write_run(rows, "jsonl")
    outside = sorted(p.name for p in tmp_path.iterdir())
    names = [
        PATH,
        "..\\..\\x.jsonl",
        SQL + ".jsonl",
        SCRIPT + ".jsonl",
        "nul\x00.jsonl",
        LONG + ".jsonl",
        "/abs/olute/path.jsonl",
        "CON",
        ".",
    ]
    infos = [ws.add(data, display_name=name) for name in names]
    # every file is named by a random id; nothing was written outside the workspace
    assert all(re.fullmatch(r"[0-9a-f]{32}\.parquet", p.name) for p in (root / "data").iterdir())
    assert len(list((root / "data").iterdir())) == len(names)
    assert sorted(p.name for p in tmp_path.iterdir()) == outside
    assert not Path("/etc/passwd.parquet").exists()
    for name, info in zip(names, infos, strict=True):
        assert info.source_name == name  # provenance keeps the name verbatim
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 ._+@=-]*", info.name), info.name
        dataset = ws.get(info.name)
        got = sorted(
            zip(
                dataset.table.column("qid").to_pylist(),
                dataset.table.column("docid").to_pylist(),
                dataset.table.column("score").to_pylist(),
                strict=True,
            )
        )
        assert got == sorted(rows)
    # the manifest survives a reload with every name as given
    assert [Workspace(root).info(i.name).source_name for i in infos] == names
    for bad in (PATH, SQL, SCRIPT, "a/b", "nul\x00", LONG):
        with pytest.raises(ParameterError, match="Invalid dataset name"):
            ws.add(data, name=bad)
        with pytest.raises(ParameterError, match="Invalid dataset name"):
            ws.rename(infos[0].name, bad)


# -- scoring, checks and reports -----------------------------------------------------------------
def hostile_benchmark() -> tuple[pa.Table, pa.Table, pa.Table, PoolSpec]:
    """Every hostile string is a query and a document; the hostile queries get flagged."""
    qids = [*HOSTILE, *(f"q{i}" for i in range(6))]
    run, noise, qrels, pools = [], [], [], []
    for qi, q in enumerate(qids):
        docs = [HOSTILE[(qi + j) % len(HOSTILE)] + f"#{j}" for j in range(8)]
        for j, d in enumerate(docs):
            run.append((q, d, 10.0 - j))
            noise.append((q, d, float((j * 5 + qi) % 8)))
        qrels.append((q, docs[qi % 3], 1))
        pools.append((q, 8 if q in HOSTILE else 100))  # a pool of 8 < k = 10 is flagged

    def table(rows, last):
        return pa.table(
            {"qid": [r[0] for r in rows], "docid": [r[1] for r in rows], last: [r[2] for r in rows]}
        )

    pool = PoolSpec(
        pools=pa.table({"qid": [p[0] for p in pools], "pool_size": [p[1] for p in pools]})
    )
    return table(run, "score"), table(noise, "score"), table(qrels, "rel"), pool


@pytest.fixture(scope="module")
def checked():
    run, noise, qrels, pool = hostile_benchmark()
    return check_tables(
        run, qrels, pool=pool, noise_run=noise, seeds=10, run_name=SCRIPT + "|" + SQL
    )


# NULs and "\x1f" in IDs: numpy fixed-width strings dropped a trailing NUL (in checks.py and
# scoring.py), pa.array(<fixed-width array>) cut a string at a NUL, and a pair key joined qid
# and docid with "\x1f"; found here, fixed in 41340f4.
TRAILING_NUL = ["q\x00", "q"]


def _scores() -> dict[str, tuple[float, float]]:
    """Query -> (score_run's RR@10, the true one: the relevant item is at rank 1 + qi % 3)."""
    run, _, qrels, _ = hostile_benchmark()
    result = score_run(run, qrels, "rr@10")
    qids = [*HOSTILE, *(f"q{i}" for i in range(6))]
    assert sorted(result.qids.tolist()) == sorted(qids)  # verbatim
    truth = {q: 1 / (1 + qi % 3) for qi, q in enumerate(qids)}
    return {
        q: (float(v), truth[q])
        for q, v in zip(result.qids.tolist(), result.values["rr@10"], strict=True)
    }


def test_score_run_keeps_hostile_query_ids_verbatim():
    for qid, (got, truth) in _scores().items():
        assert got == pytest.approx(truth), qid


def test_score_run_scores_a_query_id_with_a_nul_inside():
    got, truth = _scores()["nul\x00inside"]
    assert got == pytest.approx(truth)


def test_score_run_keeps_a_trailing_nul():
    table = pa.table({"qid": TRAILING_NUL, "docid": ["d", "d"], "score": [1.0, 1.0]})
    qrels = pa.table({"qid": TRAILING_NUL, "docid": ["d", "d"], "rel": [1, 1]})
    assert sorted(score_run(table, qrels, "rr@10").qids.tolist()) == sorted(TRAILING_NUL)


def test_check_benchmark_keeps_trailing_nuls_and_unit_separators():
    qids = ["q\x00", "q", "a\x1fb", "a"]
    docids = ["d", "d", "c", "b\x1fc"]
    qrels = pa.table({"qid": qids, "docid": docids, "rel": [1, 1, 1, 1]})
    run = pa.table({"qid": qids, "docid": docids, "score": [1.0] * 4})
    result = check_tables(run, qrels, pool=PoolSpec(corpus_size=10), seeds=5)
    assert result.n_queries == 4
    assert list(result.queries.gold) == [1, 1, 1, 1]


def test_check_and_json_report_keep_ids_verbatim(checked):
    qids = {str(q) for q in checked.queries.qid}
    assert set(HOSTILE) <= qids
    record = json.loads(report.to_json(checked))
    assert {row["qid"] for row in record["queries"]} == qids
    assert record["run"] == SCRIPT + "|" + SQL
    assert report.to_dict(checked)["run"] == SCRIPT + "|" + SQL


def test_text_report_holds_no_control_characters(checked):
    text = report.to_text(checked)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)


def _table_rows(markdown: str) -> list[str]:
    start = markdown.index("| qid | N | G | floor | model | flags |")
    rows = []
    for line in markdown[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_markdown_escapes_html_and_table_syntax(checked):
    markdown = report.to_markdown(checked, max_queries=50)
    assert "<script" not in markdown and "<img" not in markdown
    assert html.escape("<script>", quote=False) in markdown
    rows = _table_rows(markdown)
    flagged = [str(q) for q, f in zip(checked.queries.qid, checked.queries.flags, strict=True) if f]
    assert len(rows) == len(flagged) >= len(HOSTILE)  # no ID broke a row in two
    for row in rows:  # an ID's "|" is escaped: every row has exactly 7 cell borders
        assert len(re.findall(r"(?<!\\)\|", row)) == 7, row
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|'; DROP TABLE t; --" in markdown


def test_markdown_keeps_a_carriage_return_inside_its_row():
    run, _, qrels, pool = hostile_benchmark()
    renamed = {q: q.replace("nul\x00", "cr\r") for q in HOSTILE}
    qrels = qrels.set_column(
        0, "qid", pa.array([renamed.get(q, q) for q in qrels.column("qid").to_pylist()])
    )
    run = run.set_column(
        0, "qid", pa.array([renamed.get(q, q) for q in run.column("qid").to_pylist()])
    )
    pools = pa.table(
        {
            "qid": [renamed.get(q, q) for q in pool.pools.column("qid").to_pylist()],
            "pool_size": pool.pools.column("pool_size"),
        }
    )
    result = check_tables(run, qrels, pool=PoolSpec(pools=pools), seeds=5)
    assert "\r" not in report.to_markdown(result, max_queries=50)


def test_markdown_shows_markdown_syntax_in_ids_as_text():
    qids = ["[click](https://evil.example)", "&lt;b&gt;", "`code`", "*bold*"]
    qrels = pa.table({"qid": qids, "docid": ["d"] * 4, "rel": [1] * 4})
    run = pa.table({"qid": qids, "docid": ["d"] * 4, "score": [1.0] * 4})
    pools = pa.table({"qid": qids, "pool_size": [5] * 4})
    result = check_tables(run, qrels, pool=PoolSpec(pools=pools), seeds=5)
    markdown = report.to_markdown(result, max_queries=50)
    for raw in ("](", "&lt;b", "`code`", "*bold*"):
        assert raw not in markdown


def test_html_report_escapes_ids(checked):
    from evalvalidity.report.html import render_html

    page = render_html(checked, svgs={})
    assert SCRIPT not in page and "<img src=x" not in page
    assert html.escape(SCRIPT) in page


# -- no SQL built from text ----------------------------------------------------------------------
_SQL_WORDS = re.compile(
    r"\b(SELECT|FROM|WHERE|CASE WHEN|CAST\(|JOIN|GROUP BY|ORDER BY|INSERT|"
    r"CREATE|DELETE|UPDATE|read_parquet|read_csv)\b"
)


def sql_string_problems(source: str, filename: str) -> list[str]:
    """Where an f-string or ``%``/``.format`` template that looks like SQL splices a value
    into a SQL string literal (``'{x}'``) or quotes it with ``!r``: the shape of an injection.

    Interpolating identifiers (column names from the package's own tables) stays allowed.
    """
    problems = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                v.value
                for v in node.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
            if not _SQL_WORDS.search(text):
                continue
            quotes = 0
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    quotes += value.value.count("'")
                elif isinstance(value, ast.FormattedValue):
                    if quotes % 2 or value.conversion == ord("r"):
                        problems.append(f"{filename}:{node.lineno}: a value inside a SQL literal")
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
            and _SQL_WORDS.search(node.left.value)
        ):
            problems.append(f"{filename}:{node.lineno}: SQL built with %")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and _SQL_WORDS.search(node.func.value.value)
        ):
            problems.append(f"{filename}:{node.lineno}: SQL built with str.format")
    return problems


def test_the_guard_catches_sql_built_from_text():
    bad = (
        "con.sql(f\"SELECT * FROM t WHERE qid = '{qid}'\")\n"
        'con.sql(f"SELECT * FROM t WHERE qid = {qid!r}")\n'
        "con.execute(\"SELECT * FROM t WHERE qid = '%s'\" % qid)\n"
        "con.execute(\"SELECT * FROM t WHERE qid = '{}'\".format(qid))\n"
    )
    assert len(sql_string_problems(bad, "bad.py")) == 4
    good = 'con.sql(f"SELECT {column} FROM t WHERE qid = $qid", params={"qid": qid})\n'
    assert sql_string_problems(good, "good.py") == []


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_sql_is_built_from_text(path):
    assert sql_string_problems(path.read_text(encoding="utf-8"), path.name) == []


# -- text that XML forbids, through chart export and report writing, in a child process --------
# vl-convert aborted the whole process (exit 134, taking the dashboard's server with it) on a
# character XML forbids in a chart's text; so these run in a child, whose exit code tells.
XML_FORBIDDEN_CHARS = [chr(c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)]
EXPORT_CHILD = r"""
import sys
import pyarrow as pa
from evalvalidity.analysis.check import check_tables
from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.report.charts import result_charts
from evalvalidity.report.html import chart_png, chart_svg, report_zip, write_report

chars = [chr(c) for c in range(0x20)] + ["\x7f", "\ufffe", "\uffff"]
qids = [f"q{c}x" for c in chars] + [f"ok{i}" for i in range(6)]
pools = [3] * len(chars) + [1000] * 6  # the hostile queries have the highest floors: shown
run = pa.table({
    "qid": [q for q in qids for _ in range(3)],
    "docid": [f"{q}-d{i}" for q in qids for i in range(3)],
    "score": [3.0 - i for _ in qids for i in range(3)],
})
qrels = pa.table({"qid": qids, "docid": [f"{q}-d0" for q in qids], "rel": [1] * len(qids)})
pool = PoolSpec(pools=pa.table({"qid": qids, "pool_size": pools}))
name = "run" + "".join(chars)
result = check_tables(run, qrels, pool=pool, noise_run=run, seeds=4, run_name=name)
for chart in result_charts(result).values():
    assert "<svg" in chart_svg(chart)
    assert chart_png(chart, scale=1.0)[:4] == b"\x89PNG"
title = "title " + "".join(chars) + " \ud800 \udc00"
write_report(result, sys.argv[1], title=title)
assert report_zip(result, title=title)[:2] == b"PK"
print("exported", len(qids))
"""


def test_every_character_xml_forbids_exports_without_aborting(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", EXPORT_CHILD, str(tmp_path / "report")],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == f"exported {32 + 3 + 6}\n"
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert not any(char in page for char in [*XML_FORBIDDEN_CHARS, "\ufffe", "\uffff"])
    assert "q\\x1bx" in page  # shown as an escape, not dropped
    for svg in (tmp_path / "report" / "charts").glob("*.svg"):
        text = svg.read_text(encoding="utf-8")
        assert not any(char in text for char in XML_FORBIDDEN_CHARS), svg.name


# -- control characters on the terminal, and lines forged in line-oriented output ---------------
FORGING_QID = "q1\tall\t1.0000\nrecip_rank\x1b[2J"


@pytest.fixture
def forging_files(tmp_path):
    run = tmp_path / "run.jsonl"
    qrels = tmp_path / "qrels.jsonl"
    rows = [(FORGING_QID, "d1", 2.0), (FORGING_QID, "d2", 1.0), ("q2", "d1", 1.0)]
    run.write_text(
        "".join(json.dumps({"qid": q, "docid": d, "score": s}) + "\n" for q, d, s in rows)
    )
    qrels.write_text(
        "".join(json.dumps({"qid": q, "docid": "d2", "rel": 1}) + "\n" for q in (FORGING_QID, "q2"))
    )
    return run, qrels


TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def test_score_per_query_text_escapes_control_characters(forging_files, capsys):
    from evalvalidity.cli import main

    run, qrels = forging_files
    assert main(["score", "--run", str(run), "--qrels", str(qrels), "-q", "-m", "rr@10"]) == 0
    out = capsys.readouterr().out
    assert not TERMINAL_UNSAFE.search(out)
    assert "\t" not in out
    assert "    q1\\tall\\t1.0000\\nrecip_rank\\x1b[2J  rr@10=0.5000\n" in out
    assert len(out.splitlines()) == 4  # header, mean, two queries: no forged line


def test_score_trec_format_refuses_an_id_that_would_forge_a_line(forging_files, capsys):
    from evalvalidity.cli import main

    run, qrels = forging_files
    argv = ["score", "--run", str(run), "--qrels", str(qrels), "-m", "rr@10", "--format", "trec"]
    assert main([*argv, "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before the first line
    assert captured.err == (
        "evalvalidity score: error: The query id 'q1\\tall\\t1.0000\\nrecip_rank\\x1b[2J' holds "
        "whitespace or a control character, which would break a line of --format trec; use "
        "--format json.\n"
    )
    assert main(argv) == 0  # the means alone name no query
    assert capsys.readouterr().out == "rr@10                 \tall\t0.2500\n"


@pytest.mark.parametrize("hostile", [h for h in HOSTILE if TERMINAL_UNSAFE.search(h)])
def test_datasets_list_and_show_escape_control_characters(tmp_path, capsys, hostile):
    from evalvalidity.cli import main

    ws = Workspace(tmp_path)
    ws.add(b"q1 0 d1 1\n", name="mine", owner=hostile, display_name=hostile)
    assert main(["datasets", "--workspace", str(tmp_path), "list", "--all"]) == 0
    assert main(["datasets", "--workspace", str(tmp_path), "show", "mine", "--owner", hostile]) == 0
    out = capsys.readouterr().out
    assert not TERMINAL_UNSAFE.search(out)
    assert (
        out.count("\n") == 1 + len(ws.info("mine", owner=hostile).to_json()) - 2
    )  # no rejected, no warnings
