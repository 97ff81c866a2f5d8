"""The verdict's rules as one table: reason code → severity, message template, threshold.

Each :class:`Rule` of :data:`RULES` says when it applies (a predicate on the check's findings),
the numbers it rests on (emitted with the reason) and the message it writes (a
:meth:`str.format` template over those numbers and a few words); its ``threshold`` names the
:class:`~evalvalidity.analysis.plan.Thresholds` field that draws its line, if one does. A code
may have several rows, one per severity (``check1_ratio`` is ``broken`` outside
``Thresholds.ratio_band`` and ``warning`` inside it). :func:`verdict` walks the table in order
and returns the worst severity found (``broken`` > ``warning`` > ``healthy``) with the reasons.
Rules of scope ``noise`` are walked once for the noise run and once for the live noise test.
:data:`NEXT_STEPS` is the table's last column, one per code (:attr:`Rule.next_step`): what to do
next about a reason, in plain words, for the report's first paragraph.

Examples
--------
>>> sorted({rule.code for rule in RULES})[:4]
['check1_depth', 'check1_missing_values', 'check1_passed', 'check1_ratio']
>>> rule = next(r for r in RULES if r.code == "no_headroom")
>>> rule.severity, rule.threshold
('broken', 'floor_share_broken')
>>> rule.next_step.split(":")[0]
'Make the task harder'
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evalvalidity.analysis.check1 import Z95
from evalvalidity.analysis.consistency import Inconsistency
from evalvalidity.analysis.plan import Severity, Thresholds, Verdict
from evalvalidity.analysis.results import (
    HarnessCheck,
    Headroom,
    InferredPoolSizeCheck,
    Interval,
    NoiseCheck,
    QueryTable,
    Reason,
)
from evalvalidity.analysis.results_nulls import OtherNulls
from evalvalidity.core.metrics import Metric

__all__ = ["NEXT_STEPS", "RULES", "Findings", "Rule"]


@dataclass(frozen=True)
class Findings:
    """What the checks found, as the rules read it.

    ``check`` and ``label`` name the noise check a rule of scope ``noise`` is applied to.
    """

    metric: Metric
    thresholds: Thresholds
    n_queries: int
    headroom: Headroom
    harness: HarnessCheck | None
    noise: NoiseCheck | None
    live: NoiseCheck | None
    inferred: InferredPoolSizeCheck | None
    queries: QueryTable
    check: NoiseCheck | None = None
    label: str = ""
    consistency: tuple[Inconsistency, ...] = ()
    nulls: OtherNulls | None = None

    @property
    def noise_check(self) -> NoiseCheck:
        """The noise check a ``noise`` rule is applied to."""
        assert self.check is not None
        return self.check

    @property
    def harness_check(self) -> HarnessCheck:
        """Check 1 (for the rules of scope ``harness``)."""
        assert self.harness is not None
        return self.harness


@dataclass(frozen=True)
class Rule:
    """One row of the verdict table.

    Attributes
    ----------
    code : str
        The reason's code.
    severity : {"broken", "warning", "info"}
        What the reason weighs in the verdict.
    template : str
        The message, formatted with the numbers and the words.
    threshold : str or None
        The :class:`~evalvalidity.analysis.plan.Thresholds` field the rule compares with.
    scope : {"benchmark", "harness", "noise", "model"}
        What the rule needs: always applicable, Check 1, a noise check, or a model run.
    when : callable
        ``when(findings) -> bool``: the rule applies.
    numbers : callable
        ``numbers(findings) -> dict``: the numbers the reason rests on.
    words : callable
        ``words(findings) -> dict``: the template's other fields.
    """

    code: str
    severity: Severity
    template: str
    threshold: str | None
    scope: Literal["benchmark", "harness", "noise", "model"]
    when: Callable[[Findings], bool]
    numbers: Callable[[Findings], Mapping[str, Any]]
    words: Callable[[Findings], Mapping[str, Any]] = lambda f: {}

    def message(self, findings: Findings) -> str:
        """The reason's message for ``findings``."""
        return self.template.format(**self.numbers(findings), **self.words(findings))

    @property
    def next_step(self) -> str:
        """What to do next about the reason, in plain words (:data:`NEXT_STEPS` of its code)."""
        return NEXT_STEPS[self.code]


# -- the findings each group of rules reads ----------------------------------------------------


