r"""The charts of the dashboard and of the HTML report: pure functions returning Altair charts.

Every function here takes plain numbers, data frames or a
:class:`~evalvalidity.analysis.results.CheckResult` and returns an Altair chart; nothing is drawn, nothing
is read from disk and nothing depends on Streamlit. The dashboard hands the charts to
``st.altair_chart``, the report (:mod:`evalvalidity.report.html`) renders the same charts to SVG
and PNG offline with vl-convert.

The charts aggregate on the server: a chart never carries more than :data:`MAX_ROWS` rows, so a
benchmark of 7,000 queries renders (Altair refuses to serialise more than 5,000 rows). Per-query
views are binned (:func:`floor_share_histogram`), grouped (:func:`gold_breakdown`) or limited to
the queries that matter most (:func:`query_headroom`).

Colours come from the Okabe–Ito palette, which stays distinguishable under the common forms of
colour-blindness; status is never carried by colour alone (every mark has a text label or a
legend).

==============================  ===============================================================
:func:`ratio_gauge`             a ratio with its 95 % interval against a pass band (Check 1,
                                the noise run against its floor)
:func:`headroom_sliver`         floor, ceiling and the model's score on one axis
:func:`query_headroom`          the same, per query, for the queries with the least headroom
:func:`floor_share_histogram`   how much of its ceiling a random ranker reaches, per query
:func:`gold_breakdown`          the share of the floor carried by queries with G gold items
:func:`inferred_n_chart`        the measured random score on the exact E(N) curve
:func:`check1_distribution`     Check 1's measured values against their exact distribution
:func:`comparison_chart`        paired differences of several runs against what is detectable
:func:`other_nulls_chart`       query-independent rankers and the model's tie, hole, self-hit ranges
:func:`result_charts`           every chart that applies to one check, by name
==============================  ===============================================================

Examples
--------
>>> chart = headroom_sliver(0.34, 1.0, model=0.62, model_low=0.55, model_high=0.69)
>>> spec = chart.to_dict()
>>> spec["title"]["text"]
'Headroom: floor, ceiling and the model on one axis'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import altair as alt
import numpy as np
import pandas as pd

from evalvalidity.core.floors import INVERTIBLE_FAMILIES, noise_floor
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import ParameterError

if TYPE_CHECKING:
    from evalvalidity.analysis.results import (
        CheckResult,
        Comparison,
        HarnessCheck,
        InferredPoolSizeCheck,
        QueryTable,
    )

__all__ = [
    "MAX_ROWS",
    "PALETTE",
    "VERDICT_COLOURS",
    "check1_distribution",
    "comparison_chart",
    "expected_floor_curve",
    "floor_share_histogram",
    "gold_breakdown",
    "headroom_sliver",
    "inferred_n_chart",
    "query_headroom",
    "ratio_gauge",
    "result_charts",
]

#: The Okabe–Ito palette (Okabe & Ito, 2008): safe under deuteranopia, protanopia, tritanopia.
PALETTE: Final[dict[str, str]] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "grey": "#999999",
    "light": "#DDDDDD",
}

#: Verdict → colour (always shown next to the verdict's word, never alone).
VERDICT_COLOURS: Final[dict[str, str]] = {
    "healthy": PALETTE["green"],
    "warning": PALETTE["orange"],
    "broken": PALETTE["vermillion"],
}

#: The most rows any chart carries (Altair raises MaxRowsError above 5,000).
MAX_ROWS: Final = 5000

_WIDTH: Final = 560
# The width fits the container (the axes, legend and title inside it); the height stays the
# plot's own. Without it Streamlit makes the whole chart, title and legend included, fit the
# height, squashing the plot.
_AUTOSIZE: Final = alt.AutoSizeParams(type="fit-x", contains="padding")

Chart = alt.Chart | alt.LayerChart


# ------------------------------------------------------------------------------ helpers


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _data(frame: pd.DataFrame) -> alt.Data:
    """Inline rows, refusing more than :data:`MAX_ROWS` (the caller must aggregate)."""
    if len(frame) > MAX_ROWS:
        raise ParameterError(
            f"A chart may carry at most {MAX_ROWS:,} rows; got {len(frame):,}. Aggregate first."
        )
    records = []
    for row in frame.to_dict(orient="records"):
        clean = {}
        for key, value in row.items():
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            clean[str(key)] = value
        records.append(clean)
    return alt.Data(values=records)  # type: ignore[no-untyped-call]  # altair's Data has no annotations


def _layered(
    layers: Sequence[Any], *, height: int | alt.Step, title: alt.TitleParams
) -> alt.LayerChart:
    """Layers on one view, of the report's width (fitting a container) and of plot ``height``."""
    return alt.LayerChart(
        layer=list(layers), width=_WIDTH, height=height, autosize=_AUTOSIZE, title=title
    )


def _title(text: str, subtitle: str | Sequence[str] | None = None) -> alt.TitleParams:
    if subtitle is None:
        return alt.TitleParams(text=text, anchor="start")
    return alt.TitleParams(text=text, subtitle=subtitle, anchor="start", subtitleColor="#444444")


def _fmt(value: float, digits: int = 3) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{value:.{digits}g}"


# -------------------------------------------------------------------------------- gauge


