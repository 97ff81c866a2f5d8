"""Resource limits of a read: how much a file may make the reader hold, decode or recurse.

Every limit is checked while the bytes stream in, before the memory is spent: a gzip bomb is
stopped after the first megabytes that give it away, never decompressed whole first. Each
refusal is a :class:`~evalvalidity.errors.FileFormatError` naming the file (and the line, for a
line), the limit and the field of :class:`Limits` that sets it. See ``docs/reliability.md``
for what each limit costs and the measurements behind the defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from evalvalidity.errors import ParameterError

__all__ = ["DEFAULT_LIMITS", "Limits", "exceeds_depth", "human_bytes"]

_MEMORY_LIMIT = re.compile(r"[0-9]+(?:\.[0-9]+)?\s*(?:[KMGT]i?B|B)", re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    """What a read may cost; ``None`` switches a byte limit off.

    Parameters
    ----------
    max_file_bytes : int or None
        Size of the file as given (compressed or not). Default 4 GiB.
    max_text_bytes : int or None
        Bytes of text the file decompresses to (for Parquet: the decoded columns), counted as
        they stream in. Default 16 GiB.
    max_compression_ratio : float or None
        Decompressed over compressed bytes (gzip, and Parquet's decoded columns over its
        size), checked once more than :attr:`ratio_grace_bytes` are decoded. Text retrieval
        files compress 5-20 times; a decompression bomb 1000 times. Default 100.
    ratio_grace_bytes : int
        Decoded bytes before the ratio is checked (small files may compress well). 64 MiB.
    max_line_bytes : int
        Longest line of a text file (TREC, trec_eval, CSV, TSV, JSON Lines). Default 1 MiB.
    max_json_bytes : int or None
        Size of a JSON document ``{qid: {docid: value}}``, which is parsed in memory (about
        20 bytes of memory per byte of JSON). Default 64 MiB; JSON Lines has no such limit.
    max_json_depth : int
        Deepest nesting of arrays and objects in JSON (a record needs 1, a document 2).
        Default 64.
    memory_limit : str
        DuckDB's ``memory_limit`` for the checks (DuckDB spills to disk beyond it).
        Default ``"2GB"``.

    Examples
    --------
    >>> Limits(max_line_bytes=4096).max_line_bytes
    4096
    >>> Limits(max_json_depth=0)
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The 'max_json_depth' parameter of Limits must be an int >= 1. Got 0 instead.
    """

    max_file_bytes: int | None = 4 << 30
    max_text_bytes: int | None = 16 << 30
    max_compression_ratio: float | None = 100.0
    ratio_grace_bytes: int = 64 << 20
    max_line_bytes: int = 1 << 20
    max_json_bytes: int | None = 64 << 20
    max_json_depth: int = 64
    memory_limit: str = "2GB"

    def __post_init__(self) -> None:
        for name in ("max_file_bytes", "max_text_bytes", "max_json_bytes"):
            _check_int(name, getattr(self, name), optional=True)
        for name in ("ratio_grace_bytes", "max_line_bytes", "max_json_depth"):
            _check_int(name, getattr(self, name), optional=False)
        ratio = self.max_compression_ratio
        if ratio is not None and (
            isinstance(ratio, bool) or not isinstance(ratio, int | float) or not ratio >= 1
        ):
            raise ParameterError(
                "The 'max_compression_ratio' parameter of Limits must be a number >= 1 or None."
                f" Got {ratio!r} instead."
            )
        if not isinstance(self.memory_limit, str) or not _MEMORY_LIMIT.fullmatch(self.memory_limit):
            raise ParameterError(
                "The 'memory_limit' parameter of Limits must be a size such as '2GB' or "
                f"'500MiB'. Got {self.memory_limit!r} instead."
            )


def _check_int(name: str, value: object, *, optional: bool) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        extra = " or None" if optional else ""
        raise ParameterError(
            f"The {name!r} parameter of Limits must be an int >= 1{extra}. Got {value!r} instead."
        )


#: The limits a read uses unless it is given others.
DEFAULT_LIMITS = Limits()


def human_bytes(n: float) -> str:
    """A byte count as messages show it.

    >>> human_bytes(512), human_bytes(1 << 20), human_bytes(1536 << 20), human_bytes(10**11)
    ('512 bytes', '1 MiB', '1.5 GiB', '93.1 GiB')
    """
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            text = f"{n / size:.1f}".removesuffix(".0")
            return f"{text} {unit}"
    return f"{int(n):,} bytes"


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_OPEN = np.frombuffer(b"[{", np.uint8)
_CLOSE = np.frombuffer(b"]}", np.uint8)
_DEPTH_CHUNK = 1 << 24


def exceeds_depth(text: bytes | str, max_depth: int) -> bool:
    """True when arrays and objects in the JSON ``text`` nest deeper than ``max_depth``.

    Brackets inside strings do not count. Cheap when the text has few brackets (a JSON Lines
    record); linear, in numpy, otherwise. Unbalanced text is measured as far as it goes.

    >>> exceeds_depth('{"a": [[1]], "b": "[[[["}', 3), exceeds_depth("[[[[]]]]", 3)
    (False, True)
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return False
    bare = np.frombuffer(_JSON_STRING.sub(b"", data), np.uint8)
    depth = 0
    for start in range(0, len(bare), _DEPTH_CHUNK):
        part = bare[start : start + _DEPTH_CHUNK]
        step = np.isin(part, _OPEN).astype(np.int32) - np.isin(part, _CLOSE).astype(np.int32)
        if not step.any():
            continue
        running = np.cumsum(step, dtype=np.int64) + depth
        if int(running.max()) > max_depth:
            return True
        depth = int(running[-1])
    return False
