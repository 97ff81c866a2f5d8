"""The stakeholder report: self-contained HTML, chart images, JSON and Markdown; its command."""

from __future__ import annotations

import html
import io
import json
import re
import zipfile

import pyarrow as pa
import pytest
from conftest import WRITEUP as DATA

from evalvalidity.analysis.check import PoolSpec, check_tables
from evalvalidity.cli import main
from evalvalidity.errors import ParameterError
from evalvalidity.io.ingest import read
from evalvalidity.report import charts
from evalvalidity.report import html as html_report
from evalvalidity.report import records as report


@pytest.fixture(scope="module")
def pool8():
    folder = DATA / "pool8"
    return check_tables(
        read(folder / "model.trec").table,
        read(folder / "qrels.txt").table,
        pool=PoolSpec(pools=read(folder / "pools.tsv", kind="pools").table),
        noise_run=read(folder / "noise.trec").table,
        run_name="model",
    )


@pytest.fixture(scope="module")
def hostile():
    """Query ids and a run name that are HTML."""
    qrels = pa.table(
        {"qid": ["<script>alert(1)</script>", "q&2"], "docid": ["a", "b"], "rel": [1, 1]}
    )
    run = pa.table(
        {"qid": ["<script>alert(1)</script>", "q&2"], "docid": ["a", "c"], "score": [1.0, 1.0]}
    )
    return check_tables(
        run, qrels, pool=PoolSpec(corpus_size=3), seeds=4, run_name="<img src=x onerror=alert(1)>"
    )