def ratio_gauge(
    estimate: float,
    low: float,
    high: float,
    *,
    title: str,
    passed: bool,
    band: tuple[float, float] = (0.8, 1.25),
    reference: float = 1.0,
    subtitle: str | Sequence[str] | None = None,
    axis_title: str = "ratio (log scale)",
    one_sided: bool = False,
) -> alt.LayerChart:
    """A ratio with its 95 % interval against the band where it passes.

    The axis is logarithmic, so that 0.5× and 2× sit at the same distance from 1×. The pass
    band is shaded, the reference (1× = the exact value) is a dashed rule, the interval a thick
    bar and the estimate a labelled point, in green when the check passes and vermillion when
    it fails.

    Parameters
    ----------
    estimate, low, high : float
        The ratio and its 95 % interval (a low end <= 0 is drawn at the axis' left edge).
    title : str
        What is measured, e.g. "Check 1: measured / exact floor".
    passed : bool
        Whether the check passes (sets the colour and the label).
    band : tuple of float
        The pass band (low, high), both > 0.
    reference : float
        Where the ratio should be (1 for "measured = exact").
    subtitle : str or sequence of str, optional
        Lines under the title.
    axis_title : str
        The x axis' title.
    one_sided : bool, default False
        The rule fails only above ``band[1]`` (Check 2's leak): the pass band is shaded from
        the axis' left edge up to ``band[1]``.

    An interval whose low end is 0 (or below) has no place on a log axis: it is not drawn, and
    the label gives its ends.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ParameterError
        When the estimate is not a finite positive number or the band is not ordered.

    Examples
    --------
    >>> spec = ratio_gauge(0.99, 0.95, 1.03, title="Check 1", passed=True).to_dict()
    >>> spec["layer"][0]["mark"]["type"], spec["layer"][0]["encoding"]["x"]["scale"]["type"]
    ('rect', 'log')
    """
    if not _finite(estimate) or estimate <= 0:
        raise ParameterError(
            f"The 'estimate' parameter of ratio_gauge must be a finite number > 0. Got "
            f"{estimate!r} instead."
        )
    if not (0 < band[0] < band[1]):
        raise ParameterError(
            f"The 'band' parameter of ratio_gauge must be (low, high) with 0 < low < high. Got "
            f"{band!r} instead."
        )
    lo_end = min(band[0], estimate, low if _finite(low) and low > 0 else estimate) / 1.6
    hi_end = max(band[1], estimate, high if _finite(high) else estimate) * 1.6
    drawn = _finite(low) and low > 0 and _finite(high)
    shown_low = low if _finite(low) and low > lo_end else lo_end
    shown_high = high if _finite(high) and high < hi_end else hi_end
    colour = PALETTE["green"] if passed else PALETTE["vermillion"]
    status = "passes" if passed else "fails"
    scale = alt.Scale(type="log", domain=[lo_end, hi_end], nice=False)
    row = pd.DataFrame(
        [
            {
                "estimate": estimate,
                "low": shown_low,
                "high": shown_high,
                "band_low": lo_end if one_sided else band[0],
                "band_high": band[1],
                "reference": reference,
                "label": f"{estimate:.2f}× [{_fmt(low, 3)}, {_fmt(high, 3)}] — {status}"
                + ("" if drawn else " (interval reaches 0: not drawn)"),
                "band_label": f"passes up to {band[1]:g}×"
                if one_sided
                else f"pass band {band[0]:g}–{band[1]:g}×",
            }
        ]
    )
    base = alt.Chart(_data(row))
    x_axis = alt.Axis(title=axis_title, format="~g", grid=False)
    shaded = base.mark_rect(color=PALETTE["green"], opacity=0.15).encode(
        x=alt.X("band_low:Q", scale=scale, axis=x_axis),
        x2="band_high:Q",
        tooltip=[alt.Tooltip("band_label:N", title="pass band")],
    )
    band_text = base.mark_text(
        align="left", baseline="bottom", dx=3, fontSize=10, color=PALETTE["green"]
    ).encode(x="band_low:Q", y=alt.value(68), text="band_label:N")
    ref = base.mark_rule(strokeDash=[4, 3], color=PALETTE["black"]).encode(x="reference:Q")
    interval = base.mark_rule(size=6, color=colour, opacity=0.8).encode(
        x="low:Q",
        x2="high:Q",
        tooltip=[
            alt.Tooltip("estimate:Q", format=".3f"),
            alt.Tooltip("low:Q", format=".3f"),
            alt.Tooltip("high:Q", format=".3f"),
        ],
    )
    point = base.mark_point(
        filled=True, size=160, shape="diamond", color=colour, stroke="white"
    ).encode(x="estimate:Q")
    # Keep the label inside the plot: anchor it on the side of the estimate facing the middle.
    where = math.log(estimate / lo_end) / math.log(hi_end / lo_end)
    align: Literal["left", "center", "right"] = (
        "right" if where > 0.65 else "left" if where < 0.35 else "center"
    )
    text = base.mark_text(
        align=align, baseline="top", fontSize=12, fontWeight="bold", color=colour
    ).encode(x="estimate:Q", y=alt.value(4), text="label:N")
    layers = [shaded, band_text, ref, *([interval] if drawn else []), point, text]
    return _layered(layers, height=70, title=_title(title, subtitle))


# ----------------------------------------------------------------------------- headroom


def headroom_sliver(
    floor: float,
    ceiling: float,
    *,
    model: float | None = None,
    model_low: float | None = None,
    model_high: float | None = None,
    metric: str = "score",
    model_name: str = "model",
    title: str = "Headroom: floor, ceiling and the model on one axis",
    subtitle: str | None = None,
) -> alt.LayerChart:
    """Floor, ceiling and the model's score on one axis: the sliver a model can move in.

    Parameters
    ----------
    floor, ceiling : float
        What a uniformly random order of the pool scores in expectation, and the best score
        any order can reach.
    model, model_low, model_high : float, optional
        The model's score and its 95 % interval.
    metric : str
        The metric's name, for the axis.
    model_name : str
        The model's name, for its label.
    title, subtitle : str
        The chart's title and an optional line under it.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ParameterError
        When the floor or the ceiling is not finite, or the floor exceeds the ceiling.

    Examples
    --------
    >>> spec = headroom_sliver(0.79, 1.0).to_dict()
    >>> [v["part"] for v in spec["layer"][0]["data"]["values"]]
    ['floor (random ranker)', 'headroom']
    """
    if not (_finite(floor) and _finite(ceiling)):
        raise ParameterError(
            f"headroom_sliver needs a finite floor and ceiling. Got {floor!r} and {ceiling!r}."
        )
    if floor > ceiling + 1e-12:
        raise ParameterError(
            f"The floor ({floor:.4g}) of headroom_sliver exceeds the ceiling ({ceiling:.4g})."
        )
    top = max(1.0, ceiling)
    parts = pd.DataFrame(
        [
            {"part": "floor (random ranker)", "start": 0.0, "end": floor, "y": "benchmark"},
            {"part": "headroom", "start": floor, "end": ceiling, "y": "benchmark"},
        ]
    )
    colour = alt.Color(
        "part:N",
        title=None,
        scale=alt.Scale(
            domain=["floor (random ranker)", "headroom"], range=[PALETTE["grey"], PALETTE["sky"]]
        ),
        legend=alt.Legend(orient="bottom", direction="horizontal"),
    )
    x_scale = alt.Scale(domain=[0, top], nice=False)
    bars = (
        alt.Chart(_data(parts))
        .mark_bar(height=26)
        .encode(
            x=alt.X("start:Q", scale=x_scale, title=metric),
            x2="end:Q",
            y=alt.Y("y:N", axis=None),
            color=colour,
            tooltip=[
                alt.Tooltip("part:N"),
                alt.Tooltip("start:Q", format=".4f"),
                alt.Tooltip("end:Q", format=".4f"),
            ],
        )
    )
    layers: list[Any] = [bars]
    # Labels above the bar, each ending at its mark; a floor near 0 starts at its mark, and a
    # ceiling close to the floor starts at its own mark, so the two never overlap.
    narrow = (ceiling - floor) < 0.2 * top
    ends: tuple[tuple[float, str, Literal["left", "right"]], ...] = (
        (floor, f"floor {floor:.3g}", "left" if floor < 0.15 * top else "right"),
        (ceiling, f"ceiling {ceiling:.3g}", "left" if narrow else "right"),
    )
    for x, label, align in ends:
        mark = pd.DataFrame([{"x": x, "label": label, "y": "benchmark"}])
        layers.append(
            alt.Chart(_data(mark))
            .mark_text(align=align, baseline="bottom", dy=-16, fontSize=11)
            .encode(x=alt.X("x:Q", scale=x_scale), y=alt.Y("y:N", axis=None), text="label:N")
        )
    if model is not None and _finite(model):
        low = model_low if _finite(model_low) else model
        high = model_high if _finite(model_high) else model
        point = pd.DataFrame(
            [
                {
                    "model": model,
                    "low": low,
                    "high": high,
                    "y": "benchmark",
                    "label": f"{model_name} {model:.3g}",
                }
            ]
        )
        base = alt.Chart(_data(point))
        layers += [
            base.mark_rule(size=3, color=PALETTE["vermillion"]).encode(
                x=alt.X("low:Q", scale=x_scale), x2="high:Q", y=alt.Y("y:N", axis=None)
            ),
            base.mark_point(
                shape="diamond", filled=True, size=180, color=PALETTE["vermillion"], stroke="white"
            ).encode(
                x=alt.X("model:Q", scale=x_scale),
                y=alt.Y("y:N", axis=None),
                tooltip=[
                    alt.Tooltip("model:Q", format=".4f"),
                    alt.Tooltip("low:Q", format=".4f"),
                    alt.Tooltip("high:Q", format=".4f"),
                ],
            ),
            base.mark_text(
                baseline="top", dy=16, fontSize=11, fontWeight="bold", color=PALETTE["vermillion"]
            ).encode(x=alt.X("model:Q", scale=x_scale), y=alt.Y("y:N", axis=None), text="label:N"),
        ]
    if subtitle is None:
        share = floor / ceiling if ceiling > 0 else float("nan")
        subtitle = (
            f"A random ranker reaches {100 * share:.0f} % of the ceiling; the headroom "
            f"is {ceiling - floor:.3g} wide."
            if math.isfinite(share)
            else "No query has a gold item: the ceiling is 0."
        )
    return _layered(layers, height=80, title=_title(title, subtitle))


