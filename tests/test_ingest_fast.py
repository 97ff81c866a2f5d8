"""The fast path's decisions: which clean files it reads, which it hands to the exact path.

Each case reads the file on both paths and compares the tables; the fast path's own answer
(taken or given up, and whether pyarrow parsed anything first) is read off ``read_fast``.
"""

from __future__ import annotations

import itertools
import threading

import pytest

from evalvalidity.io.ingest import _text, read

RUN = b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 0.5 t\n"


@pytest.fixture
def fast_answers(monkeypatch):
    """What each read_fast call answered, and how many blocks pyarrow parsed."""
    answers: list[bool] = []
    parsed = [0]
    original_read_fast = _text.read_fast
    original_read_csv = _text.pcsv.read_csv

    def read_fast(*args, **kwargs):
        answer = original_read_fast(*args, **kwargs)
        answers.append(answer)
        return answer

    def read_csv(*args, **kwargs):
        parsed[0] += 1
        return original_read_csv(*args, **kwargs)

    monkeypatch.setattr(_text, "read_fast", read_fast)
    monkeypatch.setattr(_text.pcsv, "read_csv", read_csv)
    import evalvalidity.io.ingest._read as _read

    monkeypatch.setattr(_read, "read_fast", read_fast)
    return answers, parsed


def _both(path, monkeypatch):
    fast = read(path).table
    monkeypatch.setattr(_text, "FAST_PATH", False)
    exact = read(path).table
    monkeypatch.setattr(_text, "FAST_PATH", True)
    assert fast.equals(exact)
    return fast


def test_a_clean_run_takes_the_fast_path(tmp_path, monkeypatch, fast_answers):
    path = tmp_path / "run.trec"
    path.write_bytes(RUN)
    table = _both(path, monkeypatch)
    answers, _ = fast_answers
    assert answers[0] is True
    assert table.column("docid").to_pylist() == ["d1", "d2", "d1"]


def test_negative_ranks_take_the_fast_path(tmp_path, monkeypatch, fast_answers):
    # digits alone are checked first; a minus sign sends the column to the full pattern
    path = tmp_path / "run.trec"
    path.write_bytes(RUN.replace(b" 2 1.5", b" -2 1.5"))
    table = _both(path, monkeypatch)
    answers, _ = fast_answers
    assert answers[0] is True
    assert table.column("rank").to_pylist() == [1, -2, 1]


@pytest.mark.parametrize(
    "text",
    [
        RUN.replace(b"d2", b"d\t2"),  # the other whitespace inside a field
        RUN.replace(b"t\nq2", b"t\n#q2"),  # a comment line
        RUN.replace(b"t\nq2", b"t\n  # a comment\nq2"),
        RUN.replace(b" 2 1.5", b" 0x2 1.5"),  # trec_eval's atoi reads 0
        RUN.replace(b"t\nq2", b"t\n\nq2"),  # one empty line
        RUN.replace(b"t\nq2", b"t\r\n\r\nq2"),
        RUN.replace(b"Q0 d2", b"Q0  d2"),  # a doubled delimiter
    ],
    ids=["tab", "comment", "indented-comment", "hex", "empty-line", "empty-crlf", "double"],
)
def test_an_irregular_line_sends_the_file_to_the_exact_path(
    tmp_path, monkeypatch, fast_answers, text
):
    path = tmp_path / "run.trec"
    path.write_bytes(text)
    _both(path, monkeypatch)
    answers, _ = fast_answers
    assert answers[0] is False


def test_a_block_of_line_breaks_is_given_up_before_pyarrow_parses_it(
    tmp_path, monkeypatch, fast_answers
):
    # 3 rows and 200,000 line breaks: more breaks than clean lines of 6 fields could make
    path = tmp_path / "run.trec"
    path.write_bytes(RUN + b"\n" * 200_000)
    answers, parsed = fast_answers
    assert read(path).table.num_rows == 3
    assert answers == [False]
    assert parsed[0] == 0


