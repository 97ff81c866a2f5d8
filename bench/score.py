"""Benchmark: read a TREC run + qrels from disk and compute MRR@10, ours against the peers.

Generates (once, deterministically) a 7,000,000-line run (6,980 queries x ~1,003 documents)
and its qrels (1-3 relevant documents per query, plus a non-relevant judgement or two) under
bench/out/, then runs every tool in its own subprocess, ``--repeats`` times:

- ``evalvalidity (duckdb read)``: DuckDB ``read_csv`` (explicit columns, nothing sniffed) into
  the canonical Arrow tables, then :func:`evalvalidity.io.scoring.score_run`;
- ``evalvalidity (ingest)``: :func:`evalvalidity.io.ingest.read_run` / ``read_qrels`` (the
  validating readers), then ``score_run`` -- when the ingest package is present;
- ``pytrec_eval``: a plain Python reader into dicts, then ``recip_rank`` (trec_eval has no RR
  cutoff, so it scores the full RR: the same work, a slightly different number);
- ``ir_measures``: ``read_trec_run``/``read_trec_qrels`` and ``calc_aggregate([RR@10])``;
- ``ranx``: ``Run.from_file``/``Qrels.from_file`` and ``evaluate(..., "mrr@10")``.

Time is measured inside the worker from the first byte read to the mean (imports excluded),
as wall clock and as CPU time of all the process's threads (a figure that other load on the
machine disturbs less); peak RSS is the worker's ``ru_maxrss`` (from ``os.wait4``). The table
shows medians and the load average, since the machine may be shared.

Usage::

    .venv/bin/python bench/score.py            # 7M lines, 3 repeats (a few minutes)
    .venv/bin/python bench/score.py --quick    # 200,000 lines, smoke run
    .venv/bin/python bench/score.py --tools ours,pytrec_eval --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
SEED = 20240611
TOOLS = ("ours", "ours_ingest", "pytrec_eval", "ir_measures", "ranx")
LABELS = {
    "ours": "evalvalidity (duckdb read)",
    "ours_ingest": "evalvalidity (ingest)",
    "pytrec_eval": "pytrec_eval (python reader)",
    "ir_measures": "ir_measures",
    "ranx": "ranx",
}


# --------------------------------------------------------------------------- data


def generate(n_queries: int, total: int, out: Path) -> tuple[Path, Path]:
    """Write the run and qrels once per size; later calls reuse the files."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    run_path = out / f"run_{total}.trec"
    qrels_path = out / f"qrels_{total}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    lengths = np.full(n_queries, total // n_queries)
    lengths[: total - int(lengths.sum())] += 1
    query = np.repeat(np.arange(n_queries), lengths)
    first = np.cumsum(lengths) - lengths
    rank = np.arange(total) - first[query] + 1
    # distinct documents per query: an arithmetic progression modulo a prime corpus size
    corpus = 8_841_823
    offset = rng.integers(0, corpus, n_queries)
    step = rng.integers(1, corpus, n_queries)
    doc = (offset[query] + (rank - 1) * step[query]) % corpus
    score = np.round(1100.0 - rank + rng.random(total) * 0.9, 4)  # descending, no ties
    qids = pa.array(np.char.mod("%d", np.arange(n_queries) + 1000))
    zeros = pa.array(np.zeros(total, dtype=np.int64))
    table = pa.table(
        {
            "qid": qids.take(pa.array(query)),
            "q0": pa.array(["Q0"]).take(zeros),
            "docid": pc.binary_join_element_wise("D", pc.cast(pa.array(doc), pa.string()), ""),
            "rank": pa.array(rank),
            "score": pa.array(score),
            "tag": pa.array(["bench"]).take(zeros),
        }
    )
    options = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pcsv.write_csv(table, run_path, options)
    # qrels: 1-3 relevant per query, at mostly shallow ranks, some not retrieved at all
    n_relevant = rng.integers(1, 4, n_queries)
    rel_query = np.repeat(np.arange(n_queries), n_relevant)
    rel_rank = np.minimum(rng.geometric(0.02, len(rel_query)), lengths[rel_query] + 500)
    rel_doc = (offset[rel_query] + (rel_rank - 1) * step[rel_query]) % corpus
    rel_doc, unique = np.unique(rel_query * corpus + rel_doc, return_index=True)
    rel_query = rel_query[unique]
    rel_doc = rel_doc - rel_query * corpus
    non_query = rng.integers(0, n_queries, n_queries // 2)
    non_doc = (offset[non_query] + step[non_query] * 2000) % corpus  # never retrieved
    qrels = pa.table(
        {
            "qid": qids.take(pa.array(np.concatenate([rel_query, non_query]))),
            "iter": pa.array(["0"]).take(
                pa.array(np.zeros(len(rel_query) + len(non_query), dtype=np.int64))
            ),
            "docid": pc.binary_join_element_wise(
                "D", pc.cast(pa.array(np.concatenate([rel_doc, non_doc])), pa.string()), ""
            ),
            "rel": pa.array(
                np.concatenate(
                    [rng.integers(1, 4, len(rel_query)), np.zeros(len(non_query), dtype=np.int64)]
                )
            ),
        }
    )
    pcsv.write_csv(qrels, qrels_path, options)
    return run_path, qrels_path


# --------------------------------------------------------------------------- workers


def work_ours(run_path: str, qrels_path: str) -> float:
    import duckdb

    from evalvalidity.io.scoring import score_run

    start = _start()
    con = duckdb.connect()
    run = con.sql(
        "SELECT qid, docid, score, rank FROM read_csv(?, delim=' ', header=false,"
        " auto_detect=false, columns={'qid': 'VARCHAR', 'q0': 'VARCHAR', 'docid': 'VARCHAR',"
        " 'rank': 'BIGINT', 'score': 'DOUBLE', 'tag': 'VARCHAR'})",
        params=[run_path],
    ).to_arrow_table()
    qrels = con.sql(
        "SELECT qid, docid, rel FROM read_csv(?, delim=' ', header=false, auto_detect=false,"
        " columns={'qid': 'VARCHAR', 'iter': 'VARCHAR', 'docid': 'VARCHAR', 'rel': 'BIGINT'})",
        params=[qrels_path],
    ).to_arrow_table()
    con.close()
    result = score_run(run, qrels, "rr@10", unranked="skip")
    value = result.means["rr@10"]
    _report(start, value)
    return value


def work_ours_ingest(run_path: str, qrels_path: str) -> float:
    from evalvalidity.io.ingest import read_qrels, read_run
    from evalvalidity.io.scoring import score_run

    start = _start()
    run = read_run(run_path)
    qrels = read_qrels(qrels_path)
    result = score_run(run, qrels, "rr@10", unranked="skip")
    value = result.means["rr@10"]
    _report(start, value)
    return value


def work_pytrec_eval(run_path: str, qrels_path: str) -> float:
    import pytrec_eval

    start = _start()
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as lines:
        for line in lines:
            qid, _, docid, _, score, _ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as lines:
        for line in lines:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    value = sum(v["recip_rank"] for v in per_query.values()) / len(per_query)
    _report(start, value)
    return value


def work_ir_measures(run_path: str, qrels_path: str) -> float:
    import ir_measures
    from ir_measures import RR

    start = _start()
    run = ir_measures.read_trec_run(run_path)
    qrels = ir_measures.read_trec_qrels(qrels_path)
    value = float(ir_measures.calc_aggregate([RR @ 10], qrels, run)[RR @ 10])
    _report(start, value)
    return value


def work_ranx(run_path: str, qrels_path: str) -> float:
    import warnings

    import ranx

    warnings.simplefilter("ignore")  # numba type-safety warnings
    start = _start()
    run = ranx.Run.from_file(run_path, kind="trec")
    qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
    value = float(ranx.evaluate(qrels, run, "mrr@10", make_comparable=True))
    _report(start, value)
    return value


def _start() -> float:
    """Note the CPU time and return the wall clock at the start of the timed work."""
    global _CPU_AT_START
    _CPU_AT_START = time.process_time()
    return time.perf_counter()


def _report(start: float, value: float) -> None:
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - start,
                "value": value,
                "cpu": time.process_time() - _CPU_AT_START,
            }
        ),
        flush=True,
    )


