"""The chart builders, through ``chart.to_dict()``: data, encodings, titles, aggregation."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import WRITEUP as DATA

from evalvalidity.analysis.check import PoolSpec, check_tables
from evalvalidity.core.floors import noise_floor
from evalvalidity.core.metrics import parse_metric
from evalvalidity.errors import ParameterError
from evalvalidity.io.ingest import read
from evalvalidity.report import charts
from evalvalidity.report import records as report

# Colours a chart may use: the Okabe-Ito palette and neutral greys for text and rules.
NEUTRALS = {"#000000", "#444444", "#ffffff", "white", "black"}


def _table(path: Path, kind: str) -> pa.Table:
    return read(path, kind=kind).table


@pytest.fixture(scope="module")
def toy():
    folder = DATA / "toy"
    return check_tables(
        _table(folder / "model.trec", "run"),
        _table(folder / "qrels.txt", "qrels"),
        pool=PoolSpec(corpus_size=200),
        noise_run=_table(folder / "noise.trec", "run"),
        other_runs={"noise": _table(folder / "noise.trec", "run")},
        run_name="model",
        seeds=20,
    )


@pytest.fixture(scope="module")
def unitsbug():
    folder = DATA / "unitsbug"
    return check_tables(
        _table(folder / "model.trec", "run"),
        _table(folder / "qrels.txt", "qrels"),
        pool=PoolSpec(units=_table(folder / "units.tsv", "units"), analytic_unit="chunks"),
        harness_output=_table(folder / "harness.csv", "harness"),
        run_name="model",
    )


@pytest.fixture(scope="module")
def large():
    """7,000 queries: every chart must aggregate below Altair's 5,000-row limit."""
    rng = np.random.default_rng(7)
    n = 7000
    gold = rng.integers(1, 4, n)
    qrels = pa.table(
        {
            "qid": [f"q{i}" for i, g in enumerate(gold) for _ in range(g)],
            "docid": [f"d{j}" for g in gold for j in range(g)],
            "rel": [1] * int(gold.sum()),
        }
    )
    run = pa.table(
        {
            "qid": [f"q{i}" for i in range(n) for _ in range(10)],
            "docid": [f"d{j}" if j == 0 else f"x{i}-{j}" for i in range(n) for j in range(10)],
            "score": [10.0 - j for _ in range(n) for j in range(10)],
        }
    )
    return check_tables(run, qrels, pool=PoolSpec(corpus_size=5000), seeds=2)


def _layers(spec: dict) -> list[dict]:
    """The layers, each with its data (Altair moves data the layers share to the top)."""
    return [
        {"data": spec["data"], **layer} if "data" not in layer and "data" in spec else layer
        for layer in spec.get("layer", [spec])
    ]


def _values(layer: dict) -> list[dict]:
    return layer["data"]["values"]


def _colours(spec: object) -> set[str]:
    text = json.dumps(spec)
    return {c.lower() for c in re.findall(r'"(#[0-9A-Fa-f]{6})"', text)} | (
        {"white"} if '"white"' in text else set()
    )


def _title(spec: dict) -> str:
    return spec["title"]["text"]


# ------------------------------------------------------------------------------ gauge


def test_ratio_gauge_draws_band_reference_interval_and_label():
    spec = charts.ratio_gauge(0.99, 0.95, 1.03, title="Check 1", passed=True).to_dict()
    band, _, reference, interval, point, text = _layers(spec)
    assert text["encoding"]["text"]["field"] == "label"
    row = _values(band)[0]
    assert (row["band_low"], row["band_high"], row["reference"]) == (0.8, 1.25, 1.0)
    assert band["encoding"]["x"]["scale"]["type"] == "log"
    low, high = band["encoding"]["x"]["scale"]["domain"]
    assert low < 0.8 and high > 1.25
    assert reference["mark"]["type"] == "rule"
    assert interval["encoding"]["x2"]["field"] == "high"
    assert point["mark"]["color"] == charts.PALETTE["green"]
    assert row["label"] == "0.99× [0.95, 1.03] — passes"
    assert _title(spec) == "Check 1"


def test_ratio_gauge_marks_a_failure_and_widens_the_axis():
    spec = charts.ratio_gauge(5.32, 4.87, 5.77, title="Check 1", passed=False).to_dict()
    layers = _layers(spec)
    assert layers[4]["mark"]["color"] == charts.PALETTE["vermillion"]
    assert _values(layers[0])[0]["label"].endswith("— fails")
    assert layers[0]["encoding"]["x"]["scale"]["domain"][1] > 5.77


