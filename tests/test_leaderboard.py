"""Tests of evalvalidity.core.leaderboard: known orderings, null runs, hand-computed corrections."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalvalidity.core.clustered import cluster_paired_test
from evalvalidity.core.leaderboard import Leaderboard, leaderboard
from evalvalidity.core.stats import paired_randomization_test
from evalvalidity.errors import EvalValidityWarning, ParameterError


def hand_holm(p: list[float]) -> list[float]:
    """Holm step-down written out: sort, multiply by (m - rank + 1), running max, cap at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def hand_bh(p: list[float]) -> list[float]:
    """Benjamini-Hochberg step-up written out: from the largest p down, running min of m p / rank."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, m * p[i] / rank)
        adjusted[i] = running
    return adjusted


def test_hand_corrections_on_textbook_values() -> None:
    # The helpers themselves, on values worked by hand.
    p = [0.01, 0.04, 0.03, 0.005]
    assert hand_holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert hand_bh(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])


def runs_with_gaps(rng: np.random.Generator, n: int, means: list[float], sd: float = 0.1) -> dict:
    query_effect = rng.normal(0, 0.15, size=n)
    return {
        f"run{i}": np.clip(m + query_effect + rng.normal(0, sd, size=n), 0, 1)
        for i, m in enumerate(means)
    }


def test_known_ordering_with_big_gaps_is_separated() -> None:
    rng = np.random.default_rng(1)
    means = [0.3, 0.7, 0.5, 0.1, 0.9]
    values = runs_with_gaps(rng, 200, means)
    board = leaderboard(values, n_resamples=2000, rng=2)
    assert board.runs == ("run4", "run1", "run2", "run0", "run3")
    assert board.ranks == (1, 2, 3, 4, 5)
    assert board.rank_low == board.rank_high == (1, 2, 3, 4, 5)
    assert board.adjacent_separated == (True,) * 4
    assert all(pair.significant and pair.at_resolution for pair in board.pairs)
    assert board.resolution == 1 / 2001 and not board.exact
    assert len(board.pairs) == 10
    for interval, mean in zip(board.intervals, board.means, strict=True):
        assert interval.method == "t" and interval.low < mean < interval.high


def test_mean_intervals_are_t_intervals_without_clusters() -> None:
    values = runs_with_gaps(np.random.default_rng(3), 40, [0.4, 0.5])
    board = leaderboard(values, n_resamples=200, rng=0)
    for name, interval in zip(board.runs, board.intervals, strict=True):
        expected = sps.ttest_1samp(values[name], 0.0).confidence_interval(0.95)
        assert interval.low == pytest.approx(expected.low, rel=1e-12)
        assert interval.high == pytest.approx(expected.high, rel=1e-12)


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_adjusted_p_values_match_hand_corrections_and_single_tests(correction: str) -> None:
    rng = np.random.default_rng(4)
    values = runs_with_gaps(rng, 12, [0.50, 0.52, 0.55, 0.60], sd=0.15)
    board = leaderboard(values, correction=correction, n_resamples=5000, rng=0)
    assert board.exact and board.resolution == 2 / 4096
    raw = [pair.p_value for pair in board.pairs]
    for pair in board.pairs:
        exact = paired_randomization_test(values[pair.run_a], values[pair.run_b], n_resamples=5000)
        assert pair.p_value == pytest.approx(exact.p_value, abs=1e-15)
        assert pair.difference == pytest.approx(np.mean(values[pair.run_a] - values[pair.run_b]))
    expected = hand_holm(raw) if correction == "holm" else hand_bh(raw)
    assert [pair.adjusted_p_value for pair in board.pairs] == pytest.approx(expected, rel=1e-12)
    assert [pair.significant for pair in board.pairs] == [q <= 0.05 for q in expected]


def test_equal_runs_are_not_separated_at_the_nominal_rate() -> None:
    # Three runs of the same system plus noise: Holm keeps the chance of separating any pair
    # at most alpha.
    rng = np.random.default_rng(5)
    reps, separated = 200, 0
    for _ in range(reps):
        board = leaderboard(runs_with_gaps(rng, 50, [0.5, 0.5, 0.5]), n_resamples=499, rng=rng)
        separated += any(board.adjacent_separated) or any(p.significant for p in board.pairs)
    assert separated / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_equal_runs_have_wide_rank_intervals() -> None:
    board = leaderboard(
        runs_with_gaps(np.random.default_rng(6), 60, [0.5] * 4), n_resamples=2000, rng=1
    )
    assert all(high > low for low, high in zip(board.rank_low, board.rank_high, strict=True))
    assert board.rank_high[0] >= 3


def test_clustered_leaderboard_keeps_the_level_where_the_naive_one_does_not() -> None:
    # Equal runs whose differences share a cluster effect (variants of one question move
    # together): per-query tests separate them far too often, cluster tests do not.
    rng = np.random.default_rng(7)
    reps, naive, clustered = 100, 0, 0
    codes = np.repeat(np.arange(20), 8)
    for _ in range(reps):
        base = rng.random(160)
        shifts = rng.normal(0, 0.08, size=(2, 20))[:, codes]
        values = {"a": base + shifts[0], "b": base + shifts[1]}
        naive += leaderboard(values, n_resamples=499, rng=rng).pairs[0].significant
        clustered += (
            leaderboard(values, clusters=codes, n_resamples=499, rng=rng).pairs[0].significant
        )
    assert clustered / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert naive / reps > 0.3


def test_clustered_tests_are_the_cluster_paired_test() -> None:
    rng = np.random.default_rng(8)
    codes = np.repeat(np.arange(10), 3)
    values = {"a": rng.random(30), "b": rng.random(30)}
    board = leaderboard(values, clusters=codes, n_resamples=2000, rng=0)
    first, second = board.runs
    single = cluster_paired_test(values[first], values[second], codes, n_resamples=2000)
    assert board.pairs[0].p_value == single.p_value
    assert board.resolution == single.resolution == 2 / 1024
    assert board.n_clusters == 10 and board.intervals[0].method == "sandwich"


def test_adjusted_scores_wins_ties_losses_and_rows() -> None:
    values = {"base": [0.2, 0.5, 0.5, 0.1], "new": [0.4, 0.5, 0.3, 0.6]}
    floors, ceilings = [0.1, 0.1, 0.1, 0.1], [1.0, 1.0, 1.0, 0.5]
    with pytest.warns(EvalValidityWarning, match="too coarse"):
        board = leaderboard(values, floors=floors, ceilings=ceilings, n_resamples=100, rng=0)
    assert board.runs == ("new", "base") and board.baseline == "base"
    assert board.adjusted_scores == pytest.approx([(0.45 - 0.1) / 0.775, (0.325 - 0.1) / 0.775])
    assert (board.wins, board.ties, board.losses) == ((2, 0), (1, 4), (1, 0))
    rows = board.to_rows()
    assert [row["run"] for row in rows] == ["new", "base"]
    assert rows[0]["separated_from_next"] is False and rows[1]["separated_from_next"] is None
    assert set(rows[0]) == {
        "rank", "run", "mean", "low", "high", "adjusted", "rank_low", "rank_high",
        "separated_from_next", "wins", "ties", "losses",
    }  # fmt: skip
    assert board.pair("base", "new") is board.pairs[0]


def test_pair_rows_mark_p_at_resolution() -> None:
    values = runs_with_gaps(np.random.default_rng(9), 100, [0.2, 0.8])
    board = leaderboard(values, n_resamples=999, rng=0)
    (row,) = board.pair_rows()
    assert row["p_text"] == "≤ 0.001" and row["p_value"] == 0.001


def test_coarse_resolution_warns() -> None:
    values = runs_with_gaps(np.random.default_rng(10), 30, [0.2, 0.4, 0.6, 0.8])
    with pytest.warns(
        EvalValidityWarning, match=r"resolution \(0.0476\) is too coarse for any of the 6 pairs"
    ):
        board = leaderboard(values, n_resamples=20, rng=0)
    assert isinstance(board, Leaderboard) and not any(board.adjacent_separated)


def test_errors() -> None:
    good = {"a": [0.1, 0.2], "b": [0.3, 0.4]}
    with pytest.raises(ParameterError, match="must hold at least two runs. Got 1 instead."):
        leaderboard({"a": [0.1, 0.2]})
    with pytest.raises(ParameterError, match="Got 2 values for 'a' and 3 for 'b' instead."):
        leaderboard({"a": [0.1, 0.2], "b": [0.1, 0.2, 0.3]})
    with pytest.raises(
        ParameterError,
        match="The 'baseline' parameter of leaderboard must name one of the runs. Got 'c' instead.",
    ):
        leaderboard(good, baseline="c")
    with pytest.raises(ParameterError, match="give both or neither. Got only floors."):
        leaderboard(good, floors=[0.0, 0.0])
    with pytest.raises(
        ParameterError, match="The mean ceiling given to leaderboard must exceed the mean floor"
    ):
        leaderboard(good, floors=[0.5, 0.5], ceilings=[0.5, 0.5])
    with pytest.raises(
        ParameterError,
        match="The 'correction' parameter of leaderboard must be one of 'holm', 'bh'. Got 'none' instead.",
    ):
        leaderboard(good, correction="none")
    with pytest.raises(ParameterError, match="at least 2 distinct clusters"):
        leaderboard(good, clusters=[1, 1])
    with pytest.warns(EvalValidityWarning, match="too coarse"):
        board = leaderboard(good, n_resamples=100, rng=0)
    with pytest.raises(ParameterError, match="No pair of 'a' and 'z'"):
        board.pair("a", "z")