_CPU_AT_START = 0.0


WORKERS = {
    "ours": work_ours,
    "ours_ingest": work_ours_ingest,
    "pytrec_eval": work_pytrec_eval,
    "ir_measures": work_ir_measures,
    "ranx": work_ranx,
}


# --------------------------------------------------------------------------- driver


def run_once(
    tool: str, run_path: Path, qrels_path: Path
) -> tuple[float, float, float, float] | str:
    """(seconds, peak RSS in MiB, value, CPU seconds) of one worker run, or its error text."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--worker", tool, str(run_path), str(qrels_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(process.pid, 0)
    stdout = process.stdout.read() if process.stdout else ""
    stderr = process.stderr.read() if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        return stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {process.returncode}"
    result = json.loads(stdout.strip().splitlines()[-1])
    return result["seconds"], usage.ru_maxrss / 1024, result["value"], result["cpu"]


def available(tool: str) -> bool:
    if tool == "ours_ingest":
        try:
            from evalvalidity.io.ingest import read_qrels, read_run  # noqa: F401
        except ImportError:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200,000 lines instead of 7M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help=f"comma-separated subset of {', '.join(TOOLS)}"
    )
    parser.add_argument(
        "--worker", nargs=3, metavar=("TOOL", "RUN", "QRELS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.worker:
        tool, run_path, qrels_path = args.worker
        WORKERS[tool](run_path, qrels_path)
        return 0
    n_queries, total = (200, 200_000) if args.quick else (6_980, 7_000_000)
    started = time.perf_counter()
    run_path, qrels_path = generate(n_queries, total, OUT)
    print(
        f"data: {run_path.name} ({run_path.stat().st_size / 2**20:.0f} MiB, {total:,} lines,"
        f" {n_queries:,} queries), {qrels_path.name}; ready in"
        f" {time.perf_counter() - started:.1f} s"
    )
    print(
        f"median of {args.repeats} runs, each tool in its own process; time = read + score"
        " (imports excluded); RSS = peak of the process"
    )
    print(
        f"{os.cpu_count()} cores; load average before: "
        + " ".join(f"{x:.1f}" for x in os.getloadavg())
        + "\n"
    )
    header = (
        f"{'tool':<30} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>6}"
        f" {'peak RSS MiB':>13}  value"
    )
    print(header)
    print("-" * len(header))
    for tool in args.tools.split(","):
        if tool not in WORKERS:
            parser.error(f"unknown tool {tool!r}; expected one of {', '.join(TOOLS)}")
        if not available(tool):
            print(f"{LABELS[tool]:<30} (not available)")
            continue
        runs = [run_once(tool, run_path, qrels_path) for _ in range(args.repeats)]
        failed = [r for r in runs if isinstance(r, str)]
        if failed:
            print(f"{LABELS[tool]:<30} failed: {failed[0]}")
            continue
        seconds = [r[0] for r in runs if not isinstance(r, str)]
        rss = [r[1] for r in runs if not isinstance(r, str)]
        value = next(r[2] for r in runs if not isinstance(r, str))
        cpu = [r[3] for r in runs if not isinstance(r, str)]
        metric = "RR (no cutoff)" if tool == "pytrec_eval" else "RR@10"
        print(
            f"{LABELS[tool]:<30} {statistics.median(seconds):>9.2f} {min(seconds):>7.2f}"
            f" {max(seconds):>7.2f} {statistics.median(cpu):>6.2f}"
            f" {statistics.median(rss):>13.0f}  {metric} {value:.6f}",
            flush=True,
        )
    print("\nload average after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
