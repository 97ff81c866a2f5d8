"""Argument checks shared by the core modules: one wording per kind of mistake.

Also a weighted ``bincount`` that is float64 whatever its input (numpy gives int zeros for an
empty one).

Messages follow one pattern, "The 'k' parameter of f must be an int >= 1. Got 0 instead.", and
are contracts (tests match them exactly). Where two modules had grown different wordings of the
same check, both stay reachable through a parameter rather than one silently changing.

Examples
--------
>>> _int_at_least(3, 1, "k", "f")
3
>>> _int_at_least(0, 1, "k", "f")
Traceback (most recent call last):
...
evalvalidity.errors.ParameterError: The 'k' parameter of f must be an int >= 1. Got 0 instead.
>>> _shown(np.zeros((2, 3))), _show(np.float64(2.5)), _brief(list(range(100)))[-12:]
('an array of shape (2, 3)', '2.5', '9, 20, 2 ...')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeGuard

import numpy as np

from evalvalidity.core.types import FloatArray, IndexArray, IntArray, NumberArray
from evalvalidity.errors import ParameterError

__all__ = [
    "_at_least",
    "_brief",
    "_choice",
    "_codes",
    "_distinct_pairs",
    "_equal_lengths",
    "_finite_matrix",
    "_finite_values",
    "_generator",
    "_int_at_least",
    "_is_real",
    "_open_unit",
    "_per_query",
    "_positive",
    "_queries",
    "_same_length",
    "_show",
    "_shown",
    "_weighted_bincount",
]


def _show(value: object) -> str:
    """Render one offending value the way a user typed it (``2.5``, ``nan``, ``'a'``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _shown(value: object) -> str:
    """Like :func:`_show`, but an array is described by its shape instead of its values."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return _show(value)


def _brief(value: object) -> str:
    """``repr(value)``, cut to 80 characters: a message never quotes a million values."""
    text = repr(value)
    return text if len(text) <= 80 else text[:76].rstrip() + " ..."


def _is_real(value: object) -> TypeGuard[int | float | np.integer | np.floating]:
    """True for a real number (Python or numpy), False for booleans and everything else."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _int_at_least(
    value: object, low: int, name: str, func: str, *, show: Callable[[object], str] = _shown
) -> int:
    """Return ``value`` as an int when it is an int (not a bool) >= ``low``, else raise.

    ``show`` renders the offending value in the message (:func:`_shown` by default; ``repr``
    quotes numpy scalars as numpy prints them).
    """
    if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < low:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be an int >= {low}. Got {show(value)} instead."
        )
    return int(value)


def _generator(
    rng: object, func: str, *, allow_none: bool = True, show: Callable[[object], str] = _shown
) -> np.random.Generator:
    """Return a Generator from ``rng``: a Generator, an int seed >= 0, or (``allow_none``) None.

    None seeds from the operating system, so a caller that must be reproducible passes
    ``allow_none=False``.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if (rng is None and allow_none) or (
        isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0
    ):
        return np.random.default_rng(None if rng is None else int(rng))
    accepted = "a numpy.random.Generator, an int seed >= 0 or None"
    if not allow_none:
        accepted = "a numpy.random.Generator or an int seed >= 0"
    raise ParameterError(
        f"The 'rng' parameter of {func} must be {accepted}. Got {show(rng)} instead."
    )


def _finite_values(values: object, name: str, func: str, *, min_size: int = 2) -> FloatArray:
    """Check and copy ``values`` into a finite float64 1-D array of >= ``min_size`` numbers."""
    raw = np.asarray(values)
    if raw.dtype.kind not in "biuf":
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a 1-D array of numbers. "
            f"Got dtype {raw.dtype} instead."
        )
    if raw.ndim != 1 or raw.size < min_size:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a 1-D array of at least {min_size} "
            f"numbers. Got shape {raw.shape} instead."
        )
    arr = np.array(raw, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ParameterError(
            f"The '{name}' parameter of {func} must hold finite numbers. "
            f"Got {bad.size} NaN or infinite value(s) instead, the first at position {bad[0]}."
        )
    return arr


def _finite_matrix(value: object, name: str, func: str) -> NumberArray:
    """Check that ``value`` is a 2-D array of finite numbers; return it (no copy when possible)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf" or array.ndim != 2:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a 2-D array of numbers (one vector per "
            f"row). Got {array.ndim}-D {array.dtype} instead."
        )
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array)
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ParameterError(
                f"The '{name}' parameter of {func} must hold finite numbers. "
                f"Got {int(bad.sum())} NaN or infinite value(s) instead, the first in row {row}."
            )
    return array


def _weighted_bincount(x: IntArray | IndexArray, weights: FloatArray, minlength: int) -> FloatArray:
    """``np.bincount(x, weights=weights, minlength=minlength)``, always as float64 sums.

    numpy returns float64 sums for float weights, except when ``x`` is empty: then it returns
    int zeros. The result here is float64 in both cases (no copy in the first).

    Examples
    --------
    >>> _weighted_bincount(np.array([0, 2, 2]), np.array([0.5, 1.0, 2.0]), 4).tolist()
    [0.5, 0.0, 3.0, 0.0]
    >>> _weighted_bincount(np.zeros(0, np.int64), np.zeros(0), 2).dtype
    dtype('float64')
    """
    return np.bincount(x, weights=weights, minlength=minlength).astype(np.float64, copy=False)


