r"""Segment ids: a units rule that maps ``doc#segment`` ids to their documents, no units file.

Some runs rank passages whose ids carry their document: TREC RAG 2024 ranks MS MARCO v2.1
segments such as ``msmarco_v2.1_doc_54_319914167#4_733739871``, judged per document
``msmarco_v2.1_doc_54_319914167``. A :class:`UnitsRule` ``prefix:#`` says "the document is the
part before the first ``#``" (an id without ``#`` is its own document); :func:`units_from_rule`
turns it into the units table (:data:`~evalvalidity.io.tables.UNITS_SCHEMA`) the scorer already
reads. :func:`segment_ids` recognises such runs.

Examples
--------
>>> import pyarrow as pa
>>> rule = parse_units_rule("prefix:#")
>>> run = pa.table({"qid": ["1", "1"], "docid": ["d7#0", "d7#3"], "score": [2.0, 1.0]})
>>> units_from_rule(run, rule).select(["chunk_id", "doc_id"]).to_pydict()
{'chunk_id': ['d7#0', 'd7#3'], 'doc_id': ['d7', 'd7']}
>>> qrels = pa.table({"qid": ["1"], "docid": ["d7"], "rel": [1]})
>>> found = segment_ids(run, qrels)
>>> found.segmented, found.suggested, found.run_share, found.matched_share
(True, 'prefix:#', 1.0, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from evalvalidity.errors import ParameterError
from evalvalidity.io._database import DEFAULT_MEMORY_LIMIT, connection
from evalvalidity.io.tables import UNITS_SCHEMA

__all__ = [
    "SEGMENT_SHARE",
    "SegmentIds",
    "UnitsRule",
    "parse_units_rule",
    "segment_ids",
    "units_from_rule",
]

#: A run is taken as ranking segments when at least this share of its distinct ids hold the
#: separator while the judgements' ids do not.
SEGMENT_SHARE = 0.9


@dataclass(frozen=True)
class UnitsRule:
    """The document of an id is the part before the first ``separator`` (``kind`` "prefix")."""

    kind: str
    separator: str

    @property
    def text(self) -> str:
        """The rule's spelling, e.g. ``'prefix:#'``."""
        return f"{self.kind}:{self.separator}"


def parse_units_rule(text: Any) -> UnitsRule:
    """Read a units rule spelled ``prefix:SEP`` (e.g. ``prefix:#``).

    Raises
    ------
    ParameterError
        For anything else.

    Examples
    --------
    >>> parse_units_rule("prefix:::").separator
    '::'
    >>> parse_units_rule("suffix:#")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The 'units_rule' parameter must be 'prefix:SEP' with a non-empty separator SEP, e.g. 'prefix:#'. Got 'suffix:#' instead.
    """
    if isinstance(text, str):
        kind, colon, separator = text.partition(":")
        if kind == "prefix" and colon and separator:
            return UnitsRule(kind, separator)
    raise ParameterError(
        "The 'units_rule' parameter must be 'prefix:SEP' with a non-empty separator SEP, e.g. "
        f"'prefix:#'. Got {text!r} instead."
    )


def _literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _document_sql(separator: str) -> str:
    position = f"strpos(docid, {separator})"
    return f"CASE WHEN {position} > 0 THEN left(docid, {position} - 1) ELSE docid END"


def units_from_rule(run: pa.Table, rule: UnitsRule | str) -> pa.Table:
    """The units table (chunk id → document id) a rule gives for every distinct id of ``run``.

    Parameters
    ----------
    run : pyarrow.Table
        A table with a ``docid`` column (a run).
    rule : UnitsRule or str

    Returns
    -------
    pyarrow.Table
        :data:`~evalvalidity.io.tables.UNITS_SCHEMA`, sorted by chunk id, ``line`` null.

    Examples
    --------
    >>> import pyarrow as pa
    >>> run = pa.table({"docid": ["d2::1", "d1::0", "d2::1", "d3"]})
    >>> units = units_from_rule(run, "prefix:::")
    >>> units.to_pydict()
    {'chunk_id': ['d1::0', 'd2::1', 'd3'], 'doc_id': ['d1', 'd2', 'd3'], 'line': [None, None, None]}
    """
    rule = rule if isinstance(rule, UnitsRule) else parse_units_rule(rule)
    if not isinstance(run, pa.Table) or "docid" not in run.column_names:
        raise ParameterError(
            "The 'run' parameter of units_from_rule must be a pyarrow.Table with a 'docid'"
            f" column. Got {type(run).__name__} instead."
        )
    con = duckdb.connect()
    try:
        con.register("run", run.select(["docid"]))
        table = con.sql(
            f"SELECT DISTINCT docid AS chunk_id, {_document_sql(_literal(rule.separator))}"
            " AS doc_id, CAST(NULL AS BIGINT) AS line FROM run ORDER BY chunk_id"
        ).to_arrow_table()
    finally:
        con.close()
    return table.cast(UNITS_SCHEMA)