def query_headroom(
    frame: pd.DataFrame, *, limit: int = 30, metric: str = "score", order: str = "floor_share"
) -> alt.LayerChart:
    """The headroom of single queries: floor, ceiling and the model's score, one row each.

    Only the ``limit`` queries ranked first by ``order`` (descending) are drawn, so the chart
    stays readable (and small) whatever the number of queries; the subtitle says how many
    were left out.

    Parameters
    ----------
    frame : pandas.DataFrame
        The triage table (:func:`evalvalidity.report.records.to_frame`): ``qid``, ``floor``,
        ``ceiling``, ``model`` and the ``order`` column.
    limit : int
        How many queries to draw (1 to 200).
    metric : str
        The metric's name, for the axis.
    order : str
        The column that picks the queries (default: each query's share of the mean floor).

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ParameterError
        When a column is missing or ``limit`` is out of range.

    Examples
    --------
    >>> frame = pd.DataFrame({"qid": ["a", "b"], "floor": [0.5, 0.1], "ceiling": [1.0, 1.0],
    ...                       "model": [0.9, 0.2], "floor_share": [0.8, 0.2]})
    >>> [row["qid"] for row in query_headroom(frame, limit=1).to_dict()["data"]["values"]]
    ['a']
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
        raise ParameterError(
            f"The 'limit' parameter of query_headroom must be an int from 1 to 200. Got "
            f"{limit!r} instead."
        )
    needed = ["qid", "floor", "ceiling", "model", order]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ParameterError(f"query_headroom needs the columns {', '.join(missing)}.")
    shown = frame.sort_values(order, ascending=False, kind="stable").head(limit)
    rows = pd.DataFrame(
        {
            "qid": shown["qid"].astype(str),
            "rank": np.arange(1, len(shown) + 1),
            "floor": shown["floor"].astype(float),
            "ceiling": shown["ceiling"].astype(float),
            "model": pd.to_numeric(shown["model"], errors="coerce").astype(float),
            "zero": 0.0,
        }
    )
    y = alt.Y("qid:N", sort=alt.EncodingSortField("rank", order="ascending"), title="query")
    x_scale = alt.Scale(domain=[0, max(1.0, float(rows["ceiling"].max() or 1.0))], nice=False)
    base = alt.Chart(_data(rows))
    tooltip = [
        alt.Tooltip("qid:N"),
        alt.Tooltip("floor:Q", format=".4f"),
        alt.Tooltip("ceiling:Q", format=".4f"),
        alt.Tooltip("model:Q", format=".4f"),
    ]
    layers: list[Any] = [
        base.mark_bar(color=PALETTE["grey"], height=10).encode(
            x=alt.X("zero:Q", scale=x_scale, title=metric), x2="floor:Q", y=y, tooltip=tooltip
        ),
        base.mark_bar(color=PALETTE["sky"], height=10).encode(
            x=alt.X("floor:Q", scale=x_scale), x2="ceiling:Q", y=y, tooltip=tooltip
        ),
    ]
    if rows["model"].notna().any():
        layers.append(
            base.mark_tick(color=PALETTE["vermillion"], thickness=3, size=14).encode(
                x=alt.X("model:Q", scale=x_scale), y=y, tooltip=tooltip
            )
        )
    left_out = len(frame) - len(rows)
    subtitle = (
        "grey: floor (random ranker), blue: headroom to the ceiling"
        + (", vermillion tick: the model" if rows["model"].notna().any() else "")
        + (f"; {left_out:,} more queries not shown" if left_out > 0 else "")
    )
    return _layered(
        layers,
        height=alt.Step(20),
        title=_title(f"The {len(rows)} queries with the least headroom", subtitle),
    )


def floor_share_histogram(
    frame: pd.DataFrame, *, threshold: float = 0.5, bins: int = 20
) -> alt.LayerChart:
    """How much of each query's ceiling a random ranker reaches, binned over all queries.

    Parameters
    ----------
    frame : pandas.DataFrame
        The triage table: ``floor`` and ``ceiling`` per query.
    threshold : float
        Where a query is flagged ``floor_high`` (drawn as a rule).
    bins : int
        Number of equal bins on [0, 1].

    Returns
    -------
    altair.LayerChart
        One row per bin, whatever the number of queries.

    Raises
    ------
    ParameterError
        When a column is missing or ``bins`` is not in 2..100.

    Examples
    --------
    >>> frame = pd.DataFrame({"floor": [0.01] * 7000, "ceiling": [1.0] * 7000})
    >>> rows = floor_share_histogram(frame).to_dict()["layer"][0]["data"]["values"]
    >>> len(rows), sum(r["queries"] for r in rows)
    (20, 7000)
    """
    if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 100:
        raise ParameterError(
            f"The 'bins' parameter of floor_share_histogram must be an int from 2 to 100. Got "
            f"{bins!r} instead."
        )
    for column in ("floor", "ceiling"):
        if column not in frame.columns:
            raise ParameterError(f"floor_share_histogram needs the column {column!r}.")
    floor = frame["floor"].to_numpy(dtype=float)
    ceiling = frame["ceiling"].to_numpy(dtype=float)
    ok = ceiling > 0
    share = np.clip(floor[ok] / ceiling[ok], 0.0, 1.0)
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts, _ = np.histogram(share, bins=edges)
    rows = pd.DataFrame(
        {
            "start": edges[:-1],
            "end": edges[1:],
            "queries": counts.astype(int),
            "side": np.where(edges[:-1] >= threshold - 1e-12, "flagged floor_high", "below"),
        }
    )
    no_gold = int((~ok).sum())
    bars = (
        alt.Chart(_data(rows))
        .mark_bar(stroke="white")
        .encode(
            x=alt.X(
                "start:Q",
                bin="binned",
                scale=alt.Scale(domain=[0, 1]),
                title="floor / ceiling of each query",
                axis=alt.Axis(format="%"),
            ),
            x2="end:Q",
            y=alt.Y("queries:Q", title="queries"),
            color=alt.Color(
                "side:N",
                title=None,
                scale=alt.Scale(
                    domain=["below", "flagged floor_high"],
                    range=[PALETTE["blue"], PALETTE["vermillion"]],
                ),
                legend=alt.Legend(orient="bottom", direction="horizontal"),
            ),
            tooltip=[
                alt.Tooltip("start:Q", format=".0%", title="from"),
                alt.Tooltip("end:Q", format=".0%", title="to"),
                alt.Tooltip("queries:Q"),
            ],
        )
    )
    rule_data = pd.DataFrame([{"x": threshold, "label": f"flag at {threshold:.0%}"}])
    rule = alt.Chart(_data(rule_data)).mark_rule(strokeDash=[4, 3]).encode(x="x:Q")
    label = (
        alt.Chart(_data(rule_data))
        .mark_text(align="left", dx=4, dy=-4, baseline="top", fontSize=11)
        .encode(x="x:Q", y=alt.value(0), text="label:N")
    )
    subtitle = f"{len(share):,} queries with gold" + (
        f"; {no_gold:,} without gold (ceiling 0) left out" if no_gold else ""
    )
    return _layered(
        [bars, rule, label],
        height=200,
        title=_title("How close a random ranker gets to a perfect one, per query", subtitle),
    )


def gold_breakdown(frame: pd.DataFrame, *, max_groups: int = 20) -> alt.LayerChart:
    """Queries grouped by their number of gold items G: their share of the mean floor.

    Queries with several gold items have higher floors, yet count once in a flat mean: this
    shows how much of the benchmark's floor they carry.

    Parameters
    ----------
    frame : pandas.DataFrame
        The triage table: ``gold`` and ``floor`` per query (``model`` optional).
    max_groups : int
        G values beyond the first ``max_groups - 1`` distinct ones are pooled into one group
        "≥ G".

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ParameterError
        When a column is missing.

    Examples
    --------
    >>> frame = pd.DataFrame({"gold": [1, 1, 3], "floor": [0.1, 0.1, 0.2]})
    >>> [(r["group"], r["queries"]) for r in
    ...  gold_breakdown(frame).to_dict()["layer"][0]["data"]["values"]]
    [('1', 2), ('3', 1)]
    """
    for column in ("gold", "floor"):
        if column not in frame.columns:
            raise ParameterError(f"gold_breakdown needs the column {column!r}.")
    rows = _gold_groups(frame, max_groups)
    bars = (
        alt.Chart(_data(rows))
        .mark_bar(color=PALETTE["blue"])
        .encode(
            x=alt.X(
                "group:N",
                sort=alt.EncodingSortField("order", order="ascending"),
                title="gold items in the pool (G)",
                axis=alt.Axis(labelAngle=0),
            ),
            y=alt.Y("floor_share:Q", title="share of the mean floor", axis=alt.Axis(format="%")),
            tooltip=[
                alt.Tooltip("group:N"),
                alt.Tooltip("queries:Q"),
                alt.Tooltip("query_share:Q", format=".1%", title="share of queries"),
                alt.Tooltip("floor_share:Q", format=".1%", title="share of the floor"),
                alt.Tooltip("mean_floor:Q", format=".4f"),
            ],
        )
    )
    text = (
        alt.Chart(_data(rows))
        .mark_text(baseline="bottom", dy=-2, fontSize=10)
        .encode(
            x=alt.X("group:N", sort=alt.EncodingSortField("order", order="ascending")),
            y="floor_share:Q",
            text="label:N",
        )
    )
    multi = float(rows.loc[rows["order"] > 1, "floor_share"].sum())
    multi_q = float(rows.loc[rows["order"] > 1, "query_share"].sum())
    subtitle = (
        f"Queries with G > 1 are {multi_q:.0%} of the queries and carry {multi:.0%} "
        "of the floor (labels: number of queries)"
    )
    return _layered(
        [bars, text], height=200, title=_title("Multi-gold queries and the floor", subtitle)
    )


def _gold_groups(frame: pd.DataFrame, max_groups: int) -> pd.DataFrame:
    gold = frame["gold"].to_numpy(dtype=np.int64)
    floor = frame["floor"].to_numpy(dtype=float)
    values = np.unique(gold)
    if len(values) > max_groups:
        cap = int(values[max_groups - 1])
        group = np.minimum(gold, cap)
    else:
        cap = None
        group = gold
    total = float(floor.sum())
    out = []
    for g in np.unique(group).tolist():
        members = group == g
        name = f"≥ {g}" if cap is not None and g == cap else f"{g}"
        out.append(
            {
                "group": name,
                "order": int(g),
                "queries": int(members.sum()),
                "query_share": float(members.mean()),
                "floor_share": float(floor[members].sum() / total) if total > 0 else 0.0,
                "mean_floor": float(floor[members].mean()),
                "label": f"{int(members.sum()):,}",
            }
        )
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- inferred N


def expected_floor_curve(
    metric: str | Metric,
    gold: Any,
    judged: Any = None,
    *,
    low: float,
    high: float,
    points: int = 120,
) -> pd.DataFrame:
    r"""The benchmark's exact mean floor as a function of a shared pool size N.

    .. math:: E(N) = \frac{1}{Q} \sum_q E[\text{metric}; N, G_q, R_q]

    evaluated on integer pool sizes spaced geometrically between ``low`` and ``high``: the
    curve that :func:`evalvalidity.core.floors.infer_benchmark_pool_size` inverts.

    Parameters
    ----------
    metric : str or Metric
        A metric whose floor depends only on (N, G, R, k): rr, hit, p, r, rprec or ap.
    gold, judged : array-like of int
        G_q (>= 1) and R_q (>= G_q, default G_q) of the queries.
    low, high : float
        The range of N (``low`` is raised to the largest G).
    points : int
        Grid points (at most; duplicates after rounding are dropped).

    Returns
    -------
    pandas.DataFrame
        ``pool_size`` and ``expected``, one row per grid point.

    Raises
    ------
    ParameterError
        For a metric without an invertible floor, no gold, or an empty range.

    Examples
    --------
    >>> curve = expected_floor_curve("rr@10", [1], low=10, high=10, points=1)
    >>> round(float(curve["expected"].iloc[0]), 6)  # H_10 / 10
    0.292897
    """
    metric = parse_metric(metric)
    if not metric.spec.invertible:
        raise ParameterError(
            f"expected_floor_curve needs a metric whose floor depends only on N, G and R "
            f"({', '.join(INVERTIBLE_FAMILIES)}). Got {metric.name} instead."
        )
    g = np.asarray(gold, dtype=np.int64).ravel()
    r = g if judged is None else np.asarray(judged, dtype=np.int64).ravel()
    keep = g > 0
    g, r = g[keep], r[keep]
    if len(g) == 0:
        raise ParameterError("expected_floor_curve needs at least one query with gold >= 1.")
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        raise ParameterError(
            f"expected_floor_curve needs finite low <= high. Got {low!r} and {high!r}."
        )
    start = max(float(low), float(g.max()), 1.0)
    stop = max(float(high), start)
    grid = np.unique(np.round(np.geomspace(start, stop, max(int(points), 1))).astype(np.int64))
    classes, counts = np.unique(np.stack([g, r], axis=1), axis=0, return_counts=True)
    n_classes = len(classes)
    floor = noise_floor(
        metric,
        np.repeat(grid, n_classes),
        np.tile(classes[:, 0], len(grid)),
        judged=np.tile(classes[:, 1], len(grid)),
    )
    weights = counts / counts.sum()
    expected = floor.expected.reshape(len(grid), n_classes) @ weights
    return pd.DataFrame({"pool_size": grid, "expected": expected})


def inferred_n_chart(
    inferred: InferredPoolSizeCheck, curve: pd.DataFrame, *, metric: str = "score"
) -> alt.LayerChart:
    """The measured random score placed on the exact E(N) curve, with the declared pool marked.

    Parameters
    ----------
    inferred : InferredPoolSizeCheck
        From a :class:`~evalvalidity.analysis.results.CheckResult`: the measured value, the inferred N
        and its interval, the declared pool (and chunk and document counts with a units map).
    curve : pandas.DataFrame
        :func:`expected_floor_curve` over a range that covers the declared and inferred sizes.
    metric : str
        The metric's name, for the axis.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ParameterError
        When the curve is empty or larger than :data:`MAX_ROWS`.

    The numbers: docs/math.md, Inversion.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> curve = expected_floor_curve("rr@10", result.queries.gold, low=5, high=60)
    >>> chart = inferred_n_chart(result.inferred_n, curve, metric="rr@10")
    >>> round(result.inferred_n.estimate, 1), chart.to_dict()["title"]["text"]
    (17.3, 'Inferred pool size N')
    """
    if curve.empty:
        raise ParameterError("inferred_n_chart needs a non-empty curve.")
    lo_n, hi_n = float(curve["pool_size"].min()), float(curve["pool_size"].max())
    x_scale = alt.Scale(type="log", domain=[lo_n, hi_n], nice=False)
    line = (
        alt.Chart(_data(curve))
        .mark_line(color=PALETTE["blue"], strokeWidth=2)
        .encode(
            x=alt.X(
                "pool_size:Q",
                scale=x_scale,
                title="pool size N (log scale)",
                axis=alt.Axis(format="~s"),
            ),
            y=alt.Y("expected:Q", title=f"exact mean floor E(N) of {metric}"),
            tooltip=[
                alt.Tooltip("pool_size:Q", format=",", title="N"),
                alt.Tooltip("expected:Q", format=".5f", title="E(N)"),
            ],
        )
    )
    layers: list[Any] = [line]
    marks: list[dict[str, Any]] = []
    if inferred.declared_chunks is not None:
        marks.append(
            {
                "n": float(inferred.declared_chunks),
                "kind": "declared chunks",
                "label": f"chunks {inferred.declared_chunks:,}",
            }
        )
    if inferred.declared_documents is not None:
        marks.append(
            {
                "n": float(inferred.declared_documents),
                "kind": "declared documents",
                "label": f"documents {inferred.declared_documents:,}",
            }
        )
    if not marks and inferred.declared_pool is not None and _finite(inferred.declared_pool):
        marks.append(
            {
                "n": float(inferred.declared_pool),
                "kind": "declared pool",
                "label": f"declared {inferred.declared_pool:,.0f}",
            }
        )
    marks = [m for m in marks if lo_n <= m["n"] <= hi_n]
    if marks:
        rules = pd.DataFrame(marks)
        kinds = {
            "declared chunks": PALETTE["purple"],
            "declared documents": PALETTE["green"],
            "declared pool": PALETTE["green"],
        }
        present = [k for k in kinds if k in set(rules["kind"])]
        colour = alt.Color(
            "kind:N",
            title=None,
            scale=alt.Scale(domain=present, range=[kinds[k] for k in present]),
            legend=alt.Legend(orient="bottom", direction="horizontal"),
        )
        base = alt.Chart(_data(rules))
        layers += [
            base.mark_rule(strokeDash=[6, 3], strokeWidth=2).encode(x="n:Q", color=colour),
            base.mark_text(
                angle=270, align="right", baseline="bottom", dx=-4, dy=-3, fontSize=11
            ).encode(
                x="n:Q", y=alt.value(0), text="label:N", color=alt.Color("kind:N", legend=None)
            ),
        ]
    if _finite(inferred.estimate) and _finite(inferred.measured):
        est = min(max(inferred.estimate, lo_n), hi_n)
        low = min(max(inferred.low if _finite(inferred.low) else lo_n, lo_n), hi_n)
        high = min(max(inferred.high if _finite(inferred.high) else hi_n, lo_n), hi_n)
        point = pd.DataFrame(
            [
                {
                    "n": est,
                    "low": low,
                    "high": high,
                    "measured": inferred.measured,
                    "label": f"measured {inferred.measured:.4g} → N ≈ {inferred.estimate:,.0f}",
                }
            ]
        )
        base = alt.Chart(_data(point))
        layers += [
            base.mark_rect(color=PALETTE["orange"], opacity=0.18).encode(x="low:Q", x2="high:Q"),
            base.mark_rule(color=PALETTE["orange"], strokeDash=[2, 2]).encode(y="measured:Q"),
            base.mark_point(
                shape="diamond", filled=True, size=200, color=PALETTE["vermillion"], stroke="white"
            ).encode(
                x="n:Q",
                y="measured:Q",
                tooltip=[
                    alt.Tooltip("n:Q", format=",.0f", title="inferred N"),
                    alt.Tooltip("low:Q", format=",.0f"),
                    alt.Tooltip("high:Q", format=",.0f"),
                    alt.Tooltip("measured:Q", format=".5f"),
                ],
            ),
            base.mark_text(
                align="left",
                dx=10,
                dy=-10,
                fontSize=12,
                fontWeight="bold",
                color=PALETTE["vermillion"],
            ).encode(x="n:Q", y="measured:Q", text="label:N"),
        ]
    source = {
        "builtin": "the built-in simulation",
        "harness-output": "your harness",
        "noise-run": "the noise run",
    }.get(inferred.source, inferred.source)
    subtitle = [
        f"The random score measured by {source}, read off the exact curve; "
        "shaded: the 95 % interval of N."
    ]
    if inferred.diagnosis:
        subtitle.extend(_wrap(inferred.diagnosis, 110, 3))
    return _layered(layers, height=260, title=_title("Inferred pool size N", subtitle))


def _wrap(text: str, width: int, max_lines: int) -> list[str]:
    """Break ``text`` into lines of at most ``width`` characters (subtitles do not wrap)."""
    import textwrap

    lines = textwrap.wrap(text, width)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return lines


# ------------------------------------------------------------------------------ Check 1


def _exact_pmf(
    metric: Metric, pool_size: np.ndarray, gold: np.ndarray, judged: np.ndarray
) -> dict[float, float]:
    """The exact distribution of one draw's value, mixed equally over the queries."""
    from scipy.special import gammaln
    from scipy.stats import hypergeom

    pmf: dict[float, float] = {}
    q = len(pool_size)
    classes, counts = np.unique(
        np.stack([pool_size, gold, judged], axis=1), axis=0, return_counts=True
    )
    for (n, g, r), count in zip(classes.tolist(), counts.tolist(), strict=True):
        weight = count / q
        if g == 0:
            pmf[0.0] = pmf.get(0.0, 0.0) + weight
            continue
        k = n if metric.k is None else min(metric.k, n)
        if metric.family == "rr":
            ranks = np.arange(1, min(k, n - g + 1) + 1)
            # P(first gold at rank r) = C(N - r, G - 1) / C(N, G)
            log_p = (
                gammaln(n - ranks + 1)
                - gammaln(g)
                - gammaln(n - ranks - g + 2)
                - (gammaln(n + 1) - gammaln(g + 1) - gammaln(n - g + 1))
            )
            probs = np.exp(log_p)
            for rank, p in zip(ranks.tolist(), probs.tolist(), strict=True):
                key = round(1.0 / rank, 4)
                pmf[key] = pmf.get(key, 0.0) + weight * p
            missed = 1.0 - float(probs.sum())
            if missed > 1e-12:  # no gold in the top k (impossible when k >= N - G + 1)
                pmf[0.0] = pmf.get(0.0, 0.0) + weight * missed
            continue
        hits = np.arange(0, min(g, k) + 1)
        probs = hypergeom.pmf(hits, n, g, k)
        for x, p in zip(hits.tolist(), probs.tolist(), strict=True):
            if metric.family == "hit":
                value = 1.0 if x >= 1 else 0.0
            elif metric.family == "p":
                value = x / (metric.k or k)
            else:
                value = x / r if r > 0 else 0.0
            key = round(value, 4)
            pmf[key] = pmf.get(key, 0.0) + weight * p
    return pmf


