r"""Delimited text (TREC, trec_eval, CSV, TSV) and JSON Lines, one batch at a time.

Two paths give the same table. The fast path hands the whole file to pyarrow's multithreaded
CSV reader with typed columns (a gzip file block by block, decompressed here so that the limits
are checked before pyarrow sees the bytes); it only accepts a file in which every line is clean (the right
number of single-delimiter-separated fields, every value valid), so that row ``i`` is line
``header + 1 + i``. At the first irregular line it gives up, the sink is reset, and the exact
path reads the file again: lines split in Python (``\n``, ``\r\n`` and a lone ``\r`` end a
line, as in pyarrow), fields split and checked in DuckDB with a reason for every bad row.
Whitespace means spaces and tabs.

A line longer than ``Limits.max_line_bytes`` refuses the file (naming the line) without ever
holding more than that much of it; a JSON Lines record nested deeper than
``Limits.max_json_depth`` is a bad row.
"""

from __future__ import annotations

import collections
import contextlib
import csv
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from evalvalidity.core.types import Progress
from evalvalidity.errors import FileFormatError
from evalvalidity.io._arrow import int64_range
from evalvalidity.io._compute import pc
from evalvalidity.io.ingest._detect import Detected, _line_breaks
from evalvalidity.io.ingest._limits import exceeds_depth, human_bytes
from evalvalidity.io.ingest._sink import Sink
from evalvalidity.io.ingest._source import BOM, Source
from evalvalidity.io.ingest._validate import (
    MAX_GRADE,
    RejectLog,
    apply_row_checks,
    not_text,
    row_checks,
)

if TYPE_CHECKING:
    import duckdb

CHUNK_BYTES = 1 << 23
FAST_BLOCK_BYTES = 1 << 24
FAST_PARSE_BLOCK_BYTES = 1 << 22  # pyarrow parses a decompressed block in parallel pieces
#: Blocks parsed and checked at once, each in a worker, while the next is read.
FAST_WORKERS = 2
#: Tests switch the fast path off to check that both paths give the same table.
FAST_PATH = True
# Integers are read as text and converted here: pyarrow's integer parser also takes '0x1'
# (hexadecimal, which trec_eval's atoi reads as 0), so only plain decimal digits go through.
_PA_TYPES = {"id": pa.string(), "float": pa.float64(), "int": pa.string(), "posint": pa.string()}
_DECIMAL_INTEGER = r"^[+-]?[0-9]+$"


class _Abort(Exception):
    """The fast path met a line it does not handle."""


def _report(progress: Progress | None, source: Source, what: str) -> None:
    if progress is not None and source.size:
        progress(min(source.raw_position() / source.size, 1.0) * 0.9, what)


# -- fast path -------------------------------------------------------------------------------
def _fast_delimiter(det: Detected, sample: list[str]) -> tuple[str, bool] | None:
    """(delimiter, quoting) for the fast path, or None when only the exact path fits."""
    if det.format == "csv":
        return ",", True
    if det.format == "tsv":
        return "\t", False
    if det.format != "trec":
        return None
    if det.layout.header:
        return None
    if all("\t" not in line for line in sample):
        return " ", False
    if all(" " not in line for line in sample):
        return "\t", False
    return None


