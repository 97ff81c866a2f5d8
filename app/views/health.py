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


#: Every setting of the plan's form, by its widget key.
FORM_KEYS = (
    "cfg_run",
    "cfg_qrels",
    "cfg_noise",
    "cfg_harness",
    "cfg_compare",
    "cfg_pool_kind",
    "cfg_corpus",
    *(f"cfg_pool_{kind}" for kind in state.POOL_KINDS if kind != "corpus"),
    "cfg_unit",
    "cfg_family",
    "cfg_cutoff",
    "cfg_k",
    "cfg_rel",
    "cfg_ties",
)


def settings_of(cfg: Preset | None) -> dict[str, object]:
    """The form's values that show ``cfg`` (None: a new benchmark, nothing chosen)."""
    if cfg is None:
        return {
            "cfg_run": NONE,
            "cfg_qrels": None,
            "cfg_noise": NONE,
            "cfg_harness": NONE,
            "cfg_compare": [],
            "cfg_pool_kind": "corpus",
            "cfg_corpus": 1000,
            "cfg_unit": "documents",
            "cfg_family": "rr",
            "cfg_cutoff": False,
            "cfg_k": 10,
            "cfg_rel": 1,
            "cfg_ties": "trec_eval",
        }
    metric = cfg.metric
    family = metric.split("@")[0].split("[")[0]
    k_now = metric.split("@")[1].split("[")[0] if "@" in metric else None
    values: dict[str, object] = {
        "cfg_run": cfg.run or NONE,
        "cfg_qrels": cfg.qrels,
        "cfg_noise": cfg.noise_run or NONE,
        "cfg_harness": cfg.harness or NONE,
        "cfg_compare": list(cfg.compare),
        "cfg_pool_kind": cfg.pool_kind,
        "cfg_corpus": int(cfg.pool) if cfg.pool_kind == "corpus" else 1000,
        "cfg_unit": cfg.analytic_unit,
        "cfg_family": family if family in FAMILIES else "rr",
        "cfg_cutoff": k_now is None,
        "cfg_k": int(k_now) if k_now and k_now.isdigit() else 10,
        "cfg_rel": int(metric.split(">=")[1].rstrip("]")) if ">=" in metric else 1,
        "cfg_ties": cfg.ties,
    }
    if cfg.pool_kind != "corpus":
        values[f"cfg_pool_{cfg.pool_kind}"] = str(cfg.pool)
    return values


def load_settings(cfg: Preset | None) -> None:
    """Show ``cfg`` in every selector of the form (the draft becomes ``cfg``)."""
    values = settings_of(cfg)
    for key in FORM_KEYS:
        st.session_state.pop(key, None)
    st.session_state.update(values)
    st.session_state["draft"] = dict(values)
    st.session_state["draft_of"] = cfg.plan.to_json(indent=None) if cfg is not None else None


def apply_example() -> None:
    chosen = st.session_state.get("cfg_example")
    for preset in state.presets():
        if preset.title == chosen:
            state.set_config(preset)
            load_settings(preset)


def new_benchmark() -> None:
    state.clear_config()
    st.session_state["cfg_example"] = None
    load_settings(None)


def keep_draft() -> None:
    """Remember the form's values (Streamlit forgets a widget's state on another page)."""
    st.session_state["draft"] = {k: st.session_state[k] for k in FORM_KEYS if k in st.session_state}


qrels_names = names("qrels")
if not qrels_names:
    st.info(
        "The workspace holds no judgements yet. Upload a run, its qrels and how the pool "
        "was drawn on the Workspace page."
    )
    st.page_link("views/workspace.py", label="Go to the Workspace", icon=":material/folder_open:")
    st.stop()

applied = state.config()
applied_json = applied.plan.to_json(indent=None) if applied is not None else None
if "draft" not in st.session_state or (
    applied_json is not None and st.session_state.get("draft_of") != applied_json
):
    # First visit, or the checked plan changed elsewhere (Compare, a rename): show it.
    load_settings(applied)
    if applied is None and len(qrels_names) == 1:
        st.session_state["cfg_qrels"] = qrels_names[0]  # the only judgements there are
else:
    for key, value in st.session_state["draft"].items():
        if key not in st.session_state:
            st.session_state[key] = value


def pick(
    label: str,
    options: list[str],
    key: str,
    optional: bool = False,
    help_text: str | None = None,
) -> str | None:
    choices = ([NONE] if optional else []) + options
    if st.session_state.get(key) not in choices:
        st.session_state[key] = NONE if optional else None
    chosen = st.selectbox(
        label,
        choices,
        index=None,
        key=key,
        help=help_text,
        placeholder="Choose a dataset…",
        on_change=keep_draft,
    )
    return None if chosen in (None, NONE) else str(chosen)