@pytest.fixture(scope="module")
def written(pool8, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return out, html_report.write_report(pool8, out, title="Pool of 8 <review>")


def _external_references(page: str) -> list[str]:
    """Everything a browser would fetch: src/href attributes, CSS url() and @import."""
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", page)
    refs += re.findall(r"url\(([^)]*)\)", page)
    refs += re.findall(r"@import\s+([^;]+);", page)
    return refs


def test_render_html_is_self_contained(pool8):
    page = html_report.render_html(pool8)
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert _external_references(page) == []
    assert page.count("<svg") == len(charts.result_charts(pool8))


def test_render_html_states_the_verdict_and_its_reasons(pool8):
    page = html_report.render_html(pool8, title="Pool of 8")
    assert "<title>Pool of 8</title>" in page
    verdict = re.search(r"<div class='verdict' id='verdict'[^>]*>(.*?)</div>", page).group(1)
    assert re.sub(r"<[^>]+>", "", verdict) == f"Benchmark health: {pool8.verdict}"
    assert pool8.verdict == "broken"
    number = re.compile(r"[<>≤]?\s?[−+-]?\d[\d,.]*(?:e[-+]?\d+)?\s?[%×]?")
    for reason in pool8.reasons:
        shown = html_report.reason_text(reason)
        assert html_report._esc(shown) in page

        # The same words as the message: only the numbers are rewritten (a ratio interval's
        # times sign moves onto each of its numbers).
        def words(text: str) -> str:
            return re.sub(r"\s+", " ", number.sub("#", text.replace("×", "")))

        assert words(shown) == words(reason.message)
    assert charts.VERDICT_COLOURS["broken"] in page


def test_render_html_escapes_everything_from_the_data(hostile):
    page = html_report.render_html(hostile, title="<b>title</b>")
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page
    assert "q&amp;2" in page
    assert "<title>&lt;b&gt;title&lt;/b&gt;</title>" in page
    assert _external_references(page) == []


def test_render_html_refuses_an_empty_title(pool8):
    with pytest.raises(
        ParameterError, match="'title' parameter of render_html must be a non-empty string"
    ):
        html_report.render_html(pool8, title="  ")


def test_write_report_writes_every_file(pool8, written):
    out, paths = written
    names = [p.relative_to(out).as_posix() for p in paths]
    built = charts.result_charts(pool8)
    assert names[:3] == ["report.html", "check.json", "summary.md"]
    assert names[3:] == [f"charts/{n}.{ext}" for n in built for ext in ("svg", "png")]
    assert all(p.is_file() and p.stat().st_size > 0 for p in paths)


def test_write_report_json_and_markdown_are_the_report_layers(pool8, written):
    out, _ = written
    assert json.loads((out / "check.json").read_text(encoding="utf-8")) == json.loads(
        report.to_json(pool8)
    )
    assert (out / "summary.md").read_text(encoding="utf-8") == report.to_markdown(pool8)


def test_write_report_images_are_svg_and_png(written):
    out, paths = written
    for path in paths:
        if path.suffix == ".png":
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        elif path.suffix == ".svg":
            text = path.read_text(encoding="utf-8")
            assert text.lstrip().startswith("<svg") and _external_references(text) == []
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Pool of 8 &lt;review&gt;" in page


def test_write_report_refuses_a_file_as_folder(pool8, tmp_path):
    target = tmp_path / "taken"
    target.write_text("x")
    with pytest.raises(ParameterError, match="exists and is not a folder"):
        html_report.write_report(pool8, target)


def test_report_zip_holds_what_write_report_writes(pool8):
    archive = zipfile.ZipFile(io.BytesIO(html_report.report_zip(pool8, title="t")))
    members = archive.namelist()
    assert members[:3] == ["report.html", "check.json", "summary.md"]
    assert len(members) == 3 + 2 * len(charts.result_charts(pool8))
    assert b"Benchmark health: " in archive.read("report.html")


@pytest.mark.parametrize("scale", [0, -1, float("nan"), "2"])
def test_chart_png_rejects_a_bad_scale(scale):
    with pytest.raises(ParameterError, match="'scale' parameter of chart_png"):
        html_report.chart_png(charts.headroom_sliver(0.1, 1.0), scale=scale)


def test_chart_png_scales_the_image():
    chart = charts.headroom_sliver(0.1, 1.0)
    small, large = html_report.chart_png(chart, scale=1), html_report.chart_png(chart, scale=2)

    def width(png: bytes) -> int:
        return int.from_bytes(png[16:20], "big")

    assert width(large) == 2 * width(small)


# --------------------------------------------------------------------- the command


def test_report_command_writes_the_report(tmp_path, capsys):
    folder = DATA / "pool8"
    out = tmp_path / "out"
    code = main(
        [
            "report",
            "--run",
            str(folder / "model.trec"),
            "--qrels",
            str(folder / "qrels.txt"),
            "--noise-run",
            str(folder / "noise.trec"),
            "--pools",
            str(folder / "pools.tsv"),
            "--out",
            str(out),
            "--title",
            "P8",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.splitlines()[0] == str(out / "report.html")
    assert "verdict: broken" in captured.err
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<title>P8</title>" in page and "Benchmark health: <strong>broken</strong>" in page
    assert json.loads((out / "check.json").read_text())["verdict"] == "broken"


def test_report_command_reports_bad_input_with_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "run.trec"
    bad.write_text("q1 Q0 d1 1\n")
    code = main(
        [
            "report",
            "--run",
            str(bad),
            "--qrels",
            str(DATA / "toy" / "qrels.txt"),
            "--pool-size",
            "200",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    assert "evalvalidity report: error:" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------- words, numbers, provenance

#: What a number of the report may look like (evalvalidity.report.numbers.format_number).
_ALLOWED_NUMBERS = re.compile(
    r"""
    [+−]?\d{1,3}(?:,\d{3})*\.\d{3}        # a score, three decimals (signed for differences)
    | [<>]\ −?0\.001 | ≤\ \d\.\d{3}      # a score or p-value below what three decimals show
    | \d{1,3}(?:,\d{3})*\.\d{2}× | <\ 0\.01× | ∞   # a ratio
    | \d{1,3}\.\d\ % | <\ 0\.1\ % | >\ 99\.9\ %    # a share
    | −?\d{1,3}(?:,\d{3})*                  # a count
    """,
    re.VERBOSE,
)
_NUMBER_TOKEN = re.compile(
    r"(?:[<>≤]\s)?[+−-]?(?<![\w@#])\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?(?:×|\s%)?(?![\w@])"
)


def _visible_numbers(page: str) -> list[str]:
    """Every number a reader sees, outside charts, code (ids, hashes), the date and the plan."""
    body = page.split("<body>", 1)[1]
    for element in ("svg", "code", "pre", "time", "title"):
        body = re.sub(rf"<{element}\b.*?</{element}>", " ", body, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    text = text.replace("95 % interval", "interval")  # the interval's name, not a measurement
    text = re.sub(r"\b[\w-]+@\d+\b", " ", text)  # metric names: rr@10, ndcg@10
    text = re.sub(r"\bCheck [12]\b|SHA-256", " ", text)
    return _NUMBER_TOKEN.findall(text)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """A check comparing two runs, with its leaderboard and the inputs' provenance."""
    from evalvalidity.analysis.compare import check_scores, run_leaderboard
    from evalvalidity.analysis.plan import CheckInputs
    from evalvalidity.report.provenance import dataset_provenance

    folder = DATA / "toy"
    run, qrels = read(folder / "model.trec").table, read(folder / "qrels.txt").table
    noise = read(folder / "noise.trec").table
    pool = PoolSpec(corpus_size=200)
    result = check_tables(
        run, qrels, pool=pool, noise_run=noise, other_runs={"noise": noise}, run_name="model"
    )
    inputs = CheckInputs(qrels=qrels, pool=pool, run=run, noise_run=noise, compare={"noise": noise})
    board = run_leaderboard(result, check_scores(result.plan, inputs, result), seed=0)
    return result, board, dataset_provenance(result, inputs)


def test_every_number_in_the_report_has_one_format(pool8, compared):
    result, board, provenance = compared
    pages = [
        html_report.render_html(pool8),
        html_report.render_html(result, leaderboard=board, provenance=provenance),
    ]
    for page in pages:
        numbers = _visible_numbers(page)
        assert len(numbers) > 60
        bad = [n for n in numbers if not _ALLOWED_NUMBERS.fullmatch(n)]
        assert bad == []


def test_the_number_check_catches_another_format(pool8):
    page = html_report.render_html(pool8, svgs={}).replace("</h1>", " 0.80833 1.5× 81 %</h1>")
    bad = [n for n in _visible_numbers(page) if not _ALLOWED_NUMBERS.fullmatch(n)]
    assert bad == ["0.80833", "1.5×", "81 %"]


def test_the_first_paragraph_says_the_verdict_and_what_to_do_next(pool8):
    from evalvalidity.analysis.rules import NEXT_STEPS

    page = html_report.render_html(pool8, svgs={})
    body = page.split("<body>", 1)[1]
    first = re.search(r"<p\b[^>]*>(.*?)</p>", body, flags=re.S)
    assert "id='summary'" in first.group(0)
    words = html.unescape(re.sub(r"<[^>]+>", "", first.group(1)))
    assert words.startswith("Benchmark health: broken. Do not compare models")
    assert words.endswith("What to do next:")
    steps = re.search(r"<ul class='next'>(.*?)</ul>", body, flags=re.S).group(1)
    codes = {r.code for r in pool8.reasons if r.severity != "info"}
    assert codes and steps.count("<li>") == len(codes)
    for code in codes:
        assert html_report._esc(NEXT_STEPS[code]) in steps


def test_a_healthy_report_says_there_is_nothing_to_do(compared):
    result, _, _ = compared
    assert result.verdict == "healthy"
    page = html_report.render_html(result, svgs={})
    summary = re.search(r"<p class='plain' id='summary'>(.*?)</p>", page, flags=re.S).group(1)
    assert "Nothing to do" in summary and "<ul class='next'>" not in page


def test_every_rule_code_has_one_next_step():
    from evalvalidity.analysis.rules import NEXT_STEPS, RULES

    assert set(NEXT_STEPS) == {rule.code for rule in RULES}
    for rule in RULES:
        assert rule.next_step == NEXT_STEPS[rule.code]
        assert rule.next_step.endswith(".") and rule.next_step[0].isupper(), rule.code


def test_the_page_prints_and_fits_a_phone(pool8):
    page = html_report.render_html(pool8, svgs={})
    style = re.search(r"<style>(.*?)</style>", page, flags=re.S).group(1)
    assert "@media print" in style and "@media (max-width: 640px)" in style
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in page
    # Every table scrolls inside its own box, never the page.
    assert page.count("<table") == page.count("<div class='scroll'><table") > 0


def test_the_leaderboard_is_in_the_page_and_the_markdown(compared):
    result, board, provenance = compared
    page = html_report.render_html(result, svgs={}, leaderboard=board, provenance=provenance)
    section = page.split("<h2 id='leaderboard'>Leaderboard</h2>", 1)[1].split("<h2>", 1)[0]
    rows = re.findall(r"<tr><td class='num'>(\d)</td><td><code>(\w+)</code></td>", section)
    assert rows == [("1", "model"), ("2", "noise")]
    assert "p (holm-corrected)" in section and "&lt; 0.001" in section
    assert "0 / 1 / 19" in section  # the noise run against the model, per query
    detectable = html_report.num(result.power.min_detectable_difference)
    assert f"can detect is {detectable}." in section
    summary = report.to_markdown(result, leaderboard=board)
    assert "#### Leaderboard (20 queries; p-values holm-corrected" in summary
    assert (
        "| 2 | noise | 0.010 [−0.011, 0.031] | 0.025 | −0.015 | 0 / 1 / 19 | 2–2 | – |" in summary
    )
    assert "| model − noise | +0.857 | < 0.001 | < 0.001 | yes |" in summary
    assert "Leaderboard" not in html_report.render_html(result, svgs={})


def test_the_provenance_names_every_table_with_its_hash(compared):
    from evalvalidity.report.provenance import table_sha256

    result, _, provenance = compared
    page = html_report.render_html(result, svgs={}, provenance=provenance)
    section = page.split("<h2 id='provenance'>Provenance</h2>", 1)[1]
    assert [d.role for d in provenance] == ["run", "qrels", "noise_run", "compare:noise"]
    run = read(DATA / "toy" / "model.trec").table
    assert provenance[0].sha256 == table_sha256(run) and provenance[0].rows == run.num_rows
    for d in provenance:
        assert f"<code class=sha>{d.sha256}</code>" in section
    plan = re.search(r"<pre class='plan' id='plan'>(.*?)</pre>", section, flags=re.S).group(1)
    assert json.loads(html.unescape(plan)) == result.plan.to_dict()
    assert re.search(r"<time datetime='\d{4}-\d\d-\d\dT[^']+'>", section)
    from evalvalidity import __version__

    assert f"evalvalidity <code>{__version__}</code>" in section


def test_report_command_with_two_runs_writes_leaderboard_and_file_provenance(tmp_path, capsys):
    import hashlib

    folder = DATA / "toy"
    files = {  # in the plan's order of roles
        "run": folder / "model.trec",
        "qrels": folder / "qrels.txt",
        "compare:noise": folder / "noise.trec",
    }
    out = tmp_path / "out"
    args = ["--run", str(files["run"]), "--run", str(files["compare:noise"])]
    args += ["--qrels", str(files["qrels"]), "--pool-size", "200", "--seeds", "8"]
    assert main(["report", *args, "--out", str(out)]) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2 id='leaderboard'>Leaderboard</h2>" in page
    section = page.split("<h2 id='provenance'>Provenance</h2>", 1)[1]
    for path in files.values():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"<code class=sha>{digest}</code>" in section
        assert f"<code>{path.name}</code>" in section
    rows = re.findall(r"<td class='num'>([\d,]+)</td></tr>", section)
    assert rows == [f"{read(p).table.num_rows:,}" for p in files.values()]
    assert "#### Leaderboard" in (out / "summary.md").read_text(encoding="utf-8")
    assert main(["check", *args, "--format", "markdown"]) == 0
    assert "#### Leaderboard" in capsys.readouterr().out
