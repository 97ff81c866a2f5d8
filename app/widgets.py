"""Pieces of page shared by several pages (Streamlit calls, no logic)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from app import explain, state
from evalvalidity.analysis.examples import Preset
from evalvalidity.analysis.results import CheckResult


def result_or_stop(*, stale: bool = False, on_health: bool = False) -> tuple[Preset, CheckResult]:
    """The checked plan and its check; stops the page with a message when there is none.

    The plan is named in one line above anything computed from it; ``stale`` says that the
    settings shown on the page have changed since (the verdict below is the plan's, not theirs).
    ``on_health``: the page is the Health page, whose settings are right above, so the error
    links nowhere.
    """
    cfg = state.config()
    if cfg is None:
        st.info(
            "No benchmark is configured yet: upload a run and its judgements on the "
            "Workspace page, then choose them on the Health page and click Run check."
        )
        st.page_link(
            "views/workspace.py", label="Go to the Workspace", icon=":material/folder_open:"
        )
        st.stop()
    line = st.empty()
    line.info("Computing the verdict of: " + explain.describe(cfg), icon=":material/hourglass_top:")
    cfg, result, error = state.current_result()
    assert cfg is not None
    prefix = "**Stale — checked before the settings changed:** " if stale else "**Checked:** "
    line.markdown(prefix + explain.describe(cfg))
    if error is not None or result is None:
        st.error(error or "The check could not run.")
        if not on_health:
            st.page_link(
                "views/health.py",
                label="Change the configuration on the Health page",
                icon=":material/monitor_heart:",
            )
        st.stop()
    return cfg, result


def verdict_banner(result: CheckResult) -> None:
    """The verdict in words, coloured, with its reasons."""
    word = result.verdict.upper()
    text = f"**Verdict: {word}** — {result.metric.name}, {result.n_queries:,} queries"
    {"healthy": st.success, "warning": st.warning, "broken": st.error}[result.verdict](
        text,
        icon={
            "healthy": ":material/check_circle:",
            "warning": ":material/warning:",
            "broken": ":material/error:",
        }[result.verdict],
    )
    st.markdown("\n".join(explain.reason_lines(result.reasons)))


def progress_bar(label: str) -> tuple[Any, Callable[[float, str], None]]:
    """A progress bar and the callback the library reports its progress to."""
    bar = st.progress(0.0, text=label)

    def update(fraction: float, message: str) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=f"{label}: {message}")

    return bar, update