def _share(f: Findings) -> float:
    share = f.headroom.floor_over_ceiling
    return -1.0 if share is None else share


def _headroom_numbers(f: Findings) -> dict[str, Any]:
    h = f.headroom
    return {
        "floor": h.floor,
        "ceiling": h.ceiling,
        "headroom": h.headroom,
        "floor_over_ceiling": h.floor_over_ceiling,
    }


def _headroom_words(f: Findings) -> dict[str, Any]:
    return {"percent": 100 * _share(f), "metric": f.metric.name}


def _check1_numbers(f: Findings) -> dict[str, Any]:
    h = f.harness_check
    return {
        "ratio": h.ratio.estimate,
        "low": h.ratio.low,
        "high": h.ratio.high,
        "measured": h.measured,
        "analytic": h.analytic,
        "n_draws": h.n_draws,
    }


def _check1_words(f: Findings) -> dict[str, Any]:
    h = f.harness_check
    diagnosis = f.inferred.diagnosis if f.inferred is not None else None
    return {
        "where": (
            "the package's scorer on seeded random rankings"
            if h.source == "builtin"
            else "your harness on noise runs"
        ),
        "ratio_text": h.ratio.format(),
        "diagnosis": f" {diagnosis}" if diagnosis else "",
    }


def _missing_numbers(f: Findings) -> dict[str, Any]:
    h = f.harness_check
    return {"missing_values": h.missing_values, "expected_values": h.expected_values}


def _outside_band(f: Findings) -> bool:
    lo, hi = f.thresholds.ratio_band
    r = f.harness_check.ratio
    return r.low > hi or r.high < lo


def _noise_numbers(f: Findings) -> dict[str, Any]:
    c = f.noise_check
    nf = c.noise_over_floor
    return {
        "noise": c.noise,
        "floor": c.floor,
        "z": c.noise_z,
        "noise_over_floor": nf.estimate,
        "low": nf.low,
        "high": nf.high,
    }


def _leak_words(f: Findings) -> dict[str, Any]:
    c = f.noise_check
    if c.all_tied:
        aware = c.tie_aware_noise
        cause = (
            "its scores are all equal within each query, so its order is the tie-breaking's "
            "alone: a tie leak (ties broken by an ID order that favours gold)"
            + (f"; averaged over the orders of the ties it scores {aware:.4g}" if aware else "")
        )
    elif c.components_off:
        cause = "it states that BM25 and rerankers were off, so look at tie-breaking and the gold"
    else:
        cause = (
            "BM25 or a reranker left on in a hybrid pipeline, or ties broken by an "
            "ID order that favours gold; the run's metadata does not say which "
            "components were off"
        )
    return {"label": f.label, "cause": cause}


def _file_order_numbers(f: Findings) -> dict[str, Any]:
    c = f.noise_check
    return {"noise": c.noise, "floor": c.floor, "file_order_noise": c.file_order_noise}


def _file_order_words(f: Findings) -> dict[str, Any]:
    c = f.noise_check
    order = c.file_order_noise or 0.0
    return {
        "label": f.label,
        "times": order / c.floor if c.floor > 0 else math.inf,
        "how": "its scores are all equal within each query"
        if c.all_tied
        else f"it has tied scores in {c.tied_queries:,} quer{'y' if c.tied_queries == 1 else 'ies'}",
    }


def _above_floor(f: Findings) -> bool:
    c = f.noise_check
    return not c.leak and c.noise_z >= f.thresholds.noise_z and c.noise_over_floor.low > 1


def _tie_numbers(f: Findings) -> dict[str, Any]:
    c = f.noise_check
    return {"tied_queries": c.tied_queries, "tie_aware_noise": c.tie_aware_noise, "noise": c.noise}


def _ties_matter(f: Findings) -> bool:
    # Ties matter when averaging over the orders of each tied group moves the value by more
    # than a standard error of the noise mean (or 5 % of it).
    c = f.noise_check
    if not c.tied_queries or c.tie_aware_noise is None:
        return False
    nf = c.noise_over_floor
    se = (nf.high - nf.low) / (2 * Z95) * c.floor if c.floor > 0 else 0.0
    return abs(c.tie_aware_noise - c.noise) > max(se, 0.05 * c.noise)


def _tie_words(f: Findings) -> dict[str, Any]:
    c = f.noise_check
    aware = c.tie_aware_noise
    return {
        "label": f.label,
        "plural": "y" if c.tied_queries == 1 else "ies",
        "aware_text": f" ({aware:.4g})." if aware is not None else ".",
    }


