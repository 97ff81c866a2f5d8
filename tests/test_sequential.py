"""Tests of evalvalidity.core.sequential: time-uniform coverage, gates of known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalvalidity.core.sequential import ConfidenceSequence, confidence_sequence, sequential_gate
from evalvalidity.errors import ParameterError

REPS = 300
ALPHA = 0.1
# Upper three-sigma allowance on a rate of ALPHA estimated from REPS paths.
SLACK = 3.0 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)


def ever_misses(sequence: ConfidenceSequence, mean: float) -> bool:
    return bool(np.any((sequence.lower > mean) | (sequence.upper < mean)))


@pytest.mark.parametrize("method", ["betting", "bernstein"])
@pytest.mark.parametrize("kind", ["bernoulli", "beta"])
def test_time_uniform_coverage(method: str, kind: str) -> None:
    # The sequence must hold the mean at every time at once, so any stopping rule is covered.
    rng = np.random.default_rng(100)
    misses = 0
    for _ in range(REPS):
        if kind == "bernoulli":
            values, mean = (rng.random(400) < 0.2).astype(float), 0.2
        else:
            values, mean = rng.beta(2.0, 5.0, size=400), 2.0 / 7.0
        misses += ever_misses(confidence_sequence(values, alpha=ALPHA, method=method), mean)
    assert misses / REPS <= ALPHA + SLACK


def test_peeking_at_a_fixed_n_interval_does_not_cover() -> None:
    # The point of the sequence: a 90 % normal interval checked after every query misses the
    # mean at some time far more often than 10 %.
    rng = np.random.default_rng(101)
    misses = 0
    for _ in range(REPS):
        values = rng.beta(2.0, 5.0, size=400)
        t = np.arange(1, 401)
        mean = np.cumsum(values) / t
        sd = np.sqrt(np.maximum(np.cumsum(values**2) / t - mean**2, 1e-12))
        half = 1.645 * sd / np.sqrt(t)
        misses += bool(np.any(np.abs(mean[9:] - 2 / 7) > half[9:]))
    assert misses / REPS > 2 * ALPHA


def test_bounds_are_nested_and_mapped() -> None:
    rng = np.random.default_rng(5)
    differences = np.clip(rng.normal(0.1, 0.3, size=800), -1, 1)
    cs = confidence_sequence(differences, bounds=(-1.0, 1.0))
    assert np.all(np.diff(cs.lower) >= 0) and np.all(np.diff(cs.upper) <= 0)
    assert np.all(cs.lower >= -1) and np.all(cs.upper <= 1)
    assert cs.lower[-1] < differences.mean() < cs.upper[-1]
    np.testing.assert_allclose(cs.running_mean, np.cumsum(differences) / np.arange(1, 801))
    with pytest.raises(ValueError, match="read-only"):
        cs.lower[0] = 0.0


def test_betting_is_tighter_early_than_bernstein_and_both_shrink() -> None:
    values = (np.random.default_rng(6).random(3000) < 0.3).astype(float)
    bet = confidence_sequence(values)
    eb = confidence_sequence(values, method="bernstein")
    for t in (10, 30):
        assert bet.upper[t] - bet.lower[t] < eb.upper[t] - eb.lower[t]
    assert bet.upper[-1] - bet.lower[-1] < 0.1 and eb.upper[-1] - eb.lower[-1] < 0.1


@pytest.mark.parametrize("method", ["betting", "bernstein"])
def test_gate_catches_a_regression_of_known_size(method: str) -> None:
    # True mean difference -0.1 against an allowed drop of 0.02.
    rng = np.random.default_rng(7)
    caught = []
    for _ in range(100):
        differences = np.clip(rng.normal(-0.1, 0.25, size=1500), -1, 1)
        gate = sequential_gate(differences, allowed_drop=0.02, alpha=ALPHA, method=method)
        assert gate.decision != "not regressed"
        caught.append(gate.decided_at if gate.decision == "regressed" else None)
    assert sum(c is not None for c in caught) >= 95
    assert np.median([c for c in caught if c is not None]) < 800


@pytest.mark.parametrize("method", ["betting", "bernstein"])
def test_gate_passes_a_null_change_at_the_nominal_rate(method: str) -> None:
    # No true change: called "regressed" at most ALPHA of the time whenever it stops, and
    # eventually "not regressed".
    rng = np.random.default_rng(8)
    regressed = passed = 0
    for _ in range(REPS):
        differences = np.clip(rng.normal(0.0, 0.2, size=1500), -1, 1)
        gate = sequential_gate(differences, allowed_drop=0.05, alpha=ALPHA, method=method)
        regressed += gate.decision == "regressed"
        passed += gate.decision == "not regressed"
    assert regressed / REPS <= ALPHA + SLACK
    assert passed / REPS >= 0.9


def test_gate_at_the_boundary_stays_undecided_and_reports_final_bounds() -> None:
    rng = np.random.default_rng(9)
    differences = np.clip(rng.normal(-0.05, 0.3, size=200), -1, 1)
    gate = sequential_gate(differences, allowed_drop=0.05)
    assert gate.decision == "undecided" and gate.decided_at is None
    assert (gate.lower, gate.upper) == (gate.sequence.lower[-1], gate.sequence.upper[-1])
    assert gate.n_queries == 200


def test_gate_decision_time_is_the_first_crossing() -> None:
    differences = np.full(400, -0.5)
    gate = sequential_gate(differences, allowed_drop=0.0)
    assert gate.decision == "regressed"
    t = gate.decided_at
    assert t is not None
    assert gate.sequence.upper[t - 1] < 0.0 <= gate.sequence.upper[t - 2]
    assert gate.upper == gate.sequence.upper[t - 1]


def test_errors() -> None:
    with pytest.raises(
        ParameterError,
        match=r"The 'values' parameter of confidence_sequence must lie within bounds \[0, 1\]. Got 1 value\(s\) outside, the first 1.5 at position 2.",
    ):
        confidence_sequence([0.1, 0.2, 1.5])
    with pytest.raises(
        ParameterError,
        match=r"The 'differences' parameter of sequential_gate must lie within bounds \[-1, 1\]",
    ):
        sequential_gate([0.1, -2.0], allowed_drop=0.1)
    with pytest.raises(
        ParameterError, match="The 'bounds' parameter of confidence_sequence must be a pair"
    ):
        confidence_sequence([0.1], bounds=(1.0, 0.0))
    with pytest.raises(
        ParameterError,
        match="The 'allowed_drop' parameter of sequential_gate must be a finite float >= 0. Got -0.1 instead.",
    ):
        sequential_gate([0.1], allowed_drop=-0.1)
    with pytest.raises(
        ParameterError,
        match="The 'method' parameter of sequential_gate must be one of 'betting', 'bernstein'",
    ):
        sequential_gate([0.1], allowed_drop=0.1, method="hoeffding")
    with pytest.raises(ParameterError, match="The 'alpha' parameter of confidence_sequence"):
        confidence_sequence([0.1], alpha=0.0)
