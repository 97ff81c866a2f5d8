"""``evalvalidity suite``: one report over several benchmarks declared in a TOML file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from evalvalidity.cli._common import add_workspace_argument, progress_printer

__all__ = ["register", "run"]

_GATES = {"broken": ("broken",), "warning": ("broken", "warning"), "never": ()}


def register(subparsers: Any) -> None:
    """Add the ``suite`` subcommand."""
    parser = subparsers.add_parser(
        "suite",
        help="check several benchmarks declared in a TOML file, in one table",
        description="Check every benchmark of a suite file (its runs, qrels and pool): a table "
        "of benchmarks × floor, ceiling, headroom, Check 1, Check 2, power and verdict, each "
        "benchmark's leaderboard, the suite mean of each run with a stratified interval, and the "
        "benchmarks that cannot separate the suite's runs. Exit 0 when every verdict passes the "
        "gate (and, with --fail-on-flagged, no benchmark is flagged), 1 otherwise, 2 on bad "
        "usage or input.",
    )
    parser.add_argument("suite", metavar="SUITE.toml", help="the suite file")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument(
        "--fail-on",
        choices=tuple(_GATES),
        default="broken",
        help="verdicts that fail the gate: broken (default), warning (warning or broken) or never",
    )
    parser.add_argument(
        "--fail-on-flagged",
        action="store_true",
        help="also fail when a benchmark cannot separate the suite's runs",
    )
    parser.add_argument(
        "--n-resamples",
        type=int,
        default=10_000,
        metavar="B",
        help="resamples of the rank bootstrap and the randomization tests (default 10000)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="also write the output to FILE")
    add_workspace_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the suite, print it, and gate on the verdicts."""
    from evalvalidity.analysis.suite import load_suite, run_suite
    from evalvalidity.errors import ParameterError
    from evalvalidity.report import records as report

    if args.n_resamples < 1:
        raise ParameterError(f"--n-resamples must be at least 1. Got {args.n_resamples}.")
    suite = load_suite(args.suite)
    result = run_suite(
        suite,
        workspace=args.workspace,
        progress=progress_printer(args.format == "text"),
        n_resamples=args.n_resamples,
    )
    if args.format == "json":
        text = json.dumps(report.suite_to_dict(result), indent=2, ensure_ascii=False) + "\n"
    elif args.format == "markdown":
        text = report.suite_to_markdown(result)
    else:
        text = report.suite_to_text(result)
    if args.output:
        from evalvalidity.cli._common import write_output_file

        write_output_file(args.output, text)
    sys.stdout.write(text)
    failed = any(
        o.result is None or o.result.verdict in _GATES[args.fail_on] for o in result.outcomes
    )
    if args.fail_on_flagged and result.flagged:
        failed = True
    return 1 if failed else 0
