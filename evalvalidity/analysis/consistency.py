r"""Do a plan's inputs belong together? Checked before any number is computed.

A check of a run against judgements it was not made for, or against another benchmark's units
map, computes believable numbers about nothing. :func:`check_consistency` compares the ids of
every pair of inputs that must agree and either refuses them (an
:class:`~evalvalidity.errors.InputDataError` whose message names both datasets and what they do
not share) or returns warnings that the verdict carries (rules ``*_queries_*`` and
``*_scores_zero`` at the end of :data:`~evalvalidity.analysis.rules.RULES`):

=================================  ==========================================================
what                               blocking when ... / warning when ...
=================================  ==========================================================
the run's queries vs the qrels'    none shared / fewer than half of the judged queries ranked
the run's ids vs the units map     none of the ranked ids is a chunk of the map
the run's ids vs the candidates    none of the ranked (query, id) pairs is a candidate
the noise run vs the model's run   no query shared / fewer than half of the model's queries
the harness output vs the qrels'   no query shared
a run to compare vs the model's    no query shared / it retrieves no judged-relevant item
the model's run vs the qrels       it retrieves no judged-relevant item (scores 0 everywhere)
=================================  ==========================================================

A share is the number of distinct queries (or ids) of one input found in the other, over the
number of distinct queries of the reference input:
:math:`\text{share} = |Q_a \cap Q_b| / |Q_b|`.

Examples
--------
>>> import pyarrow as pa
>>> from evalvalidity.analysis.check import plan_for_tables
>>> from evalvalidity.analysis.plan import CheckInputs, PoolSpec
>>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
>>> run = pa.table({"qid": ["1", "2"], "docid": ["a", "c"], "score": [1.0, 1.0]})
>>> pool = PoolSpec(corpus_size=10)
>>> plan = plan_for_tables(pool)
>>> check_consistency(plan, CheckInputs(qrels=qrels, pool=pool, run=run))
()
>>> other = pa.table({"qid": ["7"], "docid": ["a"], "score": [1.0]})
>>> check_consistency(plan, CheckInputs(qrels=qrels, pool=pool, run=other))
Traceback (most recent call last):
...
evalvalidity.errors.InputDataError: The run 'run' and the judgements 'qrels' share no query: the run ranks 1 query (first: '7'), the judgements judge 2 (first: '1', '2'). Choose the judgements made for this run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from evalvalidity.analysis.plan import CheckInputs, CheckPlan
from evalvalidity.errors import InputDataError
from evalvalidity.io._arrow import run_starts, select
from evalvalidity.io.scoring import retrieves_relevant

__all__ = ["MIN_QUERY_SHARE", "Inconsistency", "check_consistency"]

#: Below this share of the reference's queries, a partial overlap is a warning.
MIN_QUERY_SHARE = 0.5

#: How many ids a message quotes.
_QUOTED = 3


@dataclass(frozen=True)
class Inconsistency:
    """A warning about inputs that only partly belong together.

    Attributes
    ----------
    code : str
        The reason code of the rule that reports it (``run_queries_unjudged``, ...).
    message : str
        What is wrong, naming the datasets.
    numbers : mapping
        The counts the message rests on.
    """

    code: str
    message: str
    numbers: dict[str, Any] = field(default_factory=dict)


def _distinct(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The distinct values of ``column`` but null, in the order they first appear.

    A run lists each query's rows together: of a text column without nulls, only the values
    that differ from the one above can be new, and those are made distinct (a 7M-line run's
    query ids: 0.05 s instead of 0.14; the same values in the same order).

    >>> _distinct(pa.chunked_array([["q2", "q2", "q1"], ["q1", "q2", None]])).to_pylist()
    ['q2', 'q1']
    """
    if len(column) > 1 and column.null_count == 0 and pa.types.is_string(column.type):
        column = select(column, run_starts(column))
    values = pc.unique(column)
    return pc.drop_null(values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values)


