"""Resource limits: every hostile size is refused, naming the file and the limit, in bounded memory.

Memory is measured as the peak resident set size of a child process that does nothing but the
read (``VmHWM``); each child prints what it raised and its peak as JSON.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT

from evalvalidity.errors import FileFormatError, ParameterError
from evalvalidity.io.ingest import DEFAULT_LIMITS, Limits, RejectedRowsError, read, read_run
from evalvalidity.io.ingest._limits import human_bytes
from evalvalidity.io.workspace import Workspace

MiB = 1 << 20
GiB = 1 << 30
#: The brief's bound on any hostile input; the measured peaks are far below it.
PEAK_BOUND_MIB = 1536

CHILD = """
import json, os, sys, tempfile, time
action, path, kind, limits = sys.argv[1], sys.argv[2], sys.argv[3] or None, sys.argv[4]
from evalvalidity.errors import EvalValidityError
from evalvalidity.io.ingest import Limits, read
from evalvalidity.io.workspace import Workspace
limits = Limits(**json.loads(limits)) if limits else None
out = {}
start = time.perf_counter()
try:
    if action == "read":
        out["rows"] = read(path, kind=kind, limits=limits).n_rows
    elif action == "read-bytes":
        with open(path, "rb") as handle:
            data = handle.read()
        out["rows"] = read(data, kind=kind, limits=limits, display_name=os.path.basename(path)).n_rows
    else:
        with tempfile.TemporaryDirectory() as root:
            out["rows"] = Workspace(root).add(path, kind=kind, limits=limits).n_rows
except EvalValidityError as exc:
    out["error"] = str(exc)
out["seconds"] = round(time.perf_counter() - start, 2)
# VmHWM, not ru_maxrss: after fork and exec, ru_maxrss starts from the parent's size
with open("/proc/self/status") as status:
    out["peak_mib"] = next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024
