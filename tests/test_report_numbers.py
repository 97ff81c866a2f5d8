"""The report's one number format (evalvalidity.report.numbers)."""

from __future__ import annotations

import math

import pytest

from evalvalidity.errors import ParameterError
from evalvalidity.report.numbers import format_number, renumber


@pytest.mark.parametrize(
    ("value", "kind", "shown"),
    [
        (0.34167, "score", "0.342"),
        (1.0, "score", "1.000"),
        (0.0, "score", "0.000"),
        (-0.0, "score", "0.000"),
        (0.0004, "score", "< 0.001"),
        (-0.0004, "score", "> −0.001"),
        (-0.25, "score", "−0.250"),
        (1234.5, "score", "1,234.500"),
        (0.125, "signed", "+0.125"),
        (-0.04, "signed", "−0.040"),
        (1.0234, "ratio", "1.02×"),
        (0.001, "ratio", "< 0.01×"),
        (math.inf, "ratio", "∞"),
        (0.997, "share", "99.7 %"),
        (0.99996, "share", "> 99.9 %"),
        (1.0, "share", "100.0 %"),
        (0.00004, "share", "< 0.1 %"),
        (0.0, "share", "0.0 %"),
        (1234567, "count", "1,234,567"),
        (12.0, "count", "12"),
        (0.04321, "p", "0.043"),
        (0.0004, "p", "< 0.001"),
        (None, "score", "–"),
        (math.nan, "count", "–"),
        (True, "score", "–"),
    ],
)
def test_format_number(value, kind, shown):
    assert format_number(value, kind) == shown


def test_a_p_value_at_the_tests_resolution_says_so():
    assert format_number(0.0078125, "p", resolution=0.0078125) == "≤ 0.008"
    assert format_number(0.5, "p", resolution=0.0078125) == "0.500"
    assert format_number(1e-4, "p", resolution=1e-4) == "< 0.001"


def test_format_number_refuses_an_unknown_kind():
    with pytest.raises(
        ParameterError,
        match=r"^The 'kind' parameter of format_number must be one of score, signed, ratio, "
        r"share, count, p\. Got 'percent' instead\.$",
    ):
        format_number(0.5, "percent")


def test_renumber_takes_the_exact_value_a_message_rounded():
    numbers = {"floor_over_ceiling": 0.9996, "floor": 0.99961, "noise_over_floor": 3.456}
    text = "A random ranker scores 100 % of a perfect one (floor 0.9996); 3.5× its floor."
    assert renumber(text, numbers) == (
        "A random ranker scores > 99.9 % of a perfect one (floor 1.000); 3.46× its floor."
    )


def test_renumber_leaves_ids_and_metric_names_alone():
    text = "rr@10 of q17 and d095-3, judged@10 is 45%; 12000 queries; top-5"
    assert renumber(text) == "rr@10 of q17 and d095-3, judged@10 is 45.0 %; 12,000 queries; top-5"
