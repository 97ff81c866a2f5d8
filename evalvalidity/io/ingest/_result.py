"""What a read returns, and the error an ingest with rejected rows raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pyarrow as pa

from evalvalidity.errors import FileFormatError

#: Rejected rows kept (with their reasons) on a result or an error; all are counted.
MAX_KEPT_REJECTED: Final = 1000
#: Rejected rows shown in a message.
MAX_SHOWN_REJECTED: Final = 20


@dataclass(frozen=True)
class RejectedRow:
    """One row that was not kept.

    Parameters
    ----------
    line : int or None
        1-based line (record number for JSON documents and Parquet files).
    reason : str
        What was expected and what was found.
    raw : str or None
        The line as read, truncated to 200 characters (None when the reason already names
        the values, as for a duplicate).
    """

    line: int | None
    reason: str
    raw: str | None = None

    def __post_init__(self) -> None:
        if self.raw is not None and len(self.raw) > 200:
            object.__setattr__(self, "raw", self.raw[:200] + "...")


@dataclass(frozen=True)
class Ingested:
    """A file read into a canonical table.

    Attributes
    ----------
    table : pyarrow.Table
        Conforms to the kind's schema (:data:`evalvalidity.io.tables.KIND_SCHEMAS`, or
        :data:`CORPUS_SIZE_SCHEMA`).
    kind, format : str
        What the file was read as; ``compression`` is ``"gzip"`` or None.
    n_rejected : int
        Rows dropped because they were bad (only with ``drop_bad_rows=True``; otherwise a
        bad row raises :class:`RejectedRowsError`).
    rejected : tuple of RejectedRow
        The first :data:`MAX_KEPT_REJECTED` of them, in line order.
    n_duplicates : int
        Identical repeats merged into their first occurrence (a judgement given twice).
    n_skipped : int
        Summary lines skipped (trec_eval's ``all`` lines).
    warnings : tuple of str
        Everything else worth telling the user.
    source_name, sha256 : str
        The file's name as given and the SHA-256 of its bytes.
    line_unit : str
        ``"line"``, or ``"record"`` when ``line`` numbers records (JSON documents, Parquet).
    """

    table: pa.Table
    kind: str
    format: str
    compression: str | None
    n_rejected: int
    rejected: tuple[RejectedRow, ...]
    n_duplicates: int
    n_skipped: int
    warnings: tuple[str, ...]
    source_name: str
    sha256: str
    line_unit: str = "line"

    @property
    def n_rows(self) -> int:
        """Rows kept."""
        return int(self.table.num_rows)


def _where(path: str, line: int | None, unit: str) -> str:
    if line is None:
        return path
    return f"{path}:{line}" if unit == "line" else f"{path}: {unit} {line}"


class RejectedRowsError(FileFormatError):
    """Rows of a file were rejected and ``drop_bad_rows`` was not set.

    With one rejected row the message is that row's, ``path:line: reason``; with more, it
    counts them and lists the first :data:`MAX_SHOWN_REJECTED`.

    Attributes
    ----------
    n_rejected : int
        How many rows were rejected.
    rejected : tuple of RejectedRow
        The first :data:`MAX_KEPT_REJECTED` of them, in line order.
    n_kept : int
        How many rows were good.

    Examples
    --------
    >>> row = RejectedRow(17, "expected 6 fields (qid Q0 docid rank score tag), got 5")
    >>> str(RejectedRowsError("runs.trec", 1, (row,), n_kept=99))
    'runs.trec:17: expected 6 fields (qid Q0 docid rank score tag), got 5'
    """

    def __init__(
        self,
        path: str,
        n_rejected: int,
        rejected: tuple[RejectedRow, ...],
        *,
        n_kept: int,
        unit: str = "line",
    ) -> None:
        self.n_rejected = n_rejected
        self.rejected = rejected
        self.n_kept = n_kept
        self.unit = unit
        first = rejected[0] if rejected else RejectedRow(None, "rows were rejected")
        if n_rejected == 1:
            line: int | None = first.line if unit == "line" else None
            message = first.reason if unit == "line" else f"{unit} {first.line}: {first.reason}"
            super().__init__(path, line, message, first.raw)
            return
        shown = rejected[:MAX_SHOWN_REJECTED]
        listing = "\n".join(f"  {unit} {r.line}: {r.reason}" for r in shown)
        more = n_rejected - len(shown)
        tail = f"\n  ... and {more:,} more" if more > 0 else ""
        message = (
            f"{n_rejected:,} rows rejected ({n_kept:,} good); the first {len(shown)}:\n"
            f"{listing}{tail}\n"
            "Fix the file, or pass drop_bad_rows=True (--drop-bad-rows) to keep only the "
            "good rows."
        )
        super().__init__(path, None, message, first.raw)
