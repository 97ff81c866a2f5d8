"""The process's in-memory DuckDB databases, shared by the readers and the scorer.

Opening a DuckDB database costs about 50 ms of CPU (its catalog of built-in functions), more
than reading and scoring a small run: a command that read a run, read its judgements and
scored them paid it three times. :func:`connection` opens one in-memory database per memory
limit, once per process, and hands out a new connection to it on every call (DuckDB's
``cursor()``: its own transactions, temporary views and registered tables, and safe to use
from another thread). Settings that belong to the database (``memory_limit``,
``temp_directory``, ``threads``, ``preserve_insertion_order``) must not be changed through
such a connection; a caller that needs other settings opens its own database.

A database spills past its memory limit into a folder of the system's temporary directory,
made on first use and removed at exit. A child process made by ``fork`` opens its own.

Importing DuckDB costs about as much again (0.2 s): it happens on the first connection, and
:func:`deferred_connection` hands out one that connects on its first use, for work that often
needs no statement at all (reading a small file).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

__all__ = ["DEFAULT_MEMORY_LIMIT", "RETURN_FREED_MEMORY", "connection", "deferred_connection"]

#: The memory limit of the readers' database (``Limits.memory_limit``'s default), which the
#: scorer's in-memory path shares.
DEFAULT_MEMORY_LIMIT = "2GB"

#: Give memory a finished query freed back to the system (DuckDB's allocator otherwise keeps
#: it for reuse): a command's later steps then start from what is really held, and peaks of
#: successive steps do not add up (a million-query check held 0.5 GB less after scoring).
RETURN_FREED_MEMORY: dict[str, str | bool | int | float | list[str]] = {
    "allocator_background_threads": True,
}

_LOCK = threading.Lock()
#: The open databases, by memory limit (None: DuckDB's default of 80 % of the memory).
_DATABASES: dict[str | None, duckdb.DuckDBPyConnection] = {}
_SPILL: list[str] = []


def _spill_directory() -> str:
    """The folder the databases spill into: one per process, removed at exit."""
    if not _SPILL:
        _SPILL.append(tempfile.mkdtemp(prefix="evalvalidity-spill-"))
        atexit.register(shutil.rmtree, _SPILL[0], ignore_errors=True)
    return _SPILL[0]


def _forget_after_fork() -> None:
    """In a forked child: the parent's databases are not usable (their threads did not fork)."""
    _DATABASES.clear()
    _SPILL.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def connection(memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """A new connection to the process's in-memory database with this memory limit.

    Parameters
    ----------
    memory_limit : str, optional
        DuckDB's ``memory_limit`` of the database, e.g. ``"2GB"`` (default: DuckDB's own, 80 %
        of the machine's memory). Each distinct limit has its own database.

    Returns
    -------
    duckdb.DuckDBPyConnection
        A connection of its own (close it when done: that drops its temporary views and
        registered tables), with DuckDB's progress bar off.

    Examples
    --------
    Two connections share the database, not what is registered on each:

    >>> a, b = connection(), connection()
    >>> _ = a.register("t", a.sql("SELECT 1 AS x").to_arrow_table())
    >>> a.sql("SELECT x FROM t").fetchall()
    [(1,)]
    >>> b.sql("SELECT x FROM t").fetchall()
    Traceback (most recent call last):
    ...
    _duckdb.CatalogException: Catalog Error: Table with name t does not exist!
    ...
    >>> a.close(); b.close()
    """
    import duckdb

    with _LOCK:
        database = _DATABASES.get(memory_limit)
        if database is None:
            config: dict[str, str | bool | int | float | list[str]] = {
                "temp_directory": _spill_directory(),
                **RETURN_FREED_MEMORY,
            }
            if memory_limit is not None:
                config["memory_limit"] = memory_limit
            database = duckdb.connect(":memory:", config=config)
            _DATABASES[memory_limit] = database
        # a cursor starts from DuckDB's defaults, progress bar off (only the connection that
        # opened the database has it on): no SET statement, ~0.3 ms each
        return database.cursor()


class _Deferred:
    """A connection of the process's database with ``memory_limit``, opened on first use.

    Every attribute but :meth:`close` is the real connection's, which the first attribute
    looked up opens; :meth:`close` closes it if it was ever opened, and a closed one is not
    opened again. A context manager, as a DuckDB connection is.
    """

    __slots__ = ("_closed", "_connection", "_memory_limit")

    def __init__(self, memory_limit: str | None) -> None:
        self._memory_limit = memory_limit
        self._connection: duckdb.DuckDBPyConnection | None = None
        self._closed = False

    def __getattr__(self, name: str) -> Any:
        if self._connection is None:
            if self._closed:
                import duckdb

                raise duckdb.ConnectionException("Connection already closed!")
            self._connection = connection(self._memory_limit)
        return getattr(self._connection, name)

    def close(self) -> None:
        """Close the real connection, if it was opened."""
        if self._connection is not None:
            self._connection.close()
        self._closed = True

    def __enter__(self) -> duckdb.DuckDBPyConnection:
        return self  # type: ignore[return-value]  # it stands for one

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def deferred_connection(memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """A connection like :func:`connection`'s that imports DuckDB and connects on first use.

    Parameters
    ----------
    memory_limit : str, optional
        As for :func:`connection`.

    Returns
    -------
    duckdb.DuckDBPyConnection
        A stand-in with the connection's methods: the first one called opens the connection
        (and imports DuckDB, if nothing has yet); closing one that was never used does nothing.

    Examples
    --------
    >>> con = deferred_connection()
    >>> con.close()  # never used: nothing was opened
    >>> with deferred_connection() as con:
    ...     con.sql("SELECT 42").fetchall()
    [(42,)]
    """
    return _Deferred(memory_limit)  # type: ignore[return-value]  # it stands for one
