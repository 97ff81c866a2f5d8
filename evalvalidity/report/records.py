"""Turn a :class:`~evalvalidity.analysis.results.CheckResult` into records, tables and text.

One place makes every outward form of a check: :func:`to_dict` (the JSON contract of
``evalvalidity check --format json``, versioned by ``schema_version``), :func:`to_frame` (the
triage table), :func:`to_markdown` (a pull-request comment) and :func:`to_text` (the terminal).
The dashboard and the HTML report read the same records.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from evalvalidity.analysis.results import CheckResult, HarnessCheck, Interval, NoiseCheck

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FLAG_TEXT", "to_dict", "to_frame", "to_json", "to_markdown", "to_text"]

#: What each triage flag means, for tables and tooltips.
FLAG_TEXT: dict[str, str] = {
    "floor_high": "the floor is at least half the ceiling",
    "pool_smaller_than_k": "the pool is smaller than k",
    "gold_ge_k": "at least k gold items",
    "gold_missing_from_pool": "judged gold outside the declared pool",
    "no_gold": "no gold item in the pool",
    "duplicated_gold": "duplicated judgements",
    "noise_above_floor": "the noise run is ≥ 3 standard deviations above the floor",
}

_VERDICT_MARK = {"healthy": "✅", "warning": "⚠️", "broken": "❌"}


def _num(value: Any) -> Any:
    """JSON-safe number: NaN and infinities become None; numpy scalars become Python's."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _interval(value: Interval | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {"estimate": _num(value.estimate), "ci": [_num(value.low), _num(value.high)]}


def _harness(check: HarnessCheck | None) -> dict[str, Any] | None:
    if check is None:
        return None
    return {
        "source": check.source,
        "ratio": _num(check.ratio.estimate),
        "ci": [_num(check.ratio.low), _num(check.ratio.high)],
        "passed": check.passed,
        "measured": _num(check.measured),
        "analytic": _num(check.analytic),
        "std_error": _num(check.std_error),
        "n_queries": check.n_queries,
        "n_seeds": check.n_seeds,
        "n_draws": check.n_draws,
        "importance_sampled": check.importance_sampled,
        "measure": check.measure,
        "missing_queries": list(check.missing_queries),
        "ignored_queries": check.ignored_queries,
    }


def _noise(check: NoiseCheck | None) -> dict[str, Any] | None:
    if check is None:
        return None
    return {
        "source": check.source,
        "ratio": _num(check.model_over_noise.estimate) if check.model_over_noise else None,
        "ci": (
            [_num(check.model_over_noise.low), _num(check.model_over_noise.high)]
            if check.model_over_noise
            else None
        ),
        "model": _num(check.model),
        "noise": _num(check.noise),
        "floor": _num(check.floor),
        "noise_over_floor": _interval(check.noise_over_floor),
        "model_over_floor": _interval(check.model_over_floor),
        "noise_z": _num(check.noise_z),
        "leak": check.leak,
        "tied_queries": check.tied_queries,
        "tie_aware_noise": _num(check.tie_aware_noise),
        "components_off": list(check.components_off) if check.components_off else None,
    }


