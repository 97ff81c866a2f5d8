"""Exit codes of ``check --baseline --sequential``: every sequential outcome, both policies."""

from __future__ import annotations

import json

import pytest
from conftest import TOY

from evalvalidity.cli import main

COMMON = ["--qrels", TOY / "qrels.txt", "--pool-size", 200, "--seeds", 2, "--fail-on", "never"]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    path = tmp_path_factory.mktemp("gate") / "base.json"
    argv = ["check", "--run", TOY / "model.trec", *COMMON, "--format", "json", "-o", path]
    assert main([str(a) for a in argv]) == 0
    return path


# (run, allowed drop) -> the sequential decision: the same run with no drop allowed never
# decides (its mean difference sits on the boundary), with half the scale allowed it passes
# after 10 of the 20 queries, and the noise run regresses.
OUTCOMES = {
    "undecided": ("model.trec", "0"),
    "not regressed": ("model.trec", "0.5"),
    "regressed": ("noise.trec", "0"),
}
EXPECTED = {
    ("undecided", None): 0,
    ("undecided", "pass"): 0,
    ("undecided", "fail"): 1,
    ("not regressed", "pass"): 0,
    ("not regressed", "fail"): 0,
    ("regressed", "pass"): 1,
    ("regressed", "fail"): 1,
}


@pytest.mark.parametrize(("decision", "policy"), list(EXPECTED))
def test_each_sequential_outcome_has_its_exit_code(baseline, capsys, decision, policy):
    run, drop = OUTCOMES[decision]
    argv = ["check", "--run", TOY / run, *COMMON, "--baseline", baseline, "--sequential"]
    argv += ["--allowed-drop", drop, "--format", "json"]
    if policy is not None:
        argv += ["--undecided", policy]
    code = main([str(a) for a in argv])
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["sequential"]["decision"] == decision
    assert gate["sequential"]["undecided"] == (policy or "pass")
    assert gate["passed"] is (EXPECTED[decision, policy] == 0)
    assert code == EXPECTED[decision, policy]


def test_an_undecided_failure_says_so(baseline, capsys):
    argv = ["check", "--run", TOY / "model.trec", *COMMON, "--baseline", baseline]
    argv += ["--sequential", "--undecided", "fail"]
    assert main([str(a) for a in argv]) == 1
    out = capsys.readouterr().out
    assert "regression gate: FAILED (undecided)" in out and "sequential: undecided" in out
    assert main([str(a) for a in [*argv, "--format", "markdown"]]) == 1
    assert "### ❌ Regression gate: **undecided**" in capsys.readouterr().out


def test_undecided_without_sequential_exits_2(baseline, capsys):
    argv = ["check", "--run", TOY / "model.trec", *COMMON, "--baseline", baseline]
    assert main([str(a) for a in [*argv, "--undecided", "fail"]]) == 2
    assert "--undecided goes with --sequential." in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main([str(a) for a in [*argv, "--sequential", "--undecided", "maybe"]])
    assert exit_.value.code == 2
    assert "invalid choice: 'maybe'" in capsys.readouterr().err
