"""Benchmark: whole-process peak memory of ``evalvalidity check`` per query.

Generates benchmarks of Q queries with 5 ranked items and one gold item each (TREC run and
qrels files, a pool of 1,000 items per query), runs ``evalvalidity check`` on each in a fresh
process and prints its peak resident set size (``ru_maxrss`` of the child), the time, and the
memory per query above the process's baseline (``evalvalidity check`` on 100 queries). For
comparison it also times ``evalvalidity ingest``-free reading: DuckDB's own ``read_csv`` of the
same run file in a Python process.

The target: 5,000,000 queries within 4 GB.

Usage::

    .venv/bin/python bench/memory.py                       # 10^4, 10^5, 10^6, 5·10^6 queries
    .venv/bin/python bench/memory.py --queries 10000 100000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ITEMS = 5
POOL = 1_000


def generate(n_queries: int, folder: Path) -> tuple[Path, Path]:
    """Write (once) a run of ``n_queries`` × 5 items and its qrels; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    run_path = folder / f"mem_{n_queries}.trec"
    qrels_path = folder / f"mem_{n_queries}.qrels"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    rng = np.random.default_rng(n_queries)
    block = 200_000
    with open(str(run_path) + ".tmp", "w") as run, open(str(qrels_path) + ".tmp", "w") as qrels:
        for start in range(0, n_queries, block):
            q = np.arange(start, min(start + block, n_queries))
            gold = rng.integers(0, POOL, size=len(q))
            qrels.write(
                "".join(f"{i} 0 d{g} 1\n" for i, g in zip(q.tolist(), gold.tolist(), strict=True))
            )
            docs = rng.integers(0, POOL, size=(len(q), ITEMS))
            lines = []
            for i, row in zip(q.tolist(), docs.tolist(), strict=True):
                seen: set[int] = set()
                rank = 0
                for d in row:
                    if d in seen:
                        continue
                    seen.add(d)
                    rank += 1
                    lines.append(f"{i} Q0 d{d} {rank} {10 - rank} bench\n")
            run.write("".join(lines))
    os.replace(str(run_path) + ".tmp", run_path)
    os.replace(str(qrels_path) + ".tmp", qrels_path)
    return run_path, qrels_path


def measure(argv: list[str]) -> tuple[float, float, int]:
    """Run ``argv`` in a fresh process; return (seconds, peak RSS in MiB, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        print(f"   ! {' '.join(argv[:3])} exited {code}: {err.strip()[-300:]}", file=sys.stderr)
    return seconds, usage.ru_maxrss / 1024, code


def check_argv(run: Path, qrels: Path, workspace: str) -> list[str]:
    return [
        sys.executable, "-m", "evalvalidity", "check", "--run", str(run), "--qrels", str(qrels),
        "--pool-size", str(POOL), "--format", "json", "--workspace", workspace,
    ]  # fmt: skip


def duckdb_argv(run: Path) -> list[str]:
    code = (
        "import duckdb,sys; duckdb.sql(\"select count(*) from read_csv(?, delim=' ', header=false,"
        " columns={'q':'VARCHAR','z':'VARCHAR','d':'VARCHAR','r':'BIGINT','s':'DOUBLE',"
        "'t':'VARCHAR'})\", params=[sys.argv[1]]).fetchall()"
    )
    return [sys.executable, "-c", code, str(run)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--queries", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 5_000_000]
    )
    parser.add_argument("--repeats", type=int, default=3, help="repeats below 10^6 queries")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workspace:
        base_run, base_qrels = generate(100, OUT)
        base = statistics.median(
            measure(check_argv(base_run, base_qrels, workspace))[1] for _ in range(3)
        )
        print(f"baseline: `evalvalidity check` on 100 queries peaks at {base:,.0f} MiB")
        print(
            f"{'queries':>10} {'lines':>11} {'check s':>8} {'check MiB':>10} {'KiB/query':>10}"
            f" {'duckdb read s':>14} {'duckdb MiB':>11} {'check/duckdb MiB':>17}"
        )
        for n in args.queries:
            run, qrels = generate(n, OUT)
            lines = sum(1 for _ in open(run, "rb")) if n <= 1_000_000 else n * ITEMS
            repeats = args.repeats if n < 1_000_000 else 1
            checks = [measure(check_argv(run, qrels, workspace)) for _ in range(repeats)]
            reads = [measure(duckdb_argv(run)) for _ in range(repeats)]
            seconds = statistics.median(c[0] for c in checks)
            mib = statistics.median(c[1] for c in checks)
            rseconds = statistics.median(r[0] for r in reads)
            rmib = statistics.median(r[1] for r in reads)
            per_query = (mib - base) * 1024 / n
            print(
                f"{n:>10,} {lines:>11,} {seconds:>8.1f} {mib:>10,.0f} {per_query:>10.2f}"
                f" {rseconds:>14.1f} {rmib:>11,.0f} {mib / rmib:>17.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
