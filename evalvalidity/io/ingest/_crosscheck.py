"""Does a run speak the judgements' language? ID spaces and query coverage."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from evalvalidity.errors import ParameterError
from evalvalidity.io._compute import pc

# (how a message shows the suffix, the pattern that matches it at the end of an ID)
CHUNK_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("#N", r"#[0-9]+$"),
    ("-chunk-N", r"[-_:.]?chunk[-_:.]?[0-9]+$"),
    ("-pN", r"[-_:.]p(?:assage)?[0-9]+$"),
    ("_N", r"[-_:.][0-9]+$"),
)
_EXAMPLES = 3


@dataclass(frozen=True)
class CrossCheck:
    """How a run's IDs and queries line up with the judgements (and a units map).

    Attributes
    ----------
    n_run_ids : int
        Distinct item IDs in the run.
    n_run_ids_judged : int
        Of those, how many occur in the qrels (after mapping through the units map, if given).
    n_run_ids_in_units : int or None
        Of those, how many the units map knows (None without a units map).
    chunk_suffix : str or None
        The suffix the run IDs seem to carry (``#N``, ``-chunk-N``, ``_N``, ...), when most of
        them end with one.
    n_match_after_strip : int
        Run IDs that occur in the qrels once that suffix is stripped (0 without a suffix).
    n_run_queries, n_judged_queries : int
        Distinct queries in the run and in the qrels.
    run_queries_unjudged, judged_queries_unranked : int
        Queries of the run with no judgement, judged queries the run does not rank.
    examples_unjudged, examples_unranked : tuple of str
        A few of each.
    problems : tuple of str
        What looks wrong, one sentence each; empty when the run and the qrels line up.
    notes : tuple of str
        Every count above, worded.
    """

    n_run_ids: int
    n_run_ids_judged: int
    n_run_ids_in_units: int | None
    chunk_suffix: str | None
    n_match_after_strip: int
    n_run_queries: int
    n_judged_queries: int
    run_queries_unjudged: int
    judged_queries_unranked: int
    examples_unjudged: tuple[str, ...]
    examples_unranked: tuple[str, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when nothing looks wrong."""
        return not self.problems


def _distinct(table: pa.Table, column: str) -> pa.Array:
    return pc.unique(table.column(column).combine_chunks().cast(pa.string()))


def _count_in(values: pa.Array, value_set: pa.Array) -> int:
    return int(pc.sum(pc.is_in(values, value_set=value_set)).as_py() or 0)


def _examples(values: pa.Array, mask: pa.Array) -> tuple[str, ...]:
    return tuple(str(v) for v in values.filter(mask).slice(0, _EXAMPLES).to_pylist())


def _quoted(examples: tuple[str, ...]) -> str:
    return ", ".join(repr(e) for e in examples)


def cross_check(run: pa.Table, qrels: pa.Table, units: pa.Table | None = None) -> CrossCheck:
    """Check that a run and its judgements share an ID space and cover the same queries.

    Parameters
    ----------
    run, qrels : pyarrow.Table
        A RUN table (``qid``, ``docid``) and a QRELS table (``qid``, ``docid``).
    units : pyarrow.Table, optional
        A UNITS table (``chunk_id``, ``doc_id``) mapping the run's chunks to the qrels'
        documents.

    Returns
    -------
    CrossCheck
        The counts, and ``problems`` worded for the user.

    Examples
    --------
    >>> run = pa.table({"qid": ["1", "1"], "docid": ["184#0", "29#2"]})
    >>> qrels = pa.table({"qid": ["1"], "docid": ["184"]})
    >>> cross_check(run, qrels).problems[0]
    "0 of 2 run IDs occur in the qrels; they look like chunk IDs (e.g. '184#0', '29#2'): with the suffix #N stripped, 1 of 2 would match — upload a units map"
    >>> units = pa.table({"chunk_id": ["184#0", "29#2"], "doc_id": ["184", "29"]})
    >>> cross_check(run, qrels, units).ok
    True
    """
    for name, table, needed in (
        ("run", run, ("qid", "docid")),
        ("qrels", qrels, ("qid", "docid")),
        ("units", units, ("chunk_id", "doc_id")),
    ):
        if table is None:
            continue
        missing = [c for c in needed if c not in table.column_names]
        if missing:
            raise ParameterError(
                f"The {name} table of cross_check needs the columns {', '.join(needed)}; "
                f"missing: {', '.join(missing)}."
            )
    run_ids = _distinct(run, "docid")
    judged_ids = _distinct(qrels, "docid")
    n = len(run_ids)
    problems: list[str] = []
    notes: list[str] = []
    n_in_units: int | None = None
    if units is not None:
        chunk_ids = units.column("chunk_id").combine_chunks().cast(pa.string())
        doc_ids = units.column("doc_id").combine_chunks().cast(pa.string())
        positions = pc.index_in(run_ids, value_set=chunk_ids)
        n_in_units = int(pc.sum(pc.is_valid(positions)).as_py() or 0)
        mapped = pc.unique(pc.take(doc_ids, positions.drop_null()))
        n_judged = _count_in(run_ids, judged_ids)  # directly, before mapping
        n_mapped_judged = _count_in(mapped, judged_ids)
        notes.append(f"{n_in_units:,} of {n:,} run IDs occur in the units map")
        notes.append(
            f"{n_mapped_judged:,} of the {len(mapped):,} documents they map to occur in the qrels"
        )
        if n_in_units < n:
            missing_mask = pc.invert(pc.is_valid(positions))
            problems.append(
                f"{n - n_in_units:,} of {n:,} run IDs are not in the units map "
                f"(e.g. {_quoted(_examples(run_ids, missing_mask))})"
            )
        if len(mapped) and n_mapped_judged == 0:
            problems.append(
                f"none of the {len(mapped):,} documents the units map gives occurs in the qrels:"
                " the units map and the qrels use different document IDs"
            )
        n_judged = n_mapped_judged
        suffix, n_strip = None, 0
    else:
        n_judged = _count_in(run_ids, judged_ids)
        notes.append(f"{n_judged:,} of {n:,} run IDs occur in the qrels")
        examples: tuple[str, ...] = ()
        suffix, n_strip = None, 0
        for label, pattern in CHUNK_SUFFIXES:
            has = pc.match_substring_regex(run_ids, pattern)
            if (pc.sum(has).as_py() or 0) < 0.9 * n:
                continue
            stripped = pc.replace_substring_regex(run_ids, pattern, "")
            matched = _count_in(stripped, judged_ids)
            if suffix is None or matched > n_strip:
                suffix, n_strip = label, matched
                examples = tuple(str(v) for v in run_ids.slice(0, 2).to_pylist())
        if n and suffix is not None and (n_judged == 0 or n_strip > 2 * n_judged):
            problems.append(
                f"{n_judged:,} of {n:,} run IDs occur in the qrels; they look like chunk IDs"
                f" (e.g. {_quoted(examples)}): with the suffix {suffix} stripped, {n_strip:,} of"
                f" {n:,} would match — upload a units map"
            )
        elif n and n_judged == 0:
            problems.append(
                f"0 of {n:,} run IDs occur in the qrels: the run and the qrels use different"
                f" ID spaces (run: {_quoted(tuple(str(v) for v in run_ids.slice(0, 2).to_pylist()))};"
                f" qrels: {_quoted(tuple(str(v) for v in judged_ids.slice(0, 2).to_pylist()))})"
            )
    run_qids = _distinct(run, "qid")
    judged_qids = _distinct(qrels, "qid")
    unjudged = pc.invert(pc.is_in(run_qids, value_set=judged_qids))
    unranked = pc.invert(pc.is_in(judged_qids, value_set=run_qids))
    n_unjudged = int(pc.sum(unjudged).as_py() or 0)
    n_unranked = int(pc.sum(unranked).as_py() or 0)
    ex_unjudged = _examples(run_qids, unjudged)
    ex_unranked = _examples(judged_qids, unranked)
    if n_unjudged:
        problems.append(
            f"{n_unjudged:,} of {len(run_qids):,} queries in the run have no judgements"
            f" (e.g. {_quoted(ex_unjudged)})"
        )
    if n_unranked:
        problems.append(
            f"{n_unranked:,} of {len(judged_qids):,} judged queries have no ranking in the run"
            f" (e.g. {_quoted(ex_unranked)})"
        )
    notes.append(
        f"{len(run_qids):,} queries in the run, {len(judged_qids):,} judged; "
        f"{n_unjudged:,} unjudged, {n_unranked:,} unranked"
    )
    return CrossCheck(
        n_run_ids=n,
        n_run_ids_judged=n_judged,
        n_run_ids_in_units=n_in_units,
        chunk_suffix=suffix,
        n_match_after_strip=n_strip,
        n_run_queries=len(run_qids),
        n_judged_queries=len(judged_qids),
        run_queries_unjudged=n_unjudged,
        judged_queries_unranked=n_unranked,
        examples_unjudged=ex_unjudged,
        examples_unranked=ex_unranked,
        problems=tuple(problems),
        notes=tuple(notes),
    )
