"""Report: the HTML report, each chart as PNG and SVG, the check's JSON and Markdown."""

import functools

import streamlit as st

from app import leaderboard, state, widgets
from evalvalidity.report import charts
from evalvalidity.report import html as html_report
from evalvalidity.report import records as report
from evalvalidity.report.provenance import dataset_provenance

st.title("Report")
cfg, result = widgets.result_or_stop()
widgets.verdict_banner(result)
# The leaderboard of the compared runs and each dataset's name, upload name, hash and rows.
board = leaderboard.board_of(result)
provenance = dataset_provenance(result, workspace=state.workspace(), owner=state.owner())

subject = cfg.run or cfg.qrels
title = st.text_input(
    "Report title", value=f"Benchmark health: {subject} ({result.metric.name})", key="r_title"
)
st.markdown(
    "One self-contained HTML file (charts inlined as SVG, no script, opens offline), "
    "the check as JSON (the `evalvalidity check --format json` contract) and a "
    "Markdown summary for a pull request. Files are built when you click."
)
buttons = st.columns(4)
buttons[0].download_button(
    "Download the HTML report",
    data=lambda: html_report.render_html(
        result,
        title=title or "Benchmark health report",
        leaderboard=board,
        provenance=provenance,
    ).encode("utf-8"),
    file_name="report.html",
    mime="text/html",
    on_click="ignore",
    type="primary",
    key="dl_html",
    icon=":material/download:",
)
buttons[1].download_button(
    "check.json",
    data=lambda: (report.to_json(result) + "\n").encode("utf-8"),
    file_name="check.json",
    mime="application/json",
    on_click="ignore",
    key="dl_json",
)
buttons[2].download_button(
    "summary.md",
    data=lambda: report.to_markdown(result, leaderboard=board).encode("utf-8"),
    file_name="summary.md",
    mime="text/markdown",
    on_click="ignore",
    key="dl_md",
)
buttons[3].download_button(
    "Everything (zip)",
    data=lambda: html_report.report_zip(
        result,
        title=title or "Benchmark health report",
        leaderboard=board,
        provenance=provenance,
    ),
    file_name="evalvalidity-report.zip",
    mime="application/zip",
    on_click="ignore",
    key="dl_zip",
)

st.subheader("Charts")
for name, chart in charts.result_charts(result).items():
    caption, png, svg = st.columns([4, 1, 1])
    caption.markdown(html_report.CHART_CAPTIONS.get(name, name))
    png.download_button(
        "PNG",
        data=functools.partial(html_report.chart_png, chart),
        file_name=f"{name}.png",
        mime="image/png",
        on_click="ignore",
        key=f"dl_png_{name}",
    )
    svg.download_button(
        "SVG",
        data=functools.partial(html_report.chart_svg_bytes, chart),
        file_name=f"{name}.svg",
        mime="image/svg+xml",
        on_click="ignore",
        key=f"dl_svg_{name}",
    )

with st.expander("The Markdown summary"):
    st.code(report.to_markdown(result, leaderboard=board), language="markdown")