def check1_distribution_data(result: CheckResult) -> tuple[pd.DataFrame, bool]:
    """Check 1's measured distribution of single draws and, where it has one, the exact one.

    Each draw's value is weighted by its importance weight, so that the measured frequencies
    estimate the probabilities under a uniformly random order even when gold items were drawn
    more often. The exact distribution is the mixture, over the checked queries with equal
    weights, of each query's distribution under a random order of its pool; it is known in
    closed form for rr, hit, p and r with a plain pool (not for chunk scores deduplicated to
    documents).

    Parameters
    ----------
    result : CheckResult
        A check with Check 1 (``result.harness`` not None).

    Returns
    -------
    (pandas.DataFrame, bool)
        Rows ``value``, ``label``, ``source`` ("measured" or "exact") and ``probability``; and
        whether the values are discrete (one row per value) rather than binned.

    Raises
    ------
    ParameterError
        When the result has no Check 1.
    """
    harness = result.harness
    if harness is None:
        raise ParameterError("check1_distribution_data needs a result with Check 1.")
    metric = result.metric
    values = np.asarray(harness.sample_values, dtype=float)
    weights = np.asarray(harness.sample_weights, dtype=float)
    total = float(len(values))
    keys = np.round(values, 4)
    distinct = np.unique(keys)
    discrete = metric.spec.few_values and len(distinct) <= 60
    rows: list[dict[str, Any]] = []
    if discrete:
        sums: dict[float, float] = {}
        for key, w in zip(keys.tolist(), weights.tolist(), strict=True):
            sums[key] = sums.get(key, 0.0) + w
        exact = _exact_for(result, harness) if result.floor_method == "exact" else None
        every = sorted(set(sums) | set(exact or {}))
        for key in every:
            label = _value_label(metric, key)
            rows.append(
                {
                    "value": key,
                    "label": label,
                    "source": "measured",
                    "probability": sums.get(key, 0.0) / total,
                }
            )
            if exact is not None:
                rows.append(
                    {
                        "value": key,
                        "label": label,
                        "source": "exact",
                        "probability": exact.get(key, 0.0),
                    }
                )
        return pd.DataFrame(rows), True
    edges = np.linspace(0.0, max(1.0, float(values.max()) if len(values) else 1.0), 21)
    counts, _ = np.histogram(values, bins=edges, weights=weights)
    for lo, hi, c in zip(edges[:-1].tolist(), edges[1:].tolist(), counts.tolist(), strict=True):
        rows.append(
            {
                "value": lo,
                "label": f"{lo:.2f}–{hi:.2f}",
                "source": "measured",
                "probability": c / total,
            }
        )
    return pd.DataFrame(rows), False


