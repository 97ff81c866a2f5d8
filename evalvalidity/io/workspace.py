r"""The workspace: every upload becomes a named, persistent, immutable dataset.

Layout on disk (see ``docs/workspace.md`` for the design and its guarantees)::

    <workspace>/
        manifest.json        (owner, name) -> dataset metadata; replaced atomically
        manifest.deleted     ids deleted since the manifest was last written (a few bytes)
        manifest.lock        flock'ed around every change of the manifest
        data/<id>.parquet    one immutable file per dataset; ids are random, names never paths
        tmp/                 ingests in flight; whatever a dead process left is removed on open

Readers never lock: they read ``manifest.deleted``, then ``manifest.json`` (always a whole
version, thanks to ``os.replace``) and then the Parquet file, each call with a fresh in-memory
DuckDB connection.
Writers (add, rename, delete) hold ``manifest.lock`` only while they publish, so threads of one
process and separate processes can ingest at the same time. A write that fails (bad input, a
full disk: :class:`~evalvalidity.io.atomic.StorageError`) leaves the workspace as it was. A
delete appends one line to ``manifest.deleted`` and then removes the file, so it frees space on
a disk too full for a new manifest.

A name belongs to an owner: ``owner=None`` is the shared namespace, any other owner (a
dashboard session) has its own. For an owner, a name means its own private dataset, else the
shared one; another owner's private names are invisible to it and to every message it gets.

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

MANIFEST_VERSION = 2
_Key = tuple[str | None, str]  # (owner, name); owner None = shared
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
        Its name (unique among its owner's datasets; never used as a path).
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
    @property
    def _deleted(self) -> Path:
        return self.path / "manifest.deleted"

    def _read_deleted(self) -> set[str]:
        """The ids deleted since the manifest was last written.

        Whole lines only: a torn append of a killed delete is ignored, and every append
        starts a new line.
        """
        try:
            text = self._deleted.read_text(encoding="ascii", errors="replace")
        except FileNotFoundError:
            return set()
        return {line for line in text.split("\n") if re.fullmatch(r"[0-9a-f]{32}", line)}

    def _read_manifest(self) -> dict[_Key, DatasetInfo]:
        """The datasets, keyed by (owner, name); a version 1 manifest (keyed by name) too."""
        deleted = self._read_deleted()  # first: see the docstring of the module
        try:
            text = self._manifest.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            record = json.loads(text)
            entries = record["datasets"]
            if record.get("version", 1) == 1:  # {name: entry}: one name, whatever the owner
                entries = [{**entry, "name": name} for name, entry in entries.items()]
            infos = [DatasetInfo.from_json(entry) for entry in entries]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ParameterError(f"Corrupt workspace manifest {self._manifest}: {exc}.") from exc
        return {(i.owner, i.name): i for i in infos if i.id not in deleted}

    def _stage_manifest(self, datasets: dict[_Key, DatasetInfo]) -> Path:
        """Write the next manifest to a temporary file (removed again if that fails)."""
        record = {
            "version": MANIFEST_VERSION,
            "datasets": [
                datasets[key].to_json()
                for key in sorted(datasets, key=lambda k: (k[0] is not None, k[0] or "", k[1]))
            ],
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
        """Make a staged manifest the manifest: the instant the change happens.

        The new manifest left out every deleted id, so ``manifest.deleted`` is then removed
        (after the manifest: a reader reads it first).
        """
        os.replace(staged, self._manifest)
        self._deleted.unlink(missing_ok=True)
        fsync_path(self.path)

    def _write_manifest(self, datasets: dict[_Key, DatasetInfo], action: str) -> None:
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
        """Datasets visible to ``owner``, by name: its own and the shared ones.

        A private dataset hides a shared one of the same name from its owner (exactly what
        :meth:`find` resolves the name to). ``all_owners=True`` lists every dataset, private
        ones included (an administrator's view: names may then repeat across owners).
        """
        datasets = self._read_manifest()
        if all_owners:
            return sorted(datasets.values(), key=lambda d: (d.name, d.owner is not None, d.owner))
        visible = _visible(datasets, owner)
        return [visible[name] for name in sorted(visible)]

    def find(self, name: str, *, owner: str | None = None) -> DatasetInfo | None:
        r"""The dataset ``name`` means for ``owner`` (its own, else the shared one), or None.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as root:
        ...     ws = Workspace(root)
        ...     _ = ws.add(b"1400\n", name="x", owner="alice")
        ...     (ws.find("x", owner="alice").owner, ws.find("x", owner="bob"), ws.find("x"))
        ('alice', None, None)
        """
        return _resolve(self._read_manifest(), name, owner)

    def info(self, name: str, *, owner: str | None = None) -> DatasetInfo:
        """The metadata of the dataset ``name`` means for ``owner`` (see :meth:`find`)."""
        found = self.find(name, owner=owner)
        if found is None:
            raise self._missing(name)
        return found

    def _missing(self, name: str) -> ParameterError:
        """The one message for a name the caller cannot see, whoever else may have it."""
        return ParameterError(f"No dataset named {name!r} in the workspace {self.path}.")

    def table(self, name: str, *, owner: str | None = None) -> pa.Table:
        """The canonical table of the dataset ``name`` means for ``owner``.

        Read with a fresh in-memory DuckDB connection (never a shared one), so any number of
        threads may read at once.
        """
        return self.get(name, owner=owner).table

    def scan(self, name: str, *, owner: str | None = None) -> Any:
        """The dataset named ``name`` as a lazily scanned :class:`pyarrow.dataset.Dataset`.

        Nothing is read until the dataset is scanned, so a run larger than memory can be
        scored in a stream (``evalvalidity.io.scoring.score_run`` accepts it). The file stays
        valid while the dataset is not deleted: files are immutable and renames do not move
        them.
        """
        import pyarrow.dataset as pads

        info = self.info(name, owner=owner)
        return pads.dataset(os.fspath(self._data_file(info.id)), format="parquet")

    def get(self, name: str, *, owner: str | None = None) -> Dataset:
        """The dataset ``name`` means for ``owner``: its table and its metadata."""
        for _ in range(3):  # a concurrent delete may remove the file between the two reads
            info = self.info(name, owner=owner)
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
            with ``-2``, ``-3``... among the names ``owner`` sees. An explicit name that
            ``owner`` sees (its own or a shared one) is an error; other owners' private names
            never clash.
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
            if _taken(self._read_manifest(), name, owner):
                raise self._exists(name)
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
                while _taken(datasets, final, owner):
                    n += 1
                    final = f"{base}-{n}"
            elif _taken(datasets, name, owner):
                raise self._exists(name)
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
            datasets[owner, final] = info
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
                if self._read_manifest().get((owner, final)) != info:
                    data_file.unlink(missing_ok=True)
                raise
        return info

    def _exists(self, name: str) -> ParameterError:
        return ParameterError(f"A dataset named {name!r} already exists in {self.path}.")

    def _locate(self, datasets: dict[_Key, DatasetInfo], name: str, owner: str | None) -> _Key:
        """The key of the dataset ``name`` means for ``owner``; the lock is held."""
        found = _resolve(datasets, name, owner)
        if found is None:
            raise self._missing(name)
        return (found.owner, found.name)

    def rename(self, old: str, new: str, *, owner: str | None = None) -> DatasetInfo:
        """Rename the dataset ``old`` means for ``owner``; ``new`` must be free for ``owner``.

        Free means neither ``owner``'s nor a shared dataset has it (nor, for a private
        dataset, its owner's); other owners' private names do not count.
        """
        validate_name(new)
        with self._locked():
            datasets = self._read_manifest()
            key = self._locate(datasets, old, owner)
            if _taken(datasets, new, owner) or _taken(datasets, new, key[0]):
                raise self._exists(new)
            info = dataclasses.replace(datasets.pop(key), name=new)
            datasets[info.owner, new] = info
            self._write_manifest(datasets, f"rename {old!r}")
        return info

    def set_owner(
        self, name: str, new_owner: str | None, *, owner: str | None = None
    ) -> DatasetInfo:
        """Make the dataset ``name`` means for ``owner`` private to ``new_owner``.

        ``new_owner=None`` shares it. The name must be free in the namespace it moves to.
        """
        with self._locked():
            datasets = self._read_manifest()
            key = self._locate(datasets, name, owner)
            if key[0] != new_owner and (new_owner, key[1]) in datasets:
                raise self._exists(key[1])
            info = dataclasses.replace(datasets.pop(key), owner=new_owner)
            datasets[new_owner, info.name] = info
            self._write_manifest(datasets, f"change the owner of {name!r}")
        return info

    def delete(self, name: str, *, owner: str | None = None) -> None:
        """Delete the dataset ``name`` means for ``owner``.

        The delete is one line (33 bytes) appended to ``manifest.deleted``, synced: from then
        on no reader sees the dataset. Then its file is removed, and only then is the manifest
        rewritten without it (and ``manifest.deleted`` removed), so a nearly full disk gets
        the file's space back first. If that rewrite still fails, the delete stands and the
        next change of the workspace rewrites the manifest. If even the line cannot be
        written, :class:`StorageError` says so and nothing changed.
        """
        with self._locked():
            datasets = self._read_manifest()
            info = datasets.pop(self._locate(datasets, name, owner))
            try:
                self._append_deleted(info.id)
            except OSError as exc:
                raise storage_error(f"delete {name!r} in the workspace {self.path}", exc) from exc
            self._data_file(info.id).unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # the delete stands; see above
                staged = self._stage_manifest(datasets)
                try:
                    self._publish_manifest(staged)
                finally:
                    staged.unlink(missing_ok=True)

    def _append_deleted(self, dataset_id: str) -> None:
        """Append ``dataset_id`` to ``manifest.deleted``; all or nothing, synced."""
        line = f"\n{dataset_id}\n".encode("ascii")  # starts a new line even after a torn one
        created = not self._deleted.exists()
        fd = os.open(self._deleted, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(errno.ENOSPC, "No space left on device")
            os.fsync(fd)
            if created:
                fsync_path(self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                if created:
                    self._deleted.unlink()
                else:
                    os.ftruncate(fd, size)
            raise
        finally:
            os.close(fd)


def _visible(datasets: dict[_Key, DatasetInfo], owner: str | None) -> dict[str, DatasetInfo]:
    """Map each name ``owner`` sees to its dataset: its own over the shared one."""
    visible = {name: info for (o, name), info in datasets.items() if o is None}
    if owner is not None:
        visible.update({name: info for (o, name), info in datasets.items() if o == owner})
    return visible


def _resolve(datasets: dict[_Key, DatasetInfo], name: str, owner: str | None) -> DatasetInfo | None:
    """The dataset ``name`` means for ``owner``: its own, else the shared one, else None."""
    if owner is not None and (owner, name) in datasets:
        return datasets[owner, name]
    return datasets.get((None, name))


def _taken(datasets: dict[_Key, DatasetInfo], name: str, owner: str | None) -> bool:
    """Whether ``owner`` sees a dataset named ``name`` (never another owner's private one)."""
    return _resolve(datasets, name, owner) is not None


def _parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)
