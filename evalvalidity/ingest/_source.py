"""Where the bytes come from: a path, or bytes / a binary file-like object (an upload).

A :class:`Source` hides gzip (detected from the magic bytes, never from the name), counts the
bytes read for progress reports and hashes the original bytes for provenance.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import mmap
import os
import threading
import zlib
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from evalvalidity.errors import FileFormatError, ParameterError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
BOM = b"\xef\xbb\xbf"

SourceLike = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO


class Source:
    """A file to read, by path or in memory.

    Parameters
    ----------
    source : path, bytes or binary file-like
        What to read. A file-like object is read whole (uploads are in memory anyway).
    display_name : str, optional
        The name messages use; defaults to the path as given, or ``<upload>``.
    """

    def __init__(self, source: SourceLike, display_name: str | None = None) -> None:
        self.path: Path | None = None
        self.data: bytes | None = None
        if isinstance(source, str | os.PathLike):
            self.path = Path(source)
            if not self.path.is_file():
                raise ParameterError(f"No such file: {os.fspath(source)!r}.")
            name = os.fspath(source)
        elif isinstance(source, bytes | bytearray | memoryview):
            self.data = bytes(source)
            name = "<upload>"
        elif hasattr(source, "read"):
            data = source.read()
            if not isinstance(data, bytes):
                raise ParameterError(
                    "A file-like source must be opened in binary mode (read() returned "
                    f"{type(data).__name__}, not bytes)."
                )
            self.data = data
            name = str(getattr(source, "name", "<upload>"))
        else:
            raise ParameterError(
                "The source must be a path, bytes or a binary file-like object. "
                f"Got {type(source).__name__} instead."
            )
        self.name = display_name if display_name is not None else name
        self.size = self.path.stat().st_size if self.path is not None else len(self.data or b"")
        magic = self._raw_head(4)
        self.compression: str | None = "gzip" if magic[:2] == GZIP_MAGIC else None
        self._raw_stream: pa.NativeFile | None = None

    # -- raw bytes -------------------------------------------------------------------------
    def _raw_head(self, n: int) -> bytes:
        with self._open_raw() as handle:
            return handle.read(n)

    def _open_raw(self) -> BinaryIO:
        if self.path is None:
            return io.BytesIO(self.data or b"")
        return open(self.path, "rb")

    def sha256(self) -> str:
        """Hex SHA-256 of the original bytes (compressed, if the file is)."""
        if self.data is not None:
            return hashlib.sha256(self.data).hexdigest()
        digest = hashlib.sha256()
        with self._open_raw() as handle:
            while chunk := handle.read(1 << 22):
                digest.update(chunk)
        return digest.hexdigest()

    def sha256_in_background(self) -> _Digest:
        """Start hashing in a thread (hashlib releases the GIL); ``.result()`` waits."""
        return _Digest(self)

    # -- decompressed bytes ----------------------------------------------------------------
    def open_stream(self) -> pa.NativeFile:
        """A fresh Arrow input stream over the decompressed bytes."""
        raw: pa.NativeFile
        if self.path is None:
            raw = pa.BufferReader(self.data or b"")
        else:
            raw = pa.OSFile(os.fspath(self.path), "rb")
        self._raw_stream = raw
        if self.compression == "gzip":
            return pa.CompressedInputStream(raw, "gzip")
        return raw

    def raw_position(self) -> int:
        """Bytes of the original file consumed by the latest stream (for progress)."""
        if self._raw_stream is None or self._raw_stream.closed:
            return self.size
        return int(self._raw_stream.tell())

    def contains_any(self, needles: tuple[bytes, ...]) -> bool | None:
        """Whether the bytes contain any of ``needles``; None when unknown (gzip).

        Uses ``mmap`` for a file: a handful of memchr-speed scans, no copy.
        """
        if self.compression is not None:
            return None
        if self.path is None:
            data = self.data or b""
            return any(needle in data for needle in needles)
        if self.size == 0:
            return False
        with (
            open(self.path, "rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
        ):
            return any(mapped.find(needle) >= 0 for needle in needles)

    def head(self, n: int) -> bytes:
        """The first ``n`` decompressed bytes (fewer at the end of the file)."""
        if self.compression is None:
            return self._raw_head(n)
        with self._open_raw() as raw, gzip.GzipFile(fileobj=raw) as unzipped:
            try:
                return unzipped.read(n)
            except (OSError, EOFError, zlib.error) as exc:
                raise FileFormatError(
                    self.name, None, f"the file is not valid gzip ({exc})"
                ) from exc

    def read_all(self) -> bytes:
        """Every decompressed byte."""
        if self.compression is None:
            if self.path is None:
                return self.data or b""
            return self.path.read_bytes()
        with self._open_raw() as raw, gzip.GzipFile(fileobj=raw) as unzipped:
            try:
                return unzipped.read()
            except (OSError, EOFError, zlib.error) as exc:
                raise FileFormatError(
                    self.name, None, f"the file is not valid gzip ({exc})"
                ) from exc


class _Digest:
    def __init__(self, source: Source) -> None:
        self._value: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(source,), daemon=True)
        self._thread.start()

    def _run(self, source: Source) -> None:
        try:
            self._value = source.sha256()
        except BaseException as exc:  # re-raised in result()
            self._error = exc

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value or ""
