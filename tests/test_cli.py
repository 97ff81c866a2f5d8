"""The command line: its output, its exit codes (0 ok, 1 gate failed, 2 bad input) and messages."""

import csv
import json
import re

import pytest
from conftest import CRANFIELD, WRITEUP

from evalvalidity.cli import main
from evalvalidity.core.floors import noise_floor


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_floor_prints_expected_std_and_ceiling(capsys):
    code, out, _ = run_cli(capsys, "floor", "mrr@10", "--pool-size", 8, "--gold", 5)
    assert code == 0
    assert "rr@10 with N=8, G=5" in out
    assert "expected  0.793" in out
    assert "ceiling   1" in out
    assert "random ranker scores 79.3 % of the ceiling" in out


def test_floor_json_matches_the_library(capsys):
    code, out, _ = run_cli(
        capsys, "floor", "ndcg@10", "--pool-size", 20, "--gains", "3,2,1", "--json"
    )
    assert code == 0
    data = json.loads(out)
    exact = noise_floor("ndcg@10", 20, 3, gains=[[3, 2, 1]])
    assert data["metric"] == "ndcg@10"
    assert data["gold"] == 3
    assert data["expected"] == pytest.approx(float(exact.expected[0]), rel=1e-15)
    assert data["std"] == pytest.approx(float(exact.std[0]), rel=1e-15)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["floor", "mrr@ten", "--pool-size", "8", "--gold", "1"],
            "Cannot read the metric 'mrr@ten'",
        ),
        (["floor", "mrr@10", "--pool-size", "8"], "Give --gold G (or --gains for nDCG)."),
        (
            ["floor", "ndcg@10", "--pool-size", "8", "--gold", "2", "--gains", "3"],
            "--gains lists 1 grades but --gold is 2",
        ),
        (
            ["floor", "p@5", "--pool-size", "8", "--gains", "a,b"],
            "--gains must be comma-separated whole numbers such as 3,2,1. Got 'a,b' instead.",
        ),
    ],
)
def test_floor_bad_input_exits_2_with_a_message(capsys, argv, message):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert message in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["floor"])
    assert info.value.code == 2
    assert "required" in capsys.readouterr().err


