"""The metric registry: one canonical spelling per metric, one parser.

Every part of evalvalidity (the command line, tables, DuckDB columns, the dashboard) names a
metric by its canonical spelling, produced by :attr:`Metric.name` and read by
:func:`parse_metric`. ``parse_metric(m.name) == m`` holds for every metric.

========================  =====================  =============================================
canonical spelling        aliases                meaning (trec_eval semantics)
========================  =====================  =============================================
``rr@k``, ``rr``          ``mrr@k``, ``mrr``     reciprocal rank of the first relevant item
                                                 (0 when none is in the top k)
``hit@k``                 ``success@k``          1 when a relevant item is in the top k
``p@k``                   ``precision@k``        relevant items in the top k, divided by k
``r@k``                   ``recall@k``           relevant items in the top k, divided by the
                                                 number of judged relevant items
``rprec``                 ``r-prec``             precision at rank R = number judged relevant
``ap``, ``ap@k``          ``map``, ``map@k``     average precision (trec_eval ``map`` and
                                                 ``map_cut_k``: divided by R, not by min(k, R))
``ndcg@k``, ``ndcg``                             nDCG with linear gains (gain = judged grade)
``ndcg_exp@k``                                   nDCG with exponential gains 2^grade − 1
========================  =====================  =============================================

Binary metrics take a relevance threshold for graded judgements, written ``[rel>=2]`` after
the metric (``hit@10[rel>=2]``); the default threshold is 1 (any positive grade is relevant),
as in trec_eval. nDCG uses the grades themselves and takes no threshold.

trec_eval's names (``P_10`` or ``P.10``, ``recall_100``, ``success_10``, ``map_cut_10``,
``ndcg_cut_10``, ``recip_rank``, ``Rprec``, ``map``, ``ndcg``) and ir_measures' (``nDCG@10``,
``P(rel=2)@10``, ``RR(rel=2)@10``, ``AP``, ``nDCG(dcg='exp-log2')@10``...) are read too; the
output always uses the canonical spelling, and :attr:`Metric.trec_name` and
:attr:`Metric.ir_measures_name` give the other two back. What the library knows about each
family (title, flags, formula, names elsewhere) is in :data:`FAMILY_SPECS`.

Examples
--------
>>> parse_metric("MRR@10")
Metric(family='rr', k=10, rel=1)
>>> parse_metric("MRR@10").name
'rr@10'
>>> parse_metric("success@5[rel>=2]").name
'hit@5[rel>=2]'
>>> parse_metric("ndcg@10").trec_name
'ndcg_cut_10'
>>> parse_metric("ndcg_cut_10") == parse_metric("nDCG@10") == parse_metric("ndcg@10")
True
>>> parse_metric("P(rel=2)@10").name, parse_metric("P(rel=2)@10").ir_measures_name
('p@10[rel>=2]', 'P(rel=2)@10')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from evalvalidity.errors import ParameterError

__all__ = [
    "FAMILIES",
    "FAMILY_SPECS",
    "FamilySpec",
    "Metric",
    "family_spec",
    "parse_metric",
    "parse_metrics",
]


@dataclass(frozen=True)
class FamilySpec:
    """Everything the library knows about one metric family, in one place.

    Attributes
    ----------
    name : str
        The canonical family name (``"rr"``, ``"ndcg_exp"``...).
    title : str
        The name people read, e.g. ``"Reciprocal rank"``.
    needs_k, accepts_k : bool
        Whether a cutoff is required, and whether one is allowed at all.
    binary : bool
        True when the metric only sees relevant / not relevant (it takes ``[rel>=n]``).
    graded : bool
        True when the metric uses the judged grades as gains (nDCG); ``not binary``.
    invertible : bool
        True when the exact floor is monotone in the pool size, so a measured random score can
        be inverted to a pool size (see docs/math.md, Inversion).
    exact_under_dedup : bool
        True when the floor under chunk → document deduplication is computed exactly
        (see docs/math.md, Floors under deduplication); the others are estimated by Monte Carlo.
    trec_eval : str or None
        trec_eval's measure over the whole ranking, or None where it has none.
    trec_eval_cut : str or None
        trec_eval's measure with a cutoff, as a pattern with ``{k}``, or None where it has none.
    ir_measures : str
        The ir_measures measure name.
    ir_measures_params : str
        The ir_measures parameters that select this family's form ("" for the default).
    aliases : tuple of str
        Other spellings :func:`parse_metric` reads as this family.
    formula : str
        The per-query definition, as plain text on one line.
    math : str
        The same definition in LaTeX, for the documentation and the dashboard.
    note : str
        Where the family differs from a namesake elsewhere ("" when it does not).
    gain : {"binary", "linear", "exponential"}
        What an item found contributes: 1 when relevant, its grade, or 2^grade - 1.
    few_values : bool
        True when a query's value takes few distinct values set by the cutoff (1/i, 0 or 1,
        j/k, j/R), so a histogram of them is a bar chart.

    Examples
    --------
    >>> spec = family_spec("ap")
    >>> spec.title, spec.trec_eval, spec.trec_eval_cut.format(k=10), spec.ir_measures
    ('Average precision', 'map', 'map_cut_10', 'AP')
    """

    name: str
    title: str
    needs_k: bool
    accepts_k: bool
    binary: bool
    invertible: bool
    exact_under_dedup: bool
    trec_eval: str | None
    trec_eval_cut: str | None
    ir_measures: str
    ir_measures_params: str
    aliases: tuple[str, ...]
    formula: str
    math: str
    note: str = ""
    gain: Literal["binary", "linear", "exponential"] = "binary"
    few_values: bool = False

    @property
    def graded(self) -> bool:
        """True when the metric uses the judged grades as gains."""
        return not self.binary


_SPECS: tuple[FamilySpec, ...] = (
    FamilySpec(
        few_values=True,
        name="rr",
        title="Reciprocal rank",
        needs_k=False,
        accepts_k=True,
        binary=True,
        invertible=True,
        exact_under_dedup=True,
        trec_eval="recip_rank",
        trec_eval_cut=None,
        ir_measures="RR",
        ir_measures_params="",
        aliases=("mrr", "recip_rank", "reciprocal_rank"),
        formula="RR@k = 1 / (rank of the first relevant item), 0 when none is in the top k",
        math=r"\mathrm{RR@}k = \frac{1}{\min\{i \le k : \mathrm{rel}_i\}}",
        note="trec_eval has no cutoff form of recip_rank; ir_measures has RR@k.",
    ),
    FamilySpec(
        few_values=True,
        name="hit",
        title="Success (hit rate)",
        needs_k=True,
        accepts_k=True,
        binary=True,
        invertible=True,
        exact_under_dedup=True,
        trec_eval=None,
        trec_eval_cut="success_{k}",
        ir_measures="Success",
        ir_measures_params="",
        aliases=("success",),
        formula="Hit@k = 1 when a relevant item is in the top k, else 0",
        math=r"\mathrm{Hit@}k = \mathbb{1}\left[\sum_{i=1}^{k} \mathrm{rel}_i > 0\right]",
    ),
    FamilySpec(
        few_values=True,
        name="p",
        title="Precision",
        needs_k=True,
        accepts_k=True,
        binary=True,
        invertible=True,
        exact_under_dedup=False,
        trec_eval=None,
        trec_eval_cut="P_{k}",
        ir_measures="P",
        ir_measures_params="",
        aliases=("precision",),
        formula="P@k = (relevant items in the top k) / k",
        math=r"\mathrm{P@}k = \frac{1}{k} \sum_{i=1}^{k} \mathrm{rel}_i",
    ),
    FamilySpec(
        few_values=True,
        name="r",
        title="Recall",
        needs_k=True,
        accepts_k=True,
        binary=True,
        invertible=True,
        exact_under_dedup=False,
        trec_eval=None,
        trec_eval_cut="recall_{k}",
        ir_measures="R",
        ir_measures_params="",
        aliases=("recall",),
        formula="R@k = (relevant items in the top k) / R, R = items judged relevant",
        math=r"\mathrm{R@}k = \frac{1}{R} \sum_{i=1}^{k} \mathrm{rel}_i",
    ),
    FamilySpec(
        name="rprec",
        title="R-precision",
        needs_k=False,
        accepts_k=False,
        binary=True,
        invertible=True,
        exact_under_dedup=False,
        trec_eval="Rprec",
        trec_eval_cut=None,
        ir_measures="Rprec",
        ir_measures_params="",
        aliases=("r-prec", "r_prec"),
        formula="Rprec = (relevant items in the top R) / R, R = items judged relevant",
        math=r"\mathrm{Rprec} = \frac{1}{R} \sum_{i=1}^{R} \mathrm{rel}_i",
    ),
    FamilySpec(
        name="ap",
        title="Average precision",
        needs_k=False,
        accepts_k=True,
        binary=True,
        invertible=True,
        exact_under_dedup=False,
        trec_eval="map",
        trec_eval_cut="map_cut_{k}",
        ir_measures="AP",
        ir_measures_params="",
        aliases=("map",),
        formula="AP@k = (sum of P@i over the relevant ranks i <= k) / R",
        math=r"\mathrm{AP@}k = \frac{1}{R} \sum_{i=1}^{k} \mathrm{rel}_i\,\mathrm{P@}i",
        note="Divided by R (trec_eval's map_cut_k), not by min(k, R).",
    ),
    FamilySpec(
        gain="linear",
        name="ndcg",
        title="nDCG",
        needs_k=False,
        accepts_k=True,
        binary=False,
        invertible=False,
        exact_under_dedup=False,
        trec_eval="ndcg",
        trec_eval_cut="ndcg_cut_{k}",
        ir_measures="nDCG",
        ir_measures_params="",
        aliases=(),
        formula="nDCG@k = DCG@k / ideal DCG@k, DCG@k = sum over i <= k of grade_i / log2(i + 1)",
        math=(
            r"\mathrm{nDCG@}k = \frac{\mathrm{DCG@}k}{\mathrm{IDCG@}k}, \quad "
            r"\mathrm{DCG@}k = \sum_{i=1}^{k} \frac{g_i}{\log_2(i+1)}"
        ),
    ),
    FamilySpec(
        gain="exponential",
        name="ndcg_exp",
        title="nDCG (exponential gains)",
        needs_k=False,
        accepts_k=True,
        binary=False,
        invertible=False,
        exact_under_dedup=False,
        trec_eval=None,
        trec_eval_cut=None,
        ir_measures="nDCG",
        ir_measures_params="dcg='exp-log2'",
        aliases=(),
        formula=(
            "nDCG@k with gains 2^grade - 1: DCG@k = sum over i <= k of (2^grade_i - 1) / log2(i + 1)"
        ),
        math=(
            r"\mathrm{nDCG@}k = \frac{\mathrm{DCG@}k}{\mathrm{IDCG@}k}, \quad "
            r"\mathrm{DCG@}k = \sum_{i=1}^{k} \frac{2^{g_i} - 1}{\log_2(i+1)}"
        ),
        note=(
            "trec_eval has no exponential-gain nDCG (its ndcg takes the grades as gains);"
            " ir_measures spells it nDCG(dcg='exp-log2')."
        ),
    ),
)

#: Every metric family by canonical name, in display order (read-only).
FAMILY_SPECS: Mapping[str, FamilySpec] = MappingProxyType({spec.name: spec for spec in _SPECS})

#: The canonical metric families, in display order.
FAMILIES: tuple[str, ...] = tuple(FAMILY_SPECS)


def family_spec(name: str) -> FamilySpec:
    """Return the :class:`FamilySpec` of a canonical family name or of one of its aliases.

    Parameters
    ----------
    name : str
        E.g. ``"rr"``, ``"mrr"`` or ``"ndcg_exp"`` (case-insensitive).

    Returns
    -------
    FamilySpec

    Raises
    ------
    ParameterError
        For a name that is no family.

    Examples
    --------
    >>> family_spec("mrr").title
    'Reciprocal rank'
    >>> [f for f in FAMILIES if family_spec(f).invertible]
    ['rr', 'hit', 'p', 'r', 'rprec', 'ap']
    >>> family_spec("bleu")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: Unknown metric family 'bleu'; expected one of rr, hit, p, r, rprec, ap, ndcg, ndcg_exp.
    """
    family = _ALIASES.get(name.lower()) if isinstance(name, str) else None
    if family is None:
        raise ParameterError(
            f"Unknown metric family {name!r}; expected one of {', '.join(FAMILIES)}."
        )
    return FAMILY_SPECS[family]


_ALIASES: dict[str, str] = {}
for _spec in _SPECS:
    _ALIASES[_spec.name] = _spec.name
    for _alias in _spec.aliases:
        _ALIASES[_alias] = _spec.name

_SPELLING = re.compile(
    r"^\s*(?P<family>[a-z_\-]+)\s*(?:@\s*(?P<k>[^\[\s]+))?\s*"
    r"(?:\[\s*rel\s*>=\s*(?P<rel>[^\]\s]+)\s*\])?\s*$"
)

# trec_eval's names: P_10 (or P.10), recall_100, success_10, map_cut_10, ndcg_cut_10, and
# recip_rank, Rprec, map, ndcg without a cutoff.
_TREC_CUT: dict[str, str] = {
    spec.trec_eval_cut.split("_{k}")[0].lower(): spec.name
    for spec in _SPECS
    if spec.trec_eval_cut is not None
}
# The patterns of the other forms are compiled on their first use (re caches them), not at
# every start: most spellings are canonical.
_TREC_SPELLING = (
    r"^\s*(?P<name>" + "|".join(sorted(_TREC_CUT, key=len, reverse=True)) + r")[_.](?P<k>\d+)\s*$"
)

# ir_measures' names with parameters: P(rel=2)@10, RR(rel=2), nDCG(dcg='exp-log2')@10. Without
# parameters (nDCG@10, RR@10, R@100, AP, Success@10, Rprec) they read as canonical spellings.
_IR_MEASURES: dict[str, str] = {
    spec.ir_measures.lower(): spec.name for spec in _SPECS if not spec.ir_measures_params
}
_IR_SPELLING = r"(?i)^\s*(?P<name>[a-z]+)\s*\((?P<params>[^)]*)\)\s*(?:@\s*(?P<k>[^\s]+))?\s*$"
_IR_PARAM = r"^\s*(?P<key>[A-Za-z_]+)\s*=\s*(?P<value>'[^']*'|\"[^\"]*\"|[^\s]+)\s*$"

_EXAMPLES = ", ".join(
    ("rr@10", "hit@10", "p@10", "r@100", "rprec", "ap", "ap@100", "ndcg@10", "ndcg_exp@10")
)
_OTHER_FORMS = (
    " trec_eval's names (P_10, recall_100, success_10, map_cut_10, ndcg_cut_10, recip_rank,"
    " Rprec, map, ndcg) and ir_measures' (nDCG@10, P(rel=2)@10, RR(rel=2)@10,"
    " nDCG(dcg='exp-log2')@10) are read too."
)


@dataclass(frozen=True)
class Metric:
    """One retrieval metric, as evaluated per query.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    k : int or None
        The cutoff; None for a metric over the whole ranking.
    rel : int
        Relevance threshold of binary metrics: an item judged ``grade >= rel`` is relevant.

    Examples
    --------
    >>> Metric("ap", 10).name, Metric("ap", 10).trec_name
    ('ap@10', 'map_cut_10')
    >>> Metric("p", 0)
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The cutoff of p@0 must be an int >= 1. Got 0 instead.
    """

    family: str
    k: int | None = None
    rel: int = 1

    def __post_init__(self) -> None:
        if self.family not in FAMILY_SPECS:
            raise ParameterError(
                f"Unknown metric family {self.family!r}; expected one of {', '.join(FAMILIES)}."
            )
        spec = FAMILY_SPECS[self.family]
        if self.k is None and spec.needs_k:
            raise ParameterError(f"The metric {self.family} needs a cutoff, e.g. {self.family}@10.")
        if self.k is not None:
            if not spec.accepts_k:
                raise ParameterError(f"The metric {self.family} takes no cutoff.")
            if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise ParameterError(
                    f"The cutoff of {self.family}@{self.k} must be an int >= 1. "
                    f"Got {self.k!r} instead."
                )
        if isinstance(self.rel, bool) or not isinstance(self.rel, int) or self.rel < 1:
            raise ParameterError(
                f"The relevance threshold of {self.family} must be an int >= 1. "
                f"Got {self.rel!r} instead."
            )
        if not spec.binary and self.rel != 1:
            raise ParameterError(
                f"{self.family} uses graded gains and takes no relevance threshold."
            )

    @property
    def name(self) -> str:
        """The canonical spelling, e.g. ``rr@10`` or ``hit@5[rel>=2]``."""
        text = self.family if self.k is None else f"{self.family}@{self.k}"
        return text if self.rel == 1 else f"{text}[rel>={self.rel}]"

    @property
    def spec(self) -> FamilySpec:
        """The family's entry in :data:`FAMILY_SPECS`."""
        return FAMILY_SPECS[self.family]

    @property
    def binary(self) -> bool:
        """True when the metric only sees relevant / not relevant."""
        return self.spec.binary

    @property
    def trec_name(self) -> str | None:
        """trec_eval's measure name, or None where trec_eval has no such measure.

        A threshold other than 1 has no name of its own (trec_eval sets it globally with
        ``-l``), so such metrics have none either.

        Examples
        --------
        >>> Metric("p", 5).trec_name, Metric("rr", 10).trec_name, Metric("ndcg_exp").trec_name
        ('P_5', None, None)
        """
        if self.rel != 1:
            return None
        spec = self.spec
        if self.k is None:
            return spec.trec_eval
        return None if spec.trec_eval_cut is None else spec.trec_eval_cut.format(k=self.k)

    @property
    def ir_measures_name(self) -> str:
        """ir_measures' spelling of the measure, which ``ir_measures.parse_measure`` reads.

        Examples
        --------
        >>> Metric("p", 10, 2).ir_measures_name, Metric("ndcg_exp", 10).ir_measures_name
        ('P(rel=2)@10', "nDCG(dcg='exp-log2')@10")
        """
        spec = self.spec
        params = [spec.ir_measures_params] if spec.ir_measures_params else []
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        text = spec.ir_measures + (f"({', '.join(params)})" if params else "")
        return text if self.k is None else f"{text}@{self.k}"

    @property
    def report_name(self) -> str:
        """trec_eval's name where one exists, else the canonical spelling."""
        return self.trec_name or self.name

    def __str__(self) -> str:
        return self.name


