"""Crash-safe writes: the whole new file, or the old one, never half of either.

:func:`atomic_write` writes into a temporary file beside the target (same folder, so the same
file system), flushes and syncs it to disk, renames it over the target with ``os.replace``
(atomic on POSIX) and syncs the folder. A process killed at any instant leaves the target as it
was before or as it is after; at worst a hidden ``.<name>.<random>.tmp`` beside it, which
:func:`remove_stale_temporaries` clears. A full disk raises :class:`StorageError` saying so,
and leaves the target untouched.

Examples
--------
>>> import json, tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as folder:
...     path = atomic_write(pathlib.Path(folder) / "check.json", json.dumps({"verdict": "ok"}))
...     path.read_text(encoding="utf-8"), sorted(p.name for p in path.parent.iterdir())
('{"verdict": "ok"}', ['check.json'])
"""

from __future__ import annotations

import errno
import os
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from evalvalidity.errors import StorageError

__all__ = [
    "StorageError",
    "atomic_write",
    "is_disk_full",
    "storage_error",
]

_DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_DISK_FULL_WORDS = ("No space left on device", "Disk quota exceeded")


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the disk is full.

    pyarrow and DuckDB report a full disk in their message rather than in ``errno``.

    >>> is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> is_disk_full(OSError("IOError: error writing: No space left on device. Detail: [errno 28]"))
    True
    >>> is_disk_full(PermissionError(errno.EACCES, "Permission denied"))
    False
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS:
            return True
        if any(words in str(exc) for words in _DISK_FULL_WORDS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def storage_error(action: str, exc: BaseException) -> StorageError:
    """A :class:`StorageError` for ``exc``, which happened while doing ``action``.

    >>> str(storage_error("write report.json", OSError(errno.ENOSPC, "No space left on device")))
    'Cannot write report.json: the disk is full (No space left on device).'
    >>> str(storage_error("write report.json", PermissionError(13, "Permission denied")))
    'Cannot write report.json: Permission denied.'
    """
    if is_disk_full(exc):
        return StorageError(f"Cannot {action}: the disk is full (No space left on device).")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return StorageError(f"Cannot {action}: {reason.rstrip('.')}.")


def fsync_path(path: Path) -> None:
    """Flush a file's or a folder's contents (a folder: its entries) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")


def atomic_write(path: str | os.PathLike[str], data: bytes | str | Iterable[bytes | str]) -> Path:
    r"""Replace the file ``path`` with ``data`` (text is written as UTF-8), all or nothing.

    Parameters
    ----------
    path : str or path-like
        The file to write; its folder must exist.
    data : bytes, str or iterable of them
        The whole new content, or its pieces in order (written as they come, so that a large
        file is never held in memory whole).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    StorageError
        When the write fails (a full disk says so); the old file is then untouched.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "notes.txt"
    ...     _ = atomic_write(path, "old")
    ...     _ = atomic_write(path, b"new")
    ...     path.read_bytes(), [p.name for p in path.parent.iterdir()]
    (b'new', ['notes.txt'])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = atomic_write(pathlib.Path(folder) / "rows.txt", (f"{i}\n" for i in range(3)))
    ...     path.read_text(encoding="utf-8")
    '0\n1\n2\n'
    """
    target = Path(path)
    pieces = [data] if isinstance(data, str | bytes | bytearray | memoryview) else data
    temporary = _temporary(target)
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            for piece in pieces:
                view = memoryview(piece.encode("utf-8") if isinstance(piece, str) else piece)
                while view:
                    written = os.write(fd, view[: 1 << 20])
                    view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        fsync_path(target.parent)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise storage_error(f"write {os.fspath(target)}", exc) from exc
    except BaseException:
        # A piece that failed to come (or an interrupt): the target stays as it was.
        temporary.unlink(missing_ok=True)
        raise
    return target


def remove_stale_temporaries(folder: str | os.PathLike[str], older_than: float = 3600.0) -> int:
    """Remove the temporaries of writes killed in ``folder`` more than ``older_than`` s ago.

    A younger one may belong to a write in flight, so it is kept. Returns how many were
    removed.
    """
    removed = 0
    now = time.time()
    for entry in Path(folder).glob(".*.tmp"):
        try:
            if now - entry.stat().st_mtime > older_than:
                entry.unlink()
                removed += 1
        except FileNotFoundError:  # another process removed it first
            continue
    return removed