def _value_label(metric: Metric, value: float) -> str:
    if metric.family == "rr" and 0 < value < 1:
        return f"1/{round(1 / value)}"
    return f"{value:g}"


def _checked(table: QueryTable, per_query: np.ndarray) -> np.ndarray | None:
    """Which rows of the triage table a per-query array (in sorted query order) covers."""
    qid = np.asarray(table.qid).astype(str)
    if len(per_query) != len(qid):
        return None
    # Per-query arrays of a check follow the sorted query ids; the triage table its own order.
    position = np.argsort(np.argsort(qid, kind="stable"), kind="stable")
    return np.asarray(np.isfinite(per_query)[position], dtype=bool)


def _exact_for(result: CheckResult, harness: HarnessCheck) -> dict[float, float] | None:
    table = result.queries
    if len(table) == 0:
        return None
    present = _checked(table, np.asarray(harness.per_query_measured, dtype=float))
    if present is None:
        return None
    return _exact_pmf(
        result.metric,
        np.asarray(table.pool_size)[present].astype(np.int64),
        np.asarray(table.gold)[present].astype(np.int64),
        np.asarray(table.judged)[present].astype(np.int64),
    )


def check1_distribution(result: CheckResult) -> alt.LayerChart:
    """Check 1's measured distribution of single random draws against the exact distribution.

    For a discrete metric the probability of a zero score (usually most of the mass) is stated
    in the subtitle, and the bars show the other values, measured beside exact. Where no exact
    distribution is available (deduplicated chunk scores, continuous metrics) the measured one
    is shown with the exact mean in the subtitle.

    Parameters
    ----------
    result : CheckResult
        A check with Check 1.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ParameterError
        When the result has no Check 1.

    The numbers: docs/math.md, Check 1.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> spec = check1_distribution(result).to_dict()
    >>> spec["title"]["text"]
    'Check 1: the measured distribution against the exact one'
    >>> spec["title"]["subtitle"][1]
    'P(score = 0): measured 0.448, exact 0.500 (not drawn)'
    """
    rows, discrete = check1_distribution_data(result)
    harness = result.harness
    if harness is None:  # check1_distribution_data raised already; this narrows the type
        raise ParameterError("check1_distribution needs a result with Check 1.")
    has_exact = bool((rows["source"] == "exact").any())
    who = "your harness" if harness.source != "builtin" else "built-in simulation"
    subtitle = [
        f"{harness.n_draws:,} draws ({who}"
        + (", importance-weighted" if harness.importance_sampled else "")
        + "); "
        f"mean {harness.measured:.4g} measured vs {harness.analytic:.4g} exact"
    ]
    shown = rows
    if discrete:
        zero = rows[rows["value"] == 0.0]
        if not zero.empty:
            parts = [
                f"{s} {p:.3f}" for s, p in zip(zero["source"], zero["probability"], strict=True)
            ]
            subtitle.append("P(score = 0): " + ", ".join(parts) + " (not drawn)")
            shown = rows[rows["value"] != 0.0]
        if not has_exact:
            subtitle.append(
                "No closed-form distribution for this pool (deduplicated chunk "
                "scores): compare the means."
            )
    if shown.empty:
        shown = rows
    sort = alt.EncodingSortField("value", order="descending")
    sources = ["measured", "exact"] if has_exact else ["measured"]
    colour = alt.Color(
        "source:N",
        title=None,
        scale=alt.Scale(domain=sources, range=[PALETTE["orange"], PALETTE["blue"]][: len(sources)]),
        legend=alt.Legend(orient="bottom", direction="horizontal"),
    )
    bars = (
        alt.Chart(_data(shown))
        .mark_bar()
        .encode(
            x=alt.X(
                "label:N",
                sort=sort if discrete else alt.EncodingSortField("value"),
                title=f"{result.metric.name} of one random draw",
                axis=alt.Axis(labelAngle=0 if len(shown) <= 24 else -45),
            ),
            xOffset=alt.XOffset("source:N", sort=["measured", "exact"]),
            y=alt.Y("probability:Q", title="probability"),
            color=colour,
            tooltip=[
                alt.Tooltip("label:N", title="value"),
                alt.Tooltip("source:N"),
                alt.Tooltip("probability:Q", format=".5f"),
            ],
        )
    )
    return _layered(
        [bars],
        height=220,
        title=_title("Check 1: the measured distribution against the exact one", subtitle),
    )


