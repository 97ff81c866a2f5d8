"""``evalvalidity check``: the benchmark's health, as a gate for CI."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalvalidity.cli._common import (
    add_pool_arguments,
    add_workspace_argument,
    load_table,
    pool_from_args,
    progress_printer,
    run_display_name,
)
from evalvalidity.errors import ParameterError

__all__ = ["add_check_arguments", "register", "result_from_args", "run"]

_GATES = {"broken": ("broken",), "warning": ("broken", "warning"), "never": ()}


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments that describe a benchmark check (shared with ``report``)."""
    parser.add_argument(
        "--run",
        action="append",
        metavar="FILE",
        required=True,
        help="the model's run (a file or a workspace dataset); repeat to "
        "compare more runs with the first",
    )
    parser.add_argument("--qrels", required=True, metavar="FILE", help="the judgements")
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


def result_from_args(args: argparse.Namespace, progress: Any = None) -> Any:
    """Load the inputs the arguments name and run the check; returns a CheckResult."""
    from evalvalidity.analysis.checks import check_benchmark

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
    pool = pool_from_args(args, required=True)
    qrels = load_table(args.qrels, "qrels", args)
    runs = args.run
    model = load_table(runs[0], "run", args)
    others = {}
    for spec in runs[1:]:
        name = run_display_name(spec)
        if name in others or name == run_display_name(runs[0]):
            name = spec
        others[name] = load_table(spec, "run", args)
    noise = load_table(args.noise_run, "run", args) if args.noise_run else None
    harness = load_table(args.harness_output, "harness", args) if args.harness_output else None
    components = (
        [c.strip() for c in args.noise_components_off.split(",") if c.strip()]
        if args.noise_components_off
        else None
    )
    return check_benchmark(
        model,
        qrels,
        pool=pool,
        metric=args.metric,
        noise_run=noise,
        harness_output=harness,
        other_runs=others or None,
        run_name=run_display_name(runs[0]),
        seeds=seeds,
        ties=args.ties,
        noise_components_off=components,
        seed=args.seed,
        progress=progress,
    )


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
    if args.output:
        from evalvalidity.cli._common import write_output_file

        write_output_file(args.output, text)
    sys.stdout.write(text)
    return 1 if result.verdict in _GATES[args.fail_on] else 0
