"""Embed, swap the vectors for noise, rank by cosine: the numpy parts of the live noise test.

The live noise test (Check 2) pushes noise through the real retrieval path: embed the corpus and
the queries with the user's ``embed(texts: list[str]) -> numpy.ndarray``, replace every vector,
corpus and queries alike, by Gaussian noise of the same shape and the same norm
(:func:`noise_like`), and rank both the real and the noise vectors with the same exact cosine
index (:func:`exact_cosine_topk`). A benchmark that measures retrieval scores the noise ranking
at its exact floor; one that leaks (the gold item is recoverable without the vectors) does not.
:func:`embed_and_rank` does all of it and returns a :class:`Ranking`, one row per query and
retrieved item, ready to become a run table; :func:`evalvalidity.analysis.live.noise_test`
scores it.

:class:`HashingEmbedder` is a numpy-only default ``embed``: a hashed bag of words and word
bigrams, so the check runs without downloading a model.

Everything here needs numpy only. Randomness comes only from an explicit ``rng`` argument.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from evalvalidity.core._validate import (
    _finite_matrix,
    _generator,
    _int_at_least,
    _show,
    _weighted_bincount,
)
from evalvalidity.core.types import (
    FloatArray,
    IndexArray,
    IntArray,
    NumberArray,
    RealArray,
)
from evalvalidity.errors import ParameterError

__all__ = [
    "HashingEmbedder",
    "Ranking",
    "SentenceTransformerEmbedder",
    "WordLlamaEmbedder",
    "embed_and_rank",
    "exact_cosine_topk",
    "load_embedder",
    "noise_like",
]

# Cosine scores are computed for blocks of at most this many (query, item) pairs.
_SCORE_BLOCK: Final = 1 << 22

_TOKEN: Final = re.compile(r"\w+")


# --------------------------------------------------------------------------------------------
# The default embedder
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HashingEmbedder:
    r"""A numpy-only text embedder: hashed, signed, sublinear bag of word n-grams.

    Each text is lowercased and split into word tokens (runs of Unicode letters, digits and
    underscores, the regular expression ``\w+``); its features are the word n-grams for n in
    ``ngram_range`` (n-grams join tokens with one space). A feature f with term frequency
    :math:`\mathrm{tf}` in the text adds

    .. math:: s(f)\,(1 + \ln \mathrm{tf})

    to coordinate :math:`h(f) \bmod \mathrm{dim}`, where :math:`h(f)` is the first 8 bytes,
    little-endian, of BLAKE2b of the UTF-8 feature keyed by the seed (8 bytes, little-endian)
    and the sign :math:`s(f) = \pm 1` is its top bit (0 gives +1): the signed hashing trick
    (Weinberger et al., ICML 2009), which keeps collisions from adding up. Each row is then
    scaled to unit L2 norm; a text without tokens gives a zero row. BLAKE2b, unlike Python's
    salted ``hash()``, gives the same vectors in every process and on every machine.

    There is no IDF: a rare word shared with the query counts no more than a common one, so
    the default ranks by overlap of words and bigrams. Good enough for Check 2, which compares
    the same embedder with and without noise.

    Parameters
    ----------
    dim : int, default 256
        Number of coordinates, >= 1.
    ngram_range : tuple of int, default (1, 2)
        Smallest and largest n-gram length, ``1 <= low <= high``.
    seed : int, default 0
        Selects the hash function, ``0 <= seed < 2**64``.

    Examples
    --------
    >>> embed = HashingEmbedder(dim=8, ngram_range=(1, 1))
    >>> vectors = embed(["Cat cat", "the cat", ""])
    >>> vectors.shape, vectors.dtype
    ((3, 8), dtype('float32'))
    >>> [round(float(np.linalg.norm(row)), 6) for row in vectors]
    [1.0, 1.0, 0.0]
    >>> bool(np.array_equal(embed(["cat"]), embed(["CAT!"])))
    True
    """

    dim: int = 256
    _: dataclasses.KW_ONLY
    ngram_range: tuple[int, int] = (1, 2)
    seed: int = 0

    def __post_init__(self) -> None:
        _int_at_least(self.dim, 1, "dim", "HashingEmbedder", show=_show)
        low_high = self.ngram_range
        if (
            not isinstance(low_high, tuple)
            or len(low_high) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in low_high)
            or not 1 <= low_high[0] <= low_high[1]
        ):
            raise ParameterError(
                "The 'ngram_range' parameter of HashingEmbedder must be a tuple (low, high) of "
                f"ints with 1 <= low <= high. Got {_show(low_high)} instead."
            )
        if (
            not isinstance(self.seed, int)
            or isinstance(self.seed, bool)
            or not 0 <= self.seed < 2**64
        ):
            raise ParameterError(
                "The 'seed' parameter of HashingEmbedder must be an int in [0, 2**64). "
                f"Got {_show(self.seed)} instead."
            )

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed texts.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        numpy.ndarray of float32, shape (len(texts), dim)
            Unit rows (zero rows for texts without tokens).

        Raises
        ------
        ParameterError
            When ``texts`` is a single str or holds something other than str.
        """
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise ParameterError(
                "HashingEmbedder must be called on a list of str. "
                f"Got {type(texts).__name__} instead."
            )
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise ParameterError(
                    "HashingEmbedder must be called on a list of str. "
                    f"Got {type(text).__name__} at position {position} instead."
                )
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        # Tokens become ids in one pass; n-grams are then windows over the id array, and only
        # the distinct n-grams are turned back into text and hashed.
        vocabulary: dict[str, int] = {}
        token_ids: list[int] = []
        lengths = np.empty(len(texts), dtype=np.int64)
        for row, text in enumerate(texts):
            tokens = _TOKEN.findall(text.lower())
            lengths[row] = len(tokens)
            token_ids.extend([vocabulary.setdefault(token, len(vocabulary)) for token in tokens])
        ids = np.asarray(token_ids, dtype=np.int64)
        text_of = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        position = np.arange(ids.size, dtype=np.int64) - np.repeat(
            np.cumsum(lengths) - lengths, lengths
        )
        words = list(vocabulary)
        low, high = self.ngram_range
        rows: list[IntArray] = []
        features: list[IndexArray] = []
        names: list[str] = []
        for n in range(low, high + 1):
            starts = np.flatnonzero(position + n <= lengths[text_of])
            windows = ids[starts[:, None] + np.arange(n)]
            base = max(len(words), 2)
            if n * math.log2(base) < 62:
                # One int64 per n-gram (base-V digits): np.unique on a flat array is fast.
                codes = windows @ base ** np.arange(n - 1, -1, -1, dtype=np.int64)
                distinct_codes, inverse = np.unique(codes, return_inverse=True)
                distinct = (
                    distinct_codes[:, None] // base ** np.arange(n - 1, -1, -1, dtype=np.int64)
                ) % base
            else:
                distinct, inverse = np.unique(windows, axis=0, return_inverse=True)
            rows.append(text_of[starts])
            features.append(inverse.reshape(-1) + len(names))
            word = words.__getitem__
            names.extend(" ".join(map(word, gram)) for gram in distinct.tolist())
        out: FloatArray = np.zeros((len(texts), self.dim), dtype=np.float64)
        if names:
            hashes = self._hashes(names)
            buckets = (hashes % np.uint64(self.dim)).astype(np.int64)
            signs = np.where(hashes >> np.uint64(63), -1.0, 1.0)
            pairs, counts = np.unique(
                np.concatenate(rows) * len(names) + np.concatenate(features), return_counts=True
            )
            pair_rows, pair_features = np.divmod(pairs, len(names))
            weights = signs[pair_features] * (1.0 + np.log(counts))
            flat = _weighted_bincount(
                pair_rows * self.dim + buckets[pair_features], weights, out.size
            )
            out = flat.reshape(out.shape)
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        return out.astype(np.float32)

    def _hashes(self, features: list[str]) -> npt.NDArray[np.uint64]:
        key = self.seed.to_bytes(8, "little")
        digests = b"".join(
            hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=key).digest()
            for feature in features
        )
        return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


