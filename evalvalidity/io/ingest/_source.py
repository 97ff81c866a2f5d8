"""Where the bytes come from: a path, or bytes / a binary file-like object (an upload).

A :class:`Source` hides gzip (detected from the magic bytes, never from the name), counts the
bytes read for progress reports, hashes the original bytes for provenance and enforces the
size limits of :class:`~evalvalidity.io.ingest.Limits` while the bytes stream in.
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from evalvalidity.errors import FileFormatError, ParameterError
from evalvalidity.io.ingest._limits import DEFAULT_LIMITS, Limits, human_bytes

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
BOM = b"\xef\xbb\xbf"

SourceLike = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO


def not_a_regular_file(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it exists but is not a regular file (a folder, a FIFO, ...), or None.

    Reading a FIFO would wait for a writer, and a device such as ``/dev/zero`` never ends, so
    neither is opened.

    >>> not_a_regular_file("/"), not_a_regular_file("/dev/zero"), not_a_regular_file("/no/such")
    ('is a folder', 'is a device', None)
    """
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


class Source:
    """A file to read, by path or in memory.

    Parameters
    ----------
    source : path, bytes or binary file-like
        What to read. A file-like object is read whole (uploads are in memory anyway).
    display_name : str, optional
        The name messages use; defaults to the path as given, or ``<upload>``.
    limits : Limits, optional
        The size limits to enforce (default :data:`~evalvalidity.io.ingest.DEFAULT_LIMITS`).
    """

    def __init__(
        self,
        source: SourceLike,
        display_name: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise ParameterError(
                f"The 'limits' parameter must be a Limits. Got {type(limits).__name__} instead."
            )
        self.limits = limits if limits is not None else DEFAULT_LIMITS
        self.path: Path | None = None
        self.data: bytes | None = None
        max_file = self.limits.max_file_bytes
        read_partly = False
        if isinstance(source, str | os.PathLike):
            shown = os.fspath(source)
            self.path = Path(source)
            try:
                is_file = self.path.is_file()
            except (OSError, ValueError):  # a name too long, or with a NUL byte
                is_file = False
            if not is_file:
                what = not_a_regular_file(shown)
                if what is not None:
                    raise ParameterError(f"{shown!r} {what}; give a regular file.")
                raise ParameterError(f"No such file: {shown!r}.")
            name = shown
        elif isinstance(source, bytes | bytearray | memoryview):
            self.data = bytes(source)
            name = "<upload>"
        elif hasattr(source, "read"):
            # One byte more than the limit tells a file over it without reading all of it.
            data = source.read() if max_file is None else source.read(max_file + 1)
            if not isinstance(data, bytes):
                raise ParameterError(
                    "A file-like source must be opened in binary mode (read() returned "
                    f"{type(data).__name__}, not bytes)."
                )
            self.data = data
            read_partly = max_file is not None and len(data) > max_file
            name = str(getattr(source, "name", "<upload>"))
        else:
            raise ParameterError(
                "The source must be a path, bytes or a binary file-like object. "
                f"Got {type(source).__name__} instead."
            )
        self.name = display_name if display_name is not None else name
        try:
            self.size = self.path.stat().st_size if self.path is not None else len(self.data or b"")
            magic = self._raw_head(4)
        except OSError as exc:
            raise ParameterError(f"Cannot read the file {self.name!r}: {exc.strerror}.") from exc
        self.compression: str | None = "gzip" if magic[:2] == GZIP_MAGIC else None
        self._raw_stream: pa.NativeFile | None = None
        #: Bytes of the gzip header (with its optional name, comment and extra fields): they
        #: decompress to nothing, so the compression ratio leaves them out.
        self.header_bytes = 0
        if self.compression == "gzip":
            try:
                self.header_bytes = self._gzip_header_bytes()
            except OSError as exc:
                raise ParameterError(
                    f"Cannot read the file {self.name!r}: {exc.strerror}."
                ) from exc
        if max_file is not None and self.size > max_file:
            # a file-like object was read only up to one byte past the limit
            size = "more than " + human_bytes(max_file) if read_partly else human_bytes(self.size)
            raise FileFormatError(
                self.name,
                None,
                f"the file is {size}; the limit is {human_bytes(max_file)} (Limits.max_file_bytes)",
            )
        max_text = self.limits.max_text_bytes
        if self.compression is None and max_text is not None and self.size > max_text:
            raise FileFormatError(
                self.name,
                None,
                f"the file holds {human_bytes(self.size)} of text; the limit is"
                f" {human_bytes(max_text)} (Limits.max_text_bytes)",
            )

    # -- raw bytes -------------------------------------------------------------------------
    def _raw_head(self, n: int) -> bytes:
        with self._open_raw() as handle:
            return handle.read(n)

    def _gzip_header_bytes(self) -> int:
        """The length of the first gzip member's header (RFC 1952, section 2.3)."""
        with self._open_raw() as handle:
            fixed = handle.read(10)
            if len(fixed) < 10:
                return len(fixed)
            flags = fixed[3]
            length = 10
            if flags & 0x04:  # FEXTRA: a two-byte length, then that many bytes
                size = handle.read(2)
                extra = int.from_bytes(size, "little") if len(size) == 2 else 0
                handle.seek(extra, io.SEEK_CUR)
                length += 2 + extra
            for flag in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated
                if flags & flag:
                    while True:
                        block = handle.read(1 << 16)
                        if not block:
                            break
                        end = block.find(b"\0")
                        if end >= 0:
                            length += end + 1
                            handle.seek(length)
                            break
                        length += len(block)
            if flags & 0x02:  # FHCRC
                length += 2
            return min(length, self.size)

    def payload_position(self) -> int:
        """Bytes of compressed payload consumed by the latest stream (the header left out)."""
        return max(self.raw_position() - self.header_bytes, 0)

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
    def open_stream(self) -> pa.NativeFile | Metered:
        """A fresh input stream over the decompressed bytes, for Python to read.

        A gzip stream is :class:`Metered`: it stops with a :class:`FileFormatError` as soon as
        the text passes ``max_text_bytes`` or ``max_compression_ratio``, and turns zlib's
        errors (a corrupt or truncated file) into one.
        """
        stream = self.open_native_stream()
        if self.compression == "gzip":
            return Metered(self, stream)
        return stream

    def open_native_stream(self) -> pa.NativeFile:
        """A fresh Arrow stream over the decompressed bytes, unmetered.

        The only kind of stream to hand to pyarrow's readers: they read ahead in their own
        threads, and a Python file object under them crashes the interpreter when a read is
        abandoned (seen with pyarrow 26: an abort or a segfault at exit, 4 runs in 10). For
        gzip, pyarrow also decompresses far ahead of what it parses, so the readers give it
        only plain files and decompress gzip themselves through :meth:`open_stream`.
        """
        raw: pa.NativeFile
        if self.path is None:
            raw = pa.BufferReader(self.data or b"")
        else:
            # bytes: a file name that is not UTF-8 (lone surrogates in Python) opens too
            raw = pa.OSFile(os.fsencode(self.path), "rb")
        self._raw_stream = raw
        if self.compression == "gzip":
            return pa.CompressedInputStream(raw, "gzip")
        return raw

    def not_gzip(self, exc: BaseException) -> FileFormatError:
        """The error for a gzip stream that zlib could not inflate."""
        return FileFormatError(self.name, None, f"the file is not valid gzip ({exc})")

    def meter(self, what: str = "decompresses") -> Meter:
        """A fresh count of decoded bytes, checked against the limits (see :class:`Meter`)."""
        return Meter(self, what)

    def raw_position(self) -> int:
        """Bytes of the original file consumed by the latest stream (for progress)."""
        if self._raw_stream is None or self._raw_stream.closed:
            return self.size
        return int(self._raw_stream.tell())

    def head(self, n: int) -> bytes:
        """The first ``n`` decompressed bytes (fewer at the end of the file)."""
        if self.compression is None:
            return self._raw_head(n)
        try:
            with self._open_raw() as raw:
                return self._gzip_head(raw, n)
        except (OSError, EOFError, zlib.error) as exc:
            raise FileFormatError(self.name, None, f"the file is not valid gzip ({exc})") from exc

    def _gzip_head(self, raw: BinaryIO, n: int) -> bytes:
        """The first ``n`` decompressed bytes, the first member's header skipped by its length.

        (Python's ``gzip`` reads a header's name and comment one byte at a time: 5 s for a
        12 MB comment, on every look at the file's head.)
        """
        import gzip  # a plain file's read never loads it

        raw.seek(self.header_bytes)
        inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        out = bytearray()
        fed = 0
        while len(out) < n and not inflate.eof:
            chunk = inflate.unconsumed_tail or raw.read(1 << 16)
            if not inflate.unconsumed_tail:
                if not chunk:
                    raise EOFError(
                        "Compressed file ended before the end-of-stream marker was reached"
                    )
                fed += len(chunk)
            out += inflate.decompress(chunk, n - len(out))
        if inflate.eof:  # the whole first member is in ``out``: check it as gzip does
            trailer = inflate.unused_data[:8]
            if len(trailer) < 8:
                trailer += raw.read(8 - len(trailer))
            stored, computed = int.from_bytes(trailer[:4], "little"), zlib.crc32(out)
            if len(trailer) == 8 and stored != computed:
                raise gzip.BadGzipFile(f"CRC check failed {hex(stored)} != {hex(computed)}")
        if len(out) < n and inflate.eof:  # more members may follow the first one's trailer
            raw.seek(self.header_bytes + fed - len(inflate.unused_data) + 8)
            with gzip.GzipFile(fileobj=raw) as rest:
                out += rest.read(n - len(out))
        return bytes(out)

    def read_all(
        self,
        max_bytes: int | None = None,
        too_large: Callable[[], FileFormatError] | None = None,
    ) -> bytes:
        """Every decompressed byte; past ``max_bytes``, raises ``too_large()`` instead."""

        def refuse() -> FileFormatError:
            if too_large is not None:
                return too_large()
            limit = human_bytes(max_bytes or 0)
            return FileFormatError(self.name, None, f"the file is over {limit}")

        if self.compression is None:
            if max_bytes is not None and self.size > max_bytes:
                raise refuse()
            if self.path is None:
                return self.data or b""
            try:
                return self.path.read_bytes()
            except OSError as exc:
                raise ParameterError(
                    f"Cannot read the file {self.name!r}: {exc.strerror}."
                ) from exc
        parts: list[bytes] = []
        n = 0
        stream = self.open_stream()
        try:
            while chunk := stream.read(1 << 22):
                n += len(chunk)
                if max_bytes is not None and n > max_bytes:
                    raise refuse()
                parts.append(chunk)
        finally:
            stream.close()
        return b"".join(parts)


class Meter:
    """Counts the bytes a file decodes to and stops it at the limits.

    ``what`` completes the messages: "the file decompresses to more than 16 GiB ...".
    """

    def __init__(self, source: Source, what: str = "decompresses") -> None:
        self.source = source
        self.what = what
        self.n = 0

    def add(self, n: int, consumed: int | None = None) -> None:
        """Count ``n`` more decoded bytes; ``consumed`` original bytes so far (default all)."""
        self.n += n
        limits = self.source.limits
        name = self.source.name
        if limits.max_text_bytes is not None and self.n > limits.max_text_bytes:
            raise FileFormatError(
                name,
                None,
                f"the file {self.what} to more than {human_bytes(limits.max_text_bytes)}, the"
                " limit (Limits.max_text_bytes): stopped reading there",
            )
        ratio = limits.max_compression_ratio
        if ratio is not None and self.n > limits.ratio_grace_bytes:
            whole = self.source.size - self.source.header_bytes
            used = max(consumed if consumed is not None else whole, 1)
            if self.n > ratio * used:
                source = "the first " if consumed is not None else ""
                raise FileFormatError(
                    name,
                    None,
                    f"the file {self.what} to more than {ratio:g} times its size"
                    f" ({human_bytes(self.n)} from {source}{human_bytes(used)}); the limit is"
                    f" {ratio:g} (Limits.max_compression_ratio): refused as a likely"
                    " decompression bomb",
                )


class Metered:
    """A decompressing stream that counts what it yields (see :meth:`Source.open_stream`).

    A plain Python file-like object, for Python code only (never hand it to pyarrow: see
    :meth:`Source.open_native_stream`).
    """

    def __init__(self, source: Source, stream: pa.NativeFile) -> None:
        self._source = source
        self._stream = stream
        self._meter = source.meter()

    @property
    def closed(self) -> bool:
        """Whether the stream is closed."""
        return bool(self._stream.closed)

    def readable(self) -> bool:
        """Always True."""
        return True

    def seekable(self) -> bool:
        """Always False."""
        return False

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` decompressed bytes (all that is left when ``n`` < 0)."""
        if n is None or n < 0:
            parts = []
            while part := self.read(1 << 22):
                parts.append(part)
            return b"".join(parts)
        try:
            chunk = self._stream.read(n)
        except OSError as exc:  # zlib: a corrupt, truncated or trailing-garbage file
            raise self._source.not_gzip(exc) from exc
        self._meter.add(len(chunk), self._source.payload_position())
        return bytes(chunk)

    def close(self) -> None:
        """Close the stream (and the file under it)."""
        self._stream.close()


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
