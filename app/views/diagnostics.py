"""Diagnostics: inferred N on the exact E(N) curve, and Check 1's distribution."""

import pandas as pd
import streamlit as st

from app import explain, widgets
from evalvalidity.report import charts

st.title("Diagnostics")
cfg, result = widgets.result_or_stop()
every = charts.result_charts(result)

st.subheader("Inferred pool size")
inferred = result.inferred_n
if inferred is None or "inferred_n" not in every:
    st.info(
        f"Inferred N needs a metric whose floor depends only on N, G and R (rr, hit, p, r, "
        f"rprec, ap) and a measured random score (Check 1 or a noise run); "
        f"{result.metric.name} with this configuration has none."
    )
else:
    st.markdown(
        "The random score measured by Check 1 (or the noise run) is read off the exact curve of "
        "the benchmark's mean floor E(N): the pool size it implies should sit on the declared "
        "one. A harness that deduplicates chunks to documents implies the document count, not "
        "the chunk count."
    )
    st.altair_chart(every["inferred_n"], width="stretch")
    cols = st.columns(3)
    cols[0].metric(
        "Inferred N", f"{inferred.estimate:,.0f}" + (" (upper bound)" if inferred.saturated else "")
    )
    cols[1].metric("95 % interval", f"{inferred.low:,.0f} – {inferred.high:,.0f}")
    cols[2].metric(
        "Declared", f"{inferred.declared_pool:,.0f}" if inferred.declared_pool is not None else "–"
    )
    if inferred.diagnosis:
        st.warning(explain.md(inferred.diagnosis))
    if inferred.by_gold:
        st.markdown("**By gold count**: queries with the same G, inverted separately")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "G": c.gold,
                        "queries": c.n_queries,
                        "measured": c.measured,
                        "inferred N": c.estimate,
                        "low": c.low,
                        "high": c.high,
                    }
                    for c in inferred.by_gold
                ]
            ),
            hide_index=True,
            key="d_by_gold",
            column_config={
                "measured": st.column_config.NumberColumn(format="%.5f"),
                **{
                    c: st.column_config.NumberColumn(format="%.0f")
                    for c in ("inferred N", "low", "high")
                },
            },
        )

st.subheader("Check 1 in detail")
h = result.harness
if h is None:
    st.info("Check 1 did not run: " + " ".join(result.notes or ("no query has gold.",)))
else:
    source = "your harness's output" if h.source != "builtin" else "the package's own scorer"
    st.markdown(
        f"Random scores through {source}: {h.n_draws:,} draws over {h.n_queries:,} "
        f"queries ({h.n_seeds:,} seeds"
        + (
            ", importance-sampled: gold items drawn more often, each draw weighted by "
            "its likelihood ratio"
            if h.importance_sampled
            else ""
        )
        + ")."
    )
    cols = st.columns(3)
    cols[0].metric("Measured", f"{h.measured:.5g}")
    cols[1].metric("Exact floor", f"{h.analytic:.5g}")
    cols[2].metric(
        "Ratio",
        h.ratio.format(3),
        delta="passes" if h.passed else "fails",
        delta_color="normal" if h.passed else "inverse",
    )
    if "check1_gauge" in every:
        st.altair_chart(every["check1_gauge"], width="stretch")
    if "check1_distribution" in every:
        st.altair_chart(every["check1_distribution"], width="stretch")
    if h.missing_queries:
        st.caption(f"{len(h.missing_queries):,} judged queries have no harness values.")
