"""Tests of evalvalidity.core.embed and analysis.live: the default embedder, norm-keeping noise, exact cosine top-k."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalvalidity.core import embed
from evalvalidity.core.embed import (
    HashingEmbedder,
    Ranking,
    embed_and_rank,
    exact_cosine_topk,
    noise_like,
)
from evalvalidity.errors import ParameterError

FILLER = [f"common{i}" for i in range(40)]


def toy_benchmark(n: int, seed: int = 0) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """n documents of three rare and three common words; query i has document i's rare words.

    The hashing embedder has no IDF and 256 signed buckets, so every shared common word and
    every bucket collision counts as much as a shared rare word: queries are kept short.
    """
    rng = np.random.default_rng(seed)
    corpus: dict[str, str] = {}
    queries: dict[str, str] = {}
    gold: dict[str, str] = {}
    for i in range(n):
        rare = [f"rare{i}w{j}" for j in range(3)]
        words = rare + [str(w) for w in rng.choice(FILLER, size=3)]
        rng.shuffle(words)
        corpus[f"d{i}"] = " ".join(words)
        queries[f"q{i}"] = " ".join([rare[2], rare[0], str(rng.choice(FILLER)), rare[1]])
        gold[f"q{i}"] = f"d{i}"
    return corpus, queries, gold


def top1_hits(ranking: Ranking, gold: dict[str, str]) -> int:
    first = ranking.rank == 1
    return sum(gold[q] == d for q, d in zip(ranking.qid[first], ranking.docid[first], strict=True))


def reference_topk(
    queries: np.ndarray, corpus: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Full sort of float64 cosine scores: score descending, then index ascending."""
    q = queries.astype(np.float64)
    c = corpus.astype(np.float64)
    qn = np.linalg.norm(q, axis=1, keepdims=True)
    cn = np.linalg.norm(c, axis=1)
    scores = np.where(qn > 0, q / np.where(qn > 0, qn, 1), 0) @ c.T
    scores = scores * np.where(cn > 0, 1 / np.where(cn > 0, cn, 1), 0)
    order = np.array([np.lexsort((np.arange(c.shape[0]), -row))[:k] for row in scores])
    return order, np.take_along_axis(scores, order, axis=1)


def blake(feature: str, seed: int) -> int:
    digest = hashlib.blake2b(
        feature.encode("utf-8"), digest_size=8, key=seed.to_bytes(8, "little")
    ).digest()
    return int.from_bytes(digest, "little")


# ------------------------------------------------------------------------------------ embedder


def test_embedder_shape_dtype_and_unit_rows() -> None:
    vectors = HashingEmbedder()(["A quick test.", "", "!!!", "Another, longer text with words"])
    assert vectors.shape == (4, 256)
    assert vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 0.0, 0.0, 1.0], abs=1e-6)


def test_embedder_follows_the_documented_hash() -> None:
    embed = HashingEmbedder(dim=16, ngram_range=(1, 1), seed=5)
    h = blake("zebra", 5)
    expected = np.zeros(16, dtype=np.float32)
    expected[h % 16] = -1.0 if h >> 63 else 1.0
    assert embed(["Zebra"])[0].tolist() == expected.tolist()


def test_embedder_uses_sublinear_term_frequency() -> None:
    embed = HashingEmbedder(dim=64, ngram_range=(1, 1), seed=1)
    alpha, beta = blake("alpha", 1) % 64, blake("beta", 1) % 64
    assert alpha != beta  # precondition of this seed and dim
    vector = embed(["alpha alpha beta alpha alpha"])[0]
    assert abs(vector[alpha]) / abs(vector[beta]) == pytest.approx(1 + math.log(4), rel=1e-6)


def test_embedder_lowercases_tokenises_and_uses_bigrams() -> None:
    unigrams = HashingEmbedder(ngram_range=(1, 1))
    bigrams = HashingEmbedder(ngram_range=(1, 2))
    assert np.array_equal(bigrams(["Hello, WORLD!"]), bigrams(["hello world"]))
    assert np.array_equal(unigrams(["dog bites man"]), unigrams(["man bites dog"]))
    assert not np.array_equal(bigrams(["dog bites man"]), bigrams(["man bites dog"]))
    only_bigrams = HashingEmbedder(ngram_range=(2, 2))
    assert not only_bigrams(["single"]).any()


