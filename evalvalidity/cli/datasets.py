"""``evalvalidity datasets [list|show NAME|rename OLD NEW|delete NAME]``.

A name means the shared dataset unless ``--owner`` is given: then that owner's private dataset
of the name, else the shared one (see :mod:`evalvalidity.io.workspace`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from evalvalidity.cli._common import escape_text
from evalvalidity.io.workspace import DatasetInfo, Workspace, default_path

__all__ = ["register", "run"]


def _common_options(default: Any) -> argparse.ArgumentParser:
    """--workspace and --json, accepted before and after the action.

    After the action they default to ``argparse.SUPPRESS``, so that a value given before the
    action (``datasets --workspace W list``) is not overwritten by the action's default.
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--workspace",
        metavar="PATH",
        default=default,
        help=f"the workspace directory (default: $EVALVALIDITY_WORKSPACE or {default_path()})",
    )
    common.add_argument(
        "--json",
        action="store_true",
        default=False if default is None else default,
        help="print JSON",
    )
    return common


def register(subparsers: Any) -> None:
    """Add the ``datasets`` subcommand and its actions."""
    common = _common_options(argparse.SUPPRESS)  # after the action: leave unset if absent
    parser = subparsers.add_parser(
        "datasets",
        parents=[_common_options(None)],
        help="list, show, rename or delete workspace datasets",
        description="Manage the workspace's datasets (default action: list).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", parents=[common], help="list the datasets")
    listing.add_argument("--owner", help="also list the datasets private to this owner")
    listing.add_argument("--all", action="store_true", help="list private datasets too")
    show = actions.add_parser("show", parents=[common], help="show one dataset's provenance")
    show.add_argument("name", metavar="NAME")
    rename = actions.add_parser("rename", parents=[common], help="rename a dataset")
    rename.add_argument("old", metavar="OLD")
    rename.add_argument("new", metavar="NEW")
    delete = actions.add_parser("delete", parents=[common], help="delete a dataset")
    delete.add_argument("name", metavar="NAME")
    for action in (show, rename, delete):
        action.add_argument(
            "--owner", help="the owner whose private dataset NAME means (default: shared)"
        )
    parser.set_defaults(func=run, action=None, owner=None, all=False)


def _row(info: DatasetInfo) -> str:
    private = f"  [private: {escape_text(info.owner)}]" if info.owner is not None else ""
    return (
        f"{escape_text(info.name):<24} {info.kind:<11} {info.format:<9} {info.n_rows:>12,} rows"
        f"  {info.created}  {escape_text(info.source_name)}{private}"
    )


def run(args: argparse.Namespace) -> int:
    """Carry out the action; returns the exit code."""
    workspace = Workspace(args.workspace)
    action = args.action or "list"
    if action == "list":
        datasets = workspace.list(args.owner, all_owners=args.all)
        if args.json:
            print(json.dumps([d.to_json() for d in datasets], indent=1))
        elif not datasets:
            print(f"no datasets in {escape_text(workspace.path)}")
        else:
            for info in datasets:
                print(_row(info))
    elif action == "show":
        info = workspace.info(args.name, owner=args.owner)
        if args.json:
            print(json.dumps(info.to_json(), indent=1))
        else:
            for key, value in info.to_json().items():
                if key in ("rejected", "warnings"):
                    for item in value:
                        print(f"{key:<13} {escape_text(item)}")
                else:
                    print(f"{key:<13} {escape_text(value)}")
    elif action == "rename":
        info = workspace.rename(args.old, args.new, owner=args.owner)
        print(
            json.dumps(info.to_json(), indent=1)
            if args.json
            else f"renamed {args.old!r} to {info.name!r}"
        )
    else:
        workspace.delete(args.name, owner=args.owner)
        print(json.dumps({"deleted": args.name}) if args.json else f"deleted {args.name!r}")
    return 0
