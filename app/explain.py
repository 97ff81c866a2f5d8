"""Words and formulas the pages show: a query's floor arithmetic, a dataset's description.

Pure functions (no Streamlit): the numbers come from :mod:`evalvalidity.core.floors`, this only
writes them down.
"""

from __future__ import annotations

import math
import warnings
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


def floor_arithmetic(
    metric: Metric, pool_size: int, gold: int, judged: int, floor: float, floor_method: str
) -> Arithmetic:
    """Write down how a query's floor follows from N, G, R and k."""
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalValidityWarning)
        plain = float(noise_floor(metric, n, g, judged=r).expected[0]) if g <= n else math.nan
    family = metric.family
    spec = metric.spec
    notes.insert(0, f"{spec.title}: {spec.formula}." + (f" {spec.note}" if spec.note else ""))
    if g == 0:
        formula, numbers = r"E = 0", r"\text{no gold item in the pool}"
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
        formula = (
            r"E[\mathrm{nDCG}] = \frac{\sum_j g_j}{N} \sum_{i=1}^{K} "
            r"\frac{1}{\log_2(i+1)} \Big/ \mathrm{IDCG}"
        )
        numbers = rf"\text{{with every gold item at grade 1: }} {plain:.6g}"
        notes.append("nDCG uses the gold items' grades; the table's floor uses the real ones.")
    if floor_method != "exact":
        notes.append(
            f"The check's floor, {floor:.6g}, is computed for chunk scores deduplicated to "
            f"documents ({floor_method}): under random chunk scores a document with more "
            f"chunks comes first more often, so the chunk-free formula above ({plain:.6g}) is "
            "only a reference."
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
