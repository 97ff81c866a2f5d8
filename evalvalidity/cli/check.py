"""``evalvalidity check``: the benchmark's health, as a gate for CI."""

from __future__ import annotations

import argparse
import sys
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
    add_pool_arguments(parser, required=True)
    parser.add_argument(
        "--units-rule",
        metavar="prefix:SEP",
        help="the run ranks segments DOC SEP SEGMENT of judged documents, e.g. prefix:# for "
        "msmarco_v2.1_doc_54_319914167#4_733739871: map each id to the part before SEP "
        "(no units file needed)",
    )
    parser.add_argument(
        "--metric", default="mrr@10", help="the metric (default mrr@10, i.e. rr@10)"
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
    parser.set_defaults(func=run)


#: The arguments a saved plan replaces, with their defaults.
_PLAN_ARGUMENTS = {
    "run": None,
    "qrels": None,
    "noise_run": None,
    "noise_components_off": None,
    "harness_output": None,
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
    return CheckPlan(
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


def result_from_args(args: argparse.Namespace, progress: Any = None) -> Any:
    """Build the plan the arguments describe (saving it with --save-plan) and run it."""
    from evalvalidity.analysis.check import check_benchmark
    from evalvalidity.io.atomic import atomic_write

    plan = plan_from_args(args)
    if getattr(args, "save_plan", None):
        atomic_write(args.save_plan, plan.to_json() + "\n")
    return check_benchmark(plan, workspace=getattr(args, "workspace", None), progress=progress)


def run(args: argparse.Namespace) -> int:
    """Run the check, print it, and gate on the verdict."""
    from evalvalidity.report import records as report

    result = result_from_args(args, progress=progress_printer(args.format == "text"))
    if args.format == "json":
        text = report.to_json(result) + "\n"
    elif args.format == "markdown":
        text = report.to_markdown(result)
    else:
        text = report.to_text(result)
    sys.stdout.write(text)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 1 if result.verdict in _GATES[args.fail_on] else 0
