"""The Compare page's leaderboard: every run ranked, with rank intervals and corrected tests.

Scoring the compared runs again per query (the check keeps only their means) is cached on the
plan and the datasets' content hashes, like the check itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app import state
from evalvalidity.analysis.compare import per_query_scores, query_clusters, run_leaderboard
from evalvalidity.analysis.examples import Preset
from evalvalidity.analysis.plan import CheckPlan
from evalvalidity.analysis.results import CheckResult
from evalvalidity.errors import EvalValidityError
from evalvalidity.io.groups import parse_groups
from evalvalidity.io.workspace import Workspace
from evalvalidity.report.records import format_p

__all__ = ["board_of", "show"]


@st.cache_data(show_spinner="Scoring the runs per query…", max_entries=32)
def _scores(
    workspace_path: str,
    plan_json: str,
    hashes: tuple[str, ...],
    qids: tuple[str, ...],
    owner: str | None = None,
) -> dict[str, np.ndarray]:
    """Per-query scores of the compared runs; ``hashes`` key the cache on content."""
    ws = Workspace(workspace_path)
    plan = CheckPlan.from_json(plan_json)
    pool = plan.pool.ref
    units = ws.table(pool.name, owner=owner) if plan.pool.kind == "units" and pool else None
    runs = {name: ws.table(ref.name, owner=owner) for name, ref in plan.compare}
    return per_query_scores(
        runs,
        ws.table(plan.qrels.name, owner=owner),
        np.array(qids),
        metric=plan.metric,
        units=units,
        ties=plan.ties,
    )


def _groups_choice(result: CheckResult) -> Any:
    """The clusters the user chose: none, shared gold, or an uploaded groups file."""
    choice = st.radio(
        "Queries are",
        ("independent", "grouped by shared gold documents", "grouped by a groups file"),
        horizontal=True,
        key="c_groups",
        help="Queries of one group (variants of a question, one source) are not independent: "
        "the intervals and tests then resample and flip whole groups.",
    )
    if choice == "independent":
        return None
    if choice == "grouped by a groups file":
        upload = st.file_uploader("Groups file (qid, group)", type=["tsv", "csv", "txt"])
        if upload is None:
            return None
        groups = parse_groups(upload.getvalue().decode("utf-8-sig"), upload.name)
        return query_clusters(result.queries.qid, groups=groups)
    ws = state.workspace()
    assert result.plan is not None
    return query_clusters(
        result.queries.qid, qrels=ws.table(result.plan.qrels.name, owner=state.owner())
    )


def board_of(result: CheckResult) -> tuple[Any, list[str]] | None:
    """The leaderboard of the check's run and the runs it compares (queries independent).

    None when the check compares no runs or names a dataset outside the workspace.
    """
    plan = result.plan
    if plan is None or not plan.compare or any(r.source != "dataset" for r in plan.refs.values()):
        return None
    return run_leaderboard(result, _run_values(result), seed=plan.seed)


def _run_values(result: CheckResult) -> dict[str, np.ndarray]:
    """Per-query scores of the check's run and of each run it compares (cached per content)."""
    plan = result.plan
    assert plan is not None
    ws = state.workspace()
    hashes = tuple(ws.info(ref.name, owner=state.owner()).sha256 for ref in plan.refs.values())
    others = _scores(
        str(ws.path),
        plan.to_json(indent=None),
        hashes,
        tuple(str(q) for q in result.queries.qid.tolist()),
        state.owner(),
    )
    return {plan.run_name: np.asarray(result.queries.model), **others}


def show(cfg: Preset, result: CheckResult) -> None:
    """Draw the leaderboard of the configuration's run and the runs it compares."""
    plan = result.plan
    if plan is None or not plan.compare or any(r.source != "dataset" for r in plan.refs.values()):
        return
    st.subheader("Leaderboard")
    try:
        clusters = _groups_choice(result)
        board, notes = run_leaderboard(
            result, _run_values(result), clusters=clusters, seed=plan.seed
        )
    except EvalValidityError as exc:
        st.error(str(exc))
        return
    rows = board.to_rows()
    frame = pd.DataFrame(
        {
            "rank": [r["rank"] for r in rows],
            "run": [r["run"] for r in rows],
            "mean": [r["mean"] for r in rows],
            "95 % low": [r["low"] for r in rows],
            "95 % high": [r["high"] for r in rows],
            "rank interval": [f"{r['rank_low']}–{r['rank_high']}" for r in rows],
            "floor": [result.headroom.floor] * len(rows),
            "chance-adjusted": [r["adjusted"] for r in rows],
            f"wins / ties / losses vs {board.baseline}": [
                f"{r['wins']} / {r['ties']} / {r['losses']}" for r in rows
            ],
            "separated from next": [r["separated_from_next"] for r in rows],
        }
    )
    number = st.column_config.NumberColumn(format="%.4f")
    st.dataframe(
        frame,
        hide_index=True,
        key="c_board",
        column_config={c: number for c in ("mean", "95 % low", "95 % high", "floor")}
        | {"chance-adjusted": st.column_config.NumberColumn(format="%.3f")},
    )
    correction = {"holm": "Holm", "bh": "Benjamini–Hochberg"}[board.correction]
    pairs = pd.DataFrame(
        {
            "runs": [f"{p.run_a} − {p.run_b}" for p in board.pairs],
            "difference": [p.difference for p in board.pairs],
            "p (randomization)": [format_p(p.p_value, board.resolution) for p in board.pairs],
            f"p ({correction})": [format_p(p.adjusted_p_value) for p in board.pairs],
            "separated": [p.significant for p in board.pairs],
        }
    )
    st.dataframe(
        pairs,
        hide_index=True,
        key="c_board_pairs",
        column_config={"difference": st.column_config.NumberColumn(format="%+.4f")},
    )
    mdd = result.power.min_detectable_difference if result.power is not None else None
    units = (
        f"{board.n_clusters:,} groups of {board.n_queries:,} queries"
        if clusters is not None
        else f"{board.n_queries:,} queries"
    )
    st.caption(
        f"Over {units}. Rank intervals: {board.n_resamples:,} bootstrap resamples"
        + (" of whole groups" if clusters is not None else "")
        + f". p-values: paired sign-flip randomization test ({'exact' if board.exact else 'Monte Carlo'}), "
        f"whose smallest attainable p is {board.resolution:.2g}; {correction}-corrected over "
        f"{len(board.pairs)} pairs."
        + (f" Smallest detectable difference: {mdd:.3g}." if mdd is not None else "")
    )
    for note in notes:
        st.warning(note)
