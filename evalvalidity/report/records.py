"""Turn a :class:`~evalvalidity.analysis.results.CheckResult` into records, tables and text.

One place makes every outward form of a check: :func:`to_dict` (the JSON contract of
``evalvalidity check --format json``, versioned by ``schema_version``), :func:`to_frame` (the
triage table), :func:`to_markdown` (a pull-request comment) and :func:`to_text` (the terminal).
The dashboard and the HTML report read the same records.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from evalvalidity.analysis.results import CheckResult, HarnessCheck, Interval, NoiseCheck
from evalvalidity.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FLAG_TEXT",
    "iter_json",
    "to_dict",
    "to_frame",
    "to_json",
    "to_markdown",
    "to_text",
    "write_json",
]

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
        "depth": check.depth,
        "implied_depth": check.implied_depth,
        "missing_values": check.missing_values,
        "zeros_left_out": check.zeros_left_out,
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


#: Triage rows formatted at once by :func:`write_json` (bounds the text held in memory).
_JSON_BLOCK = 1 << 16

#: The per-query keys of the JSON rows, in order, with their column's kind.
_ROW_KEYS = (
    ("qid", "str"),
    ("pool_size", "int"),
    ("gold", "int"),
    ("judged", "int"),
    ("k", "k"),
    ("floor", "float"),
    ("floor_std", "float"),
    ("ceiling", "float"),
    ("headroom", "float"),
    ("model", "float"),
    ("noise", "float"),
    ("z", "float"),
    ("floor_share", "float"),
    ("flags", "flags"),
)


def _float_texts(values: np.ndarray) -> list[str]:
    """``json.dumps`` of each value as :func:`_num` gives it: repr, or null when not finite."""
    values = np.asarray(values, dtype=np.float64)
    texts = list(map(float.__repr__, values.tolist()))
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        texts[i] = "null"
    return texts


def _flags_text(flags: tuple[str, ...], pad: str) -> str:
    if not flags:
        return "[]"
    inner = f",\n{pad}  ".join(json.dumps(f, ensure_ascii=False) for f in flags)
    return f"[\n{pad}  {inner}\n{pad}]"


def _query_rows_json(result: CheckResult, level: int) -> Iterator[str]:
    """The JSON text of :func:`_query_rows` (``indent=2`` at nesting ``level``), in pieces.

    Built a block of rows at a time from the table's columns, byte for byte as ``json.dumps``
    writes the list of row dicts.
    """
    t = result.queries
    n = len(t)
    if n == 0:
        yield "[]"
        return
    outer = "  " * level
    pad = outer + "    "
    keys = [key for key, _ in _ROW_KEYS]
    template = (
        f"{outer}  {{\n"
        + "".join(f"{pad}{json.dumps(key)}: %s,\n" for key in keys[:-1])
        + f"{pad}{json.dumps(keys[-1])}: %s\n{outer}  }}"
    )
    k_text = "null" if t.k is None else str(int(t.k))
    flag_texts: dict[tuple[str, ...], str] = {}
    yield "[\n"
    for start in range(0, n, _JSON_BLOCK):
        stop = min(start + _JSON_BLOCK, n)
        columns: list[Any] = []
        for key, kind in _ROW_KEYS:
            if kind == "str":
                columns.append(map(encode_basestring, map(str, t.qid[start:stop].tolist())))
            elif kind == "int":
                columns.append(map(str, np.asarray(getattr(t, key)[start:stop]).tolist()))
            elif kind == "k":
                columns.append([k_text] * (stop - start))
            elif kind == "float":
                columns.append(_float_texts(getattr(t, key)[start:stop]))
            else:
                texts = []
                for f in t.flags[start:stop]:
                    text = flag_texts.get(f)
                    if text is None:
                        text = flag_texts[f] = _flags_text(tuple(f), pad)
                    texts.append(text)
                columns.append(texts)
        body = ",\n".join(template % row for row in zip(*columns, strict=True))
        yield body if start == 0 else ",\n" + body
    yield f"\n{outer}]"


def to_dict(result: CheckResult) -> dict[str, Any]:
    """The check as plain JSON-ready data (the ``--format json`` contract).

    Keys: ``schema_version``, ``verdict``, ``reasons``, ``metric``, ``n_queries``, ``floor``,
    ``ceiling``, ``headroom``, ``floor_over_ceiling``, ``model_score``, ``adjusted_score``,
    ``checks`` (``harness``: Check 1, ``live``: Check 2 from a noise run or a live test),
    ``inferred_n``, ``power``, ``comparison``, ``pool``, ``notes``, ``queries`` (the triage
    rows) and ``plan`` (the :class:`~evalvalidity.analysis.plan.CheckPlan` that ran, as data).
    NaN and infinities are written as null.

    The numbers: docs/math.md, Floors.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> record = to_dict(result)
    >>> record["schema_version"], record["verdict"], record["metric"], record["n_queries"]
    (1, 'healthy', 'rr@10', 2)
    >>> round(record["floor"], 4), record["model_score"], record["checks"]["harness"]["passed"]
    (0.1464, 0.75, True)
    >>> [(row["qid"], row["model"]) for row in record["queries"]]
    [('1', 1.0), ('2', 0.5)]
    """
    return _record(result, with_queries=True)


def _record(result: CheckResult, *, with_queries: bool) -> dict[str, Any]:
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
            "difference_variance": _num(result.power.difference_variance),
            "paired_with": result.power.paired_with,
            "assumption": result.power.assumption,
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
        "queries": _query_rows(result) if with_queries else None,
        "plan": result.plan.to_dict() if result.plan is not None else None,
        "other_nulls": _other_nulls(result),
    }
    return out


def to_json(result: CheckResult, *, indent: int | None = 2) -> str:
    """The JSON text of :func:`to_dict`; byte-identical for identical inputs and seed.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> import json
    >>> text = to_json(result)
    >>> json.loads(text) == to_dict(result), text.splitlines()[1]
    (True, '  "schema_version": 1,')
    >>> len(to_json(result, indent=None).splitlines())
    1
    """
    if indent != 2:
        return json.dumps(to_dict(result), indent=indent, ensure_ascii=False, allow_nan=False)
    return "".join(iter_json(result))


def iter_json(result: CheckResult, extra: Mapping[str, Any] | None = None) -> Iterator[str]:
    """The text of :func:`to_json` (``indent=2``) in pieces, the triage rows a block at a time.

    The per-query rows are formatted from the triage table's columns (no dict per query), so
    a check of millions of queries streams its JSON in bounded memory. ``extra`` adds keys
    after :func:`to_dict`'s own (the command line's clustered statistics, leaderboard, gate).

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> import json
    >>> "".join(iter_json(result)) == to_json(result)
    True
    >>> json.loads("".join(iter_json(result, {"label": "nightly"})))["label"]
    'nightly'
    """
    data = _record(result, with_queries=False)
    for key, value in (extra or {}).items():
        if key in data:
            raise ParameterError(f"The extra key {key!r} of iter_json is a key of the record.")
        data[key] = value
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    marker = '\n  "queries": null'
    at = text.index(marker) + len(marker) - len("null")
    yield text[:at]
    yield from _query_rows_json(result, 1)
    yield text[at + len("null") :]


def write_json(result: CheckResult, handle: TextIO) -> None:
    """Write :func:`to_json`'s text to ``handle`` piece by piece (see :func:`iter_json`).

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> import io
    >>> handle = io.StringIO()
    >>> write_json(result, handle)
    >>> handle.getvalue() == to_json(result)
    True
    """
    for piece in iter_json(result):
        handle.write(piece)


def to_frame(result: CheckResult) -> pd.DataFrame:
    """The triage table as a DataFrame (one row per query, sorted by share of the floor).

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> frame = to_frame(result)
    >>> frame[["qid", "pool_size", "gold", "model"]].to_dict("records")
    [{'qid': '1', 'pool_size': 20, 'gold': 1, 'model': 1.0}, {'qid': '2', 'pool_size': 20, 'gold': 1, 'model': 0.5}]
    """
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
    """A terminal summary: the verdict, its reasons and the key numbers.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> print(to_text(result).splitlines()[0])
    verdict: HEALTHY   (rr@10, 2 queries, pool: corpus)
    >>> "floor 0.1464   ceiling 1" in to_text(result)
    True
    """
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
        if p.assumption:
            lines.append(f"    variance of the differences: {p.assumption}")
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


def to_markdown(
    result: CheckResult, *, max_queries: int = 10, leaderboard: tuple[Any, Any] | None = None
) -> str:
    """A pull-request comment: the verdict, reasons, key numbers and the top flagged queries.

    ``leaderboard``, a ``(Leaderboard, notes)`` pair
    (:func:`evalvalidity.analysis.compare.run_leaderboard`), adds the leaderboard's table
    (:func:`leaderboard_to_markdown`) after the key numbers.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> comment = to_markdown(result)
    >>> print(comment.splitlines()[0])
    ### ✅ Benchmark health: **healthy** (rr@10, 2 queries)
    >>> "| floor (random ranker) | 0.1464 |" in comment
    True
    """
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
    if leaderboard is not None:
        board, notes = leaderboard
        out += ["", leaderboard_to_markdown(board, notes, result=result).rstrip("\n")]
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


# --------------------------------------------------------------------------------------------
# Decisions: clustered statistics, the leaderboard, the regression gate, suites
# --------------------------------------------------------------------------------------------

__all__ += [
    "clustered_to_dict",
    "format_p",
    "gate_to_dict",
    "gate_to_markdown",
    "gate_to_text",
    "leaderboard_to_dict",
    "leaderboard_to_markdown",
    "leaderboard_to_text",
    "suite_to_dict",
    "suite_to_markdown",
    "suite_to_text",
]


def format_p(p: float, resolution: float | None = None) -> str:
    """A p-value as shown: ``'≤ 0.0078'`` at the test's resolution, ``'< 0.001'`` below 0.001.

    >>> format_p(0.0078125, 0.0078125), format_p(0.0004), format_p(0.04321)
    ('≤ 0.0078', '< 0.001', '0.0432')
    """
    if resolution is not None and p <= resolution * (1.0 + 1e-12):
        return f"≤ {resolution:.2g}" if resolution >= 0.001 else "< 0.001"
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3g}"


def clustered_to_dict(stats: Any) -> dict[str, Any] | None:
    """The ``clustered`` key: an :class:`~evalvalidity.analysis.compare.ClusteredStats`.

    The numbers: docs/math.md, Intervals.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.compare import clustered_stats, query_clusters
    >>> clusters = query_clusters(result.queries.qid, groups={"1": "A", "2": "B"})
    >>> record = clustered_to_dict(clustered_stats(result, clusters))
    >>> record["source"], record["n_clusters"], record["mean"], record["design_effect"]
    ('groups', 2, 0.75, 1.0)
    >>> clustered_to_dict(None) is None
    True
    """
    if stats is None:
        return None
    return {
        "source": stats.source,
        "n_queries": stats.n_queries,
        "n_clusters": stats.n_clusters,
        "ungrouped": stats.ungrouped,
        "mean": _num(stats.mean),
        "ci": [_num(stats.low), _num(stats.high)],
        "naive_ci": [_num(stats.naive_low), _num(stats.naive_high)],
        "standard_error": _num(stats.standard_error),
        "naive_standard_error": _num(stats.naive_standard_error),
        "design_effect": _num(stats.design_effect),
        "icc": _num(stats.icc),
        "effective_n": _num(stats.effective_n),
        "min_detectable_difference": _num(stats.min_detectable_difference),
        "naive_min_detectable_difference": _num(stats.naive_min_detectable_difference),
        "delta": _num(stats.delta),
        "queries_needed": stats.queries_needed,
        "naive_queries_needed": stats.naive_queries_needed,
    }


def leaderboard_to_dict(board: Any, notes: Any = ()) -> dict[str, Any]:
    """The ``leaderboard`` key: a :class:`~evalvalidity.core.leaderboard.Leaderboard`.

    Examples
    --------
    >>> from evalvalidity.core.leaderboard import leaderboard
    >>> board = leaderboard({"bm25": [0.2, 0.3, 0.4, 0.3, 0.5, 0.2, 0.4, 0.3],
    ...                      "dense": [0.6, 0.7, 0.9, 0.8, 0.7, 0.6, 0.9, 0.8]}, rng=0)
    >>> record = leaderboard_to_dict(board, notes=["8 queries"])
    >>> [(r["rank"], r["run"], round(r["mean"], 4)) for r in record["runs"]], record["notes"]
    ([(1, 'dense', 0.75), (2, 'bm25', 0.325)], ['8 queries'])
    >>> record["pairs"][0]["p_text"], record["pairs"][0]["significant"]
    ('≤ 0.0078', True)
    """
    return {
        "runs": [{k: _num(v) for k, v in row.items()} for row in board.to_rows()],
        "pairs": [
            {
                "a": row.run_a,
                "b": row.run_b,
                "difference": _num(row.difference),
                "p_value": _num(row.p_value),
                "adjusted_p_value": _num(row.adjusted_p_value),
                "p_text": format_p(row.p_value, board.resolution),
                "significant": row.significant,
            }
            for row in board.pairs
        ],
        "adjacent_separated": list(board.adjacent_separated),
        "baseline": board.baseline,
        "correction": board.correction,
        "alpha": board.alpha,
        "resolution": _num(board.resolution),
        "exact": board.exact,
        "n_resamples": board.n_resamples,
        "n_queries": board.n_queries,
        "n_clusters": board.n_clusters,
        "notes": list(notes),
    }


def gate_to_dict(gate: Any) -> dict[str, Any]:
    """The ``gate`` key: a :class:`~evalvalidity.analysis.gate.GateResult`.

    The numbers: docs/math.md, Intervals.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.gate import baseline_from_record, regression_gate
    >>> old = {"schema_version": 1, "metric": "rr@10", "run": "old", "model_score": 1.0,
    ...        "queries": [{"qid": "1", "model": 1.0}, {"qid": "2", "model": 1.0}]}
    >>> gate = regression_gate(baseline_from_record(old, "old.json"), result, allowed_drop=0.1)
    >>> record = gate_to_dict(gate)
    >>> record["regressed"], record["difference"], record["worst_queries"][0]["qid"]
    (False, -0.25, '2')
    """
    sequential = gate.sequential
    return {
        "baseline": gate.baseline_name,
        "baseline_run": gate.baseline_run,
        "run": gate.run,
        "metric": gate.metric,
        "baseline_mean": _num(gate.baseline_mean),
        "new_mean": _num(gate.new_mean),
        "difference": _num(gate.difference),
        "ci": [_num(gate.low), _num(gate.high)],
        "standard_error": _num(gate.standard_error),
        "p_value": _num(gate.p_value),
        "allowed_drop": _num(gate.allowed_drop),
        "alpha": gate.alpha,
        "regressed": gate.regressed,
        "passed": gate.passed,
        "n_common": gate.n_common,
        "only_baseline": gate.only_baseline,
        "only_new": gate.only_new,
        "n_clusters": gate.n_clusters,
        "worst_queries": [
            {
                "qid": q.qid,
                "baseline": _num(q.baseline),
                "new": _num(q.new),
                "difference": _num(q.difference),
            }
            for q in gate.worst
        ],
        "sequential": None
        if sequential is None
        else {
            "decision": sequential.decision,
            "decided_at": sequential.decided_at,
            "ci": [_num(sequential.lower), _num(sequential.upper)],
            "n": sequential.n_queries,
            "undecided": gate.undecided,
        },
    }


def leaderboard_to_text(board: Any) -> str:
    """The leaderboard as terminal lines.

    Examples
    --------
    >>> from evalvalidity.core.leaderboard import leaderboard
    >>> board = leaderboard({"bm25": [0.2, 0.3, 0.4, 0.3, 0.5, 0.2, 0.4, 0.3],
    ...                      "dense": [0.6, 0.7, 0.9, 0.8, 0.7, 0.6, 0.9, 0.8]}, rng=0)
    >>> print(leaderboard_to_text(board).splitlines()[-1])
        dense − bm25: +0.4250, p = ≤ 0.0078, p (holm) = 0.00781  separated
    """
    lines = [
        f"  leaderboard ({board.n_queries:,} queries"
        + (f", {board.n_clusters:,} clusters" if board.n_clusters != board.n_queries else "")
        + f"; p {board.correction}-corrected, test resolution {board.resolution:.2g}):"
    ]
    for row in board.to_rows():
        adjusted = "" if row["adjusted"] is None else f"   chance-adjusted {row['adjusted']:.3f}"
        lines.append(
            f"    {row['rank']}. {row['run']:<24} {_fmt(row['mean'])} "
            f"[{_fmt(row['low'])}, {_fmt(row['high'])}]   rank [{row['rank_low']}, "
            f"{row['rank_high']}]{adjusted}   vs {board.baseline}: {row['wins']}/"
            f"{row['ties']}/{row['losses']} W/T/L"
        )
    for row in board.pairs:
        lines.append(
            f"    {row.run_a} − {row.run_b}: {row.difference:+.4f}, p = "
            f"{format_p(row.p_value, board.resolution)}, p ({board.correction}) = "
            f"{format_p(row.adjusted_p_value)}"
            + ("  separated" if row.significant else "  not separated")
        )
    return "\n".join(lines) + "\n"


def leaderboard_to_markdown(
    board: Any, notes: Any = (), *, result: CheckResult | None = None
) -> str:
    """The leaderboard as a Markdown table, every number by :func:`~.numbers.format_number`.

    One row per run: its mean with its interval, the floor, the chance-adjusted score, wins,
    ties and losses per query against the first run, its rank interval and whether it is
    separated from the next run; then every pair's difference and p-values (the test's and the
    corrected), ``≤`` the test's resolution when it cannot go lower. With ``result`` (the
    check the board was built from), the floor and the smallest detectable difference.

    Examples
    --------
    >>> from evalvalidity.core.leaderboard import leaderboard
    >>> board = leaderboard({"bm25": [0.2, 0.3, 0.4, 0.3, 0.5, 0.2, 0.4, 0.3],
    ...                      "dense": [0.6, 0.7, 0.9, 0.8, 0.7, 0.6, 0.9, 0.8]}, rng=0)
    >>> text = leaderboard_to_markdown(board)
    >>> print(text.splitlines()[4])
    | 1 | dense | 0.750 [0.650, 0.850] | – | – | 8 / 0 / 0 | 1–1 | yes |
    >>> print(text.splitlines()[-1])
    | dense − bm25 | +0.425 | ≤ 0.008 | ≤ 0.008 | yes |
    """
    from evalvalidity.report.numbers import format_number as num

    head = result.headroom if result is not None else None
    floor = num(head.floor) if head is not None else "–"
    detectable = (
        result.power.min_detectable_difference
        if result is not None and result.power is not None
        else None
    )
    scope = f"{board.n_queries:,} queries" + (
        f", {board.n_clusters:,} clusters" if board.n_clusters != board.n_queries else ""
    )
    out = [
        f"#### Leaderboard ({scope}; p-values {board.correction}-corrected, test resolution "
        f"{num(board.resolution, 'p')})",
        "",
        f"| rank | run | mean [95 % interval] | floor | chance-adjusted | "
        f"wins / ties / losses vs {_md_id(board.baseline)} | rank interval | "
        "separated from the next |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in board.to_rows():
        separated = row["separated_from_next"]
        out.append(
            f"| {row['rank']:,} | {_md_id(row['run'])} | {num(row['mean'])} "
            f"[{num(row['low'])}, {num(row['high'])}] | {floor} | {num(row['adjusted'])} | "
            f"{row['wins']:,} / {row['ties']:,} / {row['losses']:,} | "
            f"{row['rank_low']:,}–{row['rank_high']:,} | "
            f"{'–' if separated is None else 'yes' if separated else 'no'} |"
        )
    if detectable is not None:
        out += ["", f"Smallest detectable difference: {num(detectable)}."]
    out += [
        "",
        f"| pair | difference | p | p ({board.correction}) | separated |",
        "|---|---|---|---|---|",
    ]
    for pair in board.pairs:
        out.append(
            f"| {_md_id(pair.run_a)} − {_md_id(pair.run_b)} | {num(pair.difference, 'signed')} "
            f"| {num(pair.p_value, 'p', resolution=board.resolution)} "
            f"| {num(pair.adjusted_p_value, 'p', resolution=board.resolution)} "
            f"| {'yes' if pair.significant else 'no'} |"
        )
    if notes:
        out += ["", *(f"- {_md_escape(str(n))}" for n in notes)]
    return "\n".join(out) + "\n"


def gate_to_text(gate: Any) -> str:
    """The regression gate as terminal lines.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.gate import baseline_from_record, regression_gate
    >>> old = {"schema_version": 1, "metric": "rr@10", "run": "old", "model_score": 1.0,
    ...        "queries": [{"qid": "1", "model": 1.0}, {"qid": "2", "model": 1.0}]}
    >>> gate = regression_gate(baseline_from_record(old, "old.json"), result, allowed_drop=0.1)
    >>> print(gate_to_text(gate).splitlines()[0])
    regression gate: passed   (rr@10, 2 common queries)
    """
    word = (
        "FAILED (regressed)"
        if gate.regressed
        else "passed"
        if gate.passed
        else "FAILED (undecided)"
    )
    lines = [
        f"regression gate: {word}   ({gate.metric}, {gate.n_common:,} common queries"
        + (f" in {gate.n_clusters:,} clusters" if gate.n_clusters != gate.n_common else "")
        + ")",
        f"  baseline {_fmt(gate.baseline_mean)} ({gate.baseline_name}) → new "
        f"{_fmt(gate.new_mean)}: difference {gate.difference:+.4f} "
        f"[{gate.low:+.4f}, {gate.high:+.4f}], allowed drop {gate.allowed_drop:g}, "
        f"one-sided p = {format_p(gate.p_value)} (α = {gate.alpha:g})",
    ]
    if gate.sequential is not None:
        s = gate.sequential
        at = f" after {s.decided_at:,} of {s.n_queries:,}" if s.decided_at else ""
        lines.append(
            f"  sequential: {s.decision}{at} (anytime-valid bounds "
            f"[{s.lower:+.4f}, {s.upper:+.4f}])"
        )
    if gate.only_baseline or gate.only_new:
        lines.append(
            f"  {gate.only_baseline:,} queries only in the baseline, {gate.only_new:,} only "
            "in the new check (left out)"
        )
    if gate.worst:
        lines.append("  most regressed queries:")
        for q in gate.worst:
            lines.append(f"    {q.qid}: {_fmt(q.baseline)} → {_fmt(q.new)} ({q.difference:+.4f})")
    return "\n".join(lines) + "\n"


def gate_to_markdown(gate: Any) -> str:
    """The regression gate for a pull-request comment.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.gate import baseline_from_record, regression_gate
    >>> old = {"schema_version": 1, "metric": "rr@10", "run": "old", "model_score": 1.0,
    ...        "queries": [{"qid": "1", "model": 1.0}, {"qid": "2", "model": 1.0}]}
    >>> gate = regression_gate(baseline_from_record(old, "old.json"), result, allowed_drop=0.1)
    >>> print(gate_to_markdown(gate).splitlines()[0])
    ### ✅ Regression gate: **passed** (rr@10, 2 queries)
    """
    word = "regressed" if gate.regressed else "passed" if gate.passed else "undecided"
    out = [
        f"### {'✅' if gate.passed else '❌'} Regression gate: **{word}** "
        f"({gate.metric}, {gate.n_common:,} queries)",
        "",
        f"Baseline {_fmt(gate.baseline_mean)} → {_fmt(gate.new_mean)}: difference "
        f"{gate.difference:+.4f} [{gate.low:+.4f}, {gate.high:+.4f}]; allowed drop "
        f"{gate.allowed_drop:g}; one-sided p = {format_p(gate.p_value)}.",
    ]
    if gate.worst:
        out += ["", "| qid | baseline | new | difference |", "|---|---|---|---|"]
        out += [
            f"| {_md_id(q.qid)} | {_fmt(q.baseline)} | {_fmt(q.new)} | {q.difference:+.4f} |"
            for q in gate.worst
        ]
    return "\n".join(out) + "\n"


def _suite_rows(result: Any) -> list[dict[str, Any]]:
    rows = []
    for o in result.outcomes:
        r = o.result
        if r is None:
            rows.append({"benchmark": o.name, "error": o.error, "flagged": True})
            continue
        live = r.live or r.noise
        mdd = (
            o.clustered.min_detectable_difference
            if o.clustered is not None
            else (r.power.min_detectable_difference if r.power is not None else None)
        )
        rows.append(
            {
                "benchmark": o.name,
                "metric": r.metric.name,
                "n_queries": r.n_queries,
                "floor": _num(r.headroom.floor),
                "ceiling": _num(r.headroom.ceiling),
                "headroom": _num(r.headroom.headroom),
                "check1": None if r.harness is None else _num(r.harness.ratio.estimate),
                "check1_passed": None if r.harness is None else r.harness.passed,
                "check2": None
                if live is None or live.model_over_noise is None
                else _num(live.model_over_noise.estimate),
                "min_detectable_difference": _num(mdd),
                "design_effect": None if o.clustered is None else _num(o.clustered.design_effect),
                "verdict": r.verdict,
                "runs": {name: _num(float(np.mean(v))) for name, v in o.values.items()},
                "separable": o.separable,
                "flagged": o.flagged,
                "notes": list(o.notes),
                "error": None,
            }
        )
    return rows


def suite_to_dict(result: Any) -> dict[str, Any]:
    """A suite's outcome as JSON-ready data: ``benchmarks``, ``suite_means``, ``flagged``.

    The numbers: docs/math.md, Intervals.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.suite import BenchmarkOutcome, SuiteResult, suite_means
    >>> tiny = BenchmarkOutcome("tiny", result, None, None, {"run": result.queries.model},
    ...                         {"run": 0.0625}, None)
    >>> broken = BenchmarkOutcome("broken", None, None, None, {}, {}, None,
    ...                           error="qrels.tsv does not exist")
    >>> suite = SuiteResult("demo", (tiny, broken), suite_means((tiny, broken)))
    >>> record = suite_to_dict(suite)
    >>> [(b["benchmark"], b["error"]) for b in record["benchmarks"]], record["flagged"]
    ([('tiny', None), ('broken', 'qrels.tsv does not exist')], ['broken'])
    >>> [(m["run"], m["mean"], m["n_benchmarks"]) for m in record["suite_means"]]
    [('run', 0.75, 1)]
    """
    return {
        "schema_version": 1,
        "suite": result.name,
        "benchmarks": _suite_rows(result),
        "leaderboards": {
            o.name: leaderboard_to_dict(o.board, o.notes)
            for o in result.outcomes
            if o.board is not None
        },
        "suite_means": [
            {
                "run": m.run,
                "mean": _num(m.mean),
                "ci": [_num(m.low), _num(m.high)],
                "standard_error": _num(m.standard_error),
                "n_benchmarks": m.n_benchmarks,
            }
            for m in result.means
        ],
        "flagged": list(result.flagged),
    }


def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _fmt(value, digits)
    return str(value)


_SUITE_COLUMNS = (
    ("benchmark", "benchmark"),
    ("n_queries", "queries"),
    ("floor", "floor"),
    ("ceiling", "ceiling"),
    ("headroom", "headroom"),
    ("check1", "Check 1"),
    ("check2", "Check 2"),
    ("min_detectable_difference", "MDD"),
    ("verdict", "verdict"),
    ("separable", "separates runs"),
)


def suite_to_text(result: Any) -> str:
    """A suite as a terminal table, the suite means and the flagged benchmarks.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.suite import BenchmarkOutcome, SuiteResult, suite_means
    >>> tiny = BenchmarkOutcome("tiny", result, None, None, {"run": result.queries.model},
    ...                         {"run": 0.0625}, None)
    >>> broken = BenchmarkOutcome("broken", None, None, None, {}, {}, None,
    ...                           error="qrels.tsv does not exist")
    >>> suite = SuiteResult("demo", (tiny, broken), suite_means((tiny, broken)))
    >>> lines = suite_to_text(suite).splitlines()
    >>> lines[0], lines[-1]
    ('suite: demo (2 benchmarks)', "  ! broken: cannot separate the suite's runs")
    """
    rows = _suite_rows(result)
    table = [[title for _, title in _SUITE_COLUMNS]]
    for row in rows:
        if row.get("error"):
            table.append([row["benchmark"], f"error: {row['error']}"])
            continue
        table.append([_cell(row[key]) for key, _ in _SUITE_COLUMNS])
    widths = [max(len(r[i]) for r in table if i < len(r)) for i in range(len(table[0]))]
    lines = [f"suite: {result.name} ({len(rows)} benchmarks)", ""]
    for r in table:
        if len(r) == 2 and r[1].startswith("error: "):
            lines.append(f"  {r[0].ljust(widths[0])}  {r[1]}")
        else:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    if result.means:
        lines += ["", "  suite mean (benchmarks weighted equally, stratified 95 % interval):"]
        for m in result.means:
            lines.append(
                f"    {m.run:<24} {_fmt(m.mean)} [{_fmt(m.low)}, {_fmt(m.high)}] over "
                f"{m.n_benchmarks} benchmarks"
            )
    for name in result.flagged:
        lines.append(f"  ! {name}: cannot separate the suite's runs")
    return "\n".join(lines) + "\n"


def suite_to_markdown(result: Any) -> str:
    """A suite as a Markdown table.

    Examples
    --------
    ``result`` is the doctests' two-query check (the repository's ``conftest.py``).

    >>> from evalvalidity.analysis.suite import BenchmarkOutcome, SuiteResult, suite_means
    >>> tiny = BenchmarkOutcome("tiny", result, None, None, {"run": result.queries.model},
    ...                         {"run": 0.0625}, None)
    >>> broken = BenchmarkOutcome("broken", None, None, None, {}, {}, None,
    ...                           error="qrels.tsv does not exist")
    >>> suite = SuiteResult("demo", (tiny, broken), suite_means((tiny, broken)))
    >>> lines = suite_to_markdown(suite).splitlines()
    >>> lines[0], lines[4], lines[-1]
    ('### Suite: demo', '| tiny | 2 | 0.146 | 1 | 0.854 | 1.16 | – | 5.77 | healthy | – |', "Cannot separate the suite's runs: broken")
    """
    rows = _suite_rows(result)
    out = [
        f"### Suite: {_md_id(result.name)}",
        "",
        "| " + " | ".join(title for _, title in _SUITE_COLUMNS) + " |",
        "|" + "---|" * len(_SUITE_COLUMNS),
    ]
    for row in rows:
        if row.get("error"):
            cells = [_md_id(row["benchmark"]), f"error: {_md_escape(row['error'])}"]
            cells += [""] * (len(_SUITE_COLUMNS) - 2)
        else:
            cells = [
                _md_id(str(row[key])) if key == "benchmark" else _cell(row[key])
                for key, _ in _SUITE_COLUMNS
            ]
        out.append("| " + " | ".join(cells) + " |")
    if result.means:
        out += ["", "| run | suite mean | 95 % interval |", "|---|---|---|"]
        out += [
            f"| {_md_id(m.run)} | {_fmt(m.mean)} | [{_fmt(m.low)}, {_fmt(m.high)}] |"
            for m in result.means
        ]
    if result.flagged:
        out += ["", "Cannot separate the suite's runs: " + ", ".join(map(_md_id, result.flagged))]
    return "\n".join(out) + "\n"