def _other_nulls(result: CheckResult) -> dict[str, Any] | None:
    """The other nulls as plain data (None when the check ran none)."""
    nulls = result.nulls
    if nulls is None:
        return None
    qi, sh, seg, holes, inv, ties = (
        nulls.query_independent,
        nulls.self_hits,
        nulls.segments,
        nulls.holes,
        nulls.harness,
        nulls.ties,
    )
    return {
        "query_independent": None
        if qi is None
        else {
            "floor": _num(qi.floor),
            "ceiling": _num(qi.ceiling),
            "shuffle": _interval(qi.shuffle),
            "shuffle_variance": qi.shuffle_variance,
            "shuffle_pairs_hit": qi.shuffle_pairs_hit,
            "shuffle_skipped": qi.shuffle_skipped,
            "popularity": _interval(qi.popularity),
            "popularity_skipped": qi.popularity_skipped,
            "hubs": [{"docid": h.docid, "count": h.count, "share": _num(h.share)} for h in qi.hubs],
        },
        "self_hits": None
        if sh is None
        else {
            "queries_as_documents": sh.queries_as_documents,
            "ranked_self": sh.ranked_self,
            "judged_self": sh.judged_self,
            "text_matches": sh.text_matches,
            "examples": list(sh.examples),
            "score_with": _num(sh.score_with),
            "score_without": _num(sh.score_without),
            "floor_with": _num(sh.floor_with),
            "floor_without": _num(sh.floor_without),
        },
        "segments": None
        if seg is None
        else {
            "separator": seg.separator,
            "run_share": _num(seg.run_share),
            "qrels_share": _num(seg.qrels_share),
            "matched_share": _num(seg.matched_share),
            "example": seg.example,
            "segmented": seg.segmented,
            "suggested": seg.suggested,
            "applied": seg.applied,
        },
        "holes": None
        if holes is None
        else {
            "k": holes.k,
            "applicable": holes.applicable,
            "judged_at_k": _num(holes.overall_judged),
            "holes": holes.holes,
            "score": _interval(holes.interval),
            "depends": holes.depends,
        },
        "harness_invariants": None
        if inv is None
        else {
            "rows": inv.rows,
            "out_of_range": inv.out_of_range,
            "max_value": _num(inv.max_value),
            "above_one_recall": inv.above_one_recall,
            "duplicated": inv.duplicated,
            "missing": inv.missing,
            "examples": list(inv.examples),
        },
        "ties": None
        if ties is None
        else {
            "tied_queries": ties.tied_queries,
            "score": _interval(ties.interval),
            "threshold": _num(ties.threshold),
            "moved": list(ties.moved),
        },
    }


def _null_lines(result: CheckResult) -> list[tuple[str, str]]:
    """(label, value) pairs of the other nulls, for the text and Markdown summaries."""
    nulls = result.nulls
    if nulls is None:
        return []
    rows: list[tuple[str, str]] = []
    qi = nulls.query_independent
    if qi is not None and qi.shuffle is not None:
        rows.append(("query-shuffle null", qi.shuffle.format(3)))
    if qi is not None and qi.popularity is not None:
        rows.append(("popularity ranker [worst, best ties]", qi.popularity.format(3)))
    if qi is not None and qi.hubs:
        rows.append(("hub documents", ", ".join(f"{h.docid} ({h.count:,})" for h in qi.hubs[:3])))
    sh = nulls.self_hits
    if sh is not None and (sh.ranked_self or sh.judged_self or sh.text_matches):
        rows.append(
            (
                "score with / without self-hits",
                f"{_fmt(sh.score_with)} / {_fmt(sh.score_without)} (floor {_fmt(sh.floor_with)}"
                f" / {_fmt(sh.floor_without)})",
            )
        )
    seg = nulls.segments
    if seg is not None and seg.segmented:
        rows.append(
            (
                "segment ids",
                f"units rule {seg.applied or 'none (offer ' + str(seg.suggested) + ')'}",
            )
        )
    holes = nulls.holes
    if holes is not None and holes.applicable:
        rows.append(
            (
                f"judged@{holes.k}; score with holes",
                f"{holes.overall_judged:.0%}; {holes.interval.format(3)}",
            )
        )
    inv = nulls.harness
    if inv is not None and (inv.out_of_range or inv.duplicated or inv.missing):
        rows.append(
            (
                "harness rows out of range / duplicated / missing",
                f"{inv.out_of_range:,} / {inv.duplicated:,} / {inv.missing:,}",
            )
        )
    ties = nulls.ties
    if ties is not None and ties.tied_queries:
        rows.append(("model score over tie orders", ties.interval.format(3)))
    return rows


