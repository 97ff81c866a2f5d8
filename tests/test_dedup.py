"""Tests of evalvalidity.core.dedup: floors when random chunk scores are deduplicated to documents.

The exact floors are checked four ways: against the chunk-free formulas of docs/math.md, Floors, when every
document has one chunk; against every order of the chunks of tiny corpora (exact fractions);
against a brute-force simulation that ranks actual chunk scores and keeps each document's first
occurrence; and against the identities of docs/math.md, Floors under deduplication (Plackett–Luce first position, H_k/F for
gold drawn uniformly among documents, the figures of the 1,052-chunk / 218-file write-up).
"""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalvalidity.core.dedup import (
    DedupMonteCarlo,
    InferredPoolSizeUnderDedup,
    _exact_moments,
    dedup_floor,
    dedup_floor_mc,
    infer_pool_size_under_dedup,
)
from evalvalidity.core.floors import Floor
from evalvalidity.core.metrics import Metric
from evalvalidity.errors import EvalValidityWarning, ParameterError

# ------------------------------------------------------------------------------------ helpers


def harmonic(n: int, power: int = 1) -> float:
    return sum(1.0 / i**power for i in range(1, n + 1))


def plain_floor(n: int, g: int, k: int) -> tuple[float, float, float]:
    """E[RR@k], E[RR@k^2], E[Hit@k] of G gold among N in a uniform order (docs/math.md, Floors)."""
    first = second = 0.0
    survive = 1.0
    for r in range(1, min(k, n - g + 1) + 1):
        p = survive * g / (n - r + 1)
        first += p / r
        second += p / r**2
        survive *= (n - g - r + 1) / (n - r + 1)
    hit = 1.0 - math.comb(n - g, k) / math.comb(n, k) if k <= n else 1.0
    return first, second, hit


def first_occurrence_orders(counts: list[int]) -> list[tuple[int, ...]]:
    """Every equally likely document order: one per order of the chunks, first occurrence."""
    doc_of_chunk = [d for d, c in enumerate(counts) for _ in range(c)]
    return [
        tuple(dict.fromkeys(doc_of_chunk[i] for i in order))
        for order in itertools.permutations(range(len(doc_of_chunk)))
    ]


def enumerated_moments(
    counts: list[int], gold: set[int], k: int | None
) -> tuple[Fraction, Fraction, Fraction]:
    """Exact E[RR@k], E[RR@k^2] and E[Hit@k] over every order of the chunks."""
    orders = first_occurrence_orders(counts)
    cut = k if k is not None else len(counts)
    rr = rr2 = hit = Fraction(0)
    for order in orders:
        first = next(i for i, d in enumerate(order, start=1) if d in gold)
        if first <= cut:
            rr += Fraction(1, first)
            rr2 += Fraction(1, first**2)
            hit += 1
    n = len(orders)
    return rr / n, rr2 / n, hit / n


