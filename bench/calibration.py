"""Calibration of Check 1 on a correct harness: how often does it fail one that is right?

For each (metric, depth) a small benchmark is drawn (few queries, few seeds, skewed floors: the
cases where a normal interval from the spread over seeds collapsed), and for each of many seed
bases a *correct harness* is simulated: every seed ranks a uniformly random order of each
query's pool, keeps the top ``depth`` items and computes the metric with trec_eval's semantics
from the ranks of the gold items (plain numpy, not the package's scorer), printed to 4
decimals as trec_eval does. Check 1 (:func:`evalvalidity.analysis.check1.harness_check1`)
then runs on those values; the share of seed bases it fails is the false-failure rate, printed
with its Monte Carlo standard error :math:`\\sqrt{p(1-p)/B}`. The target is 5 % or less.

Usage::

    .venv/bin/python bench/calibration.py               # 300 seed bases per row
    .venv/bin/python bench/calibration.py --bases 1000
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from evalvalidity.analysis.check1 import harness_check1
from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import build_benchmark, compute_floor
from evalvalidity.core.metrics import Metric, parse_metric


@dataclass(frozen=True)
class Case:
    """One benchmark: per-query pool sizes and gold counts, the seeds and the runs' depth."""

    metric: str
    pool: int
    gold: tuple[int, ...]
    seeds: int
    depth: int

    @property
    def label(self) -> str:
        return (
            f"{self.metric:<8} depth {self.depth:>5,}  pool {self.pool:>5,}  "
            f"{len(self.gold)} quer{'y' if len(self.gold) == 1 else 'ies'}  {self.seeds} seeds"
        )


#: The rows the bench prints: every metric family, at depths below and at the whole pool.
CASES: tuple[Case, ...] = (
    Case("p@10", 3000, (1,), 5, 1000),
    Case("p@10", 200, (1,), 5, 1000),
    Case("p@10", 200, (1, 2, 1), 5, 100),
    Case("hit@10", 150, (1,), 5, 1000),
    Case("rr", 5000, (1, 2, 3), 5, 1000),
    Case("rr", 500, (1,), 5, 500),
    Case("rr@10", 300, (1, 1), 8, 100),
    Case("ap", 5000, (3, 1, 2), 5, 1000),
    Case("ap", 2000, (5,), 5, 100),
    Case("ap", 400, (2, 4), 5, 400),
    Case("r@100", 2000, (2, 1), 5, 1000),
    Case("r@1000", 2000, (4,), 5, 100),
    Case("rprec", 300, (2, 1), 5, 300),
    Case("ndcg", 2000, (3, 1), 5, 1000),
    Case("ndcg@10", 400, (1, 2), 5, 400),
    Case("ndcg@500", 2000, (2,), 5, 100),
    # larger benchmarks, where the normal band dominates and the rate nears 5 %
    Case("rr", 200, (1,) * 50, 20, 1000),
    Case("ap", 1000, (5,) * 30, 10, 100),
    Case("ndcg@10", 100, (3,) * 40, 10, 100),
    Case("p@10", 100, (4,) * 40, 10, 1000),
)


def qrels_for(case: Case) -> pa.Table:
    """Judgements with ``gold[q]`` relevant items for query q (grades 1, 2, 3, 1, ...)."""
    qid, docid, rel = [], [], []
    for q, g in enumerate(case.gold):
        for j in range(g):
            qid.append(f"q{q}")
            docid.append(f"g{q}_{j}")
            rel.append(1 + j % 3)
    return pa.table({"qid": qid, "docid": docid, "rel": rel})


def gold_ranks(n: int, g: int, seeds: int, rng: np.random.Generator) -> np.ndarray:
    """The ranks (1-based) of g gold items in ``seeds`` uniformly random orders of n items."""
    keys = rng.random((seeds, n))
    order = np.argsort(keys, axis=1)
    ranks = np.empty_like(order)
    rows = np.arange(seeds)[:, None]
    ranks[rows, order] = np.arange(1, n + 1)[None, :]
    return ranks[:, :g]  # the gold items are items 0 .. g-1


def trec_value(metric: Metric, ranks: np.ndarray, grades: np.ndarray, depth: int) -> float:
    """trec_eval's value of ``metric`` for one ranking of ``depth`` items, from gold ranks."""
    seen = np.sort(ranks[ranks <= depth])
    r_total = len(ranks)
    k = metric.k
    cut = seen if k is None else seen[seen <= k]
    if metric.family == "rr":
        return 1.0 / cut[0] if len(cut) else 0.0
    if metric.family == "hit":
        return float(len(cut) > 0)
    if metric.family == "p":
        assert k is not None
        return len(cut) / k
    if metric.family == "r":
        return len(cut) / r_total
    if metric.family == "rprec":
        return float(np.sum(seen <= r_total)) / r_total
    if metric.family == "ap":
        return float(np.sum(np.arange(1, len(cut) + 1) / cut)) / r_total
    # nDCG with the grades as gains; the ideal over every judged grade
    by_rank = {int(r): grades[i] for i, r in enumerate(ranks) if r <= depth}
    dcg = sum(g / math.log2(r + 1) for r, g in by_rank.items() if k is None or r <= k)
    ideal = np.sort(grades)[::-1]
    if k is not None:
        ideal = ideal[:k]
    idcg = float(np.sum(ideal / np.log2(np.arange(2, len(ideal) + 2))))
    return dcg / idcg


def harness_values(case: Case, rng: np.random.Generator) -> pa.Table:
    """A correct harness's per-query output (4 decimals) on ``case.seeds`` random runs."""
    metric = parse_metric(case.metric)
    seed, qid, value = [], [], []
    for q, g in enumerate(case.gold):
        grades = np.array([1 + j % 3 for j in range(g)], dtype=np.float64)
        if metric.binary:
            grades = np.ones(g)
        ranks = gold_ranks(case.pool, g, case.seeds, rng)
        for s in range(case.seeds):
            seed.append(s)
            qid.append(f"q{q}")
            value.append(round(trec_value(metric, ranks[s], grades, case.depth), 4))
    return pa.table({"seed": seed, "qid": qid, "measure": [metric.name] * len(qid), "value": value})


def false_failure_rate(case: Case, bases: int, first_base: int = 0) -> tuple[float, float]:
    """The share of seed bases Check 1 fails on a correct harness, and its standard error."""
    metric = parse_metric(case.metric)
    pool = PoolSpec(corpus_size=case.pool)
    bench = build_benchmark(qrels_for(case), pool, metric)
    floor = compute_floor(bench, metric, pool, np.random.default_rng(0))[0]
    failed = 0
    for base in range(first_base, first_base + bases):
        values = harness_values(case, np.random.default_rng(base))
        check = harness_check1(
            bench,
            floor,
            metric,
            values,
            [],
            pool=pool,
            rng=np.random.default_rng(base),
            depth=case.depth,
            seeds=case.seeds,
        )
        failed += not check.passed
    p = failed / bases
    return p, math.sqrt(max(p * (1 - p), 1 / bases) / bases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", type=int, default=300, help="seed bases per row")
    args = parser.parse_args()
    print(f"False-failure rate of Check 1 on a correct harness, {args.bases} seed bases per row")
    start = time.perf_counter()
    for case in CASES:
        p, se = false_failure_rate(case, args.bases)
        print(f"{case.label}   {100 * p:5.1f} % ± {100 * se:4.1f}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
