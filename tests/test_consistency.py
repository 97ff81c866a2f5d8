"""Inputs that do not belong together: refused with a message naming both, or warned about."""

import itertools
import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import CRANFIELD, WRITEUP
from hypothesis import given, settings
from hypothesis import strategies as st

from evalvalidity.analysis.check import check_tables
from evalvalidity.analysis.plan import PoolSpec
from evalvalidity.cli import main
from evalvalidity.errors import InputDataError


def _qrels(n, gold="g"):
    return pa.table({"qid": [f"q{i}" for i in range(n)], "docid": [gold] * n, "rel": [1] * n})


def _run(n, gold_at=1, depth=5, prefix="q", gold="g"):
    rows = [
        (f"{prefix}{i}", gold if r == gold_at else f"x{i}-{r}", float(depth - r))
        for i in range(n)
        for r in range(1, depth + 1)
    ]
    qid, docid, score = zip(*rows, strict=True)
    return pa.table({"qid": list(qid), "docid": list(docid), "score": list(score)})


CORPUS = PoolSpec(corpus_size=100)


def _codes(result):
    return {r.code: r for r in result.reasons}


def test_a_run_of_other_queries_is_refused_naming_both():
    with pytest.raises(InputDataError) as caught:
        check_tables(_run(3, prefix="other"), _qrels(4), pool=CORPUS, seeds=2)
    assert str(caught.value) == (
        "The run 'run' and the judgements 'qrels' share no query: the run ranks 3 queries "
        "(first: 'other0', 'other1', 'other2'), the judgements judge 4 (first: 'q0', 'q1', "
        "'q2', ...). Choose the judgements made for this run."
    )


def test_a_run_covering_few_judged_queries_warns_with_the_share():
    result = check_tables(_run(3), _qrels(10), pool=CORPUS, seeds=2)
    reason = _codes(result)["run_queries_unjudged"]
    assert reason.severity == "warning"
    assert result.verdict != "healthy"
    assert reason.numbers == {"shared": 3, "total": 10, "share": 0.3}
    assert "Only 3 of the 10 judged queries (30.0%) have a ranking in the run 'run'" in (
        reason.message
    )
    half = check_tables(_run(5), _qrels(10), pool=CORPUS, seeds=2)
    assert "run_queries_unjudged" not in _codes(half)


def test_a_run_that_retrieves_nothing_relevant_warns_it_scores_zero():
    result = check_tables(_run(4, gold_at=None), _qrels(4), pool=CORPUS, seeds=2)
    assert _codes(result)["run_scores_zero"].severity == "warning"
    assert result.headroom.model == 0.0
    fine = check_tables(_run(4, gold_at=3), _qrels(4), pool=CORPUS, seeds=2)
    assert "run_scores_zero" not in _codes(fine)


def test_a_noise_run_of_other_queries_is_refused_and_a_partial_one_warned():
    with pytest.raises(InputDataError, match=r"^The noise run 'noise run' and the model's run"):
        check_tables(
            _run(4), _qrels(4), pool=CORPUS, noise_run=_run(4, prefix="z", gold_at=None), seeds=2
        )
    result = check_tables(
        _run(10), _qrels(10), pool=CORPUS, noise_run=_run(2, gold_at=None), seeds=2
    )
    reason = _codes(result)["noise_queries_differ"]
    assert reason.numbers["shared"] == 2 and reason.numbers["total"] == 10
    assert "ranks only 2 of the 10 queries (20.0%)" in reason.message


def test_a_comparison_run_that_scores_zero_is_a_warning_not_a_silent_row():
    result = check_tables(
        _run(4), _qrels(4), pool=CORPUS, other_runs={"bm25": _run(4, gold_at=None)}, seeds=2
    )
    reason = _codes(result)["compare_scores_zero"]
    assert reason.numbers == {"run": "bm25", "relevant_retrieved": 0}
    assert "The run to compare 'bm25' retrieves no item judged relevant" in reason.message
    with pytest.raises(InputDataError, match="^The run to compare 'b' and the model's run"):
        check_tables(
            _run(4), _qrels(4), pool=CORPUS, other_runs={"b": _run(4, prefix="z")}, seeds=2
        )


def test_ids_outside_the_units_map_and_the_candidates_are_refused():
    units = pa.table({"chunk_id": ["c1", "c2"], "doc_id": ["g", "h"]})
    with pytest.raises(InputDataError) as caught:
        check_tables(_run(2), _qrels(2), pool=PoolSpec(units=units), seeds=2)
    assert str(caught.value).startswith(
        "None of the 9 ids ranked in the run 'run' is a chunk of the units map 'units' "
        "(the run ranks 'g', 'x0-2', 'x0-3', ...; the map's chunks are 'c1', 'c2')"
    )
    cands = pa.table({"qid": ["q0", "q1"], "docid": ["a", "b"]})
    with pytest.raises(InputDataError, match="^None of the items ranked in the run 'run' is a"):
        check_tables(_run(2), _qrels(2), pool=PoolSpec(candidates=cands), seeds=2)


def test_cli_refuses_another_benchmarks_units_map_with_exit_2(capsys):
    code = main(
        [
            "check",
            "--run",
            str(CRANFIELD / "run_dense.trec"),
            "--qrels",
            str(CRANFIELD / "qrels.txt"),
            "--units",
            str(WRITEUP / "unitsbug" / "units.tsv"),
            "--seeds",
            "2",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 2
    assert "is a chunk of the units map" in err
    assert "run_dense.trec" in err and "units.tsv" in err


def test_cli_refuses_a_noise_run_of_another_benchmark(capsys):
    code = main(
        [
            "check",
            "--run",
            str(WRITEUP / "toy" / "model.trec"),
            "--qrels",
            str(WRITEUP / "toy" / "qrels.txt"),
            "--noise-run",
            str(CRANFIELD / "run_noise.trec"),
            "--pool-size",
            "200",
            "--seeds",
            "2",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 2, err
    assert "run_noise.trec" in err and "share no query" in err


def test_cli_json_carries_the_comparison_warning(capsys, tmp_path):
    junk = tmp_path / "junk.trec"
    junk.write_text(
        "".join(
            f"q{q:02d} Q0 nothing{r} {r} {10 - r} junk\n" for q in range(1, 21) for r in range(3)
        )
    )
    d = WRITEUP / "toy"
    code = main(
        [
            "check",
            "--run",
            str(d / "model.trec"),
            "--run",
            str(junk),
            "--qrels",
            str(d / "qrels.txt"),
            "--pool-size",
            "200",
            "--seeds",
            "2",
            "--format",
            "json",
            "--fail-on",
            "never",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    codes = {r["code"]: r for r in json.loads(out)["reasons"]}
    assert codes["compare_scores_zero"]["severity"] == "warning"


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.none(), st.sampled_from(["q1", "q2", "q10", "", "q\x00"])), max_size=40
    ),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_distinct_ids_are_arrows_unique_values_in_their_order(values, cuts):
    # grouped or not, chunked anyhow, with or without nulls: the values that differ from the one
    # above give the same distinct values, in the same order, as every row
    from evalvalidity.analysis.consistency import _distinct

    edges = sorted({0, len(values), *(c for c in cuts if c <= len(values))})
    column = pa.chunked_array(
        [pa.array(values[a:b], pa.string()) for a, b in itertools.pairwise(edges)] or [[]],
        pa.string(),
    )
    expected = pc.drop_null(pc.unique(column.combine_chunks()))
    assert _distinct(column).to_pylist() == expected.to_pylist()
