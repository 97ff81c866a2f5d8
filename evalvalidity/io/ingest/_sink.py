"""Where checked batches go: into memory, or into a Parquet file in row groups."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from evalvalidity.io._compute import pc
from evalvalidity.io.ingest._spec import SCHEMAS

if TYPE_CHECKING:  # annotations only: a read needs neither until it runs a statement or writes
    import duckdb
    import pyarrow.parquet as pq

ROW_GROUP_ROWS = 1 << 20


def conform_schema(kind: str, table: pa.Table) -> pa.Table:
    """Reorder and complete ``table`` to the kind's schema (missing optional columns as null)."""
    schema = SCHEMAS[kind]
    columns = []
    for f in schema:
        if f.name in table.column_names:
            column = table.column(f.name)
            columns.append(column if column.type == f.type else column.cast(f.type))
        else:
            columns.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=schema)


class Sink:
    """Collects the kept rows of one read."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.schema = SCHEMAS[kind]
        self.n_rows = 0

    def write(self, table: pa.Table) -> None:
        """Append checked rows (a ``line`` column plus the kind's columns)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything written (the fast path gave up)."""
        raise NotImplementedError

    def close(self) -> None:
        """No more rows will come."""

    def abort(self) -> None:
        """The read failed: release every file and thread now, raising nothing.

        A writer left open would keep its (already unlinked) file's disk space until garbage
        collection, which a kept traceback can put off indefinitely.
        """

    def expose(self, con: duckdb.DuckDBPyConnection, name: str) -> None:
        """Make the rows visible to ``con`` as the relation ``name``."""
        raise NotImplementedError

    def drop(self, con: duckdb.DuckDBPyConnection, lines: pa.Array) -> None:
        """Remove the rows whose ``line`` is in ``lines``."""
        raise NotImplementedError


class MemorySink(Sink):
    """Keeps the rows as an Arrow table; optionally also writes them to ``parquet_path``.

    The Parquet file is written in a thread as soon as the rows are all read (in
    :meth:`expose`), while the table checks run: pyarrow and DuckDB both release the GIL.
    """

    def __init__(self, kind: str, parquet_path: Path | None = None) -> None:
        super().__init__(kind)
        self._parts: list[pa.Table] = []
        self._table: pa.Table | None = None
        self.parquet_path = parquet_path
        self._writer: threading.Thread | None = None
        self._write_error: BaseException | None = None

    def write(self, table: pa.Table) -> None:
        self._parts.append(conform_schema(self.kind, table))
        self.n_rows += table.num_rows

    def reset(self) -> None:
        self._parts = []
        self._table = None
        self.n_rows = 0

    @property
    def table(self) -> pa.Table:
        """Everything written, as one table."""
        if self._table is None:
            self._table = (
                pa.concat_tables(self._parts) if self._parts else self.schema.empty_table()
            )
            self._parts = []
        return self._table

    def replace(self, table: pa.Table) -> None:
        """Put ``table`` (the same rows, some values changed) in place of what was written."""
        self._table = conform_schema(self.kind, table)
        self._parts = []

    def _write_parquet(self, table: pa.Table) -> None:
        if self.parquet_path is None:
            return
        try:
            write_parquet(table, self.parquet_path)
        except BaseException as exc:  # re-raised by _join
            self._write_error = exc

    def _join(self) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        if self._write_error is not None:
            error, self._write_error = self._write_error, None
            raise error

    def expose(self, con: duckdb.DuckDBPyConnection, name: str) -> None:
        table = self.table
        con.register(name, table)
        if self.parquet_path is not None and self._writer is None:
            self._writer = threading.Thread(target=self._write_parquet, args=(table,))
            self._writer.start()

    def drop(self, con: duckdb.DuckDBPyConnection, lines: pa.Array) -> None:
        self._join()
        table = self.table
        keep = pc.invert(pc.is_in(table.column("line"), value_set=lines))
        self._table = table.filter(keep)
        self.n_rows = self._table.num_rows
        self._write_parquet(self._table)
        self._join()

    def close(self) -> None:
        self._join()
        if self.parquet_path is not None and not self.parquet_path.exists():
            self._write_parquet(self.table)
            self._join()

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        self._write_error = None


def write_parquet(table: pa.Table, path: Path) -> None:
    """Write a canonical table as Parquet in row groups (the workspace's storage format)."""
    import pyarrow.parquet as pq

    pq.write_table(
        table,
        os.fspath(path),
        row_group_size=ROW_GROUP_ROWS,
        compression="snappy",
        use_dictionary=[n for n in ("qid", "measure") if n in table.column_names],
    )


class ParquetSink(Sink):
    """Writes the rows to a Parquet file in row groups, never holding the table in memory."""

    def __init__(self, kind: str, path: Path) -> None:
        super().__init__(kind)
        self.path = path
        self._writer: pq.ParquetWriter | None = None

    def _open(self) -> pq.ParquetWriter:
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(
                os.fspath(self.path),
                self.schema,
                compression="snappy",
                use_dictionary=[n for n in ("qid", "measure") if n in self.schema.names],
            )
        return self._writer

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._open().write_table(
                conform_schema(self.kind, table), row_group_size=ROW_GROUP_ROWS
            )
            self.n_rows += table.num_rows

    def reset(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
        self.n_rows = 0

    def close(self) -> None:
        if self._writer is None and not self.path.exists():
            self._open()  # an empty dataset still gets a file with the schema
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def abort(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.close()
            except OSError:  # the full disk that failed the read fails the footer too
                pass

    def expose(self, con: duckdb.DuckDBPyConnection, name: str) -> None:
        self.close()
        con.read_parquet(os.fspath(self.path)).create_view(name)

    def drop(self, con: duckdb.DuckDBPyConnection, lines: pa.Array) -> None:
        import pyarrow.parquet as pq

        self.close()
        rewritten = self.path.with_name(self.path.name + ".rewrite")
        con.register("__drop_lines", pa.table({"line": lines}))
        try:
            relation = con.read_parquet(os.fspath(self.path)).filter(
                "line NOT IN (SELECT line FROM __drop_lines)"
            )
            # Stream through pyarrow to keep the schema (and its row groups) exact.
            reader = relation.to_arrow_reader(ROW_GROUP_ROWS)
            with pq.ParquetWriter(
                os.fspath(rewritten),
                self.schema,
                compression="snappy",
                use_dictionary=[n for n in ("qid", "measure") if n in self.schema.names],
            ) as writer:
                n_rows = 0
                for batch in reader:
                    table = pa.Table.from_batches([batch]).cast(self.schema)
                    writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
                    n_rows += batch.num_rows
        finally:
            con.unregister("__drop_lines")
        os.replace(rewritten, self.path)
        self.n_rows = n_rows
