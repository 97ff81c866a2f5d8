"""CheckPlan: exact round trips, refusals, reruns from a saved plan; the verdict's rules table;
the pure functions behind Check 1's interval."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalvalidity.analysis.check import check_benchmark, check_tables, load_inputs
from evalvalidity.analysis.check1 import (
    Z95,
    per_query_std_error,
    ratio_to_floor,
    seed_mean_std_error,
)
from evalvalidity.analysis.plan import (
    CheckInputs,
    CheckPlan,
    DatasetRef,
    PoolDeclaration,
    PoolSpec,
    Thresholds,
)
from evalvalidity.analysis.rules import RULES
from evalvalidity.cli import main
from evalvalidity.core.floors import noise_floor
from evalvalidity.errors import ParameterError
from evalvalidity.report import records as report

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "data" / "writeup" / "toy"
POOL8 = ROOT / "data" / "writeup" / "pool8"

# -- round trips ---------------------------------------------------------------------------------

names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
refs = st.builds(
    DatasetRef,
    st.sampled_from(["file", "dataset", "table"]),
    names,
    st.none() | st.text("0123456789abcdef", min_size=64, max_size=64),
)
pools = st.one_of(
    st.builds(PoolDeclaration, corpus_size=st.integers(1, 10**9)),
    st.builds(PoolDeclaration, pools=refs),
    st.builds(PoolDeclaration, candidates=refs),
    st.builds(PoolDeclaration, units=refs, analytic_unit=st.sampled_from(["documents", "chunks"])),
)
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
thresholds = st.builds(
    Thresholds,
    floor_share_broken=floats,
    ratio_band=st.tuples(floats, floats),
    leak_z=floats,
    precision=floats,
)


@st.composite
def plans(draw):
    run = draw(st.none() | refs)
    run_name = draw(names)
    compare = draw(st.lists(st.tuples(names, refs), max_size=3, unique_by=lambda p: p[0]))
    compare = tuple(p for p in compare if p[0] != run_name)
    return CheckPlan(
        run=run,
        run_name=run_name,
        compare=compare,
        qrels=draw(refs),
        pool=draw(pools),
        noise_run=draw(st.none() | refs),
        noise_source=draw(st.sampled_from(["noise-run", "live"])),
        noise_components_off=draw(st.none() | st.lists(names, min_size=1, max_size=3).map(tuple)),
        harness_output=draw(st.none() | refs),
        metric=draw(st.sampled_from(["rr@10", "ndcg@5", "hit@10[rel>=2]"])),
        ties=draw(st.sampled_from(["trec_eval", "given", "average"])),
        seeds=draw(st.just("auto") | st.integers(1, 10**6)),
        seed=draw(st.integers(0, 2**63)),
        thresholds=draw(thresholds),
    )


@settings(max_examples=60, deadline=None)
@given(plans())
def test_plan_round_trips_exactly_through_dict_and_json(plan):
    assert CheckPlan.from_dict(plan.to_dict()) == plan
    again = CheckPlan.from_json(plan.to_json())
    assert again == plan
    assert again.to_json() == plan.to_json()
    assert json.loads(plan.to_json())["schema_version"] == 1


def _plan_dict():
    return CheckPlan(qrels=DatasetRef.file("q.txt"), pool=PoolDeclaration(corpus_size=5)).to_dict()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(colour="red"), r"^Unknown key 'colour' in a check plan; expected"),
        (lambda d: d.update(schema_version=2), r"schema version 1\. Got 2 instead\.$"),
        (lambda d: d.pop("schema_version"), r"schema version 1\. Got None instead\.$"),
        (lambda d: d.update(qrels=None), r"^A check plan needs 'qrels'\.$"),
        (
            lambda d: d["qrels"].update(path="x"),
            r"^Unknown key 'path' in the plan's 'qrels'; expected some of source, name, sha256\.$",
        ),
        (lambda d: d["qrels"].pop("name"), r"^The plan's 'qrels' lacks 'name'\.$"),
        (
            lambda d: d["qrels"].update(source="url"),
            r"^The 'source' of a DatasetRef must be 'file', 'dataset' or 'table'\. Got 'url'",
        ),
        (lambda d: d["qrels"].update(sha256="abc"), r"must be 64 lower-case hex digits"),
        (
            lambda d: d["pool"].update(corpus_size=None),
            r"^Declare the pool in exactly one way: .* Got none\.$",
        ),
        (
            lambda d: d["thresholds"].update(leak=3),
            r"^Unknown key 'leak' in the plan's thresholds",
        ),
        (
            lambda d: d["thresholds"].update(leak_z="high"),
            r"^The 'leak_z' threshold must be a number\. Got 'high' instead\.$",
        ),
        (
            lambda d: d.update(seeds=0),
            r"must be 'auto' or an int >= 1\. Got 0 instead\.$",
        ),
        (
            lambda d: d.update(ties="random"),
            r"^The 'ties' parameter of check_benchmark must be 'trec_eval', 'given' or 'average'",
        ),
        (lambda d: d.update(compare=[{"name": "x"}]), r"with 'name' and 'ref'"),
    ],
)
def test_plan_refuses_bad_records_with_clear_messages(change, message):
    record = _plan_dict()
    change(record)
    with pytest.raises(ParameterError, match=message):
        CheckPlan.from_dict(record)


def test_plan_refuses_text_that_is_not_json():
    with pytest.raises(ParameterError, match=r"^A check plan must be JSON: "):
        CheckPlan.from_json("{plan")


# -- running a plan ------------------------------------------------------------------------------


def test_a_plan_of_files_loads_and_checks_like_the_tables(tmp_path):
    plan = CheckPlan(
        run=DatasetRef.file(str(TOY / "model.trec")),
        run_name="model.trec",
        qrels=DatasetRef.file(str(TOY / "qrels.txt")),
        pool=PoolDeclaration(corpus_size=200),
        noise_run=DatasetRef.file(str(TOY / "noise.trec")),
        seeds=6,
    )
    inputs = load_inputs(plan)
    assert isinstance(inputs, CheckInputs) and inputs.run.num_rows > 0
    from_files = check_benchmark(plan)
    from_tables = check_tables(
        inputs.run,
        inputs.qrels,
        pool=PoolSpec(corpus_size=200),
        noise_run=inputs.noise_run,
        run_name="model.trec",
        seeds=6,
    )
    a, b = report.to_dict(from_files), report.to_dict(from_tables)
    assert a.pop("plan") != b.pop("plan")
    assert a == b
    assert from_files.plan is plan


def test_a_changed_file_is_refused_by_its_sha256(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    plan = CheckPlan(
        qrels=DatasetRef.file(str(qrels), "0" * 64), pool=PoolDeclaration(corpus_size=9)
    )
    with pytest.raises(ParameterError, match=r"changed: its SHA-256 is not the plan's\.$"):
        load_inputs(plan)
    table_plan = CheckPlan(qrels=DatasetRef.table("qrels"), pool=PoolDeclaration(corpus_size=9))
    with pytest.raises(ParameterError, match=r"is the in-memory table 'qrels': pass the tables"):
        check_benchmark(table_plan)


def test_inputs_that_do_not_match_the_plan_are_refused():
    qrels = pa.table({"qid": ["q"], "docid": ["a"], "rel": [1]})
    plan = CheckPlan(
        run=DatasetRef.table("run"),
        qrels=DatasetRef.table("q"),
        pool=PoolDeclaration(corpus_size=9),
    )
    with pytest.raises(ParameterError, match=r"^The plan names run but the inputs hold none\.$"):
        check_benchmark(plan, CheckInputs(qrels=qrels, pool=PoolSpec(corpus_size=9)))
    with pytest.raises(ParameterError, match="must be a CheckPlan. Got dict instead."):
        check_benchmark(plan.to_dict())


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_plan_reproduces_the_original_invocation(capsys, tmp_path):
    saved = tmp_path / "plan.json"
    argv = [
        "check",
        "--run",
        POOL8 / "model.trec",
        "--qrels",
        POOL8 / "qrels.txt",
        "--pools",
        POOL8 / "pools.tsv",
        "--noise-run",
        POOL8 / "noise.trec",
        "--seeds",
        8,
        "--seed",
        3,
        "--format",
        "json",
    ]
    code, first, _ = _cli(capsys, *argv, "--save-plan", saved)
    plan = CheckPlan.from_json(saved.read_text())
    assert plan.pool.pools == DatasetRef.file(str(POOL8 / "pools.tsv"))
    assert plan.seeds == 8 and plan.seed == 3 and plan.run_name == "model.trec"
    again_code, again, _ = _cli(capsys, "check", "--plan", saved, "--format", "json")
    assert (again_code, again) == (code, first)
    data = json.loads(first)
    assert data["plan"] == plan.to_dict()
    assert data["verdict"] == "broken"
    code, _, err = _cli(capsys, "check", "--plan", saved, "--metric", "p@5")
    assert code == 2 and "--plan FILE names every input and parameter; drop --metric." in err
    code, _, err = _cli(capsys, "check", "--pool-size", 5)
    assert code == 2 and "Name the --run and the --qrels (or give --plan FILE)." in err


def test_noise_run_is_a_deprecated_alias_of_random_runs(capsys, tmp_path):
    args = ["--qrels", TOY / "qrels.txt", "--pool-size", 200, "--seeds", 2, "--depth", 5]
    code, out, err = _cli(capsys, "random-runs", *args, "--out", tmp_path / "a")
    assert code == 0 and "wrote 2 runs" in out and err == ""
    code, out, err = _cli(capsys, "noise-run", *args, "--out", tmp_path / "b")
    assert code == 0 and "wrote 2 runs" in out
    assert (
        err
        == "evalvalidity noise-run: deprecated, use `evalvalidity random-runs` (same arguments).\n"
    )
    for name in ("noise-seed0000.trec", "noise-seed0001.trec"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


# -- the rules table -----------------------------------------------------------------------------


def _qrels(n, gold="g"):
    return pa.table({"qid": [f"q{i}" for i in range(n)], "docid": [gold] * n, "rel": [1] * n})


def _run(rows):
    qid, docid, score = zip(*rows, strict=True)
    return pa.table({"qid": list(qid), "docid": list(docid), "score": [float(s) for s in score]})


def _ranked(n, gold_at, depth=10, gold="g", tied=False):
    """Every query ranks ``depth`` items with the gold at 1-based ``gold_at`` (None: absent)."""
    rows = []
    for i in range(n):
        for r in range(1, depth + 1):
            doc = gold if r == gold_at else f"x{i}-{r}"
            rows.append((f"q{i}", doc, 1.0 if tied else depth - r))
    return _run(rows)


def _harness(values, n):
    rows = [(f"q{i}", v) for i in range(n) for v in values]
    return pa.table({"qid": [q for q, _ in rows], "value": [v for _, v in rows]})


def _scenarios():
    n = 20
    corpus = PoolSpec(corpus_size=1000)
    model = _ranked(n, 1)
    leak = _ranked(n, 1)
    yield check_tables(None, _qrels(2), pool=PoolSpec(corpus_size=2), seeds=30)
    yield check_tables(None, _qrels(2), pool=PoolSpec(corpus_size=8), seeds=30)
    # Check 1 on a harness compares with the floor's exact variance: a pool of 8 and 30 values
    # per query make 2x and 1.1x the floor distinguishable from it
    small = PoolSpec(corpus_size=8)
    floor8 = float(noise_floor("rr@10", 8, 1).expected[0])
    yield check_tables(None, _qrels(n), pool=small, harness_output=_harness([2 * floor8] * 30, n))
    yield check_tables(None, _qrels(n), pool=small, harness_output=_harness([1.1 * floor8] * 30, n))
    # only non-zero values written (half the queries, no 0): counted as zeros
    yield check_tables(None, _qrels(n), pool=small, harness_output=_harness([1.0], n // 2))
    # some queries missing beside real zeros
    yield check_tables(None, _qrels(n), pool=small, harness_output=_harness([0.0, 1.0], n // 2))
    # runs of 1,000 items scored as if only the top 100 were read
    at_100 = float(noise_floor("rr@100", 1000, 1).expected[0])
    yield check_tables(
        None,
        _qrels(n),
        pool=corpus,
        metric="rr",
        harness_output=_harness([at_100] * 400, n),
        harness_depth=1000,
    )
    yield check_tables(model, _qrels(n), pool=corpus, noise_run=leak, seeds=4)
    no_leak = Thresholds(leak_z=1e9)
    yield check_tables(model, _qrels(n), pool=corpus, noise_run=leak, seeds=4, thresholds=no_leak)
    yield check_tables(model, _qrels(n), pool=corpus, noise_run=_ranked(n, 5, tied=True), seeds=4)
    tied_below = _run(
        [(f"q{i}", f"x{i}-{r}", 1.0 if r > 1 else 2.0) for i in range(n) for r in range(1, 11)]
    )
    yield check_tables(model, _qrels(n), pool=corpus, noise_run=tied_below, seeds=4)
    # Every score tied, the gold first in the file's rank column: averaged over the ties it is
    # no leak, the file's own order is one.
    tied_gold_first = pa.table(
        {
            "qid": [f"q{i}" for i in range(n) for _ in range(50)],
            "docid": ["z" if r == 1 else f"d{r:02d}" for _ in range(n) for r in range(1, 51)],
            "score": [1.0] * (50 * n),
            "rank": [r for _ in range(n) for r in range(1, 51)],
        }
    )
    pool50 = PoolSpec(corpus_size=50)
    yield check_tables(
        None, _qrels(n, gold="z"), pool=pool50, noise_run=tied_gold_first, ties="average", seeds=4
    )
    yield check_tables(_ranked(n, None), _qrels(n), pool=corpus, seeds=4)
    mixed = _run([("q0", "g", 1), ("q1", "g", 1), ("q2", "x", 1), ("q3", "x", 1)])
    yield check_tables(mixed, _qrels(4), pool=corpus, seeds=4)
    no_gold = pa.table({"qid": ["q0", "q1"], "docid": ["g", "g"], "rel": [1, 0]})
    yield check_tables(None, no_gold, pool=corpus, seeds=4)
    cands = pa.table({"qid": ["q0"] * 20, "docid": [f"c{i}" for i in range(20)]})
    yield check_tables(None, _qrels(1), pool=PoolSpec(candidates=cands), seeds=4)
    few = _ranked(4, 1)
    yield check_tables(few, _qrels(n), pool=corpus, seeds=4)
    yield check_tables(model, _qrels(n), pool=corpus, noise_run=few, seeds=4)
    yield check_tables(model, _qrels(n), pool=corpus, other_runs={"b": _ranked(n, None)}, seeds=4)
    from test_checks13 import scenarios as other_nulls_scenarios

    yield from other_nulls_scenarios()


def test_every_rule_of_the_table_is_produced_by_some_scenario():
    fields = {f.name for f in dataclasses.fields(Thresholds)}
    for rule in RULES:
        assert rule.severity in ("broken", "warning", "info")
        assert rule.template and rule.threshold in fields | {None}
    produced = set()
    for result in _scenarios():
        produced |= {(r.code, r.severity) for r in result.reasons}
        worst = {r.severity for r in result.reasons}
        expected = "broken" if "broken" in worst else "warning" if "warning" in worst else "healthy"
        assert result.verdict == expected
    assert produced == {(rule.code, rule.severity) for rule in RULES}


def test_a_threshold_named_by_a_rule_moves_its_verdict():
    result = check_tables(None, _qrels(2), pool=PoolSpec(corpus_size=8), seeds=30)
    assert "low_headroom" in {r.code for r in result.reasons}
    rule = next(r for r in RULES if r.code == "low_headroom")
    share = result.headroom.floor_over_ceiling
    looser = Thresholds(**{rule.threshold: share + 0.01})
    relaxed = check_tables(
        None, _qrels(2), pool=PoolSpec(corpus_size=8), seeds=30, thresholds=looser
    )
    assert "low_headroom" not in {r.code for r in relaxed.reasons}


# -- Check 1's interval --------------------------------------------------------------------------


def test_seed_mean_std_error_matches_the_textbook_formula():
    rng = np.random.default_rng(0)
    q, s = 7, 5
    values = rng.random((q, s))
    query = np.repeat(np.arange(q), s)
    expected = math.sqrt(np.sum(values.var(axis=1, ddof=1) / s)) / q
    assert seed_mean_std_error(values.ravel(), query, q, s) == pytest.approx(expected, rel=1e-12)
    assert seed_mean_std_error(np.ones(q * s), query, q, s) == 0.0


def test_per_query_std_error_uses_the_sample_and_falls_back_on_the_exact_variance():
    groups = [np.array([0.1, 0.5, 0.2]), np.array([1.0, 0.0])]
    counts = np.array([len(g) for g in groups])
    sums = np.array([g.sum() for g in groups])
    squares = np.array([(g * g).sum() for g in groups])
    expected = math.sqrt(sum(g.var(ddof=1) / len(g) for g in groups)) / 2
    assert per_query_std_error(counts, sums, squares, np.zeros(2)) == pytest.approx(expected)
    one = per_query_std_error(np.array([1, 3]), sums, squares, np.array([0.09, 0.27]))
    assert one == pytest.approx(math.sqrt(0.09 / 1 + 0.27 / 3) / 2)


def test_ratio_to_floor_is_the_normal_interval_over_the_exact_floor():
    r = ratio_to_floor(0.3, 0.01, 0.25)
    assert r.estimate == pytest.approx(1.2)
    assert (r.low, r.high) == pytest.approx(((0.3 - Z95 * 0.01) / 0.25, (0.3 + Z95 * 0.01) / 0.25))
    assert not r.contains(1.0)
    assert ratio_to_floor(0.25, 0.01, 0.25, z=0.0).format() == "1.00 [1.00, 1.00]"
