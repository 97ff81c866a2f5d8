"""The workspace's history of checks: when each ran, on what plan, with what verdict and scores.

Each recorded check is the JSON record of ``evalvalidity check --format json`` (schema version
1). :func:`record_check` stores it whole as ``history/<id>.json`` (written atomically) and
appends a one-line summary to ``history/index.jsonl`` under a lock; :func:`list_checks` reads
the summaries oldest first (a line torn by a crash mid-append is skipped), :func:`load_check`
one whole record. :func:`summarize` is the summary of a record, also for a ``check.json`` that
was produced elsewhere (in CI) and is only viewed.

Examples
--------
>>> import tempfile
>>> record = {"schema_version": 1, "verdict": "healthy", "metric": "rr@10", "run": "bm25",
...           "n_queries": 2, "model_score": 0.4, "floor": 0.01, "ceiling": 1.0, "plan": None,
...           "queries": []}
>>> with tempfile.TemporaryDirectory() as folder:
...     entry = record_check(folder, record, when="2024-05-01T12:00:00+00:00", label="nightly")
...     [(e.verdict, e.model_score, e.label) for e in list_checks(folder)]
[('healthy', 0.4, 'nightly')]
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evalvalidity.errors import ParameterError
from evalvalidity.io.atomic import atomic_write, fsync_path, storage_error

__all__ = ["HistoryEntry", "list_checks", "load_check", "record_check"]

_FOLDER = "history"
_INDEX = "index.jsonl"
_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class HistoryEntry:
    """The summary of one recorded check.

    Attributes
    ----------
    id : str
        32 hex digits; :func:`load_check` returns the whole record.
    time : str
        ISO 8601 time (UTC) when it was recorded.
    label : str or None
        A free label (a commit, a branch, "nightly").
    verdict, metric : str
    run : str or None
    n_queries : int
    model_score, floor, ceiling : float or None
    plan : dict or None
        The check plan as data.
    gate : str or None
        ``"passed"`` or ``"regressed"`` when the check ran a regression gate.
    """

    id: str
    time: str
    label: str | None
    verdict: str
    metric: str
    run: str | None
    n_queries: int
    model_score: float | None
    floor: float | None
    ceiling: float | None
    plan: dict[str, Any] | None
    gate: str | None = None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def summarize(
    record: Any, *, id: str = "", when: str = "", label: str | None = None
) -> HistoryEntry:
    """The summary of a check record.

    Raises
    ------
    ParameterError
        When ``record`` is not a check record of schema version 1.
    """
    if not isinstance(record, Mapping) or "verdict" not in record or "metric" not in record:
        raise ParameterError(
            "This is not a check record (the JSON of 'evalvalidity check --format json')."
        )
    if record.get("schema_version") != 1:
        raise ParameterError(
            f"This check record has schema version {record.get('schema_version')!r}; this "
            "version of evalvalidity reads schema version 1."
        )
    gate = record.get("gate")
    plan = record.get("plan")
    n = record.get("n_queries")
    return HistoryEntry(
        id=id,
        time=when,
        label=label,
        verdict=str(record["verdict"]),
        metric=str(record["metric"]),
        run=record.get("run") if isinstance(record.get("run"), str) else None,
        n_queries=int(n) if isinstance(n, int) and not isinstance(n, bool) else 0,
        model_score=_number(record.get("model_score")),
        floor=_number(record.get("floor")),
        ceiling=_number(record.get("ceiling")),
        plan=dict(plan) if isinstance(plan, Mapping) else None,
        gate=("regressed" if gate.get("regressed") else "passed")
        if isinstance(gate, Mapping)
        else None,
    )


def _folder(workspace: Any) -> Path:
    root = Path(getattr(workspace, "path", workspace))
    return root / _FOLDER


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / "index.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def record_check(
    workspace: Any, record: Mapping[str, Any], *, when: str | None = None, label: str | None = None
) -> HistoryEntry:
    """Add a check record to the workspace's history.

    Parameters
    ----------
    workspace : Workspace or path
        The workspace (its folder).
    record : mapping
        A check record (:func:`evalvalidity.report.records.to_dict`).
    when : str, optional
        ISO 8601 time; default now (UTC).
    label : str, optional

    Raises
    ------
    ParameterError
        When ``record`` is not a check record.
    StorageError
        When the history cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> record = {"schema_version": 1, "verdict": "warning", "metric": "rr@10", "run": "bm25",
    ...           "n_queries": 2, "model_score": 0.3, "floor": 0.2, "ceiling": 1.0, "plan": None}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     entry = record_check(folder, record, when="2024-05-01T12:00:00+00:00", label="main")
    ...     stored = sorted(p.name for p in (Path(folder) / "history").iterdir())
    >>> entry.verdict, entry.floor, entry.label, len(entry.id)
    ('warning', 0.2, 'main', 32)
    >>> stored == sorted([f"{entry.id}.json", "index.jsonl", "index.lock"])
    True
    """
    stamp = when or dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    entry = summarize(record, id=uuid.uuid4().hex, when=stamp, label=label)
    folder = _folder(workspace)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
        atomic_write(folder / f"{entry.id}.json", text)
        line = json.dumps(asdict(entry), ensure_ascii=False, allow_nan=False) + "\n"
        with _locked(folder), open(folder / _INDEX, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        fsync_path(folder)
    except OSError as exc:
        raise storage_error(f"record the check in the history of {folder.parent}", exc) from exc
    return entry


def list_checks(workspace: Any) -> list[HistoryEntry]:
    """The recorded checks, oldest first (empty when none was recorded).

    Examples
    --------
    >>> import tempfile
    >>> record = {"schema_version": 1, "verdict": "warning", "metric": "rr@10", "run": "bm25",
    ...           "n_queries": 2, "model_score": 0.3, "floor": 0.2, "ceiling": 1.0, "plan": None}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     empty = list_checks(folder)
    ...     _ = record_check(folder, record, when="2024-05-02T00:00:00+00:00", label="new")
    ...     _ = record_check(folder, record, when="2024-05-01T00:00:00+00:00", label="old")
    ...     empty, [(e.time[:10], e.label) for e in list_checks(folder)]
    ([], [('2024-05-01', 'old'), ('2024-05-02', 'new')])
    """
    path = _folder(workspace) / _INDEX
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            raw = json.loads(line)
            entries.append(HistoryEntry(**raw))
        except (ValueError, TypeError):
            continue  # a line torn by a crash during its append
    return sorted(entries, key=lambda e: e.time)


def load_check(workspace: Any, entry_id: str) -> dict[str, Any]:
    """The whole record of one recorded check.

    Raises
    ------
    ParameterError
        When no check of that id was recorded.

    Examples
    --------
    >>> import tempfile
    >>> record = {"schema_version": 1, "verdict": "warning", "metric": "rr@10", "run": "bm25",
    ...           "n_queries": 2, "model_score": 0.3, "floor": 0.2, "ceiling": 1.0, "plan": None}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     entry = record_check(folder, record)
    ...     load_check(folder, entry.id) == record
    True
    >>> load_check(".", "nightly")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: A history id is 32 hex digits. Got 'nightly' instead.
    """
    if not isinstance(entry_id, str) or _ID.fullmatch(entry_id) is None:
        raise ParameterError(f"A history id is 32 hex digits. Got {entry_id!r} instead.")
    path = _folder(workspace) / f"{entry_id}.json"
    if not path.is_file():
        raise ParameterError(f"No recorded check {entry_id} in the history.")
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record
