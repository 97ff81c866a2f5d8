"""Queries: the triage table with filters, the multi-gold breakdown, and one query in detail."""

import pandas as pd
import streamlit as st

from app import explain, state, widgets
from evalvalidity.errors import EvalValidityError
from evalvalidity.report import charts
from evalvalidity.report import records as report

#: The triage table's column headers, also the words of the sort options.
HEADERS = {
    "qid": "query",
    "pool_size": "N",
    "gold": "G",
    "judged": "R",
    "floor": "floor",
    "floor_std": "floor sd",
    "ceiling": "ceiling",
    "headroom": "headroom",
    "model": "model",
    "noise": "noise run",
    "z": "noise z",
    "floor_share": "share of the floor",
}


def natural(ids: pd.Series) -> pd.Series:
    """Sort keys of query ids: numbers as numbers (2 before 10), then the rest as text."""
    text = ids.astype(str)
    numeric = pd.to_numeric(text, errors="coerce")
    width = int(text.str.len().max() or 1)
    return pd.Series(
        [
            f"0{int(n):0{width + 20}d}" if pd.notna(n) and float(n).is_integer() else f"1{t}"
            for n, t in zip(numeric, text, strict=True)
        ],
        index=ids.index,
    )


st.title("Queries")
cfg, result = widgets.result_or_stop()
frame = report.to_frame(result)
if frame.empty:
    st.info("The benchmark holds no queries.")
    st.stop()

st.subheader("Triage")
flag_lists = [f.split(", ") if f else [] for f in frame["flags"]]
present = sorted({f for flags in flag_lists for f in flags})
left, middle, right = st.columns([2, 2, 1])
with left:
    wanted = st.multiselect(
        "Flags",
        present,
        format_func=lambda f: f"{f}: {report.FLAG_TEXT.get(f, f)}",
        placeholder="any (or none)",
        key="q_flags",
    )
    search = st.text_input("Query id contains", key="q_search")
with middle:
    g_low, g_high = int(frame["gold"].min()), int(frame["gold"].max())
    if g_high > g_low:
        gold_range = st.slider(
            "Gold items in the pool (G)", g_low, g_high, (g_low, g_high), key="q_gold"
        )
    else:
        gold_range = (g_low, g_high)
        st.caption(f"Every query has G = {g_low}.")
    only_flagged = st.toggle("Only flagged queries", key="q_only_flagged")
with right:
    sortable = [
        "floor_share",
        "floor",
        "headroom",
        "model",
        "noise",
        "z",
        "gold",
        "pool_size",
        "qid",
    ]
    sort_by = st.selectbox(
        "Sort by", sortable, key="q_sort", format_func=lambda c: HEADERS.get(c, c)
    )
    descending = st.toggle("Descending", value=True, key="q_desc")

mask = frame["gold"].between(*gold_range)
if wanted:
    mask &= pd.Series([all(f in flags for f in wanted) for flags in flag_lists], index=frame.index)
if only_flagged:
    mask &= frame["flags"] != ""
if search:
    mask &= frame["qid"].astype(str).str.contains(search, regex=False)
shown = frame[mask].sort_values(
    sort_by, ascending=not descending, kind="stable", key=natural if sort_by == "qid" else None
)
st.caption(f"{len(shown):,} of {len(frame):,} queries")
# A column with no value at all (no noise run: no noise score, no z) is left out, not shown as
# a column of "None".
unmeasured = [c for c in frame.columns if frame[c].isna().all()]
picked = st.dataframe(
    shown.drop(columns=unmeasured),
    hide_index=True,
    key="q_table",
    on_select="rerun",
    selection_mode="single-row",
    column_config={
        "qid": st.column_config.TextColumn("query"),
        "pool_size": st.column_config.NumberColumn("N", help="items in the pool"),
        "gold": st.column_config.NumberColumn("G", help="gold items in the pool"),
        "judged": st.column_config.NumberColumn("R", help="judged relevant in all"),
        "floor": st.column_config.NumberColumn("floor", format="%.4f"),
        "floor_std": st.column_config.NumberColumn("floor sd", format="%.4f"),
        "ceiling": st.column_config.NumberColumn("ceiling", format="%.3f"),
        "headroom": st.column_config.NumberColumn("headroom", format="%.3f"),
        "model": st.column_config.NumberColumn("model", format="%.4f"),
        "noise": st.column_config.NumberColumn("noise run", format="%.4f"),
        "z": st.column_config.NumberColumn("noise z", format="%.1f"),
        "floor_share": st.column_config.ProgressColumn(
            "share of the floor",
            format="percent",
            min_value=0.0,
            max_value=max(float(frame["floor_share"].max()), 1e-12),
            help="the query's share of the benchmark's mean floor",
        ),
    },
)

st.subheader("Multi-gold breakdown")
st.altair_chart(charts.gold_breakdown(frame), width="stretch")
if result.multi_gold_floor_share > 0:
    st.caption(
        f"Queries with more than one gold item carry "
        f"{explain.share(result.multi_gold_floor_share)} of the benchmark's floor; each "
        "counts once "
        "in the flat mean."
    )

