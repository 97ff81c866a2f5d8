"""Names shared by every layer: the progress callback, the string enums and the array types.

Each ``Literal`` alias lists every value the library produces or accepts, so that a type checker
catches a misspelt policy or verdict anywhere from the core to the dashboard. The array aliases
name the dtype a function returns or expects: float64 values, int64 counts and codes, intp
positions and counts (what ``argsort``, ``nonzero``, ``arange`` and ``bincount`` give), boolean
masks, floats of any width (vectors kept in float32) and numbers of any kind (checked input).

Examples
--------
>>> from typing import get_args
>>> get_args(TiePolicy)
('trec_eval', 'given', 'average')
>>> get_args(Verdict)
('healthy', 'warning', 'broken')
>>> calls = []
>>> report: Progress = lambda fraction, message: calls.append((fraction, message))
>>> report(0.5, "halfway")
>>> calls
[(0.5, 'halfway')]
>>> import numpy as np
>>> values: FloatArray = np.zeros(3)
>>> positions: IndexArray = np.argsort(values)
>>> mask: BoolArray = values > 0
>>> values.dtype, positions.dtype == np.intp, mask.dtype
(dtype('float64'), True, dtype('bool'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = [
    "AnalyticUnit",
    "BoolArray",
    "FloatArray",
    "HarnessSource",
    "IndexArray",
    "IntArray",
    "NoiseSource",
    "NumberArray",
    "PoolKind",
    "Progress",
    "RealArray",
    "Severity",
    "Source",
    "TiePolicy",
    "Verdict",
]

#: An array of float64 values.
FloatArray: TypeAlias = npt.NDArray[np.float64]

#: An array of int64 counts, codes or offsets.
IntArray: TypeAlias = npt.NDArray[np.int64]

#: An array of positions, in numpy's index type (``np.intp``).
IndexArray: TypeAlias = npt.NDArray[np.intp]

#: A boolean mask.
BoolArray: TypeAlias = npt.NDArray[np.bool_]

#: An array of floats of any width (float16, float32 or float64).
RealArray: TypeAlias = npt.NDArray[np.floating]

#: An array of numbers of any kind: booleans, integers or floats.
NumberArray: TypeAlias = npt.NDArray[np.bool_ | np.integer | np.floating]

#: A progress callback: called with the fraction done in [0, 1] and a line of text.
Progress: TypeAlias = Callable[[float, str], None]

#: How tied scores are ordered: trec_eval's order (score descending, then docid descending),
#: the ranks given in the run, or the average of the metric over every order of each tie.
TiePolicy: TypeAlias = Literal["trec_eval", "given", "average"]

#: The overall health of a benchmark.
Verdict: TypeAlias = Literal["healthy", "warning", "broken"]

#: How much one finding weighs in the verdict.
Severity: TypeAlias = Literal["broken", "warning", "info"]

#: How the pool of each query was declared.
PoolKind: TypeAlias = Literal["corpus", "pools", "candidates", "units"]

#: The unit of the exact floor when a units map is given: deduplicated documents, or chunks.
AnalyticUnit: TypeAlias = Literal["documents", "chunks"]

#: Where the scores of the harness check come from: the built-in scorer, or the harness itself.
HarnessSource: TypeAlias = Literal["builtin", "harness-output"]

#: Where the noise scores come from: a noise run on file, or a live retrieval with noise vectors.
NoiseSource: TypeAlias = Literal["noise-run", "live"]

#: Any of the sources a check reports.
Source: TypeAlias = Literal["builtin", "harness-output", "noise-run", "live"]
