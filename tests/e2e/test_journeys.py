"""A new user's journeys in Chromium: what the page shows is exactly what was checked.

Each test walks one path a first-time user took on a fresh server with the demo workspace (the
write-up's toy benchmark and units bug) and then their own uploads, and asserts what they see.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evalvalidity.analysis import examples as demo

from .waits import SLOW
from .waits import settled as _settled

UNITSBUG = "The units bug: chunks counted, files scored"

pytestmark = pytest.mark.browser


@pytest.fixture
def workspace(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The demo workspace, as ``evalvalidity app`` builds it: toy and units bug unless a test
    names its examples (``parametrize("workspace", [examples], indirect=True)``)."""
    root = tmp_path / "workspace"
    demo.build_demo(root, include=getattr(request, "param", ("toy", "unitsbug")))
    return root


def _choose(page: Any, label: str, option: str) -> None:
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    _settled(page)


def _run_check(page: Any) -> None:
    """Click "Run check" when the page has one (the settings apply only then).

    Returns once the rerun has drawn the button disabled (the settings are the checked plan)
    and the plan line says "Checked": the check has finished, not merely started.
    """
    button = page.get_by_role("button", name="Run check")
    if button.count() and button.is_enabled():
        button.click()
        page.locator("button:has-text('Run check'):disabled").wait_for()
    page.get_by_text(re.compile(r"^Checked: ")).first.wait_for()
    _settled(page)


def _set_k(page: Any, k: int) -> None:
    box = page.get_by_label("Cutoff k")
    box.fill(str(k))
    box.press("Enter")
    _settled(page)


def _open(chromium: Any, url: str) -> tuple[Any, Any]:
    context = chromium.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.set_default_timeout(SLOW)
    page.goto(url)
    page.get_by_role("heading", level=1).first.wait_for()
    _settled(page)
    return context, page


def _upload(page: Any, files: list[tuple[str, bytes]]) -> None:
    page.locator("[data-testid=stSidebarNav] a").filter(has_text="Workspace").click()
    page.get_by_role("heading", level=1).filter(has_text="Workspace").wait_for()
    page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(
        [{"name": name, "mimeType": "text/plain", "buffer": data} for name, data in files]
    )
    label = f"Add all {len(files)} files" if len(files) > 1 else "Add to workspace"
    page.get_by_role("button", name=label).click()
    page.get_by_text(re.compile(r"^Added ")).wait_for()
    _settled(page)


def _own_benchmark() -> list[tuple[str, bytes]]:
    run = "".join(
        f"m{q} Q0 doc{q}-{r} {r} {10 - r} mine\n" for q in range(1, 11) for r in range(1, 6)
    )
    qrels = "".join(f"m{q} 0 doc{q}-{1 + q % 3} 1\n" for q in range(1, 11))
    return [("my_run.trec", run.encode()), ("my_qrels.txt", qrels.encode())]


def test_an_example_then_k_checks_the_example_not_the_previous_one(server, chromium, artifacts):
    context, page = _open(chromium, server)
    _choose(page, "Start from an example", UNITSBUG)
    _set_k(page, 5)
    _run_check(page)
    page.get_by_text(re.compile("Verdict: (HEALTHY|WARNING|BROKEN)")).first.wait_for()
    page.screenshot(path=artifacts / "journey-1-example-then-k.png", full_page=True)
    body = page.locator("body").inner_text()
    assert "Verdict: BROKEN" in body, "the units bug's Check 1 fails"
    assert "Verdict: HEALTHY" not in body
    assert "unitsbug.units" in body and "toy.noise" not in body
    context.close()


def test_own_uploads_do_not_silently_keep_the_demos_datasets(server, chromium, artifacts):
    context, page = _open(chromium, server)
    _upload(page, _own_benchmark())
    page.locator("[data-testid=stSidebarNav] a").filter(has_text="Health").click()
    _settled(page)
    _choose(page, "Model run", "my_run")
    _choose(page, "Judgements (qrels)", "my_qrels")
    _run_check(page)
    page.screenshot(path=artifacts / "journey-3-own-uploads.png", full_page=True)
    body = page.locator("body").inner_text()
    # The demo's noise run (other queries) is either refused by name or visibly in the plan.
    assert "Verdict: HEALTHY" not in body
    assert "toy.noise" in body and "share no query" in body
    context.close()


def _plan_line(page: Any) -> str:
    """The line that names every dataset of the plan the page's numbers come from."""
    line = page.get_by_text(re.compile(r"^(Checked|Stale — checked before the settings changed): "))
    return str(line.first.inner_text())


