"""End to end in a real headless Chromium: upload Cranfield, read the verdicts, get the report."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evalvalidity.io.workspace import Workspace

from .waits import SLOW
from .waits import settled as _settled

ROOT = Path(__file__).resolve().parents[2]
CRANFIELD = ROOT / "data" / "cranfield"
UPLOADS = ["qrels.txt", "run_dense.trec", "run_noise.trec", "run_hybrid_noise.trec", "chunks.tsv"]

pytestmark = pytest.mark.browser


def _nav(page: Any, title: str) -> None:
    """Go to a page through the sidebar: the same session (a new URL would start another)."""
    page.locator("[data-testid=stSidebarNav] a").filter(has_text=title).click()
    page.get_by_role("heading", level=1).filter(has_text=re.compile(title, re.I)).wait_for()


def _choose(page: Any, label: str, option: str) -> None:
    """Pick an option of the Streamlit selectbox labelled ``label`` (a combobox)."""
    from playwright.sync_api import expect

    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect(box).to_have_value(option, timeout=SLOW)


def _run_check(page: Any) -> None:
    """Apply the settings: the verdict is computed when "Run check" is clicked."""
    _settled(page)
    page.get_by_role("button", name="Run check").click()
    _settled(page)


def test_upload_cranfield_check_dense_against_noise_and_hybrid_and_download_the_report(
    server, workspace, chromium, artifacts, tmp_path
):
    context = chromium.new_context(viewport={"width": 1400, "height": 2600}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(SLOW)
    page.goto(server)
    page.get_by_text("The workspace holds no judgements yet").wait_for()

    _nav(page, "Workspace")
    page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(
        [str(CRANFIELD / name) for name in UPLOADS]
    )
    page.get_by_role("button", name=f"Add all {len(UPLOADS)} files").wait_for()
    for kind, fmt in (("qrels", "trec"), ("run", "trec"), ("units", "tsv")):
        assert page.get_by_text(f"Detected {kind} in {fmt} format").count() >= 1
    page.screenshot(path=artifacts / "1-uploads-previewed.png")
    page.get_by_role("button", name=f"Add all {len(UPLOADS)} files").click()
    page.get_by_text(
        re.compile(
            r"^Added (qrels|run_dense|run_noise|run_hybrid_noise|chunks)"
            r"(, (qrels|run_dense|run_noise|run_hybrid_noise|chunks)){4}\.$"
        )
    ).wait_for()
    stored = {d.name: (d.kind, d.owner) for d in Workspace(workspace).list(all_owners=True)}
    assert {name: kind for name, (kind, _) in stored.items()} == {
        "qrels": "qrels",
        "run_dense": "run",
        "run_noise": "run",
        "run_hybrid_noise": "run",
        "chunks": "units",
    }
    assert all(owner is not None for _, owner in stored.values())  # private to the session
    page.get_by_text("private to this session").first.wait_for()
    page.screenshot(path=artifacts / "2-workspace.png")

    _nav(page, "Health")
    _choose(page, "Model run", "run_dense")
    page.get_by_test_id("stRadio").filter(has_text="Pool declared as").get_by_text(
        "a units map (chunks deduplicated to documents)"
    ).click()
    _settled(page)
    _choose(page, "Pool dataset", "chunks")
    _choose(page, "Noise run (Check 2)", "run_noise")
    _run_check(page)
    page.get_by_text("Verdict: HEALTHY").wait_for()
    # The plan checked is the one chosen, noise run included (its gauge is one of the charts).
    page.get_by_text(re.compile(r"^Checked: .* · noise run run_noise · ")).wait_for()
    _settled(page)
    page.locator("[data-testid=stVegaLiteChart]").first.wait_for()
    # The charts arrive one by one while the page renders: wait for them all.
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=stVegaLiteChart]').length >= 5", timeout=SLOW
    )
    assert page.get_by_text("something other than the vectors carries the score").count() == 0
    page.wait_for_timeout(1000)  # let Vega draw
    page.screenshot(path=artifacts / "3-health-dense-vs-noise.png")

    _choose(page, "Noise run (Check 2)", "run_hybrid_noise")
    _run_check(page)
    page.get_by_text("Verdict: BROKEN").wait_for()
    _settled(page)
    leak = page.get_by_text(re.compile(r"The noise run scores 0\.26\d+, 17\.\d× its floor"))
    leak.wait_for()
    assert "something other than the vectors carries the score" in leak.inner_text()
    page.locator("[data-testid=stVegaLiteChart]").first.wait_for()
    page.wait_for_timeout(1000)
    page.screenshot(path=artifacts / "4-health-dense-vs-hybrid-noise.png")

    _nav(page, "Report")
    _settled(page)
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download the HTML report").click()
    download = download_info.value
    assert download.suggested_filename == "report.html"
    saved = tmp_path / "report.html"
    download.save_as(saved)
    page.screenshot(path=artifacts / "5-report-page.png")
    context.close()

    offline = chromium.new_context(offline=True, viewport={"width": 1100, "height": 2000})
    requests: list[str] = []
    report = offline.new_page()
    report.on("request", lambda request: requests.append(request.url))
    report.goto(saved.as_uri())
    assert report.locator("#verdict").inner_text() == "Benchmark health: BROKEN"
    assert report.locator("figure svg").count() >= 5
    assert "BM25 or a reranker left on" in report.locator("ul.reasons").inner_text()
    assert requests == [saved.as_uri()]  # nothing but the file itself
    report.screenshot(path=artifacts / "6-downloaded-report.png", full_page=True)
    offline.close()