print(json.dumps(out))
"""


def in_child(action: str, path: Path, kind: str | None = None, **limits: object) -> dict:
    """Run ``action`` (read, read-bytes, add) on ``path`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            action,
            str(path),
            kind or "",
            json.dumps(limits) if limits else "",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # an abort at exit fails here too
    return json.loads(done.stdout)


# -- the limits themselves -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"max_file_bytes": 0},
            "The 'max_file_bytes' parameter of Limits must be an int >= 1 or None. Got 0 instead.",
        ),
        (
            {"max_line_bytes": None},
            "The 'max_line_bytes' parameter of Limits must be an int >= 1. Got None instead.",
        ),
        (
            {"max_json_depth": True},
            "The 'max_json_depth' parameter of Limits must be an int >= 1. Got True instead.",
        ),
        (
            {"max_compression_ratio": 0.5},
            "The 'max_compression_ratio' parameter of Limits must be"
            " a number >= 1 or None. Got 0.5 instead.",
        ),
        (
            {"memory_limit": "lots"},
            "The 'memory_limit' parameter of Limits must be a size such as"
            " '2GB' or '500MiB'. Got 'lots' instead.",
        ),
    ],
)
def test_limits_are_validated(options, message):
    with pytest.raises(ParameterError) as info:
        Limits(**options)
    assert str(info.value) == message


def test_defaults_are_documented_values():
    assert DEFAULT_LIMITS == Limits(
        max_file_bytes=4 * GiB,
        max_text_bytes=16 * GiB,
        max_compression_ratio=100.0,
        ratio_grace_bytes=64 * MiB,
        max_line_bytes=MiB,
        max_json_bytes=64 * MiB,
        max_json_depth=64,
        memory_limit="2GB",
    )
    with pytest.raises(ParameterError, match="The 'limits' parameter must be a Limits. Got dict"):
        read(b"1400\n", limits={"max_line_bytes": 10})  # type: ignore[arg-type]


# -- upload and file size --------------------------------------------------------------------
class CountingReader(io.BytesIO):
    """A file-like upload that remembers how much was read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.n_read = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.n_read += len(chunk)
        return chunk


def test_an_upload_over_the_size_limit_is_refused_before_it_is_read_whole(tmp_path):
    limits = Limits(max_file_bytes=MiB)
    data = b"".join(b"q%d Q0 d%d 1 1.5 t\n" % (i, i) for i in range(65_000))
    assert human_bytes(len(data)) == "1.5 MiB"
    with pytest.raises(FileFormatError) as info:
        read(data, display_name="upload.trec", limits=limits)
    assert str(info.value) == (
        "upload.trec: the file is 1.5 MiB; the limit is 1 MiB (Limits.max_file_bytes)"
    )
    upload = CountingReader(data)
    with pytest.raises(FileFormatError) as info:
        read(upload, display_name="upload.trec", limits=limits)
    assert str(info.value) == (
        "upload.trec: the file is more than 1 MiB; the limit is 1 MiB (Limits.max_file_bytes)"
    )
    assert upload.n_read == MiB + 1
    path = tmp_path / "big.trec"
    path.write_bytes(data)
    with pytest.raises(FileFormatError, match=r"big.trec: the file is 1.5 MiB; the limit is 1 MiB"):
        read_run(path, limits=limits)
    # the workspace: its own limits, or the add's
    root = tmp_path / "ws"
    ws = Workspace(root, limits=limits)
    ws.add(b"1400\n", name="size")
    before = sorted(p.name for p in (root / "data").iterdir())
    with pytest.raises(FileFormatError, match=r"the file is 1.5 MiB; the limit is 1 MiB"):
        ws.add(path)
    assert sorted(p.name for p in (root / "data").iterdir()) == before
    assert ws.add(path, limits=Limits(max_file_bytes=2 * MiB)).n_rows == 65_000


def test_a_file_over_the_default_limit_is_refused_from_its_size_alone(tmp_path):
    sparse = tmp_path / "huge.trec"
    with open(sparse, "wb") as handle:
        handle.truncate(5 * GiB)  # a sparse file: nothing is written, nothing is read
    with pytest.raises(FileFormatError) as info:
        read(sparse, display_name="huge.trec")
    assert (
        str(info.value)
        == "huge.trec: the file is 5 GiB; the limit is 4 GiB (Limits.max_file_bytes)"
    )
    ws = Workspace(tmp_path / "ws")
    with pytest.raises(FileFormatError, match="the limit is 4 GiB"):
        ws.add(sparse)
    assert ws.list(all_owners=True) == []


# -- gzip bombs ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """10 GiB of text in 26 MB (identical lines) and 10 GiB of zeros in 10 MB (no newline)."""
    folder = tmp_path_factory.mktemp("bombs")
    line = b"q1 Q0 d1 1 1.5 t\n"
    lines = gzip.compress(line * ((64 * MiB) // len(line)), compresslevel=9, mtime=0)
    zeros = gzip.compress(b"\0" * (64 * MiB), compresslevel=9, mtime=0)
    paths = {}
    for name, member in (("lines", lines), ("zeros", zeros)):
        path = folder / f"{name}.trec.gz"
        with open(path, "wb") as handle:
            for _ in range(160):  # gzip members concatenated: 160 x 64 MiB = 10 GiB
                handle.write(member)
        paths[name] = path
    return paths


@pytest.mark.parametrize("action", ["read", "add"])
def test_a_gzip_bomb_is_stopped_while_streaming(bombs, action):
    out = in_child(action, bombs["lines"], "run")
    assert out["error"].startswith(
        f"{bombs['lines']}: the file decompresses to more than 100 times its size ("
    )
    assert out["error"].endswith(
        "); the limit is 100 (Limits.max_compression_ratio): refused as a likely decompression bomb"
    )
    assert out["peak_mib"] < 700, out  # stopped after ~80 MiB of the 10 GiB
    out = in_child(action, bombs["zeros"], "run")
    assert out["error"] == (
        f"{bombs['zeros']}:1: the line is longer than 1 MiB, the limit (Limits.max_line_bytes)"
    )
    assert out["peak_mib"] < 300, out


def test_the_decompressed_size_cap_holds_without_the_ratio(tmp_path):
    # a file that compresses like text (~10x), over a 4 MiB cap
    rng = np.random.default_rng(0)
    text = "".join(
        f"q{q} Q0 d{d} 1 {s:.4f} t\n"
        for q, d, s in zip(
            rng.integers(0, 10**6, 100_000),
            rng.integers(0, 10**6, 100_000),
            rng.random(100_000),
            strict=True,
        )
    ).encode()
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(text, mtime=0))
    limits = Limits(max_text_bytes=MiB, max_compression_ratio=None)
    for fast in (True, False):
        from evalvalidity.io.ingest import _text

        _text.FAST_PATH = fast
        try:
            with pytest.raises(FileFormatError) as info:
                read(path, display_name="run.trec.gz", limits=limits)
        finally:
            _text.FAST_PATH = True
        assert str(info.value) == (
            "run.trec.gz: the file decompresses to more than 1 MiB, the limit"
            " (Limits.max_text_bytes): stopped reading there"
        )
    assert read(path, limits=Limits(max_compression_ratio=None)).n_rows == len(text.splitlines())


def test_a_parquet_bomb_is_stopped_by_its_decoded_size(tmp_path):
    """40 million identical rows, dictionary- and run-length-encoded into 0.8 MB."""
    n = MiB
    batch = pa.table(
        {
            "qid": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(n, np.int32)), pa.array(["query-" + "x" * 40])
            ),
            "docid": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(n, np.int32)), pa.array(["doc-" + "y" * 40])
            ),
            "score": pa.array(np.ones(n)),
        }
    )
    path = tmp_path / "bomb.parquet"
    with pq.ParquetWriter(path, batch.schema) as writer:
        for _ in range(40):
            writer.write_table(batch, row_group_size=n)
    out = in_child("add", path, "run")
    assert out["error"].startswith(f"{path}: the file decodes to more than 100 times its size (")
    assert out["peak_mib"] < 900, out


# -- long lines, deep JSON, big JSON documents --------------------------------------------------
@pytest.mark.parametrize("action", ["read", "read-bytes"])
def test_a_100_mb_line_is_refused_naming_it(tmp_path, action):
    path = tmp_path / "long.trec"
    with open(path, "wb") as handle:
        handle.write(b"q1 Q0 d1 1 1.5 t\nq1 Q0 ")
        handle.write(b"x" * (100 * MiB))
        handle.write(b" 2 1.0 t\nq1 Q0 d3 3 0.5 t\n")
    out = in_child(action, path)
    name = "long.trec" if action == "read-bytes" else str(path)
    assert (
        out["error"]
        == f"{name}:2: the line is longer than 1 MiB, the limit (Limits.max_line_bytes)"
    )
    assert out["peak_mib"] < (450 if action == "read-bytes" else 320), out


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("fmt", ["trec", "csv", "jsonl"])
def test_the_line_limit_on_every_path(fmt, fast, gzipped):
    from evalvalidity.io.ingest import _text

    rows = [("q1", "d1", 2.5), ("q1", "d" * 200, 1.5), ("q2", "d1", 0.5)]
    if fmt == "trec":
        data = "".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in rows)
    elif fmt == "csv":
        data = "qid,docid,score\n" + "".join(f"{q},{d},{s}\n" for q, d, s in rows)
    else:
        data = "".join(json.dumps({"qid": q, "docid": d, "score": s}) + "\n" for q, d, s in rows)
    payload = data.encode()
    if gzipped:
        payload = gzip.compress(payload)
    _text.FAST_PATH = fast
    try:
        with pytest.raises(FileFormatError) as info:
            read(payload, display_name="f", limits=Limits(max_line_bytes=100))
    finally:
        _text.FAST_PATH = True
    line = 3 if fmt == "csv" else 2
    assert (
        str(info.value)
        == f"f:{line}: the line is longer than 100 bytes, the limit (Limits.max_line_bytes)"
    )
    assert info.value.raw.startswith(data.splitlines()[line - 1][:100])


def test_deeply_nested_json_is_refused_without_recursion():
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(FileFormatError) as info:
        read(b'{"q1": {"d1": ' + deep + b"}}", kind="run", display_name="deep.json")
    assert str(info.value) == (
        "deep.json: the JSON is nested more than 64 levels deep, the limit (Limits.max_json_depth)"
    )
    records = b'{"qid": "q1", "docid": "d1", "score": 1.5}\n{"qid": "q1", "docid": ' + deep + b"}\n"
    with pytest.raises(RejectedRowsError) as info:
        read(records, display_name="deep.jsonl", limits=Limits(max_line_bytes=4 * MiB))
    assert str(info.value) == (
        "deep.jsonl:2: the JSON is nested more than 64 levels deep, the limit"
        " (Limits.max_json_depth)"
    )
    # brackets inside strings are text
    texts = b'{"q1": {"' + b"[" * 200 + b'": 1.5}}'
    assert read(texts, display_name="t.json").table.column("docid").to_pylist() == ["[" * 200]
    # a depth limit above Python's own: its RecursionError is caught, never escapes
    lax = Limits(max_json_depth=1_000_000, max_line_bytes=4 * MiB)
    with pytest.raises(FileFormatError) as info:
        read(b'{"q1": {"d1": ' + deep + b"}}", kind="run", display_name="deep.json", limits=lax)
    assert str(info.value) == "deep.json: the JSON is nested deeper than Python's parser allows"
    with pytest.raises(RejectedRowsError) as info:
        read(records, display_name="deep.jsonl", limits=lax)
    assert str(info.value) == "deep.jsonl:2: the JSON is nested deeper than Python's parser allows"
    small = Limits(max_json_depth=1)
    with pytest.raises(FileFormatError, match="nested more than 1 levels deep"):
        read(b'{"q1": {"d1": 1.5}}', display_name="d.json", limits=small)


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_json_document_over_its_limit_is_refused_before_parsing(gzipped):
    document = json.dumps({f"q{q}": {f"d{d}": d / 7 for d in range(100)} for q in range(50)})
    payload = document.encode()
    if gzipped:
        payload = gzip.compress(payload)
    limits = Limits(max_json_bytes=64 * 1024)
    with pytest.raises(FileFormatError) as info:
        read(payload, display_name="run.json", limits=limits)
    assert str(info.value) == (
        "run.json: the JSON document is over 64 KiB, the limit for a document parsed in memory"
        " (Limits.max_json_bytes): convert it to JSON Lines (one object per line), which has no"
        " such limit, or raise the limit"
    )
    assert read(payload).n_rows == 5000


# -- many queries, DuckDB's memory -----------------------------------------------------------
def test_duckdb_spills_into_a_private_folder_never_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = "".join(f"q{i % 5000} Q0 d{i} 1 {i}.5 t\n" for i in range(300_000)).encode()
    try:
        result = read(
            rows + b"q1 Q0 d1 2 0.5 t\n", drop_bad_rows=True, limits=Limits(memory_limit="8MB")
        )
        assert (result.n_rows, result.n_rejected) == (300_000, 1)
    except FileFormatError as exc:  # DuckDB could not stay under 8 MB, and says so
        assert str(exc) == (
            "<upload>: checking the file needs more memory than the 8MB DuckDB may use"
            " (Limits.memory_limit)"
        )
    assert list(tmp_path.iterdir()) == []


def _distinct_queries(path: Path, n: int) -> None:
    with open(path, "w") as handle:
        for start in range(0, n, 1_000_000):
            handle.write(
                "".join(f"q{k} Q0 d{k} 1 1.5 t\n" for k in range(start, min(n, start + 1_000_000)))
            )


@pytest.fixture(scope="module")
def million_queries(tmp_path_factory):
    path = tmp_path_factory.mktemp("queries") / "queries.trec"
    _distinct_queries(path, 1_000_000)
    return path


@pytest.mark.parametrize("action", ["read", "add"])
def test_a_million_distinct_queries_in_bounded_memory(million_queries, action):
    out = in_child(action, million_queries)
    assert out["rows"] == 1_000_000
    assert out["peak_mib"] < 500, out


@pytest.mark.slow
@pytest.mark.parametrize("action", ["read", "add"])
def test_ten_million_distinct_queries_in_bounded_memory(tmp_path, action):
    path = tmp_path / "queries.trec"
    _distinct_queries(path, 10_000_000)
    out = in_child(action, path)
    assert out["rows"] == 10_000_000
    assert out["peak_mib"] < PEAK_BOUND_MIB, out


def _with_header_fields(member: bytes, *, comment: bytes = b"", extra: bytes = b"") -> bytes:
    """``member`` (a gzip member without optional fields) with a comment and an extra field."""
    flags = (0x10 if comment else 0) | (0x04 if extra else 0)
    header = member[:3] + bytes([flags]) + member[4:10]
    if extra:
        header += len(extra).to_bytes(2, "little") + extra
    if comment:
        header += comment + b"\0"
    return header + member[10:]


@pytest.mark.parametrize("action", ["read", "add"])
def test_a_header_comment_does_not_count_as_compressed_payload(tmp_path, action):
    """12 MB of comment, which decompresses to nothing, then 1 GiB of one line repeated:
    against the whole file the ratio is about 73 (under 100), against the deflate payload it is
    in the hundreds."""
    line = b"q1 Q0 d1 1 1.5 t\n"
    member = gzip.compress(line * ((64 * MiB) // len(line)), compresslevel=9, mtime=0)
    rng = np.random.default_rng(0)
    comment = rng.integers(1, 256, 12 * 10**6, dtype=np.uint8).tobytes()  # no NUL inside
    path = tmp_path / "comment.trec.gz"
    with open(path, "wb") as handle:
        handle.write(_with_header_fields(member, comment=comment))
        for _ in range(15):  # 16 x 64 MiB = 1 GiB
            handle.write(member)
    assert 60 < 16 * 64 * MiB / path.stat().st_size < 100  # the whole file's ratio is under 100
    out = in_child(action, path, "run")
    assert out["error"].startswith(f"{path}: the file decompresses to more than 100 times its")
    assert out["error"].endswith("refused as a likely decompression bomb")
    assert out["peak_mib"] < 700, out


def test_the_gzip_header_length_covers_every_optional_field(tmp_path):
    from evalvalidity.io.ingest._source import Source

    member = gzip.compress(b"q1 0 d1 1\n", mtime=0)
    assert Source(member).header_bytes == 10
    extra, comment = b"\0x" * 1000, b"c" * 70_000  # the comment spans two read blocks
    fields = _with_header_fields(member, comment=comment, extra=extra)
    assert Source(fields).header_bytes == 10 + 2 + len(extra) + len(comment) + 1
    named = member[:3] + b"\x0a" + member[4:10] + b"name.trec\0" + b"\xab\xcd" + member[10:]
    assert Source(named).header_bytes == 10 + 10 + 2  # FNAME and FHCRC
    path = tmp_path / "q.gz"
    path.write_bytes(fields)
    assert Source(path).header_bytes == 10 + 2 + len(extra) + len(comment) + 1
    assert read(path, kind="qrels").n_rows == 1
