"""The HTML report in a real headless Chromium: offline, on a phone's width, and printed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from evalvalidity.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "data" / "writeup" / "toy"
FILES = {  # the plan's roles, in its order
    "run": TOY / "model.trec",
    "qrels": TOY / "qrels.txt",
    "noise run": TOY / "noise.trec",
    "compare:noise.trec": TOY / "noise.trec",
}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``evalvalidity report`` of the toy benchmark, its model compared with its noise run."""
    folder = tmp_path_factory.mktemp("offline") / "report"
    code = main(
        [
            "report",
            "--run",
            str(FILES["run"]),
            "--run",
            str(FILES["compare:noise.trec"]),
            "--qrels",
            str(FILES["qrels"]),
            "--noise-run",
            str(FILES["noise run"]),
            "--pool-size",
            "200",
            "--seeds",
            "20",
            "--out",
            str(folder),
        ]
    )
    assert code == 0
    return folder / "report.html"


def _offline_page(chromium: Any, report: Path, width: int, blocked: list[str]) -> Any:
    """A page that may fetch nothing but files: every other request is aborted and listed."""
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()

    def only_files(route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_files)
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    return page


def test_the_report_renders_whole_offline(chromium, artifacts, report):
    blocked: list[str] = []
    page = _offline_page(chromium, report, 1100, blocked)
    charts = sorted(p.stem for p in (report.parent / "charts").glob("*.svg"))
    assert "other_nulls" in charts and "comparison" in charts
    figures = page.locator("figure")
    assert sorted(f.get_attribute("id").removeprefix("chart-") for f in figures.all()) == charts
    for figure in figures.all():
        svg = figure.locator("svg")
        svg.scroll_into_view_if_needed()
        assert svg.is_visible()
        box = svg.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 50
    summary = page.locator("#summary").inner_text()
    assert summary.startswith("Benchmark health: healthy.")
    assert page.locator("#leaderboard").is_visible()
    provenance = page.locator("table.provenance")
    assert provenance.is_visible()
    rows = provenance.locator("tbody tr")
    assert rows.count() == len(FILES)
    for index, (role, path) in enumerate(FILES.items()):
        cells = rows.nth(index).locator("td").all_inner_texts()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert cells[0] == role and cells[2] == path.name and cells[3] == digest
    plan = json.loads(page.locator("#plan").inner_text())
    assert plan["run"]["name"] == str(FILES["run"]) and plan["compare"][0]["name"] == "noise.trec"
    assert blocked == []  # nothing asked for the network
    page.screenshot(path=artifacts / "report-offline-desktop.png", full_page=True)
    page.context.close()


def test_the_report_fits_a_phone_and_prints(chromium, artifacts, report):
    blocked: list[str] = []
    page = _offline_page(chromium, report, 375, blocked)
    widths = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert widths[1] == 375 and widths[0] <= widths[1]
    # Each chart scales to the column; wide tables scroll inside their own box.
    for svg in page.locator("figure svg").all():
        box = svg.bounding_box()
        assert box is not None and box["width"] <= 375
    page.screenshot(path=artifacts / "report-offline-phone.png", full_page=True)
    page.emulate_media(media="print")
    assert page.evaluate("() => matchMedia('print').matches")
    widths = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1]
    page.screenshot(path=artifacts / "report-offline-print.png", full_page=True)
    assert blocked == []
    page.context.close()
