"""The stakeholder report: one self-contained HTML file, the charts as images, JSON and Markdown.

:func:`render_html` turns a :class:`~evalvalidity.analysis.results.CheckResult` into one HTML page that
opens anywhere with no network: the styles are inline, there is no script, and every chart of
:func:`evalvalidity.report.charts.result_charts` is inlined as SVG rendered offline by vl-convert (no
Vega from a CDN, no data URL fetched). :func:`write_report` writes that page with, beside it,
a PNG and an SVG of each chart, the check's JSON (:func:`evalvalidity.report.records.to_json`, the
``check --format json`` contract) and its Markdown summary
(:func:`evalvalidity.report.records.to_markdown`, for a pull-request comment)::

    OUT_DIR/
        report.html
        check.json
        summary.md
        charts/<name>.svg
        charts/<name>.png

Every text that comes from the data (query ids, run names, messages) is HTML-escaped.
"""

from __future__ import annotations

import html
import math
import os
import re
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from evalvalidity.errors import ParameterError
from evalvalidity.io.atomic import StorageError, fsync_path, storage_error
from evalvalidity.report import records as report
from evalvalidity.report.charts import PALETTE, VERDICT_COLOURS, result_charts

if TYPE_CHECKING:
    import altair as alt

    from evalvalidity.analysis.results import CheckResult

__all__ = [
    "CHART_CAPTIONS",
    "chart_png",
    "chart_svg",
    "chart_svg_bytes",
    "render_html",
    "report_zip",
    "write_report",
    "xml_safe",
]

# What XML 1.0 forbids (C0 controls but tab, line feed and carriage return; lone surrogates;
# U+FFFE and U+FFFF): vl-convert aborts the whole process on any of them in a chart's text.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# The files of a report folder: only a folder holding nothing else is replaced by a new report.
_REPORT_FILES: Final = frozenset({"report.html", "check.json", "summary.md", "charts"})

#: What each chart shows, in the report's words (keys of ``result_charts``).
CHART_CAPTIONS: Final[dict[str, str]] = {
    "check1_gauge": "Check 1 — is the harness's arithmetic right? Random scores pushed through "
    "the scorer, against the exact expected value of a random ranking.",
    "check2_gauge": "Check 2 — does the score come from the vectors? The run with every vector "
    "replaced by noise, against its exact floor.",
    "headroom": "Headroom — what a random ranker scores (floor), the best possible score "
    "(ceiling), and the model in between.",
    "query_headroom": "The queries where a random ranker comes closest to a perfect one.",
    "floor_share": "How much of each query's ceiling a random ranker reaches.",
    "gold_breakdown": "Queries with several gold items have higher floors but count once in "
    "the mean.",
    "inferred_n": "Inferred N — the pool size the measured random score implies, against the "
    "declared chunk and document counts.",
    "check1_distribution": "Check 1's single random draws against their exact distribution.",
    "comparison": "Paired differences between runs against the smallest difference the "
    "benchmark can detect.",
    "other_nulls": "Other nulls — what rankers that ignore the query score (query shuffle, "
    "popularity), and how far ties, unjudged documents and self-hits move the model's score.",
}

_SEVERITY_LABEL: Final = {"broken": "broken", "warning": "warning", "info": "info"}
_SEVERITY_COLOUR: Final = {
    "broken": PALETTE["vermillion"],
    "warning": PALETTE["orange"],
    "info": PALETTE["blue"],
}
_MAX_QUERY_ROWS: Final = 50

_STYLE: Final = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1b1b1b;
       max-width: 980px; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
