"""Fixtures of the browser tests: a Streamlit server on a port it picks, Debian's Chromium.

The tests skip, saying why, when ``/usr/bin/chromium`` or the ``playwright`` package is
missing (``scripts/test.sh`` installs Chromium where it can). Screenshots go to
``test-artifacts/`` at the repository's root (git-ignored).
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

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
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
