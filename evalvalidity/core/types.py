"""Names shared by every layer: the progress callback and the string enums, as ``Literal`` types.

Each alias lists every value the library produces or accepts, so that a type checker catches a
misspelt policy or verdict anywhere from the core to the dashboard.

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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

__all__ = [
    "AnalyticUnit",
    "HarnessSource",
    "NoiseSource",
    "PoolKind",
    "Progress",
    "Severity",
    "Source",
    "TiePolicy",
    "Verdict",
]

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