def parse_metric(spelling: str | Metric) -> Metric:
    """Read a metric from any accepted spelling (case-insensitive).

    Parameters
    ----------
    spelling : str or Metric
        E.g. ``"mrr@10"``, ``"rr@10"``, ``"P@5"``, ``"ndcg_exp@10"``, ``"ap@100[rel>=2]"``.

    Returns
    -------
    Metric

    Raises
    ------
    ParameterError
        When the text is not a metric.

    Examples
    --------
    >>> parse_metric("recall@100")
    Metric(family='r', k=100, rel=1)
    >>> parse_metric("mrr@ten")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: Cannot read the metric 'mrr@ten': the cutoff must be a whole number >= 1, as in mrr@10.
    """
    if isinstance(spelling, Metric):
        return spelling
    if not isinstance(spelling, str):
        raise ParameterError(f"A metric must be given as text. Got {spelling!r} instead.")
    text = spelling.lower()
    match = _SPELLING.match(text)
    if match is None:
        trec = re.match(_TREC_SPELLING, text)
        if trec is not None:
            return Metric(_TREC_CUT[trec["name"]], _cutoff(spelling, trec["k"], trec["name"]))
        ir = re.match(_IR_SPELLING, spelling)
        if ir is not None:
            return _parse_ir_measures(spelling, ir)
        raise ParameterError(
            f"Cannot read the metric {spelling!r}; expected a spelling such as {_EXAMPLES}."
            + _OTHER_FORMS
        )
    alias = match["family"]
    family = _ALIASES.get(alias)
    if family is None:
        raise ParameterError(
            f"Unknown metric {spelling!r}; expected a spelling such as {_EXAMPLES}." + _OTHER_FORMS
        )
    k = None if match["k"] is None else _cutoff(spelling, match["k"], alias)
    rel = 1
    if match["rel"] is not None:
        if not match["rel"].isdigit() or int(match["rel"]) < 1:
            raise ParameterError(
                f"Cannot read the metric {spelling!r}: the relevance threshold must be a whole"
                f" number >= 1, as in {alias}@10[rel>=2]."
            )
        rel = int(match["rel"])
    return Metric(family, k, rel)


