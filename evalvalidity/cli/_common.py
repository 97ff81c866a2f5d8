"""Arguments and loading shared by the subcommands that read runs, judgements and pools."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import pyarrow as pa

from evalvalidity.errors import ParameterError

__all__ = [
    "add_pool_arguments",
    "add_workspace_argument",
    "dataset_ref",
    "load_table",
    "pool_declaration_from_args",
    "pool_from_args",
    "progress_printer",
    "run_display_name",
]


def add_workspace_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--workspace PATH``."""
    parser.add_argument(
        "--workspace",
        metavar="PATH",
        help="workspace whose dataset names may stand in for files (default: "
        "$EVALVALIDITY_WORKSPACE, else ~/.local/share/evalvalidity/workspace)",
    )


def add_pool_arguments(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """Add the ways of declaring the pool: exactly one of them (or none, when optional)."""
    group = parser.add_argument_group(
        "the pool" + (" (give one)" if required else " (optional; give one to see floors)")
    )
    group.add_argument(
        "--pool-size",
        type=int,
        metavar="N",
        help="every query ranks a corpus of N items (in the run's unit)",
    )
    group.add_argument("--pools", metavar="FILE", help="per-query pool sizes (qid, pool_size)")
    group.add_argument(
        "--candidates", metavar="FILE", help="per-query candidate lists (qid, docid)"
    )
    group.add_argument(
        "--units",
        metavar="FILE",
        help="units map (chunk_id, doc_id): the run ranks chunks, the scorer "
        "deduplicates them to documents by first occurrence",
    )
    group.add_argument(
        "--analytic-unit",
        choices=("documents", "chunks"),
        default="documents",
        help="with --units: the floor of deduplicated chunk scores (documents, "
        "default) or of chunks as if never deduplicated (chunks)",
    )


def load_table(spec: str, kind: str, args: argparse.Namespace) -> pa.Table:
    """Load a file, or a dataset of the workspace, as the canonical ``kind`` table."""
    from evalvalidity.io.ingest import load

    return load(spec, kind, workspace=getattr(args, "workspace", None))


def dataset_ref(spec: str | os.PathLike[str]) -> Any:
    """A :class:`~evalvalidity.analysis.plan.DatasetRef`: an existing file, else a dataset name."""
    from evalvalidity.analysis.plan import DatasetRef

    name = os.fspath(spec)
    return DatasetRef.file(name) if os.path.isfile(name) else DatasetRef.dataset(name)


def pool_declaration_from_args(args: argparse.Namespace, *, required: bool) -> Any:
    """The :class:`~evalvalidity.analysis.plan.PoolDeclaration` the arguments give, or None."""
    from evalvalidity.analysis.plan import PoolDeclaration

    given = [
        flag
        for flag, value in (
            ("--pool-size", args.pool_size),
            ("--pools", args.pools),
            ("--candidates", args.candidates),
            ("--units", args.units),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise ParameterError(f"Declare the pool one way only; got {' and '.join(given)}.")
    if not given:
        if required:
            raise ParameterError(
                "Declare the pool: --pool-size N, --pools FILE, --candidates FILE or --units FILE."
            )
        return None
    if args.analytic_unit == "chunks" and args.units is None:
        raise ParameterError("--analytic-unit chunks needs --units FILE.")
    if args.pool_size is not None:
        if args.pool_size < 1:
            raise ParameterError(f"--pool-size must be at least 1. Got {args.pool_size}.")
        return PoolDeclaration(corpus_size=args.pool_size)
    if args.pools is not None:
        return PoolDeclaration(pools=dataset_ref(args.pools))
    if args.candidates is not None:
        return PoolDeclaration(candidates=dataset_ref(args.candidates))
    return PoolDeclaration(units=dataset_ref(args.units), analytic_unit=args.analytic_unit)


def pool_from_args(args: argparse.Namespace, *, required: bool) -> Any:
    """The :class:`~evalvalidity.analysis.plan.PoolSpec` the arguments declare, or None."""
    from evalvalidity.analysis.plan import PoolSpec

    declared = pool_declaration_from_args(args, required=required)
    if declared is None:
        return None
    if declared.kind == "corpus":
        return PoolSpec(corpus_size=declared.corpus_size)
    table = load_table(declared.ref.name, declared.kind, args)
    return PoolSpec(**{declared.kind: table, "analytic_unit": declared.analytic_unit})


def run_display_name(spec: str) -> str:
    """The name a run is shown under: its file name without folders."""
    return os.path.basename(os.fspath(spec)) or spec


def progress_printer(enabled: bool) -> Any:
    """A progress callback printing to standard error when it is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None

    def show(fraction: float, message: str) -> None:
        print(f"\r[{100 * fraction:5.1f} %] {message:<70}", end="", file=sys.stderr, flush=True)
        if fraction >= 1.0:
            print(file=sys.stderr)

    return show