def _quote(values: pa.Array) -> str:
    """The first few values (sorted, numbers as numbers), quoted and cut to 20 characters."""
    items = [str(v) for v in values.to_pylist()]
    items.sort(key=lambda s: (0, int(s), s) if s.isdigit() else (1, 0, s))
    shown = [repr(s if len(s) <= 20 else s[:17] + "...") for s in items[:_QUOTED]]
    return ", ".join(shown) + (", ..." if len(items) > _QUOTED else "")


def _queries(n: int) -> str:
    return f"{n:,} quer{'y' if n == 1 else 'ies'}"


def _shared(a: pa.Array, b: pa.Array) -> int:
    return int(pc.sum(pc.is_in(a, value_set=b)).as_py() or 0) if len(a) and len(b) else 0


def _name(plan: CheckPlan, role: str, default: str) -> str:
    ref = plan.refs.get(role)
    return ref.name if ref is not None else default


def _relevant_hits(
    run: pa.Table, qrels: pa.Table, units: pa.Table | None
) -> int:  # 1 when a ranked (query, item) pair is judged relevant, else 0
    return int(retrieves_relevant(run, qrels, units))


def _query_overlap(
    found: list[Inconsistency],
    a_qids: pa.Array,
    b_qids: pa.Array,
    *,
    a: str,
    b: str,
    verb_a: str,
    verb_b: str,
    fix: str,
    code: str | None,
    warn: str = "",
) -> None:
    """Refuse ``a`` and ``b`` sharing no query; warn when ``a`` covers under half of ``b``."""
    shared = _shared(b_qids, a_qids)
    if shared == 0:
        raise InputDataError(
            f"The {a} and the {b} share no query: the {a.split(' ', 1)[0]} {verb_a} "
            f"{_queries(len(a_qids))} (first: {_quote(a_qids)}), the {b.split(' ', 1)[0]} "
            f"{verb_b} {len(b_qids):,} (first: {_quote(b_qids)}). {fix}"
        )
    if code is not None and shared < MIN_QUERY_SHARE * len(b_qids):
        found.append(
            Inconsistency(
                code,
                warn.format(shared=shared, total=len(b_qids), share=shared / len(b_qids)),
                {"shared": shared, "total": len(b_qids), "share": shared / len(b_qids)},
            )
        )


def _ids_in_map(run: pa.Table, units: pa.Table, what: str, units_name: str) -> None:
    ids = _distinct(run.column("docid"))
    chunks = _distinct(units.column("chunk_id"))
    if len(ids) and _shared(ids, chunks) == 0:
        raise InputDataError(
            f"None of the {len(ids):,} ids ranked in the {what} is a chunk of the units map "
            f"'{units_name}' (the run ranks {_quote(ids)}; the map's chunks are "
            f"{_quote(chunks)}): they do not belong together. Choose the units map of this "
            "run's corpus."
        )


def _ids_in_candidates(run: pa.Table, candidates: pa.Table, what: str, name: str) -> None:
    ranked = run.select(["qid", "docid"])
    pairs = candidates.select(["qid", "docid"])
    if ranked.num_rows and ranked.join(pairs, ["qid", "docid"], join_type="inner").num_rows == 0:
        raise InputDataError(
            f"None of the items ranked in the {what} is a candidate of its query in "
            f"'{name}' (the run ranks {_quote(_distinct(run.column('docid')))}; the "
            f"candidates are {_quote(_distinct(candidates.column('docid')))}): they do not "
            "belong together. Choose the candidate lists this run was drawn from."
        )