def _text_blocks(source: Source) -> Generator[bytearray, None, None]:
    """The decompressed bytes in blocks of about FAST_BLOCK_BYTES that end at a line break.

    Read through the metered stream (the limits hold); a line longer than
    ``max_line_bytes`` gives up (the exact path then names it). Each block is read into a
    buffer of its own after the previous block's unfinished line, and cut where its last line
    ends: the file's bytes are copied once (three copies of every block cost the reading
    thread 0.2 s of the 7M-line run's 250 MB), and only the unfinished line is copied again.
    """
    max_line = source.limits.max_line_bytes
    stream = source.open_stream()
    native = stream.readinto if isinstance(stream, pa.NativeFile) else None
    pending = b""
    try:
        while True:
            start = len(pending)
            block = bytearray(start + FAST_BLOCK_BYTES)
            block[:start] = pending
            if native is not None:
                with memoryview(block) as whole, whole[start:] as free:
                    got = native(free)
            else:
                chunk = stream.read(FAST_BLOCK_BYTES)
                got = len(chunk)
                block[start : start + got] = chunk
                del chunk
            if not got:
                break
            del block[start + got :]  # the end of the file: a short read
            end = len(block) - 1 if block.endswith(b"\r") else len(block)  # keep CRLF whole
            cut = block.rfind(b"\n", 0, end)
            cut = max(cut, block.rfind(b"\r", cut + 1, end))  # a lone CR after the last LF
            if cut < 0:
                pending = bytes(block)
            else:
                pending = bytes(block[cut + 1 :])
                del block[cut + 1 :]
                yield block
            if len(pending) > max_line + 1:
                raise _Abort
        if pending:
            yield bytearray(pending)
    finally:
        stream.close()


def _parsed(
    block: bytes | bytearray,
    skip: int,
    shortest: int,
    names: list[str],
    parse: pcsv.ParseOptions,
    convert: pcsv.ConvertOptions,
) -> tuple[pa.Table, frozenset[bytes] | None]:
    """One block of the file as parsed by pyarrow, with which of a tab, a space and ``#`` it holds.

    The block is a piece of the file cut at a line break (:func:`_text_blocks`), parsed on its
    own, in parallel pieces. pyarrow's streaming reader would hold a whole line however long
    it is (a 300 MB line cost 490 MiB) and, over gzip, decompress far ahead of what it parses
    (about 1 GiB for a gzip bomb before a check could stop it); over a Python stream it
    crashes the interpreter (see :meth:`Source.open_native_stream`). Measured on a 57 MB and
    a 288 MB run, this is as fast.

    A clean line holds its fields (each non-empty but a CSV's or TSV's unkept one), the
    delimiters between them and a line break: at least ``shortest`` bytes. A block with more
    line breaks of one kind than that allows is not clean (empty lines, empty fields): given
    up before pyarrow parses it (a block of line breaks would be millions of rows). Two byte
    counts cost a sixth of a search for every kind of empty line; a block with a few empty
    lines is parsed, and the checks of its empty fields give up. ``skip`` header rows are
    skipped.

    The bytes it holds tell the checks what its fields cannot hold: a byte the block lacks is
    in none of its fields, and a search of the raw block for one byte costs a tenth of a
    search of the columns. They are None (unknown) when the block starts with skipped rows.
    """
    if not skip and (
        block.startswith((b"\n", b"\r"))
        or max(_count(block, b"\n"), _count(block, b"\r")) * shortest > len(block)
    ):
        raise _Abort
    table = pcsv.read_csv(
        pa.py_buffer(block),
        read_options=pcsv.ReadOptions(
            column_names=names, skip_rows=skip, block_size=FAST_PARSE_BLOCK_BYTES
        ),
        parse_options=parse,
        convert_options=convert,
    )
    holds = None if skip else frozenset(b for b in (b"\t", b" ", b"#") if b in block)
    return table, holds


def _count(block: bytes | bytearray, byte: bytes) -> int:
    r"""How many times ``byte`` occurs in ``block`` (numpy: twice as fast as ``bytes.count``).

    >>> _count(b"a\nb\n\n", b"\n"), _count(b"a\nb", b"\r")
    (3, 0)
    """
    if byte not in block:  # a search for one byte is a tenth of a count
        return 0
    return int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == ord(byte)))


