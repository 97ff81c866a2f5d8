"""Other nulls: query-independent rankers, self-hits, segment ids, judgement holes, ties."""

import pandas as pd
import streamlit as st

from app import state, widgets
from evalvalidity.analysis.check import check_benchmark
from evalvalidity.errors import EvalValidityError
from evalvalidity.report import charts

st.title("Other nulls")
st.caption(
    "The uniform-random floor is one null. A benchmark can pass it and still reward something "
    "that is not retrieval (a few hub documents gold for most queries), or be scored on ids "
    "that silently do not match."
)
cfg, result = widgets.result_or_stop()

segments = result.nulls.segments if result.nulls is not None else None
if segments is not None and segments.segmented and result.plan is not None:
    st.subheader("Segment ids")
    st.markdown(
        f"{segments.run_share:.0%} of the run's ids look like `document{segments.separator}"
        f"segment` (e.g. `{segments.example}`) while the judgements judge documents."
    )
    rule = f"prefix:{segments.separator}"
    if segments.applied is None and st.toggle(
        f"Map each id to the part before `{segments.separator}` (units rule {rule})",
        key="nulls_units_rule",
    ):
        try:
            with st.spinner("Checking with the units rule"):
                result = check_benchmark(
                    result.plan.replace(units_rule=rule), workspace=state.workspace()
                )
        except EvalValidityError as exc:
            st.error(str(exc))
    elif segments.applied is not None:
        st.caption(f"Mapped by: {segments.applied}.")

nulls = result.nulls
if nulls is None:
    st.info("This check ran no other null.")
    st.stop()

chart = charts.other_nulls_chart(result)
if chart is not None:
    st.altair_chart(chart, width="stretch")

codes = {
    "query_independent",
    "self_hits",
    "segment_ids",
    "units_rule",
    "judgement_holes",
    "harness_out_of_range",
    "harness_duplicate_rows",
    "harness_missing_rows",
    "model_ties",
}
for reason in result.reasons:
    if reason.code in codes:
        show = {"broken": st.error, "warning": st.warning}.get(reason.severity, st.info)
        show(reason.message)

qi = nulls.query_independent
if qi is not None:
    st.subheader("Query-independent rankers")
    cols = st.columns(3)
    cols[0].metric("uniform floor", f"{qi.floor:.4g}")
    cols[1].metric("query-shuffle null", qi.shuffle.format(3) if qi.shuffle else "–")
    cols[2].metric("popularity ranker", qi.popularity.format(3) if qi.popularity else "–")
    if qi.hubs:
        st.dataframe(
            pd.DataFrame(
                [{"document": h.docid, "gold for": h.count, "share": h.share} for h in qi.hubs]
            ),
            hide_index=True,
        )

if nulls.self_hits is not None:
    s = nulls.self_hits
    st.subheader("Self-hits and id collisions")
    cols = st.columns(3)
    cols[0].metric("query ids used as document ids", f"{s.queries_as_documents:,}")
    cols[1].metric("score with / without", f"{s.score_with:.4g} / {s.score_without:.4g}")
    cols[2].metric("floor without", f"{s.floor_without:.4g}" if s.floor_without else "–")

if nulls.holes is not None:
    h = nulls.holes
    st.subheader("Judgement holes")
    if not h.applicable:
        st.caption(
            "The judgements list relevant items only: every unjudged document is taken as "
            "non-relevant by construction."
        )
    else:
        left, right = st.columns(2)
        left.metric(f"judged@{h.k}", f"{h.overall_judged:.0%}")
        right.metric("score with the holes all one way", h.interval.format(3))

if nulls.harness is not None:
    inv = nulls.harness
    st.subheader("Harness-output invariants")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "rows": inv.rows,
                    "outside [0, 1]": inv.out_of_range,
                    "duplicated": inv.duplicated,
                    "missing": inv.missing,
                }
            ]
        ),
        hide_index=True,
    )

if nulls.ties is not None and nulls.ties.tied_queries:
    t = nulls.ties
    st.subheader("Tie sensitivity of the model")
    st.metric("score over the orders of each tied group", t.interval.format(3))
    if t.moved:
        st.write("Queries moving by more than the smallest detectable difference:")
        st.dataframe(pd.DataFrame({"qid": list(t.moved)}), hide_index=True)

for note in nulls.notes:
    st.caption(note)
