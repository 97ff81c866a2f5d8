"""Memory the allocators keep for reuse, handed back to the system between a check's steps.

A check's steps allocate through three allocators: Arrow's (mimalloc), DuckDB's and the C
library's (numpy, Python). Each keeps what a step freed for its own later use, so a step that
allocates through another starts from the sum of what every earlier step kept. Between steps
:func:`release_freed_memory` gives back what Arrow's pool and the C library's heap hold free
(DuckDB returns its own, ``RETURN_FREED_MEMORY``): a million-query check kept 0.3 GB less.

Examples
--------
>>> release_freed_memory()
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

import pyarrow as pa

__all__ = ["release_freed_memory"]


def _c_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim`` (glibc's; None with another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return None
    return trim


_TRIM = _c_trim()


def release_freed_memory() -> None:
    """Give the memory Arrow's pool and the C heap keep free back to the system.

    Takes a few milliseconds; what is still in use is untouched.
    """
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)
