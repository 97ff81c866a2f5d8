"""What each kind of dataset holds, and how its columns are usually spelled.

A *layout* says, field by field, what a line of a file holds: for a TREC run the six fields
``qid Q0 docid rank score tag``, of which four are kept. Layouts drive both the parsers and the
messages ("expected 6 fields (qid Q0 docid rank score tag), got 5").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import pyarrow as pa

from evalvalidity.io.tables import KIND_SCHEMAS

#: A corpus size: one row, the number of items in the collection.
CORPUS_SIZE_SCHEMA: Final = pa.schema([("corpus_size", pa.int64()), ("line", pa.int64())])

#: Every dataset kind, in the order the command line lists them.
KINDS: Final[tuple[str, ...]] = (
    "run",
    "qrels",
    "pools",
    "units",
    "candidates",
    "corpus-size",
    "harness",
)

#: Every format a reader understands (gzip compression is detected separately).
FORMATS: Final[tuple[str, ...]] = (
    "trec",
    "trec_eval",
    "csv",
    "tsv",
    "jsonl",
    "json",
    "parquet",
    "trec_rag",  # TREC RAG 2024 rerank requests (JSONL), read as a run
    "mteb",  # MTEB's saved retrieval predictions (JSON), read as a run
)

SCHEMAS: Final[dict[str, pa.Schema]] = {**KIND_SCHEMAS, "corpus-size": CORPUS_SIZE_SCHEMA}

#: How a message names a kind: "..., not a run".
KIND_NOUNS: Final[dict[str, str]] = {
    "run": "a run",
    "qrels": "qrels",
    "pools": "per-query pool sizes",
    "units": "a units map",
    "candidates": "per-query candidate lists",
    "corpus-size": "a corpus size",
    "harness": "harness output",
}


@dataclass(frozen=True)
class Field:
    """One kept field of a layout.

    ``type`` is ``id`` (a non-empty string), ``float`` (a finite number), ``int`` (an integer)
    or ``posint`` (an integer >= 1); ``label`` names it in messages ("expected a numeric score").
    """

    name: str
    type: str
    label: str


@dataclass(frozen=True)
class Layout:
    """The fields of one line: ``fields[i]`` is the i-th field, None when it is not kept."""

    kind: str
    fields: tuple[Field | None, ...]
    description: str
    header: bool = False
    skip_all_rows: bool = False  # trec_eval: lines whose qid is "all" are summaries
    #: trec_eval reads a run line's first six fields and ignores the rest: so may a line here.
    extra_fields: bool = False

    @property
    def n_fields(self) -> int:
        """How many fields each line must have."""
        return len(self.fields)


QID = Field("qid", "id", "query ID")
DOCID = Field("docid", "id", "document ID")
SCORE = Field("score", "float", "score")
RANK = Field("rank", "int", "rank")
REL = Field("rel", "int", "relevance grade")
POOL_SIZE = Field("pool_size", "posint", "pool size")
CHUNK_ID = Field("chunk_id", "id", "chunk ID")
DOC_ID = Field("doc_id", "id", "document ID")
MEASURE = Field("measure", "id", "measure name")
VALUE = Field("value", "float", "value")
SEED = Field("seed", "int", "seed")
CORPUS_SIZE = Field("corpus_size", "posint", "corpus size")

#: The headerless whitespace-separated layouts ("trec" format), by kind.
TREC_LAYOUTS: Final[dict[str, Layout]] = {
    "run": Layout(
        "run",
        (QID, None, DOCID, RANK, SCORE, None),
        "qid Q0 docid rank score tag",
        extra_fields=True,
    ),
    "qrels": Layout("qrels", (QID, None, DOCID, REL), "qid iter docid rel"),
    "pools": Layout("pools", (QID, POOL_SIZE), "qid pool_size"),
    "candidates": Layout("candidates", (QID, DOCID), "qid docid"),
    "units": Layout("units", (CHUNK_ID, DOC_ID), "chunk_id doc_id"),
    "corpus-size": Layout("corpus-size", (CORPUS_SIZE,), "corpus_size"),
    "harness": Layout("harness", (MEASURE, QID, VALUE), "measure qid value", skip_all_rows=True),
}

#: The canonical column order of a headerless CSV/TSV/whitespace file, by kind.
CANONICAL_FIELDS: Final[dict[str, tuple[Field, ...]]] = {
    "run": (QID, DOCID, SCORE),
    "qrels": (QID, DOCID, REL),
    "pools": (QID, POOL_SIZE),
    "candidates": (QID, DOCID),
    "units": (CHUNK_ID, DOC_ID),
    "corpus-size": (CORPUS_SIZE,),
    "harness": (QID, VALUE),
}

#: Usual spellings of each column, normalised by :func:`normalise_name`.
ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "qid": ("qid", "queryid", "query", "topic", "topicid", "qno"),
    "docid": ("docid", "corpusid", "pid", "passageid", "documentid", "doc", "did", "docno"),
    "chunk_id": ("chunkid", "chunk", "passageid", "unitid"),
    "doc_id": ("docid", "documentid", "doc", "parentid", "corpusid", "docno"),
    "score": ("score", "sim", "similarity", "retrievalscore"),
    "rank": ("rank", "position", "pos"),
    "rel": ("rel", "relevance", "label", "grade", "judgement", "judgment", "gain"),
    "pool_size": ("poolsize", "pool", "ncandidates", "numcandidates", "size"),
    "measure": ("measure", "metric"),
    "value": ("value", "score", "result"),
    "seed": ("seed",),
    "corpus_size": ("corpussize", "size", "n", "ndocs", "numdocs"),
}

_NON_ALNUM = re.compile(r"[^a-z0-9]")


def normalise_name(name: str) -> str:
    """Lower-case a column name and drop everything but letters and digits.

    >>> normalise_name(" Query-ID ")
    'queryid'
    """
    return _NON_ALNUM.sub("", name.strip().lower())


def matches(name: str, column: str) -> bool:
    """True when ``name`` (a header cell) is a usual spelling of ``column``.

    >>> matches("corpus-id", "docid"), matches("score", "rel")
    (True, False)
    """
    return normalise_name(name) in ALIASES[column]


FLOAT_PATTERN: Final = (
    # "[0-9]+(?:\.[0-9]*)?", not "[0-9]+\.?[0-9]*": the latter splits a run of digits in
    # every way before failing, quadratic time (64 KB of digits took a minute)
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:nan|inf|infinity)"
)
INT_PATTERN: Final = r"[+-]?[0-9]+(?:\.0*)?"
