"""Fixtures of the browser tests: a Streamlit server on a port it picks, Debian's Chromium.

The tests skip, saying why, when ``/usr/bin/chromium`` or the ``playwright`` package is
missing (``scripts/test.sh`` installs Chromium where it can). Screenshots go to
``test-artifacts/`` at the repository's root (git-ignored).

When a browser test fails, every page it still has open is kept in ``tests/e2e/failures/``
(git-ignored) as ``<test name>.png`` (the whole page) and ``<test name>.txt`` (its visible
text), and the failure report names those files: :func:`pytest_runtest_makereport`; a
context the test closes while failing (in a ``finally``) is kept as it closes
(:func:`pytest_runtest_call`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
#: Where a failed browser test's pages are kept (git-ignored).
FAILURES = Path(__file__).resolve().parent / "failures"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def _skip_reason() -> str | None:
    if not CHROMIUM.is_file():
        return (
            "the browser tests need Debian's Chromium at /usr/bin/chromium "
            "(apt-get install -y chromium; scripts/test.sh installs it)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the browser tests need the playwright package (pip install playwright)"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = _skip_reason()
    if reason is None:
        return
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


def _open_pages(item: pytest.Item) -> list[Any]:
    """The pages the test still has open, in every context of its browser."""
    browser = getattr(item, "funcargs", {}).get("chromium")
    if browser is None:
        return []
    try:
        return [page for context in browser.contexts for page in context.pages]
    except Exception:  # the browser is gone: nothing to keep
        return []


def _keep_pages(pages: list[Any], stem: str) -> list[str]:
    """Save each page's whole-page screenshot and visible text; the lines saying where.

    Streamlit scrolls its main area inside the page, not the document, so a "full page"
    screenshot is the viewport: the page is first shown as it is, then (``-tall``) with the
    viewport stretched to the main area's height when that is taller.
    """
    FAILURES.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, page in enumerate(pages):
        name = stem if len(pages) == 1 else f"{stem}-page{i}"
        png, txt = FAILURES / f"{name}.png", FAILURES / f"{name}.txt"
        try:
            page.screenshot(path=png, full_page=True, timeout=15_000)
            lines.append(f"screenshot: {png}")
            txt.write_text(
                f"url: {page.url}\n\n" + page.inner_text("body", timeout=15_000),
                encoding="utf-8",
            )
            lines.append(f"visible text: {txt}")
            size = page.viewport_size
            height = page.evaluate(
                "() => Math.max(...[...document.querySelectorAll("
                "'[data-testid=stMain], [data-testid=stAppViewContainer], section.main')]"
                ".map(e => e.scrollHeight), 0)"
            )
            if size is not None and height > size["height"]:
                tall = FAILURES / f"{name}-tall.png"
                page.set_viewport_size({"width": size["width"], "height": int(height)})
                page.screenshot(path=tall, full_page=True, timeout=15_000)
                page.set_viewport_size(size)
                lines.append(f"screenshot, viewport stretched to {height} px: {tall}")
        except Exception as error:  # a crashed or closed page: say so, keep the test's failure
            lines.append(f"could not keep {name}: {type(error).__name__}: {error}")
    return lines


#: What a browser test kept of the contexts it closed while failing (lines of the report).
_CLOSED_WHILE_FAILING = pytest.StashKey[list[str]]()


def _stem(item: pytest.Item) -> str:
    return re.sub(r"[^\w.-]+", "_", item.name)


def _forget(stem: str) -> None:
    """Delete what an earlier run of the test kept."""
    exact = [FAILURES / f"{stem}{end}" for end in (".png", ".txt", "-tall.png")]
    for old in [*exact, *FAILURES.glob(f"{stem}-page*"), *FAILURES.glob(f"{stem}-closed*")]:
        old.unlink(missing_ok=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """While a browser test runs, a context it closes with an exception in flight is kept first.

    A test that closes its contexts in a ``finally`` (or an ``except``) has no page left open
    when its failure is reported, so each context closed while an exception propagates has
    its pages kept before it closes (``<test name>-closed<n>``); kept for a test that then
    passes, they are deleted.
    """
    if "browser" not in item.keywords:
        return (yield)
    from playwright.sync_api import BrowserContext

    _forget(_stem(item))
    kept = item.stash.setdefault(_CLOSED_WHILE_FAILING, [])
    real_close = BrowserContext.close

    def close(self: Any, *args: Any, **kwargs: Any) -> Any:
        if sys.exc_info()[1] is not None and self.pages:
            n = sum(line.startswith("context ") for line in kept)
            kept.append(f"context {n}, closed while the test failed:")
            kept.extend(_keep_pages(self.pages, f"{_stem(item)}-closed{n}"))
        return real_close(self, *args, **kwargs)

    BrowserContext.close = close  # type: ignore[method-assign]
    try:
        return (yield)
    finally:
        BrowserContext.close = real_close  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed browser test keeps its open pages (screenshot and text) in ``FAILURES``."""
    report = yield
    if report.when != "call" or "browser" not in item.keywords:
        return report
    stem = _stem(item)
    if not report.failed:
        _forget(stem)  # what a context closed in an ``except`` the test recovered from kept
        return report
    lines = item.stash.get(_CLOSED_WHILE_FAILING, [])
    pages = _open_pages(item)
    if pages:
        lines = [*_keep_pages(pages, stem), *lines]
    elif not lines:
        lines = ["no page was open when the test failed"]
    report.sections.append(("browser pages kept", "\n".join(lines)))
    return report


#: What Streamlit prints once it listens (``--server.port 0``: the port the system gave it).
_LISTENING = re.compile(r"Local URL: http://[^\s:]+:(\d+)")


def _wait_port(log: Path, process: subprocess.Popen[bytes], timeout: float) -> int:
    """The port the server bound, read back from its log (never one picked before binding)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = _LISTENING.search(log.read_text(encoding="utf-8", errors="replace"))
        if found:
            return int(found.group(1))
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode} before listening")
        time.sleep(0.1)
    raise RuntimeError(f"streamlit did not say which port it listens on in {timeout:.0f} s")


def _wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"streamlit did not answer {url}/_stcore/health in {timeout:.0f} s")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace: the tests upload what they need."""
    return tmp_path / "workspace"


@pytest.fixture
def server(workspace: Path, tmp_path: Path) -> Iterator[str]:
    """``streamlit run app/main.py`` from the repository root, on a port the system picks.

    ``--server.port 0`` lets the server bind any free port and the port is read back from its
    log: choosing a free port first and passing it on would leave a window in which another
    process (another test run) takes it.
    """
    env = {
        **os.environ,
        "EVALVALIDITY_WORKSPACE": str(workspace),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        "PYTHONUNBUFFERED": "1",  # the log shows the port as soon as it is printed
    }
    log_path = tmp_path / "streamlit.log"
    log = open(log_path, "wb")  # closed in the finally below
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app" / "main.py"),
            "--server.headless",
            "true",
            "--server.port",
            "0",
            "--server.fileWatcherType",
            "none",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{_wait_port(log_path, process, timeout=60)}"
        _wait_healthy(url, process, timeout=60)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """Debian's Chromium driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots are kept (emptied at the start of a session)."""
    folder = ARTIFACTS / "e2e"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