def _flagged(flag: str) -> Callable[[Findings], int]:
    def count(f: Findings) -> int:
        return sum(flag in row for row in f.queries.flags)

    return count


def _query_words(count: Callable[[Findings], int]) -> Callable[[Findings], dict[str, Any]]:
    return lambda f: {"y_has": "y has" if count(f) == 1 else "ies have"}


def _flagged_queries_rule(code: str, flag: str, template: str) -> Rule:
    """The warning ``code``: some queries carry the triage ``flag`` (their count in ``{queries}``)."""
    count = _flagged(flag)
    return Rule(
        code,
        "warning",
        template,
        None,
        "benchmark",
        lambda f: count(f) > 0,
        lambda f: {"queries": count(f)},
        _query_words(count),
    )


#: The verdict table, in the order the reasons are listed.
def _of_code(f: Findings, code: str) -> list[Inconsistency]:
    return [i for i in f.consistency if i.code == code]


def _inconsistent(code: str) -> Callable[[Findings], bool]:
    return lambda f: bool(_of_code(f, code))


def _inconsistency_numbers(code: str) -> Callable[[Findings], dict[str, Any]]:
    def numbers(f: Findings) -> dict[str, Any]:
        found = _of_code(f, code)
        return dict(found[0].numbers) if len(found) == 1 else {"count": len(found)}

    return numbers


def _inconsistency_words(code: str) -> Callable[[Findings], dict[str, Any]]:
    return lambda f: {"message": " ".join(i.message for i in _of_code(f, code))}