def _query_rows(result: CheckResult) -> list[dict[str, Any]]:
    t = result.queries
    rows = []
    for i in range(len(t)):
        rows.append(
            {
                "qid": str(t.qid[i]),
                "pool_size": int(t.pool_size[i]),
                "gold": int(t.gold[i]),
                "judged": int(t.judged[i]),
                "k": t.k,
                "floor": _num(float(t.floor[i])),
                "floor_std": _num(float(t.floor_std[i])),
                "ceiling": _num(float(t.ceiling[i])),
                "headroom": _num(float(t.headroom[i])),
                "model": _num(float(t.model[i])),
                "noise": _num(float(t.noise[i])),
                "z": _num(float(t.z[i])),
                "floor_share": _num(float(t.floor_share[i])),
                "flags": list(t.flags[i]),
            }
        )
    return rows


def to_dict(result: CheckResult) -> dict[str, Any]:
    """The check as plain JSON-ready data (the ``--format json`` contract).

    Keys: ``schema_version``, ``verdict``, ``reasons``, ``metric``, ``n_queries``, ``floor``,
    ``ceiling``, ``headroom``, ``floor_over_ceiling``, ``model_score``, ``adjusted_score``,
    ``checks`` (``harness``: Check 1, ``live``: Check 2 from a noise run or a live test),
    ``inferred_n``, ``power``, ``comparison``, ``pool``, ``notes``, ``queries`` (the triage
    rows) and ``plan`` (the :class:`~evalvalidity.analysis.plan.CheckPlan` that ran, as data).
    NaN and infinities are written as null.
    """
    head = result.headroom
    inferred = result.inferred_n
    live = result.live or result.noise
    out: dict[str, Any] = {
        "schema_version": result.schema_version,
        "verdict": result.verdict,
        "reasons": [
            {
                "severity": r.severity,
                "code": r.code,
                "message": r.message,
                "numbers": {k: _num(v) for k, v in r.numbers.items()},
            }
            for r in result.reasons
        ],
        "metric": result.metric.name,
        "run": result.run_name,
        "n_queries": result.n_queries,
        "floor": _num(head.floor),
        "ceiling": _num(head.ceiling),
        "headroom": _num(head.headroom),
        "floor_over_ceiling": _num(head.floor_over_ceiling),
        "model_score": _num(head.model),
        "model_ci": (
            [_num(head.model_interval.low), _num(head.model_interval.high)]
            if head.model_interval
            else None
        ),
        "adjusted_score": _interval(head.adjusted),
        "headroom_in_standard_errors": _num(head.headroom_in_se),
        "model_at_or_below_floor": head.at_or_below_floor,
        "flat_mean": _num(result.flat_mean),
        "floor_adjusted_mean": _num(result.adjusted_mean),
        "multi_gold_floor_share": _num(result.multi_gold_floor_share),
        "floor_method": result.floor_method,
        "pool": {
            "kind": result.pool_kind,
            "declared": _num(result.declared_pool),
            "declared_chunks": result.declared_chunks,
            "declared_documents": result.declared_documents,
        },
        "checks": {
            "harness": _harness(result.harness),
            "live": _noise(live),
        },
        "inferred_n": None
        if inferred is None
        else {
            "source": inferred.source,
            "measured": _num(inferred.measured),
            "estimate": _num(inferred.estimate),
            "ci": [_num(inferred.low), _num(inferred.high)],
            "saturated": inferred.saturated,
            "declared_pool": _num(inferred.declared_pool),
            "declared_chunks": inferred.declared_chunks,
            "declared_documents": inferred.declared_documents,
            "diagnosis": inferred.diagnosis,
            "by_gold": [
                {
                    "gold": c.gold,
                    "n_queries": c.n_queries,
                    "measured": _num(c.measured),
                    "estimate": _num(c.estimate),
                    "ci": [_num(c.low), _num(c.high)],
                }
                for c in inferred.by_gold
            ],
        },
        "power": None
        if result.power is None
        else {
            "n_queries": result.power.n_queries,
            "per_query_variance": _num(result.power.per_query_variance),
            "min_detectable_difference": _num(result.power.min_detectable_difference),
            "delta": _num(result.power.delta),
            "queries_needed": result.power.queries_needed,
            "alpha": result.power.alpha,
            "power": result.power.power,
        },
        "comparison": None
        if result.comparison is None
        else {
            "runs": [
                {"name": n, "mean": _num(m)}
                for n, m in zip(result.comparison.runs, result.comparison.means, strict=True)
            ],
            "test": result.comparison.table.test,
            "correction": result.comparison.table.correction,
            "pairs": [
                {
                    "a": r.system_a,
                    "b": r.system_b,
                    "difference": _num(r.difference),
                    "ci": [_num(r.low), _num(r.high)],
                    "p_value": _num(r.p_value),
                    "adjusted_p_value": _num(r.adjusted_p_value),
                    "cohens_dz": _num(r.cohens_dz),
                    "significant": r.significant,
                }
                for r in result.comparison.table.rows
            ],
        },
        "notes": list(result.notes),
        "queries": _query_rows(result),
        "plan": result.plan.to_dict() if result.plan is not None else None,
        "other_nulls": _other_nulls(result),
    }
    return out