# --------------------------------------------------------------------------------------------
# Noise with the same norms
# --------------------------------------------------------------------------------------------


def noise_like(vectors: npt.ArrayLike, *, rng: np.random.Generator | int) -> RealArray:
    r"""Gaussian noise of the same shape as ``vectors``, each row with its original row's norm.

    Row i of the result is :math:`\lVert v_i \rVert\, g_i / \lVert g_i \rVert` with
    :math:`g_i \sim N(0, I_d)`: a direction uniform on the sphere, the length of the original.
    Zero rows stay zero. Keeping the norms matters for indexes that score by inner product
    (where norms change the order); for cosine only the directions count.

    Parameters
    ----------
    vectors : array_like of numbers, shape (n, d)
        Finite values.
    rng : numpy.random.Generator or int
        Source of the noise (an int is a seed).

    Returns
    -------
    numpy.ndarray, shape (n, d)
        float32 when ``vectors`` is float32, else float64 (float16 input gives float16).

    Raises
    ------
    ParameterError
        When ``vectors`` is not a 2-D array of finite numbers.

    Examples
    --------
    >>> vectors = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]])
    >>> noise = noise_like(vectors, rng=0)
    >>> np.round(np.linalg.norm(noise, axis=1), 12).tolist()
    [5.0, 0.0, 1.0]
    """
    func = "noise_like"
    array = _finite_matrix(vectors, "vectors", func)
    if rng is None:
        raise ParameterError(
            f"The 'rng' parameter of {func} must be a numpy.random.Generator or an int seed >= 0."
            " Got None instead."
        )
    generator = _generator(rng, func, show=_show)
    return _noise_like(array, generator)