def read_fast(
    source: Source,
    det: Detected,
    sample: list[str],
    sink: Sink,
    progress: Progress | None,
) -> bool:
    """Read ``source`` on the fast path into ``sink``; False (sink reset) if it gave up."""
    choice = _fast_delimiter(det, sample) if FAST_PATH else None
    if choice is None:
        return False
    delimiter, quoting = choice
    layout = det.layout
    whitespace = det.format == "trec"
    names = [f"c{i}" for i in range(layout.n_fields)]
    types = {}
    for i, spec in enumerate(layout.fields):
        # unkept fields are read too, as text: their length counts towards the line's
        types[names[i]] = _PA_TYPES[spec.type] if spec is not None else pa.string()
    max_line = source.limits.max_line_bytes
    parse = pcsv.ParseOptions(
        delimiter=delimiter,
        quote_char='"' if quoting else False,
        double_quote=quoting,
        escape_char=False,
        newlines_in_values=False,
        ignore_empty_lines=False,
    )
    convert = pcsv.ConvertOptions(
        column_types=types,
        include_columns=names,
        null_values=[],
        true_values=[],
        false_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    other = "\t" if delimiter == " " else " "

    def checked(batch: pa.RecordBatch, holds: frozenset[bytes] | None) -> dict[str, pa.Array]:
        """The kept columns of a clean batch (converted); _Abort when a row is not clean."""
        columns: dict[str, pa.Array] = {}
        if batch.num_rows and _longest_row_bound(batch) > max_line:
            raise _Abort  # the exact path names the line
        first = batch.column(names[0])
        if (
            batch.num_rows
            and pa.types.is_string(first.type)
            and (holds is None or b"#" in holds)
            and pc.any(pc.starts_with(pc.utf8_ltrim(first, characters=" \t"), "#")).as_py()
        ):
            raise _Abort  # a comment line: the exact path skips it
        if whitespace and holds is not None and other.encode() in holds:
            raise _Abort  # the other whitespace is in some field (every one is read)
        for i, spec in enumerate(layout.fields):
            column = batch.column(names[i])
            if spec is None and not whitespace:
                continue
            if spec is None or spec.type == "id":
                if not whitespace:
                    column = pc.utf8_trim(column, characters=" \t")
                if batch.num_rows and (
                    pc.min(pc.binary_length(column)).as_py() == 0
                    or (
                        whitespace
                        and holds is None
                        and pc.any(pc.match_substring(column, other)).as_py()
                    )
                ):
                    raise _Abort
            elif spec.type == "float":
                if batch.num_rows and not pc.all(pc.is_finite(column)).as_py():
                    raise _Abort
            else:  # an integer: decimal digits only, in range (else the exact path)
                if (
                    batch.num_rows
                    # digits only (no sign, not empty) is a tenth of the regex's cost
                    and not pc.all(pc.ascii_is_decimal(column)).as_py()
                    and not pc.all(pc.match_substring_regex(column, _DECIMAL_INTEGER)).as_py()
                ):
                    raise _Abort
                column = pc.cast(column, pa.int64())  # past 64 bits: ArrowInvalid
                lowest, highest = pc.min_max(column).values()
                if batch.num_rows and spec.type == "posint" and lowest.as_py() < 1:
                    raise _Abort
                if (
                    batch.num_rows
                    and spec.name == "rel"
                    and max(-lowest.as_py(), highest.as_py()) > MAX_GRADE
                ):
                    raise _Abort
            if spec is not None:
                columns[spec.name] = column
        return columns

    required = sum(det.format == "trec" or spec is not None for spec in layout.fields)
    shortest = required + len(names)  # the bytes of the shortest clean line

    def work(block: bytearray, skip: int) -> list[tuple[int, dict[str, pa.Array]]]:
        table, holds = _parsed(block, skip, shortest, names, parse, convert)
        return [(batch.num_rows, checked(batch, holds)) for batch in table.to_batches()]

    # Whitespace formats: a field is empty only next to a doubled, leading or trailing
    # delimiter or on a blank line (which pyarrow reads as a row of empty fields when every
    # column is text), and holds the other whitespace only where the file has it. Both are
    # checked on the parsed text columns, batch by batch: vectorised, this costs less than a
    # scan of the raw bytes for the patterns that cause them (measured on 7M lines: 2.4 s
    # in all against 4.8 s with the scan).
    # Each block is counted, parsed and checked in a worker while the next one is read here:
    # pyarrow parses a block in parallel, but the checks and the reading run on one core
    # each, and overlapped they keep both cores busy (the 7M-line run, two cores: read
    # in 2.4 s instead of 3.1, medians of 10 side by side). The blocks are written in the
    # file's order, so row ``i`` is still line ``header + 1 + i``.
    start = det.header_line + 1
    in_flight: collections.deque[Future[list[tuple[int, dict[str, pa.Array]]]]]
    in_flight = collections.deque()

    def write(parts: list[tuple[int, dict[str, pa.Array]]]) -> None:
        nonlocal start
        for rows, columns in parts:
            sink.write(pa.table({"line": int64_range(start, start + rows), **columns}))
            start += rows
        _report(progress, source, "reading")

    try:
        with (
            contextlib.closing(_text_blocks(source)) as blocks,
            ThreadPoolExecutor(FAST_WORKERS, thread_name_prefix="evalvalidity-read") as pool,
        ):
            try:
                skip = det.header_line
                for block in blocks:
                    in_flight.append(pool.submit(work, block, skip))
                    skip = 0
                    if len(in_flight) > FAST_WORKERS:
                        write(in_flight.popleft().result())
                while in_flight:
                    write(in_flight.popleft().result())
            finally:
                for future in in_flight:  # given up: what has not started never will
                    future.cancel()
    except (_Abort, pa.ArrowInvalid):
        sink.reset()
        return False
    return True


def _longest_row_bound(batch: pa.RecordBatch) -> int:
    """A lower bound of the batch's longest line: its longest text field of each column.

    Numbers are not measured (pyarrow has parsed them); a line whose length comes from a
    number thousands of digits long is the one case the fast path lets through.
    """
    longest: list[int] = [
        int(pc.max(pc.binary_length(column)).as_py() or 0)
        for column in batch.columns
        if pa.types.is_string(column.type)
    ]
    return sum(longest) + int(batch.num_columns) - 1


# -- exact path ------------------------------------------------------------------------------
def _too_long(source: Source, number: int, line: bytes) -> FileFormatError:
    return FileFormatError(
        source.name,
        number,
        f"the line is longer than {human_bytes(source.limits.max_line_bytes)}, the limit"
        " (Limits.max_line_bytes)",
        line[:200].decode("utf-8", errors="replace"),
    )


def iter_lines(source: Source) -> Iterator[tuple[int, list[bytes]]]:
    """Yield (number of the first line, lines) in chunks; line breaks as in pyarrow.

    A line longer than ``source.limits.max_line_bytes`` raises as soon as that much of it
    is read.
    """
    max_line = source.limits.max_line_bytes
    stream = source.open_stream()
    pending = b""
    first = True
    number = 1
    try:
        while True:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                break
            if first:
                first = False
                if chunk.startswith(BOM):
                    chunk = chunk[len(BOM) :]
            data = pending + chunk if pending else chunk
            end = len(data) - 1 if data.endswith(b"\r") else len(data)
            cut = max(data.rfind(b"\n", 0, end), data.rfind(b"\r", 0, end))
            if cut < 0:
                if len(data) > max_line + 1:  # + 1: a CR that may start a CRLF
                    raise _too_long(source, number, data)
                pending = data
                continue
            pending = data[cut + 1 :]
            number = yield from _split_lines(source, data[: cut + 1], number, max_line)
            if len(pending) > max_line + 1:
                raise _too_long(source, number, pending)
        if pending:
            lines = pending.splitlines()
            _check_lengths(source, number, lines, max_line)
            yield number, lines
    finally:
        stream.close()


#: Bytes that may make up a blank line (with its line break), as a lookup table.
_BLANK_BYTES = np.zeros(256, dtype=bool)
_BLANK_BYTES[list(b" \t\r\n")] = True
#: Blank lines are counted, not split, in runs of at least twice this many bytes.
BLANK_WINDOW = 1 << 12


def _blank_spans(block: bytes, max_line: int) -> list[tuple[int, int]]:
    r"""Spans ``[start, end)`` of ``block`` made of whole blank lines, each long enough to skip.

    ``block`` starts at the start of a line and ends at a line break (or at the end of the
    file). A blank line holds only spaces and tabs; every reader skips it. A span is found
    through the aligned windows of :data:`BLANK_WINDOW` bytes that hold only blank bytes (so
    any run of at least twice that is found, with a few vectorised passes over the block),
    widened to the whole run of blank bytes and narrowed to its whole lines. A span stops
    before a line longer than ``max_line``, which the line reader then names.

    Examples
    --------
    >>> block = b"q1 Q0 d 1 1.0 r\n" + b"\n" * 9000 + b" \r\n" + b"q2 Q0 d 1 1.0 r\n"
    >>> _blank_spans(block, 1 << 20)
    [(16, 9019)]
    >>> _blank_spans(b"\n" * 100, 1 << 20)
    []
    """
    n_windows = len(block) // BLANK_WINDOW
    if n_windows == 0:
        return []
    blank = _BLANK_BYTES[np.frombuffer(block, dtype=np.uint8)]
    full = np.flatnonzero(blank[: n_windows * BLANK_WINDOW].reshape(n_windows, -1).all(axis=1))
    if full.size == 0:
        return []
    gaps = np.flatnonzero(np.diff(full) > 1)
    firsts = full[np.r_[0, gaps + 1]]
    lasts = full[np.r_[gaps, full.size - 1]]
    spans = []
    for first, last in zip(firsts.tolist(), lasts.tolist(), strict=True):
        # widen to the whole run: the windows either side hold a byte that is not blank
        low = first * BLANK_WINDOW
        before = np.flatnonzero(~blank[max(low - BLANK_WINDOW, 0) : low])
        low = max(low - BLANK_WINDOW, 0) + int(before[-1]) + 1 if before.size else 0
        high = (last + 1) * BLANK_WINDOW
        after = np.flatnonzero(~blank[high : high + BLANK_WINDOW])
        high = high + int(after[0]) if after.size else len(block)
        # narrow to whole lines: a run after a byte that is not blank starts inside a line
        start = low
        if low > 0:
            start = _after_break(block, _first_break(block, low, high))
        end = max(block.rfind(b"\n", start, high), block.rfind(b"\r", start, high)) + 1
        # no line longer than max_line: a line break at most max_line bytes after each start
        line = start
        while end - line > max_line:
            brk = max(
                block.rfind(b"\n", line, line + max_line + 1),
                block.rfind(b"\r", line, line + max_line + 1),
            )
            if brk < 0:
                end = line
                break
            line = _after_break(block, brk)
        if end - start >= BLANK_WINDOW:
            spans.append((start, end))
    return spans


def _first_break(block: bytes, start: int, end: int) -> int:
    found = [i for i in (block.find(b"\n", start, end), block.find(b"\r", start, end)) if i >= 0]
    return min(found) if found else end - 1


def _after_break(block: bytes, brk: int) -> int:
    """Where the line after the line break at ``brk`` starts (a CRLF is one break)."""
    return brk + 2 if block[brk : brk + 2] == b"\r\n" else brk + 1


def _split_lines(
    source: Source, block: bytes, number: int, max_line: int
) -> Generator[tuple[int, list[bytes]], None, int]:
    """Yield ``block``'s lines as :func:`iter_lines` does, counting long runs of blank lines.

    Returns the number of the line after the block. Splitting 50 MB of line breaks into
    lines, and skipping each in every reader, took minutes; a span of
    :func:`_blank_spans` is only counted (every reader skips a blank line).
    """
    position = 0
    for start, end in [*_blank_spans(block, max_line), (len(block), len(block))]:
        if start > position:
            lines = block[position:start].splitlines()
            _check_lengths(source, number, lines, max_line)
            yield number, lines
            number += len(lines)
        number += _line_breaks(block[start:end])
        position = end
    return number


def _check_lengths(source: Source, number: int, lines: list[bytes], max_line: int) -> None:
    if lines and max(map(len, lines)) > max_line:
        offset = next(i for i, line in enumerate(lines) if len(line) > max_line)
        raise _too_long(source, number + offset, lines[offset])


def _decode(lines: list[bytes]) -> tuple[pa.Array, pa.Array | None]:
    """Lines as strings, and per-line errors (None when every line is valid UTF-8)."""
    binary = pa.array(lines, pa.binary())
    try:
        return binary.cast(pa.string()), None
    except pa.ArrowInvalid:
        pass
    texts: list[str] = []
    errors: list[str | None] = []
    for line in lines:
        try:
            texts.append(line.decode("utf-8"))
            errors.append(None)
        except UnicodeDecodeError as exc:
            texts.append(line.decode("utf-8", errors="replace"))
            errors.append(
                f"invalid UTF-8: the byte 0x{line[exc.start]:02x} at byte offset {exc.start}"
                " of the line is not valid UTF-8 text"
            )
    return pa.array(texts, pa.string()), pa.array(errors, pa.string())


_WS_SPLIT = (
    "CASE WHEN contains(l, chr(9)) OR contains(l, '  ') OR starts_with(l, ' ')"
    " OR ends_with(l, ' ') THEN regexp_split_to_array(trim(l, ' ' || chr(9)), '[ \\t]+')"
    " ELSE string_split(l, ' ') END"
)


def _split_sql(det: Detected) -> str:
    if det.format in ("trec", "trec_eval"):
        split = _WS_SPLIT
    elif det.format == "tsv":
        split = "list_transform(string_split(l, chr(9)), lambda x: trim(x, ' ' || chr(9)))"
    else:
        split = (
            "list_transform(CASE WHEN l2 IS NOT NULL THEN l2"
            " ELSE string_split(l, ',') END, lambda x: trim(x, ' ' || chr(9)))"
        )
    kept = ", ".join(
        f"f[{i + 1}] AS c{i}" for i, spec in enumerate(det.layout.fields) if spec is not None
    )
    return (
        f"SELECT line, l, err, len(f) AS n, {kept} FROM (SELECT line, l, err, {split} AS f"
        f" FROM batch WHERE line > {int(det.header_line)} AND trim(l, ' ' || chr(9)) <> ''"
        # trec_eval's comment lines
        " AND NOT starts_with(ltrim(l, ' ' || chr(9)), '#'))"
    )


_FIELDS_TYPE = pa.list_(pa.string())


def _csv_quoted(texts: pa.Array) -> pa.Array | None:
    """For lines with a double quote, their fields as parsed by csv (null for the others)."""
    mask = pc.match_substring(texts, '"')
    if not pc.any(mask).as_py():
        return None
    out: list[list[str] | None] = []
    for text, quoted in zip(texts.to_pylist(), mask.to_pylist(), strict=True):
        if not quoted:
            out.append(None)
            continue
        try:
            fields = next(csv.reader([text], strict=True))
        except (csv.Error, StopIteration):
            fields = [text]
        out.append(fields)
    return pa.array(out, _FIELDS_TYPE)


def read_exact(
    source: Source,
    det: Detected,
    sink: Sink,
    log: RejectLog,
    con: duckdb.DuckDBPyConnection,
    progress: Progress | None,
) -> int:
    """Read ``source`` line by line into ``sink``; returns how many lines were skipped."""
    layout = det.layout
    checks = row_checks(layout)
    sql = checks.sql.replace("FROM batch)", f"FROM ({_split_sql(det)}))")
    skipped = 0
    for number, lines in iter_lines(source):
        texts, errors = _decode(lines)
        table = {
            "line": pa.array(np.arange(number, number + len(lines), dtype=np.int64)),
            "l": texts,
            "err": errors if errors is not None else pa.nulls(len(lines), pa.string()),
        }
        if det.format == "csv":
            quoted = _csv_quoted(texts)
            table["l2"] = quoted if quoted is not None else pa.nulls(len(lines), _FIELDS_TYPE)
        kept, n_skipped = apply_row_checks(con, checks, layout, pa.table(table), log, sql=sql)
        skipped += n_skipped
        sink.write(kept)
        _report(progress, source, "reading")
    return skipped


class _DuplicateKey(ValueError):
    """A JSON object names a key twice (``json`` would keep the last value silently)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _lone_surrogate(obj: object) -> str | None:
    """Why a parsed JSON Lines record is not text (see :func:`not_text`), or None."""
    strings = [obj] if isinstance(obj, str) else []
    if isinstance(obj, dict):
        strings = [s for pair in obj.items() for s in pair if isinstance(s, str)]
    for text in strings:
        error = not_text(text)
        if error is not None:
            return error
    return None


def read_jsonl(
    source: Source,
    det: Detected,
    sink: Sink,
    log: RejectLog,
    con: duckdb.DuckDBPyConnection,
    progress: Progress | None,
) -> int:
    """Read JSON Lines: one object per line, keys as detected."""
    import json  # here, not at the top: a text or Parquet read never loads it

    layout = det.layout
    checks = row_checks(layout)
    max_depth = source.limits.max_json_depth
    kept_fields = [(i, det.keys[i]) for i, spec in enumerate(layout.fields) if spec is not None]
    for number, lines in iter_lines(source):
        texts, errors = _decode(lines)
        err_list = errors.to_pylist() if errors is not None else [None] * len(lines)
        line_numbers: list[int] = []
        raws: list[str] = []
        errs: list[str | None] = []
        cells: dict[int, list[str | None]] = {i: [] for i, _ in kept_fields}
        for offset, text in enumerate(texts.to_pylist()):
            if not text.strip():
                continue
            error = err_list[offset]
            obj: object = None
            if error is None:
                try:
                    if exceeds_depth(text, max_depth):
                        error = (
                            f"the JSON is nested more than {max_depth} levels deep, the limit"
                            " (Limits.max_json_depth)"
                        )
                    else:
                        obj = json.loads(text, object_pairs_hook=_unique_keys)
                        error = _lone_surrogate(obj)
                        if error is not None:
                            obj = None  # no cell may hold it
                except _DuplicateKey as exc:
                    error = f"the key {exc.args[0]!r} appears more than once in the object"
                except json.JSONDecodeError as exc:
                    error = f"invalid JSON ({exc.msg} at column {exc.colno})"
                except ValueError as exc:  # an integer of more than 4300 digits
                    error = f"invalid JSON ({exc})"
                except RecursionError:  # max_json_depth above Python's own limit
                    error = "the JSON is nested deeper than Python's parser allows"
                if error is None and not isinstance(obj, dict):
                    error = f"expected a JSON object, found {type(obj).__name__}"
            line_numbers.append(number + offset)
            raws.append(text)
            for i, key in kept_fields:
                value = obj.get(key) if isinstance(obj, dict) and key is not None else None
                if error is None and isinstance(obj, dict) and key not in obj:
                    error = f"missing the key {key!r}"
                if isinstance(value, dict | list):
                    if error is None:
                        error = (
                            f"expected a single value for {key!r}, found {json.dumps(value)[:50]}"
                        )
                    value = None
                if isinstance(value, bool) or (
                    isinstance(value, float) and layout.fields[i].type == "id"  # type: ignore[union-attr]
                ):
                    if error is None:
                        label = layout.fields[i].label  # type: ignore[union-attr]
                        error = (
                            f"expected a string or an integer {label} for {key!r}, found "
                            f"{json.dumps(value)}"
                            + (
                                " (a float id matches no text id)"
                                if not isinstance(value, bool)
                                else ""
                            )
                        )
                    value = None
                cells[i].append(
                    None
                    if value is None
                    else value
                    if isinstance(value, str)
                    else repr(value)
                    if isinstance(value, float)
                    else str(value)
                )
            errs.append(error)
        if not line_numbers:
            continue
        table = {
            "line": pa.array(line_numbers, pa.int64()),
            "l": pa.array(raws, pa.string()),
            "err": pa.array(errs, pa.string()),
            "n": pa.array(np.full(len(line_numbers), layout.n_fields, dtype=np.int64)),
        }
        for i, _ in kept_fields:
            table[f"c{i}"] = pa.array(cells[i], pa.string())
        kept, _ = apply_row_checks(con, checks, layout, pa.table(table), log)
        sink.write(kept)
        _report(progress, source, "reading")
    return 0
