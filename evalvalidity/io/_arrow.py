"""Arrow arrays built from numpy and Python values without importing pandas.

:func:`pyarrow.array` asks, for every argument that is not already Arrow data, whether it is a
pandas object, and to ask it imports pandas the first time (about a second of a command's
start). The builders here hand pyarrow the buffers directly, so a command that never touches
pandas never loads it.

Examples
--------
>>> from_numpy(np.arange(3, dtype=np.int64)).to_pylist()
[0, 1, 2]
>>> int64_range(5, 8).to_pylist()
[5, 6, 7]
>>> strings(["a", "", "é"]).to_pylist()
['a', '', 'é']
>>> to_numpy(from_numpy(np.array([4, 5, 6]))[1:])
array([5, 6])
>>> select(strings(["a", "b", "c"]), np.array([True, False, True])).to_pylist()
['a', 'c']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["from_numpy", "int64", "int64_range", "run_starts", "select", "strings", "to_numpy"]

_TYPES: dict[np.dtype, pa.DataType] = {
    np.dtype(np.int64): pa.int64(),
    np.dtype(np.int32): pa.int32(),
    np.dtype(np.float64): pa.float64(),
    np.dtype(np.float32): pa.float32(),
}


def from_numpy(values: np.ndarray) -> pa.Array:
    """A null-free Arrow array holding a one-dimensional int or float numpy array (one copy).

    Parameters
    ----------
    values : numpy.ndarray
        One-dimensional, of dtype int64, int32, float64 or float32 (native byte order).

    Returns
    -------
    pyarrow.Array
        Of the matching Arrow type, with no nulls (a NaN stays a NaN, as ``pa.array`` keeps
        it).

    Raises
    ------
    TypeError
        For another dtype or shape.

    Examples
    --------
    >>> from_numpy(np.array([1.5, np.nan])).to_pylist()
    [1.5, nan]
    >>> from_numpy(np.array([True]))
    Traceback (most recent call last):
    ...
    TypeError: from_numpy takes a 1-d int64, int32, float64 or float32 array. Got bool with shape (1,).
    """
    arrow_type = _TYPES.get(values.dtype) if isinstance(values, np.ndarray) else None
    if arrow_type is None or values.ndim != 1:
        raise TypeError(
            "from_numpy takes a 1-d int64, int32, float64 or float32 array. Got"
            f" {getattr(values, 'dtype', type(values).__name__)} with shape"
            f" {getattr(values, 'shape', None)}."
        )
    data = np.ascontiguousarray(values).copy()  # the Arrow array owns what it points at
    return pa.Array.from_buffers(arrow_type, len(data), [None, pa.py_buffer(data)])


def int64_range(start: int, stop: int) -> pa.Array:
    """``start, start + 1, ..., stop - 1`` as an int64 Arrow array.

    Examples
    --------
    >>> int64_range(1, 1).to_pylist()
    []
    """
    return from_numpy(np.arange(start, stop, dtype=np.int64))


def int64(value: int) -> pa.Scalar:
    """An int64 Arrow scalar (``pa.scalar`` would import pandas), e.g. for a compute function.

    Examples
    --------
    >>> int64(1).as_py(), int64(1).type
    (1, DataType(int64))
    """
    return from_numpy(np.array([value], dtype=np.int64))[0]


def strings(values: Sequence[str] | np.ndarray) -> pa.Array:
    """A null-free Arrow ``string`` array of Python str (a sequence, or an object array).

    Raises
    ------
    UnicodeEncodeError
        When a value cannot be UTF-8 encoded (a lone surrogate), which Arrow cannot hold.

    Examples
    --------
    >>> strings([]).type
    DataType(string)
    """
    encoded = [value.encode("utf-8") for value in values]
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))
    if len(ends) and ends[-1] >= 2**31:
        raise OverflowError("strings holds at most 2 GiB of text; use a chunked array.")
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    offsets[1:] = ends
    return pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    )


_DTYPES = {arrow_type: dtype for dtype, arrow_type in _TYPES.items()}


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A null-free int, float or bool Arrow array as numpy (``Array.to_numpy`` imports pandas).

    Numbers are a view of the Arrow buffer when the array is one chunk; booleans are unpacked
    from their bits.

    Raises
    ------
    TypeError
        For another type, or an array holding nulls.

    Examples
    --------
    >>> import pyarrow as pa
    >>> to_numpy(pa.chunked_array([from_numpy(np.array([1.5])), from_numpy(np.array([2.5]))]))
    array([1.5, 2.5])
    >>> from evalvalidity.io._compute import pc
    >>> to_numpy(pc.is_in(strings(["a", "b"]), value_set=strings(["b"])))
    array([False,  True])
    """
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            values = values.chunk(0)
        elif values.num_chunks == 0 and values.type in _DTYPES:
            return np.zeros(0, dtype=_DTYPES[values.type])
        elif values.num_chunks == 0 and values.type == pa.bool_():
            return np.zeros(0, dtype=bool)
        else:
            values = pa.concat_arrays(values.chunks)
    if values.null_count or (values.type not in _DTYPES and values.type != pa.bool_()):
        raise TypeError(
            f"to_numpy takes a null-free int, float or bool array. Got {values.type} with"
            f" {values.null_count} nulls."
        )
    data = values.buffers()[1]
    if values.type == pa.bool_():
        if len(values) == 0:
            return np.zeros(0, dtype=bool)
        bits = np.frombuffer(data, dtype=np.uint8)
        flags = np.unpackbits(bits, count=values.offset + len(values), bitorder="little")
        return flags[values.offset :].astype(bool)
    dtype = _DTYPES[values.type]
    if len(values) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(
        data, dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize
    )


def run_starts(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Where each run of equal neighbouring values of a null-free array starts, as a numpy mask.

    True at the first value and wherever a value differs from the one before it (Arrow
    compares strings by their bytes): a run's rows come query by query, so its queries are
    the runs of equal ids, found without hashing every id.

    Examples
    --------
    >>> run_starts(strings(["q1", "q1", "q2", "q1"])).tolist()
    [True, False, True, True]
    >>> run_starts(strings([])).tolist()
    []
    """
    from evalvalidity.io._compute import pc

    n = len(values)
    starts = np.ones(n, dtype=bool)
    if n > 1:
        starts[1:] = to_numpy(pc.not_equal(values.slice(1), values.slice(0, n - 1)))
    return starts


def select(values: pa.Array | pa.ChunkedArray, mask: np.ndarray) -> pa.Array | pa.ChunkedArray:
    """The items of ``values`` where the boolean numpy ``mask`` holds, without pandas.

    ``pa.array`` of a numpy mask, which ``Array.filter`` would need, imports pandas.
    """
    from evalvalidity.io._compute import pc

    return pc.take(values, from_numpy(np.flatnonzero(mask).astype(np.int64)))