def to_json(result: CheckResult, *, indent: int | None = 2) -> str:
    """The JSON text of :func:`to_dict`; byte-identical for identical inputs and seed."""
    return json.dumps(to_dict(result), indent=indent, ensure_ascii=False, allow_nan=False)


def to_frame(result: CheckResult) -> pd.DataFrame:
    """The triage table as a DataFrame (one row per query, sorted by share of the floor)."""
    import pandas as pd

    rows = _query_rows(result)
    frame = pd.DataFrame(rows)
    if not rows:
        return frame
    frame["flags"] = [", ".join(f) for f in frame["flags"]]
    return frame


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}g}"


def to_text(result: CheckResult) -> str:
    """A terminal summary: the verdict, its reasons and the key numbers."""
    head = result.headroom
    lines = [
        f"verdict: {result.verdict.upper()}   ({result.metric.name}, {result.n_queries:,} "
        f"queries, pool: {result.pool_kind})",
        "",
    ]
    for r in result.reasons:
        mark = {"broken": "✗", "warning": "!", "info": "·"}[r.severity]
        lines.append(f"  {mark} {r.message}")
    lines += [
        "",
        f"  floor {_fmt(head.floor)}   ceiling {_fmt(head.ceiling)}   headroom "
        f"{_fmt(head.headroom)}   floor/ceiling {_fmt(head.floor_over_ceiling, 3)}",
    ]
    if head.model is not None:
        mi = head.model_interval
        lines.append(
            f"  model {_fmt(head.model)}"
            + (f" [{_fmt(mi.low)}, {_fmt(mi.high)}]" if mi else "")
            + (f"   chance-adjusted {head.adjusted.format(3)}" if head.adjusted else "")
        )
    if result.harness is not None:
        h = result.harness
        lines.append(
            f"  check 1 ({h.source}): measured/analytic {h.ratio.format(3)} over "
            f"{h.n_draws:,} draws" + (" (importance-sampled)" if h.importance_sampled else "")
        )
    live = result.live or result.noise
    if live is not None:
        lines.append(
            f"  check 2 ({live.source}): noise {_fmt(live.noise)} = "
            f"{live.noise_over_floor.format(2)} × floor"
            + (f"; model/noise {live.model_over_noise.format(1)}" if live.model_over_noise else "")
        )
    if result.inferred_n is not None:
        n = result.inferred_n
        lines.append(
            f"  inferred N {_fmt(n.estimate, 5)} [{_fmt(n.low, 5)}, {_fmt(n.high, 5)}]   "
            f"declared {_fmt(n.declared_pool, 6)}"
            + (
                f" (chunks {n.declared_chunks:,}, documents {n.declared_documents:,})"
                if n.declared_chunks is not None and n.declared_documents is not None
                else ""
            )
        )
        if n.diagnosis:
            lines.append(f"    {n.diagnosis}")
    if result.power is not None:
        p = result.power
        lines.append(
            f"  power: smallest detectable difference {_fmt(p.min_detectable_difference, 3)} "
            f"(α=0.05, power 0.8); {p.queries_needed:,} queries to detect {p.delta:g}"
        )
    for label, value in _null_lines(result):
        lines.append(f"  {label}: {value}")
    flagged = sum(1 for f in result.queries.flags if f)
    lines.append(f"  {flagged:,} of {result.n_queries:,} queries flagged")
    for note in result.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines) + "\n"