def chunk_level_positions(counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Brute force: a uniform score per CHUNK, chunks ranked, each document kept at its first
    occurrence. Returns the 1-based document positions, shape (n, documents)."""
    scores = rng.random((n, int(counts.sum())))
    chunk_rank = np.argsort(np.argsort(-scores, axis=1), axis=1)
    starts = np.cumsum(counts) - counts
    first_seen = np.minimum.reduceat(chunk_rank, starts, axis=1)
    return np.argsort(np.argsort(first_seen, axis=1), axis=1) + 1


def rr_at(positions: np.ndarray, k: int | None) -> np.ndarray:
    first = positions.min(axis=1)
    return 1.0 / first if k is None else np.where(first <= k, 1.0 / first, 0.0)


def zipf_corpus() -> np.ndarray:
    """218 files, 1,052 chunks: file 0 has 1 chunk, file 1 has 40, and the other 216 files
    share 1,011 chunks as 1 + a Zipf law with exponent 0.7 (largest-remainder rounding of
    795 extra chunks in proportion to 1/i^0.7; chunk-count CV ≈ 1.1, largest file 58)."""
    weights = 1.0 / np.arange(1, 217) ** 0.7
    extra = 1011 - 216
    share = weights / weights.sum() * extra
    whole = np.floor(share).astype(np.int64)
    whole[np.argsort(-(share - whole), kind="stable")[: extra - whole.sum()]] += 1
    return np.concatenate([[1, 40], 1 + whole])


# ------------------------------------------------------------ one chunk each: the plain floor


@pytest.mark.parametrize(
    ("n", "g"),
    [(n, g) for n in (1, 2, 5, 8, 10, 11, 20, 218, 1052, 50_000) for g in (1, 2, 3, 6) if g <= n],
)
def test_single_chunk_documents_give_the_plain_floor(n: int, g: int) -> None:
    gold = [np.arange(g)]
    counts = np.ones(n, dtype=np.int64)
    for k in (1, 3, 10):
        e, e2, h = plain_floor(n, g, k)
        rr = dedup_floor(f"rr@{k}", counts, gold)
        assert rr.expected[0] == pytest.approx(e, rel=1e-12)
        assert rr.variance[0] == pytest.approx(e2 - e * e, rel=1e-10, abs=1e-15)
        hit = dedup_floor(f"hit@{k}", counts, gold)
        assert hit.expected[0] == pytest.approx(h, rel=1e-12)
        assert hit.variance[0] == pytest.approx(h * (1 - h), rel=1e-10, abs=1e-15)
    e, e2, _ = plain_floor(n, g, n)
    rr = dedup_floor("rr", counts, gold)
    assert rr.expected[0] == pytest.approx(e, rel=1e-12)
    assert rr.variance[0] == pytest.approx(e2 - e * e, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("n", [1, 7, 10, 218, 1052, 1_000_000])
def test_single_gold_single_chunk_is_h_k_over_n(n: int) -> None:
    floor = dedup_floor("mrr@10", np.ones(n, dtype=np.int64), [[0]])
    assert floor.expected[0] == pytest.approx(harmonic(min(10, n)) / n, rel=1e-12)
    assert floor.variance[0] == pytest.approx(
        harmonic(min(10, n), 2) / n - (harmonic(min(10, n)) / n) ** 2, rel=1e-10, abs=1e-16
    )


# --------------------------------------------------------------- exact enumeration of orders


@pytest.mark.parametrize("counts", [[1, 2, 3], [1, 1, 2, 3], [2, 2, 3], [5, 1, 1]])
def test_matches_every_order_of_the_chunks(counts: list[int]) -> None:
    n_docs = len(counts)
    subsets = [set(s) for size in (1, 2) for s in itertools.combinations(range(n_docs), size)]
    gold = [np.array(sorted(s)) for s in subsets]
    for k in (None, 1, 2, 3):
        rr = dedup_floor("rr" if k is None else f"rr@{k}", counts, gold)
        hit = dedup_floor(f"hit@{k or n_docs}", counts, gold)
        for q, s in enumerate(subsets):
            e, e2, h = enumerated_moments(counts, s, k)
            assert rr.expected[q] == pytest.approx(float(e), rel=1e-13)
            assert rr.variance[q] == pytest.approx(float(e2 - e * e), rel=1e-11, abs=1e-15)
            assert hit.expected[q] == pytest.approx(float(h), rel=1e-13)
            assert hit.variance[q] == pytest.approx(float(h * (1 - h)), rel=1e-11, abs=1e-15)


def test_three_documents_by_hand() -> None:
    # Plackett–Luce with weights 1, 2, 3: the 3-chunk document is first w.p. 1/2, second
    # w.p. (1/6)(3/5) + (2/6)(3/4) = 7/20, last w.p. 3/20.
    floor = dedup_floor("rr", [1, 2, 3], [[2]])
    assert floor.expected[0] == pytest.approx(29 / 40, rel=1e-14)
    assert floor.variance[0] == pytest.approx(29 / 48 - (29 / 40) ** 2, rel=1e-12)


def test_first_position_is_plackett_luce() -> None:
    rng = np.random.default_rng(11)
    counts = 1 + rng.poisson(4, 5_000)
    gold = [rng.choice(5_000, size=g, replace=False) for g in (1, 1, 2, 5, 30)]
    hit1 = dedup_floor("hit@1", counts, gold)
    expected = [counts[g].sum() / counts.sum() for g in gold]
    np.testing.assert_allclose(hit1.expected, expected, rtol=1e-12)


# --------------------------------------------------------------- brute force over chunk scores


@pytest.mark.parametrize("seed", [1, 2])
def test_agrees_with_chunk_level_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 9, size=30)
    counts[0], counts[1] = 1, 12  # a tiny and a large gold document
    gold = [np.array([0]), np.array([1]), np.array([2, 3]), np.array([0, 4, 5, 6])]
    n = 20_000
    positions = chunk_level_positions(counts, n, rng)
    for spelling, k in (("rr@10", 10), ("rr@3", 3), ("rr", None)):
        floor = dedup_floor(spelling, counts, gold)
        for q, docs in enumerate(gold):
            sample = rr_at(positions[:, docs], k)
            z = (sample.mean() - floor.expected[q]) / math.sqrt(floor.variance[q] / n)
            assert abs(z) < 4, (spelling, q, z)
            assert sample.var() == pytest.approx(floor.variance[q], rel=0.1)
    for k in (1, 5):
        floor = dedup_floor(f"hit@{k}", counts, gold)
        for q, docs in enumerate(gold):
            sample = (positions[:, docs].min(axis=1) <= k).astype(float)
            z = (sample.mean() - floor.expected[q]) / math.sqrt(floor.variance[q] / n)
            assert abs(z) < 4, (k, q, z)


def test_more_chunks_rank_higher_than_the_chunk_free_floor_says() -> None:
    # One chunk among 4-chunk documents sinks; a 40-chunk document rises and pushes the
    # typical 4-chunk document below the chunk-free H_10/202 too.
    counts = np.array([1, 40] + [4] * 200)
    floor = dedup_floor("rr@10", counts, [[0], [1], [2]])
    plain = harmonic(10) / len(counts)
    assert floor.expected[0] < floor.expected[2] < plain < floor.expected[1]


# -------------------------------------------------------------------- the write-up's figures


def test_write_up_figures_1052_chunks_in_218_files() -> None:
    counts = zipf_corpus()
    assert (len(counts), counts.sum(), counts[0], counts[1]) == (218, 1052, 1, 40)
    inferred = infer_pool_size_under_dedup(counts, [[0], [1]], metric="mrr@10")
    floor = inferred.floor.expected
    assert round(float(floor[0]), 5) == 0.00286
    assert round(float(floor[1]), 3) == 0.104
    estimate = inferred.per_query.estimate
    assert abs(estimate[0] - 1026) < 1
    assert round(float(estimate[1])) == 28
    # G = 1 and N* >= k: the inverse is H_k / floor.
    np.testing.assert_allclose(estimate, harmonic(10) / floor, rtol=1e-10)
    assert (inferred.documents, inferred.chunks) == (218, 1052)


def test_uniform_gold_averages_to_h_k_over_f() -> None:
    counts = zipf_corpus()
    every_file = [[d] for d in range(len(counts))]
    for k in (1, 10, 50):
        floor = dedup_floor(f"rr@{k}", counts, every_file)
        assert floor.expected.mean() == pytest.approx(harmonic(k) / 218, rel=1e-12)
        hit = dedup_floor(f"hit@{k}", counts, every_file)
        assert hit.expected.mean() == pytest.approx(k / 218, rel=1e-12)
    whole = dedup_floor("rr", counts, every_file)
    assert whole.expected.mean() == pytest.approx(harmonic(218) / 218, rel=1e-12)


def test_size_biased_gold_and_the_units_bug() -> None:
    # docs/math.md, Floors under deduplication: multinomial chunk counts, gold drawn in proportion to chunks (queries written
    # from sampled chunks): inferred N ≈ 185 of 218 files, 5.7 × the chunk-level analytic.
    counts = 1 + np.random.default_rng(0).multinomial(1052 - 218, np.full(218, 1 / 218))
    size_biased = [[d] for d in np.repeat(np.arange(218), counts)]
    inferred = infer_pool_size_under_dedup(counts, size_biased, metric="rr@10")
    mean_floor = inferred.floor.expected.mean()
    assert round(float(inferred.benchmark.estimate[0])) == 185
    assert round(mean_floor / (harmonic(10) / 1052), 1) == 5.7
    cv2 = counts.var() / counts.mean() ** 2
    assert mean_floor / (harmonic(10) / 218) == pytest.approx(1 + cv2, rel=0.01)


def test_inferred_pool_size_is_the_pool_without_chunks() -> None:
    gold = [[0], [1, 2], [0, 1, 2]]
    for n in (3, 8, 10, 218, 1052):
        for metric in ("rr@10", "rr", "hit@3"):
            if metric == "hit@3" and n < 3 + 3:
                continue  # Hit@3 is 1 whenever the pool fits: the size is not identified
            inferred = infer_pool_size_under_dedup(np.ones(n, dtype=np.int64), gold, metric=metric)
            np.testing.assert_allclose(inferred.per_query.estimate, n, rtol=1e-9)
            np.testing.assert_allclose(inferred.benchmark.estimate, n, rtol=1e-9)
    assert isinstance(inferred, InferredPoolSizeUnderDedup)
    assert inferred.per_query.metric == Metric("hit", 3)
    assert (inferred.documents, inferred.chunks) == (1052, 1052)


def test_inferred_pool_size_skips_queries_without_gold() -> None:
    counts = [2, 1, 3, 1, 1, 4, 2, 5, 1, 1, 1, 2]
    with pytest.warns(EvalValidityWarning, match="1 of 3 queries have no gold"):
        inferred = infer_pool_size_under_dedup(counts, [[0], [], [1, 2]])
    assert np.isnan(inferred.per_query.estimate[1])
    alone = infer_pool_size_under_dedup(counts, [[0], [1, 2]])
    np.testing.assert_allclose(
        inferred.per_query.estimate[[0, 2]], alone.per_query.estimate, rtol=1e-12
    )
    # The empty query scores 0 in the measured mean and in the model's mean alike.
    np.testing.assert_allclose(inferred.benchmark.estimate, alone.benchmark.estimate, rtol=1e-9)
    assert inferred.floor.expected[1] == 0.0


# ---------------------------------------------------------------------------- numerics


@pytest.mark.parametrize(("family", "k"), [("rr", None), ("rr", 10), ("hit", 10), ("rr", 100)])
def test_quadrature_has_converged(family: str, k: int | None) -> None:
    rng = np.random.default_rng(5)
    cases = [
        (1 + rng.poisson(3, 1400), [[0], [1, 2, 3], list(range(10, 49))]),
        (np.r_[3, np.full(2000, 1), np.full(20, 10**4)], [[0], [1], [2001]]),
        (1 + rng.geometric(0.2, 300), [[0], [1, 2]]),
        (np.ones(100_000, dtype=np.int64), [[0], [1, 2, 3, 4, 5]]),
    ]
    for counts, gold in cases:
        gold_arrays = [np.array(g) for g in gold]
        default = _exact_moments(family, k, counts, gold_arrays)
        fine = _exact_moments(family, k, counts, gold_arrays, nodes_per_panel=40)
        np.testing.assert_allclose(default[0], fine[0], rtol=1e-12)
        np.testing.assert_allclose(default[1], fine[1], rtol=1e-12)


def test_a_million_documents() -> None:
    rng = np.random.default_rng(2)
    counts = 1 + rng.poisson(3, 1_000_000)
    counts[:3] = 1
    floor = dedup_floor("rr@10", counts, [[0], [0, 1, 2], [int(np.argmax(counts))]])
    assert np.all(np.isfinite(floor.expected)) and np.all(floor.variance > 0)
    # 1-chunk gold documents among ~4 million chunks rank like chunks: G H_10 / chunks.
    chunks = counts.sum()
    assert floor.expected[0] == pytest.approx(harmonic(10) / chunks, rel=1e-5)
    assert floor.expected[1] == pytest.approx(3 * harmonic(10) / chunks, rel=1e-5)
    assert floor.expected[1] < floor.expected[2]


@settings(max_examples=25, deadline=None)
@given(
    counts=st.lists(st.integers(1, 6), min_size=2, max_size=12),
    k=st.integers(1, 6),
    data=st.data(),
)
def test_invariants(counts: list[int], k: int, data: st.DataObject) -> None:
    n = len(counts)
    gold = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    floor = dedup_floor(f"rr@{k}", counts, [gold])
    hit = dedup_floor(f"hit@{k}", counts, [gold])
    assert 0 < floor.expected[0] <= hit.expected[0] <= 1
    assert floor.variance[0] >= 0
    # A gold document gaining a chunk rises; a non-gold document gaining one pushes it down.
    more_gold = list(counts)
    more_gold[gold[0]] += 1
    assert dedup_floor(f"rr@{k}", more_gold, [gold]).expected[0] >= floor.expected[0] - 1e-14
    others = [d for d in range(n) if d not in gold]
    if others:
        more_other = list(counts)
        more_other[others[0]] += 1
        lower = dedup_floor(f"rr@{k}", more_other, [gold]).expected[0]
        assert lower <= floor.expected[0] + 1e-14
    # An extra document (1 chunk) never raises the floor.
    assert dedup_floor(f"rr@{k}", [*counts, 1], [gold]).expected[0] <= floor.expected[0] + 1e-14


def test_queries_are_independent_and_arguments_untouched() -> None:
    counts = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    gold = [np.array([1, 4]), np.array([7]), np.array([], dtype=np.int64)]
    before = (counts.copy(), [g.copy() for g in gold])
    with pytest.warns(EvalValidityWarning):
        together = dedup_floor("rr@3", counts, gold, judged=[2, 5, 1])
    alone = [dedup_floor("rr@3", counts, [g]).expected[0] for g in gold[:2]]
    np.testing.assert_allclose(together.expected[:2], alone, rtol=1e-14)
    np.testing.assert_array_equal(counts, before[0])
    for g, g0 in zip(gold, before[1], strict=True):
        np.testing.assert_array_equal(g, g0)
    assert isinstance(together, Floor) and together.metric == Metric("rr", 3)


def test_query_without_gold_warns_and_scores_zero() -> None:
    message = (
        "dedup_floor: 1 of 2 queries have no gold document in the pool (queries 1);"
        " their floor and ceiling are 0."
    )
    with pytest.warns(EvalValidityWarning, match=re.escape(message)):
        floor = dedup_floor("hit@10", [1, 2, 3], [[0], []])
    assert floor.expected.tolist()[1] == 0.0
    assert floor.variance.tolist()[1] == 0.0
    assert floor.ceiling.tolist() == [1.0, 0.0]


def test_whole_pool_gold_is_certain() -> None:
    floor = dedup_floor("rr@10", [2, 5, 1], [[0, 1, 2]])
    assert floor.expected.tolist() == [1.0] and floor.variance.tolist() == [0.0]
    hit = dedup_floor("hit@4", [2, 5, 1, 4], [[0]])
    assert hit.expected.tolist() == [1.0] and hit.variance.tolist() == [0.0]
    assert dedup_floor("hit@3", [2, 5, 1, 4], [[0]]).expected[0] < 1.0


# -------------------------------------------------------------------------------- Monte Carlo


@pytest.mark.parametrize("method", ["ranking", "race"])
def test_monte_carlo_interval_covers_the_exact_floor(method: str) -> None:
    rng = np.random.default_rng(21)
    counts = 1 + rng.poisson(3, 400)
    gold = [np.array([0]), np.array([1, 2, 3]), np.array([4, 5])]
    for spelling in ("rr@10", "hit@10"):
        exact = dedup_floor(spelling, counts, gold)
        mc = dedup_floor_mc(spelling, counts, gold, n_draws=20_000, rng=rng, method=method)
        low, high = mc.interval(0.99994)  # ± 4 standard errors
        assert np.all((low <= exact.expected) & (exact.expected <= high)), spelling
        # RR's variance rests on rare early positions: a loose check only.
        np.testing.assert_allclose(mc.floor.variance, exact.variance, rtol=0.5)
        np.testing.assert_allclose(mc.std_error, np.sqrt(mc.floor.variance / 20_000))
        mean_low, mean_high = mc.mean_interval(0.99994)
        assert mean_low <= exact.expected.mean() <= mean_high
        assert mc.n_draws == 20_000


@pytest.mark.parametrize("method", ["ranking", "race"])
def test_monte_carlo_agrees_with_chunk_level_brute_force(method: str) -> None:
    rng = np.random.default_rng(8)
    counts = rng.integers(1, 7, size=25)
    gold = [np.array([0]), np.array([1, 2, 3]), np.array([4, 5, 6, 7, 8])]
    judged = [1, 4, 5]  # query 1 has a judged relevant document outside the pool
    n = 20_000
    positions = chunk_level_positions(counts, n, rng)
    brute = {"p@5": [], "ap": []}
    for docs, r in zip(gold, judged, strict=True):
        pos = np.sort(positions[:, docs], axis=1)
        brute["p@5"].append((pos <= 5).sum(axis=1) / 5)
        brute["ap"].append((np.arange(1, len(docs) + 1) / pos).sum(axis=1) / r)
    for spelling, samples in brute.items():
        mc = dedup_floor_mc(
            spelling, counts, gold, judged=judged, n_draws=n, rng=rng, method=method
        )
        for q, sample in enumerate(samples):
            se = math.hypot(mc.std_error[q], sample.std() / math.sqrt(n))
            assert abs(mc.floor.expected[q] - sample.mean()) < 4 * se, (spelling, q)


def test_monte_carlo_methods_agree_on_graded_ndcg() -> None:
    rng = np.random.default_rng(4)
    counts = rng.integers(1, 10, size=60)
    gold = [np.array([0, 1, 2]), np.array([3])]
    gains = [np.array([3, 1, 2]), np.array([2])]
    runs = [
        dedup_floor_mc(
            "ndcg@10", counts, gold, gains=gains, n_draws=20_000, rng=seed, method=method
        )
        for seed, method in ((1, "ranking"), (2, "race"))
    ]
    se = np.hypot(runs[0].std_error, runs[1].std_error)
    assert np.all(np.abs(runs[0].floor.expected - runs[1].floor.expected) < 4 * se)
    # The threshold applies to the grades: only the grade-3 document is relevant at rel>=3.
    strict = dedup_floor_mc(
        "hit@10[rel>=3]", counts, gold[:1], gains=gains[:1], n_draws=20_000, rng=3
    )
    exact = dedup_floor("hit@10", counts, [np.array([0])])
    assert abs(strict.floor.expected[0] - exact.expected[0]) < 4 * strict.std_error[0]


def test_monte_carlo_ceiling_and_reproducibility() -> None:
    counts = [2, 1, 3, 1, 1, 4, 2]
    gold = [[0, 1, 2], [3]]
    p = dedup_floor_mc("p@5", counts, gold, n_draws=50, rng=5)
    assert p.floor.ceiling.tolist() == [0.6, 0.2]
    r = dedup_floor_mc("r@2", counts, gold, judged=[4, 1], n_draws=50, rng=5)
    assert r.floor.ceiling.tolist() == [0.5, 1.0]
    ap = dedup_floor_mc("ap", counts, gold, judged=[4, 2], n_draws=50, rng=5)
    assert ap.floor.ceiling.tolist() == [0.75, 0.5]
    again = dedup_floor_mc(
        "ap", counts, gold, judged=[4, 2], n_draws=50, rng=np.random.default_rng(5)
    )
    np.testing.assert_array_equal(ap.floor.expected, again.floor.expected)
    assert isinstance(ap, DedupMonteCarlo) and ap.n_draws == 50


def test_monte_carlo_without_gold_warns() -> None:
    with pytest.warns(EvalValidityWarning, match=r"dedup_floor_mc: 1 of 2 queries"):
        mc = dedup_floor_mc("p@5", [1, 2, 3], [[0], []], n_draws=10, rng=0)
    assert mc.floor.expected[1] == 0.0 and mc.std_error[1] == 0.0
    assert mc.floor.ceiling.tolist() == [0.2, 0.0]


# ----------------------------------------------------------------------------- error messages

_COUNTS = "The 'chunk_counts' parameter of dedup_floor must be a non-empty 1-D array of ints >= 1 (chunks per document)."
_JUDGED = (
    "The 'judged' parameter of dedup_floor must give, for each of the 2 queries, the number of"
    " judged relevant documents: an int >= the query's gold documents in the pool."
)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"metric": "p@5"},
            "The 'metric' parameter of dedup_floor must be rr, rr@k or hit@k, the metrics with an"
            " exact floor under deduplication (dedup_floor_mc estimates the others)."
            " Got 'p@5' instead.",
        ),
        (
            {"metric": 10},
            "The 'metric' parameter of dedup_floor must be a Metric or its spelling."
            " Got int instead.",
        ),
        ({"chunk_counts": [[1, 2], [3, 4]]}, f"{_COUNTS} Got an array of shape (2, 2) instead."),
        ({"chunk_counts": []}, f"{_COUNTS} Got an array of shape (0,) instead."),
        ({"chunk_counts": [1.0, 2.0, 3.0]}, f"{_COUNTS} Got dtype float64 instead."),
        ({"chunk_counts": [1, 2, 0]}, f"{_COUNTS} Got 0 at index 2 instead."),
        (
            {"gold": 3},
            "The 'gold' parameter of dedup_floor must be a sequence with one array of document"
            " indices per query. Got int instead.",
        ),
        (
            {"gold": []},
            "The 'gold' parameter of dedup_floor must name the gold documents of at least one"
            " query. Got no query instead.",
        ),
        (
            {"gold": [0, 1]},
            "The 'gold' parameter of dedup_floor must hold one 1-D array of document indices"
            " (ints) per query. Got shape () for gold[0] instead.",
        ),
        (
            {"gold": [[0], [0.5]]},
            "The 'gold' parameter of dedup_floor must hold one 1-D array of document indices"
            " (ints) per query. Got dtype float64 for gold[1] instead.",
        ),
        (
            {"gold": [[0], [3]]},
            "The 'gold' parameter of dedup_floor must hold document indices in [0, 3)."
            " Got 3 in gold[1] instead.",
        ),
        (
            {"gold": [[1, 1]]},
            "The 'gold' parameter of dedup_floor must not name a document twice for one query."
            " Got document 1 twice in gold[0] instead.",
        ),
        ({"judged": [1]}, f"{_JUDGED} Got an array of shape (1,) and dtype int64 instead."),
        (
            {"judged": [1, 1]},
            f"{_JUDGED} Got 1 for query 1, which has 2 gold documents in the pool, instead.",
        ),
    ],
)
def test_dedup_floor_error_messages(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "metric": "rr@10",
        "chunk_counts": [1, 2, 3],
        "gold": [[0], [1, 2]],
    }
    arguments.update(kwargs)
    judged = arguments.pop("judged", None)
    with pytest.raises(ParameterError, match=re.escape(message)):
        dedup_floor(
            arguments["metric"],
            arguments["chunk_counts"],
            arguments["gold"],  # type: ignore[arg-type]
            judged=judged,
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"n_draws": 1},
            "The 'n_draws' parameter of dedup_floor_mc must be an int >= 2. Got 1 instead.",
        ),
        (
            {"rng": None},
            "The 'rng' parameter of dedup_floor_mc must be a numpy.random.Generator or an int"
            " seed >= 0. Got None instead.",
        ),
        (
            {"method": "sort"},
            "The 'method' parameter of dedup_floor_mc must be one of auto, ranking, race."
            " Got 'sort' instead.",
        ),
        (
            {"gains": [[1]]},
            "The 'gains' parameter of dedup_floor_mc must hold one array of grades per query"
            " (2 queries). Got list of length 1 instead.",
        ),
        (
            {"gains": [[1], [1]]},
            "The 'gains' parameter of dedup_floor_mc must give one int grade per gold document."
            " Got shape (1,) and dtype int64 for gains[1], whose gold has 2 documents, instead.",
        ),
        (
            {"gains": [[1], [0, 2]]},
            "The 'gains' parameter of dedup_floor_mc must hold grades >= 1 (gold documents are"
            " judged relevant). Got 0 in gains[1] instead.",
        ),
        (
            {"gains": [[1], [2, 2]], "judged": [1, 3]},
            "The 'judged' parameter of dedup_floor_mc must equal the gold documents in the pool"
            " when 'gains' are given and ndcg@10 depends on grades: the grades of judged"
            " documents outside the pool are unknown. Got 3 for query 1, which has 2 gold"
            " documents in the pool, instead.",
        ),
        (
            {"metric": "p@5[rel>=2]"},
            "The 'gains' parameter of dedup_floor_mc is needed for p@5[rel>=2]: without it"
            " every gold document has grade 1, below the threshold 2.",
        ),
        (
            {"metric": "ndcg@0"},
            "Cannot read the metric 'ndcg@0': the cutoff must be a whole number >= 1,"
            " as in ndcg@10.",
        ),
    ],
)
def test_dedup_floor_mc_error_messages(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "metric": "ndcg@10",
        "chunk_counts": [1, 2, 3],
        "gold": [[0], [1, 2]],
        "n_draws": 10,
        "rng": 0,
    }
    arguments.update(kwargs)
    metric = arguments.pop("metric")
    counts = arguments.pop("chunk_counts")
    gold = arguments.pop("gold")
    with pytest.raises(ParameterError, match=re.escape(message)):
        dedup_floor_mc(metric, counts, gold, **arguments)  # type: ignore[arg-type]


def test_other_error_messages() -> None:
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The 'metric' parameter of infer_pool_size_under_dedup must be rr, rr@k or"
            " hit@k, the metrics with an exact floor under deduplication (dedup_floor_mc"
            " estimates the others). Got 'ap' instead."
        ),
    ):
        infer_pool_size_under_dedup([1, 2], [[0]], metric="ap")
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The 'gold' parameter of infer_pool_size_under_dedup must give at least one"
            " query a gold document in the pool: a query without one scores 0 whatever the"
            " pool size. Got none instead."
        ),
    ):
        infer_pool_size_under_dedup([1, 2], [[], []])
    mc = dedup_floor_mc("p@1", [1, 2], [[0]], n_draws=10, rng=0)
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "The 'confidence' parameter of DedupMonteCarlo.interval must be a float in (0, 1)."
            " Got 1.5 instead."
        ),
    ):
        mc.interval(1.5)
