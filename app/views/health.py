"""Health: choose the benchmark's datasets and metric; the verdict, the two checks, headroom."""

import streamlit as st

from app import explain, state, widgets
from evalvalidity.analysis.examples import Preset
from evalvalidity.core.metrics import FAMILIES, family_spec
from evalvalidity.errors import EvalValidityError
from evalvalidity.report import charts
from evalvalidity.report import records as report

NONE = "— none —"

st.title("Benchmark health")
st.caption(
    "Does the benchmark measure anything? Exact floors of a random ranking, Check 1 "
    "(is the harness's arithmetic right?), Check 2 (does the score come from the "
    "vectors?) and the headroom a model can move in."
)


def names(kind: str) -> list[str]:
    return [d.name for d in state.datasets(kind)]


def apply_example() -> None:
    chosen = st.session_state.get("cfg_example")
    for preset in state.presets():
        if preset.title == chosen:
            state.set_config(preset)
            # Forget the widgets' own values so that they show the example's.
            for key in [k for k in st.session_state if str(k).startswith("cfg_")]:
                if key != "cfg_example":
                    del st.session_state[key]


def pick(
    label: str,
    options: list[str],
    current: str | None,
    key: str,
    optional: bool = False,
    help_text: str | None = None,
) -> str | None:
    choices = ([NONE] if optional else []) + options
    value = current if current in choices else (NONE if optional else None)
    index = choices.index(value) if value in choices else (0 if choices else None)
    chosen = st.selectbox(label, choices, index=index, key=key, help=help_text)
    return None if chosen in (None, NONE) else str(chosen)


qrels_names = names("qrels")
if not qrels_names:
    st.info(
        "The workspace holds no judgements yet. Upload a run, its qrels and how the pool "
        "was drawn on the Workspace page."
    )
    st.page_link("views/workspace.py", label="Go to the Workspace", icon=":material/folder_open:")
    st.stop()

cfg = state.config()
if cfg is None:
    runs = names("run")
    cfg = Preset(
        "custom",
        "Custom",
        "",
        run=runs[0] if runs else None,
        qrels=qrels_names[0],
        pool_kind="corpus",
        pool=1000,
    )
    state.set_config(cfg)

examples = state.presets()
with st.expander("Benchmark: datasets, pool and metric", expanded=True):
    if examples:
        titles = [p.title for p in examples]
        current_title = next((p.title for p in examples if p == cfg), None)
        st.selectbox(
            "Start from an example",
            titles,
            index=titles.index(current_title) if current_title in titles else None,
            placeholder="Choose an example…",
            key="cfg_example",
            on_change=apply_example,
        )
        for p in examples:
            if p == cfg:
                st.caption(explain.md(p.summary))
    left, middle, right = st.columns(3)
    with left:
        run = pick(
            "Model run",
            names("run"),
            cfg.run,
            "cfg_run",
            optional=True,
            help_text="The model's ranking; without one the benchmark alone is checked.",
        )
        qrels = pick("Judgements (qrels)", qrels_names, cfg.qrels, "cfg_qrels")
        noise = pick(
            "Noise run (Check 2)",
            names("run"),
            cfg.noise_run,
            "cfg_noise",
            optional=True,
            help_text="The same pipeline with every vector replaced by noise.",
        )
        harness = pick(
            "Harness output (Check 1)",
            names("harness"),
            cfg.harness,
            "cfg_harness",
            optional=True,
            help_text="Your harness's per-query values on noise runs; without it "
            "Check 1 runs on the package's own scorer.",
        )
    with middle:
        kinds = list(state.POOL_KINDS)
        pool_kind = st.radio(
            "Pool declared as",
            kinds,
            index=kinds.index(cfg.pool_kind),
            format_func=lambda k: state.POOL_KINDS.get(k, k),
            key="cfg_pool_kind",
        )
        unit = cfg.analytic_unit
        if pool_kind == "corpus":
            pool: str | int = int(
                st.number_input(
                    "Corpus size N",
                    min_value=1,
                    step=1,
                    value=int(cfg.pool) if cfg.pool_kind == "corpus" else 1000,
                    key="cfg_corpus",
                )
            )
        else:
            chosen_pool = pick(
                "Pool dataset",
                names(pool_kind),
                str(cfg.pool) if cfg.pool_kind == pool_kind else None,
                f"cfg_pool_{pool_kind}",
            )
            pool = chosen_pool or ""
            if pool_kind == "units":
                units = ["documents", "chunks"]
                unit = st.radio(
                    "Analytic unit",
                    units,
                    index=units.index(cfg.analytic_unit),
                    key="cfg_unit",
                    horizontal=True,
                    help="documents: the exact floor of chunk scores deduplicated to "
                    "documents; chunks: as if the scorer never deduplicated (the units bug)",
                )
    with right:
        family_now = cfg.metric.split("@")[0].split("[")[0]
        family = st.selectbox(
            "Metric",
            list(FAMILIES),
            index=list(FAMILIES).index(family_now) if family_now in FAMILIES else 0,
            format_func=lambda f: family_spec(f).title,
            key="cfg_family",
        )
        k_now = cfg.metric.split("@")[1].split("[")[0] if "@" in cfg.metric else None
        spec = family_spec(family)
        no_cutoff = not spec.needs_k and st.checkbox(
            "No cutoff (the whole ranking)",
            value=k_now is None,
            key="cfg_cutoff",
            disabled=not spec.accepts_k,
        )
        k = st.number_input(
            "Cutoff k",
            min_value=1,
            max_value=100_000,
            step=1,
            value=int(k_now) if k_now and k_now.isdigit() else 10,
            key="cfg_k",
            disabled=no_cutoff or not spec.accepts_k,
        )
        graded = not spec.binary
        rel_now = int(cfg.metric.split(">=")[1].rstrip("]")) if ">=" in cfg.metric else 1
        rel = st.number_input(
            "Relevant from grade",
            min_value=1,
            max_value=100,
            step=1,
            value=rel_now,
            key="cfg_rel",
            disabled=graded,
            help="Binary metrics count an item as relevant when its judged "
            "grade is at least this (nDCG uses the grades themselves).",
        )
        metric = family if (no_cutoff or not spec.accepts_k) else f"{family}@{int(k)}"
        if not graded and int(rel) > 1:
            metric += f"[rel>={int(rel)}]"
        ties_options = ["trec_eval", "given", "average"]
        ties = st.selectbox(
            "Ties",
            ties_options,
            index=ties_options.index(cfg.ties),
            key="cfg_ties",
            help="trec_eval: score then docid descending; given: the file's "
            "ranks; average: the expectation over tied orders",
        )

