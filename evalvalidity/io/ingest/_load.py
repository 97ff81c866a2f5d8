"""Resolve a file path or a workspace dataset name to a canonical table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from evalvalidity.errors import ParameterError
from evalvalidity.io.ingest._read import read
from evalvalidity.io.ingest._spec import KIND_NOUNS, KINDS

if TYPE_CHECKING:
    from evalvalidity.io.workspace import Workspace


def load(
    spec: str | os.PathLike[str],
    kind: str,
    workspace: Workspace | str | os.PathLike[str] | None = None,
    *,
    owner: str | None = None,
) -> pa.Table:
    """Return the ``kind`` table named by ``spec``: a file path, or a workspace dataset name.

    An existing file wins; otherwise ``spec`` names a dataset of ``workspace`` (a
    :class:`~evalvalidity.io.workspace.Workspace` or its path; by default the default workspace,
    see :func:`evalvalidity.io.workspace.default_path`) as ``owner`` sees it: its own private
    dataset, else the shared one (None: shared datasets only). Another owner's private dataset
    is reported exactly as a missing one. A file with bad rows raises, as :func:`read` does.

    Examples
    --------
    >>> load("no-such-run.trec", "run", workspace="/nonexistent-workspace")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: 'no-such-run.trec' is neither a file nor a dataset of the workspace /nonexistent-workspace.
    """
    if kind not in KINDS:
        raise ParameterError(f"Unknown dataset kind {kind!r}; expected one of {', '.join(KINDS)}.")
    if Path(spec).is_file():
        return read(spec, kind=kind).table
    from evalvalidity.io.workspace import Workspace, default_path

    if isinstance(workspace, Workspace):
        ws: Workspace | None = workspace
        where = os.fspath(workspace.path)
    else:
        root = Path(workspace) if workspace is not None else default_path()
        where = os.fspath(root)
        ws = Workspace(root) if (root / "manifest.json").is_file() else None
    name = os.fspath(spec)
    info = ws.find(name, owner=owner) if ws is not None else None
    if ws is None or info is None:
        from evalvalidity.io.ingest._source import not_a_regular_file

        what = not_a_regular_file(name)
        if what is not None:
            raise ParameterError(f"{name!r} {what}, not a file to read nor a dataset's name.")
        raise ParameterError(f"{name!r} is neither a file nor a dataset of the workspace {where}.")
    if info.kind != kind:
        raise ParameterError(
            f"The dataset {name!r} holds {KIND_NOUNS[info.kind]}, not {KIND_NOUNS[kind]}."
        )
    return ws.table(name, owner=owner)