def _noise_like(array: NumberArray, rng: np.random.Generator) -> RealArray:
    dtype = array.dtype if array.dtype.kind == "f" else np.dtype(np.float64)
    draw_dtype = np.float32 if dtype == np.float32 else np.float64
    noise: RealArray = rng.standard_normal(array.shape, dtype=draw_dtype)
    norms = np.sqrt(np.einsum("ij,ij->i", array, array, dtype=np.float64))
    noise_norms = np.sqrt(np.einsum("ij,ij->i", noise, noise, dtype=np.float64))
    # A draw of exactly zero has probability 0; the guard only keeps 0/0 out.
    scale = np.divide(norms, noise_norms, out=np.zeros_like(norms), where=noise_norms > 0)
    noise *= scale.astype(draw_dtype)[:, None]
    return noise.astype(dtype, copy=False)


# --------------------------------------------------------------------------------------------
# Exact cosine top-k
# --------------------------------------------------------------------------------------------


def exact_cosine_topk(
    query_vectors: npt.ArrayLike,
    corpus_vectors: npt.ArrayLike,
    k: int,
    *,
    batch_size: int | None = None,
) -> tuple[IntArray, FloatArray]:
    r"""Exact (brute-force) cosine top-k of every query over the corpus.

    .. math:: \cos(q, c) = \frac{q \cdot c}{\lVert q \rVert\, \lVert c \rVert},
              \qquad 0 \text{ when either vector is zero.}

    Items are ordered by score descending, ties broken by corpus index ascending: among equal
    computed scores the item given first wins, so the result is deterministic and a constant
    (e.g. zero) query returns items 0, 1, ..., k-1. Queries are scored in batches of
    ``batch_size`` rows (a ``batch_size × n_corpus`` score block; by default about 4 million
    scores, 16 MB in float32), each cut with :func:`numpy.partition` and only the k survivors
    sorted, so memory stays bounded for 100k × 384 corpora. Scores are computed in the inputs'
    floating dtype (float32 stays float32; integers become float64) and returned as float64;
    BLAS may round them differently in the last bits for another batch size.

    Parameters
    ----------
    query_vectors : array_like of numbers, shape (n_queries, d)
    corpus_vectors : array_like of numbers, shape (n_corpus, d), n_corpus >= 1
    k : int
        Items per query, >= 1; capped at n_corpus.
    batch_size : int or None
        Queries scored at once; None picks one from the corpus size.

    Returns
    -------
    indices : numpy.ndarray of int64, shape (n_queries, min(k, n_corpus))
        Corpus row of each retrieved item, best first.
    scores : numpy.ndarray of float64, same shape
        Their cosine scores.

    Raises
    ------
    ParameterError
        On non-2-D or non-finite vectors, different dimensions, an empty corpus, a bad k or
        batch size.

    Examples
    --------
    >>> corpus = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> indices, scores = exact_cosine_topk([[1.0, 0.0]], corpus, 3)
    >>> indices.tolist(), np.round(scores, 4).tolist()
    ([[0, 3, 2]], [[1.0, 1.0, 0.7071]])
    """
    func = "exact_cosine_topk"
    queries = _finite_matrix(query_vectors, "query_vectors", func)
    corpus = _finite_matrix(corpus_vectors, "corpus_vectors", func)
    if corpus.shape[0] < 1:
        raise ParameterError(
            f"The 'corpus_vectors' parameter of {func} must hold at least one vector. "
            "Got 0 instead."
        )
    if queries.shape[1] != corpus.shape[1]:
        raise ParameterError(
            f"The query and corpus vectors given to {func} must have the same dimension. "
            f"Got {queries.shape[1]} and {corpus.shape[1]} instead."
        )
    k = _int_at_least(k, 1, "k", func, show=_show)
    if batch_size is not None:
        batch_size = _int_at_least(batch_size, 1, "batch_size", func, show=_show)
    return _exact_cosine_topk(queries, corpus, k, batch_size)


