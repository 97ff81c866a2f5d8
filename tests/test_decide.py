"""Statistics for decisions: groups, clustered check statistics, leaderboard, gate, history, suites."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from conftest import TOY

from evalvalidity.analysis.check import check_tables
from evalvalidity.analysis.compare import (
    check_scores,
    clustered_stats,
    query_clusters,
    run_leaderboard,
)
from evalvalidity.analysis.gate import Baseline, baseline_from_record, regression_gate
from evalvalidity.analysis.plan import CheckInputs, PoolSpec
from evalvalidity.analysis.suite import parse_suite
from evalvalidity.cli import main
from evalvalidity.errors import FileFormatError, ParameterError
from evalvalidity.io.groups import parse_groups, read_groups
from evalvalidity.io.history import list_checks, load_check, record_check
from evalvalidity.report import records

# ------------------------------------------------------------------------------- fixtures


def _write_trec(path: Path, rankings: dict[str, list[str]], tag: str) -> Path:
    lines = [
        f"{qid} Q0 {doc} {rank} {100 - rank}.0 {tag}\n"
        for qid, docs in rankings.items()
        for rank, doc in enumerate(docs, start=1)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _grouped_benchmark(n_groups: int = 8, per_group: int = 6) -> tuple[pa.Table, pa.Table, dict]:
    """Queries in groups whose scores move together: half the groups are answered at rank 1."""
    qids, docs, run_q, run_d, run_r = [], [], [], [], []
    groups = {}
    for g in range(n_groups):
        for j in range(per_group):
            q = f"g{g}q{j}"
            qids.append(q)
            docs.append(f"{q}-gold")
            groups[q] = f"G{g}"
            answered = g % 2 == 0
            ranking = ([f"{q}-gold"] if answered else []) + [f"{q}-x{i}" for i in range(9)]
            run_q += [q] * len(ranking)
            run_d += ranking
            run_r += list(range(1, len(ranking) + 1))
    qrels = pa.table({"qid": qids, "docid": docs, "rel": [1] * len(qids)})
    run = pa.table(
        {"qid": run_q, "docid": run_d, "rank": run_r, "score": [-float(r) for r in run_r]}
    )
    return qrels, run, groups


@pytest.fixture(scope="module")
def grouped():
    qrels, run, groups = _grouped_benchmark()
    result = check_tables(run, qrels, pool=PoolSpec(corpus_size=50), seeds=2)
    return result, groups


# ------------------------------------------------------------------------------- groups


def test_groups_files_read_with_header_comments_and_either_separator(tmp_path):
    path = tmp_path / "groups.csv"
    path.write_text("qid,group\n# variants\nq1,A\nq2,A\n\nq3,B\n", encoding="utf-8")
    assert read_groups(path) == {"q1": "A", "q2": "A", "q3": "B"}
    assert parse_groups("q1\tA\nq2\tB\n", "g.tsv") == {"q1": "A", "q2": "B"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1,A\nq2\n", "g.csv:2: expected 2 comma-separated fields (qid, group), got 1"),
        ("q1\tA\tx\n", "g.csv:1: expected 2 tab-separated fields (qid, group), got 3"),
        (
            "q1,\n",
            "g.csv:1: expected 2 comma-separated fields (qid, group), got 2 with an empty one",
        ),
        ("q1,A\nq1,B\n", "g.csv:2: query 'q1' is already in group 'A' (line 1); got group 'B'"),
        ("# nothing\n", "g.csv: the groups file lists no query (expected qid, group)"),
    ],
)
def test_a_malformed_groups_file_is_refused_with_its_line(text, message):
    with pytest.raises(FileFormatError) as caught:
        parse_groups(text, "g.csv")
    assert str(caught.value) == message


def test_a_missing_groups_file_is_a_parameter_error(tmp_path):
    with pytest.raises(ParameterError, match="does not exist"):
        read_groups(tmp_path / "none.tsv")


def test_groups_naming_none_of_the_queries_are_refused():
    with pytest.raises(ParameterError, match="name none of the check's 2 queries"):
        query_clusters(np.array(["a", "b"]), groups={"1": "x"})


# ------------------------------------------------------------------------------- clustered check


def test_a_grouped_benchmark_reports_a_design_effect_above_one_and_wider_intervals(grouped):
    result, groups = grouped
    stats = clustered_stats(result, query_clusters(result.queries.qid, groups=groups))
    assert stats is not None
    assert stats.n_clusters == 8 and stats.n_queries == 48
    # Scores are constant within a group: the ANOVA ICC is 1 and deff is about the group size.
    assert stats.icc == pytest.approx(1.0)
    assert 4.0 < stats.design_effect < 7.0
    assert stats.high - stats.low > 2.0 * (stats.naive_high - stats.naive_low)
    assert stats.min_detectable_difference > stats.naive_min_detectable_difference
    assert stats.queries_needed > stats.naive_queries_needed
    assert stats.effective_n == pytest.approx(48 / stats.design_effect)


def test_independent_groups_leave_the_design_effect_near_one():
    rng = np.random.default_rng(3)
    n = 400
    qrels = pa.table({"qid": [f"q{i}" for i in range(n)], "docid": ["g"] * n, "rel": [1] * n})
    ranks = rng.integers(1, 6, size=n)
    rows = [
        (f"q{i}", "g" if r == k else f"x{k}", k) for i, r in enumerate(ranks) for k in range(1, 6)
    ]
    run = pa.table(
        {
            "qid": [r[0] for r in rows],
            "docid": [r[1] if r[1] == "g" else f"{r[0]}{r[1]}" for r in rows],
            "rank": [r[2] for r in rows],
            "score": [-float(r[2]) for r in rows],
        }
    )
    result = check_tables(run, qrels, pool=PoolSpec(corpus_size=50), seeds=2)
    groups = {f"q{i}": f"G{rng.integers(0, 40)}" for i in range(n)}
    stats = clustered_stats(result, query_clusters(result.queries.qid, groups=groups))
    assert 0.6 < stats.design_effect < 1.5


def test_shared_gold_clusters_link_queries_through_documents():
    qrels = pa.table(
        {"qid": ["a", "b", "c", "d"], "docid": ["x", "x", "y", "z"], "rel": [1, 1, 1, 0]}
    )
    found = query_clusters(np.array(["a", "b", "c", "d"]), qrels=qrels)
    assert found.source == "shared-gold" and found.n_clusters == 3
    assert found.labels[0] == found.labels[1] != found.labels[2]


def test_the_check_command_reports_the_clustered_statistics(tmp_path, capsys, grouped):
    qrels, run, groups = _grouped_benchmark()
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text(
        "".join(
            f"{q} 0 {d} 1\n"
            for q, d in zip(qrels["qid"].to_pylist(), qrels["docid"].to_pylist(), strict=True)
        )
    )
    rankings: dict[str, list[str]] = {}
    for q, d in zip(run["qid"].to_pylist(), run["docid"].to_pylist(), strict=True):
        rankings.setdefault(q, []).append(d)
    run_path = _write_trec(tmp_path / "run.trec", rankings, "m")
    groups_path = tmp_path / "groups.tsv"
    groups_path.write_text("".join(f"{q}\t{g}\n" for q, g in groups.items()))
    argv = ["check", "--run", run_path, "--qrels", qrels_path, "--pool-size", 50, "--seeds", 2]
    code = main([str(a) for a in [*argv, "--groups", groups_path, "--format", "json"]])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    clustered = record["clustered"]
    assert clustered["n_clusters"] == 8 and clustered["design_effect"] > 1.0
    width = clustered["ci"][1] - clustered["ci"][0]
    assert width > clustered["naive_ci"][1] - clustered["naive_ci"][0]
    code = main([str(a) for a in [*argv, "--groups", groups_path]])
    assert code == 0 and "design effect" in capsys.readouterr().out


# ------------------------------------------------------------------------------- leaderboard


def test_a_checks_leaderboard_ranks_its_runs_with_floors_and_wins(grouped):
    result, _ = grouped
    qrels, run, _ = _grouped_benchmark()
    worse = run.filter(pa.compute.not_equal(run["rank"], 1))  # every gold at rank 1 removed
    inputs = CheckInputs(
        qrels=qrels, pool=PoolSpec(corpus_size=50), run=run, compare={"worse": worse}
    )
    plan = result.plan.replace(compare=(("worse", result.plan.qrels),))
    values = check_scores(plan, inputs, result)
    assert set(values) == {"run", "worse"}
    assert values["worse"].max() < 1.0 and values["run"].max() == 1.0
    board, notes = run_leaderboard(result, values, n_resamples=2000, seed=0)
    assert board.runs == ("run", "worse") and board.adjacent_separated == (True,)
    assert board.adjusted_scores is not None and board.adjusted_scores[0] > board.adjusted_scores[1]
    assert board.to_rows()[1]["losses"] == 24 and notes == []
    record = records.leaderboard_to_dict(board)
    assert record["pairs"][0]["p_text"].startswith(("≤", "<"))
    text = records.leaderboard_to_text(board)
    assert "p holm-corrected" in text and "separated" in text
    clusters = query_clusters(result.queries.qid, groups=_grouped_benchmark()[2])
    clustered, _ = run_leaderboard(result, values, clusters=clusters, n_resamples=2000, seed=0)
    assert clustered.n_clusters == 8 and clustered.resolution > board.resolution


def test_p_values_are_shown_at_the_resolution_and_below_a_thousandth():
    assert records.format_p(0.0078125, 0.0078125) == "≤ 0.0078"
    assert records.format_p(0.0001, 0.0001) == "< 0.001"
    assert records.format_p(0.0002) == "< 0.001"
    assert records.format_p(0.2) == "0.2"


# ------------------------------------------------------------------------------- gate


def _gate_rate(
    result, rng, *, shift, drop=0.0, sims=400, effects=None, cluster_sd=0.0, clusters=None, **kw
):
    """Fraction of simulated changes the gate fails; scores in [0, 1], n queries of result.

    ``effects`` (QueryClusters) share a random change of sd ``cluster_sd`` per cluster;
    ``clusters`` are what the gate is told.
    """
    n = result.queries.qid.size
    qids = [str(q) for q in result.queries.qid.tolist()]
    codes = np.arange(n) if effects is None else np.unique(effects.labels, return_inverse=True)[1]
    failed = 0
    for _ in range(sims):
        base = rng.uniform(0.2, 0.8, size=n)
        effect = rng.normal(0, cluster_sd, size=codes.max() + 1)[codes] if cluster_sd else 0.0
        new = np.clip(base + shift + effect + rng.normal(0, 0.1, size=n), 0, 1)
        new_result = dataclasses.replace(
            result, queries=dataclasses.replace(result.queries, model=new)
        )
        baseline = Baseline(
            "b.json", "rr@10", "old", None, None, dict(zip(qids, base, strict=True))
        )
        gate = regression_gate(baseline, new_result, allowed_drop=drop, clusters=clusters, **kw)
        failed += gate.regressed
    return failed / sims


def test_a_null_change_passes_the_gate_at_the_nominal_rate(grouped):
    result, _ = grouped
    rate = _gate_rate(result, np.random.default_rng(0), shift=0.0, sims=1000)
    # 1000 draws of Binomial(1000, 0.05): 99.9 % fall within [0.03, 0.072].
    assert 0.03 <= rate <= 0.072


def test_a_regression_of_known_size_is_caught(grouped):
    result, _ = grouped
    assert _gate_rate(result, np.random.default_rng(1), shift=-0.08, sims=200) > 0.95
    # At the allowed drop itself the gate fails at most at the nominal rate.
    at_boundary = _gate_rate(result, np.random.default_rng(2), shift=-0.05, drop=0.05, sims=600)
    assert at_boundary <= 0.075


def test_clustered_changes_need_the_clustered_gate(grouped):
    result, groups = grouped
    clusters = query_clusters(result.queries.qid, groups=groups)
    common = {"shift": 0.0, "cluster_sd": 0.1, "sims": 300, "effects": clusters}
    naive = _gate_rate(result, np.random.default_rng(4), **common)
    robust = _gate_rate(result, np.random.default_rng(4), **common, clusters=clusters)
    assert naive > 0.2
    assert robust < 0.11


def test_the_sequential_gate_passes_nulls_and_catches_regressions(grouped):
    result, _ = grouped
    assert (
        _gate_rate(result, np.random.default_rng(5), shift=0.0, sims=200, sequential=True) <= 0.05
    )
    caught = _gate_rate(result, np.random.default_rng(6), shift=-0.4, sims=50, sequential=True)
    assert caught == 1.0


def test_the_gate_refuses_another_metric_and_disjoint_queries(grouped):
    result, _ = grouped
    with pytest.raises(ParameterError, match="measured ndcg@10 but this check measures rr@10"):
        regression_gate(Baseline("b.json", "ndcg@10", None, None, None, {"x": 1.0}), result)
    with pytest.raises(ParameterError, match="share 0 queries"):
        regression_gate(Baseline("b.json", "rr@10", None, None, None, {"x": 1.0}), result)
    with pytest.raises(ParameterError, match="schema version 2"):
        baseline_from_record({"schema_version": 2, "metric": "rr@10", "queries": []})
    with pytest.raises(ParameterError, match="was it checked with a run"):
        baseline_from_record({"schema_version": 1, "metric": "rr@10", "queries": []})


def test_the_check_command_gates_on_a_baseline(tmp_path, capsys):
    common = ["--qrels", TOY / "qrels.txt", "--pool-size", 200, "--seeds", 2]
    base = tmp_path / "base.json"
    argv = ["check", "--run", TOY / "model.trec", *common, "--format", "json", "-o", base]
    assert main([str(a) for a in argv]) == 0
    capsys.readouterr()
    same = ["check", "--run", TOY / "model.trec", *common, "--baseline", base]
    assert main([str(a) for a in same]) == 0
    assert "regression gate: passed" in capsys.readouterr().out
    worse = [
        "check",
        "--run",
        TOY / "noise.trec",
        *common,
        "--baseline",
        base,
        "--fail-on",
        "never",
    ]
    assert main([str(a) for a in [*worse, "--allowed-drop", "rr@10=1%"]]) == 1
    out = capsys.readouterr().out
    assert "regression gate: FAILED" in out and "most regressed queries" in out
    assert main([str(a) for a in [*worse, "--allowed-drop", "1.0"]]) == 0
    capsys.readouterr()
    assert main([str(a) for a in [*worse, "--sequential", "--format", "json"]]) == 1
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["regressed"] and gate["sequential"]["decision"] == "regressed"
    assert gate["worst_queries"][0]["difference"] < 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--allowed-drop", "0.1"], "--allowed-drop and --sequential go with --baseline"),
        (["--baseline", "{missing}"], "Cannot read"),
        (["--baseline", "{bad}"], "is not JSON"),
        (["--baseline", "{plan}", "--allowed-drop", "lots"], "--allowed-drop must be a number"),
    ],
)
def test_bad_gate_arguments_exit_2(tmp_path, capsys, extra, message):
    (tmp_path / "bad.json").write_text("{not json")
    record = {"schema_version": 1, "metric": "rr@10", "queries": [{"qid": "q1", "model": 0.5}]}
    (tmp_path / "plan.json").write_text(json.dumps(record))
    paths = {
        "missing": tmp_path / "no.json",
        "bad": tmp_path / "bad.json",
        "plan": tmp_path / "plan.json",
    }
    extra = [e.format(**paths) for e in extra]
    argv = ["check", "--run", TOY / "model.trec", "--qrels", TOY / "qrels.txt", "--pool-size", 200]
    assert main([str(a) for a in [*argv, "--seeds", 2, *extra]]) == 2
    assert message in capsys.readouterr().err


# ------------------------------------------------------------------------------- history


def test_checks_are_recorded_in_the_workspaces_history(tmp_path, capsys):
    ws = tmp_path / "ws"
    argv = ["check", "--run", TOY / "model.trec", "--qrels", TOY / "qrels.txt", "--pool-size", 200]
    argv += ["--seeds", 2, "--workspace", ws, "--history", "nightly"]
    assert main([str(a) for a in argv]) == 0
    assert main([str(a) for a in argv[:-1]]) == 0
    capsys.readouterr()
    entries = list_checks(ws)
    assert [e.label for e in entries] == ["nightly", None]
    assert entries[0].verdict in ("healthy", "warning") and entries[0].model_score > 0
    assert entries[0].plan["run_name"] == "model.trec"
    record = load_check(ws, entries[0].id)
    assert record["model_score"] == entries[0].model_score
    # A line torn by a crash mid-append is skipped; the others stay readable.
    with open(ws / "history" / "index.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"id": "abc", "ti')
    assert len(list_checks(ws)) == 2
    with pytest.raises(ParameterError, match="not a check record"):
        record_check(ws, {"hello": 1})
    with pytest.raises(ParameterError, match="No recorded check"):
        load_check(ws, "0" * 32)


# ------------------------------------------------------------------------------- suites


def _suite_files(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    n = 40
    qrels = "".join(f"q{i} 0 q{i}-gold 1\n" for i in range(n))
    for folder in (good, bad):
        (folder / "qrels.txt").write_text(qrels)
    strong = {f"q{i}": [f"q{i}-gold"] + [f"q{i}-x{j}" for j in range(9)] for i in range(n)}
    weak = {f"q{i}": [f"q{i}-x{j}" for j in range(4)] + [f"q{i}-gold"] for i in range(n)}
    _write_trec(good / "strong.trec", strong, "s")
    _write_trec(good / "weak.trec", weak, "w")
    for name in ("strong", "weak"):
        # The worthless benchmark: both runs rank 10 of 500 documents at random.
        rankings = {
            f"q{i}": [f"q{i}-gold" if d == 0 else f"q{i}-x{d}" for d in rng.permutation(500)[:10]]
            for i in range(n)
        }
        _write_trec(bad / f"{name}.trec", rankings, name)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "two"\nseeds = 2\n\n'
        '[[benchmark]]\nname = "good"\nqrels = "good/qrels.txt"\npool_size = 500\n'
        'runs = { strong = "good/strong.trec", weak = "good/weak.trec" }\n\n'
        '[[benchmark]]\nname = "worthless"\nqrels = "bad/qrels.txt"\npool_size = 500\n'
        'runs = { strong = "bad/strong.trec", weak = "bad/weak.trec" }\n'
    )
    return suite


def test_a_suite_flags_its_worthless_benchmark(tmp_path, capsys):
    suite = _suite_files(tmp_path)
    argv = ["suite", suite, "--n-resamples", 2000, "--format", "json", "--fail-on", "never"]
    assert main([str(a) for a in argv]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["flagged"] == ["worthless"]
    rows = {row["benchmark"]: row for row in record["benchmarks"]}
    assert rows["good"]["separable"] is True and rows["worthless"]["separable"] is False
    assert rows["good"]["runs"]["strong"] == 1.0 and rows["good"]["runs"]["weak"] == 0.2
    means = {m["run"]: m for m in record["suite_means"]}
    assert set(means) == {"strong", "weak"} and means["strong"]["n_benchmarks"] == 2
    # Equal weights: the suite mean is the mean of the two benchmarks' means.
    expected = (1.0 + rows["worthless"]["runs"]["strong"]) / 2
    assert means["strong"]["mean"] == pytest.approx(expected)
    assert means["strong"]["ci"][0] < means["strong"]["mean"] < means["strong"]["ci"][1]
    assert main([str(a) for a in [*argv[:4], "--fail-on-flagged"]]) == 1
    out = capsys.readouterr().out
    assert "worthless: cannot separate the suite's runs" in out and "suite mean" in out


def test_a_benchmark_that_cannot_be_read_is_reported_and_fails_the_suite(tmp_path, capsys):
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[[benchmark]]\nname = "gone"\nqrels = "nowhere.txt"\nruns = ["x.trec"]\npool_size = 5\n'
    )
    assert main(["suite", str(suite), "--workspace", str(tmp_path / "ws")]) == 1
    assert "gone" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[benchmark]]\nqrels = 1\n", "s.toml: benchmark 'benchmark 1' lacks 'runs'."),
        ("colour = 1\n", "s.toml: unknown key(s) colour"),
        ("name = \n", "s.toml: not valid TOML"),
        (
            '[[benchmark]]\nname = "a"\nqrels = "q"\nruns = ["r"]\n',
            "s.toml: benchmark 'a': declare the pool one way",
        ),
        ("", "s.toml: declare at least one [[benchmark]]."),
    ],
)
def test_a_bad_suite_file_is_refused_with_its_place(text, message):
    with pytest.raises(ParameterError) as caught:
        parse_suite(text, "s.toml")
    assert str(caught.value).startswith(message)


# ------------------------------------------------------------------------------- dashboard


@pytest.fixture
def dashboard(monkeypatch, tmp_path):
    from conftest import ROOT
    from streamlit.testing.v1 import AppTest

    from evalvalidity.analysis import examples as demo

    root = tmp_path / "ws"
    demo.build_demo(root, include=("toy",))
    monkeypatch.setenv("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(root))
    return root, AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60)


def test_the_compare_page_shows_the_leaderboard(dashboard):
    _, at = dashboard
    at.run()
    at.switch_page("views/compare.py").run()
    at.multiselect(key="c_runs").select("toy.noise").run()
    assert not at.exception
    board = next(d for d in at.dataframe if "rank interval" in d.value.columns).value
    assert board["run"].tolist() == ["toy.model", "toy.noise"]
    assert board["chance-adjusted"].iloc[0] > board["chance-adjusted"].iloc[1]
    pairs = next(d for d in at.dataframe if "p (Holm)" in d.value.columns).value
    assert pairs["p (randomization)"].iloc[0].startswith(("≤", "<"))
    assert bool(pairs["separated"].iloc[0])
    at.radio(key="c_groups").set_value("grouped by shared gold documents").run()
    assert not at.exception
    assert any("groups of" in c.value for c in at.caption)


def test_the_history_page_shows_recorded_checks(dashboard):
    root, at = dashboard
    record = {
        "schema_version": 1,
        "verdict": "healthy",
        "metric": "rr@10",
        "run": "m",
        "n_queries": 3,
        "model_score": 0.5,
        "floor": 0.1,
        "ceiling": 1.0,
    }
    record_check(root, record, when="2024-01-01T00:00:00+00:00", label="first")
    record_check(root, {**record, "verdict": "broken", "model_score": 0.2}, label="second")
    at.run()
    at.switch_page("views/history.py").run()
    assert not at.exception
    table = next(d for d in at.dataframe if "verdict" in d.value.columns).value
    assert table["label"].tolist() == ["first", "second"]
    assert table["verdict"].tolist() == ["healthy", "broken"]


def test_the_suite_page_runs_a_suite_of_workspace_datasets(dashboard):
    _, at = dashboard
    at.run()
    at.switch_page("views/suite.py").run()
    text = (
        '[[benchmark]]\nname = "toy"\nqrels = "toy.qrels"\npool_size = 200\n'
        'runs = ["toy.model", "toy.noise"]\n'
    )
    at.text_area(key="s_toml").set_value(text).run()
    at.button(key="s_run").click().run()
    assert not at.exception
    table = next(d for d in at.dataframe if "separates runs" in d.value.columns).value
    assert table["benchmark"].tolist() == ["toy"] and bool(table["separates runs"].iloc[0])
