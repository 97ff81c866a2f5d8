"""Check 1 must not fail a correct harness: depths, exact-variance intervals, seeds, gaps.

The "correct harness" of these tests is written here, in plain Python with trec_eval's
semantics (``independent_harness``), not the package's scorer.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import numpy as np
import pyarrow as pa
import pytest
from conftest import ROOT

from evalvalidity.analysis.check import check_tables
from evalvalidity.analysis.check1 import (
    depth_floor,
    harness_check1,
    null_ratio_interval,
    random_runs,
    truncated_metric,
)
from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.analysis.pools import build_benchmark, compute_floor
from evalvalidity.cli import main as cli_main
from evalvalidity.core.floors import noise_floor
from evalvalidity.core.metrics import parse_metric
from evalvalidity.io.ingest import read_harness


def _calibration():
    spec = importlib.util.spec_from_file_location("calibration", ROOT / "bench" / "calibration.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("calibration", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def independent_harness(run: pa.Table, qrels: pa.Table, measure: str) -> dict[str, float]:
    """trec_eval's per-query value of ``measure`` (map, recip_rank, P_k, ...) on ``run``.

    Documents are ordered by descending score; relevance is grade >= 1; nDCG takes the
    grades as gains and divides by the ideal DCG of every judged grade.
    """
    grades: dict[str, dict[str, int]] = {}
    for q, d, r in zip(
        *(qrels.column(c).to_pylist() for c in ("qid", "docid", "rel")), strict=True
    ):
        if r > 0:
            grades.setdefault(q, {})[d] = r
    ranked: dict[str, list[tuple[float, str]]] = {}
    for q, d, s in zip(
        *(run.column(c).to_pylist() for c in ("qid", "docid", "score")), strict=True
    ):
        ranked.setdefault(q, []).append((s, d))
    name, _, cut = measure.rpartition("_") if measure[-1].isdigit() else (measure, "", "")
    k = int(cut) if cut else None
    out = {}
    for q, judged in grades.items():
        docs = [d for _, d in sorted(ranked.get(q, []), reverse=True)]
        top = docs if k is None else docs[:k]
        hits = [i + 1 for i, d in enumerate(top) if d in judged]
        total = len(judged)
        if name == "recip_rank":
            value = 1.0 / hits[0] if hits else 0.0
        elif name == "success":
            value = float(bool(hits))
        elif name == "P":
            assert k is not None
            value = len(hits) / k
        elif name == "recall":
            value = len(hits) / total
        elif name == "Rprec":
            value = sum(1 for d in docs[:total] if d in judged) / total
        elif name in ("map", "map_cut"):
            value = sum((j + 1) / rank for j, rank in enumerate(hits)) / total
        else:  # ndcg, ndcg_cut
            dcg = sum(judged[top[r - 1]] / math.log2(r + 1) for r in hits)
            ideal = sorted(judged.values(), reverse=True)[: k or None]
            value = dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        out[q] = value
    return out


def harness_table(runs, qrels, measure, *, decimals=4, drop_zeros=False) -> pa.Table:
    rows: dict[str, list] = {"seed": [], "qid": [], "measure": [], "value": []}
    for seed, run in runs:
        for q, v in independent_harness(run, qrels, measure).items():
            if drop_zeros and round(v, decimals) == 0:
                continue
            rows["seed"].append(seed)
            rows["qid"].append(q)
            rows["measure"].append(measure)
            rows["value"].append(round(v, decimals))
    return pa.table(rows)


def graded_qrels(n_queries: int, gold: int) -> pa.Table:
    q = [f"q{i}" for i in range(n_queries) for _ in range(gold)]
    d = [f"g{i}_{j}" for i in range(n_queries) for j in range(gold)]
    r = [1 + j % 3 for _ in range(n_queries) for j in range(gold)]
    return pa.table({"qid": q, "docid": d, "rel": r})


# -- 1. the depth of the random runs -----------------------------------------------------------


def test_truncated_floor_is_trec_evals_cut_measure():
    qrels = graded_qrels(3, 4)
    pool = PoolSpec(corpus_size=5000)
    rng = np.random.default_rng(0)
    ap = parse_metric("ap")
    bench = build_benchmark(qrels, pool, ap)
    cut = compute_floor(bench, parse_metric("ap@1000"), pool, rng)[0]
    assert np.array_equal(depth_floor(bench, ap, pool, 1000, rng).expected, cut.expected)
    whole = compute_floor(bench, ap, pool, rng)[0]
    # the whole-pool floor the old check compared with is 20 % higher
    assert np.all(whole.expected > 1.15 * cut.expected)
    rr = depth_floor(bench, parse_metric("rr"), pool, 1000, rng)
    assert rr.expected == pytest.approx(noise_floor("rr@1000", 5000, 4).expected[0])
    # P@k over a shorter ranking still divides by k
    p = depth_floor(bench, parse_metric("p@2000"), pool, 1000, rng)
    assert p.expected == pytest.approx(4 * 1000 / (5000 * 2000))
    assert truncated_metric(parse_metric("p@10"), 1000)[1] == "same"


def test_declaring_the_whole_pool_for_runs_of_1000_fails_and_names_the_depth():
    qrels = graded_qrels(40, 30)
    pool = PoolSpec(corpus_size=5000)
    runs = list(random_runs(qrels, pool, 3, depth=1000, seed=5))
    values = harness_table(runs, qrels, "map")
    right = check_tables(
        None,
        qrels,
        pool=pool,
        metric="ap",
        harness_output=values,
        harness_depth=1000,
        harness_seeds=3,
    )
    assert right.harness.passed
    assert right.verdict != "broken"
    wrong = check_tables(
        None,
        qrels,
        pool=pool,
        metric="ap",
        harness_output=values,
        harness_depth=5000,
        harness_seeds=3,
    )
    assert not wrong.harness.passed
    assert wrong.harness.ratio.high < 0.9
    assert 850 <= wrong.harness.implied_depth <= 1150
    codes = {r.code for r in wrong.reasons}
    assert "check1_depth" in codes
    message = next(r.message for r in wrong.reasons if r.code == "check1_depth")
    assert "not the 5,000 items per query" in message


@pytest.mark.parametrize("depth", [100, 1000, None], ids=["depth-100", "depth-1000", "whole"])
@pytest.mark.parametrize(
    ("metric", "measure"),
    [
        ("rr", "recip_rank"),
        ("rr@10", None),
        ("hit@10", "success_10"),
        ("p@10", "P_10"),
        ("p@1500", "P_1500"),
        ("r@100", "recall_100"),
        ("r@1500", "recall_1500"),
        ("rprec", "Rprec"),
        ("ap", "map"),
        ("ap@100", "map_cut_100"),
        ("ndcg", "ndcg"),
        ("ndcg@10", "ndcg_cut_10"),
        ("ndcg@1500", "ndcg_cut_1500"),
    ],
)
def test_check1_passes_an_independent_trec_eval_harness(metric, measure, depth):
    n_pool = 2000
    qrels = graded_qrels(12, 150)  # R = 150 > depth 100: R-precision is cut too
    pool = PoolSpec(corpus_size=n_pool)
    written = depth or n_pool
    runs = list(random_runs(qrels, pool, 3, depth=written, seed=11))
    if measure is None:  # rr@10 has no trec_eval name: recip_rank over the top 10
        runs = [(s, t.filter(pa.compute.less_equal(t.column("rank"), 10))) for s, t in runs]
        measure = "recip_rank"
    values = harness_table(runs, qrels, measure)
    result = check_tables(
        None,
        qrels,
        pool=pool,
        metric=metric,
        harness_output=values,
        harness_depth=written,
        harness_seeds=3,
    )
    h = result.harness
    assert h.passed, (metric, depth, h.ratio)
    assert h.depth == written
    assert 0.0 <= h.ratio.low < h.ratio.high


# -- 2. an interval that cannot collapse ---------------------------------------------------------


def test_five_seeds_all_zero_on_one_query_pass():
    qrels = pa.table({"qid": ["q1"], "docid": ["gold"], "rel": [1]})
    pool = PoolSpec(corpus_size=3000)
    values = pa.table(
        {"seed": list(range(5)), "qid": ["q1"] * 5, "measure": ["P_10"] * 5, "value": [0.0] * 5}
    )
    result = check_tables(
        None,
        qrels,
        pool=pool,
        metric="p@10",
        harness_output=values,
        harness_depth=1000,
        harness_seeds=5,
    )
    assert result.harness.passed
    assert result.harness.ratio.high - result.harness.ratio.low > 1
    assert result.harness.ratio.low == 0.0  # clipped to the metric's range, not below


def test_null_interval_uses_the_exact_variance():
    e, v = np.array([0.2, 0.4]), np.array([0.01, 0.04])
    _, se = null_ratio_interval(0.3, e, v, np.array([4, 4]), np.array([1.0, 1.0]))
    assert se == pytest.approx(math.sqrt(0.05 / 4) / 2)
    # a mean far from the floor fails, a mean at it passes
    assert not null_ratio_interval(0.6, e, v, np.array([400, 400]), np.ones(2))[0].contains(1)
    assert null_ratio_interval(0.3, e, v, np.array([400, 400]), np.ones(2))[0].contains(1)


def test_builtin_check1_with_one_query_and_five_seeds_does_not_collapse():
    qrels = pa.table({"qid": ["q1"], "docid": ["gold"], "rel": [1]})
    result = check_tables(None, qrels, pool=PoolSpec(corpus_size=3000), metric="p@10", seeds=5)
    h = result.harness
    assert h.passed and h.ratio.high - h.ratio.low > 0 and h.ratio.low >= 0


def _rate_bound(bases: int) -> float:
    return 0.05 + 2 * math.sqrt(0.05 * 0.95 / bases)


def test_false_failure_rate_is_at_most_5_percent_fast():
    calibration = _calibration()
    cases = [c for c in calibration.CASES if c.metric in ("p@10", "rr", "ap")][:4]
    bases = 40
    failures = [calibration.false_failure_rate(case, bases)[0] for case in cases]
    assert np.mean(failures) <= _rate_bound(bases * len(cases))
    assert max(failures) <= _rate_bound(bases) + 0.05


@pytest.mark.slow
def test_false_failure_rate_is_at_most_5_percent_over_200_seed_bases():
    calibration = _calibration()
    bases = 200
    for case in calibration.CASES:
        rate, se = calibration.false_failure_rate(case, bases, first_base=1000)
        assert rate <= 0.05 + 2 * se, (case.label, rate)


# -- 3. seeds in the run tags ---------------------------------------------------------------


def _trec_eval_q(values: dict[str, float], measure: str, tag: str) -> str:
    lines = [f"{measure:<22}\t{q}\t{v:.4f}" for q, v in values.items()]
    mean = sum(values.values()) / len(values)
    lines += [
        f"{'runid':<22}\tall\t{tag}",
        f"{'num_q':<22}\tall\t{len(values)}",
        f"{measure:<22}\tall\t{mean:.4f}",
    ]
    return "\n".join(lines) + "\n"


def test_concatenated_trec_eval_output_is_read_seed_by_seed(tmp_path, capsys):
    qrels = graded_qrels(20, 5)
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, d, r in zip(*qrels.to_pydict().values(), strict=True))
    )
    out = tmp_path / "runs"
    code = cli_main(
        [
            "random-runs",
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--pool-size",
            "300",
            "--seeds",
            "4",
            "--depth",
            "100",
            "--out",
            str(out),
        ]
    )
    assert code == 0 and "wrote 4 runs" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["depth"] == 100 and manifest["tag"] == "noise-<seed>"
    from evalvalidity.io.ingest import read_run

    text = ""
    for seed, name in enumerate(manifest["runs"]):
        run_text = (out / name).read_text()
        assert run_text.split("\n", 1)[0].endswith(f" noise-{seed}")
        run = read_run(run_text.encode())
        text += _trec_eval_q(independent_harness(run, qrels, "map"), "map", f"noise-{seed}")
    harness = read_harness(text.encode())
    assert sorted(set(harness.column("seed").to_pylist())) == [0, 1, 2, 3]
    assert harness.num_rows == 80
    (out / "harness.txt").write_text(text)
    # the check finds the manifest beside the harness output
    code = cli_main(
        [
            "check",
            "--run",
            str(out / manifest["runs"][0]),
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--pool-size",
            "300",
            "--metric",
            "map",
            "--harness-output",
            str(out / "harness.txt"),
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    check1 = report["checks"]["harness"]
    assert check1["n_seeds"] == 4 and check1["depth"] == 100
    assert check1["passed"] is True


# -- 4. a harness that writes only non-zero values ------------------------------------------------


def test_a_harness_that_drops_zero_values_is_named_not_diagnosed_as_a_leak():
    qrels = graded_qrels(60, 2)
    pool = PoolSpec(corpus_size=200)
    runs = list(random_runs(qrels, pool, 4, depth=200, seed=2))
    values = harness_table(runs, qrels, "P_10", drop_zeros=True)
    assert values.num_rows < 60 * 4
    result = check_tables(
        None,
        qrels,
        pool=pool,
        metric="p@10",
        harness_output=values,
        harness_depth=200,
        harness_seeds=4,
    )
    assert result.harness.passed and result.harness.zeros_left_out
    reasons = {r.code: r for r in result.reasons}
    assert "check1_missing_values" in reasons
    assert "none of its values is 0" in reasons["check1_missing_values"].message
    assert "check1_ratio" not in reasons
    # values missing beside real zeros: compared as they are, and said
    kept = harness_table(runs, qrels, "P_10").slice(0, 200)
    partial = check_tables(
        None,
        qrels,
        pool=pool,
        metric="p@10",
        harness_output=kept,
        harness_depth=200,
        harness_seeds=4,
    )
    message = next(r.message for r in partial.reasons if r.code == "check1_missing_values")
    assert "40 of the 240" in message and not partial.harness.zeros_left_out


def test_harness_check1_without_a_pool_keeps_the_given_floor():
    qrels = pa.table({"qid": ["q1"], "docid": ["a"], "rel": [1]})
    pool = PoolSpec(corpus_size=10)
    metric = parse_metric("rr")
    bench = build_benchmark(qrels, pool, metric)
    floor = compute_floor(bench, metric, pool, np.random.default_rng(0))[0]
    values = pa.table({"seed": [0, 1], "qid": ["q1", "q1"], "value": [0.5, 0.25]})
    check = harness_check1(bench, floor, metric, values, [])
    assert check.analytic == pytest.approx(floor.expected[0]) and check.depth == 1000