# ---------------------------------------------------------------------------- compare


def comparison_chart(
    comparison: Comparison, *, detectable: float | None = None, metric: str = "score"
) -> alt.LayerChart:
    """Paired differences between runs with their 95 % intervals, against what is detectable.

    Parameters
    ----------
    comparison : Comparison
        From a :class:`~evalvalidity.analysis.results.CheckResult` with more than one run.
    detectable : float, optional
        The smallest difference the benchmark can detect (power analysis): shaded ±.
    metric : str
        The metric's name, for the axis.

    Returns
    -------
    altair.LayerChart

    Notes
    -----
    The differences, their intervals and adjusted p-values: docs/math.md, Intervals.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["a", "c", "c", "b"],
    ...                 "score": [2.0, 1.0, 2.0, 1.0]})
    >>> dense = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["c", "a", "b", "c"],
    ...                   "score": [2.0, 1.0, 2.0, 1.0]})
    >>> both = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=8,
    ...                     other_runs={"dense": dense})
    >>> chart = comparison_chart(both.comparison, detectable=0.3, metric="rr@10")
    >>> spec = chart.to_dict()
    >>> spec["title"]["text"], [(r["pair"], r["status"]) for r in spec["layer"][2]["data"]["values"]]
    ('Can the benchmark tell the runs apart?', [('run − dense', 'not significant')])
    """
    rows = pd.DataFrame(
        [
            {
                "pair": f"{r.system_a} − {r.system_b}",
                "difference": r.difference,
                "low": r.low,
                "high": r.high,
                "p": r.adjusted_p_value,
                "dz": r.cohens_dz,
                "status": "significant" if r.significant else "not significant",
                "label": f"{r.difference:+.3f} (p = {r.adjusted_p_value:.3g}, dz = {r.cohens_dz:.2f})",
            }
            for r in comparison.table.rows
        ]
    )
    extent = float(np.nanmax(np.abs(rows[["low", "high"]].to_numpy()))) if len(rows) else 1.0
    if detectable is not None and _finite(detectable):
        extent = max(extent, detectable)
    extent = extent * 1.15 if extent > 0 else 1.0
    x_scale = alt.Scale(domain=[-extent, extent], nice=False)
    layers: list[Any] = []
    if detectable is not None and _finite(detectable):
        text = f"below the smallest detectable difference ±{detectable:.3g}"
        band = pd.DataFrame([{"low": -detectable, "high": detectable, "label": text}])
        layers += [
            alt.Chart(_data(band))
            .mark_rect(color=PALETTE["light"], opacity=0.6)
            .encode(
                x=alt.X("low:Q", scale=x_scale),
                x2="high:Q",
                tooltip=[alt.Tooltip("label:N", title="shaded")],
            ),
        ]
    zero = pd.DataFrame([{"x": 0.0}])
    layers.append(
        alt.Chart(_data(zero)).mark_rule(strokeDash=[4, 3]).encode(x=alt.X("x:Q", scale=x_scale))
    )
    colour = alt.Color(
        "status:N",
        title=None,
        scale=alt.Scale(
            domain=["significant", "not significant"],
            range=[PALETTE["vermillion"], PALETTE["grey"]],
        ),
        legend=alt.Legend(orient="bottom", direction="horizontal"),
    )
    base = alt.Chart(_data(rows))
    y = alt.Y("pair:N", title=None, axis=alt.Axis(labelLimit=360))
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("difference:Q", format="+.4f"),
        alt.Tooltip("low:Q", format="+.4f"),
        alt.Tooltip("high:Q", format="+.4f"),
        alt.Tooltip("p:Q", format=".3g", title="adjusted p"),
        alt.Tooltip("dz:Q", format=".2f", title="Cohen's dz"),
    ]
    layers += [
        base.mark_rule(size=3).encode(
            x=alt.X("low:Q", scale=x_scale, title=f"paired difference in {metric}"),
            x2="high:Q",
            y=y,
            color=colour,
            tooltip=tooltip,
        ),
        base.mark_point(filled=True, size=120).encode(
            x="difference:Q", y=y, color=colour, tooltip=tooltip
        ),
        base.mark_text(align="left", dx=8, fontSize=11).encode(x="high:Q", y=y, text="label:N"),
    ]
    subtitle = (
        f"{comparison.table.test} test, {comparison.table.correction} correction, "
        f"{comparison.table.n_queries:,} queries"
        + ("; shaded: differences too small to detect" if detectable else "")
    )
    return _layered(
        layers,
        height=max(80, 50 * len(rows)),
        title=_title("Can the benchmark tell the runs apart?", subtitle),
    )


