"""Arguments and loading shared by the subcommands that read runs, judgements and pools."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalvalidity.errors import ParameterError
from evalvalidity.io.atomic import StorageError, atomic_write

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "add_pool_arguments",
    "add_workspace_argument",
    "check_line_field",
    "dataset_ref",
    "error_text",
    "escape_text",
    "load_table",
    "pool_declaration_from_args",
    "pool_from_args",
    "progress_printer",
    "run_display_name",
    "write_output_file",
]

# C0 controls, DEL, C1 controls, the Unicode line and paragraph separators, the bidirectional
# overrides and isolates (which reorder what a terminal shows), and lone surrogates (which a
# UTF-8 terminal cannot even encode).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


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
    from evalvalidity.analysis.plan import PoolDeclaration

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
    declared = pool_declaration_from_args(args, required=required)
    if declared is None:
        return None
    from evalvalidity.analysis.plan import PoolSpec

    if declared.kind == "corpus":
        return PoolSpec(corpus_size=declared.corpus_size)
    table = load_table(declared.ref.name, declared.kind, args)
    return PoolSpec(**{declared.kind: table, "analytic_unit": declared.analytic_unit})


def run_display_name(spec: str) -> str:
    r"""The name a run is shown under: its file name without folders, as valid text.

    A file name whose bytes are not UTF-8 reaches Python holding lone surrogates, which no
    table, chart or report can hold; each undecodable byte is shown as U+FFFD.

    >>> run_display_name("runs/bm25.trec"), run_display_name("runs/b\udce9m.trec")
    ('bm25.trec', 'b\ufffdm.trec')
    """
    name = os.path.basename(os.fspath(spec)) or spec
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def progress_printer(enabled: bool) -> Any:
    """A progress callback printing to standard error when it is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None

    def show(fraction: float, message: str) -> None:
        print(f"\r[{100 * fraction:5.1f} %] {message:<70}", end="", file=sys.stderr, flush=True)
        if fraction >= 1.0:
            print(file=sys.stderr)

    return show


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: object) -> str:
    r"""``text`` with every character that would act on a terminal written as an escape.

    Line breaks, tabs, escape sequences, other control characters, bidirectional overrides and
    lone surrogates become ``\n``, ``\t``, ``\x1b``, ``\u202e``, ... so that a query id
    or a file name can neither forge a line nor recolour, move or hide what a person reads. A
    backslash is left as it is: the output is for reading, not for parsing back.

    Examples
    --------
    >>> escape_text("q1\n\x1b[31mred\tx")
    'q1\\n\\x1b[31mred\\tx'
    >>> print(escape_text("caf\u00e9 \u202egnp.exe \ud800"))
    café \u202egnp.exe \ud800
    """
    return _UNSAFE.sub(_escape_one, str(text))


def check_line_field(value: str, what: str, output: str) -> str:
    r"""``value``, unless it would break a line of an output (whitespace, a control character).

    Raises
    ------
    ParameterError
        Naming the value (escaped) and the output format.

    Examples
    --------
    >>> check_line_field("q1", "query id", "--format trec")
    'q1'
    >>> check_line_field("q1\nall", "query id", "--format trec")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The query id 'q1\nall' holds whitespace or a ... json.
    """
    if _UNSAFE.search(value) or any(char.isspace() for char in value):
        raise ParameterError(
            f"The {what} '{escape_text(value)}' holds whitespace or a control character, which "
            f"would break a line of {output}; use --format json."
        )
    return value


def write_output_file(path: str | os.PathLike[str], text: str | Iterable[str]) -> Path:
    """Write an output file of the command line whole, or leave the old one as it was.

    Parameters
    ----------
    path : str or path-like
        The file; its folder must exist.
    text : str or iterable of str
        The whole content (written as UTF-8), or its pieces in order.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    StorageError
        When ``path`` is a folder, its folder is missing, or the write fails (a full disk says
        so); the old file is then untouched.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     try:
    ...         write_output_file(Path(folder) / "missing" / "check.json", "{}")
    ...     except StorageError as error:
    ...         print(str(error).replace(folder, "<tmp>"))
    Cannot write <tmp>/missing/check.json: the folder <tmp>/missing does not exist.
    """
    target = Path(path)
    shown = escape_text(os.fspath(path))  # as given: "out/." stays "out/."
    if target.is_dir():
        raise StorageError(f"Cannot write {shown}: it is a folder; give a file name.")
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise StorageError(
            f"Cannot write {shown}: the folder "
            f"{escape_text(os.path.dirname(os.fspath(path)) or '.')} {what}."
        )
    if target.exists() and not target.is_file():
        raise StorageError(f"Cannot write {shown}: it is not a regular file.")
    return atomic_write(target, text)


_LIBRARY_HINT = "pass drop_bad_rows=True (--drop-bad-rows) to keep only the good rows."


def error_text(exc: BaseException, command: str) -> str:
    r"""The message of ``exc`` as ``command`` shows it: each line escaped, hints that fit it.

    The library's hint about bad rows names the ``drop_bad_rows`` argument; ``ingest`` takes
    it as ``--drop-bad-rows``, the other commands read files as they are, so they point at
    ``ingest``.

    Examples
    --------
    >>> print(error_text(ValueError("q\x1b[2J\nFix the file, or " + _LIBRARY_HINT), "score"))
    q\x1b[2J
    Fix the file, or ingest it with `evalvalidity ingest --drop-bad-rows` and give the ...
    """
    text = str(exc)
    if getattr(exc, "n_rejected", None) == 1 and _LIBRARY_HINT not in text:
        text += "\nFix the file, or " + _LIBRARY_HINT
    if _LIBRARY_HINT in text:
        hint = (
            "pass --drop-bad-rows to keep only the good rows."
            if command == "ingest"
            else "ingest it with `evalvalidity ingest --drop-bad-rows` and give the dataset's "
            "name instead of the file."
        )
        text = text.replace(_LIBRARY_HINT, hint)
    return "\n".join(escape_text(line) for line in text.split("\n"))
