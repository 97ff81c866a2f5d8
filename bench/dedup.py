"""Benchmark: exact floors under chunk → document deduplication (evalvalidity.core.dedup).

Cases (each timed ``--repeats`` times in this process; the table shows the median and the
fastest run, in seconds, and the mean floor as a sanity figure):

- one query over 1,000,000 documents whose chunk counts are ceil(lognormal(1.0, 1.2))
  (305 distinct counts, about 6 million chunks): rr@10 (the target: <= 1 s), hit@10, rr without
  cutoff, and p@5 by Monte Carlo (10,000 samples; the floor is about 1e-6, so the estimate is
  0: the row is there for the time the pool-size-free "race" sampler takes);
- the same with chunk counts 1 + Poisson(3) (15 distinct counts);
- 100 queries over the lognormal corpus (1 to 3 gold documents each): rr@10;
- Cranfield (data/cranfield: 1,400 documents, 6,181 chunks, 225 queries, 1,612 gold pairs):
  rr@10, hit@10, rr, the inferred pool size, and p@5 / ap by Monte Carlo (10,000 samples).

Usage::

    .venv/bin/python bench/dedup.py               # 5 repeats
    .venv/bin/python bench/dedup.py --repeats 3
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from evalvalidity.core.dedup import dedup_floor, dedup_floor_mc, infer_pool_size_under_dedup

DATA = Path(__file__).resolve().parent.parent / "data" / "cranfield"
SEED = 20240611


def cranfield() -> tuple[np.ndarray, list[np.ndarray]]:
    """Chunks per document and each query's gold documents (any gain > 0)."""
    chunks: dict[str, int] = {}
    with open(DATA / "chunks.tsv", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        for _, doc in reader:
            chunks[doc] = chunks.get(doc, 0) + 1
    index = {doc: i for i, doc in enumerate(chunks)}
    gold: dict[str, list[int]] = {}
    with open(DATA / "qrels.txt") as handle:
        for line in handle:
            qid, _, doc, gain = line.split()
            if int(gain) > 0:
                gold.setdefault(qid, []).append(index[doc])
    return np.array(list(chunks.values())), [np.array(g) for g in gold.values()]


def timed(function: Callable[[], float], repeats: int) -> tuple[float, float, float]:
    """Median and minimum wall time of ``function``, and its (last) result."""
    seconds = []
    value = float("nan")
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), min(seconds), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    lognormal = np.ceil(rng.lognormal(1.0, 1.2, 1_000_000)).astype(np.int64)
    poisson = 1 + rng.poisson(3, 1_000_000)
    gold_100 = [
        rng.choice(1_000_000, size=int(rng.integers(1, 4)), replace=False) for _ in range(100)
    ]
    one = gold_100[:1]
    cran_counts, cran_gold = cranfield()

    def mean_floor(metric: str, counts: np.ndarray, gold: list[np.ndarray]) -> Callable[[], float]:
        return lambda: float(dedup_floor(metric, counts, gold).expected.mean())

    def mean_mc(metric: str, counts: np.ndarray, gold: list[np.ndarray]) -> Callable[[], float]:
        return lambda: dedup_floor_mc(metric, counts, gold, n_draws=10_000, rng=SEED).mean

    cases: list[tuple[str, int, int, int, Callable[[], float]]] = []
    for name, counts in (("lognormal", lognormal), ("1+Poisson(3)", poisson)):
        docs, distinct = len(counts), len(np.unique(counts))
        cases += [
            (f"rr@10, {name}", docs, distinct, 1, mean_floor("rr@10", counts, one)),
            (f"hit@10, {name}", docs, distinct, 1, mean_floor("hit@10", counts, one)),
            (f"rr (no cutoff), {name}", docs, distinct, 1, mean_floor("rr", counts, one)),
            (f"p@5 Monte Carlo 10k, {name}", docs, distinct, 1, mean_mc("p@5", counts, one)),
        ]
    cases.append(
        (
            "rr@10, lognormal",
            len(lognormal),
            len(np.unique(lognormal)),
            100,
            mean_floor("rr@10", lognormal, gold_100),
        )
    )
    cran = (len(cran_counts), len(np.unique(cran_counts)), len(cran_gold))
    cases += [
        ("Cranfield rr@10", *cran, mean_floor("rr@10", cran_counts, cran_gold)),
        ("Cranfield hit@10", *cran, mean_floor("hit@10", cran_counts, cran_gold)),
        ("Cranfield rr (no cutoff)", *cran, mean_floor("rr", cran_counts, cran_gold)),
        (
            "Cranfield inferred N (rr@10)",
            *cran,
            lambda: float(
                infer_pool_size_under_dedup(
                    cran_counts, cran_gold, metric="rr@10"
                ).benchmark.estimate[0]
            ),
        ),
        ("Cranfield p@5 Monte Carlo 10k", *cran, mean_mc("p@5", cran_counts, cran_gold)),
        ("Cranfield ap Monte Carlo 10k", *cran, mean_mc("ap", cran_counts, cran_gold)),
    ]

    header = (
        f"{'case':<34} {'documents':>10} {'distinct c':>10} {'queries':>7} "
        f"{'median s':>9} {'min s':>8} {'mean value':>12}"
    )
    print(f"median of {args.repeats} runs (Cranfield: {int(cran_counts.sum()):,} chunks)")
    print(header)
    print("-" * len(header))
    for label, docs, distinct, queries, function in cases:
        median, fastest, value = timed(function, args.repeats)
        print(
            f"{label:<34} {docs:>10,} {distinct:>10} {queries:>7} "
            f"{median:>9.3f} {fastest:>8.3f} {value:>12.6g}"
        )


if __name__ == "__main__":
    main()
