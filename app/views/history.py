"""History: the workspace's recorded checks as a timeline, and a check.json from CI, viewed."""

import json

import altair as alt
import pandas as pd
import streamlit as st

from app import explain, state
from evalvalidity.errors import EvalValidityError
from evalvalidity.io.history import list_checks, load_check, record_check, summarize

st.title("History")
st.caption(
    "Checks recorded with `evalvalidity check --history [LABEL]` (or added below): when each "
    "ran, on what plan, with what verdict and score."
)
ws = state.workspace()
entries = list_checks(ws.path)

upload = st.file_uploader(
    "View a check.json (from `evalvalidity check --format json`, e.g. a CI artifact)",
    type=["json"],
    key="h_upload",
)
if upload is not None:
    try:
        record = json.loads(upload.getvalue().decode("utf-8"))
        entry = summarize(record)
    except (ValueError, EvalValidityError) as exc:
        st.error(f"{explain.md(upload.name)}: {exc}")
    else:
        st.markdown(
            f"**{entry.verdict}**: {entry.metric} of {explain.md(entry.run or 'no run')} on "
            f"{entry.n_queries:,} queries"
            + (f", score {entry.model_score:.4g}" if entry.model_score is not None else "")
            + (f", floor {entry.floor:.4g}" if entry.floor is not None else "")
            + (f"; regression gate {entry.gate}" if entry.gate else "")
        )
        for reason in record.get("reasons", []):
            st.write(f"{reason.get('severity', '')}: {reason.get('message', '')}")
        label = st.text_input("Label", value=upload.name, key="h_label")
        if st.button("Add to the history", key="h_add"):
            record_check(ws.path, record, label=label or None)
            st.rerun()

if not entries:
    st.info("No check is recorded in this workspace yet.")
    st.stop()

frame = pd.DataFrame(
    {
        "time": pd.to_datetime([e.time for e in entries]),
        "label": [e.label or "" for e in entries],
        "verdict": [e.verdict for e in entries],
        "metric": [e.metric for e in entries],
        "run": [e.run or "" for e in entries],
        "queries": [e.n_queries for e in entries],
        "score": [e.model_score for e in entries],
        "floor": [e.floor for e in entries],
        "gate": [e.gate or "" for e in entries],
        "id": [e.id for e in entries],
    }
)
colours = alt.Scale(
    domain=["healthy", "warning", "broken"], range=["#2e7d32", "#f9a825", "#c62828"]
)
base = alt.Chart(frame).encode(x=alt.X("time:T", title="recorded"))
chart = (
    base.mark_line(color="#999").encode(y=alt.Y("score:Q", title="model score"))
    + base.mark_point(filled=True, size=90).encode(
        y="score:Q",
        color=alt.Color("verdict:N", scale=colours),
        tooltip=["time:T", "label:N", "run:N", "metric:N", "score:Q", "floor:Q", "verdict:N"],
    )
    + base.mark_line(strokeDash=[4, 4], color="#c62828").encode(y="floor:Q")
).properties(title="Checks over time (dashed: the floor)")
st.altair_chart(chart, width="stretch")
st.dataframe(frame.drop(columns=["id"]), hide_index=True, key="h_table")
chosen = st.selectbox(
    "Open a recorded check",
    range(len(entries)),
    format_func=lambda i: f"{entries[i].time} {entries[i].label or ''} {entries[i].run or ''}",
    index=len(entries) - 1,
    key="h_pick",
)
st.json(load_check(ws.path, entries[chosen].id), expanded=False)