def test_score_text_shows_floor_beside_score(capsys):
    code, out, _ = run_cli(
        capsys,
        "score",
        "--run",
        CRANFIELD / "run_dense.trec",
        "--run",
        CRANFIELD / "run_hybrid_noise.trec",
        "--qrels",
        CRANFIELD / "qrels.txt",
        "--units",
        CRANFIELD / "chunks.tsv",
        "--metric",
        "mrr@10",
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["run", "metric", "score", "floor", "score/floor"]
    dense = next(line for line in lines if line.startswith("run_dense.trec"))
    assert dense.split()[1:3] == ["rr@10", "0.4992"]
    assert any(line.startswith("run_hybrid_noise.trec") and "0.2669" in line for line in lines)


def test_score_trec_format_uses_trec_eval_names(capsys):
    code, out, _ = run_cli(
        capsys,
        "score",
        "--run",
        WRITEUP / "toy" / "model.trec",
        "--qrels",
        WRITEUP / "toy" / "qrels.txt",
        "-m",
        "rr,p@5,ndcg@10,ap,rr@10",
        "--per-query",
        "--format",
        "trec",
    )
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    names = {r[0].strip() for r in rows}
    assert names == {"recip_rank", "P_5", "ndcg_cut_10", "map", "rr@10"}
    alls = [r for r in rows if r[1] == "all"]
    assert len(alls) == 5
    assert sum(1 for r in rows if r[0].strip() == "P_5") == 21


def test_score_json_lists_unranked_queries(capsys, tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 t\nq9 Q0 z 1 1.0 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n")
    code, out, _ = run_cli(
        capsys, "score", "--run", run, "--qrels", qrels, "-m", "p@1", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)["runs"][0]
    assert data["means"]["p@1"] == 0.5
    assert data["unranked_queries"] == ["q2"]
    assert data["unjudged_queries"] == ["q9"]
    code, out, _ = run_cli(
        capsys,
        "score",
        "--run",
        run,
        "--qrels",
        qrels,
        "-m",
        "p@1",
        "--format",
        "json",
        "--skip-unranked",
    )
    assert json.loads(out)["runs"][0]["means"]["p@1"] == 1.0


def test_score_bad_file_names_file_and_line(capsys, tmp_path):
    run = tmp_path / "runs.trec"
    run.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    code, _, err = run_cli(capsys, "score", "--run", run, "--qrels", qrels)
    assert code == 2
    assert "runs.trec" in err and ":2" in err and "expected 6 fields" in err


def test_check_gates_on_the_verdict(capsys):
    d = WRITEUP / "pool8"
    base = [
        "check",
        "--run",
        d / "model.trec",
        "--qrels",
        d / "qrels.txt",
        "--pools",
        d / "pools.tsv",
    ]
    code, out, _ = run_cli(capsys, *base)
    assert code == 1
    assert out.startswith("verdict: BROKEN")
    code, _, _ = run_cli(capsys, *base, "--fail-on", "never")
    assert code == 0
    d = WRITEUP / "toy"
    code, out, _ = run_cli(
        capsys,
        "check",
        "--run",
        d / "model.trec",
        "--qrels",
        d / "qrels.txt",
        "--pool-size",
        200,
        "--seeds",
        20,
        "--format",
        "json",
    )
    assert code == 0
    assert json.loads(out)["verdict"] == "healthy"


def test_check_markdown_fits_a_pull_request_comment(capsys, tmp_path):
    d = WRITEUP / "unitsbug"
    out_file = tmp_path / "comment.md"
    code, out, _ = run_cli(
        capsys,
        "check",
        "--run",
        d / "model.trec",
        "--qrels",
        d / "qrels.txt",
        "--units",
        d / "units.tsv",
        "--analytic-unit",
        "chunks",
        "--harness-output",
        d / "harness.csv",
        "--format",
        "markdown",
        "--output",
        out_file,
    )
    assert code == 1
    assert out.startswith("### ❌ Benchmark health: **broken**")
    assert "counts documents (≈ 218), not chunks (1,052)" in out
    assert out_file.read_text(encoding="utf-8") == out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--pool-size", "10", "--pools", "x.tsv"],
            "Declare the pool one way only; got --pool-size and --pools.",
        ),
        ([], "Declare the pool: --pool-size N, --pools FILE, --candidates FILE or --units FILE."),
        (["--pool-size", "10", "--seeds", "many"], "--seeds must be 'auto' or a whole number."),
        (
            ["--pool-size", "10", "--analytic-unit", "chunks"],
            "--analytic-unit chunks needs --units FILE.",
        ),
    ],
)
def test_check_bad_usage_exits_2(capsys, extra, message):
    d = WRITEUP / "toy"
    code, _, err = run_cli(
        capsys, "check", "--run", d / "model.trec", "--qrels", d / "qrels.txt", *extra
    )
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    "seeds",
    # 60 runs through the scorer one by one take a minute on a busy machine: the fast variant
    # checks the same path with fewer seeds (a wider interval, the same verdict).
    [pytest.param(12, id="12-seeds"), pytest.param(60, id="60-seeds", marks=pytest.mark.slow)],
)
def test_random_runs_scored_by_a_harness_pass_check1(capsys, tmp_path, seeds):
    d = WRITEUP / "toy"
    out_dir = tmp_path / "noise"
    code, out, _ = run_cli(
        capsys,
        "random-runs",
        "--qrels",
        d / "qrels.txt",
        "--pool-size",
        200,
        "--seeds",
        seeds,
        "--depth",
        10,
        "--out",
        out_dir,
    )
    assert code == 0 and f"wrote {seeds} runs" in out
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["seeds"] == seeds and len(manifest["runs"]) == seeds
    # The "team's harness" here is this package's own scorer, run on each noise file.
    harness = tmp_path / "harness.csv"
    with harness.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["seed", "qid", "value"])
        for seed, name in enumerate(manifest["runs"]):
            code, out, _ = run_cli(
                capsys,
                "score",
                "--run",
                out_dir / name,
                "--qrels",
                d / "qrels.txt",
                "-m",
                "rr@10",
                "-q",
                "--format",
                "trec",
            )
            assert code == 0
            for line in out.splitlines():
                _measure, qid, value = (part.strip() for part in line.split("\t"))
                if qid != "all":
                    writer.writerow([seed, qid, value])
    code, out, _ = run_cli(
        capsys,
        "check",
        "--run",
        d / "model.trec",
        "--qrels",
        d / "qrels.txt",
        "--pool-size",
        200,
        "--harness-output",
        harness,
        "--format",
        "json",
    )
    data = json.loads(out)
    assert data["checks"]["harness"]["source"] == "harness-output"
    assert data["checks"]["harness"]["passed"], data["checks"]["harness"]
    assert data["checks"]["harness"]["n_seeds"] == seeds
    assert code == 0


