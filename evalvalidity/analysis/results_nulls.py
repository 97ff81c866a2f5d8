"""The frozen results of the other nulls: what a benchmark can reward besides retrieval.

:class:`OtherNulls` gathers them on :class:`~evalvalidity.analysis.results.CheckResult`
(``result.nulls``): query-independent rankers, self-hits and id collisions, segment ids,
judgement holes, harness-output invariants and the tie sensitivity of the model. Each part is
None when its inputs are absent (e.g. no run), and says why in ``OtherNulls.notes``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalvalidity.analysis.results import Interval

__all__ = [
    "HarnessInvariants",
    "HoleCheck",
    "HubDocument",
    "OtherNulls",
    "QueryIndependent",
    "SegmentCheck",
    "SelfHits",
    "TieSensitivity",
]


@dataclass(frozen=True)
class HubDocument:
    """A document gold for many queries."""

    docid: str
    count: int
    share: float


@dataclass(frozen=True)
class QueryIndependent:
    """Query-independent rankers against the uniform floor.

    ``shuffle`` is the query-shuffle null's benchmark score (each ranking scored against a
    random other query's gold) with its 95 % normal interval under a random derangement (under
    independent draws when the derangement variance is 0, as it is when every ranking is the
    same); ``popularity`` is the leave-one-out popularity ranker's tie-averaged score, its
    interval the [worst, best] tie-breaking. ``adjusted_*`` are (null − floor)/(ceiling − floor).
    """

    floor: float
    floor_std: float
    ceiling: float
    shuffle: Interval | None
    shuffle_variance: str | None  # "derangement" or "independent"
    shuffle_per_query: np.ndarray | None
    shuffle_pairs_hit: int | None
    shuffle_skipped: str | None
    popularity: Interval | None
    popularity_per_query: np.ndarray | None
    popularity_skipped: str | None
    hubs: tuple[HubDocument, ...]

    def adjusted(self, value: float | None) -> float | None:
        """(value − floor)/(ceiling − floor), or None."""
        room = self.ceiling - self.floor
        if value is None or room <= 0:
            return None
        return (value - self.floor) / room


@dataclass(frozen=True)
class SelfHits:
    """Query ids used as document ids, and query texts that are corpus texts."""

    queries_as_documents: int  # query ids that occur as document ids in the run or the qrels
    ranked_self: int  # queries whose ranking holds their own id (or their own text)
    judged_self: int  # queries judged against their own id
    text_matches: int | None  # ranked (query, document) pairs with (near-)identical texts
    examples: tuple[str, ...]
    score_with: float | None
    score_without: float | None
    floor_with: float
    floor_without: float | None


@dataclass(frozen=True)
class SegmentCheck:
    """Whether the run ranks ``doc#segment`` ids, and the units rule applied (if any)."""

    separator: str
    run_share: float
    qrels_share: float
    matched_share: float
    example: str | None
    segmented: bool
    suggested: str | None
    applied: str | None


@dataclass(frozen=True)
class HoleCheck:
    """Judgement holes in the model's top k and the range they leave the score in."""

    k: int
    applicable: bool  # the judgements list non-relevant items too (else holes are by convention)
    overall_judged: float
    per_query_judged: np.ndarray
    holes: int
    score: float
    interval: Interval  # estimate: the score as reported; low/high: holes all one way
    per_query_low: np.ndarray
    per_query_high: np.ndarray
    depends: int  # queries whose value changes when their holes are filled


@dataclass(frozen=True)
class HarnessInvariants:
    """Counting bugs in a harness's per-query output, found before Check 1 reads its mean."""

    rows: int
    low: float
    high: float
    out_of_range: int
    max_value: float | None
    above_one_recall: int
    duplicated: int
    missing: int
    examples: tuple[str, ...]


@dataclass(frozen=True)
class TieSensitivity:
    """The model's value over the orders of each tied group."""

    tied_queries: int
    interval: Interval  # estimate: tie-averaged; low/high: every tie broken worst/best
    score: float | None
    threshold: float | None  # the smallest detectable difference
    moved: tuple[str, ...]
    per_query_worst: np.ndarray
    per_query_best: np.ndarray


@dataclass(frozen=True)
class OtherNulls:
    """Every other null the check ran (a part is None when it did not apply)."""

    query_independent: QueryIndependent | None
    self_hits: SelfHits | None
    segments: SegmentCheck | None
    holes: HoleCheck | None
    harness: HarnessInvariants | None
    ties: TieSensitivity | None
    notes: tuple[str, ...] = ()
    min_detectable: float | None = None