def _md_escape(text: str) -> str:
    """Escape the package's own sentences for a Markdown line (they hold no user text)."""
    text = " ".join(text.splitlines())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


_MD_ID_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "|": "\\|",
    "\\": "\\\\",
    **{c: f"&#{ord(c)};" for c in "[]`*_~#"},
}


def _md_id(text: str) -> str:
    r"""Show a user's id (a query id, a run name) in a Markdown table cell as the text it is.

    HTML and the table's ``|`` are escaped, characters Markdown could read as a link, code,
    emphasis or a heading become numeric character references, and line breaks and other
    control characters become spaces, so an id can neither end its row nor render as markup.

    >>> _md_id("[x](y) *b* `c` <i>|")
    '&#91;x&#93;(y) &#42;b&#42; &#96;c&#96; &lt;i&gt;\\|'
    """
    return "".join(_MD_ID_ESCAPES.get(c, " " if ord(c) < 32 or ord(c) == 127 else c) for c in text)


def to_markdown(result: CheckResult, *, max_queries: int = 10) -> str:
    """A pull-request comment: the verdict, reasons, key numbers and the top flagged queries."""
    head = result.headroom
    mark = _VERDICT_MARK[result.verdict]
    out = [
        f"### {mark} Benchmark health: **{result.verdict}** "
        f"({result.metric.name}, {result.n_queries:,} queries)",
        "",
    ]
    for r in result.reasons:
        if r.severity != "info":
            out.append(f"- **{r.severity}**: {_md_escape(r.message)}")
    for r in result.reasons:
        if r.severity == "info":
            out.append(f"- {_md_escape(r.message)}")
    out += [
        "",
        "| | value |",
        "|---|---|",
        f"| floor (random ranker) | {_fmt(head.floor)} |",
        f"| ceiling | {_fmt(head.ceiling)} |",
        f"| headroom | {_fmt(head.headroom)} |",
        f"| floor / ceiling | {_fmt(head.floor_over_ceiling, 3)} |",
    ]
    if head.model is not None:
        out.append(f"| model ({_md_id(result.run_name or 'run')}) | {_fmt(head.model)} |")
    if head.adjusted is not None:
        out.append(f"| chance-adjusted score | {head.adjusted.format(3)} |")
    if result.harness is not None:
        out.append(f"| Check 1 measured / analytic | {result.harness.ratio.format(3)} |")
    live = result.live or result.noise
    if live is not None:
        out.append(f"| noise / floor | {live.noise_over_floor.format(2)} |")
        if live.model_over_noise is not None:
            out.append(f"| Check 2 model / noise | {live.model_over_noise.format(1)} |")
    if result.inferred_n is not None:
        n = result.inferred_n
        out.append(
            f"| inferred N | {_fmt(n.estimate, 5)} [{_fmt(n.low, 5)}, {_fmt(n.high, 5)}]"
            f" (declared {_fmt(n.declared_pool, 6)}) |"
        )
    if result.power is not None:
        out.append(
            f"| smallest detectable difference | "
            f"{_fmt(result.power.min_detectable_difference, 3)} |"
        )
    for label, value in _null_lines(result):
        out.append(f"| {_md_escape(label)} | {_md_id(value)} |")
    flagged = [i for i, f in enumerate(result.queries.flags) if f][:max_queries]
    if flagged:
        t = result.queries
        out += [
            "",
            "<details><summary>Flagged queries (by share of the floor)</summary>",
            "",
            "| qid | N | G | floor | model | flags |",
            "|---|---|---|---|---|---|",
        ]
        for i in flagged:
            out.append(
                f"| {_md_id(str(t.qid[i]))} | {int(t.pool_size[i]):,} | {int(t.gold[i])} | "
                f"{_fmt(float(t.floor[i]))} | {_fmt(float(t.model[i]))} | "
                f"{', '.join(t.flags[i])} |"
            )
        out += ["", "</details>"]
    return "\n".join(out) + "\n"
