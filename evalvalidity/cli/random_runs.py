"""``evalvalidity random-runs``: seeded random runs for Check 1 on your own harness.

``noise-run`` is its former name, kept as an alias that warns on standard error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalvalidity.cli._common import (
    add_pool_arguments,
    add_workspace_argument,
    load_table,
    pool_from_args,
    run_display_name,
)
from evalvalidity.errors import ParameterError

__all__ = ["register", "run"]


_DESCRIPTION = (
    "Write S seeded, uniformly random runs (TREC format) over each judged query's declared "
    "pool. Score them with your own harness and give its per-query output to `evalvalidity "
    "check --harness-output FILE` (trec_eval -q lines, or CSV seed,qid,value): the check "
    "compares it with the exact floor of the declared pool."
)


def register(subparsers: Any) -> None:
    """Add the ``random-runs`` subcommand and its deprecated alias ``noise-run``."""
    parser = subparsers.add_parser(
        "random-runs",
        help="write seeded random runs over the declared pool, for Check 1 on your harness",
        description=_DESCRIPTION,
    )
    _add_arguments(parser)
    parser.set_defaults(func=run)
    alias = subparsers.add_parser(
        "noise-run",
        help="former name of random-runs (deprecated)",
        description=_DESCRIPTION + " Deprecated name of `evalvalidity random-runs`.",
    )
    _add_arguments(alias)
    alias.set_defaults(func=_run_deprecated)


def _add_arguments(parser: Any) -> None:
    parser.add_argument("--qrels", required=True, metavar="FILE", help="the judgements")
    add_pool_arguments(parser, required=True)
    parser.add_argument("--seeds", type=int, required=True, metavar="S", help="number of runs")
    parser.add_argument(
        "--depth",
        type=int,
        default=1000,
        help="items ranked per query (default 1000, or the pool if smaller)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write into")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--tag",
        default="noise",
        help="the run tag; each run's tag is TAG-SEED, which trec_eval prints on its runid line "
        "(default noise)",
    )
    parser.add_argument(
        "--metric",
        metavar="M",
        help="the metric the harness will compute (recorded in the manifest; Check 1 warns "
        "when another one is checked)",
    )
    add_workspace_argument(parser)


def _run_deprecated(args: argparse.Namespace) -> int:
    """``noise-run``: warn that the command is now ``random-runs``, then run it."""
    print(
        "evalvalidity noise-run: deprecated, use `evalvalidity random-runs` (same arguments).",
        file=sys.stderr,
    )
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Write the runs and a manifest describing them."""
    from evalvalidity.analysis.check1 import random_runs
    from evalvalidity.core.metrics import parse_metric

    if args.seeds < 1:
        raise ParameterError(f"--seeds must be at least 1. Got {args.seeds}.")
    if args.depth < 1:
        raise ParameterError(f"--depth must be at least 1. Got {args.depth}.")
    if any(c.isspace() for c in args.tag) or not args.tag:
        raise ParameterError(f"--tag must be one word. Got {args.tag!r}.")
    metric = parse_metric(args.metric).name if args.metric else None
    pool = pool_from_args(args, required=True)
    qrels = load_table(args.qrels, "qrels", args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for seed, table in random_runs(qrels, pool, args.seeds, depth=args.depth, seed=args.seed):
        path = out / f"noise-seed{seed:04d}.trec"
        columns = table.to_pydict()
        lines = [
            f"{q} Q0 {d} {r} {s:.9f} {args.tag}-{seed}\n"
            for q, d, r, s in zip(
                columns["qid"], columns["docid"], columns["rank"], columns["score"], strict=True
            )
        ]
        tmp = path.with_suffix(".trec.tmp")
        tmp.write_text("".join(lines), encoding="utf-8")
        tmp.replace(path)
        files.append(path.name)
    manifest = {
        "qrels": run_display_name(args.qrels),
        "pool": {
            "kind": pool.kind,
            "pool_size": args.pool_size,
            "pools": args.pools and run_display_name(args.pools),
            "candidates": args.candidates and run_display_name(args.candidates),
            "units": args.units and run_display_name(args.units),
            "analytic_unit": args.analytic_unit,
        },
        "seeds": args.seeds,
        "seed": args.seed,
        "depth": args.depth,
        "metric": metric,
        "tag": f"{args.tag}-<seed>",
        "runs": files,
        "next": "score each run with your harness, collect per-query values as CSV "
        "seed,qid,value (or trec_eval -q lines, concatenated), then run evalvalidity check "
        "--harness-output FILE --harness-manifest manifest.json with the same pool arguments",
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(files)} runs to {out} (manifest.json describes them)")
    return 0