# --------------------------------------------------------------------------- metric spellings

#: Each canonical metric with its trec_eval and ir_measures spellings (trec_eval has no
#: relevance threshold, and its recip_rank has no cutoff).
SPELLINGS = {
    "p@10": ["P_10", "P@10"],
    "p@10[rel>=2]": ["P(rel=2)@10"],
    "ndcg@10": ["ndcg_cut_10", "nDCG@10"],
    "r@100": ["recall_100", "R@100"],
    "ap@10": ["map_cut_10", "AP@10"],
    "ap": ["map", "AP"],
    "hit@10": ["success_10", "Success@10"],
    "rr": ["recip_rank", "RR"],
    "rr@10": ["RR@10", "mrr@10"],
    "rprec": ["Rprec"],
}
UNITS = CRANFIELD / "chunks.tsv"


@pytest.fixture(scope="module")
def cranfield_head(tmp_path_factory):
    """The first 12 Cranfield queries (graded judgements, chunks deduplicated to documents)."""
    keep = {str(q) for q in range(1, 13)}
    out = tmp_path_factory.mktemp("cranfield12")
    for name in ("run_bm25.trec", "qrels.txt"):
        lines = (CRANFIELD / name).read_text(encoding="utf-8").splitlines(keepends=True)
        (out / name).write_text("".join(x for x in lines if x.split()[0] in keep), "utf-8")
    return out


def _means(capsys, *argv):
    code, out, err = run_cli(capsys, "score", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)["runs"][0]["means"]


def test_score_takes_every_spelling_and_answers_in_canonical_names(capsys):
    c = CRANFIELD
    inputs = ["--run", c / "run_bm25.trec", "--qrels", c / "qrels.txt", "--units", UNITS]
    means = _means(capsys, *inputs, "-m", ",".join(SPELLINGS))
    assert list(means) == list(SPELLINGS)
    assert means["p@10[rel>=2]"] < means["p@10"]  # the threshold is applied
    assert means["rr@10"] == pytest.approx(0.496, abs=5e-4)  # data/cranfield/README.md
    for canonical, spellings in SPELLINGS.items():
        for spelling in spellings:
            assert _means(capsys, *inputs, "-m", spelling) == {canonical: means[canonical]}
    # the brief's two lists, as one argument and as repeated -m
    trec = "P_10,ndcg_cut_10,recall_100,map_cut_10,success_10,recip_rank,Rprec"
    got = _means(capsys, *inputs, "-m", trec)
    assert list(got) == ["p@10", "ndcg@10", "r@100", "ap@10", "hit@10", "rr", "rprec"]
    assert got == {m: means[m] for m in got}
    irm = ["nDCG@10", "P(rel=2)@10", "RR@10", "R@100", "AP", "Success@10", "Rprec"]
    got = _means(capsys, *inputs, *[x for m in irm for x in ("-m", m)])
    assert list(got) == ["ndcg@10", "p@10[rel>=2]", "rr@10", "r@100", "ap", "hit@10", "rprec"]
    assert got == {m: means[m] for m in got}
    code, text, _ = run_cli(capsys, "score", *inputs, "-m", "nDCG@10", "-m", "P(rel=2)@10")
    assert code == 0
    assert "ndcg@10" in text and "p@10[rel>=2]" in text and "nDCG" not in text
    code, text, _ = run_cli(capsys, "score", *inputs, "-m", "nDCG@10,R@100", "--format", "trec")
    assert code == 0
    assert [line.split()[0] for line in text.splitlines()] == ["ndcg_cut_10", "recall_100"]


