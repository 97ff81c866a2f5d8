"""``evalvalidity app``: start the dashboard (Streamlit) on a workspace, the demo by default."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from evalvalidity.errors import ParameterError

__all__ = ["locate_app", "register", "run", "streamlit_command"]


def register(subparsers: Any) -> None:
    """Add the ``app`` subcommand."""
    parser = subparsers.add_parser(
        "app",
        help="start the dashboard in the browser (builds the demo workspace when missing)",
        description="Start the dashboard: `streamlit run app/main.py` from the repository root, "
        "with the project's .streamlit/config.toml, on a workspace (default: "
        "$EVALVALIDITY_WORKSPACE, else ~/.local/share/evalvalidity/workspace). The bundled "
        "demo (the write-up's examples and Cranfield) is added first when it is missing.",
    )
    parser.add_argument("--workspace", metavar="PATH", help="the workspace directory")
    parser.add_argument(
        "--port", type=int, default=8501, metavar="N", help="the port to serve on (default 8501)"
    )
    parser.add_argument(
        "--no-demo", action="store_true", help="do not add the demo datasets to the workspace"
    )
    parser.set_defaults(func=run)


def locate_app() -> tuple[Path, Path]:
    """Find the dashboard: ``(folder to run from, entry script)``.

    An editable install (the repository) has ``app/main.py`` next to the package and the
    Streamlit configuration in ``.streamlit/`` at the repository's root; a wheel carries both
    inside the package, laid out the same way under ``evalvalidity/_app``.

    Raises
    ------
    ParameterError
        When neither layout is found.
    """
    import evalvalidity

    package = Path(evalvalidity.__file__).resolve().parent
    for root, script in (
        (package.parent, package.parent / "app" / "main.py"),
        (package / "_app", package / "_app" / "app" / "main.py"),
    ):
        if script.is_file():
            return root, script
    raise ParameterError(
        f"Cannot find the dashboard: neither {package.parent / 'app' / 'main.py'} nor "
        f"{package / '_app' / 'app' / 'main.py'} exists. Reinstall evalvalidity with its app."
    )


def streamlit_command(script: Path, port: int) -> list[str]:
    """The command line that serves ``script`` on ``port`` with this Python."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        os.fspath(script),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]


def run(args: argparse.Namespace) -> int:
    """Build the demo if needed, then serve the dashboard until interrupted."""
    from evalvalidity.analysis import examples as demo
    from evalvalidity.io.workspace import default_path

    if not 1 <= args.port <= 65535:
        raise ParameterError(f"--port must be between 1 and 65535. Got {args.port}.")
    if importlib.util.find_spec("streamlit") is None:
        raise ParameterError("The dashboard needs Streamlit: pip install 'evalvalidity[app]'.")
    workspace = Path(args.workspace).resolve() if args.workspace else default_path().resolve()
    if not args.no_demo and not demo.is_built(workspace):
        print(f"adding the demo datasets to {workspace} ...", file=sys.stderr)
        added = demo.build_demo(workspace)
        print(f"added {len(added)} datasets", file=sys.stderr)
    root, script = locate_app()
    env = {
        **os.environ,
        "EVALVALIDITY_WORKSPACE": os.fspath(workspace),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    print(
        f"serving the dashboard on http://localhost:{args.port} (workspace {workspace}); "
        "Ctrl-C stops it",
        file=sys.stderr,
    )
    return subprocess.call(streamlit_command(script, args.port), cwd=root, env=env)
