"""Benchmark: ingest a 7,000,000-line TREC run, beside DuckDB's own raw read_csv.

Generates (once, deterministically) ``bench/out/ingest_run_7000000.trec`` (6,980 queries x
~1,000 documents, 236 MB), then runs each case in its own subprocess ``--repeats`` times and
prints the median wall time (measured inside the worker, imports excluded) and the median peak
RSS (the worker's ``ru_maxrss`` from ``os.wait4``):

- ``duckdb read_csv (raw)``: DuckDB's ``read_csv`` with explicit columns into Arrow, no checks;
- ``ingest.read``: :func:`evalvalidity.io.ingest.read`, every check, the table in memory;
- ``Workspace.add``: the same into a fresh workspace (SHA-256, Parquet, manifest);
- with ``--big``, ``Workspace.add`` of a 70,000,000-line run (generated on first use, 2.4 GB),
  streamed to Parquet with a DuckDB memory limit, then ``score_run`` (MRR@10) on the stored
  dataset when :mod:`evalvalidity.io.scoring` is there.

Usage::

    .venv/bin/python bench/ingest.py                 # 7M lines, 3 repeats
    .venv/bin/python bench/ingest.py --repeats 5
    .venv/bin/python bench/ingest.py --big --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out"
SEED = 20240611


def generate(path: Path, n_queries: int, per_query: int) -> None:
    """Write a run of ``n_queries`` x ~``per_query`` lines and its qrels, deterministically."""
    if path.exists():
        return
    rng = np.random.default_rng(SEED)
    OUT.mkdir(exist_ok=True)
    partial = path.with_suffix(".partial")
    qrels = path.with_name(path.stem + ".qrels")
    with open(partial, "w") as run, open(qrels, "w") as judgements:
        for q in range(1, n_queries + 1):
            n = per_query + int(rng.integers(-3, 4)) if per_query > 10 else per_query
            docs = rng.choice(8_800_000, size=n, replace=False)
            scores = np.sort(rng.random(n) * 30.0)[::-1]
            run.write(
                "".join(
                    f"{q} Q0 D{d} {r} {s:.6f} bench\n"
                    for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist(), strict=True), 1)
                )
            )
            for d in rng.choice(docs, size=int(rng.integers(1, 4)), replace=False).tolist():
                judgements.write(f"{q} 0 D{d} 1\n")
    os.replace(partial, path)


WORKER = r"""
import json, os, sys, tempfile, time
case, path = sys.argv[1], sys.argv[2]
if case == "duckdb":
    import duckdb
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    start = time.perf_counter()
    rel = con.read_csv(path, delimiter=" ", header=False, auto_detect=False, columns={
        "qid": "VARCHAR", "q0": "VARCHAR", "docid": "VARCHAR", "rank": "BIGINT",
        "score": "DOUBLE", "tag": "VARCHAR"})
    rows = rel.to_arrow_table().num_rows
elif case == "read":
    from evalvalidity.io.ingest import read
    start = time.perf_counter()
    rows = read(path).n_rows
elif case in ("add", "big"):
    from evalvalidity.io.workspace import Workspace
    root = sys.argv[3]
    start = time.perf_counter()
    rows = Workspace(root).add(path, name="run").n_rows
elif case == "score":
    from evalvalidity.io.ingest import read_qrels
    from evalvalidity.io.workspace import Workspace
    from evalvalidity.io.scoring import score_run
    root = sys.argv[3]
    qrels = read_qrels(path.rsplit(".", 1)[0] + ".qrels")
    start = time.perf_counter()
    # Scanned in a stream from the workspace's Parquet file, with DuckDB spilling past 2 GB:
    # the 70M-row run never sits in memory whole.
    run = Workspace(root).scan("run")
    result = score_run(run, qrels, "rr@10", memory_limit="2GB")
    rows = result.n_ranked_rows
print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}))
"""


def measure(case: str, path: Path, *extra: str) -> tuple[float, float, int]:
    """Run one worker; returns (seconds, peak RSS in MiB, rows)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    child = subprocess.Popen(
        [sys.executable, "-c", WORKER, case, str(path), *extra],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"worker {case} failed with status {status}")
    record = json.loads(output.decode().strip().splitlines()[-1])
    return record["seconds"], usage.ru_maxrss / 1024, record["rows"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also the 70,000,000-line run")
    args = parser.parse_args()
    cases: list[tuple[str, str, Path, int]] = []
    small = OUT / "ingest_run_7000000.trec"
    generate(small, 6980, 1000)
    cases += [
        ("duckdb read_csv (raw)", "duckdb", small, 0),
        ("ingest.read", "read", small, 0),
        ("Workspace.add", "add", small, 0),
    ]
    if args.big:
        big = OUT / "ingest_run_70000000.trec"
        generate(big, 69800, 1000)
        cases += [("Workspace.add (70M, streamed)", "big", big, 1)]
    print(f"{'case':<32} {'rows':>12} {'median s':>9} {'peak MiB':>9}  (n={args.repeats})")
    for label, case, path, big_case in cases:
        seconds, peaks, rows = [], [], 0
        scores: list[tuple[float, float]] = []
        for _ in range(args.repeats):
            root = tempfile.mkdtemp(prefix="bench-ws-", dir=OUT)
            try:
                s, peak, rows = measure(case, path, root)
                seconds.append(s)
                peaks.append(peak)
                if big_case:
                    try:
                        import evalvalidity.io.scoring  # noqa: F401
                    except ImportError:
                        pass
                    else:
                        s2, peak2, _ = measure("score", path, root)
                        scores.append((s2, peak2))
            finally:
                shutil.rmtree(root, ignore_errors=True)
        print(
            f"{label:<32} {rows:>12,} {statistics.median(seconds):>9.2f}"
            f" {statistics.median(peaks):>9.0f}"
        )
        if scores:
            print(
                f"{'  then score_run rr@10':<32} {rows:>12,}"
                f" {statistics.median(s for s, _ in scores):>9.2f}"
                f" {statistics.median(p for _, p in scores):>9.0f}"
            )


if __name__ == "__main__":
    main()
