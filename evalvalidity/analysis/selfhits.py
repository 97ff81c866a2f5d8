r"""Self-hits and id collisions: queries that retrieve, or are judged against, themselves.

In BEIR's ArguAna (and Quora) every query is also a document of the corpus: a ranker retrieves
the query itself first, and whether that row counts moves ArguAna's nDCG@10 from 31.5 to 41.4.
:func:`self_hits` counts the queries whose id occurs as a document id, the rankings that hold
their own query (by id, or by a text identical or near-identical to the query's when texts are
given) and the judgements of a query against itself, and reports the model's score and the
floor with and without them.

Texts are compared after :func:`normalise` (lower case, words only); two texts are
near-identical when the Jaccard similarity of their word sets is at least
:data:`NEAR_IDENTICAL`.

Examples
--------
>>> normalise("  The Cat, sat!  ")
'the cat sat'
>>> round(jaccard("the cat sat", "the cat sat down"), 2)
0.75
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import benchmark_floor
from evalvalidity.analysis.results_nulls import SelfHits
from evalvalidity.core.floors import Floor
from evalvalidity.core.holes import _lookup_grades
from evalvalidity.core.kernels import Hits, Judged, evaluate
from evalvalidity.core.metrics import Metric
from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io._arrow import strings, to_numpy

if TYPE_CHECKING:
    from evalvalidity.analysis.nulls import Coded

__all__ = ["NEAR_IDENTICAL", "read_texts"]

#: Two texts are near-identical at this Jaccard similarity of their word sets or above.
NEAR_IDENTICAL = 0.9

_WORD = re.compile(r"\w+", re.UNICODE)


def normalise(text: str) -> str:
    """Lower-case words separated by single spaces."""
    return " ".join(_WORD.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    r"""Jaccard similarity :math:`|A \cap B| / |A \cup B|` of two texts' word sets (1 if both empty)."""
    x, y = set(a.split()), set(b.split())
    union = x | y
    return len(x & y) / len(union) if union else 1.0


