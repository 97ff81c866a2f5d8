"""What ``check_benchmark`` runs in a worker thread, and that it changes no result.

Without runs to compare, the other nulls run in a worker while the headroom's bootstrap runs
here; with runs to compare they run here, after the comparison (which draws from the same
generator as the headroom, in that order).
"""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest
from conftest import CRANFIELD

from evalvalidity.analysis import check
from evalvalidity.analysis.check import PoolSpec, check_tables
from evalvalidity.io.ingest import read_qrels, read_run
from evalvalidity.report import records


@pytest.fixture
def where(monkeypatch):
    """The thread each call of the other nulls and of the headroom ran in."""
    seen: dict[str, list[str]] = {"other_nulls": [], "headroom": []}
    for name in seen:
        original = getattr(check, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            seen[_name].append(threading.current_thread().name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(check, name, spy)
    return seen


def _inputs():
    qrels = read_qrels(CRANFIELD / "qrels.txt")
    return qrels, read_run(CRANFIELD / "run_dense.trec"), read_run(CRANFIELD / "run_bm25.trec")


def test_the_other_nulls_run_in_a_worker_beside_the_headroom(where):
    qrels, dense, _ = _inputs()
    check_tables(dense, qrels, pool=PoolSpec(corpus_size=1400), seeds=8)
    assert where["headroom"] == ["MainThread"]
    assert len(where["other_nulls"]) == 1
    assert where["other_nulls"][0].startswith("evalvalidity-nulls")


def test_with_runs_to_compare_the_other_nulls_run_here(where):
    qrels, dense, bm25 = _inputs()
    check_tables(dense, qrels, pool=PoolSpec(corpus_size=1400), seeds=8, other_runs={"bm25": bm25})
    assert where["other_nulls"] == ["MainThread"]


def test_the_worker_gives_the_same_json_as_running_in_turn(monkeypatch):
    qrels, dense, _ = _inputs()
    pool = PoolSpec(corpus_size=1400)
    beside = records.to_json(check_tables(dense, qrels, pool=pool, seeds=8, seed=3))

    class InTurn:
        """An executor that runs what it is given at once, here."""

        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, function, *args):
            from concurrent.futures import Future

            future: Future = Future()
            future.set_result(function(*args))
            return future

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    monkeypatch.setattr(check, "ThreadPoolExecutor", InTurn)
    in_turn = records.to_json(check_tables(dense, qrels, pool=pool, seeds=8, seed=3))
    assert beside == in_turn


def test_an_error_in_the_worker_is_raised_by_the_check(monkeypatch):
    qrels, dense, _ = _inputs()

    def broken(*args, **kwargs):
        raise RuntimeError("the nulls broke")

    monkeypatch.setattr(check, "other_nulls", broken)
    with pytest.raises(RuntimeError, match="the nulls broke"):
        check_tables(dense, qrels, pool=PoolSpec(corpus_size=1400), seeds=8)


def test_a_run_table_is_not_needed_for_the_worker():
    # judgements alone (no run): the worker still runs the nulls that need no run
    qrels = pa.table({"qid": ["q1", "q2"], "docid": ["a", "b"], "rel": [1, 1]})
    result = check_tables(None, qrels, pool=PoolSpec(corpus_size=8), seeds=4)
    assert result.nulls is not None


def test_quietly_in_two_threads_leaves_the_warning_filters_as_they_were():
    # Thread a enters first and leaves first, b enters second and leaves last: two
    # catch_warnings at once would leave a's silencing in place for good (b restores it).
    import warnings

    from evalvalidity.analysis.pools import quietly
    from evalvalidity.errors import EvalValidityWarning

    a_inside, a_may_leave, b_may_leave = threading.Event(), threading.Event(), threading.Event()

    def a_work():
        a_inside.set()
        a_may_leave.wait(5)

    before = list(warnings.filters)
    a = threading.Thread(target=quietly, args=(a_work,))
    b = threading.Thread(target=quietly, args=(lambda: b_may_leave.wait(5),))
    a.start()
    a_inside.wait(5)
    b.start()
    b.join(0.2)  # b is inside (no lock) or waiting for a to leave (the lock)
    a_may_leave.set()
    a.join(5)
    b_may_leave.set()
    b.join(5)
    assert warnings.filters == before
    with pytest.warns(EvalValidityWarning):
        warnings.warn("still shown", EvalValidityWarning, stacklevel=1)


@pytest.mark.parametrize(("n", "resamples"), [(7, 50), (6_980, 4_000), (100_003, 90)])
def test_the_bootstrap_takes_the_same_means_with_or_without_its_worker(n, resamples):
    # distinct values (no multinomial shortcut); 4,000 resamples of 6,980 rows are drawn in
    # seven blocks, the means of one taken in a worker while the next is drawn
    import numpy as np

    from evalvalidity.core import stats

    values = np.random.default_rng(1).random(n)
    got = stats._bootstrap_means((values, values**2), resamples, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    block = max(1, stats._BLOCK_ELEMENTS // n)
    expected = (np.empty(resamples), np.empty(resamples))
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        rows = rng.integers(0, n, size=(stop - start, n))
        expected[0][start:stop] = values[rows].mean(axis=1)
        expected[1][start:stop] = (values**2)[rows].mean(axis=1)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
