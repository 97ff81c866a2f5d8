"""Suite: several benchmarks of the workspace checked together, in one table."""

from pathlib import Path

import pandas as pd
import streamlit as st

from app import explain, state
from evalvalidity.analysis.suite import parse_suite, run_suite
from evalvalidity.errors import EvalValidityError
from evalvalidity.report.records import suite_to_dict

st.title("Suite")
st.caption(
    "Declare benchmarks in TOML, as for `evalvalidity suite SUITE.toml`; names that are not "
    "files are the workspace's datasets."
)
names = {d.kind: d.name for d in state.datasets()}
template = (
    'name = "my suite"\nseeds = 8\n\n[[benchmark]]\nname = "first"\n'
    f'qrels = "{names.get("qrels", "a.qrels")}"\n'
    f'runs = ["{names.get("run", "a.run")}"]\npool_size = 1000\n'
)
text = st.text_area("Suite file", value=template, height=260, key="s_toml")
if not st.button("Run the suite", key="s_run", type="primary"):
    st.stop()
try:
    suite = parse_suite(text, "suite.toml", base=Path.cwd())
    with st.spinner(f"Checking {len(suite.benchmarks)} benchmarks…"):
        result = run_suite(suite, workspace=state.workspace(), owner=state.owner())
except EvalValidityError as exc:
    st.error(str(exc))
    st.stop()
record = suite_to_dict(result)
rows = [
    {
        "benchmark": r["benchmark"],
        "queries": r.get("n_queries"),
        "floor": r.get("floor"),
        "ceiling": r.get("ceiling"),
        "headroom": r.get("headroom"),
        "Check 1": r.get("check1"),
        "Check 2": r.get("check2"),
        "MDD": r.get("min_detectable_difference"),
        "verdict": r.get("verdict") or f"error: {r.get('error')}",
        "separates runs": r.get("separable"),
    }
    for r in record["benchmarks"]
]
number = st.column_config.NumberColumn(format="%.4g")
st.dataframe(
    pd.DataFrame(rows),
    hide_index=True,
    key="s_table",
    column_config={
        c: number for c in ("floor", "ceiling", "headroom", "Check 1", "Check 2", "MDD")
    },
)
if record["suite_means"]:
    st.subheader("Suite mean (benchmarks weighted equally)")
    st.dataframe(
        pd.DataFrame(
            {
                "run": [m["run"] for m in record["suite_means"]],
                "mean": [m["mean"] for m in record["suite_means"]],
                "95 % low": [m["ci"][0] for m in record["suite_means"]],
                "95 % high": [m["ci"][1] for m in record["suite_means"]],
            }
        ),
        hide_index=True,
        key="s_means",
    )
for name in record["flagged"]:
    st.warning(f"{explain.md(name)} cannot separate the suite's runs.")