RULES: tuple[Rule, ...] = (
    Rule(
        "no_headroom",
        "broken",
        "A random ranker scores {percent:.0f} % of a perfect one ({metric} floor {floor:.3f}, "
        "ceiling {ceiling:.3f}): every model lands in a {headroom:.2f}-wide sliver.",
        "floor_share_broken",
        "benchmark",
        lambda f: _share(f) >= f.thresholds.floor_share_broken,
        _headroom_numbers,
        _headroom_words,
    ),
    Rule(
        "low_headroom",
        "warning",
        "A random ranker scores {percent:.0f} % of a perfect one (floor {floor:.3f}, ceiling "
        "{ceiling:.3f}).",
        "floor_share_warning",
        "benchmark",
        lambda f: f.thresholds.floor_share_warning <= _share(f) < f.thresholds.floor_share_broken,
        _headroom_numbers,
        _headroom_words,
    ),
    Rule(
        "check1_ratio",
        "broken",
        "Check 1 fails: {where} measured {measured:.4g} against an exact floor of "
        "{analytic:.4g} (ratio {ratio_text}).{diagnosis}",
        "ratio_band",
        "harness",
        lambda f: not f.harness_check.passed and _outside_band(f),
        _check1_numbers,
        _check1_words,
    ),
    Rule(
        "check1_ratio",
        "warning",
        "Check 1 fails: {where} measured {measured:.4g} against an exact floor of "
        "{analytic:.4g} (ratio {ratio_text}).{diagnosis}",
        "ratio_band",
        "harness",
        lambda f: not f.harness_check.passed and not _outside_band(f),
        _check1_numbers,
        _check1_words,
    ),
    Rule(
        "check1_passed",
        "info",
        "Check 1 passes: {where} measured {ratio_text} × the exact floor.",
        None,
        "harness",
        lambda f: f.harness_check.passed,
        _check1_numbers,
        _check1_words,
    ),
    Rule(
        "check1_missing_values",
        "warning",
        "Your harness output has no value for {missing_values:,} of the {expected_values:,} "
        "(query, random run) pairs and none of its values is 0: it seems to write only "
        "queries with a non-zero score. Check 1 counted the missing ones as 0; make the harness "
        "write every query (trec_eval: -c) so that a missing query is not mistaken for a zero.",
        None,
        "harness",
        lambda f: f.harness_check.missing_values > 0 and f.harness_check.zeros_left_out,
        _missing_numbers,
    ),
    Rule(
        "check1_missing_values",
        "warning",
        "Your harness output has no value for {missing_values:,} of the {expected_values:,} "
        "(query, random run) pairs; Check 1 compares the values it has, query by query. A "
        "harness that skips queries may also skip them when it scores a model.",
        None,
        "harness",
        lambda f: f.harness_check.missing_values > 0 and not f.harness_check.zeros_left_out,
        _missing_numbers,
    ),
    Rule(
        "check1_depth",
        "warning",
        "Your harness's values match random rankings read to depth {implied_depth:,}, not the "
        "{depth:,} items per query the random runs hold: check how deep your harness reads "
        "(or which runs it scored) and the depth declared (the runs' manifest.json).",
        None,
        "harness",
        lambda f: f.harness_check.implied_depth is not None and f.harness_check.depth is not None,
        lambda f: {"implied_depth": f.harness_check.implied_depth, "depth": f.harness_check.depth},
    ),
    Rule(
        "noise_leak",
        "broken",
        "The {label} scores {noise:.4g}, {noise_over_floor:.1f}× its floor ({floor:.4g}; "
        "z = {z:.1f}): something other than the vectors carries the score — {cause}.",
        "leak_z",
        "noise",
        lambda f: f.noise_check.leak,
        _noise_numbers,
        _leak_words,
    ),
    Rule(
        "noise_tie_leak",
        "broken",
        "The {label}'s own order scores {file_order_noise:.4g}, {times:.1f}× its floor "
        "({floor:.4g}), through its ties alone: {how}, and averaged over the orders of each "
        "tied group (ties='average', what this check scores) it is {noise:.4g}. Whatever "
        "ordered the file broke the ties in favour of gold: a tie leak.",
        "leak_z",
        "noise",
        lambda f: f.noise_check.file_order_leak and not f.noise_check.leak,
        _file_order_numbers,
        _file_order_words,
    ),
    Rule(
        "noise_above_floor",
        "warning",
        "The {label} sits above its floor ({interval} × the floor, z = {z:.1f}).",
        "noise_z",
        "noise",
        _above_floor,
        _noise_numbers,
        lambda f: {"label": f.label, "interval": f.noise_check.noise_over_floor.format()},
    ),
    Rule(
        "noise_ties",
        "warning",
        "The {label} has tied scores in {tied_queries:,} quer{plural}: its value ({noise:.4g}) "
        "depends on tie-breaking; averaged over the orders of each tied group it is "
        "{tie_aware_noise:.4g}.",
        None,
        "noise",
        _ties_matter,
        _tie_numbers,
        _tie_words,
    ),
    Rule(
        "noise_ties",
        "info",
        "The {label} has tied scores in {tied_queries:,} quer{plural}; averaging over the "
        "orders of each tied group does not change its value{aware_text}",
        None,
        "noise",
        lambda f: bool(f.noise_check.tied_queries) and not _ties_matter(f),
        _tie_numbers,
        _tie_words,
    ),
    Rule(
        "model_over_noise",
        "info",
        "Check 2: the model scores {ratio_text} × the {label}.",
        None,
        "noise",
        lambda f: f.noise_check.model_over_noise is not None,
        lambda f: {"ratio": _model_over_noise(f).estimate},
        lambda f: {"label": f.label, "ratio_text": _model_over_noise(f).format(1)},
    ),
    Rule(
        "model_below_floor",
        "warning",
        "The model ({model:.4g}, 95 % interval [{low:.4g}, {high:.4g}]) is significantly "
        "worse than a random ranker (floor {floor:.4g}): check that the run's IDs match the "
        "judgements.",
        None,
        "model",
        lambda f: _below_floor(f),
        lambda f: {
            "model": f.headroom.model,
            "floor": f.headroom.floor,
            "low": _model_interval(f).low,
            "high": _model_interval(f).high,
        },
    ),
    Rule(
        "model_at_floor",
        "warning",
        "The model ({model:.4g}) is not distinguishable from its floor ({floor:.4g}): check "
        "that the run's IDs match the judgements.",
        None,
        "model",
        lambda f: f.headroom.at_or_below_floor and not _below_floor(f),
        lambda f: {"model": f.headroom.model, "floor": f.headroom.floor},
    ),
    Rule(
        "few_standard_errors",
        "warning",
        "Only {headroom_in_se:.1f} standard errors of the model's mean fit in the headroom with "
        "{n_queries:,} queries: only gross differences are detectable.",
        "min_headroom_se",
        "model",
        lambda f: (
            f.headroom.headroom_in_se is not None
            and f.headroom.headroom_in_se < f.thresholds.min_headroom_se
        ),
        lambda f: {"headroom_in_se": f.headroom.headroom_in_se, "n_queries": f.n_queries},
    ),
    *(
        _flagged_queries_rule(code, flag, template)
        for code, flag, template in (
            (
                "no_gold",
                "no_gold",
                "{queries:,} quer{y_has} no gold item in the pool: they score 0 for every system.",
            ),
            (
                "gold_missing",
                "gold_missing_from_pool",
                "{queries:,} quer{y_has} judged gold outside the declared pool.",
            ),
            (
                "pool_smaller_than_k",
                "pool_smaller_than_k",
                "{queries:,} quer{y_has} a pool smaller than k.",
            ),
        )
    ),
    *(
        Rule(
            code,
            "warning",
            "{message}",
            None,
            "benchmark",
            _inconsistent(code),
            _inconsistency_numbers(code),
            _inconsistency_words(code),
        )
        for code in (
            "run_queries_unjudged",
            "run_scores_zero",
            "noise_queries_differ",
            "compare_scores_zero",
        )
    ),
)


