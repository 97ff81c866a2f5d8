"""``evalvalidity report --out DIR``: the stakeholder report of a benchmark check."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from evalvalidity.cli._common import progress_printer
from evalvalidity.cli.check import add_check_arguments, saved_plan_from_args

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    parser = subparsers.add_parser(
        "report",
        help="write the HTML report, each chart as PNG and SVG, the check's JSON and Markdown",
        description="Run the same check as `evalvalidity check` and write, into DIR: "
        "report.html (one self-contained page, charts inlined as SVG, opens offline), "
        "check.json (the check --format json contract), summary.md (a pull-request comment) "
        "and charts/<name>.png and .svg. Exit 0 when written, 2 on bad usage or input.",
    )
    add_check_arguments(parser)
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="folder to write into (created if missing)"
    )
    parser.add_argument(
        "--title",
        default="Benchmark health report",
        help="the report's title (default: %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the check and write the report; prints the files written.

    The report holds the leaderboard when runs are compared, and each dataset's provenance.
    """
    from evalvalidity.analysis.check import check_benchmark, load_inputs
    from evalvalidity.analysis.compare import check_scores, run_leaderboard
    from evalvalidity.io.workspace import Workspace, default_path
    from evalvalidity.report.html import write_report
    from evalvalidity.report.provenance import dataset_provenance

    plan = saved_plan_from_args(args)
    workspace = getattr(args, "workspace", None)
    inputs = load_inputs(plan, workspace)
    result = check_benchmark(plan, inputs, progress=progress_printer(True))
    board = None
    if inputs.compare and result.run_name is not None:
        board = run_leaderboard(result, check_scores(plan, inputs, result), seed=plan.seed)
    uses_datasets = any(ref.source == "dataset" for ref in plan.refs.values())
    provenance = dataset_provenance(
        result,
        inputs,
        workspace=Workspace(workspace or default_path()) if uses_datasets else None,
    )
    paths = write_report(
        result, args.out, title=args.title, leaderboard=board, provenance=provenance
    )
    for path in paths:
        print(os.fspath(path))
    print(f"verdict: {result.verdict}", file=sys.stderr)
    return 0
