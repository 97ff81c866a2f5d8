"""Write floors_reference.json: exact noise floors computed with rational and 60-digit arithmetic.

Run from the repository root (takes about a minute)::

    .venv/bin/python tests/reference/make_floor_reference.py

Every value here comes from the definition of the metric, by routes that share nothing with
``evalvalidity.core.floors`` except the definitions:

- RR@k: the sum over positions r of P(first gold item at r)/r and /r², with
  P(first at r) = C(N−r, G−1)/C(N, G), in 60-digit decimal arithmetic;
- Hit@k, P@k, R@k, R-precision: moments of the hypergeometric number of gold items in the top
  K = min(k, N), summed over its probability mass function in exact fractions;
- AP and AP@k: a dynamic programme over positions 1..K whose state is the number of gold items
  seen so far, carrying P(state), E[Y; state] and E[Y²; state] for Y = Σ_i x_i·(gold items up
  to i)/i, in 60-digit decimal arithmetic;
- nDCG: E[DCG] and E[DCG²] from the first and second moments of the gain at one position and
  at two distinct positions (E[g g'] = (S1² − S2)/(N(N − 1))), with the logarithms in 60-digit
  decimal arithmetic;
- ceilings: the plain-Python metric of tests/brute.py on the best order (gold items first,
  highest grade first).

The JSON holds the values as decimal strings with 30 significant digits.
"""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from brute import brute_metric  # noqa: E402

PRECISION = 60  # significant digits of the decimal arithmetic
DIGITS = 30


def exact_rr(n: int, g: int, depth: int) -> tuple[Decimal, Decimal]:
    """E[RR] and Var[RR] when the first depth positions count."""
    p = Decimal(g) / Decimal(n)
    first = second = Decimal(0)
    last = min(depth, n - g + 1)
    for r in range(1, last + 1):
        first += p / r
        second += p / (r * r)
        if r < last:
            p = p * Decimal(n - r - g + 1) / Decimal(n - r)
    return first, second - first * first


def exact_count(n: int, g: int, depth: int) -> tuple[Fraction, Fraction]:
    """Mean and variance of the hypergeometric number of gold items in the first depth."""
    total = math.comb(n, depth)
    mean = Fraction(0)
    square = Fraction(0)
    for x in range(max(0, depth - (n - g)), min(g, depth) + 1):
        p = Fraction(math.comb(g, x) * math.comb(n - g, depth - x), total)
        mean += p * x
        square += p * x * x
    return mean, square - mean * mean


def exact_ap(n: int, g: int, r: int, depth: int) -> tuple[Decimal, Decimal]:
    """E[AP] and Var[AP] (divided by R) by dynamic programming over positions 1..depth."""
    zero = Decimal(0)
    prob = [Decimal(1)] + [zero] * g
    first = [zero] * (g + 1)
    second = [zero] * (g + 1)
    for i in range(1, depth + 1):
        new_prob = [zero] * (g + 1)
        new_first = [zero] * (g + 1)
        new_second = [zero] * (g + 1)
        for seen in range(0, min(i - 1, g) + 1):
            if prob[seen] == 0:
                continue
            q = Decimal(g - seen) / Decimal(n - i + 1)
            stay = 1 - q
            new_prob[seen] += prob[seen] * stay
            new_first[seen] += first[seen] * stay
            new_second[seen] += second[seen] * stay
            if seen < g:
                step = Decimal(seen + 1) / Decimal(i)
                new_prob[seen + 1] += prob[seen] * q
                new_first[seen + 1] += (first[seen] + step * prob[seen]) * q
                new_second[seen + 1] += (
                    second[seen] + 2 * step * first[seen] + step * step * prob[seen]
                ) * q
        prob, first, second = new_prob, new_first, new_second
    mean = sum(first, zero)
    square = sum(second, zero)
    rr = Decimal(r)
    return mean / rr, (square - mean * mean) / (rr * rr)


def _discount(rank: int) -> Decimal:
    return Decimal(2).ln() / Decimal(rank + 1).ln()


def exact_ndcg(
    n: int, gains: list[int], judged_gains: list[int], k: int | None, exponential: bool
) -> tuple[Decimal, Decimal]:
    """E[nDCG] and Var[nDCG] from the moments of the gain at one and at two positions."""

    def gain(grade: int) -> int:
        return 2**grade - 1 if exponential else grade

    depth = n if k is None else min(k, n)
    discounts = [_discount(i) for i in range(1, depth + 1)]
    d1 = sum(discounts, Decimal(0))
    d2 = sum((d * d for d in discounts), Decimal(0))
    s1 = sum(gain(x) for x in gains)
    s2 = sum(gain(x) ** 2 for x in gains)
    ideal_grades = sorted(judged_gains, reverse=True)
    if k is not None:
        ideal_grades = ideal_grades[:k]
    ideal = sum((gain(x) * _discount(i) for i, x in enumerate(ideal_grades, start=1)), Decimal(0))
    nn = Decimal(n)
    mean = Decimal(s1) / nn * d1
    pair = Decimal(s1 * s1 - s2) / (nn * (nn - 1)) if n > 1 else Decimal(0)
    square = d2 * Decimal(s2) / nn + (d1 * d1 - d2) * pair
    return mean / ideal, (square - mean * mean) / (ideal * ideal)