def test_ratio_gauge_clips_a_non_positive_low_end_to_the_axis():
    spec = charts.ratio_gauge(0.48, -0.1, 1.23, title="Check 2", passed=True).to_dict()
    row = _values(_layers(spec)[0])[0]
    domain = _layers(spec)[0]["encoding"]["x"]["scale"]["domain"]
    assert row["low"] == pytest.approx(domain[0]) and row["low"] > 0


@pytest.mark.parametrize("estimate", [0.0, -1.0, float("nan"), float("inf")])
def test_ratio_gauge_rejects_an_estimate_it_cannot_place(estimate):
    with pytest.raises(
        ParameterError, match="'estimate' parameter of ratio_gauge must be a finite number > 0"
    ):
        charts.ratio_gauge(estimate, 0.5, 1.5, title="x", passed=True)


def test_ratio_gauge_rejects_an_unordered_band():
    with pytest.raises(ParameterError, match="'band' parameter of ratio_gauge"):
        charts.ratio_gauge(1.0, 0.9, 1.1, title="x", passed=True, band=(1.25, 0.8))


# --------------------------------------------------------------------------- headroom


def test_headroom_sliver_puts_floor_ceiling_and_model_on_one_axis():
    spec = charts.headroom_sliver(
        0.808, 1.0, model=0.975, model_low=0.87, model_high=1.0, metric="rr@10", model_name="model"
    ).to_dict()
    layers = _layers(spec)
    parts = _values(layers[0])
    assert [(p["part"], p["start"], p["end"]) for p in parts] == [
        ("floor (random ranker)", 0.0, 0.808),
        ("headroom", 0.808, 1.0),
    ]
    assert layers[0]["encoding"]["x"]["title"] == "rr@10"
    labels = [_values(layer)[0]["label"] for layer in layers[1:3]]
    assert labels == ["floor 0.808", "ceiling 1"]
    model_rows = _values(layers[3])
    assert model_rows[0]["model"] == 0.975 and model_rows[0]["label"] == "model 0.975"
    assert "81 % of the ceiling" in spec["title"]["subtitle"]


def test_headroom_sliver_without_a_model_has_no_model_marks():
    spec = charts.headroom_sliver(0.1, 1.0).to_dict()
    assert len(_layers(spec)) == 3


def test_headroom_sliver_rejects_a_floor_above_the_ceiling():
    with pytest.raises(
        ParameterError,
        match=r"The floor \(0.9\) of headroom_sliver exceeds "
        r"the ceiling \(0.5\)",
    ):
        charts.headroom_sliver(0.9, 0.5)


def test_query_headroom_shows_the_queries_with_the_highest_floor_share(toy):
    frame = report.to_frame(toy)
    spec = charts.query_headroom(frame, limit=5, metric="rr@10").to_dict()
    rows = _values(_layers(spec)[0])
    expected = frame.sort_values("floor_share", ascending=False, kind="stable").head(5)
    assert [r["qid"] for r in rows] == expected["qid"].tolist()
    assert [r["floor"] for r in rows] == pytest.approx(expected["floor"].tolist())
    assert f"{len(frame) - 5:,} more queries not shown" in spec["title"]["subtitle"]
    assert len(_layers(spec)) == 3  # floor, headroom, model ticks


@pytest.mark.parametrize("limit", [0, 201, 2.5, True])
def test_query_headroom_rejects_a_bad_limit(toy, limit):
    with pytest.raises(ParameterError, match="'limit' parameter of query_headroom"):
        charts.query_headroom(report.to_frame(toy), limit=limit)


def test_query_headroom_names_missing_columns():
    with pytest.raises(ParameterError, match="query_headroom needs the columns model"):
        charts.query_headroom(
            pd.DataFrame({"qid": ["a"], "floor": [0.1], "ceiling": [1.0], "floor_share": [1.0]})
        )


def test_floor_share_histogram_bins_every_query_with_gold():
    frame = pd.DataFrame({"floor": [0.15, 0.65, 0.95, 0.0], "ceiling": [1.0, 1.0, 1.0, 0.0]})
    spec = charts.floor_share_histogram(frame, bins=10).to_dict()
    rows = _values(_layers(spec)[0])
    assert len(rows) == 10
    assert sum(r["queries"] for r in rows) == 3
    counts = {round(r["start"], 1): r["queries"] for r in rows if r["queries"]}
    assert counts == {0.1: 1, 0.6: 1, 0.9: 1}
    flagged = {round(r["start"], 1) for r in rows if r["side"] == "flagged floor_high"}
    assert flagged == {0.5, 0.6, 0.7, 0.8, 0.9}
    assert "1 without gold (ceiling 0) left out" in spec["title"]["subtitle"]


