"""Benchmark: a benchmark uploaded through the browser, checked on the Health page, k changed.

Each repeat starts the dashboard on an empty workspace (so nothing is cached), drives Debian's
Chromium with Playwright (the flags of tests/e2e/conftest.py) and:

1. uploads the files on the Workspace page and adds them (one private dataset each);
2. opens Health, chooses the datasets and the pool, clicks **Run check** and waits for the
   verdict (target: ≤ 5 s from the click on a Cranfield-size upload);
3. changes k to 5, clicks Run check, waits for the rr@5 verdict (computed: the datasets' tables
   come from the cache, the check itself runs);
4. changes k back to 10, clicks Run check, waits for the rr@10 verdict (target ≤ 1 s: the
   plan was checked before, so it answers from the cache).

By default the upload is Cranfield (data/cranfield: 22,500-line dense run, its 22,500-line noise
run, 1,612 judgements, the 6,181-chunk units map). ``--big`` uploads instead the 7,000,000-line
run and its qrels that bench/score.py generates (236 MB) on a corpus of 8,841,823 passages.
Prints one table: the median, min and max over ``--repeats`` of each step, with its target,
and the load average before and after (the machine may be shared).

Usage::

    .venv/bin/python bench/app_upload.py                 # Cranfield, 3 repeats
    .venv/bin/python bench/app_upload.py --repeats 5
    .venv/bin/python bench/app_upload.py --big --repeats 1
    .venv/bin/python bench/app_upload.py --compare ../main  # side by side with another checkout
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _wait_healthy, _wait_port  # noqa: E402
from waits import settled  # noqa: E402

CRANFIELD = ROOT / "data" / "cranfield"
BIG_POOL = 8_841_823
SLOW = 600_000  # ms
UNITS = "a units map (chunks deduplicated to documents)"

#: (step, target in seconds or None).
STEPS = (
    ("upload + add the files", None),
    ("Run check -> first verdict", 5.0),
    ("k = 5, Run check -> verdict (computed)", None),
    ("k back to 10, Run check -> verdict (cached)", 1.0),
)


def _settled(page: Any) -> None:
    settled(page, timeout=SLOW)


def _choose(page: Any, label: str, option: str) -> None:
    page.get_by_role("combobox", name=label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()
    _settled(page)


def _run_until(page: Any, metric: str) -> float:
    """Click Run check; seconds until the verdict of ``metric`` is on the page."""
    button = page.get_by_role("button", name="Run check")
    start = time.perf_counter()
    button.click()
    page.get_by_text(re.compile(rf"^Verdict: .*{re.escape(metric)},")).wait_for()
    return time.perf_counter() - start


def _set_k(page: Any, k: int) -> None:
    box = page.get_by_label("Cutoff k")
    box.fill(str(k))
    box.press("Enter")
    _settled(page)


def _files(big: bool) -> list[Path]:
    if big:
        from score import generate

        run_path, qrels_path = generate(6_980, 7_000_000, HERE / "out")
        return [qrels_path, run_path]
    return [CRANFIELD / f for f in ("qrels.txt", "run_dense.trec", "run_noise.trec", "chunks.tsv")]


def _configure(page: Any, big: bool, files: list[Path]) -> None:
    """Choose the uploaded datasets and the pool on the Health page."""
    if big:
        _choose(page, "Model run", files[1].name.split(".")[0])
        _choose(page, "Judgements (qrels)", files[0].name.split(".")[0])
        size = page.get_by_label("Corpus size N")
        size.fill(str(BIG_POOL))
        size.press("Enter")
        _settled(page)
        return
    _choose(page, "Model run", "run_dense")
    _choose(page, "Judgements (qrels)", "qrels")
    _choose(page, "Noise run (Check 2)", "run_noise")
    page.locator("[data-testid=stRadio] label").filter(has_text=UNITS).click()
    _settled(page)
    _choose(page, "Pool dataset", "chunks")


def one_repeat(browser: Any, files: list[Path], big: bool, root: Path = ROOT) -> list[float]:
    """The seconds of each of :data:`STEPS` on a fresh server and an empty workspace.

    ``root`` is the checkout whose dashboard (and package) the server runs.
    """
    workspace = Path(tempfile.mkdtemp(prefix="evalvalidity-bench-"))
    log_path = workspace.with_suffix(".log")
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "EVALVALIDITY_WORKSPACE": str(workspace),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        "PYTHONUNBUFFERED": "1",
    }
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(root / "app" / "main.py"),
                "--server.headless",
                "true",
                "--server.port",
                "0",
                "--server.fileWatcherType",
                "none",
                "--server.maxUploadSize",
                "2000",
            ],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{_wait_port(log_path, server, timeout=60)}"
            _wait_healthy(url, server, timeout=60)
            context = browser.new_context(viewport={"width": 1400, "height": 2400})
            page = context.new_page()
            page.set_default_timeout(SLOW)
            page.goto(url)
            page.get_by_role("heading", level=1).first.wait_for()
            _settled(page)
            page.locator("[data-testid=stSidebarNav] a").filter(has_text="Workspace").click()
            page.get_by_role("heading", level=1).filter(has_text="Workspace").wait_for()
            start = time.perf_counter()
            page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(
                [str(f) for f in files]
            )
            page.get_by_role("button", name=f"Add all {len(files)} files").click()
            page.get_by_text(re.compile(r"^Added ")).wait_for()
            added = time.perf_counter() - start
            page.locator("[data-testid=stSidebarNav] a").filter(has_text="Health").click()
            page.get_by_role("combobox", name="Model run", exact=True).wait_for()
            _settled(page)
            _configure(page, big, files)
            first = _run_until(page, "rr@10")
            _settled(page)
            _set_k(page, 5)
            computed = _run_until(page, "rr@5")
            _settled(page)
            _set_k(page, 10)
            cached = _run_until(page, "rr@10")
            context.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    shutil.rmtree(workspace, ignore_errors=True)
    log_path.unlink(missing_ok=True)
    return [added, first, computed, cached]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh servers to time (3)")
    parser.add_argument(
        "--big", action="store_true", help="the 7,000,000-line run of bench/score.py instead"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="CHECKOUT",
        help="also time another checkout's dashboard (e.g. the main branch), repeats interleaved",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be an int >= 1. Got {args.repeats} instead.")
    from playwright.sync_api import sync_playwright

    files = _files(args.big)
    load_before = os.getloadavg()
    roots = [ROOT] + ([args.compare.resolve()] if args.compare else [])
    times: dict[Path, list[list[float]]] = {root: [] for root in roots}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(args.repeats):
            for root in roots:
                times[root].append(one_repeat(browser, files, args.big, root))
        browser.close()
    load_after = os.getloadavg()
    what = "7,000,000-line run + qrels" if args.big else "Cranfield (run, noise run, qrels, units)"
    print(f"{what}; {args.repeats} repeats, each on a fresh server and an empty workspace")
    print(
        f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f}; "
        f"{os.cpu_count()} cores"
    )
    header = f"{'step':<46} {'median s':>9} {'min':>7} {'max':>7}"
    if args.compare:
        header += f" {'other s':>8} {'ratio':>6}"
    print(header + "  target")
    for i, (label, target) in enumerate(STEPS):
        column = [t[i] for t in times[ROOT]]
        median = statistics.median(column)
        line = f"{label:<46} {median:>9.2f} {min(column):>7.2f} {max(column):>7.2f}"
        if args.compare:
            other = statistics.median(t[i] for t in times[roots[1]])
            line += f" {other:>8.2f} {median / other:>6.2f}"
        met = "met" if target is not None and median <= target else "MISSED"
        print(line + ("  –" if target is None else f"  ≤ {target:g} s {met}"))
    if args.compare:
        print(f"other s: {roots[1]}; ratio: this checkout / the other (medians)")


if __name__ == "__main__":
    main()