def _cutoff(spelling: str, text: str, alias: str) -> int:
    """Read the cutoff of a spelling, or raise naming the family as the user wrote it."""
    if not text.isdigit() or int(text) < 1:
        raise ParameterError(
            f"Cannot read the metric {spelling!r}: the cutoff must be a whole number >= 1,"
            f" as in {alias}@10."
        )
    return int(text)


def _parse_ir_measures(spelling: str, match: re.Match[str]) -> Metric:
    """Read an ir_measures spelling with parameters, such as ``P(rel=2)@10``."""
    name = match["name"].lower()
    family = _IR_MEASURES.get(name)
    if family is None:
        raise ParameterError(
            f"Unknown metric {spelling!r}; expected a spelling such as {_EXAMPLES}." + _OTHER_FORMS
        )
    rel = 1
    for part in filter(str.strip, match["params"].split(",")):
        param = re.match(_IR_PARAM, part)
        key, value = (None, "") if param is None else (param["key"], param["value"].strip("'\""))
        key, value = (key and key.lower()), value.lower()
        if key == "rel" and value.isdigit() and int(value) >= 1:
            rel = int(value)
        elif key == "dcg" and family == "ndcg" and value in ("log2", "exp-log2"):
            family = "ndcg_exp" if value == "exp-log2" else "ndcg"
        else:
            raise ParameterError(
                f"Cannot read the metric {spelling!r}: of ir_measures' parameters only rel=n"
                f" (n >= 1) and, for nDCG, dcg='log2' or dcg='exp-log2' are read. Got"
                f" {part.strip()!r} instead."
            )
    k = None if match["k"] is None else _cutoff(spelling, match["k"], name)
    return Metric(family, k, rel)


def parse_metrics(
    spellings: str | Metric | list[str | Metric] | tuple[str | Metric, ...],
) -> tuple[Metric, ...]:
    """Read several metrics; a string may hold a comma-separated list.

    Examples
    --------
    >>> [m.name for m in parse_metrics("mrr@10, ndcg@10")]
    ['rr@10', 'ndcg@10']
    """
    if isinstance(spellings, str | Metric):
        spellings = [spellings]
    out: list[Metric] = []
    for item in spellings:
        if isinstance(item, str):
            out.extend(parse_metric(part) for part in item.split(",") if part.strip())
        else:
            out.append(parse_metric(item))
    if not out:
        raise ParameterError("At least one metric is needed.")
    return tuple(dict.fromkeys(out))