def read_texts(path: str | Path) -> pa.Table:
    r"""Read ``id, text`` pairs: BEIR JSONL (``_id`` or ``id``, ``text``) or a TSV ``id<TAB>text``.

    Raises
    ------
    InputDataError
        When a line is not of either form.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "queries.tsv"
    ...     _ = path.write_text("q1\tfirst query\nq2\tsecond query\n")
    ...     read_texts(path).to_pydict()
    {'id': ['q1', 'q2'], 'text': ['first query', 'second query']}
    """
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"The texts file {str(path)!r} is not a file.")
    ids: list[str] = []
    texts: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            if path.suffix in (".jsonl", ".json"):
                try:
                    record = json.loads(line)
                    key = record.get("_id", record.get("id"))
                    text = record["text"]
                except (ValueError, KeyError, AttributeError) as exc:
                    raise InputDataError(
                        f"{path.name}, line {number}: expected a JSON object with '_id' and 'text'."
                    ) from exc
            else:
                key, tab, text = line.rstrip("\n").partition("\t")
                if not tab:
                    raise InputDataError(f"{path.name}, line {number}: expected 'id<TAB>text'.")
                if number == 1 and key.lower() in ("id", "_id", "qid", "docid"):
                    continue
            ids.append(str(key))
            texts.append(str(text))
    return pa.table({"id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string())})


def _text_matches(
    coded: Coded, query_texts: pa.Table, corpus_texts: pa.Table, depth: int | None
) -> np.ndarray:
    """True for each ranked row whose document's text is (nearly) the query's text."""
    cut = coded.run_position <= depth if depth is not None else np.ones(len(coded.run_doc), bool)
    qtext = dict(
        zip(
            query_texts.column("id").to_pylist(),
            query_texts.column("text").to_pylist(),
            strict=True,
        )
    )
    dtext = dict(
        zip(
            corpus_texts.column("id").to_pylist(),
            corpus_texts.column("text").to_pylist(),
            strict=True,
        )
    )
    normal_q = {str(q): normalise(qtext[q]) for q in coded.qids.tolist() if q in qtext}
    rows = np.flatnonzero(cut)
    docids = coded.docids(coded.run_doc[rows])
    match = np.zeros(len(coded.run_doc), bool)
    cache: dict[str, str] = {}
    for row, docid in zip(rows.tolist(), docids, strict=True):
        query = normal_q.get(str(coded.qids[coded.run_query[row]]))
        text = dtext.get(docid)
        if query is None or text is None:
            continue
        if docid not in cache:
            cache[docid] = normalise(text)
        doc = cache[docid]
        match[row] = doc == query or jaccard(doc, query) >= NEAR_IDENTICAL
    return match


def _score(
    coded: Coded, metric: Metric, drop_row: np.ndarray, drop_gold: np.ndarray, block: int
) -> float:
    """The model's mean with some ranked rows and some judgements removed (ranks close up).

    ``coded`` is sorted by query (:func:`~evalvalidity.analysis.nulls.by_query`); the
    per-query values are computed ``block`` queries at a time and averaged over all of them.
    """
    from evalvalidity.analysis.nulls import query_block_rows

    values = np.empty(coded.n_queries)
    for q0, q1, rows, golds in query_block_rows(coded, block):
        values[q0:q1] = _block_values(
            metric,
            q1 - q0,
            coded.run_query[rows] - q0,
            coded.run_doc[rows],
            coded.run_position[rows],
            drop_row[rows],
            coded.gold_query[golds] - q0,
            coded.gold_doc[golds],
            coded.gold_grade[golds],
            drop_gold[golds],
        )
    return float(np.mean(values))


def _block_values(
    metric: Metric,
    n_queries: int,
    rq: np.ndarray,
    rd: np.ndarray,
    rp: np.ndarray,
    drop_row: np.ndarray,
    gq: np.ndarray,
    gd: np.ndarray,
    gg: np.ndarray,
    drop_gold: np.ndarray,
) -> np.ndarray:
    """The per-query values of one block of queries (indices 0..n_queries−1)."""
    rq, rd, rp = (a.astype(np.int64, copy=False) for a in (rq, rd, rp))
    gq, gd = gq.astype(np.int64, copy=False), gd.astype(np.int64, copy=False)
    keep = ~drop_row
    removed = np.zeros(len(rq), np.int64)
    if drop_row.any():
        order = np.lexsort((rp, rq))
        sorted_q = rq[order]
        dropped = drop_row[order].astype(np.int64)
        before = np.cumsum(dropped) - dropped
        first = np.searchsorted(sorted_q, sorted_q, "left")
        base = np.concatenate(([0], np.cumsum(dropped)))[first]
        removed[order] = before - base
    position = rp - removed
    gold = ~drop_gold
    gq, gd, gg = gq[gold], gd[gold], gg[gold]
    _, grade = _lookup_grades(rq[keep], rd[keep], gq, gd, gg)
    hit = grade >= 1
    relevant = gg >= 1
    judged = Judged.from_items(gq[relevant], gg[relevant], n_queries)
    hits = Hits(rq[keep][hit], position[keep][hit], grade[hit])
    return evaluate(metric, hits, judged)


def _own_codes(coded: Coded, block: int) -> np.ndarray:
    """The document code of each query's own id (-1 when no document has it).

    The ids are made Arrow strings ``block`` queries at a time (:func:`strings` holds a
    Python bytes object per id while it builds them).
    """
    codes = np.full(coded.n_queries, -1, dtype=np.int64)
    for start in range(0, coded.n_queries, block):
        stop = min(start + block, coded.n_queries)
        index = pc.index_in(strings(coded.qids[start:stop]), value_set=coded.vocab)
        known = to_numpy(pc.is_valid(index))  # Arrow's to_numpy (and a -1 scalar) import pandas
        codes[start:stop][known] = to_numpy(pc.drop_null(index))
    return codes


def _floor_without(
    coded: Coded,
    floor: Floor,
    pool: PoolSpec,
    metric: Metric,
    qrels: pa.Table,
    drop_gold: np.ndarray,
) -> float | None:
    """The mean floor of the judgements without (q, q) (None when it cannot be computed).

    An exact floor is a per-query value: only the queries that judge themselves are computed
    again (a query left with no judgement leaves the mean); a Monte Carlo one (units, a metric
    not exact under deduplication) is drawn again for every query.
    """
    not_self = pc.invert(pc.equal(qrels.column("qid"), qrels.column("docid")))
    exact = pool.kind != "units" or pool.analytic_unit != "documents"
    if not (exact or metric.spec.exact_under_dedup) or len(floor.expected) != coded.n_queries:
        try:
            return float(np.mean(benchmark_floor(qrels.filter(not_self), pool, metric).expected))
        except (ParameterError, InputDataError):
            return None
    changed = np.unique(coded.gold_query[drop_gold])
    names = pa.array(coded.qids[changed].astype(object), pa.string())
    kept = qrels.filter(pc.and_(not_self, pc.is_in(qrels.column("qid"), value_set=names)))
    expected = np.asarray(floor.expected, dtype=np.float64).copy()
    present = np.ones(len(expected), bool)
    present[changed] = False
    if kept.num_rows:
        try:
            again = benchmark_floor(kept, pool, metric)
        except (ParameterError, InputDataError):
            return None
        # benchmark_floor's queries are sorted by id, as coded.qids are
        ids = np.asarray(sorted(set(kept.column("qid").to_pylist())), dtype=object)
        at = np.searchsorted(coded.qids[changed], ids)
        expected[changed[at]] = again.expected
        present[changed[at]] = True
    if not present.any():
        return None
    return float(np.mean(expected[present]))


def self_hits(
    coded: Coded,
    metric: Metric,
    floor: Floor,
    pool: PoolSpec,
    qrels: pa.Table,
    query_texts: pa.Table | None = None,
    corpus_texts: pa.Table | None = None,
    *,
    max_examples: int = 5,
    block: int | None = None,
) -> SelfHits:
    """Count self-hits and id collisions, and score the model and floor without them.

    Notes
    -----
    Query ids are looked up among the document ids of the judgements and of the ranking at
    the metric's depth. With :math:`S_q` the ranked rows of query q that are q itself (its id, or a text within
    :data:`NEAR_IDENTICAL` of its text), the score without self-hits ranks q's other items at
    positions closed up over :math:`S_q` and drops the judgements (q, q); the floor without
    them is the exact floor of the judgements without (q, q). The scores are computed
    ``block`` queries at a time (None: :data:`~evalvalidity.analysis.nulls.QUERY_BLOCK`).
    """
    from evalvalidity.analysis.nulls import QUERY_BLOCK, by_query

    block = QUERY_BLOCK if block is None else block
    coded = by_query(coded)
    own_doc = _own_codes(coded, block)
    queries_as_documents = int(np.count_nonzero(own_doc >= 0))
    row = coded.self_row.copy()
    text_matches = None
    if query_texts is not None and corpus_texts is not None:
        by_text = _text_matches(coded, query_texts, corpus_texts, metric.k)
        text_matches = int(by_text.sum())
        row |= by_text
    # The judgements of a query against its own id, among the coded judgements.
    drop_gold = coded.gold_doc == own_doc[coded.gold_query]
    ranked_self = len(np.unique(coded.run_query[row]))
    judged_self = len(np.unique(coded.gold_query[drop_gold]))
    shown = np.unique(np.concatenate((coded.run_query[row], coded.gold_query[drop_gold])))
    examples = tuple(str(q) for q in coded.qids[shown[:max_examples]])
    score_with = _score(
        coded, metric, np.zeros(len(row), bool), np.zeros(len(drop_gold), bool), block
    )
    score_without = _score(coded, metric, row, drop_gold, block)
    floor_with = float(np.mean(floor.expected)) if len(floor.expected) else 0.0
    floor_without: float | None = floor_with
    if judged_self:
        floor_without = _floor_without(coded, floor, pool, metric, qrels, drop_gold)
    return SelfHits(
        queries_as_documents=queries_as_documents,
        ranked_self=ranked_self,
        judged_self=judged_self,
        text_matches=text_matches,
        examples=examples,
        score_with=score_with,
        score_without=score_without,
        floor_with=floor_with,
        floor_without=floor_without,
    )