def _same_length(a: FloatArray, b: FloatArray, names: tuple[str, str], func: str) -> None:
    """Raise unless the paired per-query arrays ``a`` and ``b`` have as many values."""
    if a.size != b.size:
        raise ParameterError(
            f"The {names[0]!r} and {names[1]!r} parameters of {func} must hold one value per "
            f"query for the same queries. Got {a.size} and {b.size} values instead."
        )


def _open_unit(value: object, name: str, func: str) -> float:
    """Return ``value`` as a float when it is a real number in (0, 1), else raise."""
    if not _is_real(value) or not 0.0 < float(value) < 1.0:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a float in (0, 1). "
            f"Got {_shown(value)} instead."
        )
    return float(value)


def _positive(value: object, name: str, func: str) -> float:
    """Return ``value`` as a float when it is a finite real number > 0, else raise."""
    if not _is_real(value) or not math.isfinite(float(value)) or float(value) <= 0.0:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a finite float > 0. "
            f"Got {_shown(value)} instead."
        )
    return float(value)


def _choice(value: object, choices: tuple[str, ...], name: str, func: str) -> str:
    """Return ``value`` when it is one of the strings ``choices``, else raise."""
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ParameterError(
            f"The '{name}' parameter of {func} must be one of {listed}. "
            f"Got {_shown(value)} instead."
        )
    return value


def _per_query(value: object, n: int, name: str, func: str) -> FloatArray:
    """Broadcast a scalar to n queries, or check an array of n finite numbers."""
    if _is_real(value):
        if not math.isfinite(float(value)):
            raise ParameterError(
                f"The '{name}' parameter of {func} must be finite. Got {_shown(value)} instead."
            )
        return np.full(n, float(value))
    array = _finite_values(value, name, func, min_size=1)
    if array.size != n:
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a number or hold one value per query "
            f"({n}). Got {array.size} values instead."
        )
    return array


def _codes(value: object, name: str, func: str) -> IntArray:
    """``value`` as a 1-D int64 array of integers, or raise naming the parameter."""
    array = np.asarray(value)
    if array.ndim != 1 or not (
        array.size == 0 or (np.issubdtype(array.dtype, np.integer) and array.dtype != np.bool_)
    ):
        raise ParameterError(
            f"The '{name}' parameter of {func} must be a 1-D array of integers."
            f" Got shape {array.shape} and dtype {array.dtype} instead."
        )
    return array.astype(np.int64, copy=False)


def _equal_lengths(func: str, **arrays: IntArray) -> None:
    """Raise unless the named parameters of ``func`` hold as many values each."""
    if len({len(a) for a in arrays.values()}) > 1:
        shown = ", ".join(f"{name}={len(a)}" for name, a in arrays.items())
        raise ParameterError(
            f"The arrays {', '.join(arrays)} of {func} must have equal lengths."
            f" Got {shown} instead."
        )


def _queries(array: IntArray, name: str, func: str, n_queries: int) -> None:
    """Raise unless every value of ``array`` is a query index in [0, ``n_queries``)."""
    bad = np.flatnonzero((array < 0) | (array >= n_queries))
    if bad.size:
        raise ParameterError(
            f"The '{name}' parameter of {func} must hold query indices in [0, {n_queries})."
            f" Got {int(array[bad[0]])} instead, at row {int(bad[0])}."
        )


def _at_least(array: IntArray, low: int, name: str, func: str, what: str) -> None:
    """Raise unless every value of ``array`` (``what``: "document codes", ...) is >= ``low``."""
    bad = np.flatnonzero(array < low)
    if bad.size:
        raise ParameterError(
            f"The '{name}' parameter of {func} must hold {what} >= {low}."
            f" Got {int(array[bad[0]])} instead, at row {int(bad[0])}."
        )


def _distinct_pairs(query: IntArray, other: IntArray, message: str) -> IndexArray:
    """Indices that sort the pairs by (query, other); raise ``message`` when a pair repeats.

    ``message`` is formatted with the first repeated pair's ``query`` and ``value``.

    Examples
    --------
    >>> _distinct_pairs(np.array([1, 0, 0]), np.array([2, 3, 1]), "{query} {value}").tolist()
    [2, 1, 0]
    >>> _distinct_pairs(np.array([0, 0]), np.array([4, 4]), "query {query} repeats {value}")
    Traceback (most recent call last):
    ...
    evalvalidity.errors.ParameterError: query 0 repeats 4
    """
    order = np.lexsort((other, query))
    q, o = query[order], other[order]
    clash = np.flatnonzero((q[1:] == q[:-1]) & (o[1:] == o[:-1]))
    if clash.size:
        at = int(clash[0])
        raise ParameterError(message.format(query=int(q[at]), value=int(o[at])))
    return order