def test_floor_share_histogram_rejects_bad_bins():
    with pytest.raises(ParameterError, match="'bins' parameter of floor_share_histogram"):
        charts.floor_share_histogram(pd.DataFrame({"floor": [0.1], "ceiling": [1.0]}), bins=1)


def test_gold_breakdown_shares_the_floor_by_gold_count():
    frame = pd.DataFrame({"gold": [1, 1, 2, 5, 9], "floor": [0.1, 0.1, 0.2, 0.3, 0.3]})
    rows = _values(_layers(charts.gold_breakdown(frame, max_groups=3).to_dict())[0])
    assert [r["group"] for r in rows] == ["1", "2", "≥ 5"]
    assert [r["queries"] for r in rows] == [2, 1, 2]
    assert sum(r["floor_share"] for r in rows) == pytest.approx(1.0)
    assert rows[2]["floor_share"] == pytest.approx(0.6)


# ------------------------------------------------------------------------- inferred N


def test_expected_floor_curve_is_the_mean_of_exact_floors():
    gold = [1, 1, 3]
    curve = charts.expected_floor_curve("rr@10", gold, low=20, high=2000, points=50)
    assert curve["pool_size"].is_monotonic_increasing
    assert curve["expected"].is_monotonic_decreasing
    for n, e in zip(curve["pool_size"], curve["expected"], strict=True):
        assert e == pytest.approx(noise_floor("rr@10", int(n), gold).expected.mean(), rel=1e-12)


def test_expected_floor_curve_starts_at_the_largest_gold_count():
    curve = charts.expected_floor_curve("ap", [4, 2], low=1, high=10, points=10)
    assert curve["pool_size"].min() == 4


def test_expected_floor_curve_refuses_metrics_without_an_invertible_floor():
    with pytest.raises(ParameterError, match="depends only on N, G and R"):
        charts.expected_floor_curve("ndcg@10", [1], low=1, high=10)


def test_inferred_n_chart_marks_declared_chunks_documents_and_the_measurement(unitsbug):
    inferred = unitsbug.inferred_n
    spec = charts.result_charts(unitsbug)["inferred_n"].to_dict()
    layers = _layers(spec)
    curve = _values(layers[0])
    assert curve[0]["pool_size"] < inferred.estimate < curve[-1]["pool_size"]
    rules = _values(layers[1])
    assert {(r["kind"], r["n"]) for r in rules} == {
        ("declared chunks", 1052.0),
        ("declared documents", 218.0),
    }
    point = next(_values(layer)[0] for layer in layers if layer["mark"].get("shape") == "diamond")
    assert point["n"] == pytest.approx(inferred.estimate)
    assert point["measured"] == pytest.approx(inferred.measured)
    assert "counts documents" in " ".join(spec["title"]["subtitle"])


# ---------------------------------------------------------------------------- Check 1


def _enumerate_rr(n: int, g: int, k: int) -> dict[float, float]:
    """Every order of a pool of n with g gold, by brute force."""
    counts: dict[float, int] = {}
    orders = list(itertools.permutations(range(n)))
    for order in orders:
        first = next(i for i, item in enumerate(order, 1) if item < g)
        value = round(1.0 / first, 4) if first <= k else 0.0
        counts[value] = counts.get(value, 0) + 1
    return {v: c / len(orders) for v, c in counts.items()}


@pytest.mark.parametrize(("n", "g", "k"), [(5, 1, 3), (6, 2, 4), (6, 3, 10), (7, 2, 2)])
def test_the_exact_rr_distribution_matches_enumeration(n, g, k):
    exact = charts._exact_pmf(parse_metric(f"rr@{k}"), np.array([n]), np.array([g]), np.array([g]))
    brute = _enumerate_rr(n, g, k)
    assert set(exact) == set(brute)
    for value, p in brute.items():
        assert exact[value] == pytest.approx(p, abs=1e-12)


def test_the_exact_hit_and_precision_distributions_have_the_exact_means():
    for metric in ("hit@3", "p@3", "r@3"):
        m = parse_metric(metric)
        pmf = charts._exact_pmf(m, np.array([9, 12]), np.array([2, 4]), np.array([3, 4]))
        assert sum(pmf.values()) == pytest.approx(1.0)
        mean = sum(v * p for v, p in pmf.items())
        floor = noise_floor(m, [9, 12], [2, 4], judged=[3, 4]).expected.mean()
        assert mean == pytest.approx(floor, abs=1e-4)