# ------------------------------------------------------------------------- everything


def result_charts(result: CheckResult, *, query_limit: int = 30) -> dict[str, Chart]:
    """Every chart that applies to one check, by file-safe name, in reading order.

    ``check1_gauge`` and ``check2_gauge`` (when the checks ran), ``headroom``,
    ``query_headroom``, ``floor_share``, ``gold_breakdown``, ``inferred_n``,
    ``check1_distribution``, ``comparison`` (when several runs were compared) and
    ``other_nulls`` (:func:`other_nulls_chart`, when the check ran the other nulls).

    Parameters
    ----------
    result : CheckResult
    query_limit : int
        Queries drawn by :func:`query_headroom`.

    Returns
    -------
    dict of str to chart

    Examples
    --------
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> import pyarrow as pa
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "2"], "docid": ["a", "c"], "score": [1.0, 1.0]})
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=4)
    >>> sorted(result_charts(result))[:3]
    ['check1_distribution', 'check1_gauge', 'floor_share']
    """
    from evalvalidity.analysis.plan import Thresholds
    from evalvalidity.report import records as report

    out: dict[str, Chart] = {}
    metric = result.metric.name
    h = result.harness
    if h is not None and _finite(h.ratio.estimate) and h.ratio.estimate > 0:
        who = "your harness" if h.source != "builtin" else "the built-in simulation"
        out["check1_gauge"] = ratio_gauge(
            h.ratio.estimate,
            h.ratio.low,
            h.ratio.high,
            passed=h.passed,
            title="Check 1: measured random score / exact floor",
            subtitle=f"Random scores through {who}: {h.measured:.4g} measured, "
            f"{h.analytic:.4g} exact",
            axis_title="measured / exact (log scale)",
        )
    live = result.live or result.noise
    if live is not None:
        # The leak rule is one-sided: it fails only above the band's upper end.
        band = (result.plan.thresholds if result.plan is not None else Thresholds()).ratio_band
        nf = live.noise_over_floor
        if _finite(nf.estimate) and nf.estimate > 0:
            extra = (
                [f"The model scores {live.model_over_noise.format(1)}× the noise run."]
                if live.model_over_noise is not None
                else []
            )
            out["check2_gauge"] = ratio_gauge(
                nf.estimate,
                nf.low,
                nf.high,
                passed=not live.leak,
                band=band,
                one_sided=True,
                title="Check 2: noise run / exact floor",
                subtitle=[
                    f"Vectors replaced by noise: {live.noise:.4g} against a floor of "
                    f"{live.floor:.4g} (z = {live.noise_z:.1f}).",
                    *extra,
                ],
                axis_title="noise / floor (log scale)",
            )
    head = result.headroom
    if _finite(head.floor) and _finite(head.ceiling):
        mi = head.model_interval
        out["headroom"] = headroom_sliver(
            head.floor,
            head.ceiling,
            model=head.model,
            model_low=mi.low if mi else None,
            model_high=mi.high if mi else None,
            metric=metric,
            model_name=result.run_name or "model",
        )
    frame = report.to_frame(result)
    if len(frame):
        out["query_headroom"] = query_headroom(frame, limit=min(query_limit, 200), metric=metric)
        out["floor_share"] = floor_share_histogram(frame)
        out["gold_breakdown"] = gold_breakdown(frame)
    inferred = result.inferred_n
    if inferred is not None and result.metric.spec.invertible:
        curve = _curve_for(result, inferred)
        if curve is not None:
            out["inferred_n"] = inferred_n_chart(inferred, curve, metric=metric)
    if h is not None and len(h.sample_values):
        out["check1_distribution"] = check1_distribution(result)
    if result.comparison is not None:
        out["comparison"] = comparison_chart(
            result.comparison,
            metric=metric,
            detectable=result.power.min_detectable_difference if result.power else None,
        )
    nulls = other_nulls_chart(result)
    if nulls is not None:
        out["other_nulls"] = nulls.properties(
            width=_WIDTH,
            autosize=_AUTOSIZE,
            title=_title(
                "Other nulls: what scores without doing retrieval",
                "Rankers that ignore the query, and the model's score over tie orders, "
                "judgement holes and self-hits",
            ),
        )
    return out


