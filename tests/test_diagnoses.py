"""Diagnoses that say the right thing, floors that stay exact at the edges, power from pairs.

Each test pins one finding: what the verdict's reasons say (and do not say) for a model worse
than random, a run of documents checked against a units map, a noise run whose order is its
tie-breaking's, the Check 2 gauge, the floors of small pools and nearly-all-gold pools, and
the power figures with and without a second run (on the real Cranfield files).
"""

import json
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from conftest import CRANFIELD

from evalvalidity.analysis.check import check_tables
from evalvalidity.analysis.headroom import power
from evalvalidity.analysis.plan import PoolSpec, Thresholds
from evalvalidity.analysis.pool_size import diagnose_pool_size
from evalvalidity.analysis.results import InferredPoolSizeCheck
from evalvalidity.cli import main
from evalvalidity.core import stats
from evalvalidity.core.floors import noise_floor
from evalvalidity.errors import ParameterError
from evalvalidity.io.ingest import read_pools, read_qrels, read_run, read_units
from evalvalidity.report import charts


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _run(rows):
    qid, docid, rank, score = zip(*rows, strict=True)
    return pa.table(
        {
            "qid": list(qid),
            "docid": list(docid),
            "rank": pa.array(rank, pa.int64()),
            "score": pa.array(score, pa.float64()),
        }
    )


def _qrels(n_queries, gold="g"):
    return pa.table(
        {
            "qid": [f"q{i}" for i in range(n_queries)],
            "docid": [gold] * n_queries,
            "rel": [1] * n_queries,
        }
    )


# ------------------------------------------------------------- 5. worse than random


def test_a_model_wholly_below_its_floor_is_significantly_worse_than_random():
    # Pool of 4 with one gold item: the floor of RR@10 is H_4/4 ≈ 0.52. The model always puts
    # the gold item last (RR 1/4) with a little spread: its interval lies below the floor.
    n = 40
    rows = []
    for i in range(n):
        last = ["a", "b", "c"] if i % 4 else ["a", "g", "b", "c"]
        order = [*last, "g"] if i % 4 else last
        for rank, doc in enumerate(order, 1):
            rows.append((f"q{i}", doc, rank, float(10 - rank)))
    result = check_tables(_run(rows), _qrels(n), pool=PoolSpec(corpus_size=4), seeds=8)
    head = result.headroom
    assert head.model_interval.high < head.floor
    codes = [r.code for r in result.reasons]
    assert "model_below_floor" in codes and "model_at_floor" not in codes
    reason = next(r for r in result.reasons if r.code == "model_below_floor")
    assert "significantly worse than a random ranker" in reason.message
    assert "not distinguishable" not in reason.message


def test_a_model_at_its_floor_is_still_called_indistinguishable():
    rng = np.random.default_rng(1)
    n = 60
    rows = []
    for i in range(n):
        order = rng.permutation(["a", "b", "c", "g"]).tolist()
        for rank, doc in enumerate(order, 1):
            rows.append((f"q{i}", doc, rank, float(10 - rank)))
    result = check_tables(_run(rows), _qrels(n), pool=PoolSpec(corpus_size=4), seeds=8)
    codes = [r.code for r in result.reasons]
    assert "model_at_floor" in codes and "model_below_floor" not in codes


# ------------------------------------------------------- 6. documents checked as chunks


def test_a_run_of_the_units_maps_documents_is_recognised_with_the_fix():
    units = read_units(CRANFIELD / "chunks.tsv")
    run = read_run(CRANFIELD / "run_dense.trec")
    stripped = [d.split("#")[0] for d in run.column("docid").to_pylist()]
    qids = run.column("qid").to_pylist()
    seen, keep = set(), []
    for i, key in enumerate(zip(qids, stripped, strict=True)):
        if key not in seen:
            seen.add(key)
            keep.append(i)
    doc_run = pa.table(
        {
            "qid": [qids[i] for i in keep],
            "docid": [stripped[i] for i in keep],
            "score": run.column("score").take(keep),
        }
    )
    with pytest.raises(ParameterError) as caught:
        check_tables(
            doc_run,
            read_qrels(CRANFIELD / "qrels.txt"),
            pool=PoolSpec(units=units),
            seeds=4,
        )
    message = str(caught.value)
    assert "ranks the units map's documents, not its chunks" in message
    assert "corpus of the map's 1,400 documents" in message
    assert "missing from" not in message


