"""Recognise a file's format and kind from its first lines.

Detection looks at the content, never at the file name. When the content fits more than one
kind (a two-column file without a header could be pool sizes, candidates or a units map) it
raises and asks for ``kind=`` (``--kind``) instead of guessing. An explicit kind that the content
plainly contradicts (qrels given as a run) is an error that names what the file looks like.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from dataclasses import dataclass

from evalvalidity.errors import FileFormatError, ParameterError
from evalvalidity.io.ingest._limits import exceeds_depth
from evalvalidity.io.ingest._source import BOM, PARQUET_MAGIC, Source, SourceLike
from evalvalidity.io.ingest._spec import (
    ALIASES,
    CANONICAL_FIELDS,
    FORMATS,
    KIND_NOUNS,
    KINDS,
    TREC_LAYOUTS,
    Field,
    Layout,
    matches,
    normalise_name,
)

SAMPLE_BYTES = 1 << 18
SAMPLE_LINES = 200

_FLOAT = re.compile(
    # "[0-9]+(?:\.[0-9]*)?", not "[0-9]+\.?[0-9]*": the latter splits a run of digits in
    # every way before failing, quadratic time (64 KB of digits took a minute)
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:nan|inf|infinity)"
)
_INT = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_LINE_BREAK = re.compile(r"\r\n|\n|\r")
# trec_eval's measure names (`trec_eval -q` prints `measure<TAB>qid<TAB>value`).
# compiled on first use (re caches it): only a file of three fields is matched against it
_TREC_EVAL_MEASURE = (
    r"(?:runid|num_q|num_ret|num_rel|num_rel_ret|map|gm_map|Rprec|bpref|recip_rank|infAP"
    r"|gm_bpref|utility|11pt_avg|binG|G|Rndcg|relstring|iprec_at_recall_[0-9.]+"
    r"|P_[0-9]+|recall_[0-9]+|ndcg|ndcg_cut_[0-9]+|ndcg_rel|map_cut_[0-9]+|success_[0-9]+"
    r"|Rprec_mult_[0-9.]+|set_[A-Za-z_]+|P_avgjg|[A-Za-z_]+_cut_[0-9]+)"
)

TREC_DESCRIPTIONS = {
    "run": "a TREC run (6 fields: qid Q0 docid rank score tag)",
    "qrels": "TREC qrels (4 fields: qid iter docid rel)",
    "harness": "trec_eval -q output (3 fields: measure qid value)",
}


@dataclass(frozen=True)
class Detected:
    """What a file is and how to read it.

    ``layout`` gives the kept fields by position (text) or, with ``keys``, by column name or
    JSON key (records). ``delimiter`` is None for runs of whitespace. ``header_line`` is the
    1-based line of the header, 0 without one.
    """

    format: str
    kind: str
    layout: Layout
    delimiter: str | None = None
    header_line: int = 0
    keys: tuple[str | None, ...] = ()


def is_number(text: str) -> bool:
    """True when ``text`` is a number as the readers accept it.

    >>> is_number("1e-3"), is_number("nan"), is_number("1_000")
    (True, True, False)
    """
    return _FLOAT.fullmatch(text) is not None


def _is_int(text: str) -> bool:
    return _INT.fullmatch(text) is not None


def wide_encoding(head: bytes) -> str | None:
    """``UTF-16`` or ``UTF-32`` (with the byte order) when ``head`` looks like it, else None.

    A byte-order mark says so; without one, text in the ASCII range has a NUL beside every
    character: in every other byte (UTF-16) or three bytes of every four (UTF-32).

    >>> text = "q1 0 d1 1" + chr(10)
    >>> wide_encoding(text.encode("utf-16")), wide_encoding(text.encode("utf-16-be"))
    ('UTF-16 (little-endian)', 'UTF-16 (big-endian)')
    >>> wide_encoding(text.encode("utf-32")), wide_encoding(text.encode("utf-8"))
    ('UTF-32 (little-endian)', None)
    """
    for bom, name in (
        (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
        (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
        (b"\xff\xfe", "UTF-16 (little-endian)"),
        (b"\xfe\xff", "UTF-16 (big-endian)"),
    ):
        if head.startswith(bom):
            return name
    sample = head[:4096]
    if len(sample) < 8 or sample.count(0) < len(sample) // 3:
        return None
    quads = len(sample) // 4
    # the characters' own bytes are rarely NUL: a run of zero bytes is no text at all
    if sample[1::4].count(0) == sample[2::4].count(0) == sample[3::4].count(0) == quads:
        if sample[0::4].count(0) < 0.1 * quads:
            return "UTF-32 (little-endian)"
    if sample[0::4].count(0) == sample[1::4].count(0) == sample[2::4].count(0) == quads:
        if sample[3::4].count(0) < 0.1 * quads:
            return "UTF-32 (big-endian)"
    pairs = len(sample) // 2
    if sample[1::2].count(0) >= 0.9 * pairs and sample[0::2].count(0) < 0.1 * pairs:
        return "UTF-16 (little-endian)"
    if sample[0::2].count(0) >= 0.9 * pairs and sample[1::2].count(0) < 0.1 * pairs:
        return "UTF-16 (big-endian)"
    return None


_BLANK = re.compile(rb"[ \t\r\n\f\v]*")


def _line_breaks(blank: bytes) -> int:
    r"""How many line breaks (``\r\n``, ``\n`` or ``\r``) ``blank`` holds.

    >>> _line_breaks(b"\n\r\n\r \n")
    4
    """
    if b"\r" not in blank:  # the usual case, and counting one byte is fast
        return blank.count(b"\n")
    return blank.count(b"\n") + blank.count(b"\r") - blank.count(b"\r\n")


def _skip_blank_lines(source: Source) -> tuple[int, bytes]:
    """Skip the blank lines that fill the file's first :data:`SAMPLE_BYTES`, and beyond.

    Returns how many lines were skipped and up to :data:`SAMPLE_BYTES` from the first line
    that holds something (empty if nothing does). The decompressed stream is read once, in
    1 MiB chunks, so the cost is bounded by ``Limits.max_text_bytes`` (and, for gzip, by
    ``Limits.max_compression_ratio``) like any read of the file: blank lines are never a
    reason to refuse a file within the limits.
    """
    skipped = 0
    carried_cr = False  # a chunk ended in "\r": a "\n" next ends the same line
    with contextlib.closing(source.open_stream()) as stream:
        while chunk := bytes(stream.read(1 << 20)):
            if carried_cr and chunk.startswith(b"\n"):
                chunk = chunk[1:]
                skipped -= 1  # counted with the "\r"
            blank = _BLANK.match(chunk)
            end = blank.end() if blank is not None else 0
            if end < len(chunk):
                start = max(chunk.rfind(b"\n", 0, end), chunk.rfind(b"\r", 0, end)) + 1
                skipped += _line_breaks(chunk[:start])
                head = chunk[start:]
                while len(head) < SAMPLE_BYTES and (more := bytes(stream.read(1 << 20))):
                    head += more
                return skipped, head[:SAMPLE_BYTES]
            skipped += _line_breaks(chunk)
            carried_cr = chunk.endswith(b"\r")
    return skipped, b""


#: How many lines :func:`sample_lines` splits off first.
_FIRST_SPLIT = 2 * SAMPLE_LINES


def _numbered(lines: list[str], offset: int) -> list[tuple[int, str]]:
    """The lines that hold data, with their 1-based numbers (``offset`` lines before them)."""
    return [
        (offset + i + 1, text)
        for i, text in enumerate(lines)
        if text.strip() and not text.lstrip().startswith("#")  # trec_eval's comments
    ]


def sample_lines(source: Source) -> list[tuple[int, str]]:
    """The first non-blank lines, with their 1-based numbers, decoded leniently.

    Leading blank lines are skipped however many there are (see :func:`_skip_blank_lines`).
    """
    head = source.head(SAMPLE_BYTES)
    truncated = len(head) == SAMPLE_BYTES
    wide = wide_encoding(head)
    if wide is not None:
        raise FileFormatError(
            source.name, None, f"the file looks like {wide} text; save it as UTF-8"
        )
    if head.startswith(BOM):
        head = head[len(BOM) :]
    if not head:
        raise FileFormatError(source.name, None, "the file is empty")
    offset = 0
    if truncated and _BLANK.fullmatch(head) is not None:
        offset, head = _skip_blank_lines(source)
        truncated = len(head) == SAMPLE_BYTES
    text = head.decode("utf-8", errors="replace")
    # The sample holds thousands of lines of a run and SAMPLE_LINES are kept: split off the
    # first few hundred, every one of them whole (a remainder follows), and split the rest
    # only when blank or comment lines among them leave fewer than SAMPLE_LINES.
    lines = _LINE_BREAK.split(text, maxsplit=_FIRST_SPLIT)
    if len(lines) > _FIRST_SPLIT:
        numbered = _numbered(lines[:_FIRST_SPLIT], offset)
        if len(numbered) >= SAMPLE_LINES:
            return numbered[:SAMPLE_LINES]
        lines = _LINE_BREAK.split(text)
    if truncated and len(lines) > 1:
        lines = lines[:-1]
    numbered = _numbered(lines, offset)
    if not numbered:
        raise FileFormatError(source.name, None, "the file holds only blank lines, no data")
    return numbered[:SAMPLE_LINES]


def _ambiguous(source: Source, what: str) -> FileFormatError:
    return FileFormatError(
        source.name,
        None,
        f"{what}; cannot tell which kind of dataset this is without guessing: "
        f"pass kind= (--kind) with one of {', '.join(KINDS)}",
    )


def _contradiction(source: Source, looks_like: str, kind: str) -> FileFormatError:
    return FileFormatError(
        source.name, None, f"this looks like {looks_like}, not {KIND_NOUNS[kind]}"
    )


def detect(source: Source, kind: str | None = None, fmt: str | None = None) -> Detected:
    """Recognise ``source``'s format and kind; ``kind``/``fmt`` override detection."""
    if kind is not None and kind not in KINDS:
        raise ParameterError(f"Unknown dataset kind {kind!r}; expected one of {', '.join(KINDS)}.")
    if fmt is not None and fmt not in FORMATS:
        raise ParameterError(f"Unknown format {fmt!r}; expected one of {', '.join(FORMATS)}.")
    if source.size == 0:
        raise FileFormatError(source.name, None, "the file is empty")
    magic = source.head(4)
    if fmt == "parquet" or (fmt is None and magic == PARQUET_MAGIC):
        return _detect_parquet(source, kind)
    lines = sample_lines(source)
    first = lines[0][1].lstrip()
    if fmt in ("json", "jsonl", "trec_rag", "mteb") or (fmt is None and first[:1] in ("{", "[")):
        return _detect_json(source, lines, kind, fmt)
    return _detect_text(source, lines, kind, fmt)