@dataclass(frozen=True)
class SegmentIds:
    """Whether a run's ids look like ``doc#segment`` while the judgements' ids do not.

    Attributes
    ----------
    separator : str
    run_share : float
        Share of the run's distinct ids holding the separator.
    qrels_share : float
        Share of the judgements' distinct ids holding it.
    matched_share : float
        Share of the run's distinct documents (parts before the separator) that the judgements
        name; 0 when the run holds no id.
    example : str or None
        One of the run's segment ids.
    segmented : bool
        ``run_share >= SEGMENT_SHARE`` and ``qrels_share < 1 - SEGMENT_SHARE``.
    """

    separator: str
    run_share: float
    qrels_share: float
    matched_share: float
    example: str | None
    segmented: bool

    @property
    def suggested(self) -> str | None:
        """The units rule to offer (``'prefix:#'``), or None."""
        return f"prefix:{self.separator}" if self.segmented else None


def segment_ids(run: pa.Table, qrels: pa.Table, separator: str = "#") -> SegmentIds:
    r"""Recognise a run that ranks segments of the documents the judgements judge.

    Notes
    -----
    With :math:`S` the run's distinct ids and :math:`J` the judged ids,
    ``run_share`` = :math:`|\{s \in S : \mathrm{sep} \in s\}| / |S|` and ``matched_share`` =
    :math:`|\mathrm{prefix}(S) \cap J| / |\mathrm{prefix}(S)|`.

    Examples
    --------
    >>> import pyarrow as pa
    >>> run = pa.table({"docid": ["d1#0", "d1#1", "d2#0", "d9"]})
    >>> qrels = pa.table({"docid": ["d1", "d2", "d3"]})
    >>> found = segment_ids(run, qrels)
    >>> found.run_share, found.qrels_share, round(found.matched_share, 4), found.example
    (0.75, 0.0, 0.6667, 'd1#0')
    >>> found.segmented, found.suggested  # 0.75 < SEGMENT_SHARE
    (False, None)
    """
    if not isinstance(separator, str) or not separator:
        raise ParameterError(
            "The 'separator' parameter of segment_ids must be a non-empty str."
            f" Got {separator!r} instead."
        )
    con = connection(DEFAULT_MEMORY_LIMIT)  # the process's database: opening one costs ~50 ms
    try:
        con.register("run", run.select(["docid"]))
        con.register("qrels", qrels.select(["docid"]))
        sep = _literal(separator)
        row = con.sql(
            f"""
            WITH r AS (SELECT DISTINCT docid FROM run),
                 q AS (SELECT DISTINCT docid FROM qrels),
                 d AS (SELECT DISTINCT {_document_sql(sep)} AS doc FROM r)
            SELECT
              (SELECT count(*) FROM r),
              (SELECT count(*) FILTER (WHERE strpos(docid, {sep}) > 0) FROM r),
              (SELECT count(*) FROM q),
              (SELECT count(*) FILTER (WHERE strpos(docid, {sep}) > 0) FROM q),
              (SELECT count(*) FROM d),
              (SELECT count(*) FROM d JOIN q ON d.doc = q.docid),
              (SELECT min(docid) FROM r WHERE strpos(docid, {sep}) > 0)
            """
        ).fetchall()[0]
    finally:
        con.close()
    n_run, run_sep, n_qrels, qrels_sep, n_docs, matched, example = row
    run_share = run_sep / n_run if n_run else 0.0
    qrels_share = qrels_sep / n_qrels if n_qrels else 0.0
    matched_share = matched / n_docs if n_docs else 0.0
    segmented = run_share >= SEGMENT_SHARE and qrels_share < 1 - SEGMENT_SHARE
    return SegmentIds(separator, run_share, qrels_share, matched_share, example, segmented)
