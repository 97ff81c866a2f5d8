"""Benchmark: the full ``check`` end to end, at the write-up's scale and at MS MARCO dev scale.

Cases (each run in its own subprocess, ``--repeats`` times; the table shows medians):

- ``write-up (units bug, harness)``: 1,052 chunks / 218 files / 28 queries with the team's
  harness output, read from disk and checked (the write-up's numpy rig runs in "about a
  second");
- ``write-up (units bug, built-in)``: the same with Check 1 simulated by the package itself;
- ``7M-line run``: 6,980 queries × ~1,003 items (the file bench/score.py generates), a corpus of
  8,841,823 passages, MRR@10, seeds chosen for a 2 % standard error on Check 1's ratio — read,
  scored, floors, importance-sampled Check 1, inferred N, triage and power.

Time is wall-clock inside the worker from the first byte read to the finished result (imports
excluded, reported separately); peak RSS is the worker's ``ru_maxrss``.

Usage::

    .venv/bin/python bench/check.py             # all cases, 3 repeats
    .venv/bin/python bench/check.py --quick     # the write-up cases only
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MARCO_POOL = 8_841_823


def _worker(case: str) -> None:
    t0 = time.perf_counter()
    from evalvalidity.analysis.check import PoolSpec, check_tables
    from evalvalidity.io.ingest import read_harness, read_qrels, read_run, read_units

    imported = time.perf_counter() - t0
    start = time.perf_counter()
    if case.startswith("writeup"):
        d = ROOT / "data" / "writeup" / "unitsbug"
        run, qrels, units = (
            read_run(d / "model.trec"),
            read_qrels(d / "qrels.txt"),
            read_units(d / "units.tsv"),
        )
        harness = read_harness(d / "harness.csv") if case == "writeup-harness" else None
        result = check_tables(run, qrels, pool=PoolSpec(units=units), harness_output=harness)
    else:
        sys.path.insert(0, str(HERE))
        from score import generate  # the same file bench/score.py times

        run_path, qrels_path = generate(6_980, 7_000_000, HERE / "out")
        start = time.perf_counter()
        run, qrels = read_run(run_path), read_qrels(qrels_path)
        result = check_tables(run, qrels, pool=PoolSpec(corpus_size=MARCO_POOL))
    seconds = time.perf_counter() - start
    harness_check = result.harness
    print(
        json.dumps(
            {
                "seconds": seconds,
                "imports": imported,
                "verdict": result.verdict,
                "ratio": harness_check.ratio.format(3) if harness_check else None,
                "draws": harness_check.n_draws if harness_check else None,
                "relative_se": (
                    harness_check.std_error / harness_check.analytic if harness_check else None
                ),
            }
        )
    )


def _measure_with_rss(case: str) -> dict[str, object]:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = subprocess.run(
        [sys.executable, __file__, "--worker", case],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"worker {case} failed:\n{result.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    data = json.loads(result.stdout.strip().splitlines()[-1])
    # ru_maxrss of all children is a running maximum: only a new maximum is this worker's own.
    data["peak_mb"] = after / 1024 if after > before else None
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker)
        return
    cases = [
        ("writeup-harness", "write-up (units bug, harness output)", "≈ 1 s (its numpy rig)"),
        ("writeup-builtin", "write-up (units bug, built-in Check 1)", "≈ 1 s (its numpy rig)"),
    ]
    if not args.quick:
        cases.append(("marco", "7M-line run, pool 8,841,823, MRR@10, ±2 %", "target ≤ 10 s"))
    print(
        f"{'case':<46} {'median s':>9} {'min s':>7} {'peak MB':>8} {'imports s':>9}  "
        f"{'verdict':<8} {'Check 1 ratio':<22} {'draws':>9} {'rel SE':>7}  peer / target"
    )
    for case, label, peer in cases:
        runs = [_measure_with_rss(case) for _ in range(args.repeats)]
        secs = [float(r["seconds"]) for r in runs]  # type: ignore[arg-type]
        peaks = [float(r["peak_mb"]) for r in runs if r.get("peak_mb")]  # type: ignore[arg-type]
        last = runs[-1]
        rel = last.get("relative_se")
        print(
            f"{label:<46} {statistics.median(secs):>9.2f} {min(secs):>7.2f} "
            f"{(max(peaks) if peaks else float('nan')):>8.0f} "
            f"{statistics.median(float(r['imports']) for r in runs):>9.2f}  "  # type: ignore[arg-type]
            f"{last['verdict']!s:<8} {last['ratio']!s:<22} {last['draws']!s:>9} "
            f"{(f'{100 * float(rel):.1f} %' if rel is not None else '–'):>7}  {peer}"
        )


if __name__ == "__main__":
    main()
