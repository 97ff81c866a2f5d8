"""The other nulls: one generated benchmark per failure, each caught with its reason."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from conftest import CRANFIELD, ROOT

from evalvalidity.analysis.check import check_tables
from evalvalidity.analysis.harness_invariants import harness_invariants
from evalvalidity.analysis.plan import CheckPlan, DatasetRef, PoolDeclaration, PoolSpec
from evalvalidity.analysis.selfhits import jaccard, normalise
from evalvalidity.cli import main
from evalvalidity.core.metrics import parse_metric
from evalvalidity.errors import ParameterError
from evalvalidity.io.ingest import read
from evalvalidity.io.units_rule import parse_units_rule, segment_ids, units_from_rule

NEW_CODES = {
    "query_independent",
    "self_hits",
    "segment_ids",
    "units_rule",
    "judgement_holes",
    "harness_out_of_range",
    "harness_duplicate_rows",
    "harness_missing_rows",
    "model_ties",
}


def run_table(rows):
    qid, docid, score = zip(*rows, strict=True)
    return pa.table({"qid": list(qid), "docid": list(docid), "score": list(map(float, score))})


def qrels_table(rows):
    qid, docid, rel = zip(*rows, strict=True)
    return pa.table({"qid": list(qid), "docid": list(docid), "rel": list(rel)})


def codes(result, severity=None):
    return {r.code for r in result.reasons if severity is None or r.severity == severity}


def reason(result, code, severity):
    return next(r for r in result.reasons if r.code == code and r.severity == severity)


def test_hub_documents_make_a_query_independent_ranker_score_far_above_the_floor():
    rng = np.random.default_rng(1)
    qrels, run = [], []
    for q in range(60):
        qrels.append((f"q{q}", "hub", 1))
        qrels.append((f"q{q}", f"own{q}", 1))
        others = rng.choice(5000, 9, replace=False)
        run.append((f"q{q}", "hub", 10))
        run += [(f"q{q}", f"d{j}", 9 - i) for i, j in enumerate(others)]
    result = check_tables(
        run_table(run), qrels_table(qrels), pool=PoolSpec(corpus_size=5000), seeds=4
    )
    found = reason(result, "query_independent", "warning")
    assert "hub (100% of queries)" in found.message
    qi = result.nulls.query_independent
    assert qi.hubs[0].docid == "hub" and qi.hubs[0].count == 60
    # Every ranking puts the hub first and the hub is gold everywhere: the shuffle scores 1.
    assert qi.shuffle.estimate == pytest.approx(1.0)
    assert qi.popularity.low > 0.4 > qi.floor * 10
    assert result.verdict == "warning"


def test_self_hits_are_reported_with_the_score_with_and_without_them():
    qrels, run = [], []
    for q in range(40):
        qrels.append((f"q{q}", f"gold{q}", 1))
        run += [(f"q{q}", f"q{q}", 3), (f"q{q}", f"gold{q}", 2), (f"q{q}", f"x{q}", 1)]
    result = check_tables(
        run_table(run), qrels_table(qrels), pool=PoolSpec(corpus_size=1000), seeds=4
    )
    found = reason(result, "self_hits", "warning")
    s = result.nulls.self_hits
    assert s.ranked_self == 40 and s.judged_self == 0
    assert s.score_with == pytest.approx(0.5) and s.score_without == pytest.approx(1.0)
    assert found.numbers["score_without"] == pytest.approx(1.0)
    assert s.floor_without == s.floor_with


def test_self_hits_by_text(tmp_path):
    queries = tmp_path / "queries.jsonl"
    corpus = tmp_path / "corpus.tsv"
    queries.write_text(
        "".join(
            json.dumps({"_id": f"q{q}", "text": f"Argument {q} is Good!"}) + "\n" for q in range(3)
        )
    )
    corpus.write_text(
        "id\ttext\n"
        + "".join(f"arg{q}\targument {q} is good\ngold{q}\tcounter {q}\n" for q in range(3))
    )
    from evalvalidity.analysis.nulls import code_tables
    from evalvalidity.analysis.pools import build_benchmark, compute_floor
    from evalvalidity.analysis.selfhits import read_texts, self_hits
    from evalvalidity.io.scoring import rank_run

    qrels = qrels_table([(f"q{q}", f"gold{q}", 1) for q in range(3)])
    run = run_table(
        [r for q in range(3) for r in ((f"q{q}", f"arg{q}", 2), (f"q{q}", f"gold{q}", 1))]
    )
    metric, pool = parse_metric("rr@10"), PoolSpec(corpus_size=10)
    bench = build_benchmark(qrels, pool, metric)
    floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(0))
    coded = code_tables(bench, qrels, rank_run(run), 10)
    found = self_hits(coded, metric, floor, pool, qrels, read_texts(queries), read_texts(corpus))
    assert found.text_matches == 3 and found.ranked_self == 3
    assert (found.score_with, found.score_without) == (0.5, 1.0)
    assert normalise("A-b  C") == "a b c" and jaccard("a b", "a b") == 1.0


def segment_benchmark():
    qrels, run = [], []
    for q in range(30):
        qrels.append((f"{q}", f"doc_{q}", 1))
        run += [(f"{q}", f"doc_{q}#{s}_{q}", 10 - s) for s in range(3)]
        run += [(f"{q}", f"doc_{q + 100}#0_1", 1)]
    return run_table(run), qrels_table(qrels)


def test_segment_ids_are_recognised_and_the_units_rule_scores_them():
    run, qrels = segment_benchmark()
    plain = check_tables(run, qrels, pool=PoolSpec(corpus_size=500), seeds=4)
    found = reason(plain, "segment_ids", "warning")
    assert "prefix:#" in found.message and "doc_0#0_0" in found.message
    assert plain.headroom.model == 0.0
    ruled = check_tables(run, qrels, pool=PoolSpec(corpus_size=500), seeds=4, units_rule="prefix:#")
    assert "segment_ids" not in codes(ruled)
    assert "units_rule" in codes(ruled, "info")
    assert ruled.headroom.model == pytest.approx(1.0)
    assert ruled.nulls.segments.applied == "prefix:#"


def test_units_rule_parsing_and_the_units_table():
    assert parse_units_rule("prefix:#").text == "prefix:#"
    with pytest.raises(ParameterError, match="must be 'prefix:SEP'"):
        parse_units_rule("prefix:")
    with pytest.raises(ParameterError, match="must be 'prefix:SEP'"):
        CheckPlan(qrels=DatasetRef.file("q"), pool=PoolDeclaration(corpus_size=3), units_rule="#")
    units = units_from_rule(pa.table({"docid": ["a#1", "b", "a#2", "a#1"]}), "prefix:#")
    assert units.column("doc_id").to_pylist() == ["a", "a", "b"]
    run, qrels = segment_benchmark()
    assert segment_ids(run, qrels).segmented
    assert not segment_ids(qrels, qrels).segmented


def test_judgement_holes_flag_a_score_that_depends_on_unjudged_documents():
    qrels, run = [], []
    for q in range(50):
        qrels += [(f"q{q}", f"r{q}", 1), (f"q{q}", f"n{q}", 0)]
        run += [(f"q{q}", f"u{q}_{i}", 20 - i) for i in range(5)]
        run += [(f"q{q}", f"r{q}", 10), (f"q{q}", f"n{q}", 9)]
    result = check_tables(
        run_table(run), qrels_table(qrels), pool=PoolSpec(corpus_size=2000), seeds=4
    )
    found = reason(result, "judgement_holes", "warning")
    holes = result.nulls.holes
    assert holes.applicable and holes.holes == 250
    assert holes.overall_judged == pytest.approx(2 / 7)
    assert holes.interval.low == pytest.approx(1 / 6) and holes.interval.high == 1.0
    assert found.numbers["depends"] == 50


def test_a_harness_with_recall_above_one_is_a_counting_bug():
    rng = np.random.default_rng(3)
    qids = [f"q{q}" for q in range(20)]
    qrels = qrels_table([(q, f"{q}_g{j}", 1) for q in qids for j in range(3)])
    rows = {"seed": [], "qid": [], "measure": [], "value": []}
    for seed in range(5):
        for q in qids:
            rows["seed"].append(seed)
            rows["qid"].append(q)
            rows["measure"].append("recall_100")
            rows["value"].append(3.003 if q == "q0" else float(rng.uniform(0, 0.2)))
    result = check_tables(
        None,
        qrels,
        pool=PoolSpec(corpus_size=1000),
        metric="r@100",
        harness_output=pa.table(rows),
    )
    found = reason(result, "harness_out_of_range", "broken")
    assert "recall above 1 in 5 rows" in found.message and "3.003" in found.message
    assert result.verdict == "broken"
    inv = harness_invariants(pa.table(rows), parse_metric("r@100"), np.array(qids))
    assert (inv.out_of_range, inv.duplicated, inv.missing) == (5, 0, 0)


def test_heavy_ties_in_the_model_are_a_range():
    qrels, run = [], []
    for q in range(40):
        qrels.append((f"q{q}", f"g{q}", 1))
        run += [(f"q{q}", f"d{q}_{i}", 1.0) for i in range(9)] + [(f"q{q}", f"g{q}", 1.0)]
    result = check_tables(
        run_table(run), qrels_table(qrels), pool=PoolSpec(corpus_size=1000), seeds=4
    )
    found = reason(result, "model_ties", "warning")
    ties = result.nulls.ties
    assert ties.tied_queries == 40
    assert ties.interval.low == pytest.approx(0.1) and ties.interval.high == 1.0
    # The tie-averaged RR over 10 slots: the mean of 1/p.
    assert ties.interval.estimate == pytest.approx(np.mean(1 / np.arange(1, 11)))
    assert len(ties.moved) == 40 and "q0" in found.message


@pytest.fixture(scope="module")
def cranfield():
    return {
        name: read(CRANFIELD / file, kind=kind).table
        for name, file, kind in (
            ("qrels", "qrels.txt", "qrels"),
            ("units", "chunks.tsv", "units"),
            ("dense", "run_dense.trec", "run"),
            ("noise", "run_noise.trec", "run"),
        )
    }


def test_cranfield_stays_healthy_with_the_other_nulls(cranfield):
    result = check_tables(
        cranfield["dense"],
        cranfield["qrels"],
        pool=PoolSpec(units=cranfield["units"]),
        noise_run=cranfield["noise"],
    )
    assert result.verdict == "healthy"
    assert not codes(result, "warning") and not codes(result, "broken")
    nulls = result.nulls
    qi = nulls.query_independent
    # Both query-independent rankers stay at the uniform floor (0.0152).
    assert qi.shuffle.contains(qi.floor) and qi.popularity.estimate < 0.03
    assert not nulls.holes.applicable  # the qrels list relevant documents only
    assert nulls.segments.segmented and nulls.segments.applied == "units"


def test_cli_units_rule_on_the_cranfield_files(capsys):
    code = main(
        [
            "check",
            "--run",
            str(CRANFIELD / "run_dense.trec"),
            "--qrels",
            str(CRANFIELD / "qrels.txt"),
            "--pool-size",
            "1400",
            "--units-rule",
            "prefix:#",
            "--seeds",
            "4",
            "--format",
            "json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["model_score"] == pytest.approx(0.499, abs=0.001)
    assert out["other_nulls"]["segments"]["applied"] == "prefix:#"
    assert out["plan"]["units_rule"] == "prefix:#"
    assert "units_rule" in {r["code"] for r in out["reasons"]}
    code = main(
        [
            "check",
            "--run",
            str(CRANFIELD / "run_dense.trec"),
            "--qrels",
            str(CRANFIELD / "qrels.txt"),
            "--pool-size",
            "1400",
            "--seeds",
            "4",
            "--format",
            "text",
        ]
    )
    text = capsys.readouterr().out
    assert "--units-rule prefix:#" in text


def test_the_other_nulls_page_opens_on_the_example(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from evalvalidity.analysis import examples as demo

    monkeypatch.setenv("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(tmp_path / "ws"))
    demo.build_demo(tmp_path / "ws", include=("toy",))
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=120).run()
    at.switch_page("views/nulls.py").run()
    assert not at.exception
    titles = [json.loads(c.proto.spec)["title"] for c in at.get("vega_lite_chart")]
    assert titles == ["Other nulls: what scores without doing retrieval"]
    assert any(m.label == "popularity ranker" for m in at.metric)


def _hub_benchmark():
    rng = np.random.default_rng(1)
    qrels, run = [], []
    for q in range(60):
        qrels += [(f"q{q}", "hub", 1), (f"q{q}", f"own{q}", 1)]
        run.append((f"q{q}", "hub", 10))
        run += [(f"q{q}", f"d{j}", 9 - i) for i, j in enumerate(rng.choice(5000, 9, replace=False))]
    return run_table(run), qrels_table(qrels)


def scenarios():
    """Checks that between them produce every rule of the other nulls (test_plan reads them)."""
    run, qrels = _hub_benchmark()
    yield check_tables(run, qrels, pool=PoolSpec(corpus_size=5000), seeds=4)
    selfish = [r for q in range(40) for r in ((f"q{q}", f"q{q}", 3), (f"q{q}", f"g{q}", 2))]
    gold = qrels_table([(f"q{q}", f"g{q}", 1) for q in range(40)])
    yield check_tables(run_table(selfish), gold, pool=PoolSpec(corpus_size=1000), seeds=4)
    run, qrels = segment_benchmark()
    yield check_tables(run, qrels, pool=PoolSpec(corpus_size=500), seeds=4)
    yield check_tables(run, qrels, pool=PoolSpec(corpus_size=500), seeds=4, units_rule="prefix:#")
    holes, judged = [], []
    for q in range(50):
        judged += [(f"q{q}", f"r{q}", 1), (f"q{q}", f"n{q}", 0)]
        holes += [(f"q{q}", f"u{q}_{i}", 20 - i) for i in range(5)] + [(f"q{q}", f"r{q}", 10)]
    yield check_tables(
        run_table(holes), qrels_table(judged), pool=PoolSpec(corpus_size=2000), seeds=4
    )
    # Gold first, then a judged non-relevant item tied with another query's id (a hole):
    # self-hits, holes and ties that all leave the score where it is (info lines).
    calm, calm_qrels = [], []
    for q in range(40):
        calm_qrels += [(f"q{q}", f"g{q}", 1), (f"q{q}", f"n{q}", 0)]
        calm += [(f"q{q}", f"g{q}", 3), (f"q{q}", f"n{q}", 1), (f"q{q}", f"q{(q + 1) % 40}", 1)]
    yield check_tables(
        run_table(calm), qrels_table(calm_qrels), pool=PoolSpec(corpus_size=1000), seeds=4
    )
    tied = [
        r
        for q in range(40)
        for r in [(f"q{q}", f"d{q}_{i}", 1.0) for i in range(9)] + [(f"q{q}", f"g{q}", 1.0)]
    ]
    yield check_tables(run_table(tied), gold, pool=PoolSpec(corpus_size=1000), seeds=4)
    qids = [f"q{q}" for q in range(20)]
    recall_qrels = qrels_table([(q, f"{q}_g{j}", 1) for q in qids for j in range(3)])
    rows = [(s, q, "recall_100", 3.003 if q == "q0" else 0.1) for s in range(3) for q in qids]
    rows = [r for r in rows if not (r[0] == 1 and r[1] == "q5")] + [(2, "q7", "recall_100", 0.1)]
    seed, qid, measure, value = zip(*rows, strict=True)
    harness = pa.table(
        {"seed": list(seed), "qid": list(qid), "measure": list(measure), "value": list(value)}
    )
    yield check_tables(
        None, recall_qrels, pool=PoolSpec(corpus_size=1000), metric="r@100", harness_output=harness
    )


def test_the_scenarios_produce_every_new_rule():
    produced = {(r.code, r.severity) for result in scenarios() for r in result.reasons}
    from evalvalidity.analysis.rules import RULES

    assert {(r.code, r.severity) for r in RULES if r.code in NEW_CODES} <= produced


def test_the_nulls_that_read_every_position_are_capped_with_a_note():
    from evalvalidity.analysis.nulls import other_nulls
    from evalvalidity.analysis.pools import build_benchmark, compute_floor

    run, qrels = _hub_benchmark()
    pool = PoolSpec(corpus_size=5000)
    # Without a cutoff the nulls read (and sort) the whole run: capped.
    metric = parse_metric("rr")
    bench = build_benchmark(qrels, pool, metric)
    floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(0))
    capped = other_nulls(bench, floor, metric, pool, qrels, run=run, max_rows=len(run) - 1)
    assert capped.query_independent.shuffle is None and capped.holes is None
    assert capped.query_independent.popularity is not None and capped.segments is not None
    assert "above the cap of 599" in capped.notes[0] and "no cutoff" in capped.notes[0]
    # With one they read only the top of the ranking: no cap, the same as uncapped.
    metric = parse_metric("rr@10")
    bench = build_benchmark(qrels, pool, metric)
    floor, _ = compute_floor(bench, metric, pool, np.random.default_rng(0))
    small_cap = other_nulls(bench, floor, metric, pool, qrels, run=run, max_rows=1)
    whole = other_nulls(bench, floor, metric, pool, qrels, run=run)
    assert small_cap.query_independent.shuffle is not None and small_cap.holes is not None
    assert small_cap.query_independent.shuffle == whole.query_independent.shuffle
    assert small_cap.holes.interval == whole.holes.interval
    assert not any("cap" in note for note in small_cap.notes)
    sparse = other_nulls(bench, floor, metric, pool, qrels, run=run, max_hits=59)
    assert sparse.query_independent.shuffle is None
    assert "above the cap of 59" in sparse.notes[0]
