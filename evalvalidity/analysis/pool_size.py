"""The pool size a measured random score implies, by exact inversion, and its diagnosis.

:func:`infer_pool_size` inverts the exact floor (:func:`evalvalidity.core.floors.infer_benchmark_pool_size`)
for the whole benchmark and for each class of queries sharing a gold count;
:func:`diagnose_pool_size` names the likely cause when the inferred size does not match the
declared pool (the units bug, double counting, a leak, ids that do not match).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import Benchmark, quietly
from evalvalidity.analysis.results import GoldClass, InferredPoolSizeCheck
from evalvalidity.core import floors
from evalvalidity.core.metrics import Metric
from evalvalidity.errors import ParameterError

__all__ = ["run_fits_units"]


def infer_pool_size(
    bench: Benchmark, metric: Metric, source: str, per_query: np.ndarray, se: float, pool: PoolSpec
) -> InferredPoolSizeCheck | None:
    """The inferred pool size for the queries with gold (None for a metric that cannot invert)."""
    if metric.family not in floors.INVERTIBLE_FAMILIES:
        return None
    present = np.isfinite(per_query) & (bench.gold > 0)
    if not present.any():
        return None
    measured = float(np.mean(per_query[present]))
    gold = bench.gold[present]
    judged = bench.judged[present]
    whole = quietly(
        floors.infer_benchmark_pool_size,
        metric,
        measured,
        gold,
        std_error=se if np.isfinite(se) and se > 0 else None,
        judged=judged,
    )
    classes = []
    for g in np.unique(gold).tolist():
        members = gold == g
        values = per_query[present][members]
        class_mean = float(np.mean(values))
        class_se = (
            float(np.std(values, ddof=1) / np.sqrt(len(values)))
            if len(values) > 1 and np.isfinite(se)
            else None
        )
        inferred = quietly(
            floors.infer_benchmark_pool_size,
            metric,
            class_mean,
            gold[members],
            std_error=class_se,
            judged=judged[members],
        )
        # One query has no spread to estimate a standard error from: its class gets the
        # point estimate and no interval (not one of zero width).
        single = class_se is None
        classes.append(
            GoldClass(
                int(g),
                int(members.sum()),
                class_mean,
                float(np.asarray(inferred.estimate).ravel()[0]),
                math.nan if single else float(np.asarray(inferred.low).ravel()[0]),
                math.nan if single else float(np.asarray(inferred.high).ravel()[0]),
            )
        )
    estimate = float(np.asarray(whole.estimate).ravel()[0])
    low = float(np.asarray(whole.low).ravel()[0])
    high = float(np.asarray(whole.high).ravel()[0])
    saturated = bool(np.asarray(whole.saturated).ravel()[0])
    result = InferredPoolSizeCheck(
        source=source,
        measured=measured,
        estimate=estimate,
        low=low,
        high=high,
        saturated=saturated,
        declared_pool=bench.declared_pool,
        declared_chunks=bench.declared_chunks,
        declared_documents=bench.declared_documents,
        by_gold=tuple(classes),
        diagnosis=None,
    )
    return result


def diagnose_pool_size(
    inferred: InferredPoolSizeCheck, pool: PoolSpec, check_passed: bool
) -> str | None:
    """Name the likely cause of an inferred N that does not match the declared pool."""
    n, low, high = inferred.estimate, inferred.low, inferred.high
    chunks, docs, declared = (
        inferred.declared_chunks,
        inferred.declared_documents,
        inferred.declared_pool,
    )
    if check_passed or declared is None:
        return None
    if math.isinf(n):
        return (
            "The measured random score is 0: the harness found no gold at all. Check that "
            "its IDs match the judgements' IDs (chunk vs document IDs, prefixes)."
        )
    if chunks is not None and docs is not None:
        if pool.analytic_unit == "chunks" and n < chunks / 2:
            if inferred.source == "harness-output":
                text = (
                    f"Your harness counts documents (≈ {docs:,}), not chunks ({chunks:,}): "
                    f"the measured random score implies a pool of ≈ {n:,.0f}. Declare the "
                    "analytic unit documents so that the analytic deduplicates too."
                )
            else:
                # The package's scorer ranks the chunks and deduplicates them to documents
                # through the declared map: it is the analytic that counts the wrong unit.
                text = (
                    f"Scored through the units map, the chunks are deduplicated to documents "
                    f"(≈ {docs:,}), but the analytic counts chunks ({chunks:,}): the measured "
                    f"random score implies a pool of ≈ {n:,.0f}. Declare the analytic unit "
                    "documents for a pipeline that deduplicates."
                )
            if high < docs:
                text += (
                    " Inferred N is below the document count: gold documents have more "
                    "chunks than average (size-biased gold under max pooling)."
                )
            return text
        if high < docs / 3:
            return (
                f"Inferred N (≈ {n:,.0f}) is far below both the chunk count ({chunks:,}) "
                f"and the document count ({docs:,}): the scorer may be double-counting, "
                "or the gold leaks into the ranking."
            )
    if high < declared / 1.5:
        return (
            f"The measured random score implies a pool of ≈ {n:,.0f} [{low:,.0f}, "
            f"{high:,.0f}], far below the declared {declared:,.0f}: your harness may rank a "
            "coarser unit than the pool counts (e.g. documents after deduplicating chunks: "
            "declare the pool in the unit it scores), double-count hits, or the gold leaks "
            "into the ranking."
        )
    if low > declared * 1.5:
        return (
            f"The measured random score implies a pool of ≈ {n:,.0f}, above the declared "
            f"{declared:,.0f}: the harness may miss gold (IDs that do not match the "
            "judgements), drop judged queries, or the pool is larger than declared."
        )
    return None


def run_fits_units(run: pa.Table, units: pa.Table, run_name: str) -> None:
    """Raise when ``run`` ranks the documents of the units map instead of its chunks.

    A run deduplicated to documents already cannot be scored through the map (its ids are no
    chunk ids); the fix is to check it against a corpus of the map's documents.

    Examples
    --------
    >>> units = pa.table({"chunk_id": ["a#0", "a#1", "b#0"], "doc_id": ["a", "a", "b"]})
    >>> run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 1.0]})
    >>> run_fits_units(run, units, "run.trec")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: run.trec ranks the units map's documents, not its chunks: 2 of its 2 ids are document ids of the map and 0 are chunk ids. Check a run of documents against a corpus of the map's 2 documents (--pool-size 2, PoolSpec(corpus_size=2)), not against the units map.
    """
    # Hash joins in Arrow: numpy's isin compares every pair of object strings.
    ids = pc.unique(run.column("docid"))
    doc_ids = pc.unique(units.column("doc_id"))
    as_chunks = pc.sum(pc.is_in(ids, value_set=units.column("chunk_id").combine_chunks())).as_py()
    as_docs = pc.sum(pc.is_in(ids, value_set=doc_ids)).as_py()
    as_chunks, as_docs = int(as_chunks or 0), int(as_docs or 0)
    if as_docs > as_chunks and as_docs >= len(ids) / 2:
        d = len(doc_ids)
        raise ParameterError(
            f"{run_name} ranks the units map's documents, not its chunks: {as_docs:,} of its "
            f"{len(ids):,} ids are document ids of the map and {as_chunks:,} are chunk ids. "
            f"Check a run of documents against a corpus of the map's {d:,} documents "
            f"(--pool-size {d}, PoolSpec(corpus_size={d})), not against the units map."
        )