st.subheader("One query")
options = shown["qid"].astype(str).tolist() or frame["qid"].astype(str).tolist()
rows = list(picked.selection.rows) if picked is not None else []
if rows and rows[0] < len(shown):
    clicked = str(shown["qid"].iloc[rows[0]])
    if st.session_state.get("q_clicked") != clicked:
        st.session_state["q_clicked"] = clicked
        st.session_state["q_qid"] = clicked  # a click on a row opens that query
if st.session_state.get("q_qid") not in options:
    st.session_state.pop("q_qid", None)
qid = st.selectbox("Query", options, key="q_qid", help="Or click a row of the table above.")
row = frame[frame["qid"].astype(str) == qid].iloc[0]
facts = st.columns(5)
facts[0].metric("N (pool)", f"{int(row['pool_size']):,}")
facts[1].metric("G (gold in pool)", int(row["gold"]))
facts[2].metric("Floor", f"{row['floor']:.4g}")
facts[3].metric("Ceiling", f"{row['ceiling']:.4g}")
facts[4].metric("Model", "–" if pd.isna(row["model"]) else f"{row['model']:.4g}")
if row["flags"]:
    st.markdown(
        "\n".join(
            f"- **{explain.md(f)}**: {explain.md(report.FLAG_TEXT.get(f, f))}"
            for f in str(row["flags"]).split(", ")
        )
    )

# What the floor was computed from: the grades of the gold items in the pool (nDCG's gains) and
# of every judged item (its ideal DCG), and the chunks of the gold documents (deduplicated).
graded = not result.metric.spec.binary
deduplicated = result.floor_method != "exact"
gains: list[int] | None = None
judged_gains: list[int] | None = None
gold_chunks: int | None = None
if graded or deduplicated:
    try:
        every = list(state.judged_grades(cfg, qid))
        listed = state.pool_items(cfg, qid)
    except EvalValidityError:
        pass
    else:
        threshold = 1 if graded else result.metric.rel
        if listed is None:
            in_pool = every[: int(row["pool_size"])]  # the best grades fill a smaller pool
        else:
            if "chunks" in listed.columns:
                listed = listed[listed["chunks"] > 0]
            listed = listed[listed["grade"].notna() & (listed["grade"] >= threshold)]
            in_pool = sorted((int(x) for x in listed["grade"]), reverse=True)
            if "chunks" in listed.columns:
                gold_chunks = int(listed["chunks"].sum())
        if graded:
            gains, judged_gains = in_pool, every
arithmetic = explain.floor_arithmetic(
    result.metric,
    int(row["pool_size"]),
    int(row["gold"]),
    int(row["judged"]),
    float(row["floor"]),
    result.floor_method,
    gains=gains,
    judged_gains=judged_gains,
    gold_chunks=gold_chunks,
)
st.markdown(
    "**The floor's arithmetic** ("
    + (
        "chunk scores drawn at random and deduplicated to documents: each document at its best "
        "chunk"
        if deduplicated
        else "a uniformly random order of the pool, ties broken uniformly"
    )
    + ")"
)
st.latex(arithmetic.formula)
st.latex(arithmetic.numbers)
for note in arithmetic.notes:
    st.caption(explain.md(note))
st.altair_chart(
    charts.headroom_sliver(
        float(row["floor"]),
        float(row["ceiling"]),
        model=None if pd.isna(row["model"]) else float(row["model"]),
        metric=result.metric.name,
        model_name=result.run_name or "model",
        title=f"Query {qid}: floor, ceiling and the model",
    ),
    width="stretch",
)

ranking_col, pool_col = st.columns(2)
with ranking_col:
    st.markdown(f"**Its ranking** in {explain.md(cfg.run or '—')} (gold marked)")
    if cfg.run is None:
        st.info("No model run is configured.")
    else:
        try:
            ranked = state.ranking(cfg, qid)
        except EvalValidityError as exc:
            st.error(str(exc))
        else:
            if ranked.empty:
                st.info("The run has no ranking for this query: it scores 0.")
            else:
                judged = ranked["grade"].notna().tolist()
                grades = ranked["grade"].tolist()
                ranked = ranked.assign(
                    gold=[
                        "★ gold" if ok and g > 0 else ""
                        for ok, g in zip(judged, grades, strict=True)
                    ],
                    # An item without a judgement says so (a missing grade would read "None").
                    grade=[
                        f"{int(g)}" if ok else "unjudged"
                        for ok, g in zip(judged, grades, strict=True)
                    ],
                )
                order = ["position", "docid", "chunk_id", "score", "grade", "gold"]
                st.dataframe(
                    ranked[[c for c in order if c in ranked.columns]],
                    hide_index=True,
                    key="q_ranking",
                )
with pool_col:
    st.markdown("**Its pool**")
    st.caption(
        f"{int(row['pool_size']):,} items declared as {cfg.pool_kind}"
        + (f" (analytic unit: {cfg.analytic_unit})" if cfg.pool_kind == "units" else "")
    )
    try:
        items = state.pool_items(cfg, qid)
    except EvalValidityError as exc:
        st.error(str(exc))
    else:
        if items is None:
            st.caption("Only the pool's size is declared: its items are not listed.")
        else:
            if cfg.pool_kind == "units":
                st.caption(
                    "The gold documents and their chunks: under random chunk scores a "
                    "document with more chunks comes first more often."
                )
            st.dataframe(items, hide_index=True, key="q_pool")