def _exact_cosine_topk(
    queries: NumberArray, corpus: NumberArray, k: int, batch_size: int | None
) -> tuple[IntArray, FloatArray]:
    n_corpus = corpus.shape[0]
    k = min(k, n_corpus)
    dtype = np.result_type(queries.dtype, corpus.dtype, np.float32)
    corpus = corpus.astype(dtype, copy=False)
    corpus_norms = np.sqrt(np.einsum("ij,ij->i", corpus, corpus))
    inverse_corpus_norms = np.divide(
        1.0, corpus_norms, out=np.zeros_like(corpus_norms), where=corpus_norms > 0
    )
    if batch_size is None:
        batch_size = max(1, _SCORE_BLOCK // n_corpus)
    indices = np.empty((queries.shape[0], k), dtype=np.int64)
    scores = np.empty((queries.shape[0], k), dtype=np.float64)
    for start in range(0, queries.shape[0], batch_size):
        batch = queries[start : start + batch_size].astype(dtype, copy=False)
        norms = np.sqrt(np.einsum("ij,ij->i", batch, batch))
        unit = np.divide(batch, norms[:, None], out=np.zeros_like(batch), where=norms[:, None] > 0)
        block = unit @ corpus.T
        block *= inverse_corpus_norms
        top_indices, top_scores = _top_k_rows(block, k)
        indices[start : start + batch.shape[0]] = top_indices
        scores[start : start + batch.shape[0]] = top_scores
    return indices, scores


def _top_k_rows(block: RealArray, k: int) -> tuple[IndexArray, FloatArray]:
    """Top k of every row: score descending, then column ascending."""
    n_rows, n_columns = block.shape
    # The k-th largest score of each row: everything above it is in, and of the items equal
    # to it only the lowest columns are taken, as many as are still needed.
    threshold = np.partition(block, n_columns - k, axis=1)[:, n_columns - k]
    needed = k - np.count_nonzero(block > threshold[:, None], axis=1)
    rows, columns = np.nonzero(block >= threshold[:, None])  # row-major: columns ascending
    tied = block[rows, columns] == threshold[rows]
    tied_so_far = np.cumsum(tied)
    row_starts = np.searchsorted(rows, np.arange(n_rows))
    tied_before_row = np.concatenate(([0], tied_so_far))[row_starts]
    keep = ~tied | (tied_so_far - tied_before_row[rows] <= needed[rows])
    columns = columns[keep].reshape(n_rows, k)
    top = np.take_along_axis(block, columns, axis=1)
    order = np.argsort(-top, axis=1, kind="stable")
    return (
        np.take_along_axis(columns, order, axis=1),
        np.take_along_axis(top, order, axis=1).astype(np.float64),
    )


# --------------------------------------------------------------------------------------------
# Embed and rank
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranking:
    """A ranking: one row per (query, retrieved item), queries in the order given, best first.

    The arrays are read-only and have one entry per row.

    Attributes
    ----------
    qid : numpy.ndarray of object (str)
    docid : numpy.ndarray of object (str)
    score : numpy.ndarray of float64
        Cosine score.
    rank : numpy.ndarray of int64
        1-based rank within the query.
    noise : bool
        True when the vectors were replaced by noise.
    """

    qid: npt.NDArray[np.object_]
    docid: npt.NDArray[np.object_]
    score: FloatArray
    rank: IntArray
    noise: bool

    def __post_init__(self) -> None:
        sizes = {len(self.qid), len(self.docid), len(self.score), len(self.rank)}
        if len(sizes) != 1:
            raise ParameterError(
                "The arrays of a Ranking must have one entry per row. "
                f"Got lengths {len(self.qid)}, {len(self.docid)}, {len(self.score)} and "
                f"{len(self.rank)} instead."
            )
        for name in ("qid", "docid", "score", "rank"):
            # A read-only view: the caller's own arrays keep their flags.
            view = np.asarray(getattr(self, name)).view()
            view.setflags(write=False)
            object.__setattr__(self, name, view)

    def __len__(self) -> int:
        return len(self.qid)


def _texts_by_id(value: object, name: str, func: str) -> tuple[list[str], list[str]]:
    """Ids and texts from a mapping or a sequence of (id, text) pairs, in order."""
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        pairs = list(value)
    else:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a mapping from id to text or a sequence "
            f"of (id, text) pairs. Got {type(value).__name__} instead."
        )
    if not pairs:
        raise ParameterError(f"The '{name}' parameter of {func} must not be empty.")
    ids: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    for position, pair in enumerate(pairs):
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], str)
        ):
            raise ParameterError(
                f"Every entry of the {name!r} parameter of {func} must be an (id, text) pair of "
                f"str. Got {_show(pair)} at position {position} instead."
            )
        if pair[0] in seen:
            raise ParameterError(
                f"The '{name}' parameter of {func} holds the id {pair[0]!r} twice "
                f"(positions {seen[pair[0]]} and {position})."
            )
        seen[pair[0]] = position
        ids.append(pair[0])
        texts.append(pair[1])
    return ids, texts