def _inferred(source, estimate, declared=1000, chunks=1000, docs=200):
    return InferredPoolSizeCheck(
        source=source,
        measured=0.1,
        estimate=estimate,
        low=estimate * 0.9,
        high=estimate * 1.1,
        saturated=False,
        declared_pool=declared,
        declared_chunks=chunks,
        declared_documents=docs,
        by_gold=(),
        diagnosis=None,
    )


def test_the_chunk_analytic_without_harness_output_does_not_blame_a_harness():
    units = pa.table({"chunk_id": ["a#0"], "doc_id": ["a"]})
    pool = PoolSpec(units=units, analytic_unit="chunks")
    for source in ("builtin", "noise-run"):
        text = diagnose_pool_size(_inferred(source, 210.0), pool, False)
        assert "harness" not in text.lower()
        assert "analytic unit documents" in text
        assert "Declare the units map" not in text
    text = diagnose_pool_size(_inferred("harness-output", 210.0), pool, False)
    assert text.startswith("Your harness counts documents (≈ 200), not chunks (1,000)")
    assert "Declare the units map" not in text


def test_without_a_units_map_the_advice_names_no_units_map():
    pool = PoolSpec(corpus_size=1000)
    text = diagnose_pool_size(
        _inferred("builtin", 200.0, declared=1000, chunks=None, docs=None), pool, False
    )
    assert "units map" not in text


# ---------------------------------------------------------------------- 7. tie leaks


def _tied_noise(n):
    # Every score equal: trec_eval breaks ties by docid descending, and the gold "z" sorts
    # first; the file's rank column also puts it first.
    rows = []
    for i in range(n):
        for rank, doc in enumerate(["z", *(f"d{j:02d}" for j in range(49))], 1):
            rows.append((f"q{i}", doc, rank, 0.5))
    return _run(rows)


def test_an_all_equal_noise_run_is_called_a_tie_leak():
    n = 30
    result = check_tables(
        None,
        _qrels(n, gold="z"),
        pool=PoolSpec(corpus_size=50),
        noise_run=_tied_noise(n),
        seeds=4,
    )
    assert result.noise.leak and result.noise.all_tied
    leak = next(r for r in result.reasons if r.code == "noise_leak")
    assert "tie leak" in leak.message
    assert "BM25 or a reranker" not in leak.message


def test_with_ties_averaged_the_files_own_order_is_still_reported():
    n = 30
    result = check_tables(
        None,
        _qrels(n, gold="z"),
        pool=PoolSpec(corpus_size=50),
        noise_run=_tied_noise(n),
        ties="average",
        seeds=4,
    )
    noise = result.noise
    assert not noise.leak  # averaged over the ties it is a random ranking of the 50
    assert noise.file_order_noise == pytest.approx(1.0)
    assert noise.file_order_leak
    reason = next(r for r in result.reasons if r.code == "noise_tie_leak")
    assert reason.severity == "broken" and result.verdict == "broken"
    assert "own order scores 1" in reason.message and "tie leak" in reason.message


# ------------------------------------------------------------- 8. the Check 2 gauge


def _layers(spec):
    """The layers, each with its data (Altair moves data the layers share to the top)."""
    return [
        {"data": spec["data"], **layer} if "data" not in layer and "data" in spec else layer
        for layer in spec.get("layer", [spec])
    ]


