"""Other tools' exports read as runs: TREC RAG rerank requests and MTEB saved predictions.

*TREC RAG 2024 rerank requests* (what Anserini's ``-outputRerankerRequests`` writes and the
RAG track's rerankers read) are JSON Lines, one query per line::

    {"query": {"qid": "2024-145979", "text": "..."},
     "candidates": [{"docid": "msmarco_v2.1_doc_...", "score": 14.3, "doc": {...}}, ...]}

``query`` may also be the bare query ID (a string), and a qid may be an integer. Each
candidate becomes one run row (qid, docid, score); ``doc`` is ignored. A docid repeated in one
request, or a query repeated on a later line, is a rejected row. A row's ``line`` is the
line of its query, so every refusal names ``file:line`` (and the candidate's position).

*MTEB saved predictions* (a retrieval task's ``save_predictions``) are one JSON document: the
older layout is ranx-style ``{qid: {docid: score}}`` (read as such), the newer one nests it
under the subset and the split, beside the model's metadata::

    {"mteb_model_meta": {...}, "default": {"test": {"q1": {"d1": 0.83, ...}, ...}}}

:func:`predictions_of` finds the ``{qid: {docid: score}}`` inside; a file holding several
(subset, split) pairs is refused with their names.
"""

from __future__ import annotations

import json
import re
from typing import Final, TypeGuard

import duckdb
import numpy as np
import pyarrow as pa

from evalvalidity.core.types import Progress
from evalvalidity.errors import FileFormatError
from evalvalidity.io.ingest._detect import Detected
from evalvalidity.io.ingest._limits import exceeds_depth
from evalvalidity.io.ingest._records import _Object
from evalvalidity.io.ingest._sink import Sink
from evalvalidity.io.ingest._source import Source
from evalvalidity.io.ingest._spec import DOCID, QID, SCORE, Layout
from evalvalidity.io.ingest._text import iter_lines
from evalvalidity.io.ingest._validate import RejectLog, apply_row_checks, not_text, row_checks

__all__ = ["RERANK_LAYOUT", "is_rerank_request", "predictions_of", "read_rerank_requests"]

#: The kept fields of a rerank request's candidate.
RERANK_LAYOUT: Final = Layout("run", (QID, DOCID, SCORE), "query.qid candidates[].docid score")

#: The key beside the predictions in MTEB's newer files.
MTEB_META: Final = "mteb_model_meta"

# The start of a rerank request too long for the detection sample to parse.
_REQUEST_START: Final = re.compile(r'\s*\{\s*"(?:query|candidates)"\s*:')


def is_rerank_request(obj: object, first_line: str = "") -> bool:
    """True when ``obj`` (a parsed JSONL line) or, unparsed, ``first_line`` is a rerank request.

    >>> is_rerank_request({"query": {"qid": "1", "text": "t"}, "candidates": []})
    True
    >>> is_rerank_request({"qid": "1", "docid": "d1", "score": 1.0})
    False
    >>> is_rerank_request(None, '{"query": {"qid": "1", "text": "a very long li')
    True
    """
    if isinstance(obj, dict):
        return "query" in obj and isinstance(obj.get("candidates"), list)
    return obj is None and _REQUEST_START.match(first_line) is not None


def _qid_of(query: object) -> tuple[str | None, str | None]:
    """(qid, error) of a request's ``query``: a bare qid string or ``{"qid": ..., ...}``."""
    if isinstance(query, str):
        return query, not_text(query)
    if isinstance(query, dict):
        if "qid" not in query:
            return None, "the 'query' object has no 'qid'"
        query = query["qid"]
        if isinstance(query, str):
            return query, not_text(query)
    if isinstance(query, int) and not isinstance(query, bool):
        return str(query), None
    return None, (
        "expected 'query' to be a qid (a string) or an object with a string or integer 'qid', "
        f"found {json.dumps(query)[:50]}"
    )


def _docid_of(candidate: object, position: int) -> tuple[str | None, str | None]:
    where = f"candidate {position}"
    if not isinstance(candidate, dict):
        return None, f"{where} is not an object: {json.dumps(candidate)[:50]}"
    if "docid" not in candidate:
        return None, f"{where} has no 'docid'"
    docid = candidate["docid"]
    if isinstance(docid, str):
        error = not_text(docid)
        return docid, None if error is None else f"{where}: {error}"
    if isinstance(docid, int) and not isinstance(docid, bool):
        return str(docid), None
    return None, f"{where}: expected a string or integer 'docid', found {json.dumps(docid)[:50]}"


def _score_of(candidate: dict[str, object], position: int) -> tuple[str | None, str | None]:
    if "score" not in candidate:
        return None, f"candidate {position} has no 'score'"
    score = candidate["score"]
    if isinstance(score, bool) or not isinstance(score, int | float):
        return (
            None,
            f"candidate {position}: expected a numeric 'score', found {json.dumps(score)[:50]}",
        )
    return repr(score) if isinstance(score, float) else str(score), None