def _model_interval(f: Findings) -> Any:
    value = f.headroom.model_interval
    assert value is not None
    return value


def _below_floor(f: Findings) -> bool:
    """The model's interval lies wholly below its floor."""
    interval = f.headroom.model_interval
    return interval is not None and interval.high < f.headroom.floor


def _model_over_noise(f: Findings) -> Any:
    value = f.noise_check.model_over_noise
    assert value is not None
    return value


def _subjects(rule: Rule, findings: Findings) -> list[Findings]:
    """The findings ``rule`` is applied to: none, once, or once per noise check."""
    if rule.scope == "harness":
        return [findings] if findings.harness is not None else []
    if rule.scope == "model":
        return [findings] if findings.headroom.model is not None else []
    if rule.scope == "noise":
        return [
            dataclasses.replace(findings, check=check, label=label)
            for check, label in ((findings.noise, "noise run"), (findings.live, "live noise test"))
            if check is not None
        ]
    return [findings]


def verdict(findings: Findings) -> tuple[Verdict, tuple[Reason, ...]]:
    """Walk :data:`RULES` over ``findings``: the verdict and the reasons behind it."""
    reasons: list[Reason] = []
    for rule in RULES:
        for subject in _subjects(rule, findings):
            if rule.when(subject):
                reasons.append(
                    Reason(rule.severity, rule.code, rule.message(subject), rule.numbers(subject))
                )
    severities = {r.severity for r in reasons}
    result: Verdict = (
        "broken" if "broken" in severities else "warning" if "warning" in severities else "healthy"
    )
    return result, tuple(reasons)


# -- the other nulls ---------------------------------------------------------------------------


def _nulls(f: Findings) -> OtherNulls:
    assert f.nulls is not None
    return f.nulls


def _detectable(f: Findings) -> float:
    """The smallest detectable difference, or ``Thresholds.delta`` without a model's power."""
    value = f.nulls.min_detectable if f.nulls is not None else None
    return value if value is not None else f.thresholds.delta


def _far_above(f: Findings, value: Interval | None) -> bool:
    """A query-independent ranker scores far above the uniform floor (see nulls.NULL_SHARE)."""
    from evalvalidity.analysis.nulls import NULL_SHARE

    qi = _nulls(f).query_independent
    if qi is None or value is None:
        return False
    share = qi.adjusted(value.estimate)
    return (
        share is not None
        and share >= NULL_SHARE
        and value.low - qi.floor > f.thresholds.leak_z * qi.floor_std
    )


def _independent_applies(f: Findings) -> bool:
    if f.nulls is None or f.nulls.query_independent is None:
        return False
    qi = f.nulls.query_independent
    return _far_above(f, qi.shuffle) or _far_above(f, qi.popularity)


def _independent_numbers(f: Findings) -> dict[str, Any]:
    qi = _nulls(f).query_independent
    assert qi is not None
    return {
        "shuffle": qi.shuffle.estimate if qi.shuffle else None,
        "popularity": qi.popularity.estimate if qi.popularity else None,
        "floor": qi.floor,
        "ceiling": qi.ceiling,
        "hubs": [h.docid for h in qi.hubs],
    }