def test_check1_distribution_against_a_harness_with_the_units_bug(unitsbug):
    rows, discrete = charts.check1_distribution_data(unitsbug)
    assert discrete
    measured = rows[rows["source"] == "measured"]
    exact = rows[rows["source"] == "exact"]
    assert measured["probability"].sum() == pytest.approx(1.0)
    assert exact["probability"].sum() == pytest.approx(1.0)
    h = unitsbug.harness
    # The exact distribution is the analytic's (chunks), the measured one the harness's.
    assert (exact["value"] * exact["probability"]).sum() == pytest.approx(h.analytic, rel=1e-3)
    assert (measured["value"] * measured["probability"]).sum() == pytest.approx(
        h.measured, rel=1e-3
    )
    spec = charts.check1_distribution(unitsbug).to_dict()
    assert "P(score = 0)" in " ".join(spec["title"]["subtitle"])
    drawn = _values(_layers(spec)[0])
    assert all(r["value"] > 0 for r in drawn)
    assert {r["label"] for r in drawn} == {"1"} | {f"1/{i}" for i in range(2, 11)}


def test_check1_distribution_weights_importance_samples(toy):
    rows, _ = charts.check1_distribution_data(toy)
    measured = rows[rows["source"] == "measured"]
    h = toy.harness
    weighted_mean = float(np.mean(h.sample_values * h.sample_weights))
    assert (measured["value"] * measured["probability"]).sum() == pytest.approx(
        weighted_mean, rel=1e-3
    )


def test_check1_distribution_needs_check1(toy):
    from dataclasses import replace

    with pytest.raises(ParameterError, match="needs a result with Check 1"):
        charts.check1_distribution_data(replace(toy, harness=None))


# --------------------------------------------------------------------------- compare


def test_comparison_chart_draws_each_pair_with_its_interval(toy):
    spec = charts.comparison_chart(
        toy.comparison, metric="rr@10", detectable=toy.power.min_detectable_difference
    ).to_dict()
    layers = _layers(spec)
    band = _values(layers[0])[0]
    assert band["high"] == pytest.approx(toy.power.min_detectable_difference)
    pairs = _values(layers[2])
    row = toy.comparison.table.rows[0]
    assert pairs[0]["pair"] == "model − noise"
    assert (pairs[0]["difference"], pairs[0]["low"], pairs[0]["high"]) == pytest.approx(
        (row.difference, row.low, row.high)
    )
    assert pairs[0]["status"] == ("significant" if row.significant else "not significant")


# ------------------------------------------------------------------------ everything


def test_result_charts_for_a_healthy_benchmark(toy):
    built = charts.result_charts(toy)
    assert list(built) == [
        "check1_gauge",
        "check2_gauge",
        "headroom",
        "query_headroom",
        "floor_share",
        "gold_breakdown",
        "inferred_n",
        "check1_distribution",
        "comparison",
        "other_nulls",
    ]
    allowed = {c.lower() for c in charts.PALETTE.values()} | NEUTRALS
    for name, chart in built.items():
        spec = chart.to_dict()
        assert spec["title"]["text"], name
        assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
        assert _colours(spec) <= allowed, name


def test_result_charts_aggregate_seven_thousand_queries(large):
    assert large.n_queries == 7000
    for name, chart in charts.result_charts(large).items():
        spec = chart.to_dict()  # raises MaxRowsError above 5,000 rows
        rows = sum(len(_values(layer)) for layer in _layers(spec) if "data" in layer)
        assert rows <= charts.MAX_ROWS, name
    assert charts.floor_share_histogram(report.to_frame(large)).to_dict()


def test_a_chart_refuses_more_rows_than_altair_allows():
    frame = pd.DataFrame(
        {
            "floor": np.zeros(6000),
            "ceiling": np.ones(6000),
            "qid": np.arange(6000).astype(str),
            "model": np.zeros(6000),
        }
    )
    with pytest.raises(ParameterError, match="at most 5,000 rows; got 6,000"):
        charts._data(frame)


def test_non_finite_values_become_null_in_the_spec():
    frame = pd.DataFrame(
        {"qid": ["a"], "floor": [0.1], "ceiling": [1.0], "model": [math.nan], "floor_share": [1.0]}
    )
    spec = charts.query_headroom(frame).to_dict()
    assert _values(_layers(spec)[0])[0]["model"] is None
    assert len(_layers(spec)) == 2  # no model ticks without a model