def check_consistency(plan: CheckPlan, inputs: CheckInputs) -> tuple[Inconsistency, ...]:
    """Refuse inputs that do not belong together; the warnings about those that partly do.

    Parameters
    ----------
    plan : CheckPlan
        Names the inputs (messages use its dataset names).
    inputs : CheckInputs
        The loaded tables.

    Returns
    -------
    tuple of Inconsistency
        Warnings, in the order of the module's table.

    Raises
    ------
    InputDataError
        When two inputs that must agree share no query or no id (module notes).

    Examples
    --------
    A run and judgements on the same queries and ids: nothing to warn about.

    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import plan_for_tables
    >>> from evalvalidity.analysis.plan import PoolSpec
    >>> pool = PoolSpec(corpus_size=8)
    >>> qrels = pa.table({"qid": ["q1", "q2"], "docid": ["d1", "d2"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["q1", "q2"], "docid": ["d1", "d3"], "score": [1.0, 1.0]})
    >>> check_consistency(plan_for_tables(pool), CheckInputs(pool=pool, run=run, qrels=qrels))
    ()
    """
    found: list[Inconsistency] = []
    qrels = inputs.qrels
    qrels_name = f"judgements '{_name(plan, 'qrels', 'qrels')}'"
    judged = _distinct(qrels.column("qid"))
    pool = inputs.pool
    pool_name = _name(plan, "pool", pool.kind)
    units = pool.units if pool.kind == "units" else None

    run = inputs.run
    run_qids = _distinct(run.column("qid")) if run is not None else None
    run_label = f"run '{_name(plan, 'run', plan.run_name)}'"
    if run is not None and run_qids is not None:
        _query_overlap(
            found,
            run_qids,
            judged,
            a=run_label,
            b=qrels_name,
            verb_a="ranks",
            verb_b="judge",
            fix="Choose the judgements made for this run.",
            code="run_queries_unjudged",
            warn="Only {shared:,} of the {total:,} judged queries ({share:.1%}) have a ranking "
            f"in the {run_label}: the others score 0. Are these the judgements made for it?",
        )
        if units is not None:
            _ids_in_map(run, units, run_label, pool_name)
        if pool.candidates is not None:
            _ids_in_candidates(run, pool.candidates, run_label, pool_name)
        if _relevant_hits(run, qrels, units) == 0:
            found.append(
                Inconsistency(
                    "run_scores_zero",
                    f"The {run_label} retrieves no item judged relevant in the {qrels_name}: "
                    "it scores 0 on every query. Do they belong together?",
                    {"relevant_retrieved": 0},
                )
            )

    noise = inputs.noise_run
    if noise is not None:
        noise_label = f"noise run '{_name(plan, 'noise_run', 'noise run')}'"
        reference, ref_label = (
            (run_qids, f"model's {run_label}") if run_qids is not None else (judged, qrels_name)
        )
        _query_overlap(
            found,
            _distinct(noise.column("qid")),
            reference,
            a=noise_label,
            b=ref_label,
            verb_a="ranks",
            verb_b="ranks" if run_qids is not None else "judge",
            fix="Choose the noise run made from the same pipeline and queries.",
            code="noise_queries_differ",
            warn="The " + noise_label + " ranks only {shared:,} of the {total:,} queries "
            f"({{share:.1%}}) of the {ref_label}: Check 2 compares different queries.",
        )
        if units is not None:
            _ids_in_map(noise, units, noise_label, pool_name)
        if pool.candidates is not None:
            _ids_in_candidates(noise, pool.candidates, noise_label, pool_name)

    harness = inputs.harness_output
    if harness is not None:
        _query_overlap(
            found,
            _distinct(harness.column("qid")),
            judged,
            a=f"harness output '{_name(plan, 'harness_output', 'harness output')}'",
            b=qrels_name,
            verb_a="scores",
            verb_b="judge",
            fix="Choose the harness output computed on these judgements.",
            code=None,
        )

    for name, other in inputs.compare.items():
        label = f"run to compare '{_name(plan, f'compare:{name}', name)}'"
        if run_qids is not None:
            _query_overlap(
                found,
                _distinct(other.column("qid")),
                run_qids,
                a=label,
                b=f"model's {run_label}",
                verb_a="ranks",
                verb_b="ranks",
                fix="Compare runs of the same queries, or leave this one out.",
                code=None,
            )
        if units is not None:
            _ids_in_map(other, units, label, pool_name)
        if _relevant_hits(other, qrels, units) == 0:
            found.append(
                Inconsistency(
                    "compare_scores_zero",
                    f"The {label} retrieves no item judged relevant in the {qrels_name}: it "
                    "scores 0 on every query, and its comparison says nothing. Leave it out "
                    "or choose the run made for these judgements.",
                    {"run": name, "relevant_retrieved": 0},
                )
            )
    return tuple(found)