def _independent_words(f: Findings) -> dict[str, Any]:
    qi = _nulls(f).query_independent
    assert qi is not None
    parts = []
    if qi.shuffle is not None:
        parts.append(f"the query-shuffle null scores {qi.shuffle.format(3)}")
    if qi.popularity is not None:
        parts.append(f"the popularity ranker {qi.popularity.format(3)}")
    hubs = ", ".join(f"{h.docid} ({h.share:.0%} of queries)" for h in qi.hubs[:3])
    return {
        "which": " and ".join(parts),
        "hub_text": f" Hub documents: {hubs}." if hubs else "",
    }


def _self(f: Findings) -> Any:
    hits = _nulls(f).self_hits
    assert hits is not None
    return hits


def _self_moves(f: Findings) -> bool:
    if f.nulls is None or f.nulls.self_hits is None:
        return False
    s = f.nulls.self_hits
    moved = (
        s.score_with is not None
        and s.score_without is not None
        and abs(s.score_with - s.score_without) > _detectable(f)
    )
    return moved or s.judged_self >= 0.1 * f.n_queries


def _self_numbers(f: Findings) -> dict[str, Any]:
    s = _self(f)
    return {
        "queries_as_documents": s.queries_as_documents,
        "ranked_self": s.ranked_self,
        "judged_self": s.judged_self,
        "text_matches": s.text_matches,
        "score_with": s.score_with,
        "score_without": s.score_without,
        "floor_with": s.floor_with,
        "floor_without": s.floor_without,
    }


def _self_words(f: Findings) -> dict[str, Any]:
    s = _self(f)
    floor = f"{s.floor_without:.4g}" if s.floor_without is not None else "–"
    return {
        "examples": ", ".join(s.examples) or "–",
        "texts": f", {s.text_matches:,} by their texts" if s.text_matches else "",
        "floor_text": floor,
    }


def _segments(f: Findings) -> Any:
    seg = _nulls(f).segments
    assert seg is not None
    return seg


def _holes(f: Findings) -> Any:
    holes = _nulls(f).holes
    assert holes is not None
    return holes


def _holes_matter(f: Findings) -> bool:
    if f.nulls is None or f.nulls.holes is None or not f.nulls.holes.applicable:
        return False
    h = f.nulls.holes
    return h.interval.high - h.interval.low > _detectable(f)


def _hole_numbers(f: Findings) -> dict[str, Any]:
    h = _holes(f)
    return {
        "k": h.k,
        "judged_at_k": h.overall_judged,
        "holes": h.holes,
        "score": h.score,
        "low": h.interval.low,
        "high": h.interval.high,
        "depends": h.depends,
        "threshold": _detectable(f),
    }


def _invariants(f: Findings) -> Any:
    inv = _nulls(f).harness
    assert inv is not None
    return inv


def _has_invariants(f: Findings) -> bool:
    return f.nulls is not None and f.nulls.harness is not None


def _invariant_numbers(f: Findings) -> dict[str, Any]:
    inv = _invariants(f)
    return {
        "rows": inv.rows,
        "out_of_range": inv.out_of_range,
        "max_value": inv.max_value,
        "above_one_recall": inv.above_one_recall,
        "duplicated": inv.duplicated,
        "missing": inv.missing,
    }


def _invariant_words(f: Findings) -> dict[str, Any]:
    inv = _invariants(f)
    recall = (
        f" — recall above 1 in {inv.above_one_recall:,} rows: the harness counts every chunk of a"
        " document as a hit"
        if inv.above_one_recall
        else ""
    )
    return {
        "metric": f.metric.name,
        "examples": "; ".join(inv.examples),
        "recall": recall,
        "plural": "" if inv.out_of_range == 1 else "s",
    }


def _ties(f: Findings) -> Any:
    tie = _nulls(f).ties
    assert tie is not None
    return tie


def _has_ties(f: Findings) -> bool:
    return f.nulls is not None and f.nulls.ties is not None and f.nulls.ties.tied_queries > 0


def _ties_move(f: Findings) -> bool:
    if not _has_ties(f):
        return False
    t = _ties(f)
    return bool(t.interval.high - t.interval.low > _detectable(f))


def _model_tie_numbers(f: Findings) -> dict[str, Any]:
    t = _ties(f)
    return {
        "tied_queries": t.tied_queries,
        "average": t.interval.estimate,
        "worst": t.interval.low,
        "best": t.interval.high,
        "score": t.score,
        "moved": len(t.moved),
        "threshold": _detectable(f),
    }