examples = state.presets()
with st.expander("Benchmark: datasets, pool and metric", expanded=True):
    top = st.columns([3, 1])
    with top[0]:
        if examples:
            titles = [p.title for p in examples]
            matching = next((p.title for p in examples if applied and p.plan == applied.plan), None)
            # The example named is the one the checked plan is, or none: not an example whose
            # datasets were since replaced by one's own.
            st.session_state["cfg_example"] = matching
            st.selectbox(
                "Start from an example",
                titles,
                index=None,
                placeholder="Choose an example…",
                key="cfg_example",
                on_change=apply_example,
                help="Loads the example's whole plan into the settings below and checks it.",
            )
    with top[1]:
        st.button(
            "New benchmark",
            key="new_benchmark",
            on_click=new_benchmark,
            icon=":material/add:",
            help="Start from nothing: every dataset unchosen.",
        )
    left, middle, right = st.columns(3)
    with left:
        run = pick(
            "Model run",
            names("run"),
            "cfg_run",
            optional=True,
            help_text="The model's ranking; without one the benchmark alone is checked.",
        )
        qrels = pick("Judgements (qrels)", qrels_names, "cfg_qrels")
        noise = pick(
            "Noise run (Check 2)",
            names("run"),
            "cfg_noise",
            optional=True,
            help_text="The same pipeline with every vector replaced by noise.",
        )
        harness = pick(
            "Harness output (Check 1)",
            names("harness"),
            "cfg_harness",
            optional=True,
            help_text="Your harness's per-query values on noise runs; without it "
            "Check 1 runs on the package's own scorer.",
        )
        # Only runs of the model's queries can be compared with it: a comparison run kept from
        # an example (another benchmark's) leaves the selection, saying so, not the plan hidden.
        others = [
            r for r in names("run") if r != run and (run is None or state.shares_a_query(run, r))
        ]
        kept = st.session_state.get("cfg_compare", [])
        left_out = [c for c in kept if c not in others and c != run]
        st.session_state["cfg_compare"] = [c for c in kept if c in others]
        if left_out:
            st.session_state["compare_left_out"] = (run, left_out)
        compare = st.multiselect(
            "Runs to compare",
            others,
            key="cfg_compare",
            on_change=keep_draft,
            placeholder="none",
            help="More runs scored on the same queries and compared with the model's "
            "(paired tests, on the Compare page). Only runs that rank some of the model "
            "run's queries are offered.",
        )
        dropped_for, dropped = st.session_state.get("compare_left_out", (None, []))
        dropped = [c for c in dropped if c not in compare]
        if dropped and dropped_for == run:
            st.caption(
                "Left out of the comparison: "
                + ", ".join(f"**{explain.md(c)}**" for c in dropped)
                + f" (no query in common with **{explain.md(run or '')}**)."
            )
        else:
            st.session_state.pop("compare_left_out", None)
    with middle:
        kinds = list(state.POOL_KINDS)
        pool_kind = st.radio(
            "Pool declared as",
            kinds,
            format_func=lambda k: state.POOL_KINDS.get(k, k),
            key="cfg_pool_kind",
            on_change=keep_draft,
        )
        unit = "documents"
        if pool_kind == "corpus":
            pool: str | int = int(
                st.number_input(
                    "Corpus size N", min_value=1, step=1, key="cfg_corpus", on_change=keep_draft
                )
            )
        else:
            chosen_pool = pick("Pool dataset", names(pool_kind), f"cfg_pool_{pool_kind}")
            pool = chosen_pool or ""
            if pool_kind == "units":
                unit = st.radio(
                    "Analytic unit",
                    ["documents", "chunks"],
                    key="cfg_unit",
                    horizontal=True,
                    on_change=keep_draft,
                    help="documents: the exact floor of chunk scores deduplicated to "
                    "documents; chunks: as if the scorer never deduplicated (the units bug)",
                )
    with right:
        family = st.selectbox(
            "Metric",
            list(FAMILIES),
            format_func=lambda f: family_spec(f).title,
            key="cfg_family",
            on_change=keep_draft,
        )
        spec = family_spec(family)
        no_cutoff = not spec.needs_k and st.checkbox(
            "No cutoff (the whole ranking)",
            key="cfg_cutoff",
            disabled=not spec.accepts_k,
            on_change=keep_draft,
        )
        k = st.number_input(
            "Cutoff k",
            min_value=1,
            max_value=100_000,
            step=1,
            key="cfg_k",
            disabled=no_cutoff or not spec.accepts_k,
            on_change=keep_draft,
        )
        graded = not spec.binary
        rel = st.number_input(
            "Relevant from grade",
            min_value=1,
            max_value=100,
            step=1,
            key="cfg_rel",
            disabled=graded,
            on_change=keep_draft,
            help="Binary metrics count an item as relevant when its judged "
            "grade is at least this (nDCG uses the grades themselves).",
        )
        metric = family if (no_cutoff or not spec.accepts_k) else f"{family}@{int(k)}"
        if not graded and int(rel) > 1:
            metric += f"[rel>={int(rel)}]"
        ties = st.selectbox(
            "Ties",
            ["trec_eval", "given", "average"],
            key="cfg_ties",
            on_change=keep_draft,
            help="trec_eval: score then docid descending; given: the file's "
            "ranks; average: the expectation over tied orders",
        )