def _curve_for(result: CheckResult, inferred: InferredPoolSizeCheck) -> pd.DataFrame | None:
    gold = np.asarray(result.queries.gold, dtype=np.int64)
    judged = np.asarray(result.queries.judged, dtype=np.int64)
    if inferred.source != "noise-run" and result.harness is not None:
        present = _checked(
            result.queries, np.asarray(result.harness.per_query_measured, dtype=float)
        )
        if present is not None:
            gold, judged = gold[present], judged[present]
    if not (gold > 0).any():
        return None
    sizes = [
        v
        for v in (
            inferred.estimate,
            inferred.low,
            inferred.high,
            inferred.declared_pool,
            inferred.declared_chunks,
            inferred.declared_documents,
        )
        if v is not None and _finite(float(v)) and v > 0
    ]
    low = min(sizes) / 3 if sizes else 1.0
    high = max(sizes) * 3 if sizes else 1000.0
    return expected_floor_curve(result.metric, gold, judged, low=low, high=high)


def other_nulls_chart(result: CheckResult) -> Chart | None:
    """The other nulls beside the uniform floor and the model: one interval per row.

    Rows: the uniform floor, the query-shuffle null (95 % interval), the popularity ranker
    ([worst, best] tie-breaking), and the model's score with its tie range, its range with the
    judgement holes filled and without self-hits (when each applies). None when the check ran
    no other null.

    Examples
    --------
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> import pyarrow as pa
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["h", "h"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "2"], "docid": ["h", "h"], "score": [1.0, 1.0]})
    >>> chart = other_nulls_chart(check_tables(run, qrels, pool=PoolSpec(corpus_size=50), seeds=4))
    >>> sorted(row["what"] for row in chart.to_dict()["layer"][1]["data"]["values"])[:2]
    ['model', 'popularity ranker']
    """
    nulls = result.nulls
    if nulls is None or nulls.query_independent is None:
        return None
    qi = nulls.query_independent
    rows: list[dict[str, Any]] = [
        {"what": "uniform floor", "value": qi.floor, "low": qi.floor, "high": qi.floor}
    ]
    for label, interval in (
        ("query-shuffle null", qi.shuffle),
        ("popularity ranker", qi.popularity),
    ):
        if interval is not None:
            rows.append(
                {
                    "what": label,
                    "value": interval.estimate,
                    "low": interval.low,
                    "high": interval.high,
                }
            )
    model = result.headroom.model
    if model is not None:
        rows.append({"what": "model", "value": model, "low": model, "high": model})
        if nulls.ties is not None and nulls.ties.tied_queries:
            t = nulls.ties.interval
            rows.append(
                {"what": "model over tie orders", "value": t.estimate, "low": t.low, "high": t.high}
            )
        if nulls.holes is not None and nulls.holes.applicable:
            h = nulls.holes.interval
            rows.append(
                {"what": "model, holes filled", "value": h.estimate, "low": h.low, "high": h.high}
            )
        s = nulls.self_hits
        if s is not None and s.score_without is not None and (s.ranked_self or s.judged_self):
            v = s.score_without
            rows.append({"what": "model without self-hits", "value": v, "low": v, "high": v})
    frame = pd.DataFrame(rows)
    order = list(frame["what"])
    y = alt.Y("what:N", sort=order, title=None)
    bars = (
        alt.Chart(_data(frame))
        .mark_rule(strokeWidth=3, color=PALETTE["grey"])
        .encode(y=y, x=alt.X("low:Q", title=result.metric.name), x2="high:Q")
    )
    points = (
        alt.Chart(_data(frame))
        .mark_point(filled=True, size=80, color=PALETTE["blue"])
        .encode(
            y=y,
            x="value:Q",
            tooltip=[
                alt.Tooltip("what:N"),
                alt.Tooltip("value:Q", format=".4g"),
                alt.Tooltip("low:Q", format=".4g"),
                alt.Tooltip("high:Q", format=".4g"),
            ],
        )
    )
    return alt.LayerChart(layer=[bars, points]).properties(
        title="Other nulls: what scores without doing retrieval", width=520
    )