def _embedded(
    embed: Callable[[list[str]], object], ids: list[str], texts: list[str], what: str
) -> NumberArray:
    """Call ``embed`` and check it returned one finite vector per text."""
    expected = f"a 2-D array of numbers of shape ({len(texts)}, dim) for the {len(texts)} {what}"
    output = embed(list(texts))
    try:
        array = np.asarray(output)
    except ValueError:  # numpy refuses ragged rows
        raise ParameterError(
            f"embed must return {expected}. Got rows of different lengths instead."
        ) from None
    if array.dtype.kind not in "biuf":
        raise ParameterError(f"embed must return {expected}. Got dtype {array.dtype} instead.")
    if array.ndim != 2 or array.shape[0] != len(texts) or array.shape[1] < 1:
        raise ParameterError(f"embed must return {expected}. Got shape {array.shape} instead.")
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array)
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ParameterError(
                f"embed must return finite numbers. Got {int(bad.sum())} NaN or infinite "
                f"value(s) for the {what}, the first for {ids[row]!r}."
            )
    return array


def _check_embed(embed: object, func: str) -> None:
    if not callable(embed):
        raise ParameterError(
            f"The 'embed' parameter of {func} must be callable as embed(texts: list[str]). "
            f"Got {type(embed).__name__} instead."
        )


def _embed_both(
    embed: Callable[[list[str]], object],
    corpus_ids: list[str],
    corpus_texts: list[str],
    query_ids: list[str],
    query_texts: list[str],
) -> tuple[NumberArray, NumberArray]:
    """Embed the corpus, then the queries, and check the two agree on the dimension."""
    corpus_vectors = _embedded(embed, corpus_ids, corpus_texts, "corpus texts")
    query_vectors = _embedded(embed, query_ids, query_texts, "query texts")
    if corpus_vectors.shape[1] != query_vectors.shape[1]:
        raise ParameterError(
            f"embed must return vectors of one dimension. Got {corpus_vectors.shape[1]} for the "
            f"corpus and {query_vectors.shape[1]} for the queries instead."
        )
    return corpus_vectors, query_vectors


