"""evalvalidity: does your retrieval benchmark measure anything.

Exact noise floors for every common retrieval metric, a trec_eval-compatible scorer, and checks
that find tiny headroom, harness bugs and leaks. Importing the package loads only numpy.
"""

from evalvalidity.core.metrics import Metric, parse_metric
from evalvalidity.errors import (
    EvalValidityError,
    FileFormatError,
    InputDataError,
    ParameterError,
)

__version__ = "0.1.0"

__all__ = [
    "EvalValidityError",
    "FileFormatError",
    "InputDataError",
    "Metric",
    "ParameterError",
    "__version__",
    "parse_metric",
]
