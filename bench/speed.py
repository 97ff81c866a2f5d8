"""Benchmark: whole processes, side by side, against a one-SQL DuckDB MRR@10 on the same file.

Every row is one complete process (interpreter start, imports, reading the files, scoring,
printing), timed from the outside, ``--repeats`` times in turn (round-robin, so that a burst of
load on the shared machine hits every tool alike). The table gives the median wall time, the
median CPU time of the process (user + system, all threads: less disturbed by other load), the
peak RSS, and each median's ratio to the DuckDB baseline's.

Tools:

- ``duckdb one-SQL``: ``python -c``: DuckDB reads the run and qrels and computes MRR@10 in one
  query (row_number over score desc, docid desc; join; mean) -- the floor of what any
  DuckDB-based scorer can cost;
- ``evalvalidity score -m rr@10`` and ``evalvalidity check --pool-size ...``: the command line;
- pytrec_eval (a Python reader into dicts), ir_measures, ranx: as bench/score.py runs them;
- toolkit-rag-quality (pure Python, no dependencies): ``python -m toolkit_rag_quality score
  --k 10``, when installed apart with ``pip install --no-deps --target bench/out/peers
  toolkit-rag-quality`` (the row says so otherwise).

``--toy`` times the write-up's toy run instead (20 queries) against a bare
``python -c "import duckdb"``, with two floors beside it (:data:`TOY_FLOORS`): importing numpy
and pyarrow (what a toy score imports: it is read and scored without DuckDB), and what a score
that ranked in DuckDB would pay (DuckDB, numpy and pyarrow imported, a database opened);
``--scale`` adds 35M- and
70M-line runs (use ``--tools duckdb,score``; the 70M-line file is about 2.5 GB, written once
into ``bench/out/``). Both are past the 1 GiB of text above which ``score`` streams the run
through a temporary Parquet file under a 2 GB DuckDB limit, so their peak RSS is that path's.

Usage::

    .venv/bin/python bench/speed.py                # 7M lines, 3 repeats
    .venv/bin/python bench/speed.py --toy --repeats 7
    .venv/bin/python bench/speed.py --scale --repeats 1 --tools duckdb,score
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from score import OUT, generate  # noqa: E402  (the 7M-line run bench/score.py times)

MARCO_POOL = 8_841_823
#: Peers installed apart from the environment (``pip install --no-deps --target``).
PEERS = OUT / "peers"
SIZES = {7_000_000: 6_980, 35_000_000: 34_900, 70_000_000: 69_800}

DUCKDB_SQL = """
import sys, duckdb
con = duckdb.connect()
print(con.execute('''
WITH run AS (SELECT qid, docid, score FROM read_csv(?, delim=' ', header=false,
    auto_detect=false, columns={'qid': 'VARCHAR', 'q0': 'VARCHAR', 'docid': 'VARCHAR',
    'rank': 'BIGINT', 'score': 'DOUBLE', 'tag': 'VARCHAR'})),
qrels AS (SELECT qid, docid, rel FROM read_csv(?, delim=' ', header=false, auto_detect=false,
    columns={'qid': 'VARCHAR', 'iter': 'VARCHAR', 'docid': 'VARCHAR', 'rel': 'BIGINT'})),
ranked AS (SELECT qid, docid, row_number() OVER (PARTITION BY qid
    ORDER BY score DESC, docid DESC) AS r FROM run),
first AS (SELECT k.qid, min(r) AS r FROM ranked k JOIN qrels q USING (qid, docid)
    WHERE q.rel > 0 AND r <= 10 GROUP BY k.qid)
SELECT coalesce(sum(1.0 / r), 0) / (SELECT count(DISTINCT qid) FROM qrels) FROM first
''', [sys.argv[1], sys.argv[2]]).fetchone()[0])
"""


def commands(run: Path, qrels: Path, toy: bool) -> dict[str, list[str] | None]:
    """The command of each tool (None when it cannot run here)."""
    py = sys.executable
    score_py = str(HERE / "score.py")
    peers: dict[str, list[str] | None] = {
        "pytrec_eval": [py, score_py, "--worker", "pytrec_eval", str(run), str(qrels)],
        "ir_measures": [py, score_py, "--worker", "ir_measures", str(run), str(qrels)],
        "ranx": [py, score_py, "--worker", "ranx", str(run), str(qrels)],
        "toolkit-rag-quality": [
            py,
            "-m",
            "toolkit_rag_quality",
            "score",
            "--queries",
            str(qrels),
            "--retrieved",
            str(run),
            "--k",
            "10",
            "--format",
            "table",
        ],
    }
    for name in ("pytrec_eval", "ir_measures", "ranx"):
        if importlib.util.find_spec(name) is None:
            peers[name] = None
    if not (PEERS / "toolkit_rag_quality").is_dir():
        peers["toolkit-rag-quality"] = None
    pool = "200" if toy else str(MARCO_POOL)
    return {
        "duckdb": [py, "-c", "import duckdb"] if toy else [py, "-c", DUCKDB_SQL, str(run), str(qrels)],
        "score": [py, "-m", "evalvalidity", "score", "--run", str(run), "--qrels", str(qrels),
                  "-m", "rr@10", "--skip-unranked"],
        "check": [py, "-m", "evalvalidity", "check", "--run", str(run), "--qrels", str(qrels),
                  "--pool-size", pool, "--fail-on", "never"],
        **peers,
    }  # fmt: skip


LABELS = {
    "duckdb": "DuckDB one-SQL MRR@10 (python -c)",
    "score": "evalvalidity score -m rr@10",
    "check": "evalvalidity check",
    "pytrec_eval": "pytrec_eval (Python reader)",
    "ir_measures": "ir_measures",
    "ranx": "ranx",
    "toolkit-rag-quality": "toolkit-rag-quality",
}


#: ``--toy`` only, timed in the same rounds: the libraries a toy score imports (it is read and
#: scored without DuckDB), and what any score that ranks in DuckDB pays before reading a line
#: (the three libraries imported and one in-memory database opened).
TOY_FLOORS = {
    "libraries": ("import numpy, pyarrow", 'python -c "import numpy, pyarrow"'),
    "database": (
        "import duckdb, numpy, pyarrow; duckdb.connect(':memory:')",
        "python -c \"import duckdb, numpy, pyarrow; duckdb.connect(':memory:')\"",
    ),
}


def run_once(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, CPU s of all threads, peak RSS MiB, last line of output) of one whole process."""
    import tempfile

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(PEERS)]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, error = out.read(), err.read()
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{argv[:4]} failed ({process.returncode}): {error.strip()[-300:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, (text.strip().splitlines() or [""])[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--toy", action="store_true", help="the write-up's toy run")
    parser.add_argument("--scale", action="store_true", help="also 35M and 70M lines")
    parser.add_argument("--tools", default=",".join(LABELS), help="comma-separated subset")
    args = parser.parse_args(argv)
    tools = args.tools.split(",")
    if args.toy:
        cases = [(ROOT / "data" / "writeup" / "toy" / "model.trec",
                  ROOT / "data" / "writeup" / "toy" / "qrels.txt", "toy (20 queries)")]  # fmt: skip
    else:
        sizes = list(SIZES) if args.scale else [7_000_000]
        cases = []
        for total in sizes:
            # in a child process: a child's peak RSS (ru_maxrss) starts from its parent's at
            # fork, so a parent that had held the generated run would inflate every row
            subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r});"
                            f" from score import generate, OUT; generate({SIZES[total]}, {total}, OUT)"],
                           check=True)  # fmt: skip
            run, qrels = generate(SIZES[total], total, OUT)  # the files exist: their paths
            cases.append((run, qrels, f"{total / 1e6:.0f}M lines"))
    # compile the package's bytecode once, as an installation does
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "evalvalidity")],
                   check=True, env={k: v for k, v in os.environ.items()
                                    if k != "PYTHONDONTWRITEBYTECODE"})  # fmt: skip
    print(f"{os.cpu_count()} cores; load average before: "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))  # fmt: skip
    for run, qrels, label in cases:
        argvs = commands(run, qrels, args.toy)
        if args.toy:
            argvs.update(
                {name: [sys.executable, "-c", code] for name, (code, _) in TOY_FLOORS.items()}
            )
            LABELS.update({name: label for name, (_, label) in TOY_FLOORS.items()})
            # the floors always, after the bare import they are compared with
            tools = [
                "duckdb",
                *TOY_FLOORS,
                *(t for t in tools if t != "duckdb" and t not in TOY_FLOORS),
            ]
        wanted = [t for t in tools if t in argvs]
        times: dict[str, list[tuple[float, float, float, str]]] = {t: [] for t in wanted}
        for _ in range(args.repeats):
            for tool in wanted:
                if argvs[tool] is not None:
                    times[tool].append(run_once(argvs[tool]))  # type: ignore[arg-type]
        if args.toy:
            LABELS["duckdb"] = 'bare python -c "import duckdb"'
        base = times.get("duckdb")
        base_wall = statistics.median(t[0] for t in base) if base else None
        base_cpu = statistics.median(t[1] for t in base) if base else None
        print(f"\n{label}: median of {args.repeats}, whole processes")
        print("| tool | wall s | × DuckDB | CPU s | × DuckDB | peak RSS MiB | last line |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for tool in wanted:
            if not times[tool]:
                print(f"| {LABELS[tool]} | – | – | – | – | – | not installable here |")
                continue
            wall = statistics.median(t[0] for t in times[tool])
            cpu = statistics.median(t[1] for t in times[tool])
            rss = max(t[2] for t in times[tool])
            ratio_w = f"{wall / base_wall:.2f}" if base_wall else "–"
            ratio_c = f"{cpu / base_cpu:.2f}" if base_cpu else "–"
            print(f"| {LABELS[tool]} | {wall:.2f} | {ratio_w} | {cpu:.2f} | {ratio_c} |"
                  f" {rss:,.0f} | {times[tool][-1][3][:60]} |", flush=True)  # fmt: skip
    print("\nload average after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
