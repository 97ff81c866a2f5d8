"""``evalvalidity check``: the benchmark's health, as a gate for CI."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable
from typing import Any

from evalvalidity.cli._common import (
    add_pool_arguments,
    add_workspace_argument,
    dataset_ref,
    pool_declaration_from_args,
    progress_printer,
    run_display_name,
)
from evalvalidity.errors import ParameterError

__all__ = ["add_check_arguments", "plan_from_args", "register", "result_from_args", "run"]

_GATES = {"broken": ("broken",), "warning": ("broken", "warning"), "never": ()}


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments that describe a benchmark check (shared with ``report``)."""
    parser.add_argument(
        "--run",
        action="append",
        metavar="FILE",
        help="the model's run (a file or a workspace dataset); repeat to "
        "compare more runs with the first (required unless --plan)",
    )
    parser.add_argument("--qrels", metavar="FILE", help="the judgements (required unless --plan)")
    parser.add_argument(
        "--noise-run",
        metavar="FILE",
        help="the same pipeline with every vector replaced by noise (Check 2)",
    )
    parser.add_argument(
        "--noise-components-off",
        metavar="LIST",
        help="comma-separated components the noise run had switched off, e.g. bm25,reranker",
    )
    parser.add_argument(
        "--harness-output",
        metavar="FILE",
        help="your harness's per-query output on noise runs (trec_eval -q "
        "lines or CSV seed,qid,value): Check 1 on your harness",
    )
    parser.add_argument(
        "--harness-manifest",
        metavar="FILE",
        help="the manifest.json of the random runs the harness scored (their depth and number; "
        "default: a manifest.json beside --harness-output, if any)",
    )
    add_pool_arguments(parser, required=True)
    parser.add_argument(
        "--units-rule",
        metavar="prefix:SEP",
        help="the run ranks segments DOC SEP SEGMENT of judged documents, e.g. prefix:# for "
        "msmarco_v2.1_doc_54_319914167#4_733739871: map each id to the part before SEP "
        "(no units file needed)",
    )
    parser.add_argument(
        "--metric",
        "-m",
        default="mrr@10",
        metavar="M",
        help="the metric, in any spelling score takes: rr@10, trec_eval's recip_rank or "
        "ndcg_cut_10, ir_measures' nDCG@10 or P(rel=2)@10 (default mrr@10, i.e. rr@10)",
    )
    parser.add_argument(
        "--seeds",
        default="auto",
        metavar="auto|S",
        help="seeds of the built-in Check 1; auto reaches a 2%% standard "
        "error on the ratio where the budget allows (default auto)",
    )
    parser.add_argument(
        "--ties",
        choices=("trec_eval", "given", "average"),
        default="trec_eval",
        help="tie policy of the scorer (default trec_eval)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--plan",
        metavar="FILE",
        help="run the check plan saved in FILE (by --save-plan) instead of naming the inputs",
    )
    parser.add_argument(
        "--save-plan", metavar="FILE", help="write the check plan (JSON) to FILE, then run it"
    )
    add_workspace_argument(parser)


def register(subparsers: Any) -> None:
    """Add the ``check`` subcommand."""
    parser = subparsers.add_parser(
        "check",
        help="verdict on a benchmark: floors, headroom, Check 1, Check 2, inferred N, triage",
        description="Check whether a retrieval benchmark measures anything: exact floors and "
        "headroom, Check 1 (random scores through a harness vs the exact floor), Check 2 (model "
        "vs noise run), inferred N, per-query triage and power. Exit 0 when the verdict passes "
        "the gate, 1 when it fails it, 2 on bad usage or input.",
    )
    add_check_arguments(parser)
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument(
        "--fail-on",
        choices=tuple(_GATES),
        default="broken",
        help="verdicts that fail the gate: broken (default), warning (warning or broken) or never",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="also write the output to FILE")
    add_decision_arguments(parser)
    parser.set_defaults(func=run)