def embed_and_rank(
    embed: Callable[[list[str]], object],
    corpus: Mapping[str, str] | Sequence[tuple[str, str]],
    queries: Mapping[str, str] | Sequence[tuple[str, str]],
    *,
    k: int = 100,
    noise: bool,
    rng: np.random.Generator | int | None = None,
    batch_size: int | None = None,
) -> Ranking:
    """Embed a corpus and queries, optionally swap the vectors for noise, and rank by cosine.

    ``embed`` is called once on the list of corpus texts and once on the list of query texts,
    in the order given. With ``noise=True`` both the corpus and the query vectors are replaced
    by :func:`noise_like` (corpus first, then queries, from the same ``rng``): the ranking then
    carries no information about the texts, and any metric computed from it should sit at its
    exact floor. Ranking uses :func:`exact_cosine_topk` (ties: corpus order).

    Parameters
    ----------
    embed : callable
        ``embed(texts: list[str])`` returning an array of shape ``(len(texts), dim)`` of finite
        numbers, e.g. :class:`HashingEmbedder` or a wrapped sentence-embedding model.
    corpus : Mapping[str, str] or sequence of (id, text) pairs
        Documents (or chunks), ids unique.
    queries : Mapping[str, str] or sequence of (id, text) pairs
        Queries, ids unique.
    k : int, default 100
        Items retrieved per query (capped at the corpus size).
    noise : bool
        Replace the vectors by noise of the same norms.
    rng : numpy.random.Generator, int or None
        Source of the noise; None draws fresh entropy (not reproducible). Unused without noise.
    batch_size : int or None
        Passed to :func:`exact_cosine_topk`.

    Returns
    -------
    Ranking
        ``len(queries) * min(k, len(corpus))`` rows.

    Raises
    ------
    ParameterError
        On an empty or malformed corpus or query set, a duplicate id, a bad k, or when
        ``embed`` returns something other than one finite vector per text, or vectors of
        different dimensions for the corpus and the queries.

    Examples
    --------
    >>> corpus = {"d1": "the cat sat on the mat", "d2": "stock markets fell", "d3": "a dog barked"}
    >>> queries = {"q1": "where did the cat sit", "q2": "markets"}
    >>> ranking = embed_and_rank(HashingEmbedder(), corpus, queries, k=1, noise=False)
    >>> list(zip(ranking.qid, ranking.docid, ranking.rank.tolist()))
    [('q1', 'd1', 1), ('q2', 'd2', 1)]
    >>> noisy = embed_and_rank(HashingEmbedder(), corpus, queries, k=2, noise=True, rng=0)
    >>> len(noisy), noisy.noise
    (4, True)
    """
    func = "embed_and_rank"
    _check_embed(embed, func)
    corpus_ids, corpus_texts = _texts_by_id(corpus, "corpus", func)
    query_ids, query_texts = _texts_by_id(queries, "queries", func)
    k = _int_at_least(k, 1, "k", func, show=_show)
    if not isinstance(noise, bool):
        raise ParameterError(
            f"The 'noise' parameter of {func} must be a bool. Got {_show(noise)} instead."
        )
    generator = _generator(rng, func, show=_show)
    if batch_size is not None:
        batch_size = _int_at_least(batch_size, 1, "batch_size", func, show=_show)
    corpus_vectors, query_vectors = _embed_both(
        embed, corpus_ids, corpus_texts, query_ids, query_texts
    )
    if noise:
        corpus_vectors = _noise_like(corpus_vectors, generator)
        query_vectors = _noise_like(query_vectors, generator)
    return _rank(query_ids, corpus_ids, query_vectors, corpus_vectors, k, batch_size, noise)


def _rank(
    query_ids: list[str],
    corpus_ids: list[str],
    query_vectors: NumberArray,
    corpus_vectors: NumberArray,
    k: int,
    batch_size: int | None,
    noise: bool,
) -> Ranking:
    """Rank by exact cosine and lay the result out one row per (query, item)."""
    indices, scores = _exact_cosine_topk(query_vectors, corpus_vectors, k, batch_size)
    per_query = indices.shape[1]
    return Ranking(
        qid=np.repeat(np.array(query_ids, dtype=object), per_query),
        docid=np.array(corpus_ids, dtype=object)[indices.ravel()],
        score=scores.ravel(),
        rank=np.tile(np.arange(1, per_query + 1, dtype=np.int64), len(query_ids)),
        noise=noise,
    )


# --------------------------------------------------------------------------------------------
# Optional embedders and the embedder names of the command line
# --------------------------------------------------------------------------------------------


