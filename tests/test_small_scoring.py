"""A small, clean run is scored in Python: the same ScoreResult as the SQL path, or the SQL path.

:func:`evalvalidity.io.scoring.score_run` finds the hits of a run and judgements of at most
``SMALL_ROWS`` rows without DuckDB. Forcing ``SMALL_ROWS`` below every table's size sends the
same call through DuckDB's SQL: both must give the same values, ids and counts, on runs full of
ties (few distinct scores, -0.0 beside 0.0, infinities), ids that sort differently by byte than
by any locale, graded and non-relevant judgements, unranked and unjudged queries.
"""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalvalidity.errors import InputDataError
from evalvalidity.io import _small_scoring
from evalvalidity.io._small_scoring import SMALL_ROWS, small_hits
from evalvalidity.io.scoring import score_run
from evalvalidity.io.tables import conform

METRICS = "rr@10, rr, hit@3, p@5, r@10, rprec, ap, ap@5, ndcg@10, ndcg, ndcg_exp@5, p@5[rel>=2]"
IDS = ["a", "b", "B", "é", "z", "a\x00", "日本", "\U0001f600", "10", "9", " x"]
SCORES = [0.0, -0.0, 1.0, 1.0, 2.5, -3.0, float("inf"), float("-inf"), 1e-300]


def _fields(result):
    return (
        result.qids.tolist(),
        {name: values.tolist() for name, values in result.values.items()},
        dict(result.means),
        result.unranked_qids,
        result.unjudged_qids,
        result.n_ranked_rows,
        result.n_dedup_dropped,
    )


def _both(monkeypatch, run, qrels, **kwargs):
    """(the small path's fields, the SQL path's fields) of one call."""
    small = score_run(run, qrels, METRICS, **kwargs)
    with monkeypatch.context() as patched:
        patched.setattr(_small_scoring, "SMALL_ROWS", -1)
        sql = score_run(run, qrels, METRICS, **kwargs)
    return _fields(small), _fields(sql)


