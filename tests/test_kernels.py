"""Tests of evalvalidity.core.kernels: pure-Python references, brute-force enumeration of tie orders."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from brute import brute_floor

from evalvalidity.core.kernels import Hits, Judged, TiedHits, evaluate, evaluate_tied
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import ParameterError

METRICS = [
    parse_metric(s)
    for s in (
        "rr",
        "rr@1",
        "rr@3",
        "rr@10",
        "rr@5[rel>=2]",
        "hit@1",
        "hit@3",
        "hit@10[rel>=2]",
        "p@1",
        "p@3",
        "p@10",
        "p@5[rel>=3]",
        "r@1",
        "r@4",
        "r@10[rel>=2]",
        "rprec",
        "rprec[rel>=2]",
        "ap",
        "ap@1",
        "ap@3",
        "ap@10",
        "ap[rel>=2]",
        "ndcg",
        "ndcg@1",
        "ndcg@3",
        "ndcg@10",
        "ndcg_exp",
        "ndcg_exp@3",
    )
]


# --------------------------------------------------------------------------- references


def reference(metric: Metric, labels: list[int], judged: list[int]) -> float:
    """One query in plain Python, as trec_eval computes it.

    ``labels`` are the grades at positions 1, 2, ... (0 for not relevant or unjudged);
    ``judged`` are the query's positive judged grades, retrieved or not.
    """
    k = metric.k if metric.k is not None else len(labels)
    relevant = [g >= metric.rel for g in labels]
    big_r = sum(g >= metric.rel for g in judged)
    family = metric.family
    if family in {"ndcg", "ndcg_exp"}:

        def gain(g: int) -> float:
            return float(2**g - 1) if family == "ndcg_exp" else float(g)

        dcg = sum(gain(g) / math.log2(p + 2) for p, g in enumerate(labels[:k]) if g > 0)
        ideal = sorted(judged, reverse=True)[: (metric.k or len(judged))]
        idcg = sum(gain(g) / math.log2(p + 2) for p, g in enumerate(ideal))
        return dcg / idcg if idcg > 0 else 0.0
    if big_r == 0:
        return 0.0
    if family == "rr":
        return next((1.0 / (p + 1) for p in range(min(k, len(labels))) if relevant[p]), 0.0)
    if family == "hit":
        return float(any(relevant[:k]))
    if family == "p":
        return sum(relevant[:k]) / k
    if family == "r":
        return sum(relevant[:k]) / big_r
    if family == "rprec":
        return sum(relevant[:big_r]) / big_r
    if family == "ap":
        total, found = 0.0, 0
        for p in range(min(k, len(labels))):
            if relevant[p]:
                found += 1
                total += found / (p + 1)
        return total / big_r
    raise AssertionError(family)


def random_queries(
    rng: np.random.Generator, n_queries: int, max_len: int
) -> tuple[list[list[int]], list[list[int]]]:
    """Random rankings (grades per position) and, per query, every judged positive grade."""
    rankings, judged = [], []
    for _ in range(n_queries):
        length = int(rng.integers(0, max_len + 1))
        labels = [int(g) for g in rng.choice([0, 0, 0, 1, 2, 3], size=length)]
        unretrieved = [int(g) for g in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
        rankings.append(labels)
        judged.append([g for g in labels if g > 0] + unretrieved)
    return rankings, judged


def to_kernel(rankings: list[list[int]], judged: list[list[int]]) -> tuple[Hits, Judged]:
    query, position, grade = [], [], []
    for q, labels in enumerate(rankings):
        for p, g in enumerate(labels):
            if g > 0:
                query.append(q)
                position.append(p + 1)
                grade.append(g)
    jq = [q for q, grades in enumerate(judged) for _ in grades]
    jg = [g for grades in judged for g in grades]
    return (
        Hits(
            np.array(query, dtype=np.int64),
            np.array(position, dtype=np.int64),
            np.array(grade, dtype=np.int64),
        ),
        Judged.from_items(
            np.array(jq, dtype=np.int64), np.array(jg, dtype=np.int64), len(rankings)
        ),
    )


def tied_structure(
    labels: list[int], sizes: list[int]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """TiedHits arrays of one query (query index 0) split into consecutive groups."""
    starts = list(np.cumsum([0, *sizes[:-1]]) + 1)
    item_group, item_grade = [], []
    for gi, (s, n) in enumerate(zip(starts, sizes, strict=True)):
        for p in range(s, s + n):
            if labels[p - 1] > 0:
                item_group.append(gi)
                item_grade.append(labels[p - 1])
    return [int(s) for s in starts], sizes, item_group, item_grade


def brute_force_tied(
    metric: Metric, labels: list[int], sizes: list[int], judged: list[int]
) -> float:
    """The mean of the reference over every order inside every group."""
    starts = np.cumsum([0, *sizes[:-1]])
    blocks = [
        set(itertools.permutations(labels[s : s + n])) for s, n in zip(starts, sizes, strict=True)
    ]
    values = [
        reference(metric, [g for block in combo for g in block], judged)
        for combo in itertools.product(*blocks)
    ]
    # every distinct arrangement of a block is equally likely (permutations of equal labels
    # collapse uniformly), so the plain mean over distinct combinations is the expectation
    return math.fsum(values) / len(values)


# --------------------------------------------------------------------------- evaluate


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_evaluate_matches_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rankings, judged = random_queries(rng, 40, 14)
    hits, judged_k = to_kernel(rankings, judged)
    for metric in METRICS:
        got = evaluate(metric, hits, judged_k)
        want = [reference(metric, labels, j) for labels, j in zip(rankings, judged, strict=True)]
        assert got.dtype == np.float64 and got.shape == (len(rankings),)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, err_msg=metric.name)


def test_evaluate_does_not_depend_on_the_order_of_hits() -> None:
    rng = np.random.default_rng(5)
    rankings, judged = random_queries(rng, 30, 10)
    hits, judged_k = to_kernel(rankings, judged)
    order = rng.permutation(len(hits.query))
    shuffled = Hits(hits.query[order], hits.position[order], hits.grade[order])
    for metric in METRICS:
        np.testing.assert_allclose(
            evaluate(metric, shuffled, judged_k), evaluate(metric, hits, judged_k), rtol=1e-14
        )


def test_evaluate_small_exact_values() -> None:
    judged = Judged.from_items([0, 0, 1, 2], [2, 1, 1, 0], 3)  # query 2: nothing relevant
    hits = Hits([0, 0, 1], [1, 3, 2], [2, 1, 1])
    assert evaluate("rr", hits, judged).tolist() == [1.0, 0.5, 0.0]
    assert evaluate("rr@1", hits, judged).tolist() == [1.0, 0.0, 0.0]
    assert evaluate("p@2", hits, judged).tolist() == [0.5, 0.5, 0.0]
    assert evaluate("r@2", hits, judged).tolist() == [0.5, 1.0, 0.0]
    assert evaluate("ap", hits, judged).tolist() == [(1 + 2 / 3) / 2, 0.5, 0.0]
    assert evaluate("ap@2", hits, judged).tolist() == [0.5, 0.5, 0.0]
    idcg = 2 + 1 / math.log2(3)
    np.testing.assert_allclose(
        evaluate("ndcg", hits, judged), [(2 + 1 / 2) / idcg, 1 / math.log2(3), 0.0]
    )


def test_evaluate_inputs_are_not_mutated_and_results_are_fresh() -> None:
    query = np.array([0, 0], dtype=np.int64)
    position = np.array([2, 1], dtype=np.int64)
    grade = np.array([1, 1], dtype=np.int64)
    hits = Hits(query, position, grade)
    judged = Judged.from_items(query, grade, 1)
    evaluate("ap", hits, judged)
    assert position.tolist() == [2, 1] and query.tolist() == [0, 0]
    with pytest.raises(ValueError, match="read-only"):
        hits.position[0] = 5


def test_p_divides_by_k_even_for_short_rankings() -> None:
    judged = Judged.from_items([0], [1], 1)
    assert evaluate("p@10", Hits([0], [1], [1]), judged).tolist() == [0.1]


# --------------------------------------------------------------------------- evaluate_tied


def random_tie_case(rng: np.random.Generator) -> tuple[list[int], list[int], list[int]]:
    """A ranking of up to 9 items cut into groups of size <= 4, and the judged grades."""
    length = int(rng.integers(1, 10))
    labels = [int(g) for g in rng.choice([0, 0, 1, 2, 3], size=length)]
    sizes: list[int] = []
    while sum(sizes) < length:
        sizes.append(int(min(rng.integers(1, 5), length - sum(sizes))))
    judged = [g for g in labels if g > 0] + [int(g) for g in rng.integers(1, 4, rng.integers(0, 2))]
    return labels, sizes, judged


@pytest.mark.parametrize("seed", range(6))
def test_evaluate_tied_equals_enumeration_of_all_orders(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    cases = [random_tie_case(rng) for _ in range(8)]
    gq, gs, gz, ig, igr, jq, jg = [], [], [], [], [], [], []
    for q, (labels, sizes, judged) in enumerate(cases):
        starts, sizes_, item_group, item_grade = tied_structure(labels, sizes)
        ig.extend(g + len(gq) for g in item_group)
        igr.extend(item_grade)
        gq.extend([q] * len(starts))
        gs.extend(starts)
        gz.extend(sizes_)
        jq.extend([q] * len(judged))
        jg.extend(judged)
    tied = TiedHits(gq, gs, gz, ig, igr)
    judged_k = Judged.from_items(jq, jg, len(cases))
    for metric in METRICS:
        got = evaluate_tied(metric, tied, judged_k)
        want = [brute_force_tied(metric, labels, sizes, judged) for labels, sizes, judged in cases]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=metric.name)


def test_evaluate_tied_with_singleton_groups_equals_evaluate() -> None:
    rng = np.random.default_rng(11)
    rankings, judged = random_queries(rng, 50, 30)
    hits, judged_k = to_kernel(rankings, judged)
    tied = TiedHits.from_hits(hits)
    for metric in METRICS:
        np.testing.assert_allclose(
            evaluate_tied(metric, tied, judged_k),
            evaluate(metric, hits, judged_k),
            rtol=1e-12,
            atol=1e-15,
            err_msg=metric.name,
        )


def test_every_metric_is_float64_when_no_relevant_item_was_retrieved() -> None:
    judged = Judged.from_items(query=[0, 1], grade=[1, 2], n_queries=3)
    hits = Hits(query=np.zeros(0, np.int64), position=np.zeros(0, np.int64), grade=[])
    tied = TiedHits.from_hits(hits)
    for metric in METRICS:
        for values in (evaluate(metric, hits, judged), evaluate_tied(metric, tied, judged)):
            assert values.dtype == np.float64, metric.name
            assert values.tolist() == [0.0, 0.0, 0.0], metric.name


def exact_rr_whole_list(n: int, m: int, k: int | None = None) -> Fraction:
    """E[RR@k] when m relevant items are shuffled uniformly among n (docs/math.md, Floors)."""
    last = n - m + 1 if k is None else min(k, n - m + 1)
    return sum(
        (Fraction(math.comb(n - j, m - 1), math.comb(n, m)) / j for j in range(1, last + 1)),
        Fraction(0),
    )


def test_one_tied_group_is_the_noise_floor() -> None:
    # A constant-score list of N items with G relevant is a uniformly random order.
    for n, g in [(8, 1), (8, 3), (20, 4), (6, 6), (5, 2)]:
        judged = Judged.from_items([0] * g, [1] * g, 1)
        tied = TiedHits([0], [1], [n], [0] * g, [1] * g)
        h = [sum(1 / i for i in range(1, j + 1)) for j in range(n + 1)]
        k = 10
        floors = {
            "rr@10": float(exact_rr_whole_list(n, g, k)),
            "rr": float(exact_rr_whole_list(n, g)),
            "hit@10": 1 - math.comb(n - g, min(k, n)) / math.comb(n, min(k, n)),
            "p@10": g * min(k, n) / (n * k),
            "r@10": min(k, n) / n,
            "rprec": g / n,
            # Bestgen 2015
            "ap": (1 / n) * ((g - 1) / (n - 1) * (n - h[n]) + h[n]) if n > 1 else 1.0,
            "ap@3": (1 / n) * (h[3] + (g - 1) / (n - 1) * (3 - h[3])),
        }
        for name, want in floors.items():
            got = evaluate_tied(name, tied, judged)[0]
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (name, n, g)


@pytest.mark.parametrize(
    "pool", [(1, 0, 0, 0, 0), (2, 1, 0, 0, 0, 0), (3, 3, 1, 0, 2), (1,), (0, 0, 2, 0, 0, 0)]
)
def test_one_tied_group_equals_the_shared_brute_force(pool: tuple[int, ...]) -> None:
    judged_grades = [g for g in pool if g > 0] + [1]  # one judged item outside the pool
    relevant = [g for g in pool if g > 0]
    tied = TiedHits([0], [1], [len(pool)], [0] * len(relevant), relevant)
    judged = Judged.from_items([0] * len(judged_grades), judged_grades, 1)
    for metric in METRICS:
        want, _ = brute_floor(metric, pool, judged_grades)
        got = evaluate_tied(metric, tied, judged)[0]
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (metric.name, pool)


def test_reference_noise_floor_values_of_math_md() -> None:
    def rr10(n: int, g: int) -> float:
        tied = TiedHits([0], [1], [n], [0] * g, [1] * g)
        return float(evaluate_tied("rr@10", tied, Judged.from_items([0] * g, [1] * g, 1))[0])

    assert rr10(8, 1) == pytest.approx(0.3397, abs=5e-5)
    assert rr10(20, 4) == pytest.approx(0.4116, abs=5e-5)
    assert rr10(218, 1) == pytest.approx(0.013436, abs=5e-7)
    assert rr10(218, 3) == pytest.approx(0.03942, abs=5e-6)
    assert [round(rr10(8, g), 3) for g in (1, 3, 5, 6)] == [0.340, 0.609, 0.793, 0.869]


def test_tied_rr_is_accurate_for_large_groups_across_many_queries() -> None:
    # Many queries, each one big tied group: the segmented log-sum must not drift.
    sizes = [1000, 997, 1500, 50, 1200] * 40
    relevant = [3, 1, 7, 2, 12] * 40
    n_q = len(sizes)
    gq = list(range(n_q))
    ig = [q for q in range(n_q) for _ in range(relevant[q])]
    tied = TiedHits(gq, [1] * n_q, sizes, ig, [1] * len(ig))
    judged = Judged.from_items(ig, [1] * len(ig), n_q)
    got = evaluate_tied("rr", tied, judged)
    for q in (0, 1, 2, 3, 4, n_q - 1):
        want = float(exact_rr_whole_list(sizes[q], relevant[q]))
        assert got[q] == pytest.approx(want, rel=1e-12)


def test_tied_groups_may_start_after_untied_items() -> None:
    # Position 1 is a non-relevant item; positions 2-4 tie with one relevant; position 5
    # is relevant on its own.
    judged = Judged.from_items([0, 0], [1, 1], 1)
    tied = TiedHits([0, 0], [2, 5], [3, 1], [0, 1], [1, 1])
    want_rr = (1 / 2 + 1 / 3 + 1 / 4) / 3
    assert evaluate_tied("rr", tied, judged)[0] == pytest.approx(want_rr, rel=1e-14)
    assert evaluate_tied("rr@2", tied, judged)[0] == pytest.approx(1 / 6, rel=1e-14)
    assert evaluate_tied("hit@2", tied, judged)[0] == pytest.approx(1 / 3, rel=1e-14)
    assert evaluate_tied("hit@4", tied, judged)[0] == 1.0


# --------------------------------------------------------------------------- validation


def test_judged_validation_messages() -> None:
    with pytest.raises(
        ParameterError,
        match=re.escape("Judged.offsets must start at 0, never decrease and end at len(grades)."),
    ):
        Judged([0, 2], [1])
    with pytest.raises(
        ParameterError,
        match=re.escape("Judged.grades must be sorted descending within each query."),
    ):
        Judged([0, 2], [1, 2])
    with pytest.raises(
        ParameterError, match=re.escape("Judged.grades must hold grades >= 1 only.")
    ):
        Judged([0, 1], [0])
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "Judged.offsets must be a 1-D integer array. Got shape (2,) and dtype float64 instead."
        ),
    ):
        Judged([0.0, 1.0], [1])
    with pytest.raises(
        ParameterError, match=re.escape("Judged.from_items: every query index must lie in [0, 2).")
    ):
        Judged.from_items([0, 2], [1, 1], 2)
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The 'n_queries' parameter of Judged.from_items must be an int >= 0. Got -1 instead."
        ),
    ):
        Judged.from_items([], [], -1)
    # queries sorted independently: a lower grade of query 0 may precede query 1's higher
    assert Judged([0, 1, 2], [1, 3]).grades.tolist() == [1, 3]


def test_hits_validation_messages() -> None:
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The arrays of Hits must have equal lengths. Got query=2, position=1, grade=1."
        ),
    ):
        Hits([0, 0], [1], [1])
    with pytest.raises(
        ParameterError, match=re.escape("Hits.position must hold 1-based positions >= 1.")
    ):
        Hits([0], [0], [1])
    with pytest.raises(ParameterError, match=re.escape("Hits.grade must hold grades >= 1 only.")):
        Hits([0], [1], [0])
    with pytest.raises(ParameterError, match=re.escape("Hits.query must hold query indices >= 0.")):
        Hits([-1], [1], [1])
    judged = Judged.from_items([0, 0], [1, 1], 1)
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "Two hits of query 0 share position 3; positions must be distinct within a query."
        ),
    ):
        evaluate("ap", Hits([0, 0], [3, 3], [1, 1]), judged)
    with pytest.raises(
        ParameterError,
        match=re.escape("Hits names a query index >= 1, the number of queries in Judged."),
    ):
        evaluate("ap", Hits([1], [3], [1]), judged)
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "Hits holds more items of some (query, grade) than Judged lists for that query."
        ),
    ):
        evaluate("ap", Hits([0], [3], [2]), judged)
    with pytest.raises(
        ParameterError, match=re.escape("The 'hits' parameter of evaluate must be Hits. Got list.")
    ):
        evaluate("ap", [], judged)  # type: ignore[arg-type]
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The 'metric' parameter of evaluate must be a Metric or its spelling. Got int instead."
        ),
    ):
        evaluate(3, Hits([0], [1], [1]), judged)  # type: ignore[arg-type]


def test_tied_hits_validation_messages() -> None:
    with pytest.raises(
        ParameterError, match=re.escape("The tie groups of a query in TiedHits must not overlap.")
    ):
        TiedHits([0, 0], [1, 3], [3, 1], [0], [1])
    with pytest.raises(
        ParameterError, match=re.escape("A tie group of TiedHits holds more items than its size.")
    ):
        TiedHits([0], [1], [1], [0, 0], [1, 1])
    with pytest.raises(
        ParameterError, match=re.escape("TiedHits.item_group must hold group indices in [0, 1).")
    ):
        TiedHits([0], [1], [1], [1], [1])
    with pytest.raises(
        ParameterError, match=re.escape("TiedHits.group_size must hold sizes >= 1.")
    ):
        TiedHits([0], [1], [0], [], [])
    judged = Judged.from_items([0], [1], 1)
    with pytest.raises(
        ParameterError,
        match=re.escape("TiedHits names a query index >= 1, the number of queries in Judged."),
    ):
        evaluate_tied("rr", TiedHits([1], [1], [1], [], []), judged)
    # different queries may reuse positions
    tied = TiedHits([0, 1], [1, 1], [2, 2], [0, 1], [1, 1])
    assert evaluate_tied("rr", tied, Judged.from_items([0, 1], [1, 1], 2)).tolist() == [0.75, 0.75]


def test_kernels_import_no_io_libraries() -> None:
    import subprocess
    import sys

    code = (
        "import sys, evalvalidity.core.kernels; "
        "print(sorted(m for m in ('duckdb', 'pyarrow', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["ndcg@10", "ndcg", "ndcg_exp@20", "ap", "rr", "p@5", "r@10"])
def test_a_metric_has_the_same_bits_whatever_order_the_hits_come_in(name):
    # the scorer's SQL returns the hits as its threads finish; the values must not follow
    rng = np.random.default_rng(7)
    n_queries = 300
    query = np.repeat(np.arange(n_queries), 12)
    position = np.concatenate([rng.permutation(40)[:12] + 1 for _ in range(n_queries)])
    grade = rng.integers(1, 4, size=len(query))
    judged = Judged.from_items(
        np.concatenate([query, np.arange(n_queries)]),
        np.concatenate([grade, np.full(n_queries, 3)]),
        n_queries,
    )
    expected = evaluate(name, Hits(query, position, grade), judged)
    for seed in range(5):
        shuffle = np.random.default_rng(seed).permutation(len(query))
        shuffled = evaluate(name, Hits(query[shuffle], position[shuffle], grade[shuffle]), judged)
        assert shuffled.tobytes() == expected.tobytes()