if qrels is None or (pool_kind != "corpus" and not pool):
    st.warning("Choose the judgements and the dataset that declares the pool.")
    st.stop()
try:
    chosen = cfg.with_changes(
        run=run,
        qrels=qrels,
        pool_kind=pool_kind,
        pool=pool,
        analytic_unit=unit,
        noise_run=noise,
        harness=harness,
        metric=metric,
        ties=ties,
        compare=tuple(c for c in cfg.compare if c != run),
    )
except EvalValidityError as exc:
    st.error(str(exc))
    st.stop()
if chosen != cfg:
    state.set_config(chosen)

cfg, result = widgets.result_or_stop()
widgets.verdict_banner(result)

head = result.headroom
cols = st.columns(4)
cols[0].metric("Floor (random ranker)", f"{head.floor:.4g}")
cols[1].metric("Ceiling", f"{head.ceiling:.4g}")
cols[2].metric(
    "Floor / ceiling",
    f"{head.floor_over_ceiling:.1%}" if head.floor_over_ceiling is not None else "–",
)
cols[3].metric(
    f"Model ({result.run_name})" if result.run_name else "Model",
    f"{head.model:.4g}" if head.model is not None else "–",
)

every = charts.result_charts(result)
st.subheader("The two checks")
gauges = st.columns(2)
with gauges[0]:
    if "check1_gauge" in every:
        st.altair_chart(every["check1_gauge"], width="stretch")
    else:
        st.info("Check 1 did not run: " + " ".join(result.notes or ("no query has gold.",)))
with gauges[1]:
    if "check2_gauge" in every:
        st.altair_chart(every["check2_gauge"], width="stretch")
    else:
        st.info(
            "Check 2 needs a noise run: the same pipeline with every vector replaced by "
            "noise (and BM25 and rerankers switched off)."
        )

st.subheader("Headroom")
if "headroom" in every:
    st.altair_chart(every["headroom"], width="stretch")
frame = report.to_frame(result)
if len(frame):
    limit = st.slider(
        "Queries to show",
        5,
        min(100, max(5, len(frame))),
        min(20, max(5, len(frame))),
        key="health_limit",
    )
    st.altair_chart(
        charts.query_headroom(frame, limit=limit, metric=result.metric.name), width="stretch"
    )
    st.altair_chart(every["floor_share"], width="stretch")
if result.notes:
    with st.expander("Notes"):
        st.markdown("\n".join(f"- {explain.md(n)}" for n in result.notes))
