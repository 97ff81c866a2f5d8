"""Compare: several runs on the same queries — significance, effect sizes, detectability."""

from typing import Any

import pandas as pd
import streamlit as st

from app import explain, leaderboard, state, widgets
from evalvalidity.report import charts

st.title("Compare runs")
cfg = state.config()
if cfg is not None and cfg.run is not None:
    # Only runs that rank some of the model run's queries can be compared with it.
    others = [
        d.name
        for d in state.datasets("run")
        if d.name != cfg.run and state.shares_a_query(cfg.run, d.name)
    ]
    chosen = st.multiselect(
        f"Runs to compare with {cfg.run}",
        others,
        default=[c for c in cfg.compare if c in others],
        key="c_runs",
        help="Paired randomization tests over the same queries, Holm-corrected. Only runs "
        "that rank some of the model run's queries are offered.",
    )
    if tuple(chosen) != cfg.compare:
        state.replace_config(compare=tuple(chosen))
cfg, result = widgets.result_or_stop()
if cfg.run is None:
    st.info("Choose a model run on the Health page first.")
    st.stop()

power = result.power
if power is not None:
    st.markdown(
        f"With {power.n_queries:,} queries this benchmark detects differences of about "
        f"**{power.min_detectable_difference:.3g}** in {result.metric.name} or more "
        f"(two-sided α = {power.alpha:g}, power {power.power:g}); detecting "
        f"{power.delta:g} would take about **{power.queries_needed:,} queries**."
    )
comparison = result.comparison
if comparison is None:
    st.info(f"Choose at least one more run above to compare it with {explain.md(cfg.run)}.")
    st.stop()

st.dataframe(
    pd.DataFrame({"run": comparison.runs, "mean": comparison.means}),
    hide_index=True,
    key="c_means",
    column_config={"mean": st.column_config.NumberColumn(format="%.4f")},
)
leaderboard.show(cfg, result)
st.altair_chart(
    charts.comparison_chart(
        comparison,
        metric=result.metric.name,
        detectable=power.min_detectable_difference if power else None,
    ),
    width="stretch",
)
rows: list[dict[str, Any]] = []
for r in comparison.table.rows:
    distinguishable = r.significant and (
        power is None or abs(r.difference) >= power.min_detectable_difference
    )
    rows.append(
        {
            "pair": f"{r.system_a} − {r.system_b}",
            "difference": r.difference,
            "95 % low": r.low,
            "95 % high": r.high,
            "p": r.p_value,
            f"p ({comparison.table.correction})": r.adjusted_p_value,
            "Cohen's dz": r.cohens_dz,
            "significant": r.significant,
            "verdict": "told apart" if distinguishable else "not told apart",
        }
    )
st.dataframe(
    pd.DataFrame(rows),
    hide_index=True,
    key="c_pairs",
    column_config={
        c: st.column_config.NumberColumn(format="%.4f")
        for c in ("difference", "95 % low", "95 % high", "Cohen's dz")
    },
)
for row in rows:
    if row["verdict"] == "told apart":
        st.success(
            f"The benchmark tells {explain.md(row['pair'].split(' − ')[0])} and "
            f"{explain.md(row['pair'].split(' − ')[1])} apart "
            f"(difference {row['difference']:+.3f})."
        )
    else:
        st.warning(
            f"The benchmark cannot tell {explain.md(row['pair'].split(' − ')[0])} and "
            f"{explain.md(row['pair'].split(' − ')[1])} apart "
            f"(difference {row['difference']:+.3f}, adjusted p = "
            f"{row[f'p ({comparison.table.correction})']:.3g})."
        )
