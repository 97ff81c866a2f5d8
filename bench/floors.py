"""Benchmark evalvalidity.core.floors: exact floors for a million queries.

Two mixes of 1,000,000 queries, pool sizes N up to 10,000,000 and gold counts G up to 50:

- realistic: a handful of distinct pool sizes (100, 1,000, 50,000, 8,841,823, 10,000,000),
  G mostly 1–5 (geometric), 1 % of queries with G drawn from 6–50;
- adversarial: every query a distinct N (drawn without replacement from 50..10,000,000) and G
  uniform on 1..50, so nothing can be shared between queries.

Prints one row per (mix, metric) with the median, min and max wall time over the repetitions
(after one warm-up call), then the inversion timings. Usage::

    .venv/bin/python bench/floors.py                 # 1,000,000 queries, 5 repetitions
    .venv/bin/python bench/floors.py --queries 100000 --repeat 7
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

from evalvalidity.core.floors import infer_benchmark_pool_size, infer_pool_size, noise_floor

METRICS = (
    "rr@10",
    "rr@1000",
    "hit@10",
    "hit@1000",
    "p@10",
    "r@1000",
    "rprec",
    "ap@10",
    "ap@1000",
    "ndcg@10",
    "ndcg@1000",
    "rr",
    "ap",
    "ndcg",
)


def mixes(queries: int, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    sizes = np.array([100, 1_000, 50_000, 8_841_823, 10_000_000])
    realistic_n = sizes[rng.integers(0, len(sizes), queries)]
    realistic_g = np.minimum(rng.geometric(0.6, queries), 5)
    many = rng.random(queries) < 0.01
    realistic_g[many] = rng.integers(6, 51, int(many.sum()))
    adversarial_n = rng.choice(np.arange(50, 10_000_001), queries, replace=False)
    adversarial_g = rng.integers(1, 51, queries)
    return {
        "realistic": (realistic_n, realistic_g),
        "adversarial": (adversarial_n, adversarial_g),
    }


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    call()  # warm-up: lazily built tables, page faults
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    warnings.simplefilter("error")

    print(f"noise_floor, {args.queries:,} queries, median of {args.repeat} runs (seconds)")
    print(f"{'mix':<12} {'metric':<10} {'median':>8} {'min':>8} {'max':>8} {'pairs':>10}")
    for mix, (n, g) in mixes(args.queries, args.seed).items():
        distinct = len(np.unique(n * 64 + g))
        for metric in METRICS:
            times = timed(lambda metric=metric, n=n, g=g: noise_floor(metric, n, g), args.repeat)
            print(
                f"{mix:<12} {metric:<10} {statistics.median(times):8.3f} {min(times):8.3f}"
                f" {max(times):8.3f} {distinct:>10,}"
            )

    # graded nDCG: per-query lists of grades (the ragged input costs its conversion)
    rng = np.random.default_rng(args.seed)
    n, g = mixes(args.queries, args.seed)["realistic"]
    gains = [list(rng.integers(1, 4, size)) for size in g]
    judged_gains = [[*row, 1] for row in gains]
    times = timed(
        lambda: noise_floor("ndcg@10", n, g, gains=gains, judged_gains=judged_gains), args.repeat
    )
    print(
        f"{'realistic':<12} {'ndcg@10*':<10} {statistics.median(times):8.3f}"
        f" {min(times):8.3f} {max(times):8.3f}   (* graded gains, ragged lists)"
    )

    print()
    print("inversion (seconds)")
    small = 10_000
    n, g = mixes(small, args.seed)["adversarial"]
    for metric in ("rr@10", "hit@10", "ap@10", "p@10"):
        values = noise_floor(metric, n, g).expected
        times = timed(
            lambda metric=metric, values=values: infer_pool_size(
                metric, values, g, std_error=0.05 * values
            ),
            args.repeat,
        )
        print(
            f"infer_pool_size {metric:<8} {small:,} queries, with interval:"
            f" median {statistics.median(times):.3f}"
        )
    gold = np.array([1] * 21 + [2, 2, 2, 3, 3, 2, 3])
    mean = float(noise_floor("rr@10", 218, gold).expected.mean())
    times = timed(
        lambda: infer_benchmark_pool_size("rr@10", mean, gold, std_error=0.1 * mean), args.repeat
    )
    print(
        f"infer_benchmark_pool_size rr@10, 28 queries, with interval:"
        f" median {statistics.median(times):.4f}"
    )


if __name__ == "__main__":
    main()