def _request_rows(text: str, max_depth: int) -> tuple[list[tuple[str | None, ...]], str | None]:
    """The (qid, docid, score, error) rows of one line, or no rows and the line's error."""
    if exceeds_depth(text, max_depth):
        return (
            [],
            f"the JSON is nested more than {max_depth} levels deep, the limit (Limits.max_json_depth)",
        )
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], f"invalid JSON ({exc.msg} at column {exc.colno})"
    except (ValueError, RecursionError) as exc:
        return [], f"invalid JSON ({exc})"
    if not isinstance(obj, dict):
        return [], f"expected a rerank request object, found {type(obj).__name__}"
    if "query" not in obj:
        return [], "the request has no 'query'"
    if not isinstance(obj.get("candidates"), list):
        return [], "expected 'candidates' to be a list of {docid, score, doc} objects"
    qid, qid_error = _qid_of(obj["query"])
    if qid_error is not None:
        return [], qid_error
    rows: list[tuple[str | None, ...]] = []
    first: dict[str, int] = {}
    for position, candidate in enumerate(obj["candidates"], start=1):
        docid, error = _docid_of(candidate, position)
        score = None
        if error is None and isinstance(candidate, dict):
            score, error = _score_of(candidate, position)
        if error is None and docid is not None:
            # checked here: the table's duplicate check tells rows apart by their line
            if docid in first:
                error = f"candidate {position}: duplicate docid {docid!r}, already candidate {first[docid]}"
            else:
                first[docid] = position
        rows.append((qid, docid, score, error))
    return rows, None


def read_rerank_requests(
    source: Source,
    det: Detected,
    sink: Sink,
    log: RejectLog,
    con: duckdb.DuckDBPyConnection,
    progress: Progress | None,
) -> int:
    """Read TREC RAG rerank requests (JSONL) into run rows; returns 0 (nothing is skipped)."""
    layout = det.layout
    checks = row_checks(layout)
    max_depth = source.limits.max_json_depth
    total = max(source.size, 1)
    seen: dict[str, int] = {}  # qid -> its line
    for number, lines in iter_lines(source):
        line_numbers: list[int] = []
        raws: list[str | None] = []
        columns: list[list[str | None]] = [[], [], []]
        errors: list[str | None] = []
        for offset, raw in enumerate(lines):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                rows: list[tuple[str | None, ...]] = []
                error: str | None = (
                    f"invalid UTF-8: the byte 0x{raw[exc.start]:02x} at byte offset {exc.start}"
                    " of the line is not valid UTF-8 text"
                )
                text = raw.decode("utf-8", errors="replace")
            else:
                if not text.strip():
                    continue
                rows, error = _request_rows(text, max_depth)
                qid = rows[0][0] if rows else None
                if qid is not None and qid in seen:
                    rows, error = (
                        [],
                        f"the query {qid!r} already has its candidates on line {seen[qid]}",
                    )
                elif qid is not None:
                    seen[qid] = number + offset
            shown = text[:200]
            if error is not None or not rows:
                if error is None:
                    continue  # a query without candidates retrieves nothing: no row
                rows = [(None, None, None, error)]
            for row in rows:
                line_numbers.append(number + offset)
                raws.append(shown)
                for i in range(3):
                    columns[i].append(row[i])
                errors.append(row[3])
        if not line_numbers:
            continue
        n = len(line_numbers)
        table = pa.table(
            {
                "line": pa.array(line_numbers, pa.int64()),
                "l": pa.array(raws, pa.string()),
                "err": pa.array(errors, pa.string()),
                "n": pa.array(np.full(n, layout.n_fields, dtype=np.int64)),
                **{f"c{i}": pa.array(columns[i], pa.string()) for i in range(3)},
            }
        )
        kept, _ = apply_row_checks(con, checks, layout, table, log)
        sink.write(kept)
        if progress is not None:
            progress(min(0.9, 0.9 * source.raw_position() / total), "reading")
    return 0


# -- MTEB ------------------------------------------------------------------------------------
def _is_object(value: object) -> TypeGuard[_Object]:
    # the JSON document reader parses objects as lists of (key, value) pairs
    return isinstance(value, _Object)


def _is_run_document(value: object) -> bool:
    """``{qid: {docid: number}}``: every value an object of non-objects."""
    return _is_object(value) and all(
        _is_object(ranking) and not any(_is_object(v) for _, v in ranking) for _, ranking in value
    )


def predictions_of(document: object, source: Source) -> object:
    """The ``{qid: {docid: score}}`` of an MTEB predictions document, else ``document``.

    A document that already is ``{qid: {docid: score}}`` is returned as it is; one with
    ``mteb_model_meta`` or nested under ``{subset: {split: ...}}`` gives its one run.
    """
    if not _is_object(document):
        return document
    pairs = [(key, value) for key, value in document if key != MTEB_META]
    has_meta = len(pairs) < len(document)
    if not has_meta and _is_run_document(document):
        return document
    found: list[tuple[str, object]] = []
    for subset, splits in pairs:
        if _is_run_document(splits):
            found.append((subset, splits))
        elif _is_object(splits):
            for split, ranking in splits:
                if _is_run_document(ranking):
                    found.append((f"{subset}/{split}", ranking))
    if len(found) == 1:
        return found[0][1]
    if not found:
        if not has_meta:
            return document  # not MTEB's: the JSON reader says what is wrong
        raise FileFormatError(
            source.name,
            None,
            "this MTEB predictions file holds no {qid: {docid: score}} under a subset and a "
            'split (expected {"mteb_model_meta": ..., subset: {split: {qid: {docid: score}}}})',
        )
    names = ", ".join(name for name, _ in found)
    raise FileFormatError(
        source.name,
        None,
        f"this MTEB predictions file holds {len(found)} runs ({names}); cannot tell which "
        "one to read: save one subset and split per file",
    )