.meta { color: #555; margin-top: 0; }
.verdict { border-left: 8px solid var(--c); background: #f7f7f7; padding: 0.8rem 1rem;
           margin: 1rem 0; }
.verdict strong { font-size: 1.3rem; color: var(--c); text-transform: uppercase; }
.badge { display: inline-block; min-width: 4.5rem; text-align: center; border-radius: 3px;
         color: white; font-size: 0.8rem; padding: 0 0.3rem; margin-right: 0.4rem;
         background: var(--c); }
ul.reasons { list-style: none; padding-left: 0; }
ul.reasons li { margin: 0.35rem 0; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.2rem 0; }
figcaption { color: #444; font-size: 0.9rem; margin-bottom: 0.3rem; }
figure svg { width: 100%; max-width: 860px; height: auto; }
.note { color: #555; font-size: 0.9rem; }
"""


def _xml_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(value: Any) -> Any:
    r"""``value`` with every character XML forbids, in every string and key, written as an escape.

    Applied to a chart's whole specification (its data, titles, labels, tooltips) before
    vl-convert renders it, and to every text of the HTML page: a query id holding NUL, ESC,
    a form feed, a lone surrogate, U+FFFE or U+FFFF then shows as ``\x00``, ``\x1b``,
    ``\x0c``, ``\ud800``, ``\ufffe``, ``\uffff`` instead of aborting the renderer.

    Parameters
    ----------
    value : str, list, tuple, dict or any other value
        Containers are rebuilt; values other than strings are returned as they are.

    Examples
    --------
    >>> xml_safe({"title": "q\x00\x0c", "data": [{"id\x1b": "d\ud800", "n": 3}]})
    {'title': 'q\\x00\\x0c', 'data': [{'id\\x1b': 'd\\ud800', 'n': 3}]}
    >>> xml_safe("tab\tand line\nare allowed")
    'tab\tand line\nare allowed'
    """
    if isinstance(value, str):
        return _XML_FORBIDDEN.sub(_xml_char, value)
    if isinstance(value, dict):
        return {xml_safe(key): xml_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [xml_safe(item) for item in value]
    return value


def _esc(value: Any) -> str:
    return html.escape(xml_safe(str(value)), quote=True)


def _num(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}g}"


def chart_svg(chart: alt.Chart | alt.LayerChart) -> str:
    """Render a chart to SVG offline with vl-convert (no URL is ever fetched).

    Parameters
    ----------
    chart : altair.Chart or altair.LayerChart

    Returns
    -------
    str
        The SVG document.

    Examples
    --------
    >>> from evalvalidity.report.charts import headroom_sliver
    >>> chart = headroom_sliver(0.34, 1.0, model=0.62)
    >>> svg = chart_svg(chart)
    >>> svg.startswith("<svg"), "</svg>" in svg
    (True, True)
    """
    import vl_convert as vlc

    return str(vlc.vegalite_to_svg(xml_safe(chart.to_dict()), allowed_base_urls=[]))


def chart_svg_bytes(chart: alt.Chart | alt.LayerChart) -> bytes:
    """:func:`chart_svg` encoded as UTF-8, for a download.

    Examples
    --------
    >>> from evalvalidity.report.charts import headroom_sliver
    >>> chart = headroom_sliver(0.34, 1.0, model=0.62)
    >>> chart_svg_bytes(chart)[:4]
    b'<svg'
    """
    return chart_svg(chart).encode("utf-8")


def chart_png(chart: alt.Chart | alt.LayerChart, *, scale: float = 2.0) -> bytes:
    """Render a chart to PNG offline with vl-convert.

    Parameters
    ----------
    chart : altair.Chart or altair.LayerChart
    scale : float
        Pixels per chart unit (2 for sharp images on high-density screens).

    Returns
    -------
    bytes
        The PNG file.

    Raises
    ------
    ParameterError
        When ``scale`` is not a positive number.

    Examples
    --------
    >>> from evalvalidity.report.charts import headroom_sliver
    >>> chart = headroom_sliver(0.34, 1.0, model=0.62)
    >>> chart_png(chart, scale=1)[1:4]
    b'PNG'
    >>> chart_png(chart, scale=0)
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The 'scale' parameter of chart_png must be a number > 0. Got 0 instead.
    """
    if not isinstance(scale, int | float) or isinstance(scale, bool) or not scale > 0:
        raise ParameterError(
            f"The 'scale' parameter of chart_png must be a number > 0. Got {scale!r} instead."
        )
    import vl_convert as vlc

    spec = xml_safe(chart.to_dict())
    return bytes(vlc.vegalite_to_png(spec, scale=float(scale), allowed_base_urls=[]))


def _key_numbers(result: CheckResult) -> list[tuple[str, str]]:
    record = report.to_dict(result)
    rows = [
        ("metric", record["metric"]),
        ("queries", f"{record['n_queries']:,}"),
        (
            "pool",
            f"{record['pool']['kind']}"
            + (
                f", declared {_num(record['pool']['declared'], 6)}"
                if record["pool"]["declared"] is not None
                else ""
            )
            + (
                f" ({record['pool']['declared_chunks']:,} chunks, "
                f"{record['pool']['declared_documents']:,} documents)"
                if record["pool"]["declared_chunks"] is not None
                and record["pool"]["declared_documents"] is not None
                else ""
            ),
        ),
        ("floor (random ranker)", _num(record["floor"])),
        ("ceiling", _num(record["ceiling"])),
        ("headroom", _num(record["headroom"])),
        ("floor / ceiling", _num(record["floor_over_ceiling"], 3)),
        ("floor method", record["floor_method"]),
    ]
    head = result.headroom
    if head.model is not None:
        interval = (
            f" [{_num(head.model_interval.low)}, {_num(head.model_interval.high)}]"
            if head.model_interval
            else ""
        )
        rows.append((f"model ({result.run_name or 'run'})", _num(head.model) + interval))
    if head.adjusted is not None:
        rows.append(("chance-adjusted score", head.adjusted.format(3)))
    if result.harness is not None:
        h = result.harness
        rows.append(
            (
                "Check 1: measured / exact",
                f"{h.ratio.format(3)} over {h.n_draws:,} "
                f"draws ({'your harness' if h.source != 'builtin' else 'built in'})",
            )
        )
    live = result.live or result.noise
    if live is not None:
        rows.append(
            (
                "noise run / floor",
                f"{live.noise_over_floor.format(2)} (z = {_num(live.noise_z, 3)})",
            )
        )
        if live.model_over_noise is not None:
            rows.append(("Check 2: model / noise", live.model_over_noise.format(1)))
    if result.inferred_n is not None:
        n = result.inferred_n
        rows.append(("inferred N", f"{_num(n.estimate, 5)} [{_num(n.low, 5)}, {_num(n.high, 5)}]"))
    if result.power is not None:
        p = result.power
        rows.append(
            (
                "smallest detectable difference",
                f"{_num(p.min_detectable_difference, 3)} (α = {p.alpha:g}, power "
                f"{p.power:g}); {p.queries_needed:,} queries to detect {p.delta:g}",
            )
        )
    return rows


def _query_table(result: CheckResult) -> str:
    frame = report.to_frame(result)
    if frame.empty:
        return "<p class='note'>No queries.</p>"
    flagged = frame[frame["flags"] != ""]
    shown = (flagged if not flagged.empty else frame).head(_MAX_QUERY_ROWS)
    head = (
        "<tr><th>query</th><th>N</th><th>G</th><th>floor</th><th>ceiling</th>"
        "<th>model</th><th>flags</th></tr>"
    )
    body = []
    records: list[dict[Any, Any]] = shown.to_dict("records")
    for row in records:
        flags = ", ".join(
            f"<span title='{_esc(report.FLAG_TEXT.get(f, f))}'>{_esc(f)}</span>"
            for f in str(row["flags"]).split(", ")
            if f
        )
        body.append(
            f"<tr><td>{_esc(row['qid'])}</td><td class='num'>{int(row['pool_size']):,}</td>"
            f"<td class='num'>{int(row['gold'])}</td><td class='num'>{_num(row['floor'])}</td>"
            f"<td class='num'>{_num(row['ceiling'])}</td><td class='num'>{_num(row['model'])}"
            f"</td><td>{flags}</td></tr>"
        )
    what = "flagged queries" if not flagged.empty else "queries"
    total = len(flagged) if not flagged.empty else len(frame)
    caption = (
        f"The first {len(shown):,} of {total:,} {what}, by their share of the floor."
        if total > len(shown)
        else f"All {total:,} {what}, by their share of the floor."
    )
    return f"<p class='note'>{_esc(caption)}</p><table>{head}{''.join(body)}</table>"


def _comparison_table(result: CheckResult) -> str:
    if result.comparison is None:
        return ""
    c = result.comparison
    means = "".join(
        f"<tr><td>{_esc(n)}</td><td class='num'>{_num(m)}</td></tr>"
        for n, m in zip(c.runs, c.means, strict=True)
    )
    pairs = "".join(
        f"<tr><td>{_esc(r.system_a)} − {_esc(r.system_b)}</td>"
        f"<td class='num'>{r.difference:+.4f}</td>"
        f"<td class='num'>[{r.low:+.4f}, {r.high:+.4f}]</td>"
        f"<td class='num'>{_num(r.adjusted_p_value, 3)}</td>"
        f"<td class='num'>{_num(r.cohens_dz, 3)}</td>"
        f"<td>{'yes' if r.significant else 'no'}</td></tr>"
        for r in c.table.rows
    )
    return (
        "<h2>Comparison of runs</h2>"
        f"<table><tr><th>run</th><th>mean</th></tr>{means}</table>"
        "<table><tr><th>pair</th><th>difference</th><th>95 % interval</th>"
        f"<th>adjusted p ({_esc(c.table.correction)})</th><th>Cohen's dz</th>"
        f"<th>significant</th></tr>{pairs}</table>"
    )


def render_html(
    result: CheckResult,
    *,
    title: str = "Benchmark health report",
    svgs: Mapping[str, str] | None = None,
) -> str:
    """The whole report as one self-contained HTML page.

    Parameters
    ----------
    result : CheckResult
        The check to report.
    title : str
        The page's title and heading.
    svgs : mapping of str to str, optional
        Charts already rendered to SVG, by the names of
        :func:`evalvalidity.report.charts.result_charts` (rendered here when omitted).

    Returns
    -------
    str
        The HTML document: no script, no external resource.

    Raises
    ------
    ParameterError
        When ``title`` is empty.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["a", "c", "c", "b"],
    ...                 "score": [2.0, 1.0, 2.0, 1.0]})
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=8)
    >>> page = render_html(result, title="Nightly check", svgs={})  # no chart: fast
    >>> page.startswith("<!DOCTYPE html>"), "<strong>healthy</strong>" in page, "<script" in page
    (True, True, False)
    """
    if not isinstance(title, str) or not title.strip():
        raise ParameterError(
            f"The 'title' parameter of render_html must be a non-empty string. Got {title!r}."
        )
    if svgs is None:
        svgs = {name: chart_svg(chart) for name, chart in result_charts(result).items()}
    colour = VERDICT_COLOURS[result.verdict]
    reasons = []
    order = {"broken": 0, "warning": 1, "info": 2}
    for r in sorted(result.reasons, key=lambda r: order.get(r.severity, 3)):
        badge_colour = _SEVERITY_COLOUR.get(r.severity, PALETTE["grey"])
        reasons.append(
            f"<li><span class='badge' style='--c:{badge_colour}'>"
            f"{_esc(_SEVERITY_LABEL.get(r.severity, r.severity))}</span>{_esc(r.message)}</li>"
        )
    numbers = "".join(
        f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in _key_numbers(result)
    )
    figures = []
    for name, svg in svgs.items():
        caption = CHART_CAPTIONS.get(name, name)
        figures.append(
            f"<figure id='chart-{_esc(name)}'><figcaption>{_esc(caption)}"
            f"</figcaption>{_strip_xml_declaration(svg)}</figure>"
        )
    notes = "".join(f"<li>{_esc(n)}</li>" for n in result.notes)
    run = f" of {result.run_name}" if result.run_name else ""
    meta = (
        f"{result.metric.name}{run}, {result.n_queries:,} queries, pool declared as "
        f"{result.pool_kind}; evalvalidity report schema {result.schema_version}"
    )
    from evalvalidity import __version__

    return "".join(
        [
            "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            f"<title>{_esc(title)}</title><style>{_STYLE}</style></head><body>",
            f"<h1>{_esc(title)}</h1><p class='meta'>{_esc(meta)}</p>",
            f"<div class='verdict' id='verdict' style='--c:{colour}'>Benchmark health: "
            f"<strong>{_esc(result.verdict)}</strong></div>",
            f"<ul class='reasons'>{''.join(reasons)}</ul>",
            f"<h2>Key numbers</h2><table>{numbers}</table>",
            "<h2>Charts</h2>",
            "".join(figures) or "<p class='note'>No chart applies.</p>",
            _comparison_table(result),
            "<h2>Queries</h2>",
            _query_table(result),
            f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "",
            f"<p class='note'>Made by evalvalidity {_esc(__version__)}. Floors are exact expected "
            "values under a uniformly random order of each query's pool (ties broken uniformly).</p>",
            "</body></html>\n",
        ]
    )


def _strip_xml_declaration(svg: str) -> str:
    text = svg.lstrip()
    if text.startswith("<?xml"):
        text = text[text.index("?>") + 2 :]
    return text


def write_report(
    result: CheckResult, out_dir: str | os.PathLike[str], *, title: str = "Benchmark health report"
) -> list[Path]:
    """Write the report, the chart images, the JSON and the Markdown into ``out_dir``, whole.

    Everything is written into a hidden folder beside ``out_dir``, synced, and then put in
    place of ``out_dir`` by rename (an atomic exchange with the old report where the system
    has one): ``out_dir`` is a whole report, the old one or the new one, never a mixture (no
    chart of an earlier report is left behind). A full disk or a kill while writing leaves the
    old folder as it was.

    Parameters
    ----------
    result : CheckResult
        The check to report.
    out_dir : str or path-like
        The folder to write (created if missing). An existing folder is replaced only when it
        is empty or holds an earlier report and nothing else.
    title : str
        The report's title.

    Returns
    -------
    list of pathlib.Path
        Every file written: ``report.html``, ``check.json``, ``summary.md``, then
        ``charts/<name>.svg`` and ``charts/<name>.png`` for each chart.

    Raises
    ------
    ParameterError
        When ``out_dir`` exists and is not a folder, or holds files that are not a report's.
    StorageError
        When writing fails (a full disk says so); ``out_dir`` is then as it was.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["a", "c", "c", "b"],
    ...                 "score": [2.0, 1.0, 2.0, 1.0]})
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=8)
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     out = pathlib.Path(folder) / "report"
    ...     paths = write_report(result, out, title="Nightly check")
    ...     names = [p.relative_to(out).as_posix() for p in paths]
    ...     page = (out / "report.html").read_text(encoding="utf-8")
    >>> names[:3], "charts/headroom.png" in names, "<title>Nightly check</title>" in page
    (['report.html', 'check.json', 'summary.md'], True, True)
    """
    out = Path(out_dir)
    shown = xml_safe(os.fspath(out))
    if out.exists() and not out.is_dir():
        raise ParameterError(f"The report folder {shown!r} exists and is not a folder.")
    if out.is_dir():
        others = sorted(p.name for p in out.iterdir() if p.name not in _REPORT_FILES)
        if others:
            listed = ", ".join(map(repr, others[:3])) + (", ..." if len(others) > 3 else "")
            raise ParameterError(
                f"The report folder {shown!r} holds files that are not a report's ({listed}); "
                "give a new folder, an empty one or an earlier report's."
            )
    charts = result_charts(result)
    svgs = {name: chart_svg(chart) for name, chart in charts.items()}
    files: list[tuple[str, str | bytes]] = [
        ("report.html", render_html(result, title=title, svgs=svgs)),
        ("check.json", report.to_json(result) + "\n"),
        ("summary.md", report.to_markdown(result)),
    ]
    for name, chart in charts.items():
        files += [(f"charts/{name}.svg", svgs[name]), (f"charts/{name}.png", chart_png(chart))]
    target = out.absolute()
    staging = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        (staging / "charts").mkdir(parents=True)
        for relative, data in files:
            with open(staging / relative, "wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
                handle.flush()
                os.fsync(handle.fileno())
        fsync_path(staging / "charts")
        fsync_path(staging)
        _swap_in(staging, target)
        fsync_path(target.parent)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, StorageError):
            raise
        raise storage_error(f"write the report {shown}", exc) from exc
    return [out / relative for relative, _ in files]


def _swap_in(staging: Path, out: Path) -> None:
    """Put the folder ``staging`` in place of ``out`` (which may not exist), removing the old."""
    if not out.exists():
        os.rename(staging, out)
        return
    if _exchange(staging, out):  # ``out`` is the new report now, ``staging`` the old one
        shutil.rmtree(staging, ignore_errors=True)
        return
    old = out.with_name(f".{out.name}.{uuid.uuid4().hex}.old")
    os.rename(out, old)  # a kill between the two renames leaves no report, never a mixture
    try:
        os.rename(staging, out)
    except OSError:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False if unable."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    return bool(done == 0)


def report_zip(result: CheckResult, *, title: str = "Benchmark health report") -> bytes:
    """Everything :func:`write_report` writes, as one zip archive (for a download button).

    Returns
    -------
    bytes
        A zip whose members are the relative paths of :func:`write_report`'s files.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["a", "c", "c", "b"],
    ...                 "score": [2.0, 1.0, 2.0, 1.0]})
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=8)
    >>> import io, zipfile
    >>> names = zipfile.ZipFile(io.BytesIO(report_zip(result))).namelist()
    >>> names[:4]
    ['report.html', 'check.json', 'summary.md', 'charts/check1_gauge.svg']
    """
    import io
    import tempfile
    import zipfile

    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="evalvalidity-report-") as folder:
        paths = write_report(result, folder, title=title)
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in paths:
                archive.write(path, arcname=path.relative_to(folder).as_posix())
    return buffer.getvalue()
