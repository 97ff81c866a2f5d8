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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalvalidity.errors import ParameterError

__all__ = ["FAMILIES", "Metric", "parse_metric", "parse_metrics"]

# family -> (needs_k, accepts_k, binary, aliases)
_FAMILY_INFO: dict[str, tuple[bool, bool, bool, tuple[str, ...]]] = {
    "rr": (False, True, True, ("mrr", "recip_rank", "reciprocal_rank")),
    "hit": (True, True, True, ("success",)),
    "p": (True, True, True, ("precision",)),
    "r": (True, True, True, ("recall",)),
    "rprec": (False, False, True, ("r-prec", "r_prec")),
    "ap": (False, True, True, ("map",)),
    "ndcg": (False, True, False, ()),
    "ndcg_exp": (False, True, False, ()),
}

#: The canonical metric families, in display order.
FAMILIES: tuple[str, ...] = tuple(_FAMILY_INFO)

_ALIASES: dict[str, str] = {}
for _family, (_, _, _, _aliases) in _FAMILY_INFO.items():
    _ALIASES[_family] = _family
    for _alias in _aliases:
        _ALIASES[_alias] = _family

_SPELLING = re.compile(
    r"^\s*(?P<family>[a-z_\-]+)\s*(?:@\s*(?P<k>[^\[\s]+))?\s*"
    r"(?:\[\s*rel\s*>=\s*(?P<rel>[^\]\s]+)\s*\])?\s*$"
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
        if self.family not in _FAMILY_INFO:
            raise ParameterError(
                f"Unknown metric family {self.family!r}; expected one of {', '.join(FAMILIES)}."
            )
        needs_k, accepts_k, binary, _ = _FAMILY_INFO[self.family]
        if self.k is None and needs_k:
            raise ParameterError(f"The metric {self.family} needs a cutoff, e.g. {self.family}@10.")
        if self.k is not None:
            if not accepts_k:
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
        if not binary and self.rel != 1:
            raise ParameterError(
                f"{self.family} uses graded gains and takes no relevance threshold."
            )

    @property
    def name(self) -> str:
        """The canonical spelling, e.g. ``rr@10`` or ``hit@5[rel>=2]``."""
        text = self.family if self.k is None else f"{self.family}@{self.k}"
        return text if self.rel == 1 else f"{text}[rel>={self.rel}]"

    @property
    def binary(self) -> bool:
        """True when the metric only sees relevant / not relevant."""
        return _FAMILY_INFO[self.family][2]

    @property
    def trec_name(self) -> str | None:
        """trec_eval's measure name, or None where trec_eval has no such measure.

        A threshold other than 1 has no name of its own (trec_eval sets it globally with
        ``-l``), so such metrics have none either.
        """
        if self.rel != 1:
            return None
        k = self.k
        names: dict[str, str | None] = {
            "rr": "recip_rank" if k is None else None,
            "hit": f"success_{k}",
            "p": f"P_{k}",
            "r": f"recall_{k}",
            "rprec": "Rprec",
            "ap": "map" if k is None else f"map_cut_{k}",
            "ndcg": "ndcg" if k is None else f"ndcg_cut_{k}",
            "ndcg_exp": None,
        }
        return names[self.family]

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
    match = _SPELLING.match(spelling.lower())
    known = ", ".join(
        ("rr@10", "hit@10", "p@10", "r@100", "rprec", "ap", "ap@100", "ndcg@10", "ndcg_exp@10")
    )
    if match is None:
        raise ParameterError(
            f"Cannot read the metric {spelling!r}; expected a spelling such as {known}."
        )
    alias = match["family"]
    family = _ALIASES.get(alias)
    if family is None:
        raise ParameterError(f"Unknown metric {spelling!r}; expected a spelling such as {known}.")
    k: int | None = None
    if match["k"] is not None:
        if not match["k"].isdigit() or int(match["k"]) < 1:
            raise ParameterError(
                f"Cannot read the metric {spelling!r}: the cutoff must be a whole number >= 1,"
                f" as in {alias}@10."
            )
        k = int(match["k"])
    rel = 1
    if match["rel"] is not None:
        if not match["rel"].isdigit() or int(match["rel"]) < 1:
            raise ParameterError(
                f"Cannot read the metric {spelling!r}: the relevance threshold must be a whole"
                f" number >= 1, as in {alias}@10[rel>=2]."
            )
        rel = int(match["rel"])
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
