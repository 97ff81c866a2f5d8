"""evalvalidity: does your retrieval benchmark measure anything.

Exact noise floors for every common retrieval metric, a trec_eval-compatible scorer, and checks
that find tiny headroom, harness bugs and leaks.

The names below are the public surface; each is imported from its layer the first time it is
used, so ``import evalvalidity`` itself loads nothing beyond the standard library (numpy, scipy,
pyarrow and DuckDB come with the first name that needs them):

=====================  ==========================================================================
name                   what it is (where it lives)
=====================  ==========================================================================
``parse_metric``       a metric from its name, e.g. ``"rr@10"`` (:mod:`evalvalidity.core.metrics`)
``Metric``             a metric: family, cutoff, relevance threshold (same module)
``noise_floor``        the exact random-ranker floor of a metric (:mod:`evalvalidity.core.floors`)
``read_run``           a run file read into a table (:mod:`evalvalidity.io.ingest`)
``read_qrels``         a judgements file read into a table (same module)
``score_run``          a run scored against judgements, trec_eval-compatible
                       (:mod:`evalvalidity.io.scoring`)
``Workspace``          the persistent store of datasets (:mod:`evalvalidity.io.workspace`)
``CheckPlan``          everything a check uses, by name (:mod:`evalvalidity.analysis.plan`)
``check_benchmark``    run the checks of a plan (:mod:`evalvalidity.analysis.check`)
the exceptions         :class:`EvalValidityError` and its subclasses, :class:`EvalValidityWarning`
                       (:mod:`evalvalidity.errors`)
=====================  ==========================================================================

Examples
--------
>>> import evalvalidity as ev
>>> metric = ev.parse_metric("rr@10")
>>> metric.name
'rr@10'
>>> floor = ev.noise_floor(metric, pool_size=8, gold=1)  # a pool of 8, one gold item
>>> round(float(floor.expected[0]), 4)
0.3397
>>> issubclass(ev.ParameterError, ev.EvalValidityError)
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalvalidity.analysis.check import check_benchmark
    from evalvalidity.analysis.plan import CheckPlan
    from evalvalidity.core.floors import noise_floor
    from evalvalidity.core.metrics import Metric, parse_metric
    from evalvalidity.errors import (
        EvalValidityError,
        EvalValidityWarning,
        FileFormatError,
        InputDataError,
        ParameterError,
        StorageError,
    )
    from evalvalidity.io.ingest import RejectedRowsError, read_qrels, read_run
    from evalvalidity.io.scoring import score_run
    from evalvalidity.io.workspace import Workspace

__version__ = "0.1.0"

#: Each public name and the module it is imported from on first use.
_SOURCES: dict[str, str] = {
    "CheckPlan": "evalvalidity.analysis.plan",
    "EvalValidityError": "evalvalidity.errors",
    "EvalValidityWarning": "evalvalidity.errors",
    "FileFormatError": "evalvalidity.errors",
    "InputDataError": "evalvalidity.errors",
    "Metric": "evalvalidity.core.metrics",
    "ParameterError": "evalvalidity.errors",
    "RejectedRowsError": "evalvalidity.io.ingest",
    "StorageError": "evalvalidity.errors",
    "Workspace": "evalvalidity.io.workspace",
    "check_benchmark": "evalvalidity.analysis.check",
    "noise_floor": "evalvalidity.core.floors",
    "parse_metric": "evalvalidity.core.metrics",
    "read_qrels": "evalvalidity.io.ingest",
    "read_run": "evalvalidity.io.ingest",
    "score_run": "evalvalidity.io.scoring",
}

__all__ = [
    "CheckPlan",
    "EvalValidityError",
    "EvalValidityWarning",
    "FileFormatError",
    "InputDataError",
    "Metric",
    "ParameterError",
    "RejectedRowsError",
    "StorageError",
    "Workspace",
    "__version__",
    "check_benchmark",
    "noise_floor",
    "parse_metric",
    "read_qrels",
    "read_run",
    "score_run",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562), then keep it here.

    Raises
    ------
    AttributeError
        For a name that is not part of the public surface (nor a submodule).
    """
    import importlib

    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'evalvalidity' has no attribute {name!r}")
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Every public name, loaded or not."""
    return list(__all__)