def _model_tie_words(f: Findings) -> dict[str, Any]:
    t = _ties(f)
    shown = ", ".join(t.moved[:5]) + (", …" if len(t.moved) > 5 else "")
    return {
        "plural": "y" if t.tied_queries == 1 else "ies",
        "moved_text": f" Queries moving by more than that: {shown}." if t.moved else "",
    }


RULES = (
    *RULES,
    Rule(
        "query_independent",
        "warning",
        "A ranker that ignores the query scores far above the uniform floor ({floor:.4g}; "
        "ceiling {ceiling:.3f}): {which}. The benchmark rewards popularity or a prior, not "
        "retrieval.{hub_text}",
        "leak_z",
        "benchmark",
        _independent_applies,
        _independent_numbers,
        _independent_words,
    ),
    Rule(
        "self_hits",
        "warning",
        "{ranked_self:,} rankings hold their own query (by id{texts}) and {judged_self:,} "
        "queries are judged against themselves (e.g. {examples}): the score is "
        "{score_with:.4g} with them and {score_without:.4g} without (floor {floor_with:.4g} "
        "and {floor_text}).",
        None,
        "model",
        _self_moves,
        _self_numbers,
        _self_words,
    ),
    Rule(
        "self_hits",
        "info",
        "{queries_as_documents:,} query ids also occur as document ids; {ranked_self:,} "
        "rankings hold their own query{texts}; without them the score is {score_without:.4g} "
        "(with: {score_with:.4g}).",
        None,
        "model",
        lambda f: (
            f.nulls is not None
            and f.nulls.self_hits is not None
            and not _self_moves(f)
            and (f.nulls.self_hits.queries_as_documents > 0 or bool(f.nulls.self_hits.text_matches))
        ),
        _self_numbers,
        _self_words,
    ),
    Rule(
        "segment_ids",
        "warning",
        "{run_share:.0%} of the run's ids look like document{separator}segment (e.g. "
        "{example}) while the judgements judge documents: score with the units rule "
        "prefix:{separator} (--units-rule prefix:{separator}); {matched_share:.0%} of the "
        "run's documents are judged.",
        None,
        "model",
        lambda f: (
            f.nulls is not None
            and f.nulls.segments is not None
            and f.nulls.segments.segmented
            and f.nulls.segments.applied is None
        ),
        lambda f: {
            "run_share": _segments(f).run_share,
            "qrels_share": _segments(f).qrels_share,
            "matched_share": _segments(f).matched_share,
        },
        lambda f: {"separator": _segments(f).separator, "example": _segments(f).example},
    ),
    Rule(
        "units_rule",
        "info",
        "The run's ids were mapped to documents by the units rule {rule} (the part before "
        "{separator!r}); {matched_share:.0%} of its documents are judged.",
        None,
        "model",
        lambda f: (
            f.nulls is not None
            and f.nulls.segments is not None
            and f.nulls.segments.applied not in (None, "units")
        ),
        lambda f: {"matched_share": _segments(f).matched_share},
        lambda f: {
            "rule": _segments(f).applied,
            "separator": str(_segments(f).applied).partition(":")[2],
        },
    ),
    Rule(
        "judgement_holes",
        "warning",
        "The score depends on unjudged documents: judged@{k} is {judged_at_k:.0%} "
        "({holes:,} holes); with the holes all relevant or all not the score spans "
        "[{low:.4g}, {high:.4g}] around {score:.4g}, wider than the smallest detectable "
        "difference ({threshold:.3g}); {depends:,} queries change.",
        None,
        "model",
        _holes_matter,
        _hole_numbers,
    ),
    Rule(
        "judgement_holes",
        "info",
        "judged@{k} is {judged_at_k:.0%}; the holes leave the score in [{low:.4g}, {high:.4g}].",
        None,
        "model",
        lambda f: (
            f.nulls is not None
            and f.nulls.holes is not None
            and f.nulls.holes.applicable
            and not _holes_matter(f)
        ),
        _hole_numbers,
    ),
    Rule(
        "harness_out_of_range",
        "broken",
        "The harness output holds {out_of_range:,} value{plural} outside [0, 1], impossible "
        "for {metric} (largest {max_value:.4g}: {examples}){recall}. A counting bug: Check 1's "
        "ratio is not meaningful until it is fixed.",
        None,
        "benchmark",
        lambda f: _has_invariants(f) and _invariants(f).out_of_range > 0,
        _invariant_numbers,
        _invariant_words,
    ),
    Rule(
        "harness_duplicate_rows",
        "broken",
        "The harness output writes {duplicated:,} (seed, query) rows more than once: a counting "
        "bug that weights some queries twice.",
        None,
        "benchmark",
        lambda f: _has_invariants(f) and _invariants(f).duplicated > 0,
        _invariant_numbers,
    ),
    Rule(
        "harness_missing_rows",
        "warning",
        "The harness output lacks {missing:,} (seed, query) rows that other seeds score: its "
        "per-query rows are incomplete.",
        None,
        "benchmark",
        lambda f: _has_invariants(f) and _invariants(f).missing > 0,
        _invariant_numbers,
    ),
    Rule(
        "model_ties",
        "warning",
        "The model ties scores in {tied_queries:,} quer{plural}: over the orders of each tied "
        "group its score spans [{worst:.4g}, {best:.4g}] (tie-averaged {average:.4g}), wider "
        "than the smallest detectable difference ({threshold:.3g}).{moved_text}",
        None,
        "model",
        _ties_move,
        _model_tie_numbers,
        _model_tie_words,
    ),
    Rule(
        "model_ties",
        "info",
        "The model ties scores in {tied_queries:,} quer{plural}; over the orders of each tied "
        "group its score stays in [{worst:.4g}, {best:.4g}].",
        None,
        "model",
        lambda f: _has_ties(f) and not _ties_move(f),
        _model_tie_numbers,
        _model_tie_words,
    ),
)


