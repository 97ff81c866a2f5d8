r"""The workspace: every upload becomes a named, persistent, immutable dataset.

Layout on disk (see ``docs/workspace.md`` for the design and its guarantees)::

    <workspace>/
        manifest.json        name -> dataset metadata; replaced atomically, never edited
        manifest.lock        flock'ed around every change of the manifest
        data/<id>.parquet    one immutable file per dataset; ids are random, names never paths
        tmp/                 ingests in flight; whatever a dead process left is removed on open

Readers never lock: they read ``manifest.json`` (always a whole version, thanks to
``os.replace``) and then the Parquet file, each call with a fresh in-memory DuckDB connection.
Writers (add, rename, delete) hold ``manifest.lock`` only while they publish, so threads of one
process and separate processes can ingest at the same time. A write that fails (bad input, a
full disk: :class:`~evalvalidity.io.atomic.StorageError`) leaves the workspace as it was.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as root:
...     ws = Workspace(root)
...     info = ws.add(b"q1 Q0 d1 1 2.5 bm25\n", display_name="bm25.trec")
...     (info.name, info.kind, info.n_rows), [d.name for d in ws.list()]
(('bm25', 'run', 1), ['bm25'])
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import errno
import fcntl
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from evalvalidity.errors import EvalValidityError, ParameterError
from evalvalidity.io.atomic import StorageError, fsync_path, is_disk_full, storage_error
from evalvalidity.io.ingest._limits import Limits
from evalvalidity.io.ingest._read import connect, ingest_to_parquet
from evalvalidity.io.ingest._result import MAX_SHOWN_REJECTED
from evalvalidity.io.ingest._source import Source, SourceLike
from evalvalidity.io.ingest._spec import SCHEMAS

__all__ = [
    "Dataset",
    "DatasetInfo",
    "StorageError",
    "Workspace",
    "default_path",
    "validate_name",
]

MANIFEST_VERSION = 1
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 ._+@=-]{0,98}[A-Za-z0-9._+@=-])?")
_NOT_NAME = re.compile(r"[^A-Za-z0-9._+@=-]+")
_EXTENSIONS = (
    ".gz",
    ".trec",
    ".txt",
    ".tsv",
    ".csv",
    ".jsonl",
    ".json",
    ".parquet",
    ".qrels",
    ".run",
)


def default_path() -> Path:
    """``$EVALVALIDITY_WORKSPACE``, else ``~/.local/share/evalvalidity/workspace``.

    >>> import os
    >>> os.environ["EVALVALIDITY_WORKSPACE"] = "/srv/ws"
    >>> str(default_path())
    '/srv/ws'
    >>> del os.environ["EVALVALIDITY_WORKSPACE"]
    """
    configured = os.environ.get("EVALVALIDITY_WORKSPACE")
    if configured:
        return Path(configured)
    return Path.home() / ".local" / "share" / "evalvalidity" / "workspace"


def validate_name(name: str) -> str:
    r"""Return ``name`` if it is a valid dataset name, else raise.

    A name is 1-100 letters, digits, spaces and ``._+@=-``, starting and ending with neither a
    space nor a dot at the start: never a path (no ``/`` or ``\``).

    >>> validate_name("bm25 run")
    'bm25 run'
    >>> validate_name("../etc")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: Invalid dataset name '../etc': use 1-100 letters, digits, spaces and ._+@=- (starting with a letter or digit, no path separators).
    """
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ParameterError(
            f"Invalid dataset name {name!r}: use 1-100 letters, digits, spaces and ._+@=- "
            "(starting with a letter or digit, no path separators)."
        )
    return name


def _default_name(display_name: str, kind: str) -> str:
    base = re.split(r"[\\/]", display_name)[-1]
    lowered = base.lower()
    changed = True
    while changed:
        changed = False
        for ext in _EXTENSIONS:
            if lowered.endswith(ext) and len(lowered) > len(ext):
                base, lowered = base[: -len(ext)], lowered[: -len(ext)]
                changed = True
    base = _NOT_NAME.sub("-", base).strip("-. ")[:90]
    return base if base and _NAME.fullmatch(base) else kind


@dataclass(frozen=True)
class DatasetInfo:
    """A dataset's metadata and provenance.

    Attributes
    ----------
    name : str
        Its name in the workspace (unique; never used as a path).
    id : str
        The random id its file is named after.
    kind, format : str
        What it holds and the format it was read from; ``compression`` is ``"gzip"`` or None.
    source_name : str
        The original file name as given (the upload's name for the dashboard).
    sha256 : str
        SHA-256 of the original bytes.
    size_bytes : int
        Size of the original file.
    n_rows, n_rejected, n_duplicates, n_skipped : int
        Rows kept, bad rows dropped (``drop_bad_rows``), identical repeats merged, summary
        lines skipped.
    rejected : tuple of (int or None, str)
        The first dropped rows, (line, reason).
    warnings : tuple of str
        What the reader reported.
    created : str
        When it was added, ISO 8601 UTC.
    owner : str or None
        None for a shared dataset; otherwise the owner (a dashboard session) it is private to.
    line_unit : str
        ``"line"`` or ``"record"``: what the table's ``line`` column counts.
    """

    name: str
    id: str
    kind: str
    format: str
    compression: str | None
    source_name: str
    sha256: str
    size_bytes: int
    n_rows: int
    n_rejected: int
    n_duplicates: int
    n_skipped: int
    rejected: tuple[tuple[int | None, str], ...]
    warnings: tuple[str, ...]
    created: str
    owner: str | None
    line_unit: str = "line"

    def to_json(self) -> dict[str, Any]:
        """The manifest record."""
        record = dataclasses.asdict(self)
        record["rejected"] = [list(r) for r in self.rejected]
        record["warnings"] = list(self.warnings)
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> DatasetInfo:
        """Inverse of :meth:`to_json`."""
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in record.items() if k in fields}
        values["rejected"] = tuple((r[0], r[1]) for r in values.get("rejected", ()))
        values["warnings"] = tuple(values.get("warnings", ()))
        return cls(**values)


@dataclass(frozen=True)
class Dataset:
    """A dataset's canonical table and its metadata."""

    info: DatasetInfo
    table: pa.Table


class Workspace:
    """A directory of named datasets, safe for concurrent threads and processes.

    Parameters
    ----------
    path : str or path-like, optional
        Where the workspace lives; created if missing. Defaults to :func:`default_path`.
    limits : Limits, optional
        What an :meth:`add` may cost unless it is given its own (default
        :data:`~evalvalidity.io.ingest.DEFAULT_LIMITS`).

    Opening a workspace removes what interrupted ingests left behind (temporary files whose
    process is gone, data files no manifest entry names).
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, limits: Limits | None = None
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise ParameterError(
                f"The 'limits' parameter must be a Limits. Got {type(limits).__name__} instead."
            )
        self.path = Path(path) if path is not None else default_path()
        self.limits = limits
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            (self.path / "data").mkdir(exist_ok=True)
            (self.path / "tmp").mkdir(exist_ok=True)
        except OSError as exc:
            raise ParameterError(f"Cannot create the workspace at {self.path}: {exc}.") from exc
        try:
            self._collect_garbage()
        except OSError as exc:
            raise storage_error(f"open the workspace {self.path}", exc) from exc

    # -- paths and locks -----------------------------------------------------------------
    @property
    def _manifest(self) -> Path:
        return self.path / "manifest.json"

    @property
    def _tmp(self) -> Path:
        return self.path / "tmp"

    def _data_file(self, dataset_id: str) -> Path:
        if re.fullmatch(r"[0-9a-f]{32}", dataset_id) is None:
            raise ParameterError(f"Corrupt manifest in {self.path}: bad dataset id {dataset_id!r}.")
        return self.path / "data" / f"{dataset_id}.parquet"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the manifest lock (threads too: each call opens its own descriptor)."""
        fd = os.open(self.path / "manifest.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    # -- manifest ------------------------------------------------------------------------
    def _read_manifest(self) -> dict[str, DatasetInfo]:
        try:
            text = self._manifest.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            record = json.loads(text)
            return {
                name: DatasetInfo.from_json(entry) for name, entry in record["datasets"].items()
            }
        except (ValueError, KeyError, TypeError) as exc:
            raise ParameterError(f"Corrupt workspace manifest {self._manifest}: {exc}.") from exc

    def _stage_manifest(self, datasets: dict[str, DatasetInfo]) -> Path:
        """Write the next manifest to a temporary file (removed again if that fails)."""
        record = {
            "version": MANIFEST_VERSION,
            "datasets": {name: info.to_json() for name, info in sorted(datasets.items())},
        }
        temporary = self._tmp / f"manifest.{uuid.uuid4().hex}.json"
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(record, handle, indent=1)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        return temporary

    def _publish_manifest(self, staged: Path) -> None:
        """Make a staged manifest the manifest: the instant the change happens."""
        os.replace(staged, self._manifest)
        fsync_path(self.path)

    def _write_manifest(self, datasets: dict[str, DatasetInfo], action: str) -> None:
        """Publish a new manifest atomically; call with the lock held.

        Raises :class:`StorageError` (the disk is full, ...) with the old manifest in place.
        """
        try:
            self._publish_manifest(self._stage_manifest(datasets))
        except OSError as exc:
            raise storage_error(f"{action} in the workspace {self.path}", exc) from exc

    def _collect_garbage(self) -> None:
        """Remove leftovers of dead ingests (under the lock, so no live one is touched)."""
        with self._locked():
            live: set[str] = set()
            for lock in self._tmp.glob("*.lock"):
                ingest_id = lock.name.split(".", 1)[0]
                fd = os.open(lock, os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                        raise
                    live.add(ingest_id)  # its process still holds it
                finally:
                    os.close(fd)
            for entry in self._tmp.iterdir():
                if entry.name.split(".", 1)[0] in live:
                    continue
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
            referenced = {f"{info.id}.parquet" for info in self._read_manifest().values()}
            for entry in (self.path / "data").iterdir():
                if entry.name not in referenced:
                    entry.unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------
    def list(self, owner: str | None = None, *, all_owners: bool = False) -> list[DatasetInfo]:
        """Datasets visible to ``owner``: the shared ones and ``owner``'s own, by name.

        ``all_owners=True`` lists every dataset, private ones included.
        """
        datasets = self._read_manifest().values()
        return sorted(
            (d for d in datasets if all_owners or d.owner is None or d.owner == owner),
            key=lambda d: d.name,
        )

    def find(self, name: str) -> DatasetInfo | None:
        """The dataset named ``name``, or None."""
        return self._read_manifest().get(name)

    def info(self, name: str) -> DatasetInfo:
        """The metadata of the dataset named ``name``."""
        found = self.find(name)
        if found is None:
            raise ParameterError(f"No dataset named {name!r} in the workspace {self.path}.")
        return found

    def table(self, name: str) -> pa.Table:
        """The canonical table of the dataset named ``name``.

        Read with a fresh in-memory DuckDB connection (never a shared one), so any number of
        threads may read at once.
        """
        return self.get(name).table

    def scan(self, name: str) -> Any:
        """The dataset named ``name`` as a lazily scanned :class:`pyarrow.dataset.Dataset`.

        Nothing is read until the dataset is scanned, so a run larger than memory can be
        scored in a stream (``evalvalidity.io.scoring.score_run`` accepts it). The file stays
        valid while the dataset is not deleted: files are immutable and renames do not move
        them.
        """
        import pyarrow.dataset as pads

        info = self.info(name)
        return pads.dataset(os.fspath(self._data_file(info.id)), format="parquet")

    def get(self, name: str) -> Dataset:
        """The dataset named ``name``: its table and its metadata."""
        for _ in range(3):  # a concurrent delete may remove the file between the two reads
            info = self.info(name)
            path = self._data_file(info.id)
            try:
                with connect() as con:
                    table = con.read_parquet(os.fspath(path)).to_arrow_table()
            except Exception as exc:  # duckdb.IOException when the file vanished
                if path.exists():
                    raise StorageError(
                        f"The dataset {name!r} cannot be read from {path}: {exc}"
                    ) from exc
                last = exc
                continue
            return Dataset(info, table.cast(SCHEMAS[info.kind]))
        raise ParameterError(f"The dataset {name!r} was deleted while being read.") from last

    # -- writing -------------------------------------------------------------------------
    def add(
        self,
        source: SourceLike,
        *,
        kind: str | None = None,
        format: str | None = None,
        name: str | None = None,
        drop_bad_rows: bool = False,
        display_name: str | None = None,
        owner: str | None = None,
        progress: Callable[[float, str], None] | None = None,
        limits: Limits | None = None,
    ) -> DatasetInfo:
        """Read ``source`` and store it as a new dataset; all or nothing.

        Parameters
        ----------
        source : path, bytes or binary file-like
            The file (the dashboard passes the upload's bytes).
        kind, format : str, optional
            Override detection (see :func:`evalvalidity.io.ingest.read`).
        name : str, optional
            The dataset's name; by default the file name without its extensions, made unique
            with ``-2``, ``-3``... An explicit name that exists is an error.
        drop_bad_rows : bool
            Keep the good rows of a file with bad ones (otherwise the add fails).
        display_name : str, optional
            The original file name, for messages and provenance.
        owner : str, optional
            Keep the dataset private to this owner (see :meth:`list`); None shares it.
        progress : callable, optional
            Called with (fraction done, what is happening).
        limits : Limits, optional
            What reading the file may cost (default: the workspace's, see :class:`Workspace`).

        Returns
        -------
        DatasetInfo
            The new dataset's metadata.

        Raises
        ------
        FileFormatError
            The file is malformed or over a limit; nothing was added.
        StorageError
            Writing failed (the message says when the disk is full); nothing was added.
        """
        if name is not None:
            validate_name(name)
            if self.find(name) is not None:
                raise ParameterError(f"A dataset named {name!r} already exists in {self.path}.")
        src = Source(source, display_name, limits if limits is not None else self.limits)
        dataset_id = uuid.uuid4().hex
        lock_path = self._tmp / f"{dataset_id}.lock"
        try:
            with self._locked():  # so that garbage collection never sees it unlocked
                lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
        except OSError as exc:
            raise storage_error(f"add {src.name!r} to the workspace {self.path}", exc) from exc
        try:
            return self._add(src, dataset_id, kind, format, name, drop_bad_rows, owner, progress)
        except EvalValidityError:
            raise
        except Exception as exc:
            # pyarrow and DuckDB report a full disk as OSError, duckdb.IOException, ...
            if isinstance(exc, OSError) or is_disk_full(exc):
                raise storage_error(f"add {src.name!r} to the workspace {self.path}", exc) from exc
            raise
        finally:
            for leftover in self._tmp.glob(f"{dataset_id}.*"):
                if leftover.is_dir():
                    shutil.rmtree(leftover, ignore_errors=True)
                elif leftover != lock_path:
                    leftover.unlink(missing_ok=True)
            lock_path.unlink(missing_ok=True)
            os.close(lock_fd)

    def _add(
        self,
        src: Source,
        dataset_id: str,
        kind: str | None,
        format: str | None,
        name: str | None,
        drop_bad_rows: bool,
        owner: str | None,
        progress: Callable[[float, str], None] | None,
    ) -> DatasetInfo:
        """The work of :meth:`add`, with ``tmp/<dataset_id>.lock`` held."""
        temporary = self._tmp / f"{dataset_id}.parquet"
        result = ingest_to_parquet(
            src,
            temporary,
            kind=kind,
            fmt=format,
            drop_bad_rows=drop_bad_rows,
            progress=progress,
            spill_directory=self._tmp / f"{dataset_id}.spill",
        )
        fsync_path(temporary)
        with self._locked():
            datasets = self._read_manifest()
            if name is None:
                base = _default_name(src.name, result.kind)
                final, n = base, 1
                while final in datasets:
                    n += 1
                    final = f"{base}-{n}"
            elif name in datasets:
                raise ParameterError(f"A dataset named {name!r} already exists in {self.path}.")
            else:
                final = name
            info = DatasetInfo(
                name=final,
                id=dataset_id,
                kind=result.kind,
                format=result.format,
                compression=result.compression,
                source_name=src.name,
                sha256=result.sha256,
                size_bytes=src.size,
                n_rows=_parquet_rows(temporary),
                n_rejected=result.n_rejected,
                n_duplicates=result.n_duplicates,
                n_skipped=result.n_skipped,
                rejected=tuple((r.line, r.reason) for r in result.rejected[:MAX_SHOWN_REJECTED]),
                warnings=result.warnings,
                created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                owner=owner,
                line_unit=result.line_unit,
            )
            datasets[final] = info
            # The manifest is staged first, so a full disk fails the add before the data
            # file moves; until the manifest is replaced, no reader can see the dataset.
            staged = self._stage_manifest(datasets)
            data_file = self._data_file(dataset_id)
            try:
                os.replace(temporary, data_file)
                fsync_path(self.path / "data")
                self._publish_manifest(staged)
            except BaseException:
                staged.unlink(missing_ok=True)
                if self._read_manifest().get(final) != info:
                    data_file.unlink(missing_ok=True)
                raise
        return info

    def rename(self, old: str, new: str) -> DatasetInfo:
        """Rename a dataset; the new name must be free."""
        validate_name(new)
        with self._locked():
            datasets = self._read_manifest()
            if old not in datasets:
                raise ParameterError(f"No dataset named {old!r} in the workspace {self.path}.")
            if new in datasets:
                raise ParameterError(f"A dataset named {new!r} already exists in {self.path}.")
            info = dataclasses.replace(datasets.pop(old), name=new)
            datasets[new] = info
            self._write_manifest(datasets, f"rename {old!r}")
        return info

    def set_owner(self, name: str, owner: str | None) -> DatasetInfo:
        """Make a dataset private to ``owner``, or shared with ``owner=None``."""
        with self._locked():
            datasets = self._read_manifest()
            if name not in datasets:
                raise ParameterError(f"No dataset named {name!r} in the workspace {self.path}.")
            info = dataclasses.replace(datasets[name], owner=owner)
            datasets[name] = info
            self._write_manifest(datasets, f"change the owner of {name!r}")
        return info

    def delete(self, name: str) -> None:
        """Delete a dataset: its manifest entry first, then its file."""
        with self._locked():
            datasets = self._read_manifest()
            if name not in datasets:
                raise ParameterError(f"No dataset named {name!r} in the workspace {self.path}.")
            info = datasets.pop(name)
            self._write_manifest(datasets, f"delete {name!r}")
            self._data_file(info.id).unlink(missing_ok=True)


def _parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)
