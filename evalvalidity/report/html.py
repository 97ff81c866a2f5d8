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

import datetime
import html
import math
import os
import re
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from evalvalidity.analysis.rules import NEXT_STEPS
from evalvalidity.errors import ParameterError
from evalvalidity.io.atomic import StorageError, fsync_path, storage_error
from evalvalidity.report import records as report
from evalvalidity.report.charts import PALETTE, VERDICT_COLOURS, result_charts
from evalvalidity.report.numbers import NumberKind, renumber
from evalvalidity.report.numbers import format_number as num
from evalvalidity.report.provenance import DatasetProvenance, dataset_provenance

if TYPE_CHECKING:
    import altair as alt

    from evalvalidity.analysis.results import CheckResult, Reason

__all__ = [
    "CHART_CAPTIONS",
    "VERDICT_MEANING",
    "chart_png",
    "chart_svg",
    "chart_svg_bytes",
    "reason_text",
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
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1b1b1b;
       max-width: 980px; margin: 2rem auto; padding: 0 1rem; line-height: 1.45;
       overflow-wrap: break-word; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
.plain { font-size: 1.08rem; }
.meta { color: #555; margin-top: 0; }
.verdict { border-left: 8px solid var(--c); background: #f7f7f7; padding: 0.8rem 1rem;
           margin: 1rem 0; }
.verdict strong { font-size: 1.3rem; color: var(--c); text-transform: uppercase; }
.badge { display: inline-block; min-width: 4.5rem; text-align: center; border-radius: 3px;
         color: white; font-size: 0.8rem; padding: 0 0.3rem; margin-right: 0.4rem;
         background: var(--c); }
ul.reasons, ul.next { list-style: none; padding-left: 0; }
ul.reasons li, ul.next li { margin: 0.35rem 0; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.key th { font-weight: normal; color: #333; }
code { font-size: 0.85em; overflow-wrap: anywhere; word-break: break-word; }
.scroll table:not(.provenance) td code { overflow-wrap: normal; word-break: normal; }
code.sha { word-break: break-all; }
table.provenance { width: 100%; table-layout: fixed; }
table.provenance td { overflow-wrap: anywhere; }
table.provenance th:nth-child(4) { width: 40%; }
pre.plan { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7;
           padding: 0.6rem; font-size: 0.8rem; max-width: 100%; }
figure { margin: 1.2rem 0; }
figcaption { color: #444; font-size: 0.9rem; margin-bottom: 0.3rem; }
figure svg { display: block; width: 100%; max-width: 860px; height: auto; }
.note { color: #555; font-size: 0.9rem; }
@media (max-width: 640px) {
  body { margin: 1rem auto; padding: 0 0.6rem; }
  h1 { font-size: 1.3rem; }
  table { font-size: 0.8rem; }
  th, td { padding: 0.2rem 0.3rem; }
  table.key, table.key tbody, table.key tr, table.key th, table.key td { display: block; }
  table.key thead { display: none; }
  table.key tr { border-bottom: 1px solid #ddd; padding: 0.2rem 0; }
  table.key th, table.key td { border: none; padding: 0 0.2rem; }
}
@media print {
  @page { margin: 14mm; }
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; color: #000; }
  h2 { break-after: avoid; page-break-after: avoid; }
  figure, tr, .verdict, pre.plan { break-inside: avoid; page-break-inside: avoid; }
  .scroll { overflow: visible; }
  table { font-size: 8.5pt; width: 100%; table-layout: fixed; }
  th, td, td.num { white-space: normal; overflow-wrap: anywhere; }
  .verdict, .badge { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  figure svg { max-width: 100%; }
}
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


def _hn(value: Any, kind: NumberKind = "score", *, resolution: float | None = None) -> str:
    """:func:`~evalvalidity.report.numbers.format_number`, escaped for the page's markup."""
    return _esc(num(value, kind, resolution=resolution))


def _interval(estimate: Any, low: Any, high: Any, kind: NumberKind = "score") -> str:
    return f"{num(estimate, kind)} [{num(low, kind)}, {num(high, kind)}]"


def _size(value: float | None) -> str:
    """A pool size: a count when whole (a corpus), a score when a mean of pools."""
    if value is not None and math.isfinite(value) and float(value).is_integer():
        return num(value, "count")
    return num(value)


def _key_numbers(result: CheckResult) -> list[tuple[str, str]]:
    head = result.headroom
    pool = result.pool_kind + (
        f", declared {_size(result.declared_pool)}" if result.declared_pool is not None else ""
    )
    if result.declared_chunks is not None and result.declared_documents is not None:
        pool += (
            f" ({num(result.declared_chunks, 'count')} chunks, "
            f"{num(result.declared_documents, 'count')} documents)"
        )
    rows = [
        ("queries", num(result.n_queries, "count")),
        ("pool", pool),
        ("floor (random ranker)", num(head.floor)),
        ("ceiling (perfect ranker)", num(head.ceiling)),
        ("headroom", num(head.headroom)),
        ("floor as a share of the ceiling", num(head.floor_over_ceiling, "share")),
        ("floor method", result.floor_method),
    ]
    if head.model is not None:
        interval = (
            f" [{num(head.model_interval.low)}, {num(head.model_interval.high)}]"
            if head.model_interval
            else ""
        )
        rows.append((f"model ({result.run_name or 'run'})", num(head.model) + interval))
    if head.adjusted is not None:
        a = head.adjusted
        rows.append(("chance-adjusted score", _interval(a.estimate, a.low, a.high)))
    if result.harness is not None:
        h = result.harness
        rows.append(
            (
                "Check 1: measured / exact",
                f"{_interval(h.ratio.estimate, h.ratio.low, h.ratio.high, 'ratio')} over "
                f"{num(h.n_draws, 'count')} draws "
                f"({'your harness' if h.source != 'builtin' else 'built in'})",
            )
        )
    live = result.live or result.noise
    if live is not None:
        nf = live.noise_over_floor
        rows.append(
            (
                "noise run / floor",
                f"{_interval(nf.estimate, nf.low, nf.high, 'ratio')} (z = {num(live.noise_z)})",
            )
        )
        if live.model_over_noise is not None:
            mn = live.model_over_noise
            rows.append(
                ("Check 2: model / noise", _interval(mn.estimate, mn.low, mn.high, "ratio"))
            )
    if result.inferred_n is not None:
        n = result.inferred_n
        rows.append(("inferred N", _interval(n.estimate, n.low, n.high, "count")))
    if result.power is not None:
        p = result.power
        rows.append(
            (
                "smallest detectable difference",
                f"{num(p.min_detectable_difference)} ({num(p.alpha, 'share')} false alarms, "
                f"{num(p.power, 'share')} power); {num(p.queries_needed, 'count')} queries to "
                f"detect {num(p.delta)}",
            )
        )
    return rows


def _table(head: list[str], rows: list[str], *, cls: str = "") -> str:
    """A table in its own scrolling box (a phone scrolls the table, never the page)."""
    heading = "".join(f"<th>{_esc(h)}</th>" for h in head)
    klass = f" class='{cls}'" if cls else ""
    return (
        f"<div class='scroll'><table{klass}><thead><tr>{heading}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _query_table(result: CheckResult) -> str:
    frame = report.to_frame(result)
    if frame.empty:
        return "<p class='note'>No queries.</p>"
    flagged = frame[frame["flags"] != ""]
    shown = (flagged if not flagged.empty else frame).head(_MAX_QUERY_ROWS)
    body = []
    records: list[dict[Any, Any]] = shown.to_dict("records")
    for row in records:
        flags = ", ".join(
            f"<span title='{_esc(report.FLAG_TEXT.get(f, f))}'>{_esc(f)}</span>"
            for f in str(row["flags"]).split(", ")
            if f
        )
        body.append(
            f"<tr><td><code>{_esc(row['qid'])}</code></td>"
            f"<td class='num'>{_hn(row['pool_size'], 'count')}</td>"
            f"<td class='num'>{_hn(row['gold'], 'count')}</td>"
            f"<td class='num'>{_hn(row['floor'])}</td><td class='num'>{_hn(row['ceiling'])}</td>"
            f"<td class='num'>{_hn(row['model'])}</td><td>{flags}</td></tr>"
        )
    what = "flagged queries" if not flagged.empty else "queries"
    total = len(flagged) if not flagged.empty else len(frame)
    caption = (
        f"The first {num(len(shown), 'count')} of {num(total, 'count')} {what}, by their share "
        "of the floor."
        if total > len(shown)
        else f"All {num(total, 'count')} {what}, by their share of the floor."
    )
    head = ["query", "pool size N", "gold G", "floor", "ceiling", "model", "flags"]
    return f"<p class='note'>{_esc(caption)}</p>" + _table(head, body)


def _comparison_table(result: CheckResult) -> str:
    if result.comparison is None:
        return ""
    c = result.comparison
    means = [
        f"<tr><td><code>{_esc(n)}</code></td><td class='num'>{_hn(m)}</td></tr>"
        for n, m in zip(c.runs, c.means, strict=True)
    ]
    pairs = [
        f"<tr><td><code>{_esc(r.system_a)}</code> − <code>{_esc(r.system_b)}</code></td>"
        f"<td class='num'>{_hn(r.difference, 'signed')}</td>"
        f"<td class='num'>[{_hn(r.low, 'signed')}, {_hn(r.high, 'signed')}]</td>"
        f"<td class='num'>{_hn(r.adjusted_p_value, 'p')}</td>"
        f"<td class='num'>{_hn(r.cohens_dz)}</td>"
        f"<td>{'yes' if r.significant else 'no'}</td></tr>"
        for r in c.table.rows
    ]
    return (
        "<h2>Comparison of runs</h2>"
        + _table(["run", "mean"], means)
        + _table(
            [
                "pair",
                "difference",
                "95 % interval",
                f"p ({c.table.correction}-corrected)",
                "Cohen's dz",
                "significant",
            ],
            pairs,
        )
    )


def _leaderboard_table(result: CheckResult, leaderboard: tuple[Any, Any] | None) -> str:
    """Every run with its score, floor, chance-adjusted score, W/T/L and tests, as HTML."""
    if leaderboard is None:
        return ""
    board, notes = leaderboard
    floor = num(result.headroom.floor)
    rows = []
    for row in board.to_rows():
        separated = row["separated_from_next"]
        rows.append(
            f"<tr><td class='num'>{_hn(row['rank'], 'count')}</td>"
            f"<td><code>{_esc(row['run'])}</code></td>"
            f"<td class='num'>{_hn(row['mean'])}</td>"
            f"<td class='num'>[{_hn(row['low'])}, {_hn(row['high'])}]</td>"
            f"<td class='num'>{floor}</td><td class='num'>{_hn(row['adjusted'])}</td>"
            f"<td class='num'>{_hn(row['wins'], 'count')} / {_hn(row['ties'], 'count')} / "
            f"{_hn(row['losses'], 'count')}</td>"
            f"<td class='num'>{_hn(row['rank_low'], 'count')}–{_hn(row['rank_high'], 'count')}"
            f"</td><td>{'–' if separated is None else 'yes' if separated else 'no'}</td></tr>"
        )
    pairs = [
        f"<tr><td><code>{_esc(p.run_a)}</code> − <code>{_esc(p.run_b)}</code></td>"
        f"<td class='num'>{_hn(p.difference, 'signed')}</td>"
        f"<td class='num'>{_hn(p.p_value, 'p', resolution=board.resolution)}</td>"
        f"<td class='num'>{_hn(p.adjusted_p_value, 'p', resolution=board.resolution)}</td>"
        f"<td>{'yes' if p.significant else 'no'}</td></tr>"
        for p in board.pairs
    ]
    detectable = (
        f" The smallest difference the benchmark can detect is "
        f"{num(result.power.min_detectable_difference)}."
        if result.power is not None
        else ""
    )
    clusters = (
        f" in {num(board.n_clusters, 'count')} clusters"
        if board.n_clusters != board.n_queries
        else ""
    )
    intro = (
        f"{num(len(board.runs), 'count')} runs over {num(board.n_queries, 'count')} "
        f"queries{clusters}, best first. Wins, ties and losses count the queries on which a run "
        f"beats, equals or trails {board.baseline}. p-values are {board.correction}-corrected "
        f"over {num(len(board.pairs), 'count')} pair{'s' if len(board.pairs) != 1 else ''}; the "
        f"smallest p-value the randomization test can give: {num(board.resolution, 'p')}."
        f"{detectable}"
    )
    note_items = "".join(f"<li>{_esc(renumber(str(n)))}</li>" for n in notes)
    return (
        "<h2 id='leaderboard'>Leaderboard</h2>"
        f"<p class='note'>{_esc(intro)}</p>"
        + _table(
            [
                "rank",
                "run",
                result.metric.name,
                "95 % interval",
                "floor",
                "chance-adjusted",
                f"wins / ties / losses vs {board.baseline}",
                "rank interval",
                "separated from the next",
            ],
            rows,
        )
        + _table(
            ["pair", "difference", "p", f"p ({board.correction}-corrected)", "separated"],
            pairs,
        )
        + (f"<ul class='note'>{note_items}</ul>" if note_items else "")
    )


#: What each verdict means, in plain words (the report's first sentence after the verdict).
VERDICT_MEANING: Final[dict[str, str]] = {
    "healthy": "The benchmark can be trusted as far as these checks go: a random ranker scores "
    "well below a perfect one, and nothing is wrong with how the scores are computed.",
    "warning": "The benchmark's scores mean something, with caveats: read the points below "
    "before you trust small differences between models.",
    "broken": "Do not compare models on this benchmark as it stands: its scores do not measure "
    "what they seem to until the points below are fixed.",
}


def _plain_words(result: CheckResult) -> str:
    """The first paragraph: the verdict, what it means, what to do next for each reason."""
    colour = VERDICT_COLOURS[result.verdict]
    steps: list[str] = []
    seen: set[str] = set()
    order = {"broken": 0, "warning": 1}
    for reason in sorted(result.reasons, key=lambda r: order.get(r.severity, 2)):
        if reason.severity == "info" or reason.code in seen or reason.code not in NEXT_STEPS:
            continue
        seen.add(reason.code)
        badge = _SEVERITY_COLOUR.get(reason.severity, PALETTE["grey"])
        steps.append(
            f"<li><span class='badge' style='--c:{badge}'>{_esc(reason.severity)}</span>"
            f"{_esc(NEXT_STEPS[reason.code])}</li>"
        )
    what = (
        "What to do next:"
        if steps
        else "Nothing to do: keep running this check when the benchmark or the harness changes."
    )
    return (
        f"<p class='plain' id='summary'>Benchmark health: <strong style='color:{colour}'>"
        f"{_esc(result.verdict)}</strong>. {_esc(VERDICT_MEANING[result.verdict])} "
        f"{_esc(what)}</p>" + (f"<ul class='next'>{''.join(steps)}</ul>" if steps else "")
    )


def _provenance_section(
    result: CheckResult, datasets: Sequence[DatasetProvenance], generated: datetime.datetime
) -> str:
    from evalvalidity import __version__

    rows = [
        f"<tr><td>{_esc(d.role.replace('_', ' '))}</td><td><code>{_esc(d.name)}</code></td>"
        f"<td>{'<code>' + _esc(d.file_name) + '</code>' if d.file_name else '–'}</td>"
        f"<td>{'<code class=sha>' + _esc(d.sha256) + '</code>' if d.sha256 else 'unknown'}</td>"
        f"<td class='num'>{_hn(d.rows, 'count')}</td></tr>"
        for d in datasets
    ]
    table = (
        _table(["role", "dataset", "file name", "SHA-256", "rows"], rows, cls="provenance")
        if rows
        else "<p class='note'>The check names no dataset.</p>"
    )
    stamp = generated.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    plan = (
        f"<pre class='plan' id='plan'>{_esc(result.plan.to_json())}</pre>"
        if result.plan is not None
        else "<p class='note'>The check was run without a plan.</p>"
    )
    return (
        "<h2 id='provenance'>Provenance</h2>"
        f"<p class='note'>Made <time datetime='{generated.isoformat()}'>{_esc(stamp)}</time> by "
        f"evalvalidity <code>{_esc(__version__)}</code> (report schema "
        f"<code>{_esc(result.schema_version)}</code>). Floors are exact expected values under a "
        "uniformly random order of each query's pool (ties broken uniformly).</p>"
        + table
        + "<p class='note'>The plan: rerunning it reruns this check.</p>"
        + plan
    )


def render_html(
    result: CheckResult,
    *,
    title: str = "Benchmark health report",
    svgs: Mapping[str, str] | None = None,
    leaderboard: tuple[Any, Any] | None = None,
    provenance: Sequence[DatasetProvenance] | None = None,
    generated: datetime.datetime | None = None,
) -> str:
    """The whole report as one self-contained HTML page.

    First a paragraph in plain words (the verdict, what it means, what to do next for each
    reason: :data:`evalvalidity.analysis.rules.NEXT_STEPS`), then the reasons, the key numbers,
    the leaderboard, the charts, the queries and the provenance (each dataset's name, file
    name, SHA-256 and rows, the date, the package version, the plan as JSON). Every number is
    written by :func:`evalvalidity.report.numbers.format_number`. Tables scroll inside their
    own box and charts scale, so that a phone never scrolls the page sideways; a print
    stylesheet lays it out on paper.

    Parameters
    ----------
    result : CheckResult
        The check to report.
    title : str
        The page's title and heading.
    svgs : mapping of str to str, optional
        Charts already rendered to SVG, by the names of
        :func:`evalvalidity.report.charts.result_charts` (rendered here when omitted).
    leaderboard : (Leaderboard, notes), optional
        From :func:`evalvalidity.analysis.compare.run_leaderboard`, when the check compares
        runs: adds the leaderboard's tables.
    provenance : sequence of DatasetProvenance, optional
        The datasets (default: :func:`evalvalidity.report.provenance.dataset_provenance` of
        the result alone: files are hashed on disk, tables are unknown).
    generated : datetime.datetime, optional
        When the report was made (default: now).

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
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> page = render_html(result, title="Nightly check", svgs={})  # no chart: fast
    >>> page.startswith("<!DOCTYPE html>"), "<strong>healthy</strong>" in page, "<script" in page
    (True, True, False)
    >>> "@media print" in page, "id='plan'" in page
    (True, True)
    """
    if not isinstance(title, str) or not title.strip():
        raise ParameterError(
            f"The 'title' parameter of render_html must be a non-empty string. Got {title!r}."
        )
    if svgs is None:
        svgs = {name: chart_svg(chart) for name, chart in result_charts(result).items()}
    if provenance is None:
        provenance = dataset_provenance(result)
    if generated is None:
        generated = datetime.datetime.now(datetime.UTC)
    colour = VERDICT_COLOURS[result.verdict]
    reasons = []
    order = {"broken": 0, "warning": 1, "info": 2}
    for r in sorted(result.reasons, key=lambda r: order.get(r.severity, 3)):
        badge_colour = _SEVERITY_COLOUR.get(r.severity, PALETTE["grey"])
        reasons.append(
            f"<li><span class='badge' style='--c:{badge_colour}'>"
            f"{_esc(_SEVERITY_LABEL.get(r.severity, r.severity))}</span>"
            f"{_esc(reason_text(r))}</li>"
        )
    numbers = [f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in _key_numbers(result)]
    figures = []
    for name, svg in svgs.items():
        caption = CHART_CAPTIONS.get(name, name)
        figures.append(
            f"<figure id='chart-{_esc(name)}'><figcaption>{_esc(caption)}"
            f"</figcaption>{_strip_xml_declaration(svg)}</figure>"
        )
    notes = "".join(f"<li>{_esc(renumber(n))}</li>" for n in result.notes)
    run = f" of {result.run_name}" if result.run_name else ""
    meta = (
        f"{result.metric.name}{run}, {num(result.n_queries, 'count')} queries, pool declared "
        f"as {result.pool_kind}."
    )
    return "".join(
        [
            "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            f"<title>{_esc(title)}</title><style>{_STYLE}</style></head><body>",
            f"<h1>{_esc(title)}</h1>",
            _plain_words(result),
            f"<div class='verdict' id='verdict' style='--c:{colour}'>Benchmark health: "
            f"<strong>{_esc(result.verdict)}</strong></div>",
            f"<p class='meta'>{_esc(meta)}</p>",
            "<h2>Why</h2>",
            f"<ul class='reasons'>{''.join(reasons)}</ul>",
            "<h2>Key numbers</h2>",
            _table(["", "value"], numbers, cls="key"),
            _leaderboard_table(result, leaderboard),
            "<h2>Charts</h2>",
            "".join(figures) or "<p class='note'>No chart applies.</p>",
            _comparison_table(result),
            "<h2>Queries</h2>",
            _query_table(result),
            f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "",
            _provenance_section(result, provenance, generated),
            "</body></html>\n",
        ]
    )


def reason_text(reason: Reason) -> str:
    """A reason's message with its numbers in the report's format (:func:`~.numbers.renumber`).

    Examples
    --------
    >>> from evalvalidity.analysis.results import Reason
    >>> reason_text(Reason("warning", "low_headroom", "A random ranker scores 100 % of a "
    ...                    "perfect one (floor 0.9971).", {"floor_over_ceiling": 0.9971}))
    'A random ranker scores 99.7 % of a perfect one (floor 0.997).'
    """
    return renumber(reason.message, reason.numbers)


def _strip_xml_declaration(svg: str) -> str:
    text = svg.lstrip()
    if text.startswith("<?xml"):
        text = text[text.index("?>") + 2 :]
    return text


def write_report(
    result: CheckResult,
    out_dir: str | os.PathLike[str],
    *,
    title: str = "Benchmark health report",
    leaderboard: tuple[Any, Any] | None = None,
    provenance: Sequence[DatasetProvenance] | None = None,
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
    leaderboard : (Leaderboard, notes), optional
        The leaderboard of the compared runs, for the page and the Markdown summary.
    provenance : sequence of DatasetProvenance, optional
        The datasets, for the page (see :func:`render_html`).

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
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

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
        (
            "report.html",
            render_html(
                result, title=title, svgs=svgs, leaderboard=leaderboard, provenance=provenance
            ),
        ),
        ("check.json", report.to_json(result) + "\n"),
        ("summary.md", report.to_markdown(result, leaderboard=leaderboard)),
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


def report_zip(
    result: CheckResult,
    *,
    title: str = "Benchmark health report",
    leaderboard: tuple[Any, Any] | None = None,
    provenance: Sequence[DatasetProvenance] | None = None,
) -> bytes:
    """Everything :func:`write_report` writes, as one zip archive (for a download button).

    The keywords are :func:`write_report`'s.

    Returns
    -------
    bytes
        A zip whose members are the relative paths of :func:`write_report`'s files.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

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
        paths = write_report(
            result, folder, title=title, leaderboard=leaderboard, provenance=provenance
        )
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in paths:
                archive.write(path, arcname=path.relative_to(folder).as_posix())
    return buffer.getvalue()
