"""Benchmark health: :func:`check_benchmark` runs every check a :class:`CheckPlan` names.

It takes a plan (and, optionally, its inputs already loaded) and returns one
:class:`~evalvalidity.analysis.results.CheckResult`, which feeds the command line, the
dashboard and the report alike. What it computes, module by module:

- the per-query benchmark and its **floors** (:mod:`evalvalidity.analysis.pools`);
- **Check 1**, built in or on the team's harness (:mod:`evalvalidity.analysis.check1`);
- the **inferred pool size** and its diagnosis (:mod:`evalvalidity.analysis.pool_size`);
- **Check 2**, a model run against a noise run (:mod:`evalvalidity.analysis.check2`);
- **headroom**, per-query **triage** and **power** (:mod:`evalvalidity.analysis.headroom`);
- paired **comparisons** of several runs (:func:`evalvalidity.core.stats.compare_runs`);
- the **verdict**, by walking the rules table (:mod:`evalvalidity.analysis.rules`).

:func:`check_tables` is the short way from in-memory tables.

Examples
--------
>>> import pyarrow as pa
>>> qrels = pa.table({"qid": ["q1", "q2"], "docid": ["a", "b"], "rel": [1, 1]})
>>> result = check_tables(None, qrels, pool=PoolSpec(corpus_size=8), seeds=4)
>>> result.verdict, [r.code for r in result.reasons]
('warning', ['low_headroom', 'check1_passed', 'pool_smaller_than_k'])
>>> result.plan.pool.corpus_size
8
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from evalvalidity.analysis.check1 import builtin_check1, harness_check1
from evalvalidity.analysis.check2 import aligned, fully_tied, noise_check, tied_queries
from evalvalidity.analysis.consistency import check_consistency
from evalvalidity.analysis.headroom import headroom, power, triage
from evalvalidity.analysis.nulls import (
    RANKING_MAX_ROWS,
    SEGMENT_SAMPLE,
    other_nulls,
    ranking_depth,
    rule_units,
)
from evalvalidity.analysis.plan import (
    CheckInputs,
    CheckPlan,
    DatasetRef,
    NoiseSource,
    PoolDeclaration,
    PoolSpec,
    Thresholds,
    TiePolicy,
)
from evalvalidity.analysis.pool_size import diagnose_pool_size, infer_pool_size, run_fits_units
from evalvalidity.analysis.pools import build_benchmark, compute_floor, quietly
from evalvalidity.analysis.results import (
    SCHEMA_VERSION,
    CheckResult,
    Comparison,
    HarnessCheck,
)
from evalvalidity.analysis.results_nulls import OtherNulls
from evalvalidity.analysis.rules import Findings, verdict
from evalvalidity.core import stats
from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.core.types import Progress
from evalvalidity.errors import ParameterError
from evalvalidity.io._memory import release_freed_memory
from evalvalidity.io.scoring import score_run
from evalvalidity.io.tables import conform

__all__ = [
    "CheckInputs",
    "CheckPlan",
    "CheckResult",
    "DatasetRef",
    "PoolDeclaration",
    "PoolSpec",
    "Thresholds",
    "check_benchmark",
    "check_tables",
    "load_inputs",
    "plan_for_tables",
]


#: The table kind each of a plan's roles holds.
_KINDS = {
    "qrels": "qrels",
    "run": "run",
    "noise_run": "run",
    "harness_output": "harness",
}


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _load_ref(
    ref: DatasetRef, kind: str, role: str, workspace: Any, owner: str | None = None
) -> pa.Table:
    """The ``kind`` table ``ref`` names, after checking its content hash when it has one."""
    from evalvalidity.io.ingest import load, read
    from evalvalidity.io.workspace import Workspace, default_path

    if ref.source == "table":
        raise ParameterError(
            f"The plan's {role} is the in-memory table {ref.name!r}: pass the tables in "
            "'inputs' (a CheckInputs)."
        )
    if ref.source == "file":
        path = Path(ref.name)
        if not path.is_file():
            raise ParameterError(f"The plan's {role} {ref.name!r} is not a file.")
        if ref.sha256 is not None and _sha256_of(path) != ref.sha256:
            raise ParameterError(
                f"The file {ref.name!r} (the plan's {role}) changed: its SHA-256 is not the plan's."
            )
        return read(path, kind=kind, digest=False).table  # its hash was checked above, or unused
    if ref.sha256 is not None:
        ws = (
            workspace
            if isinstance(workspace, Workspace)
            else Workspace(workspace if workspace is not None else default_path())
        )
        info = ws.find(ref.name, owner=owner)
        if info is not None and info.sha256 != ref.sha256:
            raise ParameterError(
                f"The dataset {ref.name!r} (the plan's {role}) changed: its SHA-256 is not the "
                "plan's."
            )
    return load(ref.name, kind, workspace=workspace, owner=owner)


def load_inputs(plan: CheckPlan, workspace: Any = None, owner: str | None = None) -> CheckInputs:
    r"""Load every table ``plan`` names: files by the ingest readers, datasets from ``workspace``.

    Parameters
    ----------
    plan : CheckPlan
    workspace : Workspace or path, optional
        Where dataset references are looked up (default: the default workspace).
    owner : str, optional
        Whose datasets a name means: the owner's private one, else the shared one (None:
        shared datasets only).

    Raises
    ------
    ParameterError
        When a reference names no file or dataset, names an in-memory table, or its content
        no longer has the plan's SHA-256.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from evalvalidity.analysis.plan import DatasetRef, PoolDeclaration
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d7 1\n")
    ...     _ = (Path(tmp) / "run.trec").write_text(
    ...         "q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\nq2 Q0 d3 1 2.0 bm25\n"
    ...     )
    ...     plan = CheckPlan(
    ...         qrels=DatasetRef.file(str(Path(tmp) / "qrels.txt")),
    ...         run=DatasetRef.file(str(Path(tmp) / "run.trec")),
    ...         pool=PoolDeclaration(corpus_size=10),
    ...     )
    ...     inputs = load_inputs(plan)
    >>> inputs.qrels.num_rows, inputs.run.num_rows, inputs.pool.corpus_size
    (2, 3, 10)
    """
    declared = plan.pool
    if declared.kind == "corpus":
        pool = PoolSpec(corpus_size=declared.corpus_size)
    else:
        ref = declared.ref
        assert ref is not None
        table = _load_ref(ref, declared.kind, "pool", workspace, owner)
        pool = PoolSpec(**{declared.kind: table, "analytic_unit": declared.analytic_unit})
    tables: dict[str, Any] = {}
    compare: dict[str, pa.Table] = {}
    for role, kind in _KINDS.items():
        ref = getattr(plan, role)
        tables[role] = _load_ref(ref, kind, role, workspace, owner) if ref is not None else None
        if role == "run":
            compare = {
                name: _load_ref(other, "run", f"run to compare {name!r}", workspace, owner)
                for name, other in plan.compare
            }
    texts = {
        role: _load_texts(getattr(plan, role), role)
        for role in ("query_texts", "corpus_texts")
        if getattr(plan, role) is not None
    }
    return CheckInputs(pool=pool, compare=compare, **tables, **texts)


def _load_texts(ref: DatasetRef, role: str) -> pa.Table:
    """An ``id, text`` table from a file (``.jsonl`` or TSV)."""
    from evalvalidity.analysis.selfhits import read_texts

    if ref.source != "file":
        raise ParameterError(
            f"The plan's {role} must be a file. Got the {ref.source} {ref.name!r}."
        )
    return read_texts(ref.name)


#: The largest benchmark (queries) whose other nulls run in a worker beside Check 1 and the
#: headroom: their memory then adds up, which is immaterial below this size (10⁵ queries of 5
#: rows, bench/memory.py: a peak of 582 MiB instead of 572).
BESIDE_QUERIES = 100_000


def check_benchmark(
    plan: CheckPlan,
    inputs: CheckInputs | None = None,
    *,
    workspace: Any = None,
    progress: Progress | None = None,
    release_inputs: bool = False,
) -> CheckResult:
    r"""Run every check ``plan`` names and return the verdict with its reasons.

    Parameters
    ----------
    plan : CheckPlan
        What to check and how (see :class:`~evalvalidity.analysis.plan.CheckPlan`).
    inputs : CheckInputs, optional
        The plan's tables, loaded; without them they are loaded by :func:`load_inputs`.
    workspace : Workspace or path, optional
        Where the plan's dataset references are looked up when ``inputs`` is None.
    progress : callable, optional
        Called with (fraction done, message) as the work goes on.
    release_inputs : bool
        ``inputs`` are the check's alone (the caller keeps no other reference to them or to
        their run): each table is let go once read for the last time -- the run once scored
        (a million queries' 5 rows each: 0.2 GB) --, as when the check loads them itself.

    Returns
    -------
    CheckResult
        With ``plan`` attached.

    Notes
    -----
    Every number is read against the exact floor of a uniformly random ranking of each query's
    pool: for RR@k with one gold item in a pool of N, :math:`E = H_{\min(k, N)} / N` (the
    other families and the derivations are in docs/math.md, Floors). The verdict is the worst
    severity of the rules in :data:`evalvalidity.analysis.rules.RULES` that apply
    (``broken`` > ``warning`` > ``healthy``).

    Examples
    --------
    Six queries, one gold item each, in pools of 8 items: a perfect model, and a random ranker
    already at :math:`H_8/8 = 0.3397` of the way.

    >>> import pyarrow as pa
    >>> qids = [f"q{i}" for i in range(6)]
    >>> qrels = pa.table({"qid": qids, "docid": [f"{q}-gold" for q in qids], "rel": [1] * 6})
    >>> run = pa.table({
    ...     "qid": [q for q in qids for _ in range(3)],
    ...     "docid": [f"{q}-{d}" for q in qids for d in ("gold", "a", "b")],
    ...     "score": [3.0, 2.0, 1.0] * 6,
    ... })
    >>> pool = PoolSpec(corpus_size=8)
    >>> plan = plan_for_tables(pool, metric="rr@10", seeds=50)
    >>> result = check_benchmark(plan, CheckInputs(pool=pool, run=run, qrels=qrels))
    >>> result.verdict, round(result.headroom.floor, 4), result.headroom.model
    ('warning', 0.3397, 1.0)
    >>> [reason.code for reason in result.reasons]
    ['low_headroom', 'check1_passed', 'pool_smaller_than_k']
    """
    if not isinstance(plan, CheckPlan):
        raise ParameterError(
            "The 'plan' parameter of check_benchmark must be a CheckPlan. Got "
            f"{type(plan).__name__} instead."
        )
    # Inputs loaded here are held here alone: what a later step reads no more is let go.
    owned = inputs is None or release_inputs
    if inputs is None:
        if progress:
            progress(0.0, "Loading the inputs")
        inputs = load_inputs(plan, workspace)
        release_freed_memory()
    inputs.check_against(plan)
    has_run = inputs.run is not None
    if inputs.pool.kind == "units":
        # A run of the map's documents gets its own diagnosis before the generic overlap check.
        for name, table in (
            (plan.run_name, inputs.run),
            ("the noise run", inputs.noise_run),
            *inputs.compare.items(),
        ):
            if table is not None:
                run_fits_units(table, inputs.pool.units, name)
    inconsistencies = check_consistency(plan, inputs)
    metric = parse_metric(plan.metric)
    thresholds = plan.thresholds
    pool = inputs.pool
    ties = plan.ties
    qrels = inputs.qrels
    run_name = plan.run_name
    rng = np.random.default_rng(plan.seed)
    notes: list[str] = []
    if progress:
        progress(0.0, "Reading the judgements and the pool")
    bench = build_benchmark(qrels, pool, metric)
    release_freed_memory()
    n = len(bench.qids)
    floor, floor_method = compute_floor(bench, metric, pool, rng)
    release_freed_memory()  # the floor's working arrays: the scorer allocates through others
    units = pool.units if pool.kind == "units" else None
    if plan.units_rule is not None and inputs.run is not None:
        if units is not None:
            notes.append(
                f"The units rule {plan.units_rule} was not applied: the pool's units map the "
                "run's ids."
            )
        else:
            units = rule_units(inputs, plan.units_rule)

    model = None
    # The scorer's kept ranking, held here alone: the other nulls free it once coded.
    kept_ranking: list[pa.Table] = []
    run_for_nulls = inputs.run
    if inputs.run is not None:
        if progress:
            progress(0.1, "Scoring the run")
        # The scorer keeps the top of the ranking the other nulls read (no re-ranking there).
        scored = score_run(
            inputs.run,
            qrels,
            [metric],
            units=units,
            ties=ties,
            run_name=run_name,
            keep_ranking=metric.k is not None or len(inputs.run) <= RANKING_MAX_ROWS,
            ranking_depth=ranking_depth(metric),
        )
        if scored.ranking is not None:
            kept_ranking.append(scored.ranking)
            if owned:
                # With its ranking kept, the run is read again only for its first rows (the
                # segment ids): the loaded table (a million queries' 5 rows each: 0.2 GB) goes,
                # before the scores are aligned (whose ids' copies peak above it).
                run_for_nulls = _head(inputs.run, SEGMENT_SAMPLE)
                inputs = replace(inputs, run=None)
                release_freed_memory()
        model = aligned(scored, metric, bench.qids)
        if scored.unranked_qids:
            notes.append(
                f"{len(scored.unranked_qids):,} judged queries have no ranking in "
                f"{run_name} and score 0."
            )
        if scored.unjudged_qids:
            notes.append(
                f"{len(scored.unjudged_qids):,} queries of {run_name} have no "
                "judgements and were ignored."
            )
        del scored  # its per-query ids (a Python str each) are bench.qids again
        release_freed_memory()

    noise_result = None
    noise_values = None
    if inputs.noise_run is not None:
        if progress:
            progress(0.2, "Scoring the noise run")
        noise_run = inputs.noise_run
        scored_noise = score_run(
            noise_run, qrels, [metric], units=units, ties=ties, run_name="noise run"
        )
        noise_values = aligned(scored_noise, metric, bench.qids)
        tied, _ = tied_queries(noise_run)
        tie_aware = None
        file_order = None
        if tied and ties != "average":
            averaged = score_run(
                noise_run, qrels, [metric], units=units, ties="average", run_name="noise run"
            )
            tie_aware = float(np.mean(aligned(averaged, metric, bench.qids)))
        elif tied and conform(noise_run, "run").column("rank").null_count == 0:
            # Averaging hides what the file's own order scores: score that order too.
            own = score_run(
                noise_run, qrels, [metric], units=units, ties="given", run_name="noise run"
            )
            file_order = aligned(own, metric, bench.qids)
        noise_result = noise_check(
            bench,
            floor,
            metric,
            model,
            noise_values,
            plan.noise_source,
            thresholds,
            rng,
            tied,
            tie_aware,
            plan.noise_components_off or None,
            fully_tied(noise_run) if tied else False,
            file_order,
        )

    # The other nulls read neither Check 1 nor the headroom (nor the generator): without a
    # harness's output or runs to compare (whose comparison sets the smallest difference they
    # read), they run in a worker from here on, while Check 1 and the headroom run here
    # (numpy, DuckDB and Arrow let go of the interpreter) -- for a benchmark small enough
    # that the phases' memory can add up.
    independent = inputs.harness_output is None and not (inputs.compare and model is not None)
    beside = independent and n <= BESIDE_QUERIES
    # Above that size they run here, before Check 1: the ranking they free and the memory they
    # peak at are then not added to Check 1's draws (nor theirs to the nulls' peak).
    first = independent and not beside
    flat_mean = float(np.mean(model)) if model is not None else None
    power_result = power(model, thresholds) if model is not None and independent else None

    def run_other_nulls(harness_measure: str | None) -> OtherNulls:
        return other_nulls(
            bench,
            floor,
            metric,
            pool,
            qrels,
            run=run_for_nulls,
            units=units,
            ties=ties,
            units_rule=plan.units_rule if units is not None and pool.kind != "units" else None,
            harness_output=inputs.harness_output,
            harness_measure=harness_measure,
            min_detectable=(
                power_result.min_detectable_difference
                if power_result is not None and power_result.min_detectable_difference > 0
                else thresholds.delta
            ),
            model_score=flat_mean,
            query_texts=inputs.query_texts,
            corpus_texts=inputs.corpus_texts,
            ranking=kept_ranking.pop() if kept_ranking else None,
        )

    nulls: OtherNulls | None = None
    if first:
        if progress:
            progress(0.3, "Other nulls")
        release_freed_memory()
        nulls = run_other_nulls(None)
        release_freed_memory()
    worker = ThreadPoolExecutor(1, thread_name_prefix="evalvalidity-nulls")
    try:
        early = worker.submit(run_other_nulls, None) if beside else None
        if progress:
            progress(0.3, "Check 1")
        harness: HarnessCheck | None
        if inputs.harness_output is not None:
            harness = harness_check1(
                bench,
                floor,
                metric,
                inputs.harness_output,
                notes,
                pool=pool,
                rng=rng,
                depth=plan.harness_depth,
                seeds=plan.harness_seeds,
            )
        else:
            harness = builtin_check1(
                bench,
                floor,
                metric,
                pool,
                qrels,
                plan.seeds,
                ties,
                thresholds.precision,
                rng,
                progress,
                notes,
            )
        release_freed_memory()
        inferred = None
        if harness is not None:
            inferred = infer_pool_size(
                bench, metric, harness.source, harness.per_query_measured, harness.std_error, pool
            )
        elif noise_values is not None:
            se = float(np.std(noise_values, ddof=1) / np.sqrt(n)) if n > 1 else None
            inferred = infer_pool_size(bench, metric, "noise-run", noise_values, se or 0.0, pool)
        if inferred is not None:
            passed = harness.passed if harness is not None else True
            inferred = type(inferred)(
                **{**inferred.__dict__, "diagnosis": diagnose_pool_size(inferred, pool, passed)}
            )

        if progress:
            progress(0.85, "Headroom, triage and power")
        head = headroom(floor, model, rng)
        comparison = None
        values: dict[str, np.ndarray] = {}
        if inputs.compare and model is not None:
            values = {run_name: model}
            for name, other in inputs.compare.items():
                scored_other = score_run(
                    other, qrels, [metric], units=units, ties=ties, run_name=name
                )
                values[name] = aligned(scored_other, metric, bench.qids)
            table_cmp = quietly(stats.compare_runs, values, n_resamples=10_000, rng=rng)
            comparison = Comparison(
                tuple(values), tuple(float(np.mean(v)) for v in values.values()), table_cmp
            )
        if model is not None and not independent:
            second = next((name for name in values if name != run_name), None)
            power_result = power(
                model, thresholds, values[second] if second is not None else None, second
            )
        adjusted_mean = None
        if model is not None:
            room = floor.ceiling - floor.expected
            ok = room > 0
            if ok.any():
                adjusted_mean = float(np.mean((model[ok] - floor.expected[ok]) / room[ok]))
            del room, ok
        total_floor = float(np.sum(floor.expected))
        multi = (
            float(np.sum(floor.expected[bench.gold > 1]) / total_floor) if total_floor > 0 else 0.0
        )
        if nulls is None:  # not run before Check 1: beside it, or here now
            if progress:
                progress(0.9, "Other nulls")
            if early is not None:
                nulls = early.result()
            else:
                release_freed_memory()
                nulls = run_other_nulls(harness.measure if harness is not None else None)
    finally:
        worker.shutdown(wait=True, cancel_futures=True)
    assert nulls is not None
    table = triage(bench, floor, metric, model, noise_values, thresholds)
    notes.extend(nulls.notes)
    live_result = noise_result if plan.noise_source == "live" else None
    if live_result is not None:
        noise_result = None
    findings = Findings(
        metric=metric,
        thresholds=thresholds,
        n_queries=n,
        headroom=head,
        harness=harness,
        noise=noise_result,
        live=live_result,
        inferred=inferred,
        queries=table,
        consistency=inconsistencies,
        nulls=nulls,
    )
    verdict_, reasons = verdict(findings)
    if progress:
        progress(1.0, "Done")
    return CheckResult(
        schema_version=SCHEMA_VERSION,
        metric=metric,
        verdict=verdict_,
        reasons=reasons,
        run_name=run_name if has_run else None,
        n_queries=n,
        pool_kind=pool.kind,
        declared_pool=bench.declared_pool,
        declared_chunks=bench.declared_chunks,
        declared_documents=bench.declared_documents,
        floor_method=floor_method,
        floor=floor,
        headroom=head,
        harness=harness,
        noise=noise_result,
        live=live_result,
        inferred_n=inferred,
        power=power_result,
        comparison=comparison,
        queries=table,
        flat_mean=flat_mean,
        adjusted_mean=adjusted_mean,
        multi_gold_floor_share=multi,
        notes=tuple(notes),
        plan=plan,
        nulls=nulls,
    )


def _head(table: pa.Table, rows: int) -> pa.Table:
    """A copy of the first ``rows`` rows of ``table`` (a slice would hold all of its buffers).

    Examples
    --------
    >>> _head(pa.table({"x": [1, 2, 3]}), 2).column("x").to_pylist()
    [1, 2]
    """
    if table.num_rows <= rows:
        return table
    return pa.Table.from_batches(
        [
            pa.record_batch(
                [pa.concat_arrays(c.chunks) for c in table.slice(0, rows).columns],
                schema=table.schema,
            )
        ],
        schema=table.schema,
    )


def plan_for_tables(
    pool: PoolSpec,
    *,
    run: bool = True,
    metric: str | Metric = "rr@10",
    noise_run: bool = False,
    harness_output: bool = False,
    other_runs: Sequence[str] = (),
    run_name: str = "run",
    seeds: int | str = "auto",
    ties: TiePolicy = "trec_eval",
    noise_components_off: Sequence[str] | None = None,
    noise_source: NoiseSource = "noise-run",
    thresholds: Thresholds | None = None,
    seed: int = 0,
    units_rule: str | None = None,
) -> CheckPlan:
    """The plan of a check on in-memory tables: every input a ``table`` reference.

    Examples
    --------
    >>> plan = plan_for_tables(PoolSpec(corpus_size=50), noise_run=True, seeds=8)
    >>> plan.run, plan.noise_run.name, plan.pool.corpus_size
    (DatasetRef(source='table', name='run', sha256=None), 'noise run', 50)
    """
    kind = pool.kind
    declaration: dict[str, Any] = (
        {"corpus_size": pool.corpus_size}
        if kind == "corpus"
        else {kind: DatasetRef.table(kind), "analytic_unit": pool.analytic_unit}
    )
    declared = PoolDeclaration(**declaration)
    return CheckPlan(
        run=DatasetRef.table(run_name) if run else None,
        run_name=run_name,
        compare=tuple((name, DatasetRef.table(name)) for name in other_runs),
        qrels=DatasetRef.table("qrels"),
        pool=declared,
        noise_run=DatasetRef.table("noise run") if noise_run else None,
        noise_source=noise_source,
        noise_components_off=tuple(noise_components_off) if noise_components_off else None,
        harness_output=DatasetRef.table("harness output") if harness_output else None,
        metric=metric.name if isinstance(metric, Metric) else metric,
        ties=ties,
        seeds=seeds,  # type: ignore[arg-type]
        seed=seed,
        thresholds=thresholds or Thresholds(),
        units_rule=units_rule,
    )


def check_tables(
    run: pa.Table | None,
    qrels: pa.Table,
    *,
    pool: PoolSpec,
    metric: str | Metric = "rr@10",
    noise_run: pa.Table | None = None,
    harness_output: pa.Table | None = None,
    harness_depth: int | None = None,
    harness_seeds: int | None = None,
    other_runs: Mapping[str, pa.Table] | None = None,
    run_name: str = "run",
    seeds: int | str = "auto",
    ties: TiePolicy = "trec_eval",
    noise_components_off: Sequence[str] | None = None,
    noise_source: NoiseSource = "noise-run",
    thresholds: Thresholds | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    units_rule: str | None = None,
) -> CheckResult:
    """Check in-memory tables: build their plan (:func:`plan_for_tables`) and inputs, and run it.

    Parameters
    ----------
    run : pyarrow.Table or None
        The model's ranking (``RUN_SCHEMA``); None checks the benchmark alone.
    qrels : pyarrow.Table
        The judgements (``QRELS_SCHEMA``).
    pool : PoolSpec
        The declared pool.
    metric, run_name, seeds, ties, noise_components_off, noise_source, thresholds, seed
        As in :class:`~evalvalidity.analysis.plan.CheckPlan`.
    noise_run, harness_output : pyarrow.Table, optional
        The noise run (Check 2) and the harness's output on random runs (Check 1 on it).
    harness_depth, harness_seeds : int, optional
        The random runs' depth and number (their manifest's ``depth`` and ``seeds``).
    other_runs : mapping of str to pyarrow.Table, optional
        More runs to compare with ``run``.
    progress : callable, optional
        Called with (fraction done, message).
    units_rule : str, optional
        E.g. ``"prefix:#"``: the run's ids are ``document#segment``.

    Examples
    --------
    Six queries with one gold item each in pools of 8: a perfect model, and a random ranker's
    floor :math:`H_8/8 = 0.3397` (docs/math.md, Floors).

    >>> import pyarrow as pa
    >>> qids = [f"q{i}" for i in range(6)]
    >>> qrels = pa.table({"qid": qids, "docid": [f"{q}-gold" for q in qids], "rel": [1] * 6})
    >>> run = pa.table({
    ...     "qid": [q for q in qids for _ in range(3)],
    ...     "docid": [f"{q}-{d}" for q in qids for d in ("gold", "a", "b")],
    ...     "score": [3.0, 2.0, 1.0] * 6,
    ... })
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=8), seeds=50)
    >>> result.verdict, round(result.headroom.floor, 4), result.headroom.model
    ('warning', 0.3397, 1.0)
    >>> [reason.code for reason in result.reasons]
    ['low_headroom', 'check1_passed', 'pool_smaller_than_k']
    """
    others = dict(other_runs or {})
    plan = plan_for_tables(
        pool,
        run=run is not None,
        metric=metric,
        noise_run=noise_run is not None,
        harness_output=harness_output is not None,
        other_runs=tuple(others),
        run_name=run_name,
        seeds=seeds,
        ties=ties,
        noise_components_off=noise_components_off,
        noise_source=noise_source,
        thresholds=thresholds,
        seed=seed,
        units_rule=units_rule,
    ).replace(harness_depth=harness_depth, harness_seeds=harness_seeds)
    inputs = CheckInputs(
        qrels=qrels,
        pool=pool,
        run=run,
        noise_run=noise_run,
        harness_output=harness_output,
        compare=others,
    )
    return check_benchmark(plan, inputs, progress=progress)
