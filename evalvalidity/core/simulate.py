r"""Random rankings of a pool, drawn lazily: the raw material of Check 1.

A uniformly random order of a pool of ``C`` items is built one position at a time: position
``i`` holds a uniformly random item among those not drawn yet. A metric with a cutoff only looks
at the top of the order, so only the first few positions are ever drawn: a random top-10 of an
8.8-million-item pool costs about 10 draws, never a permutation of 8.8 million.

Importance sampling
-------------------
At a pool of millions the top 10 of a random order almost never holds a gold item: a plain
simulation would need billions of draws to measure a floor of 3·10⁻⁷ to 2 %. So the prefix may
be drawn from a *proposal* in which every not-yet-drawn gold item is ``w`` times as likely as a
non-gold one (a Plackett–Luce draw with weights ``w`` and 1), and each sampled prefix carries its
likelihood ratio

.. math::

    \frac{p(s_1 \ldots s_D)}{q(s_1 \ldots s_D)}
    = \prod_{i=1}^{D} \frac{w\,g_i + n_i}{(C - i + 1)\, w_{s_i}}

(``g_i``, ``n_i``: gold and non-gold items left before draw ``i``). Weighting each sampled
metric value by it gives an unbiased estimate of the expectation under the uniform order, for
any function of the ranking, whatever the scorer does with it. Positions after the prefix are
never boosted. ``w = 1`` is the plain simulation (all weights 1).

With chunk → document deduplication the prefix is drawn in chunks until it holds ``doc_depth``
distinct documents (a stopping time, so the ratio above stays exact).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalvalidity.core._validate import _generator, _int_at_least
from evalvalidity.core.types import (
    FloatArray,
    IndexArray,
    IntArray,
)
from evalvalidity.errors import ParameterError

__all__ = ["PoolLayout", "PrefixSample", "auto_gold_weight", "sample_prefixes"]


@dataclass(frozen=True)
class PoolLayout:
    """What is ranked, per query.

    Attributes
    ----------
    pool_size : numpy.ndarray
        ``C_q``: items each query's pool holds, in the unit the ranking is drawn in.
    gold_offsets, gold_items : numpy.ndarray
        CSR lists of each query's gold items (indices in ``[0, C_q)``): the items that count as
        relevant, or with deduplication every chunk of a gold document.
    chunk_doc : numpy.ndarray or None
        With deduplication, the document of every chunk index (all queries share one index
        space, the corpus); None without.
    """

    pool_size: IntArray
    gold_offsets: IntArray
    gold_items: IntArray
    chunk_doc: IntArray | None = None

    def __post_init__(self) -> None:
        if len(self.gold_offsets) != len(self.pool_size) + 1:
            raise ParameterError(
                "The 'gold_offsets' of a PoolLayout must have one entry more than 'pool_size'. "
                f"Got {len(self.gold_offsets)} and {len(self.pool_size)} instead."
            )
        if np.any(self.pool_size < 1):
            raise ParameterError("Every pool of a PoolLayout must hold at least one item.")
        if len(self.gold_items):
            counts = np.diff(self.gold_offsets)
            upper = np.repeat(self.pool_size, counts)
            if np.any(self.gold_items < 0) or np.any(self.gold_items >= upper):
                raise ParameterError("A gold item of a PoolLayout lies outside its query's pool.")
        if self.chunk_doc is not None and np.any(self.pool_size != len(self.chunk_doc)):
            raise ParameterError(
                "With deduplication every query's pool must be the whole corpus of chunks."
            )

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.pool_size)

    @property
    def gold_count(self) -> IntArray:
        """Gold items per query."""
        return np.diff(self.gold_offsets)


@dataclass(frozen=True)
class PrefixSample:
    """Sampled top-of-ranking prefixes, one per (query, draw).

    Attributes
    ----------
    query, draw : numpy.ndarray
        Which query and draw each sample belongs to (draws are numbered per query).
    log_weight : numpy.ndarray
        log p/q of each sample (0 for plain draws).
    offsets, items : numpy.ndarray
        CSR lists of each sample's drawn items, best first.
    gold_weight : numpy.ndarray
        The proposal's weight ``w`` per query (1 = plain).
    """

    query: IndexArray
    draw: IndexArray
    log_weight: FloatArray
    offsets: IntArray
    items: IntArray
    gold_weight: FloatArray

    @property
    def weight(self) -> FloatArray:
        """Likelihood ratio of each sample."""
        return np.exp(self.log_weight)

    @property
    def n_draws(self) -> int:
        """Number of (query, draw) samples."""
        return len(self.query)


def auto_gold_weight(pool_size: npt.ArrayLike, gold_count: npt.ArrayLike, depth: int) -> FloatArray:
    r"""Pick the proposal weight that puts about one gold item in a prefix of ``depth``.

    .. math:: w = \max\left(1, \frac{C - G}{G \cdot depth}\right)

    Examples
    --------
    >>> auto_gold_weight(np.array([8, 1000]), np.array([5, 1]), 10).tolist()
    [1.0, 99.9]
    """
    pool = np.asarray(pool_size, dtype=np.float64)
    gold: FloatArray = np.maximum(np.asarray(gold_count, dtype=np.float64), 1.0)
    return np.maximum(1.0, (pool - gold) / (gold * depth))


def sample_prefixes(
    layout: PoolLayout,
    n_draws: int,
    *,
    depth: int,
    doc_depth: int | None = None,
    gold_weight: float | FloatArray = 1.0,
    rng: np.random.Generator | int,
    first_draw: int = 0,
) -> PrefixSample:
    """Draw the first positions of ``n_draws`` random orders of every query's pool.

    Parameters
    ----------
    layout : PoolLayout
    n_draws : int
        Samples per query.
    depth : int
        Positions to draw (capped at each pool's size). Ignored when ``doc_depth`` is given.
    doc_depth : int, optional
        With deduplication: draw chunks until this many distinct documents are in the prefix.
    gold_weight : float or numpy.ndarray
        The proposal's weight of gold items (one per query, or one for all); 1 draws plainly.
    rng : numpy.random.Generator or int
        The source of randomness (an int is a seed).
    first_draw : int
        Number given to the first draw (draws are numbered consecutively).

    Returns
    -------
    PrefixSample

    Examples
    --------
    A pool of 3 items with item 0 gold, drawn plainly to depth 3: every order is a permutation.

    >>> layout = PoolLayout(np.array([3]), np.array([0, 1]), np.array([0]))
    >>> s = sample_prefixes(layout, 2, depth=3, rng=np.random.default_rng(0))
    >>> sorted(s.items[s.offsets[0]:s.offsets[1]].tolist()), s.log_weight.tolist()
    ([0, 1, 2], [0.0, 0.0])
    """
    func = "sample_prefixes"
    n_draws = _int_at_least(n_draws, 1, "n_draws", func, show=repr)
    depth = _int_at_least(depth, 1, "depth", func, show=repr)
    generator = _generator(rng, func, allow_none=False, show=repr)
    if doc_depth is not None and layout.chunk_doc is None:
        raise ParameterError("'doc_depth' needs a layout with a chunk → document map.")
    weights = np.broadcast_to(np.asarray(gold_weight, dtype=float), (layout.n_queries,)).copy()
    if np.any(~np.isfinite(weights)) or np.any(weights < 1):
        raise ParameterError("Every gold weight of sample_prefixes must be a finite float >= 1.")
    return _sample(layout, n_draws, depth, doc_depth, weights, generator, int(first_draw))


def _sample(
    layout: PoolLayout,
    n_draws: int,
    depth: int,
    doc_depth: int | None,
    weights: FloatArray,
    rng: np.random.Generator,
    first_draw: int,
) -> PrefixSample:
    n_queries = layout.n_queries
    query = np.repeat(np.arange(n_queries), n_draws)
    draw = np.tile(np.arange(first_draw, first_draw + n_draws), n_queries)
    m = len(query)
    pool = layout.pool_size[query].astype(np.int64)
    gold_n = layout.gold_count[query].astype(np.int64)
    w = weights[query]

    # Each sample takes its gold items in a random order: drawing "a uniformly random remaining
    # gold item" is then "the next one in that order".
    gold_len = int(gold_n.sum())
    gold_offsets = np.concatenate(([0], np.cumsum(gold_n)))
    src = np.repeat(layout.gold_offsets[query], gold_n) + (
        np.arange(gold_len) - np.repeat(gold_offsets[:-1], gold_n)
    )
    gold_perm = layout.gold_items[src]
    if gold_len:
        keys = rng.random(gold_len) + np.repeat(np.arange(m), gold_n)
        gold_perm = gold_perm[np.argsort(keys, kind="stable")]

    if doc_depth is None:
        max_steps = int(min(depth, pool.max()))
        target = np.minimum(depth, pool)
    else:
        max_steps = int(pool.max())
        target = pool  # stop by document count below
    drawn = np.full((m, min(max_steps, 64)), -1, dtype=np.int64)
    drawn_docs = np.full_like(drawn, -1) if doc_depth is not None else None
    n_drawn = np.zeros(m, dtype=np.int64)
    n_docs = np.zeros(m, dtype=np.int64)
    gold_used = np.zeros(m, dtype=np.int64)
    log_w = np.zeros(m)
    stride = int(layout.pool_size.max()) + 1
    gold_sets = _gold_membership(layout, stride)
    active = n_drawn < target
    while active.any():
        idx = np.flatnonzero(active)
        step = n_drawn[idx]
        if step.max() >= drawn.shape[1]:
            grow = np.full((m, drawn.shape[1]), -1, dtype=np.int64)
            drawn = np.hstack([drawn, grow])
            if drawn_docs is not None:
                drawn_docs = np.hstack([drawn_docs, grow.copy()])
        g_left = gold_n[idx] - gold_used[idx]
        n_left = pool[idx] - gold_n[idx] - (step - gold_used[idx])
        total = w[idx] * g_left + n_left
        take_gold = rng.random(len(idx)) * total < w[idx] * g_left
        items = np.empty(len(idx), dtype=np.int64)
        tg = idx[take_gold]
        items[take_gold] = gold_perm[gold_offsets[tg] + gold_used[tg]]
        gold_used[tg] += 1
        ng = idx[~take_gold]
        items[~take_gold] = _draw_non_gold(ng, pool, drawn, gold_sets, stride, query, rng)
        log_w[idx] += (
            np.log(total) - np.log(pool[idx] - step) - np.where(take_gold, np.log(w[idx]), 0.0)
        )
        drawn[idx, step] = items
        n_drawn[idx] += 1
        if drawn_docs is not None and layout.chunk_doc is not None and doc_depth is not None:
            docs = layout.chunk_doc[items]
            seen = (drawn_docs[idx] == docs[:, None]).any(axis=1)
            drawn_docs[idx, step] = docs
            n_docs[idx] += ~seen
            active[idx] = (n_docs[idx] < doc_depth) & (n_drawn[idx] < pool[idx])
        else:
            active[idx] = n_drawn[idx] < target[idx]
    offsets = np.concatenate(([0], np.cumsum(n_drawn)))
    mask = np.arange(drawn.shape[1])[None, :] < n_drawn[:, None]
    return PrefixSample(query, draw, log_w, offsets, drawn[mask], weights)


def _gold_membership(layout: PoolLayout, stride: int) -> IntArray:
    """Sorted keys ``query * stride + item`` of every gold item, for fast membership."""
    q = np.repeat(np.arange(layout.n_queries), layout.gold_count)
    return np.sort(q.astype(np.int64) * stride + layout.gold_items.astype(np.int64))


def _draw_non_gold(
    samples: IndexArray,
    pool: IntArray,
    drawn: IntArray,
    gold_keys: IntArray,
    stride: int,
    query: IndexArray,
    rng: np.random.Generator,
) -> IntArray:
    """Uniform non-gold items not yet drawn, by rejection (vectorised over samples)."""
    out = np.empty(len(samples), dtype=np.int64)
    todo = np.arange(len(samples))
    while len(todo):
        s = samples[todo]
        cand = (rng.random(len(s)) * pool[s]).astype(np.int64)
        keys = query[s].astype(np.int64) * stride + cand
        pos = np.searchsorted(gold_keys, keys)
        is_gold = (pos < len(gold_keys)) & (gold_keys[np.minimum(pos, len(gold_keys) - 1)] == keys)
        repeat = (drawn[s] == cand[:, None]).any(axis=1)
        ok = ~is_gold & ~repeat
        out[todo[ok]] = cand[ok]
        todo = todo[~ok]
    return out
