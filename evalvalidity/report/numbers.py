"""The report's one number format: every number of the HTML report goes through :func:`format_number`.

========  ==========================  ======================================================
kind      shown as                    rule
========  ==========================  ======================================================
score     ``0.342``, ``< 0.001``      three decimals; a non-zero value that would show as
                                      ``0.000`` is ``< 0.001`` (``> −0.001`` below zero)
signed    ``+0.125``, ``−0.040``      a score with its sign (differences)
ratio     ``1.02×``                   two decimals and a times sign; ``< 0.01×`` when tiny
share     ``99.7 %``                  a fraction as a percentage with one decimal, honest at
                                      both ends: ``> 99.9 %`` short of all, ``< 0.1 %`` above
                                      none (never ``100.0 %`` or ``0.0 %`` unless exact)
count     ``12,345``                  a whole number with thousands separators
p         ``0.032``, ``< 0.001``      a p-value with three decimals; ``< 0.001`` below 0.001;
                                      ``≤ 0.008`` at the resolution of the test
========  ==========================  ======================================================

A value that is None, NaN or infinite shows as ``–`` (``∞`` for an infinite ratio). Minus signs
are U+2212. :func:`renumber` rewrites the numbers of a reason's message (written by the
verdict's rules with their own precision) in this format, from the exact numbers the reason
carries when it has them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from evalvalidity.errors import ParameterError

__all__ = ["NUMBER_KINDS", "format_number", "renumber"]

NumberKind = Literal["score", "signed", "ratio", "share", "count", "p"]

#: The kinds :func:`format_number` knows.
NUMBER_KINDS: Final = ("score", "signed", "ratio", "share", "count", "p")

_MINUS: Final = "\u2212"


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def format_number(
    value: Any, kind: NumberKind = "score", *, resolution: float | None = None
) -> str:
    """A number as the report shows it (see the module's table).

    Parameters
    ----------
    value : int, float or None
    kind : {"score", "signed", "ratio", "share", "count", "p"}
    resolution : float, optional
        With ``kind="p"``: the smallest p-value the test can give; a p-value at it shows as
        ``≤`` the resolution rounded up to three decimals (``< 0.001`` when that is 0.000).

    Returns
    -------
    str

    Raises
    ------
    ParameterError
        When ``kind`` is unknown.

    Examples
    --------
    >>> [format_number(v) for v in (0.34167, 0.0004, -0.0004, 0.0, None)]
    ['0.342', '< 0.001', '> −0.001', '0.000', '–']
    >>> format_number(-0.04, "signed"), format_number(0.125, "signed")
    ('−0.040', '+0.125')
    >>> format_number(1.0234, "ratio"), format_number(12345.6, "ratio")
    ('1.02×', '12,345.60×')
    >>> [format_number(v, "share") for v in (0.997, 0.99996, 1.0, 0.00004, 0.0)]
    ['99.7 %', '> 99.9 %', '100.0 %', '< 0.1 %', '0.0 %']
    >>> format_number(1234567, "count")
    '1,234,567'
    >>> [format_number(p, "p", resolution=0.0078125) for p in (0.0078125, 0.04321)]
    ['≤ 0.008', '0.043']
    >>> format_number(0.0004, "p"), format_number(0.0001, "p", resolution=0.0001)
    ('< 0.001', '< 0.001')
    >>> format_number(0.5, "percent")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The 'kind' parameter of format_number must be one of score, signed, ratio, share, count, p. Got 'percent' instead.
    """
    if kind not in NUMBER_KINDS:
        raise ParameterError(
            "The 'kind' parameter of format_number must be one of "
            f"{', '.join(NUMBER_KINDS)}. Got {kind!r} instead."
        )
    if kind == "ratio" and isinstance(value, float) and math.isinf(value) and value > 0:
        return "∞"
    if not _finite(value):
        return "–"
    v = float(value)
    if kind == "count":
        return f"{round(v):,}".replace("-", _MINUS)
    if kind == "share":
        text = f"{100 * v:,.1f}"
        if text == "100.0" and v < 1:
            return "> 99.9 %"
        if text in ("0.0", "-0.0") and v != 0:
            return "< 0.1 %" if v > 0 else "> −0.1 %"
        return f"{text} %".replace("-", _MINUS)
    if kind == "ratio":
        if 0 < v < 0.005:
            return "< 0.01×"
        return f"{v:,.2f}×".replace("-", _MINUS)
    if kind == "p":
        if resolution is not None and _finite(resolution) and v <= resolution * (1 + 1e-12):
            shown = math.ceil(resolution * 1000 - 1e-9) / 1000
            return "< 0.001" if shown <= 0.001 and resolution < 0.001 else f"≤ {shown:.3f}"
        return "< 0.001" if v < 0.001 else f"{v:.3f}"
    if 0 < abs(v) < 0.0005:
        return "< 0.001" if v > 0 else "> −0.001"
    text = f"{v:+,.3f}" if kind == "signed" else f"{v:,.3f}"
    if text in ("-0.000", "+0.000", "-0.000"):
        text = "0.000" if kind == "score" else "±0.000"
    return text.replace("-", _MINUS)


# A number in running text: not part of a word or an id (rr@10, q17, d095, 1a2b), with an
# optional exponent and the unit that follows it (× or %).
_NUMBER: Final = re.compile(
    r"(?<![\w@#.\-−/:])(?P<sign>[-−])?(?P<num>\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"(?![\w@#.]|,\d)(?P<unit>\s?%|\s?×)?"
)


_PLAIN: Final = r"[-−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?"
# A ratio with its interval, the times sign after the bracket: ``1.05 [0.90, 1.20] ×``.
_RATIO_INTERVAL: Final = re.compile(
    rf"(?<![\w@#.])(?P<estimate>{_PLAIN}) \[(?P<low>{_PLAIN}), (?P<high>{_PLAIN})\]\s?×"
)


def _tolerance(token: str) -> float:
    """Half a unit of the last digit ``token`` shows (relative for an exponent)."""
    mantissa, _, exponent = token.partition("e")
    decimals = len(mantissa.partition(".")[2])
    half = 0.5 * 10.0**-decimals
    return half * 10.0 ** int(exponent) if exponent else half


def _kind_of_key(key: str) -> NumberKind:
    if any(word in key for word in ("ratio", "over", "times")):
        return "ratio"
    if any(word in key for word in ("share", "percent", "judged_at")):
        return "share"
    return "score"


def renumber(text: str, numbers: Mapping[str, Any] | None = None) -> str:
    """``text`` with each number in it written by :func:`format_number`.

    A number followed by ``%`` is a share, by ``×`` a ratio, a whole number a count and any
    other a score. When ``numbers`` (a reason's exact numbers) holds a value the written number
    is a rounding of, that value is formatted instead (so ``100 %`` written for 0.997 becomes
    ``99.7 %``); a number with no unit is matched only with a value whose key names no ratio
    or share (``*ratio*``, ``*_over_*``, ``*share*``). Numbers inside words and ids
    (``rr@10``, ``q17``) are left alone.

    Examples
    --------
    >>> renumber("A random ranker scores 100 % of a perfect one (floor 0.997, z = 3.14159).",
    ...          {"floor_over_ceiling": 0.997, "floor": 0.99712, "z": 3.14159})
    'A random ranker scores 99.7 % of a perfect one (floor 0.997, z = 3.142).'
    >>> renumber("rr@10: 12345 queries, 0.0001234 mean, 12.3× the floor; 45% judged")
    'rr@10: 12,345 queries, < 0.001 mean, 12.30× the floor; 45.0 % judged'
    >>> renumber("measured 1.05 [0.90, 1.20] × the exact floor", {"ratio": 1.0473})
    'measured 1.05× [0.90×, 1.20×] the exact floor'
    """
    exact = {
        key: float(value)
        for key, value in (numbers or {}).items()
        if _finite(value) and not isinstance(value, int)
    }

    def replace(match: re.Match[str]) -> str:
        token, unit = match.group("num"), (match.group("unit") or "").strip()
        negative = match.group("sign") is not None
        try:
            written = float(token.replace(",", ""))
        except ValueError:  # pragma: no cover - the pattern only matches numbers
            return match.group()
        written = -written if negative else written
        whole = "." not in token and "e" not in token
        if whole and not unit:
            return format_number(written, "count")
        scale = 100.0 if unit == "%" else 1.0
        tolerance = _tolerance(token) + 1e-12
        for key, value in exact.items():
            if (unit or _kind_of_key(key) == "score") and abs(value * scale - written) <= tolerance:
                return format_number(
                    value, "share" if unit == "%" else "ratio" if unit else "score"
                )
        if unit == "%":
            return format_number(written / 100, "share")
        return format_number(written, "ratio" if unit == "×" else "score")

    def ratios(match: re.Match[str]) -> str:
        shown = []
        for part in ("estimate", "low", "high"):
            token = match.group(part)
            written = float(token.replace(",", "").replace("−", "-"))
            tolerance = _tolerance(token.lstrip("-−")) + 1e-12
            value = next((v for v in exact.values() if abs(v - written) <= tolerance), written)
            shown.append(format_number(value, "ratio"))
        return f"{shown[0]} [{shown[1]}, {shown[2]}]"

    out, start = [], 0
    for match in _RATIO_INTERVAL.finditer(text):
        out += [_NUMBER.sub(replace, text[start : match.start()]), ratios(match)]
        start = match.end()
    out.append(_NUMBER.sub(replace, text[start:]))
    return "".join(out)
