"""Long runs of blank lines: counted, not split into lines, and read with exact line numbers."""

from __future__ import annotations

import gzip
import random
import re
import time

import pytest

from evalvalidity.errors import FileFormatError
from evalvalidity.io.ingest import Limits, _text, read
from evalvalidity.io.ingest._source import Source

ROWS = [b"q1 Q0 d1 1 2.5 t\n", b"q1 Q0 d2 2 1.5 t\n", b"q2 Q0 d1 1 0.5 t\n"]


@pytest.fixture(params=[True, False], ids=["fast-path", "exact-path"])
def both_paths(request, monkeypatch):
    monkeypatch.setattr(_text, "FAST_PATH", request.param)
    return request.param


@pytest.fixture
def lines_seen(monkeypatch):
    """How many lines the line reader hands to the readers."""
    seen = [0]
    original = _text.iter_lines

    def counting(source):
        for number, lines in original(source):
            seen[0] += len(lines)
            yield number, lines

    monkeypatch.setattr(_text, "iter_lines", counting)
    return seen


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_twenty_megabytes_of_blank_lines_read_in_seconds(tmp_path, compressed, lines_seen):
    # leading, between rows and trailing; "\n", "\r\n", "\r" and lines of spaces and tabs
    blank = [b"\n" * (8 << 20), b"\r\n" * (3 << 20), b" \t\n" * (1 << 20), b"\r" * (1 << 20)]
    parts = [blank[0], ROWS[0], blank[1], ROWS[1], blank[2], blank[3], ROWS[2], blank[0]]
    text = b"".join(parts)
    assert len(text) > 20_000_000
    path = tmp_path / ("blank.trec.gz" if compressed else "blank.trec")
    path.write_bytes(gzip.compress(text, compresslevel=1) if compressed else text)
    breaks = [p.count(b"\n") + p.count(b"\r") - p.count(b"\r\n") for p in parts]
    expected = [1 + sum(breaks[:i]) for i in (1, 3, 6)]
    start = time.perf_counter()
    result = read(path)
    seconds = time.perf_counter() - start
    assert result.kind == "run"
    assert result.table.column("line").to_pylist() == expected
    assert result.table.column("docid").to_pylist() == ["d1", "d2", "d1"]
    # 22 million lines, but only a few thousand (at the edges of the runs) are split
    assert lines_seen[0] < 20_000
    print(f"{len(text):,} bytes ({'gzip' if compressed else 'plain'}): {seconds:.2f} s")


def test_blank_lines_between_rows_keep_exact_line_numbers_on_both_paths(both_paths):
    text = ROWS[0] + b"\n" * 100_000 + b" \r\n" * 50_000 + ROWS[1] + b"\n\n" + ROWS[2]
    table = read(text).table
    assert table.column("line").to_pylist() == [1, 150_002, 150_005]


def test_a_blank_line_longer_than_the_limit_is_still_refused():
    long_blank = b" " * 20_000 + b"\n"
    text = ROWS[0] + b"\n" * 50_000 + long_blank + b"\n" * 50_000 + ROWS[1]
    with pytest.raises(FileFormatError, match=re.escape("<upload>:50002: the line is longer than")):
        read(text, limits=Limits(max_line_bytes=10_000))
    assert read(text, limits=Limits(max_line_bytes=30_000)).table.num_rows == 2


def _split(block: bytes, max_line: int) -> tuple[dict[int, bytes], int]:
    source = Source(b"", None, Limits(max_line_bytes=max_line))
    lines: dict[int, bytes] = {}
    reader = _text._split_lines(source, block, 1, max_line)
    while True:
        try:
            number, chunk = next(reader)
        except StopIteration as stop:
            return lines, stop.value
        lines.update((number + i, line) for i, line in enumerate(chunk))


def test_split_lines_agrees_with_splitlines_on_random_blocks():
    rnd = random.Random(7)
    pieces = [b"\n", b"\r\n", b"\r", b" ", b"\t", b"x", ROWS[0]]
    skipped = 0
    for _ in range(600):
        block = b"".join(
            rnd.choice(pieces) * rnd.choice([1, 3, 100, 3000, 6000])
            for _ in range(rnd.randint(0, 12))
        )
        if block and rnd.random() < 0.8 and not block.endswith((b"\n", b"\r")):
            block += b"\n"
        max_line = rnd.choice([50, 5000, 9000, 1 << 20])
        expected = block.splitlines()
        too_long = [i + 1 for i, line in enumerate(expected) if len(line) > max_line]
        try:
            lines, after = _split(block, max_line)
        except FileFormatError as exc:
            assert too_long and exc.line == too_long[0]
            continue
        assert not too_long
        assert after == len(expected) + 1
        assert all(expected[number - 1] == line for number, line in lines.items())
        assert all(
            lines.get(i + 1) == line for i, line in enumerate(expected) if line.strip(b" \t")
        )
        skipped += len(lines) < len(expected)
    assert skipped > 100  # the runs were long enough to be counted, not split
