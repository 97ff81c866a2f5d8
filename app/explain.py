"""Words and formulas the pages show: a query's floor arithmetic, a dataset's description.

Pure functions (no Streamlit): the numbers come from :mod:`evalvalidity.core.floors`, this only
writes them down.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalvalidity.core.floors import noise_floor
from evalvalidity.core.metrics import Metric
from evalvalidity.errors import EvalValidityWarning


@dataclass(frozen=True)
class Arithmetic:
    """A floor written out: the formula, the same with the query's numbers, and notes.

    ``definition`` is the metric's own per-query formula (LaTeX), from the metric registry.
    """

    formula: str  # LaTeX
    numbers: str  # LaTeX
    value: float
    notes: tuple[str, ...]
    definition: str = ""  # LaTeX


def _harmonic(n: int) -> float:
    return float(np.sum(1.0 / np.arange(1, n + 1))) if n > 0 else 0.0


def _gain_terms(spec_gain: str, grades: Sequence[int]) -> str:
    """The gains of ``grades``, best first, written out: ``3 + 1`` or ``(2^{3}-1) + (2^{1}-1)``."""
    ordered = sorted((int(x) for x in grades), reverse=True)
    if spec_gain == "exponential":
        return " + ".join(f"(2^{{{x}}}-1)" for x in ordered)
    return " + ".join(str(x) for x in ordered)


def _ideal(spec_gain: str, grades: Sequence[int], cut: int) -> float:
    """The ideal DCG at depth ``cut`` of the judged ``grades``."""
    ordered = sorted((int(x) for x in grades), reverse=True)[:cut]
    gain = (lambda x: 2.0**x - 1) if spec_gain == "exponential" else float
    return float(sum(gain(x) / math.log2(i + 2) for i, x in enumerate(ordered)))


def floor_arithmetic(
    metric: Metric,
    pool_size: int,
    gold: int,
    judged: int,
    floor: float,
    floor_method: str,
    *,
    gains: Sequence[int] | None = None,
    judged_gains: Sequence[int] | None = None,
    gold_chunks: int | None = None,
) -> Arithmetic:
    r"""Write down how a query's floor follows from N, G, R and k: the floor the check computed.

    Three floors are written differently: the plain one (a uniformly random order of the pool),
    the floor of chunk scores deduplicated to documents (``floor_method`` other than
    ``"exact"``: the exponential race over the documents' chunk counts, with ``gold_chunks``
    :math:`C_G` the chunks of the query's gold documents), and graded nDCG with the grades
    used, ``gains`` (the gold items in the pool) and ``judged_gains`` (every judged relevant
    item, for the ideal DCG).

    Examples
    --------
    >>> from evalvalidity.core.metrics import parse_metric
    >>> a = floor_arithmetic(parse_metric("ndcg@10"), 20, 2, 2, 0.2503, "exact", gains=[1, 3])
    >>> a.numbers.split(r"\Big/")[0]
    '\\frac{3 + 1}{20} \\cdot 4.5436 '
    >>> round(a.value, 4)
    0.2503
    """
    n, g, r = int(pool_size), int(gold), int(judged)
    k = metric.k
    cut = n if k is None else min(k, n)
    kk = "N" if k is None else "K"
    notes: list[str] = [
        f"N = {n:,} items in the pool, G = {g} gold among them, "
        f"R = {r} judged relevant in all"
        + ("" if k is None else f", k = {k} so K = min(k, N) = {cut}")
        + "."
    ]
    spec = metric.spec
    graded = not spec.binary and gains is not None and len(gains) == g
    if graded and judged_gains is None:
        judged_gains = gains
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        plain = (
            float(
                noise_floor(
                    metric,
                    n,
                    g,
                    judged=r,
                    gains=[list(gains or ())] if graded else None,
                    judged_gains=[list(judged_gains or ())] if graded else None,
                ).expected[0]
            )
            if g <= n
            else math.nan
        )
    family = metric.family
    deduplicated = floor_method != "exact"
    notes.insert(0, f"{spec.title}: {spec.formula}." + (f" {spec.note}" if spec.note else ""))
    if g == 0:
        formula, numbers = r"E = 0", r"\text{no gold item in the pool}"
    elif deduplicated and family in ("rr", "hit"):
        # The exact floor of the deduplicating scorer (docs/math.md, The exact floor of RR and Hit).
        term = r"\frac{P(B = b \mid x)}{b+1}" if family == "rr" else r"P(B = b \mid x)"
        name = r"\mathrm{RR}" if family == "rr" else r"\mathrm{Hit}"
        formula = (
            rf"E[{name}] = \int_0^1 \sum_{{b < {kk}}} {term}\; d\big(x^{{C_G}}\big),\quad "
            r"P(B = b \mid x):\ b \text{ non-gold documents beat } x, "
            r"\text{each with } 1 - x^{c_j}"
        )
        chunks = "" if gold_chunks is None else rf"C_G = {int(gold_chunks):,},\ "
        numbers = rf"{chunks}N = {n:,} \text{{ documents}},\ {kk} = {cut}:\ E = {floor:.6g}"
    elif deduplicated:
        formula = (
            rf"E[\mathrm{{{spec.title}}}] \approx \frac{{1}}{{S}} \sum_{{s=1}}^{{S}} "
            r"m(\pi_s),\quad \pi_s \sim \text{Plackett–Luce}(c_1, \dots, c_N)"
        )
        chunks = "" if gold_chunks is None else rf"C_G = {int(gold_chunks):,},\ "
        numbers = rf"{chunks}N = {n:,} \text{{ documents}}:\ E \approx {floor:.6g}"
    elif family == "rr":
        if g == 1:
            formula = rf"E[\mathrm{{RR}}] = \frac{{H_{kk}}}{{N}}"
            numbers = (
                rf"\frac{{H_{{{cut}}}}}{{{n}}} = "
                rf"\frac{{{_harmonic(cut):.4f}}}{{{n}}} = {plain:.6g}"
            )
        else:
            last = min(cut, n - g + 1)
            formula = (
                rf"E[\mathrm{{RR}}] = \sum_{{r=1}}^{{\min({kk},\,N-G+1)}} "
                r"\frac{\binom{N-r}{G-1}}{\binom{N}{G}}\,\frac{1}{r}"
            )
            numbers = (
                rf"\sum_{{r=1}}^{{{last}}} \frac{{\binom{{{n}-r}}{{{g - 1}}}}}"
                rf"{{\binom{{{n}}}{{{g}}}}}\,\frac{{1}}{{r}} = {plain:.6g}"
            )
            notes.append(
                f"For intuition: G·H_K/N = {g * _harmonic(cut) / n:.6g} (exact only for G = 1)."
            )
    elif family == "hit":
        formula = rf"E[\mathrm{{Hit}}] = 1 - \binom{{N-{kk}}}{{G}} \Big/ \binom{{N}}{{G}}"
        numbers = rf"1 - \binom{{{n - cut}}}{{{g}}} \Big/ \binom{{{n}}}{{{g}}} = {plain:.6g}"
    elif family == "p":
        formula = r"E[\mathrm{P@}k] = \frac{G\,K}{N\,k}"
        numbers = rf"\frac{{{g} \cdot {cut}}}{{{n} \cdot {k}}} = {plain:.6g}"
    elif family == "r":
        formula = r"E[\mathrm{R@}k] = \frac{G\,K}{N\,R}"
        numbers = rf"\frac{{{g} \cdot {cut}}}{{{n} \cdot {r}}} = {plain:.6g}"
    elif family == "rprec":
        formula = r"E[\mathrm{Rprec}] = \frac{G \min(R, N)}{N\,R}"
        numbers = rf"\frac{{{g} \cdot {min(r, n)}}}{{{n} \cdot {r}}} = {plain:.6g}"
    elif family == "ap":
        formula = (
            rf"E[\mathrm{{AP}}] = \frac{{G}}{{R\,N}}\left[H_{kk} + "
            rf"\frac{{G-1}}{{N-1}}({kk} - H_{kk})\right]"
        )
        numbers = (
            rf"\frac{{{g}}}{{{r} \cdot {n}}}\left[{_harmonic(cut):.4f} + "
            rf"\frac{{{g - 1}}}{{{n - 1}}}({cut} - {_harmonic(cut):.4f})\right] = "
            rf"{plain:.6g}"
        )
    else:
        gamma = r"2^{g_j} - 1" if spec.gain == "exponential" else r"g_j"
        formula = (
            rf"E[\mathrm{{nDCG}}] = \frac{{\sum_j ({gamma})}}{{N}} \sum_{{i=1}}^{{{kk}}} "
            r"\frac{1}{\log_2(i+1)} \Big/ \mathrm{IDCG}"
        )
        grades = list(gains) if graded and gains is not None else [1] * g
        every = list(judged_gains) if graded and judged_gains is not None else [1] * r
        terms = _gain_terms(spec.gain, grades)
        discount = float(sum(1.0 / math.log2(i + 2) for i in range(cut)))
        numbers = (
            rf"\frac{{{terms}}}{{{n}}} \cdot {discount:.4f} \Big/ "
            rf"{_ideal(spec.gain, every, cut):.4f} = {plain:.6g}"
        )
        notes.append(
            "Gains used: the grades "
            + ", ".join(str(x) for x in sorted(grades, reverse=True))
            + " of the gold items in the pool"
            + (
                " (γ(g) = 2^g − 1); the ideal DCG from every judged grade: "
                if spec.gain == "exponential"
                else " (γ(g) = g); the ideal DCG from every judged grade: "
            )
            + ", ".join(str(x) for x in sorted(every, reverse=True))
            + "."
        )
        if not graded:
            notes.append("The grades were not available here: every gold item is taken as 1.")
    if deduplicated:
        notes.append(
            f"The check's floor, {floor:.6g}, is computed for chunk scores deduplicated to "
            f"documents ({floor_method}): under random chunk scores a document with c chunks "
            "scores the best of c uniforms, so one with more chunks comes first more often. "
            f"The chunk-free formula, a uniform order of the {n:,} documents, gives "
            f"{plain:.6g}: only a reference."
        )
    elif math.isfinite(plain) and not math.isclose(plain, floor, rel_tol=1e-6, abs_tol=1e-12):
        notes.append(
            f"The check's floor is {floor:.6g} (graded gains or judged items outside "
            "the pool change it)."
        )
    value = floor if floor_method != "exact" else plain
    return Arithmetic(formula, numbers, value, tuple(notes), spec.math)


def size(n_bytes: int) -> str:
    """A byte count for people: ``236.0 MB``."""
    value = float(n_bytes)
    for unit in ("bytes", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{value:,.1f} GB"  # pragma: no cover


_MARKDOWN_SPECIALS = "\\`*_{}[]<>()#+-.!|$~"


def md(text: str) -> str:
    """Escape text from the data (names, messages) for st.markdown."""
    return "".join("\\" + c if c in _MARKDOWN_SPECIALS else c for c in str(text))


_SEVERITY_MARK = {
    "broken": ":red-badge[:material/error: broken]",
    "warning": ":orange-badge[:material/warning: warning]",
    "info": ":blue-badge[:material/info: info]",
}


def reason_lines(reasons: tuple[object, ...]) -> list[str]:
    """Markdown bullets for a verdict's reasons, the most severe first."""
    order = {"broken": 0, "warning": 1, "info": 2}
    lines = []
    for r in sorted(reasons, key=lambda r: order.get(getattr(r, "severity", ""), 3)):
        severity = str(getattr(r, "severity", ""))
        lines.append(
            f"- {_SEVERITY_MARK.get(severity, md(severity))} {md(str(getattr(r, 'message', '')))}"
        )
    return lines


def describe(cfg: object) -> str:
    """One line naming the datasets and parameters of a check configuration."""
    parts = [
        f"run **{md(getattr(cfg, 'run', None) or '—')}**",
        f"qrels **{md(getattr(cfg, 'qrels', ''))}**",
    ]
    kind = getattr(cfg, "pool_kind", "")
    pool = getattr(cfg, "pool", "")
    if kind == "corpus":
        parts.append(f"corpus of **{int(pool):,}**")
    else:
        extra = f", {getattr(cfg, 'analytic_unit', '')}" if kind == "units" else ""
        parts.append(f"{kind} **{md(str(pool))}**{md(extra)}")
    noise = getattr(cfg, "noise_run", None)
    parts.append(f"noise run **{md(noise)}**" if noise else "no noise run")
    harness = getattr(cfg, "harness", None)
    parts.append(f"harness output **{md(harness)}**" if harness else "built-in Check 1")
    compare = tuple(getattr(cfg, "compare", ()))
    parts.append(
        "compared with " + ", ".join(f"**{md(c)}**" for c in compare)
        if compare
        else "no comparison run"
    )
    parts.append(f"metric **{md(getattr(cfg, 'metric', ''))}**")
    parts.append(f"ties **{md(getattr(cfg, 'ties', 'trec_eval'))}**")
    return " · ".join(parts)


#: Library wording (keyword arguments and command-line flags) and what the dashboard calls it.
_UI_WORDS = (
    ("pass kind= (--kind) with one of", "choose the kind in the Kind selector: one of"),
    ("pass kind= (--kind)", "choose the kind in the Kind selector:"),
    (
        "pass drop_bad_rows=True (--drop-bad-rows) to keep only the good rows",
        "tick the box that drops the rejected rows to keep only the good ones",
    ),
)


def ui_message(text: str) -> str:
    """A library message in the dashboard's words (no ``--kind``, no ``kind=``).

    >>> ui_message("cannot tell which without guessing: pass kind= (--kind) run or qrels")
    'cannot tell which without guessing: choose the kind in the Kind selector: run or qrels'
    """
    for library, ui in _UI_WORDS:
        text = text.replace(library, ui)
    return text


def excerpt(raw: object, limit: int = 80) -> str:
    r"""Content from a file, safe to show: control and binary bytes escaped, at most ``limit``.

    >>> excerpt("\x00\x01PK\x03\x04" + "x" * 100)[:24], len(excerpt("y" * 500))
    ('\\x00\\x01PK\\x03\\x04xxxxxx', 80)
    >>> excerpt(None)
    ''
    """
    if raw is None:
        return ""
    text = raw.decode("utf-8", "backslashreplace") if isinstance(raw, bytes) else str(raw)
    shown = "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``1 row``, ``2 rows``, ``1,052 rows``: a number with its noun in agreement.

    >>> count(1, "row"), count(3, "row"), count(2, "query", "queries")
    ('1 row', '3 rows', '2 queries')
    """
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def share(fraction: float | None) -> str:
    """A share in percent, rounded honestly: never 100 % or 0 % unless it is exactly that.

    >>> share(0.997), share(0.9996), share(1.0), share(0.25), share(0.0004), share(None)
    ('99.7 %', '99.96 %', '100 %', '25 %', '0.04 %', '–')
    """
    if fraction is None or not math.isfinite(fraction):
        return "–"
    percent = 100.0 * float(fraction)
    if percent in (0.0, 100.0):
        return f"{percent:.0f} %"
    for digits in range(0, 6):
        text = f"{percent:.{digits}f}"
        if float(text) not in (0.0, 100.0) and (digits > 0 or float(text) == round(percent, 1)):
            return f"{text} %"
    return f"{percent:.6g} %"  # pragma: no cover