def test_check2_gauge_has_a_one_sided_band_and_hides_an_interval_touching_zero():
    n = 30
    rng = np.random.default_rng(3)
    rows = []
    for i in range(n):
        order = rng.permutation([f"d{j}" for j in range(8)] + ["z"]).tolist()
        for rank, doc in enumerate(order, 1):
            rows.append((f"q{i}", doc, rank, float(100 - rank)))
    result = check_tables(
        None, _qrels(n, gold="z"), pool=PoolSpec(corpus_size=9), noise_run=_run(rows), seeds=4
    )
    spec = charts.result_charts(result)["check2_gauge"].to_dict()
    data = _layers(spec)[0]["data"]["values"][0]
    domain = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    # One-sided: the shaded pass region starts at the axis' left edge.
    assert data["band_low"] == pytest.approx(domain[0])
    assert data["band_high"] == pytest.approx(Thresholds().ratio_band[1])
    assert "passes up to" in data["band_label"]
    assert not result.noise.leak and "passes" in data["label"]

    zero = charts.ratio_gauge(
        0.4, 0.0, 1.9, title="Check 2", passed=True, band=(0.8, 1.25), one_sided=True
    ).to_dict()
    marks = [layer["mark"]["type"] for layer in zero["layer"]]
    assert marks.count("rule") == 1  # the reference only: no interval bar from 0
    assert "not drawn" in _layers(zero)[0]["data"]["values"][0]["label"]


def test_the_gauge_says_fails_where_the_rule_fails():
    spec = charts.ratio_gauge(
        3.0, 2.0, 4.0, title="Check 2", passed=False, band=(0.8, 1.25), one_sided=True
    ).to_dict()
    label = _layers(spec)[0]["data"]["values"][0]["label"]
    assert "fails" in label and "passes" not in label


def test_a_gold_class_of_one_query_gets_no_zero_width_interval():
    # q0 has 3 gold items, the others 1: the class G = 3 holds one query.
    n = 20
    qrels = pa.table(
        {
            "qid": ["q0", "q0", "q0"] + [f"q{i}" for i in range(1, n)],
            "docid": ["g", "h", "i"] + ["g"] * (n - 1),
            "rel": [1] * (n + 2),
        }
    )
    result = check_tables(None, qrels, pool=PoolSpec(corpus_size=30), seeds=16)
    single = next(c for c in result.inferred_n.by_gold if c.gold == 3)
    assert single.n_queries == 1
    assert not single.high > single.low  # no interval at all, honestly NaN
    assert math.isnan(single.low) and math.isnan(single.high)
    assert math.isfinite(single.estimate)


# --------------------------------------------------------------------------- Floors


def test_pools_smaller_than_the_judged_count_work_for_ndcg(tmp_path):
    qrels = pa.table(
        {"qid": ["q1", "q1", "q1", "q2"], "docid": ["a", "b", "c", "d"], "rel": [2, 1, 3, 1]}
    )
    sizes = tmp_path / "pools.tsv"
    sizes.write_text("qid\tpool_size\nq1\t2\nq2\t5\n", encoding="utf-8")
    pools = read_pools(sizes)
    result = check_tables(None, qrels, pool=PoolSpec(pools=pools), metric="ndcg@10", seeds=8)
    # q1: a pool of 2 holding the two best-graded judged items (3 and 2), the ideal DCG over
    # all three judged grades.
    direct = noise_floor("ndcg@10", 2, 2, gains=[[3, 2]], judged_gains=[[3, 2, 1]])
    assert result.floor.expected[0] == pytest.approx(direct.expected[0])
    assert result.floor.ceiling[0] == pytest.approx(direct.ceiling[0])
    assert result.harness.passed


def _exact_ap_variance(n, g, k):
    h = sum(Fraction(1, i) for i in range(1, k + 1))
    h2 = sum(Fraction(1, i * i) for i in range(1, k + 1))

    def p(m):
        out = Fraction(1)
        for i in range(m):
            out *= Fraction(g - i, n - i) if g > i else 0
        return out

    c = (
        h2,
        2 * h * h + 3 * h - 5 * h2,
        2 * h * k - 5 * h * h - 9 * h + 7 * h2 + 5 * k,
        k * k - 2 * h * k + 3 * h * h - 5 * k + 6 * h - 3 * h2,
    )
    first = h * p(1) + (k - h) * p(2)
    second = sum(cm * p(m) for m, cm in enumerate(c, 1))
    return (second - first * first) / (g * g)