@pytest.mark.parametrize("workspace", [("cranfield", "toy")], indirect=True, ids=["cranfield"])
def test_the_demos_comparison_run_does_not_stay_in_ones_own_check(server, chromium, artifacts):
    context, page = _open(chromium, server)
    page.get_by_text(re.compile(r"^Checked: .*compared with cranfield\.run_bm25")).wait_for()
    _upload(page, _own_benchmark())
    page.locator("[data-testid=stSidebarNav] a").filter(has_text="Health").click()
    _settled(page)
    _choose(page, "Model run", "my_run")
    _choose(page, "Judgements (qrels)", "my_qrels")
    _choose(page, "Noise run (Check 2)", "— none —")
    page.get_by_text("a corpus size (every query ranks the whole corpus)").click()
    _settled(page)
    _run_check(page)
    page.screenshot(path=artifacts / "journey-6-own-after-cranfield.png", full_page=True)
    line = _plan_line(page)
    assert line.startswith("Checked: run my_run · qrels my_qrels · corpus of"), line
    assert "cranfield." not in line and "no comparison run" in line, line
    body = page.locator("body").inner_text()
    assert re.search(r"Verdict: (HEALTHY|WARNING|BROKEN) — rr@10, 10 queries", body), body
    assert "Left out of the comparison: cranfield.run_bm25" in body  # said, not hidden
    page.locator("[data-testid=stSidebarNav] a").filter(has_text="Compare").click()
    page.get_by_role("heading", level=1).filter(has_text="Compare runs").wait_for()
    _settled(page)
    page.screenshot(path=artifacts / "journey-6-compare.png", full_page=True)
    body = page.locator("body").inner_text()
    assert "cranfield.run_bm25" not in body and "no comparison run" in _plan_line(page)
    context.close()


def _dataset_options(page: Any) -> list[str]:
    """The names the Workspace page offers to manage (the table itself is a canvas)."""
    page.locator("[data-testid=stSidebarNav] a").filter(has_text="Workspace").click()
    page.get_by_role("heading", level=1).filter(has_text="Workspace").wait_for()
    _settled(page)
    box = page.get_by_role("combobox", name="Dataset", exact=True)
    box.click()
    page.get_by_role("option").first.wait_for()
    names = [o.inner_text().strip() for o in page.get_by_role("option").all()]
    page.keyboard.press("Escape")
    return names


def test_private_uploads_survive_a_reload(server, chromium, artifacts):
    context, page = _open(chromium, server)
    _upload(page, [_own_benchmark()[0]])
    assert "my_run" in _dataset_options(page)
    page.reload()
    page.get_by_role("heading", level=1).first.wait_for()
    _settled(page)
    names = _dataset_options(page)
    page.screenshot(path=artifacts / "journey-4-after-reload.png", full_page=True)
    assert "my_run" in names, names
    context.close()


def test_two_browsers_do_not_see_each_others_private_uploads(server, chromium):
    first, page = _open(chromium, server)
    _upload(page, [_own_benchmark()[0]])
    assert "my_run" in _dataset_options(page)
    second, other = _open(chromium, server)
    names = _dataset_options(other)
    assert "toy.model" in names and "my_run" not in names
    first.close()
    second.close()


def test_a_changed_setting_labels_the_verdict_stale_until_run(server, chromium, artifacts):
    context, page = _open(chromium, server)
    page.get_by_text("Verdict: HEALTHY").first.wait_for()
    _set_k(page, 5)
    page.get_by_text(re.compile(r"^Stale — ")).first.wait_for()  # the rerun of k=5 drew it
    page.screenshot(path=artifacts / "journey-5-stale.png", full_page=True)
    body = page.locator("body").inner_text()
    assert "Stale" in body
    assert "metric rr@10" in body  # the verdict shown is still the one of rr@10
    _run_check(page)
    page.get_by_text(re.compile(r"^Checked: .*metric rr@5")).wait_for()
    page.screenshot(path=artifacts / "journey-5-after-run.png", full_page=True)
    assert "Stale" not in page.locator("body").inner_text()
    context.close()


def test_a_setting_changed_just_before_run_check_is_the_one_checked(server, chromium, artifacts):
    context, page = _open(chromium, server)
    page.get_by_text("Verdict: HEALTHY").first.wait_for()
    _choose(page, "Ties", "given")
    # A quick user: the new setting and the click leave the browser together, before the
    # page has redrawn for the setting (on a busy machine, a click during that rerun).
    page.get_by_role("combobox", name="Ties", exact=True).click()
    page.get_by_role("option", name="average", exact=True).wait_for()
    page.evaluate(
        """() => {
            [...document.querySelectorAll('[role=option]')]
                .find(o => o.textContent.trim() === 'average').click();
            [...document.querySelectorAll('button')]
                .find(b => b.textContent.includes('Run check')).click();
        }"""
    )
    # The click's check drawn: the plan line names the ties of one of the two settings.
    page.get_by_text(
        re.compile(
            r"^(Checked|Stale — checked before the settings changed): .*ties (given|average)"
        )
    ).wait_for()
    _settled(page)
    page.screenshot(path=artifacts / "journey-6-quick-run-check.png", full_page=True)
    assert "ties average" in _plan_line(page)
    assert "Stale" not in page.locator("body").inner_text()
    context.close()
