"""How the browser tests wait for Streamlit: one definition for every test file."""

from __future__ import annotations

from typing import Any

SLOW = 90_000  # ms: a check of Cranfield takes a few seconds on a busy machine


def settled(page: Any, timeout: int = SLOW) -> None:
    """Wait for the rerun to end: no running icon and no element left over from the last run.

    Streamlit shows its running icon (an image labelled "Running...", no text) only once a
    run has lasted 500 ms, and marks every element not yet redrawn by the current run
    ``data-stale="true"`` until the run ends.
    """
    page.wait_for_timeout(700)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stStatusWidgetRunningIcon]')"
        " && !document.querySelector('[data-stale=true]')",
        timeout=timeout,
    )
