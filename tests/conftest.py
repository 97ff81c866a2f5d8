"""Helpers shared by the test modules: the repository's folders, generated inputs, waiting on a child.

Test modules import them by name (``from conftest import ROOT, run_text``): pytest puts this folder
on ``sys.path``, and ``tests/e2e`` is a package, so its own conftest never shadows this one.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

#: The repository's root.
ROOT = Path(__file__).resolve().parent.parent
#: The write-up's example benchmarks (toy, pool8, unitsbug, ...).
WRITEUP = ROOT / "data" / "writeup"
#: The healthy toy benchmark of the write-up.
TOY = WRITEUP / "toy"
#: The Cranfield collection with its runs.
CRANFIELD = ROOT / "data" / "cranfield"
#: Malformed input files, one fault each.
BAD = ROOT / "tests" / "data" / "bad"

#: How long a child process may take to reach a point a test waits for before the test fails.
#: Not a performance bound: only a guard against waiting forever on a child that hangs.
HANG_GUARD_SECONDS = 600.0


def run_text(n_queries: int, per_query: int, tag: str = "x") -> bytes:
    """A TREC run of ``n_queries`` queries (ids 0, 1, ...) with ``per_query`` ranked items each.

    >>> run_text(1, 2).decode()
    '0 Q0 D0_1 1 999.5 x\\n0 Q0 D0_2 2 998.5 x\\n'
    """
    return "".join(
        f"{q} Q0 D{q}_{i} {i} {1000 - i}.5 {tag}\n"
        for q in range(n_queries)
        for i in range(1, per_query + 1)
    ).encode()


def wait_for(
    reached: Callable[[], bool],
    child: subprocess.Popen[bytes] | subprocess.Popen[str],
    what: str,
    *,
    interval: float = 0.01,
) -> None:
    """Poll until ``reached()`` holds; fail if ``child`` exits first (or hangs for ever).

    Parameters
    ----------
    reached : callable
        The condition, e.g. ``ready.exists``.
    child : subprocess.Popen
        The process expected to make it hold, still running.
    what : str
        The event, for the failure message ("the child died before {what}").
    interval : float
        Seconds between polls.
    """
    guard = time.monotonic() + HANG_GUARD_SECONDS
    while not reached():
        if child.poll() is not None:
            pytest.fail(f"the child exited with {child.returncode} before {what}")
        if time.monotonic() > guard:
            child.kill()
            pytest.fail(f"the child hung: {what} did not happen in {HANG_GUARD_SECONDS:.0f} s")
        time.sleep(interval)