# -- text ------------------------------------------------------------------------------------
def _split(text: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return text.split()
    return [cell.strip() for cell in text.split(delimiter)]


def _looks_like_header(cells: list[str]) -> bool:
    if not cells or any(not c or is_number(c) for c in cells):
        return False
    known = {name for names in _ALL_ALIASES for name in names}
    return any(normalise_name(c) in known for c in cells)


def _detect_text(
    source: Source, lines: list[tuple[int, str]], kind: str | None, fmt: str | None
) -> Detected:
    first_no, first = lines[0]
    if fmt == "trec_eval":
        return _trec_eval(source, kind)
    forced = {"csv": ",", "tsv": "\t", "trec": None}
    candidates: list[str | None]
    if fmt in forced:
        candidates = [forced[fmt]]
    else:
        candidates = [d for d in ("\t", ",") if d in first] + [None]
    for delimiter in candidates:
        cells = _split(first, delimiter)
        if _looks_like_header(cells):
            if fmt is None:
                fmt = {"\t": "tsv", ",": "csv", None: "trec"}[delimiter]
            data = [_split(text, delimiter) for _, text in lines[1:]]
            return _from_header(
                source, fmt, kind, cells, data, delimiter=delimiter, header_line=first_no
            )
    if fmt in ("csv", "tsv"):
        return _headerless_delimited(source, lines, kind, fmt, forced[fmt] or ",")
    mode, split = _field_count_mode(lines, None)
    share = sum(len(cells) == mode for cells in split) / len(split)
    trec_shaped = (mode in (3, 4) or mode >= 6) and share >= 0.9
    if fmt == "trec" or trec_shaped or "\t" in first or "," not in first:
        # headerless whitespace-separated (a tab-separated file without a header included)
        return _headerless_whitespace(source, lines, kind, fmt or "trec")
    return _headerless_delimited(source, lines, kind, "csv", ",")


def _field_count_mode(
    lines: list[tuple[int, str]], delimiter: str | None
) -> tuple[int, list[list[str]]]:
    split = [_split(text, delimiter) for _, text in lines]
    counts = Counter(len(cells) for cells in split)
    return counts.most_common(1)[0][0], split


def _is_trec_eval(split: list[list[str]]) -> bool:
    if not split or any(len(cells) != 3 for cells in split[: min(len(split), 20)]):
        return False
    measures = sum(
        re.fullmatch(_TREC_EVAL_MEASURE, cells[0]) is not None for cells in split if len(cells) == 3
    )
    return measures * 2 >= len(split) and any(len(c) == 3 and is_number(c[2]) for c in split)


def _trec_eval(source: Source, kind: str | None) -> Detected:
    if kind not in (None, "harness"):
        raise _contradiction(source, TREC_DESCRIPTIONS["harness"], kind)
    return Detected("trec_eval", "harness", TREC_LAYOUTS["harness"])


def _headerless_whitespace(
    source: Source, lines: list[tuple[int, str]], kind: str | None, fmt: str
) -> Detected:
    mode, split = _field_count_mode(lines, None)
    if fmt == "trec_eval" or (fmt == "trec" and mode == 3 and _is_trec_eval(split)):
        return _trec_eval(source, kind)
    looks: str | None = None
    guessed: str | None = None
    if mode >= 6:  # trec_eval ignores the fields after a run's tag
        guessed, looks = "run", TREC_DESCRIPTIONS["run"]
    elif mode == 4:
        guessed, looks = "qrels", TREC_DESCRIPTIONS["qrels"]
    elif mode == 1 and len(lines) == 1 and _is_int(split[0][0]):
        guessed, looks = "corpus-size", "a corpus size (a single integer)"
    if kind is None:
        if guessed is None:
            raise _ambiguous(
                source,
                f"the lines hold {mode} whitespace-separated field{'s' if mode != 1 else ''}"
                " and no header",
            )
        kind = guessed
    elif guessed is not None and guessed != kind and looks is not None:
        if not (guessed == "corpus-size" and kind in ("pools",)):
            raise _contradiction(source, looks, kind)
    return Detected(fmt, kind, TREC_LAYOUTS[kind])


def _headerless_delimited(
    source: Source, lines: list[tuple[int, str]], kind: str | None, fmt: str, delimiter: str
) -> Detected:
    mode, split = _field_count_mode(lines, delimiter)
    if kind is None:
        if mode == 3 and all(len(c) == 3 and _is_int(c[0]) and is_number(c[2]) for c in split):
            kind = "harness"
            fields: tuple[Field | None, ...] = (
                Field("seed", "int", "seed"),
                CANONICAL_FIELDS["harness"][0],
                CANONICAL_FIELDS["harness"][1],
            )
            return Detected(fmt, kind, Layout(kind, fields, "seed qid value"), delimiter)
        raise _ambiguous(source, f"the lines hold {mode} {fmt.upper()} fields and no header")
    canonical = CANONICAL_FIELDS[kind]
    if kind == "harness" and mode == 3:
        canonical = (Field("seed", "int", "seed"), *canonical)
    description = " ".join(f.name for f in canonical)
    return Detected(fmt, kind, Layout(kind, canonical, description), delimiter)


# -- header mapping (text headers, JSON keys, Parquet columns) ---------------------------------
_ALL_ALIASES: tuple[tuple[str, ...], ...] = tuple(ALIASES.values())

_KIND_COLUMNS: dict[str, tuple[tuple[str, bool], ...]] = {
    # kind -> (column, required)
    "run": (("qid", True), ("docid", True), ("rank", False), ("score", True)),
    "qrels": (("qid", True), ("docid", True), ("rel", True)),
    "pools": (("qid", True), ("pool_size", True)),
    "candidates": (("qid", True), ("docid", True)),
    "units": (("chunk_id", True), ("doc_id", True)),
    "corpus-size": (("corpus_size", True),),
    "harness": (("seed", False), ("qid", True), ("measure", False), ("value", True)),
}
_FIELDS = {
    f.name: f for layout in TREC_LAYOUTS.values() for f in layout.fields if f is not None
} | {"seed": Field("seed", "int", "seed")}


def _find(cells: list[str], column: str, taken: set[int]) -> int | None:
    for i, cell in enumerate(cells):
        if i not in taken and matches(cell, column):
            return i
    return None


def _map_columns(source: Source, cells: list[str], kind: str) -> dict[str, int] | None:
    """Column -> position for ``kind``, or None when a required column is missing.

    Two cells naming the same column (``score`` and ``Score``, ``qid`` and ``query_id``) are
    an error: which one holds the values cannot be told.
    """
    taken: set[int] = set()
    found: dict[str, int] = {}
    for column, required in _KIND_COLUMNS[kind]:
        aliases = [column]
        if kind in ("run", "candidates") and column == "docid":
            aliases.append("chunk_id")  # a run over chunks
        if kind == "qrels" and column == "rel":
            aliases.append("score")  # BEIR: query-id corpus-id score
        position = None
        for alias in aliases:
            position = _find(cells, alias, taken)
            if position is not None:
                twin = _find(cells, alias, taken | {position})
                if twin is not None:
                    raise FileFormatError(
                        source.name,
                        None,
                        f"the header names two {alias} columns, {cells[position]!r} (column "
                        f"{position + 1}) and {cells[twin]!r} (column {twin + 1}); rename or "
                        "drop one",
                    )
                break
        if position is None:
            if required:
                return None
            continue
        taken.add(position)
        found[column] = position
    return found


def _guess_kind_from_header(source: Source, cells: list[str], data: list[list[str]]) -> str:
    def has(column: str) -> bool:
        return any(matches(c, column) for c in cells)

    qid = has("qid")
    doc = has("docid") or (has("chunk_id") and qid)
    if qid and doc:
        if has("rel") and not has("rank"):
            return "qrels"
        if has("rank"):
            return "run"
        if has("score"):
            position = next(i for i, c in enumerate(cells) if matches(c, "score"))
            values = [row[position] for row in data if len(row) > position]
            if any(is_number(v) and not _is_int(v) for v in values):
                return "run"
            if (
                values
                and all(_is_int(v) for v in values)
                and any(normalise_name(c) == "corpusid" for c in cells)
            ):
                return "qrels"  # BEIR: query-id corpus-id score, integer grades
            raise _ambiguous(
                source,
                f"the header ({' '.join(cells)}) fits both a run and qrels and the "
                f"'{cells[position]}' values are all integers",
            )
        return "candidates"
    if has("chunk_id") and has("doc_id") and not qid:
        return "units"
    if qid and has("pool_size"):
        return "pools"
    if qid and (has("value") or has("measure")):
        return "harness"
    if len(cells) == 1 and has("corpus_size"):
        return "corpus-size"
    raise _ambiguous(source, f"the header ({' '.join(cells)}) names no known set of columns")


def _from_header(
    source: Source,
    fmt: str,
    kind: str | None,
    cells: list[str],
    data: list[list[str]],
    *,
    delimiter: str | None = None,
    header_line: int = 0,
) -> Detected:
    guessed: str | None
    try:
        guessed = _guess_kind_from_header(source, cells, data)
    except FileFormatError:
        if kind is None:
            raise
        guessed = None
    if kind is None:
        if guessed is None:  # unreachable: a failed guess re-raised above
            raise _ambiguous(source, f"the header ({' '.join(cells)}) is not recognised")
        kind = guessed
    mapping = _map_columns(source, cells, kind)
    if mapping is None:
        if guessed is not None and guessed != kind:
            raise _contradiction(
                source, f"{KIND_NOUNS[guessed]} (columns: {', '.join(cells)})", kind
            )
        required = [column for column, needed in _KIND_COLUMNS[kind] if needed]
        raise FileFormatError(
            source.name,
            header_line or None,
            f"expected the columns {', '.join(required)} (or their usual names) for "
            f"{KIND_NOUNS[kind]}, found: {', '.join(cells)}",
        )
    by_position = {position: column for column, position in mapping.items()}
    fields = tuple(_FIELDS[by_position[i]] if i in by_position else None for i in range(len(cells)))
    description = " ".join(cells)
    layout = Layout(kind, fields, description, header=True)
    return Detected(fmt, kind, layout, delimiter, header_line, tuple(cells))


# -- records ---------------------------------------------------------------------------------
def _detect_parquet(source: Source, kind: str | None) -> Detected:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if source.compression is None and source.path is not None:
            parquet = pq.ParquetFile(pa.OSFile(os.fsencode(source.path)))
            schema = parquet.schema_arrow
            sample = parquet.iter_batches(batch_size=50)
        else:
            buffer = pa.BufferReader(source.read_all())
            parquet = pq.ParquetFile(buffer)
            schema = parquet.schema_arrow
            sample = parquet.iter_batches(batch_size=50)
        first = next(iter(sample), None)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise FileFormatError(source.name, None, f"the file is not valid Parquet ({exc})") from exc
    cells = list(schema.names)
    rows = (
        []
        if first is None
        else [[("" if v is None else str(v)) for v in row.values()] for row in first.to_pylist()]
    )
    return _from_header(source, "parquet", kind, cells, rows)


def _loads_or_none(text: str, max_depth: int) -> object:
    """``json.loads(text)``, or None when it is not JSON or nests deeper than ``max_depth``."""
    import json  # here, not at the top: only a file that looks like JSON is parsed as JSON

    if exceeds_depth(text, max_depth):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # ValueError: bad JSON, or an int of 4300+ digits
        return None


def _detect_json(
    source: Source, lines: list[tuple[int, str]], kind: str | None, fmt: str | None
) -> Detected:
    first_no, first = lines[0]
    max_depth = source.limits.max_json_depth
    obj = _loads_or_none(first, max_depth)
    exported = _detect_export(source, lines, obj, kind, fmt)
    if exported is not None:
        return exported
    if fmt == "jsonl" or (
        fmt is None
        and isinstance(obj, dict)
        and obj
        and not all(isinstance(v, dict) for v in obj.values())
    ):
        if not isinstance(obj, dict):
            raise FileFormatError(
                source.name, first_no, "expected a JSON object on each line (JSONL)", first
            )
        cells = list(obj)
        rows: list[list[str]] = []
        for _, text in lines:
            row = _loads_or_none(text, max_depth)
            if isinstance(row, dict):
                rows.append([str(row.get(c, "")) for c in cells])
        return _from_header(source, "jsonl", kind, cells, rows)
    # a JSON document: ranx-style {qid: {docid: value}}
    if kind not in (None, "run", "qrels"):
        raise FileFormatError(
            source.name,
            None,
            "a JSON document {qid: {docid: value}} holds a run or qrels, "
            f"not {KIND_NOUNS[kind]}",
        )
    return Detected("json", kind or "?", TREC_LAYOUTS[kind or "run"])


def _detect_export(
    source: Source, lines: list[tuple[int, str]], obj: object, kind: str | None, fmt: str | None
) -> Detected | None:
    """TREC RAG rerank requests or MTEB predictions (both runs), else None."""
    from evalvalidity.io.ingest._exports import MTEB_META, RERANK_LAYOUT, is_rerank_request

    found: tuple[str, str] | None = None
    if fmt == "trec_rag" or (fmt is None and is_rerank_request(obj, lines[0][1])):
        found = ("trec_rag", "TREC RAG rerank requests (query, candidates)")
    elif fmt == "mteb" or (fmt is None and any(f'"{MTEB_META}"' in text for _, text in lines)):
        found = ("mteb", "MTEB saved predictions ({qid: {docid: score}})")
    if found is None:
        return None
    if kind not in (None, "run"):
        raise _contradiction(source, found[1], kind)
    if found[0] == "trec_rag":
        return Detected("trec_rag", "run", RERANK_LAYOUT)
    return Detected("mteb", "run", TREC_LAYOUTS["run"])


def header_mapping(det: Detected) -> str | None:
    r"""How a header was read: ``"qid ← query_id, docid ← doc_id, score ← score"``.

    None for a file without a header (its columns are positional).

    >>> from evalvalidity.io.ingest._source import Source
    >>> det = detect(Source(b"query_id,doc_id,Score\nq1,d1,0.5\n", "run.csv"))
    >>> header_mapping(det)
    'qid ← query_id, docid ← doc_id, score ← Score'
    """
    if not det.layout.header or not det.keys:
        return None
    pairs = [
        f"{field.name} ← {key}"
        for field, key in zip(det.layout.fields, det.keys, strict=True)
        if field is not None and key is not None
    ]
    ignored = [key for field, key in zip(det.layout.fields, det.keys, strict=True) if field is None]
    text = ", ".join(pairs)
    if ignored:
        text += f" (ignored: {', '.join(str(k) for k in ignored)})"
    return text


def mapped_header(
    source: SourceLike, *, kind: str | None = None, display_name: str | None = None
) -> str | None:
    r""":func:`header_mapping` of a file: how its header's columns were read, or None.

    None also when the file cannot be recognised (reading it says why).

    >>> mapped_header(b"query_id\tdoc_id\tscore\nq1\td1\t0.5\n")
    'qid ← query_id, docid ← doc_id, score ← score'
    """
    try:
        return header_mapping(detect(Source(source, display_name), kind))
    except (FileFormatError, ParameterError):
        return None