def add_decision_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of correlated queries, the regression gate and the history."""
    group = parser.add_argument_group("decisions")
    group.add_argument(
        "--groups",
        metavar="FILE|shared-gold",
        help="query groups (qid, group; tab or comma): queries of a group are not independent, "
        "so intervals, tests and power use the groups; 'shared-gold' groups queries that share "
        "gold documents",
    )
    group.add_argument(
        "--baseline",
        metavar="PREVIOUS.json",
        help="regression gate: compare the run with a recorded check (check --format json); "
        "exit 1 when it fell by more than the allowed drop",
    )
    group.add_argument(
        "--allowed-drop",
        action="append",
        metavar="[METRIC=]DROP",
        help="the fall tolerated by --baseline, in the metric's units or as a percentage of the "
        "baseline (5%%); repeat for several metrics (default 0)",
    )
    group.add_argument(
        "--sequential",
        action="store_true",
        help="with --baseline: decide by an anytime-valid confidence sequence over the queries "
        "in order (valid however early you stop)",
    )
    group.add_argument(
        "--undecided",
        choices=("pass", "fail"),
        default="pass",
        help="with --sequential: the gate's outcome when the queries run out before the "
        "sequence decides: pass (default; exit 0) or fail (exit 1, as a regression)",
    )
    group.add_argument(
        "--history",
        metavar="LABEL",
        nargs="?",
        const="",
        help="record this check (with an optional label) in the workspace's history",
    )


#: The arguments a saved plan replaces, with their defaults.
_PLAN_ARGUMENTS = {
    "run": None,
    "qrels": None,
    "noise_run": None,
    "noise_components_off": None,
    "harness_output": None,
    "harness_manifest": None,
    "pool_size": None,
    "pools": None,
    "candidates": None,
    "units": None,
    "analytic_unit": "documents",
    "metric": "mrr@10",
    "seeds": "auto",
    "ties": "trec_eval",
    "seed": 0,
    "units_rule": None,
}


def plan_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~evalvalidity.analysis.plan.CheckPlan` the arguments describe.

    With ``--plan FILE``, the plan saved in FILE (no argument naming an input or a parameter
    may be given beside it); otherwise one built from ``--run``, ``--qrels``, the pool, ...
    """
    from evalvalidity.analysis.plan import CheckPlan
    from evalvalidity.core.metrics import parse_metric

    if getattr(args, "plan", None):
        given = [
            "--" + name.replace("_", "-")
            for name, default in _PLAN_ARGUMENTS.items()
            if getattr(args, name) != default
        ]
        if given:
            raise ParameterError(
                f"--plan FILE names every input and parameter; drop {', '.join(given)}."
            )
        try:
            with open(args.plan, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise ParameterError(f"Cannot read the plan {args.plan!r}: {exc.strerror}.") from exc
        return CheckPlan.from_json(text)
    missing = [flag for flag, value in (("--run", args.run), ("--qrels", args.qrels)) if not value]
    if missing:
        raise ParameterError(f"Name the {' and the '.join(missing)} (or give --plan FILE).")
    seeds: int | str = args.seeds
    if seeds != "auto":
        try:
            seeds = int(seeds)
        except ValueError:
            raise ParameterError(
                f"--seeds must be 'auto' or a whole number. Got {seeds!r}."
            ) from None
        if seeds < 1:
            raise ParameterError(f"--seeds must be at least 1. Got {seeds}.")
    pool = pool_declaration_from_args(args, required=True)
    runs = args.run
    main_name = run_display_name(runs[0])
    others: list[tuple[str, Any]] = []
    for spec in runs[1:]:
        name = run_display_name(spec)
        if name in dict(others) or name == main_name:
            name = spec
        others.append((name, dataset_ref(spec)))
    components = (
        tuple(c.strip() for c in args.noise_components_off.split(",") if c.strip())
        if args.noise_components_off
        else None
    )
    if "," in args.metric:
        raise ParameterError(
            f"check takes one metric; got {args.metric!r}. Check once per metric, or score"
            " several with evalvalidity score -m."
        )
    depth, n_seeds = _harness_manifest(args, parse_metric(args.metric).name)
    return CheckPlan(
        harness_depth=depth,
        harness_seeds=n_seeds,
        run=dataset_ref(runs[0]),
        run_name=main_name,
        compare=tuple(others),
        qrels=dataset_ref(args.qrels),
        pool=pool,
        noise_run=dataset_ref(args.noise_run) if args.noise_run else None,
        noise_components_off=components or None,
        harness_output=dataset_ref(args.harness_output) if args.harness_output else None,
        metric=parse_metric(args.metric).name,
        ties=args.ties,
        seeds=seeds,  # type: ignore[arg-type]
        seed=args.seed,
        units_rule=getattr(args, "units_rule", None),
    )


def _harness_manifest(args: argparse.Namespace, metric: str) -> tuple[int | None, int | None]:
    """The depth and number of the random runs, from their manifest (None, None without one)."""
    import json
    from pathlib import Path

    path = getattr(args, "harness_manifest", None)
    if path is None:
        if not args.harness_output:
            return None, None
        beside = Path(args.harness_output).parent / "manifest.json"
        if not beside.is_file():
            return None, None
        path = beside
    elif not args.harness_output:
        raise ParameterError("--harness-manifest describes the runs of --harness-output FILE.")
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ParameterError(
            f"Cannot read the random runs' manifest {str(path)!r}: {exc}."
        ) from exc
    depth, seeds = record.get("depth"), record.get("seeds")
    for name, value in (("depth", depth), ("seeds", seeds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(
                f"The random runs' manifest {str(path)!r} needs a whole number >= 1 as its "
                f"{name!r}. Got {value!r} instead."
            )
    declared = record.get("metric")
    if declared and declared != metric:
        print(
            f"evalvalidity check: the random runs were written for {declared}; checking {metric}.",
            file=sys.stderr,
        )
    return depth, seeds


def saved_plan_from_args(args: argparse.Namespace) -> Any:
    """The plan the arguments describe, written to ``--save-plan`` first when given."""
    from evalvalidity.cli._common import write_output_file

    plan = plan_from_args(args)
    if getattr(args, "save_plan", None):
        write_output_file(args.save_plan, plan.to_json() + "\n")
    return plan


def result_from_args(args: argparse.Namespace, progress: Any = None) -> Any:
    """Build the plan the arguments describe (saving it with --save-plan) and run it."""
    from evalvalidity.analysis.check import check_benchmark

    plan = saved_plan_from_args(args)
    return check_benchmark(plan, workspace=getattr(args, "workspace", None), progress=progress)


def _decisions(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """Run the check with the decision options: (result, {key: object}) for the records."""
    import json

    from evalvalidity.analysis.check import check_benchmark, load_inputs
    from evalvalidity.io.groups import read_groups

    if (args.allowed_drop or args.sequential) and not args.baseline:
        raise ParameterError("--allowed-drop and --sequential go with --baseline PREVIOUS.json.")
    if args.undecided != "pass" and not args.sequential:
        raise ParameterError("--undecided goes with --sequential.")
    baseline = None
    if args.baseline:
        try:
            with open(args.baseline, encoding="utf-8") as handle:
                record = json.load(handle)
        except OSError as exc:
            raise ParameterError(f"Cannot read {args.baseline!r}: {exc.strerror}.") from exc
        except ValueError as exc:
            raise ParameterError(f"{args.baseline} is not JSON: {exc}.") from exc
        from evalvalidity.analysis import gate

        baseline = gate.baseline_from_record(record, args.baseline)
    groups = read_groups(args.groups) if args.groups and args.groups != "shared-gold" else None
    plan = saved_plan_from_args(args)
    workspace = getattr(args, "workspace", None)
    inputs = load_inputs(plan, workspace)
    progress = progress_printer(args.format == "text")
    qrels, compared = inputs.qrels, bool(inputs.compare)
    if compared:  # the runs are scored again for the leaderboard
        result = check_benchmark(plan, inputs, progress=progress)
    else:
        # The check holds the inputs alone, so that it can let the run go once it is scored.
        held = [inputs]
        del inputs
        result = check_benchmark(plan, held.pop(), progress=progress, release_inputs=True)
    extras: dict[str, Any] = {}
    clusters = None
    if args.groups or compared or baseline is not None:
        # scipy.stats comes with these (about 1.4 s): imported only for the options that use it
        from evalvalidity.analysis import compare, gate
    if args.groups:
        clusters = compare.query_clusters(
            result.queries.qid, groups=groups, qrels=qrels if groups is None else None
        )
        extras["clustered"] = compare.clustered_stats(result, clusters)
    if compared and result.run_name is not None:
        values = compare.check_scores(plan, inputs, result)
        extras["leaderboard"] = compare.run_leaderboard(
            result, values, clusters=clusters, seed=plan.seed
        )
    if baseline is not None:
        mean = baseline.mean if baseline.mean is not None else 0.0
        drop = gate.parse_allowed_drop(args.allowed_drop, result.metric.name, mean)
        extras["gate"] = gate.regression_gate(
            baseline,
            result,
            allowed_drop=drop,
            clusters=clusters,
            sequential=args.sequential,
            undecided=args.undecided,
        )
    return result, extras


def _extra_record(extras: dict[str, Any]) -> dict[str, Any]:
    """The keys the decision options add after the check's own record."""
    from evalvalidity.report import records as report

    record: dict[str, Any] = {}
    if "clustered" in extras:
        record["clustered"] = report.clustered_to_dict(extras["clustered"])
    if "leaderboard" in extras:
        record["leaderboard"] = report.leaderboard_to_dict(*extras["leaderboard"])
    if "gate" in extras:
        record["gate"] = report.gate_to_dict(extras["gate"])
    return record


def _extra_text(extras: dict[str, Any], markdown: bool) -> str:
    from evalvalidity.report import records as report

    text = ""
    stats = extras.get("clustered")
    if "clustered" in extras:
        if stats is None:
            text += "  clustered: too few clusters (or constant scores) for a clustered interval\n"
        else:
            text += (
                f"{'- ' if markdown else '  '}clustered ({stats.source}, {stats.n_clusters:,} "
                f"clusters): mean {stats.mean:.4g} [{stats.low:.4g}, {stats.high:.4g}] (naive "
                f"[{stats.naive_low:.4g}, {stats.naive_high:.4g}]), design effect "
                f"{stats.design_effect:.3g}, smallest detectable difference "
                f"{stats.min_detectable_difference:.3g} (naive "
                f"{stats.naive_min_detectable_difference:.3g}); {stats.queries_needed:,} "
                f"queries like these to detect {stats.delta:g}\n"
            )
    if "leaderboard" in extras and not markdown:
        text += report.leaderboard_to_text(extras["leaderboard"][0])
    if "gate" in extras:
        gate = extras["gate"]
        text += "\n" + (report.gate_to_markdown(gate) if markdown else report.gate_to_text(gate))
    return text


def run(args: argparse.Namespace) -> int:
    """Run the check, print it, and gate on the verdict (and on the baseline)."""
    from evalvalidity.io.history import record_check
    from evalvalidity.io.workspace import default_path
    from evalvalidity.report import records as report

    result, extras = _decisions(args)
    extra = _extra_record(extras)
    text: str | None = None
    if args.format == "markdown":
        text = report.to_markdown(result, leaderboard=extras.get("leaderboard")) + _extra_text(
            extras, True
        )
    elif args.format == "text":
        text = report.to_text(result) + _extra_text(extras, False)
    if args.history is not None:
        record = {**report.to_dict(result), **extra}
        record_check(args.workspace or default_path(), record, label=args.history or None)
    if text is None:
        # JSON is streamed from the triage table's columns, a block of rows at a time: neither
        # a dict per query nor the whole text is ever held in memory.
        _write_json(args.output, itertools.chain(report.iter_json(result, extra), ("\n",)))
    else:
        if args.output:
            from evalvalidity.cli._common import write_output_file

            write_output_file(args.output, text)
        sys.stdout.write(text)
    gate_failed = "gate" in extras and not extras["gate"].passed
    return 1 if result.verdict in _GATES[args.fail_on] or gate_failed else 0


def _write_json(output: str | None, pieces: Iterable[str]) -> None:
    """Write ``pieces`` to ``output`` (all or nothing), then to stdout, a piece at a time."""
    if not output:
        for piece in pieces:
            sys.stdout.write(piece)
        return
    from evalvalidity.cli._common import write_output_file

    path = write_output_file(output, pieces)
    with open(path, encoding="utf-8") as handle:
        while piece := handle.read(1 << 20):
            sys.stdout.write(piece)