@pytest.mark.parametrize(
    ("n", "g", "k"),
    [
        (10**8, 10**8 - 1, 1500),
        (10**8, 10**8 - 2, 800),
        (10**7, 10**7 - 1, 1000),
        (10**6, 10**6 - 3, 500),
        (100, 99, 100),
        (12, 5, 12),
        (4, 4, 4),
    ],
)
def test_ap_variance_matches_exact_rationals_near_all_gold(n, g, k):
    exact = _exact_ap_variance(n, g, k)
    got = noise_floor(f"ap@{k}", n, g).variance[0]
    if exact == 0:
        assert got == 0.0
    else:
        assert abs(Fraction(float(got)) - exact) / exact < 1e-13


@pytest.mark.parametrize("n", [10**6, 10**7])
def test_full_depth_ap_std_at_one_non_gold_item(n):
    # With one non-gold item at a uniform position u, R·AP = N - 1 - H_N + H_u, so
    # Var[AP] = Var[H_u] / (N - 1)^2.
    h = np.cumsum(1.0 / np.arange(1, n + 1))
    reference = math.sqrt(float(np.var(h))) / (n - 1)
    floor = noise_floor("ap", n, n - 1)
    assert floor.std[0] == pytest.approx(reference, rel=1e-9)
    exact_mean = (math.fsum(1.0 / np.arange(1, n + 1)) + (n - 2) / (n - 1) * (n - h[-1])) / n
    assert floor.expected[0] == pytest.approx(exact_mean, rel=1e-12)


def test_floor_cli_takes_graded_gains_with_judged_items_outside_the_pool(capsys):
    code, out, err = run_cli(
        capsys,
        "floor",
        "ndcg@10",
        "-N",
        100,
        "--gains",
        "3,1",
        "--judged-gains",
        "3,2,1",
        "--json",
    )
    assert code == 0, err
    record = json.loads(out)
    direct = noise_floor("ndcg@10", 100, 2, gains=[[3, 1]], judged_gains=[[3, 2, 1]])
    assert record["judged"] == 3 and record["judged_gains"] == [3, 2, 1]
    assert record["expected"] == pytest.approx(direct.expected[0])
    assert record["ceiling"] == pytest.approx(direct.ceiling[0])
    assert record["ceiling"] < 1


def test_floor_cli_names_its_own_option_when_graded_gains_lack_the_outside_grades(capsys):
    code, _, err = run_cli(capsys, "floor", "ndcg@10", "-N", 100, "--gains", "3,1", "--judged", 3)
    assert code == 2
    assert "--judged-gains" in err and "'judged_gains'" not in err


# ---------------------------------------------------------------------------- Power


def test_power_with_a_second_run_uses_the_paired_differences():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, 200)
    b = np.clip(a + rng.normal(0, 0.1, 200), 0, 1)
    paired = power(a, Thresholds(), b, "b")
    alone = power(a, Thresholds())
    d = np.var(a - b, ddof=1)
    assert paired.difference_variance == pytest.approx(d)
    assert paired.queries_needed == stats.topic_set_size(0.05, d)
    assert paired.paired_with == "b" and "observed" in paired.assumption
    assert alone.difference_variance == pytest.approx(2 * np.var(a, ddof=1))
    assert alone.paired_with is None and "assumption" in alone.assumption


def test_power_on_cranfield_comes_from_the_paired_differences(capsys):
    common = [
        "check",
        "--run",
        CRANFIELD / "run_dense.trec",
        "--qrels",
        CRANFIELD / "qrels.txt",
        "--units",
        CRANFIELD / "chunks.tsv",
        "--metric",
        "mrr@10",
        "--seeds",
        "16",
        "--format",
        "json",
    ]
    _, out, _ = run_cli(capsys, *common[:3], "--run", CRANFIELD / "run_bm25.trec", *common[3:])
    paired = json.loads(out)["power"]
    assert paired["paired_with"] == "run_bm25.trec"
    assert 380 <= paired["queries_needed"] <= 450  # twice dense's variance needs 899
    assert paired["min_detectable_difference"] < 0.08
    _, out, _ = run_cli(capsys, *common)
    alone = json.loads(out)["power"]
    assert alone["paired_with"] is None and alone["queries_needed"] == 899
    assert "no second run" in alone["assumption"]
