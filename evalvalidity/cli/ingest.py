"""``evalvalidity ingest FILE``: read a file into a named workspace dataset."""

from __future__ import annotations

import argparse
import json
from typing import Any

from evalvalidity.cli._common import escape_text
from evalvalidity.io.ingest import FORMATS, KINDS
from evalvalidity.io.workspace import Workspace, default_path

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``ingest`` subcommand."""
    parser = subparsers.add_parser(
        "ingest",
        help="read a run, qrels, pool metadata or harness output into the workspace",
        description="Read FILE (format and kind detected from its content) into a named "
        "dataset of the workspace. A file with bad rows is refused, with each bad line "
        "named, unless --drop-bad-rows is given.",
    )
    parser.add_argument("file", metavar="FILE", help="the file to read (may be gzip-compressed)")
    parser.add_argument("--kind", choices=KINDS, help="what the file holds (default: detected)")
    parser.add_argument("--format", choices=FORMATS, help="its format (default: detected)")
    parser.add_argument("--name", help="the dataset's name (default: the file name)")
    parser.add_argument(
        "--drop-bad-rows", action="store_true", help="keep the good rows of a file with bad ones"
    )
    parser.add_argument(
        "--workspace",
        metavar="PATH",
        help=f"the workspace directory (default: $EVALVALIDITY_WORKSPACE or {default_path()})",
    )
    parser.add_argument("--owner", help="keep the dataset private to this owner")
    parser.add_argument("--json", action="store_true", help="print the dataset's record as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Ingest ``args.file``; returns the exit code."""
    workspace = Workspace(args.workspace)
    info = workspace.add(
        args.file,
        kind=args.kind,
        format=args.format,
        name=args.name,
        drop_bad_rows=args.drop_bad_rows,
        owner=args.owner,
    )
    if args.json:
        print(json.dumps(info.to_json(), indent=1))
        return 0
    print(
        f"added {info.name!r} ({info.kind}, {info.format}"
        f"{', gzip' if info.compression else ''}): {info.n_rows:,} rows"
        f", {info.n_rejected:,} dropped"
    )
    for line, reason in info.rejected:
        print(f"  dropped line {line}: {escape_text(reason)}")
    for warning in info.warnings:
        print(f"  note: {escape_text(warning)}")
    return 0
