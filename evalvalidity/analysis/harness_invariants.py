r"""Harness-output invariants: counting bugs a harness's per-query output shows by itself.

Before Check 1 reads the mean of a harness's output, the rows themselves can prove the harness
miscounts: every metric of :mod:`evalvalidity.core.metrics` lies in [0, 1], so a value outside
it (Recall@100 = 3.003 is what a harness reports when it counts every chunk of a document as a
hit) is a bug, and so is a (seed, query) row written twice. A judged query missing from a seed
that other seeds score is reported too (separately from Check 1's own handling of queries a
harness leaves out).

Examples
--------
>>> import numpy as np
>>> import pyarrow as pa
>>> from evalvalidity.core.metrics import parse_metric
>>> out = pa.table({"seed": [0, 0, 0, 1], "qid": ["a", "b", "b", "a"],
...                 "measure": ["recall_100"] * 4, "value": [0.5, 3.003, 0.2, 0.1]})
>>> found = harness_invariants(out, parse_metric("r@100"), np.array(["a", "b"]))
>>> found.out_of_range, found.above_one_recall, found.duplicated, found.missing
(1, 1, 1, 1)
>>> found.max_value
3.003
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from evalvalidity.analysis.results_nulls import HarnessInvariants
from evalvalidity.core.metrics import Metric
from evalvalidity.io.tables import conform

__all__ = ["METRIC_RANGE", "harness_invariants"]

#: The range every metric of the registry lies in.
METRIC_RANGE = (0.0, 1.0)


def harness_invariants(
    harness: pa.Table,
    metric: Metric,
    qids: np.ndarray | Sequence[str],
    *,
    measure: str | None = None,
    max_examples: int = 5,
) -> HarnessInvariants:
    """Count the rows of a harness's output that no correct scorer could write.

    Parameters
    ----------
    harness : pyarrow.Table
        ``HARNESS_SCHEMA`` (seed, qid, measure, value).
    metric : Metric
    qids : array of str
        The judged queries.
    measure : str, optional
        Keep only the rows of this measure (the one Check 1 reads); rows with a null measure
        are always kept.
    max_examples : int, default 5
        How many offending rows to describe.

    Returns
    -------
    HarnessInvariants

    Notes
    -----
    A row is out of range when its value v is not finite or lies outside [0, 1]; a row is
    duplicated when its (seed, qid, measure) occurred before; a (seed, q) is missing when seed
    scores some judged query but not the judged query q.

    Examples
    --------
    A value above 1, a repeated (seed, qid, measure) and a query seed 1 never scored:

    >>> import pyarrow as pa
    >>> from evalvalidity.core.metrics import parse_metric
    >>> harness = pa.table({
    ...     "seed": [0, 0, 0, 1], "qid": ["q0", "q1", "q1", "q0"],
    ...     "measure": ["rr@10"] * 4, "value": [0.5, 1.5, 0.2, 0.25],
    ... })
    >>> found = harness_invariants(harness, parse_metric("rr@10"), ["q0", "q1"])
    >>> found.out_of_range, found.duplicated, found.missing, found.examples
    (1, 1, 1, ('query q1 (seed 0): 1.5',))
    """
    table = conform(harness, "harness")
    low, high = METRIC_RANGE
    con = duckdb.connect()
    try:
        con.register("h", table)
        con.register("judged", pa.table({"qid": pa.array(np.asarray(qids, dtype=object))}))
        keep = "TRUE" if measure is None else "(measure IS NULL OR measure = $1)"
        con.execute(
            "CREATE TEMP TABLE rows AS SELECT coalesce(seed, -1) AS seed, qid, measure, value"
            f" FROM h WHERE {keep} AND qid IN (SELECT qid FROM judged)",
            [measure] if measure is not None else [],
        )
        bad = f"(NOT isfinite(value) OR value < {low!r} OR value > {high!r})"
        n_rows, out_of_range, above_one, max_value = con.sql(
            f"SELECT count(*), count(*) FILTER (WHERE {bad}), count(*) FILTER (WHERE value > 1),"
            " max(value) FROM rows"
        ).fetchall()[0]
        duplicated = con.sql(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM rows"
            " GROUP BY seed, qid, measure)"
        ).fetchall()[0][0]
        missing = con.sql(
            "SELECT count(*) FROM (SELECT DISTINCT seed FROM rows) s CROSS JOIN judged j"
            " WHERE NOT EXISTS (SELECT 1 FROM rows r WHERE r.seed = s.seed AND r.qid = j.qid)"
        ).fetchall()[0][0]
        shown = con.sql(
            f"SELECT seed, qid, value FROM rows WHERE {bad} ORDER BY value DESC, seed, qid"
            f" LIMIT {int(max_examples)}"
        ).fetchall()
    finally:
        con.close()
    examples = tuple(
        f"query {qid}{'' if seed < 0 else f' (seed {seed})'}: {value:.4g}"
        for seed, qid, value in shown
    )
    recall = metric.family == "r"
    return HarnessInvariants(
        rows=int(n_rows),
        low=low,
        high=high,
        out_of_range=int(out_of_range),
        max_value=float(max_value) if max_value is not None else None,
        above_one_recall=int(above_one) if recall else 0,
        duplicated=int(duplicated),
        missing=int(missing),
        examples=examples,
    )