keep_draft()

draft: Preset | None = None
problem: str | None = None
if qrels is None:
    problem = "Choose the judgements (qrels)."
elif pool_kind != "corpus" and not pool:
    problem = "Choose the dataset that declares the pool."
else:
    try:
        fields = {
            "run": run,
            "qrels": qrels,
            "pool_kind": pool_kind,
            "pool": pool,
            "analytic_unit": unit,
            "noise_run": noise,
            "harness": harness,
            "metric": metric,
            "ties": ties,
            "compare": tuple(compare),
        }
        base = applied or Preset(
            "custom", "Your benchmark", "", run=None, qrels=qrels, pool_kind="corpus", pool=1
        )
        draft = base.with_changes(**fields)
        same = next((p for p in examples if p.plan == draft.plan), None)
        if same is not None:
            draft = same
        elif applied is None or draft.plan != applied.plan:
            draft = Preset("custom", "Your benchmark", "", plan=draft.plan)
    except EvalValidityError as exc:
        problem = str(exc)


def run_draft(chosen: Preset) -> None:
    """Check the plan the settings showed when "Run check" was clicked."""
    state.set_config(chosen)
    st.session_state["draft_of"] = chosen.plan.to_json(indent=None)


pending = draft is not None and (applied is None or draft.plan != applied.plan)
bar = st.columns([1, 3])
with bar[0]:
    # Not an on_click callback: Streamlit calls one with the arguments of the last run that
    # drew the button, and a setting changed just before the click (its rerun cut short by
    # the click before it reached the button) would be left out of the plan checked. The
    # click's own run holds every setting as the page showed it when clicked: ``draft``.
    if st.button(
        "Run check",
        key="run_check",
        type="primary",
        disabled=draft is None or not pending,
        icon=":material/play_arrow:",
    ) and (draft is not None and pending):
        run_draft(draft)
        st.rerun()  # the page drawn again from the top for the plan now checked
with bar[1]:
    if problem is not None:
        st.warning(problem)
    elif pending and applied is not None:
        st.warning(
            "The settings above changed: the verdict below is still the one of the plan "
            "it names. Click **Run check** to check the new settings.",
            icon=":material/pending:",
        )
    if draft is not None and pending:
        # Do the chosen datasets belong together? Said before the check, naming them: a run of
        # one's own next to an example's noise run, units map or harness output is a mix.
        refused, partial = state.consistency(draft)
        if refused is not None:
            st.error(
                "These datasets do not belong together (the check will refuse them): "
                + explain.md(refused),
                icon=":material/link_off:",
            )
        for message in partial:
            st.warning(explain.md(message), icon=":material/link:")

if applied is None:
    st.info("Choose the datasets above, then click **Run check**.")
    st.stop()
for p in examples:
    if p.plan == applied.plan:
        st.markdown(f"**{explain.md(p.title)}** — {explain.md(p.summary)}")
with st.popover("Copy link to this plan", icon=":material/link:"):
    link = state.plan_link(applied)
    if link.url is not None:
        st.code(link.url, language=None, wrap_lines=True)
        st.caption(
            "Whoever opens this address sees this plan checked on the shared datasets it "
            "names. A link names shared datasets only: a private dataset is never named in one."
        )
    else:
        st.warning(
            "This plan names private datasets ("
            + ", ".join(explain.md(n) for n in link.private)
            + "), and a link never names a private dataset. Save them to the shared "
            "workspace on the Workspace page (Share) to get a link to this plan.",
            icon=":material/lock:",
        )

# Everything computed from the plan is drawn inside one placeholder, emptied first: while a
# new plan's check runs, the previous plan's verdict does not stay on screen under its name.
verdict_area = st.empty()
verdict_area.empty()
with verdict_area.container():
    cfg, result = widgets.result_or_stop(stale=pending, on_health=True)
    widgets.verdict_banner(result)

    head = result.headroom
    cols = st.columns(4)
    cols[0].metric("Floor (random ranker)", f"{head.floor:.4g}")
    cols[1].metric("Ceiling", f"{head.ceiling:.4g}")
    cols[2].metric(
        "Floor / ceiling",
        explain.share(head.floor_over_ceiling),
    )
    cols[3].metric(
        f"Model ({result.run_name})" if result.run_name else "Model",
        f"{head.model:.4g}" if head.model is not None else "–",
    )

    every = state.result_charts(cfg, result)
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
        limit = (
            st.slider(
                "Queries to show",
                5,
                min(100, len(frame)),
                min(20, len(frame)),
                key="health_limit",
            )
            if len(frame) > 5
            else len(frame)  # a slider from 5 to 5 is refused: every query is shown
        )
        st.altair_chart(
            charts.query_headroom(frame, limit=limit, metric=result.metric.name), width="stretch"
        )
        st.altair_chart(every["floor_share"], width="stretch")
    if result.notes:
        with st.expander("Notes"):
            st.markdown("\n".join(f"- {explain.md(n)}" for n in result.notes))
