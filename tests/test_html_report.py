"""The stakeholder report: self-contained HTML, chart images, JSON and Markdown; its command."""

from __future__ import annotations

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
        # The same words as the message: only the numbers are rewritten.
        assert number.sub("#", shown) == number.sub("#", reason.message)
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
