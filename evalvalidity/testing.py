"""Assertions for a test suite: fail a test when the benchmark it evaluates on measures nothing.

:func:`assert_benchmark_healthy` runs the same check as ``evalvalidity check`` and raises
:class:`AssertionError` with the verdict's reasons when the verdict fails the gate, so that a
pytest run (or any test runner) reports *why* the benchmark cannot be trusted::

    # tests/test_benchmark.py
    from evalvalidity.testing import assert_benchmark_healthy

    def test_our_benchmark_measures_something():
        assert_benchmark_healthy(
            "eval/run.trec", "eval/qrels.txt", pool_size=8_841_823, metric="mrr@10"
        )

    def test_the_saved_plan_still_passes():
        assert_benchmark_healthy(plan="eval/check-plan.json")

Examples
--------
The write-up's toy benchmark (20 queries over 200 documents) is healthy; its pool-of-eight
variant has no headroom, and the assertion says so:

>>> from pathlib import Path
>>> data = Path(__file__).resolve().parent.parent / "data" / "writeup"
>>> result = assert_benchmark_healthy(
...     data / "toy" / "model.trec", data / "toy" / "qrels.txt", pool_size=200, seeds=20
... )
>>> result.verdict
'healthy'
>>> assert_benchmark_healthy(
...     data / "pool8" / "model.trec", data / "pool8" / "qrels.txt",
...     pools=data / "pool8" / "pools.tsv",
... )
Traceback (most recent call last):
...
AssertionError: The benchmark fails the gate (fail_on='broken'): its verdict is BROKEN.
...
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalvalidity.errors import ParameterError

if TYPE_CHECKING:
    import pyarrow as pa

    from evalvalidity.analysis.plan import CheckPlan, PoolSpec
    from evalvalidity.analysis.results import CheckResult
    from evalvalidity.core.metrics import Metric

__all__ = ["FAIL_ON", "assert_benchmark_healthy"]

#: The verdicts that fail the gate, by ``fail_on`` (as ``evalvalidity check --fail-on``).
FAIL_ON: dict[str, tuple[str, ...]] = {
    "broken": ("broken",),
    "warning": ("broken", "warning"),
    "never": (),
}

_FUNC = "assert_benchmark_healthy"
_POOL_ARGS = ("pool_size", "pools", "candidates", "units")


def _table(value: Any, kind: str, name: str, workspace: Any) -> pa.Table:
    """A canonical table from a table, a file path or a workspace dataset name."""
    import pyarrow as pa

    if isinstance(value, pa.Table):
        return value
    if isinstance(value, str | os.PathLike):
        from evalvalidity.io.ingest import load

        return load(value, kind, workspace=workspace)
    raise ParameterError(
        f"The {name!r} parameter of {_FUNC} must be a pyarrow Table, a file path or a dataset"
        f" name. Got {type(value).__name__} instead."
    )


def _pool(given: dict[str, Any], analytic_unit: str, workspace: Any) -> PoolSpec:
    from evalvalidity.analysis.plan import PoolSpec
    from evalvalidity.core._validate import _int_at_least

    named = [name for name in _POOL_ARGS if given[name] is not None]
    if len(named) != 1:
        shown = " and ".join(repr(n) for n in named) if named else "none"
        raise ParameterError(
            f"{_FUNC} needs exactly one of 'pool_size', 'pools', 'candidates' or 'units' (or a"
            f" 'plan'). Got {shown} instead."
        )
    name = named[0]
    if name == "pool_size":
        return PoolSpec(corpus_size=_int_at_least(given[name], 1, "pool_size", _FUNC))
    table = _table(given[name], name, name, workspace)
    if name == "units":
        return PoolSpec(units=table, analytic_unit=analytic_unit)  # type: ignore[arg-type]
    return PoolSpec(**{name: table})


def _plan(plan: Any) -> CheckPlan:
    from evalvalidity.analysis.plan import CheckPlan

    if isinstance(plan, CheckPlan):
        return plan
    if isinstance(plan, str | os.PathLike):
        return CheckPlan.from_json(Path(plan).read_text(encoding="utf-8"))
    raise ParameterError(
        f"The 'plan' parameter of {_FUNC} must be a CheckPlan or the path of a saved plan (JSON)."
        f" Got {type(plan).__name__} instead."
    )


def assert_benchmark_healthy(
    run: Any = None,
    qrels: Any = None,
    *,
    pool_size: int | None = None,
    pools: Any = None,
    candidates: Any = None,
    units: Any = None,
    analytic_unit: str = "documents",
    plan: Any = None,
    metric: str | Metric = "rr@10",
    noise_run: Any = None,
    harness_output: Any = None,
    seeds: int | str = "auto",
    seed: int = 0,
    fail_on: str = "broken",
    workspace: Any = None,
) -> CheckResult:
    """Check a benchmark and raise :class:`AssertionError` when its verdict fails the gate.

    Parameters
    ----------
    run : pyarrow.Table, path or dataset name, optional
        The model's ranking (None checks the benchmark alone). A path is read with the
        validating reader; a name is looked up in ``workspace``.
    qrels : pyarrow.Table, path or dataset name
        The judgements. Required unless ``plan`` is given.
    pool_size, pools, candidates, units
        The declared pool, exactly one of them unless ``plan`` is given: every query ranks a
        corpus of ``pool_size`` items; per-query pool sizes (``qid, pool_size``); per-query
        candidate lists (``qid, docid``); a units map (``chunk_id, doc_id``).
    analytic_unit : {"documents", "chunks"}
        With ``units``: the floor of deduplicated chunk scores, or of chunks.
    plan : CheckPlan or path, optional
        A saved check plan (``evalvalidity check --save-plan``) instead of the arguments
        above; its dataset references are resolved in ``workspace``.
    metric : str or Metric
        Default ``rr@10`` (MRR@10).
    noise_run, harness_output : pyarrow.Table, path or dataset name, optional
        The noise run (Check 2) and the harness's output on random runs (Check 1 on it).
    seeds : int or "auto"
        Seeds of the built-in Check 1.
    seed : int
        Seed of every random draw.
    fail_on : {"broken", "warning", "never"}
        The verdicts that fail: ``broken`` (default), ``warning`` (warning or broken), or
        ``never`` (only report).
    workspace : Workspace or path, optional
        Where dataset names and a plan's references are looked up.

    Returns
    -------
    CheckResult
        The check, when it passes the gate (for further assertions).

    Raises
    ------
    AssertionError
        When the verdict is one ``fail_on`` names; the message gives the verdict, each reason
        and the key numbers (the text ``evalvalidity check`` prints).
    ParameterError
        On a bad argument; :class:`~evalvalidity.errors.EvalValidityError` subclasses on a bad
        input file, as the command line reports them.

    Notes
    -----
    The verdict is the one of :func:`evalvalidity.analysis.check.check_benchmark`; e.g. a
    benchmark is broken when its exact random floor is so close to the ceiling that no model
    can show a difference (``floor / ceiling`` past ``Thresholds.headroom_broken``).
    """
    if not isinstance(fail_on, str) or fail_on not in FAIL_ON:
        raise ParameterError(
            f"The 'fail_on' parameter of {_FUNC} must be one of 'broken', 'warning', 'never'."
            f" Got {fail_on!r} instead."
        )
    from evalvalidity.analysis.check import check_benchmark, check_tables

    given = {"pool_size": pool_size, "pools": pools, "candidates": candidates, "units": units}
    if plan is not None:
        extra = [
            name
            for name, value in (("run", run), ("qrels", qrels), *given.items())
            if value is not None
        ]
        if extra:
            raise ParameterError(
                f"{_FUNC} takes a 'plan' or the inputs, not both; got 'plan' and"
                f" {', '.join(repr(n) for n in extra)}."
            )
        result = check_benchmark(_plan(plan), workspace=workspace)
    else:
        if qrels is None:
            raise ParameterError(f"{_FUNC} needs 'qrels' (or a 'plan').")
        pool = _pool(given, analytic_unit, workspace)
        result = check_tables(
            None if run is None else _table(run, "run", "run", workspace),
            _table(qrels, "qrels", "qrels", workspace),
            pool=pool,
            metric=metric,
            noise_run=None
            if noise_run is None
            else _table(noise_run, "run", "noise_run", workspace),
            harness_output=None
            if harness_output is None
            else _table(harness_output, "harness", "harness_output", workspace),
            run_name=Path(run).name if isinstance(run, str | os.PathLike) else "run",
            seeds=seeds,
            seed=seed,
        )
    if result.verdict in FAIL_ON[fail_on]:
        from evalvalidity.report.records import to_text

        raise AssertionError(
            f"The benchmark fails the gate (fail_on={fail_on!r}): its verdict is"
            f" {result.verdict.upper()}.\n\n{to_text(result)}"
        )
    return result