def _check(capsys, d, metric):
    code, out, err = run_cli(
        capsys,
        "check",
        "--run",
        d / "run_bm25.trec",
        "--qrels",
        d / "qrels.txt",
        "--units",
        UNITS,
        "--seeds",
        5,
        "--fail-on",
        "never",
        "--format",
        "json",
        "-m",
        metric,
    )
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("canonical", list(SPELLINGS))
def test_check_takes_m_in_every_spelling(capsys, cranfield_head, canonical):
    expected = _check(capsys, cranfield_head, canonical)
    assert expected["metric"] == canonical
    assert expected["n_queries"] == 12
    keys = ("metric", "model_score", "floor", "ceiling", "verdict")
    for spelling in SPELLINGS[canonical]:
        got = _check(capsys, cranfield_head, spelling)
        assert {k: got[k] for k in keys} == {k: expected[k] for k in keys}, spelling
        assert got["plan"]["metric"] == canonical


def test_check_text_names_the_metric_canonically_and_takes_one(capsys, cranfield_head):
    d = cranfield_head
    argv = ["check", "--run", d / "run_bm25.trec", "--qrels", d / "qrels.txt"]
    argv += ["--units", UNITS, "--seeds", 5, "--fail-on", "never"]
    code, out, _ = run_cli(capsys, *argv, "-m", "nDCG@10")
    assert code == 0
    assert "ndcg@10" in out and "nDCG" not in out
    code, _, err = run_cli(capsys, *argv, "-m", "nDCG@10,P_10")
    assert code == 2
    assert "check takes one metric; got 'nDCG@10,P_10'." in err


def test_a_streamed_run_is_checked_for_duplicates_once_by_the_reader(capsys, monkeypatch, tmp_path):
    from evalvalidity.io import scoring
    from evalvalidity.io._verified import has_unique_pairs
    from evalvalidity.io.ingest import _read

    marked = []
    real_score_run = scoring.score_run

    def spy(run, *args, **kwargs):
        marked.append(has_unique_pairs(run))
        return real_score_run(run, *args, **kwargs)

    monkeypatch.setattr(scoring, "score_run", spy)
    monkeypatch.setattr(_read, "STREAM_THRESHOLD_BYTES", 0)  # every file is "large"
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d2 1\nq2 0 d1 1\n", encoding="utf-8")
    good = tmp_path / "good.trec"
    good.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 1.0 t\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "score", "--run", good, "--qrels", qrels, "-m", "rr@10")
    assert code == 0
    assert marked == [True]  # the scorer does not sort the pairs' hashes again
    assert re.search(r"rr@10\s+0\.7500", out)
    twice = tmp_path / "twice.trec"
    twice.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "score", "--run", twice, "--qrels", qrels)
    assert code == 2
    assert "twice.trec" in err and "already ranked on line 1" in err
    assert marked == [True]  # refused by the reader, before the scorer


def test_score_streams_a_large_run_through_parquet_with_the_same_numbers(
    capsys, monkeypatch, tmp_path
):
    from evalvalidity.io import scoring
    from evalvalidity.io.ingest import _read

    d = WRITEUP / "toy"
    argv = ["--run", d / "model.trec", "--qrels", d / "qrels.txt", "-m", "rr@10,ndcg@10,ap"]
    in_memory = _means(capsys, *argv)
    seen = []
    real_score_run = scoring.score_run

    def spy(run, *args, **kwargs):
        seen.append((type(run).__name__, kwargs.get("memory_limit")))
        return real_score_run(run, *args, **kwargs)

    monkeypatch.setattr(scoring, "score_run", spy)
    monkeypatch.setattr(_read, "STREAM_THRESHOLD_BYTES", 0)  # every file is "large"
    assert _means(capsys, *argv) == in_memory
    assert seen == [("FileSystemDataset", "2GB")]
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 1.0 t\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "score", "--run", bad, "--qrels", d / "qrels.txt")
    assert code == 2
    assert "bad.trec" in err and ":2" in err
