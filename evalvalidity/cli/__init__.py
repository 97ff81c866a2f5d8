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
import importlib
import sys
from collections.abc import Sequence

from evalvalidity import __version__
from evalvalidity.errors import EvalValidityError

__all__ = ["EXIT_BAD_INPUT", "EXIT_GATE_FAILED", "EXIT_OK", "build_parser", "main"]

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


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on exit code 2 and the program name in front."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the parser with every available subcommand."""
    parser = _Parser(
        prog="evalvalidity",
        description="Does your retrieval benchmark measure anything? Exact noise floors, "
        "harness checks and leak detection.",
    )
    parser.add_argument("--version", action="version", version=f"evalvalidity {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"evalvalidity.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"evalvalidity.cli.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
