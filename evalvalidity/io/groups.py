r"""Query groups: which queries belong together (variants of one question, one sub-forum, ...).

A groups file has two columns, a query id and its group, one query a line, separated by a tab
or a comma (the first data line decides); a header line ``qid<sep>group`` is optional, and
blank lines and lines starting with ``#`` are skipped. Queries of one group are not independent
draws, so the statistics of a check treat the groups, not the queries, as the independent units
(:mod:`evalvalidity.core.clustered`).

Examples
--------
>>> parse_groups("qid\tgroup\nq1\tA\nq2\tA\n# a comment\nq3\tB\n", "groups.tsv")
{'q1': 'A', 'q2': 'A', 'q3': 'B'}
>>> parse_groups("q1,A\nq1,B\n", "groups.csv")
Traceback (most recent call last):
...
evalvalidity.errors.FileFormatError: groups.csv:2: query 'q1' is already in group 'A' (line 1); got group 'B'
"""

from __future__ import annotations

import os
from pathlib import Path

from evalvalidity.errors import FileFormatError, ParameterError

__all__ = ["read_groups"]

_HEADERS = {("qid", "group"), ("query_id", "group"), ("query", "group")}


def parse_groups(text: str, name: str) -> dict[str, str]:
    """Parse the text of a groups file: ``{qid: group}`` in file order.

    Parameters
    ----------
    text : str
        The file's content.
    name : str
        The file's name as the user gave it, for error messages (``name:line: ...``).

    Returns
    -------
    dict of str to str

    Raises
    ------
    FileFormatError
        On a line without exactly two non-empty fields, a query listed in two groups, or a
        file without any query.
    """
    groups: dict[str, str] = {}
    first_line: dict[str, int] = {}
    separator: str | None = None
    seen_data = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if separator is None:
            separator = "\t" if "\t" in line else ","
        fields = [field.strip() for field in line.split(separator)]
        if len(fields) != 2 or not all(fields):
            shown = "tab" if separator == "\t" else "comma"
            raise FileFormatError(
                name,
                number,
                f"expected 2 {shown}-separated fields (qid, group), got {len(fields)}"
                + (" with an empty one" if len(fields) == 2 else ""),
                raw,
            )
        if not seen_data:
            seen_data = True
            if (fields[0].lower(), fields[1].lower()) in _HEADERS:
                continue
        qid, group = fields
        if qid in groups and groups[qid] != group:
            raise FileFormatError(
                name,
                number,
                f"query {qid!r} is already in group {groups[qid]!r} (line {first_line[qid]}); "
                f"got group {group!r}",
                raw,
            )
        groups.setdefault(qid, group)
        first_line.setdefault(qid, number)
    if not groups:
        raise FileFormatError(name, None, "the groups file lists no query (expected qid, group)")
    return groups


def read_groups(path: str | os.PathLike[str]) -> dict[str, str]:
    r"""Read a groups file (see :func:`parse_groups`).

    Raises
    ------
    ParameterError
        When the file cannot be read.
    FileFormatError
        When its content is malformed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "groups.csv"
    ...     _ = path.write_text("qid,group\nq1,forum-a\nq2,forum-a\nq3,forum-b\n")
    ...     read_groups(path)
    {'q1': 'forum-a', 'q2': 'forum-a', 'q3': 'forum-b'}
    >>> read_groups("no-such-groups.tsv")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: The groups file 'no-such-groups.tsv' does not exist.
    """
    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ParameterError(f"The groups file {name!r} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"Cannot read the groups file {name!r}: {exc}.") from exc
    return parse_groups(text, name)