def test_a_csv_with_empty_unkept_fields_is_read(tmp_path, monkeypatch, fast_answers):
    path = tmp_path / "run.csv"
    path.write_bytes(
        b"qid,docid,score,note\n" + b"".join(b"q%d,d%d,1.5,\n" % (i, i) for i in range(50))
    )
    table = _both(path, monkeypatch)
    assert table.num_rows == 50


def test_a_read_without_digest_leaves_the_hash_empty(tmp_path):
    import hashlib

    path = tmp_path / "run.trec"
    path.write_bytes(RUN)
    hashed = read(path)
    unhashed = read(path, digest=False)
    assert hashed.sha256 == hashlib.sha256(RUN).hexdigest()
    assert unhashed.sha256 == ""
    assert unhashed.table.equals(hashed.table)


def _many_blocks(rows: int) -> bytes:
    return b"".join(
        b"q%d Q0 d%d %d %d.5 t\n" % (i // 10, i, i % 10 + 1, rows - i) for i in range(rows)
    )


def test_blocks_are_parsed_beside_the_reading_and_written_in_order(tmp_path, monkeypatch):
    # blocks of ~1 KiB: dozens of them, parsed by the workers while the next ones are read
    threads: list[str] = []
    original_read_csv = _text.pcsv.read_csv

    def read_csv(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original_read_csv(*args, **kwargs)

    monkeypatch.setattr(_text.pcsv, "read_csv", read_csv)
    monkeypatch.setattr(_text, "FAST_BLOCK_BYTES", 1 << 10)
    path = tmp_path / "run.trec"
    path.write_bytes(_many_blocks(2_000))
    table = _both(path, monkeypatch)
    assert len(threads) > 40
    assert all(name.startswith("evalvalidity-read") for name in threads)
    assert table.column("line").to_pylist() == list(range(1, 2_001))
    assert table.column("docid").to_pylist() == [f"d{i}" for i in range(2_000)]


@pytest.mark.parametrize("where", [1, 1_000, 1_999])
def test_an_irregular_line_in_any_block_gives_the_whole_file_up(tmp_path, monkeypatch, where):
    # the first, a middle and the last of ~60 blocks: a worker's give-up stops the reading, and
    # the exact path reads the file again, from its first line
    monkeypatch.setattr(_text, "FAST_BLOCK_BYTES", 1 << 10)
    lines = _many_blocks(2_000).splitlines(keepends=True)
    lines[where] = lines[where].replace(b" Q0 ", b" Q0  ")
    path = tmp_path / "run.trec"
    path.write_bytes(b"".join(lines))
    answers: list[bool] = []
    original_read_fast = _text.read_fast

    def read_fast(*args, **kwargs):
        answers.append(original_read_fast(*args, **kwargs))
        return answers[-1]

    import evalvalidity.io.ingest._read as _read

    monkeypatch.setattr(_read, "read_fast", read_fast)
    table = _both(path, monkeypatch)
    assert answers[0] is False
    assert table.num_rows == 2_000
    assert table.column("line").to_pylist() == list(range(1, 2_001))


@pytest.mark.parametrize(
    "text",
    [
        b"a b\ncc d\n" * 40,
        b"a b\r\ncc d\r\n" * 40,  # a CRLF at a block's end is kept whole
        b"a b\rcc d\r" * 40,  # lone CRs end lines too
        b"a b\ncc\rd e\r\n" * 40 + b"last",  # mixed, and no line break at the end
    ],
)
@pytest.mark.parametrize("size", [5, 7, 16, 1 << 10])
def test_blocks_end_at_line_breaks_and_hold_the_file_once(tmp_path, monkeypatch, text, size):
    monkeypatch.setattr(_text, "FAST_BLOCK_BYTES", size)
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    blocks = list(_text._text_blocks(_text.Source(path)))
    assert b"".join(blocks) == text
    for block in blocks[:-1]:
        assert block.endswith((b"\n", b"\r"))
    for left, right in itertools.pairwise(blocks):
        assert not (left.endswith(b"\r") and right.startswith(b"\n"))  # CRLF not cut