def test_embedder_seed_changes_the_hash() -> None:
    text = ["the seed selects the hash function"]
    assert not np.array_equal(HashingEmbedder(seed=0)(text), HashingEmbedder(seed=1)(text))
    assert np.array_equal(HashingEmbedder(seed=1)(text), HashingEmbedder(seed=1)(text))


def test_embedder_is_deterministic_across_processes() -> None:
    texts = ["Alpha beta", "gamma delta epsilon gamma", "ünïcode wörds ΑΒΓ", ""]
    here = hashlib.sha256(HashingEmbedder(dim=64, seed=3)(texts).tobytes()).hexdigest()
    code = (
        "import hashlib\n"
        "from evalvalidity.core.embed import HashingEmbedder\n"
        f"v = HashingEmbedder(dim=64, seed=3)({texts!r})\n"
        "print(hashlib.sha256(v.tobytes()).hexdigest())\n"
    )
    for hash_seed in ("1", "4242"):
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            timeout=60,
        )
        assert result.stdout.strip() == here


@pytest.mark.parametrize("module", ["evalvalidity.core.embed", "evalvalidity.analysis.live"])
def test_live_needs_numpy_only(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "print(sorted(m for m in ('scipy', 'pandas', 'pyarrow', 'duckdb') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_embedder_finds_the_document_sharing_rare_words() -> None:
    corpus = {
        "cooking": "the recipe needs flour, butter and a pinch of saffron",
        "space": "the probe reached the heliopause after decades in flight",
        "finance": "the central bank raised interest rates in the report",
        "biology": "the tardigrade survives desiccation and the vacuum of space",
    }
    queries = {
        "q1": "which animal survives desiccation",
        "q2": "saffron in a recipe",
        "q3": "when did the probe reach the heliopause",
    }
    ranking = embed_and_rank(HashingEmbedder(), corpus, queries, k=1, noise=False)
    assert ranking.docid.tolist() == ["biology", "cooking", "space"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dim": 0}, "The 'dim' parameter of HashingEmbedder must be an int >= 1. Got 0 instead."),
        (
            {"ngram_range": (2, 1)},
            "The 'ngram_range' parameter of HashingEmbedder must be a tuple (low, high) of ints with 1 <= low <= high. Got (2, 1) instead.",
        ),
        (
            {"ngram_range": [1, 2]},
            "The 'ngram_range' parameter of HashingEmbedder must be a tuple (low, high) of ints with 1 <= low <= high. Got [1, 2] instead.",
        ),
        (
            {"seed": -1},
            "The 'seed' parameter of HashingEmbedder must be an int in [0, 2**64). Got -1 instead.",
        ),
    ],
)
def test_embedder_parameter_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        HashingEmbedder(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ("a single string", "HashingEmbedder must be called on a list of str. Got str instead."),
        (
            ["fine", 3],
            "HashingEmbedder must be called on a list of str. Got int at position 1 instead.",
        ),
    ],
)
def test_embedder_call_errors(texts: Any, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        HashingEmbedder()(texts)
    assert str(info.value) == message


# --------------------------------------------------------------------------------------- noise


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_noise_keeps_shape_dtype_and_row_norms(dtype: type) -> None:
    rng = np.random.default_rng(1)
    vectors: np.ndarray = (rng.normal(size=(50, 24)) * rng.uniform(0.1, 10, size=(50, 1))).astype(
        dtype
    )
    vectors[7] = 0.0
    before = vectors.copy()
    noise = noise_like(vectors, rng=np.random.default_rng(2))
    assert noise.shape == vectors.shape
    assert noise.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    assert np.linalg.norm(noise, axis=1) == pytest.approx(
        np.linalg.norm(vectors, axis=1), rel=tolerance
    )
    assert not noise[7].any()
    assert np.array_equal(vectors, before)
    cosines = (
        np.sum(noise * vectors, axis=1)[vectors.any(axis=1)]
        / (np.linalg.norm(noise, axis=1) * np.linalg.norm(vectors, axis=1))[vectors.any(axis=1)]
    )
    assert abs(cosines.mean()) < 0.1  # directions unrelated to the originals


def test_noise_directions_are_isotropic_and_seeded() -> None:
    vectors = np.tile([[3.0, 4.0, 0.0]], (4_000, 1))
    noise = noise_like(vectors, rng=7)
    assert np.abs(noise.mean(axis=0)).max() < 0.15  # E = 0; each coordinate has sd 5/sqrt(3)
    assert np.array_equal(noise, noise_like(vectors, rng=np.random.default_rng(7)))
    assert not np.array_equal(noise, noise_like(vectors, rng=8))


def test_noise_of_integer_vectors_is_float64() -> None:
    noise = noise_like(np.array([[1, 2], [0, 0]]), rng=0)
    assert noise.dtype == np.float64
    assert np.linalg.norm(noise, axis=1) == pytest.approx([math.sqrt(5), 0.0])


@pytest.mark.parametrize(
    ("vectors", "rng", "message"),
    [
        (
            [1.0, 2.0],
            0,
            "The 'vectors' parameter of noise_like must be a 2-D array of numbers (one vector per row). Got 1-D float64 instead.",
        ),
        (
            [[1.0, math.nan]],
            0,
            "The 'vectors' parameter of noise_like must hold finite numbers. Got 1 NaN or infinite value(s) instead, the first in row 0.",
        ),
        (
            [[1.0]],
            None,
            "The 'rng' parameter of noise_like must be a numpy.random.Generator or an int seed >= 0. Got None instead.",
        ),
        (
            [[1.0]],
            1.5,
            "The 'rng' parameter of noise_like must be a numpy.random.Generator, an int seed >= 0 or None. Got 1.5 instead.",
        ),
    ],
)
def test_noise_errors(vectors: Any, rng: Any, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        noise_like(vectors, rng=rng)
    assert str(info.value) == message


# ---------------------------------------------------------------------------------- cosine top-k


@pytest.mark.parametrize("batch_size", [1, 3, None, 1_000])
@pytest.mark.parametrize("k", [1, 7, 120, 150])
def test_topk_equals_a_full_sort(batch_size: int | None, k: int) -> None:
    rng = np.random.default_rng(10)
    queries = rng.normal(size=(11, 16))
    corpus = rng.normal(size=(120, 16)) * rng.uniform(0.5, 2.0, size=(120, 1))
    indices, scores = exact_cosine_topk(queries, corpus, k, batch_size=batch_size)
    expected_indices, expected_scores = reference_topk(queries, corpus, k)
    assert indices.shape == (11, min(k, 120))
    assert indices.dtype == np.int64
    assert scores.dtype == np.float64
    assert np.array_equal(indices, expected_indices)
    assert scores == pytest.approx(expected_scores, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("batch_size", [1, 4, None])
@pytest.mark.parametrize("k", [1, 5, 13, 30, 60])
def test_topk_breaks_ties_by_corpus_index(batch_size: int | None, k: int) -> None:
    # Every corpus row is a basis vector, so scores tie exactly within each basis group and the
    # cut at k falls inside a group of ties.
    rng = np.random.default_rng(11)
    corpus = np.eye(4)[rng.integers(0, 4, size=60)]
    queries = np.vstack([rng.normal(size=(6, 4)), np.zeros((1, 4))])
    indices, _ = exact_cosine_topk(queries, corpus, k, batch_size=batch_size)
    expected, _ = reference_topk(queries, corpus, k)
    assert np.array_equal(indices, expected)
    assert indices[-1].tolist() == list(range(k))  # a zero query ties everything at 0


def test_topk_in_float32_and_with_zero_corpus_rows() -> None:
    rng = np.random.default_rng(12)
    queries = rng.normal(size=(5, 32)).astype(np.float32)
    corpus = rng.normal(size=(200, 32)).astype(np.float32)
    corpus[3] = 0.0
    indices, scores = exact_cosine_topk(queries, corpus, 200)
    expected_indices, expected_scores = reference_topk(queries, corpus, 200)
    assert np.array_equal(indices[:, :10], expected_indices[:, :10])
    assert scores == pytest.approx(expected_scores, abs=1e-6)
    assert scores[indices == 3] == pytest.approx(0.0)


def test_topk_default_batches_split_a_large_query_set(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(13)
    queries, corpus = rng.normal(size=(9, 8)), rng.normal(size=(30, 8))
    whole = exact_cosine_topk(queries, corpus, 5)
    monkeypatch.setattr(embed, "_SCORE_BLOCK", 64)  # two queries per batch
    split = exact_cosine_topk(queries, corpus, 5)
    assert np.array_equal(whole[0], split[0])
    # BLAS may round a product differently for another batch shape.
    assert whole[1] == pytest.approx(split[1], rel=1e-12)


def test_topk_with_no_queries() -> None:
    indices, scores = exact_cosine_topk(np.zeros((0, 3)), np.eye(3), 2)
    assert indices.shape == scores.shape == (0, 2)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (
            ([[1.0, 0.0]], [[1.0, 0.0, 0.0]], 1),
            {},
            "The query and corpus vectors given to exact_cosine_topk must have the same dimension. Got 2 and 3 instead.",
        ),
        (
            ([[1.0]], np.zeros((0, 1)), 1),
            {},
            "The 'corpus_vectors' parameter of exact_cosine_topk must hold at least one vector. Got 0 instead.",
        ),
        (
            ([[1.0]], [[1.0]], 0),
            {},
            "The 'k' parameter of exact_cosine_topk must be an int >= 1. Got 0 instead.",
        ),
        (
            ([[1.0]], [[1.0]], 1),
            {"batch_size": 0},
            "The 'batch_size' parameter of exact_cosine_topk must be an int >= 1. Got 0 instead.",
        ),
        (
            ([["a"]], [[1.0]], 1),
            {},
            "The 'query_vectors' parameter of exact_cosine_topk must be a 2-D array of numbers (one vector per row). Got 2-D <U1 instead.",
        ),
        (
            ([[1.0]], [[math.inf]], 1),
            {},
            "The 'corpus_vectors' parameter of exact_cosine_topk must hold finite numbers. Got 1 NaN or infinite value(s) instead, the first in row 0.",
        ),
    ],
)
def test_topk_errors(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        exact_cosine_topk(*args, **kwargs)
    assert str(info.value) == message


# -------------------------------------------------------------------------------- embed_and_rank


def test_ranking_layout() -> None:
    corpus, queries, _ = toy_benchmark(12)
    ranking = embed_and_rank(HashingEmbedder(), corpus, queries, k=5, noise=False)
    assert len(ranking) == 12 * 5
    assert not ranking.noise
    assert ranking.qid.tolist() == [q for q in queries for _ in range(5)]
    assert ranking.rank.tolist() == [1, 2, 3, 4, 5] * 12
    assert ranking.rank.dtype == np.int64
    assert ranking.score.dtype == np.float64
    assert set(ranking.docid.tolist()) <= set(corpus)
    per_query = ranking.score.reshape(12, 5)
    assert (np.diff(per_query, axis=1) <= 0).all()
    for query in queries:  # no document twice for one query
        assert len(set(ranking.docid[ranking.qid == query].tolist())) == 5
    with pytest.raises(ValueError, match="read-only"):
        ranking.score[0] = 1.0
    capped = embed_and_rank(HashingEmbedder(), corpus, queries, k=100, noise=False)
    assert len(capped) == 12 * 12


def test_ranking_does_not_freeze_the_callers_arrays() -> None:
    score = np.array([0.5, 0.25])
    ranking = Ranking(
        np.array(["q", "q"], dtype=object),
        np.array(["a", "b"], dtype=object),
        score,
        np.array([1, 2]),
        noise=False,
    )
    score[0] = 0.75  # still writable by its owner
    assert not ranking.score.flags.writeable
    with pytest.raises(ParameterError, match=r"one entry per row\. Got lengths 2, 2, 2 and 1"):
        Ranking(ranking.qid, ranking.docid, ranking.score, np.array([1]), noise=False)


def test_pairs_and_mappings_give_the_same_ranking() -> None:
    corpus, queries, _ = toy_benchmark(10)
    from_mapping = embed_and_rank(HashingEmbedder(), corpus, queries, k=3, noise=True, rng=4)
    from_pairs = embed_and_rank(
        HashingEmbedder(),
        list(corpus.items()),
        list(queries.items()),
        k=3,
        noise=True,
        rng=np.random.default_rng(4),
    )
    for field in ("qid", "docid", "score", "rank"):
        assert np.array_equal(getattr(from_mapping, field), getattr(from_pairs, field))


def test_real_ranking_finds_the_gold_and_noise_ranking_is_at_chance() -> None:
    corpus, queries, gold = toy_benchmark(100)
    real = embed_and_rank(HashingEmbedder(), corpus, queries, k=10, noise=False)
    assert top1_hits(real, gold) >= 90
    hits = 0
    reciprocal_ranks = []
    for seed in range(3):
        noisy = embed_and_rank(HashingEmbedder(), corpus, queries, k=10, noise=True, rng=seed)
        assert noisy.noise
        hits += top1_hits(noisy, gold)
        found = np.array([gold[q] == d for q, d in zip(noisy.qid, noisy.docid, strict=True)])
        reciprocal_ranks.append(np.sum(found / noisy.rank) / len(queries))
        # The noise ranking is a different ranking, not the real one reshuffled a little.
        assert np.mean(noisy.docid[noisy.rank == 1] == real.docid[real.rank == 1]) < 0.1
    # Chance is 1 % top-1 (3 expected of 300) and MRR@10 = H_10 / 100 = 0.029.
    assert hits <= 10
    assert np.mean(reciprocal_ranks) < 0.07


def test_noise_replaces_both_query_and_corpus_vectors() -> None:
    corpus = {"a": "same words here", "b": "same words here", "c": "other text entirely"}
    queries = {"q1": "same words", "q2": "same words"}
    real = embed_and_rank(HashingEmbedder(), corpus, queries, k=3, noise=False)
    noisy = embed_and_rank(HashingEmbedder(), corpus, queries, k=3, noise=True, rng=0)
    real_scores = real.score.reshape(2, 3)
    noisy_scores = noisy.score.reshape(2, 3)
    # Identical texts: identical real vectors, independent noise vectors.
    assert np.array_equal(real_scores[0], real_scores[1])
    assert not np.array_equal(noisy_scores[0], noisy_scores[1])
    assert real_scores[0, 0] == real_scores[0, 1]
    assert noisy_scores[0, 0] != noisy_scores[0, 1]


def test_noise_is_seeded() -> None:
    corpus, queries, _ = toy_benchmark(20)
    first = embed_and_rank(HashingEmbedder(), corpus, queries, k=5, noise=True, rng=1)
    again = embed_and_rank(HashingEmbedder(), corpus, queries, k=5, noise=True, rng=1)
    other = embed_and_rank(HashingEmbedder(), corpus, queries, k=5, noise=True, rng=2)
    assert np.array_equal(first.docid, again.docid)
    assert not np.array_equal(first.docid, other.docid)


def test_embed_is_called_once_per_side_with_lists() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return HashingEmbedder(dim=32)(texts)

    embed_and_rank(embed, {"d1": "x", "d2": "y"}, {"q": "x"}, k=1, noise=False)
    assert calls == [["x", "y"], ["x"]]


def test_errors_raised_inside_embed_propagate_unchanged() -> None:
    def embed(texts: list[str]) -> np.ndarray:
        raise ValueError("model not loaded")

    with pytest.raises(ValueError, match=r"^model not loaded$"):
        embed_and_rank(embed, {"d1": "x"}, {"q": "x"}, k=1, noise=False)


def returning(value: Any) -> Callable[[list[str]], Any]:
    return lambda texts: value


@pytest.mark.parametrize(
    ("embed", "message"),
    [
        (
            returning(np.ones(2)),
            "embed must return a 2-D array of numbers of shape (2, dim) for the 2 corpus texts. Got shape (2,) instead.",
        ),
        (
            returning(np.ones((3, 4))),
            "embed must return a 2-D array of numbers of shape (2, dim) for the 2 corpus texts. Got shape (3, 4) instead.",
        ),
        (
            returning(np.ones((2, 0))),
            "embed must return a 2-D array of numbers of shape (2, dim) for the 2 corpus texts. Got shape (2, 0) instead.",
        ),
        (
            returning(np.array([["a", "b"], ["c", "d"]])),
            "embed must return a 2-D array of numbers of shape (2, dim) for the 2 corpus texts. Got dtype <U1 instead.",
        ),
        (
            returning([[1.0, 2.0], [1.0]]),
            "embed must return a 2-D array of numbers of shape (2, dim) for the 2 corpus texts. Got rows of different lengths instead.",
        ),
        (
            returning(np.array([[1.0, 0.0], [np.nan, 1.0]])),
            "embed must return finite numbers. Got 1 NaN or infinite value(s) for the corpus texts, the first for 'd2'.",
        ),
        (
            lambda texts: np.ones((len(texts), 3 if len(texts) == 2 else 4)),
            "embed must return vectors of one dimension. Got 3 for the corpus and 4 for the queries instead.",
        ),
        (
            lambda texts: np.ones((len(texts), 3)) if len(texts) == 2 else np.ones((2, 3)),
            "embed must return a 2-D array of numbers of shape (1, dim) for the 1 query texts. Got shape (2, 3) instead.",
        ),
    ],
)
def test_embed_output_errors(embed: Callable[[list[str]], Any], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        embed_and_rank(embed, {"d1": "x", "d2": "y"}, {"q": "x"}, k=1, noise=False)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("corpus", "queries", "kwargs", "message"),
    [
        ({}, {"q": "x"}, {}, "The 'corpus' parameter of embed_and_rank must not be empty."),
        (
            "text",
            {"q": "x"},
            {},
            "The 'corpus' parameter of embed_and_rank must be a mapping from id to text or a sequence of (id, text) pairs. Got str instead.",
        ),
        (
            [("d1", "x"), ("d1", "y")],
            {"q": "x"},
            {},
            "The 'corpus' parameter of embed_and_rank holds the id 'd1' twice (positions 0 and 1).",
        ),
        (
            [("d1", "x"), ("d2",)],
            {"q": "x"},
            {},
            "Every entry of the 'corpus' parameter of embed_and_rank must be an (id, text) pair of str. Got ('d2',) at position 1 instead.",
        ),
        (
            {"d1": "x"},
            {"q": 3},
            {},
            "Every entry of the 'queries' parameter of embed_and_rank must be an (id, text) pair of str. Got ('q', 3) at position 0 instead.",
        ),
        (
            {"d1": "x"},
            {"q": "x"},
            {"k": 0},
            "The 'k' parameter of embed_and_rank must be an int >= 1. Got 0 instead.",
        ),
        (
            {"d1": "x"},
            {"q": "x"},
            {"noise": 1},
            "The 'noise' parameter of embed_and_rank must be a bool. Got 1 instead.",
        ),
        (
            {"d1": "x"},
            {"q": "x"},
            {"embed": "model"},
            "The 'embed' parameter of embed_and_rank must be callable as embed(texts: list[str]). Got str instead.",
        ),
    ],
)
def test_embed_and_rank_argument_errors(
    corpus: Any, queries: Any, kwargs: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"embed": HashingEmbedder(), "k": 1, "noise": False, **kwargs}
    embed = arguments.pop("embed")
    with pytest.raises(ParameterError) as info:
        embed_and_rank(embed, corpus, queries, **arguments)
    assert str(info.value) == message


# ------------------------------------------------------------------- the command line, end to end
LIVE = Path(__file__).resolve().parent.parent / "data" / "live"


def _live_cli(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "evalvalidity",
            "live",
            "--corpus",
            str(LIVE / "corpus.jsonl"),
            "--queries",
            str(LIVE / "queries.jsonl"),
            "--qrels",
            str(LIVE / "qrels.tsv"),
            "--seeds",
            "4",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "embedder",
    [
        "hashing",
        pytest.param(
            "wordllama",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("wordllama") is None,
                reason="the live extra (wordllama) is not installed",
            ),
        ),
    ],
)
def test_live_cli_end_to_end(embedder: str) -> None:
    result = _live_cli("--embedder", embedder, "--format", "json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    live = record["checks"]["live"]
    assert record["embedder"] == embedder
    assert record["n_queries"] == 55
    assert live["source"] == "live"
    # the model finds the docstrings' bodies far above chance; the noise sits at the floor
    assert record["model_score"] > 5 * record["floor"]
    assert live["noise"] < 3 * record["floor"]
    assert record["verdict"] == "healthy"
    assert "Embedding the corpus and the queries" in result.stderr


def test_live_cli_text_and_gate() -> None:
    result = _live_cli("--format", "text", "--fail-on", "warning")
    assert result.returncode in (0, 1)
    assert result.stdout.startswith("embedder: hashing\nverdict: ")
    assert "check 2 (live): noise" in result.stdout
    assert result.returncode == (0 if "verdict: HEALTHY" in result.stdout else 1)


def test_live_cli_bad_embedder_exits_2() -> None:
    result = _live_cli("--embedder", "no_such_module_xyz:embed")
    assert result.returncode == 2
    assert (
        "Cannot import the module 'no_such_module_xyz' of the embedder "
        "'no_such_module_xyz:embed'" in result.stderr
    )


def test_live_cli_bad_corpus_line_names_file_and_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "text": "fine"}\n{"_id": "d2"}\n', encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalvalidity",
            "live",
            "--corpus",
            str(corpus),
            "--queries",
            str(LIVE / "queries.jsonl"),
            "--qrels",
            str(LIVE / "qrels.tsv"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert 'corpus.jsonl:2: expected an object with an id ("_id" or "id") and a "text" string' in (
        result.stderr
    )


def test_sentence_transformers_missing_model_is_a_clear_error() -> None:
    if importlib.util.find_spec("sentence_transformers") is None:
        with pytest.raises(ParameterError) as info:
            embed.load_embedder("sentence-transformers:all-MiniLM-L6-v2")
        assert str(info.value) == (
            "The sentence-transformers embedder needs the 'sentence_transformers' package, "
            "which is not installed: pip install sentence-transformers."
        )
    else:
        with pytest.raises(ParameterError) as info:
            embed.load_embedder("sentence-transformers:/no/such/model/folder")
        assert "is not available locally" in str(info.value)


def test_user_embedder_by_module_and_function() -> None:
    loaded = embed.load_embedder("evalvalidity.core.embed:HashingEmbedder")
    assert isinstance(loaded, HashingEmbedder)
    with pytest.raises(ParameterError) as info:
        embed.load_embedder("hashing-but-wrong")
    assert str(info.value) == (
        "The embedder must be hashing, wordllama, sentence-transformers:MODEL or "
        "module:function. Got 'hashing-but-wrong' instead."
    )


def test_read_texts_tsv_and_duplicates(tmp_path: Path) -> None:
    from evalvalidity.analysis.live import read_texts
    from evalvalidity.errors import FileFormatError

    path = tmp_path / "queries.tsv"
    path.write_text("q1\twhat is lift\nq2\tdrag\n", encoding="utf-8")
    assert read_texts(str(path)) == [("q1", "what is lift"), ("q2", "drag")]
    path.write_text("q1\ta\nq1\tb\n", encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read_texts(str(path))
    assert str(info.value) == "queries.tsv:2: the id 'q1' appears twice (first on line 1)"


def test_dashboard_live_page_runs_the_bundled_benchmark() -> None:
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parent.parent
    page = AppTest.from_file(str(root / "app" / "views" / "live.py"), default_timeout=180)
    page.run()
    page.button[0].click().run()
    assert not page.exception
    assert not page.error
    assert page.subheader[0].value == "Verdict: healthy"
    model, noise, floor = (float(m.value) for m in page.metric)
    assert model > 5 * floor and noise < 3 * floor
