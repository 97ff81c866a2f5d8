"""The exceptions evalvalidity raises.

Every error the library raises on purpose derives from :class:`EvalValidityError`, so a caller
(the command line, the dashboard) can catch one type and show its message. The whole tree, with
the module that defines each class (this one unless named)::

    EvalValidityError
    ├── ParameterError          a bad argument: an unknown metric, k < 1, G > N ...
    ├── InputDataError          bad data, wherever it came from
    │   └── FileFormatError     bad data in a file: carries the path, the line number and the line
    │       └── RejectedRowsError   rows of a file were rejected (evalvalidity.io.ingest)
    └── StorageError            writing to disk failed: a full disk, a read-only folder ...

    EvalValidityWarning         a degenerate but defined case (a query with no gold, ...)

:class:`ParameterError` and :class:`InputDataError` are also :class:`ValueError`, and
:class:`StorageError` is also an :class:`OSError`, so code written against the built-in types
keeps working. :class:`EvalValidityWarning` is a :class:`UserWarning`.

Messages are contracts and are tested word for word. A :class:`FileFormatError` renders as
``runs.trec:17: expected 6 fields (qid Q0 docid rank score tag), got 5``.

Examples
--------
>>> issubclass(StorageError, EvalValidityError) and issubclass(StorageError, OSError)
True
>>> try:
...     raise ParameterError("The 'k' parameter of f must be an int >= 1. Got 0 instead.")
... except ValueError as exc:
...     print(exc)
The 'k' parameter of f must be an int >= 1. Got 0 instead.
"""

from __future__ import annotations

__all__ = [
    "EvalValidityError",
    "EvalValidityWarning",
    "FileFormatError",
    "InputDataError",
    "ParameterError",
    "StorageError",
]


class EvalValidityError(Exception):
    """Base class of every error evalvalidity raises on purpose."""


class ParameterError(EvalValidityError, ValueError):
    """An argument is outside its documented domain."""


class InputDataError(EvalValidityError, ValueError):
    """Input data is malformed or inconsistent."""


class FileFormatError(InputDataError):
    """Malformed content in a file, located by path and (1-based) line number.

    Parameters
    ----------
    path : str
        The file's name as the user gave it (never a path built from uploaded text).
    line : int or None
        1-based line number of the offending line, or None when the problem is the whole file.
    message : str
        What was expected and what was found.
    raw : str or None
        The offending line, as read (shown truncated to 200 characters).

    Examples
    --------
    >>> str(FileFormatError("runs.trec", 17, "expected 6 fields (qid Q0 docid rank score tag), got 5"))
    'runs.trec:17: expected 6 fields (qid Q0 docid rank score tag), got 5'
    >>> str(FileFormatError("empty.trec", None, "the file is empty"))
    'empty.trec: the file is empty'
    """

    def __init__(self, path: str, line: int | None, message: str, raw: str | None = None) -> None:
        self.path = path
        self.line = line
        self.message = message
        self.raw = raw
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class StorageError(EvalValidityError, OSError):
    """Writing to disk failed: the disk is full, the folder is read-only, ...

    Also an :class:`OSError`, so code that handles failed writes keeps handling it.
    """


class EvalValidityWarning(UserWarning):
    """A degenerate but defined case: the documented value is returned, and this says why."""