def _optional(package: str, purpose: str, extra: str) -> object:
    """Import an optional package (by name, so this module needs numpy only) or explain."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise ParameterError(
            f"The {purpose} needs the {package!r} package, which is not installed: "
            f"pip install {extra}."
        ) from exc


class WordLlamaEmbedder:
    """WordLlama's 256-dimensional static embedding, loaded offline from its wheel.

    The ``wordllama`` package ships its weights inside the wheel; they are loaded with
    ``WordLlama.load(cache_dir=<the package's folder>, disable_download=True)``, so nothing is
    downloaded. Texts are embedded by ``WordLlama.embed`` (mean of token vectors, normalised).

    Raises
    ------
    ParameterError
        When ``wordllama`` is not installed (``pip install 'evalvalidity[live]'``).
    """

    def __init__(self) -> None:
        import os

        module: Any = _optional("wordllama", "wordllama embedder", "'evalvalidity[live]'")
        folder = os.path.dirname(module.__file__)
        self._model = module.WordLlama.load(cache_dir=folder, disable_download=True)

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``: an array (len(texts), 256) of float32."""
        return np.asarray(self._model.embed(list(texts)), dtype=np.float32)


class SentenceTransformerEmbedder:
    """A sentence-transformers model the user has locally (never downloaded).

    Parameters
    ----------
    model : str
        A folder holding a saved model, or the name of one in the local Hugging Face cache.

    Raises
    ------
    ParameterError
        When ``sentence-transformers`` is not installed or the model is not found locally.
    """

    def __init__(self, model: str) -> None:
        if not isinstance(model, str) or not model:
            raise ParameterError(
                "The 'model' parameter of SentenceTransformerEmbedder must be a non-empty str. "
                f"Got {_show(model)} instead."
            )
        module: Any = _optional(
            "sentence_transformers", "sentence-transformers embedder", "sentence-transformers"
        )
        try:
            self._model = module.SentenceTransformer(model, local_files_only=True)
        except Exception as exc:  # OSError, ValueError, huggingface_hub's errors, ...
            raise ParameterError(
                f"The sentence-transformers model {model!r} is not available locally (a saved "
                "model's folder, or a model in the local Hugging Face cache; nothing is "
                f"downloaded): {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from exc

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` with the model."""
        return np.asarray(self._model.encode(list(texts)), dtype=np.float32)


def load_embedder(name: str) -> Callable[[list[str]], object]:
    """The embedder a command-line name stands for.

    ``hashing`` (:class:`HashingEmbedder`, numpy only), ``wordllama``
    (:class:`WordLlamaEmbedder`), ``sentence-transformers:MODEL``
    (:class:`SentenceTransformerEmbedder`) or ``module:function`` (the user's own
    ``embed(texts) -> array``, imported; a class is instantiated without arguments).

    >>> load_embedder("hashing")
    HashingEmbedder(dim=256, ngram_range=(1, 2), seed=0)
    >>> load_embedder("no_such_module_here:embed")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: Cannot import the module 'no_such_module_here' of the embedder 'no_such_module_here:embed': No module named 'no_such_module_here'.
    """
    import importlib

    if not isinstance(name, str):
        raise ParameterError(
            f"The 'name' parameter of load_embedder must be a str. Got {_show(name)} instead."
        )
    if name == "hashing":
        return HashingEmbedder()
    if name == "wordllama":
        return WordLlamaEmbedder()
    prefix = "sentence-transformers:"
    if name.startswith(prefix):
        return SentenceTransformerEmbedder(name[len(prefix) :])
    module_name, colon, attribute = name.partition(":")
    if not colon or not module_name or not attribute:
        raise ParameterError(
            "The embedder must be hashing, wordllama, sentence-transformers:MODEL or "
            f"module:function. Got {name!r} instead."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ParameterError(
            f"Cannot import the module {module_name!r} of the embedder {name!r}: {exc}."
        ) from exc
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ParameterError(
                f"The module {module_name!r} has no {attribute!r} (embedder {name!r})."
            )
        target = getattr(target, part)
    if isinstance(target, type):
        target = target()
    if not callable(target):
        raise ParameterError(
            f"The embedder {name!r} must be callable as embed(texts: list[str]). "
            f"Got {type(target).__name__} instead."
        )
    embed: Callable[[list[str]], object] = target
    return embed
