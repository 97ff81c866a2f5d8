"""``evalvalidity floor``: the exact noise floor of one query shape."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from evalvalidity.core.metrics import parse_metric
from evalvalidity.errors import ParameterError


def register(subparsers: Any) -> None:
    """Add the ``floor`` subcommand."""
    parser = subparsers.add_parser(
        "floor",
        help="exact expected value, standard deviation and ceiling of a metric under a random "
        "ranking",
        description="Print the exact expected value and standard deviation of METRIC when a pool "
        "of N items, G of them relevant, is ranked in a uniformly random order, and the best "
        "value achievable (the ceiling).",
    )
    parser.add_argument("metric", metavar="METRIC", help="e.g. mrr@10, ndcg@10, p@5, ap")
    parser.add_argument(
        "--pool-size",
        "-N",
        type=int,
        required=True,
        metavar="N",
        help="items in the pool, in the unit the scorer ranks",
    )
    parser.add_argument(
        "--gold",
        "-G",
        type=int,
        metavar="G",
        help="relevant items in the pool (default: the number of --gains)",
    )
    parser.add_argument(
        "--judged",
        type=int,
        metavar="R",
        help="judged relevant items in all, when some are outside the pool "
        "(divides recall, AP and R-precision; default G)",
    )
    parser.add_argument(
        "--gains", metavar="3,2,1", help="grades of the relevant items in the pool, for nDCG"
    )
    parser.add_argument(
        "--judged-gains",
        metavar="3,2,2,1",
        help="grades of every judged relevant item, in the pool or not, for nDCG's ideal DCG "
        "(default: --gains; with judged items outside the pool give these, not --judged)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def _parse_gains(text: str, option: str = "--gains") -> list[int]:
    try:
        gains = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ParameterError(
            f"{option} must be comma-separated whole numbers such as 3,2,1. Got {text!r} instead."
        ) from None
    if not gains or min(gains) < 1:
        raise ParameterError(
            f"{option} must list the grades (>= 1) of the relevant items. Got {text!r} instead."
        )
    return gains


def run(args: argparse.Namespace) -> int:
    """Compute and print the floor."""
    from evalvalidity.core.floors import noise_floor

    metric = parse_metric(args.metric)
    gains = _parse_gains(args.gains) if args.gains is not None else None
    gold = args.gold
    if gold is None:
        if gains is None:
            raise ParameterError("Give --gold G (or --gains for nDCG).")
        gold = len(gains)
    elif gains is not None and len(gains) != gold:
        raise ParameterError(
            f"--gains lists {len(gains)} grades but --gold is {gold}; give one grade per "
            "relevant item in the pool."
        )
    judged_gains = (
        _parse_gains(args.judged_gains, "--judged-gains") if args.judged_gains is not None else None
    )
    judged = args.judged
    if judged_gains is not None:
        if gains is None:
            raise ParameterError(
                "--judged-gains needs --gains, the grades of the relevant items in the pool."
            )
        if judged is None:
            judged = len(judged_gains)
        elif judged != len(judged_gains):
            raise ParameterError(
                f"--judged-gains lists {len(judged_gains)} grades but --judged is {judged}; "
                "give one grade per judged relevant item."
            )
    elif gains is not None and judged is not None and judged != gold:
        raise ParameterError(
            f"With --gains and --judged {judged} > --gold {gold}, give the grades of every "
            "judged relevant item with --judged-gains (the ideal DCG needs them)."
        )
    floor = noise_floor(
        metric,
        np.array([args.pool_size]),
        np.array([gold]),
        judged=None if judged is None else np.array([judged]),
        gains=None if gains is None else [np.array(gains)],
        judged_gains=None if judged_gains is None else [np.array(judged_gains)],
    )
    record = {
        "metric": metric.name,
        "pool_size": args.pool_size,
        "gold": gold,
        "judged": judged if judged is not None else gold,
        "expected": float(floor.expected[0]),
        "std": float(floor.std[0]),
        "ceiling": float(floor.ceiling[0]),
        "headroom": float(floor.headroom[0]),
        "floor_over_ceiling": (
            float(floor.expected[0] / floor.ceiling[0]) if floor.ceiling[0] > 0 else None
        ),
    }
    if gains is not None:
        record["gains"] = gains
    if judged_gains is not None:
        record["judged_gains"] = judged_gains
    if args.json:
        print(json.dumps(record, indent=2))
        return 0
    print(
        f"{metric.name} with N={args.pool_size}, G={gold}"
        + (f", R={judged}" if judged is not None else "")
    )
    print(f"  expected  {record['expected']:.6g}")
    print(f"  std       {record['std']:.6g}")
    print(f"  ceiling   {record['ceiling']:.6g}")
    share = record["floor_over_ceiling"]
    if share is not None:
        print(
            f"  headroom  {record['headroom']:.6g}  (a random ranker scores "
            f"{100 * share:.1f} % of the ceiling)"
        )
    return 0