@st.composite
def tables(draw):
    queries = draw(
        st.lists(
            st.sampled_from(["q1", "q2", "Q", "q10", "é"]), min_size=1, max_size=4, unique=True
        )
    )
    run_rows = []
    for qid in queries:
        docs = draw(st.lists(st.sampled_from(IDS), max_size=len(IDS), unique=True))
        scores = draw(st.lists(st.sampled_from(SCORES), min_size=len(docs), max_size=len(docs)))
        ranks = draw(st.permutations(list(range(1, len(docs) + 1))))
        run_rows += [(qid, d, s, r) for d, s, r in zip(docs, scores, ranks, strict=True)]
    judged = draw(
        st.lists(
            st.sampled_from(["q1", "q2", "Q", "q10", "é", "only"]),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    qrels_rows = []
    for qid in judged:
        docs = draw(st.lists(st.sampled_from([*IDS, "unretrieved"]), max_size=5, unique=True))
        qrels_rows += [(qid, d, draw(st.integers(-1, 3))) for d in docs]
        if docs and draw(st.booleans()):  # an identical repeated judgement is merged
            qrels_rows.append(qrels_rows[-1])
    if not qrels_rows:
        qrels_rows = [(judged[0], "a", 1)]
    run = pa.table(
        {
            "qid": [r[0] for r in run_rows],
            "docid": [r[1] for r in run_rows],
            "score": pa.array([r[2] for r in run_rows], pa.float64()),
            "rank": pa.array([r[3] for r in run_rows], pa.int64()),
        }
    )
    qrels = pa.table(
        {
            "qid": [r[0] for r in qrels_rows],
            "docid": [r[1] for r in qrels_rows],
            "rel": pa.array([r[2] for r in qrels_rows], pa.int64()),
        }
    )
    return run, qrels


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=tables(),
    ties=st.sampled_from(["trec_eval", "given", "average"]),
    unranked=st.sampled_from(["zero", "skip"]),
)
def test_the_small_path_scores_as_the_sql_path(monkeypatch, data, ties, unranked):
    run, qrels = data
    try:
        small, sql = _both(monkeypatch, run, qrels, ties=ties, unranked=unranked)
    except InputDataError as exc:  # nothing to score: both paths must say so
        with monkeypatch.context() as patched:
            patched.setattr(_small_scoring, "SMALL_ROWS", -1)
            with pytest.raises(InputDataError) as sql_error:
                score_run(run, qrels, METRICS, ties=ties, unranked=unranked)
        assert str(sql_error.value) == str(exc)
        return
    assert small == sql


def test_the_small_path_is_taken_and_finds_what_the_sql_finds():
    run = conform(
        pa.table(
            {
                "qid": ["1", "1", "1", "2"],
                "docid": ["a", "b", "c", "a"],
                "score": [1.0, 1.0, 0.5, 3.0],
                "rank": [3, 1, 2, 1],
            }
        ),
        "run",
    )
    qrels = conform(
        pa.table({"qid": ["1", "1", "3"], "docid": ["a", "c", "x"], "rel": [2, 1, 0]}), "qrels"
    )
    found = small_hits(run, qrels, "trec_eval", "zero")
    assert found is not None
    assert (found.qids, found.unranked_qids, found.unjudged_qids) == (["1", "3"], ["3"], ["2"])
    # score 1.0 ties a and b: b (docid descending) is first, a second, c third
    assert sorted(
        zip(found.query.tolist(), found.position.tolist(), found.grade.tolist(), strict=True)
    ) == [
        (0, 2, 2),
        (0, 3, 1),
    ]
    assert found.n_ranked_rows == 3
    given_order = small_hits(run, qrels, "given", "zero")
    assert sorted(given_order.position.tolist()) == [2, 3]  # a at rank 3, c at rank 2
    averaged = small_hits(run, qrels, "average", "skip")
    assert averaged.qids == ["1"]
    assert sorted(zip(averaged.tie_start.tolist(), averaged.tie_size.tolist(), strict=True)) == [
        (1, 2),
        (3, 1),
    ]


def _run(n_rows):
    return conform(
        pa.table(
            {
                "qid": ["1"] * n_rows,
                "docid": [f"d{i}" for i in range(n_rows)],
                "score": np.arange(n_rows, dtype=np.float64),
            }
        ),
        "run",
    )


QRELS = conform(pa.table({"qid": ["1"], "docid": ["d0"], "rel": [1]}), "qrels")


@pytest.mark.parametrize(
    ("run", "qrels", "ties"),
    [
        (_run(SMALL_ROWS), QRELS, "trec_eval"),  # too large with the judgements
        (pa.concat_tables([_run(3), _run(3)]), QRELS, "trec_eval"),  # a document twice
        (_run(3).set_column(2, "score", pa.array([1.0, float("nan"), 2.0])), QRELS, "average"),
        (
            _run(3).set_column(2, "score", pa.array([1.0, None, 2.0], pa.float64())),
            QRELS,
            "trec_eval",
        ),
        (_run(3), QRELS, "given"),  # no rank column
        (_run(3).set_column(3, "rank", pa.array([1, 1, 2])), QRELS, "given"),  # one rank twice
        (
            _run(3),
            conform(pa.table({"qid": ["1", "1"], "docid": ["d0", "d0"], "rel": [1, 2]}), "qrels"),
            "trec_eval",
        ),  # conflicting grades
    ],
)
def test_whatever_the_sql_path_refuses_or_reports_is_left_to_it(run, qrels, ties):
    assert small_hits(run, qrels, ties, "zero") is None


def test_a_judged_query_the_run_never_ranks_is_scored_zero_on_the_small_path():
    qrels = conform(pa.table({"qid": ["2"], "docid": ["d0"], "rel": [1]}), "qrels")
    found = small_hits(_run(3), qrels, "trec_eval", "zero")
    assert found is not None and found.qids == ["2"] and found.unjudged_qids == ["1"]
    assert small_hits(_run(3), qrels, "trec_eval", "skip") is None  # nothing to score


def test_the_errors_are_the_sql_paths(monkeypatch):
    doubled = pa.concat_tables([_run(3), _run(3)])
    with pytest.raises(InputDataError, match=r"ranks the document 'd0' twice \(row 1 and row 4\)"):
        score_run(doubled, QRELS, "rr@10")
