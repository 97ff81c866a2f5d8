"""Eight browser sessions at once against one server: each result right, nothing shared.

Each session uploads its own copy of the toy benchmark under its own names and checks it; the
runs it can pick must be its own and none of the others'. Meanwhile a
thread polls the server's health endpoint: the server must stay responsive throughout.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from evalvalidity.io.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "data" / "writeup" / "toy"
SESSIONS = 8
SLOW = 120_000  # ms

pytestmark = pytest.mark.browser


def _nav(page: Any, title: str) -> None:
    page.locator("[data-testid=stSidebarNav] a").filter(has_text=title).click()
    page.get_by_role("heading", level=1).filter(has_text=re.compile(title, re.I)).wait_for()


def _poll_health(url: str, stop: threading.Event, latencies: list[float]) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as response:
            response.read()
        latencies.append(time.perf_counter() - start)
        stop.wait(0.25)


def test_eight_sessions_upload_and_check_at_once_and_see_only_their_own_data(
    server, workspace, chromium, artifacts, tmp_path
):
    files = []
    for i in range(SESSIONS):
        qrels = tmp_path / f"s{i}-qrels.txt"
        model = tmp_path / f"s{i}-model.trec"
        qrels.write_bytes((TOY / "qrels.txt").read_bytes())
        model.write_bytes((TOY / "model.trec").read_bytes())
        files.append((qrels, model))

    stop = threading.Event()
    latencies: list[float] = []
    poller = threading.Thread(target=_poll_health, args=(server, stop, latencies), daemon=True)
    poller.start()
    contexts, pages = [], []
    try:
        for _ in range(SESSIONS):
            context = chromium.new_context(viewport={"width": 1300, "height": 1800})
            page = context.new_page()
            page.set_default_timeout(SLOW)
            page.goto(server)
            contexts.append(context)
            pages.append(page)
        # Every step is started in all sessions before any is awaited, so the server handles
        # the eight sessions' script runs at the same time.
        for page in pages:
            _nav(page, "Workspace")
        for page, (qrels, model) in zip(pages, files, strict=True):
            page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(
                [str(qrels), str(model)]
            )
        for page in pages:
            page.get_by_role("button", name="Add all 2 files").click()
        for i, page in enumerate(pages):
            page.get_by_text(
                re.compile(rf"^Added s{i}-(qrels|model), s{i}-(qrels|model)\.$")
            ).wait_for()
        for page in pages:
            _nav(page, "Health")
        for i, page in enumerate(pages):
            box = page.get_by_role("combobox", name="Model run", exact=True)
            box.click()
            page.get_by_role("option", name=f"s{i}-model", exact=True).click()
        for page in pages:
            page.get_by_role("button", name="Run check").click()
        for i, page in enumerate(pages):
            page.get_by_text("Verdict: HEALTHY").wait_for()
            assert page.get_by_text(f"s{i}-model").count() >= 1
        pages[0].screenshot(path=artifacts / "concurrency-session0-health.png")
        # What each session can pick from is what it can see: its own run only.
        for i, page in enumerate(pages):
            box = page.get_by_role("combobox", name="Model run", exact=True)
            box.click()
            options = page.get_by_role("option").all_inner_texts()
            page.keyboard.press("Escape")
            runs = sorted(o for o in options if re.fullmatch(r"s\d+-model", o))
            assert runs == [f"s{i}-model"], f"session {i} can pick {runs}"
    finally:
        stop.set()
        poller.join(timeout=30)
        for context in contexts:
            context.close()

    stored = Workspace(workspace).list(all_owners=True)
    assert len(stored) == 2 * SESSIONS
    owners = {d.owner for d in stored}
    assert None not in owners and len(owners) == SESSIONS
    for i in range(SESSIONS):
        mine = {d.name for d in stored if d.name.startswith(f"s{i}-")}
        assert mine == {f"s{i}-qrels", f"s{i}-model"}
        assert len({d.owner for d in stored if d.name in mine}) == 1
    assert latencies, "the health endpoint was never polled"
    assert max(latencies) < 5.0, f"the server stalled: {max(latencies):.1f} s for /_stcore/health"
