"""The ``evalvalidity`` command line.

Each subcommand lives in its own module of this package with two functions:
``register(subparsers)`` adds its parser (and sets ``func`` to its runner) and the runner takes
the parsed arguments and returns the exit code. Exit codes are a contract:

- 0: success (for ``check``: the verdict passes the gate);
- 1: ``check``'s verdict fails the gate;
- 2: bad usage or bad input, with a message naming the file, the line and what was expected.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from evalvalidity import __version__
from evalvalidity.errors import EvalValidityError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_GATE_FAILED",
    "EXIT_OK",
    "build_parser",
    "end_import_window",
    "main",
]

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2

# Subcommand modules, in the order `evalvalidity --help` lists them. A module listed here that
# does not exist yet is skipped, so that the command line grows one module at a time.
_COMMAND_MODULES = (
    "floor",
    "score",
    "ingest",
    "datasets",
    "random_runs",
    "check",
    "live",
    "suite",
    "report",
    "app",
)
# Commands whose module is not named after them (``random-runs`` lives in ``random_runs``).
_COMMAND_ALIASES = {"noise-run": "random_runs"}


#: Holds True while :func:`main` keeps the cyclic garbage collector off for the imports.
_IMPORT_WINDOW: list[bool] = []


def end_import_window() -> None:
    """Turn the cyclic garbage collector back on, once a command has imported what it needs.

    Importing a command's libraries (DuckDB, numpy, pyarrow and this package) allocates some
    200,000 objects and frees almost none, yet the collector ran about 80 times over them,
    for nothing: 30-45 ms of CPU, a tenth of a score of the write-up's toy run. Run as the
    process's own command line, :func:`main` turns the collector off until the parser (with
    the command's module) is built, or, for a command whose parser sets
    ``ends_import_window``, until the command calls this function after its own imports.
    What was imported is then frozen (:func:`gc.freeze`: no later collection walks it again)
    and the collector runs as usual for the work itself. Does nothing outside that window.
    """
    if _IMPORT_WINDOW:
        _IMPORT_WINDOW.clear()
        gc.freeze()
        gc.enable()


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on exit code 2 and the program name in front."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Build the parser with every available subcommand, or with ``command``'s alone.

    Each subcommand's module is imported to register it, and with it what that module imports
    at its top; naming the command (as :func:`main` does when the first argument is one)
    imports only its own module, so that ``evalvalidity floor`` never loads DuckDB. A name
    that no module registers falls back to the full parser (whose error lists the commands).
    """
    parser = _Parser(
        prog="evalvalidity",
        description="Does your retrieval benchmark measure anything? Exact noise floors, "
        "harness checks and leak detection.",
    )
    parser.add_argument("--version", action="version", version=f"evalvalidity {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    module_name = _COMMAND_ALIASES.get(command, command.replace("-", "_")) if command else None
    if module_name in _COMMAND_MODULES and _register(module_name, subparsers):
        if command in subparsers.choices:
            return parser
        return build_parser()
    for name in _COMMAND_MODULES:
        _register(name, subparsers)
    return parser


def _register(name: str, subparsers: Any) -> bool:
    """Register the subcommand module ``name``; False when it does not exist (yet)."""
    try:
        module = importlib.import_module(f"evalvalidity.cli.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"evalvalidity.cli.{name}":
            return False
        raise
    module.register(subparsers)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if argv is None and gc.isenabled():  # the process's own command line
        gc.disable()
        _IMPORT_WINDOW.append(True)
    try:
        return _run(arguments)
    finally:
        end_import_window()


def _run(arguments: list[str]) -> int:
    """Parse ``arguments`` and run the command they name; returns the exit code."""
    parser = build_parser(arguments[0] if arguments else None)
    args = parser.parse_args(arguments)
    if not getattr(args, "ends_import_window", False):
        end_import_window()
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    if sys.stdout is None:  # started with standard output closed (`>&-`)
        print(
            f"evalvalidity {args.command}: error: Cannot write to standard output: it is closed.",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a full or closed output fails here, not after the exit code is set
        return code
    except EvalValidityError as exc:
        from evalvalidity.cli._common import error_text

        print(
            f"evalvalidity {args.command}: error: {error_text(exc, args.command)}", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `evalvalidity score ... | head`
        return EXIT_OK
    except OSError as exc:  # standard output on a full disk, /dev/full, ...
        from evalvalidity.io.atomic import storage_error

        action = f"use {exc.filename}" if exc.filename else "write the output"
        print(f"evalvalidity {args.command}: error: {storage_error(action, exc)}", file=sys.stderr)
        _discard_stdout()
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _discard_stdout() -> None:
    """Point standard output at /dev/null, so that the flush at exit does not fail again."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