#: What to do next about each reason code, in plain words (the report's first paragraph). One
#: sentence per code: the rows of one code (one per severity) share it.
NEXT_STEPS: dict[str, str] = {
    "no_headroom": "Make the task harder: a larger or harder pool of candidates per query "
    "(more distractors, hard negatives), or a metric that reads deeper than the top few.",
    "low_headroom": "Add harder candidates to each query's pool, or accept that only large "
    "differences between models will show.",
    "check1_ratio": "Fix the evaluation harness before reading any score: compare how it counts "
    "the pool, the cut-off and duplicate chunks with the declared pool.",
    "check1_passed": "Nothing to do: the harness computes what it should.",
    "check1_missing_values": "Make the harness write a value for every query and random run.",
    "check1_depth": "Check how deep the harness reads each ranking and the depth the random "
    "runs declare.",
    "noise_leak": "Find what scores without the vectors (BM25, a reranker, metadata, the file's "
    "order) and switch it off for the noise run, or remove it from the benchmark.",
    "noise_tie_leak": "Break ties at random (or by a fixed key unrelated to gold) before writing "
    "the run.",
    "noise_above_floor": "Check that every component besides the vectors was switched off for "
    "the noise run.",
    "noise_ties": "Break the noise run's ties at random before writing it.",
    "model_over_noise": "Nothing to do: the model's score comes from the vectors.",
    "model_below_floor": "Check that the run's query and document ids match the judgements.",
    "model_at_floor": "Check that the run's query and document ids match the judgements.",
    "few_standard_errors": "Add queries: with this many only gross differences between models "
    "are detectable.",
    "no_gold": "Judge the queries without a gold item in the pool, or drop them.",
    "gold_missing": "Add the judged gold items to the pool, or fix the ids that do not match.",
    "pool_smaller_than_k": "Give those queries a pool of at least k items, or lower k.",
    "run_queries_unjudged": "Score the run on the judged queries: check the query ids.",
    "run_scores_zero": "Check that the run's document ids match the judgements.",
    "noise_queries_differ": "Run the noise run on the same queries as the model.",
    "compare_scores_zero": "Check that the compared run's document ids match the judgements.",
    "query_independent": "Remove what a ranker can score without the query (popular documents, "
    "a prior) from the judgements or the pool.",
    "self_hits": "Remove each query from its own ranking and judgements, then score again.",
    "segment_ids": "Score with the units rule the message names, so that segments count as "
    "their documents.",
    "units_rule": "Nothing to do: the run's ids were mapped to the judged documents.",
    "judgement_holes": "Judge the unjudged documents the models rank high (pool their top "
    "results), or report the score's range.",
    "harness_out_of_range": "Fix the harness's counting: a score outside [0, 1] is impossible.",
    "harness_duplicate_rows": "Fix the harness so that it writes each query once per random run.",
    "harness_missing_rows": "Make the harness write every query for every random run.",
    "model_ties": "Break the model's ties (by a secondary key or at random) before writing the "
    "run, or report the score's range over tie orders.",
}