def ceiling(metric: str, n: int, gold_grades: list[int], judged_grades: list[int]) -> float:
    """The metric of the best order; trailing non-gold items change nothing beyond them."""
    best = sorted(gold_grades, reverse=True)
    padding = min(n - len(best), len(best) + 2000)
    return brute_metric(metric, best + [0] * padding, judged_grades)


def text(value: Decimal | Fraction) -> str:
    if isinstance(value, Fraction):
        value = Decimal(value.numerator) / Decimal(value.denominator)
    return f"{value:.{DIGITS}e}"


BINARY_SHAPES = [
    (1, 1),
    (2, 1),
    (5, 2),
    (7, 7),
    (8, 1),
    (8, 3),
    (8, 5),
    (8, 6),
    (20, 4),
    (50, 10),
    (60, 50),
    (100, 99),
    (218, 1),
    (218, 3),
    (1000, 5),
    (1051, 49),
    (10_000, 3),
    (100_000, 20),
    (10_000_000, 1),
    (10_000_000, 50),
]
CUTOFFS = [1, 10, 1000, None]


def binary_cases() -> list[dict[str, object]]:
    cases = []
    for n, g in BINARY_SHAPES:
        for r in sorted({g, 2 * g + 1}):
            for family in ("rr", "hit", "p", "r", "rprec", "ap"):
                cutoffs: list[int | None] = [None] if family == "rprec" else list(CUTOFFS)
                if family in ("hit", "p", "r"):
                    cutoffs = [k for k in cutoffs if k is not None]
                for k in cutoffs:
                    depth = n if k is None else min(k, n)
                    if family in ("rr", "ap", "hit", "p", "r") and k is None and n > 10_000:
                        continue
                    if family == "ap" and depth * g > 300_000:
                        continue
                    if family == "rr" and r != g:
                        continue  # RR does not depend on R
                    metric = family if k is None else f"{family}@{k}"
                    expected: Decimal | Fraction
                    variance: Decimal | Fraction
                    if family == "rr":
                        expected, variance = exact_rr(n, g, depth)
                    elif family == "ap":
                        expected, variance = exact_ap(n, g, r, depth)
                    elif family == "hit":
                        miss = Fraction(math.comb(n - g, depth), math.comb(n, depth))
                        expected, variance = 1 - miss, (1 - miss) * miss
                    else:
                        mean, var = exact_count(n, g, min(r, n) if family == "rprec" else depth)
                        divisor = k if family == "p" and k is not None else r
                        expected, variance = mean / divisor, var / divisor**2
                    cases.append(
                        _case(
                            metric,
                            n,
                            g,
                            r,
                            None,
                            None,
                            text(expected),
                            text(variance),
                            ceiling(metric, n, [1] * g, [1] * r),
                        )
                    )
    return cases


NDCG_SHAPES = [
    # (N, gains in the pool, all judged gains)
    (1, [1], [1]),
    (8, [1], [1]),
    (8, [3, 1], [3, 1]),
    (20, [2, 2, 1, 1], [3, 2, 2, 1, 1, 1]),
    (218, [3], [3, 2]),
    (1000, [1, 2, 3, 4, 5], [5, 4, 3, 2, 1]),
    (5000, [2, 1, 1], [2, 1, 1]),
    (100_000, [1] * 20, [1] * 30),
    (10_000_000, [3, 2, 1], [3, 3, 2, 1]),
]


def ndcg_cases() -> list[dict[str, object]]:
    cases = []
    for n, gains, judged_gains in NDCG_SHAPES:
        for family in ("ndcg", "ndcg_exp"):
            for k in CUTOFFS:
                depth = n if k is None else min(k, n)
                if depth > 100_000:
                    continue
                metric = family if k is None else f"{family}@{k}"
                expected, variance = exact_ndcg(n, gains, judged_gains, k, family == "ndcg_exp")
                cases.append(
                    _case(
                        metric,
                        n,
                        len(gains),
                        len(judged_gains),
                        gains,
                        judged_gains,
                        text(expected),
                        text(variance),
                        ceiling(metric, n, gains, judged_gains),
                    )
                )
    return cases


def _case(
    metric: str,
    n: int,
    g: int,
    r: int,
    gains: list[int] | None,
    judged_gains: list[int] | None,
    expected: str,
    variance: str,
    best: float,
) -> dict[str, object]:
    return {
        "metric": metric,
        "pool_size": n,
        "gold": g,
        "judged": r,
        "gains": gains,
        "judged_gains": judged_gains,
        "expected": expected,
        "variance": variance,
        "ceiling": repr(best),
    }


def main() -> None:
    with localcontext() as context:  # never change the caller's decimal context
        context.prec = PRECISION
        cases = binary_cases() + ndcg_cases()
    document = {
        "generated_by": "tests/reference/make_floor_reference.py",
        "arithmetic": f"fractions (hypergeometric families) and {PRECISION}-digit decimal",
        "digits": DIGITS,
        "cases": cases,
    }
    out = HERE / "floors_reference.json"
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
